//! What the ledger's operations fail with: [`LedgerError`], one type for every engine, whose
//! messages name the ledger and the way out, and carry no driver type.

use super::db::{DbError, DbErrorKind};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    #[error("cannot create the ledger folder {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    // (The database errors are fields named `error`, not `source`: their text is already in
    // the message, and a `source` would print it twice in the error chain.)
    #[error("cannot open the ledger {ledger}: {error}")]
    Open { ledger: String, error: DbError },
    #[error("{ledger} is not a usable fencepost ledger ({error}); restore it from a backup or move it aside to start a new one")]
    Corrupt { ledger: String, error: DbError },
    #[error("{ledger} is busy: another process kept it locked for {waited_ms} ms while this one was {doing} (most likely another fencepost run creating or migrating it). The ledger is fine: run again, or raise ledger.busy_timeout_ms")]
    Busy {
        ledger: String,
        doing: &'static str,
        waited_ms: u64,
    },
    #[error("{ledger} has schema version {found}, newer than this fencepost understands ({supported}); upgrade fencepost — the ledger was left untouched")]
    TooNew {
        ledger: String,
        found: i64,
        supported: i64,
    },
    #[error("ledger {ledger}: {statement}: {error}")]
    Sql {
        ledger: String,
        statement: &'static str,
        error: DbError,
    },
    #[error("ledger {0}")]
    Location(String),
    /// A commit that would make a page public before it is due by the ledger's own clock (a
    /// D1 Worker's): nothing was written.
    #[error("ledger {ledger}: a page this run would make public is due at {not_before}, and the ledger's own clock says it is not yet: nothing was written (this host's clock, or the instant given, is ahead)")]
    NotDueByStore {
        ledger: String,
        not_before: fencepost_core::clock::Instant,
    },
    /// The bucket the ledger is in does not exist: nothing to retry.
    #[error("bucket {bucket} does not exist (create it, or check ledger.url: {ledger}); nothing was written")]
    NoBucket { bucket: String, ledger: String },
    #[error("ledger copy: {0}")]
    Copy(String),
    /// The log in a bucket is not one a runner may follow or write (a hole, a damaged entry,
    /// another ledger's log, a log behind the cache): the bucket's state, named by object.
    #[error("ledger {ledger}: {problem}")]
    Log { ledger: String, problem: String },
    /// This host's clock is off against the shared ledger's by more than the tolerance.
    #[error("this host's clock is {by} {way} against the store of the ledger {ledger} (the store stamped an object this runner had just written at {store}; this host's clock then read {host}). Every instant on a shared ledger is decided by the store's clock, and this host is off by more than ledger.clock_tolerance_ms ({tolerance_ms} ms), so it decides nothing: fix its clock (NTP: chrony, systemd-timesyncd, `timedatectl`) or raise ledger.clock_tolerance_ms. Nothing was written")]
    ClockSkew {
        ledger: String,
        by: String,
        way: &'static str,
        host: String,
        store: String,
        tolerance_ms: u64,
    },
    /// The ledger belongs to another site than the one opening it.
    #[error("{0}")]
    OtherSite(String),
    #[error("ledger: {0} (a bug in fencepost; please report it)")]
    Internal(String),
}

impl LedgerError {
    /// The database's own kind of failure, when there is one.
    pub fn kind(&self) -> Option<DbErrorKind> {
        match self {
            LedgerError::Sql { error, .. }
            | LedgerError::Open { error, .. }
            | LedgerError::Corrupt { error, .. } => Some(error.kind),
            LedgerError::Busy { .. } => Some(DbErrorKind::Busy),
            _ => None,
        }
    }
}
