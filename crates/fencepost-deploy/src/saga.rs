//! Carrying out one frozen plan: blobs → manifest → pointer → recorded → done, each step
//! journaled under the operation's fenced lease. A resumed operation never re-plans: it
//! verifies what the journal says earlier steps left and redoes, loudly, what is missing.
//!
//! - Before the pointer moves, every shard and blob the root names is known to exist: listed
//!   in this run, or (a fresh plan, in one run under one lease) the objects of the root the
//!   pointer still names, which `gc --to` never deletes and cannot touch while the lease is
//!   held. Otherwise one listing of the bucket checks them, and what is missing goes up again.
//! - The pointer records the operation whose compare-and-set moved it, so exactly one
//!   operation writes the receipt of each move, however many race or are retried onto it.
//! - Past the pointer step, a resumed operation checks that the pointer still names its root
//!   (or that something newer replaced it); a move that was lost is made again.

mod source;

use super::{Ctx, DeployError, Outcome, Plan, Report};
use crate::targets::claim::{self, owner_of};
use crate::targets::lost_lease;
use crate::targets::objects::{
    describe_missing, list_names, missing_blobs, root_objects_missing, root_shards, shard_names,
    upload_blob, upload_shards, UPLOADS, UPLOAD_CHUNK,
};
use fencepost_bucket::layout;
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_ledger::deploys::{self, Op, Step};
use fencepost_ledger::lease::{self, Lease};
use fencepost_ledger::public;
use fencepost_ledger::{audit, Ledger};
use fencepost_output::manifest::AuditAnchor;
use fencepost_output::pointer::{self, PointerOutcome};
use fencepost_output::revision::REVISIONS;
use futures_util::StreamExt;
use std::collections::HashSet;
use std::path::Path;

/// Runs an operation's remaining steps, holding the target's lease (its caller gives it back,
/// through `claim::holding`); a failure is recorded (and parks the operation after
/// `deploy.max_attempts`), and reported as the outcome `failed`.
/// `fresh`: the split the plan was just made from (a resumed operation reads and checks it
/// again).
pub(super) async fn execute(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    op: Op,
    held: &mut Lease,
    resumed: bool,
    fresh: Option<layout::Split>,
) -> Result<Report, DeployError> {
    let plan: Plan = serde_json::from_str(&op.plan)
        .map_err(|e| DeployError::store(ctx.remote, "reading the frozen plan", format!("{e}")))?;
    let mut report = Report::of_plan(&ctx.remote.url, &plan, Outcome::Deployed);
    report.operation = Some(op.id.clone());
    report.resumed = resumed;
    let mut run = Run {
        ledger,
        ctx,
        op: &op,
        plan: &plan,
        resumed,
    };
    match run.steps(held, &mut report, fresh).await {
        Ok(()) => Ok(report),
        Err(DeployError::Interrupted) => {
            // Not a failed attempt: the cursor stands where it stood, and the lease is free
            // for the next run to resume it at once.
            tracing::info!(operation = %op.id, "deploy interrupted on request; the next run resumes it");
            report.outcome = Outcome::Interrupted;
            report.error = Some(DeployError::Interrupted.to_string());
            Ok(report)
        }
        Err(e) => {
            let msg = e.to_string();
            tracing::warn!(operation = %op.id, error = %msg, "deploy step failed; the next run resumes it");
            let now = ctx.clock.now();
            let max = ctx.site.config.deploy.max_attempts;
            let _ = run
                .ledger
                .write(|tx| deploys::record_failure(tx, &op.id, &msg, max, held, now));
            report.outcome = Outcome::Failed;
            report.error = Some(msg);
            Ok(report)
        }
    }
}

struct Run<'r, 'c> {
    ledger: &'r mut Ledger,
    ctx: &'r Ctx<'c>,
    op: &'r Op,
    plan: &'r Plan,
    resumed: bool,
}

impl Run<'_, '_> {
    fn remote(&self) -> &Remote {
        self.ctx.remote
    }

