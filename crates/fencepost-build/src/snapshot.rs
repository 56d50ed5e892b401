//! The steps of a build that read the ledger snapshot — its revision checked against the
//! output, a revision found built already, the source read, bodies fetched as rendering needs
//! them — and the record of what they made (manifest entries, the manifest, the report), in
//! the order `build::run_with_progress` takes them.

use super::destination::Destination;
use super::render::Renderer;
use super::report::{BrokenLink, BuildError, HeldPage, Progress, Report};
use super::reuse::Previous;
use super::sink::{render_all, Bodies, DirSink, Outputs, Stored};
use super::source::{ledger_source, tree_source, Source, TreeCache};
use fencepost_core::clock::Clock;
use fencepost_core::item::ItemId;
use fencepost_ledger::{Ledger, Snapshot};
use fencepost_output::carried::{Assembled, Listing};
use fencepost_output::id::RevisionId;
use fencepost_output::manifest::{self, Manifest};
use fencepost_output::pointer::PointerOutcome;
use fencepost_output::public::Public;
use fencepost_site::Site;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The ledger's revision now, after finishing a rollback that died between moving the pointer
/// and writing its audit entry; refused when the live revision is ahead of it (this ledger is
/// not the one that built the output).
pub(super) fn ledger_revision(ledger: &mut Ledger, public: &Public) -> Result<i64, BuildError> {
    finish_rollback_receipt(ledger, public)?;
    let now_at = ledger.revision()?;
    public.not_ahead_of(now_at)?;
    Ok(now_at)
}

/// Writes the audit entry of a journaled rollback if it is missing (once: the entry's subject
/// names the rollback), then marks the journal audited. A build does this first, so a
/// rollback that died between moving the pointer and writing its entry loses no receipt.
fn finish_rollback_receipt(ledger: &mut Ledger, public: &Public) -> Result<(), BuildError> {
    if let Some((journal, detail)) = public.unaudited_rollback() {
        ledger.write(|tx| {
            fencepost_ledger::audit::rollback_receipt(tx, journal.at, &journal.id, &detail)
        })?;
        public.rollback_audited(&journal.id)?;
    }
    Ok(())
}

/// A revision of this snapshot built complete already (a rerun with nothing new): its id,
/// folder and the next embargo end. Its pages are not read.
pub(super) struct Built {
    id: RevisionId,
    dir: PathBuf,
    next_change_at: Option<fencepost_core::clock::Instant>,
}

impl Built {
    /// The revision's folder.
    pub(super) fn dir(&self) -> &std::path::Path {
        &self.dir
    }
}

/// The revision the snapshot would make, if it is built already (never for a preview or a
/// `--full` build).
pub(super) fn already_built(
    snap: &Snapshot<'_>,
    dest: &Destination,
    fingerprint: &str,
    full: bool,
    now: fencepost_core::clock::Instant,
    logged: bool,
) -> Result<Option<Built>, BuildError> {
    let Some(public) = dest.public().filter(|_| !full) else {
        return Ok(None);
    };
    let id = RevisionId::new(snap.revision()?, fingerprint);
    if !public.is_built(&id) {
        return Ok(None);
    }
    // A site's log grows with builds of other inputs and rollbacks: a folder built before it
    // grew would take the log back, so it is built again (and replaces the folder).
    if logged
        && super::transparency::checkpoint_size(&public.revision_dir(&id))
            != Some(snap.tlog_size()?)
    {
        return Ok(None);
    }
    let next_change_at = snap.next_change(now)?;
    Ok(Some(Built {
        dir: public.revision_dir(&id),
        id,
        next_change_at,
    }))
}

/// Points to a revision built already, once it is known to come from this ledger; its file
/// list is counted, not parsed.
pub(super) fn point_to_built(
    built: Built,
    public: &mut Public,
    origin: &Origin,
    clock: &Clock,
) -> Result<Report, BuildError> {
    let theirs = Manifest::read_ledger_id(&built.dir)?;
    public.built_by(&built.id.to_string(), theirs.as_deref(), &origin.ledger_id)?;
    let files = match fencepost_output::index::count(&built.dir) {
        Ok(Some(n)) => n,
        _ => Manifest::read(&built.dir)?.files.len(),
    };
    let swap = public.advance(&built.id, clock.now(), built.next_change_at)?;
    Ok(Report {
        id: built.id,
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
        // Held when it was built, and still: a rerun names them again (and exits so).
        held_pages: super::held_in(&built.dir),
        abandoned_removed: 0,
        early_links: 0,
        linked_ahead: false,
        from_spare: false,
        pages_read: 0,
        images_encoded: 0,
        images_cached: 0,
    })
}

/// Where the snapshot comes from: the ledger's id and its audit tip, stamped on the manifest.
pub(super) struct Origin {
    pub(super) ledger_id: String,
    audit_tip: fencepost_ledger::status::AuditTip,
}

impl Origin {
    /// The audit chain's tip hash at the snapshot (none: an empty chain).
    pub(super) fn audit_hash(&self) -> Option<&str> {
        self.audit_tip.hash.as_deref()
    }

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
    dest: &Destination,
    clock: &Clock,
    (warm, logged): (&mut super::Warm, bool),
) -> Result<Source, BuildError> {
    if dest.is_preview() {
        let mut cache = TreeCache::default();
        tree_source(site, snap.revision()?, clock.now(), &mut cache)
    } else {
        let rows = warm.pages(snap, logged)?;
        ledger_source(snap, rows, site, clock.now())
    }
}

