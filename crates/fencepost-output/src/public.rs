//! `public/` and its one owner per command: [`Public`] is opened once (the folder made, what
//! dead builds, swaps and gc runs left removed, the pointer read once) and everything a
//! command does to finished output goes through it — which revision is live and whose it is,
//! where a revision lives, staging one, moving the pointer, the rollback journal. Nothing
//! else takes `public/` as a bare path, so "whose output is this" is asked in one place.

use super::id::RevisionId;
use super::manifest::Manifest;
use super::pointer::{self, Pointer, RollbackJournal, Swap};
use super::revision::{self, Staging, REVISIONS};
use super::{io_err, OutputError};
use fencepost_core::clock::Instant;
use std::path::{Path, PathBuf};

/// What an older release left in `public/` that belongs elsewhere now: `build --preview`
/// wrote there (embargoed pages inside the folder an rsync ships); it writes under the
/// site's `.fencepost/` since, and the old folder goes on the next open.
const OLD_PREVIEW: &str = "preview";

/// Removes the preview an older release left in `public/` (1 if there was one).
pub fn remove_old_preview(public: &Path) -> usize {
    let old = public.join(OLD_PREVIEW);
    usize::from(old.is_dir() && std::fs::remove_dir_all(&old).is_ok())
}

/// The finished output of a site, held by one command.
#[derive(Debug)]
pub struct Public {
    dir: PathBuf,
    /// The pointer as read when opened, or as this command last moved it.
    live: Option<Pointer>,
    tidied: usize,
}

impl Public {
    /// Opens `dir` to write it (build, gc): made if missing, and cleared of leftovers — dead
    /// builds' staging folders always; dead swaps and gc trash only when nobody holds the
    /// pointer right now (a running swap or gc owns them).
    pub fn open(dir: PathBuf) -> Result<Public, OutputError> {
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let mut tidied = revision::remove_abandoned(&dir)?;
        if let Some(n) = pointer::try_with_lock(&dir, || {
            pointer::remove_dead_swaps(&dir) + revision::remove_trash(&dir).unwrap_or(0)
        }) {
            tidied += n;
        }
        tidied += remove_old_preview(&dir);
        let live = pointer::read(&dir)?;
        Ok(Public { dir, live, tidied })
    }

    /// Opens `dir` to read it or move its pointer (rollback, deploy): nothing is made or
    /// removed.
    pub fn read(dir: PathBuf) -> Result<Public, OutputError> {
        let live = pointer::read(&dir)?;
        Ok(Public {
            dir,
            live,
            tidied: 0,
        })
    }

    /// The folder itself (for messages, and for the origins that serve it).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many leftovers [`Public::open`] removed.
    pub fn tidied(&self) -> usize {
        self.tidied
    }

    /// The revision `current` names.
    pub fn live(&self) -> Option<&Pointer> {
        self.live.as_ref()
    }

    /// The live revision's folder.
    pub fn live_dir(&self) -> Option<PathBuf> {
        let live = self.live.as_ref()?;
        Some(self.dir.join(REVISIONS).join(&live.dir))
    }

    /// Where revision `id` lives, complete or not.
    pub fn revision_dir(&self, id: &RevisionId) -> PathBuf {
        self.dir.join(REVISIONS).join(id.to_string())
    }

    /// Whether revision `id` is built complete.
    pub fn is_built(&self, id: &RevisionId) -> bool {
        revision::is_complete(&self.revision_dir(id))
    }

    /// What a build reuses from: the live revision, else the newest complete one.
    pub fn newest(&self) -> Option<PathBuf> {
        let name = match &self.live {
            Some(p) => Some(p.dir.clone()),
            None => revision::list_complete(&self.dir)
                .ok()
                .and_then(|l| l.first().map(|id| id.to_string())),
        };
        name.map(|n| self.dir.join(REVISIONS).join(n))
    }

    /// Complete revisions, newest first.
    pub fn complete(&self) -> Result<Vec<RevisionId>, OutputError> {
        revision::list_complete(&self.dir)
    }

    /// Revisions only grow, so the live revision can never be ahead of the ledger that built
    /// it: if it is, the ledger at `ledger_revision` is not that one (lost, emptied, restored
    /// from an old backup).
    pub fn not_ahead_of(&self, ledger_revision: i64) -> Result<(), OutputError> {
        match &self.live {
            Some(live) if live.id.revision > ledger_revision => Err(OutputError::AheadOfLedger {
                public: self.dir.clone(),
                live: live.dir.clone(),
                ledger: ledger_revision,
            }),
            _ => Ok(()),
        }
    }

    /// The live revision must come from ledger `ours`: revision numbers of a new or emptied
    /// ledger start again at 1 and would collide with the old output. `read` is a revision
    /// whose manifest the caller has parsed already (spared a second read when it is live).
    pub fn live_is_from(
        &self,
        ours: &str,
        read: Option<(&Path, &Manifest)>,
    ) -> Result<(), OutputError> {
        let Some(live) = &self.live else {
            return Ok(());
        };
        let live_dir = self.dir.join(REVISIONS).join(&live.dir);
        let theirs = match read {
            Some((d, m)) if d == live_dir => m.ledger_id.clone(),
            _ => Manifest::read_ledger_id(&live_dir).ok().flatten(),
        };
        self.built_by(&live.dir, theirs.as_deref(), ours)
    }

