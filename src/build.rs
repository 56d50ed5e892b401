//! `fencepost build`: renders publication revision R of the ledger, with build fingerprint B,
//! into `public/revisions/<R>-<B>/`, then moves the pointer.
//!
//! 1. One read transaction: R, every public page (without bodies), the next embargo end.
//! 2. Plan every output file with a key over everything that goes into it.
//! 3. Render into a temporary directory: a file whose key equals the previous revision's is
//!    hard-linked from it (copied where links are impossible); the rest are rendered in
//!    parallel, bodies streamed from the ledger a chunk at a time.
//! 4. Check internal links, write the manifest, flush, rename into place.
//! 5. Move `public/current` forward (never to a lower revision).
//!
//! `--preview` renders the content tree as it is now — embargoed items included, with a
//! PREVIEW banner — into `public/preview/`, which nothing points to and deploys refuse; watch
//! mode renders the same into memory ([`preview_in_memory`]). All three run one pipeline:
//! a source (`source.rs`: the ledger snapshot or the content tree), the plan (`plan.rs`),
//! then reuse → fetch bodies → render → store over a sink (`render.rs`: a revision directory
//! or memory), then the link check and, on disk, the manifest and the pointer.

pub mod admin;
pub mod fingerprint;
pub mod links;
pub mod plan;
mod prelink;
mod render;
mod source;
pub mod templates;
pub mod terms;
pub mod view;
pub mod xml;

