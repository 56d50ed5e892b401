//! Storing: the one render pipeline, [`render_all`], over a [`Sink`] — a revision directory
//! for `build` (reused files hard-linked from the previous revision), memory for watch mode's
//! preview — and the file operations it needs.

use super::plan::{CopySource, Job, Planned};
use super::render::{body_ids, Renderer};
use super::report::{io, BuildError, HeldPage, Progress};
use super::{links, prelink};
use fencepost_output::manifest::{self, Entry};
use fencepost_output::memory::{MemoryFile, MemorySite};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod beneath;
pub(super) use beneath::Beneath;

/// Puts a copied input at `dst` and returns its size: a blob is linked, bytes read when the
/// build started are written as they are, a checked file is read, checked against `sha256`
/// again and written (see [`CopySource`]).
pub(super) fn copy_input(source: &CopySource, sha256: &str, dst: &Path) -> Result<u64, BuildError> {
    match source {
        CopySource::File(src) => {
            let bytes = source.bytes(sha256).map_err(io(src))?;
            std::fs::write(dst, &bytes[..]).map_err(io(dst))?;
            Ok(bytes.len() as u64)
        }
        CopySource::Blob(src) => {
            link_or_copy(src, dst)?;
            Ok(dst.metadata().map_err(io(dst))?.len())
        }
        CopySource::Bytes(bytes) => {
            std::fs::write(dst, &bytes[..]).map_err(io(dst))?;
            Ok(bytes.len() as u64)
        }
    }
}

pub(super) fn place(root: &Path, rel: &str) -> Result<PathBuf, BuildError> {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    Ok(path)
}

pub(super) fn link_or_copy(src: &Path, dst: &Path) -> Result<(), BuildError> {
    match std::fs::hard_link(src, dst) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(BuildError::Io {
            path: src.to_path_buf(),
            source: e,
        }),
        Err(_) => std::fs::copy(src, dst).map(|_| ()).map_err(io(dst)),
    }
}

/// Page bodies by item id.
pub(super) type Bodies = HashMap<i64, Arc<str>>;

/// What the pipeline hands a sink for one planned file.
pub(super) enum Made<'a> {
    /// Rendered text (kept as text: its links are read without checking it again).
    Rendered(String),
    /// A file copied as is, with its sha256.
    Copy(&'a CopySource, &'a str),
}

