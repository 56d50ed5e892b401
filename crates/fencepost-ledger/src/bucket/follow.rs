//! Following the log: a replica applies the entries after the one it stands at, and checks
//! before it applies anything that what it lists is the log it follows, whole.
//!
//! - **No holes.** The positions after the replica's must be consecutive. A listing with a
//!   gap is read again, then each missing entry is asked for by name (a listing may lag behind
//!   a create; a read of the object does not); one still missing is refused — "log entry N is
//!   missing from s3://…" — with nothing written. Skipping it would drop a decided transaction
//!   (a withdrawal, say) and renumber every audit entry after it.
//! - **The same log.** A cached replica's own entry must still be there, the same object it
//!   applied or wrote (size and ETag): a log that was emptied, recreated or restored from an
//!   older backup is behind the cache, and a runner that wrote its next entry into it would
//!   fork the history. Every entry names its ledger's id; an entry of another ledger is refused.
//! - **Damage is named.** An entry that does not decode, or whose image is not a whole
//!   database, is refused with the object's URL and the way out; it is a decided transaction,
//!   and no runner may skip it.

use super::entry::{self, Body};
use super::store::Stamp;
use super::{read, replica, snapshots, tip, Conn};
use crate::{schema, sqlite, LedgerError};

/// Why a listing cannot be followed as it is.
#[derive(Debug, PartialEq, Eq)]
enum Gap {
    /// The entry the replica stands at is not listed.
    TipMissing,
    /// It is listed, but as another object than the one the replica applied.
    TipDiffers(Stamp),
    /// Entries after the replica's skip this position.
    Hole(i64),
}

/// The entries after `seq` in `listed` (which starts at `seq` itself when `seq` > 0), if they
/// follow `seq` with no gap and the entry at `seq` is the one `tip` says the replica applied.
fn follows(seq: i64, tip: Option<&replica::Tip>, listed: &[Stamp]) -> Result<Vec<Stamp>, Gap> {
    let mut rest = listed;
    if seq > 0 {
        match rest.first() {
            Some(first) if first.seq == seq => {
                if let Some(t) = tip.filter(|t| t.seq == seq) {
                    let applied = Stamp {
                        seq,
                        bytes: t.bytes,
                        etag: t.etag.clone(),
                    };
                    if !applied.same_object(first) {
                        return Err(Gap::TipDiffers(first.clone()));
                    }
                }
                rest = &rest[1..];
            }
            _ => return Err(Gap::TipMissing),
        }
    }
    let mut want = seq + 1;
    for s in rest {
        if s.seq != want {
            return Err(Gap::Hole(want));
        }
        want += 1;
    }
    Ok(rest.to_vec())
}

impl Conn {
    /// Applies every entry after the one the replica stands at: from the newest snapshot the
    /// log vouches for when the replica is new (or far behind), from a new ledger's first entry
    /// when the log is empty.
    /// [`Conn::catch_up`] from the log's entries alone (a replica that reads no snapshot),
    /// stopping at entry `limit` — where `verify` compares a snapshot record's tables.
    pub(super) fn replay_until(&mut self, name: &str, limit: i64) -> Result<(), LedgerError> {
        for _ in 0..(limit.max(1) * 2 + 64) {
            let (seq, _) = replica::position(&self.replica, name)?;
            if seq >= limit {
                return Ok(());
            }
            let mut after = self.listing(name, seq)?;
            after.retain(|s| s.seq <= limit);
            if after.is_empty() {
                return Ok(());
            }
            self.apply(name, seq, &after)?;
        }
        Err(LedgerError::Internal(
            "the replay did not reach a snapshot's position".into(),
        ))
    }

    pub(crate) fn catch_up(&mut self, name: &str) -> Result<(), LedgerError> {
        for _ in 0..64 {
            let (seq, _) = replica::position(&self.replica, name)?;
            if seq == 0 && self.seed(name)? {
                continue;
            }
            let after = self.listing(name, seq)?;
            if after.len() as i64 > snapshots::every() && self.seed(name)? {
                continue;
            }
            if after.is_empty() {
                if seq == 0 {
                    self.begin_ledger(name)?;
                    continue;
                }
                return self.refuse_newer(name);
            }
            if seq == 0 {
                self.seeded_here = true;
            }
            self.apply(name, seq, &after)?;
        }
        Err(LedgerError::Internal(
            "the local copy did not catch up with the log in 64 rounds".into(),
        ))
    }

