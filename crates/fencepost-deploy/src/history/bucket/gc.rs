//! `gc --to URL`: manifests beyond `--keep` removed from the bucket, with the objects no kept
//! manifest references, under the target's lease.

use super::{revisions, with_target, HeldRevision};
use crate::targets::objects::read_entries;
use crate::targets::DeployError;
use fencepost_bucket::remote::Remote;
use fencepost_core::clock::{Clock, Instant};
use fencepost_ledger::deploys;
use fencepost_ledger::Ledger;
use fencepost_site::Site;
use serde::Serialize;
use std::collections::HashSet;

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
    /// Roots another ledger built (a bucket taken over with `deploy --adopt`): not this
    /// ledger's to count against `--keep`, nor to delete; kept with what they name.
    pub foreign_kept: Vec<String>,
    /// Previews removed for being older than `preview.keep_days`.
    pub removed_previews: Vec<String>,
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
        async |ledger, remote, _held, ours| {
            let keep_days = site.config.preview.keep_days;
            gc_held(ledger, clock, remote, (keep, ours), (grace_secs, keep_days)).await
        },
    )
}

async fn gc_held(
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    (keep, ours): (usize, &str),
    (grace_secs, keep_days): (u64, u64),
) -> Result<RemoteGc, DeployError> {
    let mut protect = unfinished(ledger, remote)?;
    // Previews past their days go; the public objects the others read stay.
    let removed_previews = crate::preview::prune(remote, clock.now(), keep_days).await?;
    let in_use = crate::preview::public_objects_in_use(remote).await?;
    protect.shards.extend(in_use.iter().cloned());
    protect.blobs.extend(in_use);
    let young = Young {
        now: clock.now(),
        grace_secs,
    };
    let all = revisions(remote).await?;
    let mut report = RemoteGc {
        target: remote.url.clone(),
        kept: Vec::new(),
        retired_kept: Vec::new(),
        removed_manifests: 0,
        removed_shards: 0,
        removed_blobs: 0,
        young_kept: 0,
        foreign_kept: Vec::new(),
        removed_previews,
    };
    let doomed = sort_roots(
        remote,
        &all,
        (keep, ours),
        &young,
        &mut protect,
        &mut report,
    )
    .await?;
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
    let (removed, kept) = sweep(remote, Kind::Shards, &protect.shards, &young).await?;
    report.removed_shards = removed;
    report.young_kept += kept;
    let (removed, kept) = sweep(remote, Kind::Blobs, &protect.blobs, &young).await?;
    report.removed_blobs = removed;
    report.young_kept += kept;
    Ok(report)
}

/// Every root, shard and blob an unfinished (pending or parked) operation on this target
/// names: decided, so they stay until it is done or a person abandons it.
fn unfinished(ledger: &mut Ledger, remote: &Remote) -> Result<Keep, DeployError> {
    let mut protect = Keep::default();
    let ops = ledger.read(deploys::unfinished)?;
    for op in ops.into_iter().filter(|op| op.target == remote.key) {
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
    Ok(protect)
}

/// Sorts the bucket's roots (newest first) into kept — the newest `keep` of this ledger's
/// (`ours`), the live one, an unfinished operation's, one retired less than the grace period
/// ago, one uploaded less than it ago, one another ledger built — and doomed, which it
/// returns. Every kept root goes into `protect`.
async fn sort_roots<'a>(
    remote: &Remote,
    all: &'a [HeldRevision],
    (keep, ours): (usize, &str),
    young: &Young,
    protect: &mut Keep,
    report: &mut RemoteGc,
) -> Result<Vec<&'a HeldRevision>, DeployError> {
    let (now, grace_secs) = (young.now, young.grace_secs);
    let grace_ms = i64::try_from(grace_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
    let live = remote.read_pointer().await?.map(|(p, _)| p);
    let recently_live: HashSet<&str> = live
        .iter()
        .flat_map(|p| &p.retired)
        .filter(|r| now.0.saturating_sub(r.at.0) < grace_ms)
        .map(|r| r.manifest.as_str())
        .collect();
    let mut doomed = Vec::new();
    let mut counted = 0;
    for r in all {
        let name = r.root.id.to_string();
        if r.root.ledger_id.as_deref().is_some_and(|l| l != ours) {
            report.foreign_kept.push(name);
            protect.roots.insert(r.sha256.clone());
            continue;
        }
        counted += 1;
        if counted <= keep
            || live.as_ref().is_some_and(|p| p.manifest == r.sha256)
            || protect.roots.contains(&r.sha256)
        {
            report.kept.push(name);
        } else if recently_live.contains(r.sha256.as_str()) {
            report.retired_kept.push(name);
        } else if young.is(&r.modified) {
            report.young_kept += 1;
        } else {
            doomed.push(r);
            continue;
        }
        protect.roots.insert(r.sha256.clone());
    }
    Ok(doomed)
}

/// Whether an object was uploaded less than the grace period ago.
struct Young {
    now: Instant,
    grace_secs: u64,
}

impl Young {
    fn is(&self, t: &chrono::DateTime<chrono::Utc>) -> bool {
        let age = (self.now.to_datetime() - *t).num_seconds();
        age < i64::try_from(self.grace_secs).unwrap_or(i64::MAX)
    }
}

/// The objects a sweep goes over.
#[derive(Clone, Copy)]
enum Kind {
    Shards,
    Blobs,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Shards => "manifests/shards",
            Kind::Blobs => "objects",
        }
    }

    /// The sha256 a listed name stands for (shards are `<sha>.json`; other names are left
    /// alone).
    fn sha(self, name: &str) -> Option<&str> {
        match self {
            Kind::Shards => name.strip_suffix(".json"),
            Kind::Blobs => Some(name),
        }
    }

    fn key(self, sha: &str) -> String {
        match self {
            Kind::Shards => Remote::shard_key(sha),
            Kind::Blobs => Remote::blob_key(sha),
        }
    }
}

/// Deletes the objects of `kind` that are not protected and not young. Returns how many went
/// and how many young ones stayed.
async fn sweep(
    remote: &Remote,
    kind: Kind,
    protect: &HashSet<String>,
    young: &Young,
) -> Result<(usize, usize), DeployError> {
    let (mut removed, mut kept) = (0, 0);
    for (name, modified) in remote.list(kind.prefix()).await? {
        let Some(sha) = kind.sha(&name).filter(|sha| !protect.contains(*sha)) else {
            continue;
        };
        if young.is(&modified) {
            kept += 1;
            continue;
        }
        remote.delete(&kind.key(sha)).await?;
        removed += 1;
    }
    Ok((removed, kept))
}
