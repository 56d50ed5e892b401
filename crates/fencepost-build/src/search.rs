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

use crate::prelink::Prelinked;
use crate::report::{io, BuildError};
use crate::reuse::Previous;
use crate::sink::{link_or_copy, place, Stored};
use crate::snapshot::Rendered;
use fencepost_output::manifest::{CacheClass, Entry};
use fencepost_search::pagefind::{self, Out, PageIn, State, DIR};
use fencepost_search::zola;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

/// The revision's own file of the index's state (postcard).
const STATE: &str = "search.bin";

fn read_state(dir: &Path) -> State {
    let path = dir.join(fencepost_output::own::DIR).join(STATE);
    (std::fs::read(path).ok())
        .and_then(|b| postcard::from_bytes(&b).ok())
        .unwrap_or_default()
}

/// Whether `path` is a page the index reads (not the index's own files).
fn indexed(path: &str) -> bool {
    path.ends_with(".html") && !path.starts_with("pagefind/")
}

/// What the index reads: the staged pages, the previous revision's files.
struct Revisions<'a> {
    staging: &'a Path,
    prev: Option<&'a Previous>,
}

impl pagefind::Source for Revisions<'_> {
    fn page(&self, path: &str) -> Result<Vec<u8>, String> {
        let file = self.staging.join(path);
        std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))
    }
    fn previous(&self, path: &str) -> Option<Vec<u8>> {
        self.prev
            .and_then(|(dir, _)| std::fs::read(dir.join(path)).ok())
    }
    fn had(&self, path: &str) -> bool {
        self.prev.is_some_and(|(_, m)| m.find(path).is_some())
    }
}

/// The search indexes of the revision in `staging` (`[search]`: Pagefind's, Zola's), added
/// to `rendered` (in path order), the Pagefind index's state written beside them. Returns the
/// number of pages indexed and of pages read.
pub(crate) fn put(
    site: &fencepost_site::Site,
    rendered: &mut Rendered,
    staging: &Path,
    prelinked: Option<&Prelinked>,
    prev: Option<&Previous>,
) -> Result<(usize, usize), BuildError> {
    let config = &site.config.search;
    let carried = prev.map(|(_, m)| m);
    let pages: Vec<PageIn> = (rendered.entries.iter())
        .filter(|f| indexed(f.path(carried)))
        .map(|f| PageIn {
            path: f.path(carried).to_string(),
            sha256: match f {
                Stored::Kept { .. } => None,
                Stored::New(e) => Some(e.sha256.clone()),
            },
        })
        .collect();
    let src = Revisions { staging, prev };
    let search = |why| BuildError::Search { why };
    let (mut files, mut counts, mut state) = (Vec::new(), (0, 0), None);
    if config.enabled {
        let before = prev.map(|(dir, _)| read_state(dir)).unwrap_or_default();
        let index = pagefind::write(&pages, &before, &src).map_err(search)?;
        (files, counts, state) = (index.files, (index.pages, index.read), Some(index.state));
    }
    if config.build_search_index {
        let read = zola::read_all(&pages, &src).map_err(search)?;
        counts = (counts.0.max(read.len()), pages.len());
        let options = zola::Options {
            format: &config.index_format,
            include_title: config.include_title,
            include_description: config.include_description,
            include_path: config.include_path,
            include_content: config.include_content,
            truncate_content_length: config.truncate_content_length,
            base_url: &site.config.base_url,
        };
        let made = zola::write(&read, &options)
            .into_iter()
            .map(|(path, bytes)| Out::New {
                path,
                bytes: Arc::new(bytes),
                immutable: false,
            });
        files.extend(made);
        files.sort_by(|a, b| a.path().cmp(b.path()));
    }
    let added = place_files(files, rendered, staging, prelinked, prev)?;
    crate::images::revision::insert_sorted(rendered, added, carried);
    if let Some(state) = state {
        let bytes = postcard::to_allocvec(&state).expect("the state serialises");
        fencepost_output::own::write_own_file(staging, STATE, &bytes)?;
    }
    Ok(counts)
}

/// Where the index's files go: the staging folder, where the early links may already have
/// put the previous revision's `pagefind/` (left there by the plan for this step to decide).
struct Placer<'a> {
    staging: &'a Path,
    prelinked: Option<&'a Prelinked>,
    prev: Option<&'a Previous>,
}

