//! The SQLite ledger: the single source of truth for what is public.
//!
//! Opening it sets WAL, a busy timeout and foreign keys, and brings the schema up to date in
//! one transaction; a ledger written by a newer fencepost is refused and left untouched.
//! Every write transaction starts with `BEGIN IMMEDIATE`: a deferred transaction that reads
//! and then writes gets SQLITE_BUSY at the upgrade instead of waiting for the lock.
//!
//! The submodules hold the named queries, grouped by table: [`lease`], [`items`], [`pages`]
//! (the publish commit batch), [`audit`], [`images`], [`results`], [`status`].

pub mod audit;
pub mod deploys;
pub mod images;
pub mod items;
pub mod lease;
pub mod pages;
pub mod public;
pub mod results;
pub mod schema;
pub mod status;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("cannot create the ledger folder {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the ledger {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path} is not a usable fencepost ledger ({source}); restore it from a backup or move it aside to start a new one")]
    Corrupt {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{path} is busy: another process kept it locked for {waited_ms} ms while this one was {doing} (most likely another fencepost run creating or migrating it). The ledger is fine: run again, or raise ledger.busy_timeout_ms")]
    Busy {
        path: PathBuf,
        doing: &'static str,
        waited_ms: u64,
    },
    #[error("{path} has schema version {found}, newer than this fencepost understands ({supported}); upgrade fencepost — the ledger was left untouched")]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("ledger {path}: {source}")]
    Sql {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

/// An open ledger. Cheap to pass around by reference; one per thread.
pub struct Ledger {
    conn: Connection,
    path: PathBuf,
}

impl Ledger {
    /// Opens (creating if needed) and migrates the ledger at `path`.
    pub fn open(path: &Path, busy_timeout: Duration) -> Result<Ledger, LedgerError> {
        if let Some(dir) = path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|source| LedgerError::CreateDir {
                    path: dir.to_path_buf(),
                    source,
                })?;
            }
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| LedgerError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let started = std::time::Instant::now();
        let deadline = started + busy_timeout;
        // Opening races with other openers of a new ledger: switching to WAL and the first
        // migration need locks they may hold. Busy is waited out (within the busy timeout),
        // and only a file that really is not a ledger is called unusable.
        let classify = |doing: &'static str| {
            let path = path.to_path_buf();
            move |source: rusqlite::Error| {
                if is_busy(&source) {
                    LedgerError::Busy {
                        path,
                        doing,
                        waited_ms: started.elapsed().as_millis() as u64,
                    }
                } else if is_not_a_ledger(&source) {
                    LedgerError::Corrupt { path, source }
                } else {
                    LedgerError::Sql { path, source }
                }
            }
        };
        conn.busy_timeout(busy_timeout)
            .map_err(classify("setting the busy timeout"))?;
        // Refuse a newer ledger before anything (even the journal mode) touches it.
        let waited = |e: LedgerError| match e {
            LedgerError::Busy { path, doing, .. } => LedgerError::Busy {
                path,
                doing,
                waited_ms: started.elapsed().as_millis() as u64,
            },
            e => e,
        };
        retry_busy(deadline, || schema::refuse_newer(&conn, path)).map_err(waited)?;
        // journal_mode=WAL returns the mode in force; it fails on a file that is not SQLite.
        let mode: String = retry_busy(deadline, || {
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        })
        .map_err(classify("switching it to WAL"))?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), mode, "ledger is not in WAL mode");
        }
        retry_busy(deadline, || {
            conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
        })
        .map_err(classify("setting its pragmas"))?;
        audit::register_functions(&conn).map_err(classify("registering its functions"))?;
        let mut ledger = Ledger {
            conn,
            path: path.to_path_buf(),
        };
        retry_busy(deadline, || schema::migrate(&mut ledger)).map_err(waited)?;
        Ok(ledger)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Maps a SQLite error to [`LedgerError::Sql`] naming this ledger.
    pub fn err(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    /// Starts a write transaction with `BEGIN IMMEDIATE`.
    pub fn write(&mut self) -> Result<Transaction<'_>, LedgerError> {
        let path = self.path.clone();
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|source| LedgerError::Sql { path, source })
    }

    /// Starts a read transaction: one consistent snapshot until it ends.
    pub fn read(&mut self) -> Result<Transaction<'_>, LedgerError> {
        let path = self.path.clone();
        self.conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(|source| LedgerError::Sql { path, source })
    }
}