/// Every file of a revision as rendered or reused, sorted by path.
pub(super) struct Rendered {
    pub(super) entries: Vec<Stored>,
    /// Whether each entry (same index) was rendered anew, not reused: its links are always
    /// checked (a held page's previous version's too).
    pub(super) fresh: Vec<bool>,
    pub(super) reused: usize,
    /// The pages held (see `HeldPage`); the kept previous versions are among `entries`.
    pub(super) held: Vec<HeldPage>,
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
) -> Result<Outputs<Stored>, BuildError> {
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

/// The manifest entries of what was rendered, kept ones left in the previous manifest.
pub(super) fn entries(outputs: Outputs<Stored>, prev: Option<&Previous>) -> Rendered {
    // Made side by side: each entry is moved once (at 100,000 files, pairs made and then
    // unzipped moved ~20 MB twice on the build's main thread).
    let n = outputs.files.len() + outputs.held.len();
    let mut entries = Vec::with_capacity(n);
    let mut fresh = Vec::with_capacity(n);
    for (stored, reused) in outputs.files {
        entries.push(stored);
        fresh.push(!reused);
    }
    // A held page's previous version: its links are checked (see `Build::hold`).
    let mut held = Vec::with_capacity(outputs.held.len());
    for (page, kept) in outputs.held {
        if let Some(stored) = kept {
            entries.push(stored);
            fresh.push(true);
        }
        held.push(page);
    }
    // The plan is in path order already; sorted here so nothing downstream relies on that.
    let prev = prev.map(|(_, c)| c);
    let path = |f: &Stored| -> String { f.path(prev).to_string() };
    if !entries.is_sorted_by(|a, b| a.path(prev) <= b.path(prev)) {
        let mut pairs: Vec<(Stored, bool)> = entries.into_iter().zip(fresh).collect();
        pairs.sort_by_cached_key(|(f, _)| path(f));
        (entries, fresh) = pairs.into_iter().unzip();
    }
    let reused = fresh.iter().filter(|f| !**f).count();
    Rendered {
        entries,
        fresh,
        reused,
        held,
    }
}

/// The manifest of a revision, its kept entries still the previous manifest's bytes; a
/// preview's names no ledger and no audit tip.
pub(super) fn manifest<'p>(
    id: &RevisionId,
    preview: bool,
    origin: &Origin,
    broken: &[BrokenLink],
    entries: Vec<Stored>,
    prev: Option<&'p Previous>,
) -> Assembled<'p> {
    let head = Manifest {
        id: id.clone(),
        ledger_id: (!preview).then(|| origin.ledger_id.clone()),
        audit_tip: (!preview).then(|| manifest::AuditAnchor {
            seq: origin.audit_tip.seq,
            hash: origin.audit_tip.hash.clone(),
        }),
        preview,
        broken_links: broken
            .iter()
            .map(|b| (b.page.clone(), b.link.clone()))
            .collect(),
        files: Vec::new(),
    };
    Assembled {
        head,
        files: entries,
        prev: prev.map(|(_, c)| c),
        raw_ok: prev.is_some_and(|(d, _)| super::reuse::same_fingerprint(d, &id.fingerprint)),
    }
}

/// The manifest a build writes: as assembled, or owned once the transparency log spliced its
/// files in.
pub(super) enum Written<'p> {
    Assembled(Assembled<'p>),
    Owned(Manifest),
}

impl Written<'_> {
    /// Every entry owned, for what edits the file list.
    pub(super) fn into_manifest(self) -> Manifest {
        match self {
            Written::Assembled(a) => a.into_manifest(),
            Written::Owned(m) => m,
        }
    }

    /// What it owns (not the previous manifest a kept entry is in), to be dropped elsewhere.
    pub(super) fn into_parts(self) -> (Manifest, Vec<Stored>) {
        match self {
            Written::Assembled(a) => (a.head, a.files),
            Written::Owned(m) => (m, Vec::new()),
        }
    }

    pub(super) fn listing(&self) -> &dyn Listing {
        match self {
            Written::Assembled(a) => a,
            Written::Owned(m) => m,
        }
    }

    fn head(&self) -> &Manifest {
        match self {
            Written::Assembled(a) => &a.head,
            Written::Owned(m) => m,
        }
    }

    fn len(&self) -> usize {
        match self {
            Written::Assembled(a) => a.files.len(),
            Written::Owned(m) => m.files.len(),
        }
    }
}

/// The report of a revision rendered and put in place, from its manifest.
pub(super) fn report(
    manifest: &Written<'_>,
    dir: PathBuf,
    reused: usize,
    pointer: PointerOutcome,
    next_change_at: Option<fencepost_core::clock::Instant>,
    broken_links: Vec<BrokenLink>,
) -> Report {
    Report {
        id: manifest.head().id.clone(),
        path: dir.display().to_string(),
        rendered: manifest.len() - reused,
        reused,
        next_change_at,
        pointer,
        already_built: false,
        preview: manifest.head().preview,
        files: manifest.len(),
        broken_links,
        left_out: Vec::new(),
        held_pages: Vec::new(),
        abandoned_removed: 0,
        early_links: 0,
        linked_ahead: false,
        from_spare: false,
        pages_read: 0,
        images_encoded: 0,
        images_cached: 0,
    }
}
