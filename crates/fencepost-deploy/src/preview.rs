//! A preview to a target's private area (`fencepost preview deploy|list|rm`, issue 80; the
//! layout in `fencepost_bucket::preview`).
//!
//! 1. Split the built preview's manifest as a deploy does (root, shards, blobs).
//! 2. Read what the live public revision holds of it (its root, and the live shards at the
//!    indexes where the preview's differ: O(changed)) and list the preview's own folder: a
//!    shard or blob the public revision has is reused where it is (it is public already); one
//!    the preview's folder has is kept; the rest are uploaded there.
//! 3. Upload the root into the preview's folder, then write its pointer — last, so an origin
//!    never follows a pointer to objects that are not there yet.
//! 4. Remove what the preview's folder holds that neither this pointer nor the one it
//!    replaced names (a request still reading the previous one finds its objects).
//!
//! Not a saga and not in the ledger: every object is content-addressed and the pointer goes
//! last, so a run killed anywhere is finished by running it again (it re-lists and uploads
//! what is missing) and nothing public ever changes. Nothing here writes outside
//! `previews/<NAME>/`: the public pointer, manifests, objects and the deploy log are only read.

use crate::targets::objects::{list_names, upload_blob_as, UPLOADS};
use crate::targets::DeployError;
use fencepost_bucket::layout;
use fencepost_bucket::preview::{self, PreviewPointer};
use fencepost_bucket::remote::Remote;
use fencepost_core::clock::Instant;
use fencepost_output::manifest::Manifest;
use futures_util::StreamExt;
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;

/// What a preview is made as: its name, and what its pointer says beside the files.
#[derive(Debug, Clone)]
pub struct Making {
    pub name: String,
    pub as_of: Option<Instant>,
    pub drafts: bool,
    pub made_at: Instant,
    pub base_url: String,
}

/// What a preview deploy did.
#[derive(Debug, Clone, Serialize)]
pub struct Deployed {
    pub name: String,
    pub target: String,
    pub revision: String,
    pub files: usize,
    /// Objects written (blobs, shards, the root and the pointer) and their bytes.
    pub uploaded_objects: usize,
    pub uploaded_bytes: u64,
    /// Blobs and shards read from the public area instead of uploaded.
    pub reused_public: usize,
    /// Blobs and shards a previous deploy of this preview left in its folder.
    pub reused_own: usize,
    /// Objects of earlier deploys of this preview removed.
    pub removed: usize,
    pub ms: u64,
}

/// Deploys the preview built in `dir` to `remote` (see the module doc).
pub async fn deploy(remote: &Remote, dir: &Path, making: &Making) -> Result<Deployed, DeployError> {
    let started = std::time::Instant::now();
    let name = &making.name;
    let manifest = Manifest::read(dir)?;
    refuse_foreign(remote, &manifest).await?;
    let split = layout::split(&manifest);
    let previous = read(remote, name).await?;
    let held = Held::list(remote, name, &split, &manifest).await?;
    let mut d = Deployed {
        name: name.clone(),
        target: fencepost_core::store::names::shown(&remote.url),
        revision: manifest.id.to_string(),
        files: manifest.files.len(),
        uploaded_objects: 0,
        uploaded_bytes: 0,
        reused_public: 0,
        reused_own: 0,
        removed: 0,
        ms: 0,
    };
    let (pointer, blobs, shards) = plan(&split, &manifest, making, &held, &mut d);
    upload_blobs(remote, dir, name, &blobs, &mut d).await?;
    fencepost_core::fail_point!("preview.after_blobs");
    for s in shards {
        let key = preview::key(name, &format!("manifests/shards/{}.json", s.sha256));
        put_new(remote, &key, s.bytes.clone(), &mut d).await?;
    }
    put_new(
        remote,
        &pointer.root_key(),
        split.root.bytes.clone(),
        &mut d,
    )
    .await?;
    fencepost_core::fail_point!("preview.before_pointer");
    let bytes = serde_json::to_vec_pretty(&pointer).expect("pointers serialise");
    d.uploaded_bytes += bytes.len() as u64;
    d.uploaded_objects += 1;
    remote.put(&preview::pointer_key(name), bytes).await?;
    d.removed = tidy(remote, &pointer, previous.as_ref()).await?;
    d.ms = started.elapsed().as_millis() as u64;
    Ok(d)
}

