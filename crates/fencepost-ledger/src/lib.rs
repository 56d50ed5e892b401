//! The ledger: the single source of truth for what is public, on SQLite (one host, the
//! default), PostgreSQL (shared by publishers on many hosts), a bucket (a log of
//! create-if-absent entries in object storage, replayed into a local SQLite replica) or
//! Cloudflare D1 (the same log, in D1 tables behind fencepost's proxy Worker, each commit one
//! batch guarded by the head's compare-and-set).
//!
//! Callers see one contract: a [`Ledger`] runs whole transactions ([`Ledger::write`],
//! [`Ledger::read`], [`Ledger::snapshot`]) whose statements are named and kept per dialect
//! (see [`db`]); errors are [`LedgerError`]s that carry no driver type. The engine-specific
//! code lives in [`sqlite`], [`postgres`] and `bucket` and nowhere else.
//!
//! What the engines do differently, and how each keeps the guarantees:
//! - SQLite: every write transaction starts with `BEGIN IMMEDIATE`, so writers are serial and
//!   an in-statement lease guard reads the latest state.
//! - PostgreSQL (READ COMMITTED): an in-statement guard reads only its statement's snapshot and
//!   locks nothing, so every unit of work under a lease first locks the lease row
//!   ([`lease::lock`]: `SELECT … FOR UPDATE`, zero rows = lease lost) and keeps the guards too;
//!   audit appends lock the revision row first, so the chain's order is the commit order;
//!   a transaction PostgreSQL aborts to break a deadlock or a serialisation conflict runs again.
//! - A bucket or D1: SQLite's rules in the replica; a write commits only as the log's next
//!   entry (see `bucket` and its store, `bucket/store/d1.rs` for D1).
//!
//! The submodules hold the operations, grouped by table: [`lease`], [`items`], [`pages`]
//! (the publish commit batch), [`audit`], [`images`], [`results`], [`status`], [`deploys`].

pub mod audit;
pub mod bucket;
pub mod clock;
pub mod copy;
pub mod db;
pub mod deploys;
pub mod each;
mod error;
pub mod images;
pub mod items;
pub mod lease;
mod location;
pub mod pages;
pub mod postgres;
pub mod public;
pub mod results;
mod runtime;
pub mod schema;
mod snapshot;
pub mod sqlite;
pub mod status;
pub mod transparency;

use db::{Args, DbError, DbErrorKind, Dialect, Out, Row, Step};
pub use error::LedgerError;
pub use location::{redact, Location};
use runtime::OwnRuntime;
pub use snapshot::Snapshot;
use std::path::Path;
use std::time::Duration;

/// Whether a ledger is already at `location`: a SQLite file on disk, a bucket's log that has
/// begun; a database is assumed to be (opening it says otherwise).
pub fn exists(location: &Location) -> Result<bool, LedgerError> {
    match location {
        Location::Sqlite(path) => Ok(path.exists()),
        Location::Postgres(_) => Ok(true),
        Location::Bucket { url, .. } => bucket::exists(url, &location.display()),
    }
}

/// Blocks, calling `on_change` each time another process commits a new publication revision,
/// until the connection fails (an error) — on a shared PostgreSQL ledger. A ledger with no
/// such channel (SQLite, a bucket, D1: [`Location::notifies_changes`] is false) returns
/// `Ok(false)` at once: its processes poll.
pub fn listen_for_changes(
    location: &Location,
    on_change: &(dyn Fn() + Sync),
) -> Result<bool, LedgerError> {
    match location {
        Location::Sqlite(_) | Location::Bucket { .. } => Ok(false),
        Location::Postgres(url) => {
            postgres::listen(url, &location.display(), on_change)?;
            Ok(true)
        }
    }
}

enum Backend {
    Sqlite(sqlite::Conn),
    Postgres(postgres::Conn),
    /// A log in object storage, read and written through a local SQLite replica.
    Bucket(bucket::Conn),
}

/// An open ledger. One per thread.
pub struct Ledger {
    backend: Backend,
    name: String,
}

