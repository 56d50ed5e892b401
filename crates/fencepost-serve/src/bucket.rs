//! `serve --from URL`: the origin over a bucket that `fencepost deploy` writes. Same headers
//! and rules as the local origin (strong ETag, 304, the revision's 404 page, revalidated
//! URL-keyed responses, immutable content-addressed ones), reading through the deploy
//! layout:
//!
//! - the pointer `current` is read at most once per `serve.pointer_ttl_ms` (and not kept
//!   past the pointer's own `next_change_at` while that instant is ahead; for
//!   [`HOT_WINDOW_MS`] after it passes — the deploy of that instant is due any moment — every
//!   `serve.pointer_hot_ms`; long past, it caps nothing), by one request: the others keep
//!   serving the revision they know, and wait only when there is none yet;
//! - a new pointer costs one object, its manifest root; a request then waits at most for the
//!   objects its own path needs — its shard, its blob — each fetched once however many
//!   requests want it at the same moment (single flight), never behind another path's fetch;
//! - shards are cached by digest; blobs up to [`SMALL_BLOB`] by sha256 within
//!   `serve.blob_cache_bytes`; larger ones are streamed, hashed as they stream, and the
//!   response is cut off if they do not match their digest; HEAD reads no body at all;
//! - every bucket call is bounded by `serve.bucket_timeout_ms`;
//! - every object read is checked against its digest: a blob whose bytes do not hash to the
//!   manifest's sha256 is never served whole;
//! - when the pointer or an object cannot be read, the answer is a plain 503 (the reason goes
//!   to the log, never to the public): never a stale 200;
//! - a root built from a ledger other than the one the pointer names is never served (503).

mod cache;

use super::answer;
use super::paths::{self, RequestPath};
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use cache::{BlobCache, Flights, ShardCache};
use fencepost_bucket::layout::{self, RemoteEntry, Root};
use fencepost_bucket::read::Read;
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_core::clock::Clock;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Blobs up to this size are read whole, checked, and cached; larger ones are streamed.
pub const SMALL_BLOB: u64 = 4 * 1024 * 1024;

struct BucketFile {
    sha256: String,
    bytes: u64,
    etag: HeaderValue,
    content_type: HeaderValue,
    cache_control: HeaderValue,
    /// A withdrawal notice: answered 410 Gone.
    gone: bool,
    /// An alias: answered 301 to here.
    location: Option<HeaderValue>,
}

type Shard = Arc<HashMap<String, BucketFile>>;

/// The live revision as the origin knows it: its root, and where each shard is.
struct Live {
    manifest: String,
    name_header: HeaderValue,
    /// shard index → shard digest (non-empty shards only).
    shards: HashMap<u32, String>,
}

/// The pointer as last read.
struct PointerState {
    valid_until: std::time::Instant,
    result: Result<Arc<Live>, String>,
}

/// What `serve --from` is configured with.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub pointer_ttl_ms: u64,
    pub pointer_hot_ms: u64,
    pub blob_cache_bytes: u64,
    pub bucket_timeout_ms: u64,
}

pub struct BucketOrigin {
    remote: Remote,
    clock: Clock,
    settings: Settings,
    pointer: Mutex<Option<PointerState>>,
    /// Held by the one request re-reading the pointer.
    refresh: tokio::sync::Mutex<()>,
    roots: Flights<Arc<Live>>,
    shard_flights: Flights<Shard>,
    shards: Mutex<ShardCache>,
    blob_flights: Flights<Bytes>,
    blobs: Mutex<BlobCache>,
    /// The bucket's previews (`previews/`), when a key is configured.
    previews: Option<super::previews::Previews>,
}

