//! A bucket ledger's local replica: a SQLite file that is only a cache of the log in the
//! bucket (see [`crate::bucket`]). This module is the rusqlite side of it: where the
//! replica stands in the log, a write transaction that records what it changed, the replay of
//! other writers' entries, and whole-database images (snapshots, the first entry, a schema
//! migration) made and restored with SQLite's backup API, which copies pages as they are —
//! so every table's rowids survive, as `VACUUM INTO` would not promise.

use super::{db_error, query_on, Conn, Effect, Recorded, SqliteTx};
use crate::db::Row;
use crate::LedgerError;
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
INSERT OR IGNORE INTO fp_replica (id, seq, snapshot_seq) VALUES (1, 0, 0);
CREATE TABLE IF NOT EXISTS fp_replica_tip (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    etag TEXT
);";

/// The log entry a replica stands at, as the store showed it when the replica applied or
/// wrote it: so a later listing can tell that entry from another log's at the same position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tip {
    pub(crate) seq: i64,
    pub(crate) bytes: u64,
    pub(crate) etag: Option<String>,
}

fn sql_err<'a>(name: &'a str, doing: &'static str) -> impl Fn(rusqlite::Error) -> LedgerError + 'a {
    move |e| LedgerError::Sql {
        ledger: name.to_string(),
        statement: doing,
        error: db_error(e),
    }
}

/// Opens (creating) the replica at `path`, unmigrated: its schema is what the log made it.
pub(crate) fn open(path: &Path, name: &str, busy_timeout: Duration) -> Result<Conn, LedgerError> {
    let conn = super::open_with(path, name, busy_timeout, false)?;
    conn.0
        .execute_batch(META)
        .map_err(sql_err(name, "preparing the local copy"))?;
    Ok(conn)
}

/// The log entry the replica has applied last, and the newest snapshot it knows of.
pub(crate) fn position(conn: &Conn, name: &str) -> Result<(i64, i64), LedgerError> {
    conn.0
        .query_row(
            "SELECT seq, snapshot_seq FROM fp_replica WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql_err(name, "reading where the local copy stands"))
}

/// The entry the replica stands at, as the store showed it (`None`: a replica or image made
/// before this was kept, or one at the very start).
pub(crate) fn tip(conn: &Conn, name: &str) -> Result<Option<Tip>, LedgerError> {
    use rusqlite::OptionalExtension;
    conn.0
        .query_row(
            "SELECT seq, bytes, etag FROM fp_replica_tip WHERE id = 1",
            [],
            |r| {
                Ok(Tip {
                    seq: r.get(0)?,
                    bytes: r.get::<_, i64>(1)? as u64,
                    etag: r.get(2)?,
                })
            },
        )
        .optional()
        .map_err(sql_err(name, "reading where the local copy stands"))
}

fn set_tip(conn: &Connection, name: &str, tip: &Tip) -> Result<(), LedgerError> {
    conn.execute(
        "INSERT INTO fp_replica_tip (id, seq, bytes, etag) VALUES (1, ?1, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, bytes = excluded.bytes, etag = excluded.etag",
        rusqlite::params![tip.seq, tip.bytes as i64, tip.etag],
    )
    .map(drop)
    .map_err(sql_err(name, "noting the entry the local copy stands at"))
}

/// Notes the stamp of the entry the replica stands at (an image it was restored from).
pub(crate) fn stands_at(conn: &Conn, name: &str, tip: &Tip) -> Result<(), LedgerError> {
    set_tip(&conn.0, name, tip)
}

/// The ledger's own id (`site_state.ledger_id`), as the replica holds it.
pub(crate) fn ledger_id(conn: &Conn, name: &str) -> Result<Option<String>, LedgerError> {
    ledger_id_on(&conn.0, name)
}

/// [`ledger_id`] inside a recorded transaction (read, not recorded).
pub(crate) fn ledger_id_in(tx: &SqliteTx<'_>, name: &str) -> Result<Option<String>, LedgerError> {
    ledger_id_on(&tx.tx, name)
}

fn ledger_id_on(conn: &Connection, name: &str) -> Result<Option<String>, LedgerError> {
    use rusqlite::OptionalExtension;
    let has_table: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'site_state'",
            [],
            |r| r.get(0),
        )
        .map_err(sql_err(name, "reading the ledger's id"))?;
    if !has_table {
        return Ok(None);
    }
    conn.query_row("SELECT ledger_id FROM site_state WHERE id = 1", [], |r| {
        r.get::<_, Option<String>>(0)
    })
    .optional()
    .map(Option::flatten)
    .map_err(sql_err(name, "reading the ledger's id"))
}

