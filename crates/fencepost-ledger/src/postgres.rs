//! The PostgreSQL backend: the only module that touches a PostgreSQL driver.
//!
//! Write transactions run READ COMMITTED; the operations that depend on a lease lock its row
//! first (see [`super::lease::lock`]) and audit appends lock the revision row, which is what
//! makes READ COMMITTED safe here. A build snapshot is one REPEATABLE READ, READ ONLY
//! transaction. Migrations run in one transaction under an advisory lock, so hosts that
//! open a new database at the same instant migrate it once.
//!
//! The driver is `tokio-postgres` (the engine of the synchronous `postgres` crate), driven by
//! a small runtime of this connection's own, because it *pipelines*: statements sent
//! together travel in one flight and the server runs them in order. The publish commit batch
//! was built so that no statement needs an earlier one's result in Rust; here that turns
//! ten round trips per item into one flight per batch ([`super::Tx::pipeline`]).

use super::db::{DbError, DbErrorKind, Out, Row, Value};
use super::{schema, LedgerError, OwnRuntime, TxMode};
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;
use tls::{tls, tls_options};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{IsNull, ToSql, Type};
use tokio_postgres::{Client, Statement};

mod tls;

pub(super) struct Conn {
    rt: OwnRuntime,
    client: Client,
    /// Prepared statements of this connection, by statement name.
    cache: RefCell<HashMap<&'static str, Statement>>,
}

/// The key of the advisory lock that serialises migrations ("fencepos" in ASCII).
const MIGRATION_LOCK: i64 = 0x6665_6e63_6570_6f73;

/// The driver's configuration for `url` (password from `PGPASSWORD` when the URL has none),
/// and the extra root certificate file, if any.
fn config(
    url: &str,
    name: &str,
    timeout: Duration,
) -> Result<(tokio_postgres::Config, Option<std::path::PathBuf>), LedgerError> {
    let (url, root_cert) = tls_options(url);
    let mut config: tokio_postgres::Config = url.parse().map_err(|e: tokio_postgres::Error| {
        LedgerError::Location(format!(
            "{name}: not a usable PostgreSQL URL ({e}); write postgres://USER@HOST:PORT/DATABASE, with the password in PGPASSWORD or the URL"
        ))
    })?;
    if config.get_password().is_none() {
        if let Ok(p) = std::env::var("PGPASSWORD") {
            config.password(p);
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(timeout.max(Duration::from_secs(1)));
    }
    config.application_name("fencepost");
    Ok((config, root_cert))
}

/// `fencepost run` on several hosts: blocks on a connection of its own that LISTENs for
/// `fencepost_changes` (sent by every transaction that moves the publication revision; see
/// migration 0005) and calls `on_change` for each, until the connection fails.
pub(super) fn listen(
    url: &str,
    name: &str,
    on_change: &(dyn Fn() + Sync),
) -> Result<(), LedgerError> {
    let (config, root_cert) = config(url, name, Duration::from_secs(10))?;
    let err = |e: tokio_postgres::Error| LedgerError::Open {
        ledger: name.to_string(),
        error: db_error(e),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| LedgerError::Location(format!("cannot start a runtime: {e}")))?;
    async fn follow<T>(
        config: &tokio_postgres::Config,
        tls: T,
        on_change: &(dyn Fn() + Sync),
    ) -> Result<(), tokio_postgres::Error>
    where
        T: tokio_postgres::tls::MakeTlsConnect<tokio_postgres::Socket>,
        T::Stream: Send + 'static,
    {
        let (client, mut connection) = config.connect(tls).await?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let driver = tokio::spawn(async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(tokio_postgres::AsyncMessage::Notification(_))) => {
                        let _ = tx.send(Ok(()));
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                    None => return,
                }
            }
        });
        client.batch_execute("LISTEN fencepost_changes").await?;
        // Whatever happened before LISTEN took effect is caught by the caller's own cycle.
        while let Some(m) = rx.recv().await {
            m?;
            on_change();
        }
        driver.abort();
        Ok(())
    }
    if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require {
        let tls = tls(root_cert.as_deref())?;
        rt.block_on(follow(&config, tls, on_change)).map_err(err)
    } else {
        rt.block_on(follow(&config, tokio_postgres::NoTls, on_change))
            .map_err(err)
    }
}