impl BucketOrigin {
    pub fn new(remote: Remote, clock: Clock, settings: Settings) -> BucketOrigin {
        BucketOrigin {
            remote,
            clock,
            settings,
            pointer: Mutex::new(None),
            refresh: tokio::sync::Mutex::new(()),
            roots: Flights::new(),
            shard_flights: Flights::new(),
            shards: Mutex::new(ShardCache::default()),
            blob_flights: Flights::new(),
            blobs: Mutex::new(BlobCache::new(settings.blob_cache_bytes)),
            previews: None,
        }
    }

    /// The same origin, serving the bucket's previews too.
    pub fn with_previews(self, previews: Option<super::previews::Previews>) -> BucketOrigin {
        BucketOrigin { previews, ..self }
    }

    /// Runs one bucket call within `serve.bucket_timeout_ms`.
    async fn bounded<T>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, fencepost_bucket::BucketError>>,
    ) -> Result<T, String> {
        let limit = Duration::from_millis(self.settings.bucket_timeout_ms);
        match tokio::time::timeout(limit, call).await {
            Ok(r) => r.map_err(|e| format!("{what}: {e}")),
            Err(_) => Err(format!(
                "{what}: the bucket did not answer within {} ms (serve.bucket_timeout_ms)",
                self.settings.bucket_timeout_ms
            )),
        }
    }

    /// The pointer state if still valid, else the last one (for requests that keep serving
    /// while another re-reads it).
    fn known(&self) -> (Option<Result<Arc<Live>, String>>, bool) {
        let state = self.pointer.lock().unwrap_or_else(|e| e.into_inner());
        match state.as_ref() {
            Some(s) => (
                Some(s.result.clone()),
                std::time::Instant::now() < s.valid_until,
            ),
            None => (None, false),
        }
    }

    /// The live revision: the known one while it is valid; else one request re-reads the
    /// pointer while the others keep serving the revision they know (or, when there is none
    /// yet, wait for that one read).
    async fn current(&self) -> Result<Arc<Live>, String> {
        if let (Some(r), true) = self.known() {
            return r;
        }
        let _refreshing = match self.refresh.try_lock() {
            Ok(g) => g,
            Err(_) => {
                if let (Some(Ok(live)), _) = self.known() {
                    return Ok(live);
                }
                let g = self.refresh.lock().await;
                if let (Some(r), true) = self.known() {
                    return r;
                }
                g
            }
        };
        if let (Some(r), true) = self.known() {
            return r; // refreshed while this request waited for the lock
        }
        let read_at = std::time::Instant::now();
        let (result, cap) = match self
            .bounded("reading the pointer", self.remote.read_pointer())
            .await
        {
            Ok(Some((p, _))) => (self.live(&p).await, p.next_change_at),
            Ok(None) => (
                Err(format!(
                    "no revision to serve: {} has no pointer yet; run `fencepost deploy`",
                    self.remote.url
                )),
                None,
            ),
            Err(e) => (Err(e), None),
        };
        let ttl = ttl(&self.settings, cap, self.clock.now());
        // A failure counts from when it was learned: the requests that waited for this read
        // take its answer instead of each trying again, one after the other.
        let valid_until = match &result {
            Ok(_) => read_at + ttl,
            Err(_) => std::time::Instant::now() + ttl,
        };
        *self.pointer.lock().unwrap_or_else(|e| e.into_inner()) = Some(PointerState {
            valid_until,
            result: result.clone(),
        });
        result
    }

    /// The revision a pointer names: the known one when the root is the same, else its root
    /// (one object) read and checked. Shards are read when a request needs them.
    async fn live(&self, p: &RemotePointer) -> Result<Arc<Live>, String> {
        if let (Some(Ok(known)), _) = self.known() {
            if known.manifest == p.manifest {
                return Ok(known);
            }
        }
        let manifest = p.manifest.clone();
        let owner = p.ledger_id.clone();
        self.roots
            .run(&manifest, || async {
                let unreadable =
                    |why: String| format!("the live manifest {manifest} cannot be read: {why}");
                let read = self.bounded("reading a manifest root", self.remote.root(&manifest));
                let root: Root = match read.await.map_err(&unreadable)? {
                    Read::Found(root) => root,
                    Read::Missing => return Err(unreadable("it is missing".into())),
                    Read::Corrupt => return Err(unreadable("it does not hash to its name".into())),
                    Read::Unparsable(why) => return Err(unreadable(why)),
                };
                // The pointer names the ledger that owns the bucket: a root built from another
                // ledger is never served, whoever wrote the pointer.
                if let (Some(owner), Some(built_from)) = (&owner, &root.ledger_id) {
                    if owner != built_from {
                        return Err(unreadable(format!(
                            "it was built from ledger {built_from}, but the bucket belongs to ledger {owner}"
                        )));
                    }
                }
                let name = root.id.to_string();
                Ok(Arc::new(Live {
                    manifest: manifest.clone(),
                    name_header: HeaderValue::from_str(&name)
                        .unwrap_or(HeaderValue::from_static("-")),
                    shards: root.shards.into_iter().collect(),
                }))
            })
            .await
    }

    /// The entry for `path` in the live revision, if it has one: reads (once) the one shard
    /// the path hashes to.
    async fn entry(&self, live: &Live, path: &str) -> Result<Option<(Shard, String)>, String> {
        let Some(sha) = live.shards.get(&layout::shard_of(path)) else {
            return Ok(None);
        };
        let shard = self.shard(sha).await?;
        Ok(shard.contains_key(path).then(|| (shard, path.to_string())))
    }

    async fn shard(&self, sha: &str) -> Result<Shard, String> {
        if let Some(s) = self
            .shards
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(sha)
        {
            return Ok(s);
        }
        self.shard_flights
            .run(sha, || async {
                let read = self.bounded("reading a manifest shard", self.remote.shard(sha));
                let entries: Vec<RemoteEntry> = match read.await? {
                    Read::Found(entries) => entries,
                    Read::Missing => {
                        return Err(format!("manifest shard {sha} is missing from the bucket"))
                    }
                    Read::Corrupt => {
                        return Err(format!("manifest shard {sha} does not hash to its name"))
                    }
                    Read::Unparsable(why) => return Err(format!("manifest shard {sha}: {why}")),
                };
                let shard: Shard = Arc::new(entries.into_iter().map(file_of).collect());
                let mut cache = self.shards.lock().unwrap_or_else(|e| e.into_inner());
                cache.put(sha, &shard);
                Ok(shard)
            })
            .await
    }

    /// A small blob's bytes, checked against its digest (read once however many requests
    /// want it at the same moment, then cached).
    async fn small_blob(&self, sha: &str) -> Result<Bytes, String> {
        if let Some(b) = self
            .blobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(sha)
        {
            return Ok(b);
        }
        self.blob_flights
            .run(sha, || async {
                let bytes = match self.bounded("reading a blob", self.remote.blob(sha)).await? {
                    Read::Found(bytes) => bytes,
                    Read::Missing => return Err(format!("blob {sha} is missing from the bucket")),
                    Read::Corrupt | Read::Unparsable(_) => {
                        tracing::error!(blob = %sha, "the bucket returned bytes that do not hash to the manifest's sha256; refused");
                        return Err(format!("blob {sha} does not match its manifest entry; refused"));
                    }
                };
                let b = Bytes::from(bytes);
                self.blobs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .put(sha, &b);
                Ok(b)
            })
            .await
    }

    /// A large blob as a body that streams it, hashing as it goes: a mismatch (or a bucket
    /// that stops answering) ends the body with an error, which cuts the response off, so a
    /// client never receives it whole.
    async fn large_blob(&self, sha: &str) -> Result<Body, String> {
        let (_, stream) = self
            .bounded(
                "reading a blob",
                self.remote.get_stream(&Remote::blob_key(sha)),
            )
            .await?
            .ok_or_else(|| format!("blob {sha} is missing from the bucket"))?;
        let limit = Duration::from_millis(self.settings.bucket_timeout_ms);
        let state = Streaming {
            stream,
            hasher: Sha256::new(),
            want: sha.to_string(),
            held: None,
            done: false,
        };
        // Each chunk is held back until the next one arrives, and the last one until the
        // digest is checked: a mismatch ends the body short of its Content-Length.
        let body = futures_util::stream::unfold(state, move |mut st| async move {
            loop {
                if st.done {
                    return None;
                }
                match tokio::time::timeout(limit, st.stream.next()).await {
                    Err(_) => {
                        st.done = true;
                        let e = format!("blob {}: the bucket stopped answering", st.want);
                        return Some((Err(std::io::Error::other(e)), st));
                    }
                    Ok(Some(Err(e))) => {
                        st.done = true;
                        return Some((Err(std::io::Error::other(e.to_string())), st));
                    }
                    Ok(Some(Ok(chunk))) => {
                        st.hasher.update(&chunk);
                        if let Some(prev) = st.held.replace(chunk) {
                            return Some((Ok(prev), st));
                        }
                    }
                    Ok(None) => {
                        st.done = true;
                        let got = hex::encode(st.hasher.finalize_reset());
                        if got == st.want {
                            return st.held.take().map(|last| (Ok(last), st));
                        }
                        tracing::error!(blob = %st.want, "the bucket streamed bytes that do not hash to the manifest's sha256; response cut off");
                        let e = format!("blob {} does not match its digest", st.want);
                        return Some((Err(std::io::Error::other(e)), st));
                    }
                }
            }
        });
        Ok(Body::from_stream(body))
    }
}

