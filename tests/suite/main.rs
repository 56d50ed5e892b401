//! fencepost's integration tests: one binary, so the suite links once, with a module per
//! area. Every test drives the real `fencepost` binary (or the library, for the contracts)
//! against real SQLite, PostgreSQL, an S3 server over HTTP, a browser and workerd; the
//! servers are started on 127.0.0.1 by the tests and stopped by them. The modules that crash
//! processes at fail points need `--features failpoints` (`scripts/test` sets it).
//!
//! Run one area: `scripts/test --test suite origins::`.

// The helpers are `pub` to the suite's modules; the crate's `unreachable_pub` lint (Cargo.toml)
// draws the library's doors, not these.
#![allow(unreachable_pub)]

mod as_written;
mod bad_input;
mod browser;
mod build;
#[cfg(feature = "failpoints")]
mod carried_out;
mod cli_manners;
mod collections;
mod common;
mod concurrency;
#[cfg(feature = "failpoints")]
mod deploy;
mod docs;
#[cfg(feature = "failpoints")]
mod edge;
#[cfg(feature = "failpoints")]
mod failpoints;
#[cfg(feature = "failpoints")]
mod faults;
mod first_run;
mod hosts;
mod house;
mod hugo_habits;
mod import;
#[cfg(feature = "failpoints")]
mod ledger_bucket;
mod ledger_contract;
mod origins;
mod publish;
mod regression;
#[cfg(feature = "failpoints")]
mod run;
mod serve;
mod serve_from;
mod site_features;
mod soak;

/// Without `--features failpoints` the modules above that crash processes at fail points are
/// not compiled: say so loudly, naming them, and fail in CI, where the whole suite must run
/// (`scripts/test` sets the feature).
#[cfg(not(feature = "failpoints"))]
mod failpoints_gate {
    #[test]
    fn modules_behind_the_failpoints_feature_are_named_when_skipped() {
        let main = include_str!("main.rs");
        let mut lines = main.lines();
        let mut skipped = Vec::new();
        while let Some(line) = lines.next() {
            if line.trim() == "#[cfg(feature = \"failpoints\")]" {
                if let Some(m) = lines.next().and_then(|l| l.trim().strip_prefix("mod ")) {
                    skipped.push(m.trim_end_matches(';').to_string());
                }
            }
        }
        assert!(
            skipped.len() >= 5,
            "the gate's modules are read from main.rs: {skipped:?}"
        );
        // Straight to stderr, past the harness's capture (which takes only `eprintln!`), so a
        // passing run shows it too.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED without --features failpoints: {} (run scripts/test, or cargo test --features failpoints) ***\n",
            skipped.join(", ")
        );
        assert!(
            std::env::var("CI").is_err(),
            "CI runs the whole suite: these modules were not compiled: {skipped:?}"
        );
    }
}
