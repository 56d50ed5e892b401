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
//! PREVIEW banner — into `.fencepost/preview/`, outside `public/` (so no copy of `public/`
//! carries an embargoed page), which nothing points to and deploys refuse; watch
//! mode renders the same into memory ([`preview_in_memory`]). All three run one pipeline:
//! a source (`source.rs`: the ledger snapshot or the content tree), the plan (`plan.rs`),
//! then reuse → fetch bodies → render → store over a sink (`render.rs`: a revision directory
//! or memory), then the link check and, on disk, the manifest and the pointer.

mod bundles;
mod destination;
pub mod fingerprint;
mod inputs;
pub mod links;
mod memory;
pub mod plan;
mod prelink;
mod render;
mod reuse;
mod sink;
mod snapshot;
mod source;
pub mod templates;
pub mod terms;
pub mod view;
pub mod xml;

use crate::clock::{Clock, Instant};
use crate::config::collections::{Collection, Collections, IdKind, OnWithdraw};
use crate::content::{self, ContentError, ImageSource};
use crate::ledger::{self, LedgerError};
use crate::output::manifest::{self, Entry, Manifest};
use crate::output::pointer;
use crate::output::public::Public;
use crate::output::revision::RevisionId;
use crate::output::OutputError;
use crate::site::Site;
use chrono::NaiveDate;
use destination::Destination;
use inputs::SiteInputs;
pub use memory::{preview_in_memory, MemoryFile, MemoryReport, MemorySite};
use plan::{CopyInput, CopySource, Job, PageInput, Planned};
use render::Renderer;
use reuse::Reuse;
use serde::Serialize;
use sink::DirSink;
pub use source::TreeCache;
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
    /// Render the content tree as it is now, embargoed items included, into
    /// `.fencepost/preview/` (outside `public/`).
    pub preview: bool,
    /// Broken internal links are fatal.
    pub strict: bool,
    /// Render everything; reuse nothing from the previous revision.
    pub full: bool,
}

/// A page the build left out rather than fail the whole revision for one source: an item
/// whose URL another file of the site has, a path that cannot be written, a plain page that
/// does not read. Everything else is built and put in place; the command exits non-zero.
#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    /// The item (`collection/id`) or the file (`content/about.md`) left out.
    pub what: String,
    /// The output path it would have had, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BrokenLink {
    pub page: String,
    pub link: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub revision: i64,
    /// The build fingerprint B (`build` in JSON and on disk: a contract).
    #[serde(rename = "build")]
    pub fingerprint: String,
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
    /// Pages left out of this revision, each named with why (see [`LeftOut`]).
    pub left_out: Vec<LeftOut>,
    /// Temporary directories of dead builds removed before this one.
    pub abandoned_removed: usize,
    /// Files of the previous revision hard-linked while the snapshot was read and the plan
    /// made (see `prelink.rs`), before the plan removed the ones it did not keep.
    pub early_links: usize,
}

pub(crate) fn content_key(s: &str) -> String {
    content::sha256_hex(s.as_bytes())
}

/// Logs how long each phase took (at `-v`).
struct Phases(std::time::Instant);

impl Phases {
    fn start() -> Phases {
        Phases(std::time::Instant::now())
    }

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

/// [`run`], telling `progress` how far the render has come: where the output goes
/// (`destination.rs`), what is reused (`reuse.rs`), the ledger's steps (`snapshot.rs`).
pub fn run_with_progress(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Report, BuildError> {
    let mut phases = Phases::start();
    let mut dest = Destination::open(site, opts.preview)?;
    let inputs = SiteInputs::read(site)?;
    let fingerprint = inputs.fingerprints.whole.clone();
    let mut ledger = site.open_ledger()?;
    let at = match dest.public() {
        Some(public) => Some(snapshot::ledger_revision(&mut ledger, public)?),
        None => None,
    };
    let mut reuse = Reuse::start(&dest, opts.full, at, &fingerprint)?;
    let snap = ledger.snapshot()?;
    let origin = snapshot::Origin::read(&snap)?;
    let now = clock.now();
    if let Some(built) = snapshot::already_built(&snap, &dest, &fingerprint, opts.full, now)? {
        drop(snap);
        crate::fail_point!("build.after_snapshot");
        let tidied = dest.tidied();
        let Destination::Revision(public) = &mut dest else {
            unreachable!("a preview is never found built")
        };
        let report = snapshot::point_to_built(built, public, &origin, clock)?;
        return Ok(Report {
            abandoned_removed: tidied,
            ..report
        });
    }
    let mut source = snapshot::read_source(site, &snap, &dest, clock)?;
    phases.mark("snapshot");
    crate::fail_point!("build.after_snapshot");
    let id = RevisionId::new(source.revision, &fingerprint);
    let (templates, planned, left_out) = inputs.plan(site, &mut source)?;
    phases.mark("plan");
    let mut prev = reuse.previous();
    if let Some(public) = dest.public() {
        public.live_is_from(
            &origin.ledger_id,
            prev.as_ref().map(|(d, m)| (d.as_path(), m)),
        )?;
    }
    phases.mark("previous manifest");
    crate::fail_point!("build.after_previous");
    let (staging, prelinked, early_links) = reuse.staging(&dest, &id, &planned)?;
    phases.mark("early links");
    let (pages, notices) = (&source.pages, &source.notices);
    let preview = dest.is_preview();
    let renderer = Renderer::new(site, &templates, pages, notices, preview);
    let sink = DirSink {
        staging: &staging.path,
        prev: prev.as_ref(),
        prelinked: prelinked.as_ref(),
    };
    let outputs = snapshot::render(&renderer, &sink, &planned, &source, &snap, progress)?;
    let rendered = snapshot::entries(outputs, prev.as_mut());
    drop(snap);
    phases.mark("render and link");
    crate::fail_point!("build.after_render");
    let broken = links::link_check(&rendered, prev.as_ref(), opts.strict)?;
    phases.mark("link check");
    let reused = rendered.reused;
    let manifest = snapshot::manifest(&id, preview, &origin, &broken, rendered.entries);
    let next_change_at = source.next_change_at;
    let pointer = dest.put_in_place(staging, &manifest, &id, clock.now(), next_change_at)?;
    phases.mark("manifest and rename");
    let dir = dest.dir(&id);
    let report = snapshot::report(&manifest, dir, reused, pointer, next_change_at, broken);
    crate::drop_later((source, planned, manifest, prev, prelinked));
    Ok(Report {
        abandoned_removed: dest.tidied(),
        early_links,
        left_out,
        ..report
    })
}

/// Writes the audit entry of a journaled rollback if it is missing (once: the entry's subject
/// names the rollback), then marks the journal audited. A build does this first, so a
/// rollback that died between moving the pointer and writing its entry loses no receipt.
fn finish_rollback_receipt(ledger: &mut ledger::Ledger, public: &Public) -> Result<(), BuildError> {
    if let Some((journal, detail)) = public.unaudited_rollback() {
        ledger.write(|tx| ledger::audit::rollback_receipt(tx, journal.at, &journal.id, &detail))?;
        public.rollback_audited(&journal.id)?;
    }
    Ok(())
}
