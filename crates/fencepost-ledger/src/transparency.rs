//! The transparency log's tables (`docs/transparency.md`): its entries with their stored
//! hashes (`tlog_entries`), and what it knows of each item (`tlog_items`: the JSON, the
//! commitment to it, what the log has said of the item since its reveal).
//!
//! Chosen: the log lives in the ledger, beside what it records, on every engine — an entry is
//! appended in the same transaction that marks what it says as logged, so a build that dies
//! midway leaves either both or neither, and two builds cannot append the same index (the
//! primary key refuses the second; on PostgreSQL `audit.lock` serialises them first). Each
//! row keeps the stored hashes its entry added (Go's `sumdb/tlog` storage order), so an append
//! reads O(log n) rows and a tile reads the rows of its own entries. Rejected: deriving the
//! log from the audit chain at build time (salts are random and kept, and entries must never
//! be re-ordered by a later build: the log is append-only by construction only if it is
//! stored), and keeping it only in the published files (a fresh CI runner has none of them).

use crate::args;
use crate::{LedgerError, Tx};
use fencepost_core::item::{ItemId, ItemName};
use fencepost_tlog::Hash;
use std::cell::RefCell;
use std::collections::HashMap;

/// The log's size: the index the next entry gets.
pub fn size(tx: &Tx<'_>) -> Result<u64, LedgerError> {
    Ok(tx.one("tlog.size", &[])?.get::<i64>(0)? as u64)
}

/// The publication revision the log last caught up with.
pub fn revision(tx: &Tx<'_>) -> Result<i64, LedgerError> {
    tx.one("tlog.revision", &[])?.get(0)
}

pub fn caught_up(tx: &Tx<'_>, revision: i64) -> Result<(), LedgerError> {
    tx.exec("tlog.caught_up", args! { "revision" => revision })?;
    Ok(())
}

/// Appends `entries` at the log's end, each with its stored hashes; the new size.
pub fn append(tx: &Tx<'_>, entries: &[String]) -> Result<u64, LedgerError> {
    let mut n = size(tx)?;
    let reader = Hashes::new(tx);
    for e in entries {
        let stored =
            tlog_tiles::stored_hashes(n, e.as_bytes(), &reader).map_err(|err| reader.error(err))?;
        let hex: String = stored.iter().map(|h| hex::encode(h.0)).collect();
        tx.exec(
            "tlog.append",
            args! { "idx" => n as i64, "entry" => e.as_str(), "hashes" => hex },
        )?;
        n += 1;
    }
    Ok(n)
}

/// The entries at `from..to`, in order.
pub fn entries(tx: &Tx<'_>, from: u64, to: u64) -> Result<Vec<String>, LedgerError> {
    tx.rows(
        "tlog.entries",
        args! { "from" => from as i64, "to" => to as i64 },
    )?
    .into_iter()
    .map(|mut r| r.take(1))
    .collect()
}

/// The log's stored hashes, read from the ledger as the Merkle code asks for them (each
/// entry's row read once).
pub struct Hashes<'t, 'c> {
    tx: &'t Tx<'c>,
    rows: RefCell<HashMap<u64, Vec<Hash>>>,
    failed: RefCell<Option<LedgerError>>,
}

impl<'t, 'c> Hashes<'t, 'c> {
    pub fn new(tx: &'t Tx<'c>) -> Hashes<'t, 'c> {
        Hashes {
            tx,
            rows: RefCell::new(HashMap::new()),
            failed: RefCell::new(None),
        }
    }

    /// The ledger's error behind a failed read, or the Merkle code's own.
    pub fn error(&self, e: tlog_tiles::Error) -> LedgerError {
        self.failed
            .borrow_mut()
            .take()
            .unwrap_or_else(|| LedgerError::Internal(format!("transparency log: {e}")))
    }

