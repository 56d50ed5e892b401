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

pub(crate) mod claim;
pub use crate::bucket::layout;
pub(crate) mod objects;
mod pass;
pub(crate) mod receipt;
pub use crate::bucket::remote;
mod saga;
pub(crate) use saga::lost_lease;
pub mod verify;

use crate::clock::Clock;
use crate::ledger::deploys;
use crate::ledger::lease::OwnerId;
use crate::ledger::{Ledger, LedgerError};
use crate::output::pointer::PointerOutcome;
use crate::output::OutputError;
use crate::site::Site;
use remote::Remote;
use serde::{Deserialize, Serialize};
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
    #[error("{dir} was built by ledger {theirs}, and this site's ledger is {ours}: a bucket's pointer names the ledger its root was built by, so nothing was written. Build the revision from this ledger (`fencepost build`), or deploy from the ledger that built it")]
    ForeignRevision {
        dir: String,
        theirs: String,
        ours: String,
    },
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
    pub(crate) fn store(
        remote: &Remote,
        what: &str,
        message: impl std::fmt::Display,
    ) -> DeployError {
        // What the bucket holds is not what the saga expects (a frozen plan that does not
        // match, a root that does not hash to its name): trying again repeats it.
        DeployError::Bucket(crate::bucket::BucketError::Store {
            target: remote.url.clone(),
            what: what.to_string(),
            message: crate::bucket::remote::redact_userinfo(&message.to_string()),
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
    /// The build fingerprint B (`build` in JSON and on disk: a contract).
    #[serde(rename = "build")]
    pub fingerprint: String,
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
    /// The build fingerprint B (`build` in JSON and on disk: a contract).
    #[serde(rename = "build")]
    pub fingerprint: String,
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
        Report::of(target, plan.revision, &plan.fingerprint, outcome)
    }

    /// A report of `revision`-`fingerprint` with nothing done yet.
    fn of(target: &str, revision: i64, fingerprint: &str, outcome: Outcome) -> Report {
        Report {
            target: target.to_string(),
            operation: None,
            revision,
            fingerprint: fingerprint.to_string(),
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
        pass::local_revision(site, Some(w))?;
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
            &self.remote.key,
            self.site.config.deploy.lease_secs,
        )
    }
}

pub async fn run_on(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    remote: &Remote,
    progress: Progress<'_>,
) -> Result<Report, DeployError> {
    let mut ledger = site.open_existing_ledger()?;
    let target = remote.url.clone();
    claim::name_target(&mut ledger, remote)?;
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
    let known = ledger.read(|tx| deploys::target(tx, &remote.key))?;
    let store = remote.store_id();
    if !known.is_some_and(|t| t.probed && t.probed_store.as_deref() == Some(store.as_str())) {
        remote.probe().await?;
        let now = clock.now();
        ledger.write(|tx| deploys::mark_probed(tx, &remote.key, &store, now))?;
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
        match pass::attempt(&mut ledger, &ctx, opts).await? {
            pass::Turn::Done(r) => return Ok(r),
            pass::Turn::Wait(mut r) => {
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
    let mut r = pass::skipped(target, &op);
    r.target = op.target.clone();
    r.outcome = Outcome::Abandoned;
    Ok(r)
}
