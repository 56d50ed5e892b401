//! The SQLite backend: the only module that touches `rusqlite`.
//!
//! Opening sets WAL, a busy timeout and foreign keys, and brings the schema up to date in one
//! transaction; a ledger written by a newer fencepost is refused and left untouched. Every
//! write transaction starts with `BEGIN IMMEDIATE`: a deferred transaction that reads and
//! then writes gets SQLITE_BUSY at the upgrade instead of waiting for the lock.

use super::db::{DbError, DbErrorKind, Row, Value};
use super::{schema, LedgerError, TxMode};
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::cell::RefCell;
use std::path::Path;
use std::time::Duration;

pub(super) mod replica;

/// An open SQLite ledger connection.
pub(super) struct Conn(Connection);

/// A transaction on it (dropped without [`commit`], it rolls back).
pub(super) struct SqliteTx<'a> {
    tx: Transaction<'a>,
    /// On a bucket ledger's replica: every statement that changed something, in order, to be
    /// committed as the next entry of the ledger's log (see [`replica`]).
    record: Option<RefCell<Vec<Recorded>>>,
}

/// One statement a write transaction ran that changed something, and what it answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    pub sql: String,
    pub values: Vec<Value>,
    pub effect: Effect,
}

/// What a recorded statement answered: a replay must answer the same, or the replica is not
/// the ledger it was thought to be.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    /// An `INSERT`/`UPDATE`/`DELETE` that changed this many rows.
    Changed(usize),
    /// A writing query (`… RETURNING`): the sha256 of the rows it answered.
    Rows(String),
}

pub(super) fn open(path: &Path, name: &str, busy_timeout: Duration) -> Result<Conn, LedgerError> {
    open_with(path, name, busy_timeout, true)
}

/// Opens the SQLite file at `path`; brings its schema up to date only when `migrate` (a
/// bucket ledger's replica is migrated by a log entry, never on its own).
fn open_with(
    path: &Path,
    name: &str,
    busy_timeout: Duration,
    migrate_it: bool,
) -> Result<Conn, LedgerError> {
    create_parent(path)?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| LedgerError::Open {
        ledger: name.to_string(),
        error: db_error(e),
    })?;
    let started = std::time::Instant::now();
    let deadline = started + busy_timeout;
    // Opening races with other openers of a new ledger: switching to WAL and the first
    // migration need locks they may hold. Busy is waited out (within the busy timeout),
    // and only a file that really is not a ledger is called unusable.
    let classify = |doing: &'static str| {
        move |e: rusqlite::Error| {
            let source = db_error(e);
            match source.kind {
                DbErrorKind::Busy => LedgerError::Busy {
                    ledger: name.to_string(),
                    doing,
                    waited_ms: started.elapsed().as_millis() as u64,
                },
                DbErrorKind::NotALedger => LedgerError::Corrupt {
                    ledger: name.to_string(),
                    error: source,
                },
                _ => LedgerError::Sql {
                    ledger: name.to_string(),
                    statement: doing,
                    error: source,
                },
            }
        }
    };
    conn.busy_timeout(busy_timeout)
        .map_err(classify("setting the busy timeout"))?;
    // Refuse a newer ledger before anything (even the journal mode) touches it.
    retry_busy(deadline, || refuse_newer(&conn, name, started))?;
    // journal_mode=WAL returns the mode in force; it fails on a file that is not SQLite.
    let mode: String = retry_busy(deadline, || {
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(classify("switching it to WAL"))
    })?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(ledger = name, mode, "ledger is not in WAL mode");
    }
    retry_busy(deadline, || {
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(classify("setting its pragmas"))
    })?;
    register_functions(&conn).map_err(classify("registering its functions"))?;
    let mut conn = conn;
    if migrate_it {
        retry_busy(deadline, || migrate(&mut conn, name, started))?;
    }
    Ok(Conn(conn))
}

fn create_parent(path: &Path) -> Result<(), LedgerError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|source| LedgerError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })
        }
        _ => Ok(()),
    }
}

/// A file whose schema is newer than this binary's is refused, untouched.
fn refuse_newer(
    conn: &Connection,
    name: &str,
    started: std::time::Instant,
) -> Result<(), LedgerError> {
    let found =
        user_version(conn).map_err(busy_or_corrupt(name, "reading its schema version", started))?;
    schema::refuse_newer(name, found, schema::SQLITE_LATEST)
}

