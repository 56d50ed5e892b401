//! `rollback` and `gc`: operations on finished revisions.

use super::{public_dir, BuildError};
use crate::clock::Clock;
use crate::ledger::{audit, with_write};
use crate::output::pointer::{self, Pointer};
use crate::output::revision::{self, REVISIONS};
use crate::output::OutputError;
use crate::site::Site;
use serde::Serialize;
use std::collections::HashSet;

#[derive(Debug, Clone, Serialize)]
pub struct RollbackReport {
    pub from: Option<Pointer>,
    pub to: Pointer,
}

/// Points `public/current` back at an existing complete revision. `target` is `R` (the
/// newest complete directory for R, preferring the current build fingerprint) or `R-B`.
/// Recorded in the audit log.
pub fn rollback(site: &Site, clock: &Clock, target: &str) -> Result<RollbackReport, BuildError> {
    let public = public_dir(site);
    let complete = revision::list_complete(&public)?;
    let current = pointer::read(&public)?;
    let chosen = if let Some((r, b)) = revision::parse_dir_name(target) {
        complete
            .iter()
            .find(|(_, n)| *n == revision::dir_name(r, b))
            .cloned()
    } else if let Ok(r) = target.parse::<i64>() {
        let same_build = current.as_ref().map(|c| revision::dir_name(r, &c.build));
        complete
            .iter()
            .find(|(_, n)| Some(n) == same_build.as_ref())
            .or_else(|| complete.iter().find(|(rev, _)| *rev == r))
            .cloned()
    } else {
        None
    };
    let Some((r, name)) = chosen else {
        return Err(OutputError::NoSuchRevision {
            wanted: target.to_string(),
            dir: public.join(REVISIONS),
        }
        .into());
    };
    let (_, b) = revision::parse_dir_name(&name).expect("listed names parse");
    let to = Pointer::new(r, b);
    crate::fail_point!("rollback.before_pointer");
    // The target is checked again under the pointer lock: gc may have removed it since.
    let from = pointer::force(&public, &to, clock.now())?;
    let mut ledger = site.open_ledger()?;
    let detail =
        serde_json::json!({ "from": from.as_ref().map(|p| &p.dir), "to": to.dir }).to_string();
    let now = clock.now();
    with_write(&mut ledger, |tx| {
        audit::append(tx, now, "rollback", "pointer", &detail)
    })?;
    Ok(RollbackReport { from, to })
}

#[derive(Debug, Clone, Serialize)]
pub struct GcReport {
    pub kept: Vec<String>,
    pub removed: Vec<String>,
    /// Kept although beyond `--keep`: live less than the grace period ago.
    pub in_grace: Vec<String>,
    /// Temporary directories of dead builds, and leftovers of killed swaps and gc runs.
    pub abandoned_removed: usize,
}

/// Removes complete revisions beyond the newest `keep`, never the current one nor one that
/// was live less than `grace_secs` ago (a static server or a reader may still be reading it),
/// and the leftovers of builds, swaps and gc runs that died.
pub fn gc(
    site: &Site,
    clock: &Clock,
    keep: usize,
    grace_secs: u64,
) -> Result<GcReport, BuildError> {
    let public = public_dir(site);
    let mut abandoned_removed = revision::remove_abandoned(&public)?;
    let now = clock.now();
    let report = pointer::with_lock(&public, || {
        abandoned_removed += pointer::remove_dead_swaps(&public) + revision::remove_trash(&public)?;
        let current = pointer::read(&public)?.map(|p| p.dir);
        let grace_ms = i64::try_from(grace_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        let recent: HashSet<String> = pointer::retired(&public)
            .into_iter()
            // A retirement "in the future" (a clock that went back) counts as recent.
            .filter(|r| grace_ms > 0 && now.0.saturating_sub(r.at_ms) < grace_ms)
            .map(|r| r.dir)
            .collect();
        let mut kept = Vec::new();
        let mut removed = Vec::new();
        let mut in_grace = Vec::new();
        for (i, (_, name)) in revision::list_complete(&public)?.into_iter().enumerate() {
            if i < keep || Some(&name) == current.as_ref() {
                kept.push(name);
                continue;
            }
            if recent.contains(&name) {
                in_grace.push(name);
                continue;
            }
            revision::remove(&public, &name)?;
            removed.push(name);
        }
        Ok(GcReport {
            kept,
            removed,
            in_grace,
            abandoned_removed,
        })
    })?;
    Ok(report)
}
