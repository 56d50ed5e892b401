//! The bucket's pointer object (`<prefix>/current`): which revision a target serves, the
//! ledger that owns it, a rollback's hold, the roots retired from it. Pure data and rules;
//! `remote.rs` moves it by compare-and-set.

use fencepost_output::id::RevisionId;
use fencepost_output::manifest::AuditAnchor;
use serde::{Deserialize, Serialize};

/// The pointer object: which revision the target serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemotePointer {
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    /// sha256 of the manifest root (`manifests/<sha256>.json`).
    pub manifest: String,
    pub deployed_at: fencepost_core::clock::Instant,
    /// The next instant what the site should show changes without a write (from the
    /// ledger when the pointer moved); an origin caps its pointer cache at it.
    #[serde(default)]
    pub next_change_at: Option<fencepost_core::clock::Instant>,
    /// Set by `rollback --to`: deploys of this revision or lower leave the pointer alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_below: Option<i64>,
    /// The ledger that owns the bucket: deploys, rollbacks and gc from any other are refused
    /// (`deploy --adopt` takes a bucket over). Pointers older than the field name it through
    /// their root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_id: Option<String>,
    /// The audit chain's tip when the pointer was written (the anchor lives here and in the
    /// ledger, not in the content-addressed root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_tip: Option<AuditAnchor>,
    /// The operation whose compare-and-set made this move: the one that writes its receipt,
    /// however many operations race or are retried onto the same manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<String>,
    /// Builds of `revision` that have been live here, the live one included: another build of
    /// the same revision goes live only if it never was (sideways is backwards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub live_builds: Vec<String>,
    /// Roots that stopped being live here, and when, newest first (at most [`RETIRED_KEPT`]):
    /// `gc --to` keeps those retired within its grace period, since origins still serve them
    /// within their pointer TTL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired: Vec<RetiredRoot>,
}

/// A manifest root that stopped being live at `at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetiredRoot {
    pub manifest: String,
    pub at: fencepost_core::clock::Instant,
}

/// How many retired roots a pointer remembers.
pub const RETIRED_KEPT: usize = 32;

impl RemotePointer {
    /// A pointer naming `manifest` (revision `id`) with nothing else known yet;
    /// [`RemotePointer::after`] carries the history over.
    pub fn new(
        id: RevisionId,
        manifest: &str,
        at: fencepost_core::clock::Instant,
    ) -> RemotePointer {
        RemotePointer {
            live_builds: vec![id.fingerprint.clone()],
            id,
            manifest: manifest.to_string(),
            deployed_at: at,
            next_change_at: None,
            held_below: None,
            ledger_id: None,
            audit_tip: None,
            operation: None,
            retired: Vec::new(),
        }
    }

    /// Builds of the live revision that have been live here (an older pointer without the
    /// list knows only its own).
    pub fn builds_seen(&self) -> Vec<&str> {
        if self.live_builds.is_empty() {
            vec![self.id.fingerprint.as_str()]
        } else {
            self.live_builds.iter().map(String::as_str).collect()
        }
    }

    /// `self` as the successor of `prev` (the pointer it replaces at `self.deployed_at`):
    /// the builds of a revision seen live accumulate while the revision stays, and the root
    /// `prev` named joins the retired list.
    pub fn after(mut self, prev: Option<&RemotePointer>) -> RemotePointer {
        let Some(prev) = prev else {
            return self;
        };
        if prev.id.revision == self.id.revision {
            let mut seen: Vec<String> = prev.builds_seen().iter().map(|b| b.to_string()).collect();
            if !seen.contains(&self.id.fingerprint) {
                seen.push(self.id.fingerprint.clone());
            }
            self.live_builds = seen;
        } else {
            self.live_builds = vec![self.id.fingerprint.clone()];
        }
        let mut retired = prev.retired.clone();
        if prev.manifest != self.manifest {
            retired.retain(|r| r.manifest != prev.manifest && r.manifest != self.manifest);
            retired.insert(
                0,
                RetiredRoot {
                    manifest: prev.manifest.clone(),
                    at: self.deployed_at,
                },
            );
        }
        retired.retain(|r| r.manifest != self.manifest);
        retired.truncate(RETIRED_KEPT);
        self.retired = retired;
        self
    }

    /// Whether revision `id` was live here once and has been replaced by another build of
    /// the same revision.
    pub fn replaced(&self, id: &RevisionId) -> bool {
        id.revision == self.id.revision
            && id.fingerprint != self.id.fingerprint
            && self.builds_seen().contains(&id.fingerprint.as_str())
    }
}
