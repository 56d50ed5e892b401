//! Early links: after one publish nearly every file of the new revision is the previous
//! revision's, hard-linked. Those links are the one cost a self-contained revision directory
//! cannot avoid, so they are made first, on threads of their own, while the snapshot is read
//! and the plan is made — not after.
//!
//! The early links are only a head start, never a decision: the plan still decides every file.
//! A staged file whose key matches the previous revision's is reused as linked; one whose key
//! differs is unlinked and rendered afresh (never written through the link, which would change
//! the previous revision's bytes); one the plan no longer has is removed, with the folders it
//! leaves empty. A link that fails (the previous revision pruned or collected meanwhile) simply
//! leaves the file to the usual path: linked again or rendered from the snapshot.
//!
//! The links are made relative to open directory descriptors (`mkdirat`, `linkat`), so the
//! kernel walks two or three path components per file, not the whole absolute path.

mod spare;

use super::report::{io, BuildError};
use fencepost_output::index;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The previous revision's files linked into the staging directory.
pub(super) struct Prelinked {
    /// The previous revision's paths, sorted by bytes (as the index is).
    paths: Vec<String>,
    /// Whether `paths[i]` is linked into the staging directory now.
    linked: Vec<bool>,
}

/// A walk along the early links' paths (see [`Prelinked::walk`]).
pub(super) struct Walk<'a> {
    of: &'a Prelinked,
    at: usize,
}

impl Walk<'_> {
    /// Whether `path` (no earlier, by bytes, than the path asked before) is linked.
    pub(super) fn linked(&mut self, path: &str) -> bool {
        let paths = &self.of.paths;
        while paths
            .get(self.at)
            .is_some_and(|p| p.as_bytes() < path.as_bytes())
        {
            self.at += 1;
        }
        paths.get(self.at).is_some_and(|p| p == path) && self.of.linked[self.at]
    }
}

/// The two folders links are made between: open descriptors on POSIX (`mkdirat`, `linkat`:
/// a name or two resolved per file), paths elsewhere.
struct Between {
    #[cfg(unix)]
    from: std::os::fd::OwnedFd,
    #[cfg(unix)]
    to: std::os::fd::OwnedFd,
    #[cfg(not(unix))]
    from: PathBuf,
    #[cfg(not(unix))]
    to: PathBuf,
}

impl Between {
    fn open(from: &Path, to: &Path) -> Option<Between> {
        #[cfg(unix)]
        {
            let open = |p: &Path| {
                rustix::fs::open(
                    p,
                    fencepost_core::item::lookup_dir_flags(),
                    rustix::fs::Mode::empty(),
                )
                .ok()
            };
            Some(Between {
                from: open(from)?,
                to: open(to)?,
            })
        }
        #[cfg(not(unix))]
        {
            (from.is_dir() && to.is_dir()).then(|| Between {
                from: from.to_path_buf(),
                to: to.to_path_buf(),
            })
        }
    }

    /// Makes folder `d` in the destination; one that cannot be made leaves its files
    /// unlinked (they take the usual path).
    fn mkdir(&self, d: &str) {
        #[cfg(unix)]
        let _ = rustix::fs::mkdirat(&self.to, d, rustix::fs::Mode::from_raw_mode(0o777));
        #[cfg(not(unix))]
        let _ = std::fs::create_dir(self.to.join(d));
    }

    /// Links file `p` of the source into the destination; whether it was linked.
    fn link(&self, p: &str) -> bool {
        #[cfg(unix)]
        {
            rustix::fs::linkat(&self.from, p, &self.to, p, rustix::fs::AtFlags::empty()).is_ok()
        }
        #[cfg(not(unix))]
        {
            std::fs::hard_link(self.from.join(p), self.to.join(p)).is_ok()
        }
    }
}

/// Every folder above the files in `paths`, parents before children (by depth, then name).
fn folders(paths: &[String]) -> Vec<&str> {
    let mut out: Vec<(usize, &str)> = Vec::new();
    for p in paths {
        let mut end = 0;
        let mut depth = 0;
        while let Some(i) = p[end..].find('/') {
            out.push((depth, &p[..end + i]));
            end += i + 1;
            depth += 1;
        }
    }
    out.sort_unstable();
    out.dedup();
    out.into_iter().map(|(_, f)| f).collect()
}

/// The order to link `paths` in: by how many of `folders` (made in that order) must exist
/// first. Returns (that count, index into `paths`), sorted.
fn link_order(paths: &[String], folders: &[&str]) -> Vec<(u32, u32)> {
    let position: HashMap<&str, u32> = folders
        .iter()
        .enumerate()
        .map(|(i, f)| (*f, i as u32 + 1))
        .collect();
    let mut order: Vec<(u32, u32)> = paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let need = p.rsplit_once('/').map_or(0, |(dir, _)| position[dir]);
            (need, i as u32)
        })
        .collect();
    order.sort_unstable();
    order
}

