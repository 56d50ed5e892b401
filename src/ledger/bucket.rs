//! The bucket engine: the whole ledger kept in object storage, as a log of immutable entries,
//! so a stateless CI runner needs no database server. A runner holds only a cache — a SQLite
//! replica under `.fencepost/ledger-cache/` — which it may lose at any moment.
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
//! object is immutable and the next name is the only thing two writers race for.
//!
//! **Fencing holds by the store.** Every write follows the newest entry or is refused: a
//! runner stalled past its lease that wakes and commits finds the next entry taken (by the
//! takeover, at least), re-runs on the new state, and its lease guard — the same statements
//! as on SQLite — then refuses it. Nothing depends on clocks agreeing or on luck.
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
//! **Snapshots** bound a fresh runner's read: every [`SNAPSHOT_EVERY`] entries the writer that
//! passes the mark uploads the replica as it stands (SQLite's backup API, so rowids survive),
//! created if absent, and the older ones but one are deleted. A fresh runner reads the newest
//! snapshot and the entries after it. A missing or failed snapshot costs only a longer tail.
//!
//! **Schema migrations** are entries too: a whole-database image at the next position, made
//! by the first binary that needs the new schema; an older binary that meets it refuses it
//! (too new) and leaves it untouched.

mod entry;
mod store;

use super::sqlite::{self, replica};
use super::{schema, LedgerError};
use entry::Body;
use std::path::{Path, PathBuf};
use std::time::Duration;
pub(super) use store::Log;

/// How many entries may pass before the next snapshot, unless
/// `FENCEPOST_LEDGER_SNAPSHOT_EVERY` says otherwise (tests take snapshots sooner).
pub(super) const SNAPSHOT_EVERY: i64 = 100;

/// An entry this large is followed by a snapshot at once.
const LARGE_ENTRY: usize = 1 << 20;

fn snapshot_every() -> i64 {
    std::env::var("FENCEPOST_LEDGER_SNAPSHOT_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &i64| *n > 0)
        .unwrap_or(SNAPSHOT_EVERY)
}

/// An open bucket ledger: the log in the store and the local replica it keeps current.
pub(super) struct Conn {
    pub(super) replica: sqlite::Conn,
    log: Log,
    /// Where downloaded images and snapshots are staged (beside the replica).
    scratch: PathBuf,
}

/// Opens the ledger at `url`, with its replica under `cache`: probes the store's conditional
/// writes (once per replica), brings the replica to the log's newest entry (a new ledger's
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
    let fresh = !file.exists();
    let replica = replica::open(&file, name, busy_timeout)?;
    if fresh {
        log.probe()?;
    }
    let mut conn = Conn {
        replica,
        log,
        scratch: cache.to_path_buf(),
    };
    conn.catch_up(name)?;
    conn.upgrade(name)?;
    Ok(conn)
}

/// Whether the log at `url` has begun (its first entry or a snapshot is there).
pub(super) fn exists(url: &str, name: &str) -> Result<bool, LedgerError> {
    let log = Log::open(url, name)?;
    Ok(!log.entries_after(0)?.is_empty() || log.newest_snapshot()?.is_some())
}

impl Conn {
    /// Applies every entry after the one the replica stands at: from the newest snapshot
    /// when the replica is new (or the log it needs was pruned), from a new ledger's first
    /// entry when the log is empty.
    pub(super) fn catch_up(&mut self, name: &str) -> Result<(), LedgerError> {
        for _ in 0..64 {
            let (seq, _) = replica::position(&self.replica, name)?;
            // A new replica starts from the newest snapshot; one far behind jumps to it.
            if seq == 0 && self.seed(name)? {
                continue;
            }
            let after = self.log.entries_after(seq)?;
            if after.len() as i64 > snapshot_every() && self.seed(name)? {
                continue;
            }
            match after.first() {
                None if seq == 0 => {
                    if !self.seed(name)? {
                        self.begin_ledger(name)?;
                    }
                }
                None => return self.refuse_newer(name),
                Some(first) if *first != seq + 1 => {
                    if !self.seed(name)? {
                        return Err(LedgerError::Corrupt {
                            ledger: name.to_string(),
                            error: super::db::DbError {
                                kind: super::db::DbErrorKind::NotALedger,
                                message: format!("its log has no entry {} (the next is {first}) and no snapshot covers the gap", seq + 1),
                            },
                        });
                    }
                }
                Some(_) => self.apply(name, seq, &after)?,
            }
        }
        Err(LedgerError::Internal(
            "the local copy did not catch up with the log in 64 rounds".into(),
        ))
    }

