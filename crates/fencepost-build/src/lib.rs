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
mod images;
mod inputs;
mod languages;
pub mod links;
mod memory;
pub mod page;
pub mod plan;
mod prelink;
mod render;
mod report;
mod reuse;
pub mod sass;
mod search;
pub(crate) mod sink;
mod snapshot;
mod source;
pub mod templates;
pub mod terms;
pub mod transparency;
pub mod view;
mod warm;
pub mod well_known;
pub mod xml;
pub mod zola;

use destination::Destination;
use fencepost_core::clock::Clock;
use fencepost_ledger::{Ledger, Snapshot};
use fencepost_output::id::RevisionId;
use fencepost_output::revision::Staging;
use fencepost_site::Site;
use inputs::SiteInputs;
pub use memory::{preview_in_memory, MemoryReport};
use prelink::Prelinked;
use render::Renderer;
use report::Phases;
pub use report::{AsOf, BrokenLink, BuildError, HeldPage, LeftOut, Options, Progress, Report};
use reuse::{Previous, Reuse};
use sink::DirSink;
use snapshot::Rendered;
use snapshot::Written;
use source::Source;
pub use source::{next_due_after, TreeCache};
pub use warm::Warm;

/// The pages held in the revision at `dir` (`public/current`), as its build recorded them:
/// what `status` and each cycle of `run` report while they stay held.
pub fn held_in(dir: &std::path::Path) -> Vec<HeldPage> {
    (fencepost_output::own::held(dir))
        .and_then(|j| serde_json::from_slice(&j).ok())
        .unwrap_or_default()
}

pub fn run(site: &Site, clock: &Clock, opts: &Options) -> Result<Report, BuildError> {
    run_with_progress(site, clock, opts, &|_, _| {})
}

