//! Reuse keys: a hash over everything that goes into a file, so a file whose key equals the
//! previous revision's is that file, byte for byte. Each hashes its view's fields directly
//! (these run once per page per build: no clone, no JSON detour), a field as its length and
//! bytes — gathered into one buffer and hashed once, where a hasher update per length and per
//! field (some forty an item page) cost more than the hashing.

use super::super::view::{IdView, ItemPage, LinkView, ListView, TermView};
use super::PageInput;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::Write;

/// A key over any serialisable view (the files few of: home, feeds, sitemaps).
pub(super) fn key(build: &str, kind: &str, data: &impl Serialize, extra: &str) -> String {
    let mut h = Sha256::new();
    h.update(build);
    h.update([0]);
    h.update(kind);
    h.update([0]);
    h.update(serde_json::to_vec(data).expect("views serialise"));
    h.update([0]);
    h.update(extra);
    fencepost_core::digest::hex32(&h.finalize().into())
}

/// The bytes a key hashes: each field as its length (8 bytes, little-endian) and bytes.
struct Fields(Vec<u8>);

impl Fields {
    fn new(fingerprint: &str, kind: &str) -> Fields {
        let mut f = Fields(Vec::with_capacity(1024));
        f.field(fingerprint);
        f.field(kind);
        f
    }

    fn field(&mut self, s: &str) {
        self.field_bytes(s.as_bytes());
    }

    /// An id as the field [`IdView::text`] gives, without making that string (twice a page
    /// per build: its own key and its list page's).
    fn id(&mut self, id: &IdView) {
        match id {
            IdView::Number(n) => {
                let mut digits = [0u8; 20];
                let len = {
                    let mut at = &mut digits[..];
                    write!(at, "{n}").expect("an i64 fits in 20 bytes");
                    20 - at.len()
                };
                self.field_bytes(&digits[..len]);
            }
            IdView::Slug(s) => self.field(s),
        }
    }

    fn field_bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(&(b.len() as u64).to_le_bytes());
        self.0.extend_from_slice(b);
    }

    fn opt(&mut self, s: Option<&str>) {
        self.field(s.unwrap_or("\0none"));
    }

    fn entry(&mut self, e: &ItemPage) {
        self.id(&e.id);
        self.field(&e.collection);
        self.field(&e.url);
        self.field(&e.title);
        self.opt(e.day.as_deref());
        self.field(&e.published);
        self.field(&e.date);
        self.field(&e.lastmod);
        self.field(&e.data);
        self.opt(e.summary_html.as_deref());
    }

    /// A page of entries with its neighbours' URLs (a list page, a term page), then the key.
    fn paged(
        mut self,
        entries: &[u32],
        pages: &[PageInput],
        prev: Option<&str>,
        next: Option<&str>,
    ) -> String {
        self.field(&entries.len().to_string());
        for &e in entries {
            self.entry(&pages[e as usize].view);
        }
        self.opt(prev);
        self.opt(next);
        self.finish()
    }

    fn finish(self) -> String {
        fencepost_core::digest::hex32(&Sha256::digest(&self.0).into())
    }
}

/// The key of a list page: every field of its view, its entries' from `pages`.
pub(super) fn list_key(render_fingerprint: &str, v: &ListView, pages: &[PageInput]) -> String {
    let mut f = Fields::new(render_fingerprint, "list");
    f.field(&v.collection);
    f.field(&v.number.to_string());
    f.field(&v.url);
    f.paged(
        &v.entries,
        pages,
        v.prev_url.as_deref(),
        v.next_url.as_deref(),
    )
}

/// The key of a term page: every field of its view, its entries' from `pages`.
pub(super) fn term_key(render_fingerprint: &str, v: &TermView, pages: &[PageInput]) -> String {
    let mut f = Fields::new(render_fingerprint, "term");
    f.field(&v.taxonomy.to_string());
    f.field(&v.name);
    f.field(&v.url);
    f.field(&v.page_url);
    f.field(&v.number.to_string());
    f.paged(
        &v.entries,
        pages,
        v.prev_url.as_deref(),
        v.next_url.as_deref(),
    )
}

