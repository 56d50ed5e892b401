//! The named steps of a build to disk, in the order `build::run_with_progress` takes them.
//! Each is small and says what it guards against; the driver reads as their list.

use super::links;
use super::prelink::{Early, Prelinked};
use super::render::Renderer;
use super::sink::{render_all, Bodies, DirSink, Stored};
use super::source::{ledger_source, tree_source, Source, TreeCache};
use super::{io, BrokenLink, BuildError, Options, Progress, Report};
use crate::clock::Clock;
use crate::ledger::items::ItemId;
use crate::ledger::{Ledger, Snapshot};
use crate::output::manifest::{self, Entry, Manifest};
use crate::output::pointer::{self, Pointer, PointerOutcome};
use crate::output::revision::{self, RevisionId, Staging};
use crate::output::OutputError;
use crate::site::Site;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A revision folder and its parsed manifest.
pub(super) type Previous = (PathBuf, Manifest);

/// Makes `public/` (once the ledger's location is known to be sound, so nothing is written for
/// a site that cannot build) and removes what dead builds, swaps and gc runs left behind —
/// the latter only when nobody holds the pointer right now. Returns the folder and how many
/// leftovers went.
pub(super) fn tidy_public(site: &Site) -> Result<(PathBuf, usize), BuildError> {
    site.ledger_location()?;
    let public = site.public_dir();
    std::fs::create_dir_all(&public).map_err(io(&public))?;
    let mut removed = revision::remove_abandoned(&public)?;
    if let Some(n) = pointer::try_with_lock(&public, || {
        pointer::remove_dead_swaps(&public) + revision::remove_trash(&public).unwrap_or(0)
    }) {
        removed += n;
    }
    Ok((public, removed))
}

/// The ledger's revision now, after finishing a rollback that died between moving the pointer
/// and writing its audit entry. Revisions only grow, so the live revision can never be ahead
/// of the ledger that built it: if it is, this ledger is not that one (lost, emptied, restored
/// from an old backup) — even for output older than the ledger id in manifests.
pub(super) fn ledger_revision(ledger: &mut Ledger, public: &Path) -> Result<i64, BuildError> {
    super::finish_rollback_receipt(ledger, public)?;
    let now_at = ledger.revision()?;
    if let Some(live) = pointer::read(public)? {
        if live.revision > now_at {
            return Err(OutputError::AheadOfLedger {
                public: public.to_path_buf(),
                live: live.dir,
                ledger: now_at,
            }
            .into());
        }
    }
    Ok(now_at)
}

/// What a build reuses from, started before the snapshot is read so that it runs meanwhile:
/// the previous revision's manifest (a 100,000-entry one takes ~0.15 s to parse) on another
/// thread and, when that revision has this build's fingerprint, its files linked into the
/// staging folder (early links, see `prelink.rs`).
pub(super) struct Reuse {
    dir: Option<PathBuf>,
    reader: Option<JoinHandle<Option<Previous>>>,
    /// The early links and the staging folder they go into. In this order: a tuple drops
    /// its first field first, so a build that ends early (its revision found built after
    /// all) waits for the linking thread before the folder is removed — else the thread
    /// would go on filling a folder nobody holds, and the next build's clean-up would race
    /// it.
    early: Option<(Early, Staging)>,
}

impl Reuse {
    /// `at` is the ledger's revision now (`None` for a preview). When the revision it would
    /// make is complete already (a rerun with nothing new), nothing is read or linked.
    pub(super) fn start(
        public: &Path,
        opts: &Options,
        at: Option<i64>,
        fingerprint: &str,
    ) -> Result<Reuse, BuildError> {
        let dir = previous_dir(public, opts);
        let guess = at.map(|at| RevisionId::new(at, fingerprint).to_string());
        let looks_built = !opts.full
            && guess
                .as_ref()
                .is_some_and(|g| revision::is_complete(&public.join(revision::REVISIONS).join(g)));
        let reader = (!looks_built).then(|| {
            let dir = dir.clone();
            std::thread::spawn(move || read_previous(dir))
        });
        let early = match (guess, &dir) {
            (Some(guess), Some(prev)) if !looks_built && same_fingerprint(prev, fingerprint) => {
                let staging = Staging::create(public, &guess)?;
                let early = Early::start(prev.clone(), staging.path.clone());
                Some((early, staging))
            }
            _ => None,
        };
        Ok(Reuse { dir, reader, early })
    }

