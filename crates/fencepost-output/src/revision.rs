//! Revision directories: written under a temporary name held by a lock file, renamed into
//! place only when complete. A temporary directory whose lock nobody holds belongs to a
//! build that died; the next build removes it.

use super::carried::Listing;
use super::id::RevisionId;
use super::manifest;
use super::{io_err, OutputError};
use std::fs::File;
use std::path::{Path, PathBuf};

pub const REVISIONS: &str = "revisions";
const TMP_PREFIX: &str = ".tmp-";

/// A complete revision directory: named `<R>-<B>` and holding its manifest (in its own
/// folder, or at its root where an earlier release wrote it).
pub fn is_complete(dir: &Path) -> bool {
    super::own::manifest(dir).is_file()
}

/// A revision being written. Dropping it without [`Staging::finish`] removes it.
pub struct Staging {
    pub path: PathBuf,
    lock_path: PathBuf,
    _lock: File,
    done: bool,
}

impl Staging {
    /// A staging folder for revision `name` in `public/revisions/`.
    pub fn create(public: &Path, name: &str) -> Result<Staging, OutputError> {
        Staging::create_in(&public.join(REVISIONS), name)
    }

    /// A staging folder for `name` in `revisions` (a folder of its own: the preview's is the
    /// site's state folder).
    pub fn create_in(revisions: &Path, name: &str) -> Result<Staging, OutputError> {
        let staging = Staging::locked_in(revisions, name)?;
        std::fs::create_dir(&staging.path).map_err(io_err(&staging.path))?;
        Ok(staging)
    }

    /// [`Staging::create`], the folder being `public`'s spare (see [`set_aside_as_spare`])
    /// when there still is one: a tree of the revision it was, for the caller to make into
    /// this one. Returns whether it took the spare (else the folder is empty). Taking it is
    /// one rename: of builds and a gc reaching for the same spare, one gets it.
    pub fn create_from_spare(public: &Path, name: &str) -> Result<(Staging, bool), OutputError> {
        let staging = Staging::locked_in(&public.join(REVISIONS), name)?;
        if let Some(spare) = spare(public) {
            if std::fs::rename(&spare, &staging.path).is_ok() {
                fencepost_core::fail_point!("build.after_spare_taken");
                return Ok((staging, true));
            }
        }
        std::fs::create_dir(&staging.path).map_err(io_err(&staging.path))?;
        Ok((staging, false))
    }

    /// A staging folder's name in `revisions` and its lock, held; the folder not made yet.
    fn locked_in(revisions: &Path, name: &str) -> Result<Staging, OutputError> {
        let revisions = revisions.to_path_buf();
        std::fs::create_dir_all(&revisions).map_err(io_err(&revisions))?;
        let tmp = format!("{TMP_PREFIX}{name}-{}", uuid::Uuid::new_v4().simple());
        let lock_path = revisions.join(format!("{tmp}.lock"));
        let lock = File::create(&lock_path).map_err(io_err(&lock_path))?;
        lock.lock().map_err(io_err(&lock_path))?;
        Ok(Staging {
            path: revisions.join(&tmp),
            lock_path,
            _lock: lock,
            done: false,
        })
    }

    /// Writes the manifest, flushes the file system, and renames the directory to
    /// `revisions/<name>`. Returns false if another build finished the same revision first.
    pub fn finish(mut self, manifest: &dyn Listing, name: &str) -> Result<bool, OutputError> {
        write_manifest(&self.path, manifest)?;
        sync_filesystem(&self.path).map_err(io_err(&self.path))?;
        fencepost_core::fail_point!("build.before_rename");
        let target = self.path.parent().expect("under revisions/").join(name);
        let moved = match std::fs::rename(&self.path, &target) {
            Ok(()) => true,
            // Another build renamed the same <R>-<B> into place first: equal by construction.
            Err(e) if target.exists() && is_complete(&target) => {
                tracing::debug!(error = %e, "revision already in place");
                false
            }
            Err(e) => {
                return Err(OutputError::Io {
                    path: target,
                    source: e,
                })
            }
        };
        if moved {
            std::fs::File::open(target.parent().unwrap())
                .and_then(|d| d.sync_all())
                .map_err(io_err(&target))?;
            self.done = true;
        }
        Ok(moved)
    }
}

