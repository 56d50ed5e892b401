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
mod check;
mod destination;
pub mod fingerprint;
mod inputs;
pub mod links;
mod memory;
pub mod page;
pub mod plan;
mod prelink;
mod render;
mod report;
mod reuse;
mod sink;
mod snapshot;
mod source;
pub mod templates;
pub mod terms;
pub mod view;
pub mod xml;

use crate::clock::Clock;
pub use crate::output::memory::{MemoryFile, MemorySite};
use crate::output::revision::RevisionId;
use crate::site::Site;
use destination::Destination;
use inputs::SiteInputs;
pub use memory::{preview_in_memory, MemoryReport};
use render::Renderer;
use report::Phases;
pub use report::{BrokenLink, BuildError, LeftOut, Options, Progress, Report};
use reuse::Reuse;
use sink::DirSink;
pub use source::TreeCache;

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
    let broken = check::link_check(&rendered, prev.as_ref(), opts.strict)?;
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