    /// Refuses revision `dir` when its manifest names another ledger than `ours` (a
    /// manifest without an id predates the check).
    pub fn built_by(&self, dir: &str, theirs: Option<&str>, ours: &str) -> Result<(), OutputError> {
        match theirs {
            Some(t) if t != ours => Err(OutputError::ForeignOutput {
                public: self.dir.clone(),
                dir: dir.to_string(),
                theirs: t.to_string(),
                ours: ours.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// A staging folder for revision `name`, removed unless finished.
    pub fn stage(&self, name: &str) -> Result<Staging, OutputError> {
        Staging::create(&self.dir, name)
    }

    /// Moves `current` forward to `id` (see [`pointer::advance`]), writing `next_change_at`.
    pub fn advance(
        &mut self,
        id: &RevisionId,
        now: Instant,
        next_change_at: Option<Instant>,
    ) -> Result<Swap, OutputError> {
        let to = Pointer::new(id.clone());
        let swap = pointer::advance(&self.dir, &to, now, next_change_at)?;
        if matches!(swap, Swap::Moved { .. }) {
            self.live = Some(to);
        }
        Ok(swap)
    }

    /// Points `current` back at `to`, journaled first (see [`pointer::rollback`]).
    pub fn rollback(
        &mut self,
        to: &Pointer,
        id: &str,
        now: Instant,
    ) -> Result<Option<Pointer>, OutputError> {
        let from = pointer::rollback(&self.dir, to, id, now)?;
        self.live = Some(to.clone());
        Ok(from)
    }

    /// A rollback whose audit entry is not written yet (the process died between moving the
    /// pointer and writing it): its id, and the entry's detail.
    pub fn unaudited_rollback(&self) -> Option<(RollbackJournal, String)> {
        let j = pointer::rollback_journal(&self.dir).filter(|j| !j.audited)?;
        let detail = serde_json::json!({ "from": j.from, "to": j.to, "held_below": j.held_below })
            .to_string();
        Some((j, detail))
    }

    /// Records that rollback `id`'s audit entry is written.
    pub fn rollback_audited(&self, id: &str) -> Result<(), OutputError> {
        pointer::rollback_audited(&self.dir, id)
    }

    /// Runs `f` holding the pointer lock, with the pointer read under it: no swap runs
    /// meanwhile (gc removes revisions so).
    pub fn locked<T>(
        &self,
        f: impl FnOnce(Option<Pointer>) -> Result<T, OutputError>,
    ) -> Result<T, OutputError> {
        pointer::with_lock(&self.dir, || f(pointer::read(&self.dir)?))
    }

    /// Removes what dead swaps and gc runs left (which [`Public::open`] skips while someone
    /// holds the pointer). Only inside [`Public::locked`].
    pub fn remove_leftovers(&self) -> Result<usize, OutputError> {
        Ok(pointer::remove_dead_swaps(&self.dir) + revision::remove_trash(&self.dir)?)
    }

    /// Removes complete revision `name`. Only inside [`Public::locked`].
    pub fn remove(&self, name: &str) -> Result<(), OutputError> {
        revision::remove(&self.dir, name)
    }

    /// Takes complete revision `name` out of the revisions as the spare the next build starts
    /// from (see [`revision::set_aside_as_spare`]). Only inside [`Public::locked`].
    pub fn set_aside_as_spare(&self, name: &str) -> Result<(), OutputError> {
        revision::set_aside_as_spare(&self.dir, name)
    }

    /// Removes the spare, if any (how many). Only inside [`Public::locked`].
    pub fn remove_spares(&self) -> Result<usize, OutputError> {
        revision::remove_spares(&self.dir)
    }

    /// A staging folder for revision `name` made from the spare when there is one (see
    /// [`Staging::create_from_spare`]); whether it was.
    pub fn stage_from_spare(&self, name: &str) -> Result<(Staging, bool), OutputError> {
        Staging::create_from_spare(&self.dir, name)
    }

    /// Revisions that were live until lately, with when they stopped (gc's grace period).
    pub fn retired(&self) -> Vec<pointer::Retired> {
        pointer::retired(&self.dir)
    }

    /// Chooses a complete revision from `R-B` or `R` (see [`revision::choose`]).
    pub fn choose(&self, target: &str) -> Result<Option<RevisionId>, OutputError> {
        let build = self.live.as_ref().map(|c| c.id.fingerprint.as_str());
        revision::choose(&self.dir, target, build)
    }
}

/// Where `build --preview` puts its tree: `preview/` in the site's state folder
/// (`.fencepost/`), outside `public/`, staged beside it and swapped in whole.
#[derive(Debug)]
pub struct PreviewDir {
    dir: PathBuf,
}

impl PreviewDir {
    /// The preview folder in `state` (made if missing), with what dead previews left beside
    /// it removed.
    pub fn open(state: &Path) -> Result<PreviewDir, OutputError> {
        PreviewDir::open_named(state, "preview")
    }

    /// A preview folder of another name in `state` (`preview-deploy`: what `preview deploy`
    /// builds before it uploads).
    pub fn open_named(state: &Path, name: &str) -> Result<PreviewDir, OutputError> {
        std::fs::create_dir_all(state).map_err(io_err(state))?;
        revision::remove_abandoned_in(state, &format!("{name}-"))?;
        Ok(PreviewDir {
            dir: state.join(name),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A staging folder beside the preview's.
    pub fn stage(&self) -> Result<Staging, OutputError> {
        let name = self.dir.file_name().expect("named").to_string_lossy();
        Staging::create_in(self.dir.parent().expect("in the state folder"), &name)
    }
}