/// Where a render goes: a revision directory (`build`) or memory (watch mode's preview).
/// The pipeline ([`render_all`]) is the same for both.
pub(super) trait Sink: Sync {
    type File: Send;
    /// What [`Sink::find`] found of the previous output: for a revision, the file's index in
    /// the previous manifest; for the preview, the file itself.
    type Found: Send + Sync;
    /// The previous output's file for `p` with its key, found — not yet made part of this
    /// output.
    fn find(&self, p: &Planned) -> Option<Self::Found>;
    /// [`Sink::find`] of every planned file, in order; a sink may do better than one look-up
    /// each.
    fn find_all(&self, planned: &[Planned]) -> Vec<Option<Self::Found>> {
        planned.par_iter().map(|p| self.find(p)).collect()
    }
    /// The previous output's file for `p`, as [`Sink::find`] found it, made part of this
    /// output (hard-linked, or shared); `None` when it cannot be had (its source gone): then
    /// `p` is rendered after all.
    fn reuse(&self, p: &Planned, found: &Self::Found) -> Option<Self::File>;
    fn store(&self, p: &Planned, made: Made<'_>) -> Result<Self::File, BuildError>;
    /// The previous output's file at `p`'s path, whatever its key, made part of this output:
    /// what stays of a page whose template failed for it (`None`: it had none, or the sink
    /// keeps none — the preview shows the error instead).
    fn keep_previous(&self, p: &Planned) -> Result<Option<Self::File>, BuildError>;
}

/// What the pipeline made of every planned file.
pub(super) struct Outputs<F> {
    /// Each file made or reused, with whether it was reused, in plan order.
    pub(super) files: Vec<(F, bool)>,
    /// The pages held (their template failed for them alone), each with its previous
    /// version where the sink kept one.
    pub(super) held: Vec<(HeldPage, Option<F>)>,
}

/// What became of one planned file.
enum One<F> {
    File(F, bool),
    Held(HeldPage, Option<F>),
}

/// The render pipeline, a chunk at a time: reuse what the sink can, fetch the bodies of
/// everything else (fallbacks included: a page is never rendered from missing data), then
/// render and store in parallel. Returns each file with whether it was reused.
///
/// The bodies come from the snapshot, whose connection is this thread's: while the pool
/// renders one chunk, this thread fetches the next chunk's (those of every file whose
/// previous one the sink did not [`Sink::find`]; every file is looked for once, in parallel,
/// before the first chunk), so the pool is not left idle during each fetch. A file that was
/// expected to be reused and could not be (its old file gone) has its bodies fetched before
/// its chunk renders.
pub(super) fn render_all<S: Sink>(
    planned: &[Planned],
    sink: &S,
    renderer: &Renderer<'_>,
    bodies: &mut dyn FnMut(&[i64]) -> Result<Bodies, BuildError>,
    progress: Progress<'_>,
) -> Result<Outputs<S::File>, BuildError> {
    const CHUNK: usize = 2048;
    // Zola's templates can reach every page's content: read every body once.
    let with_zola;
    let renderer = match renderer.zola_mode {
        true => {
            let all: Vec<i64> = renderer.pages.iter().map(|p| p.view.row).collect();
            with_zola = renderer.with_zola(planned, &bodies(&all)?);
            &with_zola
        }
        false => renderer,
    };
    let total = planned.len() as u64;
    let mut done = 0u64;
    progress(done, total);
    let mut out = Outputs {
        files: Vec::with_capacity(planned.len()),
        held: Vec::new(),
    };
    let found: Vec<Option<S::Found>> = sink.find_all(planned);
    let chunks: Vec<(&[Planned], &[Option<S::Found>])> =
        planned.chunks(CHUNK).zip(found.chunks(CHUNK)).collect();
    let wanted = |(chunk, found): (&[Planned], &[Option<S::Found>])| {
        let unfound = chunk.iter().zip(found).filter(|(_, f)| f.is_none());
        body_ids_of(unfound.map(|(p, _)| p), renderer)
    };
    let mut fetched = match chunks.first() {
        Some(first) => bodies(&wanted(*first))?,
        None => Bodies::new(),
    };
    for (k, &(chunk, found)) in chunks.iter().enumerate() {
        let reused: Vec<Option<S::File>> = (chunk.par_iter().zip(found))
            .map(|(p, f)| f.as_ref().and_then(|f| sink.reuse(p, f)))
            .collect();
        let rendered = chunk.iter().zip(&reused).filter(|(_, r)| r.is_none());
        let mut missing = body_ids_of(rendered.map(|(p, _)| p), renderer);
        missing.retain(|id| !fetched.contains_key(id));
        if !missing.is_empty() {
            fetched.extend(bodies(&missing)?);
        }
        let mut results = Vec::new();
        let mut next = None;
        rayon::in_place_scope(|s| {
            let fetched = &fetched;
            let results = &mut results;
            s.spawn(move |_| *results = render_chunk(chunk, reused, fetched, sink, renderer));
            next = chunks.get(k + 1).map(|c| bodies(&wanted(*c)));
        });
        for r in results {
            match r? {
                One::File(f, reused) => out.files.push((f, reused)),
                One::Held(page, kept) => out.held.push((page, kept)),
            }
        }
        if let Some(n) = next {
            fetched = n?;
        }
        done += chunk.len() as u64;
        progress(done, total);
    }
    Ok(out)
}

/// The bodies `files` render from, each id once.
fn body_ids_of<'p>(files: impl Iterator<Item = &'p Planned>, renderer: &Renderer<'_>) -> Vec<i64> {
    let mut ids: Vec<i64> = files
        .flat_map(|p| body_ids(&p.job, renderer.pages, renderer.notices))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The most files one thread renders as one piece of a chunk. Rayon splits a parallel
/// iterator into a few long pieces and splits further only what a thief steals; a piece
/// running on one thread cannot be split, so at each chunk's end one thread rendered the rest
/// of its piece (hundreds of pages, up to ~20 ms at 10,000 items) while the other idled —
/// `perf sched` showed it. Pieces of 8 pages bound that wait to a few pages, at the cost of a
/// rayon job per piece. Measured (cold, 10,000 items, 12 interleaved rounds): 218 ms with
/// rayon's own splitting; 207, 205, 216, 216 ms with pieces of 2, 8, 32, 128 pages.
const RENDER_PIECE: usize = 8;

/// One chunk rendered and stored in parallel, the reused files as they are. A page whose
/// template fails for it alone is held: its previous version kept where the sink has one.
fn render_chunk<S: Sink>(
    chunk: &[Planned],
    reused: Vec<Option<S::File>>,
    fetched: &Bodies,
    sink: &S,
    renderer: &Renderer<'_>,
) -> Vec<Result<One<S::File>, BuildError>> {
    let body = |id: i64| fetched.get(&id).cloned();
    // Links and renders both in parallel: links into one big folder contend on its lock,
    // but measured at 100k pages two threads still beat one (1.6 s against 2.6 s).
    chunk
        .par_iter()
        .zip(reused.into_par_iter())
        .with_max_len(RENDER_PIECE)
        .map(|(p, r)| match r {
            Some(f) => Ok(One::File(f, true)),
            None => {
                let made = match &p.job {
                    Job::Copy { source, sha256 } | Job::Resource { source, sha256, .. } => {
                        Made::Copy(source, sha256)
                    }
                    _ => match renderer.render(p, &body) {
                        Ok(text) => Made::Rendered(text),
                        Err(BuildError::Render {
                            template, message, ..
                        }) => return held(p, template, message, sink, renderer),
                        Err(e) => return Err(e),
                    },
                };
                sink.store(p, made).map(|f| One::File(f, false))
            }
        })
        .collect()
}

/// Page `p`, whose template `template` failed for it with `why`: held, its previous version
/// kept where the sink has one.
fn held<S: Sink>(
    p: &Planned,
    template: String,
    why: String,
    sink: &S,
    renderer: &Renderer<'_>,
) -> Result<One<S::File>, BuildError> {
    // What was at a withdrawal notice's URL before is the withdrawn item's own page.
    let kept = match p.job {
        Job::Notice(_) => None,
        _ => sink.keep_previous(p)?,
    };
    tracing::warn!(page = %p.path, template = %template, error = %why, "page held: its template failed for it");
    let page = HeldPage {
        path: p.path.clone(),
        what: p.what(renderer.pages, renderer.notices),
        template: Some(template),
        why,
        previous_kept: kept.is_some(),
    };
    Ok(One::Held(page, kept))
}

/// A revision directory being written: reuse hard-links from the previous revision.
pub(super) struct DirSink<'a> {
    pub(super) staging: &'a Path,
    /// `staging`, open: rendered files are written beneath it.
    pub(super) beneath: Beneath,
    pub(super) prev: Option<&'a super::reuse::Previous>,
    /// The previous revision's files already linked into `staging` (early links).
    pub(super) prelinked: Option<&'a prelink::Prelinked>,
    /// The site's path under its host (`Config::base_path`): links are recorded without it.
    pub(super) base_path: &'a str,
}