/// A large blob being streamed.
struct Streaming {
    stream: futures_util::stream::BoxStream<'static, Result<Bytes, fencepost_bucket::BucketError>>,
    hasher: Sha256,
    want: String,
    held: Option<Bytes>,
    done: bool,
}

/// How long after a pointer's `next_change_at` the pointer is read every
/// `serve.pointer_hot_ms`: the deploy of that instant (`fencepost run --deploy` takes well
/// under a second at 10,000 items, a few at 100,000) is expected within it.
pub const HOT_WINDOW_MS: i64 = 30_000;

/// How long a pointer read stays valid: `serve.pointer_ttl_ms`, capped at the pointer's
/// `next_change_at` while that instant is still ahead, and at `serve.pointer_hot_ms` for
/// [`HOT_WINDOW_MS`] after it (the new pointer is seen a moment after its deploy, not up to a
/// TTL later). Long past, the instant caps nothing: a deploy that never came (no `run`, a
/// scheduler's next tick) must not make every request read the pointer.
fn ttl(
    s: &Settings,
    next_change_at: Option<fencepost_core::clock::Instant>,
    now: fencepost_core::clock::Instant,
) -> Duration {
    let mut ttl = Duration::from_millis(s.pointer_ttl_ms);
    if let Some(until) = next_change_at {
        let left = until.0.saturating_sub(now.0);
        if left > 0 {
            ttl = ttl.min(Duration::from_millis(left as u64));
        } else if left >= -HOT_WINDOW_MS {
            ttl = ttl.min(Duration::from_millis(s.pointer_hot_ms));
        }
    }
    ttl
}

