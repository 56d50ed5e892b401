//! One file watcher over a site's sources, shared by the editor's preview (`serve --watch`)
//! and `fencepost run`: `content/`, `templates/`, `static/`, `sass/` and `data/` recursively, and the site root
//! itself non-recursively, so `fencepost.toml` and the creation or replacement of a watched
//! folder are seen. File events become a small set of [`Change`]s (a pure, tested function),
//! a quiet period debounces a burst of saves, and the caller is handed each batch.
//!
//! Why one: the two watchers had drifted apart — `run` woke on editor swap files the preview
//! ignored, and the re-arming of a recreated folder was written twice. Now what counts as a
//! change, and how a replaced folder is followed, is decided here once.

use fencepost_config::CONFIG_FILE;
use notify::{RecursiveMode, Watcher};
use std::path::{Component, Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How long the tree must be quiet before a batch is handed on: editors write a file in
/// several steps.
pub const DEBOUNCE: Duration = Duration::from_millis(10);

/// The folders watched recursively. The site root itself is watched non-recursively, so their
/// creation and removal are seen and followed (a folder replaced is watched again).
pub const WATCHED: [&str; 6] = ["content", "templates", "static", "sass", "data", "i18n"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// An item file (site-relative path).
    Item(String),
    /// Another file under content/ (a plain page, an image), or a watched folder created or
    /// replaced: everything under it may be new.
    OtherContent,
    Templates,
    Static,
    Config,
    Ignored,
}

/// What a changed path means for the site.
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
    if fencepost_site::content::is_editor_temp(&name) || parts.iter().any(hidden) {
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
        // A stylesheet's source is a static file once compiled (`build/sass.rs`); a data file
        // is read by templates (`load_data`) as a static file may be.
        Some("static" | "sass" | "data" | "i18n") => Change::Static,
        Some(CONFIG_FILE) if parts.len() == 1 => Change::Config,
        _ => Change::Ignored,
    }
}

/// Which folder is watched as which inode: a folder deleted and created again (a branch
/// switch, a restore) is a new inode whose old watch died with the old one.
#[derive(Default)]
struct Armed(std::collections::HashMap<&'static str, Option<(u64, u64)>>);

impl Armed {
    /// Watches every folder of [`WATCHED`] that exists now and is not yet watched as the inode
    /// it is now. Returns whether anything changed (the caller then rereads everything: files
    /// may have appeared before the new watch existed).
    fn rearm(&mut self, root: &Path, watcher: &Mutex<notify::RecommendedWatcher>) -> bool {
        let mut changed = false;
        let mut w = watcher.lock().unwrap_or_else(|e| e.into_inner());
        for dir in WATCHED {
            let path = root.join(dir);
            let now = std::fs::metadata(&path)
                .ok()
                .filter(|m| m.is_dir())
                .map(|m| fencepost_core::os::file_id(&m));
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

/// A running watcher: the watch lasts as long as this value does.
pub struct SiteWatch {
    _watcher: Arc<Mutex<notify::RecommendedWatcher>>,
}

/// Watches the site at `root` (made absolute: `cd site && fencepost run` names it `.`, and
/// events carry the paths the watcher resolved) and hands `on_changes` every debounced batch
/// that changes something, on a thread of its own, until the [`SiteWatch`] is dropped.
pub fn start(
    root: &Path,
    mut on_changes: impl FnMut(&[Change]) + Send + 'static,
) -> Result<SiteWatch, notify::Error> {
    let root: PathBuf = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
    let watcher = notify::recommended_watcher(move |ev| {
        let _ = tx.send(ev);
    })?;
    let watcher = Arc::new(Mutex::new(watcher));
    let mut armed = Armed::default();
    armed.rearm(&root, &watcher);
    watcher
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .watch(&root, RecursiveMode::NonRecursive)?;
    // The thread holds the watcher weakly: dropping the SiteWatch ends the watch, which
    // closes the channel and so the thread.
    let weak = Arc::downgrade(&watcher);
    let spawned = std::thread::Builder::new()
        .name("fencepost-watch".into())
        .spawn(move || {
            while let Some(changes) = next_batch(&rx, &root, || {
                weak.upgrade().is_some_and(|w| armed.rearm(&root, &w))
            }) {
                if !changes.is_empty() {
                    on_changes(&changes);
                }
            }
        });
    if let Err(e) = spawned {
        return Err(notify::Error::io(e));
    }
    Ok(SiteWatch { _watcher: watcher })
}

/// Waits for a change, gathers what follows within [`DEBOUNCE`], and re-arms the watched
/// folders (a folder created or replaced counts as [`Change::OtherContent`]). None once the
/// watcher is gone.
fn next_batch(
    rx: &mpsc::Receiver<notify::Result<notify::Event>>,
    root: &Path,
    mut rearm: impl FnMut() -> bool,
) -> Option<Vec<Change>> {
    let collect = |ev: notify::Result<notify::Event>, changes: &mut Vec<Change>| {
        let Ok(ev) = ev else { return };
        if !matches!(ev.kind, notify::EventKind::Access(_)) {
            let seen = ev.paths.iter().map(|p| classify(root, p));
            changes.extend(seen.filter(|c| *c != Change::Ignored));
        }
    };
    let first = rx.recv().ok()?;
    let mut changes = Vec::new();
    collect(first, &mut changes);
    while let Ok(ev) = rx.recv_timeout(DEBOUNCE) {
        collect(ev, &mut changes);
    }
    if rearm() {
        changes.push(Change::OtherContent);
    }
    Some(changes)
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
        assert_eq!(c("sass/site.scss"), Change::Static);
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

    /// A burst of events is one batch; a watched folder created meanwhile adds a reread.
    #[test]
    fn a_burst_is_one_batch_and_a_rearm_asks_for_a_reread() {
        let root = Path::new("/site");
        let (tx, rx) = mpsc::channel();
        let ev = |p: &str| {
            Ok(
                notify::Event::new(notify::EventKind::Modify(notify::event::ModifyKind::Any))
                    .add_path(root.join(p)),
            )
        };
        tx.send(ev("content/answers/1.md")).unwrap();
        tx.send(ev("content/answers/.1.md.swp")).unwrap();
        tx.send(ev("templates/base.html")).unwrap();
        let batch = next_batch(&rx, root, || false).unwrap();
        assert_eq!(
            batch,
            vec![
                Change::Item("content/answers/1.md".into()),
                Change::Templates
            ]
        );
        tx.send(ev("elsewhere")).unwrap();
        assert_eq!(
            next_batch(&rx, root, || true).unwrap(),
            vec![Change::OtherContent]
        );
        drop(tx);
        assert_eq!(next_batch(&rx, root, || false), None);
    }
}
