//! The ledger's public page rows at a snapshot made the pages a build renders: the rows put
//! in their pages' reading order first (from small keys: collection, weight, date, id), then
//! each viewed (its URL, dates, image) on every core straight into its place; the withdrawal
//! notices beside them, and a row of a collection fencepost.toml no longer declares refused
//! by name.

use super::super::page::{date_of, CopyInput, PageInput};
use super::super::report::BuildError;
use super::super::view::ItemPage;
use super::{id_number, id_view, image_copy, parse_day, place, Source};
use fencepost_config::collections::{Collection, Collections, OnWithdraw};
use fencepost_core::clock::Instant;
use fencepost_ledger as ledger;
use fencepost_ledger::public::PublicPage;
use fencepost_site::Site;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub(crate) fn ledger_source(
    snap: &ledger::Snapshot<'_>,
    (rows, pages_read): (Vec<PublicPage>, usize),
    site: &Site,
    now: Instant,
) -> Result<Source, BuildError> {
    let revision = snap.revision()?;
    let next_change_at = snap.next_change(now)?;
    let store = site.image_store();
    let colls = &site.collections;
    let (mut rows, weights) = in_reading_order(colls, rows)?;
    // Each collection's language, shared by its pages (one allocation, not one a page).
    let langs: Vec<Arc<str>> = (colls.list.iter())
        .map(|c| c.lang.as_str().into())
        .collect();
    let others = rows.split_off(weights.len());
    // Each page viewed on every core, in reading order, straight into its place in the list
    // (a page is a few hundred bytes: viewed first and moved into order after, 100,000 of
    // them were moved once more, and a list of views as large faulted in beside the pages).
    let (pages, copies): (Vec<PageInput>, Vec<Option<CopyInput>>) = (rows.into_par_iter())
        .zip(weights)
        .map(|(r, (ci, weight))| view_page(&colls.list[ci], (ci, &langs[ci]), &store, r, weight))
        .unzip();
    let mut images: HashMap<String, CopyInput> = (copies.into_iter().flatten())
        .map(|c| (c.path.clone(), c))
        .collect();
    let mut notices = Vec::new();
    for r in others {
        if let Place::Notice(ci) = place_of(colls, &r) {
            let coll = &colls.list[ci];
            let weight = PageInput::weight_of(coll, &r.data);
            let (notice, copy) = view_page(coll, (ci, &langs[ci]), &store, r, weight);
            images.extend(copy.map(|c| (c.path.clone(), c)));
            notices.push(notice);
        }
    }
    notices.sort_by(|a, b| a.order().cmp(&b.order()));
    Ok(Source {
        revision,
        pages,
        notices,
        images: images.into_values().collect(),
        next_change_at,
        bodies: HashMap::new(),
        pages_read,
    })
}

/// Where one public page row goes.
enum Place<'a> {
    /// A page of collection `.0`, with its place in reading order ([`PageInput::order`],
    /// its id borrowed) and its weight.
    Page(usize, Key<'a>, Option<i64>),
    /// The withdrawal notice of a page of collection `.0`.
    Notice(usize),
    /// Withdrawn where no notice is kept.
    Left,
    /// Of a collection fencepost.toml does not declare: refused, unless withdrawn.
    Orphan,
}

/// [`PageInput::order`] of a row, before it is viewed: (collection, weight, signed due, id).
type Key<'a> = (usize, i64, i64, IdKey<'a>);

/// A page's collection (an index into the list) and weight, as [`PageInput`] holds them.
type Weighed = (usize, Option<i64>);

/// An id as [`crate::view::IdView`] orders it (numbers first, by value; then slugs, by
/// bytes), borrowed.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum IdKey<'a> {
    Number(i64),
    Slug(&'a str),
}

fn place_of<'a>(colls: &Collections, r: &'a PublicPage) -> Place<'a> {
    let Some(ci) = colls.list.iter().position(|c| *c.name == *r.collection) else {
        return match r.withdrawn {
            true => Place::Left,
            false => Place::Orphan,
        };
    };
    let coll = &colls.list[ci];
    // A notice where the collection keeps notices, and only for a page withdrawn while it
    // did: switching `on_withdraw` to "notice" brings no removed page back.
    if r.withdrawn {
        return match coll.on_withdraw != OnWithdraw::Notice || r.notice == Some(false) {
            true => Place::Left,
            false => Place::Notice(ci),
        };
    }
    let due = r.due_at.unwrap_or(r.first_published_at).0;
    let id = match id_number(coll, &r.key) {
        Some(n) => IdKey::Number(n),
        None => IdKey::Slug(&r.key),
    };
    let weight = PageInput::weight_of(coll, &r.data);
    let key = match weight {
        None => (ci, 0, due, id),
        Some(w) => (ci, w, -due, id),
    };
    Place::Page(ci, key, weight)
}

