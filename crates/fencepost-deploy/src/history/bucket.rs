//! `rollback --to URL` and `gc --to URL`: operations on what a bucket holds, each from the
//! ledger that owns the bucket and under the target's lease, so neither ever runs beside a
//! deploy: gc is part of the saga.

mod gc;
mod log;
mod rollback;

use crate::targets::{claim, runtime, DeployError};
use fencepost_bucket::layout::Root;
use fencepost_bucket::read::Read;
use fencepost_bucket::remote::Remote;
use fencepost_core::clock::Clock;
use fencepost_ledger::lease::{Lease, OwnerId};
use fencepost_ledger::Ledger;
use fencepost_site::Site;
pub use gc::{gc, RemoteGc};
pub use rollback::{rollback, RemoteRollback};

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
        match remote.root(sha).await? {
            Read::Found(root) => out.push(HeldRevision {
                sha256: sha.to_string(),
                root,
                modified,
            }),
            Read::Missing => continue,
            Read::Corrupt | Read::Unparsable(_) => {
                tracing::warn!(manifest = %sha, "a manifest root that does not verify; left alone")
            }
        }
    }
    out.sort_by_key(|r| std::cmp::Reverse((r.root.id.revision, r.modified)));
    Ok(out)
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
    claim::apart_from_ledger(site, &remote)?;
    runtime()?.block_on(async {
        let mut ledger = site.open_ledger()?;
        claim::name_target(&mut ledger, &remote)?;
        let ours = ledger.read(fencepost_ledger::status::ledger_id)?;
        let live = remote.read_pointer().await?;
        claim::check_owner(&remote, live.as_ref().map(|(p, _)| p), &ours, false).await?;
        let owner = OwnerId::random();
        let claim = claim::Claim::new(&remote, &owner, &site.config.deploy);
        let held = claim.take_waiting(&mut ledger, clock, what).await?;
        claim::holding(&mut ledger, clock, held, async |ledger, held| {
            f(ledger, &remote, held, &ours).await
        })
        .await
    })
}
