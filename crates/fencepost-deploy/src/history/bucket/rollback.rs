//! `rollback --to URL`: the bucket's pointer moved back by compare-and-set, journaled as an
//! operation and audited.

use super::{revisions, with_target, HeldRevision};
use crate::targets::receipt::{finish, RollbackPlan};
use crate::targets::{objects, DeployError, Outcome};
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_core::clock::Clock;
use fencepost_ledger::deploys::{self, Step};
use fencepost_ledger::lease::Lease;
use fencepost_ledger::Ledger;
use fencepost_output::id::RevisionId;
use fencepost_output::manifest::AuditAnchor;
use fencepost_site::Site;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct RemoteRollback {
    pub target: String,
    /// The journaled operation (none when the revision was live already: nothing moved, no
    /// audit entry).
    pub operation: Option<String>,
    pub from: Option<String>,
    pub to: String,
    pub outcome: Outcome,
}

/// Moves the bucket's pointer back to a revision it holds (`R` or `R-B`), by
/// compare-and-set, journaled as an operation and audited — only to a root whose every shard
/// and blob is in the bucket. A rollback holds: deploys of the revision rolled back from, or
/// lower, leave the pointer alone until a higher one.
pub fn rollback(
    site: &Site,
    clock: &Clock,
    url: &str,
    wanted: &str,
) -> Result<RemoteRollback, DeployError> {
    with_target(
        site,
        clock,
        url,
        "rolling back",
        async |ledger, remote, held, ours| {
            rollback_held(site, ledger, clock, remote, wanted, held, ours).await
        },
    )
}

async fn rollback_held(
    site: &Site,
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    wanted: &str,
    held: &Lease,
    ours: &str,
) -> Result<RemoteRollback, DeployError> {
    // An earlier rollback that died after deciding: finish its receipt first.
    if let Some(op) = ledger.read(|tx| deploys::pending_of(tx, &remote.key, "rollback"))? {
        finish(ledger, clock, remote, &op, held).await?;
    }
    let held_revisions = revisions(remote).await?;
    let live = remote.read_pointer().await?.map(|(p, _)| p);
    let chosen = choose(remote, &held_revisions, live.as_ref(), wanted, ours)?;
    let root = match live.as_ref().is_some_and(|p| p.manifest == chosen.sha256) {
        true => chosen.sha256.clone(),
        false => super::log::root_for(site, ledger, remote, &chosen, live.as_ref()).await?,
    };
    let plan = RollbackPlan {
        id: chosen.root.id.clone(),
        root,
    };
    let mut report = RemoteRollback {
        target: remote.url.clone(),
        operation: None,
        from: live.as_ref().map(|p| p.id.to_string()),
        to: plan.id.to_string(),
        outcome: Outcome::AlreadyDeployed,
    };
    if live.as_ref().is_some_and(|p| p.manifest == plan.root) {
        // Already live: nothing moves, so there is nothing to audit.
        return Ok(report);
    }
    let id = journal(ledger, clock, remote, &plan, held).await?;
    let tip = ledger.read(fencepost_ledger::status::anchor)?;
    let anchor = AuditAnchor {
        seq: tip.seq,
        hash: tip.hash.clone(),
    };
    point_back(remote, clock, &plan, &id, ours, anchor).await?;
    let now = clock.now();
    let outcome = Some("deployed");
    let advanced = ledger
        .write(|tx| deploys::advance(tx, &id, Step::Planned, Step::Pointer, outcome, held, now))?;
    if !advanced {
        // A takeover: the run that holds the target now finishes this rollback's receipt.
        return Err(crate::targets::lost_lease(remote, "recording a rollback"));
    }
    fencepost_core::fail_point!("rollback.remote.after_pointer");
    let op = ledger
        .read(|tx| deploys::get(tx, &id))?
        .expect("just inserted");
    finish(ledger, clock, remote, &op, held).await?;
    report.operation = Some(id);
    report.outcome = Outcome::Deployed;
    Ok(report)
}

/// Journals the rollback as an operation of the target, once every shard and blob of its
/// root is known to be in the bucket: readers are never pointed at a root whose objects are
/// gone (gc may have collected them). Returns the operation's id.
async fn journal(
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    plan: &RollbackPlan,
    held: &Lease,
) -> Result<String, DeployError> {
    let (shards, blobs) = objects::root_objects_missing(remote, &plan.root).await?;
    if !shards.is_empty() || !blobs.is_empty() {
        return Err(DeployError::Incomplete {
            target: remote.url.clone(),
            root: plan.root.clone(),
            missing: objects::describe_missing(&shards, &blobs),
        });
    }
    let id = uuid::Uuid::new_v4().simple().to_string();
    let now = clock.now();
    let plan_json = serde_json::to_string(plan).expect("plans serialise");
    let target = &remote.key;
    if !ledger.write(|tx| deploys::insert_of(tx, &id, target, "rollback", &plan_json, held, now))? {
        let why = "another rollback of this target is pending";
        return Err(DeployError::store(remote, "rolling back", why));
    }
    Ok(id)
}

