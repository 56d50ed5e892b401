//! Who may act on a target, and when: the bucket's owning ledger, the target's fenced lease,
//! parked operations that block their revision, and the rule for stepping aside.
//!
//! - **A bucket belongs to one ledger.** Its pointer names the ledger that wrote it (older
//!   pointers name it through their root). A deploy, rollback or gc from any other ledger is
//!   refused before anything is written, unless `deploy --adopt` takes it over (audited):
//!   revisions of two ledgers are not comparable, and a fresh runner with an empty ledger
//!   would otherwise fight the real one for the bucket.
//! - **Nobody steps aside for older work.** A deploy finding the target's lease held steps
//!   aside (`skipped_locked`, exit 0) only when the operation holding it deploys this
//!   revision or a newer one; otherwise it waits (`deploy.wait_secs`) and then deploys.
//! - **Parked means stopped.** An operation parked after `deploy.max_attempts` blocks its
//!   revision (and older ones) at that target until a person re-arms or abandons it, or a
//!   newer revision goes live there, which closes it.

use super::{DeployError, Plan};
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_config::DeployConfig;
use fencepost_core::clock::Clock;
use fencepost_ledger::deploys::{self, Op};
use fencepost_ledger::lease::{self, Lease, LeaseKey, OwnerId};
use fencepost_ledger::Ledger;
use fencepost_output::pointer::Decision;

/// The ledger that owns the bucket whose pointer is `live`: the pointer's own field, else the
/// root it names (pointers older than the field). `None`: nobody yet, or a bucket written
/// before manifests carried ledger ids.
pub async fn owner_of(
    remote: &Remote,
    live: &RemotePointer,
) -> Result<Option<String>, DeployError> {
    if let Some(id) = &live.ledger_id {
        return Ok(Some(id.clone()));
    }
    let Some(bytes) = remote.get(&Remote::root_key(&live.manifest)).await? else {
        return Ok(None);
    };
    Ok(
        serde_json::from_slice::<fencepost_bucket::layout::Root>(&bytes)
            .ok()
            .and_then(|r| r.ledger_id),
    )
}

/// Whether the root `live` names was built by another ledger than `ours` (a bucket left so by
/// an older release's rollback to an adopted ledger's revision): every origin refuses such a
/// root (503), so a deploy of this ledger's revision replaces it whatever its number, never
/// reports `superseded` past it.
pub async fn root_is_foreign(
    remote: &Remote,
    live: &RemotePointer,
    ours: &str,
) -> Result<bool, DeployError> {
    let foreign = match remote.root(&live.manifest).await? {
        fencepost_bucket::read::Read::Found(root) => {
            root.ledger_id.as_deref().is_some_and(|l| l != ours)
        }
        _ => false,
    };
    if foreign {
        tracing::warn!(target = %remote.url, root = %live.manifest, "the live root was built by another ledger than the pointer names: every origin refuses it; this deploy replaces it");
    }
    Ok(foreign)
}

/// `decision`, unless it would hold the pointer over a root another ledger built: then the
/// pointer moves (see [`root_is_foreign`]).
pub async fn unless_foreign(
    remote: &Remote,
    live: Option<&RemotePointer>,
    decision: Decision,
    ours: &str,
) -> Result<Decision, DeployError> {
    let holds = !matches!(decision, Decision::Move | Decision::Unchanged);
    match live {
        Some(p) if holds && root_is_foreign(remote, p, ours).await? => Ok(Decision::Move),
        _ => Ok(decision),
    }
}

/// Refuses a bucket another ledger owns. With `adopt`, returns the ledger being taken over.
pub async fn check_owner(
    remote: &Remote,
    live: Option<&RemotePointer>,
    ours: &str,
    adopt: bool,
) -> Result<Option<String>, DeployError> {
    let Some(live) = live else {
        return Ok(None);
    };
    match owner_of(remote, live).await? {
        Some(theirs) if theirs != ours => {
            if adopt {
                Ok(Some(theirs))
            } else {
                Err(DeployError::ForeignBucket {
                    target: remote.url.clone(),
                    theirs,
                    ours: ours.to_string(),
                })
            }
        }
        _ => Ok(None),
    }
}

/// The revision an operation's frozen plan deploys (0 if unreadable: it never blocks).
pub fn op_revision(op: &Op) -> i64 {
    serde_json::from_str::<Plan>(&op.plan).map_or(0, |p| p.id.revision)
}

/// The parked operation that blocks deploying `revision` to `target`: one of this revision
/// or a newer one (a newer revision may still deploy past a parked older one).
pub fn parked_blocking(
    ledger: &mut Ledger,
    target: &str,
    revision: i64,
) -> Result<Option<Op>, DeployError> {
    Ok(ledger
        .read(|tx| deploys::parked(tx, target, "deploy"))?
        .into_iter()
        .find(|op| op_revision(op) >= revision))
}

/// Runs `f` holding `held`, then gives the lease back whatever `f` returned — the one place a
/// deploy, a repair or a rollback's receipt releases its lease (a renewal inside `f` changes
/// the lease given back). A process killed inside `f` releases nothing: the lease expires.
pub async fn holding<T>(
    ledger: &mut Ledger,
    clock: &Clock,
    mut held: Lease,
    f: impl AsyncFnOnce(&mut Ledger, &mut Lease) -> T,
) -> T {
    let out = f(ledger, &mut held).await;
    release(ledger, clock, &held);
    out
}