use crate::clock::{Clock, Instant};
use crate::config::collections::{Collection, Collections, IdKind, OnWithdraw};
use crate::content::{self, ContentError, ImageSource};
use crate::ledger::items::ItemId;
use crate::ledger::{self, LedgerError};
use crate::output::manifest::{self, Entry, Manifest};
use crate::output::pointer::{self, Pointer};
use crate::output::revision::{self, RevisionId, Staging};
use crate::output::OutputError;
use crate::site::Site;
use chrono::NaiveDate;
use plan::{CopyInput, CopySource, Job, PageInput, Planned};
use rayon::prelude::*;
use render::{render_all, safe_rel, Bodies, DirSink, MemorySink, Renderer};
use serde::Serialize;
pub use source::TreeCache;
use source::{ledger_source, plain_pages, static_copies, tree_source, Source};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use view::{IdView, ItemPage, PlainView, SiteView};

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("template {path}: {message}")]
    Template { path: PathBuf, message: String },
    #[error("missing template {dir}/{name}: this site needs {required}", dir = dir.display())]
    MissingTemplate {
        name: String,
        dir: PathBuf,
        required: String,
    },
    #[error("rendering {output} with {template}: {message}")]
    Render {
        template: String,
        output: String,
        message: String,
    },
    #[error("{path}: {why}")]
    PlainPage { path: PathBuf, why: String },
    #[error("two sources write {path}: {why}")]
    Collision { path: String, why: String },
    #[error("{count} broken internal link(s), first: {first} (--strict makes these fatal; nothing was swapped)")]
    BrokenLinks { count: usize, first: String },
    #[error("rendering {output}: the ledger snapshot has no body for item {item}; nothing was swapped (run `fencepost verify`, then build again)")]
    MissingBody { item: String, output: String },
    #[error("{path}: {why}")]
    Input { path: PathBuf, why: String },
    #[error(transparent)]
    Content(#[from] ContentError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BuildError {
    let path = path.into();
    move |source| BuildError::Io { path, source }
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Render the content tree as it is now, embargoed items included, into public/preview.
    pub preview: bool,
    /// Broken internal links are fatal.
    pub strict: bool,
    /// Render everything; reuse nothing from the previous revision.
    pub full: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct BrokenLink {
    pub page: String,
    pub link: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub revision: i64,
    pub build: String,
    pub path: String,
    pub rendered: usize,
    pub reused: usize,
    pub next_change_at: Option<Instant>,
    /// `moved`, `unchanged`, `kept_higher` (the pointer names a higher revision) or
    /// `none` (preview).
    pub pointer: pointer::PointerOutcome,
    /// The revision directory already existed complete; nothing was rendered.
    pub already_built: bool,
    pub preview: bool,
    pub files: usize,
    pub broken_links: Vec<BrokenLink>,
    /// Temporary directories of dead builds removed before this one.
    pub abandoned_removed: usize,
    /// Files of the previous revision hard-linked while the snapshot was read and the plan
    /// made (see `prelink.rs`), before the plan removed the ones it did not keep.
    pub early_links: usize,
}

pub(crate) fn content_key(s: &str) -> String {
    content::sha256_hex(s.as_bytes())
}

/// The site's own inputs — static files, templates, plain pages, config — read and hashed
/// once: for the build fingerprint and for what is rendered and copied. The first stage of
/// every build, whatever its source and sink.
struct SiteInputs {
    statics: Vec<CopyInput>,
    files: fingerprint::SiteFiles,
    assets: fingerprint::Assets,
    fingerprints: fingerprint::Fingerprints,
}

impl SiteInputs {
    fn read(site: &Site) -> Result<SiteInputs, BuildError> {
        let statics = static_copies(site)?;
        let files = fingerprint::SiteFiles::read(site)?;
        let assets = fingerprint::referenced_assets(&files.templates, &statics);
        let fingerprints = fingerprint::compute(site, &files, &statics, &assets);
        Ok(SiteInputs {
            statics,
            files,
            assets,
            fingerprints,
        })
    }

    /// The templates, and every file of the site planned from `source`.
    fn plan(
        &self,
        site: &Site,
        source: &Source,
    ) -> Result<(templates::Templates, Vec<Planned>), BuildError> {
        let templates = templates::Templates::load(
            &site.root,
            &self.files.templates,
            &self.assets.urls,
            &site.collections,
        )?;
        Ok((templates, prepare(site, self, source)?))
    }
}

/// Plans every file of the site from `source`, refusing collisions and unsafe paths.
fn prepare(site: &Site, inputs: &SiteInputs, source: &Source) -> Result<Vec<Planned>, BuildError> {
    let SiteInputs {
        statics,
        files,
        assets,
        fingerprints,
    } = inputs;
    let plain = plain_pages(files, &site.collections, &site.config.markdown)?;
    let mut copies = statics.to_vec();
    copies.extend(assets.copies.iter().cloned());
    copies.extend(source.images.iter().cloned());
    let planned = plan::plan(&plan::Inputs {
        pages: &source.pages,
        plain: &plain,
        copies: &copies,
        render_fingerprint: &fingerprints.render,
        generated_fingerprint: &fingerprints.generated,
        config: &site.config.build,
        collections: &site.collections,
        notices: &source.notices,
        rss: site.config.rss(),
    });
    for w in planned.windows(2) {
        if w[0].path == w[1].path {
            let what = |p: &Planned| match &p.job {
                Job::Item(i) => {
                    let v = &source.pages[*i].view;
                    format!("item {}/{}", v.collection, v.id.text())
                }
                Job::List(..) | Job::ListIndex(..) => "a list page".into(),
                Job::Term(v) => format!("a page of the term {:?}", v.name),
                Job::Terms(..) => "a taxonomy's index of terms".into(),
                Job::Notice(i) => {
                    let v = &source.notices[*i].view;
                    format!("the withdrawal notice of {}/{}", v.collection, v.id.text())
                }
                Job::Plain(v) => format!("plain page content/{}.md", v.slug),
                Job::Copy { .. } => "a file of static/ (or the hashed copy of one)".into(),
                _ => "a generated file".into(),
            };
            return Err(BuildError::Collision {
                path: w[0].path.clone(),
                why: format!(
                    "{} and {} both have this path: change a URL pattern in [collections], an id, or the file",
                    what(&w[0]),
                    what(&w[1])
                ),
            });
        }
    }
    if let Some(bad) = planned.iter().find(|p| !safe_rel(&p.path)) {
        return Err(BuildError::Collision {
            path: bad.path.clone(),
            why: "the path would leave the output folder".into(),
        });
    }
    Ok(planned)
}

/// One file of an in-memory preview.
#[derive(Debug, Clone)]
pub struct MemoryFile {
    pub key: String,
    pub bytes: Arc<Vec<u8>>,
    pub sha256: String,
    pub content_type: &'static str,
}

/// A whole preview site in memory (watch mode): path → file.
#[derive(Debug, Clone, Default)]
pub struct MemorySite {
    pub revision: i64,
    pub build: String,
    pub files: HashMap<String, MemoryFile>,
}

/// What an in-memory preview build did.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryReport {
    pub files: usize,
    pub rendered: usize,
    pub reused: usize,
    pub ms: u64,
}

