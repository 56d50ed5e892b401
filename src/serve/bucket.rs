//! `serve --from URL`: the origin over a bucket that `fencepost deploy` writes. Same headers
//! and rules as the local origin (strong ETag, 304, the revision's 404 page, revalidated
//! URL-keyed responses, immutable content-addressed ones), reading through the deploy
//! layout:
//!
//! - the pointer `current` is read at most once per `serve.pointer_ttl_ms`, and never kept
//!   past the pointer's own `next_change_at`; one request refreshes it while the others wait;
//! - manifests are cached by their root digest (the last few), blobs by sha256 within
//!   `serve.blob_cache_bytes`;
//! - every object read is checked against its digest: a blob whose bytes do not hash to the
//!   manifest's sha256 is never served;
//! - when the pointer or the manifest cannot be read, the answer is 503: never a stale 200;
//! - a root built from a ledger other than the one the pointer names is never served (503).

use super::http::{self, Lookup};
use super::paths;
use crate::clock::Clock;
use crate::deploy::admin::read_entries;
use crate::deploy::layout::{self, Root};
use crate::deploy::remote::{Remote, RemotePointer};
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct BucketFile {
    sha256: String,
    etag: HeaderValue,
    content_type: HeaderValue,
    cache_control: HeaderValue,
}

/// A deployed revision as the bucket origin serves it.
struct BucketRevision {
    name_header: HeaderValue,
    files: HashMap<String, BucketFile>,
}

/// The pointer as last read: when, and what it said (or why it could not be read).
struct PointerState {
    valid_until: std::time::Instant,
    result: Result<Arc<BucketRevision>, String>,
}

pub struct BucketOrigin {
    remote: Remote,
    clock: Clock,
    ttl: Duration,
    pointer: tokio::sync::Mutex<Option<PointerState>>,
    /// Most recent first: (root digest, revision).
    manifests: Mutex<VecDeque<(String, Arc<BucketRevision>)>>,
    blobs: Mutex<BlobCache>,
}

/// Blobs by sha256, oldest evicted first, within a byte budget.
struct BlobCache {
    budget: u64,
    used: u64,
    order: VecDeque<String>,
    bytes: HashMap<String, Bytes>,
}

impl BlobCache {
    fn get(&self, sha: &str) -> Option<Bytes> {
        self.bytes.get(sha).cloned()
    }