/// A bucket another ledger owns takes no preview of this one: a preview of the wrong site
/// (a `--to` naming a co-tenant's bucket) would sit beside that site's pages, under its links.
async fn refuse_foreign(remote: &Remote, manifest: &Manifest) -> Result<(), DeployError> {
    let (Some(ours), Some((live, _))) = (&manifest.ledger_id, remote.read_pointer().await?) else {
        return Ok(());
    };
    crate::targets::claim::check_owner(remote, Some(&live), ours, false).await?;
    Ok(())
}

/// What the public area holds of this preview's objects, and what its own folder holds.
struct Held {
    public_blobs: HashSet<String>,
    public_shards: HashSet<String>,
    own_blobs: HashSet<String>,
    own_shards: HashSet<String>,
}

impl Held {
    /// The public side is read from the live revision, not listed: every shard its root names
    /// is public, and so is every blob such a shard names (a deploy uploads a shard's blobs
    /// before its root); for each of the preview's shards the live root lacks, the live shard
    /// at the same index is read for the blobs it names. One pointer, one root and a shard per
    /// changed shard — O(changed), where a listing of `objects/` is O(site). The preview's own
    /// folder is listed (it holds what its last deploys uploaded).
    async fn list(
        remote: &Remote,
        name: &str,
        split: &layout::Split,
        manifest: &Manifest,
    ) -> Result<Held, DeployError> {
        let mut held = Held {
            public_blobs: HashSet::new(),
            public_shards: HashSet::new(),
            own_blobs: list_names(remote, &preview::key(name, "objects")).await?,
            own_shards: shard_names(remote, &preview::key(name, "manifests/shards")).await?,
        };
        let Some((live, _)) = remote.read_pointer().await? else {
            return Ok(held);
        };
        let Some(root) = remote.root(&live.manifest).await?.found() else {
            return Ok(held);
        };
        let live_at: std::collections::HashMap<u32, String> = root.shards.into_iter().collect();
        held.public_shards = live_at.values().cloned().collect();
        let ours: layout::Root =
            serde_json::from_slice(&split.root.bytes).expect("a root just made parses");
        let ours_at: std::collections::HashMap<u32, String> = ours.shards.into_iter().collect();
        for e in &manifest.files {
            let at = layout::shard_of(&e.path);
            if ours_at
                .get(&at)
                .is_some_and(|s| held.public_shards.contains(s))
            {
                held.public_blobs.insert(e.sha256.clone());
            }
        }
        for (at, sha) in &ours_at {
            let Some(theirs) = live_at.get(at).filter(|t| *t != sha) else {
                continue;
            };
            let entries = remote.shard(theirs).await?.found().unwrap_or_default();
            held.public_blobs
                .extend(entries.into_iter().map(|e| e.sha256));
        }
        Ok(held)
    }
}