/// Renders the content tree as it is now (like `--preview`) into memory, re-rendering only
/// files whose key differs from `prev`. Writes nothing to disk or the ledger.
pub fn preview_in_memory(
    site: &Site,
    clock: &Clock,
    cache: &mut TreeCache,
    prev: Option<&MemorySite>,
) -> Result<(MemorySite, MemoryReport), BuildError> {
    let started = std::time::Instant::now();
    let mut phases = Phases(std::time::Instant::now());
    let inputs = SiteInputs::read(site)?;
    phases.mark("preview fingerprint");
    let revision = if site.ledger_exists() {
        site.open_ledger()?.revision()?
    } else {
        0
    };
    phases.mark("preview ledger");
    let source = tree_source(site, revision, clock.now(), cache)?;
    phases.mark("preview tree");
    let (templates, planned) = inputs.plan(site, &source)?;
    phases.mark("preview plan");
    let renderer = Renderer::new(site, &templates, &source.pages, &source.notices, true);
    let sink = MemorySink { prev };
    let mut from_memory = |ids: &[i64]| -> Result<Bodies, BuildError> {
        Ok(ids
            .iter()
            .filter_map(|id| source.bodies.get(id).map(|b| (*id, b.clone())))
            .collect())
    };
    let outputs = render_all(&planned, &sink, &renderer, &mut from_memory, &|_, _| {})?;
    let mut files = HashMap::with_capacity(outputs.len());
    let (mut rendered, mut reused) = (0, 0);
    for ((path, f), was_reused) in outputs {
        if was_reused {
            reused += 1;
        } else {
            rendered += 1;
        }
        files.insert(path, f);
    }
    let report = MemoryReport {
        files: files.len(),
        rendered,
        reused,
        ms: started.elapsed().as_millis() as u64,
    };
    Ok((
        MemorySite {
            revision,
            build: inputs.fingerprints.build,
            files,
        },
        report,
    ))
}

/// Logs how long each phase took (at `-v`).
struct Phases(std::time::Instant);

impl Phases {
    fn mark(&mut self, phase: &str) {
        tracing::info!(
            phase,
            ms = self.0.elapsed().as_millis() as u64,
            "build phase done"
        );
        self.0 = std::time::Instant::now();
    }
}

/// Reports progress to the caller (the CLI draws a bar): (files done, files in all).
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

pub fn run(site: &Site, clock: &Clock, opts: &Options) -> Result<Report, BuildError> {
    run_with_progress(site, clock, opts, &|_, _| {})
}

