//! `rollback` and `gc` on `public/`: the pointer moved back to a complete revision, and
//! revisions beyond `--keep` removed.

use super::HistoryError;
use fencepost_core::clock::Clock;
use fencepost_ledger::{audit, Ledger};
use fencepost_output::pointer::Pointer;
use fencepost_output::public::Public;
use fencepost_output::revision::REVISIONS;
use fencepost_output::OutputError;
use fencepost_site::Site;
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
pub fn rollback(site: &Site, clock: &Clock, target: &str) -> Result<RollbackReport, HistoryError> {
    let mut public = Public::read(site.public_dir())?;
    let current = public.live().cloned();
    let Some(id) = public.choose(target)? else {
        return Err(OutputError::NoSuchRevision {
            wanted: target.to_string(),
            dir: public.dir().join(REVISIONS),
        }
        .into());
    };
    let to = Pointer::new(id.clone());
    if current.as_ref() == Some(&to) {
        // Already live: nothing moves, so there is nothing to journal or audit.
        return Ok(RollbackReport { from: current, to });
    }
    let mut ledger = site.open_ledger()?;
    // An earlier rollback's receipt first: the journal below replaces its own.
    finish_receipt(&mut ledger, &public)?;
    // A site's log grows with a rollback too: the folder gets the log brought to it.
    fencepost_build::transparency::reissue(site, &mut ledger, &public, &id).map_err(Box::new)?;
    fencepost_core::fail_point!("rollback.before_pointer");
    // The target is checked again under the pointer lock (gc may have removed it since); the
    // journal is written before the pointer moves.
    let id = uuid::Uuid::new_v4().simple().to_string();
    let from = public.rollback(&to, &id, clock.now())?;
    fencepost_core::fail_point!("rollback.after_pointer");
    finish_receipt(&mut ledger, &public)?;
    Ok(RollbackReport { from, to })
}

/// Writes the audit entry of the journaled rollback if it is missing, then marks the journal
/// audited: right after the pointer moves, and first thing in the next rollback (a build
/// does the same, `build::finish_rollback_receipt`), so a process that died in between loses
/// no receipt.
fn finish_receipt(ledger: &mut Ledger, public: &Public) -> Result<(), HistoryError> {
    if let Some((journal, detail)) = public.unaudited_rollback() {
        ledger.write(|tx| audit::rollback_receipt(tx, journal.at, &journal.id, &detail))?;
        public.rollback_audited(&journal.id)?;
    }
    Ok(())
}

#[derive(Debug, Clone, Serialize)]
pub struct GcReport {
    pub kept: Vec<String>,
    pub removed: Vec<String>,
    /// Kept although beyond `--keep`: live less than the grace period ago.
    pub in_grace: Vec<String>,
    /// Temporary directories of dead builds, and leftovers of killed swaps and gc runs.
    pub abandoned_removed: usize,
    /// The removed revision set aside whole as the spare the next build starts from (the
    /// newest one removed; see `fencepost_output::revision::set_aside_as_spare`), instead of
    /// deleted. Not a revision any more: it is in `removed` too.
    pub spare: Option<String>,
}

/// Removes complete revisions beyond the newest `keep`, never the current one nor one that
/// was live less than `grace_secs` ago (a static server or a reader may still be reading it),
/// and the leftovers of builds, swaps and gc runs that died. With `spare`, the newest of
/// those it removes is set aside whole as the next build's spare (replacing the one before)
/// rather than deleted: taking it out is one rename, and the next build changes only the
/// files that differ instead of making every folder and link again. Without, any spare goes
/// too.
pub fn gc(
    site: &Site,
    clock: &Clock,
    keep: usize,
    grace_secs: u64,
    spare: bool,
) -> Result<GcReport, HistoryError> {
    // Revisions an unfinished (pending or parked) deploy operation carries out: decided, so
    // they must stay until it is done or a person abandons it.
    let mut ledger = site.open_ledger()?;
    let needed: HashSet<String> = ledger
        .read(fencepost_ledger::deploys::unfinished)?
        .into_iter()
        .filter_map(|op| {
            serde_json::from_str::<serde_json::Value>(&op.plan)
                .ok()
                .and_then(|p| p["dir"].as_str().map(str::to_string))
        })
        .collect();
    drop(ledger);
    let public = Public::open(site.public_dir())?;
    let now = clock.now();
    let report = public.locked(|current| {
        let mut abandoned_removed = public.tidied() + public.remove_leftovers()?;
        if !spare {
            abandoned_removed += public.remove_spares()?;
        }
        let current = current.map(|p| p.dir);
        let grace_ms = i64::try_from(grace_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        let recent: HashSet<String> = public
            .retired()
            .into_iter()
            // A retirement "in the future" (a clock that went back) counts as recent.
            .filter(|r| grace_ms > 0 && now.0.saturating_sub(r.at_ms) < grace_ms)
            .map(|r| r.dir)
            .collect();
        let mut kept = Vec::new();
        let mut removed = Vec::new();
        let mut in_grace = Vec::new();
        let mut set_aside = None;
        for (i, id) in public.complete()?.into_iter().enumerate() {
            let name = id.to_string();
            if i < keep || Some(&name) == current.as_ref() || needed.contains(&name) {
                kept.push(name);
                continue;
            }
            if recent.contains(&name) {
                in_grace.push(name);
                continue;
            }
            // Newest first: the first removed is the closest to the live revision.
            if spare && set_aside.is_none() {
                public.set_aside_as_spare(&name)?;
                set_aside = Some(name.clone());
            } else {
                public.remove(&name)?;
            }
            removed.push(name);
        }
        Ok(GcReport {
            kept,
            removed,
            in_grace,
            abandoned_removed,
            spare: set_aside,
        })
    })?;
    Ok(report)
}
