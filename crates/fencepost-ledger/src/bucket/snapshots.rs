//! Snapshots bound a fresh runner's read: every [`every`] entries the writer that passes the
//! mark uploads the replica as it stands (SQLite's backup API, so rowids survive), created if
//! absent, then **records it in the log**: an entry with no statements that carries the
//! snapshot's position, size and sha256. Only then are the older ones but one deleted.
//!
//! A fresh runner uses the newest snapshot whose bytes match its record (found among the few
//! entries after it) and that opens as a whole database standing at its position; any other —
//! truncated, zeroed, replaced by a replica edited outside fencepost, or one the log holds no
//! record of (a writer that stopped between the upload and the record; a snapshot an older
//! fencepost wrote) — is passed over with a warning naming the object, for an older one or the
//! log from its first entry. Damage costs time, never the site. Recording the digest in the
//! log rather than beside the snapshot is the point: the log is create-if-absent and followed
//! by every runner, so replacing a snapshot means rewriting history the other runners check.
//!
//! Why a record entry rather than a digest of the ledger's tables in every entry: that digest
//! costs O(ledger) per commit, and a one-item publish writes a few kilobytes today.

use super::entry::{self, Body, SnapshotRecord, Statements};
use super::{read, replica, schema, Conn};
use crate::LedgerError;

/// How many entries may pass before the next snapshot, unless
/// `FENCEPOST_LEDGER_SNAPSHOT_EVERY` says otherwise (tests take snapshots sooner).
const SNAPSHOT_EVERY: i64 = 100;

/// An entry this large is followed by a snapshot at once.
const LARGE_ENTRY: usize = 1 << 20;

/// How far after a snapshot its record is looked for (its writer records it next, but other
/// writers' entries may come between).
const RECORD_WITHIN: i64 = 32;