/// The preview's pointer, and what must go up: each blob and shard the public area holds is
/// read from there; the rest are the preview's own, uploaded unless its folder has them.
fn plan<'s>(
    split: &'s layout::Split,
    manifest: &Manifest,
    making: &Making,
    held: &Held,
    d: &mut Deployed,
) -> (
    PreviewPointer,
    Vec<(String, String, String)>,
    Vec<&'s layout::Object>,
) {
    let mut pointer = PreviewPointer {
        format: 1,
        name: making.name.clone(),
        revision: manifest.id.revision,
        build: manifest.id.fingerprint.clone(),
        manifest: split.root.sha256.clone(),
        as_of: making.as_of,
        drafts: making.drafts,
        made_at: making.made_at,
        base_url: making.base_url.clone(),
        files: manifest.files.len(),
        shards: Vec::new(),
        objects: Vec::new(),
        all_own: false,
    };
    let mut blobs = Vec::new();
    for (sha, (path, ct)) in &split.blobs {
        if held.public_blobs.contains(sha) {
            d.reused_public += 1;
            continue;
        }
        pointer.objects.push(sha.clone());
        match held.own_blobs.contains(sha) {
            true => d.reused_own += 1,
            false => blobs.push((sha.clone(), path.clone(), ct.clone())),
        }
    }
    let mut shards = Vec::new();
    for s in &split.shards {
        if held.public_shards.contains(&s.sha256) {
            d.reused_public += 1;
            continue;
        }
        pointer.shards.push(s.sha256.clone());
        match held.own_shards.contains(&s.sha256) {
            true => d.reused_own += 1,
            false => shards.push(s),
        }
    }
    pointer.objects.sort();
    pointer.shards.sort();
    if d.reused_public == 0 {
        pointer.all_own = true;
        pointer.objects.clear();
        pointer.shards.clear();
    }
    (pointer, blobs, shards)
}

async fn put_new(
    remote: &Remote,
    key: &str,
    bytes: Vec<u8>,
    d: &mut Deployed,
) -> Result<(), DeployError> {
    let len = bytes.len() as u64;
    if remote.create(key, bytes, Some("application/json")).await? {
        d.uploaded_objects += 1;
        d.uploaded_bytes += len;
    }
    Ok(())
}

async fn upload_blobs(
    remote: &Remote,
    dir: &Path,
    name: &str,
    blobs: &[(String, String, String)],
    d: &mut Deployed,
) -> Result<(), DeployError> {
    let results: Vec<Result<(bool, u64), DeployError>> =
        futures_util::stream::iter(blobs.iter().map(|(sha, path, ct)| async move {
            let key = preview::key(name, &format!("objects/{sha}"));
            upload_blob_as(remote, &key, (dir, path), (sha, ct)).await
        }))
        .buffer_unordered(UPLOADS)
        .collect()
        .await;
    for r in results {
        let (created, len) = r?;
        if created {
            d.uploaded_objects += 1;
            d.uploaded_bytes += len;
        }
    }
    Ok(())
}

async fn shard_names(remote: &Remote, dir: &str) -> Result<HashSet<String>, DeployError> {
    Ok((list_names(remote, dir).await?.into_iter())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect())
}

/// Preview `name`'s pointer, if it has one.
pub async fn read(remote: &Remote, name: &str) -> Result<Option<PreviewPointer>, DeployError> {
    match remote.get(&preview::pointer_key(name)).await? {
        None => Ok(None),
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| DeployError::store(remote, &format!("reading preview {name}"), e)),
    }
}

