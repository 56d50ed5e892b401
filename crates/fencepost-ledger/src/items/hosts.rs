//! Checkouts that disagree, the ledger's half (issue 35.7; the rule is in `publish/hosts.rs`).
//! For each file this host would write back over another host's change, the item's row
//! decides: written by another host and still otherwise than this checkout has it, the item
//! is parked, naming both hosts; anything else is synced as usual.

use super::ItemName;
use crate::args;
use crate::{LedgerError, Tx};
use fencepost_core::clock::Instant;

/// A file this host would write back over another host's change.
pub struct Candidate<'a> {
    pub name: &'a ItemName,
    /// The source hash this host's checkout has (`None`: it lacks the file).
    pub hash: Option<&'a str>,
}

/// Two checkouts that have one item differently: the write the ledger keeps, and the other.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Disagreement {
    /// The host whose write the ledger has (null: written before hosts were recorded).
    pub ledger_host: Option<String>,
    /// What that host's checkout has: the file's source hash (null: it lacks the file).
    pub ledger_hash: Option<String>,
    /// The host whose checkout has it otherwise.
    pub other_host: String,
    /// What the other host's checkout has (null: it lacks the file).
    pub other_hash: Option<String>,
}

impl Disagreement {
    /// For people: both hosts, what each has, and the ways out.
    pub fn describe(&self) -> String {
        let has = |h: &Option<String>| match h {
            Some(h) => format!("has it as {}", &h[..h.len().min(12)]),
            None => "lacks the file".to_string(),
        };
        format!(
            "checkouts disagree: host {} {} (the ledger has its write), host {} {}; nothing is published for it until they agree (bring one checkout in line) or `fencepost publish --retry ID` runs on the host whose file is right",
            self.ledger_host.as_deref().unwrap_or("(unrecorded)"),
            has(&self.ledger_hash),
            self.other_host,
            has(&self.other_hash),
        )
    }
}

/// What becomes of one candidate.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Sync it as usual: the ledger has no row for it, this host wrote the row itself, or
    /// the row already agrees with this checkout.
    Sync,
    /// Parked (`newly`: by this call; else it already was, for this very disagreement).
    Parked {
        disagreement: Disagreement,
        newly: bool,
    },
    /// The row changed between the read and the write: left to the next run.
    Raced,
}

/// Judges each candidate against its row, parking the disagreeing ones (an item already
/// parked for the same disagreement is not written again: racing hosts never queue on it).
pub fn judge(
    tx: &Tx<'_>,
    candidates: &[Candidate<'_>],
    host: &str,
    now: Instant,
) -> Result<Vec<Verdict>, LedgerError> {
    let mut out = Vec::with_capacity(candidates.len());
    for c in candidates {
        let key = args! { "collection" => c.name.collection.as_ref(), "key" => c.name.id.as_ref() };
        let Some(r) = tx.row("items.host_row", key)? else {
            out.push(Verdict::Sync);
            continue;
        };
        let row_host: Option<String> = r.get(0)?;
        let row_hash: Option<String> = r.get(1)?;
        if row_host.as_deref() == Some(host) || row_hash.as_deref() == c.hash {
            out.push(Verdict::Sync);
            continue;
        }
        let disagreement = Disagreement {
            ledger_host: row_host.clone(),
            ledger_hash: row_hash.clone(),
            other_host: host.to_string(),
            other_hash: c.hash.map(str::to_string),
        };
        let already = r.get::<Option<String>>(2)?.as_deref() == Some(host)
            && r.get::<Option<String>>(3)?.as_deref() == c.hash
            && r.get::<bool>(4)?;
        if already {
            out.push(Verdict::Parked {
                disagreement,
                newly: false,
            });
            continue;
        }
        let parked = tx.exec(
            "items.park_disagreement",
            args! {
                "collection" => c.name.collection.as_ref(),
                "key" => c.name.id.as_ref(),
                "host" => host,
                "hash" => c.hash,
                "row_host" => row_host.as_deref(),
                "row_hash" => row_hash.as_deref(),
                "now" => now.0,
            },
        )?;
        out.push(if parked == 1 {
            Verdict::Parked {
                disagreement,
                newly: true,
            }
        } else {
            Verdict::Raced
        });
    }
    Ok(out)
}
