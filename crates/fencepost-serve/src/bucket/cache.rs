//! The origin's caches over a bucket: single-flight fetches, blobs within a byte budget,
//! shards by digest.

use super::Shard;
use axum::body::Bytes;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::{Arc, Mutex};

/// One fetch in flight: its result once it has one.
type Flight<V> = Arc<tokio::sync::OnceCell<Result<V, String>>>;

/// One fetch per key at a time; everyone who wants the key meanwhile shares its result.
pub(super) struct Flights<V: Clone> {
    running: Mutex<HashMap<String, Flight<V>>>,
}

impl<V: Clone> Flights<V> {
    pub(super) fn new() -> Flights<V> {
        Flights {
            running: Mutex::new(HashMap::new()),
        }
    }

    pub(super) async fn run<F: Future<Output = Result<V, String>>>(
        &self,
        key: &str,
        fetch: impl FnOnce() -> F,
    ) -> Result<V, String> {
        let cell = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key.to_string())
            .or_insert_with(|| Arc::new(tokio::sync::OnceCell::new()))
            .clone();
        let out = cell.get_or_init(fetch).await.clone();
        // The first to finish removes the flight: later requests look in the caches (or, after
        // a failure, try again).
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if running.get(key).is_some_and(|c| Arc::ptr_eq(c, &cell)) {
            running.remove(key);
        }
        out
    }
}

/// Blobs by sha256, oldest evicted first, within a byte budget.
pub(super) struct BlobCache {
    budget: u64,
    used: u64,
    order: VecDeque<String>,
    bytes: HashMap<String, Bytes>,
}

impl BlobCache {
    pub(super) fn new(budget: u64) -> BlobCache {
        BlobCache {
            budget,
            used: 0,
            order: VecDeque::new(),
            bytes: HashMap::new(),
        }
    }

    pub(super) fn get(&self, sha: &str) -> Option<Bytes> {
        self.bytes.get(sha).cloned()
    }

    pub(super) fn put(&mut self, sha: &str, b: &Bytes) {
        let len = b.len() as u64;
        if len > self.budget || self.bytes.contains_key(sha) {
            return;
        }
        while self.used + len > self.budget {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some(v) = self.bytes.remove(&old) {
                self.used -= v.len() as u64;
            }
        }
        self.used += len;
        self.order.push_back(sha.to_string());
        self.bytes.insert(sha.to_string(), b.clone());
    }
}

/// Shards kept (a revision has at most 1,024).
const KEEP_SHARDS: usize = 4096;

/// Shards by digest, oldest evicted first.
#[derive(Default)]
pub(super) struct ShardCache {
    order: VecDeque<String>,
    shards: HashMap<String, Shard>,
}

impl ShardCache {
    pub(super) fn get(&self, sha: &str) -> Option<Shard> {
        self.shards.get(sha).cloned()
    }

    pub(super) fn put(&mut self, sha: &str, shard: &Shard) {
        self.order.push_back(sha.to_string());
        self.shards.insert(sha.to_string(), shard.clone());
        while self.order.len() > KEEP_SHARDS {
            if let Some(old) = self.order.pop_front() {
                self.shards.remove(&old);
            }
        }
    }
}