impl Ledger {
    /// The publication revision now (outside any snapshot).
    pub fn revision(&self) -> Result<i64, LedgerError> {
        status::revision(&self.conn).map_err(|e| self.err(e))
    }

    /// One consistent read of everything a build needs: a read transaction held until the
    /// snapshot is dropped.
    pub fn snapshot(&mut self) -> Result<Snapshot<'_>, LedgerError> {
        let path = self.path.clone();
        Ok(Snapshot {
            tx: self.read()?,
            path,
        })
    }
}

/// A consistent view of the ledger (see [`Ledger::snapshot`]); its reads answer with
/// [`LedgerError`], so callers never see a `rusqlite` type.
pub struct Snapshot<'a> {
    tx: Transaction<'a>,
    path: PathBuf,
}

impl Snapshot<'_> {
    fn err(&self, source: rusqlite::Error) -> LedgerError {
        LedgerError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn revision(&self) -> Result<i64, LedgerError> {
        status::revision(&self.tx).map_err(|e| self.err(e))
    }

    pub fn ledger_id(&self) -> Result<String, LedgerError> {
        status::ledger_id(&self.tx).map_err(|e| self.err(e))
    }

    pub fn anchor(&self) -> Result<status::AuditTip, LedgerError> {
        status::anchor(&self.tx).map_err(|e| self.err(e))
    }

    pub fn pages(&self) -> Result<Vec<public::PublicPage>, LedgerError> {
        public::pages(&self.tx).map_err(|e| self.err(e))
    }

    pub fn next_change(&self) -> Result<Option<crate::clock::Instant>, LedgerError> {
        public::next_change(&self.tx).map_err(|e| self.err(e))
    }

    pub fn body(&self, id: crate::content::ItemId) -> Result<Option<String>, LedgerError> {
        public::body(&self.tx, id).map_err(|e| self.err(e))
    }
}

/// SQLITE_BUSY / SQLITE_LOCKED: another connection holds a lock we need right now.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The file is not an SQLite database, or is damaged.
fn is_not_a_ledger(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// Something whose failure may just mean "busy": retried until `deadline`.
trait MaybeBusy {
    fn busy(&self) -> bool;
}

impl MaybeBusy for rusqlite::Error {
    fn busy(&self) -> bool {
        is_busy(self)
    }
}

impl MaybeBusy for LedgerError {
    fn busy(&self) -> bool {
        match self {
            LedgerError::Busy { .. } => true,
            LedgerError::Corrupt { source, .. } | LedgerError::Sql { source, .. } => {
                is_busy(source)
            }
            _ => false,
        }
    }
}

/// Runs `f` again while it fails with busy, with a short randomised backoff, until
/// `deadline`; then returns its last result.
fn retry_busy<T, E: MaybeBusy>(
    deadline: std::time::Instant,
    mut f: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let mut attempt = 0u32;
    loop {
        match f() {
            Err(e) if e.busy() && std::time::Instant::now() < deadline => {
                attempt += 1;
                let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0] % 16);
                std::thread::sleep(Duration::from_millis((2u64 << attempt.min(5)) + jitter));
            }
            r => return r,
        }
    }
}

/// Shorthand for running a closure in a `BEGIN IMMEDIATE` transaction and committing it.
pub fn with_write<T>(
    ledger: &mut Ledger,
    f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
) -> Result<T, LedgerError> {
    let path = ledger.path.clone();
    let sql = |source| LedgerError::Sql {
        path: path.clone(),
        source,
    };
    let tx = ledger.write()?;
    let out = f(&tx).map_err(sql)?;
    tx.commit().map_err(sql)?;
    Ok(out)
}