/// An error of `doing` on the schema: busy (waited out by the caller), else the file is no
/// ledger.
fn busy_or_corrupt<'a>(
    name: &'a str,
    doing: &'static str,
    started: std::time::Instant,
) -> impl Fn(rusqlite::Error) -> LedgerError + Copy + 'a {
    move |e| match db_error(e) {
        s if s.kind == DbErrorKind::Busy => LedgerError::Busy {
            ledger: name.to_string(),
            doing,
            waited_ms: started.elapsed().as_millis() as u64,
        },
        source => LedgerError::Corrupt {
            ledger: name.to_string(),
            error: source,
        },
    }
}

pub fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// All pending migrations in one `BEGIN IMMEDIATE` transaction, which also re-reads the
/// version, so processes that open a new ledger at the same instant migrate it once.
fn migrate(
    conn: &mut Connection,
    name: &str,
    started: std::time::Instant,
) -> Result<(), LedgerError> {
    let corrupt = busy_or_corrupt(name, "creating or migrating its schema", started);
    // Cheap check first, so a current ledger never takes the write lock here.
    if user_version(conn).map_err(corrupt)? == schema::SQLITE_LATEST {
        return Ok(());
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(corrupt)?;
    let found = user_version(&tx).map_err(corrupt)?;
    schema::refuse_newer(name, found, schema::SQLITE_LATEST)?;
    for (i, sql) in schema::SQLITE.iter().enumerate().skip(found as usize) {
        tx.execute_batch(sql).map_err(corrupt)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)
            .map_err(corrupt)?;
        fencepost_core::fail_point!("ledger.after_migration_step");
    }
    tx.commit().map_err(corrupt)
}

/// Registers `fp_audit_hash(previous_hash, seq, at, action, subject, revision, detail)`, the
/// audit chain's hash (see [`super::audit::entry_hash`]).
fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        "fp_audit_hash",
        7,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            Ok(super::audit::entry_hash(
                &ctx.get::<String>(0)?,
                ctx.get(1)?,
                ctx.get(2)?,
                &ctx.get::<String>(3)?,
                &ctx.get::<String>(4)?,
                ctx.get(5)?,
                &ctx.get::<String>(6)?,
            ))
        },
    )
}

pub(super) fn begin<'a>(
    conn: &'a mut Conn,
    name: &str,
    mode: TxMode,
) -> Result<SqliteTx<'a>, LedgerError> {
    let behavior = match mode {
        TxMode::Write => TransactionBehavior::Immediate,
        TxMode::Snapshot => TransactionBehavior::Deferred,
    };
    conn.0
        .transaction_with_behavior(behavior)
        .map(|tx| SqliteTx { tx, record: None })
        .map_err(|e| LedgerError::Sql {
            ledger: name.to_string(),
            statement: "begin",
            error: db_error(e),
        })
}

fn bind(values: &[Value]) -> Vec<rusqlite::types::Value> {
    values
        .iter()
        .map(|v| match v {
            Value::Null => rusqlite::types::Value::Null,
            Value::Int(i) => rusqlite::types::Value::Integer(*i),
            Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
        })
        .collect()
}

pub(super) fn exec(tx: &SqliteTx<'_>, text: &str, values: &[Value]) -> Result<usize, DbError> {
    let mut stmt = tx.tx.prepare_cached(text).map_err(db_error)?;
    let n = stmt
        .execute(rusqlite::params_from_iter(bind(values)))
        .map_err(db_error)?;
    // A statement that changed nothing has no effect to carry (nor did any trigger fire).
    if let Some(record) = tx.record.as_ref().filter(|_| n > 0 && !stmt.readonly()) {
        record.borrow_mut().push(Recorded {
            sql: text.to_string(),
            values: values.to_vec(),
            effect: Effect::Changed(n),
        });
    }
    Ok(n)
}

/// The sha256 of rows as a query answered them (what a replayed query must answer again).
pub(crate) fn rows_digest(rows: &[Row]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for r in rows {
        h.update(b"r");
        for v in &r.values {
            match v {
                Value::Null => h.update(b"n"),
                Value::Int(i) => {
                    h.update(b"i");
                    h.update(i.to_le_bytes());
                }
                Value::Text(t) => {
                    h.update(b"t");
                    h.update((t.len() as u64).to_le_bytes());
                    h.update(t.as_bytes());
                }
            }
        }
    }
    hex::encode(h.finalize())
}

