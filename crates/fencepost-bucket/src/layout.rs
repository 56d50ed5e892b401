//! A revision's manifest as the bucket holds it: a small root naming fixed shards, each a
//! content-addressed object. Files are spread over [`SHARDS`] shards by a hash of their path,
//! so a one-page change re-uploads the root and the few shards whose files changed, not an
//! O(N) manifest; equal shards are the same object and are never uploaded twice. Pure: the
//! same local manifest always gives the same bytes, which is what lets a resumed deploy
//! verify its frozen plan instead of re-planning.

use fencepost_output::id::RevisionId;
use fencepost_output::manifest::{CacheClass, Manifest};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// Shards per manifest. At 100,000 files a shard holds about 100 entries (~15 KB) and the
/// root lists at most 1,024 shard digests (~70 KB).
pub const SHARDS: u32 = 1024;

/// What a reader needs of one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteEntry {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
    pub content_type: String,
    pub cache: CacheClass,
    pub max_age: u64,
    /// A redirect's target (see [`fencepost_output::manifest::Entry::location`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// The manifest root: a function of the revision's files alone (and of the ledger and build
/// that name it), so building the same publication revision anywhere gives the same root and
/// a redeploy of it is `already_deployed`. What changes without a new revision — the audit
/// tip, the next embargo end — lives in the pointer, never here: roots are served and kept,
/// and an instant in one would tell the public when an embargoed item goes live. (Roots
/// written before this carried both; readers ignore them.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    pub format: u32,
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    #[serde(default)]
    pub ledger_id: Option<String>,
    pub files: usize,
    /// (shard index, sha256 of the shard object), non-empty shards only, by index.
    pub shards: Vec<(u32, String)>,
}

/// One object to upload: its digest and bytes.
#[derive(Debug, Clone)]
pub struct Object {
    pub sha256: String,
    pub bytes: Vec<u8>,
}

/// A local manifest split for the bucket: the root, its shards, and every distinct blob
/// (sha256 → a path in the revision that holds those bytes, and its content type).
#[derive(Debug, Clone)]
pub struct Split {
    pub root: Object,
    pub shards: Vec<Object>,
    pub blobs: BTreeMap<String, (String, String)>,
}

pub fn shard_of(path: &str) -> u32 {
    let d = Sha256::digest(path.as_bytes());
    (u32::from(d[0]) << 8 | u32::from(d[1])) % SHARDS
}

fn object(bytes: Vec<u8>) -> Object {
    Object {
        sha256: hex::encode(Sha256::digest(&bytes)),
        bytes,
    }
}

pub fn split(m: &Manifest) -> Split {
    let mut by_shard: BTreeMap<u32, Vec<RemoteEntry>> = BTreeMap::new();
    let mut blobs = BTreeMap::new();
    for e in &m.files {
        by_shard
            .entry(shard_of(&e.path))
            .or_default()
            .push(RemoteEntry {
                path: e.path.clone(),
                sha256: e.sha256.clone(),
                bytes: e.bytes,
                content_type: e.content_type.clone(),
                cache: e.cache,
                max_age: e.max_age,
                location: e.location.clone(),
            });
        blobs
            .entry(e.sha256.clone())
            .or_insert_with(|| (e.path.clone(), e.content_type.clone()));
    }
    let mut shards = Vec::new();
    let mut index = Vec::new();
    for (i, mut entries) in by_shard {
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        let o = object(serde_json::to_vec(&entries).expect("entries serialise"));
        index.push((i, o.sha256.clone()));
        shards.push(o);
    }
    let root = Root {
        format: 1,
        id: m.id.clone(),
        ledger_id: m.ledger_id.clone(),
        files: m.files.len(),
        shards: index,
    };
    Split {
        root: object(serde_json::to_vec(&root).expect("roots serialise")),
        shards,
        blobs,
    }
}

/// A manifest read back from the bucket: path → entry.
#[derive(Debug, Clone)]
pub struct RemoteManifest {
    pub root: Root,
    pub files: HashMap<String, RemoteEntry>,
}

/// Checks that `bytes` hash to `sha256` (everything read from a bucket is checked).
pub fn verified(bytes: &[u8], sha256: &str) -> bool {
    hex::encode(Sha256::digest(bytes)) == sha256
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Roots and pointers in a bucket are read by every origin, the edge Worker and the
    /// releases before this one: their keys and order are a contract.
    #[test]
    fn roots_and_pointers_keep_their_keys_in_their_order() {
        let root = Root {
            format: 1,
            id: RevisionId::new(4, "bb"),
            ledger_id: Some("L".into()),
            files: 2,
            shards: vec![(0, "s0".into())],
        };
        let json = serde_json::to_string(&root).unwrap();
        assert_eq!(
            json,
            r#"{"format":1,"revision":4,"build":"bb","ledger_id":"L","files":2,"shards":[[0,"s0"]]}"#
        );
        assert_eq!(serde_json::from_str::<Root>(&json).unwrap(), root);
        let mut p = crate::pointer::RemotePointer::new(
            RevisionId::new(4, "bb"),
            "m",
            fencepost_core::clock::Instant(0),
        );
        p.held_below = Some(5);
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(
            json,
            r#"{"revision":4,"build":"bb","manifest":"m","deployed_at":"1970-01-01T00:00:00Z","next_change_at":null,"held_below":5,"live_builds":["bb"]}"#
        );
        assert_eq!(
            serde_json::from_slice::<crate::pointer::RemotePointer>(json.as_bytes()).unwrap(),
            p
        );
    }
    use fencepost_output::manifest::Entry;

    fn manifest(n: usize, changed: Option<usize>) -> Manifest {
        Manifest::of_files(
            (0..n)
                .map(|i| Entry {
                    path: format!("answers/{i}/index.html"),
                    sha256: format!("{:064x}", i + usize::from(changed == Some(i)) * 7_777_777),
                    bytes: 10,
                    content_type: "text/html; charset=utf-8".into(),
                    cache: CacheClass::Content,
                    max_age: 0,
                    key: String::new(),
                    links: vec![],
                    location: None,
                })
                .collect(),
        )
    }

    #[test]
    fn splitting_is_deterministic_and_a_one_file_change_touches_one_shard() {
        let a = split(&manifest(5_000, None));
        let again = split(&manifest(5_000, None));
        assert_eq!(a.root.sha256, again.root.sha256);
        let b = split(&manifest(5_000, Some(42)));
        let old: std::collections::HashSet<&str> =
            a.shards.iter().map(|s| s.sha256.as_str()).collect();
        let new_shards: Vec<_> = b
            .shards
            .iter()
            .filter(|s| !old.contains(s.sha256.as_str()))
            .collect();
        assert_eq!(new_shards.len(), 1);
        assert!(new_shards[0].bytes.len() < 2_000, "a shard is a few KB");
        assert_ne!(a.root.sha256, b.root.sha256);
        assert_eq!(a.blobs.len(), 5_000);
    }

    #[test]
    fn the_root_does_not_depend_on_the_audit_tip() {
        let a = manifest(10, None);
        let mut b = a.clone();
        b.audit_tip = Some(fencepost_output::manifest::AuditAnchor {
            seq: 9,
            hash: Some("h".into()),
        });
        assert_eq!(split(&a).root.sha256, split(&b).root.sha256);
        let text = String::from_utf8(split(&b).root.bytes).unwrap();
        assert!(
            !text.contains("next_change_at") && !text.contains("audit"),
            "{text}"
        );
    }
}
