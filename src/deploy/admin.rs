//! `rollback --to URL` and `gc --to URL`: operations on what a bucket holds.

use super::layout::{self, RemoteEntry, Root};
use super::remote::{Remote, RemotePointer};
use super::{DeployError, Outcome};
use crate::clock::Clock;
use crate::ledger::deploys::{self, Step};
use crate::ledger::lease::{self, OwnerId};
use crate::ledger::{audit, Ledger};
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

/// The shards of a root, verified.
pub async fn read_entries(remote: &Remote, root: &Root) -> Result<Vec<RemoteEntry>, DeployError> {
    let mut out = Vec::new();
    for (_, sha) in &root.shards {
        let bytes = remote.get(&Remote::shard_key(sha)).await?.ok_or_else(|| {
            DeployError::store(
                remote,
                "reading a manifest",
                format!("shard {sha} is missing"),
            )
        })?;
        if !layout::verified(&bytes, sha) {
            return Err(DeployError::store(
                remote,
                "reading a manifest",
                format!("shard {sha} does not hash to its name"),
            ));
        }
        let entries: Vec<RemoteEntry> = serde_json::from_slice(&bytes)
            .map_err(|e| DeployError::store(remote, "reading a manifest", e))?;
        out.extend(entries);
    }
    Ok(out)
}

