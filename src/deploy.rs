//! `fencepost deploy`: a finished revision to object storage as a resumable saga, then the
//! remote pointer moved by compare-and-set.
//!
//! Decided vs carried out: the operation is journaled in the ledger with a **frozen plan**
//! (the revision, its manifest root and shards, every blob) before anything is touched, and a
//! step cursor records what is done: planned → blobs → manifest → pointer → recorded → done.
//! A run that finds a pending operation resumes it — never re-planning, since the bucket it
//! would plan against is the one it already changed — verifying what earlier steps left
//! and redoing, loudly, what is missing ([`saga`]). Every step's journal write carries the
//! operation's fenced lease (`deploy:<target>`); a partial unique index allows one pending
//! operation per target; an operation that fails `deploy.max_attempts` times is parked, and
//! blocks its revision until `deploy --retry ID` or `deploy --abandon ID` ([`claim`]).
//!
//! Readers never see a half-deployed site: blobs and the manifest go up first, and the one
//! object readers follow, `current`, moves last, by compare-and-set (create-if-absent the
//! first time, if-match on its etag after), only forward — a higher revision, or the same
//! revision with a build never live there — and never past a rollback's hold. A lost race
//! re-reads the pointer and decides again.
//!
//! The driver ([`run_on`]) is a list of named steps: re-arm or abandon what a person asked
//! for; refuse a bucket another ledger owns; finish a decided rollback; resume a pending
//! operation, or step aside for one deploying the same or newer work (and wait for one
//! deploying older work); stop at a parked operation; decide against the live pointer; plan,
//! freeze, carry out.

pub mod admin;
mod claim;
pub use crate::bucket::layout;
mod objects;
pub use crate::bucket::remote;
mod saga;
pub mod verify;

