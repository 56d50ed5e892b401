//! The hash-chained audit log. Each entry's `current_hash` is sha256 over the previous
//! entry's hash and the entry's own fields, computed inside the committing statement by the
//! SQL function `fp_audit_hash` (registered from Rust on SQLite; a SQL function computing the
//! same bytes on PostgreSQL), so the chain order is the commit order. Appends first lock the
//! revision row (`audit.lock`), which serialises them across hosts. [`verify`] recomputes the
//! chain with [`entry_hash`].

use crate::args;
use crate::{LedgerError, Tx};
use sha2::{Digest, Sha256};

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    Publish,
    Update,
    Withdraw,
    /// `public/current` or a bucket's pointer moved back.
    Rollback,
    /// A revision went live on a deploy target.
    Deploy,
    /// A deploy took over a bucket another ledger owned (`deploy --adopt`).
    Adopt,
    /// A parked deploy operation was closed by a person (`deploy --abandon`).
    Abandon,
    /// A withdrawn item's notice was re-rendered from its edited file.
    Notice,
}

impl AuditAction {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Publish => "publish",
            AuditAction::Update => "update",
            AuditAction::Withdraw => "withdraw",
            AuditAction::Rollback => "rollback",
            AuditAction::Deploy => "deploy",
            AuditAction::Adopt => "adopt",
            AuditAction::Abandon => "abandon",
            AuditAction::Notice => "notice",
        }
    }
}

/// `previous_hash` of the first entry.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The hash of one entry. Fields are length-prefixed so no two entries encode alike.
pub fn entry_hash(
    previous_hash: &str,
    seq: i64,
    at: i64,
    action: &str,
    subject: &str,
    revision: i64,
    detail: &str,
) -> String {
    let mut h = Sha256::new();
    for field in [
        previous_hash,
        &seq.to_string(),
        &at.to_string(),
        action,
        subject,
        &revision.to_string(),
        detail,
    ] {
        h.update(field.len().to_string().as_bytes());
        h.update(b":");
        h.update(field.as_bytes());
        h.update(b";");
    }
    hex::encode(h.finalize())
}

/// One audit entry as stored.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Entry {
    pub seq: i64,
    pub at: i64,
    pub action: String,
    pub subject: String,
    pub revision: i64,
    pub detail: String,
    pub previous_hash: String,
    pub current_hash: String,
}

impl Entry {
    fn of(r: &super::db::Row) -> Result<Entry, LedgerError> {
        Ok(Entry {
            seq: r.get(0)?,
            at: r.get(1)?,
            action: r.get(2)?,
            subject: r.get(3)?,
            revision: r.get(4)?,
            detail: r.get(5)?,
            previous_hash: r.get(6)?,
            current_hash: r.get(7)?,
        })
    }
}

/// The newest `limit` entries, newest first (`fencepost log`).
pub fn newest(tx: &Tx<'_>, limit: i64) -> Result<Vec<Entry>, LedgerError> {
    tx.rows("audit.newest", args! { "limit" => limit })?
        .iter()
        .map(Entry::of)
        .collect()
}

/// Where the chain breaks, if it does.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Break {
    pub seq: i64,
    pub reason: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Verification {
    pub entries: i64,
    pub tip: String,
    pub first_break: Option<Break>,
    /// Entries whose time is earlier than the entry before them: the chain holds, but a
    /// writer's clock was behind another's (on a shared ledger, a host off the shared clock)
    /// or a hand-given `--now` went back.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub times_backwards: Vec<TimeBack>,
}

/// An audit entry dated before the one it follows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TimeBack {
    pub seq: i64,
    pub at: fencepost_core::clock::Instant,
    pub previous_at: fencepost_core::clock::Instant,
}

/// Walks the whole chain in order, recomputing every hash.
pub fn verify(tx: &Tx<'_>) -> Result<Verification, LedgerError> {
    let rows = tx.rows("audit.entries", &[])?;
    let mut prev = GENESIS.to_string();
    let mut entries = 0;
    let mut times_backwards = Vec::new();
    let mut prev_at: Option<i64> = None;
    for (expected_seq, r) in (1i64..).zip(&rows) {
        let e = Entry::of(r)?;
        entries += 1;
        if let Some(p) = prev_at.filter(|p| e.at < *p) {
            times_backwards.push(TimeBack {
                seq: e.seq,
                at: fencepost_core::clock::Instant(e.at),
                previous_at: fencepost_core::clock::Instant(p),
            });
        }
        prev_at = Some(e.at);
        let broken = |reason: String| {
            Ok(Verification {
                entries,
                tip: prev.clone(),
                first_break: Some(Break { seq: e.seq, reason }),
                times_backwards: times_backwards.clone(),
            })
        };
        if e.seq != expected_seq {
            return broken(format!(
                "sequence gap: expected entry {expected_seq}, found {}",
                e.seq
            ));
        }
        if e.previous_hash != prev {
            return broken(format!(
                "previous_hash {} does not match the hash of entry {} ({})",
                e.previous_hash,
                e.seq - 1,
                prev
            ));
        }
        let h = entry_hash(
            &e.previous_hash,
            e.seq,
            e.at,
            &e.action,
            &e.subject,
            e.revision,
            &e.detail,
        );
        if h != e.current_hash {
            return broken(format!(
                "content does not match its hash (stored {}, recomputed {h})",
                e.current_hash
            ));
        }
        prev = h;
    }
    Ok(Verification {
        entries,
        tip: prev,
        first_break: None,
        times_backwards,
    })
}

