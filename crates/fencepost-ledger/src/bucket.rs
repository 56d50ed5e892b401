//! The bucket engine: the whole ledger kept in object storage, as a log of immutable entries,
//! so a stateless CI runner needs no database server. The same engine keeps a ledger in
//! Cloudflare D1, with D1 as the log's store (see `store/d1.rs`: a commit is one D1 batch
//! whose head compare-and-set fails it as a whole when another writer came first). A runner
//! holds only a cache — a SQLite replica under `.fencepost/ledger-cache/` — which it may lose
//! at any moment.
//!
//! ```text
//! <prefix>/log/00000000000000000001            the first entry: a whole new ledger (image)
//! <prefix>/log/00000000000000000002            one write transaction's statements (JSON)
//! …
//! <prefix>/snapshots/00000000000000000100.sqlite  the ledger as it stood at entry 100
//! ```
//!
//! **A commit is one conditional write.** A write transaction runs on the replica (SQLite,
//! `BEGIN IMMEDIATE`) with every statement that changes something recorded, then the entry
//! after the one the replica stands at is created *if absent*. Created: the transaction
//! commits locally. Already there: another writer committed first, so the transaction rolls
//! back, the replica applies the new entries, and the transaction runs again from the start
//! on the new state (its closure re-plans, exactly as a PostgreSQL transaction aborted for a
//! serialisation conflict does). This is Delta Lake's `_delta_log` protocol: object storage
//! gives compare-and-set on single objects and nothing more, and that is enough when every
//! object is immutable and the next name is the only thing two writers race for. "Already
//! there" is read back before it is believed: object_store retries a 5xx inside one call, so
//! a create that landed but lost its answer comes back as "already exists", and the entry
//! there is then this writer's own bytes — a commit, not a lost race.
//!
//! **Fencing holds by the store.** Every write follows the newest entry or is refused: a
//! runner stalled past its lease that wakes and commits finds the next entry taken (by the
//! takeover, at least), re-runs on the new state, and its lease guard — the same statements
//! as on SQLite — then refuses it.
//!
//! **Time is the store's.** Every instant — an item due, a lease expired, an audit time — is
//! decided by the runner's clock checked against the store's (see [`clock`]): the runner
//! writes a probe object and reads the store's `Last-Modified` stamp of it, refuses to decide
//! when it is off by more than `ledger.clock_tolerance_ms`, and otherwise decides by its own
//! clock moved back to the earliest the store's can be. Fencing does not depend on clocks;
//! *when* something is published does, and so it rests on the store's clock, not on each
//! runner's.
//!
//! **Nothing read is trusted unchecked** (see [`follow`] and [`snapshots`]): the positions a
//! replica applies must follow each other with no hole (a listing that skips one is read
//! again, then refused, naming the missing object); the entry a cached replica stands at must
//! still be in the log, the same object it applied (a log emptied, recreated or restored from
//! an older backup is refused instead of written into); every entry names its ledger; and a
//! snapshot is used only when its digest is the one its writer recorded in the log after
//! uploading it. A snapshot that fails its check costs time — the runner falls back to an
//! older one or to the log from its start, naming the damaged object — never the site. A
//! damaged entry is refused by name: it is a decided transaction that no runner may skip.
//!
//! **Why statements, not pages or row images.** SQLite's session extension would record row
//! changes, but rusqlite builds it only with bindgen, i.e. libclang on every machine that
//! compiles fencepost; its update hook misses `WITHOUT ROWID` tables (`daily_results` is one),
//! truncations and rows `REPLACE` deletes; shipping WAL frames (Litestream's LTX) ties every
//! entry to one file's page layout. Statements are deterministic here (every instant, id and
//! token is a bound argument; no `random()`, no `now` in SQL), each is replayed with what it
//! answered its writer checked, and their text travels in the entry, so a later release with
//! other statement files replays what was run. Entries are O(change): a one-item publish
//! writes a few kilobytes whatever the ledger's size.
//!
//! **Schema migrations** are entries too: a whole-database image at the next position, made
//! by the first binary that needs the new schema; an older binary that meets it refuses it
//! (too new) and leaves it untouched.

pub(super) mod clock;
mod entry;
mod follow;
mod snapshots;
mod store;

use super::sqlite::{self, replica};
use super::{schema, LedgerError};
use std::path::{Path, PathBuf};
use std::time::Duration;
pub(super) use store::Log;

/// An open bucket ledger: the log in the store and the local replica it keeps current.
pub(super) struct Conn {
    pub(super) replica: sqlite::Conn,
    log: Log,
    /// Where downloaded images and snapshots are staged (beside the replica).
    scratch: PathBuf,
    /// The replica file (named in messages about the cache).
    file: PathBuf,
    /// Whether this process read the replica's state from the bucket (a snapshot, or the log
    /// from its start): a replay that then diverges is the bucket's fault, not the cache's.
    seeded_here: bool,
    /// Snapshots are never used (`verify` replays the whole log).
    whole_log: bool,
    /// Entries already read (looking for a snapshot's record), for the catch-up to apply.
    fetched: std::collections::HashMap<i64, (Vec<u8>, store::Stamp)>,
}

