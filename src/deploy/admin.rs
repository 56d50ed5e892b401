//! `rollback --to URL` and `gc --to URL`: operations on what a bucket holds, each from the
//! ledger that owns the bucket and under the target's lease, so neither ever runs beside a
//! deploy: gc is part of the saga.

use super::layout::{self, Root};
pub use super::objects::{read_entries, read_shard};
use super::remote::{Remote, RemotePointer};
use super::{claim, objects, DeployError, Outcome};
use crate::clock::Clock;
use crate::ledger::deploys::{self, Step};
use crate::ledger::lease::{Lease, OwnerId};
use crate::ledger::{audit, Ledger};
use crate::output::manifest::AuditAnchor;
use crate::output::revision;
use crate::site::Site;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// A manifest root the bucket holds.
#[derive(Debug, Clone)]
pub struct HeldRevision {
    pub sha256: String,
    pub root: Root,
    pub modified: chrono::DateTime<chrono::Utc>,
}

/// Every manifest root in the bucket, newest first (by revision, then upload time). Roots
/// that do not hash to their name are skipped with a warning.
pub async fn revisions(remote: &Remote) -> Result<Vec<HeldRevision>, DeployError> {
    let mut out = Vec::new();
    for (name, modified) in remote.list("manifests").await? {
        let Some(sha) = name.strip_suffix(".json").filter(|n| !n.contains('/')) else {
            continue;
        };
        let Some(bytes) = remote.get(&Remote::root_key(sha)).await? else {
            continue;
        };
        match serde_json::from_slice::<Root>(&bytes) {
            Ok(root) if layout::verified(&bytes, sha) => out.push(HeldRevision {
                sha256: sha.to_string(),
                root,
                modified,
            }),
            _ => {
                tracing::warn!(manifest = %sha, "a manifest root that does not verify; left alone")
            }
        }
    }
    out.sort_by_key(|r| std::cmp::Reverse((r.root.revision, r.modified)));
    Ok(out)
}

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

/// The frozen plan of a rollback: which root the pointer goes to.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RollbackPlan {
    revision: i64,
    build: String,
    root: String,
}

/// Opens the target, checks that this site's ledger owns it, and runs `f` holding the
/// target's lease (waiting up to `deploy.wait_secs` for a deploy, gc or rollback holding it).
fn with_target<T>(
    site: &Site,
    clock: &Clock,
    url: &str,
    what: &str,
    f: impl AsyncFnOnce(&mut Ledger, &Remote, &Lease, &str) -> Result<T, DeployError>,
) -> Result<T, DeployError> {
    let remote = Remote::open(url)?;
    super::runtime()?.block_on(async {
        let mut ledger = site.open_ledger()?;
        let ours = ledger.read(crate::ledger::status::ledger_id)?;
        let live = remote.read_pointer().await?;
        claim::check_owner(&remote, live.as_ref().map(|(p, _)| p), &ours, false).await?;
        let owner = OwnerId::random();
        let held = claim::take_waiting(
            &mut ledger,
            clock,
            &owner,
            &remote,
            site.config.deploy.lease_secs,
            site.config.deploy.wait_secs(),
            what,
        )
        .await?;
        let result = f(&mut ledger, &remote, &held, &ours).await;
        claim::release(&mut ledger, clock, &held);
        result
    })
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
            rollback_held(ledger, clock, remote, wanted, held, ours).await
        },
    )
}

