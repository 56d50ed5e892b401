//! `rollback --to` on a site that keeps a transparency log: the revision rolled back to is
//! re-issued in the bucket before the pointer moves — its files, and the log brought to it
//! (its change entries and revision entry appended in the ledger, the tiles no root holds yet
//! and the signed checkpoint uploaded as blobs), under a new manifest root of the same
//! revision. The pointer then moves to that root: the log the bucket serves only grows.
//! (The local side of the same rule: `build::transparency::reissue`.)

use super::HeldRevision;
use crate::targets::DeployError;
use fencepost_bucket::layout::{self, RemoteEntry, Root};
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_build::transparency as log;
use fencepost_build::well_known::{served_items, LOG_DIR};
use fencepost_ledger::Ledger;
use fencepost_output::manifest::{Entry, Manifest};
use fencepost_site::Site;
use std::collections::HashMap;

/// The root to point at for `chosen`: on a site without a log, its own; else a new root of
/// the same revision with the log brought to it (see the module doc).
pub(super) async fn root_for(
    site: &Site,
    ledger: &mut Ledger,
    remote: &Remote,
    chosen: &HeldRevision,
    live: Option<&RemotePointer>,
) -> Result<String, DeployError> {
    let fail = |e: &dyn std::fmt::Display| {
        DeployError::store(
            remote,
            "re-issuing the revision with the transparency log",
            e,
        )
    };
    let signer = log::signer(site).map_err(|e| fail(&e))?;
    let files = entries_of(remote, &chosen.root).await?;
    let Some(signer) = signer else {
        return without_log(remote, chosen, &files).await;
    };
    let mut have: HashMap<String, RemoteEntry> = match live {
        Some(p) => match remote.root(&p.manifest).await?.found() {
            Some(root) => entries_of(remote, &root).await?,
            None => HashMap::new(),
        },
        None => HashMap::new(),
    };
    have.extend(files.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut sorted: Vec<&RemoteEntry> = files
        .values()
        .filter(|e| !e.path.starts_with(LOG_DIR))
        .collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    let digest = log::files_digest_of(sorted.iter().map(|e| (e.path.as_str(), e.sha256.as_str())));
    let served = served_items(sorted.iter().map(|e| (e.path.as_str(), e.sha256.as_str())));
    let id = &chosen.root.id;
    let audit = ledger.read(|tx| fencepost_ledger::audit::tip_at_revision(tx, id.revision))?;
    let ledger_id = chosen.root.ledger_id.clone().unwrap_or_default();
    let revision = log::revision_entry(&ledger_id, id, &digest, audit.as_deref());
    let appended = log::roll_back_to(ledger, &served, &revision, id.revision)?;
    fencepost_core::fail_point!("rollback.remote.after_log_append");
    let known = |p: &str| have.contains_key(p);
    let made = log::log_files(ledger, &signer, appended, &known)?;
    let manifest = Manifest {
        id: id.clone(),
        ledger_id: chosen.root.ledger_id.clone(),
        audit_tip: None,
        preview: false,
        broken_links: Vec::new(),
        files: sorted.iter().map(|e| entry(e)).collect(),
    };
    upload_root(remote, manifest, made, &have).await
}

/// On a site whose log is turned off: `chosen`'s own root when it serves no log, else a new
/// root of the same revision without its log — never the shorter log it was built with,
/// which readers who saw a later one would take for a log rewritten.
async fn without_log(
    remote: &Remote,
    chosen: &HeldRevision,
    files: &HashMap<String, RemoteEntry>,
) -> Result<String, DeployError> {
    if !files.keys().any(|p| p.starts_with(LOG_DIR)) {
        return Ok(chosen.sha256.clone());
    }
    tracing::warn!(revision = %chosen.root.id, "the log is turned off: the revision rolled back to is re-issued without the log it was built with");
    let mut kept: Vec<&RemoteEntry> = files
        .values()
        .filter(|e| !e.path.starts_with(LOG_DIR))
        .collect();
    kept.sort_by(|a, b| a.path.cmp(&b.path));
    let manifest = Manifest {
        id: chosen.root.id.clone(),
        ledger_id: chosen.root.ledger_id.clone(),
        audit_tip: None,
        preview: false,
        broken_links: Vec::new(),
        files: kept.iter().map(|e| entry(e)).collect(),
    };
    upload_root(remote, manifest, Vec::new(), &HashMap::new()).await
}

/// Uploads the log files made now and the new root (its shards first) of `manifest` with the
/// log's files joined to it; the root's name.
async fn upload_root(
    remote: &Remote,
    mut manifest: Manifest,
    made: Vec<(String, Option<Vec<u8>>)>,
    have: &HashMap<String, RemoteEntry>,
) -> Result<String, DeployError> {
    for (path, bytes) in made {
        let e = match bytes {
            Some(bytes) => {
                let e = log::entry_of(&path, &bytes);
                remote
                    .create(&Remote::blob_key(&e.sha256), bytes, Some(&e.content_type))
                    .await?;
                e
            }
            None => entry(&have[&path]),
        };
        manifest.files.push(e);
    }
    manifest.files.sort_by(|a, b| a.path.cmp(&b.path));
    let split = layout::split(&manifest);
    let shards: Vec<&layout::Object> = split.shards.iter().collect();
    crate::targets::objects::upload_shards(remote, &shards).await?;
    let root = &split.root;
    remote
        .create(
            &Remote::root_key(&root.sha256),
            root.bytes.clone(),
            Some("application/json"),
        )
        .await?;
    Ok(root.sha256.clone())
}

/// Every entry of a root, by path, each shard verified.
async fn entries_of(
    remote: &Remote,
    root: &Root,
) -> Result<HashMap<String, RemoteEntry>, DeployError> {
    let mut out = HashMap::new();
    for (_, sha) in &root.shards {
        let Some(entries) = remote.shard(sha).await?.found() else {
            return Err(DeployError::Incomplete {
                target: remote.url.clone(),
                root: root.id.to_string(),
                missing: format!("shard {sha}"),
            });
        };
        out.extend(entries.into_iter().map(|e| (e.path.clone(), e)));
    }
    Ok(out)
}

fn entry(e: &RemoteEntry) -> Entry {
    Entry {
        path: e.path.clone(),
        sha256: e.sha256.clone(),
        bytes: e.bytes,
        content_type: e.content_type.clone(),
        cache: e.cache,
        max_age: e.max_age,
        key: format!("copy:{}", e.sha256),
        links: Vec::new(),
        location: e.location.clone(),
    }
}
