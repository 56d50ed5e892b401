//! The frozen plan of a deploy operation, as the ledger journals it: what the saga carries
//! out, and what the target's claim reads to know which revision an operation holds.

use fencepost_output::id::RevisionId;
use serde::{Deserialize, Serialize};

/// The frozen plan of one operation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    /// `<R>-<B>` under `public/revisions/`.
    pub dir: String,
    /// sha256 of the manifest root. It content-addresses the shards, which list every file:
    /// the revision's whole blob list is frozen through it.
    pub root: String,
    pub shards: Vec<String>,
    /// The blobs to upload: (sha256, a path in the revision with those bytes, content type).
    /// Every blob of the revision, unless `assumed` says which were known to be there.
    pub blobs: Vec<(String, String, String)>,
    /// The manifest the bucket's pointer named when planning, whose blobs and shards were
    /// taken as present (so only the others are listed in `blobs`). Checked again when the
    /// blobs go up; if the pointer moved meanwhile, the bucket is listed instead.
    #[serde(default)]
    pub assumed: Option<String>,
    /// `--adopt`: the ledger whose bucket this operation takes over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adopt: Option<String>,
    /// `--repair`: the corrupt objects removed before `blobs` (what was missing or corrupt)
    /// go up again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<Repair>,
}

/// The corrupt objects a repair found in the live root.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Repair {
    pub corrupt_blobs: Vec<String>,
    pub corrupt_shards: Vec<String>,
    /// The root itself did not hash to its name.
    #[serde(default)]
    pub corrupt_root: bool,
}
