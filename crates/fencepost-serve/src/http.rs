//! The HTTP layer: the router, which finds a request's path under the site's base path, asks
//! the server's [`Origin`] (`origin.rs`; the local one here, the bucket's in `bucket.rs`, the
//! preview's in `preview.rs`) and logs; and the local origin. It holds no build state.
//!
//! The local origin ([`Local`]): every request reads the pointer (one `readlink`); the
//! revision it names is cached per target, so a swap is noticed by the next request. A
//! revision is opened in constant time: its files are looked up in `manifest.idx` by binary
//! search (see [`fencepost_output::index`]), so the first request after a swap never waits for a
//! 100,000-entry manifest to be parsed (revisions built before the index are parsed whole).
//! Only files the manifest lists are served, each from one opened file, so a response comes
//! whole from one revision even if the pointer moves while it is being sent.

use super::answer::{etag_matches, rebase_location, redirect, safety_headers, text, unavailable};
use super::origin::{at_once, lookup, Lookup, Origin, Root};
use super::paths::{under_base, RequestPath, Under};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use fencepost_core::clock::Clock;
use fencepost_output::manifest::Manifest;
use fencepost_output::pointer::CURRENT;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

/// Where the reload script listens (watch mode only).
pub const EVENTS_PATH: &str = "/__fencepost/events";

/// Files up to this size are read whole (and kept in memory); larger ones are streamed from
/// the opened file.
const READ_WHOLE: u64 = 256 * 1024;

/// Bytes of small files kept in memory per revision. Revisions never change, so a cached
/// file is always that revision's file.
const CACHE_BUDGET: u64 = 128 * 1024 * 1024;

/// What the origin needs per file, with header values built once per revision.
#[derive(Debug, Clone)]
struct FileMeta {
    etag: HeaderValue,
    content_type: HeaderValue,
    cache_control: HeaderValue,
    bytes: u64,
    /// A withdrawal notice: answered 410 Gone.
    gone: bool,
    /// An alias: answered 301 to here.
    location: Option<HeaderValue>,
}

/// A complete revision, as the origin serves it.
pub struct Revision {
    pub name: String,
    name_header: HeaderValue,
    /// The revision folder, open: every file is opened beneath it with no symlink followed.
    dir: super::beneath::Dir,
    /// (device, inode) of that folder: the pointer must still lead to this very folder.
    id: (u64, u64),
    files: Files,
    /// Contents of small files already served, up to [`CACHE_BUDGET`] bytes.
    cache: RwLock<(u64, HashMap<String, axum::body::Bytes>)>,
}

/// A revision's file list: looked up in its index (what was found, or not, remembered up to
/// [`MEMO_ENTRIES`] paths), or, for a revision built before indexes, parsed whole.
enum Files {
    Indexed {
        index: fencepost_output::index::Index,
        memo: RwLock<HashMap<String, Option<FileMeta>>>,
    },
    Loaded(HashMap<String, FileMeta>),
}

/// Paths whose lookup a revision remembers (found or not): the hot ones cost a hash lookup,
/// and a flood of made-up paths cannot grow memory without bound.
const MEMO_ENTRIES: usize = 100_000;

impl FileMeta {
    fn new(
        sha256: &str,
        content_type: &str,
        cache: fencepost_output::manifest::CacheClass,
        bytes: u64,
        location: Option<&str>,
    ) -> FileMeta {
        FileMeta {
            etag: HeaderValue::from_str(&format!("\"{sha256}\""))
                .unwrap_or(HeaderValue::from_static("\"\"")),
            content_type: HeaderValue::from_str(content_type)
                .unwrap_or(HeaderValue::from_static("application/octet-stream")),
            cache_control: HeaderValue::from_static(cache.cache_control()),
            bytes,
            gone: cache == fencepost_output::manifest::CacheClass::Gone,
            location: location
                .and_then(|l| HeaderValue::from_str(&super::answer::location(l)).ok()),
        }
    }
}

impl FileMeta {
    /// The status the file is answered with, found by `lookup` with `found`: 410 for a
    /// withdrawal notice, 301 for an alias.
    fn status(&self, found: StatusCode) -> StatusCode {
        match (&self.location, self.gone) {
            (_, true) => StatusCode::GONE,
            (Some(_), _) => StatusCode::MOVED_PERMANENTLY,
            _ => found,
        }
    }

    fn put_headers(&self, h: &mut HeaderMap, revision: &HeaderValue) {
        if let Some(l) = &self.location {
            h.insert(header::LOCATION, l.clone());
        }
        h.insert(header::ETAG, self.etag.clone());
        h.insert(header::CONTENT_TYPE, self.content_type.clone());
        safety_headers(h, self.content_type.as_bytes());
        h.insert("x-revision", revision.clone());
        // URL-keyed: every cache revalidates; only a URL naming its bytes is kept long.
        h.insert(header::CACHE_CONTROL, self.cache_control.clone());
        if self.gone {
            h.insert("x-robots-tag", HeaderValue::from_static("noindex"));
        }
    }
}