    /// Moves the cursor under the lease, or fails when the lease is gone.
    fn advance(
        &mut self,
        from: Step,
        to: Step,
        outcome: Option<&str>,
        held: &Lease,
    ) -> Result<(), DeployError> {
        let now = self.ctx.clock.now();
        let id = &self.op.id;
        if self
            .ledger
            .write(|tx| deploys::advance(tx, id, from, to, outcome, held, now))?
        {
            Ok(())
        } else {
            Err(lost_lease(self.remote(), "journaling a step"))
        }
    }

    /// Keeps the lease alive through long uploads.
    fn keep_lease(&mut self, held: &mut Lease) -> Result<(), DeployError> {
        let now = self.ctx.clock.now();
        let secs = self.ctx.site.config.deploy.lease_secs;
        match self.ledger.write(|tx| lease::extend(tx, held, now, secs))? {
            Some(l) => {
                *held = l;
                Ok(())
            }
            None => Err(lost_lease(self.remote(), "extending the deploy lease")),
        }
    }

    async fn steps(
        &mut self,
        held: &mut Lease,
        report: &mut Report,
        fresh: Option<layout::Split>,
    ) -> Result<(), DeployError> {
        let plan = self.plan;
        let mut step = self.op.step;
        let dir = self.ctx.site.public_dir().join(REVISIONS).join(&plan.dir);
        // Whether a listing in this run saw every blob (then the pointer step needs none).
        let (split, mut listed) = self.source(&dir, &mut step, held, fresh).await?;
        let mut known_shards: Option<HashSet<String>> = None;
        if step <= Step::Blobs {
            let split = split.as_ref().expect("read above");
            listed = self
                .blobs(&dir, split, step, held, report, &mut known_shards)
                .await?;
            if step == Step::Planned {
                self.advance(Step::Planned, Step::Blobs, None, held)?;
                step = Step::Blobs;
            }
            fencepost_core::fail_point!("deploy.after_blobs");
            self.ctx.check_cancel()?;
        }
        if let (true, Some(split)) = (step <= Step::Manifest, split.as_ref()) {
            self.manifest(split, step, report, known_shards.take())
                .await?;
            if step == Step::Blobs {
                self.advance(Step::Blobs, Step::Manifest, None, held)?;
                step = Step::Manifest;
            }
            fencepost_core::fail_point!("deploy.after_manifest");
        }
        if step == Step::Manifest {
            fencepost_core::fail_point!("deploy.before_pointer");
            if !listed && !self.trusted_now().await? {
                let split = split.as_ref().expect("read above unless listed");
                self.complete(&dir, split, report).await?;
            }
            let (outcome, moved) = self.move_pointer().await?;
            report.outcome = outcome;
            report.pointer = moved;
            self.advance(Step::Manifest, Step::Pointer, Some(outcome.as_str()), held)?;
            step = Step::Pointer;
            fencepost_core::fail_point!("deploy.after_pointer");
        } else if step >= Step::Pointer {
            report.outcome = self
                .op
                .outcome
                .as_deref()
                .map_or(Outcome::Deployed, Outcome::parse);
            if step == Step::Pointer && report.outcome == Outcome::Deployed {
                self.still_live(report).await?;
            }
        }
        if step == Step::Pointer {
            self.record(report.outcome, held)?;
            self.advance(Step::Pointer, Step::Recorded, None, held)?;
            step = Step::Recorded;
        }
        if step == Step::Recorded {
            self.advance(Step::Recorded, Step::Done, None, held)?;
        }
        Ok(())
    }