/// The compare-and-set of the pointer to the plan's root, retried after a lost race. The new
/// pointer holds every revision above it (the live one, and an earlier hold) until a higher
/// one is deployed.
async fn point_back(
    remote: &Remote,
    clock: &Clock,
    plan: &RollbackPlan,
    id: &str,
    ours: &str,
    tip: AuditAnchor,
) -> Result<(), DeployError> {
    for _ in 0..32 {
        let live = remote.read_pointer().await?;
        let live_p = live.as_ref().map(|(p, _)| p);
        let earlier_hold = live_p.and_then(|p| p.held_below);
        let held_below = live_p
            .map(|p| p.id.revision)
            .into_iter()
            .chain(earlier_hold)
            .filter(|r| *r > plan.id.revision)
            .max();
        let mut new = RemotePointer::new(plan.id.clone(), &plan.root, clock.now());
        new.next_change_at = live_p.and_then(|p| p.next_change_at);
        new.held_below = held_below;
        new.ledger_id = Some(ours.to_string());
        new.audit_tip = Some(tip.clone());
        new.operation = Some(id.to_string());
        let new = new.after(live_p);
        if remote
            .swap_pointer(live.as_ref().map(|(_, v)| v), &new)
            .await?
        {
            return Ok(());
        }
    }
    let why = "lost the compare-and-set 32 times in a row; try again";
    Err(DeployError::store(remote, "rolling back", why))
}

/// The root `wanted` (`R-B`, or `R`: the live build's, else the newest) names.
/// The revision `wanted` names among those this ledger built (a root from before roots named
/// their ledger counts as this ledger's): a rollback never points this ledger's pointer at a
/// root another ledger built (one a `deploy --adopt` took the bucket over from), which every
/// origin would refuse (503) while the rollback said `deployed`.
fn choose(
    remote: &Remote,
    held_revisions: &[HeldRevision],
    live: Option<&RemotePointer>,
    wanted: &str,
    ours: &str,
) -> Result<HeldRevision, DeployError> {
    let foreign = |h: &&HeldRevision| h.root.ledger_id.as_deref().is_some_and(|l| l != ours);
    let (held_revisions, theirs): (Vec<&HeldRevision>, Vec<&HeldRevision>) =
        held_revisions.iter().partition(|h| !foreign(h));
    let found = pick(remote, &held_revisions, live, wanted)?;
    if found.is_none() {
        if let Some(t) = pick(remote, &theirs, live, wanted)? {
            return Err(DeployError::store(
                remote,
                "rolling back",
                format!(
                    "revision {} there was built by ledger {}, not this site's ledger {ours} (the bucket was adopted from it): a rollback points only at revisions this ledger built. Choose one of those ({}), or deploy",
                    t.root.id,
                    t.root.ledger_id.as_deref().unwrap_or("-"),
                    held_revisions
                        .iter()
                        .take(5)
                        .map(|h| h.root.id.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
    found.ok_or_else(|| {
        DeployError::store(
            remote,
            "rolling back",
            format!("the bucket holds no revision {wanted} that this ledger built"),
        )
    })
}

fn pick(
    remote: &Remote,
    held_revisions: &[&HeldRevision],
    live: Option<&RemotePointer>,
    wanted: &str,
) -> Result<Option<HeldRevision>, DeployError> {
    Ok(match wanted.parse::<RevisionId>() {
        Ok(id) => held_revisions
            .iter()
            .find(|h| h.root.id.revision == id.revision && h.root.id.fingerprint == id.fingerprint),
        Err(_) => {
            let r: i64 = wanted.parse().map_err(|_| {
                DeployError::Bucket(fencepost_bucket::BucketError::BadTarget {
                    target: remote.url.clone(),
                    why: format!("{wanted:?} is not a revision (R or R-B)"),
                })
            })?;
            let same_build = live.map(|p| p.id.fingerprint.clone());
            held_revisions
                .iter()
                .find(|h| {
                    h.root.id.revision == r && Some(&h.root.id.fingerprint) == same_build.as_ref()
                })
                .or_else(|| held_revisions.iter().find(|h| h.root.id.revision == r))
        }
    }
    .map(|h| (*h).clone()))
}
