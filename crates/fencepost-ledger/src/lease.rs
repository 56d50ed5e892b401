//! Leases with fencing tokens.
//!
//! Taking a lease is one upsert: a missing key is created with fence 1; an expired lease
//! changes hands and its fence goes up by one; a live lease matches nothing and the caller
//! gets `None`. Every write that depends on a lease repeats the lease guard inside the
//! statement, and first calls [`lock`], so a holder that stalled past its expiry and lost the
//! lease changes nothing — on PostgreSQL too, where the guard alone reads a snapshot.

use crate::args;
use crate::db::{Args, Dialect, Out, Step};
use crate::{Ledger, LedgerError, Tx};
use fencepost_core::clock::Instant;

/// What a lease is for: the closed set of jobs that take leases. Its text form is the row's
/// key (`publication:12`, `image:https://…`, `deploy:s3://…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseKey<'a> {
    /// Publishing (or updating, or withdrawing) one item. (The items sweep's SQL spells
    /// this form out: `'publication:' || id`.)
    Publication(fencepost_core::item::ItemId),
    /// Fetching and storing one image source.
    Image(&'a str),
    /// Deploying to one target URL.
    Deploy(&'a str),
}

impl std::fmt::Display for LeaseKey<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaseKey::Publication(id) => write!(f, "publication:{}", id.0),
            LeaseKey::Image(source) => write!(f, "image:{source}"),
            LeaseKey::Deploy(target) => write!(f, "deploy:{target}"),
        }
    }
}

/// A random identity for one run of a job.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(transparent)]
pub struct OwnerId(pub String);

impl OwnerId {
    pub fn random() -> OwnerId {
        OwnerId(uuid::Uuid::new_v4().simple().to_string())
    }
}

/// A fencing token: goes up by one every time a lease changes hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct Fence(pub i64);

/// A lease this run holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub key: String,
    pub owner: OwnerId,
    pub fence: Fence,
    pub expires_at: Instant,
}

fn acquire_step(key: &str, owner: &OwnerId, now: Instant, expires_at: Instant) -> Step {
    Step::query(
        "lease.acquire",
        args! { "key" => key, "owner" => owner.0, "expires_at" => expires_at.0, "now" => now.0 },
    )
}

/// The lease an acquire step answered with, if it took one.
fn taken(
    key: String,
    owner: &OwnerId,
    expires_at: Instant,
    out: Out,
) -> Result<Option<Lease>, LedgerError> {
    Ok(match out.rows().first() {
        None => None,
        Some(r) => Some(Lease {
            key,
            owner: owner.clone(),
            fence: Fence(r.get(0)?),
            expires_at,
        }),
    })
}

/// Whether anyone holds `key` at `now`.
pub fn held(tx: &Tx<'_>, key: &LeaseKey<'_>, now: Instant) -> Result<bool, LedgerError> {
    Ok(tx
        .one(
            "lease.live",
            args! { "key" => key.to_string(), "now" => now.0 },
        )?
        .get::<i64>(0)?
        > 0)
}

/// Tries to take `key` for `owner` until `now + secs`. `None`: someone else holds it.
pub fn acquire(
    tx: &Tx<'_>,
    key: &LeaseKey<'_>,
    owner: &OwnerId,
    now: Instant,
    secs: u64,
) -> Result<Option<Lease>, LedgerError> {
    let (key, expires_at) = (key.to_string(), now.plus_secs(secs));
    let mut out = tx.pipeline(&[acquire_step(&key, owner, now, expires_at)])?;
    taken(key, owner, expires_at, out.remove(0))
}