    /// The entries after `seq`, checked to follow it (see the module's doc).
    fn listing(&self, name: &str, seq: i64) -> Result<Vec<Stamp>, LedgerError> {
        let tip = replica::tip(&self.replica, name)?;
        let mut listed = self.log.list_from(seq)?;
        for round in 0..8 {
            match follows(seq, tip.as_ref(), &listed) {
                Ok(after) => return Ok(after),
                Err(Gap::TipDiffers(there)) => {
                    return Err(self.refuse(name, format!(
                        "this runner's cache ({}) stands at log entry {seq}, but {} is another object than the one it applied ({} bytes, ETag {}; it applied {} bytes{}): the log at this prefix is not the one the cache follows (the bucket was recreated, or another ledger was started at this prefix). fencepost writes nothing into a log it does not follow. If the bucket's log is the true ledger, delete the cache and run again; if the cache is, copy it to a new prefix with `fencepost ledger copy` and point ledger.url there",
                        self.file.display(),
                        self.log.entry_name(seq),
                        there.bytes,
                        there.etag.as_deref().unwrap_or("-"),
                        tip.as_ref().map_or(0, |t| t.bytes),
                        tip.as_ref().and_then(|t| t.etag.as_deref()).map(|e| format!(", ETag {e}")).unwrap_or_default(),
                    )));
                }
                Err(Gap::TipMissing) => match self.log.head_entry(seq)? {
                    // Listed late, not lost: the object itself is there, and the same.
                    Some(there)
                        if tip.as_ref().filter(|t| t.seq == seq).is_none_or(|t| {
                            super::store::Stamp {
                                seq,
                                bytes: t.bytes,
                                etag: t.etag.clone(),
                            }
                            .same_object(&there)
                        }) =>
                    {
                        listed.insert(0, there);
                        listed.sort_by_key(|s| s.seq);
                        listed.dedup_by_key(|s| s.seq);
                    }
                    Some(there) => {
                        listed = vec![there];
                    }
                    None => {
                        let newest = listed.last().map(|s| s.seq).or(self.newest_listed()?);
                        return Err(self.refuse(name, format!(
                            "this runner's cache ({}) stands at log entry {seq}, but the log at {} {}: the bucket was emptied, recreated or restored from an older backup. The cache is ahead of the log, and fencepost writes nothing into a log it does not follow. If entries were lost, restore them (the cache holds the ledger as of entry {seq}: `fencepost ledger copy` from it rebuilds a ledger at a new prefix); if the ledger was reset on purpose, delete the cache and run again. Nothing was written",
                            self.file.display(),
                            self.log.object_name("log/"),
                            match newest {
                                Some(n) => format!("ends at entry {n}"),
                                None => "has no entries".to_string(),
                            }
                        )));
                    }
                },
                Err(Gap::Hole(n)) => {
                    if round == 0 {
                        // A listing may lag or page oddly: read it once more.
                        listed = self.log.list_from(seq)?;
                        continue;
                    }
                    match self.log.head_entry(n)? {
                        Some(there) => {
                            listed.push(there);
                            listed.sort_by_key(|s| s.seq);
                            listed.dedup_by_key(|s| s.seq);
                        }
                        None => {
                            return Err(self.refuse(name, format!(
                                "log entry {n} is missing from {} (entries after it are there): it is a decided transaction, and skipping it would lose what it decided and renumber the audit history after it. Restore the object from the bucket's versioning or a backup (a runner's cache at entry {n} or later holds it: `fencepost ledger copy` from that cache rebuilds the ledger at a new prefix). A lifecycle rule that expires objects must not cover the ledger's prefix. Nothing was written",
                                self.log.entry_name(n)
                            )));
                        }
                    }
                }
            }
        }
        Err(self.refuse(
            name,
            format!(
                "the listing of {} kept changing while it was read; run again",
                self.log.object_name("log/")
            ),
        ))
    }

    /// The entries at `seqs`, from those already read (a snapshot's record) or the store.
    fn entries(&mut self, seqs: &[i64]) -> Result<Vec<Option<(Vec<u8>, Stamp)>>, LedgerError> {
        let missing: Vec<i64> = seqs
            .iter()
            .copied()
            .filter(|s| !self.fetched.contains_key(s))
            .collect();
        let mut read = self.log.entries(&missing)?.into_iter();
        Ok(seqs
            .iter()
            .map(|s| match self.fetched.remove(s) {
                Some(kept) => Some(kept),
                None => read.next().flatten(),
            })
            .collect())
    }

