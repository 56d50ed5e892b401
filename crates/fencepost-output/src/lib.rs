//! Finished output under `public/`: complete revision directories, their manifests, and the
//! pointer that names the one being served.
//!
//! ```text
//! public/revisions/<R>-<B>/     a complete tree; in its .fencepost/ (no URL of the site can
//!                               name it, `own.rs`) manifest.json and manifest.idx, its file
//!                               list sorted for lookups without a full parse
//! public/revisions/.tmp-*       a build in progress (never pointed to)
//! public/current -> revisions/<R>-<B>   swapped with rename(2)
//! public/current.json           {"revision": R, "build": B, "dir": "<R>-<B>"}
//! .fencepost/preview/           `build --preview` output, outside `public/` (embargoed pages
//!                               must never ride along with a copy of it); never deployed
//! ```
//!
//! One [`public::Public`] per command owns `public/`; nothing else takes it as a bare path.

pub mod carried;
pub mod id;
pub mod index;
pub mod manifest;
pub mod memory;
pub mod own;
pub mod pointer;
pub mod public;
pub mod revision;

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error("no complete revision {wanted} in {dir} (it may just have been garbage-collected); `ls {dir}` shows what exists")]
    NoSuchRevision { wanted: String, dir: PathBuf },
    #[error("{path} is not a symlink: fencepost keeps the pointer to the live revision there; move that folder or file aside and build again")]
    NotAPointer { path: PathBuf },
    #[error("{public}/current names revision {live}, but the ledger is only at revision {ledger}: the output is ahead of its ledger, so this is not the ledger that built it (lost, emptied, or restored from an older backup). Restore the ledger that built it, or move {public} aside to start the output afresh")]
    AheadOfLedger {
        public: PathBuf,
        live: String,
        ledger: i64,
    },
    #[error("{public} holds revisions built from another ledger (the live one, {dir}, came from ledger {theirs}; this ledger is {ours}). Restore the ledger that built them, or move {public} aside to start the output afresh")]
    ForeignOutput {
        public: PathBuf,
        dir: String,
        theirs: String,
        ours: String,
    },
}

pub(crate) fn io_err(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> OutputError {
    let path = path.into();
    move |source| OutputError::Io { path, source }
}

/// Writes `bytes` to `path` via a temporary sibling, fsync and rename, then fsyncs the folder.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), OutputError> {
    use std::io::Write;
    let dir = path.parent().expect("atomic writes go into a folder");
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().unwrap_or_default().to_string_lossy(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io_err(path))
}
