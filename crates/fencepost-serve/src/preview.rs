//! The editor's preview as an origin (`serve --watch`): an in-memory site swapped whole after
//! each rebuild, every HTML page carrying a script that reloads it when the server says so
//! (server-sent events at `EVENTS_PATH`), and a rebuild's error shown in place of pages
//! until the next good save. Never cached (`no-store`).
//!
//! Each install of a rebuild is a generation. A page carries the generation it was served
//! at, and the event stream's first event (`ready`) names the current one: a page that
//! subscribes only after a rebuild was announced (it was still loading, or its stream was
//! reconnecting) sees the two differ and reloads, instead of showing the old build until the
//! next save. A broadcast alone loses every reload sent before the page listens.

use super::answer::{etag_matches, redirect, text};
use super::origin::{at_once, common_headers, lookup, Lookup, Origin};
use super::paths::RequestPath;
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use fencepost_output::memory::MemorySite;
use futures_util::future::BoxFuture;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use tokio::sync::broadcast;

/// The script that preview HTML responses carry: reload when the server says so, or at once
/// when the stream opens on a generation other than the page's.
pub fn reload_script(generation: u64) -> String {
    format!(
        "<script>/* fencepost live reload */(function(){{var g=\"{generation}\",s=new EventSource(\"/__fencepost/events\");\
         s.addEventListener(\"ready\",function(e){{if(e.data!==g)location.reload();}});\
         s.addEventListener(\"reload\",function(){{location.reload();}});}})();</script>"
    )
}

/// The watch-mode preview: an in-memory site swapped whole after each rebuild.
pub struct Preview {
    pub site: RwLock<Arc<MemorySite>>,
    /// The last rebuild's error, shown instead of pages until a good save.
    pub error: RwLock<Option<String>>,
    pub events: broadcast::Sender<&'static str>,
    /// How many rebuilds were installed: raised after the site or error is in place, read
    /// before them, so a page never carries a generation newer than what it shows.
    generation: AtomicU64,
}

impl Preview {
    pub fn new(site: MemorySite, error: Option<String>) -> Preview {
        Preview {
            site: RwLock::new(Arc::new(site)),
            error: RwLock::new(error),
            events: broadcast::channel(16).0,
            generation: AtomicU64::new(0),
        }
    }

    /// Installs a rebuilt site (or an error) and tells every open page to reload.
    pub fn publish(&self, result: Result<MemorySite, String>) {
        match result {
            Ok(site) => {
                *self.site.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(site);
                *self.error.write().unwrap_or_else(|p| p.into_inner()) = None;
            }
            Err(e) => *self.error.write().unwrap_or_else(|p| p.into_inner()) = Some(e),
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        let _ = self.events.send("reload");
    }
}

impl Origin for Preview {
    fn answer<'a>(
        &'a self,
        method: &'a Method,
        path: &'a str,
        headers: &'a HeaderMap,
    ) -> BoxFuture<'a, Response> {
        at_once(method, path, |rp, head| {
            serve_preview(self, &rp, headers, head)
        })
    }

    fn events(&self) -> Option<&broadcast::Sender<&'static str>> {
        Some(&self.events)
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn inject_reload(html: &[u8], generation: u64) -> Vec<u8> {
    let s = String::from_utf8_lossy(html);
    let script = reload_script(generation);
    match s.rfind("</body>") {
        Some(i) => format!("{}{script}{}", &s[..i], &s[i..]).into_bytes(),
        None => format!("{s}{script}").into_bytes(),
    }
}

fn serve_preview(p: &Preview, rp: &RequestPath, headers: &HeaderMap, head: bool) -> Response {
    // Before the site: a rebuild installed in between makes the page reload once, never miss.
    let generation = p.generation();
    let site = p.site.read().unwrap_or_else(|e| e.into_inner()).clone();
    let error = p.error.read().unwrap_or_else(|e| e.into_inner()).clone();
    let found = lookup(rp, |f| site.files.contains_key(f));
    let wants_html = match &found {
        Lookup::File(f) => f.ends_with(".html"),
        _ => rp.trailing_slash || !rp.rel.contains('.'),
    };
    // A page held (its template failed for it alone) answers with why at its own URL.
    let held = match (&found, lookup(rp, |f| site.held.contains_key(f))) {
        (Lookup::NotFound, Lookup::File(f)) => site.held.get(&f).cloned(),
        _ => None,
    };
    let error = error.filter(|_| wants_html).or(held);
    if let Some(msg) = error {
        // The message wraps: a template error is one long line.
        let page = format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>Build error</title></head><body>\
             <h1>fencepost could not rebuild the preview</h1><pre class=\"fencepost-error\" \
             style=\"white-space: pre-wrap; overflow-wrap: anywhere\">{}</pre>\
             <p>Fix the file and save: this page reloads by itself.</p>{}</body></html>",
            escape_html(&msg),
            reload_script(generation)
        );
        let mut r = (StatusCode::INTERNAL_SERVER_ERROR, page).into_response();
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        return r;
    }
    let (path, status) = match found {
        Lookup::File(f) => (f, StatusCode::OK),
        Lookup::AddSlash(to) => return redirect(&to),
        Lookup::NotFound if site.files.contains_key("404.html") => {
            ("404.html".to_string(), StatusCode::NOT_FOUND)
        }
        Lookup::NotFound => return text(StatusCode::NOT_FOUND, "not found"),
    };
    let f = &site.files[&path];
    let html = path.ends_with(".html");
    // An HTML page's bytes carry the generation its script names: so does its tag, or a
    // revalidation after a rebuild that left the page alone would answer 304 and keep the old
    // generation (and a strong tag would name two different bodies).
    let etag = match html {
        true => format!("\"{}-g{generation}\"", f.sha256),
        false => format!("\"{}\"", f.sha256),
    };
    let finish = |mut r: Response| {
        common_headers(&mut r, &etag, f.content_type, "preview");
        r.headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    };
    if status == StatusCode::OK && etag_matches(headers, etag.as_bytes()) {
        return finish(StatusCode::NOT_MODIFIED.into_response());
    }
    let bytes = if html {
        inject_reload(&f.bytes, generation)
    } else {
        f.bytes.to_vec()
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

/// `events` as a stream of server-sent events: `ready` first, naming the current generation
/// (read after subscribing, so a rebuild is either in it or announced after it), then each
/// reload, until the server shuts down.
pub(super) fn reload_events(origin: &dyn Origin) -> Option<Response> {
    let rx = origin.events()?.subscribe();
    let now = origin.generation().to_string();
    let hello = futures_util::stream::once(async move {
        Ok::<_, Infallible>(Event::default().event("ready").data(now))
    });
    let updates = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok("shutdown") | Err(broadcast::error::RecvError::Closed) => return None,
                Ok(ev) => {
                    return Some((Ok::<_, Infallible>(Event::default().event(ev).data(ev)), rx))
                }
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
            }
        }
    });
    use futures_util::StreamExt;
    Some(
        Sse::new(hello.chain(updates))
            .keep_alive(KeepAlive::default())
            .into_response(),
    )
}