pub(super) fn query(
    tx: &SqliteTx<'_>,
    statement: &'static str,
    text: &str,
    values: &[Value],
) -> Result<Vec<Row>, DbError> {
    let out = query_on(&tx.tx, statement, text, values)?;
    let stmt = tx.tx.prepare_cached(text).map_err(db_error)?;
    if let Some(record) = tx.record.as_ref().filter(|_| !stmt.readonly()) {
        record.borrow_mut().push(Recorded {
            sql: text.to_string(),
            values: values.to_vec(),
            effect: Effect::Rows(rows_digest(&out)),
        });
    }
    Ok(out)
}

/// A query on any connection (a transaction derefs to one).
fn query_on(
    conn: &Connection,
    statement: &'static str,
    text: &str,
    values: &[Value],
) -> Result<Vec<Row>, DbError> {
    let mut stmt = conn.prepare_cached(text).map_err(db_error)?;
    let n = stmt.column_count();
    let mut rows = stmt
        .query(rusqlite::params_from_iter(bind(values)))
        .map_err(db_error)?;
    let mut out = Vec::new();
    while let Some(r) = rows.next().map_err(db_error)? {
        let mut values = Vec::with_capacity(n);
        for i in 0..n {
            values.push(Value::from(cell(r.get_ref(i).map_err(db_error)?)));
        }
        out.push(Row { statement, values });
    }
    Ok(out)
}

