//! The `fencepost` binary: parses the command line and hands over to the library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    #[cfg(feature = "failpoints")]
    let _scenario = fail::FailScenario::setup();
    match cli::run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", cli::errors::message(&e));
            // With --json the error is on stdout too, as one JSON object, for the CI step that
            // parses it.
            if std::env::args().skip(1).any(|a| a == "--json") {
                cli::say(&cli::errors::to_json(&e).to_string());
            }
            ExitCode::FAILURE
        }
    }
}

/// A build or publish over a large site allocates millions of small strings on several
/// threads at once; glibc's per-thread arenas grow a page range at a time (2,000+ `mprotect`
/// calls in one build at 10,000 items). mimalloc: publish + build after one new item at
/// 10,000 items ~13% faster, the same at 100,000, peak RSS +8%. Built without transparent
/// huge pages (feature `no_thp`): a build's short-lived heap touches each 2 MiB page sparsely,
/// and zeroing whole huge pages was a third of the CPU of a build after one publish at
/// 100,000 items.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
