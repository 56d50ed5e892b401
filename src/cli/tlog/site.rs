//! Where a reader's check fetches a site's log from: its `/.well-known/fencepost/` over
//! HTTP, or in a folder.
//!
//! **The adversary is the server** (or whoever answers for it): the site's publisher, whose
//! log the check exists to hold to account, or anyone between. It chooses every byte, every
//! status and every delay. So: only files under the URL given are fetched — a redirect is
//! followed only within the same origin (scheme, host and port), never to another; each file
//! is read up to [`MAX_FILE`] (a bundle of 256 entries of 64 KiB is under 17 MiB) and no size
//! the server states is trusted before bytes arrive; each request has its own timeout and
//! the whole check a total deadline (`--deadline`), so a server dripping one byte a second
//! costs the reader minutes at most, not hours. What the bytes may say (a checkpoint of 2^40
//! entries, a bundle of millions of empty entries) is bounded where it is parsed
//! (`fencepost_tlog::check::MAX_ENTRIES`, `tiles::parse_bundle`).

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A published site's `/.well-known/fencepost/`, over HTTP or in a folder.
pub(super) enum Site {
    Http {
        base: url::Url,
        agent: ureq::Agent,
        until: Instant,
        deadline: Duration,
    },
    Folder(PathBuf),
}

/// The largest file a check reads (a full tile is 8 KiB, a bundle at most 256 × 64 KiB).
const MAX_FILE: u64 = 17 << 20;
/// One request's longest wait, within the total deadline.
const REQUEST: Duration = Duration::from_secs(30);
/// Redirects followed for one file, each within the origin.
const REDIRECTS: usize = 5;

impl Site {
    /// The site at `url`, to be read within `deadline` in all.
    pub(super) fn parse(url: &str, deadline: Duration) -> anyhow::Result<Site> {
        if url.starts_with("http://") || url.starts_with("https://") {
            let agent = ureq::AgentBuilder::new().redirects(0).build();
            let base = format!("{}/.well-known/fencepost/", url.trim_end_matches('/'));
            let base = url::Url::parse(&base)
                .map_err(|e| anyhow::anyhow!("tlog: {url} is not a URL: {e}"))?;
            return Ok(Site::Http {
                base,
                agent,
                until: Instant::now() + deadline,
                deadline,
            });
        }
        let folder = PathBuf::from(url.strip_prefix("file://").unwrap_or(url));
        anyhow::ensure!(
            folder.is_dir(),
            "tlog verify {url}: not a site (an http(s):// URL, file:///folder or a folder)"
        );
        Ok(Site::Folder(folder.join(".well-known/fencepost")))
    }
}

/// Reads at most [`MAX_FILE`] bytes; more is an error, not a truncated file.
fn read_capped(r: impl Read) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    r.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    match bytes.len() as u64 > MAX_FILE {
        true => Err(format!(
            "more than {} MiB: no file of a log is that large",
            MAX_FILE >> 20
        )),
        false => Ok(bytes),
    }
}

/// Whether `to` is on the origin of `from`: scheme, host and port.
fn same_origin(from: &url::Url, to: &url::Url) -> bool {
    from.scheme() == to.scheme()
        && from.host_str() == to.host_str()
        && from.port_or_known_default() == to.port_or_known_default()
}

fn http_get(
    base: &url::Url,
    agent: &ureq::Agent,
    until: Instant,
    deadline: Duration,
    path: &str,
) -> Result<Option<Vec<u8>>, String> {
    let late = || {
        format!(
            "the check's total deadline of {} s passed (--deadline): the server is too slow, or slow on purpose",
            deadline.as_secs()
        )
    };
    let failed = |why: String| match Instant::now() >= until {
        true => late(),
        false => why,
    };
    let mut at = base.join(path).map_err(|e| e.to_string())?;
    for _ in 0..=REDIRECTS {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        let resp = match agent.get(at.as_str()).timeout(left.min(REQUEST)).call() {
            Ok(resp) => resp,
            Err(ureq::Error::Status(404, _)) => return Ok(None),
            Err(e) => return Err(failed(e.to_string())),
        };
        if !(300..400).contains(&resp.status()) {
            return read_capped(resp.into_reader()).map(Some).map_err(failed);
        }
        let location = resp.header("location").unwrap_or("").to_string();
        let to = at
            .join(&location)
            .map_err(|e| format!("a redirect to {location:?}: {e}"))?;
        if !same_origin(base, &to) {
            return Err(format!(
                "redirected off the site's origin, to {}: refused (a check reads only under the URL it was given)",
                to.origin().ascii_serialization()
            ));
        }
        at = to;
    }
    Err(format!("more than {REDIRECTS} redirects"))
}

impl fencepost_tlog::check::Source for Site {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        match self {
            Site::Http {
                base,
                agent,
                until,
                deadline,
            } => http_get(base, agent, *until, *deadline, path),
            Site::Folder(dir) => match std::fs::File::open(dir.join(path)) {
                Ok(f) => read_capped(f).map(Some),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e.to_string()),
            },
        }
    }
}
