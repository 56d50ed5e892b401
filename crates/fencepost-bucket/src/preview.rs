//! A preview's area in a bucket (issue 80): a revision as of an instant, kept where no public
//! pointer, manifest or listing of the public area names it, and served only to a holder of a
//! signed link ([`token`]).
//!
//! ```text
//! <prefix>/previews/<NAME>/preview.json                    the preview's pointer (JSON)
//! <prefix>/previews/<NAME>/manifests/<sha256>.json         its manifest root
//! <prefix>/previews/<NAME>/manifests/shards/<sha256>.json  the shards the public area lacks
//! <prefix>/previews/<NAME>/objects/<sha256>                the files the public area lacks
//! ```
//!
//! **Chosen**: a preview reuses every shard and blob the public area already holds (they are
//! public by construction: a public manifest names them) and uploads only the others into its
//! own folder; its pointer lists which ones are its own, so an origin reads each object from
//! exactly one place. A preview deploy of a large site with one scheduled change uploads that
//! change's files, the shards naming them, a root and a pointer. **Rejected**: previews'
//! objects in the public `objects/` (a reader of the public area — a public bucket, a listing —
//! would find an embargoed page's bytes there, and public `gc` would delete them); an area
//! shared by all previews (a removed preview's objects would need reference counts — one
//! folder per preview is removed whole).
//!
//! The public area knows nothing of previews: `deploy`, `rollback` and the pointer never read
//! or write `previews/`; `gc` keeps the public objects a preview still reads and removes
//! previews older than `preview.keep_days`.

pub mod token;

use fencepost_core::clock::Instant;
use serde::{Deserialize, Serialize};

/// The folder of all previews, under the target's prefix.
pub const AREA: &str = "previews";

/// The query parameter a link carries its token in.
pub const TOKEN_PARAM: &str = "fp_preview";

/// The cookie a valid token is exchanged for (scoped to the preview's path).
pub const COOKIE: &str = "fp_preview";

/// The path every origin serves previews under (after the site's base path).
pub const URL_PREFIX: &str = "/.preview/";

/// Why a preview name is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadName(pub String);

impl std::fmt::Display for BadName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "preview name {:?}: use 1 to 64 of a-z, 0-9, '-', '_' and '.', starting with a letter or digit (a branch or pull request: pr-7, feature.x)",
            self.0
        )
    }
}

impl std::error::Error for BadName {}

/// Checks a preview name: what a branch or pull-request name becomes (`pr-7`), safe as one
/// path segment of a URL, a cookie's path and a bucket key.
pub fn check_name(name: &str) -> Result<(), BadName> {
    let ok = (1..=64).contains(&name.len())
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        })
        && !name.contains("..");
    match ok {
        true => Ok(()),
        false => Err(BadName(name.to_string())),
    }
}

/// A preview's key under the target's prefix: `previews/<NAME>/<rel>`.
pub fn key(name: &str, rel: &str) -> String {
    format!("{AREA}/{name}/{rel}")
}

/// The preview's pointer key.
pub fn pointer_key(name: &str) -> String {
    key(name, "preview.json")
}

/// A preview's pointer: which manifest it serves, as of when, and which of its objects are
/// its own (the rest are read from the public area).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreviewPointer {
    pub format: u32,
    pub name: String,
    /// `R` and `B` of the build (R: the ledger's publication revision it started from).
    pub revision: i64,
    pub build: String,
    /// sha256 of the manifest root (`previews/<NAME>/manifests/<sha>.json`).
    pub manifest: String,
    /// The instant the site is shown as of; `None`: every scheduled item and update.
    pub as_of: Option<Instant>,
    /// Whether drafts are shown.
    pub drafts: bool,
    /// When it was deployed.
    pub made_at: Instant,
    /// The site's `base_url` when it was built: absolute links to it are served within the
    /// preview.
    pub base_url: String,
    pub files: usize,
    /// Shards kept in the preview's own folder (the others: the public `manifests/shards/`).
    pub shards: Vec<String>,
    /// Blobs kept in the preview's own folder (the others: the public `objects/`).
    pub objects: Vec<String>,
    /// Every shard and blob is in the preview's own folder (a target without a public area,
    /// such as the site's own `.fencepost/`): `shards` and `objects` are left empty rather
    /// than list the whole site in a pointer read on every request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_own: bool,
}

impl PreviewPointer {
    /// Where shard `sha` of this preview is read from.
    pub fn shard_key(&self, sha: &str) -> String {
        match self
            .all_own
            .then_some(Ok(0))
            .unwrap_or_else(|| self.shards.binary_search_by(|s| s.as_str().cmp(sha)))
        {
            Ok(_) => key(&self.name, &format!("manifests/shards/{sha}.json")),
            Err(_) => format!("manifests/shards/{sha}.json"),
        }
    }

    /// Where blob `sha` of this preview is read from.
    pub fn blob_key(&self, sha: &str) -> String {
        match self
            .all_own
            .then_some(Ok(0))
            .unwrap_or_else(|| self.objects.binary_search_by(|s| s.as_str().cmp(sha)))
        {
            Ok(_) => key(&self.name, &format!("objects/{sha}")),
            Err(_) => format!("objects/{sha}"),
        }
    }

    /// The root's key.
    pub fn root_key(&self) -> String {
        key(&self.name, &format!("manifests/{}.json", self.manifest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_safe_segment() {
        for ok in ["pr-7", "main", "feature.x", "a_b", "7"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-x",
            ".x",
            "a/b",
            "A",
            "a..b",
            "pr 7",
            "%2e",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn objects_are_read_from_the_preview_only_when_it_holds_them() {
        let p = PreviewPointer {
            format: 1,
            name: "pr-7".into(),
            revision: 3,
            build: "b".into(),
            manifest: "m".into(),
            as_of: None,
            drafts: false,
            made_at: Instant(0),
            base_url: "https://example.org/".into(),
            files: 2,
            shards: vec!["s1".into()],
            objects: vec!["a".into(), "c".into()],
            all_own: false,
        };
        assert_eq!(p.blob_key("c"), "previews/pr-7/objects/c");
        assert_eq!(p.blob_key("b"), "objects/b");
        assert_eq!(p.shard_key("s1"), "previews/pr-7/manifests/shards/s1.json");
        assert_eq!(p.shard_key("s0"), "manifests/shards/s0.json");
        assert_eq!(p.root_key(), "previews/pr-7/manifests/m.json");
        let all = PreviewPointer {
            all_own: true,
            objects: vec![],
            shards: vec![],
            ..p
        };
        assert_eq!(all.blob_key("b"), "previews/pr-7/objects/b");
        assert_eq!(
            all.shard_key("s0"),
            "previews/pr-7/manifests/shards/s0.json"
        );
    }
}
