//! What the plan takes in besides the site's configuration: each public item page (its view
//! and the instants that order and key it), each file copied as it is, each bundle file. Below
//! the plan, the sources that make these and the taxonomy terms alike.

use super::view::{IdView, ItemPage};
use fencepost_core::clock::Instant;
use std::path::PathBuf;
use std::sync::Arc;

/// One public item page, as the plan needs it.
#[derive(Debug, Clone)]
pub struct PageInput {
    /// The view, without prev/next (the plan fills them in).
    pub view: ItemPage,
    /// The commit that first published it.
    pub first_published_at: Instant,
    /// The commit of its last change.
    pub updated_at: Instant,
    /// Its date: the instant it was due (never when a publisher happened to commit it), by
    /// which lists, feeds and prev/next order it.
    pub due: Instant,
    /// When it last changed, as the public saw it: the later of `due` and the commit of its
    /// last change after it went public (its first publication is no change). The same
    /// content gives the same instant whenever and wherever it was published.
    pub changed: Instant,
    /// Its collection: an index into `Collections::list`.
    pub coll: usize,
    /// The date it is ordered by in its collection: its day, or the date it was due.
    pub date: chrono::NaiveDate,
    /// In a collection with `sort_by = "weight"`: its `weight` (`i64::MAX` without one:
    /// the unweighted read last). None in a collection sorted by date.
    pub weight: Option<i64>,
    /// The SHA-256 of the item's JSON for the transparency log, when the ledger holds one.
    pub json_digest: Option<String>,
}

impl PageInput {
    /// Its place among all pages, in reading order: by collection, then by date, oldest
    /// first (a list shows them reversed, newest first) — or, in a collection sorted by
    /// weight, lightest first, ties newest first (a list shows them in this order) — then
    /// id. Prev/next links follow it: `next` is the newer, or the heavier, page.
    pub fn order(&self) -> (usize, i64, i64, &IdView) {
        match self.weight {
            None => (self.coll, 0, self.due.0, &self.view.id),
            Some(w) => (self.coll, w, -self.due.0, &self.view.id),
        }
    }

    /// `pages` in reading order ([`PageInput::order`]). A page is a few hundred bytes: sorting
    /// them in place moved each one some twenty times (at 100,000 pages, a gigabyte of
    /// copies), so the order is found over small keys and each page is moved once.
    pub fn in_order(pages: Vec<PageInput>) -> Vec<PageInput> {
        use rayon::prelude::*;
        let mut keys: Vec<_> = (pages.iter().enumerate())
            .map(|(i, p)| (p.order(), i as u32))
            .collect();
        keys.par_sort_unstable();
        let order: Vec<u32> = keys.into_iter().map(|(_, i)| i).collect();
        permute(pages, order)
    }

    /// Its `weight` where its collection sorts by weight (from its data; `i64::MAX`
    /// without one), else None.
    pub fn weight_of(coll: &fencepost_config::collections::Collection, data: &str) -> Option<i64> {
        if coll.sort_by != fencepost_config::collections::SortBy::Weight {
            return None;
        }
        let w = match data.contains("\"weight\"") {
            true => super::view::parse_data(data)
                .get("weight")
                .and_then(|w| w.as_i64()),
            false => None,
        };
        Some(w.unwrap_or(i64::MAX))
    }
}

/// The elements of `v` in the order `order` names them (a permutation of its indices), each
/// moved once: how large elements are sorted (the order found over small keys).
pub fn permute<T>(v: Vec<T>, order: Vec<u32>) -> Vec<T> {
    debug_assert_eq!(v.len(), order.len());
    let mut slots: Vec<Option<T>> = v.into_iter().map(Some).collect();
    (order.into_iter())
        .map(|i| {
            slots[i as usize]
                .take()
                .expect("a permutation names each once")
        })
        .collect()
}

/// Where the bytes of a copied file come from.
#[derive(Debug, Clone)]
pub enum CopySource {
    /// A content-addressed blob of the image store: it never changes in place, so a revision
    /// may hard-link it.
    Blob(PathBuf),
    /// Bytes read, and hashed, when the build started: files an editor can rewrite
    /// (`static/`, preview images under `content/`). Writing these very bytes keeps the
    /// manifest's sha256, the reuse key and the build fingerprint true of what the revision
    /// holds, even when the file is rewritten while the build runs; a hard link would even
    /// let a later edit reach into a finished revision.
    Bytes(Arc<Vec<u8>>),
}

/// A file copied as is: a static file or a stored image.
#[derive(Debug, Clone)]
pub struct CopyInput {
    pub path: String,
    pub source: CopySource,
    /// A content hash of the bytes (sha256), so equal sources are reused across builds.
    pub sha256: String,
    /// The path names the bytes (a content hash in the name): caches may keep it for a year.
    pub immutable_url: bool,
}

/// A file of a page bundle, copied beside its page (see `build/bundles.rs`).
#[derive(Debug, Clone)]
pub struct ResourceInput {
    /// Its page's item, `collection/id`.
    pub of: String,
    pub path: String,
    pub source: CopySource,
    pub sha256: String,
}

/// A page's date as templates show it (`2026-12-02`).
pub(super) fn date_of(t: Instant) -> String {
    t.day_string()
}