/// The key of entries shown together (a list index, the home page).
pub(super) fn entries_key(
    render_fingerprint: &str,
    kind: &str,
    entries: &[&[u32]],
    pages: &[PageInput],
    extra: &str,
) -> String {
    let mut f = Fields::new(render_fingerprint, kind);
    f.field(extra);
    for list in entries {
        f.field(&list.len().to_string());
        for &e in *list {
            f.entry(&pages[e as usize].view);
        }
    }
    f.finish()
}

/// The key of a sitemap file: each (URL, date) it lists, as fields.
pub(super) fn sitemap_key(
    generated_fingerprint: &str,
    urls: &[(String, Option<String>)],
) -> String {
    let mut f = Fields::new(generated_fingerprint, "sitemap");
    f.field(&urls.len().to_string());
    for (url, date) in urls {
        f.field(url);
        f.opt(date.as_deref());
    }
    f.finish()
}

type Neighbour<'a> = (&'a str, &'a str, Option<&'a str>);

fn neighbour(v: &ItemPage) -> Neighbour<'_> {
    (v.url.as_str(), v.title.as_str(), v.day.as_deref())
}

/// The key of item page `i` of the collection run `pages` (`i` indexes it): every field of
/// its view as [`super::item_view`] makes it.
pub fn item_key(render_fingerprint: &str, pages: &[PageInput], i: usize) -> String {
    hash_item(
        render_fingerprint,
        &pages[i].view,
        i.checked_sub(1).map(|j| neighbour(&pages[j].view)),
        pages.get(i + 1).map(|n| neighbour(&n.view)),
    )
}

/// The hash of an item view's fields, its neighbours given as (url, title, day).
pub fn hash_item(
    render_fingerprint: &str,
    v: &ItemPage,
    prev: Option<Neighbour<'_>>,
    next: Option<Neighbour<'_>>,
) -> String {
    let mut f = Fields::new(render_fingerprint, "item");
    f.id(&v.id);
    for s in [
        &*v.collection,
        &v.url,
        &v.title,
        &v.published,
        &v.updated,
        &v.date,
        &v.lastmod,
        &v.content_hash,
    ] {
        f.field(s);
    }
    f.opt(v.day.as_deref());
    f.opt(v.image_url.as_deref());
    f.field(if v.indexable { "1" } else { "0" });
    f.opt(v.embargoed_until.as_deref());
    f.opt(v.embargoed_until_local.as_deref());
    f.field(if v.draft { "draft" } else { "" });
    f.opt(v.summary_html.as_deref());
    f.opt(v.withdrawn_at.as_deref());
    f.field(&v.terms);
    f.field(&v.lang);
    f.field_bytes(&(v.translations.len() as u64).to_le_bytes());
    for t in v.translations.iter() {
        f.field(&t.lang);
        f.field(&t.url);
        f.field(&t.title);
    }
    for l in [prev, next] {
        match l {
            Some((url, title, day)) => {
                f.field(url);
                f.field(title);
                f.opt(day);
            }
            None => f.field("\0none"),
        }
    }
    f.finish()
}

/// The view's neighbour link.
pub(super) fn link(v: &ItemPage) -> LinkView {
    LinkView {
        url: v.url.clone(),
        title: v.title.clone(),
        day: v.day.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards: an id hashed without making its text gives the bytes its text gave (keys kept).
    #[test]
    fn an_id_is_the_field_of_its_text() {
        let ids = [
            IdView::Number(0),
            IdView::Number(-1),
            IdView::Number(42),
            IdView::Number(i64::MIN),
            IdView::Number(i64::MAX),
            IdView::Slug("a-slug".into()),
        ];
        for id in ids {
            let (mut with, mut without) = (Fields(Vec::new()), Fields(Vec::new()));
            with.field(&id.text());
            without.id(&id);
            assert_eq!(with.0, without.0, "{id:?}");
        }
    }
}
