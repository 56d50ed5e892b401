//! A deployed preview's pages (`fencepost preview deploy`, issue 80): the site as it will be
//! at an instant — the ledger's public pages, with what `publish` would add or change by
//! then taken from the checkout.
//!
//! A page the checkout leaves as the ledger holds it (equal public fields, by the ledger's own
//! `content_hash`) is the ledger's row, so it renders to the very bytes the public revision
//! has and a preview deploy uploads none of it. An item due by the instant that the ledger
//! lacks, or whose text changed, is the checkout's (dated by its instant, as it will be once
//! published). Items due later, drafts (unless asked for) and expired items are not shown.
//! **Left out**: a file deleted from the checkout still shows its published page (`publish`
//! decides a withdrawal, with its guards against mass withdrawal; a preview does not guess).

use super::super::page::PageInput;
use super::super::report::{AsOf, BuildError};
use super::{ledger_source, tree_files, Source, TreeCache};
use fencepost_core::clock::Instant;
use fencepost_ledger::pages::PageFields;
use fencepost_ledger::public::PublicPage;
use fencepost_ledger::Snapshot;
use fencepost_site::Site;
use std::collections::HashMap;

/// The next instant after `now` at which an item of the checkout is due (`preview deploy
/// --as-of next`): what the public sees change next — a draft's only with `drafts`. Front
/// matter only: no body is rendered.
pub fn next_due_after(
    site: &Site,
    now: Instant,
    drafts: bool,
) -> Result<Option<Instant>, BuildError> {
    use rayon::prelude::*;
    let files = tree_files(site, &TreeCache::default())?;
    let max = site.config.publish.max_item_bytes;
    let due: Vec<Instant> = (files.par_iter())
        .filter_map(|(rel, _)| {
            let coll = fencepost_site::content::owner(&site.collections, rel)?;
            let (item, _) =
                fencepost_site::content::read_item(&site.root, rel, max, coll, &site.collections)
                    .ok()?;
            let shown = !item.withdrawn && (drafts || !item.draft);
            (shown && item.due > now).then_some(item.due)
        })
        .collect();
    Ok(due.into_iter().min())
}

/// The site as it will be at the scope's instant — the one asked for, else the last instant
/// any item of the checkout is due (every scheduled item and update shown), never before
/// `now`: see the module doc. The checkout is read once.
pub(crate) fn as_of_source(
    site: &Site,
    snap: &Snapshot<'_>,
    rows: (Vec<PublicPage>, usize),
    scope: &AsOf,
    now: Instant,
) -> Result<Source, BuildError> {
    let mut cache = TreeCache::default();
    let files = tree_files(site, &cache)?;
    cache.refresh(site, &files)?;
    let last = (cache.files.values()).map(|(_, t)| t.page.due).max();
    let at = scope.at.unwrap_or_else(|| last.map_or(now, |l| l.max(now)));
    let hashes: HashMap<(String, String), String> = (rows.0.iter())
        .map(|r| {
            (
                (r.collection.to_string(), r.key.clone()),
                r.content_hash.clone(),
            )
        })
        .collect();
    let mut source = ledger_source(snap, rows, site, at)?;
    source.next_change_at = None;
    let mut at_key: HashMap<(String, String), usize> = (source.pages.iter().enumerate())
        .map(|(i, p)| ((p.view.collection.to_string(), p.view.id.text()), i))
        .collect();
    let mut row = 0i64;
    for (rel, _) in &files {
        let t = &cache.files[rel].1;
        let item = &t.item;
        let shown = !item.withdrawn
            && !item.expire_at.is_some_and(|e| e <= at)
            && (scope.drafts || !item.draft)
            && item.due <= at;
        if !shown {
            continue;
        }
        let key = (item.name.collection.to_string(), item.name.id.to_string());
        if hashes.get(&key) == Some(&public_hash(t)) {
            continue;
        }
        row -= 1;
        let mut page = t.page.clone();
        page.view.row = row;
        source.bodies.insert(row, t.body_html.clone());
        if let Some((Some(c), _)) = &t.image {
            source.images.push(c.clone());
        }
        match at_key.get(&key) {
            Some(&i) => source.pages[i] = page,
            None => {
                at_key.insert(key, source.pages.len());
                source.pages.push(page);
            }
        }
    }
    let pages = std::mem::take(&mut source.pages);
    source.pages = PageInput::in_order(pages);
    source.images.sort_by(|a, b| a.path.cmp(&b.path));
    source.images.dedup_by(|a, b| a.path == b.path);
    Ok(source)
}

/// The ledger's `content_hash` of the page the item's file makes now (what `publish` would
/// compare).
fn public_hash(t: &super::TreeItem) -> String {
    let v = &t.page.view;
    PageFields {
        title: t.item.title.clone(),
        day: t.item.day.map(|d| d.to_string()).unwrap_or_default(),
        data: t.item.data.clone(),
        due_at: t.item.due,
        body_html: t.body_html.to_string(),
        summary_html: v.summary_html.as_deref().map(str::to_string),
        terms: t.item.terms.clone(),
        image_source: None,
        image_sha256: t
            .image
            .as_ref()
            .and_then(|(c, _)| c.as_ref())
            .map(|c| c.sha256.clone()),
        indexable: t.item.indexable,
        item_json: None,
    }
    .content_hash()
}