/// Releases a lease; a failure only delays the next run until the lease expires.
fn release(ledger: &mut Ledger, clock: &Clock, held: &Lease) {
    let now = clock.now();
    if let Err(e) = ledger.write(|tx| lease::release(tx, held, now)) {
        tracing::warn!(error = %e, "could not release the deploy lease; it expires by itself");
    }
}

/// A target never holds the site's ledger, nor lies inside it: whatever serves the target
/// (an origin, a public bucket, a CDN) must have no way to the log.
pub fn apart_from_ledger(site: &fencepost_site::Site, remote: &Remote) -> Result<(), DeployError> {
    if let Ok(fencepost_ledger::Location::Bucket { url, .. }) = site.ledger_location() {
        if fencepost_core::store::names::overlaps(&remote.url, &url) {
            return Err(DeployError::LedgerInside {
                target: remote.url.clone(),
                ledger: fencepost_core::store::names::shown(&url),
            });
        }
    }
    Ok(())
}

/// Before anything keyed by `remote`'s target: rows an older fencepost keyed by its bare
/// name (a store reached at an endpoint of its own) become this key's, once (see
/// `names::target_key`).
pub fn name_target(ledger: &mut Ledger, remote: &Remote) -> Result<(), DeployError> {
    for older in &remote.older_keys {
        let moved = ledger.write(|tx| deploys::rename_legacy(tx, older, &remote.key))?;
        if moved > 0 {
            tracing::info!(target = %remote.url, from = %older, key = %remote.key, rows = moved, "the ledger now keys this target by its canonical name and endpoint");
        }
    }
    Ok(())
}

/// One run's claim on a target: the target, the run's owner id, and the terms from
/// `[deploy]` (the lease's length; how long to wait for another run's). Deploy, repair,
/// rollback and gc take the target's lease through it alike.
pub struct Claim<'a> {
    pub remote: &'a Remote,
    pub owner: &'a OwnerId,
    pub lease_secs: u64,
    pub wait_secs: u64,
}

impl<'a> Claim<'a> {
    pub fn new(remote: &'a Remote, owner: &'a OwnerId, terms: &DeployConfig) -> Claim<'a> {
        Claim {
            remote,
            owner,
            lease_secs: terms.lease_secs,
            wait_secs: terms.wait_secs(),
        }
    }

    /// Tries to take the target's lease.
    pub fn take(&self, ledger: &mut Ledger, clock: &Clock) -> Result<Option<Lease>, DeployError> {
        let (key, now) = (LeaseKey::Deploy(&self.remote.key), clock.now());
        Ok(ledger.write(|tx| lease::acquire(tx, &key, self.owner, now, self.lease_secs))?)
    }

    /// Takes the target's lease, waiting up to `wait_secs` while another run holds it (gc,
    /// rollback and repair: they never act beside a deploy). `what` names the operation in
    /// the error when the wait runs out.
    pub async fn take_waiting(
        &self,
        ledger: &mut Ledger,
        clock: &Clock,
        what: &str,
    ) -> Result<Lease, DeployError> {
        let started = std::time::Instant::now();
        loop {
            if let Some(held) = self.take(ledger, clock)? {
                return Ok(held);
            }
            if started.elapsed().as_secs() >= self.wait_secs {
                return Err(DeployError::Busy {
                    target: self.remote.url.clone(),
                    what: what.to_string(),
                    waited_secs: self.wait_secs,
                });
            }
            tokio::time::sleep(POLL).await;
        }
    }
}

/// How often a waiting run looks again.
pub const POLL: std::time::Duration = std::time::Duration::from_millis(200);

/// What a run that found the target's lease held does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Aside {
    /// The holder deploys this revision or a newer one: it does the work.
    Skip,
    /// The holder deploys an older revision (or nothing visible yet): wait, then deploy.
    Wait,
}

/// The rule for stepping aside, pure: `holder` is the revision the pending operation
/// deploys, if one is visible.
pub fn aside(holder: Option<i64>, ours: i64) -> Aside {
    match holder {
        Some(r) if r >= ours => Aside::Skip,
        _ => Aside::Wait,
    }
}

/// Closes the parked deploy operations on `target` of revisions older than `revision`, now
/// live there: nothing is left for them to do, and a parked gauge that never falls pages
/// someone for ever. Each is closed as abandoned, with its audit entry naming the revision
/// that went past it.
pub fn close_passed(
    tx: &fencepost_ledger::Tx<'_>,
    target: &str,
    revision: i64,
    now: fencepost_core::clock::Instant,
) -> Result<(), fencepost_ledger::LedgerError> {
    for op in deploys::parked(tx, target, "deploy")? {
        if op_revision(&op) < revision {
            let detail = serde_json::json!({
                "target": target, "operation": op.id, "closed": "passed",
                "revision": op_revision(&op), "passed_by": revision,
            })
            .to_string();
            deploys::abandon(tx, &op.id, &detail, now)?;
            tracing::info!(operation = %op.id, passed_by = revision, "closed a parked deploy a newer revision went past");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nobody_steps_aside_for_older_work() {
        assert_eq!(aside(Some(5), 5), Aside::Skip);
        assert_eq!(aside(Some(6), 5), Aside::Skip);
        assert_eq!(aside(Some(4), 5), Aside::Wait);
        assert_eq!(aside(None, 5), Aside::Wait);
    }
}
