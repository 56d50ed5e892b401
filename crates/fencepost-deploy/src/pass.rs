//! One pass of the deploy driver: finish what was decided, resume a pending operation, then
//! decide against the live pointer and plan, freeze and carry out this revision — each a
//! named step. `deploy::run_on` repeats passes while another run deploys older work.

use super::saga;
use super::{Ctx, DeployError, Options, Outcome, Plan, Report};
use crate::targets::objects::missing_blobs;
use crate::targets::{claim, receipt};
use claim::Aside;
use fencepost_bucket::layout;
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_core::clock::Instant;
use fencepost_ledger::deploys::{self, Op};
use fencepost_ledger::Ledger;
use fencepost_output::id::RevisionId;
use fencepost_output::manifest::Manifest;
use fencepost_output::pointer::{self, Decision, PointerOutcome};
use fencepost_output::public::Public;
use fencepost_output::revision::REVISIONS;
use fencepost_output::OutputError;
use fencepost_site::Site;
use std::collections::HashSet;
use std::ops::ControlFlow;

/// A revision of `public/` chosen to deploy.
pub(super) struct Local {
    id: RevisionId,
    dir: String,
    manifest: Manifest,
}

pub(super) fn local_revision(site: &Site, wanted: Option<&str>) -> Result<Local, DeployError> {
    let public = Public::read(site.public_dir())?;
    let id = match wanted {
        Some(w) => public
            .choose(w)?
            .ok_or_else(|| OutputError::NoSuchRevision {
                wanted: w.to_string(),
                dir: public.dir().join(REVISIONS),
            })?,
        None => {
            let p = public.live().ok_or_else(|| {
                DeployError::NothingBuilt(format!(
                    "{} names no revision; run `fencepost build` first",
                    public.dir().join(pointer::CURRENT).display()
                ))
            })?;
            p.id.clone()
        }
    };
    let (revision, dir) = (id.revision, id.to_string());
    let manifest = Manifest::read(&public.revision_dir(&id))?;
    if manifest.preview {
        return Err(DeployError::Preview { dir });
    }
    Ok(Local {
        id: RevisionId::new(revision, manifest.id.fingerprint.clone()),
        dir,
        manifest,
    })
}

impl Plan {
    /// The plan of `local`, with no blobs to upload yet (see `pass::with_blobs`).
    fn of(local: &Local, split: &layout::Split, adopt: Option<String>) -> Plan {
        Plan {
            id: local.id.clone(),
            dir: local.dir.clone(),
            root: split.root.sha256.clone(),
            shards: split.shards.iter().map(|s| s.sha256.clone()).collect(),
            blobs: Vec::new(),
            assumed: None,
            adopt,
            repair: None,
        }
    }
}

/// What one pass of the driver ended with.
pub(super) enum Turn {
    Done(Report),
    /// Another run holds the target while deploying older work: look again shortly.
    Wait(Report),
}

/// One pass: finish what was decided, then make this revision live or say who does.
pub(super) async fn attempt(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    opts: &Options,
) -> Result<Turn, DeployError> {
    finish_rollback(ledger, ctx).await?;
    let local = local_revision(ctx.site, opts.revision.as_deref());
    // With nothing built here, whoever holds the target is doing the only work there is.
    let wanted = local.as_ref().map_or(i64::MIN, |l| l.id.revision);
    let resumed = match resume_pending(ledger, ctx, wanted).await? {
        ControlFlow::Break(turn) => return Ok(turn),
        ControlFlow::Continue(resumed) => resumed,
    };
    let local = match local {
        Ok(l) => l,
        Err(DeployError::NothingBuilt(_)) if resumed.is_some() => {
            return Ok(Turn::Done(resumed.expect("checked")))
        }
        Err(e) => return Err(e),
    };
    // A root names the ledger that built it, and the pointer written names ours: the two
    // must agree, or every origin refuses the target (with --adopt too).
    if let Some(theirs) = local
        .manifest
        .ledger_id
        .as_ref()
        .filter(|t| **t != ctx.ours)
    {
        return Err(DeployError::ForeignRevision {
            dir: local.dir.clone(),
            theirs: theirs.clone(),
            ours: ctx.ours.clone(),
        });
    }
    let target = &ctx.remote.url;
    // Parked means stopped: nothing is planned or uploaded for a blocked revision.
    if let Some(op) = claim::parked_blocking(ledger, &ctx.remote.key, local.id.revision)? {
        return Ok(Turn::Done(parked(target, &op)));
    }
    let split = layout::split(&local.manifest);
    let plan = Plan::of(&local, &split, ctx.adopt.clone());
    let live = ctx.remote.read_pointer().await?.map(|(p, _)| p);
    if let Some(r) = settled(ledger, ctx, opts, live.as_ref(), &plan).await? {
        // Report the operation this run carried out, if it resumed one.
        return Ok(Turn::Done(resumed.unwrap_or(r)));
    }
    let plan = with_blobs(ledger, ctx, live.as_ref(), &split, plan).await?;
    freeze_and_execute(ledger, ctx, plan, split).await
}