    /// The previous revision and its manifest: from the reader thread, or read now when the
    /// ledger had moved on between the first look and the snapshot.
    pub(super) fn previous(&mut self) -> Option<Previous> {
        match self.reader.take() {
            Some(r) => r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => read_previous(self.dir.clone()),
        }
    }

    /// The staging folder to render `name` into, with the early links the plan keeps (the
    /// rest removed) and how many were made.
    pub(super) fn staging(
        &mut self,
        public: &Path,
        name: &str,
        planned: &[super::plan::Planned],
    ) -> Result<(Staging, Option<Prelinked>, usize), BuildError> {
        let Some((early, staging)) = self.early.take() else {
            return Ok((Staging::create(public, name)?, None, 0));
        };
        let mut linked = early.wait();
        let made = linked.count();
        let removed =
            linked.remove_unplanned(&staging.path, planned.iter().map(|p| p.path.as_str()))?;
        tracing::info!(linked = linked.count(), removed, "early links");
        Ok((staging, Some(linked), made))
    }
}

/// The revision to reuse from: the one the pointer names (or, lacking one, the newest
/// complete one); for a preview, the last preview; none for `--full`.
fn previous_dir(public: &Path, opts: &Options) -> Option<PathBuf> {
    if opts.full {
        return None;
    }
    if opts.preview {
        return Some(public.join("preview"));
    }
    pointer::read(public)
        .ok()
        .flatten()
        .map(|p| p.dir)
        .or_else(|| {
            revision::list_complete(public)
                .ok()
                .and_then(|l| l.first().map(|id| id.to_string()))
        })
        .map(|n| public.join(revision::REVISIONS).join(n))
}

fn read_previous(dir: Option<PathBuf>) -> Option<Previous> {
    dir.and_then(|d| Manifest::read(&d).ok().map(|m| (d, m)))
}

fn same_fingerprint(dir: &Path, fingerprint: &str) -> bool {
    dir.file_name()
        .and_then(|n| n.to_string_lossy().parse::<RevisionId>().ok())
        .is_some_and(|id| id.fingerprint == fingerprint)
}

/// A revision of this snapshot built complete already (a rerun with nothing new): its id,
/// folder and the next embargo end. Its pages are not read.
pub(super) struct Built {
    id: RevisionId,
    name: String,
    dir: PathBuf,
    next_change_at: Option<crate::clock::Instant>,
}

/// The revision the snapshot would make, if it is built already (never for a preview or a
/// `--full` build).
pub(super) fn already_built(
    snap: &Snapshot<'_>,
    public: &Path,
    fingerprint: &str,
    opts: &Options,
    now: crate::clock::Instant,
) -> Result<Option<Built>, BuildError> {
    if opts.preview || opts.full {
        return Ok(None);
    }
    let id = RevisionId::new(snap.revision()?, fingerprint);
    let name = id.to_string();
    let dir = public.join(revision::REVISIONS).join(&name);
    if !revision::is_complete(&dir) {
        return Ok(None);
    }
    let next_change_at = snap.next_change(now)?;
    Ok(Some(Built {
        id,
        name,
        dir,
        next_change_at,
    }))
}

