//! `verify --to URL` and `deploy --repair`: damage in a bucket is found and repaired.
//!
//! Verification reads the live pointer, its root, every shard and every blob the shards name
//! (one listing, then each present blob streamed and hashed), and reports what is missing or
//! does not hash to its name. A repair freezes what verification found as an operation's
//! plan and carries it out like any deploy (journaled, under the target's lease): corrupt
//! objects are removed, then everything missing goes up again from the local revision.

use super::saga;
use super::{Ctx, DeployError, Outcome, Plan, Repair, Report};
use crate::targets::claim;
use crate::targets::objects::{list_names, read_shard, shard_names};
use fencepost_bucket::layout;
use fencepost_bucket::remote::Remote;
use fencepost_ledger::deploys;
use fencepost_ledger::Ledger;
use fencepost_output::id::RevisionId;
use fencepost_output::manifest::Manifest;
use fencepost_output::revision::REVISIONS;
use futures_util::StreamExt;
use serde::Serialize;
use std::collections::BTreeSet;

/// What `verify --to` found.
#[derive(Debug, Clone, Serialize)]
pub struct BucketCheck {
    pub target: String,
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    pub manifest: String,
    pub ledger_id: Option<String>,
    /// The ledger the live root says it was built by. When it is not the one the pointer
    /// names, every origin refuses the target (503): `ok` is false.
    pub root_ledger_id: Option<String>,
    pub shards: usize,
    pub blobs: usize,
    /// The root itself is missing or does not hash to its name (nothing under it was read).
    pub root_damaged: bool,
    pub missing_shards: Vec<String>,
    pub corrupt_shards: Vec<String>,
    pub missing_blobs: Vec<String>,
    pub corrupt_blobs: Vec<String>,
    pub ok: bool,
}

/// Blob reads in flight at once while verifying.
const READS: usize = 16;

/// Checks the bucket's live root: every shard and blob present, each hashing to its name.
pub async fn check(remote: &Remote) -> Result<BucketCheck, DeployError> {
    let (live, _) = remote.read_pointer().await?.ok_or_else(|| {
        DeployError::store(
            remote,
            "verifying",
            "the bucket has no pointer yet; nothing is deployed there",
        )
    })?;
    let ledger_id = claim::owner_of(remote, &live).await?;
    let mut out = BucketCheck {
        target: remote.url.clone(),
        id: live.id.clone(),
        manifest: live.manifest.clone(),
        ledger_id,
        root_ledger_id: None,
        shards: 0,
        blobs: 0,
        root_damaged: false,
        missing_shards: Vec::new(),
        corrupt_shards: Vec::new(),
        missing_blobs: Vec::new(),
        corrupt_blobs: Vec::new(),
        ok: false,
    };
    let Some(root) = remote.root(&live.manifest).await?.found() else {
        out.root_damaged = true;
        return Ok(out);
    };
    // The origins' rule: the pointer's ledger and the root's must agree when both are named.
    out.root_ledger_id = root.ledger_id.clone();
    let foreign_root = matches!(
        (&live.ledger_id, &root.ledger_id),
        (Some(owner), Some(built)) if owner != built
    );
    out.shards = root.shards.len();
    let stored = shard_names(remote).await?;
    let mut blobs = BTreeSet::new();
    for (_, sha) in &root.shards {
        if !stored.contains(sha) {
            out.missing_shards.push(sha.clone());
            continue;
        }
        match read_shard(remote, sha).await {
            Ok(entries) => blobs.extend(entries.into_iter().map(|e| e.sha256)),
            Err(_) => out.corrupt_shards.push(sha.clone()),
        }
    }
    out.blobs = blobs.len();
    let present = list_names(remote, "objects").await?;
    let (here, gone): (Vec<String>, Vec<String>) =
        blobs.into_iter().partition(|b| present.contains(b));
    out.missing_blobs = gone;
    let (missing, corrupt) = check_blobs(remote, &here).await?;
    out.missing_blobs.extend(missing);
    out.corrupt_blobs = corrupt;
    out.missing_blobs.sort();
    out.corrupt_blobs.sort();
    out.ok = !out.root_damaged
        && !foreign_root
        && out.missing_shards.is_empty()
        && out.corrupt_shards.is_empty()
        && out.missing_blobs.is_empty()
        && out.corrupt_blobs.is_empty();
    Ok(out)
}

/// Reads every listed blob (a few at a time) and hashes it: those gone since the listing
/// (missing), and those whose bytes do not hash to their name (corrupt).
async fn check_blobs(
    remote: &Remote,
    listed: &[String],
) -> Result<(Vec<String>, Vec<String>), DeployError> {
    enum Found {
        Good,
        Missing(String),
        Corrupt(String),
    }
    let checked: Vec<Result<Found, DeployError>> =
        futures_util::stream::iter(listed.iter().map(|sha| async move {
            // Hashed as it streams in: 16 reads in flight hold 16 chunks, never 16 blobs.
            Ok(match remote.sha256_of(&Remote::blob_key(sha)).await? {
                Some(hash) if hash == *sha => Found::Good,
                // Gone since the listing counts as missing, not corrupt.
                None => Found::Missing(sha.clone()),
                Some(_) => Found::Corrupt(sha.clone()),
            })
        }))
        .buffer_unordered(READS)
        .collect()
        .await;
    let (mut missing, mut corrupt) = (Vec::new(), Vec::new());
    for c in checked {
        match c? {
            Found::Missing(sha) => missing.push(sha),
            Found::Corrupt(sha) => corrupt.push(sha),
            Found::Good => {}
        }
    }
    Ok((missing, corrupt))
}

