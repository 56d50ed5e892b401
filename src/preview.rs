//! The editor's preview (`serve --watch`): file events become a small [`Change`] set (a
//! pure, tested function), a quiet period debounces a burst of saves, then the content tree is
//! rebuilt in memory by the build and served by the origin, and every open page is told to
//! reload. It stands on `build` and `serve`, so neither origin depends on the build; `run`
//! shares its list of watched folders and their re-arming ([`Armed`]).

use crate::build::{self, TreeCache};
use crate::clock::Clock;
use crate::config::CONFIG_FILE;
use crate::output::memory::MemorySite;
use crate::serve::http::{Preview, Root};
use crate::serve::ServeError;
use crate::site::Site;
use notify::{RecursiveMode, Watcher};
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long the tree must be quiet before a rebuild: editors write a file in several steps.
pub const DEBOUNCE: Duration = Duration::from_millis(10);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// An item file (site-relative path).
    Item(String),
    /// Another file under content/ (a plain page, an image).
    OtherContent,
    Templates,
    Static,
    Config,
    Ignored,
}

/// What a changed path means for the preview.
pub fn classify(root: &Path, path: &Path) -> Change {
    let Ok(rel) = path.strip_prefix(root) else {
        return Change::Ignored;
    };
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    // Static files may be dotfiles (`.well-known/`); everything else hidden is ignored.
    let in_static = parts.first().is_some_and(|p| p == "static");
    let hidden = |p: &String| {
        if in_static {
            [".git", ".hg", ".svn", ".DS_Store"].contains(&p.as_str())
        } else {
            p.starts_with('.')
        }
    };
    if crate::content::is_editor_temp(&name) || parts.iter().any(hidden) {
        return Change::Ignored;
    }
    match parts.first().map(String::as_str) {
        // A Markdown file in a folder under content/: an item of the collection owning the
        // folder (one no collection owns is simply not in the tree cache).
        Some("content") if parts.len() > 2 && name.ends_with(".md") => {
            Change::Item(parts.join("/"))
        }
        Some("content") => Change::OtherContent,
        Some("templates") => Change::Templates,
        Some("static") => Change::Static,
        Some(CONFIG_FILE) if parts.len() == 1 => Change::Config,
        _ => Change::Ignored,
    }
}

/// Keeps the file watcher alive.
pub struct Watch {
    _watcher: Arc<Mutex<notify::RecommendedWatcher>>,
}

/// The folders watched recursively. The site root itself is watched non-recursively, so their
/// creation and removal are seen and [`Armed::rearm`] can follow them.
pub const WATCHED: [&str; 3] = ["content", "templates", "static"];

/// Which folder is watched as which inode: a folder deleted and created again (a branch
/// switch, a restore) is a new inode whose old watch died with the old one.
#[derive(Default)]
pub struct Armed(std::collections::HashMap<&'static str, Option<u64>>);

impl Armed {
    /// Watches every folder of [`WATCHED`] that exists now and is not yet watched as the inode
    /// it is now. Returns whether anything changed (the caller then rereads everything: files
    /// may have appeared before the new watch existed).
    pub fn rearm(&mut self, root: &Path, watcher: &Mutex<notify::RecommendedWatcher>) -> bool {
        use std::os::unix::fs::MetadataExt;
        let mut changed = false;
        let mut w = watcher.lock().unwrap_or_else(|e| e.into_inner());
        for dir in WATCHED {
            let path = root.join(dir);
            let now = std::fs::metadata(&path)
                .ok()
                .filter(|m| m.is_dir())
                .map(|m| m.ino());
            let before = self.0.get(dir).copied().flatten();
            if now == before {
                continue;
            }
            if before.is_some() {
                let _ = w.unwatch(&path);
            }
            let armed = match now {
                Some(ino) => match w.watch(&path, RecursiveMode::Recursive) {
                    Ok(()) => Some(ino),
                    Err(e) => {
                        tracing::warn!(dir = %path.display(), error = %e, "cannot watch; will retry on the next change");
                        None
                    }
                },
                None => None,
            };
            changed |= armed != before;
            self.0.insert(dir, armed);
        }
        changed
    }
}

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
    crate::serve::run_root(site, clock, Root::Preview(preview), bind, ready)
}