pub(super) fn open(url: &str, name: &str, timeout: Duration) -> Result<Conn, LedgerError> {
    let open_err = |source: DbError| LedgerError::Open {
        ledger: name.to_string(),
        error: source,
    };
    let (config, root_cert) = config(url, name, timeout)?;
    let rt = OwnRuntime::new().map_err(|e| {
        open_err(DbError {
            kind: DbErrorKind::Connect,
            message: format!("cannot start the connection's runtime: {e}"),
        })
    })?;
    let client = if config.get_ssl_mode() == tokio_postgres::config::SslMode::Require {
        let tls = tls(root_cert.as_deref())?;
        rt.block(async {
            let (client, connection) = config.connect(tls).await?;
            tokio::spawn(drive(connection));
            Ok::<_, tokio_postgres::Error>(client)
        })
    } else {
        rt.block(async {
            let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
            tokio::spawn(drive(connection));
            Ok::<_, tokio_postgres::Error>(client)
        })
    }
    .map_err(|e| open_err(db_error(e)))?;
    let conn = Conn {
        rt,
        client,
        cache: RefCell::new(HashMap::new()),
    };
    let found = version(&conn).map_err(open_err)?;
    schema::refuse_newer(name, found, schema::POSTGRES_LATEST)?;
    if found < schema::POSTGRES_LATEST {
        migrate(&conn, name)?;
    }
    Ok(conn)
}

async fn drive<C: Future<Output = Result<(), tokio_postgres::Error>>>(connection: C) {
    if let Err(e) = connection.await {
        tracing::debug!(error = %e, "ledger connection closed");
    }
}

impl Conn {
    fn rt(&self) -> &OwnRuntime {
        &self.rt
    }

    fn run<T: Send>(
        &self,
        f: impl Future<Output = Result<T, tokio_postgres::Error>> + Send,
    ) -> Result<T, DbError> {
        self.rt.block(f).map_err(db_error)
    }
}

/// The schema version recorded in the database; 0 for a database fencepost never touched.
fn version(conn: &Conn) -> Result<i64, DbError> {
    match conn.rt().block(
        conn.client
            .query_opt("SELECT version FROM fencepost_schema WHERE id = 1", &[]),
    ) {
        Ok(row) => Ok(row.map_or(0, |r| r.get(0))),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(0),
        Err(e) => Err(db_error(e)),
    }
}

fn migrate(conn: &Conn, name: &str) -> Result<(), LedgerError> {
    let sql = |source| LedgerError::Sql {
        ledger: name.to_string(),
        statement: "migration",
        error: source,
    };
    let c = &conn.client;
    conn.run(c.batch_execute("BEGIN")).map_err(sql)?;
    let result = (|| {
        conn.run(c.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))
            .map_err(sql)?;
        conn.run(c.batch_execute(
            "CREATE TABLE IF NOT EXISTS fencepost_schema (
                 id      INTEGER PRIMARY KEY CHECK (id = 1),
                 version BIGINT  NOT NULL
             )",
        ))
        .map_err(sql)?;
        let found: i64 = conn
            .run(c.query_opt("SELECT version FROM fencepost_schema WHERE id = 1", &[]))
            .map_err(sql)?
            .map_or(0, |r| r.get(0));
        schema::refuse_newer(name, found, schema::POSTGRES_LATEST)?;
        for (i, text) in schema::POSTGRES.iter().enumerate().skip(found as usize) {
            conn.run(c.batch_execute(text)).map_err(sql)?;
            conn.run(c.execute(
                "INSERT INTO fencepost_schema (id, version) VALUES (1, $1)
                 ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                &[&((i + 1) as i64)],
            ))
            .map_err(sql)?;
            fencepost_core::fail_point!("ledger.after_migration_step");
        }
        conn.run(c.batch_execute("COMMIT")).map_err(sql)
    })();
    if result.is_err() {
        let _ = conn.run(c.batch_execute("ROLLBACK"));
    }
    result
}

/// An open transaction (or, `in_tx` false, statements each in a transaction of their own).
/// Dropped without [`commit`], it rolls back.
pub(super) struct PgTx<'a> {
    conn: &'a Conn,
    in_tx: bool,
    done: std::cell::Cell<bool>,
}

