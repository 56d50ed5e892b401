//! A bucket ledger's local replica: a SQLite file that is only a cache of the log in the
//! bucket (see [`crate::ledger::bucket`]). This module is the rusqlite side of it: where the
//! replica stands in the log, a write transaction that records what it changed, the replay of
//! other writers' entries, and whole-database images (snapshots, the first entry, a schema
//! migration) made and restored with SQLite's backup API, which copies pages as they are —
//! so every table's rowids survive, as `VACUUM INTO` would not promise.

use super::{db_error, query_on, Conn, Effect, Recorded, SqliteTx};
use crate::ledger::db::Row;
use crate::ledger::LedgerError;
use rusqlite::{Connection, TransactionBehavior};
use std::cell::RefCell;
use std::path::Path;
use std::time::Duration;

/// Where a replica stands: one row, kept beside the ledger's tables (and so inside every
/// image), never recorded into the log.
const META: &str = "CREATE TABLE IF NOT EXISTS fp_replica (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    snapshot_seq INTEGER NOT NULL DEFAULT 0
);
INSERT OR IGNORE INTO fp_replica (id, seq, snapshot_seq) VALUES (1, 0, 0);";

fn sql_err<'a>(name: &'a str, doing: &'static str) -> impl Fn(rusqlite::Error) -> LedgerError + 'a {
    move |e| LedgerError::Sql {
        ledger: name.to_string(),
        statement: doing,
        error: db_error(e),
    }
}

/// Opens (creating) the replica at `path`, unmigrated: its schema is what the log made it.
pub(in crate::ledger) fn open(
    path: &Path,
    name: &str,
    busy_timeout: Duration,
) -> Result<Conn, LedgerError> {
    let conn = super::open_with(path, name, busy_timeout, false)?;
    conn.0
        .execute_batch(META)
        .map_err(sql_err(name, "preparing the local copy"))?;
    Ok(conn)
}

/// The log entry the replica has applied last, and the newest snapshot it knows of.
pub(in crate::ledger) fn position(conn: &Conn, name: &str) -> Result<(i64, i64), LedgerError> {
    conn.0
        .query_row(
            "SELECT seq, snapshot_seq FROM fp_replica WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql_err(name, "reading where the local copy stands"))
}

/// Notes that snapshot `seq` exists (so the next is not taken too soon).
pub(in crate::ledger) fn saw_snapshot(
    conn: &Conn,
    name: &str,
    seq: i64,
) -> Result<(), LedgerError> {
    conn.0
        .execute(
            "UPDATE fp_replica SET snapshot_seq = max(snapshot_seq, ?1) WHERE id = 1",
            [seq],
        )
        .map(drop)
        .map_err(sql_err(name, "noting a snapshot"))
}

/// The replica's schema version.
pub(in crate::ledger) fn schema_version(conn: &Conn, name: &str) -> Result<i64, LedgerError> {
    super::user_version(&conn.0).map_err(sql_err(name, "reading its schema version"))
}

/// A write transaction that records every statement that changes something; returns it and
/// the log entry the replica stands at, read inside it (the entry this one must follow).
pub(in crate::ledger) fn begin_recorded<'a>(
    conn: &'a mut Conn,
    name: &str,
) -> Result<(SqliteTx<'a>, i64), LedgerError> {
    let (tx, seq) = begin_at(conn, name)?;
    Ok((
        SqliteTx {
            tx,
            record: Some(RefCell::new(Vec::new())),
        },
        seq,
    ))
}

/// What a recorded transaction changed, in order.
pub(in crate::ledger) fn recorded(tx: &SqliteTx<'_>) -> Vec<Recorded> {
    tx.record
        .as_ref()
        .map(|r| r.borrow().clone())
        .unwrap_or_default()
}

/// Commits a recorded transaction whose entry `seq` the log now holds.
pub(in crate::ledger) fn commit_as(
    tx: SqliteTx<'_>,
    name: &str,
    seq: i64,
) -> Result<(), LedgerError> {
    tx.tx
        .execute("UPDATE fp_replica SET seq = ?1 WHERE id = 1", [seq])
        .map_err(sql_err(name, "moving the local copy on"))?;
    tx.tx.commit().map_err(sql_err(name, "commit"))
}

/// Why entries could not be replayed.
pub(in crate::ledger) enum Replay {
    /// Another process on this host applied them first: read where the replica stands again.
    Moved,
    /// Statement `index` of entry `seq` did not answer what it answered its writer.
    Diverged { seq: i64, index: usize, why: String },
}

