//! What every room of fencepost stands on: instants ([`clock`]), digests ([`digest`]), item
//! names and cached file facts ([`item`]), what differs between operating systems ([`os`]),
//! object stores ([`store`]), and the fail points every multi-step write is tested at
//! ([`fail_point!`]).

pub mod clock;
pub mod digest;
pub mod item;
pub mod mapped;
pub mod os;
pub mod store;
pub mod text;

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