pub(super) fn every() -> i64 {
    std::env::var("FENCEPOST_LEDGER_SNAPSHOT_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n: &i64| *n > 0)
        .unwrap_or(SNAPSHOT_EVERY)
}

impl Conn {
    /// Restores the newest snapshot ahead of the replica that the log vouches for; whether it
    /// did. Snapshots that fail their check are named in a warning and passed over.
    pub(super) fn seed(&mut self, name: &str) -> Result<bool, LedgerError> {
        if self.whole_log {
            return Ok(false);
        }
        let (seq, _) = replica::position(&self.replica, name)?;
        let ahead: Vec<i64> = self
            .log
            .snapshots()?
            .into_iter()
            .filter(|s| *s > seq)
            .collect();
        for snap in ahead.into_iter().rev() {
            match self.vouched(snap)? {
                Ok(bytes) => {
                    self.restore_snapshot(name, snap, &bytes)?;
                    return Ok(true);
                }
                Err(why) => tracing::warn!(
                    ledger = name,
                    "snapshot {} not used: {why}; reading the ledger from an older snapshot or the log from its start instead (slower, nothing lost)",
                    self.log.snapshot_name(snap)
                ),
            }
        }
        Ok(false)
    }

    /// Snapshot `snap`'s bytes if they match the log's record of them; else why not.
    fn vouched(&mut self, snap: i64) -> Result<Result<Vec<u8>, String>, LedgerError> {
        let Some(bytes) = self.log.snapshot(snap)? else {
            return Ok(Err("it was deleted meanwhile".into()));
        };
        let Some((at, record)) = self.record_of(snap)? else {
            return Ok(Err("the log holds no record of it (its writer stopped before recording it, or an older fencepost wrote it)".into()));
        };
        let sha = fencepost_core::digest::sha256_hex(&bytes);
        if sha != record.sha256 || bytes.len() as u64 != record.bytes {
            return Ok(Err(format!(
                "it does not match what log entry {at} recorded for it ({} bytes, sha256 {}; recorded {} bytes, sha256 {}): it was damaged or replaced",
                bytes.len(),
                &sha[..16],
                record.bytes,
                &record.sha256[..record.sha256.len().min(16)]
            )));
        }
        Ok(Ok(bytes))
    }

    /// The record of snapshot `snap` in the log (its entry and what it says), looked for in
    /// the [`RECORD_WITHIN`] entries after it: read by name in growing batches (its writer
    /// records it next, so the first read finds it), up to the log's end. What is read is kept
    /// for the catch-up that follows, which needs these very entries: no extra listing and no
    /// entry read twice.
    fn record_of(&mut self, snap: i64) -> Result<Option<(i64, SnapshotRecord)>, LedgerError> {
        let (mut from, mut batch) = (snap + 1, 1);
        while from <= snap + RECORD_WITHIN {
            let seqs: Vec<i64> = (from..from + batch).collect();
            let got = self.log.entries(&seqs)?;
            let ended = got.iter().any(Option::is_none);
            for (seq, got) in seqs.iter().zip(got) {
                let Some((bytes, stamp)) = got else { break };
                if let Ok(Body::Statements(st)) = entry::decode(*seq, bytes.clone()) {
                    self.fetched.insert(*seq, (bytes, stamp));
                    if let Some(r) = st.snapshot.filter(|r| r.seq == snap) {
                        return Ok(Some((*seq, r)));
                    }
                }
            }
            if ended {
                break;
            }
            from += batch;
            batch *= 2;
        }
        Ok(None)
    }

    fn restore_snapshot(&mut self, name: &str, snap: i64, bytes: &[u8]) -> Result<(), LedgerError> {
        let path = self.scratch_file("snapshot");
        std::fs::write(&path, bytes).map_err(|e| super::io(name, &path, e))?;
        let checked = replica::check_image(&path, snap, false);
        let restored = match checked {
            Ok(()) => replica::restore(&mut self.replica, name, &path),
            Err(why) => Err(self.refuse(name, format!(
                "snapshot {} matches its record but is not a whole database ({why}): the writer that made it wrote a damaged copy; delete that object and run again",
                self.log.snapshot_name(snap)
            ))),
        };
        let _ = std::fs::remove_file(&path);
        restored?;
        replica::saw_snapshot(&self.replica, name, snap)?;
        self.seeded_here = true;
        tracing::debug!(
            ledger = name,
            snapshot = snap,
            bytes = bytes.len(),
            "read a snapshot of the log"
        );
        self.refuse_newer(name)
    }

    /// After a commit at `seq`: a snapshot when enough entries have passed since the last.
    /// A snapshot that fails is logged and left for the next writer.
    pub(crate) fn after_commit(&mut self, name: &str, seq: i64, bytes: usize) {
        let Ok((_, last)) = replica::position(&self.replica, name) else {
            return;
        };
        // A large entry (a ledger copied in, a first publish of thousands of items) is
        // snapshotted at once: a fresh runner then reads the database, not its statements.
        if seq - last < every() && bytes < LARGE_ENTRY {
            return;
        }
        if let Err(e) = self.snapshot(name, seq) {
            tracing::warn!(ledger = name, error = %e, "could not write a snapshot; the next writer will");
        }
    }

    /// Uploads the replica as snapshot `seq`, records it in the log, and prunes older ones.
    fn snapshot(&mut self, name: &str, seq: i64) -> Result<(), LedgerError> {
        fencepost_core::fail_point!("ledger.bucket.before_snapshot");
        let path = self.scratch_file("snapshot");
        let exported = replica::export(&self.replica, name, &path)
            .and_then(|()| Ok((read(&path)?, replica::tables_digest_of_image(&path, name)?)));
        let _ = std::fs::remove_file(&path);
        let (bytes, tables) = exported?;
        let record = SnapshotRecord {
            seq,
            sha256: fencepost_core::digest::sha256_hex(&bytes),
            bytes: bytes.len() as u64,
            tables: Some(tables),
        };
        if !self.log.put_snapshot(seq, bytes)? {
            return Ok(()); // another writer's snapshot is there
        }
        fencepost_core::fail_point!("ledger.bucket.before_snapshot_record");
        for _ in 0..4 {
            self.catch_up(name)?;
            let (at, _) = replica::position(&self.replica, name)?;
            if at >= seq + RECORD_WITHIN {
                return Ok(()); // too late to be found: unrecorded, it is passed over
            }
            let body = Statements {
                statements: Vec::new(),
                schema: schema::SQLITE_LATEST,
                ledger: replica::ledger_id(&self.replica, name)?,
                snapshot: Some(record.clone()),
            };
            let bytes = entry::encode(at + 1, self.log.writer(), &body);
            if let Some(stamp) = self.log.create_entry(at + 1, bytes, None, None)? {
                let moved = replica::replay(
                    &mut self.replica,
                    name,
                    at,
                    &[(at + 1, Vec::new())],
                    &super::tip(&stamp),
                )?;
                if moved.is_ok() {
                    replica::saw_snapshot(&self.replica, name, seq)?;
                }
                return self.log.prune_snapshots(seq);
            }
        }
        Ok(())
    }

    /// The snapshots there are whose records vouch for their tables: (position, the tables'
    /// digest, the snapshot's name), oldest first.
    pub(super) fn vouched_tables(&mut self) -> Result<Vec<(i64, String, String)>, LedgerError> {
        let mut out = Vec::new();
        for snap in self.log.snapshots()? {
            if let Some((_, record)) = self.record_of(snap)? {
                if let Some(tables) = record.tables {
                    out.push((snap, tables, self.log.snapshot_name(snap)));
                }
            }
        }
        Ok(out)
    }

    /// Every snapshot checked against its record: (how many were checked, what does not
    /// hold, notes on snapshots the log holds no record of).
    pub(super) fn check_snapshots(
        &mut self,
    ) -> Result<(usize, Vec<String>, Vec<String>), LedgerError> {
        let (mut checked, mut problems, mut notes) = (0, Vec::new(), Vec::new());
        for snap in self.log.snapshots()? {
            let Some(bytes) = self.log.snapshot(snap)? else {
                continue;
            };
            match self.record_of(snap)? {
                None => notes.push(format!(
                    "snapshot {} has no record in the log and is never used (an older fencepost wrote it, or its writer stopped before recording it)",
                    self.log.snapshot_name(snap)
                )),
                Some((at, record)) => {
                    checked += 1;
                    if fencepost_core::digest::sha256_hex(&bytes) != record.sha256 {
                        problems.push(format!(
                            "snapshot {} does not match what log entry {at} recorded for it: it was damaged or replaced (fresh runners pass it over; delete it)",
                            self.log.snapshot_name(snap)
                        ));
                    }
                }
            }
        }
        Ok((checked, problems, notes))
    }
}