/// Steps through a read-only query's rows, handing `f` each row's cells (text borrowed
/// from SQLite's buffer) until it returns false. A statement that writes is refused: what a
/// bucket ledger's replica records goes through [`query`].
pub(super) fn each(
    tx: &SqliteTx<'_>,
    text: &str,
    values: &[Value],
    f: &mut dyn FnMut(&[super::db::Cell<'_>]) -> bool,
) -> Result<(), DbError> {
    let mut stmt = tx.tx.prepare_cached(text).map_err(db_error)?;
    if !stmt.readonly() {
        return Err(DbError {
            kind: DbErrorKind::Other,
            message: "each_row runs read-only statements only".into(),
        });
    }
    let n = stmt.column_count();
    let mut rows = stmt
        .query(rusqlite::params_from_iter(bind(values)))
        .map_err(db_error)?;
    while let Some(r) = rows.next().map_err(db_error)? {
        let mut cells = Vec::with_capacity(n);
        for i in 0..n {
            cells.push(cell(r.get_ref(i).map_err(db_error)?));
        }
        if !f(&cells) {
            break;
        }
    }
    Ok(())
}

/// One column of a row as the ledger reads it: text borrowed from SQLite's buffer (a blob
/// as text, lossily), a real as an integer (the schema stores none).
fn cell(v: ValueRef<'_>) -> super::db::Cell<'_> {
    use super::db::Cell;
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Int(f as i64),
        ValueRef::Text(t) | ValueRef::Blob(t) => Cell::Text(fencepost_core::text::lossy(t)),
    }
}

pub(super) fn commit(tx: SqliteTx<'_>) -> Result<(), DbError> {
    tx.tx.commit().map_err(db_error)
}

fn db_error(e: rusqlite::Error) -> DbError {
    use rusqlite::ErrorCode as C;
    let kind = match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => DbErrorKind::Busy,
        Some(C::NotADatabase | C::DatabaseCorrupt) => DbErrorKind::NotALedger,
        Some(C::ConstraintViolation)
            if matches!(&e, rusqlite::Error::SqliteFailure(f, _)
                if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY) =>
        {
            DbErrorKind::Unique
        }
        _ => DbErrorKind::Other,
    };
    DbError {
        kind,
        message: e.to_string(),
    }
}

/// Runs `f` again while it fails with busy, with a short randomised backoff, until
/// `deadline`; then returns its last result.
fn retry_busy<T>(
    deadline: std::time::Instant,
    mut f: impl FnMut() -> Result<T, LedgerError>,
) -> Result<T, LedgerError> {
    let mut attempt = 0u32;
    loop {
        match f() {
            Err(e)
                if e.kind() == Some(DbErrorKind::Busy) && std::time::Instant::now() < deadline =>
            {
                attempt += 1;
                let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0] % 16);
                std::thread::sleep(Duration::from_millis((2u64 << attempt.min(5)) + jitter));
            }
            r => return r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{entry_hash, GENESIS};

    #[test]
    fn sql_function_matches_rust() {
        let conn = Connection::open_in_memory().unwrap();
        register_functions(&conn).unwrap();
        let h: String = conn
            .query_row(
                "SELECT fp_audit_hash(?1, 3, 4, 'publish', 'item:1', 9, '{}')",
                [GENESIS],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(h, entry_hash(GENESIS, 3, 4, "publish", "item:1", 9, "{}"));
    }

    #[test]
    fn migrates_a_new_ledger_and_refuses_a_newer_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        drop(crate::Ledger::open(&path, Duration::from_secs(1)).unwrap());
        let c = Connection::open(&path).unwrap();
        assert_eq!(user_version(&c).unwrap(), schema::SQLITE_LATEST);
        c.pragma_update(None, "user_version", schema::SQLITE_LATEST + 1)
            .unwrap();
        drop(c);
        match crate::Ledger::open(&path, Duration::from_secs(1)) {
            Err(LedgerError::TooNew { found, .. }) => assert_eq!(found, schema::SQLITE_LATEST + 1),
            other => panic!("expected TooNew, got {:?}", other.err()),
        }
    }

    /// Every publish reads the candidates from their partial index, not from every item
    /// (issue 52, `0014_candidates.sql`): the statement's condition must stay the index's.
    #[test]
    fn the_candidates_are_read_from_their_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        drop(crate::Ledger::open(&path, Duration::from_secs(1)).unwrap());
        let c = Connection::open(&path).unwrap();
        let text = &crate::db::Dialect::Sqlite
            .statement("items.candidates")
            .unwrap()
            .text;
        let mut plan = c.prepare(&format!("EXPLAIN QUERY PLAN {text}")).unwrap();
        let steps: Vec<String> = plan
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(|s| s.unwrap())
            .collect();
        assert!(
            steps
                .iter()
                .any(|s| s == "SCAN i USING INDEX items_candidates"),
            "{steps:?}"
        );
    }

    /// A ledger frozen at schema 1 (as fencepost 0.1 left it) gains an id on upgrade and
    /// keeps its revision.
    #[test]
    fn a_version_1_ledger_gets_an_id_and_keeps_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(schema::SQLITE[0]).unwrap();
            c.execute_batch(
                "UPDATE site_state SET publication_revision = 7; PRAGMA user_version = 1;",
            )
            .unwrap();
        }
        let mut l = crate::Ledger::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(l.revision().unwrap(), 7);
        let id = l.read(crate::status::ledger_id).unwrap();
        assert_eq!(id.len(), 32);
        // Reopening is idempotent.
        drop(l);
        let mut l = crate::Ledger::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(l.read(crate::status::ledger_id).unwrap(), id);
    }

    /// With 49,999 rows for one puzzle, the next result insert is still one index lookup:
    /// SQLite's own counters show no full-scan steps, no sort, and a small bounded number of
    /// VM steps.
    #[test]
    fn result_insert_near_the_cap_does_bounded_work() {
        use rusqlite::StatementStatus;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        drop(crate::Ledger::open(&path, Duration::from_secs(1)).unwrap());
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 49999)
             INSERT INTO daily_results (puzzle_id, slot, session_id, outcome, guesses_used, created_at)
             SELECT 7, i, 's' || i, 'win', 3, 0 FROM n;
             -- Another puzzle's rows must not be read either.
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
             INSERT INTO daily_results (puzzle_id, slot, session_id, outcome, guesses_used, created_at)
             SELECT 8, i, 's' || i, 'win', 3, 0 FROM n;",
        )
        .unwrap();
        let insert = crate::db::Dialect::Sqlite
            .statement("results.insert")
            .unwrap();
        let run = |session: &str| {
            let values = insert
                .bind(
                    "results.insert",
                    crate::args! {
                        "puzzle" => 7i64, "session" => session, "outcome" => "win",
                        "guesses" => 2i64, "now" => 0i64, "cap" => 50_000i64,
                    },
                )
                .unwrap();
            let mut stmt = conn.prepare(&insert.text).unwrap();
            let slot: Option<i64> = {
                let mut rows = stmt
                    .query(rusqlite::params_from_iter(bind(&values)))
                    .unwrap();
                rows.next().unwrap().map(|r| r.get(0).unwrap())
            };
            let steps = (
                stmt.get_status(StatementStatus::VmStep),
                stmt.get_status(StatementStatus::FullscanStep),
                stmt.get_status(StatementStatus::Sort),
            );
            (slot, steps)
        };
        let (slot, (vm_steps, full_scan, sorts)) = run("new");
        assert_eq!(slot, Some(50_000));
        assert_eq!(full_scan, 0, "no full-scan steps");
        assert_eq!(sorts, 0, "no sort");
        assert!(
            vm_steps < 200,
            "the insert took {vm_steps} VM steps; a scan of 49,999 rows takes far more"
        );
        // And the cap holds, still cheaply.
        let (slot, (vm_steps, _, _)) = run("late");
        assert_eq!(slot, None);
        assert!(vm_steps < 200);
    }
}