    /// The blobs. A fresh plan lists what to upload, taking the manifest its pointer named
    /// as present — if the pointer still names it. Otherwise (it moved, or this is a resumed
    /// step that must verify what the journal says was done) the bucket is listed, and every
    /// blob of the revision it lacks is uploaded; one the journal says was uploaded is redone
    /// loudly. A repair uploads exactly the objects its plan froze, removing corrupt ones
    /// first. Returns whether a listing saw every blob.
    async fn blobs(
        &mut self,
        dir: &Path,
        split: &layout::Split,
        step: Step,
        held: &mut Lease,
        report: &mut Report,
        known_shards: &mut Option<HashSet<String>>,
    ) -> Result<bool, DeployError> {
        let remote = self.ctx.remote;
        let plan = self.plan;
        let mut listed = false;
        let todo: Vec<(String, String, String)> = if plan.repair.is_some() {
            for sha in plan.repair.iter().flat_map(|r| &r.corrupt_blobs) {
                tracing::warn!(blob = %sha, "removing a corrupt blob before uploading it again");
                remote.delete(&Remote::blob_key(sha)).await?;
            }
            plan.blobs.clone()
        } else {
            let live = remote.read_pointer().await?.map(|(p, _)| p.manifest);
            let trusted = step == Step::Planned
                && !self.resumed
                && plan.assumed.is_some()
                && live == plan.assumed;
            if trusted {
                if let Some(m) = &plan.assumed {
                    *known_shards = root_shards(remote, m).await?;
                }
                plan.blobs.clone()
            } else {
                let present = list_names(remote, "objects").await?;
                listed = true;
                missing_blobs(split, &present)
            }
        };
        let total = if plan.repair.is_some() {
            todo.len() as u64
        } else {
            split.blobs.len() as u64
        };
        report.blobs_present += total - todo.len() as u64;
        let mut done = total - todo.len() as u64;
        (self.ctx.progress)(done, total);
        let redo = step == Step::Blobs;
        // Uploads run UPLOADS at a time; between chunks the lease is kept alive.
        for chunk in todo.chunks(UPLOAD_CHUNK) {
            let results: Vec<Result<(bool, u64), DeployError>> =
                futures_util::stream::iter(chunk.iter().map(|(sha, path, content_type)| {
                    upload_blob(remote, dir, sha, path, content_type, redo)
                }))
                .buffer_unordered(UPLOADS)
                .collect()
                .await;
            for r in results {
                let (created, len) = r?;
                if created {
                    report.blobs_uploaded += 1;
                    report.bytes_uploaded += len;
                } else {
                    report.blobs_present += 1;
                }
            }
            done += chunk.len() as u64;
            (self.ctx.progress)(done, total);
            self.keep_lease(held)?;
            self.ctx.check_cancel()?;
        }
        Ok(listed)
    }

    /// The manifest: shards, then the root (readers find shards through the root). Shards
    /// are content-addressed: the ones the bucket lacks go up.
    async fn manifest(
        &self,
        split: &layout::Split,
        step: Step,
        report: &mut Report,
        known_shards: Option<HashSet<String>>,
    ) -> Result<(), DeployError> {
        let remote = self.remote();
        for sha in self.plan.repair.iter().flat_map(|r| &r.corrupt_shards) {
            tracing::warn!(shard = %sha, "removing a corrupt shard before uploading it again");
            remote.delete(&Remote::shard_key(sha)).await?;
        }
        if self.plan.repair.as_ref().is_some_and(|r| r.corrupt_root) {
            tracing::warn!(manifest = %self.plan.root, "removing a corrupt manifest root before uploading it again");
            remote.delete(&Remote::root_key(&self.plan.root)).await?;
        }
        let stored = match known_shards {
            Some(shards) => shards,
            None => shard_names(remote).await?,
        };
        let missing: Vec<&layout::Object> = split
            .shards
            .iter()
            .filter(|s| !stored.contains(&s.sha256))
            .collect();
        if step == Step::Manifest {
            for shard in &missing {
                tracing::warn!(shard = %shard.sha256, "a manifest shard an earlier attempt uploaded is missing; uploading it again");
            }
        }
        report.bytes_uploaded += upload_shards(remote, &missing).await?;
        let key = Remote::root_key(&split.root.sha256);
        if remote
            .create(&key, split.root.bytes.clone(), Some("application/json"))
            .await?
        {
            report.bytes_uploaded += split.root.bytes.len() as u64;
        }
        Ok(())
    }

