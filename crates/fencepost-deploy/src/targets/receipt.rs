//! The receipt of a rollback of a bucket (`rollback --to URL`, in `history::bucket`): its
//! audit entry, written once, and its journal closed. Here, below the history module, because
//! the deploy driver finishes a rollback that died before its receipt.

use super::DeployError;
use fencepost_bucket::remote::Remote;
use fencepost_core::clock::Clock;
use fencepost_ledger::deploys::{self, Step};
use fencepost_ledger::{audit, Ledger};
use fencepost_output::id::RevisionId;
use serde::{Deserialize, Serialize};

/// The frozen plan of a rollback: which root the pointer goes to.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RollbackPlan {
    /// `R` and `B`: `revision` and `build` in JSON and on disk (a contract), in this order.
    #[serde(flatten)]
    pub id: RevisionId,
    pub root: String,
}

/// Writes a decided rollback's audit entry (once) and closes it. One that never moved the
/// pointer is closed as superseded: a rollback decided earlier must not clobber what is live
/// now.
pub async fn finish(
    ledger: &mut Ledger,
    clock: &Clock,
    remote: &Remote,
    op: &deploys::Op,
    held: &fencepost_ledger::lease::Lease,
) -> Result<(), DeployError> {
    let plan: RollbackPlan = serde_json::from_str(&op.plan)
        .map_err(|e| DeployError::store(remote, "reading a rollback plan", e))?;
    let now = clock.now();
    // Every step is written under the target's lease: a run that lost it to a takeover
    // writes nothing more (the run that took over finishes the receipt).
    let lost = || super::lost_lease(remote, "finishing a rollback's receipt");
    if op.step == Step::Planned {
        let live = remote.read_pointer().await?;
        let there = live.is_some_and(|(p, _)| p.manifest == plan.root);
        let outcome = if there { "deployed" } else { "superseded" };
        let advanced = ledger.write(|tx| {
            deploys::advance(
                tx,
                &op.id,
                Step::Planned,
                Step::Pointer,
                Some(outcome),
                held,
                now,
            )
        })?;
        if !advanced {
            return Err(lost());
        }
        if !there {
            let closed = ledger.write(|tx| {
                deploys::advance(tx, &op.id, Step::Pointer, Step::Done, None, held, now)
            })?;
            return if closed { Ok(()) } else { Err(lost()) };
        }
    }
    let detail = serde_json::json!({
        "target": remote.url, "to": plan.id.to_string(), "manifest": plan.root,
    })
    .to_string();
    let subject = format!("rollback:{}", op.id);
    // The receipt goes with the guarded close, in one transaction: without the lease, neither.
    let closed = ledger.write(|tx| {
        if !deploys::advance(tx, &op.id, Step::Pointer, Step::Done, None, held, now)? {
            return Ok(false);
        }
        audit::append_once(tx, now, audit::AuditAction::Rollback, &subject, &detail)?;
        Ok(true)
    })?;
    if closed {
        Ok(())
    } else {
        Err(lost())
    }
}
