//! The transparency log across deploys: a revision whose log does not extend the one the
//! bucket serves is refused, as a bucket of another ledger is (`docs/transparency.md`). A
//! reader who saved the live checkpoint must never be shown a log that shrank or was
//! rewritten: the check runs before anything is uploaded.

use super::DeployError;
use fencepost_bucket::layout;
use fencepost_bucket::remote::{Remote, RemotePointer};
use fencepost_tlog::check::Source;
use std::path::{Path, PathBuf};

const CHECKPOINT: &str = ".well-known/fencepost/log/checkpoint";

/// The revision folder's `/.well-known/fencepost/` files.
struct Folder(PathBuf);

impl Source for Folder {
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, String> {
        match std::fs::read(self.0.join(path)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Refuses the revision in `local` when the live revision serves a log it does not extend.
pub(super) async fn check_extends(
    remote: &Remote,
    live: &RemotePointer,
    local: &Path,
) -> Result<(), DeployError> {
    let Some(old) = live_checkpoint(remote, live).await? else {
        return Ok(());
    };
    let refuse = |why: String| DeployError::ForeignLog {
        target: remote.url.clone(),
        why,
    };
    let folder = Folder(local.join(".well-known/fencepost"));
    if folder.get("log/checkpoint").map_err(&refuse)?.is_none() {
        return Err(refuse("this revision has no log at all".into()));
    }
    fencepost_tlog::check::extends(&folder, &old).map_err(|e| refuse(e.to_string()))
}

/// The live revision's checkpoint, read through its manifest and verified against the
/// digests that name it; `None` when it has no log (or the bucket no whole manifest, which
/// the deploy's own checks report).
async fn live_checkpoint(
    remote: &Remote,
    live: &RemotePointer,
) -> Result<Option<Vec<u8>>, DeployError> {
    let Some(root) = remote.root(&live.manifest).await?.found() else {
        return Ok(None);
    };
    let index = layout::shard_of(CHECKPOINT);
    let Some((_, shard)) = root.shards.iter().find(|(i, _)| *i == index) else {
        return Ok(None);
    };
    let Some(entries) = remote.shard(shard).await?.found() else {
        return Ok(None);
    };
    let Some(entry) = entries.iter().find(|e| e.path == CHECKPOINT) else {
        return Ok(None);
    };
    Ok(remote.blob(&entry.sha256).await?.found())
}
