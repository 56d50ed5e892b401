//! Previews at `/.preview/NAME/…` (issue 80; the bucket layout in
//! `fencepost_bucket::preview`): served by every origin of this room — `serve` over
//! `public/` (this site's own previews, in `.fencepost/previews/`) and `serve --from URL`
//! (the bucket's) — as the edge Worker serves them (`edge/cloudflare/preview.js`), rule for
//! rule.
//!
//! The adversary is a reader without a link (guessing names and paths), a holder of one
//! preview's link reaching for another, a link past its expiry, and every cache and crawler
//! between. So:
//!
//! - a request with `?fp_preview=TOKEN` whose token opens NAME now is answered `303` to the
//!   same URL without the token, setting the cookie `fp_preview` (`HttpOnly; Secure;
//!   SameSite=Strict`, path `/.preview/NAME/`, until the token expires): the token never stays
//!   in the address bar, the history or a `Referer`. Followed from another site's page
//!   (`Sec-Fetch-Site: cross-site`), the answer is a page that moves on to the same URL by
//!   itself instead (see [`Previews::open`]: found in Chromium, a 303 there lost the cookie);
//! - a request carrying that cookie is answered from the preview's pointer, read anew each
//!   time (a removed preview is gone at once), its objects checked against their digests;
//! - anything else under `/.preview/` — no token, a bad, expired or other preview's token, no
//!   key configured, a preview that does not exist — is answered by the public origin exactly
//!   as any other path it does not have: the same 404 page, the same headers. A preview's
//!   existence is never revealed;
//! - every preview answer carries `Cache-Control: private, no-store`, `X-Robots-Tag: noindex,
//!   nofollow, noarchive` and `Referrer-Policy: no-referrer`, and none is kept in the origin's
//!   caches (its blob cache serves the public only);
//! - an HTML page's links into the site lead within the preview, and a banner says what it is
//!   (`rewrite.rs`): the files themselves are the public build's bytes, which is what lets a
//!   preview deploy reuse every unchanged file of the public revision;
//! - each answer is logged (`fencepost::preview`: name, path, token id, status) and counted.

mod rewrite;

use super::answer::text;
use super::paths::{self, RequestPath};
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use fencepost_bucket::layout::{self, RemoteEntry, Root};
use fencepost_bucket::preview::token::{Key, Valid};
use fencepost_bucket::preview::{self, PreviewPointer, COOKIE, TOKEN_PARAM};
use fencepost_bucket::read::Read;
use fencepost_bucket::remote::Remote;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Counts of preview requests since the origin started.
#[derive(Debug, Default)]
pub struct PreviewCounts {
    /// Answered from a preview (pages, redirects within it, its 404s).
    pub served: AtomicU64,
    /// Tokens exchanged for a cookie.
    pub opened: AtomicU64,
    /// Refused (answered as the public 404).
    pub refused: AtomicU64,
}

/// The previews an origin serves: where they live, and the key their links are signed with.
pub struct Previews {
    remote: Remote,
    key: Key,
    timeout: Duration,
    /// Shared with whoever exports them (`run --metrics`).
    pub counts: std::sync::Arc<PreviewCounts>,
}

/// The headers every preview answer carries.
const PRIVATE: [(&str, &str); 3] = [
    ("cache-control", "private, no-store"),
    ("x-robots-tag", "noindex, nofollow, noarchive"),
    ("referrer-policy", "no-referrer"),
];

/// The previews of the bucket `remote`, when `FENCEPOST_PREVIEW_KEY` holds a key; without
/// one, none is served (every `/.preview/` path is answered as a missing page).
pub fn of(remote: Remote, timeout: Duration) -> Option<Previews> {
    match Key::from_env() {
        Ok(key) => {
            tracing::info!(target: "fencepost::preview", store = %remote.url, "serving previews at /.preview/NAME/ to holders of a link");
            Some(Previews::new(remote, key, timeout))
        }
        Err(e @ fencepost_bucket::preview::token::KeyError::Malformed) => {
            tracing::warn!(target: "fencepost::preview", error = %e, "no previews served");
            None
        }
        Err(_) => None,
    }
}

/// This site's own previews (`preview deploy` without `--to`), in its state folder.
pub fn local(site: &fencepost_site::Site, timeout: Duration) -> Option<Previews> {
    std::fs::create_dir_all(site.state_dir()).ok()?;
    let state = std::fs::canonicalize(site.state_dir()).ok()?;
    let remote = Remote::open(&format!("file://{}", state.display())).ok()?;
    of(remote, timeout)
}