/// [`verify`], then the chain's end against its anchor: the seq and hash of the newest entry,
/// which a trigger records beside the publication revision in the statement that appends.
/// Deleting the newest entries leaves a chain that links up, but not one that reaches its
/// anchor.
pub fn verify_anchored(tx: &Tx<'_>) -> Result<Verification, LedgerError> {
    let v = verify(tx)?;
    if v.first_break.is_some() {
        return Ok(v);
    }
    let r = tx.one("audit.anchor", &[])?;
    let (seq, hash): (i64, Option<String>) = (r.get(0)?, r.get(1)?);
    let reason = if seq > v.entries {
        Some(format!(
            "truncated: the ledger's anchor says the chain reaches entry {seq} ({}), but it ends at entry {}",
            hash.as_deref().unwrap_or("-"),
            v.entries
        ))
    } else if seq < v.entries {
        Some(format!(
            "the ledger's anchor names entry {seq}, but the chain goes on to entry {}: entries were added behind the ledger's back",
            v.entries
        ))
    } else if seq > 0 && hash.as_deref() != Some(v.tip.as_str()) {
        Some(format!(
            "the newest entry hashes to {}, not to the {} the ledger anchored",
            v.tip,
            hash.as_deref().unwrap_or("-")
        ))
    } else {
        revisions_receipted(tx)?
    };
    Ok(Verification {
        first_break: reason.map(|reason| Break {
            seq: seq.max(v.entries),
            reason,
        }),
        ..v
    })
}

/// Checks the chain against what it is the receipt of: the newest public change's receipt
/// records the ledger's publication revision, and every page's revision of last change has
/// its item's receipt. Entries deleted from the end together with a rewritten anchor leave
/// an intact-looking chain; this finds them. `None` when everything is receipted.
fn revisions_receipted(tx: &Tx<'_>) -> Result<Option<String>, LedgerError> {
    let mut receipts: std::collections::HashSet<(String, i64)> = Default::default();
    let mut newest = 0;
    for r in tx.rows("audit.change_receipts", &[])? {
        let (subject, revision): (String, i64) = (r.get(0)?, r.get(1)?);
        newest = newest.max(revision);
        receipts.insert((subject, revision));
    }
    let mut current = None;
    for r in tx.rows("audit.page_stamps", &[])? {
        let (item, revision, at): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
        current = Some(at);
        if revision > at {
            return Ok(Some(format!(
                "item {item}'s page says it changed at revision {revision}, after the publication revision {at}"
            )));
        }
        if !receipts.contains(&(format!("item:{item}"), revision)) {
            return Ok(Some(format!(
                "item {item}'s page changed at revision {revision}, and the chain holds no receipt of that change: entries were removed"
            )));
        }
    }
    if let Some(at) = current.filter(|at| *at != newest) {
        return Ok(Some(format!(
            "the publication revision is {at}, but the newest public change the chain records is at revision {newest}: entries were removed"
        )));
    }
    Ok(None)
}

/// The hash of entry `seq`, if the chain holds it.
/// The chain's tip hash when publication revision `revision` was the newest (none: empty).
pub fn tip_at_revision(tx: &Tx<'_>, revision: i64) -> Result<Option<String>, LedgerError> {
    tx.row("audit.tip_at_revision", args! { "revision" => revision })?
        .map(|r| r.get(0))
        .transpose()
}

pub fn hash_at(tx: &Tx<'_>, seq: i64) -> Result<Option<String>, LedgerError> {
    tx.row("audit.hash_at", args! { "seq" => seq })?
        .map(|r| r.get(0))
        .transpose()
}

/// Locks the chain's tip for the rest of the transaction (the revision row, on
/// PostgreSQL), so appends from racing hosts chain in commit order.
pub fn lock(tx: &Tx<'_>) -> Result<(), LedgerError> {
    tx.rows("audit.lock", &[])?;
    Ok(())
}

/// Appends an entry unless one with the same action and subject exists (a receipt that a
/// re-driven step may try to write twice). Returns whether it appended.
pub fn append_once(
    tx: &Tx<'_>,
    now: fencepost_core::clock::Instant,
    action: AuditAction,
    subject: &str,
    detail: &str,
) -> Result<bool, LedgerError> {
    lock(tx)?;
    let n = tx.exec(
        "audit.append_once",
        args! { "now" => now.0, "action" => action.as_str(), "subject" => subject, "detail" => detail },
    )?;
    Ok(n == 1)
}

/// The receipt of local rollback `id` (subject `rollback:<id>`), written once: by the
/// rollback right after it moves the pointer, else by the next build or rollback.
pub fn rollback_receipt(
    tx: &Tx<'_>,
    at: fencepost_core::clock::Instant,
    id: &str,
    detail: &str,
) -> Result<bool, LedgerError> {
    append_once(
        tx,
        at,
        AuditAction::Rollback,
        &format!("rollback:{id}"),
        detail,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_prefixing_separates_fields() {
        let a = entry_hash(GENESIS, 1, 2, "ab", "c", 1, "");
        let b = entry_hash(GENESIS, 1, 2, "a", "bc", 1, "");
        assert_ne!(a, b);
    }
}
