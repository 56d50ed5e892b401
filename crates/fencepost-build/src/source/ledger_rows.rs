//! The ledger's public page rows at a snapshot made the pages a build renders: each row
//! viewed (its URL, dates, weight, image) on every core, the pages put in reading order, the
//! withdrawal notices beside them, and a row of a collection fencepost.toml no longer declares
//! refused by name.

use super::super::page::{date_of, CopyInput, PageInput};
use super::super::report::BuildError;
use super::super::view::ItemPage;
use super::{id_view, image_copy, parse_day, place, Source};
use fencepost_config::collections::{Collection, Collections, OnWithdraw};
use fencepost_core::clock::Instant;
use fencepost_ledger as ledger;
use fencepost_site::Site;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

pub(crate) fn ledger_source(
    snap: &ledger::Snapshot<'_>,
    (rows, pages_read): (Vec<ledger::public::PublicPage>, usize),
    site: &Site,
    now: Instant,
) -> Result<Source, BuildError> {
    let revision = snap.revision()?;
    let next_change_at = snap.next_change(now)?;
    let store = site.image_store();
    let colls = &site.collections;
    let mut images = HashMap::new();
    let mut notices = Vec::new();
    let mut orphans: Vec<(String, String)> = Vec::new();
    // Each row's view on every core (~1.5 µs a page: its URL, dates and weight), then sorted
    // into pages, notices and orphans in row order.
    let mut viewed: Vec<Mutex<Viewed>> = (rows.into_par_iter())
        .map(|r| Mutex::new(view_row(colls, &store, r)))
        .collect();
    // The pages stay where the views put them until they are moved once, in reading order
    // (a page is a few hundred bytes: moving each into a list of pages first, then sorting
    // that, moved 100,000 of them twice more and faulted in a fresh list each time).
    let mut at = Vec::with_capacity(viewed.len());
    for (i, v) in viewed.iter_mut().enumerate() {
        let v = v.get_mut().unwrap_or_else(PoisonError::into_inner);
        match v {
            Viewed::Orphan(coll, key) => orphans.push((std::mem::take(coll), std::mem::take(key))),
            Viewed::Left => {}
            Viewed::Page(_, copy, notice) => {
                let notice = *notice;
                if let Some(c) = copy.take() {
                    images.insert(c.path.clone(), c);
                }
                match notice {
                    true => notices.extend(v.take_page()),
                    false => at.push(i as u32),
                }
            }
        }
    }
    refuse_orphans(&orphans, site)?;
    let pages = PageInput::taken_in_order(&mut viewed, at, Viewed::page, Viewed::take_page);
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

/// What one public page row becomes.
enum Viewed {
    /// Of a collection fencepost.toml does not declare (collection, key): refused, unless
    /// withdrawn.
    Orphan(String, String),
    /// Withdrawn where no notice is kept.
    Left,
    /// A page (or, when the flag is set, a withdrawal notice) and its image's copy.
    Page(PageInput, Option<CopyInput>, bool),
}

impl Viewed {
    fn page(&self) -> Option<&PageInput> {
        match self {
            Viewed::Page(input, ..) => Some(input),
            _ => None,
        }
    }

    /// The page, leaving [`Viewed::Left`] in its place.
    fn take_page(&mut self) -> Option<PageInput> {
        match std::mem::replace(self, Viewed::Left) {
            Viewed::Page(input, ..) => Some(input),
            _ => None,
        }
    }
}

fn view_row(colls: &Collections, store: &Path, r: ledger::public::PublicPage) -> Viewed {
    let Some(ci) = colls.list.iter().position(|c| *c.name == *r.collection) else {
        return match r.withdrawn {
            true => Viewed::Left,
            false => Viewed::Orphan(r.collection.to_string(), r.key.to_string()),
        };
    };
    let coll = &colls.list[ci];
    // A notice where the collection keeps notices, and only for a page withdrawn while it
    // did: switching `on_withdraw` to "notice" brings no removed page back.
    if r.withdrawn && (coll.on_withdraw != OnWithdraw::Notice || r.notice == Some(false)) {
        return Viewed::Left;
    }
    let copy = page_image(store, &r);
    let image_url = copy.as_ref().map(|c| format!("/{}", c.path));
    let notice = r.withdrawn;
    Viewed::Page(page_input(coll, ci, r, image_url), copy, notice)
}

/// Public pages of collections fencepost.toml no longer declares: a renamed or mistyped
/// `[collections.X]` table would otherwise empty them from the live site while the ledger
/// says they are public (`publish` refuses to withdraw them for the same reason). Refused,
/// naming the collection and the fix; the pointer does not move.
fn refuse_orphans(orphans: &[(String, String)], site: &Site) -> Result<(), BuildError> {
    let Some((coll, key)) = orphans.first() else {
        return Ok(());
    };
    let mut names: Vec<&str> = orphans.iter().map(|(c, _)| c.as_str()).collect();
    names.dedup();
    let declared: Vec<&str> = site.collections.list.iter().map(|c| &*c.name).collect();
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
fn page_image(store: &Path, r: &ledger::public::PublicPage) -> Option<CopyInput> {
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

/// A public page as the plan sees it.
fn page_input(
    coll: &Collection,
    ci: usize,
    r: ledger::public::PublicPage,
    image_url: Option<String>,
) -> PageInput {
    let day = parse_day(&r.day);
    let due = r.due_at.unwrap_or(r.first_published_at);
    let (url, date) = place(coll, &r.key, day, due);
    let changed = if r.updated_at > r.first_published_at {
        r.updated_at.max(due)
    } else {
        due
    };
    let weight = PageInput::weight_of(coll, &r.data);
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
