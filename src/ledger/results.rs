//! `daily_results`: players' results, one row per (puzzle, session), a dense slot per
//! puzzle, at most a configured number of rows per puzzle — all in one statement, so there
//! is no window between a check and the write. The bare `max(slot)` sits alone in its own
//! scalar subquery, where SQLite answers it with one index lookup.

use crate::clock::Instant;
use rusqlite::{named_params, Connection, OptionalExtension};

pub const INSERT: &str = "INSERT INTO daily_results (puzzle_id, slot, session_id, outcome, guesses_used, created_at)
     SELECT :puzzle, next.slot, :session, :outcome, :guesses, :now
     FROM (SELECT coalesce((SELECT max(slot) FROM daily_results WHERE puzzle_id = :puzzle), 0) + 1 AS slot) AS next
     WHERE next.slot <= :cap
     ON CONFLICT (puzzle_id, session_id) DO NOTHING
     RETURNING slot";

const SESSION_SLOT: &str =
    "SELECT slot FROM daily_results WHERE puzzle_id = :puzzle AND session_id = :session";

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
    conn: &Connection,
    r: &NewResult<'_>,
    cap: i64,
    now: Instant,
) -> rusqlite::Result<Insert> {
    let slot: Option<i64> = conn
        .prepare_cached(INSERT)?
        .query_row(
            named_params! {
                ":puzzle": r.puzzle, ":session": r.session, ":outcome": r.outcome,
                ":guesses": r.guesses, ":now": now.0, ":cap": cap,
            },
            |row| row.get(0),
        )
        .optional()?;
    if slot.is_some() {
        return Ok(Insert {
            inserted: true,
            slot,
            reason: None,
        });
    }
    let existing: Option<i64> = conn
        .prepare_cached(SESSION_SLOT)?
        .query_row(
            named_params! { ":puzzle": r.puzzle, ":session": r.session },
            |row| row.get(0),
        )
        .optional()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Ledger;
    use rusqlite::StatementStatus;
    use std::time::Duration;

    #[test]
    fn dense_slots_duplicates_and_cap() {
        let dir = tempfile::tempdir().unwrap();
        let l = Ledger::open(&dir.path().join("l.sqlite"), Duration::from_secs(1)).unwrap();
        let r = |s| NewResult {
            puzzle: 1,
            session: s,
            outcome: "win",
            guesses: 3,
        };
        let now = Instant(0);
        assert_eq!(insert(l.conn(), &r("a"), 2, now).unwrap().slot, Some(1));
        assert_eq!(insert(l.conn(), &r("b"), 2, now).unwrap().slot, Some(2));
        let dup = insert(l.conn(), &r("a"), 2, now).unwrap();
        assert_eq!(
            (dup.inserted, dup.reason),
            (false, Some(Refusal::Duplicate))
        );
        let full = insert(l.conn(), &r("c"), 2, now).unwrap();
        assert_eq!(
            (full.inserted, full.slot, full.reason),
            (false, None, Some(Refusal::Full))
        );
        // Another puzzle has its own slots.
        let other = insert(
            l.conn(),
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

    /// With 49,999 rows for one puzzle, the next insert is still one index lookup: SQLite's
    /// own counters show no full-scan steps, no sort, and a small bounded number of VM steps.
    #[test]
    fn insert_near_the_cap_does_bounded_work() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = Ledger::open(&dir.path().join("l.sqlite"), Duration::from_secs(1)).unwrap();
        {
            let tx = l.write().unwrap();
            tx.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 49999)
                 INSERT INTO daily_results (puzzle_id, slot, session_id, outcome, guesses_used, created_at)
                 SELECT 7, i, 's' || i, 'win', 3, 0 FROM n",
                [],
            )
            .unwrap();
            // Another puzzle's rows must not be read either.
            tx.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
                 INSERT INTO daily_results (puzzle_id, slot, session_id, outcome, guesses_used, created_at)
                 SELECT 8, i, 's' || i, 'win', 3, 0 FROM n",
                [],
            )
            .unwrap();
            tx.commit().unwrap();
        }
        let conn = l.conn();
        let mut stmt = conn.prepare(INSERT).unwrap();
        let slot: i64 = stmt
            .query_row(
                named_params! { ":puzzle": 7, ":session": "new", ":outcome": "win", ":guesses": 2, ":now": 0, ":cap": 50_000 },
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(slot, 50_000);
        let vm_steps = stmt.get_status(StatementStatus::VmStep);
        let full_scan = stmt.get_status(StatementStatus::FullscanStep);
        let sorts = stmt.get_status(StatementStatus::Sort);
        assert_eq!(full_scan, 0, "no full-scan steps");
        assert_eq!(sorts, 0, "no sort");
        assert!(
            vm_steps < 200,
            "the insert took {vm_steps} VM steps; a scan of 49,999 rows takes far more"
        );
        // And the cap holds, still cheaply.
        let mut stmt = conn.prepare(INSERT).unwrap();
        let none: Option<i64> = stmt
            .query_row(
                named_params! { ":puzzle": 7, ":session": "late", ":outcome": "win", ":guesses": 2, ":now": 0, ":cap": 50_000 },
                |r| r.get(0),
            )
            .optional()
            .unwrap();
        assert_eq!(none, None);
        assert!(stmt.get_status(StatementStatus::VmStep) < 200);
    }
}