/// The publication revision inside a recorded transaction (read, not recorded): what a D1
/// log keeps beside the entry for the edge.
pub(crate) fn publication_revision_in(
    tx: &SqliteTx<'_>,
    name: &str,
) -> Result<Option<i64>, LedgerError> {
    use rusqlite::OptionalExtension;
    tx.tx
        .query_row(
            "SELECT publication_revision FROM site_state WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(sql_err(name, "reading the publication revision"))
}

/// The audit chain as the replica holds it: (seq, current_hash), in order.
pub(crate) fn audit_chain(conn: &Conn, name: &str) -> Result<Vec<(i64, String)>, LedgerError> {
    let mut stmt = conn
        .0
        .prepare("SELECT seq, current_hash FROM audit_log ORDER BY seq")
        .map_err(sql_err(name, "reading the audit chain"))?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(sql_err(name, "reading the audit chain"))?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(sql_err(name, "reading the audit chain"))
}

/// A digest of the ledger's tables as the replica holds them: every table but the replica's
/// own bookkeeping (`fp_replica`, `fp_replica_tip`) and SQLite's, by name; each row's values
/// in column order, the rows sorted (so no rowid or physical order counts). What a snapshot
/// record vouches for, and what a replay of the log must give again at the same position.
pub(crate) fn tables_digest(conn: &Conn, name: &str) -> Result<String, LedgerError> {
    digest_of(&conn.0, name)
}

/// [`tables_digest`] of the database image at `path` (a snapshot as exported): what its
/// record vouches for is the image uploaded, read back — never the live connection, which may
/// stand past it inside a transaction the image does not hold.
pub(crate) fn tables_digest_of_image(path: &Path, name: &str) -> Result<String, LedgerError> {
    let image = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(sql_err(name, "opening a snapshot image"))?;
    digest_of(&image, name)
}

fn digest_of(conn: &Connection, name: &str) -> Result<String, LedgerError> {
    use rusqlite::types::ValueRef;
    use sha2::{Digest, Sha256};
    let err = || sql_err(name, "digesting the ledger's tables");
    let tables: Vec<String> = {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT IN ('fp_replica', 'fp_replica_tip') ORDER BY name")
            .map_err(err())?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(err())?;
        rows.collect::<Result<_, _>>().map_err(err())?
    };
    let mut all = Sha256::new();
    for table in tables {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{}\"", table.replace('"', "\"\"")))
            .map_err(err())?;
        let n = stmt.column_count();
        let mut rows: Vec<Vec<u8>> = Vec::new();
        let mut q = stmt.query([]).map_err(err())?;
        while let Some(r) = q.next().map_err(err())? {
            let mut row = Vec::new();
            for i in 0..n {
                let (tag, bytes): (u8, Vec<u8>) = match r.get_ref(i).map_err(err())? {
                    ValueRef::Null => (0, Vec::new()),
                    ValueRef::Integer(v) => (1, v.to_be_bytes().to_vec()),
                    ValueRef::Real(v) => (2, v.to_be_bytes().to_vec()),
                    ValueRef::Text(t) => (3, t.to_vec()),
                    ValueRef::Blob(b) => (4, b.to_vec()),
                };
                row.push(tag);
                row.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
                row.extend_from_slice(&bytes);
            }
            rows.push(row);
        }
        rows.sort_unstable();
        all.update(table.as_bytes());
        all.update((rows.len() as u64).to_be_bytes());
        for row in rows {
            all.update(Sha256::digest(&row));
        }
    }
    Ok(hex::encode(all.finalize()))
}