/// Points to a revision built already, once it is known to come from this ledger; its file
/// list is counted, not parsed.
pub(super) fn point_to_built(
    built: Built,
    public: &Path,
    origin: &Origin,
    clock: &Clock,
) -> Result<Report, BuildError> {
    let theirs = Manifest::read_ledger_id(&built.dir)?;
    same_ledger(public, &built.name, theirs.as_deref(), &origin.ledger_id)?;
    let files = match crate::output::index::count(&built.dir) {
        Ok(Some(n)) => n,
        _ => Manifest::read(&built.dir)?.files.len(),
    };
    let pointer = Pointer::new(built.id.revision, &built.id.fingerprint);
    let swap = pointer::advance(public, &pointer, clock.now(), built.next_change_at)?;
    Ok(Report {
        revision: built.id.revision,
        fingerprint: built.id.fingerprint,
        path: built.dir.display().to_string(),
        rendered: 0,
        reused: 0,
        next_change_at: built.next_change_at,
        pointer: PointerOutcome::from(&swap),
        already_built: true,
        preview: false,
        files,
        broken_links: Vec::new(),
        left_out: Vec::new(),
        abandoned_removed: 0,
        early_links: 0,
    })
}

/// Where the snapshot comes from: the ledger's id and its audit tip, stamped on the manifest.
pub(super) struct Origin {
    ledger_id: String,
    audit_tip: crate::ledger::status::AuditTip,
}

impl Origin {
    pub(super) fn read(snap: &Snapshot<'_>) -> Result<Origin, BuildError> {
        Ok(Origin {
            ledger_id: snap.ledger_id()?,
            audit_tip: snap.anchor()?,
        })
    }
}

/// What is rendered: the ledger's public pages at the snapshot, or for a preview the content
/// tree as it is now.
pub(super) fn read_source(
    site: &Site,
    snap: &Snapshot<'_>,
    opts: &Options,
    clock: &Clock,
) -> Result<Source, BuildError> {
    if opts.preview {
        let mut cache = TreeCache::default();
        tree_source(site, snap.revision()?, clock.now(), &mut cache)
    } else {
        ledger_source(snap, site, clock.now())
    }
}

/// Where this build puts what it makes: the folder's name and final path.
pub(super) struct Destination {
    pub(super) name: String,
    pub(super) dir: PathBuf,
}

impl Destination {
    pub(super) fn new(public: &Path, preview: bool, id: &RevisionId) -> Destination {
        if preview {
            let name = "preview".to_string();
            return Destination {
                dir: public.join(&name),
                name,
            };
        }
        let name = id.to_string();
        let dir = public.join(revision::REVISIONS).join(&name);
        Destination { name, dir }
    }
}

/// The live revision must come from this ledger: revision numbers of a new or emptied ledger
/// start again at 1 and would collide with the old output.
pub(super) fn live_from_this_ledger(
    public: &Path,
    prev: Option<&Previous>,
    origin: &Origin,
) -> Result<(), BuildError> {
    let Some(live) = pointer::read(public)? else {
        return Ok(());
    };
    let live_dir = public.join(revision::REVISIONS).join(&live.dir);
    let theirs = match prev {
        Some((d, m)) if *d == live_dir => m.ledger_id.clone(),
        _ => Manifest::read_ledger_id(&live_dir).ok().flatten(),
    };
    Ok(same_ledger(
        public,
        &live.dir,
        theirs.as_deref(),
        &origin.ledger_id,
    )?)
}

/// Every file of a revision as rendered or reused, sorted by path.
pub(super) struct Rendered {
    pub(super) entries: Vec<Entry>,
    /// Paths rendered anew (not reused): their links are always checked.
    pub(super) fresh: HashSet<String>,
    pub(super) reused: usize,
}

/// Renders every planned file into the sink; bodies come from the source (a preview's, in
/// memory) or from the snapshot a chunk at a time, on this thread (the connection is not
/// Sync).
pub(super) fn render(
    renderer: &Renderer<'_>,
    sink: &DirSink<'_>,
    planned: &[super::plan::Planned],
    source: &Source,
    snap: &Snapshot<'_>,
    progress: Progress<'_>,
) -> Result<Vec<(Stored, bool)>, BuildError> {
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
    render_all(planned, sink, renderer, &mut fetch, progress)
}

