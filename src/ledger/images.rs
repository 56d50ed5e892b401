//! Images: each source (a path under `content/` or a URL) is fetched once, under its own
//! lease, and stored content-addressed; the row records the sha256 the page refers to.

use crate::clock::Instant;
use crate::lease_guard;
use crate::ledger::lease::Lease;
use rusqlite::{named_params, Connection, OptionalExtension};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredImage {
    pub sha256: String,
    pub bytes: i64,
    pub content_type: String,
}

const LOOKUP: &str = "SELECT sha256, bytes, content_type FROM images
     WHERE source = :source AND state = 'stored' AND sha256 IS NOT NULL";

const RECORD_STORED: &str = concat!(
    "INSERT INTO images (source, sha256, bytes, content_type, state, attempts, last_error, updated_at)
     SELECT :source, :sha256, :bytes, :content_type, 'stored', 1, NULL, :now WHERE ",
    lease_guard!(),
    "
     ON CONFLICT (source) DO UPDATE SET
         sha256 = excluded.sha256, bytes = excluded.bytes, content_type = excluded.content_type,
         state = 'stored', attempts = images.attempts + 1, last_error = NULL, updated_at = excluded.updated_at"
);

/// A failure never replaces a stored image: the page that has it keeps it. After
/// `:max_attempts` failures the image is parked (`:max_attempts` NULL: never, for local files,
/// which are cheap to read again and change with the editor's next save).
const RECORD_FAILED: &str = concat!(
    "INSERT INTO images (source, state, attempts, last_error, updated_at, parked_at)
     SELECT :source, 'failed', 1, :error, :now, CASE WHEN 1 >= :max_attempts THEN :now END WHERE ",
    lease_guard!(),
    "
     ON CONFLICT (source) DO UPDATE SET
         state = CASE WHEN images.state = 'stored' THEN 'stored' ELSE 'failed' END,
         attempts = images.attempts + 1, last_error = excluded.last_error, updated_at = excluded.updated_at,
         parked_at = CASE WHEN images.attempts + 1 >= :max_attempts THEN excluded.updated_at
                          ELSE images.parked_at END"
);

const PARKED: &str = "SELECT attempts, coalesce(last_error, '') FROM images
     WHERE source = :source AND parked_at IS NOT NULL AND state <> 'stored'";

pub fn lookup(conn: &Connection, source: &str) -> rusqlite::Result<Option<StoredImage>> {
    conn.prepare_cached(LOOKUP)?
        .query_row(named_params! { ":source": source }, |r| {
            Ok(StoredImage {
                sha256: r.get(0)?,
                bytes: r.get(1)?,
                content_type: r.get(2)?,
            })
        })
        .optional()
}

pub fn record_stored(
    conn: &Connection,
    source: &str,
    img: &StoredImage,
    lease: &Lease,
    now: Instant,
) -> rusqlite::Result<bool> {
    let n = conn.prepare_cached(RECORD_STORED)?.execute(named_params! {
        ":source": source, ":sha256": img.sha256, ":bytes": img.bytes, ":content_type": img.content_type,
        ":now": now.0, ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}

/// A parked image: how many fetches failed, and the last error.
pub fn parked(conn: &Connection, source: &str) -> rusqlite::Result<Option<(i64, String)>> {
    conn.prepare_cached(PARKED)?
        .query_row(named_params! { ":source": source }, |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()
}

pub fn record_failed(
    conn: &Connection,
    source: &str,
    error: &str,
    lease: &Lease,
    max_attempts: Option<u32>,
    now: Instant,
) -> rusqlite::Result<bool> {
    let n = conn.prepare_cached(RECORD_FAILED)?.execute(named_params! {
        ":source": source, ":error": error, ":max_attempts": max_attempts,
        ":now": now.0, ":lease_key": lease.key, ":owner": lease.owner.0, ":fence": lease.fence.0,
    })?;
    Ok(n == 1)
}
