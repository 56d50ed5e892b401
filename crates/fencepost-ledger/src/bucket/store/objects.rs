//! The log's side in an object store: list, read and create-if-absent its entries, read and
//! write snapshots, probe the store's promises and read its clock. Synchronous to its callers,
//! over a small runtime of its own (as the PostgreSQL connection is). A call the store did not
//! answer (a timeout, a 5xx) is tried again a few times.
//!
//! Nothing here trusts a single answer it can check: a create that comes back "already exists"
//! is read back (object_store retries a 5xx inside one call, so a create that landed but whose
//! answer was lost looks exactly like another writer's entry); an entry's size and ETag come
//! back with every read and listing, so the caller can tell the log it follows from another.

use super::{entry_key, snapshot_key, Skew, Stamp, SNAPSHOTS_KEPT};
use crate::LedgerError;
use fencepost_core::store::names::{redact_userinfo, target_key};
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as KeyPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// How many entries a catch-up reads at once.
const READ_AHEAD: usize = 16;

/// The stores this process has probed (see [`Objects::probe`]).
static PROBED: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

pub(crate) struct Objects {
    rt: crate::OwnRuntime,
    store: Arc<dyn ObjectStore>,
    prefix: String,
    /// How errors name it (its URL without credentials).
    name: String,
    /// What tells this store from any other (its URL and endpoint, no credentials).
    id: String,
    writer: String,
    /// The URL it was opened from (credentials are never in it).
    url: String,
}

impl Objects {
    pub(crate) fn open(url: &str, name: &str) -> Result<Objects, LedgerError> {
        let opened = fencepost_core::store::open(url, &[])
            .map_err(|why| LedgerError::Location(format!("{name}: {why}. Nothing was created")))?;
        let rt = crate::OwnRuntime::new()
            .map_err(|e| LedgerError::Location(format!("cannot start a runtime: {e}")))?;
        Ok(Objects {
            rt,
            store: opened.store,
            prefix: opened.prefix,
            name: name.to_string(),
            id: target_key(url, opened.endpoint.as_deref()),
            writer: uuid::Uuid::new_v4().simple().to_string(),
            url: url.to_string(),
        })
    }

    /// The same log, opened again (for a second replica in this process).
    pub(crate) fn open_again(other: &Objects) -> Result<Objects, LedgerError> {
        Objects::open(&other.url, &other.name)
    }

    /// A short name for this store's replica file.
    pub(crate) fn short_id(&self) -> String {
        fencepost_core::digest::sha256_hex(self.id.as_bytes())[..16].to_string()
    }

    pub(crate) fn writer(&self) -> &str {
        &self.writer
    }

    /// How a message names one of the log's objects: `s3://bucket/prefix/log/…`.
    pub(crate) fn object_name(&self, rel: &str) -> String {
        format!("{}/{rel}", self.name.trim_end_matches('/'))
    }

    /// How a message names entry `seq`.
    pub(crate) fn entry_name(&self, seq: i64) -> String {
        self.object_name(&entry_key(seq))
    }

    /// How a message names snapshot `seq`.
    pub(crate) fn snapshot_name(&self, seq: i64) -> String {
        self.object_name(&snapshot_key(seq))
    }

    fn key(&self, rel: &str) -> KeyPath {
        if self.prefix.is_empty() {
            KeyPath::from(rel)
        } else {
            KeyPath::from(format!("{}/{rel}", self.prefix))
        }
    }