impl Ledger {
    /// Opens (creating if needed) and migrates the SQLite ledger at `path`.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Ledger, LedgerError> {
        Ledger::open_at(&Location::Sqlite(path.to_path_buf()), busy_timeout)
    }

    /// Opens (creating the schema if needed) the ledger at `location`.
    pub fn open_at(location: &Location, busy_timeout: Duration) -> Result<Ledger, LedgerError> {
        let name = location.display();
        let backend = match location {
            Location::Sqlite(path) => Backend::Sqlite(sqlite::open(path, &name, busy_timeout)?),
            Location::Postgres(url) => Backend::Postgres(postgres::open(url, &name, busy_timeout)?),
            Location::Bucket { url, cache } => {
                Backend::Bucket(bucket::open(url, cache, &name, busy_timeout)?)
            }
        };
        Ok(Ledger { backend, name })
    }

    /// How errors name this ledger (a path, or a URL without its password).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dialect(&self) -> Dialect {
        match self.backend {
            Backend::Sqlite(_) | Backend::Bucket(_) => Dialect::Sqlite,
            Backend::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Whether other hosts may share this ledger (and so its clock and stat cache are not
    /// this host's).
    pub fn shared(&self) -> bool {
        !matches!(self.backend, Backend::Sqlite(_))
    }

    /// The largest value the engine stores in one field, when it has a limit of its own:
    /// 2,000,000 bytes on D1 (a page body past it is refused at publish, named, before it
    /// reaches the ledger). `None` elsewhere.
    pub fn value_limit(&self) -> Option<usize> {
        match &self.backend {
            Backend::Bucket(conn) => conn.value_limit(),
            Backend::Sqlite(_) | Backend::Postgres(_) => None,
        }
    }

    /// Runs `f` in one write transaction and commits it. On PostgreSQL, a transaction the
    /// server aborted to break a deadlock or a serialisation conflict runs again from the
    /// start (so `f` must not change anything outside the transaction).
    pub fn write<T>(
        &mut self,
        mut f: impl FnMut(&Tx<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        if let Backend::Bucket(_) = self.backend {
            return self.write_to_log(f);
        }
        let mut attempt = 0u32;
        loop {
            let tx = self.begin(TxMode::Write)?;
            let r = f(&tx);
            let r = match r {
                Ok(v) => tx.commit().map(|()| v),
                Err(e) => Err(e),
            };
            match r {
                Err(e) if e.kind() == Some(DbErrorKind::Retry) && attempt < 30 => {
                    attempt += 1;
                    tracing::debug!(attempt, error = %e, "ledger transaction aborted by the server; running it again");
                    backoff(attempt);
                }
                r => return r,
            }
        }
    }

    /// [`Ledger::write`] on a bucket ledger: `f` runs on the replica, brought up to the log's
    /// newest entry first, with what it changes recorded; the entry after the replica's is
    /// then created if absent. Another writer's entry there: roll back, catch up, run `f`
    /// again on the new state (see [`bucket`]).
    fn write_to_log<T>(
        &mut self,
        mut f: impl FnMut(&Tx<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let name = self.name.as_str();
        let Backend::Bucket(conn) = &mut self.backend else {
            unreachable!("write_to_log is only called on a bucket ledger")
        };
        for attempt in 0..200u32 {
            conn.catch_up(name)?;
            let (v, committed) = {
                let (tx, log, at) = bucket::replica_begin(conn, name)?;
                let tx = Tx {
                    inner: TxInner::Sqlite(tx),
                    name,
                    shared: true,
                    not_before: Default::default(),
                };
                let v = f(&tx)?;
                let not_before = tx.not_before.get();
                let TxInner::Sqlite(tx) = tx.inner else {
                    unreachable!("a bucket ledger's transactions are its replica's")
                };
                (v, bucket::commit(log, tx, name, at, not_before)?)
            };
            match committed {
                Some(at) => {
                    if let Some((at, bytes)) = at {
                        conn.after_commit(name, at, bytes);
                    }
                    return Ok(v);
                }
                None => {
                    tracing::debug!(
                        attempt,
                        "another writer took the next log entry; running the transaction again"
                    );
                    backoff(attempt.min(4));
                }
            }
        }
        Err(LedgerError::Busy {
            ledger: name.to_string(),
            doing: "committing to its log (other writers took every next entry)",
            waited_ms: 0,
        })
    }

    /// Runs `f` over one consistent read (a SQLite read transaction; a PostgreSQL REPEATABLE
    /// READ, READ ONLY one).
    pub fn read<T>(
        &mut self,
        f: impl FnOnce(&Tx<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        let tx = self.begin(TxMode::Snapshot)?;
        let v = f(&tx)?;
        tx.commit()?;
        Ok(v)
    }

    /// Runs `f` where every statement is a transaction of its own: for work made of one
    /// statement, it saves PostgreSQL two round trips (BEGIN, COMMIT). On SQLite it is
    /// [`Ledger::write`].
    pub fn each_statement<T>(
        &mut self,
        f: impl FnMut(&Tx<'_>) -> Result<T, LedgerError>,
    ) -> Result<T, LedgerError> {
        match &mut self.backend {
            Backend::Sqlite(_) | Backend::Bucket(_) => self.write(f),
            Backend::Postgres(conn) => {
                let mut f = f;
                let tx = Tx {
                    inner: TxInner::Postgres(postgres::autocommit(conn)),
                    name: &self.name,
                    shared: true,
                    not_before: Default::default(),
                };
                f(&tx)
            }
        }
    }

    fn begin(&mut self, mode: TxMode) -> Result<Tx<'_>, LedgerError> {
        let name = self.name.as_str();
        let bucket = matches!(self.backend, Backend::Bucket(_));
        let inner = match &mut self.backend {
            Backend::Sqlite(conn) => TxInner::Sqlite(sqlite::begin(conn, name, mode)?),
            Backend::Postgres(conn) => TxInner::Postgres(postgres::begin(conn, name, mode)?),
            Backend::Bucket(conn) => {
                conn.catch_up(name)?;
                TxInner::Sqlite(sqlite::begin(&mut conn.replica, name, mode)?)
            }
        };
        let shared = !matches!(inner, TxInner::Sqlite(_)) || bucket;
        Ok(Tx {
            inner,
            name,
            shared,
            not_before: Default::default(),
        })
    }

    /// Runs `sql` (statements separated by `;`, none with a `;` inside) in one write
    /// transaction, skipping every rule fencepost keeps: only for tests of what fencepost does
    /// about a writer that skips them, on a ledger no other tool can write (one in a bucket).
    #[doc(hidden)]
    pub fn execute_unchecked(&mut self, sql: &str) -> Result<(), LedgerError> {
        self.write(|tx| {
            for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
                tx.exec_generated(statement, &[])?;
            }
            Ok(())
        })
    }

    /// The publication revision now.
    pub fn revision(&mut self) -> Result<i64, LedgerError> {
        self.read(status::revision)
    }

    /// One consistent read of everything a build needs, held until the snapshot is dropped.
    pub fn snapshot(&mut self) -> Result<Snapshot<'_>, LedgerError> {
        Ok(Snapshot {
            tx: self.begin(TxMode::Snapshot)?,
        })
    }

    /// Replays a bucket ledger's whole log from its first entry (no snapshot) and compares
    /// the audit chain it gives with this one; checks every snapshot against the log's record
    /// of it. `None` on the other engines, which have no log.
    pub fn check_log(&mut self) -> Result<Option<bucket::LogCheck>, LedgerError> {
        match &mut self.backend {
            Backend::Sqlite(_) | Backend::Postgres(_) => Ok(None),
            Backend::Bucket(conn) => conn.check_log(&self.name).map(Some),
        }
    }
}

/// The only outcome of a one-call pipeline.
fn one(r: Result<Vec<Out>, (usize, DbError)>) -> Result<Out, DbError> {
    r.map_err(|(_, e)| e)?.pop().ok_or_else(|| DbError {
        kind: DbErrorKind::Other,
        message: "no result".into(),
    })
}

fn backoff(attempt: u32) {
    let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0] % 16);
    std::thread::sleep(Duration::from_millis((2u64 << attempt.min(6)) + jitter));
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxMode {
    Write,
    Snapshot,
}

enum TxInner<'a> {
    Sqlite(sqlite::SqliteTx<'a>),
    Postgres(postgres::PgTx<'a>),
}

/// One transaction on either engine. Its statements are named (see [`db`]).
pub struct Tx<'a> {
    inner: TxInner<'a>,
    name: &'a str,
    /// Whether other hosts share the ledger (see [`Ledger::shared`]).
    shared: bool,
    /// The latest due instant of the pages this transaction makes public for the first
    /// time, where the ledger's own clock must agree (see [`Tx::due_by_ledger`]).
    not_before: std::cell::Cell<Option<i64>>,
}

impl Tx<'_> {
    /// A page this transaction makes public is due at `due` by the decision's clock, which
    /// the ledger's own clock must agree with when it commits: in the statement itself on
    /// PostgreSQL (`pages.write_page`), in the commit batch's guard on D1 (by the Worker's
    /// clock, as the head is checked: `bucket/store/d1/log.rs`). An object store has no
    /// clock to ask at commit; there the decision clock is the store's sample carried by a
    /// monotonic clock.
    pub fn due_by_ledger(&self, due: i64) {
        let latest = self.not_before.get().map_or(due, |n| n.max(due));
        self.not_before.set(Some(latest));
    }

    /// Whether other hosts share the ledger: it then keeps no host's file stats.
    pub fn shared(&self) -> bool {
        self.shared
    }

    pub fn dialect(&self) -> Dialect {
        match self.inner {
            TxInner::Sqlite(_) => Dialect::Sqlite,
            TxInner::Postgres(..) => Dialect::Postgres,
        }
    }

    fn err(&self, statement: &'static str, source: DbError) -> LedgerError {
        LedgerError::Sql {
            ledger: self.name.to_string(),
            statement,
            error: source,
        }
    }

    /// Runs a statement; returns the number of rows it changed.
    pub fn exec(&self, name: &'static str, args: Args<'_>) -> Result<usize, LedgerError> {
        let stmt = self.dialect().statement(name)?;
        let values = stmt.bind(name, args)?;
        match &self.inner {
            TxInner::Sqlite(tx) => sqlite::exec(tx, &stmt.text, &values),
            TxInner::Postgres(tx) => one(postgres::pipeline(
                tx,
                &[postgres::Call {
                    name: Some(name),
                    text: &stmt.text,
                    values,
                    query: false,
                }],
            ))
            .map(|o| o.count()),
        }
        .map_err(|e| self.err(name, e))
    }

    /// Runs a query; returns every row.
    pub fn rows(&self, name: &'static str, args: Args<'_>) -> Result<Vec<Row>, LedgerError> {
        let stmt = self.dialect().statement(name)?;
        let values = stmt.bind(name, args)?;
        self.rows_of(Some(name), &stmt.text, values)
    }

    fn rows_of(
        &self,
        name: Option<&'static str>,
        text: &str,
        values: Vec<db::Value>,
    ) -> Result<Vec<Row>, LedgerError> {
        let label = name.unwrap_or("generated");
        let mut rows = match &self.inner {
            TxInner::Sqlite(tx) => sqlite::query(tx, label, text, &values),
            TxInner::Postgres(tx) => one(postgres::pipeline(
                tx,
                &[postgres::Call {
                    name,
                    text,
                    values,
                    query: true,
                }],
            ))
            .map(Out::rows),
        }
        .map_err(|e| self.err(label, e))?;
        for r in &mut rows {
            r.statement = label;
        }
        Ok(rows)
    }

    /// Runs `steps` in order as one flight: on PostgreSQL they are pipelined (sent together,
    /// answered together), on SQLite run one after another. No step may need an earlier
    /// one's result in Rust; each may of course see what earlier steps wrote.
    pub fn pipeline(&self, steps: &[Step]) -> Result<Vec<Out>, LedgerError> {
        let dialect = self.dialect();
        let mut prepared = Vec::with_capacity(steps.len());
        for st in steps {
            let stmt = dialect.statement(st.name)?;
            let args: Vec<(&str, &dyn db::ToValue)> = st
                .args
                .iter()
                .map(|(k, v)| (*k, v as &dyn db::ToValue))
                .collect();
            prepared.push((st, stmt, stmt.bind(st.name, &args)?));
        }
        let mut out = match &self.inner {
            TxInner::Sqlite(tx) => {
                let mut out = Vec::with_capacity(steps.len());
                for (st, stmt, values) in &prepared {
                    out.push(if st.query {
                        Out::Rows(
                            sqlite::query(tx, st.name, &stmt.text, values)
                                .map_err(|e| self.err(st.name, e))?,
                        )
                    } else {
                        Out::Count(
                            sqlite::exec(tx, &stmt.text, values)
                                .map_err(|e| self.err(st.name, e))?,
                        )
                    });
                }
                out
            }
            TxInner::Postgres(tx) => {
                let calls: Vec<postgres::Call<'_>> = prepared
                    .into_iter()
                    .map(|(st, stmt, values)| postgres::Call {
                        name: Some(st.name),
                        text: &stmt.text,
                        values,
                        query: st.query,
                    })
                    .collect();
                postgres::pipeline(tx, &calls).map_err(|(i, e)| self.err(steps[i].name, e))?
            }
        };
        for (o, st) in out.iter_mut().zip(steps) {
            if let Out::Rows(rows) = o {
                for r in rows {
                    r.statement = st.name;
                }
            }
        }
        Ok(out)
    }

    /// Runs a query that answers at most one row.
    pub fn row(&self, name: &'static str, args: Args<'_>) -> Result<Option<Row>, LedgerError> {
        Ok(self.rows(name, args)?.into_iter().next())
    }

    /// Runs a query that answers exactly one row.
    pub fn one(&self, name: &'static str, args: Args<'_>) -> Result<Row, LedgerError> {
        self.row(name, args)?
            .ok_or_else(|| LedgerError::Internal(format!("statement {name:?} answered no row")))
    }

    /// Statement text made by the code, not kept in the statement files: only `ledger copy`
    /// uses it, for plain column-list `SELECT`s and `INSERT`s that are the same in both
    /// dialects. Parameters are written `:name`.
    pub(crate) fn rows_generated(
        &self,
        sql: &str,
        args: Args<'_>,
    ) -> Result<Vec<Row>, LedgerError> {
        let stmt = db::positional(sql, self.dialect());
        let values = stmt.bind("generated", args)?;
        self.rows_of(None, &stmt.text, values)
    }

    pub(crate) fn exec_generated(
        &self,
        sql: &str,
        values: &[db::Value],
    ) -> Result<usize, LedgerError> {
        let stmt = db::positional(sql, self.dialect());
        match &self.inner {
            TxInner::Sqlite(tx) => sqlite::exec(tx, &stmt.text, values),
            TxInner::Postgres(tx) => one(postgres::pipeline(
                tx,
                &[postgres::Call {
                    name: None,
                    text: &stmt.text,
                    values: values.to_vec(),
                    query: false,
                }],
            ))
            .map(|o| o.count()),
        }
        .map_err(|e| self.err("generated", e))
    }

    fn commit(self) -> Result<(), LedgerError> {
        let name = self.name;
        let err = |source| LedgerError::Sql {
            ledger: name.to_string(),
            statement: "commit",
            error: source,
        };
        match self.inner {
            TxInner::Sqlite(tx) => sqlite::commit(tx).map_err(err),
            TxInner::Postgres(tx) => postgres::commit(tx).map_err(err),
        }
    }
}