/// Removes the objects of the preview's folder that neither `now` nor `before` names.
async fn tidy(
    remote: &Remote,
    now: &PreviewPointer,
    before: Option<&PreviewPointer>,
) -> Result<usize, DeployError> {
    let mut keep: HashSet<String> = [preview::pointer_key(&now.name)].into();
    for p in std::iter::once(now).chain(before) {
        keep.extend(own_keys(remote, p).await?);
    }
    let base = preview::key(&now.name, "");
    let mut removed = 0;
    for (rel, _) in remote.list(base.trim_end_matches('/')).await? {
        let key = format!("{base}{rel}");
        if !keep.contains(&key) {
            remote.delete(&key).await?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// The keys of the objects in the preview's own folder that `p` names: from its lists, or —
/// when everything is its own — from its root and shards.
async fn own_keys(remote: &Remote, p: &PreviewPointer) -> Result<HashSet<String>, DeployError> {
    let mut keys: HashSet<String> = [p.root_key()].into();
    if !p.all_own {
        keys.extend(p.objects.iter().map(|s| p.blob_key(s)));
        keys.extend(p.shards.iter().map(|s| p.shard_key(s)));
        return Ok(keys);
    }
    let (shards, blobs) = named(remote, p).await?;
    keys.extend(shards.iter().map(|s| p.shard_key(s)));
    keys.extend(blobs.iter().map(|b| p.blob_key(b)));
    Ok(keys)
}

/// The shards and blobs preview `p` names, by digest: its root and its shards, each read
/// where `p` keeps it and checked against its digest (one that cannot be read names nothing).
async fn named(
    remote: &Remote,
    p: &PreviewPointer,
) -> Result<(Vec<String>, Vec<String>), DeployError> {
    let Some(root) = remote.root_at(&p.root_key(), &p.manifest).await?.found() else {
        return Ok((Vec::new(), Vec::new()));
    };
    let mut blobs = Vec::new();
    for (_, sha) in &root.shards {
        let entries = remote.shard_at(&p.shard_key(sha), sha).await?.found();
        blobs.extend(entries.unwrap_or_default().into_iter().map(|e| e.sha256));
    }
    let shards = root.shards.into_iter().map(|(_, s)| s).collect();
    Ok((shards, blobs))
}

/// One preview as `preview list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub name: String,
    pub revision: String,
    pub as_of: Option<Instant>,
    pub drafts: bool,
    pub made_at: Instant,
    pub age_secs: i64,
    pub files: usize,
}

/// Every preview of the target, by name.
pub async fn list(remote: &Remote, now: Instant) -> Result<Vec<Listed>, DeployError> {
    Ok((pointers(remote).await?.into_iter())
        .map(|p| Listed {
            revision: format!("{}-{}", p.revision, p.build),
            age_secs: (now.0 - p.made_at.0) / 1000,
            name: p.name,
            as_of: p.as_of,
            drafts: p.drafts,
            made_at: p.made_at,
            files: p.files,
        })
        .collect())
}

/// The pointer of every preview of the target, by name (one listing of `previews/`).
async fn pointers(remote: &Remote) -> Result<Vec<PreviewPointer>, DeployError> {
    let mut names: Vec<String> = (remote.list(preview::AREA).await?.into_iter())
        .filter_map(|(rel, _)| rel.strip_suffix("/preview.json").map(str::to_string))
        .filter(|n| preview::check_name(n).is_ok())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        out.extend(read(remote, &name).await?);
    }
    Ok(out)
}

/// Removes preview `name` whole: its pointer first (origins stop serving it at once), then
/// everything in its folder. Returns how many objects were removed (0: there was none).
pub async fn remove(remote: &Remote, name: &str) -> Result<usize, DeployError> {
    let base = preview::key(name, "");
    let pointer = preview::pointer_key(name);
    let had = remote.exists(&pointer).await?;
    remote.delete(&pointer).await?;
    let mut removed = usize::from(had);
    for (rel, _) in remote.list(base.trim_end_matches('/')).await? {
        remote.delete(&format!("{base}{rel}")).await?;
        removed += 1;
    }
    Ok(removed)
}

/// Removes the previews deployed more than `keep_days` days before `now` (`gc`); returns their
/// names.
pub async fn prune(
    remote: &Remote,
    now: Instant,
    keep_days: u64,
) -> Result<Vec<String>, DeployError> {
    let limit = (keep_days as i64).saturating_mul(86_400);
    let mut removed = Vec::new();
    for p in list(remote, now).await? {
        if p.age_secs > limit {
            remove(remote, &p.name).await?;
            tracing::info!(preview = %p.name, made_at = %p.made_at, keep_days, "removed a preview older than preview.keep_days");
            removed.push(p.name);
        }
    }
    Ok(removed)
}

/// The public objects the target's previews read (what public `gc` keeps): blob and shard
/// digests.
pub async fn public_objects_in_use(remote: &Remote) -> Result<HashSet<String>, DeployError> {
    let mut used = HashSet::new();
    for p in pointers(remote).await? {
        if p.all_own {
            continue;
        }
        let (shards, blobs) = named(remote, &p).await?;
        used.extend(shards.into_iter().filter(|s| !p.shards.contains(s)));
        used.extend(blobs.into_iter().filter(|b| !p.objects.contains(b)));
    }
    Ok(used)
}