impl Staging {
    /// Writes the manifest and puts the directory in place of the complete revision folder
    /// `name` (set aside first, removed after): a folder re-issued with more than it had (a
    /// site's transparency log appended to by a rollback). Not for a live folder: between the
    /// two renames `name` does not exist.
    pub fn replace_revision(self, manifest: &dyn Listing, name: &str) -> Result<(), OutputError> {
        let revisions = self.path.parent().expect("under revisions/").to_path_buf();
        let dir = revisions.join(name);
        let aside = revisions.join(format!(
            "{TRASH_PREFIX}{name}-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::rename(&dir, &aside).map_err(io_err(&dir))?;
        if !self.finish(manifest, name)? {
            return Err(OutputError::Io {
                path: dir,
                source: std::io::Error::other("a folder appeared where the old one was set aside"),
            });
        }
        std::fs::remove_dir_all(&aside).map_err(io_err(&aside))
    }

    /// Writes the manifest and exchanges the directory with the complete revision folder
    /// `name` in one step ([`fencepost_core::os::exchange_dirs`]), then removes the old one:
    /// for a live folder re-issued with more than it had (the site's log grew since it was
    /// built, and the same revision is built again). A reader resolving `public/current`
    /// finds a complete folder at every moment; an origin holding the old one open notices
    /// the new folder by its identity and loads it.
    pub fn exchange_revision(
        mut self,
        manifest: &dyn Listing,
        name: &str,
    ) -> Result<(), OutputError> {
        write_manifest(&self.path, manifest)?;
        sync_filesystem(&self.path).map_err(io_err(&self.path))?;
        let target = self.path.parent().expect("under revisions/").join(name);
        fencepost_core::os::exchange_dirs(&self.path, &target).map_err(io_err(&target))?;
        // `self.path` now holds the old folder: dropped, it is removed.
        let old = self.path.clone();
        std::fs::remove_dir_all(&old).map_err(io_err(&old))?;
        self.done = true;
        Ok(())
    }

    /// Writes the manifest and puts the directory at `target`, replacing what was there
    /// (used for the preview, which nothing points to). `target` is beside the staging
    /// folder (see [`Staging::create_in`]), so the renames stay on one file system.
    pub fn replace(mut self, manifest: &dyn Listing, target: &Path) -> Result<(), OutputError> {
        write_manifest(&self.path, manifest)?;
        let old = target.with_file_name(format!(".old-{}", uuid::Uuid::new_v4().simple()));
        let had_old = target.exists();
        if had_old {
            std::fs::rename(target, &old).map_err(io_err(target))?;
        }
        std::fs::rename(&self.path, target).map_err(io_err(target))?;
        self.done = true;
        if had_old {
            std::fs::remove_dir_all(&old).map_err(io_err(&old))?;
        }
        Ok(())
    }
}

/// The index and the manifest, side by side; the folder is renamed into place only after
/// both are written (a directory with a manifest is complete, index and all). Each is written
/// chunk by chunk or as it is made ([`Listing::write_json`]), not gathered into one buffer
/// first (a 100,000-file revision's manifest is ~40 MB: the copy and the buffer's growth were
/// half of this step).
fn write_manifest(dir: &Path, manifest: &dyn Listing) -> Result<(), OutputError> {
    let own = super::own::Layout::Own;
    let folder = dir.join(super::own::DIR);
    std::fs::create_dir_all(&folder).map_err(io_err(&folder))?;
    let ipath = own.path(dir, super::index::FILE);
    let mpath = own.path(dir, manifest::FILE);
    let (index, json) = rayon::join(
        || File::create(&ipath).and_then(|mut f| manifest.write_index(&mut f)),
        || File::create(&mpath).and_then(|mut f| manifest.write_json(&mut f)),
    );
    index.map_err(io_err(&ipath))?;
    json.map_err(io_err(&mpath))
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.path);
        }
        let _ = std::fs::remove_file(&self.lock_path);
    }
}