impl Drop for PgTx<'_> {
    fn drop(&mut self) {
        if self.in_tx && !self.done.get() {
            let _ = self.conn.run(self.conn.client.batch_execute("ROLLBACK"));
        }
    }
}

pub(super) fn begin<'a>(conn: &'a Conn, name: &str, mode: TxMode) -> Result<PgTx<'a>, LedgerError> {
    let begin = match mode {
        TxMode::Write => "BEGIN ISOLATION LEVEL READ COMMITTED",
        TxMode::Snapshot => "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    };
    conn.run(conn.client.batch_execute(begin))
        .map_err(|source| LedgerError::Sql {
            ledger: name.to_string(),
            statement: "begin",
            error: source,
        })?;
    Ok(PgTx {
        conn,
        in_tx: true,
        done: std::cell::Cell::new(false),
    })
}

/// Statements each in a transaction of their own (no BEGIN).
pub(super) fn autocommit(conn: &Conn) -> PgTx<'_> {
    PgTx {
        conn,
        in_tx: false,
        done: std::cell::Cell::new(false),
    }
}

pub(super) fn commit(tx: PgTx<'_>) -> Result<(), DbError> {
    tx.done.set(true);
    if tx.in_tx {
        tx.conn.run(tx.conn.client.batch_execute("COMMIT"))?;
    }
    Ok(())
}

/// A [`Value`] bound to whatever type PostgreSQL inferred for its parameter.
#[derive(Debug)]
struct Param<'a>(&'a Value);

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => i.to_string().to_sql(ty, out),
                _ => Err(format!("cannot bind an integer to a parameter of type {ty}").into()),
            },
            Value::Text(s) => match *ty {
                Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                    s.as_str().to_sql(ty, out)
                }
                _ => Err(format!("cannot bind text to a parameter of type {ty}").into()),
            },
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

/// One statement of a pipeline: its name (`None`: generated text, not cached), text, values,
/// and whether its rows are wanted.
pub(super) struct Call<'s> {
    pub name: Option<&'static str>,
    pub text: &'s str,
    pub values: Vec<Value>,
    pub query: bool,
}

fn prepared(tx: &PgTx<'_>, name: Option<&'static str>, text: &str) -> Result<Statement, DbError> {
    if let Some(n) = name {
        if let Some(s) = tx.conn.cache.borrow().get(n) {
            return Ok(s.clone());
        }
    }
    let s = tx.conn.run(tx.conn.client.prepare(text))?;
    if let Some(n) = name {
        tx.conn.cache.borrow_mut().insert(n, s.clone());
    }
    Ok(s)
}

/// Runs `calls` in one flight, in order; returns each one's outcome, or the first failure and
/// the index of the call that failed.
pub(super) fn pipeline(tx: &PgTx<'_>, calls: &[Call<'_>]) -> Result<Vec<Out>, (usize, DbError)> {
    let mut stmts = Vec::with_capacity(calls.len());
    for (i, c) in calls.iter().enumerate() {
        stmts.push(prepared(tx, c.name, c.text).map_err(|e| (i, e))?);
    }
    let params: Vec<Vec<Param<'_>>> = calls
        .iter()
        .map(|c| c.values.iter().map(Param).collect())
        .collect();
    let refs: Vec<Vec<&(dyn ToSql + Sync)>> = params
        .iter()
        .map(|p| p.iter().map(|p| p as &(dyn ToSql + Sync)).collect())
        .collect();
    let client = &tx.conn.client;
    type Flight<'f> = Pin<Box<dyn Future<Output = Result<Out, tokio_postgres::Error>> + Send + 'f>>;
    let mut futures: Vec<Flight<'_>> = Vec::with_capacity(calls.len());
    for ((c, stmt), r) in calls.iter().zip(&stmts).zip(&refs) {
        let query = c.query;
        futures.push(Box::pin(async move {
            if query {
                let rows = client.query(stmt, r).await?;
                Ok(Out::Rows(rows.iter().map(row).collect::<Result<_, _>>()?))
            } else {
                Ok(Out::Count(client.execute(stmt, r).await? as usize))
            }
        }));
    }
    // Polled in order, so the requests go out in order (each is sent on its first poll).
    let mut results: Vec<Option<Result<Out, tokio_postgres::Error>>> =
        (0..futures.len()).map(|_| None).collect();
    tx.conn.rt().block(std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futures.iter_mut().zip(results.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(r) => *slot = Some(r),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }));
    let mut out = Vec::with_capacity(results.len());
    for (i, r) in results.into_iter().enumerate() {
        match r.expect("every future finished") {
            Ok(o) => out.push(o),
            Err(e) => return Err((i, db_error(e))),
        }
    }
    Ok(out)
}

