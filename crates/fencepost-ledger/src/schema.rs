//! Versioned migrations, one list per dialect. Each migration is a numbered `.sql` file;
//! migration `i` brings the schema to version `i + 1`. All pending ones run in one
//! transaction (see the backends), and a ledger written by a newer fencepost is refused and
//! left untouched.
//!
//! The two lists are versioned apart: SQLite's carries the history of ledgers that exist in
//! the field (version 7 today); PostgreSQL's starts at the schema SQLite reached, and each
//! later change is a new file in both.

use super::LedgerError;

pub const SQLITE: &[&str] = &[
    include_str!("sql/sqlite/0001_init.sql"),
    include_str!("sql/sqlite/0002_ledger_id.sql"),
    include_str!("sql/sqlite/0003_parking_due_anchor.sql"),
    include_str!("sql/sqlite/0004_deploy.sql"),
    include_str!("sql/sqlite/0005_not_public_index.sql"),
    include_str!("sql/sqlite/0006_probed_store.sql"),
    include_str!("sql/sqlite/0007_collections.sql"),
    include_str!("sql/sqlite/0008_site_features.sql"),
    include_str!("sql/sqlite/0009_notices.sql"),
    include_str!("sql/sqlite/0010_canonical_targets.sql"),
    include_str!("sql/sqlite/0011_hosts.sql"),
    include_str!("sql/sqlite/0012_site_id.sql"),
    include_str!("sql/sqlite/0013_transparency.sql"),
    include_str!("sql/sqlite/0014_candidates.sql"),
    include_str!("sql/sqlite/0015_site_guard.sql"),
];

pub const POSTGRES: &[&str] = &[
    include_str!("sql/postgres/0001_init.sql"),
    include_str!("sql/postgres/0002_not_public_index.sql"),
    include_str!("sql/postgres/0003_probed_store.sql"),
    include_str!("sql/postgres/0004_collections.sql"),
    include_str!("sql/postgres/0005_notify.sql"),
    include_str!("sql/postgres/0006_site_features.sql"),
    include_str!("sql/postgres/0007_notices.sql"),
    include_str!("sql/postgres/0008_canonical_targets.sql"),
    include_str!("sql/postgres/0009_hosts.sql"),
    include_str!("sql/postgres/0010_site_id.sql"),
    include_str!("sql/postgres/0011_transparency.sql"),
    include_str!("sql/postgres/0012_candidates.sql"),
    include_str!("sql/postgres/0013_site_guard.sql"),
];

/// The schema versions this binary writes.
pub const SQLITE_LATEST: i64 = SQLITE.len() as i64;
pub const POSTGRES_LATEST: i64 = POSTGRES.len() as i64;

pub(super) fn refuse_newer(ledger: &str, found: i64, supported: i64) -> Result<(), LedgerError> {
    if found > supported {
        return Err(LedgerError::TooNew {
            ledger: ledger.to_string(),
            found,
            supported,
        });
    }
    Ok(())
}
