//! The PostgreSQL backend: the only module that touches the `postgres` crate.
//!
//! Write transactions run READ COMMITTED; the operations that depend on a lease lock its row
//! first (see [`super::lease::lock`]) and audit appends lock the revision row, which is what
//! makes READ COMMITTED safe here. A build snapshot is one REPEATABLE READ, READ ONLY
//! transaction. Migrations run in one transaction under an advisory lock, so hosts that
//! open a new database at the same instant migrate it once.

use super::db::{DbError, DbErrorKind, Row, Value};
use super::{schema, LedgerError, TxMode};
use ::postgres::error::SqlState;
use ::postgres::types::{IsNull, ToSql, Type};
use ::postgres::{Client, IsolationLevel, Statement, Transaction};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

/// Prepared statements of one connection, by statement name.
#[derive(Default)]
pub struct Cache(HashMap<&'static str, Statement>);

pub(super) struct Conn {
    client: Client,
    cache: RefCell<Cache>,
}

/// The key of the advisory lock that serialises migrations ("fencepost" in ASCII, cut to fit).
const MIGRATION_LOCK: i64 = 0x6665_6e63_6570_6f73;

pub(super) fn open(url: &str, name: &str, timeout: Duration) -> Result<Conn, LedgerError> {
    let open_err = |source: DbError| LedgerError::Open {
        ledger: name.to_string(),
        source,
    };
    let mut config: ::postgres::Config = url.parse().map_err(|e: ::postgres::Error| {
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
    let client = if config.get_ssl_mode() == ::postgres::config::SslMode::Require {
        config.connect(tls()?)
    } else {
        config.connect(::postgres::NoTls)
    }
    .map_err(|e| open_err(db_error(e)))?;
    let mut conn = Conn {
        client,
        cache: RefCell::new(Cache::default()),
    };
    let found = version(&mut conn.client).map_err(open_err)?;
    schema::refuse_newer(name, found, schema::POSTGRES_LATEST)?;
    if found < schema::POSTGRES_LATEST {
        migrate(&mut conn.client, name).map_err(|e| match e {
            Migrate::Db(source) => LedgerError::Sql {
                ledger: name.to_string(),
                statement: "migration",
                source,
            },
            Migrate::Ledger(e) => e,
        })?;
    }
    Ok(conn)
}

fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, LedgerError> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| LedgerError::Location(format!("TLS set-up failed: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The schema version recorded in the database; 0 for a database fencepost never touched.
fn version(client: &mut Client) -> Result<i64, DbError> {
    match client.query_opt("SELECT version FROM fencepost_schema WHERE id = 1", &[]) {
        Ok(row) => Ok(row.map_or(0, |r| r.get(0))),
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => Ok(0),
        Err(e) => Err(db_error(e)),
    }
}

enum Migrate {
    Db(DbError),
    Ledger(LedgerError),
}

impl From<::postgres::Error> for Migrate {
    fn from(e: ::postgres::Error) -> Self {
        Migrate::Db(db_error(e))
    }
}

fn migrate(client: &mut Client, name: &str) -> Result<(), Migrate> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS fencepost_schema (
             id      INTEGER PRIMARY KEY CHECK (id = 1),
             version BIGINT  NOT NULL
         )",
    )?;
    let found: i64 = tx
        .query_opt("SELECT version FROM fencepost_schema WHERE id = 1", &[])?
        .map_or(0, |r| r.get(0));
    schema::refuse_newer(name, found, schema::POSTGRES_LATEST).map_err(Migrate::Ledger)?;
    for (i, sql) in schema::POSTGRES.iter().enumerate().skip(found as usize) {
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO fencepost_schema (id, version) VALUES (1, $1)
             ON CONFLICT (id) DO UPDATE SET version = excluded.version",
            &[&((i + 1) as i64)],
        )?;
        crate::fail_point!("ledger.after_migration_step");
    }
    tx.commit()?;
    Ok(())
}

pub(super) fn begin<'a>(
    conn: &'a mut Conn,
    name: &str,
    mode: TxMode,
) -> Result<(Transaction<'a>, &'a RefCell<Cache>), LedgerError> {
    let Conn { client, cache } = conn;
    let tx = match mode {
        TxMode::Write => client
            .build_transaction()
            .isolation_level(IsolationLevel::ReadCommitted)
            .start(),
        TxMode::Snapshot => client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start(),
    }
    .map_err(|e| LedgerError::Sql {
        ledger: name.to_string(),
        statement: "begin",
        source: db_error(e),
    })?;
    Ok((tx, &*cache))
}

fn prepared(
    tx: &mut Transaction<'_>,
    cache: &RefCell<Cache>,
    name: &'static str,
    text: &str,
) -> Result<Statement, DbError> {
    if let Some(s) = cache.borrow().0.get(name) {
        return Ok(s.clone());
    }
    let s = tx.prepare(text).map_err(db_error)?;
    cache.borrow_mut().0.insert(name, s.clone());
    Ok(s)
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

    ::postgres::types::to_sql_checked!();
}

fn params(values: &[Value]) -> Vec<Param<'_>> {
    values.iter().map(Param).collect()
}