    /// Restores the newest snapshot if it is ahead of the replica; whether it did.
    fn seed(&mut self, name: &str) -> Result<bool, LedgerError> {
        let (seq, _) = replica::position(&self.replica, name)?;
        let Some(snap) = self.log.newest_snapshot()? else {
            return Ok(false);
        };
        if snap <= seq {
            return Ok(false);
        }
        let Some(bytes) = self.log.snapshot(snap)? else {
            return Ok(true); // pruned meanwhile: list again
        };
        self.restore(name, &bytes)?;
        replica::saw_snapshot(&self.replica, name, snap)?;
        tracing::debug!(
            ledger = name,
            snapshot = snap,
            bytes = bytes.len(),
            "read a snapshot of the log"
        );
        Ok(true)
    }

    /// Writes the first entry: a new, empty ledger (a fresh id). Another runner's first
    /// entry may win the race; then the next round applies it.
    fn begin_ledger(&mut self, name: &str) -> Result<(), LedgerError> {
        let path = self.scratch_file("genesis");
        replica::image(None, name, &path, 1)?;
        let bytes = read(&path)?;
        if self.log.create_entry(1, bytes.clone())? {
            self.restore(name, &bytes)?;
        }
        let _ = std::fs::remove_file(&path);
        Ok(())
    }

    /// Applies the entries in `seqs` (which follow `from`), images one by one, runs of
    /// statement entries in one transaction each.
    fn apply(&mut self, name: &str, from: i64, seqs: &[i64]) -> Result<(), LedgerError> {
        let bodies = self.log.entries(seqs)?;
        tracing::debug!(
            ledger = name,
            after = from,
            entries = seqs.len(),
            "read log entries"
        );
        let mut at = from;
        let mut pending: Vec<(i64, Vec<sqlite::Recorded>)> = Vec::new();
        for (seq, bytes) in seqs.iter().copied().zip(bodies) {
            let (body, schema) =
                entry::decode(seq, bytes).map_err(|why| self.corrupt(name, seq, &why))?;
            match body {
                Body::Image(bytes) => {
                    self.replay(name, &mut at, &mut pending)?;
                    self.restore(name, &bytes)?;
                    at = seq;
                }
                Body::Statements(statements) => {
                    let have = replica::schema_version(&self.replica, name)?;
                    if schema != Some(have) {
                        return Err(self.corrupt(name, seq, &format!("its statements ran on schema {schema:?}, the local copy has {have}")));
                    }
                    pending.push((seq, statements));
                }
            }
        }
        self.replay(name, &mut at, &mut pending)
    }

    fn replay(
        &mut self,
        name: &str,
        at: &mut i64,
        pending: &mut Vec<(i64, Vec<sqlite::Recorded>)>,
    ) -> Result<(), LedgerError> {
        if pending.is_empty() {
            return Ok(());
        }
        match replica::replay(&mut self.replica, name, *at, pending)? {
            Ok(()) => {
                *at = pending.last().map_or(*at, |(s, _)| *s);
                pending.clear();
                Ok(())
            }
            // Another process on this host applied them: the caller lists again.
            Err(replica::Replay::Moved) => {
                pending.clear();
                Ok(())
            }
            Err(replica::Replay::Diverged { seq, index, why }) => Err(LedgerError::Corrupt {
                ledger: name.to_string(),
                error: super::db::DbError {
                    kind: super::db::DbErrorKind::NotALedger,
                    message: format!(
                        "its local copy does not replay log entry {seq} (statement {}: {why}): the copy was changed outside fencepost. It is only a cache: delete {} and run again",
                        index + 1,
                        self.scratch.display()
                    ),
                },
            }),
        }
    }

