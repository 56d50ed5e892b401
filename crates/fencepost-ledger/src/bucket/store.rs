//! The log's side in its store: list, read and create-if-absent its entries, read and write
//! snapshots, probe the store's promises and read its clock — in an object store
//! ([`objects`]: S3, GCS, Azure, a folder) or in a Cloudflare D1 database through the proxy
//! Worker fencepost ships ([`d1`]). Both answer the same calls with the same promises, so the
//! engine above them (following, replaying, snapshots, the clock) is one.

mod d1;
mod objects;

use crate::LedgerError;

/// How many snapshots are kept (the newest, and the one before for a runner reading it).
const SNAPSHOTS_KEPT: usize = 2;

/// Where a log lives.
pub(crate) enum Log {
    Objects(objects::Objects),
    D1(d1::D1),
}

/// The same call on whichever store holds the log.
macro_rules! on_store {
    ($log:expr, $s:ident => $call:expr) => {
        match $log {
            Log::Objects($s) => $call,
            Log::D1($s) => $call,
        }
    };
}

impl Log {
    /// Opens the log at `url`: `d1+https://…` (or `d1+http://127.0.0.1:…`) is a D1 database
    /// behind the proxy Worker, anything else an object store.
    pub(crate) fn open(url: &str, name: &str) -> Result<Log, LedgerError> {
        if d1::is_d1(url) {
            return d1::D1::open(url, name).map(Log::D1);
        }
        objects::Objects::open(url, name).map(Log::Objects)
    }

    /// The same log, opened again (for a second replica in this process).
    pub(crate) fn open_again(other: &Log) -> Result<Log, LedgerError> {
        match other {
            Log::Objects(o) => objects::Objects::open_again(o).map(Log::Objects),
            Log::D1(d) => d1::D1::open_again(d).map(Log::D1),
        }
    }

    /// The largest value the store keeps in one field: D1's, none for an object store.
    pub(crate) fn value_limit(&self) -> Option<usize> {
        match self {
            Log::Objects(_) => None,
            Log::D1(_) => Some(d1::VALUE_BYTES),
        }
    }

    /// A short name for this store's replica file.
    pub(crate) fn short_id(&self) -> String {
        on_store!(self, s => s.short_id())
    }

    pub(crate) fn writer(&self) -> &str {
        on_store!(self, s => s.writer())
    }

    /// How a message names one of the log's objects: `s3://bucket/prefix/log/…`.
    pub(crate) fn object_name(&self, rel: &str) -> String {
        on_store!(self, s => s.object_name(rel))
    }

    /// How a message names entry `seq`.
    pub(crate) fn entry_name(&self, seq: i64) -> String {
        on_store!(self, s => s.entry_name(seq))
    }

    /// How a message names snapshot `seq`.
    pub(crate) fn snapshot_name(&self, seq: i64) -> String {
        on_store!(self, s => s.snapshot_name(seq))
    }

    /// Checks the store's create-if-absent and, with `clock`, reads the store's clock (see
    /// [`Skew`]).
    pub(crate) fn probe(&self, clock: bool) -> Result<Option<Skew>, LedgerError> {
        on_store!(self, s => s.probe(clock))
    }

    /// The entries from `seq` on (entry `seq` itself included, when `seq` > 0), in order, as
    /// one listing shows them.
    pub(crate) fn list_from(&self, seq: i64) -> Result<Vec<Stamp>, LedgerError> {
        on_store!(self, s => s.list_from(seq))
    }

    /// Entry `seq` as the store has it now, asked for by name.
    pub(crate) fn head_entry(&self, seq: i64) -> Result<Option<Stamp>, LedgerError> {
        on_store!(self, s => s.head_entry(seq))
    }

    /// The bytes of the entries at `seqs`, in order, each with its stamp; `None` for one
    /// that is not there.
    pub(crate) fn entries(
        &self,
        seqs: &[i64],
    ) -> Result<Vec<Option<(Vec<u8>, Stamp)>>, LedgerError> {
        on_store!(self, s => s.entries(seqs))
    }

