//! What a build reuses from, and the thread protocol that reads it while the snapshot is
//! read: the previous revision's manifest (read lazily, `fencepost_output::carried`: ~60 ms
//! for 100,000 entries) on another thread and, when that revision has this build's
//! fingerprint, its files linked into the staging folder meanwhile (early links, see
//! `prelink.rs`).

use super::destination::Destination;
use super::prelink::{Early, Prelinked};
use super::report::BuildError;
use fencepost_output::carried::Carried;
use fencepost_output::id::RevisionId;
use fencepost_output::revision::Staging;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

/// A revision folder and its manifest, read lazily.
pub(super) type Previous = (PathBuf, Carried);

pub(super) struct Reuse {
    dir: Option<PathBuf>,
    /// The previous manifest a long-lived process read ahead (see `warm/kept.rs`).
    kept: Option<Previous>,
    reader: Option<JoinHandle<Option<Previous>>>,
    /// The early links and the staging folder they go into. In this order: a tuple drops
    /// its first field first, so a build that ends early (its revision found built after
    /// all) waits for the linking thread before the folder is removed — else the thread
    /// would go on filling a folder nobody holds, and the next build's clean-up would race
    /// it.
    early: Option<(Early, Staging)>,
    /// The early links were made ahead of this build (see `Warm::link_ahead`).
    ahead: bool,
    /// The staging folder is the spare gc set aside, made into the previous revision's tree
    /// where it differs (`prelink/spare.rs`).
    spare: bool,
}

impl Reuse {
    /// `at` is the ledger's revision now (`None` for a preview). When the revision it would
    /// make is complete already (a rerun with nothing new), nothing is read or linked.
    pub(super) fn start(
        dest: &Destination,
        full: bool,
        at: Option<i64>,
        fingerprint: &str,
        warm: &mut super::Warm,
    ) -> Result<Reuse, BuildError> {
        let dir = dest.previous(full);
        let guess = at.map(|at| RevisionId::new(at, fingerprint));
        let looks_built = !full
            && guess
                .as_ref()
                .zip(dest.public())
                .is_some_and(|(g, p)| p.is_built(g));
        // A revision found built reads nothing: what was read ahead stays for the next build.
        let kept = (!looks_built)
            .then(|| warm.previous(dir.as_deref()))
            .flatten();
        let reader = (!looks_built && kept.is_none()).then(|| {
            let dir = dir.clone();
            std::thread::spawn(move || read_previous(dir))
        });
        let (mut ahead, mut spare) = (false, false);
        let early = match (guess, &dir) {
            (_, _) if looks_built => None,
            (Some(guess), Some(prev)) if same_fingerprint(prev, fingerprint) => {
                match warm.ahead(Some(prev)) {
                    Some(made) => {
                        ahead = true;
                        Some(made)
                    }
                    None => {
                        let staging;
                        (staging, spare) = dest.stage_from_spare(&guess)?;
                        let early = Early::start(prev.clone(), staging.path.clone(), spare);
                        Some((early, staging))
                    }
                }
            }
            _ => {
                warm.ahead(None);
                None
            }
        };
        Ok(Reuse {
            dir,
            kept,
            reader,
            early,
            ahead,
            spare,
        })
    }

    /// The previous revision and its manifest: read ahead by a long-lived process, from the
    /// reader thread, or read now when the ledger had moved on between the first look and
    /// the snapshot.
    pub(super) fn previous(&mut self) -> Option<Previous> {
        if let Some(kept) = self.kept.take() {
            return Some(kept);
        }
        match self.reader.take() {
            Some(r) => r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => read_previous(self.dir.clone()),
        }
    }

    /// Whether the early links were made ahead of this build.
    pub(super) fn linked_ahead(&self) -> bool {
        self.ahead
    }

    /// Whether the staging folder started as the spare gc set aside.
    pub(super) fn started_from_spare(&self) -> bool {
        self.spare
    }

    /// The staging folder to render revision `id` into, with the early links the plan keeps
    /// (the rest removed, but those under `left`, a folder a later step decides: the search
    /// index's) and how many were made.
    pub(super) fn staging(
        &mut self,
        dest: &Destination,
        id: &RevisionId,
        planned: &[super::plan::Planned],
        left: Option<&str>,
    ) -> Result<(Staging, Option<Prelinked>, usize), BuildError> {
        let Some((early, staging)) = self.early.take() else {
            return Ok((dest.stage(id)?, None, 0));
        };
        let mut linked = early.wait().map_err(super::report::io(&staging.path))?;
        let made = linked.count();
        let removed = linked.remove_unplanned(
            &staging.path,
            planned.iter().map(|p| p.path.as_str()),
            left,
        )?;
        tracing::info!(linked = linked.count(), removed, "early links");
        Ok((staging, Some(linked), made))
    }
}

fn read_previous(dir: Option<PathBuf>) -> Option<Previous> {
    dir.and_then(|d| Carried::read(&d).ok().map(|m| (d, m)))
}

/// Whether revision folder `dir` was built with `fingerprint` (and so by this fencepost).
pub(super) fn same_fingerprint(dir: &Path, fingerprint: &str) -> bool {
    dir.file_name()
        .and_then(|n| n.to_string_lossy().parse::<RevisionId>().ok())
        .is_some_and(|id| id.fingerprint == fingerprint)
}