    fn row(&self, record: u64) -> Result<Vec<Hash>, LedgerError> {
        if let Some(h) = self.rows.borrow().get(&record) {
            return Ok(h.clone());
        }
        let r = self
            .tx
            .row("tlog.hashes_of", args! { "idx" => record as i64 })?
            .ok_or_else(|| LedgerError::Internal(format!("log entry {record} has no row")))?;
        let hex: String = r.get(0)?;
        let bad = || LedgerError::Internal(format!("log entry {record}: damaged stored hashes"));
        let bytes = hex::decode(&hex).map_err(|_| bad())?;
        let hashes: Vec<Hash> = bytes
            .chunks(32)
            .map(|c| c.try_into().map(Hash).map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        self.rows.borrow_mut().insert(record, hashes.clone());
        Ok(hashes)
    }
}

impl tlog_tiles::HashReader for Hashes<'_, '_> {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        indexes
            .iter()
            .map(|&i| {
                // Stored hash i is the hash at (level, n): the entry that completed that
                // subtree added it, after the hashes its own lower levels added.
                let (level, n) = tlog_tiles::split_stored_hash_index(i);
                let record = ((n + 1) << level) - 1;
                let offset = (i - tlog_tiles::stored_hash_index(0, record)) as usize;
                match self.row(record) {
                    Ok(h) => h
                        .get(offset)
                        .copied()
                        .ok_or(tlog_tiles::Error::IndexesNotInTree),
                    Err(e) => {
                        *self.failed.borrow_mut() = Some(e);
                        Err(tlog_tiles::Error::IndexesNotInTree)
                    }
                }
            })
            .collect()
    }
}

/// The JSON of an item not public yet and a fresh commitment to it (hex salt, hex digest),
/// recorded unless the ledger holds the same JSON already or the log revealed the item.
pub fn record_pending(
    tx: &Tx<'_>,
    name: &ItemName,
    json: &str,
    salt: &str,
    commitment: &str,
) -> Result<(), LedgerError> {
    let digest = fencepost_core::digest::sha256_hex(json.as_bytes());
    let (collection, key) = (&*name.collection, &*name.id);
    tx.exec(
        "tlog.record_pending",
        args! { "collection" => collection, "key" => key, "json" => json,
        "json_digest" => digest, "salt" => salt, "commitment" => commitment },
    )?;
    Ok(())
}

/// The commitment to an item still embargoed, logged now — not held until its reveal, so a
/// text fixed before its instant is in the log (and a published checkpoint) before it: the
/// JSON is recorded with a fresh commitment ([`record_pending`]) when it is new or changed,
/// and appended as a `commit` entry, or as a `recommit` naming the logged commitment it
/// supersedes when its text changed. A commitment recorded earlier but never logged is logged
/// as it is. Returns the entry appended (none: the same text is logged already, the item was
/// revealed, or it is not pending).
pub fn commit_before_instant(
    tx: &Tx<'_>,
    name: &ItemName,
    json: &str,
    salt: &str,
    commitment: &str,
) -> Result<Option<u64>, LedgerError> {
    let (collection, key) = (&*name.collection, &*name.id);
    let Some(mut row) = tx.row(
        "tlog.pending_state",
        args! { "collection" => collection, "key" => key },
    )?
    else {
        return Ok(None);
    };
    let item = ItemId(row.get(0)?);
    let (digest, old_salt, old_commitment): (Option<String>, Option<String>, Option<String>) =
        (row.take(1)?, row.take(2)?, row.take(3)?);
    let (logged, shown): (Option<i64>, Option<String>) = (row.get(4)?, row.take(5)?);
    if shown.is_some() {
        return Ok(None);
    }
    let same = digest.as_deref() == Some(&fencepost_core::digest::sha256_hex(json.as_bytes()));
    let (salt, commitment, supersedes) = match (same, logged, old_salt, old_commitment) {
        (true, Some(_), _, _) => return Ok(None),
        (true, None, Some(s), Some(c)) => (s, c, None),
        _ => {
            record_pending(tx, name, json, salt, commitment)?;
            let superseded = logged.filter(|_| !same).map(|i| i as u64);
            (salt.to_string(), commitment.to_string(), superseded)
        }
    };
    tx.rows("audit.lock", &[])?;
    let index = size(tx)?;
    let entry = match supersedes {
        Some(supersedes) => fencepost_tlog::entry::Entry::Recommit {
            commit: commitment.clone(),
            supersedes,
        },
        None => fencepost_tlog::entry::Entry::Commit {
            commit: commitment.clone(),
        },
    };
    append(tx, &[entry.to_text()])?;
    committed(tx, item, &salt, &commitment, index)?;
    Ok(Some(index))
}