/// Early links in progress on a thread of their own. Dropping it waits for them, so the
/// staging directory is never removed while links are still being made in it.
pub(super) struct Early(Option<std::thread::JoinHandle<std::io::Result<Prelinked>>>);

impl Early {
    /// Starts linking `prev`'s files into `staging`: an empty folder, or (`spare`) the tree
    /// of a revision gc set aside, changed where it differs (`prelink/spare.rs`).
    pub(super) fn start(prev: PathBuf, staging: PathBuf, spare: bool) -> Early {
        Early(Some(std::thread::spawn(move || match spare {
            true => Prelinked::patch(&prev, &staging),
            false => Ok(Prelinked::link(&prev, &staging)),
        })))
    }

    /// The links, once all are made. An error: a spare could not be made into the previous
    /// revision's tree nor cleared (the folder must not become a revision).
    pub(super) fn wait(mut self) -> std::io::Result<Prelinked> {
        let h = self.0.take().expect("waited once");
        h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

impl Drop for Early {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

/// Makes a tree: `mkdir` over `folders` in order on one thread, while the other cores `link`
/// the files (`order`, from [`link_order`]) whose folders exist already; that thread then
/// links too. Folders are made by one thread because makes in one parent folder (100,000
/// answer folders in `answers/`) take turns on its lock anyway: two threads mostly spin, and
/// the other core is better spent linking. About a fifth faster than folders one depth at a
/// time on every core, then the links (0.41–0.44 s against 0.52–0.61 s for 101,000 files and
/// as many folders, alternating runs).
/// Returns, per file index, whether `link` succeeded.
fn make_tree(
    folders: &[&str],
    order: &[(u32, u32)],
    mkdir: impl Fn(&str) + Sync,
    link: impl Fn(usize) -> bool + Sync,
) -> Vec<bool> {
    const CHUNK: usize = 256;
    let made = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    let linked: Vec<AtomicBool> = (0..order.len()).map(|_| AtomicBool::new(false)).collect();
    let link_all = || loop {
        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
        if start >= order.len() {
            break;
        }
        let part = &order[start..(start + CHUNK).min(order.len())];
        let need = part.last().map_or(0, |(n, _)| *n as usize);
        while made.load(Ordering::Acquire) < need {
            std::thread::yield_now();
        }
        for &(_, i) in part {
            if link(i as usize) {
                linked[i as usize].store(true, Ordering::Relaxed);
            }
        }
    };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Marks every folder made when the folder loop ends, even by a panic, so no linking
    // thread waits forever (the panic then reaches the caller through the scope).
    struct AllMade<'a>(&'a AtomicUsize, usize);
    impl Drop for AllMade<'_> {
        fn drop(&mut self) {
            self.0.store(self.1, Ordering::Release);
        }
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            {
                let _all = AllMade(&made, folders.len());
                for (i, f) in folders.iter().enumerate() {
                    mkdir(f);
                    if i % 64 == 63 {
                        made.store(i + 1, Ordering::Release);
                    }
                }
            }
            link_all();
        });
        for _ in 1..cores {
            s.spawn(link_all);
        }
    });
    linked.into_iter().map(AtomicBool::into_inner).collect()
}

impl Prelinked {
    /// Links every file `prev`'s index lists into `staging` (an empty directory). Nothing is
    /// linked from a revision without an index (built before indexes) or one that cannot be
    /// read: every file then takes the usual path.
    pub(super) fn link(prev: &Path, staging: &Path) -> Prelinked {
        let nothing = Prelinked {
            paths: Vec::new(),
            linked: Vec::new(),
        };
        let Ok(Some(mut paths)) = index::paths(prev) else {
            return nothing;
        };
        // The index is a file on disk like any other: a path that would leave the output
        // folder (absolute, `..`) is never linked, nor later removed.
        paths.retain(|p| super::plan::safe_rel(p));
        let Some(between) = Between::open(prev, staging) else {
            return nothing;
        };
        let dirs = folders(&paths);
        let order = link_order(&paths, &dirs);
        let linked = make_tree(
            &dirs,
            &order,
            |d| between.mkdir(d),
            |i| between.link(paths[i].as_str()),
        );
        Prelinked { paths, linked }
    }

    fn position(&self, path: &str) -> Option<usize> {
        self.paths
            .binary_search_by(|p| p.as_bytes().cmp(path.as_bytes()))
            .ok()
    }

    /// Whether `path` is linked into the staging directory.
    pub(super) fn contains(&self, path: &str) -> bool {
        self.position(path).is_some_and(|i| self.linked[i])
    }

