//! The pieces of an HTTP answer every origin gives alike (the local origin, the preview, the
//! bucket origin): plain-text answers, 503, 405, the slash redirect, `If-None-Match`, and the
//! safety headers. Below both `http.rs` and `bucket.rs`, so neither imports the other's
//! helpers.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

pub fn text(status: StatusCode, msg: &str) -> Response {
    let mut r = (status, format!("{msg}\n")).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// 503 with no-store: nothing can be served right now; never a stale 200. The public gets a
/// plain sentence; why (a path, a bucket, an endpoint) goes to the log.
pub fn unavailable(why: &str) -> Response {
    tracing::warn!(reason = %why, "answering 503");
    let mut r = text(
        StatusCode::SERVICE_UNAVAILABLE,
        "the site is unavailable right now; try again shortly",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// 405 for anything but GET and HEAD.
pub fn method_not_allowed() -> Response {
    let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    r
}

pub fn redirect(to: &str) -> Response {
    let mut r = StatusCode::MOVED_PERMANENTLY.into_response();
    // A 301 is cacheable by default: keep it from outliving the revision that made it.
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=0, must-revalidate"),
    );
    if let Ok(v) = HeaderValue::from_str(&location(to)) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// A redirect inside the site points under its base path.
pub fn rebase_location(mut resp: Response, base: &str) -> Response {
    if base.is_empty() {
        return resp;
    }
    let moved = resp
        .headers()
        .get(header::LOCATION)
        .and_then(|l| l.to_str().ok())
        .filter(|l| l.starts_with('/') && !l.starts_with("//"))
        .and_then(|l| HeaderValue::from_str(&format!("{base}{l}")).ok());
    if let Some(l) = moved {
        resp.headers_mut().insert(header::LOCATION, l);
    }
    resp
}

/// A site URL as a `Location` header's value: non-ASCII and controls percent-encoded.
pub fn location(to: &str) -> String {
    percent_encoding::utf8_percent_encode(to, percent_encoding::CONTROLS).to_string()
}

pub fn etag_matches(headers: &HeaderMap, etag: &[u8]) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t.as_bytes() == etag)
}

/// An SVG can carry script: served from the site's own origin it would run with the site's
/// cookies and storage. This policy sandboxes it (no script, no plugins, a unique origin) while
/// still letting it draw with inline styles and embedded images.
pub const SVG_CSP: &str =
    "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:";

/// Headers every file response carries whatever its type: no MIME sniffing, and the SVG
/// sandbox for SVGs.
pub fn safety_headers(h: &mut HeaderMap, content_type: &[u8]) {
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    if content_type.starts_with(b"image/svg+xml") {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(SVG_CSP),
        );
    }
}