use crate::clock::Clock;
use crate::ledger::deploys::{self, Op};
use crate::ledger::lease::OwnerId;
use crate::ledger::{Ledger, LedgerError};
use crate::output::manifest::Manifest;
use crate::output::pointer::PointerOutcome;
use crate::output::revision::{self, REVISIONS};
use crate::output::{pointer, OutputError};
use crate::site::Site;
use claim::Aside;
use remote::Remote;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("no deploy target: pass --to URL or set deploy.to in fencepost.toml (s3://bucket/prefix, gs://…, az://…, file:///abs/path)")]
    NoTarget,
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
    #[error("{target} serves {live}, a newer build of the same revision than {wanted}, which was live there before and was replaced: deploying it would move the target backwards (is this checkout's templates/ or fencepost.toml behind?). Update the checkout and rebuild, or `fencepost rollback {wanted} --to {target}` on purpose")]
    Replaced {
        target: String,
        live: String,
        wanted: String,
    },
    #[error("{target} belongs to ledger {theirs}, and this site's ledger is {ours}: its revisions are not this ledger's, so nothing was written there. Deploy from the ledger that owns it (the shared PostgreSQL ledger: ledger.url or FENCEPOST_LEDGER), or take the bucket over with `fencepost deploy --adopt` (audited)")]
    ForeignBucket {
        target: String,
        theirs: String,
        ours: String,
    },
    #[error("{target}: manifest {root} is incomplete, missing {missing}; nothing was moved. `fencepost deploy --repair` re-uploads what the local revision has")]
    Incomplete {
        target: String,
        root: String,
        missing: String,
    },
    #[error("{target}: {what}: another deploy, rollback or gc held the target for {waited_secs} s (deploy.wait_secs); try again when it is done (fencepost status)")]
    Busy {
        target: String,
        what: String,
        waited_secs: u64,
    },
    #[error(
        "deploy --abandon {0}: no parked operation with that id; `fencepost status` lists them"
    )]
    NoSuchParkedToAbandon(String),
    #[error("nothing to deploy: {0}")]
    NothingBuilt(String),
    #[error("interrupted (shutting down): the next deploy resumes the operation")]
    Interrupted,
    #[error("deploy --retry {0}: no parked operation with that id (or another operation on its target is pending); `fencepost status` lists them")]
    NoSuchParked(String),
    #[error(transparent)]
    Bucket(#[from] crate::bucket::BucketError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl DeployError {
    fn store(remote: &Remote, what: &str, message: impl std::fmt::Display) -> DeployError {
        // What the bucket holds is not what the saga expects (a frozen plan that does not
        // match, a root that does not hash to its name): trying again repeats it.
        DeployError::Bucket(crate::bucket::BucketError::Store {
            target: remote.url.clone(),
            what: what.to_string(),
            message: message.to_string(),
            retryable: false,
        })
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
    /// Close this parked operation as abandoned (audited), and do nothing else.
    pub abandon: Option<String>,
    /// Take over a bucket another ledger owns (audited).
    pub adopt: bool,
    /// Re-upload what the live root lacks or holds corrupt, from the local revision.
    pub repair: bool,
    /// Set from outside (`fencepost run` on SIGTERM): the operation stops at its next chunk
    /// of uploads or step boundary, releases its lease and reports `interrupted`; the next
    /// deploy resumes it where its cursor stands. Not counted as a failed attempt.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The lease owner to use (default: a new random one). `fencepost run` names it so it can
    /// give the lease back if it abandons the operation at its shutdown deadline.
    pub owner: Option<OwnerId>,
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
    /// The wait for another deploy of an older revision ran out: this one is not live.
    NotLive,
    /// A parked operation blocks this revision at the target (`--retry` or `--abandon`).
    Parked,
    /// `--abandon`: the parked operation is closed.
    Abandoned,
    /// `--repair`: what the live root lacked is in the bucket again.
    Repaired,
    /// Stopped on request (`fencepost run` shutting down) between steps; the next deploy
    /// resumes it.
    Interrupted,
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
            Outcome::NotLive => "not_live",
            Outcome::Parked => "parked",
            Outcome::Abandoned => "abandoned",
            Outcome::Repaired => "repaired",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// Whether the command exits non-zero: the revision is not live and nobody else is
    /// carrying it out.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::NotLive | Outcome::Parked)
    }

    fn parse(s: &str) -> Outcome {
        match s {
            "deployed" => Outcome::Deployed,
            "already_deployed" => Outcome::AlreadyDeployed,
            "superseded" => Outcome::Superseded,
            "held" => Outcome::Held,
            "skipped_locked" => Outcome::SkippedLocked,
            "abandoned" => Outcome::Abandoned,
            "repaired" => Outcome::Repaired,
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
    /// `--adopt`: the ledger whose bucket this operation takes over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<String>,
    /// `--repair`: the corrupt objects removed before `blobs` (what was missing or corrupt)
    /// go up again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<Repair>,
}

/// The corrupt objects a repair found in the live root.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Repair {
    pub corrupt_blobs: Vec<String>,
    pub corrupt_shards: Vec<String>,
    /// The root itself did not hash to its name.
    #[serde(default)]
    pub corrupt_root: bool,
}

impl Report {
    /// A report of `plan` with nothing done yet.
    fn of_plan(target: &str, plan: &Plan, outcome: Outcome) -> Report {
        Report::of(target, plan.revision, &plan.build, outcome)
    }

    /// A report of `revision`-`build` with nothing done yet.
    fn of(target: &str, revision: i64, build: &str, outcome: Outcome) -> Report {
        Report {
            target: target.to_string(),
            operation: None,
            revision,
            build: build.to_string(),
            outcome,
            resumed: false,
            blobs_uploaded: 0,
            blobs_present: 0,
            bytes_uploaded: 0,
            pointer: PointerOutcome::Unchanged,
            error: None,
        }
    }
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
    if let Some(w) = &opts.revision {
        // A revision that is not there is refused before the target is opened or recorded.
        local_revision(site, Some(w))?;
    }
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
    let public = site.public_dir();
    let current = pointer::read(&public)?;
    let (revision, dir) = match wanted {
        Some(w) => revision::choose(&public, w, current.as_ref().map(|c| c.build.as_str()))?
            .map(|id| (id.revision, id.to_string()))
            .ok_or_else(|| OutputError::NoSuchRevision {
                wanted: w.to_string(),
                dir: public.join(REVISIONS),
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

/// What one deploy run works with.
struct Ctx<'a> {
    site: &'a Site,
    clock: &'a Clock,
    remote: &'a Remote,
    owner: OwnerId,
    progress: Progress<'a>,
    /// This site's ledger.
    ours: String,
    /// `--adopt`: the ledger whose bucket is being taken over.
    adopt: Option<String>,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Ctx<'_> {
    /// Stops between chunks and steps once the caller asked to (see [`Options::cancel`]).
    fn check_cancel(&self) -> Result<(), DeployError> {
        match &self.cancel {
            Some(c) if c.load(std::sync::atomic::Ordering::Relaxed) => {
                Err(DeployError::Interrupted)
            }
            _ => Ok(()),
        }
    }
}

impl Ctx<'_> {
    fn take_lease(
        &self,
        ledger: &mut Ledger,
    ) -> Result<Option<crate::ledger::lease::Lease>, DeployError> {
        claim::take(
            ledger,
            self.clock,
            &self.owner,
            &self.remote.url,
            self.site.config.deploy.lease_secs,
        )
    }
}

/// What one pass of the driver ended with.
enum Turn {
    Done(Report),
    /// Another run holds the target while deploying older work: look again shortly.
    Wait(Report),
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
    let ours = ledger.read(crate::ledger::status::ledger_id)?;
    // 1. What a person asked for: abandon a parked operation (and nothing else), or re-arm one.
    if let Some(id) = &opts.abandon {
        return abandon(&mut ledger, clock, &target, id);
    }
    if let Some(id) = &opts.retry {
        let now = clock.now();
        if !ledger.write(|tx| deploys::retry(tx, id, now))? {
            return Err(DeployError::NoSuchParked(id.clone()));
        }
    }
    // 2. The bucket must be this ledger's (or adopted) before anything is written to it.
    let live = remote.read_pointer().await?;
    let adopt =
        claim::check_owner(remote, live.as_ref().map(|(p, _)| p), &ours, opts.adopt).await?;
    // 3. Before the first write to a target new to this ledger: does it honour conditional
    // writes at all?
    let known = ledger.read(|tx| deploys::target(tx, &target))?;
    let store = remote.store_id();
    if !known.is_some_and(|t| t.probed && t.probed_store.as_deref() == Some(store.as_str())) {
        remote.probe().await?;
        let now = clock.now();
        ledger.write(|tx| deploys::mark_probed(tx, &target, &store, now))?;
    }
    let ctx = Ctx {
        site,
        clock,
        remote,
        owner: opts.owner.clone().unwrap_or_else(OwnerId::random),
        progress,
        ours,
        adopt,
        cancel: opts.cancel.clone(),
    };
    if opts.repair {
        return verify::repair(&mut ledger, &ctx).await;
    }
    // 4. Deploy, waiting (bounded) while another run carries out older work.
    let wait = std::time::Duration::from_secs(site.config.deploy.wait_secs());
    let started = std::time::Instant::now();
    loop {
        match attempt(&mut ledger, &ctx, opts).await? {
            Turn::Done(r) => return Ok(r),
            Turn::Wait(mut r) => {
                if started.elapsed() >= wait {
                    r.outcome = Outcome::NotLive;
                    r.error = Some(format!(
                        "waited {} s (deploy.wait_secs) for another run deploying an older revision to {target}; revision {} is not live there. Run deploy again",
                        wait.as_secs(),
                        r.revision
                    ));
                    return Ok(r);
                }
                tracing::info!(operation = ?r.operation, "another run deploys an older revision; waiting for it");
                tokio::time::sleep(claim::POLL).await;
            }
        }
    }
}

/// One pass: finish what was decided, then make this revision live or say who does.
async fn attempt(ledger: &mut Ledger, ctx: &Ctx<'_>, opts: &Options) -> Result<Turn, DeployError> {
    let target = ctx.remote.url.clone();
    finish_rollback(ledger, ctx).await?;
    let local = local_revision(ctx.site, opts.revision.as_deref());
    // With nothing built here, whoever holds the target is doing the only work there is.
    let wanted = local.as_ref().map_or(i64::MIN, |l| l.revision);
    // A pending operation: resumed when its lease is free; else stepped aside for only when
    // it deploys this revision or a newer one.
    let mut resumed: Option<Report> = None;
    if let Some(op) = ledger.read(|tx| deploys::pending(tx, &target))? {
        let Some(held) = ctx.take_lease(ledger)? else {
            return Ok(busy(&target, &op, wanted));
        };
        let now = ctx.clock.now();
        if op.attempts >= i64::from(ctx.site.config.deploy.max_attempts) {
            // Every attempt so far ended without recording why (crashed, killed): park it.
            ledger.write(|tx| deploys::park(tx, &op.id, &held, now))?;
            claim::release(ledger, ctx.clock, &held);
        } else if ledger.write(|tx| deploys::count_attempt(tx, &op.id, &held, now))? {
            tracing::info!(operation = %op.id, step = op.step.as_str(), "resuming a deploy");
            let r = saga::execute(ledger, ctx, op, held, true, None).await?;
            if r.outcome == Outcome::Failed {
                return Ok(Turn::Done(r));
            }
            resumed = Some(r);
        } else {
            claim::release(ledger, ctx.clock, &held);
            return Ok(Turn::Wait(skipped(&target, &op)));
        }
    }
    let local = match local {
        Ok(l) => l,
        Err(DeployError::NothingBuilt(_)) if resumed.is_some() => {
            return Ok(Turn::Done(resumed.expect("checked")))
        }
        Err(e) => return Err(e),
    };
    // Parked means stopped: nothing is planned or uploaded for a blocked revision.
    if let Some(op) = claim::parked_blocking(ledger, &target, local.revision)? {
        return Ok(Turn::Done(parked(&target, &op)));
    }
    let split = layout::split(&local.manifest);
    let plan_base = Plan {
        revision: local.revision,
        build: local.build.clone(),
        dir: local.dir.clone(),
        root: split.root.sha256.clone(),
        shards: split.shards.iter().map(|s| s.sha256.clone()).collect(),
        blobs: Vec::new(),
        assumed: None,
        adopt: ctx.adopt.clone(),
        repair: None,
    };
    let base = |outcome: Outcome, pointer: PointerOutcome| {
        let mut r = Report::of_plan(&target, &plan_base, outcome);
        r.pointer = pointer;
        r
    };
    // Against the live pointer: is there anything to do?
    let live = ctx.remote.read_pointer().await?.map(|(p, _)| p);
    if let Some(p) = live.as_ref().filter(|_| ctx.adopt.is_none()) {
        let settled = match saga::decide(Some(p), &plan_base) {
            pointer::Decision::Unchanged => {
                let next = ledger.read(crate::ledger::public::next_change)?;
                saga::refresh_next_change(ctx.remote, next).await?;
                Some(base(Outcome::AlreadyDeployed, PointerOutcome::Unchanged))
            }
            pointer::Decision::KeptHigher if opts.revision.is_some() => {
                return Err(DeployError::Backwards {
                    target,
                    live: revision::RevisionId::new(p.revision, &p.build).to_string(),
                    wanted: local.dir,
                });
            }
            pointer::Decision::Replaced => {
                return Err(DeployError::Replaced {
                    target,
                    live: revision::RevisionId::new(p.revision, &p.build).to_string(),
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
            return Ok(Turn::Done(resumed.unwrap_or(r)));
        }
    }
    // Plan, freeze, carry out. What the live manifest holds is known without listing the
    // bucket when it is the one this ledger recorded there (see `saga::known_present`).
    let known = match &live {
        Some(p) if ctx.adopt.is_none() => {
            saga::known_present(ledger, ctx.remote, &p.manifest, &ctx.site.public_dir()).await?
        }
        _ => None,
    };
    let plan = Plan {
        blobs: split
            .blobs
            .iter()
            .filter(|(sha, _)| !known.as_ref().is_some_and(|k| k.blobs.contains(*sha)))
            .map(|(sha, (path, ct))| (sha.clone(), path.clone(), ct.clone()))
            .collect(),
        assumed: known.as_ref().map(|k| k.manifest.clone()),
        ..plan_base.clone()
    };
    let Some(held) = ctx.take_lease(ledger)? else {
        return Ok(match ledger.read(|tx| deploys::pending(tx, &target))? {
            Some(op) => busy(&target, &op, local.revision),
            // Held by a rollback, a gc, or a deploy about to plan: look again.
            None => Turn::Wait(base(Outcome::SkippedLocked, PointerOutcome::Unchanged)),
        });
    };
    let id = uuid::Uuid::new_v4().simple().to_string();
    let plan_json = serde_json::to_string(&plan).expect("plans serialise");
    let now = ctx.clock.now();
    if !ledger.write(|tx| deploys::insert(tx, &id, &target, &plan_json, &held, now))? {
        // Another deployer planned first (the partial unique index): the next pass decides.
        claim::release(ledger, ctx.clock, &held);
        return Ok(Turn::Wait(base(
            Outcome::SkippedLocked,
            PointerOutcome::Unchanged,
        )));
    }
    crate::fail_point!("deploy.after_plan");
    let op = ledger
        .read(|tx| deploys::get(tx, &id))?
        .expect("just inserted");
    Ok(Turn::Done(
        saga::execute(ledger, ctx, op, held, false, Some(split)).await?,
    ))
}

/// A decided rollback whose receipt was not written yet: written now (if the lease is free).
async fn finish_rollback(ledger: &mut Ledger, ctx: &Ctx<'_>) -> Result<(), DeployError> {
    let Some(op) = ledger.read(|tx| deploys::pending_of(tx, &ctx.remote.url, "rollback"))? else {
        return Ok(());
    };
    if let Some(held) = ctx.take_lease(ledger)? {
        let done = admin::finish(ledger, ctx.clock, ctx.remote, &op, &held).await;
        claim::release(ledger, ctx.clock, &held);
        done?;
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

fn skipped(target: &str, op: &Op) -> Report {
    let mut r = match serde_json::from_str::<Plan>(&op.plan) {
        Ok(plan) => Report::of_plan(target, &plan, Outcome::SkippedLocked),
        Err(_) => Report::of(target, 0, "", Outcome::SkippedLocked),
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

/// `deploy --abandon ID`: closes a parked operation, audited.
fn abandon(
    ledger: &mut Ledger,
    clock: &Clock,
    target: &str,
    id: &str,
) -> Result<Report, DeployError> {
    let op = ledger
        .read(|tx| deploys::get(tx, id))?
        .filter(|op| op.status == "failed")
        .ok_or_else(|| DeployError::NoSuchParkedToAbandon(id.to_string()))?;
    let now = clock.now();
    let detail = serde_json::json!({
        "target": op.target, "revision": claim::op_revision(&op), "last_error": op.last_error,
    })
    .to_string();
    if !ledger.write(|tx| deploys::abandon(tx, id, &detail, now))? {
        return Err(DeployError::NoSuchParkedToAbandon(id.to_string()));
    }
    let mut r = skipped(target, &op);
    r.target = op.target.clone();
    r.outcome = Outcome::Abandoned;
    Ok(r)
}

/// What a bucket is known to hold without listing it.
struct Known {
    manifest: String,
    blobs: HashSet<String>,
}