/// Flushes everything written under `path` to disk (one `syncfs` on Linux).
fn sync_filesystem(path: &Path) -> std::io::Result<()> {
    let dir = File::open(path)?;
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: syncfs takes a valid open descriptor and has no memory effects.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    dir.sync_all()
}

/// Removes temporary directories left by builds that died (their lock is free).
pub fn remove_abandoned(public: &Path) -> Result<usize, OutputError> {
    remove_abandoned_in(&public.join(REVISIONS), "")
}

/// [`remove_abandoned`] for the staging folders of revisions named `name…` in `revisions`
/// (see [`Staging::create_in`]): in a folder fencepost shares with other files (the preview's,
/// in the site's state folder), only its own staging folders are looked at.
pub fn remove_abandoned_in(revisions: &Path, name: &str) -> Result<usize, OutputError> {
    let revisions = revisions.to_path_buf();
    let prefix = format!("{TMP_PREFIX}{name}");
    let Ok(entries) = std::fs::read_dir(&revisions) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !name.starts_with(&prefix) || !is_dir {
            continue;
        }
        let lock_path = revisions.join(format!("{name}.lock"));
        let free = match File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
        {
            Ok(f) => f.try_lock().is_ok(),
            Err(_) => false,
        };
        if free {
            // Between the listing and the lock, the build may have finished (renamed its
            // folder into place and released its lock), or another cleaner got there first.
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(entry.path())(e)),
            }
            let _ = std::fs::remove_file(&lock_path);
        }
    }
    Ok(removed)
}

const TRASH_PREFIX: &str = ".trash-";

/// Removes a complete revision: renamed aside first, so a half-removed one never looks
/// complete, then deleted. Call it holding the pointer lock (the one `with_lock` in pointer.rs takes).
pub fn remove(public: &Path, name: &str) -> Result<(), OutputError> {
    let dir = public.join(REVISIONS).join(name);
    let trash = to_trash(&dir, name).map_err(io_err(&dir))?;
    fencepost_core::fail_point!("gc.after_trash_rename");
    std::fs::remove_dir_all(&trash).map_err(io_err(&trash))
}

/// Folder `dir` of `revisions/` renamed to a trash folder named after `label` (where it is
/// deleted from: a folder half deleted never looks like what it was); the new path.
fn to_trash(dir: &Path, label: &str) -> std::io::Result<PathBuf> {
    let trash = dir.with_file_name(format!(
        "{TRASH_PREFIX}{label}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::rename(dir, &trash)?;
    Ok(trash)
}

/// A spare: a revision gc took out of `revisions/` whole instead of deleting it, for the next
/// build to take as its staging folder and make into the new revision by changing only the
/// files that differ (see `fencepost-build`'s `prelink/spare.rs`), where an empty folder
/// needs every folder made and every file linked again. Not a revision: no command lists,
/// serves or rolls back to it. One at most.
const SPARE_PREFIX: &str = ".spare-";

/// Sets complete revision `name` aside as `public`'s spare, the spare before it removed.
/// Call it holding the pointer lock (as [`remove`]).
pub fn set_aside_as_spare(public: &Path, name: &str) -> Result<(), OutputError> {
    remove_spares(public)?;
    let dir = public.join(REVISIONS).join(name);
    let spare = public.join(REVISIONS).join(format!("{SPARE_PREFIX}{name}"));
    std::fs::rename(&dir, &spare).map_err(io_err(&dir))?;
    fencepost_core::fail_point!("gc.after_spare_rename");
    Ok(())
}

/// Removes `public`'s spares (renamed to trash first, as [`remove`] does); how many. A spare
/// a build takes meanwhile is that build's. Call it holding the pointer lock.
pub fn remove_spares(public: &Path) -> Result<usize, OutputError> {
    let mut removed = 0;
    for spare in spares(public) {
        let name = spare.file_name().unwrap_or_default().to_string_lossy();
        let trash = match to_trash(&spare, name.trim_start_matches('.')) {
            Ok(trash) => trash,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err(&spare)(e)),
        };
        std::fs::remove_dir_all(&trash).map_err(io_err(&trash))?;
        removed += 1;
    }
    Ok(removed)
}

/// `public`'s spare, if it has one.
pub fn spare(public: &Path) -> Option<PathBuf> {
    spares(public).into_iter().next()
}

fn spares(public: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(public.join(REVISIONS)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(SPARE_PREFIX))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Removes what gc runs that died left behind (`revisions/.trash-*`). Call it holding the
/// pointer lock: gc deletes under that lock, so no live gc owns a trash folder then.
pub fn remove_trash(public: &Path) -> Result<usize, OutputError> {
    let revisions = public.join(REVISIONS);
    let Ok(entries) = std::fs::read_dir(&revisions) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(TRASH_PREFIX)
        {
            match std::fs::remove_dir_all(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(entry.path())(e)),
            }
        }
    }
    Ok(removed)
}

