//! `[search] enabled`: the revision's Pagefind index, made from the revision's own pages
//! after every other step that adds or drops one (render, images, held pages), so it holds
//! exactly the pages the revision serves — the embargo's guarantee comes from there: a page
//! not yet public is in no revision, so in no index.
//!
//! **The adversary** is a reader who wants an item before its instant and can fetch every
//! file of every public revision (every bucket object, every index chunk and fragment). The
//! index is built from nothing else than the revision's HTML; its records (`.fencepost/
//! search.bin`, never served nor deployed) are the revision's pages' own, so the next build
//! reuses only what was public already; a preview's index is made from the preview's pages,
//! in the preview's folder, from the preview's own records.
//!
//! A page is read only when it is new or its bytes changed (its record is kept with its
//! SHA-256); a page kept from the previous revision reuses its record. Index files the
//! previous revision has are linked from it (`fencepost_search::pagefind`).

use crate::report::{io, BuildError};
use crate::reuse::Previous;
use crate::sink::{link_or_copy, place, Stored};
use crate::snapshot::Rendered;
use fencepost_output::manifest::{CacheClass, Entry, IMMUTABLE_MAX_AGE};
use fencepost_search::pagefind::{self, Out, State};
use fencepost_search::Record;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The revision's own file of records (postcard).
const RECORDS: &str = "search.bin";

/// What the next build reuses: the index's state and each page's record.
#[derive(Default, Serialize, Deserialize)]
struct Records {
    state: State,
    /// (page path, SHA-256 of its bytes, its record; none: nothing to index).
    pages: Vec<(String, String, Option<Arc<Record>>)>,
}

fn read_records(dir: &Path) -> Records {
    let path = dir.join(fencepost_output::own::DIR).join(RECORDS);
    (std::fs::read(path).ok())
        .and_then(|b| postcard::from_bytes(&b).ok())
        .unwrap_or_default()
}

/// Whether `path` is a page the index reads (not the index's own files).
fn indexed(path: &str) -> bool {
    path.ends_with(".html") && !path.starts_with("pagefind/")
}

/// The search index of the revision in `staging`, added to `rendered` (in path order), and
/// the records written beside it. Returns the number of pages indexed and of pages read.
pub(crate) fn put(
    rendered: &mut Rendered,
    staging: &Path,
    prev: Option<&Previous>,
) -> Result<(usize, usize), BuildError> {
    let before = prev.map(|(dir, _)| read_records(dir)).unwrap_or_default();
    let carried = prev.map(|(_, m)| m);
    let known: HashMap<&str, (&str, &Option<Arc<Record>>)> = (before.pages.iter())
        .map(|(p, sha, r)| (p.as_str(), (sha.as_str(), r)))
        .collect();
    // Each page: its path, SHA-256 (when new) and record when it can be reused.
    let wanted: Vec<(String, Option<String>, Option<Option<Arc<Record>>>)> =
        (rendered.entries.iter())
            .filter(|f| indexed(f.path(carried)))
            .map(|f| {
                let path = f.path(carried).to_string();
                match f {
                    Stored::Kept { .. } => {
                        let old = known.get(path.as_str()).map(|(_, r)| (*r).clone());
                        (path, None, old)
                    }
                    Stored::New(e) => {
                        let old = (known.get(path.as_str()))
                            .filter(|(sha, _)| *sha == e.sha256)
                            .map(|(_, r)| (*r).clone());
                        (path, Some(e.sha256.clone()), old)
                    }
                }
            })
            .collect();
    let read = wanted.iter().filter(|(_, _, r)| r.is_none()).count();
    let pages: Vec<(String, String, Option<Arc<Record>>)> = (wanted.into_par_iter())
        .map(|(path, sha, old)| {
            let record = match old {
                Some(r) => r,
                None => {
                    let file = staging.join(&path);
                    let bytes = std::fs::read(&file).map_err(io(&file))?;
                    fencepost_search::fossick(&bytes).map(Arc::new)
                }
            };
            let sha = sha.or_else(|| known.get(path.as_str()).map(|(s, _)| s.to_string()));
            Ok((path, sha.unwrap_or_default(), record))
        })
        .collect::<Result<_, BuildError>>()?;
    let for_index: Vec<(String, Arc<Record>)> = (pages.iter())
        .filter_map(|(path, _, r)| r.clone().map(|r| (fencepost_search::page_url(path), r)))
        .collect();
    let had = |path: &str| carried.is_some_and(|m| m.find(path).is_some());
    let index = pagefind::write(&for_index, &before.state, &had)
        .map_err(|why| BuildError::Search { why })?;
    let added = place_files(index.files, rendered, staging, prev)?;
    crate::images::revision::insert_sorted(rendered, added, carried);
    let records = Records {
        state: index.state,
        pages,
    };
    let bytes = postcard::to_allocvec(&records).expect("the records serialise");
    fencepost_output::own::write_own_file(staging, RECORDS, &bytes)?;
    Ok((index.pages, read))
}

