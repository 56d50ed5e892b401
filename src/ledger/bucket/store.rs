//! The log's side in the object store: list, read and create-if-absent its entries, read and
//! write snapshots. Synchronous to its callers, over a small runtime of its own (as the
//! PostgreSQL connection is). A call the store did not answer (a timeout, a 5xx) is tried
//! again a few times; a create whose answer was lost is told from another writer's entry by
//! the writer id inside it.

use crate::ledger::LedgerError;
use crate::store::names::{redact_userinfo, target_key};
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as KeyPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// How many snapshots are kept (the newest, and the one before for a runner reading it).
const SNAPSHOTS_KEPT: usize = 2;
/// How many entries a catch-up reads at once.
const READ_AHEAD: usize = 16;

pub(in crate::ledger) struct Log {
    rt: crate::ledger::OwnRuntime,
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// How errors name it.
    name: String,
    /// What tells this store from any other (its URL and endpoint, no credentials).
    id: String,
    writer: String,
}

impl Log {
    pub(in crate::ledger) fn open(url: &str, name: &str) -> Result<Log, LedgerError> {
        let opened = crate::store::open(url, &[])
            .map_err(|why| LedgerError::Location(format!("{name}: {why}. Nothing was created")))?;
        let rt = crate::ledger::OwnRuntime::new()
            .map_err(|e| LedgerError::Location(format!("cannot start a runtime: {e}")))?;
        Ok(Log {
            rt,
            store: opened.store,
            prefix: opened.prefix,
            name: name.to_string(),
            id: target_key(url, opened.endpoint.as_deref()),
            writer: uuid::Uuid::new_v4().simple().to_string(),
        })
    }

    /// A short name for this store's replica file.
    pub(in crate::ledger) fn short_id(&self) -> String {
        crate::digest::sha256_hex(self.id.as_bytes())[..16].to_string()
    }

    pub(in crate::ledger) fn writer(&self) -> &str {
        &self.writer
    }

    fn key(&self, rel: &str) -> KeyPath {
        if self.prefix.is_empty() {
            KeyPath::from(rel)
        } else {
            KeyPath::from(format!("{}/{rel}", self.prefix))
        }
    }

    fn err(&self, what: &str, e: &object_store::Error) -> LedgerError {
        LedgerError::Location(format!(
            "{}: {what}: {}",
            self.name,
            redact_userinfo(&e.to_string())
        ))
    }

    /// Runs `op` until it succeeds, fails for good, or has failed transiently 5 times.
    fn run<T: Send, F: Future<Output = Result<T, object_store::Error>> + Send>(
        &self,
        what: &str,
        op: impl Fn() -> F,
    ) -> Result<T, LedgerError> {
        let mut attempt = 0u32;
        loop {
            match self.rt.block(op()) {
                Err(e) if crate::store::retryable(&e) && attempt < 4 => {
                    attempt += 1;
                    tracing::debug!(ledger = %self.name, what, attempt, error = %redact_userinfo(&e.to_string()), "trying the store again");
                    std::thread::sleep(Duration::from_millis(50 << attempt));
                }
                r => return r.map_err(|e| self.err(what, &e)),
            }
        }
    }