async fn rollback_held(
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    wanted: &str,
    held: &Lease,
    ours: &str,
) -> Result<RemoteRollback, DeployError> {
    // An earlier rollback that died after deciding: finish its receipt first.
    if let Some(op) = ledger.read(|tx| deploys::pending_of(tx, &remote.url, "rollback"))? {
        finish(ledger, clock, remote, &op, held).await?;
    }
    let held_revisions = revisions(remote).await?;
    let live = remote.read_pointer().await?;
    let chosen = choose(
        remote,
        &held_revisions,
        live.as_ref().map(|(p, _)| p),
        wanted,
    )?;
    let plan = RollbackPlan {
        revision: chosen.root.revision,
        build: chosen.root.build.clone(),
        root: chosen.sha256.clone(),
    };
    let from = live
        .as_ref()
        .map(|(p, _)| revision::RevisionId::new(p.revision, &p.build).to_string());
    let to = revision::RevisionId::new(plan.revision, &plan.build).to_string();
    if live.as_ref().is_some_and(|(p, _)| p.manifest == plan.root) {
        // Already live: nothing moves, so there is nothing to audit.
        return Ok(RemoteRollback {
            target: remote.url.clone(),
            operation: None,
            from,
            to,
            outcome: Outcome::AlreadyDeployed,
        });
    }
    // Never point readers at a root whose objects are gone (gc may have collected them).
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
    let plan_json = serde_json::to_string(&plan).expect("plans serialise");
    if !ledger
        .write(|tx| deploys::insert_of(tx, &id, &remote.url, "rollback", &plan_json, held, now))?
    {
        return Err(DeployError::store(
            remote,
            "rolling back",
            "another rollback of this target is pending",
        ));
    }
    let tip = ledger.read(crate::ledger::status::anchor)?;
    // The compare-and-set, retried after a lost race.
    let mut moved = false;
    for _ in 0..32 {
        let live = remote.read_pointer().await?;
        let live_p = live.as_ref().map(|(p, _)| p);
        let earlier_hold = live_p.and_then(|p| p.held_below);
        let held_below = live_p
            .map(|p| p.revision)
            .into_iter()
            .chain(earlier_hold)
            .filter(|r| *r > plan.revision)
            .max();
        let mut new = RemotePointer::new(plan.revision, &plan.build, &plan.root, clock.now());
        new.next_change_at = live_p.and_then(|p| p.next_change_at);
        new.held_below = held_below;
        new.ledger_id = Some(ours.to_string());
        new.audit_tip = Some(AuditAnchor {
            seq: tip.seq,
            hash: tip.hash.clone(),
        });
        new.operation = Some(id.clone());
        let new = new.after(live_p);
        if remote
            .swap_pointer(live.as_ref().map(|(_, v)| v), &new)
            .await?
        {
            moved = true;
            break;
        }
    }
    if !moved {
        return Err(DeployError::store(
            remote,
            "rolling back",
            "lost the compare-and-set 32 times in a row; try again",
        ));
    }
    let now = clock.now();
    ledger.write(|tx| {
        deploys::advance(
            tx,
            &id,
            Step::Planned,
            Step::Pointer,
            Some("deployed"),
            held,
            now,
        )
    })?;
    crate::fail_point!("rollback.remote.after_pointer");
    let op = ledger
        .read(|tx| deploys::get(tx, &id))?
        .expect("just inserted");
    finish(ledger, clock, remote, &op, held).await?;
    Ok(RemoteRollback {
        target: remote.url.clone(),
        operation: Some(id),
        from,
        to,
        outcome: Outcome::Deployed,
    })
}

/// The root `wanted` (`R-B`, or `R`: the live build's, else the newest) names.
fn choose(
    remote: &Remote,
    held_revisions: &[HeldRevision],
    live: Option<&RemotePointer>,
    wanted: &str,
) -> Result<HeldRevision, DeployError> {
    match wanted.parse::<revision::RevisionId>() {
        Ok(id) => held_revisions
            .iter()
            .find(|h| h.root.revision == id.revision && h.root.build == id.fingerprint),
        Err(_) => {
            let r: i64 = wanted.parse().map_err(|_| {
                DeployError::Bucket(crate::bucket::BucketError::BadTarget {
                    target: remote.url.clone(),
                    why: format!("{wanted:?} is not a revision (R or R-B)"),
                })
            })?;
            let same_build = live.map(|p| p.build.clone());
            held_revisions
                .iter()
                .find(|h| h.root.revision == r && Some(&h.root.build) == same_build.as_ref())
                .or_else(|| held_revisions.iter().find(|h| h.root.revision == r))
        }
    }
    .cloned()
    .ok_or_else(|| {
        DeployError::store(
            remote,
            "rolling back",
            format!("the bucket holds no revision {wanted}"),
        )
    })
}

/// Writes a decided rollback's audit entry (once) and closes it. One that never moved the
/// pointer is closed as superseded: a rollback decided earlier must not clobber what is live
/// now.
pub(crate) async fn finish(
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    op: &deploys::Op,
    held: &crate::ledger::lease::Lease,
) -> Result<(), DeployError> {
    let plan: RollbackPlan = serde_json::from_str(&op.plan)
        .map_err(|e| DeployError::store(remote, "reading a rollback plan", e))?;
    let now = clock.now();
    if op.step == Step::Planned {
        let live = remote.read_pointer().await?;
        let there = live.is_some_and(|(p, _)| p.manifest == plan.root);
        let outcome = if there { "deployed" } else { "superseded" };
        ledger.write(|tx| {
            deploys::advance(
                tx,
                &op.id,
                Step::Planned,
                Step::Pointer,
                Some(outcome),
                held,
                now,
            )
        })?;
        if !there {
            ledger.write(|tx| {
                deploys::advance(tx, &op.id, Step::Pointer, Step::Done, None, held, now)
            })?;
            return Ok(());
        }
    }
    let detail = serde_json::json!({
        "target": remote.url, "to": revision::RevisionId::new(plan.revision, &plan.build).to_string(), "manifest": plan.root,
    })
    .to_string();
    let subject = format!("rollback:{}", op.id);
    ledger.write(|tx| {
        audit::append_once(tx, now, audit::AuditAction::Rollback, &subject, &detail)?;
        deploys::advance(tx, &op.id, Step::Pointer, Step::Done, None, held, now)
    })?;
    Ok(())
}

