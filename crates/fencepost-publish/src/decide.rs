//! What a publish run does with an item, decided from the ledger's view of it alone: a pure
//! function of the view and the instant, so the candidate scan and preflight under the lease
//! decide alike. The ledger records what was decided; publish decides it (this lived in the
//! ledger, which then knew publishing's rules).

use fencepost_core::clock::Instant;
use fencepost_ledger::items::Action;
use fencepost_ledger::items::{ItemView, State};

/// What a publish run decides for an item: an [`Action`] (which the ledger's commit batch
/// carries out), or why nothing is done now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    Act(Action),
    /// Not due until this instant.
    Embargoed(Instant),
    /// Public state already matches the file.
    Current,
    /// Never published and has no file to publish (removed, or withdrawn before it was due).
    Idle,
    /// Parked after too many failed attempts: nothing is tried until it is re-armed.
    Parked,
}

/// [`plan`], except that with `rerender` a published item whose page is
/// current is re-rendered (an update that writes only when the page comes out different:
/// `publish --rerender`, after a change to `[markdown]`).
pub fn plan_with(v: &ItemView, now: Instant, rerender: bool) -> Plan {
    match plan(v, now) {
        Plan::Current if rerender && v.state == State::Published && v.page.is_some() => {
            Plan::Act(Action::Update)
        }
        p => p,
    }
}

/// Decides what to do, from the ledger alone. Pure, so it is the same at the candidate
/// scan and at preflight under the lease.
pub fn plan(v: &ItemView, now: Instant) -> Plan {
    if v.parked_at.is_some() {
        // Parking stops retries of what failed (an update, a publication); it never keeps
        // a page public against a newer decision to take it down (the file removed, or
        // `withdrawn = true`). A withdrawal fetches nothing, so it is not what failed.
        if v.state == State::Published && !v.wanted(now) {
            return Plan::Act(Action::Withdraw);
        }
        return Plan::Parked;
    }
    match v.state {
        State::Pending | State::Processing | State::Withdrawn => {
            if v.wanted(now) {
                if v.publish_at <= now {
                    Plan::Act(Action::Publish)
                } else {
                    Plan::Embargoed(v.publish_at)
                }
            } else if v.state == State::Withdrawn {
                match &v.page {
                    // The notice follows its file: an edit re-renders it once.
                    Some(p)
                        if p.withdrawn
                            && p.notice != Some(false)
                            && v.source_hash.as_ref().is_some_and(|h| *h != p.source_hash) =>
                    {
                        Plan::Act(Action::Renotice)
                    }
                    _ => Plan::Current,
                }
            } else {
                Plan::Idle
            }
        }
        State::Published => {
            if !v.wanted(now) {
                Plan::Act(Action::Withdraw)
            } else if v.page.as_ref().map(|p| &p.source_hash) != v.source_hash.as_ref() {
                // An edit due later (a `publish_at` moved ahead: "details at 12:00") is
                // an update at that instant, never before; the page stays as it was.
                if v.publish_at > now {
                    Plan::Embargoed(v.publish_at)
                } else {
                    Plan::Act(Action::Update)
                }
            } else {
                Plan::Current
            }
        }
    }
}

#[cfg(test)]
mod tests;