    fn put(&mut self, sha: &str, b: &Bytes) {
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

const KEEP_MANIFESTS: usize = 4;

impl BucketOrigin {
    pub fn new(remote: Remote, clock: Clock, ttl_ms: u64, blob_budget: u64) -> BucketOrigin {
        BucketOrigin {
            remote,
            clock,
            ttl: Duration::from_millis(ttl_ms),
            pointer: tokio::sync::Mutex::new(None),
            manifests: Mutex::new(VecDeque::new()),
            blobs: Mutex::new(BlobCache {
                budget: blob_budget,
                used: 0,
                order: VecDeque::new(),
                bytes: HashMap::new(),
            }),
        }
    }

    /// The live revision, reading the pointer again when its cached copy has expired.
    async fn current(&self) -> Result<Arc<BucketRevision>, String> {
        let mut state = self.pointer.lock().await;
        let fresh = state
            .as_ref()
            .is_some_and(|s| std::time::Instant::now() < s.valid_until);
        if !fresh {
            let read_at = std::time::Instant::now();
            let (result, cap) = match self.remote.read_pointer().await {
                Ok(Some((p, _))) => {
                    let cap = p.next_change_at;
                    (self.revision(&p).await, cap)
                }
                Ok(None) => (
                    Err(format!(
                        "no revision to serve: {} has no pointer yet; run `fencepost deploy`",
                        self.remote.url
                    )),
                    None,
                ),
                Err(e) => (
                    Err(format!("the bucket's pointer cannot be read: {e}")),
                    None,
                ),
            };
            // Never keep the pointer past the instant the site should change by itself.
            let mut ttl = self.ttl;
            if let Some(until) = cap {
                let left = until.0.saturating_sub(self.clock.now().0).max(0) as u64;
                ttl = ttl.min(Duration::from_millis(left));
            }
            *state = Some(PointerState {
                valid_until: read_at + ttl,
                result,
            });
        }
        state.as_ref().expect("set above").result.clone()
    }

    /// The manifest the pointer names (cached by root digest).
    async fn revision(&self, p: &RemotePointer) -> Result<Arc<BucketRevision>, String> {
        if let Some(hit) = self
            .manifests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(sha, _)| *sha == p.manifest)
            .map(|(_, r)| r.clone())
        {
            return Ok(hit);
        }
        let unreadable =
            |why: String| format!("the live manifest {} cannot be read: {why}", p.manifest);
        let bytes = self
            .remote
            .get(&Remote::root_key(&p.manifest))
            .await
            .map_err(|e| unreadable(e.to_string()))?
            .ok_or_else(|| unreadable("it is missing".into()))?;
        if !layout::verified(&bytes, &p.manifest) {
            return Err(unreadable("it does not hash to its name".into()));
        }
        let root: Root = serde_json::from_slice(&bytes).map_err(|e| unreadable(e.to_string()))?;
        // The pointer names the ledger that owns the bucket: a root built from another ledger
        // is never served, whoever wrote the pointer.
        if let (Some(owner), Some(built_from)) = (&p.ledger_id, &root.ledger_id) {
            if owner != built_from {
                return Err(unreadable(format!(
                    "it was built from ledger {built_from}, but the bucket belongs to ledger {owner}"
                )));
            }
        }
        let entries = read_entries(&self.remote, &root)
            .await
            .map_err(|e| unreadable(e.to_string()))?;
        let name = crate::output::revision::dir_name(root.revision, &root.build);
        let files = entries
            .into_iter()
            .map(|e| {
                let file = BucketFile {
                    etag: HeaderValue::from_str(&format!("\"{}\"", e.sha256))
                        .unwrap_or(HeaderValue::from_static("\"\"")),
                    content_type: HeaderValue::from_str(&e.content_type)
                        .unwrap_or(HeaderValue::from_static("application/octet-stream")),
                    cache_control: HeaderValue::from_static(e.cache.cache_control()),
                    sha256: e.sha256,
                };
                (e.path, file)
            })
            .collect();
        let rev = Arc::new(BucketRevision {
            name_header: HeaderValue::from_str(&name).unwrap_or(HeaderValue::from_static("-")),
            files,
        });
        let mut m = self.manifests.lock().unwrap_or_else(|e| e.into_inner());
        m.push_front((p.manifest.clone(), rev.clone()));
        m.truncate(KEEP_MANIFESTS);
        Ok(rev)
    }

    /// A blob's bytes, checked against its digest.
    async fn blob(&self, sha: &str) -> Result<Bytes, String> {
        if let Some(b) = self
            .blobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(sha)
        {
            return Ok(b);
        }
        let bytes = self
            .remote
            .get(&Remote::blob_key(sha))
            .await
            .map_err(|e| format!("blob {sha} cannot be read: {e}"))?
            .ok_or_else(|| format!("blob {sha} is missing from the bucket"))?;
        if !layout::verified(&bytes, sha) {
            tracing::error!(blob = %sha, "the bucket returned bytes that do not hash to the manifest's sha256; refused");
            return Err(format!(
                "blob {sha} does not match its manifest entry; refused"
            ));
        }
        let b = Bytes::from(bytes);
        self.blobs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .put(sha, &b);
        Ok(b)
    }
}

/// Answers one request from the bucket.
pub async fn respond(
    o: &BucketOrigin,
    method: &Method,
    raw: &str,
    headers: &HeaderMap,
) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return http::method_not_allowed();
    }
    let rp = match paths::parse(raw) {
        Ok(p) => p,
        Err(why) => return http::text(StatusCode::BAD_REQUEST, why.message()),
    };
    let head = method == Method::HEAD;
    let rev = match o.current().await {
        Ok(r) => r,
        Err(why) => return http::unavailable(&why),
    };
    let (path, status) = match http::lookup(&rp, |p| rev.files.contains_key(p)) {
        Lookup::File(p) => (p, StatusCode::OK),
        Lookup::AddSlash(to) => return http::redirect(&to),
        Lookup::NotFound if rev.files.contains_key("404.html") => {
            ("404.html".to_string(), StatusCode::NOT_FOUND)
        }
        Lookup::NotFound => return http::text(StatusCode::NOT_FOUND, "not found"),
    };
    let f = &rev.files[&path];
    let finish = |mut r: Response| {
        let h = r.headers_mut();
        h.insert(header::ETAG, f.etag.clone());
        h.insert(header::CONTENT_TYPE, f.content_type.clone());
        http::safety_headers(h, f.content_type.as_bytes());
        h.insert("x-revision", rev.name_header.clone());
        h.insert(header::CACHE_CONTROL, f.cache_control.clone());
        r
    };
    if status == StatusCode::OK && http::etag_matches(headers, f.etag.as_bytes()) {
        return finish(StatusCode::NOT_MODIFIED.into_response());
    }
    let bytes = match o.blob(&f.sha256).await {
        Ok(b) => b,
        Err(why) => return http::unavailable(&why),
    };
    let len = bytes.len();
    let mut r = Response::new(if head {
        Body::empty()
    } else {
        Body::from(bytes)
    });
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    finish(r)
}