/// [`run`], telling `progress` how far the render has come.
pub fn run_with_progress(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Report, BuildError> {
    let mut phases = Phases(std::time::Instant::now());
    // A ledger location that cannot be right is refused before anything is written.
    site.ledger_location()?;
    let public = site.public_dir();
    std::fs::create_dir_all(&public).map_err(io(&public))?;
    let mut abandoned_removed = revision::remove_abandoned(&public)?;
    // Leftovers of killed swaps and gc runs, unless someone is using the pointer right now.
    if let Some(n) = pointer::try_with_lock(&public, || {
        pointer::remove_dead_swaps(&public) + revision::remove_trash(&public).unwrap_or(0)
    }) {
        abandoned_removed += n;
    }
    let inputs = SiteInputs::read(site)?;
    let build = inputs.fingerprints.build.clone();
    let mut ledger = site.open_ledger()?;
    let mut ledger_revision = None;
    if !opts.preview {
        // A rollback that died between moving the pointer and writing its audit entry.
        admin::finish_rollback_receipt(&mut ledger, &public)?;
        // Revisions only grow, so the live revision can never be ahead of the ledger that
        // built it: if it is, this ledger is not that one (lost, emptied, restored from an old
        // backup) — even for output older than the ledger id in manifests.
        let now_at = ledger.revision()?;
        ledger_revision = Some(now_at);
        if let Some(live) = pointer::read(&public)? {
            if live.revision > now_at {
                return Err(OutputError::AheadOfLedger {
                    public: public.clone(),
                    live: live.dir,
                    ledger: now_at,
                }
                .into());
            }
        }
    }
    // The revision to reuse from: the one the pointer names (or, for preview, the last
    // preview).
    let prev_dir: Option<PathBuf> = if opts.full {
        None
    } else if opts.preview {
        Some(public.join("preview"))
    } else {
        pointer::read(&public)
            .ok()
            .flatten()
            .map(|p| p.dir)
            .or_else(|| {
                revision::list_complete(&public)
                    .ok()
                    .and_then(|l| l.first().map(|id| id.to_string()))
            })
            .map(|n| public.join(revision::REVISIONS).join(n))
    };
    // The revision this build will most likely make, from the ledger's revision now: if it
    // is complete already (a rerun with nothing new), nothing is read to reuse from.
    let looks_built = ledger_revision.is_some_and(|at| {
        !opts.full
            && revision::is_complete(
                &public
                    .join(revision::REVISIONS)
                    .join(RevisionId::new(at, &build).to_string()),
            )
    });
    // The previous manifest (a 100,000-entry one takes ~0.15 s to parse) is read on another
    // thread while the snapshot is read and the plan is made.
    let read_prev = |dir: Option<PathBuf>| -> Option<(PathBuf, Manifest)> {
        dir.and_then(|d| Manifest::read(&d).ok().map(|m| (d, m)))
    };
    let prev_reader = (!looks_built).then(|| {
        let dir = prev_dir.clone();
        std::thread::spawn(move || read_prev(dir))
    });
    // Early links (see prelink.rs): when the previous revision was built with the same
    // fingerprint, nearly all of it is reused, so its files are linked into the staging
    // directory meanwhile too. Not when this revision looks built already (a rerun).
    let mut staging: Option<Staging> = None;
    let mut early: Option<prelink::Early> = None;
    if let (Some(at), Some(prev)) = (ledger_revision, &prev_dir) {
        let same_build = prev
            .file_name()
            .and_then(|n| n.to_string_lossy().parse::<RevisionId>().ok())
            .map(|id| id.fingerprint == build)
            .unwrap_or(false);
        let guess = RevisionId::new(at, &build).to_string();
        if same_build && !looks_built {
            let s = Staging::create(&public, &guess)?;
            early = Some(prelink::Early::start(prev.clone(), s.path.clone()));
            staging = Some(s);
        }
    }
    let snap = ledger.snapshot()?;
    let ledger_id = snap.ledger_id()?;
    let audit_tip = snap.anchor()?;
    if !opts.preview && !opts.full {
        // A revision built already (a rerun with nothing new) is only pointed to: its pages
        // are not read, nor its file list parsed.
        let at = snap.revision()?;
        let name = RevisionId::new(at, &build).to_string();
        let dir = public.join(revision::REVISIONS).join(&name);
        if revision::is_complete(&dir) {
            let next_change_at = snap.next_change()?;
            drop(snap);
            crate::fail_point!("build.after_snapshot");
            let theirs = Manifest::read_ledger_id(&dir)?;
            same_ledger(&public, &name, theirs.as_deref(), &ledger_id)?;
            let files = match crate::output::index::count(&dir) {
                Ok(Some(n)) => n,
                _ => Manifest::read(&dir)?.files.len(),
            };
            let swap = pointer::advance(
                &public,
                &Pointer::new(at, &build),
                clock.now(),
                next_change_at,
            )?;
            return Ok(Report {
                revision: at,
                build,
                path: dir.display().to_string(),
                rendered: 0,
                reused: 0,
                next_change_at,
                pointer: pointer::PointerOutcome::from(&swap),
                already_built: true,
                preview: false,
                files,
                broken_links: Vec::new(),
                abandoned_removed,
                early_links: 0,
            });
        }
    }
    let source = if opts.preview {
        tree_source(
            site,
            snap.revision()?,
            clock.now(),
            &mut TreeCache::default(),
        )?
    } else {
        ledger_source(&snap, site)?
    };
    phases.mark("snapshot");
    crate::fail_point!("build.after_snapshot");
    let name = if opts.preview {
        "preview".to_string()
    } else {
        RevisionId::new(source.revision, &build).to_string()
    };
    let final_dir = if opts.preview {
        public.join("preview")
    } else {
        public.join(revision::REVISIONS).join(&name)
    };
    let mut early_links = 0;
    let report = |rendered, reused, files, pointer, broken_links, early_links| Report {
        revision: source.revision,
        build: build.clone(),
        path: final_dir.display().to_string(),
        rendered,
        reused,
        next_change_at: source.next_change_at,
        pointer,
        already_built: false,
        preview: opts.preview,
        files,
        broken_links,
        abandoned_removed,
        early_links,
    };

    let (templates, planned) = inputs.plan(site, &source)?;
    phases.mark("plan");

    let prev: Option<(PathBuf, Manifest)> = match prev_reader {
        Some(r) => r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        // The ledger moved on between the first look and the snapshot.
        None => read_prev(prev_dir.clone()),
    };
    if !opts.preview {
        // The live revision must come from this ledger: revision numbers of a new or emptied
        // ledger start again at 1 and would collide with the old output.
        if let Some(live) = pointer::read(&public)? {
            let live_dir = public.join(revision::REVISIONS).join(&live.dir);
            let theirs = match &prev {
                Some((d, m)) if *d == live_dir => m.ledger_id.clone(),
                _ => Manifest::read_ledger_id(&live_dir).ok().flatten(),
            };
            same_ledger(&public, &live.dir, theirs.as_deref(), &ledger_id)?;
        }
    }

    phases.mark("previous manifest");
    crate::fail_point!("build.after_previous");
    let staging = match staging.take() {
        Some(s) => s,
        None => Staging::create(&public, &name)?,
    };
    let prelinked = match early.take() {
        Some(e) => {
            let mut linked = e.wait();
            early_links = linked.count();
            let removed =
                linked.remove_unplanned(&staging.path, planned.iter().map(|p| p.path.as_str()))?;
            tracing::info!(linked = linked.count(), removed, "early links");
            Some(linked)
        }
        None => None,
    };
    phases.mark("early links");
    let renderer = Renderer::new(
        site,
        &templates,
        &source.pages,
        &source.notices,
        opts.preview,
    );
    let sink = DirSink {
        staging: &staging.path,
        prev: prev.as_ref(),
        prelinked: prelinked.as_ref(),
    };
    // Bodies: in memory for a preview (read from the content tree), else fetched from the
    // snapshot a chunk at a time, on this thread (the connection is not Sync).
    let mut fetch = |ids: &[i64]| -> Result<Bodies, BuildError> {
        let mut out = HashMap::with_capacity(ids.len());
        for &id in ids {
            let body = match source.bodies.get(&id) {
                Some(b) => Some(b.clone()),
                None => snap.body(ItemId(id))?.map(Arc::from),
            };
            if let Some(b) = body {
                out.insert(id, b);
            }
        }
        Ok(out)
    };
    let outputs = render_all(&planned, &sink, &renderer, &mut fetch, progress)?;
    let mut prev = prev;
    let mut entries: Vec<Entry> = Vec::with_capacity(outputs.len());
    let mut rendered_paths: std::collections::HashSet<String> = std::collections::HashSet::new();
    let (mut rendered, mut reused) = (0usize, 0usize);
    for (stored, was_reused) in outputs {
        let e = stored.into_entry(prev.as_mut().map(|(_, m)| m));
        if was_reused {
            reused += 1;
        } else {
            rendered += 1;
            rendered_paths.insert(e.path.clone());
        }
        entries.push(e);
    }
    drop(snap);
    phases.mark("render and link");
    crate::fail_point!("build.after_render");

    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let broken = check_links(&entries, &rendered_paths, prev.as_ref().map(|(_, m)| m));
    for b in broken.iter().take(20) {
        tracing::warn!(page = %b.page, link = %b.link, "broken internal link");
    }
    if opts.strict && !broken.is_empty() {
        return Err(BuildError::BrokenLinks {
            count: broken.len(),
            first: format!("{} -> {}", broken[0].page, broken[0].link),
        });
    }
    phases.mark("link check");
    let files = entries.len();
    let manifest = Manifest {
        revision: source.revision,
        ledger_id: (!opts.preview).then(|| ledger_id.clone()),
        audit_tip: (!opts.preview).then(|| manifest::AuditAnchor {
            seq: audit_tip.seq,
            hash: audit_tip.hash.clone(),
        }),
        build: build.clone(),
        preview: opts.preview,
        broken_links: broken
            .iter()
            .map(|b| (b.page.clone(), b.link.clone()))
            .collect(),
        files: entries,
    };
    if opts.preview {
        staging.replace(&manifest, &final_dir)?;
        return Ok(report(
            rendered,
            reused,
            files,
            pointer::PointerOutcome::None,
            broken,
            early_links,
        ));
    }
    let moved = staging.finish(&manifest, &name)?;
    phases.mark("manifest and rename");
    if !moved {
        tracing::info!(dir = %final_dir.display(), "another build finished this revision first");
    }
    let swap = pointer::advance(
        &public,
        &Pointer::new(source.revision, &build),
        clock.now(),
        source.next_change_at,
    )?;
    let done = report(
        rendered,
        reused,
        files,
        pointer::PointerOutcome::from(&swap),
        broken,
        early_links,
    );
    crate::drop_later((source, planned, manifest, prev, prelinked));
    Ok(done)
}

/// Internal links that resolve to no file of the revision. A reused page is re-checked only
/// when some path of the previous revision is gone, or it had broken links there: otherwise
/// its links resolve exactly as they did.
fn check_links(
    entries: &[Entry],
    rendered: &std::collections::HashSet<String>,
    prev: Option<&Manifest>,
) -> Vec<BrokenLink> {
    // `entries` and every manifest's files are sorted by path: lookups are binary searches
    // and "was anything removed" is one merge walk, with no set of 100,000 paths built.
    let exists = |p: &str| entries.binary_search_by(|e| e.path.as_str().cmp(p)).is_ok();
    let something_removed = prev.is_none_or(|m| {
        let mut now = entries.iter().map(|e| e.path.as_str()).peekable();
        m.files.iter().any(|f| {
            while now.next_if(|p| *p < f.path.as_str()).is_some() {}
            now.peek() != Some(&f.path.as_str())
        })
    });
    let broken_before: std::collections::HashSet<&str> = prev
        .map(|m| {
            m.broken_links
                .iter()
                .map(|(page, _)| page.as_str())
                .collect()
        })
        .unwrap_or_default();
    // In parallel: a site with taxonomies has a few hundred thousand links to check.
    entries
        .par_iter()
        .filter(|e| {
            something_removed
                || rendered.contains(&e.path)
                || broken_before.contains(e.path.as_str())
        })
        .flat_map_iter(|e| {
            e.links
                .iter()
                .filter(|l| !links::resolves(l, exists))
                .map(|l| BrokenLink {
                    page: e.path.clone(),
                    link: l.clone(),
                })
        })
        .collect()
}

/// Refuses output built from another ledger (a manifest without an id predates the check).
fn same_ledger(
    public: &Path,
    dir: &str,
    theirs: Option<&str>,
    ours: &str,
) -> Result<(), OutputError> {
    match theirs {
        Some(t) if t != ours => Err(OutputError::ForeignOutput {
            public: public.to_path_buf(),
            dir: dir.to_string(),
            theirs: t.to_string(),
            ours: ours.to_string(),
        }),
        _ => Ok(()),
    }
}
