//! `rollback` and `gc`: operations on finished revisions.

use super::{public_dir, BuildError};
use crate::clock::Clock;
use crate::ledger::{audit, with_write};
use crate::output::pointer::{self, Pointer};
use crate::output::revision::{self, REVISIONS};
use crate::output::OutputError;
use crate::site::Site;
use serde::Serialize;

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
    let from = pointer::force(&public, &to)?;
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
    pub abandoned_removed: usize,
}

/// Removes complete revisions beyond the newest `keep`, never the current one, and the
/// temporary directories of dead builds.
pub fn gc(site: &Site, keep: usize) -> Result<GcReport, BuildError> {
    let public = public_dir(site);
    let abandoned_removed = revision::remove_abandoned(&public)?;
    let report = pointer::with_lock(&public, || {
        let current = pointer::read(&public)?.map(|p| p.dir);
        let mut kept = Vec::new();
        let mut removed = Vec::new();
        for (i, (_, name)) in revision::list_complete(&public)?.into_iter().enumerate() {
            if i < keep || Some(&name) == current.as_ref() {
                kept.push(name);
                continue;
            }
            let dir = public.join(REVISIONS).join(&name);
            // Rename first so a half-removed revision never looks complete.
            let trash = public
                .join(REVISIONS)
                .join(format!(".trash-{name}-{}", uuid::Uuid::new_v4().simple()));
            std::fs::rename(&dir, &trash).map_err(|source| OutputError::Io {
                path: dir.clone(),
                source,
            })?;
            std::fs::remove_dir_all(&trash).map_err(|source| OutputError::Io {
                path: trash,
                source,
            })?;
            removed.push(name);
        }
        Ok(GcReport {
            kept,
            removed,
            abandoned_removed,
        })
    })?;
    Ok(report)
}
