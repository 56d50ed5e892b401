//! Read-side queries for the build: the public pages at one snapshot, their bodies, and the
//! next instant at which what the site should show changes without a write.

use crate::clock::Instant;
use crate::content::ItemId;
use rusqlite::{named_params, Connection};

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

const PUBLIC_PAGES: &str = "SELECT p.item_id, p.title, p.day, p.price, p.indexable, p.image_sha256,
            (SELECT img.content_type FROM images img WHERE img.sha256 = p.image_sha256 LIMIT 1),
            p.content_hash, p.revision, p.first_published_at, p.updated_at
     FROM pages p
     WHERE p.withdrawn = 0
     ORDER BY p.day, p.item_id";

const BODY: &str = "SELECT body_html FROM page_bodies WHERE item_id = :id";

/// Embargo ends still ahead of the ledger: present items that are not public yet. A parked
/// item does not count: it will not change the site until someone re-arms it, and an instant
/// it already missed would otherwise pin every consumer's cap in the past.
const NEXT_CHANGE: &str = "SELECT min(publish_at) FROM items
     WHERE state IN ('pending', 'processing', 'withdrawn') AND source_hash IS NOT NULL
       AND wants_withdrawn = 0 AND parked_at IS NULL";

/// Every public page, in (day, id) order.
pub fn pages(conn: &Connection) -> rusqlite::Result<Vec<PublicPage>> {
    let mut stmt = conn.prepare_cached(PUBLIC_PAGES)?;
    let rows = stmt.query_map([], |r| {
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
    })?;
    rows.collect()
}

/// The rendered body of a public page; `None` when the snapshot has no such page.
pub fn body(conn: &Connection, id: ItemId) -> rusqlite::Result<Option<String>> {
    use rusqlite::OptionalExtension;
    conn.prepare_cached(BODY)?
        .query_row(named_params! { ":id": id.0 }, |r| r.get(0))
        .optional()
}

/// The earliest embargo end among items that are present but not public. Computed from the
/// ledger alone (no clock), so the same ledger always gives the same answer.
pub fn next_change(conn: &Connection) -> rusqlite::Result<Option<Instant>> {
    Ok(conn
        .prepare_cached(NEXT_CHANGE)?
        .query_row([], |r| r.get::<_, Option<i64>>(0))?
        .map(Instant))
}
