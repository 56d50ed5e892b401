//! What every origin of the room shares: the [`Origin`] trait each answers through (the local
//! revision in `http.rs`, a bucket's pointer in `bucket.rs`, the preview in `preview.rs`), the
//! request check, a path looked up in a set of files, and the headers every file carries.
//! Below all three, so none imports another.

use super::answer::{method_not_allowed, safety_headers, text};
use super::paths::{self, RequestPath};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use tokio::sync::broadcast;

/// What answers a request under the site's path — the revision `public/current` points to
/// (`http::Local`), a bucket's pointer (`bucket::BucketOrigin`), the editor's preview in memory
/// (`preview::Preview`) — each for itself: the HTTP layer only finds the path under the base
/// path, asks, and logs.
pub trait Origin: Send + Sync + 'static {
    /// The response to `method` on `path` (the request's path under the site's base path, not
    /// yet parsed).
    fn answer<'a>(
        &'a self,
        method: &'a Method,
        path: &'a str,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Response>;

    /// The previews it serves at `/.preview/NAME/` (see `previews.rs`), if any.
    fn previews(&self) -> Option<&super::previews::Previews> {
        None
    }

    /// The reload events open pages listen to (`EVENTS_PATH`), for an origin that has them.
    fn events(&self) -> Option<&broadcast::Sender<&'static str>> {
        None
    }

    /// How many times what it serves was replaced, for an origin with [`Origin::events`]: the
    /// first event a page receives names it, so a reload sent before the page listened is
    /// not lost.
    fn generation(&self) -> u64 {
        0
    }
}

/// The origin a server answers from.
pub type Root = Arc<dyn Origin>;

/// A GET or HEAD of a well-formed path: the path, and whether it is a HEAD; else the answer.
fn request(method: &Method, raw: &str) -> Result<(RequestPath, bool), Box<Response>> {
    if method != Method::GET && method != Method::HEAD {
        return Err(Box::new(method_not_allowed()));
    }
    match paths::parse(raw) {
        Ok(rp) => Ok((rp, method == Method::HEAD)),
        Err(why) => Err(Box::new(text(StatusCode::BAD_REQUEST, why.message()))),
    }
}

/// The answer of an origin that answers at once, from what it holds: `f` given the checked
/// request (the path, and whether it is a HEAD), or the refusal [`request`] gives.
pub(super) fn at_once<'a>(
    method: &Method,
    path: &str,
    f: impl FnOnce(RequestPath, bool) -> Response,
) -> BoxFuture<'a, Response> {
    let resp = match request(method, path) {
        Err(r) => *r,
        Ok((rp, head)) => f(rp, head),
    };
    Box::pin(std::future::ready(resp))
}

/// What `rp` maps to in a set of files: the file, a redirect to add a slash, or not found.
pub(super) enum Lookup {
    File(String),
    AddSlash(String),
    NotFound,
}

pub(super) fn lookup(rp: &RequestPath, has: impl Fn(&str) -> bool) -> Lookup {
    let file = rp.file();
    if has(&file) {
        Lookup::File(file)
    } else if !rp.trailing_slash && has(&format!("{}/index.html", rp.rel)) {
        Lookup::AddSlash(format!("/{}/", rp.rel))
    } else {
        Lookup::NotFound
    }
}

pub(super) fn common_headers(r: &mut Response, etag: &str, content_type: &str, revision: &str) {
    let h = r.headers_mut();
    safety_headers(h, content_type.as_bytes());
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    if let Ok(v) = HeaderValue::from_str(content_type) {
        h.insert(header::CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(revision) {
        h.insert("x-revision", v);
    }
}
