//! The clock a ledger's instants are decided by: due instants, lease expiry and audit times.
//! On a shared ledger it is never this host's alone: PostgreSQL's, or a bucket's store's.

use super::{bucket, postgres, Backend, Ledger, LedgerError, Location};
use fencepost_core::clock::Clock;
use std::time::Duration;

/// The clock every instant on the ledger at `location` is decided by, measured now: this
/// host's for SQLite; the database's on PostgreSQL (this host's, corrected by the offset
/// measured at the midpoint of one round trip); on a bucket, the store's (see
/// `bucket::clock`): refused when this host is certainly off by more than `tolerance_ms`,
/// else this host's moved back to the earliest the store's clock can be.
pub fn decision(
    location: &Location,
    busy_timeout: Duration,
    tolerance_ms: u64,
) -> Result<fencepost_core::clock::Clock, LedgerError> {
    match location {
        Location::Sqlite(_) => Ok(Clock::System),
        Location::Postgres(_) => {
            let l = Ledger::open_at(location, busy_timeout)?;
            let Backend::Postgres(conn) = &l.backend else {
                unreachable!("a postgres:// location opens PostgreSQL")
            };
            let offset_ms = postgres::clock_offset_ms(conn, &l.name)?;
            Ok(Clock::measured(offset_ms))
        }
        Location::Bucket { url, .. } => {
            let name = location.display();
            let skew = bucket::clock::measure(url, &name)?;
            let offset_ms = bucket::clock::offset(&skew, tolerance_ms, &name)?;
            tracing::debug!(
                ledger = %name,
                min_ms = skew.min_ms,
                max_ms = skew.max_ms,
                offset_ms,
                "this host's clock against the store's"
            );
            Ok(Clock::measured(offset_ms))
        }
    }
}