fn file_of(e: RemoteEntry) -> (String, BucketFile) {
    let file = BucketFile {
        etag: HeaderValue::from_str(&format!("\"{}\"", e.sha256))
            .unwrap_or(HeaderValue::from_static("\"\"")),
        content_type: HeaderValue::from_str(&e.content_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
        cache_control: HeaderValue::from_static(e.cache.cache_control()),
        gone: e.cache == fencepost_output::manifest::CacheClass::Gone,
        location: e
            .location
            .as_deref()
            .and_then(|l| HeaderValue::from_str(&answer::location(l)).ok()),
        bytes: e.bytes,
        sha256: e.sha256,
    };
    (e.path, file)
}

/// The file a request maps to (the rule of the local origin's lookup: the file, else a redirect adding
/// the slash, else the revision's 404 page), reading only the shards its candidate paths
/// hash to.
async fn find(
    o: &BucketOrigin,
    live: &Live,
    rp: &RequestPath,
) -> Result<Result<(Shard, String, StatusCode), Response>, String> {
    let file = rp.file();
    if let Some((s, p)) = o.entry(live, &file).await? {
        return Ok(Ok((s, p, StatusCode::OK)));
    }
    if !rp.trailing_slash {
        let index = format!("{}/index.html", rp.rel);
        if o.entry(live, &index).await?.is_some() {
            return Ok(Err(answer::redirect(&format!("/{}/", rp.rel))));
        }
    }
    Ok(match o.entry(live, "404.html").await? {
        Some((s, p)) => Ok((s, p, StatusCode::NOT_FOUND)),
        None => Err(answer::text(StatusCode::NOT_FOUND, "not found")),
    })
}

use answer::unavailable;

/// Answers one request from the bucket.
pub async fn respond(
    o: &BucketOrigin,
    method: &Method,
    raw: &str,
    headers: &HeaderMap,
) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return answer::method_not_allowed();
    }
    let rp = match paths::parse(raw) {
        Ok(p) => p,
        Err(why) => return answer::text(StatusCode::BAD_REQUEST, why.message()),
    };
    let head = method == Method::HEAD;
    let live = match o.current().await {
        Ok(r) => r,
        Err(why) => return unavailable(&why),
    };
    let (shard, path, status) = match find(o, &live, &rp).await {
        Ok(Ok(found)) => found,
        Ok(Err(response)) => return response,
        Err(why) => return unavailable(&why),
    };
    let f = &shard[&path];
    let status = match (&f.location, f.gone) {
        (_, true) => StatusCode::GONE,
        (Some(_), _) => StatusCode::MOVED_PERMANENTLY,
        _ => status,
    };
    let finish = |mut r: Response| {
        let h = r.headers_mut();
        if let Some(l) = &f.location {
            h.insert(header::LOCATION, l.clone());
        }
        h.insert(header::ETAG, f.etag.clone());
        h.insert(header::CONTENT_TYPE, f.content_type.clone());
        answer::safety_headers(h, f.content_type.as_bytes());
        h.insert("x-revision", live.name_header.clone());
        h.insert(header::CACHE_CONTROL, f.cache_control.clone());
        if f.gone {
            h.insert("x-robots-tag", HeaderValue::from_static("noindex"));
        }
        r
    };
    if status == StatusCode::OK && answer::etag_matches(headers, f.etag.as_bytes()) {
        return finish(StatusCode::NOT_MODIFIED.into_response());
    }
    let body = if head {
        Body::empty()
    } else if f.bytes <= SMALL_BLOB {
        match o.small_blob(&f.sha256).await {
            Ok(b) if b.len() as u64 == f.bytes => Body::from(b),
            Ok(_) => {
                return unavailable(&format!(
                    "blob {} is not the size its manifest says",
                    f.sha256
                ))
            }
            Err(why) => return unavailable(&why),
        }
    } else {
        match o.large_blob(&f.sha256).await {
            Ok(b) => b,
            Err(why) => return unavailable(&why),
        }
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(f.bytes));
    finish(r)
}

#[cfg(test)]
mod tests;

impl super::origin::Origin for BucketOrigin {
    fn previews(&self) -> Option<&super::previews::Previews> {
        self.previews.as_ref()
    }

    fn answer<'a>(
        &'a self,
        method: &'a Method,
        path: &'a str,
        headers: &'a HeaderMap,
    ) -> futures_util::future::BoxFuture<'a, Response> {
        Box::pin(respond(self, method, path, headers))
    }
}
