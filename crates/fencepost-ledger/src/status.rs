//! A summary of the ledger for `fencepost status`.

use crate::args;
use crate::{lease, LedgerError, Tx};
use fencepost_core::clock::Instant;
use fencepost_core::item::{ItemName, Naming};
use std::collections::BTreeMap;

#[derive(Debug, Clone, serde::Serialize)]
pub struct Failing {
    /// The item, as the site names items (see [`ItemName::shown`]).
    pub id: serde_json::Value,
    pub error: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    /// The ledger's random id: the one a bucket it deploys to belongs to.
    pub ledger_id: String,
    pub revision: i64,
    pub items: BTreeMap<&'static str, i64>,
    pub leases: i64,
    pub audit_entries: i64,
    pub audit_tip: Option<String>,
    pub next_embargo_at: Option<Instant>,
    pub failing: Vec<Failing>,
    /// Items parked after `publish.max_attempts` failures; `publish --retry ID` re-arms one.
    pub parked: Vec<crate::items::Parked>,
    /// Remote images parked after `publish.max_attempts` failed fetches.
    pub parked_images: Vec<ParkedImage>,
    /// Deploy operations not done: pending (resumed by the next deploy) or parked `failed`
    /// (`deploy --retry ID` re-arms one).
    pub deploys: Vec<crate::deploys::Op>,
    /// What each target has deployed, as the ledger recorded it.
    pub targets: Vec<crate::deploys::Deployed>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ParkedImage {
    pub source: String,
    pub attempts: i64,
    pub error: String,
}

/// The audit chain's anchor: the seq and hash of the newest entry, as the ledger recorded
/// them beside the revision when it was appended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AuditTip {
    pub seq: i64,
    pub hash: Option<String>,
}

pub fn anchor(tx: &Tx<'_>) -> Result<AuditTip, LedgerError> {
    let r = tx.one("audit.anchor", &[])?;
    Ok(AuditTip {
        seq: r.get(0)?,
        hash: r.get(1)?,
    })
}

/// The ledger's random id (recorded in every manifest built from it).
pub fn ledger_id(tx: &Tx<'_>) -> Result<String, LedgerError> {
    tx.one("status.ledger_id", &[])?.get(0)
}

/// The site this ledger belongs to (`ledger.site_id` of the site that first recorded it).
pub fn site_id(tx: &Tx<'_>) -> Result<Option<String>, LedgerError> {
    tx.one("status.site_id", &[])?.get(0)
}

/// Records `site` as the site this ledger belongs to, unless it already names one; the site
/// it belongs to afterwards.
pub fn claim_site(tx: &Tx<'_>, site: &str) -> Result<Option<String>, LedgerError> {
    tx.exec("status.claim_site", args! { "site" => site })?;
    site_id(tx)
}

/// Who a ledger belongs to, and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteClaim {
    /// The site id it records (none: no site with an id has claimed it).
    pub site: Option<String>,
    /// The publication revision it was claimed at: 0 while the ledger was empty; none when a
    /// release that did not record it made the claim.
    pub claimed_at: Option<i64>,
    /// The ledger's publication revision now.
    pub revision: i64,
    /// How many items it has ever recorded.
    pub items: i64,
}

pub fn site_claim(tx: &Tx<'_>) -> Result<SiteClaim, LedgerError> {
    let mut r = tx.one("status.site_claim", &[])?;
    Ok(SiteClaim {
        site: r.take(0)?,
        claimed_at: r.get(1)?,
        revision: r.get(2)?,
        items: r.get(3)?,
    })
}

/// `fencepost ledger claim`: the ledger given to `site`, from `was` (the id it records now, or
/// none); false when it records another id than `was` by then (nothing changed).
pub fn replace_site(tx: &Tx<'_>, site: &str, was: Option<&str>) -> Result<bool, LedgerError> {
    let was = was.map(str::to_string);
    Ok(tx.exec(
        "status.replace_site",
        args! { "site" => site, "was" => was },
    )? == 1)
}

