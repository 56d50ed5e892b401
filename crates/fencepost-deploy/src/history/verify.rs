//! `fencepost verify` on this site: the audit chain recomputed and checked against the
//! ledger's anchor, and the live revision of `public/` checked to have been built from an
//! entry the chain still holds.

use fencepost_ledger::audit::{self, Break};
use fencepost_ledger::LedgerError;
use fencepost_output::manifest::Manifest;
use fencepost_output::public::Public;
use fencepost_site::Site;
use serde::Serialize;

/// What `verify` found (its `--json`).
#[derive(Debug, Clone, Serialize)]
pub struct Verified {
    pub intact: bool,
    pub entries: i64,
    pub tip: String,
    /// The first entry that does not hold (or the live revision, when it was built from an
    /// entry the chain no longer holds).
    pub first_break: Option<Break>,
    /// `null` when no live revision names an audit entry.
    pub live_revision: Option<LiveRevision>,
    /// Audit entries dated before the entry they follow (reported; the chain still holds).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub times_backwards: Vec<audit::TimeBack>,
    /// A ledger in a bucket: its whole log replayed from the first entry, and its snapshots
    /// checked against the log's records of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<fencepost_ledger::bucket::LogCheck>,
}

/// The live revision against the chain.
#[derive(Debug, Clone, Serialize)]
pub struct LiveRevision {
    pub dir: String,
    pub audit_seq: i64,
    /// The chain still holds the entry, with the hash the revision was built at.
    pub consistent: bool,
}

/// Verifies the site's audit chain and its live revision. Its failures are the ledger's (`"kind":
/// "ledger"`, as always); an unreadable `public/` only means no live revision is checked.
pub fn verify(site: &Site) -> Result<Verified, LedgerError> {
    let mut ledger = site.open_ledger()?;
    let mut v = ledger.read(audit::verify_anchored)?;
    let log = ledger.check_log()?;
    if let Some(problem) = log.as_ref().and_then(|l| l.problems.first()) {
        if v.first_break.is_none() {
            v.first_break = Some(Break {
                seq: 0,
                reason: format!("the ledger's log in its bucket: {problem}"),
            });
        }
    }
    let public = Public::read(site.public_dir()).ok();
    let live = public
        .as_ref()
        .and_then(|p| Some((p.live()?.dir.clone(), p.live_dir()?)));
    let mut live_revision = None;
    if let Some((name, dir)) = live {
        if let Some(t) = Manifest::read(&dir).ok().and_then(|m| m.audit_tip) {
            let held = t.seq == 0 || ledger.read(|tx| audit::hash_at(tx, t.seq))? == t.hash;
            if !held && v.first_break.is_none() {
                v.first_break = Some(Break {
                    seq: t.seq,
                    reason: format!(
                        "the live revision {} was built when the chain's entry {} was {}, which the chain no longer holds",
                        name,
                        t.seq,
                        t.hash.as_deref().unwrap_or("-")
                    ),
                });
            }
            live_revision = Some(LiveRevision {
                dir: name,
                audit_seq: t.seq,
                consistent: held,
            });
        }
    }
    Ok(Verified {
        intact: v.first_break.is_none(),
        entries: v.entries,
        tip: v.tip,
        first_break: v.first_break,
        live_revision,
        times_backwards: v.times_backwards,
        log,
    })
}
