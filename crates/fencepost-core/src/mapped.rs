//! A file's bytes, mapped rather than copied: for the few large files a build reads whole
//! and only reads — the live revision's `manifest.json` and `manifest.idx`, a spare's index,
//! the saved page rows (`build-pages.bin`). After one publish at 10,000 items these are ~8 MB
//! a build would otherwise copy into fresh memory, each 4 KiB page of it faulted in and
//! zeroed by the kernel first (~1.5 µs a page on the 2-core machines we measure on) and torn
//! down again at exit; a mapping of a file the page cache holds costs ~0.1 µs a page
//! (`read`: 1.8–2.9 ms for a 4 MB manifest, mapped: 0.23–0.48 ms).
//!
//! What a mapping risks, and why it is taken here: it shows the file as it is, so a file
//! rewritten in place while mapped changes under its reader, and one truncated makes a read
//! past its new end fault (`SIGBUS`). Fencepost never rewrites these files: each is written
//! under a temporary name and renamed into place, a revision's files never change after its
//! folder is renamed into `public/revisions/`, and a file replaced by a rename leaves a
//! mapping on the old one. What is read is checked as ever (a manifest as UTF-8 and JSON, an
//! index by its header and lines, the saved rows by their SHA-256). Only a program editing
//! those files in place while a build reads them could upset it, and a build killed by that
//! fault leaves nothing half-done (its steps assume interruption).
//!
//! Small files are read (a mapping costs a few system calls of its own), and a file that
//! cannot be mapped (a special file, a filesystem without `mmap`) is read as before. Windows
//! reads them all: a file mapped there cannot be removed or renamed over, and a build removes
//! a spare's `manifest.idx` while it still holds what it read of it.
//! Rejected: `MAP_POPULATE` (measured no faster for these sizes: the pages are touched once,
//! in order, and the kernel maps them around each fault).

use std::io;
use std::ops::Deref;
use std::path::Path;

/// Files under this size are read, not mapped.
const MAP_FROM: u64 = 64 * 1024;

/// A file's bytes: read into memory, or mapped.
pub enum FileBytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Read(v) => v,
            FileBytes::Mapped(m) => m,
        }
    }
}

impl From<Vec<u8>> for FileBytes {
    fn from(v: Vec<u8>) -> FileBytes {
        FileBytes::Read(v)
    }
}

/// The bytes of the file at `path` (see the module doc for when it is mapped).
pub fn read(path: &Path) -> io::Result<FileBytes> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    // Not on Windows: there a mapped file cannot be removed or replaced while the mapping
    // lives, and a build removes a spare's index while it still holds its bytes.
    if cfg!(unix) && len >= MAP_FROM {
        // SAFETY: the mapping is read-only and private; the files read through here are never
        // changed in place by fencepost (see the module doc), and every byte read is checked
        // by its reader as it would be after a `read`.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&file) } {
            return Ok(FileBytes::Mapped(m));
        }
    }
    let mut v = Vec::with_capacity(len as usize);
    io::Read::read_to_end(&mut &file, &mut v)?;
    Ok(FileBytes::Read(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_files_are_mapped_small_ones_read_and_both_give_the_bytes() {
        let d = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..MAP_FROM as usize + 7)
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(d.path().join("big"), &big).unwrap();
        std::fs::write(d.path().join("small"), b"small").unwrap();
        let b = read(&d.path().join("big")).unwrap();
        assert_eq!(matches!(b, FileBytes::Mapped(_)), cfg!(unix));
        assert_eq!(&*b, &big[..]);
        let s = read(&d.path().join("small")).unwrap();
        assert!(matches!(s, FileBytes::Read(_)));
        assert_eq!(&*s, b"small");
        // Replaced by a rename while mapped: the mapping keeps the old file's bytes.
        std::fs::write(d.path().join("new"), b"other").unwrap();
        std::fs::rename(d.path().join("new"), d.path().join("big")).unwrap();
        assert_eq!(&*b, &big[..]);
        let e = read(&d.path().join("missing")).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