fn refs<'a>(p: &'a [Param<'a>]) -> Vec<&'a (dyn ToSql + Sync)> {
    p.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

pub(super) fn exec(
    tx: &mut Transaction<'_>,
    cache: &RefCell<Cache>,
    name: &'static str,
    text: &str,
    values: &[Value],
) -> Result<usize, DbError> {
    let stmt = prepared(tx, cache, name, text)?;
    let p = params(values);
    tx.execute(&stmt, &refs(&p))
        .map(|n| n as usize)
        .map_err(db_error)
}

pub(super) fn exec_uncached(
    tx: &mut Transaction<'_>,
    text: &str,
    values: &[Value],
) -> Result<usize, DbError> {
    let p = params(values);
    tx.execute(text, &refs(&p))
        .map(|n| n as usize)
        .map_err(db_error)
}

pub(super) fn query(
    tx: &mut Transaction<'_>,
    cache: &RefCell<Cache>,
    statement: &'static str,
    text: &str,
    values: &[Value],
) -> Result<Vec<Row>, DbError> {
    let rows = if statement == "generated" {
        let p = params(values);
        tx.query(text, &refs(&p))
    } else {
        let stmt = prepared(tx, cache, statement, text)?;
        let p = params(values);
        tx.query(&stmt, &refs(&p))
    }
    .map_err(db_error)?;
    rows.iter()
        .map(|r| {
            let values = r
                .columns()
                .iter()
                .enumerate()
                .map(|(i, c)| column(r, i, c.type_()))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Row { statement, values })
        })
        .collect()
}

fn column(r: &::postgres::Row, i: usize, ty: &Type) -> Result<Value, DbError> {
    let conv = |e: ::postgres::Error| db_error(e);
    Ok(match *ty {
        Type::INT8 => r
            .try_get::<_, Option<i64>>(i)
            .map_err(conv)?
            .map_or(Value::Null, Value::Int),
        Type::INT4 => r
            .try_get::<_, Option<i32>>(i)
            .map_err(conv)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT2 => r
            .try_get::<_, Option<i16>>(i)
            .map_err(conv)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::BOOL => r
            .try_get::<_, Option<bool>>(i)
            .map_err(conv)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => r
            .try_get::<_, Option<String>>(i)
            .map_err(conv)?
            .map_or(Value::Null, Value::Text),
        _ => {
            return Err(DbError {
                kind: DbErrorKind::Other,
                message: format!("column {i} has type {ty}, which the ledger never uses"),
            })
        }
    })
}

pub(super) fn commit(tx: Transaction<'_>) -> Result<(), DbError> {
    tx.commit().map_err(db_error)
}

/// The database clock minus this host's, from the midpoint of one round trip.
pub(super) fn clock_offset_ms(conn: &mut Conn, name: &str) -> Result<i64, LedgerError> {
    let local = || chrono::Utc::now().timestamp_millis();
    let t0 = local();
    let db: i64 = conn
        .client
        .query_one(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            &[],
        )
        .map_err(|e| LedgerError::Sql {
            ledger: name.to_string(),
            statement: "clock",
            source: db_error(e),
        })?
        .get(0);
    let t1 = local();
    Ok(db - (t0 + t1) / 2)
}

fn db_error(e: ::postgres::Error) -> DbError {
    let kind = match e.code() {
        Some(c)
            if *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED =>
        {
            DbErrorKind::Retry
        }
        Some(c) if *c == SqlState::UNIQUE_VIOLATION => DbErrorKind::Unique,
        Some(_) => DbErrorKind::Other,
        None if e.is_closed() => DbErrorKind::Connect,
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
                m += &format!(": {s}");
                src = s.source();
            }
            m
        }
    };
    DbError { kind, message }
}
