//! The manifest of the revision a long-lived process built last, read ahead of its next build:
//! once the revision is in place, a thread reads its `manifest.json` lazily
//! (`fencepost_output::carried`, ~60 ms at 100,000 entries) while the process waits for
//! the next instant, so that build finds it read. Read on the next build's own reader thread
//! instead, it sat on that build's path: `run`'s one-item builds at 100,000 took 374 → 408 ms
//! at the median (15 cycles each, interleaved) without this.
//!
//! Only a cache of the file: it belongs to one revision folder and one `manifest.json` (its
//! device, inode, length and modification time, taken before the read); a folder rebuilt in
//! place, or a previous revision that is not that folder (another host built meanwhile), is
//! read from disk by the build as usual.

use fencepost_output::carried::Carried;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

/// What tells one `manifest.json` from another written in its place.
#[derive(PartialEq, Eq)]
struct Stamp {
    id: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(dir: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(fencepost_output::own::manifest(dir)).ok()?;
        #[cfg(unix)]
        let id = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let id = (0, 0);
        Some(Stamp {
            id,
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

/// Revision folder `dir`'s manifest, being read (or read) on a thread of its own.
pub(super) struct Kept {
    pub(super) dir: PathBuf,
    reading: JoinHandle<Option<(Stamp, Carried)>>,
}

impl Kept {
    /// Starts reading `dir`'s manifest; stamped before it is read, so a file replaced
    /// meanwhile reads as changed.
    pub(super) fn read(dir: PathBuf) -> Kept {
        let d = dir.clone();
        let reading = std::thread::spawn(move || {
            let stamp = Stamp::of(&d)?;
            let carried = Carried::read(&d).ok()?;
            Some((stamp, carried))
        });
        Kept { dir, reading }
    }

    /// The manifest, when it is `dir`'s and its file is still the one read.
    pub(super) fn take(self, dir: Option<&Path>) -> Option<(PathBuf, Carried)> {
        if Some(self.dir.as_path()) != dir {
            return None;
        }
        let (stamp, carried) = self.reading.join().ok()??;
        (Stamp::of(&self.dir).as_ref() == Some(&stamp)).then_some((self.dir, carried))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencepost_output::manifest::{CacheClass, Entry, Manifest};

    fn write(dir: &Path, key: &str) {
        let m = Manifest::of_files(vec![Entry {
            path: "index.html".into(),
            sha256: "0".repeat(64),
            bytes: 1,
            content_type: "text/html; charset=utf-8".into(),
            cache: CacheClass::Home,
            max_age: 0,
            key: key.into(),
            links: Vec::new(),
            location: None,
        }]);
        // As a build writes a revision's manifest: a new file, renamed into place.
        let tmp = dir.join("manifest.json.tmp");
        std::fs::write(&tmp, m.to_bytes()).unwrap();
        std::fs::rename(&tmp, dir.join(fencepost_output::manifest::FILE)).unwrap();
    }

    /// What was read ahead is handed on only for its folder, and only while that folder's
    /// `manifest.json` is the file that was read: one replaced since (a folder rebuilt in
    /// place) is read again by the build, never answered from the old contents.
    #[test]
    fn a_manifest_read_ahead_is_used_only_while_it_is_the_folders_file() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("3-b");
        std::fs::create_dir(&dir).unwrap();
        write(&dir, "first");
        let (_, carried) = Kept::read(dir.clone())
            .take(Some(&dir))
            .expect("read ahead");
        assert_eq!(carried.key(0), "first");
        assert!(Kept::read(dir.clone()).take(Some(t.path())).is_none());
        assert!(Kept::read(dir.clone()).take(None).is_none());
        let kept = Kept::read(dir.clone());
        // Let the read finish first, so the file is replaced after it.
        std::thread::sleep(std::time::Duration::from_millis(50));
        write(&dir, "second");
        match kept.take(Some(&dir)) {
            None => {}
            Some((_, c)) => assert_eq!(c.key(0), "second", "the old contents were handed on"),
        }
    }
}
