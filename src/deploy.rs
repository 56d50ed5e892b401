//! `fencepost deploy`: a finished revision to object storage as a resumable saga, then the
//! remote pointer moved by compare-and-set.
//!
//! Decided vs carried out: the operation is journaled in the ledger with a **frozen plan**
//! (the revision, its manifest root and shards, every blob) before anything is touched, and a
//! step cursor records what is done: planned → blobs → manifest → pointer → recorded → done.
//! A run that finds a pending operation resumes it — never re-planning, since the bucket it
//! would plan against is the one it already changed — verifying what earlier steps left
//! (listing the blobs, checking the manifest objects) and redoing, loudly, what is missing.
//! Every step's journal write carries the operation's fenced lease (`deploy:<target>`); a
//! partial unique index allows one pending operation per target; an operation that fails
//! `deploy.max_attempts` times is parked `failed` until `deploy --retry ID`.
//!
//! Readers never see a half-deployed site: blobs and the manifest go up first, and the one
//! object readers follow, `current`, moves last, by compare-and-set (create-if-absent the
//! first time, if-match on its etag after), only forward — a higher revision, or the same
//! revision with a new build — and never past a rollback's hold. A lost race re-reads the
//! pointer and decides again: a higher revision already live means this operation is
//! superseded, and done.

pub mod admin;
pub mod layout;
pub mod remote;

