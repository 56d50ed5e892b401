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

/// Every public page, in (day, id) order (days are ISO dates, so bytes order them in any
/// collation).
pub fn pages(tx: &Tx<'_>) -> Result<Vec<PublicPage>, LedgerError> {
    let mut pages = tx
        .rows("public.pages", &[])?
        .into_iter()
        .map(|mut r| {
            Ok(PublicPage {
                id: ItemId(r.get(0)?),
                title: r.take(1)?,
                day: r.take(2)?,
                price: r.take(3)?,
                indexable: r.get(4)?,
                image_sha256: r.take(5)?,
                image_content_type: r.take(6)?,
                content_hash: r.take(7)?,
                revision: r.get(8)?,
                first_published_at: Instant(r.get(9)?),
                updated_at: Instant(r.get(10)?),
            })
        })
        .collect::<Result<Vec<PublicPage>, LedgerError>>()?;
    pages.sort_unstable_by(|a, b| (a.day.as_bytes(), a.id.0).cmp(&(b.day.as_bytes(), b.id.0)));
    Ok(pages)
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
