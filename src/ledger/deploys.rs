//! The deploy journal: one row per deploy operation (frozen plan, step cursor, attempts) and
//! one per target (probed, what is deployed there). Every step's write is guarded by the
//! operation's lease (`deploy:<target>`), as publish's are.

use crate::clock::Instant;
use crate::lease_guard;
use crate::ledger::lease::Lease;
use rusqlite::{named_params, Connection, OptionalExtension};

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

    fn parse(s: &str) -> rusqlite::Result<Step> {
        Ok(match s {
            "planned" => Step::Planned,
            "blobs" => Step::Blobs,
            "manifest" => Step::Manifest,
            "pointer" => Step::Pointer,
            "recorded" => Step::Recorded,
            "done" => Step::Done,
            other => {
                return Err(rusqlite::Error::FromSqlConversionFailure(
                    0,
                    rusqlite::types::Type::Text,
                    format!("unknown deploy step {other:?}").into(),
                ))
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
    /// The frozen plan (JSON; see `deploy::Plan`).
    #[serde(skip)]
    pub plan: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub outcome: Option<String>,
}

const OP_COLUMNS: &str =
    "SELECT id, target, status, step, plan, attempts, last_error, outcome, kind FROM deploy_ops";

fn op_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Op> {
    Ok(Op {
        id: r.get(0)?,
        target: r.get(1)?,
        status: r.get(2)?,
        step: Step::parse(&r.get::<_, String>(3)?)?,
        plan: r.get(4)?,
        attempts: r.get(5)?,
        last_error: r.get(6)?,
        outcome: r.get(7)?,
        kind: r.get(8)?,
    })
}

/// The live deploy on `target`, if any.
pub fn pending(conn: &Connection, target: &str) -> rusqlite::Result<Option<Op>> {
    pending_of(conn, target, "deploy")
}

/// The live operation of `kind` (`deploy` or `rollback`) on `target`, if any.
pub fn pending_of(conn: &Connection, target: &str, kind: &str) -> rusqlite::Result<Option<Op>> {
    conn.prepare_cached(&format!(
        "{OP_COLUMNS} WHERE target = :target AND kind = :kind AND status = 'pending'"
    ))?
    .query_row(
        named_params! { ":target": target, ":kind": kind },
        op_from_row,
    )
    .optional()
}

pub fn get(conn: &Connection, id: &str) -> rusqlite::Result<Option<Op>> {
    conn.prepare_cached(&format!("{OP_COLUMNS} WHERE id = :id"))?
        .query_row(named_params! { ":id": id }, op_from_row)
        .optional()
}

/// Operations not done (pending or parked), for `status`.
pub fn unfinished(conn: &Connection) -> rusqlite::Result<Vec<Op>> {
    conn.prepare_cached(&format!(
        "{OP_COLUMNS} WHERE status <> 'done' ORDER BY created_at"
    ))?
    .query_map([], op_from_row)?
    .collect()
}

/// Starts an operation with its frozen plan, under the lease. Returns false when another
/// operation on the target is already pending (the partial unique index) or the lease is
/// gone.
pub fn insert(
    conn: &Connection,
    id: &str,
    target: &str,
    plan: &str,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    insert_of(conn, id, target, "deploy", plan, lease, now)
}

/// [`insert`] for an operation of `kind`.
pub fn insert_of(
    conn: &Connection,
    id: &str,
    target: &str,
    kind: &str,
    plan: &str,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    let sql = concat!(
        "INSERT INTO deploy_ops (id, target, kind, status, step, plan, attempts, created_at, updated_at)
         SELECT :id, :target, :kind, 'pending', 'planned', :plan, 1, :now, :now WHERE ",
        lease_guard!(),
        " ON CONFLICT DO NOTHING"
    );
    let n = conn.prepare_cached(sql)?.execute(named_params! {
        ":id": id, ":target": target, ":kind": kind, ":plan": plan, ":now": now.0,
        ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}

/// Counts an attempt at resuming `id` under the lease.
pub fn count_attempt(
    conn: &Connection,
    id: &str,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    exec_guarded(
        conn,
        concat!(
            "UPDATE deploy_ops SET attempts = attempts + 1, updated_at = :now
             WHERE id = :id AND status = 'pending' AND ",
            lease_guard!()
        ),
        id,
        lease,
        now,
    )
}

/// Runs a statement over one operation that binds only `:id`, `:now` and the lease guard.
fn exec_guarded(
    conn: &Connection,
    sql: &str,
    id: &str,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    let n = conn.prepare_cached(sql)?.execute(named_params! {
        ":id": id, ":now": now.0,
        ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}

/// Moves the cursor from `from` to `to`, under the lease; `outcome` closes the operation
/// when `to` is `done`. Returns false when the lease was lost or the cursor moved already.
pub fn advance(
    conn: &Connection,
    id: &str,
    from: Step,
    to: Step,
    outcome: Option<&str>,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    let sql = concat!(
        "UPDATE deploy_ops SET step = :to, updated_at = :now, last_error = NULL,
                status = CASE WHEN :to = 'done' THEN 'done' ELSE status END,
                outcome = coalesce(:outcome, outcome)
         WHERE id = :id AND step = :from AND status = 'pending' AND ",
        lease_guard!()
    );
    let n = conn.prepare_cached(sql)?.execute(named_params! {
        ":id": id, ":from": from.as_str(), ":to": to.as_str(), ":outcome": outcome, ":now": now.0,
        ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}

/// Records a failed attempt; after `max_attempts` the operation is parked `failed`.
pub fn record_failure(
    conn: &Connection,
    id: &str,
    error: &str,
    max_attempts: u32,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    let sql = concat!(
        "UPDATE deploy_ops SET last_error = :error, updated_at = :now,
                status = CASE WHEN attempts >= :max THEN 'failed' ELSE status END
         WHERE id = :id AND status = 'pending' AND ",
        lease_guard!()
    );
    let n = conn.prepare_cached(sql)?.execute(named_params! {
        ":id": id, ":error": error, ":max": max_attempts, ":now": now.0,
        ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}

/// Parks an operation whose attempts are used up without a recorded failure (the runs
/// crashed or were killed).
pub fn park(conn: &Connection, id: &str, lease: &Lease, now: Instant) -> rusqlite::Result<bool> {
    exec_guarded(
        conn,
        concat!(
            "UPDATE deploy_ops SET status = 'failed', updated_at = :now,
                    last_error = coalesce(last_error, 'no attempt finished (the runs stopped or crashed)')
             WHERE id = :id AND status = 'pending' AND ",
            lease_guard!()
        ),
        id,
        lease,
        now,
    )
}

/// Re-arms a parked operation. Returns false when there is no such parked operation, or
/// another operation on its target is pending (the partial unique index refuses a second).
pub fn retry(conn: &Connection, id: &str, now: Instant) -> rusqlite::Result<bool> {
    let n = conn
        .prepare_cached(
            "UPDATE OR IGNORE deploy_ops SET status = 'pending', attempts = 0, updated_at = :now
             WHERE id = :id AND status = 'failed'",
        )?
        .execute(named_params! { ":id": id, ":now": now.0 })?;
    Ok(n == 1)
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
}

const TARGET_COLUMNS: &str =
    "SELECT target, deployed_revision, deployed_build, deployed_manifest, deployed_at,
            probed_at IS NOT NULL
     FROM deploy_targets";

fn deployed_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Deployed> {
    Ok(Deployed {
        target: r.get(0)?,
        revision: r.get(1)?,
        build: r.get(2)?,
        manifest: r.get(3)?,
        at: r.get::<_, Option<i64>>(4)?.map(Instant),
        probed: r.get(5)?,
    })
}

pub fn target(conn: &Connection, target: &str) -> rusqlite::Result<Option<Deployed>> {
    conn.prepare_cached(&format!("{TARGET_COLUMNS} WHERE target = :target"))?
        .query_row(named_params! { ":target": target }, deployed_from_row)
        .optional()
}

pub fn targets(conn: &Connection) -> rusqlite::Result<Vec<Deployed>> {
    conn.prepare_cached(&format!("{TARGET_COLUMNS} ORDER BY target"))?
        .query_map([], deployed_from_row)?
        .collect()
}

/// Notes that `target` passed the conditional-write probe.
pub fn mark_probed(conn: &Connection, target: &str, now: Instant) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO deploy_targets (target, probed_at) VALUES (:target, :now)
         ON CONFLICT (target) DO UPDATE SET probed_at = excluded.probed_at",
    )?
    .execute(named_params! { ":target": target, ":now": now.0 })?;
    Ok(())
}

/// Records what is deployed on `target` (the `recorded` step), under the lease.
#[allow(clippy::too_many_arguments)]
pub fn record_deployed(
    conn: &Connection,
    target: &str,
    revision: i64,
    build: &str,
    manifest: &str,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    let sql = concat!(
        "INSERT INTO deploy_targets (target, deployed_revision, deployed_build, deployed_manifest, deployed_at)
         SELECT :target, :revision, :build, :manifest, :now WHERE ",
        lease_guard!(),
        " ON CONFLICT (target) DO UPDATE SET deployed_revision = excluded.deployed_revision,
             deployed_build = excluded.deployed_build, deployed_manifest = excluded.deployed_manifest,
             deployed_at = excluded.deployed_at"
    );
    let n = conn.prepare_cached(sql)?.execute(named_params! {
        ":target": target, ":revision": revision, ":build": build, ":manifest": manifest, ":now": now.0,
        ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}