use crate::clock::{Clock, Instant};
use crate::ledger::deploys::{self, Op, Step};
use crate::ledger::lease::{self, Lease, OwnerId};
use crate::ledger::{audit, Ledger, LedgerError};
use crate::output::manifest::Manifest;
use crate::output::pointer::PointerOutcome;
use crate::output::revision::{self, REVISIONS};
use crate::output::{pointer, OutputError};
use crate::site::Site;
use remote::{Remote, RemotePointer};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("no deploy target: pass --to URL or set deploy.to in fencepost.toml (s3://bucket/prefix, gs://…, az://…, file:///abs/path)")]
    NoTarget,
    #[error("deploy target {target}: {why}")]
    BadTarget { target: String, why: String },
    #[error("deploy target {target}: {what}: {message}")]
    Store {
        target: String,
        what: String,
        message: String,
    },
    #[error("deploy target {target} does not enforce conditional writes: {what}. The pointer's compare-and-set depends on them, so fencepost refuses to deploy there (Garage, for one, ignores If-None-Match/If-Match). Use a store that honours them (AWS S3, R2, MinIO, GCS, Azure) or a file:// target")]
    NoConditionalWrites { target: String, what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{dir} is preview output: previews are never deployed")]
    Preview { dir: String },
    #[error("{target} serves revision {live}; deploying {wanted} would move it backwards. That is `fencepost rollback {wanted} --to {target}`")]
    Backwards {
        target: String,
        live: String,
        wanted: String,
    },
    #[error("nothing to deploy: {0}")]
    NothingBuilt(String),
    #[error("deploy --retry {0}: no parked operation with that id (or another operation on its target is pending); `fencepost status` lists them")]
    NoSuchParked(String),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl DeployError {
    fn store(remote: &Remote, what: &str, message: impl std::fmt::Display) -> DeployError {
        DeployError::Store {
            target: remote.url.clone(),
            what: what.to_string(),
            message: message.to_string(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The target URL (else `deploy.to`).
    pub to: Option<String>,
    /// `R` or `R-B` (else the revision `public/current` names).
    pub revision: Option<String>,
    /// Re-arm this parked operation first.
    pub retry: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Deployed,
    AlreadyDeployed,
    Superseded,
    SkippedLocked,
    /// A rollback holds the target below this revision (`rollback --to`).
    Held,
    Failed,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Outcome::Deployed => "deployed",
            Outcome::AlreadyDeployed => "already_deployed",
            Outcome::Superseded => "superseded",
            Outcome::SkippedLocked => "skipped_locked",
            Outcome::Held => "held",
            Outcome::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Outcome {
        match s {
            "deployed" => Outcome::Deployed,
            "already_deployed" => Outcome::AlreadyDeployed,
            "superseded" => Outcome::Superseded,
            "held" => Outcome::Held,
            "skipped_locked" => Outcome::SkippedLocked,
            _ => Outcome::Failed,
        }
    }
}

/// What a deploy did (the JSON of `fencepost deploy`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub target: String,
    pub operation: Option<String>,
    pub revision: i64,
    pub build: String,
    pub outcome: Outcome,
    pub resumed: bool,
    pub blobs_uploaded: u64,
    pub blobs_present: u64,
    pub bytes_uploaded: u64,
    /// `moved`, `unchanged` or `kept_higher` (a higher revision, or a rollback's hold).
    pub pointer: PointerOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The frozen plan of one operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub revision: i64,
    pub build: String,
    /// `<R>-<B>` under `public/revisions/`.
    pub dir: String,
    /// sha256 of the manifest root. It content-addresses the shards, which list every file:
    /// the revision's whole blob list is frozen through it.
    pub root: String,
    pub shards: Vec<String>,
    /// The blobs to upload: (sha256, a path in the revision with those bytes, content type).
    /// Every blob of the revision, unless `assumed` says which were known to be there.
    pub blobs: Vec<(String, String, String)>,
    /// The manifest the bucket's pointer named when planning, whose blobs and shards were
    /// taken as present (so only the others are listed in `blobs`). Checked again when the
    /// blobs go up; if the pointer moved meanwhile, the bucket is listed instead.
    #[serde(default)]
    pub assumed: Option<String>,
}

/// Reports progress to the caller (the CLI draws a bar): (done, total) blobs.
pub type Progress<'a> = &'a (dyn Fn(u64, u64) + Sync);

/// Deploys to the target `opts.to` (or `deploy.to`).
pub fn run(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    progress: Progress<'_>,
) -> Result<Report, DeployError> {
    let url = opts
        .to
        .clone()
        .or_else(|| site.config.deploy.to.clone())
        .ok_or(DeployError::NoTarget)?;
    let remote = Remote::open(&url)?;
    let rt = runtime()?;
    rt.block_on(run_on(site, clock, opts, &remote, progress))
}

pub fn runtime() -> Result<tokio::runtime::Runtime, DeployError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| DeployError::Io {
            path: PathBuf::from("tokio runtime"),
            source,
        })
}

/// A revision of `public/` chosen to deploy.
struct Local {
    revision: i64,
    build: String,
    dir: String,
    manifest: Manifest,
}

fn local_revision(site: &Site, wanted: Option<&str>) -> Result<Local, DeployError> {
    let public = crate::build::public_dir(site);
    let current = pointer::read(&public)?;
    let (revision, dir) = match wanted {
        Some(w) => revision::choose(&public, w, current.as_ref())?.ok_or_else(|| {
            OutputError::NoSuchRevision {
                wanted: w.to_string(),
                dir: public.join(REVISIONS),
            }
        })?,
        None => {
            let p = current.ok_or_else(|| {
                DeployError::NothingBuilt(format!(
                    "{} names no revision; run `fencepost build` first",
                    public.join(pointer::CURRENT).display()
                ))
            })?;
            (p.revision, p.dir)
        }
    };
    let manifest = Manifest::read(&public.join(REVISIONS).join(&dir))?;
    if manifest.preview {
        return Err(DeployError::Preview { dir });
    }
    Ok(Local {
        revision,
        build: manifest.build.clone(),
        dir,
        manifest,
    })
}

struct Ctx<'a> {
    site: &'a Site,
    clock: &'a Clock,
    remote: &'a Remote,
    owner: OwnerId,
    progress: Progress<'a>,
}

impl Ctx<'_> {
    fn lease_secs(&self) -> u64 {
        self.site.config.deploy.lease_secs
    }
}