/// What the directory sink made of one file: an entry of its own, or the previous revision's
/// file `index` (of its manifest) kept, with the cache fields this revision gives it — its
/// entry left in the previous manifest's bytes (see `fencepost_output::carried`).
pub(super) use fencepost_output::carried::File as Stored;

/// The previous revision's file a planned file can reuse: its index in the previous manifest,
/// and whether it is linked into the staging folder already (an early link).
pub(super) struct Found {
    index: usize,
    linked: bool,
}

impl Sink for DirSink<'_> {
    type File = Stored;
    type Found = Found;

    fn find(&self, p: &Planned) -> Option<Found> {
        let (_, m) = self.prev?;
        let index = m.find(&p.path).filter(|&i| m.key(i) == p.key)?;
        let linked = self.prelinked.is_some_and(|l| l.contains(&p.path));
        Some(Found { index, linked })
    }

    /// One walk along the plan, the previous manifest and the early links, all three in path
    /// order, in place of two binary searches per file (at 100,000 files ~40 ms of CPU, spent
    /// while the early links want both cores). A plan or manifest out of order is looked up
    /// file by file.
    fn find_all(&self, planned: &[Planned]) -> Vec<Option<Found>> {
        let Some((_, m)) = self.prev else {
            return planned.iter().map(|_| None).collect();
        };
        let by_path = |a: &str, b: &str| a.as_bytes() <= b.as_bytes();
        if !planned.is_sorted_by(|a, b| by_path(&a.path, &b.path)) || !m.is_sorted() {
            return planned.par_iter().map(|p| self.find(p)).collect();
        }
        let mut at = 0;
        let mut early = self.prelinked.map(prelink::Prelinked::walk);
        let mut found = |p: &Planned| {
            let path = p.path.as_bytes();
            while at < m.len() && m.path(at).as_bytes() < path {
                at += 1;
            }
            (at < m.len() && m.path(at) == p.path && m.key(at) == p.key).then_some(())?;
            let linked = early.as_mut().is_some_and(|w| w.linked(&p.path));
            Some(Found { index: at, linked })
        };
        planned.iter().map(&mut found).collect()
    }

    fn reuse(&self, p: &Planned, &Found { index, linked }: &Found) -> Option<Stored> {
        let (dir, _) = self.prev?;
        if !linked {
            let dst = place(self.staging, &p.path).ok()?;
            // A missing source (a file pruned, or the whole revision garbage-collected since
            // this build read its manifest) means the file is rendered after all.
            link_or_copy(&dir.join(&p.path), &dst).ok()?;
        }
        Some(Stored::Kept {
            index,
            cache: p.cache,
        })
    }

    fn keep_previous(&self, p: &Planned) -> Result<Option<Stored>, BuildError> {
        let Some((dir, m)) = self.prev else {
            return Ok(None);
        };
        let Some(index) = m.find(&p.path) else {
            return Ok(None);
        };
        // An early link of it is the previous revision's file already.
        if !self.prelinked.is_some_and(|l| l.contains(&p.path)) {
            let dst = place(self.staging, &p.path)?;
            if link_or_copy(&dir.join(&p.path), &dst).is_err() {
                return Ok(None);
            }
        }
        Ok(Some(Stored::Kept {
            index,
            cache: p.cache,
        }))
    }

    fn store(&self, p: &Planned, made: Made<'_>) -> Result<Stored, BuildError> {
        if let Some(l) = self.prelinked {
            // Never write through an early link: that would change the previous revision.
            l.unlink(self.staging, &p.path)?;
        }
        let (sha256, bytes, links) = match made {
            Made::Copy(source, sha256) => {
                let dst = place(self.staging, &p.path)?;
                (
                    sha256.to_string(),
                    copy_input(source, sha256, &dst)?,
                    Vec::new(),
                )
            }
            Made::Rendered(out) => {
                self.beneath.write(&p.path, out.as_bytes())?;
                let links = if p.path.ends_with(".html") {
                    links::internal_links(&out, &p.path, self.base_path)
                } else {
                    Vec::new()
                };
                (
                    fencepost_core::digest::sha256_hex(out.as_bytes()),
                    out.len() as u64,
                    links,
                )
            }
        };
        Ok(Stored::New(Entry {
            path: p.path.clone(),
            sha256,
            bytes,
            content_type: manifest::content_type(&p.path).to_string(),
            cache: p.cache,
            max_age: p.cache.max_age(),
            key: p.key.clone(),
            links,
            location: match &p.job {
                super::plan::Job::Alias { target } => Some(target.clone()),
                _ => None,
            },
        }))
    }
}