/// Opens the ledger at `url`, with its replica under `cache` (the store's conditional writes
/// are probed once per process, before its first write): brings the replica to the log's newest entry (a new ledger's
/// first entry if the log is empty), and migrates the ledger when this binary's schema is
/// newer.
pub(super) fn open(
    url: &str,
    cache: &Path,
    name: &str,
    busy_timeout: Duration,
) -> Result<Conn, LedgerError> {
    let log = Log::open(url, name)?;
    std::fs::create_dir_all(cache).map_err(|source| LedgerError::CreateDir {
        path: cache.to_path_buf(),
        source,
    })?;
    let file = cache.join(format!("{}.sqlite", log.short_id()));
    let replica = replica::open(&file, name, busy_timeout)?;
    let mut conn = Conn {
        replica,
        log,
        scratch: cache.to_path_buf(),
        file,
        seeded_here: false,
        whole_log: false,
        fetched: Default::default(),
    };
    conn.catch_up(name)?;
    conn.upgrade(name)?;
    Ok(conn)
}

/// Whether the log at `url` has begun (its first entry or a snapshot is there).
pub(super) fn exists(url: &str, name: &str) -> Result<bool, LedgerError> {
    let log = Log::open(url, name)?;
    Ok(!log.list_from(0)?.is_empty() || !log.snapshots()?.is_empty())
}

/// What replaying the whole log from its first entry found (`verify` on a bucket ledger).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LogCheck {
    /// Entries in the log, read and replayed one by one from the first.
    pub entries: i64,
    /// Snapshots whose digest was checked against the log's record of them.
    pub snapshots_checked: usize,
    /// What does not hold; empty when the log is whole.
    pub problems: Vec<String>,
    /// What costs time but not correctness (a snapshot the log holds no record of).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Conn {
    /// The largest value its store keeps in one field (D1's), if it has one.
    pub(super) fn value_limit(&self) -> Option<usize> {
        self.log.value_limit()
    }

    /// Replays the whole log into a throw-away replica beside this one, from its first entry
    /// and without snapshots, and compares the audit chain it gives with this replica's; checks
    /// every snapshot against the log's record of it.
    pub(super) fn check_log(&mut self, name: &str) -> Result<LogCheck, LedgerError> {
        self.catch_up(name)?;
        let dir = self.scratch_file("verify");
        std::fs::create_dir_all(&dir).map_err(|e| io(name, &dir, e))?;
        let r = self.check_log_in(name, &dir);
        let _ = std::fs::remove_dir_all(&dir);
        r
    }

    fn check_log_in(&mut self, name: &str, dir: &Path) -> Result<LogCheck, LedgerError> {
        let file = dir.join("replay.sqlite");
        let mut problems = Vec::new();
        let mut fresh = Conn {
            replica: replica::open(&file, name, Duration::from_secs(5))?,
            log: Log::open_again(&self.log)?,
            scratch: dir.to_path_buf(),
            file,
            seeded_here: false,
            whole_log: true,
            fetched: Default::default(),
        };
        // Each snapshot's record vouches for the ledger's tables at its position: the log's
        // entries replayed to there must give them again.
        let mut vouched = Vec::new();
        for (snap, tables, what) in self.vouched_tables()? {
            if let Err(e) = fresh.replay_until(name, snap) {
                problems.push(e.to_string());
                break;
            }
            let at = replica::position(&fresh.replica, name)?.0;
            if at == snap && replica::tables_digest(&fresh.replica, name)? != tables {
                vouched.push(format!(
                    "snapshot {what} vouches for tables that the log's entries up to {snap} do not give: it was made from a cache edited outside fencepost, and every fresh runner that read it built from that (delete it; the runners then read the log)"
                ));
            }
        }
        let entries = match fresh.catch_up(name) {
            Ok(()) => replica::position(&fresh.replica, name)?.0,
            Err(e) => {
                problems.push(e.to_string());
                0
            }
        };
        if problems.is_empty() {
            let at = replica::position(&self.replica, name)?.0;
            if at == entries
                && replica::tables_digest(&self.replica, name)?
                    != replica::tables_digest(&fresh.replica, name)?
            {
                problems.push(format!(
                    "this runner's ledger cache ({}) holds tables the log's {entries} entries do not give: it was read from a snapshot, or edited, outside what the log accounts for (delete the cache; the next run reads the log)",
                    self.file.display()
                ));
            }
        }
        if problems.is_empty() {
            let mine = replica::audit_chain(&self.replica, name)?;
            let replayed = replica::audit_chain(&fresh.replica, name)?;
            let at = replica::position(&self.replica, name)?.0;
            if at == entries && mine != replayed {
                let first = mine
                    .iter()
                    .zip(&replayed)
                    .find(|(a, b)| a != b)
                    .map_or(mine.len().min(replayed.len()) as i64 + 1, |(a, _)| a.0);
                problems.push(format!(
                    "the audit chain replayed from the log's {entries} entries differs from the one this ledger holds, from audit entry {first} on: the ledger was read from a snapshot or a cache that the log does not account for"
                ));
            }
        }
        problems.append(&mut vouched);
        let (checked, mut snapshot_problems, notes) = self.check_snapshots()?;
        problems.append(&mut snapshot_problems);
        Ok(LogCheck {
            entries,
            snapshots_checked: checked,
            problems,
            notes,
        })
    }

    /// A ledger on an older schema gets a migration entry: the whole database, migrated.
    fn upgrade(&mut self, name: &str) -> Result<(), LedgerError> {
        for _ in 0..16 {
            if replica::schema_version(&self.replica, name)? >= schema::SQLITE_LATEST {
                return Ok(());
            }
            let (seq, _) = replica::position(&self.replica, name)?;
            let path = self.scratch_file("migrated");
            replica::image(Some(&self.replica), name, &path, seq + 1)?;
            let bytes = read(&path)?;
            let _ = std::fs::remove_file(&path);
            match self.log.create_entry(seq + 1, bytes.clone(), None, None)? {
                Some(stamp) => self.restore_entry(name, &bytes, &stamp)?,
                None => self.catch_up(name)?,
            }
        }
        Err(LedgerError::Internal(
            "the ledger's migration kept losing races".into(),
        ))
    }

    fn scratch_file(&self, what: &str) -> PathBuf {
        self.scratch
            .join(format!("{what}-{}.tmp", uuid::Uuid::new_v4().simple()))
    }

    /// A refusal about the log in the bucket (never the cache's fault).
    fn refuse(&self, name: &str, problem: String) -> LedgerError {
        LedgerError::Log {
            ledger: name.to_string(),
            problem,
        }
    }
}