impl Previews {
    pub fn new(remote: Remote, key: Key, timeout: Duration) -> Previews {
        Previews {
            remote,
            key,
            timeout,
            counts: std::sync::Arc::default(),
        }
    }

    /// The answer to a request under the site's path when it is a preview's; `None`: answer
    /// it as the public origin would (see the module doc).
    pub async fn answer(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
        base_path: &str,
    ) -> Option<Response> {
        // Only GET and HEAD, as everywhere else (the public origin answers the rest 405).
        if !path.starts_with(preview::URL_PREFIX) || !matches!(*method, Method::GET | Method::HEAD)
        {
            return None;
        }
        let rp = paths::parse(path).ok()?;
        let (name, inner) = split(&rp)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let resp = match query.and_then(token_param) {
            Some(token) => match self.key.verify(&token, &name, now) {
                Ok(valid) => {
                    let cross_site = (headers.get("sec-fetch-site"))
                        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"cross-site"));
                    let at = Asked {
                        path,
                        query,
                        base_path,
                        cross_site,
                    };
                    self.open(&name, &token, &valid, at, now)
                }
                Err(why) => return self.refuse(&name, path, why),
            },
            None => match self.cookie(headers, &name, now) {
                Some(valid) => {
                    (self.serve(method, &name, &inner, headers, base_path, &valid)).await?
                }
                None => return self.refuse(&name, path, "no token"),
            },
        };
        Some(resp)
    }

    fn refuse(&self, name: &str, path: &str, why: &str) -> Option<Response> {
        self.counts.refused.fetch_add(1, Ordering::Relaxed);
        tracing::info!(target: "fencepost::preview", name, path, refused = why, "preview request refused; answered as any missing page");
        None
    }

    /// The token's valid cookie for `name`, if the request carries one.
    fn cookie(&self, headers: &HeaderMap, name: &str, now: i64) -> Option<Valid> {
        (headers.get_all(header::COOKIE).iter())
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
            .find_map(|t| self.key.verify(t, name, now).ok())
    }

    /// A valid token exchanged for the cookie, and the reviewer sent to the same URL without
    /// it: a `303`, or — for a link followed from another site's page (`Sec-Fetch-Site:
    /// cross-site`: a webmail, a chat) — a page that moves on by itself, since a browser sends
    /// no `SameSite=Strict` cookie along a redirect chain another site started, and only a
    /// navigation the preview's own page starts carries it. The cookie holds the token itself,
    /// so it ends when the link does.
    fn open(&self, name: &str, token: &str, valid: &Valid, at: Asked<'_>, now: i64) -> Response {
        self.counts.opened.fetch_add(1, Ordering::Relaxed);
        let rest = at.query.map(without_token).unwrap_or_default();
        let to = match rest.is_empty() {
            true => format!("{}{}", at.base_path, at.path),
            false => format!("{}{}?{rest}", at.base_path, at.path),
        };
        let to = super::answer::location(&to);
        let cookie = format!(
            "{COOKIE}={token}; Path={}{}{name}/; Max-Age={}; HttpOnly; Secure; SameSite=Strict",
            at.base_path,
            preview::URL_PREFIX,
            (valid.expires - now).max(0)
        );
        let mut r = match at.cross_site {
            false => {
                let mut r = StatusCode::SEE_OTHER.into_response();
                r.headers_mut().insert(header::LOCATION, header_value(&to));
                r.headers_mut()
                    .insert(header::CONTENT_LENGTH, HeaderValue::from(0));
                r
            }
            true => {
                let body = rewrite::onward(name, &to);
                let len = body.len();
                let mut r = Response::new(Body::from(body));
                let h = r.headers_mut();
                h.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/html; charset=utf-8"),
                );
                h.insert(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static("default-src 'none'"),
                );
                h.insert(
                    "x-content-type-options",
                    HeaderValue::from_static("nosniff"),
                );
                h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
                r
            }
        };
        let status = r.status().as_u16();
        tracing::info!(target: "fencepost::preview", name, path = at.path, token = %valid.id, status, "preview link opened");
        r.headers_mut()
            .insert(header::SET_COOKIE, header_value(&cookie));
        private(r.headers_mut());
        r
    }

    /// A request with a valid cookie, answered from the preview; `None` when the preview does
    /// not exist (the public 404, as for no cookie).
    async fn serve(
        &self,
        method: &Method,
        name: &str,
        inner: &RequestPath,
        headers: &HeaderMap,
        base_path: &str,
        valid: &Valid,
    ) -> Option<Response> {
        let started = std::time::Instant::now();
        let resp = match self.read(name, inner, base_path).await {
            Ok(Some(found)) => found.respond(method, headers, base_path),
            Ok(None) => {
                self.counts.refused.fetch_add(1, Ordering::Relaxed);
                tracing::info!(target: "fencepost::preview", name, token = %valid.id, "no such preview; answered as any missing page");
                return None;
            }
            Err(why) => super::answer::unavailable(&why),
        };
        let mut resp = resp;
        private(resp.headers_mut());
        let status = resp.status().as_u16();
        self.counts.served.fetch_add(1, Ordering::Relaxed);
        tracing::info!(target: "fencepost::preview", name, path = %inner.rel, token = %valid.id, status, us = started.elapsed().as_micros() as u64, "preview request");
        Some(resp)
    }

    /// One bucket call within `serve.bucket_timeout_ms`.
    async fn bounded<T>(
        &self,
        key: &str,
        call: impl std::future::Future<Output = Result<T, fencepost_bucket::BucketError>>,
    ) -> Result<T, String> {
        match tokio::time::timeout(self.timeout, call).await {
            Ok(r) => r.map_err(|e| format!("reading {key}: {e}")),
            Err(_) => Err(format!("reading {key}: the bucket did not answer in time")),
        }
    }

    /// What `inner` finds in preview `name`: `None` when there is no such preview.
    async fn read(
        &self,
        name: &str,
        inner: &RequestPath,
        base_path: &str,
    ) -> Result<Option<Found>, String> {
        let key = preview::pointer_key(name);
        let Some(bytes) = self.bounded(&key, self.remote.get(&key)).await? else {
            return Ok(None);
        };
        let p: PreviewPointer =
            serde_json::from_slice(&bytes).map_err(|e| format!("preview {name}: {e}"))?;
        let key = p.root_key();
        let root = found(
            &key,
            self.bounded(&key, self.remote.root_at(&key, &p.manifest))
                .await?,
        )?;
        if inner.rel.is_empty() && !inner.trailing_slash {
            let to = format!("{base_path}{}{name}/", preview::URL_PREFIX);
            return Ok(Some(Found::Redirect(to)));
        }
        let entry = |path: String| self.entry(&p, &root, path);
        let file = inner.file();
        let (e, status) = match entry(file).await? {
            Some(e) => (e, StatusCode::OK),
            None if !inner.trailing_slash
                && entry(format!("{}/index.html", inner.rel)).await?.is_some() =>
            {
                let to = format!("{base_path}{}{name}/{}/", preview::URL_PREFIX, inner.rel);
                return Ok(Some(Found::Redirect(to)));
            }
            None => match entry("404.html".into()).await? {
                Some(e) => (e, StatusCode::NOT_FOUND),
                None => return Ok(Some(Found::Missing)),
            },
        };
        let key = p.blob_key(&e.sha256);
        let body = found(
            &key,
            self.bounded(&key, self.remote.blob_at(&key, &e.sha256))
                .await?,
        )?;
        Ok(Some(Found::File {
            name: name.to_string(),
            revision: format!("{}-{}", p.revision, p.build),
            banner: rewrite::banner(name, p.as_of),
            base_url: p.base_url.clone(),
            entry: e,
            status,
            body,
        }))
    }

    async fn entry(
        &self,
        p: &PreviewPointer,
        root: &Root,
        path: String,
    ) -> Result<Option<RemoteEntry>, String> {
        let index = layout::shard_of(&path);
        let Some((_, sha)) = root.shards.iter().find(|(i, _)| *i == index) else {
            return Ok(None);
        };
        let key = p.shard_key(sha);
        let entries = found(
            &key,
            self.bounded(&key, self.remote.shard_at(&key, sha)).await?,
        )?;
        Ok(entries.into_iter().find(|e| e.path == path))
    }
}