    /// Refuses a store that does not enforce create-if-absent, on which two writers could
    /// both believe they wrote the same entry.
    pub(in crate::ledger) fn probe(&self) -> Result<(), LedgerError> {
        let key = self.key(&format!(".fencepost-probe/{}", self.writer));
        let create = |body: &'static [u8]| {
            let opts = PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            };
            self.store
                .put_opts(&key, PutPayload::from_static(body), opts)
        };
        self.run("probing conditional writes", || create(b"1"))?;
        let second = self.rt.block(create(b"2"));
        let _ = self.rt.block(self.store.delete(&key));
        match second {
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(()),
            Ok(_) => Err(LedgerError::Location(format!(
                "{} does not enforce conditional writes: a create-if-absent (If-None-Match: *) overwrote an existing object. A bucket ledger commits by create-if-absent, so fencepost refuses to keep one there (Garage, for one, ignores If-None-Match). Use a store that honours it (AWS S3, R2, MinIO, GCS, Azure) or a file:// folder. Nothing was created",
                self.name
            ))),
            Err(e) => Err(self.err("probing conditional writes", &e)),
        }
    }

    /// The positions of the entries after `seq`, in order.
    pub(in crate::ledger) fn entries_after(&self, seq: i64) -> Result<Vec<i64>, LedgerError> {
        let dir = self.key("log");
        let offset = self.key(&entry_key(seq));
        let mut out: Vec<i64> = self
            .run("listing the log", || {
                self.store
                    .list_with_offset(Some(&dir), &offset)
                    .map_ok(|m| m.location)
                    .try_collect::<Vec<_>>()
            })?
            .iter()
            .filter_map(|k| k.filename()?.parse().ok())
            .filter(|n| *n > seq)
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// The bytes of the entries at `seqs`, in order.
    pub(in crate::ledger) fn entries(&self, seqs: &[i64]) -> Result<Vec<Vec<u8>>, LedgerError> {
        let keys: Vec<KeyPath> = seqs.iter().map(|s| self.key(&entry_key(*s))).collect();
        self.run("reading the log", || {
            futures_util::stream::iter(keys.iter())
                .map(|k| async move { self.store.get(k).await?.bytes().await })
                .buffered(READ_AHEAD)
                .map_ok(|b| b.to_vec())
                .try_collect::<Vec<_>>()
        })
    }

    /// Creates entry `seq` if absent: whether this writer's bytes are now there.
    pub(in crate::ledger) fn create_entry(
        &self,
        seq: i64,
        bytes: Vec<u8>,
    ) -> Result<bool, LedgerError> {
        let key = self.key(&entry_key(seq));
        let payload = PutPayload::from(bytes);
        let mut retried = false;
        let mut attempt = 0u32;
        loop {
            let opts = PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            };
            match self
                .rt
                .block(self.store.put_opts(&key, payload.clone(), opts))
            {
                Ok(_) => return Ok(true),
                Err(object_store::Error::AlreadyExists { .. })
                | Err(object_store::Error::Precondition { .. }) => {
                    if !retried {
                        return Ok(false);
                    }
                    // An earlier attempt may have landed without its answer.
                    let there = self.run("reading the log", || async {
                        self.store.get(&key).await?.bytes().await
                    })?;
                    return Ok(entry::written_by(&there, &self.writer));
                }
                Err(e) if crate::store::retryable(&e) && attempt < 4 => {
                    attempt += 1;
                    retried = true;
                    std::thread::sleep(Duration::from_millis(50 << attempt));
                }
                Err(e) => return Err(self.err(&format!("writing log entry {seq}"), &e)),
            }
        }
    }

    /// The positions of the snapshots there are, oldest first.
    fn snapshots(&self) -> Result<Vec<i64>, LedgerError> {
        let dir = self.key("snapshots");
        let mut out: Vec<i64> = self
            .run("listing snapshots", || {
                self.store
                    .list(Some(&dir))
                    .map_ok(|m| m.location)
                    .try_collect::<Vec<_>>()
            })?
            .iter()
            .filter_map(|k| k.filename()?.strip_suffix(".sqlite")?.parse().ok())
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    pub(in crate::ledger) fn newest_snapshot(&self) -> Result<Option<i64>, LedgerError> {
        Ok(self.snapshots()?.last().copied())
    }

    /// Snapshot `seq`'s bytes; `None` if it was pruned meanwhile.
    pub(in crate::ledger) fn snapshot(&self, seq: i64) -> Result<Option<Vec<u8>>, LedgerError> {
        let key = self.key(&snapshot_key(seq));
        let got = self.rt.block(async {
            match self.store.get(&key).await {
                Ok(r) => r.bytes().await.map(|b| Some(b.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        got.map_err(|e| self.err(&format!("reading snapshot {seq}"), &e))
    }

    /// Writes snapshot `seq` (if absent) and deletes all but the newest [`SNAPSHOTS_KEPT`].
    pub(in crate::ledger) fn put_snapshot(
        &self,
        seq: i64,
        bytes: Vec<u8>,
    ) -> Result<(), LedgerError> {
        let key = self.key(&snapshot_key(seq));
        let payload = PutPayload::from(bytes);
        let written = self.rt.block(self.store.put_opts(
            &key,
            payload,
            PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            },
        ));
        match written {
            Ok(_)
            | Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => {}
            Err(e) => return Err(self.err(&format!("writing snapshot {seq}"), &e)),
        }
        let all = self.snapshots()?;
        for old in all.iter().rev().skip(SNAPSHOTS_KEPT) {
            let key = self.key(&snapshot_key(*old));
            let _ = self.rt.block(self.store.delete(&key));
        }
        Ok(())
    }
}

use super::entry;

fn entry_key(seq: i64) -> String {
    format!("log/{seq:020}")
}

fn snapshot_key(seq: i64) -> String {
    format!("snapshots/{seq:020}.sqlite")
}