pub async fn run_on(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    remote: &Remote,
    progress: Progress<'_>,
) -> Result<Report, DeployError> {
    let mut ledger = site.open_ledger()?;
    let target = remote.url.clone();
    if let Some(id) = &opts.retry {
        let now = clock.now();
        if !ledger.write(|tx| deploys::retry(tx, id, now))? {
            return Err(DeployError::NoSuchParked(id.clone()));
        }
    }
    // Before the first write to a target new to this ledger: does it honour conditional
    // writes at all?
    let known = ledger.read(|tx| deploys::target(tx, &target))?;
    if !known.is_some_and(|t| t.probed) {
        remote.probe().await?;
        let now = clock.now();
        ledger.write(|tx| deploys::mark_probed(tx, &target, now))?;
    }
    let ctx = Ctx {
        site,
        clock,
        remote,
        owner: OwnerId::random(),
        progress,
    };
    // 1. Finish what an earlier run decided but did not carry out: a rollback's audit
    // receipt, then a deploy.
    if let Some(op) = ledger.read(|tx| deploys::pending_of(tx, &target, "rollback"))? {
        if let Some(held) = take_lease(&mut ledger, &ctx, &target)? {
            let done = admin::finish(&mut ledger, clock, remote, &op, &held).await;
            release(&mut ledger, &ctx, &held);
            done?;
        }
    }
    let mut resumed: Option<Report> = None;
    if let Some(op) = ledger.read(|tx| deploys::pending(tx, &target))? {
        let Some(held) = take_lease(&mut ledger, &ctx, &target)? else {
            return Ok(skipped(&target, &op));
        };
        let now = clock.now();
        if op.attempts >= i64::from(site.config.deploy.max_attempts) {
            // Every attempt so far ended without recording why (crashed, killed): park it.
            ledger.write(|tx| deploys::park(tx, &op.id, &held, now))?;
            release(&mut ledger, &ctx, &held);
            let mut r = skipped(&target, &op);
            r.outcome = Outcome::Failed;
            r.error = Some(format!(
                "operation {} parked after {} attempts; `fencepost deploy --retry {}` re-arms it",
                op.id, op.attempts, op.id
            ));
            return Ok(r);
        }
        if !ledger.write(|tx| deploys::count_attempt(tx, &op.id, &held, now))? {
            return Ok(skipped(&target, &op));
        }
        tracing::info!(operation = %op.id, step = op.step.as_str(), "resuming a deploy");
        let r = execute(&mut ledger, &ctx, op, held, true, None).await?;
        if r.outcome == Outcome::Failed {
            return Ok(r);
        }
        resumed = Some(r);
    }
    // 2. What should be live: the local revision, unless the target is already there.
    let local = match local_revision(site, opts.revision.as_deref()) {
        Ok(l) => l,
        Err(DeployError::NothingBuilt(_)) if resumed.is_some() => {
            return Ok(resumed.expect("checked"))
        }
        Err(e) => return Err(e),
    };
    let split = layout::split(&local.manifest);
    let live = remote.read_pointer().await?.map(|(p, _)| p);
    let base = |outcome: Outcome, pointer: PointerOutcome| Report {
        target: target.clone(),
        operation: None,
        revision: local.revision,
        build: local.build.clone(),
        outcome,
        resumed: false,
        blobs_uploaded: 0,
        blobs_present: 0,
        bytes_uploaded: 0,
        pointer,
        error: None,
    };
    if let Some(p) = &live {
        let settled = match pointer::decide(
            Some((p.revision, p.manifest == split.root.sha256)),
            p.held_below,
            local.revision,
        ) {
            pointer::Decision::Unchanged => {
                Some(base(Outcome::AlreadyDeployed, PointerOutcome::Unchanged))
            }
            pointer::Decision::KeptHigher if opts.revision.is_some() => {
                return Err(DeployError::Backwards {
                    target,
                    live: revision::dir_name(p.revision, &p.build),
                    wanted: local.dir,
                });
            }
            pointer::Decision::KeptHigher => {
                Some(base(Outcome::Superseded, PointerOutcome::KeptHigher))
            }
            pointer::Decision::Held(_) => Some(base(Outcome::Held, PointerOutcome::KeptHigher)),
            pointer::Decision::Move => None,
        };
        if let Some(r) = settled {
            // Report the operation this run carried out, if it resumed one.
            return Ok(resumed.unwrap_or(r));
        }
    }
    // 3. Plan, freeze, execute. What the live manifest holds is known without listing the
    // bucket when it is the one this ledger recorded there (see `known_present`).
    let known = match &live {
        Some(p) => known_present(&mut ledger, remote, &p.manifest, &site_public(site)).await?,
        None => None,
    };
    let plan = Plan {
        revision: local.revision,
        build: local.build.clone(),
        dir: local.dir.clone(),
        root: split.root.sha256.clone(),
        shards: split.shards.iter().map(|s| s.sha256.clone()).collect(),
        blobs: split
            .blobs
            .iter()
            .filter(|(sha, _)| !known.as_ref().is_some_and(|k| k.blobs.contains(*sha)))
            .map(|(sha, (path, ct))| (sha.clone(), path.clone(), ct.clone()))
            .collect(),
        assumed: known.as_ref().map(|k| k.manifest.clone()),
    };
    let Some(held) = take_lease(&mut ledger, &ctx, &target)? else {
        return Ok(base(Outcome::SkippedLocked, PointerOutcome::Unchanged));
    };
    let id = uuid::Uuid::new_v4().simple().to_string();
    let plan_json = serde_json::to_string(&plan).expect("plans serialise");
    let now = clock.now();
    if !ledger.write(|tx| deploys::insert(tx, &id, &target, &plan_json, &held, now))? {
        // Another deployer planned first (the partial unique index): it does the work.
        release(&mut ledger, &ctx, &held);
        return Ok(base(Outcome::SkippedLocked, PointerOutcome::Unchanged));
    }
    crate::fail_point!("deploy.after_plan");
    let op = ledger
        .read(|tx| deploys::get(tx, &id))?
        .expect("just inserted");
    execute(&mut ledger, &ctx, op, held, false, Some(split)).await
}

