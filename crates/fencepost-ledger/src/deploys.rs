//! The deploy journal: one row per deploy operation (frozen plan, step cursor, attempts) and
//! one per target (probed, what is deployed there). Every step's write is guarded by the
//! operation's lease (`deploy:<target>`), as publish's are.

use crate::args;
use crate::db::Row;
use crate::lease::{self, Lease};
use crate::{LedgerError, Tx};
use fencepost_core::clock::Instant;

/// Where an operation is: the last step it completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Planned,
    Blobs,
    Manifest,
    Pointer,
    Recorded,
    Done,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Planned => "planned",
            Step::Blobs => "blobs",
            Step::Manifest => "manifest",
            Step::Pointer => "pointer",
            Step::Recorded => "recorded",
            Step::Done => "done",
        }
    }

    fn parse(s: &str) -> Result<Step, LedgerError> {
        Ok(match s {
            "planned" => Step::Planned,
            "blobs" => Step::Blobs,
            "manifest" => Step::Manifest,
            "pointer" => Step::Pointer,
            "recorded" => Step::Recorded,
            "done" => Step::Done,
            other => {
                return Err(LedgerError::Internal(format!(
                    "unknown deploy step {other:?}"
                )))
            }
        })
    }
}

/// One deploy operation as the journal holds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Op {
    pub id: String,
    pub target: String,
    pub kind: String,
    pub status: String,
    pub step: Step,
    /// The frozen plan (JSON; see `targets::Plan`).
    #[serde(skip)]
    pub plan: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub outcome: Option<String>,
}

fn op_from_row(r: &Row) -> Result<Op, LedgerError> {
    Ok(Op {
        id: r.get(0)?,
        target: r.get(1)?,
        status: r.get(2)?,
        step: Step::parse(&r.get::<String>(3)?)?,
        plan: r.get(4)?,
        attempts: r.get(5)?,
        last_error: r.get(6)?,
        outcome: r.get(7)?,
        kind: r.get(8)?,
    })
}

/// The live deploy on `target`, if any.
pub fn pending(tx: &Tx<'_>, target: &str) -> Result<Option<Op>, LedgerError> {
    pending_of(tx, target, "deploy")
}

/// The live operation of `kind` (`deploy` or `rollback`) on `target`, if any.
pub fn pending_of(tx: &Tx<'_>, target: &str, kind: &str) -> Result<Option<Op>, LedgerError> {
    tx.row(
        "deploys.pending_of",
        args! { "target" => target, "kind" => kind },
    )?
    .as_ref()
    .map(op_from_row)
    .transpose()
}

pub fn get(tx: &Tx<'_>, id: &str) -> Result<Option<Op>, LedgerError> {
    tx.row("deploys.get", args! { "id" => id })?
        .as_ref()
        .map(op_from_row)
        .transpose()
}

/// Operations not done (pending or parked), for `status`.
pub fn unfinished(tx: &Tx<'_>) -> Result<Vec<Op>, LedgerError> {
    tx.rows("deploys.unfinished", &[])?
        .iter()
        .map(op_from_row)
        .collect()
}

/// Starts an operation with its frozen plan, under the lease. Returns false when another
/// operation on the target is already pending (the partial unique index) or the lease is
/// gone.
pub fn insert(
    tx: &Tx<'_>,
    id: &str,
    target: &str,
    plan: &str,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    insert_of(tx, id, target, "deploy", plan, lease, now)
}

/// [`insert`] for an operation of `kind`.
pub fn insert_of(
    tx: &Tx<'_>,
    id: &str,
    target: &str,
    kind: &str,
    plan: &str,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        "deploys.insert",
        lease,
        now,
        args! { "id" => id, "target" => target, "kind" => kind, "plan" => plan },
    )
}

/// Counts an attempt at resuming `id` under the lease.
pub fn count_attempt(
    tx: &Tx<'_>,
    id: &str,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        "deploys.count_attempt",
        lease,
        now,
        args! { "id" => id },
    )
}

/// Moves the cursor from `from` to `to`, under the lease; `outcome` closes the operation
/// when `to` is `done`. Returns false when the lease was lost or the cursor moved already.
pub fn advance(
    tx: &Tx<'_>,
    id: &str,
    from: Step,
    to: Step,
    outcome: Option<&str>,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        "deploys.advance",
        lease,
        now,
        args! { "id" => id, "from" => from.as_str(), "to" => to.as_str(), "outcome" => outcome },
    )
}