impl Revision {
    fn load(dir: PathBuf, name: String) -> Result<Revision, String> {
        let incomplete = || format!("revision {name} is incomplete (no readable manifest.json)");
        if !fencepost_output::revision::is_complete(&dir) {
            return Err(incomplete());
        }
        let files = match fencepost_output::index::Index::open(&dir) {
            Ok(Some(index)) => Files::Indexed {
                index,
                memo: RwLock::new(HashMap::new()),
            },
            Ok(None) => Files::Loaded(
                Manifest::read(&dir)
                    .map_err(|_| incomplete())?
                    .files
                    .into_iter()
                    .map(|e| {
                        let meta = FileMeta::new(
                            &e.sha256,
                            &e.content_type,
                            e.cache,
                            e.bytes,
                            e.location.as_deref(),
                        );
                        (e.path, meta)
                    })
                    .collect(),
            ),
            Err(e) => return Err(format!("revision {name} has an unreadable index: {e}")),
        };
        let dir = super::beneath::Dir::open(&dir)
            .map_err(|e| format!("revision {name} cannot be opened: {e}"))?;
        let id = dir
            .metadata()
            .map(|m| fencepost_core::os::file_id(&m))
            .map_err(|e| format!("revision {name} cannot be opened: {e}"))?;
        Ok(Revision {
            name_header: HeaderValue::from_str(&name).unwrap_or(HeaderValue::from_static("-")),
            name,
            dir,
            id,
            files,
            cache: RwLock::new((0, HashMap::new())),
        })
    }

    /// What the revision says of file `rel`; `None`: it has no such file. An index that
    /// cannot be read answers `None` too (and says so in the log): the file is not served.
    fn meta(&self, rel: &str) -> Option<FileMeta> {
        match &self.files {
            Files::Loaded(m) => m.get(rel).cloned(),
            Files::Indexed { index, memo } => {
                if let Some(hit) = memo.read().ok().and_then(|m| m.get(rel).cloned()) {
                    return hit;
                }
                let found = match index.get(rel) {
                    Ok(r) => r.map(|r| {
                        let l = r.location.as_deref();
                        FileMeta::new(&r.sha256, &r.content_type, r.cache, r.bytes, l)
                    }),
                    Err(e) => {
                        tracing::warn!(revision = %self.name, error = %e, "cannot read the revision's index");
                        return None;
                    }
                };
                if let Ok(mut m) = memo.write() {
                    if m.len() < MEMO_ENTRIES {
                        m.insert(rel.to_string(), found.clone());
                    }
                }
                found
            }
        }
    }

    fn cached(&self, rel: &str) -> Option<axum::body::Bytes> {
        self.cache.read().ok()?.1.get(rel).cloned()
    }

    fn remember(&self, rel: &str, bytes: &axum::body::Bytes) {
        if let Ok(mut c) = self.cache.write() {
            if c.0 + bytes.len() as u64 <= CACHE_BUDGET && !c.1.contains_key(rel) {
                c.0 += bytes.len() as u64;
                c.1.insert(rel.to_string(), bytes.clone());
            }
        }
    }
}

/// Revisions kept loaded (a rollback or a quick succession of builds finds its manifest
/// already parsed).
const KEEP_REVISIONS: usize = 4;

/// The origin over `public/current`: follows the pointer.
pub struct Local {
    public: PathBuf,
    previews: Option<super::previews::Previews>,
    /// Most recently used first: (link target, revision).
    cached: Mutex<Vec<(PathBuf, Arc<Revision>)>>,
}

impl Local {
    pub fn new(public: PathBuf) -> Local {
        Local {
            public,
            previews: None,
            cached: Mutex::new(Vec::new()),
        }
    }

    /// The same origin, serving `previews` too.
    pub fn with_previews(self, previews: Option<super::previews::Previews>) -> Local {
        Local { previews, ..self }
    }

    /// The revision the pointer names now. Err: why nothing can be served (503).
    ///
    /// Two system calls per request: `stat` through the pointer (the folder it leads to must
    /// exist and be the very folder a cached revision was loaded from) and `readlink` (its
    /// name). A revision deleted or moved away while the origin runs is a 503, never cached
    /// bytes of a revision it can no longer read, nor a 404.
    pub fn current(&self) -> Result<Arc<Revision>, String> {
        let link = self.public.join(CURRENT);
        let unreadable = |e: std::io::Error| {
            format!(
                "no revision to serve: {} cannot be read ({e}); run `fencepost build`",
                link.display()
            )
        };
        let target = std::fs::read_link(&link).map_err(unreadable)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let live = std::fs::metadata(&link)
            .map_err(|_| format!("public/current names revision {name}, which is missing"))?;
        let live_id = fencepost_core::os::file_id(&live);
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pos) = cached
            .iter()
            .position(|(t, r)| *t == target && r.id == live_id)
        {
            if pos > 0 {
                let hit = cached.remove(pos);
                cached.insert(0, hit);
            }
            return Ok(cached[0].1.clone());
        }
        // A cached revision of that name from another folder is stale: drop it.
        cached.retain(|(t, _)| *t != target);
        let dir = std::fs::canonicalize(self.public.join(&target))
            .map_err(|_| format!("public/current names revision {name}, which is missing"))?;
        let rev = Arc::new(Revision::load(dir, name)?);
        cached.insert(0, (target, rev.clone()));
        cached.truncate(KEEP_REVISIONS);
        Ok(rev)
    }
}