fn skipped(target: &str, op: &Op) -> Report {
    let plan: Option<Plan> = serde_json::from_str(&op.plan).ok();
    Report {
        target: target.to_string(),
        operation: Some(op.id.clone()),
        revision: plan.as_ref().map_or(0, |p| p.revision),
        build: plan.map(|p| p.build).unwrap_or_default(),
        outcome: Outcome::SkippedLocked,
        resumed: false,
        blobs_uploaded: 0,
        blobs_present: 0,
        bytes_uploaded: 0,
        pointer: PointerOutcome::Unchanged,
        error: None,
    }
}

fn take_lease(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    target: &str,
) -> Result<Option<Lease>, DeployError> {
    let now = ctx.clock.now();
    let secs = ctx.lease_secs();
    Ok(ledger
        .write(|tx| lease::acquire(tx, &lease::LeaseKey::Deploy(target), &ctx.owner, now, secs))?)
}

fn release(ledger: &mut Ledger, ctx: &Ctx<'_>, held: &Lease) {
    let now = ctx.clock.now();
    if let Err(e) = ledger.write(|tx| lease::release(tx, held, now)) {
        tracing::warn!(error = %e, "could not release the deploy lease; it expires by itself");
    }
}

/// Runs an operation's remaining steps; a failure is recorded (and parks the operation after
/// `deploy.max_attempts`), and reported as the outcome `failed`.
/// `fresh`: the split the plan was just made from (a resumed operation reads and checks it
/// again).
async fn execute(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    op: Op,
    held: Lease,
    resumed: bool,
    fresh: Option<layout::Split>,
) -> Result<Report, DeployError> {
    let plan: Plan = serde_json::from_str(&op.plan)
        .map_err(|e| DeployError::store(ctx.remote, "reading the frozen plan", format!("{e}")))?;
    let mut report = Report {
        target: ctx.remote.url.clone(),
        operation: Some(op.id.clone()),
        revision: plan.revision,
        build: plan.build.clone(),
        outcome: Outcome::Deployed,
        resumed,
        blobs_uploaded: 0,
        blobs_present: 0,
        bytes_uploaded: 0,
        pointer: PointerOutcome::Unchanged,
        error: None,
    };
    let mut held = held;
    match steps(ledger, ctx, &op, &plan, &mut held, &mut report, fresh).await {
        Ok(()) => {
            release(ledger, ctx, &held);
            Ok(report)
        }
        Err(e) => {
            let msg = e.to_string();
            tracing::warn!(operation = %op.id, error = %msg, "deploy step failed; the next run resumes it");
            let now = ctx.clock.now();
            let max = ctx.site.config.deploy.max_attempts;
            let _ = ledger.write(|tx| deploys::record_failure(tx, &op.id, &msg, max, &held, now));
            release(ledger, ctx, &held);
            report.outcome = Outcome::Failed;
            report.error = Some(msg);
            Ok(report)
        }
    }
}

/// Moves the cursor under the lease, or fails when the lease is gone.
fn advance(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    op: &Op,
    from: Step,
    to: Step,
    outcome: Option<&str>,
    held: &Lease,
) -> Result<(), DeployError> {
    let now = ctx.clock.now();
    if ledger.write(|tx| deploys::advance(tx, &op.id, from, to, outcome, held, now))? {
        Ok(())
    } else {
        Err(DeployError::store(
            ctx.remote,
            "journaling a step",
            "this run lost the deploy lease (another run took over); nothing more is written",
        ))
    }
}

