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