/// Rounds of repair at most: a missing shard or root hides the blobs it names from a check,
/// so each round checks again after the last one put them back.
const REPAIR_ROUNDS: usize = 3;

/// `deploy --repair`: re-uploads what the live root lacks or holds corrupt, from the local
/// revision the pointer names, as journaled operations, checking again after each round
/// until the bucket verifies (a missing shard hides the blobs it names until it is back).
pub(super) async fn repair(ledger: &mut Ledger, ctx: &Ctx<'_>) -> Result<Report, DeployError> {
    let mut total: Option<Report> = None;
    for _ in 0..REPAIR_ROUNDS {
        let found = check(ctx.remote).await?;
        if found.ok {
            break;
        }
        let r = repair_round(ledger, ctx, found).await?;
        let failed = r.outcome != Outcome::Repaired;
        total = Some(match total {
            None => r,
            Some(mut t) => {
                t.blobs_uploaded += r.blobs_uploaded;
                t.bytes_uploaded += r.bytes_uploaded;
                t.outcome = r.outcome;
                t.error = r.error;
                t.operation = r.operation;
                t
            }
        });
        if failed {
            break;
        }
    }
    match total {
        Some(t) => Ok(t),
        // Nothing was damaged: nothing to do.
        None => {
            let found = check(ctx.remote).await?;
            Ok(Report::of(&ctx.remote.url, found.id, Outcome::Repaired))
        }
    }
}

/// The plan of a repair: the live root again, with the damaged blobs to upload and the
/// corrupt objects to remove first.
fn repair_plan(found: &BucketCheck, split: &layout::Split, dir: String) -> Plan {
    let damaged: BTreeSet<&String> = found
        .missing_blobs
        .iter()
        .chain(&found.corrupt_blobs)
        .collect();
    Plan {
        id: found.id.clone(),
        dir,
        root: found.manifest.clone(),
        shards: split.shards.iter().map(|s| s.sha256.clone()).collect(),
        blobs: split
            .blobs
            .iter()
            .filter(|(sha, _)| damaged.contains(sha))
            .map(|(sha, (path, ct))| (sha.clone(), path.clone(), ct.clone()))
            .collect(),
        assumed: None,
        adopt: None,
        repair: Some(Repair {
            corrupt_blobs: found.corrupt_blobs.clone(),
            corrupt_shards: found.corrupt_shards.clone(),
            corrupt_root: found.root_damaged,
        }),
    }
}

/// One round: what `found` says is missing or corrupt goes up again, as one operation.
async fn repair_round(
    ledger: &mut Ledger,
    ctx: &Ctx<'_>,
    found: BucketCheck,
) -> Result<Report, DeployError> {
    let remote = ctx.remote;
    let dir = found.id.to_string();
    let path = ctx.site.public_dir().join(REVISIONS).join(&dir);
    let manifest = Manifest::read(&path).map_err(|e| {
        DeployError::store(
            remote,
            "repairing",
            format!("the live revision {dir} is needed locally to repair from: {e}"),
        )
    })?;
    let split = layout::split(&manifest);
    if split.root.sha256 != found.manifest {
        return Err(DeployError::store(
            remote,
            "repairing",
            format!(
                "{} gives manifest {}, not the live {}; repair from the checkout that built it",
                path.display(),
                split.root.sha256,
                found.manifest
            ),
        ));
    }
    let plan = repair_plan(&found, &split, dir);
    let held = ctx
        .claim()
        .take_waiting(ledger, ctx.clock, "repairing")
        .await?;
    let id = uuid::Uuid::new_v4().simple().to_string();
    let plan_json = serde_json::to_string(&plan).expect("plans serialise");
    let now = ctx.clock.now();
    claim::holding(ledger, ctx.clock, held, async |ledger, held| {
        if !ledger.write(|tx| deploys::insert(tx, &id, &remote.key, &plan_json, held, now))? {
            return Err(DeployError::store(
                remote,
                "repairing",
                "another deploy of this target is pending; let it finish (fencepost deploy) and repair again",
            ));
        }
        let op = ledger
            .read(|tx| deploys::get(tx, &id))?
            .expect("just inserted");
        let mut r = saga::execute(ledger, ctx, op, held, false, Some(split)).await?;
        if matches!(r.outcome, Outcome::AlreadyDeployed | Outcome::Deployed) {
            r.outcome = Outcome::Repaired;
        }
        Ok(r)
    })
    .await
}
