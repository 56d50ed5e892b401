//! A summary of the ledger for `fencepost status`.

use crate::clock::Instant;
use crate::ledger::lease;
use rusqlite::{named_params, Connection, OptionalExtension};
use std::collections::BTreeMap;

const REVISION: &str = "SELECT publication_revision FROM site_state WHERE id = 1";
/// A parked item counts as `failed`, whatever state it was parked in.
const COUNTS: &str = "SELECT CASE WHEN parked_at IS NOT NULL THEN 'failed' ELSE state END, count(*)
     FROM items GROUP BY 1";
const PARKED_IMAGES: &str = "SELECT source, attempts, coalesce(last_error, '') FROM images
     WHERE parked_at IS NOT NULL AND state <> 'stored' ORDER BY source";
const ANCHOR: &str = "SELECT audit_tip_seq, audit_tip_hash FROM site_state WHERE id = 1";
const AUDIT_TIP: &str = "SELECT seq, current_hash FROM audit_log ORDER BY seq DESC LIMIT 1";
const NEXT_EMBARGO: &str = "SELECT min(publish_at) FROM items
     WHERE publish_at > :now AND state IN ('pending', 'processing', 'withdrawn')
       AND source_hash IS NOT NULL AND wants_withdrawn = 0 AND parked_at IS NULL";
const FAILING: &str = "SELECT id, last_error FROM items WHERE last_error IS NOT NULL ORDER BY id";

#[derive(Debug, Clone, serde::Serialize)]
pub struct Failing {
    pub id: i64,
    pub error: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    pub revision: i64,
    pub items: BTreeMap<&'static str, i64>,
    pub leases: i64,
    pub audit_entries: i64,
    pub audit_tip: Option<String>,
    pub next_embargo_at: Option<Instant>,
    pub failing: Vec<Failing>,
    /// Items parked after `publish.max_attempts` failures; `publish --retry ID` re-arms one.
    pub parked: Vec<crate::ledger::items::Parked>,
    /// Remote images parked after `publish.max_attempts` failed fetches.
    pub parked_images: Vec<ParkedImage>,
    /// Deploy operations not done: pending (resumed by the next deploy) or parked `failed`
    /// (`deploy --retry ID` re-arms one).
    pub deploys: Vec<crate::ledger::deploys::Op>,
    /// What each target has deployed, as the ledger recorded it.
    pub targets: Vec<crate::ledger::deploys::Deployed>,
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

pub fn anchor(conn: &Connection) -> rusqlite::Result<AuditTip> {
    conn.prepare_cached(ANCHOR)?.query_row([], |r| {
        Ok(AuditTip {
            seq: r.get(0)?,
            hash: r.get(1)?,
        })
    })
}

const LEDGER_ID: &str = "SELECT ledger_id FROM site_state WHERE id = 1";

/// The ledger's random id (recorded in every manifest built from it).
pub fn ledger_id(conn: &Connection) -> rusqlite::Result<String> {
    conn.prepare_cached(LEDGER_ID)?.query_row([], |r| r.get(0))
}

pub fn revision(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached(REVISION)?.query_row([], |r| r.get(0))
}

/// Reads everything in the caller's transaction, so the figures agree with each other.
pub fn read(conn: &Connection, now: Instant) -> rusqlite::Result<Status> {
    let mut items: BTreeMap<&'static str, i64> =
        ["pending", "processing", "published", "withdrawn", "failed"]
            .into_iter()
            .map(|s| (s, 0))
            .collect();
    let mut stmt = conn.prepare_cached(COUNTS)?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let state: String = r.get(0)?;
        if let Some(n) = items.iter_mut().find(|(k, _)| **k == state).map(|(_, v)| v) {
            *n = r.get(1)?;
        }
    }
    let tip: Option<(i64, String)> = conn
        .prepare_cached(AUDIT_TIP)?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let next: Option<i64> = conn
        .prepare_cached(NEXT_EMBARGO)?
        .query_row(named_params! { ":now": now.0 }, |r| r.get(0))?;
    let failing = conn
        .prepare_cached(FAILING)?
        .query_map([], |r| {
            Ok(Failing {
                id: r.get(0)?,
                error: r.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(Status {
        revision: revision(conn)?,
        items,
        leases: lease::count_live(conn, now)?,
        audit_entries: tip.as_ref().map(|t| t.0).unwrap_or(0),
        audit_tip: tip.map(|t| t.1),
        next_embargo_at: next.map(Instant),
        failing,
        parked: crate::ledger::items::parked(conn)?,
        parked_images: conn
            .prepare_cached(PARKED_IMAGES)?
            .query_map([], |r| {
                Ok(ParkedImage {
                    source: r.get(0)?,
                    attempts: r.get(1)?,
                    error: r.get(2)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?,
        deploys: crate::ledger::deploys::unfinished(conn)?,
        targets: crate::ledger::deploys::targets(conn)?,
    })
}