/// `Row::statement` is filled in by the caller.
fn row(r: &tokio_postgres::Row) -> Result<Row, tokio_postgres::Error> {
    let mut values = Vec::with_capacity(r.len());
    for (i, c) in r.columns().iter().enumerate() {
        values.push(match *c.type_() {
            Type::INT8 => r
                .try_get::<_, Option<i64>>(i)?
                .map_or(Value::Null, Value::Int),
            Type::INT4 => r
                .try_get::<_, Option<i32>>(i)?
                .map_or(Value::Null, |v| Value::Int(v.into())),
            Type::INT2 => r
                .try_get::<_, Option<i16>>(i)?
                .map_or(Value::Null, |v| Value::Int(v.into())),
            Type::BOOL => r
                .try_get::<_, Option<bool>>(i)?
                .map_or(Value::Null, |v| Value::Int(v.into())),
            // Text, and anything else the ledger never selects, as text.
            _ => r
                .try_get::<_, Option<String>>(i)?
                .map_or(Value::Null, Value::Text),
        });
    }
    Ok(Row {
        statement: "",
        values,
    })
}

/// The database clock minus this host's, from the midpoint of one round trip.
pub(super) fn clock_offset_ms(conn: &Conn, name: &str) -> Result<i64, LedgerError> {
    let local = || chrono::Utc::now().timestamp_millis();
    let t0 = local();
    let db: i64 = conn
        .run(conn.client.query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        ))
        .map_err(|source| LedgerError::Sql {
            ledger: name.to_string(),
            statement: "clock",
            error: source,
        })?
        .get(0);
    let t1 = local();
    Ok(db - (t0 + t1) / 2)
}

fn db_error(e: tokio_postgres::Error) -> DbError {
    let kind = match e.code() {
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            DbErrorKind::Retry
        }
        Some(c) if *c == SqlState::UNIQUE_VIOLATION => DbErrorKind::Unique,
        Some(_) => DbErrorKind::Other,
        None => DbErrorKind::Connect,
    };
    let message = match e.as_db_error() {
        Some(db) => {
            let mut m = format!("{} (SQLSTATE {})", db.message(), db.code().code());
            if let Some(d) = db.detail() {
                m += &format!("; {d}");
            }
            m
        }
        None => {
            let mut m = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                let text = s.to_string();
                if !m.contains(&text) {
                    m += &format!(": {text}");
                }
                src = s.source();
            }
            m + " (is the server up, and are ledger.url / FENCEPOST_LEDGER right?)"
        }
    };
    DbError { kind, message }
}

#[cfg(test)]
mod tests {
    use super::tls_options;

    #[test]
    fn libpq_tls_options_are_taken_out_of_the_url() {
        let (url, root) = tls_options(
            "postgres://u:p@db.example:5432/site?sslmode=verify-full&sslrootcert=/etc/ca.pem&application_name=x",
        );
        assert_eq!(
            url,
            "postgres://u:p@db.example:5432/site?sslmode=require&application_name=x"
        );
        assert_eq!(root.as_deref(), Some(std::path::Path::new("/etc/ca.pem")));
        let (url, _) = tls_options("postgres://u@h/d?sslrootcert=/x.pem");
        assert_eq!(url, "postgres://u@h/d");
        let (url, _) = tls_options("postgres://u@h/d");
        assert_eq!(url, "postgres://u@h/d");
        // What tokio-postgres parses stays as it is.
        let (url, _) = tls_options("postgres://u@h/d?sslmode=disable&connect_timeout=3");
        assert_eq!(url, "postgres://u@h/d?sslmode=disable&connect_timeout=3");
    }
}