/// Builds the first preview, then rebuilds it on every change until the process ends.
pub fn start(site: Site, clock: Clock) -> Result<(Arc<Preview>, Watch), ServeError> {
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
    let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
    let watcher = notify::recommended_watcher(move |ev| {
        let _ = tx.send(ev);
    })
    .map_err(ServeError::Watch)?;
    let watcher = Arc::new(Mutex::new(watcher));
    let mut armed = Armed::default();
    armed.rearm(&root, &watcher);
    watcher
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .watch(&root, RecursiveMode::NonRecursive)
        .map_err(ServeError::Watch)?;
    let mut looper = Looper {
        site,
        clock,
        cache,
        armed,
        watcher: watcher.clone(),
        preview: preview.clone(),
    };
    std::thread::Builder::new()
        .name("fencepost-watch".into())
        .spawn(move || looper.run(rx))
        .map_err(|source| ServeError::Io {
            path: PathBuf::from("watch thread"),
            source,
        })?;
    Ok((preview, Watch { _watcher: watcher }))
}

/// The watch thread: waits for a change, gathers what follows within [`DEBOUNCE`], then
/// rebuilds what it touched.
struct Looper {
    site: Site,
    clock: Clock,
    cache: TreeCache,
    armed: Armed,
    watcher: Arc<Mutex<notify::RecommendedWatcher>>,
    preview: Arc<Preview>,
}

impl Looper {
    fn run(&mut self, rx: mpsc::Receiver<notify::Result<notify::Event>>) {
        let root = self.site.root.clone();
        let collect = |ev: notify::Result<notify::Event>, changes: &mut Vec<Change>| {
            let Ok(ev) = ev else { return };
            if !matches!(ev.kind, notify::EventKind::Access(_)) {
                let seen = ev.paths.iter().map(|p| classify(&root, p));
                changes.extend(seen.filter(|c| *c != Change::Ignored));
            }
        };
        while let Ok(first) = rx.recv() {
            let mut changes = Vec::new();
            collect(first, &mut changes);
            while let Ok(ev) = rx.recv_timeout(DEBOUNCE) {
                collect(ev, &mut changes);
            }
            // A watched folder created, or deleted and created again: watch it (again) and
            // reread the whole tree, which may have filled before the watch existed.
            if self.armed.rearm(&root, &self.watcher) {
                changes.push(Change::OtherContent);
            }
            if !changes.is_empty() {
                self.apply(&changes);
            }
        }
    }

    /// Forgets what `changes` touched and rebuilds (the site reopened when its config
    /// changed; a config that does not load is shown until it does).
    fn apply(&mut self, changes: &[Change]) {
        for c in changes {
            match c {
                Change::Item(rel) => self.cache.invalidate(rel),
                // An image or plain page, or the config (grace minutes shape the pages).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_changes() {
        let root = Path::new("/site");
        let c = |p: &str| classify(root, &root.join(p));
        assert_eq!(
            c("content/answers/3.md"),
            Change::Item("content/answers/3.md".into())
        );
        assert_eq!(
            c("content/answers/sub/4.md"),
            Change::Item("content/answers/sub/4.md".into())
        );
        assert_eq!(c("content/about.md"), Change::OtherContent);
        assert_eq!(c("content/images/a.png"), Change::OtherContent);
        assert_eq!(c("templates/answer.html"), Change::Templates);
        assert_eq!(c("static/style.css"), Change::Static);
        assert_eq!(c("static/.well-known/security.txt"), Change::Static);
        assert_eq!(c("static/.style.css.swp"), Change::Ignored);
        assert_eq!(c("static/.git/HEAD"), Change::Ignored);
        assert_eq!(c("fencepost.toml"), Change::Config);
        assert_eq!(c("content/answers/.3.md.swp"), Change::Ignored);
        assert_eq!(c("content/answers/3.md~"), Change::Ignored);
        assert_eq!(c("content/answers/4913"), Change::Ignored);
        assert_eq!(c(".fencepost/ledger.sqlite"), Change::Ignored);
        assert_eq!(c("public/current/index.html"), Change::Ignored);
        assert_eq!(
            classify(root, Path::new("/elsewhere/x.md")),
            Change::Ignored
        );
    }
}