    fn newest_listed(&self) -> Result<Option<i64>, LedgerError> {
        Ok(self.log.list_from(0)?.last().map(|s| s.seq))
    }

    /// Writes the first entry: a new, empty ledger (a fresh id). Another runner's first
    /// entry may win the race; then the next round applies it.
    fn begin_ledger(&mut self, name: &str) -> Result<(), LedgerError> {
        let path = self.scratch_file("genesis");
        replica::image(None, name, &path, 1)?;
        let bytes = read(&path)?;
        let _ = std::fs::remove_file(&path);
        if let Some(stamp) = self.log.create_entry(1, bytes.clone(), Some(0), None)? {
            self.restore_entry(name, &bytes, &stamp)?;
        }
        Ok(())
    }

    /// Applies the entries `after` (which follow `from`), images one by one, runs of
    /// statement entries in one transaction each.
    fn apply(&mut self, name: &str, from: i64, after: &[Stamp]) -> Result<(), LedgerError> {
        let seqs: Vec<i64> = after.iter().map(|s| s.seq).collect();
        let bodies = self.entries(&seqs)?;
        tracing::debug!(
            ledger = name,
            after = from,
            entries = seqs.len(),
            "read log entries"
        );
        let mut ledger_id = replica::ledger_id(&self.replica, name)?;
        let mut at = from;
        let mut pending: Vec<(i64, Vec<sqlite::Recorded>)> = Vec::new();
        let mut last: Option<Stamp> = None;
        for (seq, got) in seqs.iter().copied().zip(bodies) {
            let Some((bytes, stamp)) = got else {
                return Err(self.refuse(name, format!(
                    "log entry {seq} was listed but is gone from {}: entries are never deleted by fencepost; restore it from the bucket's versioning or a backup. Nothing was written",
                    self.log.entry_name(seq)
                )));
            };
            let body = entry::decode(seq, bytes).map_err(|why| self.damaged(name, seq, &why))?;
            match body {
                Body::Image(bytes) => {
                    self.replay(name, &mut at, &mut pending, last.take())?;
                    self.restore_entry(name, &bytes, &stamp)?;
                    ledger_id = replica::ledger_id(&self.replica, name)?;
                    at = seq;
                }
                Body::Statements(st) => {
                    let have = replica::schema_version(&self.replica, name)?;
                    if st.schema != have {
                        return Err(self.damaged(name, seq, &format!("its statements ran on schema {}, and the ledger before it is at schema {have}", st.schema)));
                    }
                    if let Some(theirs) = &st.ledger {
                        // An entry names the ledger as it stood before it. One that changed the
                        // id (a `ledger copy` into this log) is followed by entries naming the
                        // new one: replay what is pending and look again before refusing.
                        if ledger_id.as_ref().is_some_and(|ours| ours != theirs) {
                            self.replay(name, &mut at, &mut pending, last.take())?;
                            ledger_id = replica::ledger_id(&self.replica, name)?;
                        }
                        if let Some(ours) = ledger_id.as_ref().filter(|ours| *ours != theirs) {
                            return Err(self.refuse(name, format!(
                                "log entry {seq} ({}) belongs to ledger {theirs}, but the entries before it are ledger {ours}'s: two ledgers' logs are mixed at this prefix (objects copied in from another ledger's prefix?). Give each ledger its own prefix; nothing was written",
                                self.log.entry_name(seq)
                            )));
                        }
                    }
                    pending.push((seq, st.statements));
                    last = Some(stamp);
                }
            }
        }
        self.replay(name, &mut at, &mut pending, last)
    }

