//! Leases with fencing tokens.
//!
//! Taking a lease is one upsert: a missing key is created with fence 1; an expired lease
//! changes hands and its fence goes up by one; a live lease matches nothing and the caller
//! gets `None`. Every write that depends on a lease repeats [`lease_guard!`] inside the
//! statement, so a holder that stalled past its expiry and lost the lease changes nothing.

use crate::clock::Instant;
use rusqlite::{named_params, Connection, OptionalExtension};

/// The lease guard, for `concat!` into statements. Binds `:lease_key`, `:owner`, `:fence`
/// and `:now`.
#[macro_export]
macro_rules! lease_guard {
    () => {
        "EXISTS (SELECT 1 FROM job_leases WHERE key = :lease_key AND owner_id = :owner \
         AND fence = :fence AND expires_at > :now)"
    };
}

/// What a lease is for: the closed set of jobs that take leases. Its text form is the row's
/// key (`publication:12`, `image:https://…`, `deploy:s3://…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseKey<'a> {
    /// Publishing (or updating, or withdrawing) one item. (The items sweep's SQL spells
    /// this form out: `'publication:' || id`.)
    Publication(crate::content::ItemId),
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

const ACQUIRE: &str = "INSERT INTO job_leases (key, owner_id, fence, expires_at, updated_at)
     VALUES (:key, :owner, 1, :expires_at, :now)
     ON CONFLICT (key) DO UPDATE SET
         owner_id = excluded.owner_id,
         fence = job_leases.fence + 1,
         expires_at = excluded.expires_at,
         updated_at = excluded.updated_at
     WHERE job_leases.expires_at <= :now
     RETURNING fence";

const RELEASE: &str = "UPDATE job_leases SET expires_at = 0, updated_at = :now
     WHERE key = :key AND owner_id = :owner AND fence = :fence";

const HOLDS: &str = concat!("SELECT ", lease_guard!());

/// Extends a live lease this owner holds (same fence): long work keeps it without letting
/// anyone in between.
const EXTEND: &str = "UPDATE job_leases SET expires_at = :expires_at, updated_at = :now
     WHERE key = :key AND owner_id = :owner AND fence = :fence AND expires_at > :now";

const COUNT_LIVE: &str = "SELECT count(*) FROM job_leases WHERE expires_at > :now";

/// Tries to take `key` for `owner` until `now + secs`. `None`: someone else holds it.
pub fn acquire(
    conn: &Connection,
    key: &LeaseKey<'_>,
    owner: &OwnerId,
    now: Instant,
    secs: u64,
) -> rusqlite::Result<Option<Lease>> {
    let expires_at = now.plus_secs(secs);
    let fence: Option<i64> = conn
        .prepare_cached(ACQUIRE)?
        .query_row(
            named_params! { ":key": key.to_string(), ":owner": owner.0, ":expires_at": expires_at.0, ":now": now.0 },
            |r| r.get(0),
        )
        .optional()?;
    Ok(fence.map(|f| Lease {
        key: key.to_string(),
        owner: owner.clone(),
        fence: Fence(f),
        expires_at,
    }))
}

/// Gives the lease back at once (guarded by owner and fence), so the next run need not wait
/// for it to expire. Returns whether this run still held it.
pub fn release(conn: &Connection, lease: &Lease, now: Instant) -> rusqlite::Result<bool> {
    let n = conn.prepare_cached(RELEASE)?.execute(
        named_params! { ":key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0, ":now": now.0 },
    )?;
    Ok(n == 1)
}

/// Extends `lease` to `now + secs` if it is still held; returns the extended lease.
pub fn extend(
    conn: &Connection,
    lease: &Lease,
    now: Instant,
    secs: u64,
) -> rusqlite::Result<Option<Lease>> {
    let expires_at = now.plus_secs(secs);
    let n = conn.prepare_cached(EXTEND)?.execute(named_params! {
        ":key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
        ":now": now.0, ":expires_at": expires_at.0,
    })?;
    Ok((n == 1).then(|| Lease {
        expires_at,
        ..lease.clone()
    }))
}

/// Whether `lease` is still held at `now`.
pub fn holds(conn: &Connection, lease: &Lease, now: Instant) -> rusqlite::Result<bool> {
    conn.prepare_cached(HOLDS)?.query_row(
        named_params! { ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0, ":now": now.0 },
        |r| r.get(0),
    )
}

pub fn count_live(conn: &Connection, now: Instant) -> rusqlite::Result<i64> {
    conn.prepare_cached(COUNT_LIVE)?
        .query_row(named_params! { ":now": now.0 }, |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: LeaseKey<'static> = LeaseKey::Deploy("k");
    use crate::ledger::Ledger;
    use std::time::Duration;

    fn ledger() -> (tempfile::TempDir, Ledger) {
        let dir = tempfile::tempdir().unwrap();
        let l = Ledger::open(&dir.path().join("l.sqlite"), Duration::from_secs(5)).unwrap();
        (dir, l)
    }

    #[test]
    fn live_lease_never_changes_hands_expired_one_does_with_fence_plus_one() {
        let (_d, l) = ledger();
        let (a, b) = (OwnerId::random(), OwnerId::random());
        let t0 = Instant(1_000_000);
        let la = acquire(l.conn(), &K, &a, t0, 180).unwrap().unwrap();
        assert_eq!(la.fence, Fence(1));
        assert!(acquire(l.conn(), &K, &b, t0.plus_secs(179), 180)
            .unwrap()
            .is_none());
        assert!(holds(l.conn(), &la, t0.plus_secs(179)).unwrap());
        let lb = acquire(l.conn(), &K, &b, t0.plus_secs(180), 180)
            .unwrap()
            .unwrap();
        assert_eq!(lb.fence, Fence(2));
        assert!(!holds(l.conn(), &la, t0.plus_secs(180)).unwrap());
        // The old holder cannot release the new holder's lease.
        assert!(!release(l.conn(), &la, t0.plus_secs(181)).unwrap());
        assert!(release(l.conn(), &lb, t0.plus_secs(181)).unwrap());
        // Released: the next claimant gets it at once, fence still growing.
        let la2 = acquire(l.conn(), &K, &a, t0.plus_secs(181), 180)
            .unwrap()
            .unwrap();
        assert_eq!(la2.fence, Fence(3));
    }

    #[test]
    fn threads_racing_for_one_key_get_exactly_one_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.sqlite");
        drop(Ledger::open(&path, Duration::from_secs(5)).unwrap());
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    let l = Ledger::open(&path, Duration::from_secs(30)).unwrap();
                    barrier.wait();
                    acquire(
                        l.conn(),
                        &LeaseKey::Deploy("race"),
                        &OwnerId::random(),
                        Instant(5_000),
                        60,
                    )
                    .unwrap()
                })
            })
            .collect();
        let won: Vec<Lease> = handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect();
        assert_eq!(won.len(), 1);
        assert_eq!(won[0].fence, Fence(1));
    }
}