/// Where a recorded write transaction stands: the log entry it must follow, and the ledger's
/// id as it stood before the transaction (what its entry says it belongs to).
pub(super) struct Follows {
    seq: i64,
    ledger: Option<String>,
}

/// A recorded write transaction on the replica, and the log entry it must follow.
pub(super) fn replica_begin<'a>(
    conn: &'a mut Conn,
    name: &str,
) -> Result<(sqlite::SqliteTx<'a>, &'a Log, Follows), LedgerError> {
    let (tx, seq) = replica::begin_recorded(&mut conn.replica, name)?;
    let ledger = replica::ledger_id_in(&tx, name)?;
    Ok((tx, &conn.log, Follows { seq, ledger }))
}

/// Commits a recorded transaction that followed entry `at.seq`: `Some(Some((n, bytes)))` when
/// it is now entry `n` of that many bytes, `Some(None)` when it changed nothing (no entry),
/// `None` when another writer took the next entry first (it rolled back; catch up and run
/// it again).
pub(super) fn commit(
    log: &Log,
    tx: sqlite::SqliteTx<'_>,
    name: &str,
    at: Follows,
    not_before: Option<i64>,
) -> Result<Option<Option<(i64, usize)>>, LedgerError> {
    let recorded = replica::recorded(&tx);
    if recorded.is_empty() {
        sqlite::commit(tx).map_err(|error| LedgerError::Sql {
            ledger: name.to_string(),
            statement: "commit",
            error,
        })?;
        return Ok(Some(None));
    }
    let seq = at.seq;
    let body = entry::Statements {
        statements: recorded,
        schema: schema::SQLITE_LATEST,
        ledger: at.ledger,
        snapshot: None,
    };
    let bytes = entry::encode(seq + 1, log.writer(), &body);
    let size = bytes.len();
    let revision = replica::publication_revision_in(&tx, name)?;
    fencepost_core::fail_point!("ledger.bucket.before_log_entry");
    let Some(stamp) = log.create_entry(seq + 1, bytes, revision, not_before)? else {
        return Ok(None);
    };
    fencepost_core::fail_point!("ledger.bucket.after_log_entry");
    replica::commit_as(tx, name, &tip(&stamp))?;
    Ok(Some(Some((seq + 1, size))))
}

fn tip(stamp: &store::Stamp) -> replica::Tip {
    replica::Tip {
        seq: stamp.seq,
        bytes: stamp.bytes,
        etag: stamp.etag.clone(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, LedgerError> {
    std::fs::read(path).map_err(|e| io("the ledger cache", path, e))
}

fn io(name: &str, path: &Path, e: std::io::Error) -> LedgerError {
    LedgerError::Location(format!("{name}: {}: {e}", path.display()))
}
