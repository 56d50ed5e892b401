//! The processed images a revision holds: exactly those its pages show. A page rendered by
//! this build shows what its `<img>`, `srcset` and `resize_image` calls asked for (its
//! links, as the manifest records them); a page kept from the previous revision shows what it
//! showed there (the previous revision's `.fencepost/images.json`, so no kept page is read
//! again). Each is hard-linked from the previous revision when it has it (its manifest entry
//! kept), else from the cache; a name no page of this revision asked for is never taken from
//! the cache — not even one an earlier preview made of an embargoed image — so a template
//! that writes a processed image's name by hand gets a broken link, not the image.
//!
//! Each is a file at `processed_images/<stem>.<hash>.<ext>`, a name that never changes its
//! bytes: served `immutable` for a year, uploaded once by deploy.

use super::Session;
use crate::report::{io, BuildError};
use crate::reuse::Previous;
use crate::sink::{link_or_copy, place, Stored};
use crate::snapshot::Rendered;
use fencepost_images::OUTPUT_DIR;
use fencepost_output::manifest::{CacheClass, Entry, IMMUTABLE_MAX_AGE};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Which processed images each page shows, by the page's path in the revision.
type Record = BTreeMap<String, Vec<String>>;

/// Whether `name` is an output's name (`<stem>.<16 hex>.<ext>`): a link that is not one is
/// no processed image.
fn is_output_name(name: &str) -> bool {
    let mut parts = name.rsplitn(3, '.');
    let (ext, hash, stem) = (parts.next(), parts.next(), parts.next());
    matches!(ext, Some("jpg" | "png" | "webp" | "avif"))
        && hash.is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        && stem.is_some_and(|s| {
            !s.is_empty()
                && (s.bytes()).all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// The processed images `links` (a page's) name.
fn shown(links: &[String]) -> Vec<String> {
    let prefix = format!("/{OUTPUT_DIR}/");
    let mut out: Vec<String> = (links.iter())
        .filter_map(|l| l.strip_prefix(&prefix))
        .filter(|n| is_output_name(n))
        .map(str::to_string)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The processed images of the revision in `staging`, linked in and added to `rendered` (in
/// path order), and the record of which page shows which written beside them.
pub(crate) fn put(
    session: &Session,
    rendered: &mut Rendered,
    staging: &Path,
    prev: Option<&Previous>,
) -> Result<(), BuildError> {
    let before: Record = prev
        .and_then(|(dir, _)| fencepost_output::own::images(dir))
        .and_then(|j| serde_json::from_slice(&j).ok())
        .unwrap_or_default();
    let made = session.made();
    if made.is_empty() && before.is_empty() {
        return Ok(());
    }
    let was_public: BTreeSet<&String> = before.values().flatten().collect();
    let carried = prev.map(|(_, m)| m);
    let mut record = Record::new();
    for f in &rendered.entries {
        let (path, names) = match f {
            Stored::New(e) if e.path.ends_with(".html") => (e.path.clone(), shown(&e.links)),
            Stored::New(_) => continue,
            Stored::Kept { .. } => {
                let path = f.path(carried);
                match before.get(path) {
                    Some(names) => (path.to_string(), names.clone()),
                    None => continue,
                }
            }
        };
        let names: Vec<String> = (names.into_iter())
            .filter(|n| made.contains(n) || was_public.contains(n))
            .collect();
        if !names.is_empty() {
            record.insert(path, names);
        }
    }
    let wanted: BTreeSet<&String> = record.values().flatten().collect();
    let have: BTreeSet<&str> = (rendered.entries.iter()).map(|f| f.path(carried)).collect();
    let mut added = Vec::new();
    for name in wanted {
        let rel = format!("{OUTPUT_DIR}/{name}");
        if have.contains(rel.as_str()) {
            continue;
        }
        if let Some(kept) = from_previous(&rel, staging, prev) {
            added.push((kept, false));
            continue;
        }
        let cached = session.images.cached(name);
        if cached.is_file() {
            added.push((Stored::New(linked(&cached, &rel, staging)?), true));
        }
    }
    rendered.reused += added.iter().filter(|(_, fresh)| !fresh).count();
    insert_sorted(rendered, added, carried);
    if !record.is_empty() {
        let json = serde_json::to_vec(&record).expect("the record serialises");
        fencepost_output::own::write_images(staging, &json)?;
    }
    Ok(())
}

/// The previous revision's file at `rel` linked in, its entry kept.
fn from_previous(rel: &str, staging: &Path, prev: Option<&Previous>) -> Option<Stored> {
    let (dir, m) = prev?;
    let index = m.find(rel)?;
    let dst = place(staging, rel).ok()?;
    link_or_copy(&dir.join(rel), &dst).ok()?;
    Some(Stored::Kept {
        index,
        cache: CacheClass::Immutable,
    })
}

/// Cache file `cached` linked in at `rel`, with its entry.
fn linked(cached: &Path, rel: &str, staging: &Path) -> Result<Entry, BuildError> {
    let dst = place(staging, rel)?;
    link_or_copy(cached, &dst)?;
    let bytes = std::fs::read(&dst).map_err(io(&dst))?;
    Ok(Entry {
        path: rel.to_string(),
        sha256: fencepost_core::digest::sha256_hex(&bytes),
        bytes: bytes.len() as u64,
        content_type: fencepost_output::manifest::content_type(rel).to_string(),
        cache: CacheClass::Immutable,
        max_age: IMMUTABLE_MAX_AGE,
        key: format!("processed image {rel}"),
        links: Vec::new(),
        location: None,
    })
}

/// `added` put among `rendered`'s entries, all in path order.
pub(crate) fn insert_sorted(
    rendered: &mut Rendered,
    added: Vec<(Stored, bool)>,
    carried: Option<&fencepost_output::carried::Carried>,
) {
    if added.is_empty() {
        return;
    }
    let entries = std::mem::take(&mut rendered.entries);
    let fresh = std::mem::take(&mut rendered.fresh);
    let mut pairs: Vec<(Stored, bool)> = entries.into_iter().zip(fresh).chain(added).collect();
    pairs.sort_by(|a, b| a.0.path(carried).cmp(b.0.path(carried)));
    (rendered.entries, rendered.fresh) = pairs.into_iter().unzip();
}

/// Watch mode's preview in memory: the processed images its pages asked for, and those the
/// last preview had (its reused pages may show them), as files of `files`.
pub(crate) fn into_memory(
    session: &Session,
    prev: Option<&fencepost_output::memory::MemorySite>,
    files: &mut std::collections::HashMap<String, fencepost_output::memory::MemoryFile>,
) {
    let prefix = format!("{OUTPUT_DIR}/");
    if let Some(prev) = prev {
        for (path, f) in prev.files.iter().filter(|(p, _)| p.starts_with(&prefix)) {
            files.entry(path.clone()).or_insert_with(|| f.clone());
        }
    }
    for name in session.made() {
        let cached = session.images.cached(&name);
        let path = format!("{prefix}{name}");
        if files.contains_key(&path) {
            continue;
        }
        let Ok(bytes) = std::fs::read(&cached) else {
            continue;
        };
        let file = fencepost_output::memory::MemoryFile {
            key: format!("processed image {path}"),
            sha256: fencepost_core::digest::sha256_hex(&bytes),
            content_type: fencepost_output::manifest::content_type(&path),
            bytes: std::sync::Arc::new(bytes),
        };
        files.insert(path, file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards: only an output's name is taken from a page's links — never one with a folder,
    /// `..`, another extension or a short hash.
    #[test]
    fn only_output_names_are_processed_images() {
        let links: Vec<String> = [
            "/processed_images/a.0123456789abcdef.webp",
            "/processed_images/IMG_1-x.0123456789ABCDEF.jpg",
            "/processed_images/../x.0123456789abcdef.jpg",
            "/processed_images/a/b.0123456789abcdef.jpg",
            "/processed_images/a.0123.jpg",
            "/processed_images/a.0123456789abcdef.svg",
            "/other/a.0123456789abcdef.webp",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            shown(&links),
            ["IMG_1-x.0123456789ABCDEF.jpg", "a.0123456789abcdef.webp"]
        );
    }
}