pub struct App {
    pub root: Root,
    pub clock: Clock,
    /// The site's path under its host (`Config::base_path`, `/project`; empty at the root):
    /// requests are answered under it, and every redirect's `Location` gets it in front.
    pub base_path: String,
}

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route(EVENTS_PATH, get(events))
        .fallback(handle)
        .with_state(app)
}

async fn handle(State(app): State<Arc<App>>, req: Request) -> Response {
    let started = std::time::Instant::now();
    let method = req.method().clone();
    let raw = req.uri().path().to_string();
    // Only quick syscalls happen here (readlink; a small file's read the first time it is
    // served); large files are streamed through tokio.
    let resp = match under_base(&app.base_path, &raw) {
        Under::Site(path) => {
            let previews = app.root.previews();
            let query = req.uri().query();
            let base = &app.base_path;
            let preview = match previews {
                Some(p) => p.answer(&method, path, query, req.headers(), base).await,
                None => None,
            };
            match preview {
                Some(resp) => resp,
                None => {
                    let resp = app.root.answer(&method, path, req.headers()).await;
                    rebase_location(resp, &app.base_path)
                }
            }
        }
        Under::Root => redirect(&format!("{}/", app.base_path)),
        Under::Elsewhere => text(
            StatusCode::NOT_FOUND,
            &format!("not found: this site is served under {}/", app.base_path),
        ),
    };
    tracing::info!(
        target: "fencepost::access",
        method = %method,
        path = %raw,
        status = resp.status().as_u16(),
        revision = resp.headers().get("x-revision").and_then(|v| v.to_str().ok()).unwrap_or("-"),
        us = started.elapsed().as_micros() as u64,
        "request"
    );
    resp
}

impl Origin for Local {
    fn previews(&self) -> Option<&super::previews::Previews> {
        self.previews.as_ref()
    }

    fn answer<'a>(
        &'a self,
        method: &'a Method,
        path: &'a str,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Response> {
        at_once(method, path, |rp, head| match self.current() {
            Ok(rev) => serve_origin(&rev, &rp, headers, head),
            Err(why) => unavailable(&why),
        })
    }
}

fn serve_origin(rev: &Revision, rp: &RequestPath, headers: &HeaderMap, head: bool) -> Response {
    let (path, status) = match lookup(rp, |p| rev.meta(p).is_some()) {
        Lookup::File(p) => (p, StatusCode::OK),
        Lookup::AddSlash(to) => return redirect(&to),
        Lookup::NotFound if rev.meta("404.html").is_some() => {
            ("404.html".to_string(), StatusCode::NOT_FOUND)
        }
        Lookup::NotFound => return text(StatusCode::NOT_FOUND, "not found"),
    };
    let Some(meta) = rev.meta(&path) else {
        return text(StatusCode::NOT_FOUND, "not found");
    };
    let meta = &meta;
    let status = meta.status(status);
    let finish = |mut r: Response| {
        meta.put_headers(r.headers_mut(), &rev.name_header);
        r
    };
    if status == StatusCode::OK && etag_matches(headers, meta.etag.as_bytes()) {
        return finish(StatusCode::NOT_MODIFIED.into_response());
    }
    if let Some(bytes) = rev.cached(&path) {
        let mut r = Response::new(if head {
            Body::empty()
        } else {
            Body::from(bytes)
        });
        *r.status_mut() = status;
        r.headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(meta.bytes));
        return finish(r);
    }
    let file = match rev.dir.open_file(&path) {
        Ok(f) => f,
        // A symlink planted on the way: not a file of the revision.
        Err(e) if super::beneath::is_symlink_refusal(&e) => {
            return text(StatusCode::NOT_FOUND, "not found")
        }
        Err(_) => {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                "the revision went away while being served; retry",
            )
        }
    };
    let body = if head {
        Body::empty()
    } else if meta.bytes <= READ_WHOLE {
        let mut buf = Vec::with_capacity(meta.bytes as usize);
        let mut file = file;
        if file.read_to_end(&mut buf).is_err() {
            return text(
                StatusCode::SERVICE_UNAVAILABLE,
                "the revision went away while being served; retry",
            );
        }
        let bytes = axum::body::Bytes::from(buf);
        rev.remember(&path, &bytes);
        Body::from(bytes)
    } else {
        Body::from_stream(tokio_util::io::ReaderStream::new(
            tokio::fs::File::from_std(file),
        ))
    };
    let mut r = Response::new(body);
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(meta.bytes));
    finish(r)
}

/// The reload events of the origin's open pages, as server-sent events (404 where the origin
/// has none: only the preview does).
async fn events(State(app): State<Arc<App>>) -> Response {
    match super::preview::reload_events(app.root.as_ref()) {
        Some(events) => events,
        None => text(StatusCode::NOT_FOUND, "not found"),
    }
}