/// A pending operation is resumed when its lease is free (parked once every attempt so far
/// ended without recording why); else this run steps aside for it only when it deploys
/// this revision or a newer one. Continues with the report of a resumed operation.
async fn resume_pending(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    wanted: i64,
) -> Result<ControlFlow<Turn, Option<Report>>, DeployError> {
    let target = &ctx.remote.url;
    let Some(op) = ledger.read(|tx| deploys::pending(tx, &ctx.remote.key))? else {
        return Ok(ControlFlow::Continue(None));
    };
    let Some(held) = ctx.take_lease(ledger)? else {
        return Ok(ControlFlow::Break(busy(target, &op, wanted)));
    };
    let now = ctx.clock.now();
    claim::holding(ledger, ctx.clock, held, async |ledger, held| {
        if op.attempts >= i64::from(ctx.site.config.deploy.max_attempts) {
            // Every attempt so far ended without recording why (crashed, killed): park it.
            ledger.write(|tx| deploys::park(tx, &op.id, held, now))?;
            return Ok(ControlFlow::Continue(None));
        }
        if let Some(flow) = without_files(ledger, ctx, &op, held, wanted).await? {
            return Ok(flow);
        }
        if !ledger.write(|tx| deploys::count_attempt(tx, &op.id, held, now))? {
            return Ok(ControlFlow::Break(Turn::Wait(skipped(target, &op))));
        }
        tracing::info!(operation = %op.id, step = op.step.as_str(), "resuming a deploy");
        let r = saga::execute(ledger, ctx, op, held, true, None).await?;
        Ok(match r.outcome {
            Outcome::Failed => ControlFlow::Break(Turn::Done(r)),
            _ => ControlFlow::Continue(Some(r)),
        })
    })
    .await
}

/// A pending operation this runner cannot resume from its own files: a fresh CI runner (it
/// built its own revision, never the one the operation froze), or the revision
/// garbage-collected. Before the pointer step the saga needs the plan's files; when the bucket
/// holds every object the plan's root names (the killed run uploaded them), the saga finishes
/// from the bucket (`None` here: resume as usual). Otherwise a runner with a revision of its
/// own, as new or newer, closes the operation as superseded by it — the pointer is about to
/// move past it anyway — and deploys its own: never an attempt counted for files a fresh
/// runner could not have. A runner with nothing as new resumes it as before (see below).
async fn without_files(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    op: &Op,
    held: &fencepost_ledger::lease::Lease,
    wanted: i64,
) -> Result<Option<ControlFlow<Turn, Option<Report>>>, DeployError> {
    if op.step >= deploys::Step::Pointer {
        return Ok(None);
    }
    let Ok(plan) = serde_json::from_str::<Plan>(&op.plan) else {
        return Ok(None);
    };
    let dir = ctx.site.public_dir().join(REVISIONS).join(&plan.dir);
    if fencepost_output::revision::is_complete(&dir) {
        return Ok(None);
    }
    let missing = match crate::targets::objects::root_objects_missing(ctx.remote, &plan.root).await
    {
        Ok((shards, blobs)) => shards.len() + blobs.len(),
        Err(DeployError::Incomplete { .. }) => 1,
        Err(e) => return Err(e),
    };
    if missing == 0 {
        tracing::info!(operation = %op.id, "resuming a deploy whose revision is not here: the bucket holds every object of its plan");
        return Ok(None);
    }
    if wanted >= plan.id.revision {
        let now = ctx.clock.now();
        let closed = ledger.write(|tx| {
            deploys::advance(
                tx,
                &op.id,
                op.step,
                deploys::Step::Done,
                Some("superseded"),
                held,
                now,
            )
        })?;
        if closed {
            tracing::warn!(operation = %op.id, revision = plan.id.revision, "a deploy killed before its pointer moved, whose revision this runner does not have: closed as superseded by this runner's revision {wanted}");
        }
        return Ok(Some(ControlFlow::Continue(None)));
    }
    // No revision of its own as new (its build failed, or the folder was removed): resumed as
    // before, so the attempt fails naming the missing folder and is counted — a runner that
    // can neither finish nor supersede the operation must not hide it behind a green run
    // (after `deploy.max_attempts` it is parked for a person).
    Ok(None)
}

