//! Versioned migrations tracked by `PRAGMA user_version`. Each migration is a numbered `.sql`
//! file; all pending ones run in one `BEGIN IMMEDIATE` transaction, which also re-reads the
//! version, so processes that open a new ledger at the same instant migrate it once.

use super::{Ledger, LedgerError};
use rusqlite::TransactionBehavior;

/// The migrations, in order; migration `i` brings the schema to version `i + 1`.
pub const MIGRATIONS: &[&str] = &[
    include_str!("sql/0001_init.sql"),
    include_str!("sql/0002_ledger_id.sql"),
    include_str!("sql/0003_parking_due_anchor.sql"),
    include_str!("sql/0004_deploy.sql"),
];

/// The schema version this binary writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

pub fn user_version(conn: &rusqlite::Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

pub(super) fn refuse_newer(
    conn: &rusqlite::Connection,
    path: &std::path::Path,
) -> Result<(), LedgerError> {
    let found = user_version(conn).map_err(|source| {
        if super::is_busy(&source) {
            LedgerError::Busy {
                path: path.to_path_buf(),
                doing: "reading its schema version",
                waited_ms: 0,
            }
        } else {
            LedgerError::Corrupt {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    if found > LATEST {
        return Err(LedgerError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: LATEST,
        });
    }
    Ok(())
}

pub(super) fn migrate(ledger: &mut Ledger) -> Result<(), LedgerError> {
    let path = ledger.path.clone();
    let corrupt = |source: rusqlite::Error| {
        if super::is_busy(&source) {
            LedgerError::Busy {
                path: path.clone(),
                doing: "creating or migrating its schema",
                waited_ms: 0,
            }
        } else {
            LedgerError::Corrupt {
                path: path.clone(),
                source,
            }
        }
    };
    // Cheap check first, so a current ledger never takes the write lock here.
    if user_version(&ledger.conn).map_err(corrupt)? == LATEST {
        return Ok(());
    }
    let tx = ledger
        .conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(corrupt)?;
    let found = user_version(&tx).map_err(corrupt)?;
    if found > LATEST {
        return Err(LedgerError::TooNew {
            path: path.clone(),
            found,
            supported: LATEST,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.execute_batch(sql).map_err(corrupt)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)
            .map_err(corrupt)?;
        crate::fail_point!("ledger.after_migration_step");
    }
    tx.commit().map_err(corrupt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn migrates_a_new_ledger_and_refuses_a_newer_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        let ledger = Ledger::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(user_version(ledger.conn()).unwrap(), LATEST);
        ledger
            .conn()
            .pragma_update(None, "user_version", LATEST + 1)
            .unwrap();
        drop(ledger);
        match Ledger::open(&path, Duration::from_secs(1)) {
            Err(LedgerError::TooNew { found, .. }) => assert_eq!(found, LATEST + 1),
            other => panic!("expected TooNew, got {:?}", other.err()),
        }
    }

    #[test]
    fn reopening_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        drop(Ledger::open(&path, Duration::from_secs(1)).unwrap());
        let ledger = Ledger::open(&path, Duration::from_secs(1)).unwrap();
        let rev: i64 = ledger
            .conn()
            .query_row(
                "SELECT publication_revision FROM site_state WHERE id = 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(rev, 0);
    }
}

#[cfg(test)]
mod upgrade_tests {
    use super::*;
    use std::time::Duration;

    /// A ledger frozen at schema 1 (as fencepost 0.1 left it) gains an id on upgrade and
    /// keeps its revision.
    #[test]
    fn a_version_1_ledger_gets_an_id_and_keeps_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(MIGRATIONS[0]).unwrap();
            c.execute_batch(
                "UPDATE site_state SET publication_revision = 7; PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        let l = Ledger::open(&path, Duration::from_secs(1)).unwrap();
        let (rev, id): (i64, String) = l
            .conn()
            .query_row(
                "SELECT publication_revision, ledger_id FROM site_state WHERE id = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(rev, 7);
        assert_eq!(id.len(), 32);
        assert_eq!(crate::ledger::status::ledger_id(l.conn()).unwrap(), id);
    }
}