    fn err(&self, what: &str, e: &object_store::Error) -> LedgerError {
        if fencepost_core::store::missing_bucket(e) {
            return LedgerError::NoBucket {
                bucket: fencepost_core::store::bucket_of(&self.name).to_string(),
                ledger: self.name.clone(),
            };
        }
        if let object_store::Error::Unauthenticated { .. }
        | object_store::Error::PermissionDenied { .. } = e
        {
            return LedgerError::Location(format!(
                "{}: {what}: the store refused this runner's credentials ({}). Credentials come only from the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, GOOGLE_SERVICE_ACCOUNT, AZURE_STORAGE_ACCOUNT_KEY, …); nothing was written",
                self.name,
                redact_userinfo(&e.to_string())
            ));
        }
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
                Err(e) if fencepost_core::store::retryable(&e) && attempt < 4 => {
                    attempt += 1;
                    tracing::debug!(ledger = %self.name, what, attempt, error = %redact_userinfo(&e.to_string()), "trying the store again");
                    std::thread::sleep(Duration::from_millis(50 << attempt));
                }
                r => return r.map_err(|e| self.err(what, &e)),
            }
        }
    }

    /// Creates a probe object twice, if absent: the second create must be refused, or two
    /// writers could both believe they wrote the same entry. With `clock`, the first one's
    /// `Last-Modified` is read too: the store's clock at the write, which gives this host's
    /// clock against it. Marks the store probed for this process.
    pub(crate) fn probe(&self, clock: bool) -> Result<Option<Skew>, LedgerError> {
        let key = self.key(&format!(
            ".fencepost-probe/{}-{}",
            self.writer,
            uuid::Uuid::new_v4().simple()
        ));
        let create = |body: &'static [u8]| {
            let opts = PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            };
            self.store
                .put_opts(&key, PutPayload::from_static(body), opts)
        };
        let sent_ms = fencepost_core::clock::host_millis();
        self.run("probing conditional writes", || create(b"1"))?;
        let answered_ms = fencepost_core::clock::host_millis();
        let (second, head) = self.rt.block(async {
            let head = async {
                match clock {
                    true => self.store.head(&key).await.map(Some),
                    false => Ok(None),
                }
            };
            futures_util::join!(create(b"2"), head)
        });
        let _ = self.rt.block(self.store.delete(&key));
        match second {
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => {}
            Ok(_) => return Err(LedgerError::Location(format!(
                "{} does not enforce conditional writes: a create-if-absent (If-None-Match: *) overwrote an existing object. A bucket ledger commits by create-if-absent, so fencepost refuses to keep one there (Garage, for one, ignores If-None-Match). Use a store that honours it (AWS S3, R2, MinIO, GCS, Azure) or a file:// folder. Nothing was written",
                self.name
            ))),
            Err(e) => return Err(self.err("probing conditional writes", &e)),
        }
        if let Ok(mut p) = PROBED.lock() {
            p.insert(self.id.clone());
        }
        let Some(meta) = head.map_err(|e| self.err("reading the store's clock", &e))? else {
            return Ok(None);
        };
        let store_ms = meta.last_modified.timestamp_millis();
        // The store stamps whole seconds: its clock at the write was in [stamp, stamp + 1 s).
        let whole = store_ms - store_ms.rem_euclid(1000);
        let fraction = if store_ms == whole { 1000 } else { 1 };
        Ok(Some(Skew {
            min_ms: sent_ms - (store_ms + fraction),
            max_ms: answered_ms - store_ms,
            store_ms,
            host_ms: answered_ms,
        }))
    }

    /// Probes the store's conditional writes once per process, before its first write: a
    /// store that stopped honouring `If-None-Match` is caught by the next process that writes,
    /// cached replica or not, and a process that only reads writes nothing.
    fn probed_once(&self) -> Result<(), LedgerError> {
        if PROBED.lock().map(|p| p.contains(&self.id)).unwrap_or(false) {
            return Ok(());
        }
        self.probe(false).map(drop)
    }

    /// The entries from `seq` on (entry `seq` itself included, when `seq` > 0), in order, as
    /// one listing shows them.
    pub(crate) fn list_from(&self, seq: i64) -> Result<Vec<Stamp>, LedgerError> {
        let dir = self.key("log");
        let offset = self.key(&entry_key(seq.saturating_sub(1).max(0)));
        let mut out: Vec<Stamp> = self
            .run("listing the log", || {
                self.store
                    .list_with_offset(Some(&dir), &offset)
                    .try_collect::<Vec<_>>()
            })?
            .into_iter()
            .filter_map(|m| {
                let seq: i64 = m.location.filename()?.parse().ok()?;
                Some(Stamp {
                    seq,
                    bytes: m.size,
                    etag: m.e_tag.map(|e| normal_etag(&e)),
                })
            })
            .filter(|s| s.seq >= seq.max(1))
            .collect();
        out.sort_unstable_by_key(|s| s.seq);
        Ok(out)
    }

    /// Entry `seq` as the store has it now, asked for by name (a listing may lag behind a
    /// create; a read of the object itself does not).
    pub(crate) fn head_entry(&self, seq: i64) -> Result<Option<Stamp>, LedgerError> {
        let key = self.key(&entry_key(seq));
        let got = self.run("reading the log", || async {
            match self.store.head(&key).await {
                Ok(m) => Ok(Some(m)),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        Ok(got.map(|m| Stamp {
            seq,
            bytes: m.size,
            etag: m.e_tag.map(|e| normal_etag(&e)),
        }))
    }

    /// The bytes of the entries at `seqs`, in order, each with its stamp; `None` for one
    /// that is not there.
    pub(crate) fn entries(
        &self,
        seqs: &[i64],
    ) -> Result<Vec<Option<(Vec<u8>, Stamp)>>, LedgerError> {
        let keys: Vec<(i64, KeyPath)> = seqs
            .iter()
            .map(|s| (*s, self.key(&entry_key(*s))))
            .collect();
        self.run("reading the log", || {
            futures_util::stream::iter(keys.iter())
                .map(|(seq, k)| async move {
                    match self.store.get(k).await {
                        Ok(r) => {
                            let etag = r.meta.e_tag.as_deref().map(normal_etag);
                            let bytes = r.bytes().await?.to_vec();
                            let stamp = Stamp {
                                seq: *seq,
                                bytes: bytes.len() as u64,
                                etag,
                            };
                            Ok(Some((bytes, stamp)))
                        }
                        Err(object_store::Error::NotFound { .. }) => Ok(None),
                        Err(e) => Err(e),
                    }
                })
                .buffered(READ_AHEAD)
                .try_collect::<Vec<_>>()
        })
    }

    /// Creates entry `seq` if absent: its stamp when this writer's bytes are now there, `None`
    /// when another writer's are. "Already there" is always read back: a create that landed
    /// but whose answer was lost (object_store retries a 5xx itself) is this writer's own.
    pub(crate) fn create_entry(
        &self,
        seq: i64,
        bytes: Vec<u8>,
    ) -> Result<Option<Stamp>, LedgerError> {
        self.probed_once()?;
        let key = self.key(&entry_key(seq));
        let size = bytes.len() as u64;
        let payload = PutPayload::from(bytes.clone());
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
                Ok(put) => {
                    return Ok(Some(Stamp {
                        seq,
                        bytes: size,
                        etag: put.e_tag.as_deref().map(normal_etag),
                    }))
                }
                Err(object_store::Error::AlreadyExists { .. })
                | Err(object_store::Error::Precondition { .. }) => {
                    let there = self.entries(&[seq])?.pop().flatten();
                    return Ok(match there {
                        Some((there, stamp)) if there == bytes => {
                            tracing::debug!(ledger = %self.name, seq, "a create answered 'already exists' with this writer's own bytes there: its first answer was lost");
                            Some(stamp)
                        }
                        _ => None,
                    });
                }
                Err(e) if fencepost_core::store::retryable(&e) && attempt < 4 => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(50 << attempt));
                }
                Err(e) => return Err(self.err(&format!("writing log entry {seq}"), &e)),
            }
        }
    }

    /// The positions of the snapshots there are, oldest first.
    pub(crate) fn snapshots(&self) -> Result<Vec<i64>, LedgerError> {
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

    /// Snapshot `seq`'s bytes; `None` if it was pruned meanwhile.
    pub(crate) fn snapshot(&self, seq: i64) -> Result<Option<Vec<u8>>, LedgerError> {
        let key = self.key(&snapshot_key(seq));
        self.run(&format!("reading snapshot {seq}"), || async {
            match self.store.get(&key).await {
                Ok(r) => r.bytes().await.map(|b| Some(b.to_vec())),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    /// Writes snapshot `seq` if absent; whether these bytes are there now.
    pub(crate) fn put_snapshot(&self, seq: i64, bytes: Vec<u8>) -> Result<bool, LedgerError> {
        self.probed_once()?;
        let key = self.key(&snapshot_key(seq));
        let payload = PutPayload::from(bytes.clone());
        let written = self.rt.block(self.store.put_opts(
            &key,
            payload,
            PutOptions {
                mode: PutMode::Create,
                ..Default::default()
            },
        ));
        match written {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => {
                Ok(self.snapshot(seq)?.is_some_and(|there| there == bytes))
            }
            Err(e) => Err(self.err(&format!("writing snapshot {seq}"), &e)),
        }
    }

    /// Deletes every snapshot but the newest [`SNAPSHOTS_KEPT`] up to `newest`.
    pub(crate) fn prune_snapshots(&self, newest: i64) -> Result<(), LedgerError> {
        let all = self.snapshots()?;
        for old in all
            .iter()
            .filter(|s| **s <= newest)
            .rev()
            .skip(SNAPSHOTS_KEPT)
        {
            let key = self.key(&snapshot_key(*old));
            let _ = self.rt.block(self.store.delete(&key));
        }
        Ok(())
    }
}

/// An ETag as a comparison needs it: without quotes or a weak marker (a listing and a write's
/// answer spell the same one differently on some stores).
pub(super) fn normal_etag(e: &str) -> String {
    e.trim_start_matches("W/").trim_matches('"').to_string()
}