    fn replay(
        &mut self,
        name: &str,
        at: &mut i64,
        pending: &mut Vec<(i64, Vec<sqlite::Recorded>)>,
        last: Option<Stamp>,
    ) -> Result<(), LedgerError> {
        let Some(last) = last.filter(|_| !pending.is_empty()) else {
            return Ok(());
        };
        match replica::replay(&mut self.replica, name, *at, pending, &tip(&last))? {
            Ok(()) => {
                *at = last.seq;
                pending.clear();
                Ok(())
            }
            // Another process on this host applied them: the caller lists again.
            Err(replica::Replay::Moved) => {
                pending.clear();
                Ok(())
            }
            Err(replica::Replay::Diverged { seq, index, why }) if self.seeded_here => Err(self.refuse(name, format!(
                "log entry {seq} ({}) does not replay on the ledger the log before it makes (statement {}: {why}): the entry, or one before it, was changed in the bucket after it was written. Restore the log's objects from the bucket's versioning or a backup; nothing was written",
                self.log.entry_name(seq),
                index + 1
            ))),
            Err(replica::Replay::Diverged { seq, index, why }) => Err(self.refuse(name, format!(
                "this runner's cache ({}) does not replay log entry {seq} ({}; statement {}: {why}). Either the cache was changed outside fencepost — it is only a cache: delete it and run again — or the entry was changed in the bucket; a runner with no cache (`fencepost verify` replays the whole log) tells which. Nothing was written",
                self.file.display(),
                self.log.entry_name(seq),
                index + 1
            ))),
        }
    }

    /// Replaces the replica with the whole-database image of log entry `stamp.seq`,
    /// refusing one that is not whole or newer than this binary understands.
    pub(super) fn restore_entry(
        &mut self,
        name: &str,
        bytes: &[u8],
        stamp: &Stamp,
    ) -> Result<(), LedgerError> {
        let path = self.scratch_file("image");
        std::fs::write(&path, bytes).map_err(|e| super::io(name, &path, e))?;
        if let Err(why) = replica::check_image(&path, stamp.seq, true) {
            let _ = std::fs::remove_file(&path);
            return Err(self.damaged(name, stamp.seq, &why));
        }
        let r = replica::restore(&mut self.replica, name, &path);
        let _ = std::fs::remove_file(&path);
        r?;
        replica::stands_at(&self.replica, name, &tip(stamp))?;
        self.refuse_newer(name)
    }

    pub(super) fn refuse_newer(&self, name: &str) -> Result<(), LedgerError> {
        let found = replica::schema_version(&self.replica, name)?;
        schema::refuse_newer(name, found, schema::SQLITE_LATEST)
    }

    /// A damaged entry: the bucket's fault, named by its object.
    fn damaged(&self, name: &str, seq: i64, why: &str) -> LedgerError {
        self.refuse(name, format!(
            "log entry {seq} ({}) is damaged: {why}. It is a decided transaction, and no runner may skip it: restore the object from the bucket's versioning or a backup, or rebuild the ledger at a new prefix from a runner's cache that holds it (`fencepost ledger copy`). This runner's cache is not at fault; nothing was written",
            self.log.entry_name(seq)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(seq: i64, bytes: u64) -> Stamp {
        Stamp {
            seq,
            bytes,
            etag: Some(format!("e{seq}-{bytes}")),
        }
    }

    fn t(seq: i64, bytes: u64) -> replica::Tip {
        replica::Tip {
            seq,
            bytes,
            etag: Some(format!("e{seq}-{bytes}")),
        }
    }

    #[test]
    fn a_listing_is_followed_only_when_whole_and_the_same_log() {
        // A new replica: everything from 1, consecutive.
        assert_eq!(
            follows(0, None, &[s(1, 5), s(2, 5)]),
            Ok(vec![s(1, 5), s(2, 5)])
        );
        assert_eq!(follows(0, None, &[s(2, 5)]), Err(Gap::Hole(1)));
        // A cached one: its own entry first, the same object, then no gap.
        assert_eq!(
            follows(3, Some(&t(3, 9)), &[s(3, 9), s(4, 1)]),
            Ok(vec![s(4, 1)])
        );
        assert_eq!(follows(3, Some(&t(3, 9)), &[s(3, 9)]), Ok(vec![]));
        assert_eq!(
            follows(3, Some(&t(3, 9)), &[s(3, 9), s(5, 1)]),
            Err(Gap::Hole(4))
        );
        assert_eq!(follows(3, Some(&t(3, 9)), &[]), Err(Gap::TipMissing));
        assert_eq!(follows(3, Some(&t(3, 9)), &[s(4, 1)]), Err(Gap::TipMissing));
        assert_eq!(
            follows(3, Some(&t(3, 9)), &[s(3, 8)]),
            Err(Gap::TipDiffers(s(3, 8)))
        );
        // A cache from before stamps were kept checks positions only.
        assert_eq!(follows(3, None, &[s(3, 8), s(4, 1)]), Ok(vec![s(4, 1)]));
    }
}
