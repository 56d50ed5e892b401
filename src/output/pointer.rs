//! The pointer: `public/current`, a symlink to `revisions/<R>-<B>` replaced with rename(2),
//! and `public/current.json` describing it. The symlink is the truth; the JSON follows it.
//! Swaps happen under an exclusive lock on `public/.pointer.lock`, and a build never moves
//! the pointer to a lower publication revision (only `rollback` does, on purpose).

use super::revision::{self, REVISIONS};
use super::{io_err, write_atomic, OutputError};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::Path;

pub const CURRENT: &str = "current";
pub const CURRENT_JSON: &str = "current.json";
const LOCK: &str = ".pointer.lock";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pointer {
    pub revision: i64,
    pub build: String,
    pub dir: String,
}

impl Pointer {
    pub fn new(revision: i64, build: &str) -> Pointer {
        Pointer {
            revision,
            build: build.to_string(),
            dir: revision::dir_name(revision, build),
        }
    }
}

/// What a swap did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swap {
    Moved {
        from: Option<Pointer>,
    },
    /// Already pointing there.
    Unchanged,
    /// The pointer names a higher revision; left alone.
    KeptHigher(Pointer),
}

/// The revision `public/current` names, if any.
pub fn read(public: &Path) -> Result<Option<Pointer>, OutputError> {
    let link = public.join(CURRENT);
    let target = match std::fs::read_link(&link) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(OutputError::Io {
                path: link,
                source: e,
            })
        }
    };
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match revision::parse_dir_name(&name) {
        Some((r, b)) => Ok(Some(Pointer::new(r, b))),
        None => Err(OutputError::Manifest {
            path: link,
            message: format!(
                "points at {}, which is not a revision directory",
                target.display()
            ),
        }),
    }
}

fn lock(public: &Path) -> Result<File, OutputError> {
    std::fs::create_dir_all(public).map_err(io_err(public))?;
    let path = public.join(LOCK);
    let f = File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err(&path))?;
    f.lock().map_err(io_err(&path))?;
    Ok(f)
}

fn swap_locked(public: &Path, to: &Pointer) -> Result<(), OutputError> {
    let link = public.join(CURRENT);
    let tmp = public.join(format!(".current.tmp-{}", uuid::Uuid::new_v4().simple()));
    let target = Path::new(REVISIONS).join(&to.dir);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&target, &tmp).map_err(io_err(&tmp))?;
    #[cfg(not(unix))]
    compile_error!("fencepost's output pointer needs symlinks (unix)");
    crate::fail_point!("build.before_pointer_rename");
    if let Err(e) = std::fs::rename(&tmp, &link) {
        let _ = std::fs::remove_file(&tmp);
        return Err(OutputError::Io {
            path: link,
            source: e,
        });
    }
    File::open(public)
        .and_then(|d| d.sync_all())
        .map_err(io_err(public))?;
    crate::fail_point!("build.after_pointer_swap");
    let json = serde_json::to_vec_pretty(to).expect("pointers serialise");
    write_atomic(&public.join(CURRENT_JSON), &json)
}

/// Points `current` at `to` unless it already names a higher revision.
pub fn advance(public: &Path, to: &Pointer) -> Result<Swap, OutputError> {
    let _guard = lock(public)?;
    let from = read(public)?;
    match &from {
        Some(p) if p == to => {
            // A crash between the symlink swap and the JSON write leaves the JSON behind.
            let json_path = public.join(CURRENT_JSON);
            let json_ok = std::fs::read(&json_path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Pointer>(&b).ok())
                .is_some_and(|j| &j == to);
            if !json_ok {
                write_atomic(
                    &json_path,
                    &serde_json::to_vec_pretty(to).expect("pointers serialise"),
                )?;
            }
            return Ok(Swap::Unchanged);
        }
        Some(p) if p.revision > to.revision => return Ok(Swap::KeptHigher(p.clone())),
        _ => {}
    }
    swap_locked(public, to)?;
    Ok(Swap::Moved { from })
}

/// Points `current` at `to` whatever it named before (rollback). Returns the old pointer.
pub fn force(public: &Path, to: &Pointer) -> Result<Option<Pointer>, OutputError> {
    let _guard = lock(public)?;
    let from = read(public)?;
    if from.as_ref() != Some(to) {
        swap_locked(public, to)?;
    }
    Ok(from)
}

/// Runs `f` while holding the pointer lock (gc uses it so it never races a swap).
pub fn with_lock<T>(
    public: &Path,
    f: impl FnOnce() -> Result<T, OutputError>,
) -> Result<T, OutputError> {
    let _guard = lock(public)?;
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make_rev(public: &Path, p: &Pointer) {
        let d = public.join(REVISIONS).join(&p.dir);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("manifest.json"), "{}").unwrap();
    }

    #[test]
    fn advances_forward_only_and_force_goes_back() {
        let d = tempfile::tempdir().unwrap();
        let (p2, p1) = (Pointer::new(2, "aa"), Pointer::new(1, "aa"));
        make_rev(d.path(), &p1);
        make_rev(d.path(), &p2);
        assert_eq!(advance(d.path(), &p2).unwrap(), Swap::Moved { from: None });
        assert_eq!(
            advance(d.path(), &p1).unwrap(),
            Swap::KeptHigher(p2.clone())
        );
        assert_eq!(advance(d.path(), &p2).unwrap(), Swap::Unchanged);
        assert_eq!(read(d.path()).unwrap(), Some(p2.clone()));
        assert_eq!(force(d.path(), &p1).unwrap(), Some(p2));
        assert_eq!(read(d.path()).unwrap(), Some(p1.clone()));
        let json: Pointer =
            serde_json::from_slice(&std::fs::read(d.path().join(CURRENT_JSON)).unwrap()).unwrap();
        assert_eq!(json, p1);
        assert!(d.path().join("current/manifest.json").exists());
    }
}
