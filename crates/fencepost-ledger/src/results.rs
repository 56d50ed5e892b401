//! `daily_results`: players' results, one row per (puzzle, session), a dense slot per
//! puzzle, at most a configured number of rows per puzzle — all in one statement, so there
//! is no window between a check and the write. The bare `max(slot)` sits alone in its own
//! scalar subquery, where SQLite answers it with one index lookup.

use crate::args;
use crate::db::DbErrorKind;
use crate::{Ledger, LedgerError, Tx};
use fencepost_core::clock::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Refusal {
    Duplicate,
    Full,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Insert {
    pub inserted: bool,
    pub slot: Option<i64>,
    pub reason: Option<Refusal>,
}

pub struct NewResult<'a> {
    pub puzzle: i64,
    pub session: &'a str,
    pub outcome: &'a str,
    pub guesses: i64,
}

/// Runs the single-statement insert. On refusal, a read afterwards says why (it decides
/// nothing; the statement already did).
pub fn insert(
    tx: &Tx<'_>,
    r: &NewResult<'_>,
    cap: i64,
    now: Instant,
) -> Result<Insert, LedgerError> {
    let slot: Option<i64> = tx
        .row(
            "results.insert",
            args! {
                "puzzle" => r.puzzle, "session" => r.session, "outcome" => r.outcome,
                "guesses" => r.guesses, "now" => now.0, "cap" => cap,
            },
        )?
        .map(|row| row.get(0))
        .transpose()?;
    if slot.is_some() {
        return Ok(Insert {
            inserted: true,
            slot,
            reason: None,
        });
    }
    let existing: Option<i64> = tx
        .row(
            "results.session_slot",
            args! { "puzzle" => r.puzzle, "session" => r.session },
        )?
        .map(|row| row.get(0))
        .transpose()?;
    Ok(Insert {
        inserted: false,
        slot: existing,
        reason: Some(if existing.is_some() {
            Refusal::Duplicate
        } else {
            Refusal::Full
        }),
    })
}

/// [`insert`] in a transaction of its own. Two hosts that read the same `max(slot)` race for
/// one slot; the primary key refuses the loser, whose insert runs again and takes the next
/// slot, so slots stay dense and unique and no result is lost.
pub fn add(
    ledger: &mut Ledger,
    r: &NewResult<'_>,
    cap: i64,
    now: Instant,
) -> Result<Insert, LedgerError> {
    let mut attempt = 0;
    loop {
        match ledger.write(|tx| insert(tx, r, cap, now)) {
            Err(e) if e.kind() == Some(DbErrorKind::Unique) && attempt < 100 => {
                attempt += 1;
                tracing::debug!(
                    attempt,
                    "results: slot taken by a racing insert; trying the next"
                );
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ledger;
    use std::time::Duration;

    #[test]
    fn dense_slots_duplicates_and_cap() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = Ledger::open(&dir.path().join("l.sqlite"), Duration::from_secs(1)).unwrap();
        let r = |s| NewResult {
            puzzle: 1,
            session: s,
            outcome: "win",
            guesses: 3,
        };
        let now = Instant(0);
        assert_eq!(add(&mut l, &r("a"), 2, now).unwrap().slot, Some(1));
        assert_eq!(add(&mut l, &r("b"), 2, now).unwrap().slot, Some(2));
        let dup = add(&mut l, &r("a"), 2, now).unwrap();
        assert_eq!(
            (dup.inserted, dup.reason),
            (false, Some(Refusal::Duplicate))
        );
        let full = add(&mut l, &r("c"), 2, now).unwrap();
        assert_eq!(
            (full.inserted, full.slot, full.reason),
            (false, None, Some(Refusal::Full))
        );
        // Another puzzle has its own slots.
        let other = add(
            &mut l,
            &NewResult {
                puzzle: 2,
                session: "a",
                outcome: "loss",
                guesses: 6,
            },
            2,
            now,
        )
        .unwrap();
        assert_eq!(other.slot, Some(1));
    }
}
