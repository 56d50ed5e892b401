//! `fencepost results add`: validates a player's result and records it with the ledger's
//! single-statement insert.

use crate::Site;
use fencepost_core::clock::Clock;
use fencepost_ledger::results::{self, Insert, NewResult};
use fencepost_ledger::LedgerError;

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("--{flag} {value:?}: {why}")]
    Invalid {
        flag: &'static str,
        value: String,
        why: &'static str,
    },
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

pub fn add(
    site: &Site,
    clock: &Clock,
    puzzle: i64,
    session: &str,
    outcome: &str,
    guesses: i64,
) -> Result<Insert, ResultsError> {
    if puzzle < 1 {
        return Err(ResultsError::Invalid {
            flag: "puzzle",
            value: puzzle.to_string(),
            why: "must be a positive item id",
        });
    }
    if session.trim().is_empty() || session.len() > 200 {
        return Err(ResultsError::Invalid {
            flag: "session",
            value: session.into(),
            why: "must be 1 to 200 characters",
        });
    }
    if !(1..=100).contains(&guesses) {
        return Err(ResultsError::Invalid {
            flag: "guesses",
            value: guesses.to_string(),
            why: "must be between 1 and 100",
        });
    }
    let mut ledger = site.open_ledger()?;
    let r = NewResult {
        puzzle,
        session,
        outcome,
        guesses,
    };
    Ok(results::add(
        &mut ledger,
        &r,
        site.config.results.max_per_puzzle,
        clock.now(),
    )?)
}