    /// A fresh plan in this run whose blobs were taken from the root the pointer named: its
    /// objects are known present while the pointer still names that root (gc never deletes
    /// the live root's objects, and takes this lease to delete anything).
    async fn trusted_now(&self) -> Result<bool, DeployError> {
        if self.resumed || self.plan.repair.is_some() {
            return Ok(false);
        }
        let Some(assumed) = &self.plan.assumed else {
            return Ok(false);
        };
        let live = self.remote().read_pointer().await?.map(|(p, _)| p.manifest);
        Ok(live.as_ref() == Some(assumed) || live.as_ref() == Some(&self.plan.root))
    }

    /// One listing of the bucket's blobs and shards; what the revision needs and the bucket
    /// lacks goes up again, loudly.
    async fn complete(
        &self,
        dir: &Path,
        split: &layout::Split,
        report: &mut Report,
    ) -> Result<(), DeployError> {
        let remote = self.remote();
        if !remote.exists(&Remote::root_key(&self.plan.root)).await? {
            return Err(DeployError::store(
                remote,
                "verifying the manifest before moving the pointer",
                format!("manifests/{}.json is missing", self.plan.root),
            ));
        }
        let present = list_names(remote, "objects").await?;
        for (sha, path, ct) in missing_blobs(split, &present) {
            let (created, len) = upload_blob(remote, dir, &sha, &path, &ct, true).await?;
            if created {
                report.blobs_uploaded += 1;
                report.bytes_uploaded += len;
            }
        }
        let shards = shard_names(remote).await?;
        let missing: Vec<&layout::Object> = split
            .shards
            .iter()
            .filter(|s| !shards.contains(&s.sha256))
            .collect();
        for s in &missing {
            tracing::warn!(shard = %s.sha256, "a manifest shard is missing before the pointer moves; uploading it again");
        }
        report.bytes_uploaded += upload_shards(remote, &missing).await?;
        Ok(())
    }

    /// The compare-and-set: moves `current` to the plan's root unless a higher revision, a
    /// rollback's hold, or a newer build of the same revision is live; retries a lost race
    /// after re-reading.
    async fn move_pointer(&mut self) -> Result<(Outcome, PointerOutcome), DeployError> {
        let remote = self.ctx.remote;
        let plan = self.plan;
        let ours = self.ctx.ours.clone();
        let now = self.ctx.clock.now();
        let next_change_at = self.ledger.read(|tx| public::next_change(tx, now))?;
        let tip = self.ledger.read(fencepost_ledger::status::anchor)?;
        for _ in 0..32 {
            let live = remote.read_pointer().await?;
            let live_p = live.as_ref().map(|(p, _)| p);
            let mut adopting = false;
            if let Some(p) = live_p {
                let owner = owner_of(remote, p).await?;
                if let Some(theirs) = owner.filter(|o| *o != ours) {
                    if plan.adopt.as_deref() != Some(theirs.as_str()) {
                        return Err(DeployError::ForeignBucket {
                            target: remote.url.clone(),
                            theirs,
                            ours,
                        });
                    }
                    adopting = true;
                }
            }
            let decision = match adopting {
                true => pointer::Decision::Move,
                false => claim::unless_foreign(remote, live_p, decide(live_p, plan), &ours).await?,
            };
            match decision {
                pointer::Decision::Unchanged => {
                    // Ours if this operation's compare-and-set put it there (an earlier
                    // attempt that died before journaling it).
                    let mine = live_p.and_then(|p| p.operation.as_deref()) == Some(&self.op.id);
                    return Ok(if mine {
                        (Outcome::Deployed, PointerOutcome::Moved)
                    } else {
                        (Outcome::AlreadyDeployed, PointerOutcome::Unchanged)
                    });
                }
                pointer::Decision::KeptHigher | pointer::Decision::Replaced => {
                    return Ok((Outcome::Superseded, PointerOutcome::KeptHigher))
                }
                pointer::Decision::Held(_) => {
                    return Ok((Outcome::Held, PointerOutcome::KeptHigher))
                }
                pointer::Decision::Move => {}
            }
            let mut new = RemotePointer::new(plan.id.clone(), &plan.root, self.ctx.clock.now());
            new.next_change_at = next_change_at;
            new.ledger_id = Some(ours.clone());
            new.audit_tip = Some(AuditAnchor {
                seq: tip.seq,
                hash: tip.hash.clone(),
            });
            new.operation = Some(self.op.id.clone());
            let mut new = new.after(live_p);
            if adopting {
                new.live_builds = vec![plan.id.fingerprint.clone()];
            }
            if remote
                .swap_pointer(live.as_ref().map(|(_, v)| v), &new)
                .await?
            {
                return Ok((Outcome::Deployed, PointerOutcome::Moved));
            }
            tracing::info!("the pointer moved under this deploy; reading it again");
        }
        Err(DeployError::store(
            remote,
            "moving current",
            "lost the compare-and-set 32 times in a row; run deploy again",
        ))
    }