    /// Creates entry `seq` if absent: its stamp when this writer's bytes are now there, `None`
    /// when another writer's are. `revision` is the publication revision the ledger stands
    /// at once the entry is applied, when it changed (a D1 log keeps it beside the log, in
    /// the same batch, for the edge to read). `not_before`: the latest due instant of the
    /// pages the entry makes public, which a D1 log checks by the Worker's clock in the same
    /// batch (an object store has no clock to ask at the write).
    pub(crate) fn create_entry(
        &self,
        seq: i64,
        bytes: Vec<u8>,
        revision: Option<i64>,
        not_before: Option<i64>,
    ) -> Result<Option<Stamp>, LedgerError> {
        match self {
            Log::Objects(o) => o.create_entry(seq, bytes),
            Log::D1(d) => d.create_entry(seq, bytes, revision, not_before),
        }
    }

    /// The positions of the snapshots there are, oldest first.
    pub(crate) fn snapshots(&self) -> Result<Vec<i64>, LedgerError> {
        on_store!(self, s => s.snapshots())
    }

    /// Snapshot `seq`'s bytes; `None` if it was pruned meanwhile (or, in D1, is not whole).
    pub(crate) fn snapshot(&self, seq: i64) -> Result<Option<Vec<u8>>, LedgerError> {
        on_store!(self, s => s.snapshot(seq))
    }

    /// Writes snapshot `seq` if absent; whether these bytes are there now.
    pub(crate) fn put_snapshot(&self, seq: i64, bytes: Vec<u8>) -> Result<bool, LedgerError> {
        on_store!(self, s => s.put_snapshot(seq, bytes))
    }

    /// Deletes every snapshot but the newest [`SNAPSHOTS_KEPT`] up to `newest`.
    pub(crate) fn prune_snapshots(&self, newest: i64) -> Result<(), LedgerError> {
        on_store!(self, s => s.prune_snapshots(newest))
    }
}

/// One entry as a listing or a read shows it: its position, size and ETag (when the store
/// gives one), which together tell one log's entry from another log's at the same position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) seq: i64,
    pub(crate) bytes: u64,
    pub(crate) etag: Option<String>,
}

impl Stamp {
    /// Whether `other` can be the same object: same size, and the same ETag where both have one.
    pub(crate) fn same_object(&self, other: &Stamp) -> bool {
        self.seq == other.seq
            && self.bytes == other.bytes
            && match (&self.etag, &other.etag) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// The store's clock against this host's, from one object this runner just created: the
/// store stamped it (`Last-Modified`, whole seconds) while this host's clock read between
/// `sent_ms` and `answered_ms`. So this host's clock minus the store's lies in
/// `(min_ms, max_ms]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Skew {
    pub(crate) min_ms: i64,
    pub(crate) max_ms: i64,
    /// The store's stamp, in milliseconds since the epoch (a whole second).
    pub(crate) store_ms: i64,
    /// This host's clock when the write was answered.
    pub(crate) host_ms: i64,
}

pub(super) fn entry_key(seq: i64) -> String {
    format!("log/{seq:020}")
}

pub(super) fn snapshot_key(seq: i64) -> String {
    format!("snapshots/{seq:020}.sqlite")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_compare_by_size_and_etag_where_both_have_one() {
        let a = Stamp {
            seq: 3,
            bytes: 10,
            etag: Some("x".into()),
        };
        assert!(a.same_object(&Stamp {
            etag: None,
            ..a.clone()
        }));
        assert!(!a.same_object(&Stamp {
            etag: Some("y".into()),
            ..a.clone()
        }));
        assert!(!a.same_object(&Stamp {
            bytes: 11,
            ..a.clone()
        }));
        assert_eq!(objects::normal_etag("W/\"abc\""), "abc");
    }
}