/// The index's files in the staging folder: a file the previous revision has with the same
/// bytes linked from it, the rest written.
fn place_files(
    files: Vec<Out>,
    rendered: &mut Rendered,
    staging: &Path,
    prev: Option<&Previous>,
) -> Result<Vec<(Stored, bool)>, BuildError> {
    let carried = prev.map(|(_, m)| m);
    let ours: std::collections::HashSet<String> =
        files.iter().map(|f| f.path().to_string()).collect();
    let clash: Vec<usize> = (rendered.entries.iter().enumerate())
        .filter(|(_, f)| ours.contains(f.path(carried)))
        .map(|(i, _)| i)
        .collect();
    for i in clash.into_iter().rev() {
        tracing::warn!(
            path = rendered.entries[i].path(carried),
            "the search index replaces a file of the site"
        );
        let file = staging.join(rendered.entries[i].path(carried));
        rendered.entries.remove(i);
        rendered.fresh.remove(i);
        let _ = std::fs::remove_file(file);
    }
    let mut added = Vec::with_capacity(files.len());
    for out in files {
        let (path, bytes, immutable) = match out {
            Out::Kept { path } => match keep(&path, staging, prev)? {
                Some(kept) => {
                    added.push((kept, false));
                    continue;
                }
                None => {
                    return Err(BuildError::Search {
                        why: format!("{path}: the previous revision lost it"),
                    })
                }
            },
            Out::New {
                path,
                bytes,
                immutable,
            } => (path, bytes, immutable),
        };
        added.push(write_new(path, bytes, immutable, staging, prev)?);
    }
    rendered.reused += added.iter().filter(|(_, fresh)| !fresh).count();
    Ok(added)
}

/// A new file of the index: linked from the previous revision when it has the same bytes
/// there (the runtime, the entry), else written.
fn write_new(
    path: String,
    bytes: Arc<Vec<u8>>,
    immutable: bool,
    staging: &Path,
    prev: Option<&Previous>,
) -> Result<(Stored, bool), BuildError> {
    let carried = prev.map(|(_, m)| m);
    let sha256 = fencepost_core::digest::sha256_hex(&bytes);
    let same = carried.and_then(|m| m.find(&path).filter(|&i| m.entry(i).sha256 == sha256));
    if same.is_some() {
        if let Some(kept) = keep(&path, staging, prev)? {
            return Ok((kept, false));
        }
    }
    let dst = place(staging, &path)?;
    std::fs::write(&dst, &bytes[..]).map_err(io(&dst))?;
    let cache = if immutable {
        CacheClass::Immutable
    } else {
        CacheClass::Asset
    };
    let entry = Entry {
        content_type: fencepost_output::manifest::content_type(&path).to_string(),
        key: format!("search index {path}"),
        path,
        sha256,
        bytes: bytes.len() as u64,
        max_age: if immutable {
            IMMUTABLE_MAX_AGE
        } else {
            cache.max_age()
        },
        cache,
        links: Vec::new(),
        location: None,
    };
    Ok((Stored::New(entry), true))
}

/// The previous revision's file at `rel` linked in, its entry kept.
fn keep(rel: &str, staging: &Path, prev: Option<&Previous>) -> Result<Option<Stored>, BuildError> {
    let Some((dir, m)) = prev else {
        return Ok(None);
    };
    let Some(index) = m.find(rel) else {
        return Ok(None);
    };
    let dst = place(staging, rel)?;
    link_or_copy(&dir.join(rel), &dst)?;
    let cache = m.entry(index).cache;
    Ok(Some(Stored::Kept { index, cache }))
}
