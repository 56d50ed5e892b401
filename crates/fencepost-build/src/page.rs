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
        let order = reading_order((pages.iter()).zip(0..));
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

/// The places of `pages` (each page with its place) in reading order
/// ([`PageInput::order`]), found over small keys.
fn reading_order<'a>(pages: impl Iterator<Item = (&'a PageInput, u32)>) -> Vec<u32> {
    use rayon::prelude::*;
    let mut keys: Vec<_> = pages.map(|(p, i)| (p.order(), i)).collect();
    keys.par_sort_unstable();
    keys.into_iter().map(|(_, i)| i).collect()
}

/// The elements of `v` in the order `order` names them (a permutation of its indices: the
/// result's `k`th element is `v[order[k]]`): how large elements are sorted (the order found
/// over small keys). In place, one cycle of the permutation at a time: an element already in
/// its place is not touched, and no second list is allocated. (Moving every element into a
/// list of `Option`s and out again moved each twice and faulted in two fresh lists: at
/// 100,000 pages of a few hundred bytes, most of the reading order's cost, where rows read by
/// item id are mostly in reading order already.)
pub fn permute<T>(mut v: Vec<T>, mut order: Vec<u32>) -> Vec<T> {
    assert_eq!(v.len(), order.len(), "a permutation of every index");
    for start in 0..order.len() {
        // Following the cycle through `start`: position k takes what `order[k]` names, and
        // is marked done (order[k] = k) as it is filled.
        let mut k = start;
        loop {
            let src = order[k] as usize;
            order[k] = k as u32;
            // Back at the cycle's start: its last place is filled. (`src == k` only when
            // `order` names an index twice: stop rather than go round for ever.)
            if src == start || src == k {
                break;
            }
            v.swap(k, src);
            k = src;
        }
    }
    v
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
    /// A file whose digest the plan checked (a page bundle's photo: `bundles.rs`), read when
    /// its bytes are needed and checked again then — copied, never linked, so a later edit
    /// cannot reach into a finished revision.
    File(PathBuf),
}

impl CopySource {
    /// Its bytes; a [`CopySource::File`]'s only while they still have digest `sha256`.
    pub fn bytes(&self, sha256: &str) -> std::io::Result<Arc<Vec<u8>>> {
        match self {
            CopySource::Bytes(b) => Ok(b.clone()),
            CopySource::Blob(p) => std::fs::read(p).map(Arc::new),
            CopySource::File(p) => {
                let bytes = std::fs::read(p)?;
                match fencepost_core::digest::sha256_hex(&bytes) == sha256 {
                    true => Ok(Arc::new(bytes)),
                    false => Err(std::io::Error::other(format!(
                        "{} has changed since this build checked it: build again",
                        p.display()
                    ))),
                }
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::permute;

    /// The gather the permutation means, done the obvious way.
    fn gathered(v: &[String], order: &[u32]) -> Vec<String> {
        order.iter().map(|&i| v[i as usize].clone()).collect()
    }

    /// Guards: `permute` in place (cycle by cycle) gives what the gather means, for the
    /// identity, one long cycle, fixed points among cycles, and shuffles.
    #[test]
    fn permute_in_place_is_the_gather() {
        let mut orders: Vec<Vec<u32>> = vec![
            vec![],
            vec![0],
            (0..9).collect(),
            (1..9).chain([0]).collect(),
            vec![8, 0, 1, 2, 3, 4, 5, 6, 7],
            vec![0, 2, 1, 3, 5, 6, 4, 7, 8],
            (0..9).rev().collect(),
        ];
        // Shuffles from a fixed linear congruential sequence (Fisher-Yates).
        let mut x: u64 = 42;
        for n in [2usize, 3, 10, 100, 1000] {
            for _ in 0..5 {
                let mut o: Vec<u32> = (0..n as u32).collect();
                for i in (1..n).rev() {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    o.swap(i, (x >> 33) as usize % (i + 1));
                }
                orders.push(o);
            }
        }
        for order in orders {
            let v: Vec<String> = (0..order.len()).map(|i| format!("e{i}")).collect();
            let want = gathered(&v, &order);
            assert_eq!(permute(v, order.clone()), want, "order {order:?}");
        }
    }
}