/// An object of a preview read whole and checked, or why it cannot be served (a 503: the
/// reason goes to the log).
fn found<T>(key: &str, read: Read<T>) -> Result<T, String> {
    match read {
        Read::Found(t) => Ok(t),
        Read::Missing => Err(format!("{key} is missing")),
        Read::Corrupt => Err(format!("{key} does not hash to its name; refused")),
        Read::Unparsable(why) => Err(format!("{key}: {why}")),
    }
}

/// Where a request asked: its path under the base path, its query, the base path, and
/// whether another site's page sent it.
#[derive(Clone, Copy)]
struct Asked<'a> {
    path: &'a str,
    query: Option<&'a str>,
    base_path: &'a str,
    cross_site: bool,
}

/// What a preview request found.
enum Found {
    File {
        name: String,
        revision: String,
        banner: String,
        base_url: String,
        entry: RemoteEntry,
        status: StatusCode,
        body: Vec<u8>,
    },
    /// Add the slash (within the preview).
    Redirect(String),
    /// Not in the preview, which has no 404 page.
    Missing,
}

impl Found {
    fn respond(self, method: &Method, headers: &HeaderMap, base_path: &str) -> Response {
        let (name, revision, banner, base_url, e, status, body) = match self {
            Found::Redirect(to) => {
                let mut r = super::answer::redirect(&to);
                r.headers_mut().remove(header::CACHE_CONTROL);
                return r;
            }
            Found::Missing => return text(StatusCode::NOT_FOUND, "not found"),
            Found::File {
                name,
                revision,
                banner,
                base_url,
                entry,
                status,
                body,
            } => (name, revision, banner, base_url, entry, status, body),
        };
        let into = rewrite::Into {
            base_path,
            base_url: &base_url,
            name: &name,
            banner: &banner,
        };
        let body = match e.content_type.starts_with("text/html") {
            true => rewrite::page(&body, &into),
            false => body,
        };
        let gone = e.cache == fencepost_output::manifest::CacheClass::Gone;
        let moved = e
            .location
            .as_deref()
            .map(|l| into.url(l).unwrap_or_else(|| l.to_string()));
        let status = match (gone, &moved) {
            (true, _) => StatusCode::GONE,
            (_, Some(_)) => StatusCode::MOVED_PERMANENTLY,
            _ => status,
        };
        let etag = format!("\"{}\"", e.sha256);
        let mut r = Response::new(Body::empty());
        let h = r.headers_mut();
        h.insert(header::ETAG, header_value(&etag));
        h.insert(header::CONTENT_TYPE, header_value(&e.content_type));
        super::answer::safety_headers(h, e.content_type.as_bytes());
        h.insert("x-revision", header_value(&revision));
        if let Some(l) = &moved {
            h.insert(header::LOCATION, header_value(&super::answer::location(l)));
        }
        if status == StatusCode::OK && super::answer::etag_matches(headers, etag.as_bytes()) {
            *r.status_mut() = StatusCode::NOT_MODIFIED;
            return r;
        }
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
        *r.status_mut() = status;
        if method != Method::HEAD {
            *r.body_mut() = Body::from(body);
        }
        r
    }
}