/// Against the live pointer: the report when there is nothing to do (this revision live, a
/// higher one live, or a rollback's hold), or the refusal to go backwards or over a replaced
/// revision; `None` when the pointer should move. An adopting run always moves.
async fn settled(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    opts: &Options,
    live: Option<&RemotePointer>,
    plan: &Plan,
) -> Result<Option<Report>, DeployError> {
    let Some(p) = live.filter(|_| ctx.adopt.is_none()) else {
        return Ok(None);
    };
    let target = &ctx.remote.url;
    let report = |outcome: Outcome, pointer: PointerOutcome| {
        let mut r = Report::of_plan(target, plan, outcome);
        r.pointer = pointer;
        Some(r)
    };
    let live_dir = || p.id.to_string();
    let decision = crate::targets::claim::unless_foreign(
        ctx.remote,
        live,
        saga::decide(live, plan),
        &ctx.ours,
    )
    .await?;
    Ok(match decision {
        Decision::Unchanged => {
            let now = ctx.clock.now();
            let next = ledger.read(|tx| fencepost_ledger::public::next_change(tx, now))?;
            refresh_next_change(ctx.remote, next).await?;
            report(Outcome::AlreadyDeployed, PointerOutcome::Unchanged)
        }
        Decision::KeptHigher if opts.revision.is_some() => {
            let (target, live, wanted) = (target.clone(), live_dir(), plan.dir.clone());
            return Err(DeployError::Backwards {
                target,
                live,
                wanted,
            });
        }
        Decision::Replaced => {
            let (target, live, wanted) = (target.clone(), live_dir(), plan.dir.clone());
            return Err(DeployError::Replaced {
                target,
                live,
                wanted,
            });
        }
        Decision::KeptHigher => report(Outcome::Superseded, PointerOutcome::KeptHigher),
        Decision::Held(_) => report(Outcome::Held, PointerOutcome::KeptHigher),
        Decision::Move => {
            let local = ctx.site.public_dir().join(REVISIONS).join(&plan.dir);
            super::log::check_extends(ctx.remote, p, &local).await?;
            None
        }
    })
}

/// The plan with the blobs to upload: every blob of the revision, less those the live
/// manifest is known to hold when it is the one this ledger recorded there (no listing of
/// the bucket needed, see [`known_present`]).
async fn with_blobs(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    live: Option<&RemotePointer>,
    split: &layout::Split,
    plan: Plan,
) -> Result<Plan, DeployError> {
    let known = match live {
        Some(p) if ctx.adopt.is_none() => {
            let public = Public::read(ctx.site.public_dir())?;
            known_present(ledger, ctx.remote, &p.manifest, &public).await?
        }
        _ => None,
    };
    let present = known.as_ref().map(|k| &k.blobs);
    Ok(Plan {
        blobs: missing_blobs(split, present.unwrap_or(&HashSet::new())),
        assumed: known.map(|k| k.manifest),
        ..plan
    })
}

/// Under the target's lease: freezes the plan as a new operation (unless another deployer
/// planned first), then carries it out.
async fn freeze_and_execute(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    plan: Plan,
    split: layout::Split,
) -> Result<Turn, DeployError> {
    let target = &ctx.remote.url;
    let waiting = || Report::of_plan(target, &plan, Outcome::SkippedLocked);
    let Some(held) = ctx.take_lease(ledger)? else {
        return Ok(
            match ledger.read(|tx| deploys::pending(tx, &ctx.remote.key))? {
                Some(op) => busy(target, &op, plan.id.revision),
                // Held by a rollback, a gc, or a deploy about to plan: look again.
                None => Turn::Wait(waiting()),
            },
        );
    };
    let id = uuid::Uuid::new_v4().simple().to_string();
    let plan_json = serde_json::to_string(&plan).expect("plans serialise");
    let now = ctx.clock.now();
    let key = &ctx.remote.key;
    claim::holding(ledger, ctx.clock, held, async |ledger, held| {
        if !ledger.write(|tx| deploys::insert(tx, &id, key, &plan_json, held, now))? {
            // Another deployer planned first (the partial unique index): the next pass decides.
            return Ok(Turn::Wait(waiting()));
        }
        fencepost_core::fail_point!("deploy.after_plan");
        let op = ledger
            .read(|tx| deploys::get(tx, &id))?
            .expect("just inserted");
        let report = saga::execute(ledger, ctx, op, held, false, Some(split)).await?;
        Ok(Turn::Done(report))
    })
    .await
}