/// The manifest entries of what was rendered, kept ones moved out of the previous manifest.
pub(super) fn entries(outputs: Vec<(Stored, bool)>, mut prev: Option<&mut Previous>) -> Rendered {
    let mut entries = Vec::with_capacity(outputs.len());
    let mut fresh = HashSet::new();
    let mut reused = 0;
    for (stored, was_reused) in outputs {
        let e = stored.into_entry(prev.as_mut().map(|(_, m)| m));
        if was_reused {
            reused += 1;
        } else {
            fresh.insert(e.path.clone());
        }
        entries.push(e);
    }
    entries.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    Rendered {
        entries,
        fresh,
        reused,
    }
}

/// The broken internal links, logged; with `--strict` any is fatal (nothing is swapped).
pub(super) fn link_check(
    rendered: &Rendered,
    prev: Option<&Previous>,
    strict: bool,
) -> Result<Vec<BrokenLink>, BuildError> {
    let broken = check_links(&rendered.entries, &rendered.fresh, prev.map(|(_, m)| m));
    for b in broken.iter().take(20) {
        tracing::warn!(page = %b.page, link = %b.link, "broken internal link");
    }
    if strict && !broken.is_empty() {
        return Err(BuildError::BrokenLinks {
            count: broken.len(),
            first: format!("{} -> {}", broken[0].page, broken[0].link),
        });
    }
    Ok(broken)
}

/// The manifest of a revision; a preview's names no ledger and no audit tip.
pub(super) fn manifest(
    id: &RevisionId,
    preview: bool,
    origin: &Origin,
    broken: &[BrokenLink],
    entries: Vec<Entry>,
) -> Manifest {
    Manifest {
        revision: id.revision,
        ledger_id: (!preview).then(|| origin.ledger_id.clone()),
        audit_tip: (!preview).then(|| manifest::AuditAnchor {
            seq: origin.audit_tip.seq,
            hash: origin.audit_tip.hash.clone(),
        }),
        fingerprint: id.fingerprint.clone(),
        preview,
        broken_links: broken
            .iter()
            .map(|b| (b.page.clone(), b.link.clone()))
            .collect(),
        files: entries,
    }
}

/// The report of a revision rendered and put in place, from its manifest.
pub(super) fn report(
    manifest: &Manifest,
    dest: &Destination,
    reused: usize,
    pointer: PointerOutcome,
    next_change_at: Option<crate::clock::Instant>,
    broken_links: Vec<BrokenLink>,
) -> Report {
    Report {
        revision: manifest.revision,
        fingerprint: manifest.fingerprint.clone(),
        path: dest.dir.display().to_string(),
        rendered: manifest.files.len() - reused,
        reused,
        next_change_at,
        pointer,
        already_built: false,
        preview: manifest.preview,
        files: manifest.files.len(),
        broken_links,
        left_out: Vec::new(),
        abandoned_removed: 0,
        early_links: 0,
    }
}

/// Puts the staged revision in place: a preview replaces `public/preview`; a revision is
/// renamed into `revisions/` (unless another build finished it first) and the pointer moved
/// forward to it.
pub(super) fn put_in_place(
    staging: Staging,
    manifest: &Manifest,
    public: &Path,
    dest: &Destination,
    clock: &Clock,
    next_change_at: Option<crate::clock::Instant>,
) -> Result<PointerOutcome, BuildError> {
    if manifest.preview {
        staging.replace(manifest, &dest.dir)?;
        return Ok(PointerOutcome::None);
    }
    if !staging.finish(manifest, &dest.name)? {
        let dir = dest.dir.display();
        tracing::info!(%dir, "another build finished this revision first");
    }
    let pointer = Pointer::new(manifest.revision, &manifest.fingerprint);
    let swap = pointer::advance(public, &pointer, clock.now(), next_change_at)?;
    Ok(PointerOutcome::from(&swap))
}

/// Internal links that resolve to no file of the revision. A reused page is re-checked only
/// when some path of the previous revision is gone, or it had broken links there: otherwise
/// its links resolve exactly as they did.
fn check_links(
    entries: &[Entry],
    rendered: &HashSet<String>,
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
    let broken_before: HashSet<&str> = prev
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