    /// Replaces the replica with a whole-database image, refusing one newer than this
    /// binary understands.
    fn restore(&mut self, name: &str, bytes: &[u8]) -> Result<(), LedgerError> {
        let path = self.scratch_file("image");
        std::fs::write(&path, bytes).map_err(|e| io(name, &path, e))?;
        let r = replica::restore(&mut self.replica, name, &path);
        let _ = std::fs::remove_file(&path);
        r?;
        self.refuse_newer(name)
    }

    fn refuse_newer(&self, name: &str) -> Result<(), LedgerError> {
        let found = replica::schema_version(&self.replica, name)?;
        schema::refuse_newer(name, found, schema::SQLITE_LATEST)
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
            if self.log.create_entry(seq + 1, bytes.clone())? {
                self.restore(name, &bytes)?;
            } else {
                self.catch_up(name)?;
            }
        }
        Err(LedgerError::Internal(
            "the ledger's migration kept losing races".into(),
        ))
    }

    /// After a commit at `seq`: a snapshot when enough entries have passed since the last.
    /// A snapshot that fails is logged and left for the next writer.
    pub(super) fn after_commit(&mut self, name: &str, seq: i64, bytes: usize) {
        let Ok((_, last)) = replica::position(&self.replica, name) else {
            return;
        };
        // A large entry (a ledger copied in, a first publish of thousands of items) is
        // snapshotted at once: a fresh runner then reads the database, not its statements.
        if seq - last < snapshot_every() && bytes < LARGE_ENTRY {
            return;
        }
        crate::fail_point!("ledger.bucket.before_snapshot");
        let path = self.scratch_file("snapshot");
        let r = replica::export(&self.replica, name, &path)
            .and_then(|()| read(&path))
            .and_then(|bytes| self.log.put_snapshot(seq, bytes));
        let _ = std::fs::remove_file(&path);
        match r {
            Ok(()) => {
                let _ = replica::saw_snapshot(&self.replica, name, seq);
            }
            Err(e) => {
                tracing::warn!(ledger = name, error = %e, "could not write a snapshot; the next writer will")
            }
        }
    }

    fn scratch_file(&self, what: &str) -> PathBuf {
        self.scratch
            .join(format!("{what}-{}.tmp", uuid::Uuid::new_v4().simple()))
    }

    fn corrupt(&self, name: &str, seq: i64, why: &str) -> LedgerError {
        LedgerError::Corrupt {
            ledger: name.to_string(),
            error: super::db::DbError {
                kind: super::db::DbErrorKind::NotALedger,
                message: format!("log entry {seq}: {why}"),
            },
        }
    }
}

/// A recorded write transaction on the replica, and the log entry it must follow.
pub(super) fn replica_begin<'a>(
    conn: &'a mut Conn,
    name: &str,
) -> Result<(sqlite::SqliteTx<'a>, &'a Log, i64), LedgerError> {
    let (tx, seq) = replica::begin_recorded(&mut conn.replica, name)?;
    Ok((tx, &conn.log, seq))
}

/// Commits a recorded transaction that followed entry `seq`: `Some(Some((n, bytes)))` when
/// it is now entry `n` of that many bytes, `Some(None)` when it changed nothing (no entry),
/// `None` when another writer took entry `seq + 1` first (it rolled back; catch up and run
/// it again).
pub(super) fn commit(
    log: &Log,
    tx: sqlite::SqliteTx<'_>,
    name: &str,
    seq: i64,
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
    let bytes = entry::encode(seq + 1, schema::SQLITE_LATEST, log.writer(), &recorded);
    let size = bytes.len();
    crate::fail_point!("ledger.bucket.before_log_entry");
    if !log.create_entry(seq + 1, bytes)? {
        return Ok(None);
    }
    crate::fail_point!("ledger.bucket.after_log_entry");
    replica::commit_as(tx, name, seq + 1)?;
    Ok(Some(Some((seq + 1, size))))
}

fn read(path: &Path) -> Result<Vec<u8>, LedgerError> {
    std::fs::read(path).map_err(|e| io("the ledger cache", path, e))
}

fn io(name: &str, path: &Path, e: std::io::Error) -> LedgerError {
    LedgerError::Location(format!("{name}: {}: {e}", path.display()))
}