/// A decided rollback whose receipt was not written yet: written now (if the lease is free).
async fn finish_rollback(ledger: &mut Ledger, ctx: &Ctx<'_>) -> Result<(), DeployError> {
    let Some(op) = ledger.read(|tx| deploys::pending_of(tx, &ctx.remote.key, "rollback"))? else {
        return Ok(());
    };
    if let Some(held) = ctx.take_lease(ledger)? {
        claim::holding(ledger, ctx.clock, held, async |ledger, held| {
            receipt::finish(ledger, ctx.clock, ctx.remote, &op, held).await
        })
        .await?;
    }
    Ok(())
}

/// The lease is held by the run carrying out `op`: step aside if it deploys this revision or
/// a newer one, else wait for it.
fn busy(target: &str, op: &Op, wanted: i64) -> Turn {
    match claim::aside(Some(claim::op_revision(op)), wanted) {
        Aside::Skip => Turn::Done(skipped(target, op)),
        Aside::Wait => Turn::Wait(skipped(target, op)),
    }
}

pub(super) fn skipped(target: &str, op: &Op) -> Report {
    let mut r = match serde_json::from_str::<Plan>(&op.plan) {
        Ok(plan) => Report::of_plan(target, &plan, Outcome::SkippedLocked),
        Err(_) => Report::of(target, RevisionId::default(), Outcome::SkippedLocked),
    };
    r.operation = Some(op.id.clone());
    r
}

fn parked(target: &str, op: &Op) -> Report {
    let mut r = skipped(target, op);
    r.outcome = Outcome::Parked;
    r.error = Some(format!(
        "operation {id} (revision {rev}) is parked after {n} attempt(s){why}; nothing is deployed to {target} for this revision until a person acts: `fencepost deploy --retry {id}` re-arms it, `fencepost deploy --abandon {id}` closes it (a newer revision deploys past it)",
        id = op.id,
        rev = claim::op_revision(op),
        n = op.attempts,
        why = op
            .last_error
            .as_deref()
            .map(|e| format!(" (last error: {e})"))
            .unwrap_or_default(),
    ));
    r
}

/// What a bucket is known to hold without listing it.
pub(super) struct Known {
    manifest: String,
    blobs: HashSet<String>,
}

/// When the bucket's pointer names `live`, and that is the manifest this ledger recorded as
/// deployed there, and its revision is still here: every blob of it is in the bucket (gc
/// never removes the live manifest's objects). Its blobs are read from the local manifest,
/// so no listing of the bucket is needed.
pub(super) async fn known_present(
    ledger: &mut Ledger,
    remote: &Remote,
    live: &str,
    public: &Public,
) -> Result<Option<Known>, DeployError> {
    let Some(recorded) = ledger.read(|tx| deploys::target(tx, &remote.key))? else {
        return Ok(None);
    };
    let (Some(rev), Some(build), Some(manifest)) =
        (recorded.revision, recorded.build, recorded.manifest)
    else {
        return Ok(None);
    };
    if manifest != live {
        return Ok(None);
    }
    let dir = public.revision_dir(&RevisionId::new(rev, &build));
    let Ok(m) = Manifest::read(&dir) else {
        return Ok(None);
    };
    // Roots are a function of the files: this must still be the very root recorded.
    if layout::split(&m).root.sha256 != manifest {
        return Ok(None);
    }
    Ok(Some(Known {
        manifest,
        blobs: m.files.into_iter().map(|e| e.sha256).collect(),
    }))
}

/// The pointer with `next_change_at` brought up to date when the revision is already live
/// (a new embargoed item changes the instant without a new revision). A lost race is left
/// alone: whoever moved the pointer wrote the ledger's instant too.
pub(super) async fn refresh_next_change(
    remote: &Remote,
    next_change_at: Option<Instant>,
) -> Result<bool, DeployError> {
    let Some((live, version)) = remote.read_pointer().await? else {
        return Ok(false);
    };
    if live.next_change_at == next_change_at {
        return Ok(false);
    }
    let mut new = live;
    new.next_change_at = next_change_at;
    Ok(remote.swap_pointer(Some(&version), &new).await?)
}
