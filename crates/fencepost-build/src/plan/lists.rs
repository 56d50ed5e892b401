//! A collection's list pages: numbered from the oldest (fencepost's own: a full page never
//! changes) or from the newest (Hugo's and Zola's: the list URL is page 1), see
//! [`Pagination`].

use super::keys::{entries_key, list_key};
use super::{feeds, newest, planned, FeedOf, Inputs, Job, Planned};
use crate::view::{ArchiveLink, ListIndexView, ListView};
use fencepost_config::collections::{Collection, Pagination};
use fencepost_output::manifest::CacheClass;
use fencepost_site::content::claims::url_to_path;
use rayon::prelude::*;
use std::sync::Arc;

/// A collection's pages in the order its lists read, last first (`listed`), and by date,
/// oldest first (`by_pub`, its feed's); the same unless it sorts by weight.
#[derive(Clone, Copy)]
pub(super) struct Order<'a> {
    pub(super) listed: &'a [u32],
    pub(super) by_pub: &'a [u32],
}

/// A collection's list pages (numbered as its `pagination` says), its list index and its
/// own feed.
pub(super) fn plan_lists(
    inp: &Inputs<'_>,
    ci: usize,
    coll: &Collection,
    order: Order<'_>,
    out: &mut Vec<Planned>,
    sitemap_pages: &mut Vec<(String, Option<String>)>,
) {
    let list_url = coll.list_url.clone().unwrap_or_default();
    match coll.pagination {
        Pagination::OldestFirst => oldest_first(inp, ci, coll, order.listed, out, sitemap_pages),
        Pagination::NewestFirst => newest_first(inp, ci, coll, order.listed, out, sitemap_pages),
    }
    if coll.feed && coll.own_feed {
        let url = format!("{list_url}atom.xml");
        feeds(inp, FeedOf::Collection(ci), url, order.by_pub, out);
    }
}

/// Numbered from the oldest: `page/1/` the oldest items; the list URL the newest, with links
/// to every numbered page.
fn oldest_first(
    inp: &Inputs<'_>,
    ci: usize,
    coll: &Collection,
    listed: &[u32],
    out: &mut Vec<Planned>,
    sitemap_pages: &mut Vec<(String, Option<String>)>,
) {
    let b = inp.render_fingerprint;
    let list_url = coll.list_url.clone().unwrap_or_default();
    let name: Arc<str> = coll.name.as_str().into();
    let chunks: Vec<&[u32]> = listed.chunks(coll.page_size).collect();
    let n_pages = chunks.len();
    let page_url = |n: usize| coll.list_page_url(n).unwrap_or_default();
    let lists: Vec<Planned> = chunks
        .par_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let number = i + 1;
            let v = ListView {
                collection: name.clone(),
                number,
                url: page_url(number),
                entries: chunk.to_vec(),
                prev_url: (number > 1).then(|| page_url(number - 1)),
                next_url: (number < n_pages).then(|| page_url(number + 1)),
            };
            list_page(inp, ci, v)
        })
        .collect();
    out.extend(lists);
    let idx = ListIndexView {
        collection: name,
        latest: newest(listed, coll.page_size),
        prev_url: None,
        text: inp.list_texts.get(ci).cloned().flatten(),
        archive: (1..=n_pages)
            .map(|n| ArchiveLink {
                number: n,
                url: page_url(n),
            })
            .collect(),
    };
    let extra = format!("{}:{n_pages}:{}", coll.name, text_key(&idx));
    let k = entries_key(b, "list-index", &[&idx.latest], inp.pages, &extra);
    out.push(planned(
        url_to_path(&list_url),
        Job::ListIndex(ci, Box::new(idx)),
        CacheClass::Content,
        k,
    ));
    sitemap_pages.push((list_url, None));
    sitemap_pages.extend((1..=n_pages).map(|n| (page_url(n), None)));
}

/// Numbered from the newest, as Hugo and Zola number them: the list URL is page 1 (the
/// newest items, a link to the older page and to every page), `page/N/` the Nth from the
/// newest, `page/1/` a redirect to the list URL.
fn newest_first(
    inp: &Inputs<'_>,
    ci: usize,
    coll: &Collection,
    listed: &[u32],
    out: &mut Vec<Planned>,
    sitemap_pages: &mut Vec<(String, Option<String>)>,
) {
    let b = inp.render_fingerprint;
    let list_url = coll.list_url.clone().unwrap_or_default();
    let name: Arc<str> = coll.name.as_str().into();
    let reading: Vec<u32> = listed.iter().rev().copied().collect();
    let chunks: Vec<&[u32]> = reading.chunks(coll.page_size).collect();
    let n_pages = chunks.len();
    let url_of = |n: usize| match n {
        1 => list_url.clone(),
        n => coll.list_page_url(n).unwrap_or_default(),
    };
    let lists: Vec<Planned> = (2..=n_pages)
        .into_par_iter()
        .map(|number| {
            let v = ListView {
                collection: name.clone(),
                number,
                url: url_of(number),
                entries: chunks[number - 1].to_vec(),
                prev_url: (number < n_pages).then(|| url_of(number + 1)),
                next_url: Some(url_of(number - 1)),
            };
            list_page(inp, ci, v)
        })
        .collect();
    out.extend(lists);
    let idx = ListIndexView {
        collection: name,
        latest: chunks.first().map(|c| c.to_vec()).unwrap_or_default(),
        archive: (1..=n_pages)
            .map(|n| ArchiveLink {
                number: n,
                url: url_of(n),
            })
            .collect(),
        prev_url: (n_pages > 1).then(|| url_of(2)),
        text: inp.list_texts.get(ci).cloned().flatten(),
    };
    let extra = format!("{}:{n_pages}:newest-first:{}", coll.name, text_key(&idx));
    let k = entries_key(b, "list-index", &[&idx.latest], inp.pages, &extra);
    out.push(planned(
        url_to_path(&list_url),
        Job::ListIndex(ci, Box::new(idx)),
        CacheClass::Content,
        k,
    ));
    if let Some(first) = coll.list_page_url(1).filter(|_| n_pages > 0) {
        let g = inp.generated_fingerprint;
        let k = super::key(g, "alias", &(&first, &list_url), "");
        let job = Job::Alias {
            target: list_url.clone(),
        };
        out.push(planned(url_to_path(&first), job, CacheClass::Redirect, k));
    }
    sitemap_pages.extend((1..=n_pages).map(|n| (url_of(n), None)));
}

/// One numbered list page, keyed by what it shows.
fn list_page(inp: &Inputs<'_>, ci: usize, v: ListView) -> Planned {
    let key = list_key(inp.render_fingerprint, &v, inp.pages);
    planned(
        url_to_path(&v.url),
        Job::List(ci, Box::new(v)),
        CacheClass::Content,
        key,
    )
}

/// What a list index's text adds to its key (nothing without one).
fn text_key(idx: &ListIndexView) -> String {
    idx.text.as_ref().map_or(String::new(), |t| {
        let title = t.title.as_deref().unwrap_or_default();
        crate::report::content_key(&format!("{title}\0{}", t.html))
    })
}