/// The rows with the pages first, in reading order, then the rest in row order; and each
/// page's (collection, weight), in the same order. A row of a collection fencepost.toml no
/// longer declares is refused (see [`refuse_orphans`]).
fn in_reading_order(
    colls: &Collections,
    rows: Vec<PublicPage>,
) -> Result<(Vec<PublicPage>, Vec<Weighed>), BuildError> {
    let (order, weights) = {
        let places: Vec<Place<'_>> = rows.par_iter().map(|r| place_of(colls, r)).collect();
        let orphans: Vec<(&str, &str)> = (places.iter().zip(&rows))
            .filter(|(p, _)| matches!(p, Place::Orphan))
            .map(|(_, r)| (&*r.collection, r.key.as_str()))
            .collect();
        refuse_orphans(&orphans, colls)?;
        let mut keyed = Vec::with_capacity(places.len());
        let mut rest = Vec::new();
        for (i, p) in places.into_iter().enumerate() {
            match p {
                Place::Page(ci, key, weight) => keyed.push((key, i as u32, ci, weight)),
                _ => rest.push(i as u32),
            }
        }
        keyed.par_sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let weights: Vec<Weighed> = keyed.iter().map(|k| (k.2, k.3)).collect();
        let order: Vec<u32> = keyed.into_iter().map(|k| k.1).chain(rest).collect();
        (order, weights)
    };
    Ok((super::super::page::permute(rows, order), weights))
}

/// Public pages of collections fencepost.toml no longer declares: a renamed or mistyped
/// `[collections.X]` table would otherwise empty them from the live site while the ledger
/// says they are public (`publish` refuses to withdraw them for the same reason). Refused,
/// naming the collection and the fix; the pointer does not move.
fn refuse_orphans(orphans: &[(&str, &str)], colls: &Collections) -> Result<(), BuildError> {
    let Some((coll, key)) = orphans.first() else {
        return Ok(());
    };
    let mut names: Vec<&str> = orphans.iter().map(|(c, _)| *c).collect();
    names.dedup();
    let declared: Vec<&str> = colls.list.iter().map(|c| &*c.name).collect();
    Err(BuildError::PublicLeftOut {
        count: orphans.len(),
        first: format!("{coll}/{key}"),
        more: match orphans.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        },
        why: format!(
            "fencepost.toml declares no collection {} (it declares: {}). If the table was renamed or mistyped, restore [collections.{}]; to take those pages down on purpose, `fencepost publish --allow-withdraw-collection {}` withdraws them (a public change of its own)",
            names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "),
            declared.join(", "),
            names[0],
            names[0]
        ),
    })
}

/// The copy of a public page's image from the image store; a page whose image is missing
/// there is rendered without it (logged).
fn page_image(store: &Path, r: &PublicPage) -> Option<CopyInput> {
    let sha = r.image_sha256.as_deref()?;
    let c = image_copy(store, sha, r.image_content_type.as_deref());
    if c.is_none() {
        tracing::warn!(
            item = %format!("{}/{}", r.collection, r.key),
            sha,
            "image missing from the store; page rendered without it"
        );
    }
    c
}

/// A public page row viewed (or a withdrawn one, as its notice) and its image's copy.
fn view_page(
    coll: &Collection,
    (ci, lang): (usize, &Arc<str>),
    store: &Path,
    r: PublicPage,
    weight: Option<i64>,
) -> (PageInput, Option<CopyInput>) {
    let copy = page_image(store, &r);
    let image_url = copy.as_ref().map(|c| format!("/{}", c.path));
    (page_input(coll, (ci, lang), r, image_url, weight), copy)
}

/// A public page as the plan sees it; `weight` as [`PageInput::weight_of`] gives it.
fn page_input(
    coll: &Collection,
    (ci, lang): (usize, &Arc<str>),
    r: PublicPage,
    image_url: Option<String>,
    weight: Option<i64>,
) -> PageInput {
    let day = parse_day(&r.day);
    let due = r.due_at.unwrap_or(r.first_published_at);
    let (url, date) = place(coll, &r.key, day, due);
    let changed = if r.updated_at > r.first_published_at {
        r.updated_at.max(due)
    } else {
        due
    };
    PageInput {
        view: ItemPage {
            id: id_view(coll, &r.key),
            collection: r.collection.clone(),
            url,
            title: r.title,
            day: day.map(|_| r.day),
            image_url,
            indexable: r.indexable,
            published: date_of(r.first_published_at),
            updated: date_of(r.updated_at),
            date: due.rfc3339(),
            lastmod: changed.rfc3339(),
            prev: None,
            next: None,
            embargoed_until: None,
            embargoed_until_local: None,
            draft: false,
            summary_html: r.summary_html.map(Arc::from),
            withdrawn_at: r.withdrawn.then(|| r.updated_at.rfc3339()),
            lang: lang.clone(),
            translations: crate::view::no_translations(),
            terms: r.terms,
            data: r.data,
            content_hash: r.content_hash,
            row: r.id.0,
        },
        first_published_at: r.first_published_at,
        updated_at: r.updated_at,
        due,
        changed,
        coll: ci,
        date,
        weight,
        json_digest: r.json_digest,
    }
}

#[cfg(test)]
mod tests;