/// Notes that snapshot `seq` exists (so the next is not taken too soon).
pub(crate) fn saw_snapshot(conn: &Conn, name: &str, seq: i64) -> Result<(), LedgerError> {
    conn.0
        .execute(
            "UPDATE fp_replica SET snapshot_seq = max(snapshot_seq, ?1) WHERE id = 1",
            [seq],
        )
        .map(drop)
        .map_err(sql_err(name, "noting a snapshot"))
}

/// The replica's schema version.
pub(crate) fn schema_version(conn: &Conn, name: &str) -> Result<i64, LedgerError> {
    super::user_version(&conn.0).map_err(sql_err(name, "reading its schema version"))
}

/// A write transaction that records every statement that changes something; returns it and
/// the log entry the replica stands at, read inside it (the entry this one must follow).
pub(crate) fn begin_recorded<'a>(
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
pub(crate) fn recorded(tx: &SqliteTx<'_>) -> Vec<Recorded> {
    tx.record
        .as_ref()
        .map(|r| r.borrow().clone())
        .unwrap_or_default()
}

/// Commits a recorded transaction whose entry (`tip`) the log now holds.
pub(crate) fn commit_as(tx: SqliteTx<'_>, name: &str, tip: &Tip) -> Result<(), LedgerError> {
    tx.tx
        .execute("UPDATE fp_replica SET seq = ?1 WHERE id = 1", [tip.seq])
        .map_err(sql_err(name, "moving the local copy on"))?;
    set_tip(&tx.tx, name, tip)?;
    tx.tx.commit().map_err(sql_err(name, "commit"))
}

/// Why entries could not be replayed.
pub(crate) enum Replay {
    /// Another process on this host applied them first: read where the replica stands again.
    Moved,
    /// Statement `index` of entry `seq` did not answer what it answered its writer.
    Diverged { seq: i64, index: usize, why: String },
}

/// Applies `entries` (each its log position and statements), which must follow `from`, in one
/// transaction; every statement must answer what it answered its writer. `last` is the stamp
/// of the last entry.
pub(crate) fn replay(
    conn: &mut Conn,
    name: &str,
    from: i64,
    entries: &[(i64, Vec<Recorded>)],
    last: &Tip,
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
    tx.execute("UPDATE fp_replica SET seq = ?1 WHERE id = 1", [last.seq])
        .map_err(sql_err(name, "moving the local copy on"))?;
    set_tip(&tx, name, last)?;
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
pub(crate) fn export(conn: &Conn, name: &str, to: &Path) -> Result<(), LedgerError> {
    let _ = std::fs::remove_file(to);
    conn.0
        .backup(rusqlite::DatabaseName::Main, to, None)
        .map_err(sql_err(name, "writing a snapshot of the local copy"))
}

/// Replaces the replica's whole content with the image at `from`.
pub(crate) fn restore(conn: &mut Conn, name: &str, from: &Path) -> Result<(), LedgerError> {
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

/// Checks that the image at `path` is a SQLite database that says it stands at log entry
/// `seq` — and, `whole`, that every page of it reads (`PRAGMA quick_check`, O(size): for an
/// image nothing else vouches for; a snapshot's digest, recorded in the log, already does):
/// why not, if it is not (a truncated, zeroed or misnamed download).
pub(crate) fn check_image(path: &Path, seq: i64, whole: bool) -> Result<(), String> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("it does not open as a database ({e})"))?;
    if whole {
        let check: String = conn
            .query_row("PRAGMA quick_check(1)", [], |r| r.get(0))
            .map_err(|e| format!("it is not a whole database ({e})"))?;
        if check != "ok" {
            return Err(format!("it is not a whole database ({check})"));
        }
    }
    let at: i64 = conn
        .query_row("SELECT seq FROM fp_replica WHERE id = 1", [], |r| r.get(0))
        .map_err(|e| format!("it does not say where in the log it stands ({e})"))?;
    if at != seq {
        return Err(format!("it says it stands at log entry {at}, not {seq}"));
    }
    Ok(())
}

/// Makes at `to` the image of a ledger at log entry `seq`: `from`'s content (a new empty
/// ledger when `None`), brought to this binary's schema.
pub(crate) fn image(
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
