//! The `fencepost` binary: parses the command line and hands over to the library.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    #[cfg(feature = "failpoints")]
    let _scenario = fail::FailScenario::setup();
    match cli::run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
