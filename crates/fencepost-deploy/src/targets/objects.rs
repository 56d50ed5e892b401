//! A bucket's objects. Written: blobs (checked against their digest as they are read from
//! the revision) and shards, each only when missing, many at a time. Read back: the names
//! under a folder (one listing), a root's shards checked against their digests, and whether
//! every object a root names is there. Deploy, rollback, gc, repair and verify all go
//! through these.

use super::DeployError;
use fencepost_bucket::layout::{self, RemoteEntry, Root};
use fencepost_bucket::read::Read;
use fencepost_bucket::remote::Remote;
use futures_util::StreamExt;
use std::collections::HashSet;
use std::path::Path;

/// Blob uploads in flight at once (`hugo deploy` uses 10 workers; S3 serves far more).
pub const UPLOADS: usize = 16;
/// Blobs uploaded between two extensions of the lease.
pub const UPLOAD_CHUNK: usize = 512;

/// The names under `dir/` (one listing).
pub async fn list_names(remote: &Remote, dir: &str) -> Result<HashSet<String>, DeployError> {
    Ok(remote
        .list(dir)
        .await?
        .into_iter()
        .map(|(n, _)| n)
        .collect())
}

/// The shard digests the bucket holds (one listing).
pub async fn shard_names(remote: &Remote) -> Result<HashSet<String>, DeployError> {
    Ok(remote
        .list("manifests/shards")
        .await?
        .into_iter()
        .filter_map(|(name, _)| name.strip_suffix(".json").map(str::to_string))
        .collect())
}

/// What of a root in the bucket is missing: (shards, blobs), by one listing of each.
pub async fn root_objects_missing(
    remote: &Remote,
    root: &str,
) -> Result<(Vec<String>, Vec<String>), DeployError> {
    let incomplete = |missing: String| DeployError::Incomplete {
        target: remote.url.clone(),
        root: root.to_string(),
        missing,
    };
    let parsed = match remote.root(root).await? {
        Read::Found(parsed) => parsed,
        Read::Missing => {
            return Err(incomplete(format!(
                "its manifest root manifests/{root}.json"
            )))
        }
        Read::Corrupt => {
            return Err(incomplete(format!(
                "manifests/{root}.json does not hash to its name"
            )))
        }
        Read::Unparsable(why) => {
            return Err(DeployError::store(remote, "reading a manifest root", why))
        }
    };
    let stored = shard_names(remote).await?;
    let missing_shards: Vec<String> = parsed
        .shards
        .iter()
        .map(|(_, s)| s.clone())
        .filter(|s| !stored.contains(s))
        .collect();
    let mut blobs = HashSet::new();
    for (_, sha) in parsed.shards.iter().filter(|(_, s)| stored.contains(s)) {
        for e in read_shard(remote, sha).await? {
            blobs.insert(e.sha256);
        }
    }
    let present = list_names(remote, "objects").await?;
    let mut missing_blobs: Vec<String> =
        blobs.into_iter().filter(|b| !present.contains(b)).collect();
    missing_blobs.sort();
    Ok((missing_shards, missing_blobs))
}

/// A short description of missing objects for an error.
pub fn describe_missing(shards: &[String], blobs: &[String]) -> String {
    let mut parts = Vec::new();
    if !shards.is_empty() {
        parts.push(format!(
            "{} shard(s) (first manifests/shards/{}.json)",
            shards.len(),
            shards[0]
        ));
    }
    if !blobs.is_empty() {
        parts.push(format!(
            "{} blob(s) (first objects/{})",
            blobs.len(),
            blobs[0]
        ));
    }
    parts.join(" and ")
}

/// The shard digests a manifest root in the bucket names (its bytes checked against its
/// name); `None` if it cannot be read.
pub async fn root_shards(
    remote: &Remote,
    manifest: &str,
) -> Result<Option<HashSet<String>>, DeployError> {
    Ok(remote
        .root(manifest)
        .await?
        .found()
        .map(|r| r.shards.into_iter().map(|(_, s)| s).collect()))
}

/// The shards of a root, verified.
pub async fn read_entries(remote: &Remote, root: &Root) -> Result<Vec<RemoteEntry>, DeployError> {
    let mut out = Vec::new();
    for (_, sha) in &root.shards {
        out.extend(read_shard(remote, sha).await?);
    }
    Ok(out)
}

/// One shard, verified against its name.
pub async fn read_shard(remote: &Remote, sha: &str) -> Result<Vec<RemoteEntry>, DeployError> {
    let why = match remote.shard(sha).await? {
        Read::Found(entries) => return Ok(entries),
        Read::Missing => format!("shard {sha} is missing"),
        Read::Corrupt => format!("shard {sha} does not hash to its name"),
        Read::Unparsable(why) => why,
    };
    Err(DeployError::store(remote, "reading a manifest", why))
}

/// Reads one blob from the revision, checks it against its digest and uploads it if the
/// bucket lacks it. Returns (this call created it, its size).
pub async fn upload_blob(
    remote: &Remote,
    dir: &Path,
    sha: &str,
    path: &str,
    content_type: &str,
    redo: bool,
) -> Result<(bool, u64), DeployError> {
    if redo {
        tracing::warn!(blob = %sha, path = %path, "a blob an earlier attempt uploaded is missing from the bucket; uploading it again");
    }
    upload_blob_as(
        remote,
        &Remote::blob_key(sha),
        (dir, path),
        (sha, content_type),
    )
    .await
}

/// [`upload_blob`] under `key` (a preview's own folder keeps its blobs elsewhere).
pub async fn upload_blob_as(
    remote: &Remote,
    key: &str,
    (dir, path): (&Path, &str),
    (sha, content_type): (&str, &str),
) -> Result<(bool, u64), DeployError> {
    let local = dir.join(path);
    let bytes = std::fs::read(&local).map_err(|source| DeployError::Io {
        path: local.clone(),
        source,
    })?;
    if !layout::verified(&bytes, sha) {
        return Err(DeployError::store(
            remote,
            "verifying a blob",
            format!(
                "{} does not hash to {sha} as its manifest says",
                local.display()
            ),
        ));
    }
    let len = bytes.len() as u64;
    let created = remote.create(key, bytes, Some(content_type)).await?;
    Ok((created, len))
}

/// Uploads the shards the bucket lacks; returns the bytes this call wrote.
pub async fn upload_shards(
    remote: &Remote,
    shards: &[&layout::Object],
) -> Result<u64, DeployError> {
    let results: Vec<Result<(bool, u64), DeployError>> =
        futures_util::stream::iter(shards.iter().map(|shard| async move {
            let created = remote
                .create(
                    &Remote::shard_key(&shard.sha256),
                    shard.bytes.clone(),
                    Some("application/json"),
                )
                .await?;
            Ok((created, shard.bytes.len() as u64))
        }))
        .buffer_unordered(UPLOADS)
        .collect()
        .await;
    let mut bytes = 0;
    for r in results {
        let (created, len) = r?;
        if created {
            bytes += len;
        }
    }
    Ok(bytes)
}

/// The blobs of `split` that `present` (a listing of the bucket's objects) lacks: (digest,
/// path, content type).
pub fn missing_blobs(
    split: &layout::Split,
    present: &HashSet<String>,
) -> Vec<(String, String, String)> {
    split
        .blobs
        .iter()
        .filter(|(sha, _)| !present.contains(*sha))
        .map(|(sha, (path, ct))| (sha.clone(), path.clone(), ct.clone()))
        .collect()
}