/// Takes each of `keys` it can; `None` for those someone else holds. The takes go out as one
/// pipeline.
///
/// On SQLite all in one transaction (writers are serial anyway, and one commit is far cheaper
/// than many). On PostgreSQL each in a transaction of its own (one statement, no BEGIN): an
/// upsert that meets a lease row still locks it until its transaction ends, and holding such
/// locks while taking more is how two hosts would deadlock.
pub fn acquire_all(
    ledger: &mut Ledger,
    keys: &[LeaseKey<'_>],
    owner: &OwnerId,
    now: Instant,
    secs: u64,
) -> Result<Vec<Option<Lease>>, LedgerError> {
    let expires_at = now.plus_secs(secs);
    let names: Vec<String> = keys.iter().map(ToString::to_string).collect();
    let steps: Vec<Step> = names
        .iter()
        .map(|key| acquire_step(key, owner, now, expires_at))
        .collect();
    let outs = match ledger.dialect() {
        Dialect::Sqlite => ledger.write(|tx| tx.pipeline(&steps))?,
        Dialect::Postgres => ledger.each_statement(|tx| tx.pipeline(&steps))?,
    };
    names
        .into_iter()
        .zip(outs)
        .map(|(key, out)| taken(key, owner, expires_at, out))
        .collect()
}

/// The [`lock`] statement as a pipeline step.
pub fn lock_step(lease: &Lease, now: Instant) -> Step {
    Step::query(
        "lease.lock",
        args! { "lease_key" => lease.key, "owner" => lease.owner.0, "fence" => lease.fence.0, "now" => now.0 },
    )
}

/// A statement that depends on `lease`, as pipeline steps: the lease row locked first (see
/// [`lock`]), then the statement, bound to the guard's parameters (`:lease_key`, `:owner`,
/// `:fence`, `:now`) and `extra`.
pub fn guarded_steps(
    statement: &'static str,
    lease: &Lease,
    now: Instant,
    extra: Args<'_>,
) -> [Step; 2] {
    let guard = args! {
        "now" => now.0, "lease_key" => lease.key, "owner" => lease.owner.0, "fence" => lease.fence.0,
    };
    [
        lock_step(lease, now),
        Step::exec(statement, &crate::db::join(guard, extra)),
    ]
}

/// Runs [`guarded_steps`]; returns whether the statement changed exactly one row (false: the
/// lease is lost, or the row is not in the state the statement asks for).
pub fn guarded(
    tx: &Tx<'_>,
    statement: &'static str,
    lease: &Lease,
    now: Instant,
    extra: Args<'_>,
) -> Result<bool, LedgerError> {
    let out = tx.pipeline(&guarded_steps(statement, lease, now, extra))?;
    Ok(out[0].count() == 1 && out[1].count() == 1)
}

/// The [`release`] statement as a pipeline step.
pub fn release_step(lease: &Lease, now: Instant) -> Step {
    Step::exec(
        "lease.release",
        args! { "key" => lease.key, "owner" => lease.owner.0, "fence" => lease.fence.0, "now" => now.0 },
    )
}

/// Locks `lease`'s row for the rest of the transaction, and says whether it is still held.
/// Every unit of work under a lease calls it first: on PostgreSQL a takeover then waits for
/// this transaction to end, so a write under an old fence can never commit after a newer
/// fence was granted.
pub fn lock(tx: &Tx<'_>, lease: &Lease, now: Instant) -> Result<bool, LedgerError> {
    Ok(tx
        .row(
            "lease.lock",
            args! { "lease_key" => lease.key, "owner" => lease.owner.0, "fence" => lease.fence.0, "now" => now.0 },
        )?
        .is_some())
}

/// Gives the lease back at once (guarded by owner and fence), so the next run need not wait
/// for it to expire. Returns whether this run still held it.
pub fn release(tx: &Tx<'_>, lease: &Lease, now: Instant) -> Result<bool, LedgerError> {
    let n = tx.exec(
        "lease.release",
        args! { "key" => lease.key, "owner" => lease.owner.0, "fence" => lease.fence.0, "now" => now.0 },
    )?;
    Ok(n == 1)
}

/// Gives back every live lease `owner` holds, whatever its key and fence: a process that is
/// abandoning its work (`fencepost run` at its shutdown deadline) lets the next run in at
/// once instead of after the leases expire. Safe while that work may still be running: every
/// write under a lease is guarded by it, and the guard now finds it expired. Returns how many
/// were held.
pub fn release_owner(tx: &Tx<'_>, owner: &OwnerId, now: Instant) -> Result<usize, LedgerError> {
    tx.exec(
        "lease.release_owner",
        args! { "owner" => owner.0, "now" => now.0 },
    )
}

/// Extends `lease` to `now + secs` if it is still held (same fence): long work keeps it
/// without letting anyone in between. Returns the extended lease.
pub fn extend(
    tx: &Tx<'_>,
    lease: &Lease,
    now: Instant,
    secs: u64,
) -> Result<Option<Lease>, LedgerError> {
    let expires_at = now.plus_secs(secs);
    let n = tx.exec(
        "lease.extend",
        args! {
            "key" => lease.key, "owner" => lease.owner.0, "fence" => lease.fence.0,
            "now" => now.0, "expires_at" => expires_at.0,
        },
    )?;
    Ok((n == 1).then(|| Lease {
        expires_at,
        ..lease.clone()
    }))
}

/// Whether `lease` is still held at `now`.
pub fn holds(tx: &Tx<'_>, lease: &Lease, now: Instant) -> Result<bool, LedgerError> {
    tx.one(
        "lease.holds",
        args! { "lease_key" => lease.key, "owner" => lease.owner.0, "fence" => lease.fence.0, "now" => now.0 },
    )?
    .get(0)
}

/// The fence of the lease named `key` (`publication:1`, …): 0 when it was never taken,
/// higher after each takeover. For `status` and tests, which observe the ledger through this
/// API rather than its tables.
pub fn fence(tx: &Tx<'_>, key: &str) -> Result<Option<i64>, LedgerError> {
    tx.rows("lease.fence", args! { "key" => key })?
        .first()
        .map(|r| r.get(0))
        .transpose()
}

pub fn count_live(tx: &Tx<'_>, now: Instant) -> Result<i64, LedgerError> {
    tx.one("lease.count_live", args! { "now" => now.0 })?.get(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const K: LeaseKey<'static> = LeaseKey::Deploy("k");

    #[test]
    fn live_lease_never_changes_hands_expired_one_does_with_fence_plus_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut l = Ledger::open(&dir.path().join("l.sqlite"), Duration::from_secs(5)).unwrap();
        let (a, b) = (OwnerId::random(), OwnerId::random());
        let t0 = Instant(1_000_000);
        let mut take = |o: &OwnerId, t: Instant| l.write(|tx| acquire(tx, &K, o, t, 180)).unwrap();
        let la = take(&a, t0).unwrap();
        assert_eq!(la.fence, Fence(1));
        assert!(take(&b, t0.plus_secs(179)).is_none());
        let lb = take(&b, t0.plus_secs(180)).unwrap();
        assert_eq!(lb.fence, Fence(2));
        l.write(|tx| {
            assert!(!holds(tx, &la, t0.plus_secs(180))?);
            assert!(!lock(tx, &la, t0.plus_secs(180))?);
            assert!(lock(tx, &lb, t0.plus_secs(180))?);
            // The old holder cannot release the new holder's lease.
            assert!(!release(tx, &la, t0.plus_secs(181))?);
            assert!(release(tx, &lb, t0.plus_secs(181))?);
            Ok(())
        })
        .unwrap();
        // Released: the next claimant gets it at once, fence still growing.
        let la2 = l
            .write(|tx| acquire(tx, &K, &a, t0.plus_secs(181), 180))
            .unwrap()
            .unwrap();
        assert_eq!(la2.fence, Fence(3));
    }
}
