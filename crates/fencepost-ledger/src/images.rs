//! Images: each source (a path under `content/` or a URL) is fetched once, under its own
//! lease, and stored content-addressed; the row records the sha256 the page refers to.

use crate::args;
use crate::lease::{self, Lease};
use crate::{LedgerError, Tx};
use fencepost_core::clock::Instant;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredImage {
    pub sha256: String,
    pub bytes: i64,
    pub content_type: String,
}

pub fn lookup(tx: &Tx<'_>, source: &str) -> Result<Option<StoredImage>, LedgerError> {
    tx.row("images.lookup", args! { "source" => source })?
        .map(|r| {
            Ok(StoredImage {
                sha256: r.get(0)?,
                bytes: r.get(1)?,
                content_type: r.get(2)?,
            })
        })
        .transpose()
}

pub fn record_stored(
    tx: &Tx<'_>,
    source: &str,
    img: &StoredImage,
    lease: &Lease,
    now: Instant,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        "images.record_stored",
        lease,
        now,
        args! {
            "source" => source, "sha256" => img.sha256, "bytes" => img.bytes,
            "content_type" => img.content_type,
        },
    )
}

/// A parked image: how many fetches failed, and the last error.
/// An image's state (`stored`, `failed`, …) and how many fetches of it failed so far, if the
/// ledger knows it (what `status` and tests read instead of the table).
pub fn state(tx: &Tx<'_>, source: &str) -> Result<Option<(String, i64)>, LedgerError> {
    let rows = tx.rows("images.state", args! { "source" => source })?;
    rows.first().map(|r| Ok((r.get(0)?, r.get(1)?))).transpose()
}

pub fn parked(tx: &Tx<'_>, source: &str) -> Result<Option<(i64, String)>, LedgerError> {
    tx.row("images.parked", args! { "source" => source })?
        .map(|r| Ok((r.get(0)?, r.get(1)?)))
        .transpose()
}

/// Records a failed fetch. A failure never replaces a stored image: the page that has it
/// keeps it. After `max_attempts` failures the image is parked (`None`: never, for local
/// files, which are cheap to read again and change with the editor's next save).
pub fn record_failed(
    tx: &Tx<'_>,
    source: &str,
    error: &str,
    lease: &Lease,
    max_attempts: Option<u32>,
    now: Instant,
) -> Result<bool, LedgerError> {
    lease::guarded(
        tx,
        "images.record_failed",
        lease,
        now,
        args! { "source" => source, "error" => error, "max_attempts" => max_attempts },
    )
}