    /// Early links as given (`paths` sorted by bytes), for tests of what reads them.
    #[cfg(test)]
    pub(super) fn of(paths: Vec<String>, linked: Vec<bool>) -> Prelinked {
        Prelinked { paths, linked }
    }

    /// [`Prelinked::contains`] for paths asked in order (by bytes), each answered by moving
    /// along the sorted list rather than searching it.
    pub(super) fn walk(&self) -> Walk<'_> {
        Walk { of: self, at: 0 }
    }

    pub(super) fn count(&self) -> usize {
        self.linked.iter().filter(|l| **l).count()
    }

    /// Removes the linked files the plan does not have (`planned`: this revision's paths,
    /// sorted) but those under folder `left` (a later step's to decide), then the folders that
    /// leaves empty. Returns how many files went.
    pub(super) fn remove_unplanned<'a>(
        &mut self,
        staging: &Path,
        planned: impl Iterator<Item = &'a str>,
        left: Option<&str>,
    ) -> Result<usize, BuildError> {
        let left = left.map(|d| format!("{d}/"));
        let mut planned = planned.peekable();
        let mut emptied: Vec<&str> = Vec::new();
        let mut removed = 0;
        for (path, linked) in self.paths.iter().zip(self.linked.iter_mut()) {
            while planned
                .peek()
                .is_some_and(|p| p.as_bytes() < path.as_bytes())
            {
                planned.next();
            }
            if !*linked || planned.peek() == Some(&path.as_str()) {
                continue;
            }
            if left.as_ref().is_some_and(|d| path.starts_with(d.as_str())) {
                continue;
            }
            let file = staging.join(path);
            std::fs::remove_file(&file).map_err(io(&file))?;
            *linked = false;
            removed += 1;
            let mut p = path.as_str();
            while let Some((parent, _)) = p.rsplit_once('/') {
                emptied.push(parent);
                p = parent;
            }
        }
        // Deepest first; a folder that still holds something stays.
        emptied.sort_unstable_by(|a, b| {
            (b.matches('/').count(), *b).cmp(&(a.matches('/').count(), *a))
        });
        emptied.dedup();
        for d in emptied {
            let _ = std::fs::remove_dir(staging.join(d));
        }
        Ok(removed)
    }

    /// Unlinks the staged link at `path` (before a new file takes its place), so the previous
    /// revision's bytes are never written through it.
    pub(super) fn unlink(&self, staging: &Path, path: &str) -> Result<(), BuildError> {
        if !self.contains(path) {
            return Ok(());
        }
        let file: PathBuf = staging.join(path);
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(BuildError::Io {
                path: file,
                source: e,
            }),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_come_parents_first_once_each() {
        let paths: Vec<String> = ["a/b/c.html", "a/b/d.html", "a/e.html", "f.html", "g/h/i/j"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(folders(&paths), vec!["a", "g", "a/b", "g/h", "g/h/i"]);
    }

    #[test]
    fn files_are_linked_only_once_their_folder_is_made() {
        let mut paths: Vec<String> = (0..3000)
            .map(|i| format!("answers/{i}/index.html"))
            .chain((0..50).map(|i| format!("a/b/c{i}/d/e.txt")))
            .chain(["top.html".to_string()])
            .collect();
        paths.sort();
        let dirs = folders(&paths);
        let order = link_order(&paths, &dirs);
        assert_eq!(order.len(), paths.len());
        let made = std::sync::Mutex::new(std::collections::HashSet::new());
        let linked = make_tree(
            &dirs,
            &order,
            |d| {
                // Slower than linking, as a real mkdir in a crowded folder is, so the linking
                // threads catch up with it and must wait.
                std::thread::sleep(std::time::Duration::from_micros(20));
                let mut m = made.lock().unwrap();
                if let Some((parent, _)) = d.rsplit_once('/') {
                    assert!(m.contains(parent), "{d} before {parent}");
                }
                m.insert(d.to_string());
            },
            |i| {
                let p = &paths[i];
                p.rsplit_once('/')
                    .is_none_or(|(dir, _)| made.lock().unwrap().contains(dir))
            },
        );
        assert!(
            linked.iter().all(|l| *l),
            "a file was linked before its folder"
        );
        // A file whose link fails is reported as not linked.
        let linked = make_tree(&dirs, &order, |_| {}, |i| paths[i] != "top.html");
        let top = paths.iter().position(|p| p == "top.html").unwrap();
        assert!(!linked[top] && linked.iter().filter(|l| !**l).count() == 1);
    }

    #[test]
    #[should_panic(expected = "a scoped thread panicked")]
    fn a_panic_while_making_folders_reaches_the_caller_instead_of_hanging() {
        let paths: Vec<String> = (0..1000).map(|i| format!("d{i}/f")).collect();
        let dirs = folders(&paths);
        let order = link_order(&paths, &dirs);
        make_tree(&dirs, &order, |_| panic!("mkdir failed"), |_| true);
    }

    fn tree(root: &Path, files: &[&str]) {
        for f in files {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, f.as_bytes()).unwrap();
        }
    }

    fn listing(root: &Path) -> Vec<String> {
        let mut out: Vec<String> = walkdir::WalkDir::new(root)
            .min_depth(1)
            .into_iter()
            .map(|e| {
                let e = e.unwrap();
                let rel = e.path().strip_prefix(root).unwrap().display().to_string();
                if e.file_type().is_dir() {
                    format!("{rel}/")
                } else {
                    rel
                }
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn links_the_previous_tree_then_removes_what_the_plan_dropped() {
        use fencepost_output::manifest::{CacheClass, Entry, Manifest};
        let t = tempfile::tempdir().unwrap();
        let (prev, staging) = (t.path().join("prev"), t.path().join("staging"));
        let files = [
            "a/1/index.html",
            "a/2/index.html",
            "b/x/y/z.txt",
            "index.html",
        ];
        tree(&prev, &files);
        let manifest = Manifest::of_files(
            files
                .iter()
                .map(|f| Entry {
                    path: f.to_string(),
                    sha256: "0".repeat(64),
                    bytes: 1,
                    content_type: "text/html".into(),
                    cache: CacheClass::Content,
                    max_age: 0,
                    key: "k".into(),
                    links: Vec::new(),
                    location: None,
                })
                .collect(),
        );
        std::fs::write(prev.join(index::FILE), index::to_bytes(&manifest)).unwrap();
        std::fs::create_dir(&staging).unwrap();
        let mut pre = Prelinked::link(&prev, &staging);
        assert_eq!(pre.count(), 4);
        assert!(pre.contains("b/x/y/z.txt") && !pre.contains("b/x"));
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            std::fs::metadata(staging.join("a/1/index.html"))
                .unwrap()
                .ino(),
            std::fs::metadata(prev.join("a/1/index.html"))
                .unwrap()
                .ino()
        );
        // The plan keeps a/1 and index.html and adds c.html: a/2 and b/x/y/z.txt go, with
        // the folders they leave empty.
        let removed = pre
            .remove_unplanned(
                &staging,
                ["a/1/index.html", "c.html", "index.html"].into_iter(),
                None,
            )
            .unwrap();
        assert_eq!(removed, 2);
        assert_eq!(
            listing(&staging),
            vec!["a/", "a/1/", "a/1/index.html", "index.html"]
        );
        assert!(!pre.contains("a/2/index.html"));
        // A file about to be rendered anew is unlinked first; the previous bytes stay.
        pre.unlink(&staging, "index.html").unwrap();
        std::fs::write(staging.join("index.html"), b"new").unwrap();
        assert_eq!(
            std::fs::read(prev.join("index.html")).unwrap(),
            b"index.html"
        );
        assert_eq!(listing(&prev).len(), 11);
    }

    #[test]
    fn paths_that_would_leave_the_folder_are_never_linked() {
        let t = tempfile::tempdir().unwrap();
        // Deeper than the staging folder, so "../x.html" names a file beside the previous
        // revision and, from the staging folder, a new one at the top of the temp dir.
        let (prev, staging) = (t.path().join("d1/d2/prev"), t.path().join("staging"));
        tree(&prev, &["ok.html"]);
        std::fs::write(t.path().join("d1/d2/x.html"), b"x").unwrap();
        std::fs::write(
            prev.join(index::FILE),
            "fencepost-index 1\n\"../x.html\"\t0\t1\tcontent\ttext/html\n\"ok.html\"\t0\t1\tcontent\ttext/html\n",
        )
        .unwrap();
        std::fs::create_dir(&staging).unwrap();
        let mut pre = Prelinked::link(&prev, &staging);
        assert_eq!(pre.count(), 1);
        assert!(
            !t.path().join("x.html").exists(),
            "a link escaped the staging folder"
        );
        pre.remove_unplanned(&staging, std::iter::empty(), None)
            .unwrap();
        assert!(t.path().join("d1/d2/x.html").exists());
        assert!(!staging.join("ok.html").exists());
    }

    #[test]
    fn a_vanished_previous_revision_links_nothing_and_fails_nothing() {
        let t = tempfile::tempdir().unwrap();
        let staging = t.path().join("staging");
        std::fs::create_dir(&staging).unwrap();
        let pre = Prelinked::link(&t.path().join("gone"), &staging);
        assert_eq!(pre.count(), 0);
    }
}