    /// Resumed past the pointer step: the move this operation journaled must still be there,
    /// or have been replaced by something newer. A move that was lost (the pointer names an
    /// older root, and nothing holds it) is made again — decided means carried out.
    async fn still_live(&mut self, report: &mut Report) -> Result<(), DeployError> {
        let remote = self.ctx.remote;
        let live = remote.read_pointer().await?;
        let live_p = live.as_ref().map(|(p, _)| p);
        if live_p.is_some_and(|p| p.manifest == self.plan.root) {
            return Ok(());
        }
        if decide(live_p, self.plan) != pointer::Decision::Move {
            return Ok(());
        }
        tracing::warn!(operation = %self.op.id, manifest = %self.plan.root, "the pointer no longer names the root this operation moved it to; moving it again");
        let (have_shards, have_blobs) = root_objects_missing(remote, &self.plan.root).await?;
        if !have_shards.is_empty() || !have_blobs.is_empty() {
            return Err(DeployError::Incomplete {
                target: remote.url.clone(),
                root: self.plan.root.clone(),
                missing: describe_missing(&have_shards, &have_blobs),
            });
        }
        let (outcome, moved) = self.move_pointer().await?;
        report.pointer = moved;
        if outcome != Outcome::Deployed && outcome != Outcome::AlreadyDeployed {
            report.outcome = outcome;
        }
        Ok(())
    }

    /// What the ledger believes is deployed, and the receipt — only for a move this
    /// operation's compare-and-set made (`Deployed`), once.
    fn record(&mut self, outcome: Outcome, held: &Lease) -> Result<(), DeployError> {
        let now = self.ctx.clock.now();
        let plan = self.plan;
        let (target, key) = (self.remote().url.clone(), self.remote().key.clone());
        let detail = serde_json::json!({
            "target": target, "revision": plan.id.revision, "build": plan.id.fingerprint,
            "manifest": plan.root, "outcome": outcome.as_str(),
            "adopted_from": plan.adopt,
        })
        .to_string();
        let subject = format!("deploy:{}", self.op.id);
        let action = if plan.adopt.is_some() {
            audit::AuditAction::Adopt
        } else {
            audit::AuditAction::Deploy
        };
        let h = held.clone();
        let recorded = self.ledger.write(|tx| {
            if matches!(outcome, Outcome::Deployed | Outcome::AlreadyDeployed)
                && !deploys::record_deployed(
                    tx,
                    &key,
                    plan.id.revision,
                    &plan.id.fingerprint,
                    &plan.root,
                    &h,
                    now,
                )?
            {
                return Ok(false);
            }
            if outcome == Outcome::Deployed {
                audit::append_once(tx, now, action, &subject, &detail)?;
            }
            claim::close_passed(tx, &key, plan.id.revision, now)?;
            Ok(true)
        })?;
        if recorded {
            Ok(())
        } else {
            Err(lost_lease(self.remote(), "recording the deploy"))
        }
    }
}

/// The pointer rule for a plan against the live pointer.
pub(super) fn decide(live: Option<&RemotePointer>, plan: &Plan) -> pointer::Decision {
    pointer::decide(
        live.map(|p| (p.id.revision, p.manifest == plan.root)),
        live.and_then(|p| p.held_below),
        plan.id.revision,
        live.is_some_and(|p| p.replaced(&plan.id)),
    )
}