/// The source files (site-relative) of the items not withdrawn.
pub fn live_sources(tx: &Tx<'_>) -> Result<Vec<String>, LedgerError> {
    tx.rows("status.live_sources", &[])?
        .into_iter()
        .map(|mut r| r.take(0))
        .collect()
}

/// The `base_url` the ledger last built with.
pub fn built_base_url(tx: &Tx<'_>) -> Result<Option<String>, LedgerError> {
    tx.one("status.built_base_url", &[])?.take(0)
}

/// Records the `base_url` a build built with (a write only when it differs).
pub fn set_built_base_url(tx: &Tx<'_>, url: &str) -> Result<(), LedgerError> {
    tx.exec("status.set_built_base_url", args! { "url" => url })?;
    Ok(())
}

pub fn revision(tx: &Tx<'_>) -> Result<i64, LedgerError> {
    tx.one("status.revision", &[])?.get(0)
}

/// Reads everything in the caller's transaction, so the figures agree with each other. Items
/// are named as `naming` says.
/// The item states `status` counts, each 0 until a row says otherwise.
fn no_items() -> BTreeMap<&'static str, i64> {
    ["pending", "processing", "published", "withdrawn", "failed"]
        .into_iter()
        .map(|s| (s, 0))
        .collect()
}

impl Status {
    /// Where there is no ledger yet (nothing was ever published): every count 0, no id.
    pub fn none() -> Status {
        Status {
            ledger_id: String::new(),
            revision: 0,
            items: no_items(),
            leases: 0,
            audit_entries: 0,
            audit_tip: None,
            next_embargo_at: None,
            failing: Vec::new(),
            parked: Vec::new(),
            parked_images: Vec::new(),
            deploys: Vec::new(),
            targets: Vec::new(),
        }
    }
}

pub fn read(tx: &Tx<'_>, now: Instant, naming: Naming) -> Result<Status, LedgerError> {
    let mut items = no_items();
    for r in tx.rows("status.counts", &[])? {
        let state: String = r.get(0)?;
        if let Some(n) = items.iter_mut().find(|(k, _)| **k == state).map(|(_, v)| v) {
            *n = r.get(1)?;
        }
    }
    let tip: Option<(i64, String)> = tx
        .row("status.audit_tip", &[])?
        .map(|r| Ok::<_, LedgerError>((r.get(0)?, r.get(1)?)))
        .transpose()?;
    let next: Option<i64> = tx
        .one("status.next_embargo", args! { "now" => now.0 })?
        .get(0)?;
    let failing = tx
        .rows("status.failing", &[])?
        .iter()
        .map(|r| {
            Ok(Failing {
                id: ItemName::new(&r.get::<String>(2)?, &r.get::<String>(3)?).shown(naming),
                error: r.get(1)?,
            })
        })
        .collect::<Result<_, LedgerError>>()?;
    let parked_images = tx
        .rows("status.parked_images", &[])?
        .iter()
        .map(|r| {
            Ok(ParkedImage {
                source: r.get(0)?,
                attempts: r.get(1)?,
                error: r.get(2)?,
            })
        })
        .collect::<Result<_, LedgerError>>()?;
    Ok(Status {
        ledger_id: ledger_id(tx)?,
        revision: revision(tx)?,
        items,
        leases: lease::count_live(tx, now)?,
        audit_entries: tip.as_ref().map(|t| t.0).unwrap_or(0),
        audit_tip: tip.map(|t| t.1),
        next_embargo_at: next.map(Instant),
        failing,
        parked: crate::items::parked(tx)?
            .into_iter()
            .map(|mut p| {
                p.id = p.name.shown(naming);
                p
            })
            .collect(),
        parked_images,
        deploys: crate::deploys::unfinished(tx)?,
        targets: crate::deploys::targets(tx)?,
    })
}
