//! The editor's preview (`serve --watch`): the site's one file watcher ([`crate::watch`],
//! shared with `run`) hands over each debounced batch of changes, the content tree is rebuilt
//! in memory by the build and served by the origin, and every open page is told to reload.
//! It stands on `build` and `serve`, so neither origin depends on the build.

use crate::watch::{self, Change, SiteWatch};
use fencepost_build::{self as build, TreeCache};
use fencepost_core::clock::Clock;
use fencepost_output::memory::MemorySite;
use fencepost_serve::preview::Preview;
use fencepost_serve::ServeError;
use fencepost_site::Site;
use std::sync::Arc;

fn rebuild(site: &Site, clock: &Clock, cache: &mut TreeCache, preview: &Preview) {
    let prev: Arc<MemorySite> = preview
        .site
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    match build::preview_in_memory(site, clock, cache, Some(&prev)) {
        Ok((m, report)) => {
            tracing::info!(
                ms = report.ms,
                rendered = report.rendered,
                reused = report.reused,
                "preview rebuilt"
            );
            preview.publish(Ok(m));
        }
        Err(e) => {
            tracing::warn!(error = %e, "preview rebuild failed; showing the error until the next good save");
            preview.publish(Err(e.to_string()));
        }
    }
}

/// `serve --watch`: the preview served at `bind` until SIGINT or SIGTERM, rebuilt on every
/// save.
pub fn run(
    site: Site,
    clock: Clock,
    bind: std::net::SocketAddr,
    ready: impl FnOnce(std::net::SocketAddr),
) -> Result<(), ServeError> {
    let (preview, _watch) = start(site.clone(), clock)?;
    fencepost_serve::run_root(site, clock, preview, bind, ready)
}

/// Builds the first preview, then rebuilds it on every change until the process ends.
pub fn start(site: Site, clock: Clock) -> Result<(Arc<Preview>, SiteWatch), ServeError> {
    let root = std::fs::canonicalize(&site.root).map_err(|source| ServeError::Io {
        path: site.root.clone(),
        source,
    })?;
    let site = Site {
        root: root.clone(),
        ..site
    };
    let mut cache = TreeCache::default();
    let preview = Arc::new(
        match build::preview_in_memory(&site, &clock, &mut cache, None) {
            Ok((m, report)) => {
                tracing::info!(ms = report.ms, files = report.files, "preview built");
                Preview::new(m, None)
            }
            Err(e) => Preview::new(MemorySite::default(), Some(e.to_string())),
        },
    );
    // From here on the watcher reports every change: rebuilds need not stat every file.
    cache.trust_invalidations = true;
    let mut looper = Looper {
        site,
        clock,
        cache,
        preview: preview.clone(),
    };
    let watch =
        watch::start(&root, move |changes| looper.apply(changes)).map_err(ServeError::Watch)?;
    Ok((preview, watch))
}

/// What the watch thread does with each batch of changes.
struct Looper {
    site: Site,
    clock: Clock,
    cache: TreeCache,
    preview: Arc<Preview>,
}

impl Looper {
    /// Forgets what `changes` touched and rebuilds (the site reopened when its config
    /// changed; a config that does not load is shown until it does).
    fn apply(&mut self, changes: &[Change]) {
        for c in changes {
            match c {
                Change::Item(rel) => self.cache.invalidate(rel),
                // An image or plain page, a folder replaced, or the config (grace minutes
                // shape the pages).
                Change::OtherContent | Change::Config => self.cache.clear(),
                _ => {}
            }
        }
        if changes.contains(&Change::Config) {
            match Site::open(&self.site.root) {
                Ok(s) => self.site = s,
                Err(e) => return self.preview.publish(Err(e.to_string())),
            }
        }
        rebuild(&self.site, &self.clock, &mut self.cache, &self.preview);
    }
}