/// Watch mode's preview in memory: reuse shares the previous preview's bytes.
pub(super) struct MemorySink<'a> {
    pub(super) prev: Option<&'a MemorySite>,
}

impl<'a> Sink for MemorySink<'a> {
    type File = (String, MemoryFile);
    type Found = &'a MemoryFile;

    fn find(&self, p: &Planned) -> Option<&'a MemoryFile> {
        self.prev?.files.get(&p.path).filter(|f| f.key == p.key)
    }

    fn reuse(&self, p: &Planned, found: &&'a MemoryFile) -> Option<(String, MemoryFile)> {
        Some((p.path.clone(), (*found).clone()))
    }

    /// None: the editor sees why the page is held at its URL, not an older page.
    fn keep_previous(&self, _: &Planned) -> Result<Option<(String, MemoryFile)>, BuildError> {
        Ok(None)
    }

    fn store(&self, p: &Planned, made: Made<'_>) -> Result<(String, MemoryFile), BuildError> {
        let bytes = match made {
            Made::Rendered(b) => b.into_bytes(),
            Made::Copy(source, sha256) => (source.bytes(sha256)).map_err(io(&p.path))?.to_vec(),
        };
        Ok((
            p.path.clone(),
            MemoryFile {
                key: p.key.clone(),
                sha256: fencepost_core::digest::sha256_hex(&bytes),
                bytes: Arc::new(bytes),
                content_type: manifest::content_type(&p.path),
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str, key: &str) -> Entry {
        Entry {
            path: path.into(),
            sha256: String::new(),
            bytes: 0,
            content_type: String::new(),
            cache: manifest::CacheClass::Content,
            max_age: 0,
            key: key.into(),
            links: Vec::new(),
            location: None,
        }
    }

    /// The walk along plan, manifest and early links finds what a look-up of each file finds:
    /// the same file, the same key, the same early link — through paths that sort differently
    /// as bytes and as folders (`a-b` before `a/b`), files only one side has, changed keys.
    #[test]
    fn finding_every_file_in_one_walk_finds_what_each_look_up_finds() {
        let mut paths: Vec<String> = (0..400)
            .map(|i| match i % 5 {
                0 => format!("a/{i}/index.html"),
                1 => format!("a-{i}/index.html"),
                2 => format!("a/{i}.xml"),
                3 => format!("é/{i}/index.html"),
                _ => format!("z{i}"),
            })
            .collect();
        paths.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        let prev: Vec<Entry> = (paths.iter().enumerate())
            .filter(|(i, _)| i % 7 != 3)
            .map(|(i, p)| entry(p, &format!("k{}", i % 11)))
            .collect();
        let linked_paths: Vec<String> = prev.iter().map(|e| e.path.clone()).collect();
        let linked: Vec<bool> = (0..linked_paths.len()).map(|i| i % 3 != 0).collect();
        let prelinked = prelink::Prelinked::of(linked_paths, linked);
        let planned: Vec<Planned> = (paths.iter().enumerate())
            .filter(|(i, _)| i % 13 != 5)
            .map(|(i, p)| Planned {
                path: p.clone(),
                job: Job::NotFound,
                cache: manifest::CacheClass::Content,
                key: format!("k{}", if i % 17 == 0 { 99 } else { i % 11 }),
            })
            .collect();
        let prev = (
            PathBuf::from("prev"),
            fencepost_output::carried::Carried::from_bytes(
                fencepost_output::manifest::Manifest::of_files(prev).to_bytes(),
            )
            .unwrap(),
        );
        let sink = DirSink {
            staging: Path::new("staging"),
            beneath: Beneath::open(Path::new("staging")),
            prev: Some(&prev),
            prelinked: Some(&prelinked),
            base_path: "",
        };
        let walked = sink.find_all(&planned);
        let looked: Vec<Option<Found>> = planned.iter().map(|p| sink.find(p)).collect();
        let pairs = |v: &[Option<Found>]| -> Vec<Option<(usize, bool)>> {
            v.iter()
                .map(|f| f.as_ref().map(|f| (f.index, f.linked)))
                .collect()
        };
        assert_eq!(pairs(&walked), pairs(&looked));
        let found = walked.iter().flatten().count();
        assert!(
            found > 200 && found < planned.len(),
            "{found} of {}",
            planned.len()
        );
        assert!(walked.iter().flatten().any(|f| !f.linked));
    }
}