/// [`run`], telling `progress` how far the render has come; started again (from a new
/// snapshot) when a publish moved the ledger on while the build wrote its transparency log.
/// The public page rows are read from what the last one-shot build saved when they are
/// still this ledger's (`warm/saved.rs`; never with `--full`, which reads every row).
pub fn run_with_progress(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Report, BuildError> {
    let mut warm = match opts.full || opts.preview {
        true => Warm::default(),
        false => Warm::saved_in(&site.state_dir()),
    };
    run_warm(site, clock, opts, progress, &mut warm)
}

/// [`run_with_progress`] for a process that builds again and again: what `warm` kept of the
/// last build (see `warm.rs`) is used, and this build's kept for the next.
pub fn run_warm(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    progress: Progress<'_>,
    warm: &mut Warm,
) -> Result<Report, BuildError> {
    let mut attempt = 1;
    loop {
        match build_once(site, clock, opts, progress, warm) {
            Err(BuildError::LogMoved { revision }) if attempt < 5 => {
                tracing::info!(
                    revision,
                    attempt,
                    "the ledger moved on while the log was written: building again"
                );
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// One build. The protocol, one [`Build`] method per step (the steps themselves in
/// `destination.rs`, `reuse.rs`, `snapshot.rs`, `check.rs` and `transparency.rs`).
fn build_once(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    progress: Progress<'_>,
    warm: &mut Warm,
) -> Result<Report, BuildError> {
    let mut build = Build::open(site, clock, opts, progress, warm)?;
    let mut ledger = site.open_ledger()?;
    let mut reuse = build.look_back(&mut ledger)?;
    let snap = ledger.snapshot()?;
    let origin = snapshot::Origin::read(&snap)?;
    if let Some(built) = build.found_built(&snap)? {
        build.keep_built(&snap, &built);
        drop(snap);
        return build.point_to_built(built, &origin);
    }
    let mut source = build.read(&snap)?;
    let mut plan = build.plan(&mut source)?;
    let prev = build.previous(&mut reuse, &origin)?;
    build.item_json(&mut plan, &snap, prev.as_ref())?;
    let staged = build.stage(&mut reuse, &plan)?;
    let mut rendered = build.render(&plan, &staged, &source, &snap, prev.as_ref())?;
    drop(snap);
    build.images(&plan, &mut rendered, &staged, prev.as_ref())?;
    build.record_base_url(&mut ledger)?;
    let mut broken = build.link_check(&rendered, prev.as_ref())?;
    build.hold(&mut rendered, &mut broken, &staged, prev.as_ref())?;
    build.search(&mut rendered, &staged, prev.as_ref())?;
    let manifest = build.manifest(&plan, &origin, &broken, &mut rendered, prev.as_ref());
    let manifest = build.write_log(&mut ledger, manifest, &staged, prev.as_ref(), &origin)?;
    let report = build.put_in_place(Done {
        plan,
        staged,
        rendered,
        manifest,
        broken,
        source,
    });
    fencepost_core::drop_later(prev);
    report
}

/// One build: what every step needs, a method per step in the order
/// [`run_with_progress`] takes them (as `publish::Batch` is). What one step makes and the next
/// takes is handed on; the ledger snapshot is handed to the steps that read it, since it
/// borrows the ledger.
struct Build<'a> {
    site: &'a Site,
    clock: &'a Clock,
    opts: &'a Options,
    progress: Progress<'a>,
    phases: Phases,
    dest: Destination,
    inputs: SiteInputs,
    fingerprint: String,
    /// The transparency log's signing key, when the site keeps a log (never in a preview).
    signer: Option<fencepost_tlog::note::LogSigner>,
    /// What a long-lived process keeps between builds.
    warm: &'a mut Warm,
}

/// What the plan made: the revision's id, its templates and files, and what it left out.
struct Plan {
    id: RevisionId,
    templates: templates::Templates,
    files: Vec<plan::Planned>,
    left_out: Vec<LeftOut>,
}

/// The staging folder, the files linked into it early, and how many were.
struct Staged {
    staging: Staging,
    prelinked: Option<Prelinked>,
    early_links: usize,
    linked_ahead: bool,
    from_spare: bool,
}

/// What the last step takes.
struct Done<'p> {
    plan: Plan,
    staged: Staged,
    rendered: Rendered,
    manifest: Written<'p>,
    broken: Vec<BrokenLink>,
    source: Source,
}

impl<'a> Build<'a> {
    /// Where the output goes (`public/` or the preview folder) and the site's inputs.
    fn open(
        site: &'a Site,
        clock: &'a Clock,
        opts: &'a Options,
        progress: Progress<'a>,
        warm: &'a mut Warm,
    ) -> Result<Build<'a>, BuildError> {
        let phases = Phases::start();
        let dest = Destination::open(site, opts.preview, opts.as_of.is_some())?;
        let inputs = SiteInputs::read(site)?;
        let fingerprint = inputs.fingerprints.whole.clone();
        let signer = match opts.preview {
            true => None,
            false => transparency::signer(site)?,
        };
        Ok(Build {
            site,
            clock,
            opts,
            progress,
            phases,
            dest,
            inputs,
            fingerprint,
            signer,
            warm,
        })
    }

    /// Checks the output against the ledger's revision, and starts reading what the previous
    /// revision holds (and linking its files early) while the snapshot is read.
    fn look_back(&mut self, ledger: &mut Ledger) -> Result<Reuse, BuildError> {
        let at = match self.dest.public() {
            Some(public) => Some(snapshot::ledger_revision(ledger, public)?),
            None => None,
        };
        let (full, fingerprint) = (self.opts.full, &self.fingerprint);
        Reuse::start(&self.dest, full, at, fingerprint, self.warm)
    }

    /// The revision the snapshot would make, if it is built complete already.
    fn found_built(&self, snap: &Snapshot<'_>) -> Result<Option<snapshot::Built>, BuildError> {
        let (full, now, logged) = (self.opts.full, self.clock.now(), self.signer.is_some());
        snapshot::already_built(snap, &self.dest, &self.fingerprint, full, now, logged)
    }

    /// What the next build of a long-lived process reads of that revision, kept (see
    /// `warm.rs`).
    fn keep_built(&mut self, snap: &Snapshot<'_>, built: &snapshot::Built) {
        let logged = self.signer.is_some();
        (self.warm).found_built(snap, logged, built.dir());
    }

    /// Points to that revision (once it is known to be this ledger's); nothing is rendered.
    fn point_to_built(
        mut self,
        built: snapshot::Built,
        origin: &snapshot::Origin,
    ) -> Result<Report, BuildError> {
        fencepost_core::fail_point!("build.after_snapshot");
        let tidied = self.dest.tidied();
        let Destination::Revision(public) = &mut self.dest else {
            unreachable!("a preview is never found built")
        };
        let report = snapshot::point_to_built(built, public, origin, self.clock)?;
        Ok(Report {
            abandoned_removed: tidied,
            ..report
        })
    }

    /// What is rendered: the ledger's public pages at the snapshot, or the content tree.
    fn read(&mut self, snap: &Snapshot<'_>) -> Result<Source, BuildError> {
        let warm = (&mut *self.warm, self.signer.is_some());
        let source = match &self.opts.as_of {
            Some(scope) => {
                let rows = warm.0.pages(snap, false)?;
                source::as_of_source(self.site, snap, rows, scope, self.clock.now())?
            }
            None => snapshot::read_source(self.site, snap, &self.dest, self.clock, warm)?,
        };
        self.phases.mark("snapshot");
        fencepost_core::fail_point!("build.after_snapshot");
        Ok(source)
    }

    /// Every file of the revision, planned with its key; pages that cannot be placed are
    /// taken out of `source` and named.
    fn plan(&mut self, source: &mut Source) -> Result<Plan, BuildError> {
        let id = RevisionId::new(source.revision, &self.fingerprint);
        let (templates, files, left_out) = self.inputs.plan(self.site, source)?;
        self.phases.mark("plan");
        Ok(Plan {
            id,
            templates,
            files,
            left_out,
        })
    }

    /// The previous revision and its manifest, once the live one is known to be this
    /// ledger's.
    fn previous(
        &mut self,
        reuse: &mut Reuse,
        origin: &snapshot::Origin,
    ) -> Result<Option<Previous>, BuildError> {
        let prev = reuse.previous();
        if let Some(public) = self.dest.public() {
            let live = prev.as_ref().map(|(d, m)| (d.as_path(), m.head()));
            public.live_is_from(&origin.ledger_id, live)?;
        }
        self.phases.mark("previous manifest");
        fencepost_core::fail_point!("build.after_previous");
        Ok(prev)
    }

    /// Each public item's JSON the previous revision cannot give, read from the snapshot
    /// (only a site that keeps a transparency log plans them).
    fn item_json(
        &self,
        plan: &mut Plan,
        snap: &Snapshot<'_>,
        prev: Option<&Previous>,
    ) -> Result<(), BuildError> {
        // A deployed preview serves the public's item JSON as the public revision has it.
        if self.signer.is_some() || self.opts.as_of.is_some() {
            transparency::fill_item_json(&mut plan.files, snap, prev)?;
        }
        Ok(())
    }

    /// The staging folder, with the early links the plan keeps.
    fn stage(&mut self, reuse: &mut Reuse, plan: &Plan) -> Result<Staged, BuildError> {
        let left = (self.site.config.search.enabled).then_some(fencepost_search::pagefind::DIR);
        let (staging, prelinked, early_links) =
            reuse.staging(&self.dest, &plan.id, &plan.files, left)?;
        self.phases.mark("early links");
        Ok(Staged {
            staging,
            prelinked,
            early_links,
            linked_ahead: reuse.linked_ahead(),
            from_spare: reuse.started_from_spare(),
        })
    }

    /// Renders (or links from the previous revision) every planned file into the staging
    /// folder, bodies read from the snapshot as needed.
    fn render(
        &mut self,
        plan: &Plan,
        staged: &Staged,
        source: &Source,
        snap: &Snapshot<'_>,
        prev: Option<&Previous>,
    ) -> Result<Rendered, BuildError> {
        let (pages, notices) = (&source.pages, &source.notices);
        // A deployed preview renders as the public will see it: unchanged pages are the public
        // revision's bytes, and the origins add the banner.
        let banner = self.dest.is_preview() && self.opts.as_of.is_none();
        let renderer = Renderer::new(self.site, &plan.templates, pages, notices, banner);
        let sink = DirSink {
            staging: &staged.staging.path,
            beneath: sink::Beneath::open(&staged.staging.path),
            prev,
            prelinked: staged.prelinked.as_ref(),
            base_path: &renderer.base_path,
        };
        let outputs = snapshot::render(&renderer, &sink, &plan.files, source, snap, self.progress)?;
        let rendered = snapshot::entries(outputs, prev);
        self.phases.mark("render and link");
        fencepost_core::fail_point!("build.after_render");
        Ok(rendered)
    }

    /// The processed images the revision's pages show, linked in (see `images/revision.rs`).
    fn images(
        &mut self,
        plan: &Plan,
        rendered: &mut Rendered,
        staged: &Staged,
        prev: Option<&Previous>,
    ) -> Result<(), BuildError> {
        let session = &plan.templates.images;
        images::revision::put(session, rendered, &staged.staging.path, prev)?;
        self.phases.mark("images");
        Ok(())
    }

    /// The search index of the pages the revision now holds (see `search.rs`).
    fn search(
        &mut self,
        rendered: &mut Rendered,
        staged: &Staged,
        prev: Option<&Previous>,
    ) -> Result<(), BuildError> {
        let config = &self.site.config.search;
        if !config.enabled && !config.build_search_index {
            return Ok(());
        }
        let (path, linked) = (&staged.staging.path, staged.prelinked.as_ref());
        let (pages, read) = search::put(self.site, rendered, path, linked, prev)?;
        tracing::info!(pages, read, "search index");
        self.phases.mark("search index");
        Ok(())
    }

    /// The internal links checked (`--strict` makes a broken one an error).
    fn link_check(
        &mut self,
        rendered: &Rendered,
        prev: Option<&Previous>,
    ) -> Result<Vec<BrokenLink>, BuildError> {
        let search = &self.site.config.search;
        let (pagefind, zola) = (search.enabled, search.build_search_index);
        let later = |p: &str| fencepost_search::made_by_index(p, pagefind, zola);
        let broken = check::link_check(rendered, prev, self.opts.strict, &later)?;
        self.phases.mark("link check");
        Ok(broken)
    }

    /// The `base_url` this build renders with, recorded in the ledger when it differs from
    /// the last one (`publish` warns a checkout whose base_url is another); not for a
    /// preview.
    fn record_base_url(&mut self, ledger: &mut Ledger) -> Result<(), BuildError> {
        use fencepost_ledger::status;
        let url = &self.site.config.base_url;
        if self.dest.is_preview() || ledger.read(status::built_base_url)?.as_ref() == Some(url) {
            return Ok(());
        }
        ledger.write(|tx| status::set_built_base_url(tx, url))?;
        Ok(())
    }

    /// The held pages' previous versions that name a page this revision lacks (one it took
    /// down, or a held page left out) are taken out again: a page held never shows again
    /// what the public no longer has. Each is named as left out, its broken links dropped.
    fn hold(
        &mut self,
        rendered: &mut Rendered,
        broken: &mut Vec<BrokenLink>,
        staged: &Staged,
        prev: Option<&Previous>,
    ) -> Result<(), BuildError> {
        let manifest = prev.map(|(_, m)| m);
        for h in rendered.held.iter_mut().filter(|h| h.previous_kept) {
            let Some(b) = broken.iter().find(|b| b.page == h.path) else {
                continue;
            };
            h.previous_kept = false;
            h.why = format!(
                "{}; its previous version was not kept either: it links to {}, which this revision does not have",
                h.why, b.link
            );
            let at = (rendered.entries.iter()).position(|e| e.path(manifest) == h.path);
            if let Some(at) = at {
                rendered.entries.remove(at);
                rendered.fresh.remove(at);
            }
            let file = staged.staging.path.join(&h.path);
            std::fs::remove_file(&file).map_err(report::io(&file))?;
            broken.retain(|b| b.page != h.path);
        }
        if !rendered.held.is_empty() {
            let json = serde_json::to_vec_pretty(&rendered.held).expect("held pages serialise");
            fencepost_output::own::write_held(&staged.staging.path, &json)?;
        }
        self.phases.mark("held pages");
        Ok(())
    }

    /// The revision's manifest, every rendered file's entry moved into it (a kept one stays
    /// in the previous manifest's bytes).
    fn manifest<'p>(
        &self,
        plan: &Plan,
        origin: &snapshot::Origin,
        broken: &[BrokenLink],
        rendered: &mut Rendered,
        prev: Option<&'p Previous>,
    ) -> Written<'p> {
        let entries = std::mem::take(&mut rendered.entries);
        let preview = self.dest.is_preview();
        let mut m = snapshot::manifest(&plan.id, preview, origin, broken, entries, prev);
        // A deployed preview names its ledger: a bucket another ledger owns refuses it.
        if self.opts.as_of.is_some() {
            m.head.ledger_id = Some(origin.ledger_id.clone());
        }
        Written::Assembled(m)
    }

    /// The transparency log brought up to this revision, its files written beside it (see
    /// `transparency.rs`); nothing for a site without a log.
    fn write_log<'p>(
        &mut self,
        ledger: &mut Ledger,
        manifest: Written<'p>,
        staged: &Staged,
        prev: Option<&Previous>,
        origin: &snapshot::Origin,
    ) -> Result<Written<'p>, BuildError> {
        let Some(signer) = &self.signer else {
            return Ok(manifest);
        };
        // The log's files are spliced into the file list: every entry owned.
        let mut manifest = manifest.into_manifest();
        let id = manifest.id.clone();
        let at = transparency::At {
            id: &id,
            ledger_id: &origin.ledger_id,
            audit_tip: origin.audit_hash(),
            now: self.clock.now(),
            committing: (self.site.collections.list.iter())
                .filter(|c| c.commit_before_reveal)
                .map(|c| c.name.clone())
                .collect(),
        };
        let revision = id.revision;
        let staging = &staged.staging.path;
        if !transparency::write_log(ledger, signer, &at, &mut manifest, staging, prev)? {
            return Err(BuildError::LogMoved { revision });
        }
        self.phases.mark("transparency log");
        Ok(Written::Owned(manifest))
    }

    /// The manifest written, the revision renamed into place and the pointer moved forward;
    /// the report. What is large is dropped on another thread.
    fn put_in_place(mut self, done: Done<'_>) -> Result<Report, BuildError> {
        let (id, reused) = (&done.plan.id, done.rendered.reused);
        let manifest = done.manifest;
        let (next_change_at, pages_read) = (done.source.next_change_at, done.source.pages_read);
        let now = self.clock.now();
        let staging = done.staged.staging;
        let logged = self.signer.is_some();
        let pointer =
            self.dest
                .put_in_place(staging, manifest.listing(), id, now, next_change_at, logged)?;
        self.phases.mark("manifest and rename");
        let dir = self.dest.dir(id);
        let held = done.rendered.held;
        let images = done.plan.templates.images.counts();
        let kept = held.iter().filter(|h| h.previous_kept).count();
        let report = snapshot::report(
            &manifest,
            dir,
            reused + kept,
            pointer,
            next_change_at,
            done.broken,
        );
        if let Some(public) = self.dest.public() {
            self.warm.built(public.revision_dir(id));
        }
        let large = (
            done.source,
            done.plan.files,
            manifest.into_parts(),
            done.staged.prelinked,
        );
        fencepost_core::drop_later(large);
        Ok(Report {
            abandoned_removed: self.dest.tidied(),
            early_links: done.staged.early_links,
            linked_ahead: done.staged.linked_ahead,
            from_spare: done.staged.from_spare,
            pages_read,
            left_out: done.plan.left_out,
            held_pages: held,
            images_encoded: images.encoded,
            images_cached: images.cached,
            ..report
        })
    }
}
