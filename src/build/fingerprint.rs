//! The build fingerprint B: a short hash of everything a build reads besides the ledger —
//! templates, static files, plain pages, the config and the fencepost version. Output for
//! publication revision R goes to `revisions/<R>-<B>/`, so a template change with no new
//! publication still gets a new directory (and new cache keys).

use super::BuildError;
use crate::site::Site;
use sha2::{Digest, Sha256};
use std::path::Path;

/// Bumped when the output layout changes in a way the version number would not show.
const LAYOUT: &str = "fencepost-layout-1";

/// Files of `dir` (recursively, skipping hidden ones), as sorted site-relative paths.
pub fn list_files(root: &Path, dir: &str) -> Result<Vec<String>, BuildError> {
    let base = root.join(dir);
    if !base.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(&base)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    for entry in walk.filter_entry(|e| !e.file_name().to_string_lossy().starts_with('.')) {
        let entry = entry.map_err(|e| {
            let (path, source) = crate::content::walk_error(e, &base);
            BuildError::Io { path, source }
        })?;
        if entry.file_type().is_file() {
            out.push(crate::content::relative(root, entry.path()));
        }
    }
    Ok(out)
}

/// Plain pages: `content/*.md` (not the answers folder).
pub fn plain_page_files(root: &Path) -> Result<Vec<String>, BuildError> {
    let dir = root.join("content");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| BuildError::Io {
            path: dir.clone(),
            source,
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md")
            && !name.starts_with('.')
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            out.push(format!("content/{name}"));
        }
    }
    out.sort();
    Ok(out)
}

/// The two fingerprints of a build.
pub struct Fingerprints {
    /// B: everything the build reads besides the ledger (names the revision directory).
    pub build: String,
    /// What every rendered page depends on: templates, config, version. Part of each page's
    /// reuse key, so a change to a static file or a plain page re-renders only itself.
    pub render: String,
}

/// `statics`: the static files, already hashed (see `build::static_copies`), so they are not
/// read twice.
pub fn compute(
    site: &Site,
    statics: &[super::plan::CopyInput],
) -> Result<Fingerprints, BuildError> {
    let mut render_files = vec![crate::config::CONFIG_FILE.to_string()];
    render_files.extend(list_files(&site.root, "templates")?);
    let render = hash_files(site, &render_files)?;
    let mut h = Sha256::new();
    h.update(&render);
    for c in statics {
        h.update(c.path.len().to_le_bytes());
        h.update(c.path.as_bytes());
        h.update(c.sha256.as_bytes());
    }
    h.update(hash_files(site, &plain_page_files(&site.root)?)?);
    Ok(Fingerprints {
        build: hex::encode(h.finalize())[..10].to_string(),
        render,
    })
}

fn hash_files(site: &Site, files: &[String]) -> Result<String, BuildError> {
    let mut h = Sha256::new();
    h.update(LAYOUT);
    h.update(env!("CARGO_PKG_VERSION"));
    for rel in files {
        let path = site.root.join(rel);
        let bytes = std::fs::read(&path).map_err(|source| BuildError::Io { path, source })?;
        h.update(rel.len().to_le_bytes());
        h.update(rel.as_bytes());
        h.update(bytes.len().to_le_bytes());
        h.update(&bytes);
    }
    Ok(hex::encode(h.finalize()))
}
