//! Page bundles, as Hugo and Zola make them: `content/posts/hello/index.md` is item `hello`,
//! and every other file of its folder (`cover.svg`, `data.csv`) is one of its resources,
//! published beside its page (`/posts/hello/cover.svg`) only while the page is public.
//!
//! A resource is recorded with the item — name, source path, sha256, size — in its data
//! (`resources`, which templates see as `page.resources`), so the ledger says which bytes each
//! public page carries: the build copies a resource only when the file still has the bytes
//! the ledger recorded, and an edit to a resource is an update of its item (one revision,
//! one audit entry), as an edit to its text is. The folder's files are resources, and its
//! sub-folders' (`img/cover.png`, `social_cards/x.png`: Hugo and Zola publish a bundle's
//! whole tree beside its page, and themes ship images that way), except hidden ones, `.md`
//! files (items), symlinks (which could point outside `content/`) and a sub-folder holding
//! an `index.md` or `_index.md` (a page of its own). At most [`MAX_DEPTH`] folders deep.

use super::ContentError;
use fencepost_core::digest::sha256_hex;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One file of a bundle, as the item's data records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Its file name, which is also its URL beside the page.
    pub name: String,
    /// Site-relative path of the source file (`content/posts/hello/cover.svg`).
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// How deep a bundle's sub-folders are read: deeper ones are not resources.
pub const MAX_DEPTH: usize = 8;

/// The resource files of the bundle folder `folder` (site-relative), sorted by name; a
/// sub-folder's as `img/cover.png`.
pub fn files(root: &Path, folder: &Path) -> Result<Vec<(String, PathBuf)>, ContentError> {
    let mut out = Vec::new();
    walk(root, folder, "", 0, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(
    root: &Path,
    folder: &Path,
    prefix: &str,
    depth: usize,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), ContentError> {
    let read_err = |source| ContentError::Read {
        path: folder.to_path_buf(),
        source,
    };
    for e in std::fs::read_dir(root.join(folder)).map_err(read_err)? {
        let e = e.map_err(read_err)?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let kind = e.file_type().map_err(read_err)?;
        let sub = folder.join(e.file_name());
        if kind.is_file() && !name.ends_with(".md") {
            out.push((format!("{prefix}{name}"), sub));
        } else if kind.is_dir() && depth < MAX_DEPTH && !is_page_folder(&root.join(&sub)) {
            walk(root, &sub, &format!("{prefix}{name}/"), depth + 1, out)?;
        }
    }
    Ok(())
}

/// A folder that is a page (or section) of its own, whose files are not its parent's.
fn is_page_folder(dir: &Path) -> bool {
    dir.join("index.md").exists() || dir.join("_index.md").exists()
}

/// The largest file a bundle may carry: 64 MiB (Cloudflare Pages takes 25 MiB a file; a
/// larger file belongs in `static/` or a bucket of its own, not read on every change).
pub const MAX_RESOURCE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads and hashes the bundle's resources (each at most [`MAX_RESOURCE_BYTES`]).
pub fn read(root: &Path, folder: &Path) -> Result<Vec<Resource>, ContentError> {
    let max = MAX_RESOURCE_BYTES;
    files(root, folder)?
        .into_iter()
        .map(|(name, rel)| {
            let bytes = read_bounded(&root.join(&rel), max)?;
            Ok(Resource {
                name,
                path: rel.to_string_lossy().replace('\\', "/"),
                sha256: sha256_hex(&bytes),
                bytes: bytes.len() as u64,
            })
        })
        .collect()
}

fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, ContentError> {
    let len = std::fs::metadata(path)
        .map_err(|source| ContentError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    if len > max {
        return Err(ContentError::TooLarge {
            path: path.to_path_buf(),
            why: format!(
                "is a file of a page bundle larger than {max} bytes: make it smaller, or serve it from static/"
            ),
        });
    }
    std::fs::read(path).map_err(|source| ContentError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// A bundle's item with its resources recorded in its data and its hash (see
/// [`super::bundle`]); any other item as it is. A collection that declared a field of its
/// own named `resources` has no bundles' resources.
pub fn with_resources(
    root: &Path,
    rel: &str,
    coll: &fencepost_config::collections::Collection,
    mut item: super::Item,
    hash: String,
) -> Result<(super::Item, String), ContentError> {
    let Some(folder) = super::item::bundle_folder(Path::new(rel), coll) else {
        return Ok((item, hash));
    };
    if coll.fields.contains_key("resources") {
        return Ok((item, hash));
    }
    let resources = read(root, folder)?;
    let (data, hash) = attach(&item.data, &hash, &resources);
    item.data = data;
    Ok((item, hash))
}

/// The item's data (canonical JSON) with its resources added under `resources`, and its
/// source hash made to cover them: an edit to a resource is a change of the item.
pub fn attach(data: &str, source_hash: &str, resources: &[Resource]) -> (String, String) {
    if resources.is_empty() {
        return (data.to_string(), source_hash.to_string());
    }
    let mut map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(data).unwrap_or_default();
    map.insert(
        "resources".into(),
        serde_json::to_value(resources).expect("resources serialise"),
    );
    let mut hashed = source_hash.to_string();
    for r in resources {
        hashed.push_str(&format!("\n{} {}", r.name, r.sha256));
    }
    (
        serde_json::Value::Object(map).to_string(),
        sha256_hex(hashed.as_bytes()),
    )
}

/// The resources an item's data records.
pub fn recorded(data: &str) -> Vec<Resource> {
    if !data.contains("\"resources\"") {
        return Vec::new();
    }
    #[derive(Deserialize)]
    struct Data {
        #[serde(default)]
        resources: Vec<Resource>,
    }
    serde_json::from_str::<Data>(data)
        .map(|d| d.resources)
        .unwrap_or_default()
}

/// The stat of a bundle's `index.md` at `dir/index.md` made to cover its folder: sizes
/// summed, the latest change of the page, its resources and the folders (a file added or
/// removed). So the stat cache re-reads the item when any of its resources changes.
pub fn stat_with_resources(
    dir: &Path,
    own: fencepost_core::item::FileStat,
) -> fencepost_core::item::FileStat {
    let mut stat = own;
    if cover(dir, 0, &mut stat) {
        // The folder's own change: a resource removed (when none is left, the plain stat of
        // `index.md` differs from the cached one anyway).
        if let Ok(m) = std::fs::metadata(dir) {
            stat.changed_ns = stat
                .changed_ns
                .max(fencepost_core::item::FileStat::of(&m).changed_ns);
        }
    }
    stat
}

/// Adds the stats of `dir`'s resources (and its resource sub-folders') to `stat`; whether
/// it has any.
fn cover(dir: &Path, depth: usize, stat: &mut fencepost_core::item::FileStat) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut any = false;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(kind) = e.file_type() else { continue };
        if name.starts_with('.') {
            continue;
        }
        if kind.is_dir() && depth < MAX_DEPTH && !is_page_folder(&e.path()) {
            if cover(&e.path(), depth + 1, stat) {
                any = true;
                if let Ok(m) = e.metadata() {
                    let s = fencepost_core::item::FileStat::of(&m);
                    stat.changed_ns = stat.changed_ns.max(s.changed_ns);
                }
            }
        } else if kind.is_file() && !name.ends_with(".md") {
            if let Ok(m) = e.metadata() {
                let s = fencepost_core::item::FileStat::of(&m);
                stat.size += s.size;
                stat.changed_ns = stat.changed_ns.max(s.changed_ns);
                any = true;
            }
        }
    }
    any
}
