//! fencepost: a static-site generator whose publishing is exactly-once and whose output is
//! revision-stamped.
//!
//! Data flows one way:
//!
//! 1. [`content`] reads the site's Markdown files (TOML front matter) and tells what changed
//!    since the ledger last looked, using a stat cache kept in the ledger.
//! 2. [`publish`] finds items whose embargo has passed and records each public change in the
//!    [`ledger`] exactly once: a fenced lease per item, slow work outside any transaction,
//!    then one guarded, token-chained batch that writes the page, moves the item's state,
//!    bumps the publication revision and appends to the hash-chained audit log.
//! 3. [`build`] reads the ledger at one snapshot and renders publication revision R with
//!    build fingerprint B into `public/revisions/<R>-<B>/`, reusing unchanged files, then
//!    [`output`] swaps the `public/current` pointer so readers only see complete revisions.
//!
//! 4. [`deploy`] ships a finished revision to object storage as a resumable saga and moves
//!    the bucket's pointer by compare-and-set.
//! 5. [`serve`] serves whatever `public/current` (or a bucket's pointer) names, with revision-keyed cache headers, or
//!    an in-memory live preview for editors.
//! 6. [`run`] loops over publish, build and deploy, waking at the instant of the next
//!    scheduled change, and serves in the same process.
//!
//! The ledger imports none of the later stages; build never touches object storage; serve
//! reads only finished revisions (or its own in-memory preview).

pub mod bucket;
pub mod build;
pub mod clock;
pub mod config;
pub mod content;
pub mod deploy;
pub mod digest;
pub mod history;
pub mod images;
pub mod import;
pub mod init;
pub mod item;
pub mod ledger;
pub mod markdown;
pub mod os;
pub mod output;
pub mod preview;
pub mod publish;
pub mod results;
pub mod run;
pub mod serve;
pub mod site;
pub mod store;
pub mod targets;
pub mod tlog;
pub mod watch;

/// Frees `value` on a thread of its own. A run over 100,000 files ends holding a few million
/// small allocations (paths, keys, rows) whose freeing took 40-100 ms on the command's
/// critical path; a command line process may even exit before the thread is done, which is
/// fine: the kernel takes the memory back at once.
pub fn drop_later<T: Send + 'static>(value: T) {
    // Without a thread to be had, the closure and the value in it are dropped right here.
    let _ = std::thread::Builder::new()
        .name("drop".into())
        .spawn(move || drop(value));
}

/// With the `failpoints` feature, appends `name` to the file `FENCEPOST_FAILPOINT_LOG` names
/// (when set) as a fail point is reached, before its action runs: a test can wait for a
/// process to arrive at a `sleep` fail point and act in the window it holds open.
#[cfg(feature = "failpoints")]
pub fn failpoint_reached(name: &str) {
    use std::io::Write;
    if let Some(path) = std::env::var_os("FENCEPOST_FAILPOINT_LOG") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{name}");
        }
    }
}

/// Expands to nothing unless the `failpoints` feature is on; then it is a named fail point
/// (see the README's list) that tests configure through the `FAILPOINTS` environment variable.
/// Besides the `fail` crate's actions (`panic`, `sleep(ms)`, `pause`, ...), `return` ends the
/// process on the spot with status 137 and no clean-up, like `kill -9`.
#[macro_export]
macro_rules! fail_point {
    ($name:expr) => {{
        #[cfg(feature = "failpoints")]
        {
            $crate::failpoint_reached($name);
            ::fail::eval($name, |_| {
                eprintln!("fail point {}: exiting without clean-up", $name);
                std::process::exit(137)
            });
        }
    }};
}