#[derive(Debug, Clone, Serialize)]
pub struct RemoteRollback {
    pub target: String,
    pub operation: String,
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

/// Moves the bucket's pointer back to a revision it holds (`R` or `R-B`), by
/// compare-and-set, journaled as an operation and audited. A rollback holds: deploys of the
/// revision rolled back from, or lower, leave the pointer alone until a higher one.
pub fn rollback(
    site: &Site,
    clock: &Clock,
    url: &str,
    wanted: &str,
) -> Result<RemoteRollback, DeployError> {
    let remote = Remote::open(url)?;
    super::runtime()?.block_on(async {
        let mut ledger = site.open_ledger()?;
        let owner = OwnerId::random();
        let now = clock.now();
        let secs = site.config.deploy.lease_secs;
        let Some(held) = ledger.write(|tx| {
            lease::acquire(tx, &lease::LeaseKey::Deploy(&remote.url), &owner, now, secs)
        })?
        else {
            return Err(DeployError::store(
                &remote,
                "rolling back",
                "another deploy or rollback of this target is running; try again when it is done",
            ));
        };
        let result = rollback_held(&mut ledger, clock, &remote, wanted, &held).await;
        let now = clock.now();
        let _ = ledger.write(|tx| lease::release(tx, &held, now));
        result
    })
}

async fn rollback_held(
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    wanted: &str,
    held: &crate::ledger::lease::Lease,
) -> Result<RemoteRollback, DeployError> {
    // An earlier rollback that died after deciding: finish its receipt first.
    if let Some(op) = ledger.read(|tx| deploys::pending_of(tx, &remote.url, "rollback"))? {
        finish(ledger, clock, remote, &op, held).await?;
    }
    let held_revisions = revisions(remote).await?;
    let live = remote.read_pointer().await?;
    let chosen = match revision::parse_dir_name(wanted) {
        Some((r, b)) => held_revisions
            .iter()
            .find(|h| h.root.revision == r && h.root.build == b),
        None => {
            let r: i64 = wanted.parse().map_err(|_| DeployError::BadTarget {
                target: remote.url.clone(),
                why: format!("{wanted:?} is not a revision (R or R-B)"),
            })?;
            let same_build = live.as_ref().map(|(p, _)| p.build.clone());
            held_revisions
                .iter()
                .find(|h| h.root.revision == r && Some(&h.root.build) == same_build.as_ref())
                .or_else(|| held_revisions.iter().find(|h| h.root.revision == r))
        }
    }
    .ok_or_else(|| {
        DeployError::store(
            remote,
            "rolling back",
            format!("the bucket holds no revision {wanted}"),
        )
    })?
    .clone();
    let plan = RollbackPlan {
        revision: chosen.root.revision,
        build: chosen.root.build.clone(),
        root: chosen.sha256.clone(),
    };
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
    let from = live
        .as_ref()
        .map(|(p, _)| revision::dir_name(p.revision, &p.build));
    // The compare-and-set, retried after a lost race.
    let mut moved = false;
    for _ in 0..32 {
        let live = remote.read_pointer().await?;
        let earlier_hold = live.as_ref().and_then(|(p, _)| p.held_below);
        let from_rev = live.as_ref().map(|(p, _)| p.revision);
        let held_below = from_rev
            .into_iter()
            .chain(earlier_hold)
            .filter(|r| *r > plan.revision)
            .max();
        let new = RemotePointer {
            revision: plan.revision,
            build: plan.build.clone(),
            manifest: plan.root.clone(),
            deployed_at: clock.now(),
            next_change_at: live.as_ref().and_then(|(p, _)| p.next_change_at),
            held_below,
        };
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
        operation: id,
        from,
        to: revision::dir_name(plan.revision, &plan.build),
        outcome: Outcome::Deployed,
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
        "target": remote.url, "to": revision::dir_name(plan.revision, &plan.build), "manifest": plan.root,
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
    pub removed_manifests: usize,
    pub removed_shards: usize,
    pub removed_blobs: usize,
    /// Unreferenced objects left because they are younger than the grace period.
    pub young_kept: usize,
}

/// Removes manifests beyond the newest `keep` (never the live one, never one a pending
/// operation of this ledger names), and shards and blobs no kept manifest references —
/// never an object younger than `grace_secs`: a concurrent deploy may have uploaded it
/// before its manifest.
pub fn gc(
    site: &Site,
    clock: &Clock,
    url: &str,
    keep: usize,
    grace_secs: u64,
) -> Result<RemoteGc, DeployError> {
    let remote = Remote::open(url)?;
    let mut ledger = site.open_ledger()?;
    let pending_roots: HashSet<String> = ledger
        .read(deploys::unfinished)?
        .into_iter()
        .filter(|op| op.target == remote.url && op.status == "pending")
        .filter_map(|op| {
            serde_json::from_str::<serde_json::Value>(&op.plan)
                .ok()
                .and_then(|p| p["root"].as_str().map(str::to_string))
        })
        .collect();
    drop(ledger);
    let now = clock.now().to_datetime();
    let young = |t: &chrono::DateTime<chrono::Utc>| {
        (now - *t).num_seconds() < i64::try_from(grace_secs).unwrap_or(i64::MAX)
    };
    super::runtime()?.block_on(async {
        let all = revisions(&remote).await?;
        let live = remote.read_pointer().await?.map(|(p, _)| p.manifest);
        let mut kept = Vec::new();
        let mut doomed = Vec::new();
        for (i, r) in all.iter().enumerate() {
            if i < keep || Some(&r.sha256) == live.as_ref() || pending_roots.contains(&r.sha256) {
                kept.push(r);
            } else {
                doomed.push(r);
            }
        }
        let mut shards = HashSet::new();
        let mut blobs = HashSet::new();
        for r in &kept {
            for (_, s) in &r.root.shards {
                shards.insert(s.clone());
            }
            for e in read_entries(&remote, &r.root).await? {
                blobs.insert(e.sha256);
            }
        }
        let mut report = RemoteGc {
            target: remote.url.clone(),
            kept: kept
                .iter()
                .map(|r| revision::dir_name(r.root.revision, &r.root.build))
                .collect(),
            removed_manifests: 0,
            removed_shards: 0,
            removed_blobs: 0,
            young_kept: 0,
        };
        for r in doomed {
            if young(&r.modified) {
                report.young_kept += 1;
                continue;
            }
            remote.delete(&Remote::root_key(&r.sha256)).await?;
            report.removed_manifests += 1;
        }
        for (name, modified) in remote.list("manifests/shards").await? {
            let Some(sha) = name.strip_suffix(".json") else {
                continue;
            };
            if shards.contains(sha) {
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
            if blobs.contains(&sha) {
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
    })
}
