//! Where a resumed or fresh deploy takes the revision from before its pointer step: the
//! plan's local files, or the bucket on a runner that never had them.

use super::{DeployError, Run};
use crate::targets::objects::describe_missing;
use fencepost_bucket::layout;
use fencepost_ledger::deploys::Step;
use fencepost_ledger::lease::Lease;
use fencepost_output::manifest::Manifest;
use std::path::Path;

impl Run<'_, '_> {
    /// Where the steps before the pointer take the revision from: the plan's local files
    /// (verified to still give its manifest), or — on a runner without them — the bucket,
    /// when it holds every object of the plan (then on to the pointer, `true`: listed); else
    /// the folder's absence is the failure to name. Nothing after the pointer needs either.
    pub(super) async fn source(
        &mut self,
        dir: &Path,
        step: &mut Step,
        held: &Lease,
        fresh: Option<layout::Split>,
    ) -> Result<(Option<layout::Split>, bool), DeployError> {
        if *step >= Step::Pointer {
            return Ok((None, false));
        }
        if fencepost_output::revision::is_complete(dir) || fresh.is_some() {
            return Ok((Some(self.local_split(dir, fresh)?), false));
        }
        match self.from_bucket(*step, held).await {
            Ok(s) => {
                *step = s;
                Ok((None, true))
            }
            Err(DeployError::Incomplete { .. }) => Ok((Some(self.local_split(dir, fresh)?), false)),
            Err(e) => Err(e),
        }
    }

    /// The steps before the pointer, checked in the bucket instead of carried out from the
    /// plan's files (which this runner does not have): every object the plan's root names is
    /// there, by one listing (else the step fails, naming what is missing). The journal is
    /// moved to the pointer step.
    async fn from_bucket(&mut self, step: Step, held: &Lease) -> Result<Step, DeployError> {
        let remote = self.remote();
        let (shards, blobs) =
            crate::targets::objects::root_objects_missing(remote, &self.plan.root).await?;
        if !shards.is_empty() || !blobs.is_empty() {
            return Err(DeployError::Incomplete {
                target: remote.url.clone(),
                root: self.plan.root.clone(),
                missing: describe_missing(&shards, &blobs),
            });
        }
        if step != Step::Manifest {
            self.advance(step, Step::Manifest, None, held)?;
        }
        Ok(Step::Manifest)
    }

    /// The plan is never recomputed; the local revision it came from must still say the same.
    fn local_split(
        &self,
        dir: &Path,
        fresh: Option<layout::Split>,
    ) -> Result<layout::Split, DeployError> {
        if let Some(f) = fresh.filter(|f| f.root.sha256 == self.plan.root) {
            return Ok(f);
        }
        let remote = self.remote();
        let manifest = Manifest::read(dir).map_err(|e| {
            DeployError::store(
                remote,
                "reading the revision the plan names",
                format!("{e}; it may have been garbage-collected: rebuild it, or `fencepost deploy --retry` after restoring it"),
            )
        })?;
        let split = layout::split(&manifest);
        if split.root.sha256 != self.plan.root {
            return Err(DeployError::store(
                remote,
                "verifying the frozen plan",
                format!(
                    "{} no longer gives manifest {} (it gives {}); the plan is not recomputed",
                    dir.display(),
                    self.plan.root,
                    split.root.sha256
                ),
            ));
        }
        Ok(split)
    }
}