#[derive(Debug, Clone, Serialize)]
pub struct RemoteGc {
    pub target: String,
    pub kept: Vec<String>,
    /// Roots kept because they were live less than the grace period ago.
    pub retired_kept: Vec<String>,
    pub removed_manifests: usize,
    pub removed_shards: usize,
    pub removed_blobs: usize,
    /// Unreferenced objects (roots included) left because they are younger than the grace
    /// period; what a young root names is kept with it.
    pub young_kept: usize,
}

/// What gc may never delete: the objects of every kept root and of every unfinished
/// operation's plan.
#[derive(Default)]
struct Keep {
    roots: HashSet<String>,
    shards: HashSet<String>,
    blobs: HashSet<String>,
}

/// Removes manifests beyond the newest `keep` and the objects no kept manifest references,
/// holding the target's lease (no deploy or rollback runs meanwhile). Kept whatever `keep`
/// says, with everything they name: the live root; roots live until less than `grace_secs`
/// ago (origins within their pointer TTL still serve them); roots uploaded less than
/// `grace_secs` ago; and every root, shard and blob an unfinished (pending or parked)
/// operation of this ledger names.
pub fn gc(
    site: &Site,
    clock: &Clock,
    url: &str,
    keep: usize,
    grace_secs: u64,
) -> Result<RemoteGc, DeployError> {
    with_target(
        site,
        clock,
        url,
        "collecting garbage",
        async |ledger, remote, _held, _ours| gc_held(ledger, clock, remote, keep, grace_secs).await,
    )
}

async fn gc_held(
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    keep: usize,
    grace_secs: u64,
) -> Result<RemoteGc, DeployError> {
    let mut protect = Keep::default();
    for op in ledger
        .read(deploys::unfinished)?
        .into_iter()
        .filter(|op| op.target == remote.url)
    {
        let Ok(plan) = serde_json::from_str::<serde_json::Value>(&op.plan) else {
            continue;
        };
        for key in ["root", "assumed"] {
            if let Some(r) = plan[key].as_str() {
                protect.roots.insert(r.to_string());
            }
        }
        for s in plan["shards"].as_array().into_iter().flatten() {
            protect.shards.extend(s.as_str().map(str::to_string));
        }
        for b in plan["blobs"].as_array().into_iter().flatten() {
            protect.blobs.extend(b[0].as_str().map(str::to_string));
        }
    }
    let now = clock.now();
    let grace_ms = i64::try_from(grace_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    let young = |t: &chrono::DateTime<chrono::Utc>| {
        (now.to_datetime() - *t).num_seconds() < i64::try_from(grace_secs).unwrap_or(i64::MAX)
    };
    let all = revisions(remote).await?;
    let live = remote.read_pointer().await?.map(|(p, _)| p);
    let recently_live: HashSet<&str> = live
        .iter()
        .flat_map(|p| &p.retired)
        .filter(|r| now.0.saturating_sub(r.at.0) < grace_ms)
        .map(|r| r.manifest.as_str())
        .collect();
    let mut report = RemoteGc {
        target: remote.url.clone(),
        kept: Vec::new(),
        retired_kept: Vec::new(),
        removed_manifests: 0,
        removed_shards: 0,
        removed_blobs: 0,
        young_kept: 0,
    };
    let mut doomed = Vec::new();
    for (i, r) in all.iter().enumerate() {
        let name = revision::RevisionId::new(r.root.revision, &r.root.build).to_string();
        if i < keep
            || live.as_ref().is_some_and(|p| p.manifest == r.sha256)
            || protect.roots.contains(&r.sha256)
        {
            report.kept.push(name);
        } else if recently_live.contains(r.sha256.as_str()) {
            report.retired_kept.push(name);
        } else if young(&r.modified) {
            report.young_kept += 1;
        } else {
            doomed.push(r);
            continue;
        }
        protect.roots.insert(r.sha256.clone());
    }
    for r in all.iter().filter(|r| protect.roots.contains(&r.sha256)) {
        for (_, s) in &r.root.shards {
            protect.shards.insert(s.clone());
        }
        for e in read_entries(remote, &r.root).await? {
            protect.blobs.insert(e.sha256);
        }
    }
    for r in doomed {
        remote.delete(&Remote::root_key(&r.sha256)).await?;
        report.removed_manifests += 1;
    }
    for (name, modified) in remote.list("manifests/shards").await? {
        let Some(sha) = name.strip_suffix(".json") else {
            continue;
        };
        if protect.shards.contains(sha) {
            continue;
        }
        if young(&modified) {
            report.young_kept += 1;
        } else {
            remote.delete(&Remote::shard_key(sha)).await?;
            report.removed_shards += 1;
        }
    }
    for (sha, modified) in remote.list("objects").await? {
        if protect.blobs.contains(&sha) {
            continue;
        }
        if young(&modified) {
            report.young_kept += 1;
        } else {
            remote.delete(&Remote::blob_key(&sha)).await?;
            report.removed_blobs += 1;
        }
    }
    Ok(report)
}
