//! `fencepost deploy`: a finished revision to object storage as a resumable saga, then the
//! remote pointer moved by compare-and-set.
//!
//! Decided vs carried out: the operation is journaled in the ledger with a **frozen plan**
//! (the revision, its manifest root and shards, every blob) before anything is touched, and a
//! step cursor records what is done: planned → blobs → manifest → pointer → recorded → done.
//! A run that finds a pending operation resumes it — never re-planning, since the bucket it
//! would plan against is the one it already changed — verifying what earlier steps left
//! and redoing, loudly, what is missing (`deploy/saga.rs`). Every step's journal write carries the
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
//!
//! The crate also holds a deploy target ([`targets`]: its name, owner, lease, objects and
//! receipts) and what is done to finished revisions ([`history`]: rollback and gc), which deploy
//! shares.

pub mod history;
pub mod preview;
pub mod targets;

mod log;
mod pass;
mod saga;
pub mod verify;

// The target as every operation on it sees it (its name, owner, lease, objects, receipts).
use crate::targets::claim;
use crate::targets::{runtime, DeployError, Outcome, Plan, Repair};

use fencepost_bucket::remote::Remote;
use fencepost_core::clock::Clock;
use fencepost_ledger::deploys;
use fencepost_ledger::lease::OwnerId;
use fencepost_ledger::Ledger;
use fencepost_output::id::RevisionId;
use fencepost_output::pointer::PointerOutcome;
use fencepost_site::Site;
use serde::Serialize;

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
    /// `--allow-future-now`: deploy a ledger that records changes dated more than a minute
    /// ahead of this machine's clock (a simulated calendar's). Without it such a deploy is
    /// refused before anything is uploaded.
    pub allow_future_entries: bool,
    /// `--strict`: a site whose `base_url` is a local address is refused, not warned about.
    pub strict: bool,
}

/// What a deploy did (the JSON of `fencepost deploy`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub target: String,
    pub operation: Option<String>,
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
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

impl Report {
    /// A report of `plan` with nothing done yet.
    fn of_plan(target: &str, plan: &Plan, outcome: Outcome) -> Report {
        Report::of(target, plan.id.clone(), outcome)
    }

    /// A report of revision `id` with nothing done yet.
    fn of(target: &str, id: RevisionId, outcome: Outcome) -> Report {
        Report {
            target: target.to_string(),
            operation: None,
            id,
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

/// A deploy is refused when the ledger's newest change is dated more than a minute ahead of
/// this machine's clock (made under a simulated calendar, `--allow-future-now`): deploying it
/// now would serve a publication before its instant.
fn refuse_future_entries(ledger: &mut Ledger) -> Result<(), DeployError> {
    const SLACK_MS: i64 = 60_000;
    let newest = ledger.read(|tx| fencepost_ledger::audit::newest(tx, 1))?;
    let Some(e) = newest.first() else {
        return Ok(());
    };
    let ahead_ms = e.at.saturating_sub(chrono::Utc::now().timestamp_millis());
    if ahead_ms <= SLACK_MS {
        return Ok(());
    }
    Err(DeployError::FutureEntries {
        action: e.action.clone(),
        at: fencepost_core::clock::Instant(e.at),
        ahead: fencepost_core::clock::human_ms(ahead_ms),
    })
}

/// A `base_url` on a local address (`localhost`, `127.*`, `::1`, `0.0.0.0`, `*.localhost`):
/// the deployed feeds, sitemap and `robots.txt` would point there. A warning naming it, or
/// (`strict`) a refusal before anything is uploaded.
fn check_base_url(site: &Site, strict: bool) -> Result<(), DeployError> {
    let base_url = &site.config.base_url;
    let local = fencepost_config::is_local_url(base_url);
    match (local, strict) {
        (false, _) => Ok(()),
        (true, true) => Err(DeployError::LocalBaseUrl {
            base_url: base_url.clone(),
        }),
        (true, false) => {
            // Once per process: `run --deploy` deploys every cycle, and one warning is heard.
            static WARNED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
                tracing::warn!(base_url = %base_url, "base_url is a local address: the deployed feeds, sitemap and robots.txt point at it; set base_url in fencepost.toml to the site's public URL and build again (deploy --strict refuses)");
            }
            Ok(())
        }
    }
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
    /// This run's claim on the target.
    fn claim(&self) -> claim::Claim<'_> {
        claim::Claim::new(self.remote, &self.owner, &self.site.config.deploy)
    }

    fn take_lease(
        &self,
        ledger: &mut Ledger,
    ) -> Result<Option<fencepost_ledger::lease::Lease>, DeployError> {
        self.claim().take(ledger, self.clock)
    }
}

pub async fn run_on(
    site: &Site,
    clock: &Clock,
    opts: &Options,
    remote: &Remote,
    progress: Progress<'_>,
) -> Result<Report, DeployError> {
    claim::apart_from_ledger(site, remote)?;
    let mut ledger = site.open_existing_ledger()?;
    if !opts.allow_future_entries {
        refuse_future_entries(&mut ledger)?;
    }
    check_base_url(site, opts.strict)?;
    let target = remote.url.clone();
    claim::name_target(&mut ledger, remote)?;
    let ours = ledger.read(fencepost_ledger::status::ledger_id)?;
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
                        r.id.revision
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
