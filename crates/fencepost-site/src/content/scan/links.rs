//! Where a symlink under a collection may lead: inside `content/`, to a regular file (an
//! entry named `*.md`) or a folder, and nowhere else. The collection's own folder is held to
//! the same rule.

use crate::content::{relative, ContentError};
use std::path::{Path, PathBuf};

/// A collection's own folder is held to the rule of a symlinked subfolder: it (or a folder on
/// its way) may be a symlink only to a folder inside `content/`. Anything else stops the
/// scan, as a subfolder linked out does: its files would be published from outside the site.
pub(super) fn check_collection_dir(root: &Path, dir: &Path) -> Result<(), ContentError> {
    let resolve = |p: &Path| {
        p.canonicalize().map_err(|source| ContentError::Read {
            path: p.to_path_buf(),
            source,
        })
    };
    let content = resolve(&root.join("content"))?;
    let real = resolve(dir)?;
    if real.starts_with(&content) {
        return Ok(());
    }
    Err(ContentError::Unreadable {
        path: PathBuf::from(relative(root, dir)),
        why: format!(
            "is a collection's folder that leads to {}, outside content/ (a symlink must stay inside content/)",
            real.display()
        ),
    })
}

/// Accepts a non-regular entry only if it is a symlink to a regular file (`what` = "file", an
/// entry named `*.md`) or a folder (`what` = "folder") inside `content/`; returns where it
/// leads.
pub(super) fn check_linked(root: &Path, path: &Path, what: &str) -> Result<PathBuf, ContentError> {
    let unreadable = |why: String| ContentError::Unreadable {
        path: PathBuf::from(relative(root, path)),
        why,
    };
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Err(unreadable(
            "is not a regular file (a FIFO, socket or device)".into(),
        ));
    }
    let content = root
        .join("content")
        .canonicalize()
        .map_err(|e| unreadable(format!("content/ cannot be resolved: {e}")))?;
    let real = path
        .canonicalize()
        .map_err(|e| unreadable(format!("is a symlink that leads nowhere ({e})")))?;
    if !real.starts_with(&content) {
        return Err(unreadable(format!(
            "is a symlink to {}, outside content/",
            real.display()
        )));
    }
    let fits = if what == "folder" {
        real.is_dir()
    } else {
        real.is_file()
    };
    if !fits {
        return Err(unreadable(format!(
            "is a symlink to {}, which is not a regular {what}",
            real.display()
        )));
    }
    Ok(real)
}