/// The index's files in the staging folder: a file the previous revision has with the same
/// bytes kept (already linked early, or linked now), the rest written; an early link the
/// index no longer has removed.
fn place_files(
    files: Vec<Out>,
    rendered: &mut Rendered,
    staging: &Path,
    prelinked: Option<&Prelinked>,
    prev: Option<&Previous>,
) -> Result<Vec<(Stored, bool)>, BuildError> {
    let carried = prev.map(|(_, m)| m);
    let ours: HashSet<String> = files.iter().map(|f| f.path().to_string()).collect();
    let clash: Vec<usize> = (rendered.entries.iter().enumerate())
        .filter(|(_, f)| ours.contains(f.path(carried)))
        .map(|(i, _)| i)
        .collect();
    for i in clash.into_iter().rev() {
        let path = rendered.entries[i].path(carried).to_string();
        tracing::warn!(path, "the search index replaces a file of the site");
        rendered.entries.remove(i);
        rendered.fresh.remove(i);
        let _ = std::fs::remove_file(staging.join(path));
    }
    let placer = Placer {
        staging,
        prelinked,
        prev,
    };
    placer.remove_stale(&ours)?;
    let mut added = Vec::with_capacity(files.len());
    for out in files {
        added.push(match out {
            Out::Kept { path } => match placer.keep(&path, Some(CacheClass::Immutable))? {
                Some(kept) => (kept, false),
                None => {
                    let why = format!("{path}: the previous revision lost it");
                    return Err(BuildError::Search { why });
                }
            },
            Out::New {
                path,
                bytes,
                immutable,
            } => placer.write_new(path, bytes, immutable)?,
        });
    }
    rendered.reused += added.iter().filter(|(_, fresh)| !fresh).count();
    Ok(added)
}

impl Placer<'_> {
    /// The early links under `pagefind/` that are no file of this index, removed.
    fn remove_stale(&self, ours: &HashSet<String>) -> Result<(), BuildError> {
        let (Some(linked), Some((_, m))) = (self.prelinked, self.prev) else {
            return Ok(());
        };
        let prefix = format!("{DIR}/");
        for i in 0..m.len() {
            let path = m.path(i);
            if path.starts_with(&prefix) && !ours.contains(path) {
                linked.unlink(self.staging, path)?;
            }
        }
        Ok(())
    }

    /// The previous revision's file at `rel`, kept (linked now unless linked early), with
    /// `cache` (none: its entry's).
    fn keep(&self, rel: &str, cache: Option<CacheClass>) -> Result<Option<Stored>, BuildError> {
        let Some((dir, m)) = self.prev else {
            return Ok(None);
        };
        let Some(index) = m.find(rel) else {
            return Ok(None);
        };
        if !self.prelinked.is_some_and(|l| l.contains(rel)) {
            let dst = place(self.staging, rel)?;
            link_or_copy(&dir.join(rel), &dst)?;
        }
        let cache = cache.unwrap_or_else(|| m.entry(index).cache);
        Ok(Some(Stored::Kept { index, cache }))
    }

    /// A new file of the index: kept when the previous revision has the same bytes at its
    /// path (the runtime, the entry), else written (an early link there removed first, so
    /// the previous revision's bytes are never written through it).
    fn write_new(
        &self,
        path: String,
        bytes: Arc<Vec<u8>>,
        immutable: bool,
    ) -> Result<(Stored, bool), BuildError> {
        let carried = self.prev.map(|(_, m)| m);
        let sha256 = fencepost_core::digest::sha256_hex(&bytes);
        let same = carried.and_then(|m| m.find(&path).filter(|&i| m.entry(i).sha256 == sha256));
        if same.is_some() {
            if let Some(kept) = self.keep(&path, None)? {
                return Ok((kept, false));
            }
        }
        if let Some(linked) = self.prelinked {
            linked.unlink(self.staging, &path)?;
        }
        let dst = place(self.staging, &path)?;
        std::fs::write(&dst, &bytes[..]).map_err(io(&dst))?;
        let cache = match immutable {
            true => CacheClass::Immutable,
            false => CacheClass::Asset,
        };
        let entry = Entry {
            content_type: fencepost_output::manifest::content_type(&path).to_string(),
            key: format!("search index {path}"),
            path,
            sha256,
            bytes: bytes.len() as u64,
            max_age: cache.max_age(),
            cache,
            links: Vec::new(),
            location: None,
        };
        Ok((Stored::New(entry), true))
    }
}