/// Applies `entries` (each its log position and statements), which must follow `from`, in one
/// transaction; every statement must answer what it answered its writer.
pub(in crate::ledger) fn replay(
    conn: &mut Conn,
    name: &str,
    from: i64,
    entries: &[(i64, Vec<Recorded>)],
) -> Result<Result<(), Replay>, LedgerError> {
    let (tx, seq) = begin_at(conn, name)?;
    if seq != from {
        return Ok(Err(Replay::Moved));
    }
    for (seq, statements) in entries {
        for (index, st) in statements.iter().enumerate() {
            if let Err(why) = replay_one(&tx, st) {
                return Ok(Err(Replay::Diverged {
                    seq: *seq,
                    index,
                    why,
                }));
            }
        }
    }
    let last = entries.last().map_or(from, |(s, _)| *s);
    tx.execute("UPDATE fp_replica SET seq = ?1 WHERE id = 1", [last])
        .map_err(sql_err(name, "moving the local copy on"))?;
    tx.commit().map_err(sql_err(name, "commit"))?;
    Ok(Ok(()))
}

fn replay_one(conn: &Connection, st: &Recorded) -> Result<(), String> {
    match &st.effect {
        Effect::Changed(n) => {
            let mut stmt = conn.prepare_cached(&st.sql).map_err(|e| e.to_string())?;
            let got = stmt
                .execute(rusqlite::params_from_iter(super::bind(&st.values)))
                .map_err(|e| e.to_string())?;
            (got == *n)
                .then_some(())
                .ok_or_else(|| format!("changed {got} rows where its writer changed {n}"))
        }
        Effect::Rows(digest) => {
            let rows: Vec<Row> =
                query_on(conn, "replay", &st.sql, &st.values).map_err(|e| e.message)?;
            (super::rows_digest(&rows) == *digest)
                .then_some(())
                .ok_or_else(|| "answered other rows than it answered its writer".to_string())
        }
    }
}

/// Writes the replica as it stands to `to` (a whole-database image: a snapshot).
pub(in crate::ledger) fn export(conn: &Conn, name: &str, to: &Path) -> Result<(), LedgerError> {
    let _ = std::fs::remove_file(to);
    conn.0
        .backup(rusqlite::DatabaseName::Main, to, None)
        .map_err(sql_err(name, "writing a snapshot of the local copy"))
}

/// Replaces the replica's whole content with the image at `from`.
pub(in crate::ledger) fn restore(
    conn: &mut Conn,
    name: &str,
    from: &Path,
) -> Result<(), LedgerError> {
    let source = Connection::open_with_flags(from, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(sql_err(name, "opening a downloaded image"))?;
    let backup = rusqlite::backup::Backup::new(&source, &mut conn.0)
        .map_err(sql_err(name, "restoring an image"))?;
    backup
        .run_to_completion(256, Duration::from_millis(5), None)
        .map_err(sql_err(name, "restoring an image"))?;
    drop(backup);
    conn.0
        .execute_batch(META)
        .map_err(sql_err(name, "preparing the local copy"))
}

/// Makes at `to` the image of a ledger at log entry `seq`: `from`'s content (a new empty
/// ledger when `None`), brought to this binary's schema.
pub(in crate::ledger) fn image(
    from: Option<&Conn>,
    name: &str,
    to: &Path,
    seq: i64,
) -> Result<(), LedgerError> {
    let _ = std::fs::remove_file(to);
    if let Some(from) = from {
        export(from, name, to)?;
    }
    let conn = super::open(to, name, Duration::from_secs(5))?;
    conn.0
        .execute_batch(META)
        .map_err(sql_err(name, "preparing an image"))?;
    conn.0
        .execute_batch(&format!(
            "UPDATE fp_replica SET seq = {seq} WHERE id = 1; PRAGMA journal_mode = DELETE;"
        ))
        .map_err(sql_err(name, "preparing an image"))?;
    Ok(())
}

/// A write transaction on the replica, and the log entry it stands at.
fn begin_at<'a>(
    conn: &'a mut Conn,
    name: &str,
) -> Result<(rusqlite::Transaction<'a>, i64), LedgerError> {
    let tx = conn
        .0
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql_err(name, "begin"))?;
    let seq: i64 = tx
        .query_row("SELECT seq FROM fp_replica WHERE id = 1", [], |r| r.get(0))
        .map_err(sql_err(name, "reading where the local copy stands"))?;
    Ok((tx, seq))
}