/// The JSON of the page the commit batch with `token` wrote.
pub fn record_public(
    tx: &Tx<'_>,
    item: ItemId,
    token: &str,
    json: &str,
) -> Result<(), LedgerError> {
    let digest = fencepost_core::digest::sha256_hex(json.as_bytes());
    tx.exec(
        "tlog.record_public",
        args! { "item" => item.0, "token" => token, "json" => json, "json_digest" => digest },
    )?;
    Ok(())
}

/// The JSON the ledger holds for an item.
pub fn json(tx: &Tx<'_>, item: ItemId) -> Result<Option<String>, LedgerError> {
    tx.row("tlog.json", args! { "item" => item.0 })?
        .map(|r| r.get(0))
        .transpose()
}

/// Commitments no entry holds yet, of items not revealed: (item, hex salt, hex digest).
pub fn unlogged_commitments(tx: &Tx<'_>) -> Result<Vec<(ItemId, String, String)>, LedgerError> {
    tx.rows("tlog.unlogged_commitments", &[])?
        .into_iter()
        .map(|mut r| Ok((ItemId(r.get(0)?), r.take(1)?, r.take(2)?)))
        .collect()
}

/// A page changed after the revision the log caught up with, and what the log knows of it.
#[derive(Debug, Clone)]
pub struct Changed {
    pub item: ItemId,
    pub collection: String,
    pub key: String,
    pub withdrawn: bool,
    /// The item's JSON (absent: the page was made before the log, or without it).
    pub json: Option<String>,
    pub json_digest: Option<String>,
    pub salt: Option<String>,
    pub commitment: Option<String>,
    pub commit_index: Option<i64>,
    /// `public`, `withdraw` or `expire` once revealed.
    pub shown: Option<String>,
    pub shown_digest: Option<String>,
    pub expire_at: Option<i64>,
}

pub fn changed_pages(tx: &Tx<'_>, since: i64) -> Result<Vec<Changed>, LedgerError> {
    tx.rows("tlog.changed_pages", args! { "since" => since })?
        .into_iter()
        .map(|mut r| {
            Ok(Changed {
                item: ItemId(r.get(0)?),
                collection: r.take(1)?,
                key: r.take(2)?,
                withdrawn: r.get(3)?,
                json: r.take(4)?,
                json_digest: r.take(5)?,
                salt: r.take(6)?,
                commitment: r.take(7)?,
                commit_index: r.get(8)?,
                shown: r.take(9)?,
                shown_digest: r.take(10)?,
                expire_at: r.get(11)?,
            })
        })
        .collect()
}

/// An item the log has revealed: (item, `collection/id`, what the log says of it now, the
/// digest of the JSON it vouches for).
pub fn shown_items(tx: &Tx<'_>) -> Result<Vec<(ItemId, String, String, String)>, LedgerError> {
    tx.rows("tlog.shown_items", &[])?
        .into_iter()
        .map(|mut r| {
            let item = format!("{}/{}", r.take::<String>(1)?, r.take::<String>(2)?);
            Ok((ItemId(r.get(0)?), item, r.take(3)?, r.take(4)?))
        })
        .collect()
}

/// The commitment (hex salt and digest) logged at `idx` for an item.
pub fn committed(
    tx: &Tx<'_>,
    item: ItemId,
    salt: &str,
    commitment: &str,
    idx: u64,
) -> Result<(), LedgerError> {
    tx.exec(
        "tlog.committed",
        args! { "item" => item.0, "salt" => salt, "commitment" => commitment, "idx" => idx as i64 },
    )?;
    Ok(())
}

/// What the log says of a revealed item now, and the digest of the JSON it vouches for.
pub fn shown(tx: &Tx<'_>, item: ItemId, shown: &str, digest: &str) -> Result<(), LedgerError> {
    tx.exec(
        "tlog.shown",
        args! { "item" => item.0, "shown" => shown, "digest" => digest },
    )?;
    Ok(())
}