fn header_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or(HeaderValue::from_static("-"))
}

fn private(h: &mut HeaderMap) {
    for (k, v) in PRIVATE {
        h.insert(k, HeaderValue::from_static(v));
    }
}

/// The preview's name and the path within it, from a path under `/.preview/`; `None` for a
/// name that cannot be a preview's.
fn split(rp: &RequestPath) -> Option<(String, RequestPath)> {
    let rest = rp.rel.strip_prefix(".preview/")?;
    let (name, inner) = match rest.split_once('/') {
        Some((n, i)) => (n, i),
        None => (rest, ""),
    };
    preview::check_name(name).ok()?;
    Some((
        name.to_string(),
        RequestPath {
            rel: inner.to_string(),
            trailing_slash: rp.trailing_slash,
        },
    ))
}

/// The token a query carries, if any.
fn token_param(query: &str) -> Option<String> {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix(TOKEN_PARAM)?.strip_prefix('='))
        .map(str::to_string)
}

/// The query without the token.
fn without_token(query: &str) -> String {
    let kept: Vec<&str> = (query.split('&'))
        .filter(|kv| !kv.is_empty() && kv.split('=').next() != Some(TOKEN_PARAM))
        .collect();
    kept.join("&")
}

#[cfg(test)]
mod tests;