/// Chooses a complete revision from `target`: `R-B` exactly, or `R` — the directory for R
/// with the build the live revision has (`current_build`), else the newest one for R.
pub fn choose(
    public: &Path,
    target: &str,
    current_build: Option<&str>,
) -> Result<Option<RevisionId>, OutputError> {
    let complete = list_complete(public)?;
    Ok(if let Ok(id) = target.parse::<RevisionId>() {
        complete.into_iter().find(|c| *c == id)
    } else if let Ok(r) = target.parse::<i64>() {
        let same_build = current_build.map(|b| RevisionId::new(r, b));
        complete
            .iter()
            .find(|c| Some(*c) == same_build.as_ref())
            .or_else(|| complete.iter().find(|c| c.revision == r))
            .cloned()
    } else {
        None
    })
}

/// Complete revisions, newest first (by revision, then by directory mtime).
pub fn list_complete(public: &Path) -> Result<Vec<RevisionId>, OutputError> {
    let revisions = public.join(REVISIONS);
    let Ok(entries) = std::fs::read_dir(&revisions) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Ok(id) = name.parse::<RevisionId>() {
            if is_complete(&entry.path()) {
                let mtime = entry.metadata().and_then(|m| m.modified()).ok();
                out.push((id.revision, mtime, id));
            }
        }
    }
    out.sort_by_key(|e| std::cmp::Reverse((e.0, e.1)));
    Ok(out.into_iter().map(|(_, _, id)| id).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandoned_staging_is_removed_but_a_live_one_is_not() {
        let d = tempfile::tempdir().unwrap();
        let live = Staging::create(d.path(), "1-aa").unwrap();
        // Simulate a dead build: a tmp dir and a lock file nobody holds.
        let dead = d.path().join("revisions/.tmp-2-bb-dead");
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::write(d.path().join("revisions/.tmp-2-bb-dead.lock"), "").unwrap();
        assert_eq!(remove_abandoned(d.path()).unwrap(), 1);
        assert!(!dead.exists());
        assert!(live.path.exists());
    }

    #[test]
    fn in_a_shared_folder_only_the_named_staging_folders_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let dead = d.path().join(".tmp-preview-dead");
        std::fs::create_dir_all(&dead).unwrap();
        let other = d.path().join(".tmp-someone-else");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(d.path().join(".tmp-preview-file"), "not a staging folder").unwrap();
        assert_eq!(remove_abandoned_in(d.path(), "preview-").unwrap(), 1);
        assert!(!dead.exists());
        assert!(other.exists() && d.path().join(".tmp-preview-file").exists());
    }
}