/// Keeps the lease alive through long uploads.
fn keep_lease(ledger: &mut Ledger, ctx: &Ctx<'_>, held: &mut Lease) -> Result<(), DeployError> {
    let now = ctx.clock.now();
    let secs = ctx.lease_secs();
    match ledger.write(|tx| lease::extend(tx, held, now, secs))? {
        Some(l) => {
            *held = l;
            Ok(())
        }
        None => Err(DeployError::store(
            ctx.remote,
            "extending the deploy lease",
            "this run lost the deploy lease (another run took over); nothing more is written",
        )),
    }
}

async fn steps(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    op: &Op,
    plan: &Plan,
    held: &mut Lease,
    report: &mut Report,
    fresh: Option<layout::Split>,
) -> Result<(), DeployError> {
    let remote = ctx.remote;
    let mut step = op.step;
    let public = crate::build::public_dir(ctx.site);
    let dir = public.join(REVISIONS).join(&plan.dir);
    // The plan is never recomputed; the local revision it came from must still say the same.
    let split = if let Some(f) = fresh.filter(|f| f.root.sha256 == plan.root) {
        Some(f)
    } else if step < Step::Pointer {
        let manifest = Manifest::read(&dir).map_err(|e| {
            DeployError::store(
                remote,
                "reading the revision the plan names",
                format!("{e}; it may have been garbage-collected: rebuild it, or `fencepost deploy --retry` after restoring it"),
            )
        })?;
        let split = layout::split(&manifest);
        if split.root.sha256 != plan.root {
            return Err(DeployError::store(
                remote,
                "verifying the frozen plan",
                format!(
                    "{} no longer gives manifest {} (it gives {}); the plan is not recomputed",
                    dir.display(),
                    plan.root,
                    split.root.sha256
                ),
            ));
        }
        Some(split)
    } else {
        None
    };

    // The blobs. A fresh plan lists what to upload, taking the manifest its pointer named as
    // present — if the pointer still names it. Otherwise (it moved, or this is a resumed step
    // that must verify what the journal says was done) the bucket is listed, and every blob
    // of the revision it lacks is uploaded; one the journal says was uploaded is redone loudly.
    let mut known_shards: Option<HashSet<String>> = None;
    if step <= Step::Blobs {
        let live = remote.read_pointer().await?.map(|(p, _)| p.manifest);
        let trusted = step == Step::Planned && plan.assumed.is_some() && live == plan.assumed;
        let todo: Vec<(String, String, String)> = if trusted {
            if let Some(m) = &plan.assumed {
                known_shards = root_shards(remote, m).await?;
            }
            plan.blobs.clone()
        } else {
            let present: HashSet<String> = remote
                .list("objects")
                .await?
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            let split = split.as_ref().expect("read above");
            split
                .blobs
                .iter()
                .filter(|(sha, _)| !present.contains(*sha))
                .map(|(sha, (path, ct))| (sha.clone(), path.clone(), ct.clone()))
                .collect()
        };
        let total = split.as_ref().map_or(todo.len(), |s| s.blobs.len()) as u64;
        report.blobs_present += total - todo.len() as u64;
        let mut done = total - todo.len() as u64;
        (ctx.progress)(done, total);
        let redo = step == Step::Blobs;
        // Uploads run UPLOADS at a time; between chunks the lease is kept alive.
        for chunk in todo.chunks(UPLOAD_CHUNK) {
            use futures_util::StreamExt;
            let results: Vec<Result<(bool, u64), DeployError>> =
                futures_util::stream::iter(chunk.iter().map(|(sha, path, content_type)| {
                    upload_blob(remote, &dir, sha, path, content_type, redo)
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
            (ctx.progress)(done, total);
            keep_lease(ledger, ctx, held)?;
        }
        if step == Step::Planned {
            advance(ledger, ctx, op, Step::Planned, Step::Blobs, None, held)?;
            step = Step::Blobs;
        }
        crate::fail_point!("deploy.after_blobs");
    }

    // The manifest: shards, then the root (readers find shards through the root).
    if step <= Step::Manifest {
        let split = split.as_ref().expect("read above");
        // Shards are content-addressed: upload the ones the bucket lacks.
        let stored: HashSet<String> = match known_shards.take() {
            Some(shards) => shards,
            None => remote
                .list("manifests/shards")
                .await?
                .into_iter()
                .filter_map(|(name, _)| name.strip_suffix(".json").map(str::to_string))
                .collect(),
        };
        let missing: Vec<_> = split
            .shards
            .iter()
            .filter(|s| !stored.contains(&s.sha256))
            .collect();
        if step == Step::Manifest {
            for shard in &missing {
                tracing::warn!(shard = %shard.sha256, "a manifest shard an earlier attempt uploaded is missing; uploading it again");
            }
        }
        {
            use futures_util::StreamExt;
            let results: Vec<Result<(bool, u64), DeployError>> =
                futures_util::stream::iter(missing.iter().map(|shard| async move {
                    let created = remote
                        .create(
                            &Remote::shard_key(&shard.sha256),
                            shard.bytes.clone(),
                            Some("application/json"),
                        )
                        .await?;
                    Ok((created, shard.bytes.len() as u64))
                }))
                .buffer_unordered(UPLOADS)
                .collect()
                .await;
            for r in results {
                let (created, len) = r?;
                if created {
                    report.bytes_uploaded += len;
                }
            }
        }
        let key = Remote::root_key(&split.root.sha256);
        if remote
            .create(&key, split.root.bytes.clone(), Some("application/json"))
            .await?
        {
            report.bytes_uploaded += split.root.bytes.len() as u64;
        }
        if step == Step::Blobs {
            advance(ledger, ctx, op, Step::Blobs, Step::Manifest, None, held)?;
            step = Step::Manifest;
        }
        crate::fail_point!("deploy.after_manifest");
    }

    // The pointer, by compare-and-set, only forward.
    if step == Step::Manifest {
        crate::fail_point!("deploy.before_pointer");
        if !remote.exists(&Remote::root_key(&plan.root)).await? {
            return Err(DeployError::store(
                remote,
                "verifying the manifest before moving the pointer",
                format!("manifests/{}.json is missing", plan.root),
            ));
        }
        let next_change_at = ledger.read(crate::ledger::public::next_change)?;
        let (outcome, moved) = move_pointer(remote, plan, ctx.clock.now(), next_change_at).await?;
        report.outcome = outcome;
        report.pointer = moved;
        advance(
            ledger,
            ctx,
            op,
            Step::Manifest,
            Step::Pointer,
            Some(outcome.as_str()),
            held,
        )?;
        step = Step::Pointer;
        crate::fail_point!("deploy.after_pointer");
    } else if step >= Step::Pointer {
        report.outcome = op
            .outcome
            .as_deref()
            .map_or(Outcome::Deployed, Outcome::parse);
    }

    // Recorded: what the ledger believes is deployed, and the audit entry (once).
    if step == Step::Pointer {
        let now = ctx.clock.now();
        let target = remote.url.clone();
        let outcome = report.outcome;
        let detail = serde_json::json!({
            "target": target, "revision": plan.revision, "build": plan.build,
            "manifest": plan.root, "outcome": outcome.as_str(),
        })
        .to_string();
        let subject = format!("deploy:{}", op.id);
        let h = held.clone();
        let recorded = ledger.write(|tx| {
            if outcome == Outcome::Deployed {
                if !deploys::record_deployed(
                    tx,
                    &target,
                    plan.revision,
                    &plan.build,
                    &plan.root,
                    &h,
                    now,
                )? {
                    return Ok(false);
                }
                audit::append_once(tx, now, audit::AuditAction::Deploy, &subject, &detail)?;
            }
            Ok(true)
        })?;
        if !recorded {
            return Err(DeployError::store(
                remote,
                "recording the deploy",
                "this run lost the deploy lease; nothing more is written",
            ));
        }
        advance(ledger, ctx, op, Step::Pointer, Step::Recorded, None, held)?;
        step = Step::Recorded;
    }
    if step == Step::Recorded {
        advance(ledger, ctx, op, Step::Recorded, Step::Done, None, held)?;
    }
    Ok(())
}

/// What a bucket is known to hold without listing it.
struct Known {
    manifest: String,
    blobs: HashSet<String>,
}

fn site_public(site: &Site) -> PathBuf {
    crate::build::public_dir(site)
}

/// When the bucket's pointer names `live`, and that is the manifest this ledger recorded as
/// deployed there, and its revision is still here: every blob of it is in the bucket (gc
/// never removes the live manifest's objects). Its blobs are read from the local manifest
/// (checked to give that very root), so no listing of the bucket is needed.
async fn known_present(
    ledger: &mut Ledger,
    remote: &Remote,
    live: &str,
    public: &std::path::Path,
) -> Result<Option<Known>, DeployError> {
    let Some(recorded) = ledger.read(|tx| deploys::target(tx, &remote.url))? else {
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
    // Revision directories never change once complete, and this one (from this ledger, whose
    // id its manifest carries) is the one whose root was recorded.
    let dir = public.join(REVISIONS).join(revision::dir_name(rev, &build));
    let Ok(m) = Manifest::read(&dir) else {
        return Ok(None);
    };
    let ours = deploy_ledger_id(ledger)?;
    if m.ledger_id.as_deref().is_some_and(|id| id != ours) {
        return Ok(None);
    }
    Ok(Some(Known {
        manifest,
        blobs: m.files.into_iter().map(|e| e.sha256).collect(),
    }))
}

fn deploy_ledger_id(ledger: &mut Ledger) -> Result<String, DeployError> {
    Ok(ledger.read(crate::ledger::status::ledger_id)?)
}

/// The shard digests a manifest root in the bucket names (its bytes checked against its
/// name); `None` if it cannot be read.
async fn root_shards(
    remote: &Remote,
    manifest: &str,
) -> Result<Option<HashSet<String>>, DeployError> {
    let Some(bytes) = remote.get(&Remote::root_key(manifest)).await? else {
        return Ok(None);
    };
    if !layout::verified(&bytes, manifest) {
        return Ok(None);
    }
    Ok(serde_json::from_slice::<layout::Root>(&bytes)
        .ok()
        .map(|r| r.shards.into_iter().map(|(_, s)| s).collect()))
}

/// Blob uploads in flight at once (`hugo deploy` uses 10 workers; S3 serves far more).
const UPLOADS: usize = 16;
/// Blobs uploaded between two extensions of the lease.
const UPLOAD_CHUNK: usize = 512;

/// Reads one blob from the revision, checks it against its digest and uploads it if the
/// bucket lacks it. Returns (this call created it, its size).
async fn upload_blob(
    remote: &Remote,
    dir: &std::path::Path,
    sha: &str,
    path: &str,
    content_type: &str,
    redo: bool,
) -> Result<(bool, u64), DeployError> {
    if redo {
        tracing::warn!(blob = %sha, path = %path, "a blob an earlier attempt uploaded is missing from the bucket; uploading it again");
    }
    let local = dir.join(path);
    let bytes = std::fs::read(&local).map_err(|source| DeployError::Io {
        path: local.clone(),
        source,
    })?;
    if !layout::verified(&bytes, sha) {
        return Err(DeployError::store(
            remote,
            "verifying a blob",
            format!(
                "{} does not hash to {sha} as its manifest says",
                local.display()
            ),
        ));
    }
    let len = bytes.len() as u64;
    let created = remote
        .create(&Remote::blob_key(sha), bytes, Some(content_type))
        .await?;
    Ok((created, len))
}

/// Moves `current` to the plan's manifest unless a higher revision, or a rollback's hold, is
/// live; retries a lost compare-and-set after re-reading.
async fn move_pointer(
    remote: &Remote,
    plan: &Plan,
    now: Instant,
    next_change_at: Option<Instant>,
) -> Result<(Outcome, PointerOutcome), DeployError> {
    for _ in 0..32 {
        let live = remote.read_pointer().await?;
        let new = RemotePointer {
            revision: plan.revision,
            build: plan.build.clone(),
            manifest: plan.root.clone(),
            deployed_at: now,
            next_change_at,
            held_below: None,
        };
        let decision = pointer::decide(
            live.as_ref()
                .map(|(p, _)| (p.revision, p.manifest == plan.root)),
            live.as_ref().and_then(|(p, _)| p.held_below),
            plan.revision,
        );
        match decision {
            pointer::Decision::Unchanged => {
                return Ok((Outcome::Deployed, PointerOutcome::Unchanged))
            }
            pointer::Decision::KeptHigher => {
                return Ok((Outcome::Superseded, PointerOutcome::KeptHigher))
            }
            pointer::Decision::Held(_) => return Ok((Outcome::Held, PointerOutcome::KeptHigher)),
            pointer::Decision::Move => {}
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
