//! Where a build to disk puts what it makes, chosen once by the caller: a revision of
//! `public/` (owned by [`Public`], the pointer moved after), or the preview's folder outside
//! it. Everything that differs between the two is here, so the driver asks no flag twice.

use super::report::BuildError;
use fencepost_core::clock::Instant;
use fencepost_output::carried::Listing;
use fencepost_output::id::RevisionId;
use fencepost_output::pointer::PointerOutcome;
use fencepost_output::public::{PreviewDir, Public};
use fencepost_output::revision::Staging;
use fencepost_site::Site;
use std::path::PathBuf;

/// A folder of the same revision and inputs built before the site's log grew (its checkpoint
/// differs from the one staged): renaming the new one into place would otherwise keep the old,
/// and pointing to it would take the log back (or, live, never publish what the log holds now
/// — a commitment logged before its instant). Removed when it is not live; when it is, the
/// staged folder is exchanged with it in one step. The staging taken
/// out of `staging` is in place already.
fn replace_stale(
    public: &Public,
    staging: &mut Option<Staging>,
    manifest: &dyn Listing,
    id: &RevisionId,
) -> Result<(), BuildError> {
    let Some(staged) = staging.as_ref() else {
        return Ok(());
    };
    let dir = public.revision_dir(id);
    let checkpoint = |d: &std::path::Path| {
        let log = d.join(super::well_known::LOG_DIR);
        std::fs::read(log.join("checkpoint")).ok()
    };
    if !dir.exists() || checkpoint(&dir) == checkpoint(&staged.path) {
        return Ok(());
    }
    let live = public.live().is_some_and(|p| p.dir == id.to_string());
    tracing::info!(dir = %dir.display(), live, "replacing a folder of this revision built before the log grew");
    match live {
        true => staging
            .take()
            .expect("staged")
            .exchange_revision(manifest, &id.to_string())?,
        false => fencepost_output::revision::remove(public.dir(), &id.to_string())?,
    }
    Ok(())
}

pub(super) enum Destination {
    /// `public/revisions/<R>-<B>/`, then the pointer.
    Revision(Public),
    /// `.fencepost/preview/`: the content tree as it is now, embargoed items included.
    Preview(PreviewDir),
}

impl Destination {
    /// Opens the destination — once the ledger's location is known to be sound, so nothing
    /// is written for a site that cannot build.
    pub(super) fn open(
        site: &Site,
        preview: bool,
        deployed: bool,
    ) -> Result<Destination, BuildError> {
        site.ledger_location()?;
        Ok(match preview {
            true if deployed => {
                Destination::Preview(PreviewDir::open_named(&site.state_dir(), "preview-deploy")?)
            }
            true => {
                // An older release's preview inside public/ goes first: it holds embargoed
                // pages where a copy of public/ would carry them.
                fencepost_output::public::remove_old_preview(&site.public_dir());
                Destination::Preview(PreviewDir::open(&site.state_dir())?)
            }
            false => Destination::Revision(Public::open(site.public_dir())?),
        })
    }

    pub(super) fn is_preview(&self) -> bool {
        matches!(self, Destination::Preview(_))
    }

    /// `public/` when this build makes a revision of it.
    pub(super) fn public(&self) -> Option<&Public> {
        match self {
            Destination::Revision(p) => Some(p),
            Destination::Preview(_) => None,
        }
    }

    /// Leftovers of dead builds removed when opening.
    pub(super) fn tidied(&self) -> usize {
        self.public().map_or(0, Public::tidied)
    }

    /// What this build reuses from: the live (or newest) revision; the last preview; nothing
    /// for `--full`.
    pub(super) fn previous(&self, full: bool) -> Option<PathBuf> {
        match (full, self) {
            (true, _) => None,
            (false, Destination::Revision(p)) => p.newest(),
            (false, Destination::Preview(d)) => Some(d.dir().to_path_buf()),
        }
    }

    /// The folder of revision `id` here.
    pub(super) fn dir(&self, id: &RevisionId) -> PathBuf {
        match self {
            Destination::Revision(p) => p.revision_dir(id),
            Destination::Preview(d) => d.dir().to_path_buf(),
        }
    }

    /// A staging folder for revision `id`.
    pub(super) fn stage(&self, id: &RevisionId) -> Result<Staging, BuildError> {
        Ok(match self {
            Destination::Revision(p) => p.stage(&id.to_string())?,
            Destination::Preview(d) => d.stage()?,
        })
    }

    /// [`Destination::stage`], starting from the spare `gc` set aside when there is one (a
    /// revision's only: a preview has none); whether it did.
    pub(super) fn stage_from_spare(&self, id: &RevisionId) -> Result<(Staging, bool), BuildError> {
        Ok(match self {
            Destination::Revision(p) => p.stage_from_spare(&id.to_string())?,
            Destination::Preview(d) => (d.stage()?, false),
        })
    }

    /// Puts the staged revision in place: a preview replaces the last one; a revision is
    /// renamed into `revisions/` (unless another build finished it first) and the pointer
    /// moved forward to it.
    pub(super) fn put_in_place(
        &mut self,
        staging: Staging,
        manifest: &dyn Listing,
        id: &RevisionId,
        now: Instant,
        next_change_at: Option<Instant>,
        logged: bool,
    ) -> Result<PointerOutcome, BuildError> {
        let public = match self {
            Destination::Preview(d) => {
                staging.replace(manifest, d.dir())?;
                return Ok(PointerOutcome::None);
            }
            Destination::Revision(p) => p,
        };
        let mut staging = Some(staging);
        if logged {
            replace_stale(public, &mut staging, manifest, id)?;
        }
        if let Some(staging) = staging {
            if !staging.finish(manifest, &id.to_string())? {
                let dir = public.revision_dir(id);
                tracing::info!(dir = %dir.display(), "another build finished this revision first");
            }
        }
        let swap = public.advance(id, now, next_change_at)?;
        Ok(PointerOutcome::from(&swap))
    }
}
