//! Read-side queries for the build: the public pages at one snapshot, their bodies, and the
//! next instant at which what the site should show changes without a write.

use crate::args;
use crate::clock::Instant;
use crate::content::ItemId;
use crate::ledger::{LedgerError, Tx};

/// A public page without its body (bodies are fetched only for pages being rendered).
#[derive(Debug, Clone, PartialEq)]
pub struct PublicPage {
    pub id: ItemId,
    pub title: String,
    pub day: String,
    pub price: String,
    pub indexable: bool,
    pub image_sha256: Option<String>,
    pub image_content_type: Option<String>,
    pub content_hash: String,
    pub revision: i64,
    pub first_published_at: Instant,
    pub updated_at: Instant,
}

/// Every public page, in (day, id) order.
pub fn pages(tx: &Tx<'_>) -> Result<Vec<PublicPage>, LedgerError> {
    tx.rows("public.pages", &[])?
        .iter()
        .map(|r| {
            Ok(PublicPage {
                id: ItemId(r.get(0)?),
                title: r.get(1)?,
                day: r.get(2)?,
                price: r.get(3)?,
                indexable: r.get(4)?,
                image_sha256: r.get(5)?,
                image_content_type: r.get(6)?,
                content_hash: r.get(7)?,
                revision: r.get(8)?,
                first_published_at: Instant(r.get(9)?),
                updated_at: Instant(r.get(10)?),
            })
        })
        .collect()
}

/// The rendered body of a public page; `None` when the snapshot has no such page.
pub fn body(tx: &Tx<'_>, id: ItemId) -> Result<Option<String>, LedgerError> {
    tx.row("public.body", args! { "id" => id.0 })?
        .map(|r| r.get(0))
        .transpose()
}

/// The earliest embargo end among items that are present but not public (parked ones
/// excepted). Computed from the ledger alone (no clock), so the same ledger always gives the
/// same answer.
pub fn next_change(tx: &Tx<'_>) -> Result<Option<Instant>, LedgerError> {
    Ok(tx
        .one("public.next_change", &[])?
        .get::<Option<i64>>(0)?
        .map(Instant))
}
