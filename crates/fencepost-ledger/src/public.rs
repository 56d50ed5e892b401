//! Read-side queries for the build: the public pages at one snapshot, their bodies, and the
//! next instant at which what the site should show changes without a write.

use crate::args;
use crate::{LedgerError, Tx};
use fencepost_core::clock::Instant;
use fencepost_core::item::ItemId;
use std::sync::Arc;

/// A public page without its body (bodies are fetched only for pages being rendered).
#[derive(Debug, Clone, PartialEq)]
pub struct PublicPage {
    pub id: ItemId,
    pub collection: Arc<str>,
    /// The item's id in its collection, as text.
    pub key: String,
    pub title: String,
    /// `YYYY-MM-DD`, or `""` for an item without a day.
    pub day: String,
    /// Declared fields and `[extra]`: canonical JSON, as stored (never re-serialised).
    pub data: Arc<str>,
    pub indexable: bool,
    pub image_sha256: Option<String>,
    pub image_content_type: Option<String>,
    pub content_hash: String,
    pub revision: i64,
    pub first_published_at: Instant,
    pub updated_at: Instant,
    /// When the item was due (absent on pages published before collections).
    pub due_at: Option<Instant>,
    /// Withdrawn (`updated_at` is when): only ever built as a notice page.
    pub withdrawn: bool,
    /// The body before `<!-- more -->`, when it has the marker.
    pub summary_html: Option<String>,
    /// Taxonomy terms, canonical JSON; `""` for none.
    pub terms: Arc<str>,
    /// A withdrawn page keeps a notice, as decided when it was withdrawn (`None`: before the
    /// ledger recorded it; the collection's `on_withdraw` decides).
    pub notice: Option<bool>,
    /// The SHA-256 of the item's JSON for the transparency log, when the ledger holds one.
    pub json_digest: Option<String>,
}

/// Equal strings shared: one allocation for each distinct text (also the build's saved page
/// rows, read back from a file). Hashed with foldhash (keyed per process, as hashbrown's
/// default), not SipHash: three lookups a row, of texts up to a page's fields long.
#[derive(Default)]
pub struct Interned(std::collections::HashSet<Arc<str>, foldhash::fast::RandomState>);

impl Interned {
    pub fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.0.get(s) {
            return a.clone();
        }
        let a: Arc<str> = s.into();
        self.0.insert(a.clone());
        a
    }
}

/// Every page, in table order (the build orders them per collection), withdrawn ones
/// flagged: callers other than a notice page's must skip those.
pub fn pages(tx: &Tx<'_>) -> Result<Vec<PublicPage>, LedgerError> {
    read_pages(tx, "public.pages", &[])
}

/// The pages changed after revision `since` (written by a public change of a later
/// revision), as [`pages`] gives them: with the pages of revision `since`, the pages of this
/// snapshot (no page row is ever deleted).
pub fn pages_since(tx: &Tx<'_>, since: i64) -> Result<Vec<PublicPage>, LedgerError> {
    read_pages(tx, "public.pages_since", args! { "since" => since })
}

fn read_pages(
    tx: &Tx<'_>,
    statement: &'static str,
    args: crate::db::Args<'_>,
) -> Result<Vec<PublicPage>, LedgerError> {
    // Most pages share a handful of collection names, and many share their fields (a price):
    // one allocation each.
    let (mut names, mut datas, mut term_sets) = (
        Interned::default(),
        Interned::default(),
        Interned::default(),
    );
    tx.rows(statement, args)?
        .into_iter()
        .map(|mut r| {
            let collection = names.get(&r.take::<String>(11)?);
            Ok(PublicPage {
                id: ItemId(r.get(0)?),
                collection,
                key: r.take::<String>(12)?,
                title: r.take(1)?,
                day: r.take(2)?,
                data: datas.get(&r.take::<String>(3)?),
                indexable: r.get(4)?,
                image_sha256: r.take(5)?,
                image_content_type: r.take(6)?,
                content_hash: r.take(7)?,
                revision: r.get(8)?,
                first_published_at: Instant(r.get(9)?),
                updated_at: Instant(r.get(10)?),
                due_at: r.get::<Option<i64>>(13)?.map(Instant),
                withdrawn: r.get(14)?,
                summary_html: r.take(15)?,
                terms: term_sets.get(&r.take::<String>(16)?),
                notice: r.get(17)?,
                json_digest: r.take(18)?,
            })
        })
        .collect::<Result<Vec<PublicPage>, LedgerError>>()
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
pub fn next_change(tx: &Tx<'_>, now: Instant) -> Result<Option<Instant>, LedgerError> {
    Ok(tx
        .one("public.next_change", crate::args! { "now" => now.0 })?
        .get::<Option<i64>>(0)?
        .map(Instant))
}