/// Records a failed attempt; after `max_attempts` the operation is parked `failed`.
pub fn record_failure(
    tx: &Tx<'_>,
    id: &str,
    error: &str,
    max_attempts: u32,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        "deploys.record_failure",
        lease,
        now,
        args! { "id" => id, "error" => error, "max" => max_attempts },
    )
}

/// Parks an operation whose attempts are used up without a recorded failure (the runs
/// crashed or were killed).
pub fn park(tx: &Tx<'_>, id: &str, lease: &Lease, now: Instant) -> Result<bool, LedgerError> {
    lease::guarded(tx, "deploys.park", lease, now, args! { "id" => id })
}

/// Parked operations of `kind` on `target`, oldest first.
pub fn parked(tx: &Tx<'_>, target: &str, kind: &str) -> Result<Vec<Op>, LedgerError> {
    tx.rows(
        "deploys.parked",
        args! { "target" => target, "kind" => kind },
    )?
    .iter()
    .map(op_from_row)
    .collect()
}

/// Closes the parked operation `id` as abandoned, with its audit entry. Returns false when
/// there is no such parked operation.
pub fn abandon(tx: &Tx<'_>, id: &str, detail: &str, now: Instant) -> Result<bool, LedgerError> {
    if tx.exec("deploys.abandon", args! { "id" => id, "now" => now.0 })? != 1 {
        return Ok(false);
    }
    let subject = format!("deploy:{id}");
    crate::audit::append_once(
        tx,
        now,
        crate::audit::AuditAction::Abandon,
        &subject,
        detail,
    )?;
    Ok(true)
}

/// Re-arms a parked operation. Returns false when there is no such parked operation, or
/// another operation on its target is pending (the partial unique index refuses a second).
pub fn retry(tx: &Tx<'_>, id: &str, now: Instant) -> Result<bool, LedgerError> {
    Ok(tx.exec("deploys.retry", args! { "id" => id, "now" => now.0 })? == 1)
}

/// What the ledger recorded as deployed on a target.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Deployed {
    pub target: String,
    pub revision: Option<i64>,
    pub build: Option<String>,
    pub manifest: Option<String>,
    pub at: Option<Instant>,
    pub probed: bool,
    /// The store the probe was made against (the URL and the endpoint that select it).
    pub probed_store: Option<String>,
}

fn deployed_from_row(r: &Row) -> Result<Deployed, LedgerError> {
    Ok(Deployed {
        target: r.get(0)?,
        revision: r.get(1)?,
        build: r.get(2)?,
        manifest: r.get(3)?,
        at: r.get::<Option<i64>>(4)?.map(Instant),
        probed: r.get(5)?,
        probed_store: r.get(6)?,
    })
}

pub fn target(tx: &Tx<'_>, target: &str) -> Result<Option<Deployed>, LedgerError> {
    tx.row("deploys.target", args! { "target" => target })?
        .as_ref()
        .map(deployed_from_row)
        .transpose()
}

/// Hands the rows of a target keyed by its bare name `legacy` (before the endpoint was part
/// of the key) to `key`, unless `key` has rows of its own. Returns how many rows moved.
pub fn rename_legacy(tx: &Tx<'_>, legacy: &str, key: &str) -> Result<usize, LedgerError> {
    let a = args! { "legacy" => legacy, "key" => key };
    Ok(tx.exec("deploys.rename_legacy_target", a)? + tx.exec("deploys.rename_legacy_ops", a)?)
}

pub fn targets(tx: &Tx<'_>) -> Result<Vec<Deployed>, LedgerError> {
    tx.rows("deploys.targets", &[])?
        .iter()
        .map(deployed_from_row)
        .collect()
}

/// Notes that `target`, reached as the store `store`, passed the conditional-write probe.
pub fn mark_probed(
    tx: &Tx<'_>,
    target: &str,
    store: &str,
    now: Instant,
) -> Result<(), LedgerError> {
    tx.exec(
        "deploys.mark_probed",
        args! { "target" => target, "store" => store, "now" => now.0 },
    )?;
    Ok(())
}

/// Records what is deployed on `target` (the `recorded` step), under the lease.
#[allow(clippy::too_many_arguments)]
pub fn record_deployed(
    tx: &Tx<'_>,
    target: &str,
    revision: i64,
    build: &str,
    manifest: &str,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        "deploys.record_deployed",
        lease,
        now,
        args! {
            "target" => target, "revision" => revision, "build" => build, "manifest" => manifest,
        },
    )
}
