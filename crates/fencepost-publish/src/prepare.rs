//! The slow part of a publication, per item, between preflight and the commit: read the
//! file preflight saw, render it, apply the one-way rules (which the commit statement
//! enforces again). Runs in parallel, outside any transaction.

use super::{image, Claimed, Prepared};
use fencepost_config::collections::{Collection, OnWithdraw};
use fencepost_core::clock::Instant;
use fencepost_ledger::items::Action;
use fencepost_ledger::{
    self as ledger,
    pages::{Commit, PageFields},
};
use fencepost_site::content;
use fencepost_site::shortcodes::{ShortcodeError, Shortcodes};
use fencepost_site::Site;

/// The slow part for one item: read the file preflight saw, render it, apply the one-way
/// rules (which the commit statement enforces again).
pub(super) fn prepare(
    site: &Site,
    shortcodes: Option<&Shortcodes>,
    c: Claimed,
    img: Option<Result<ledger::images::StoredImage, image::ImageError>>,
    now: Instant,
) -> Prepared {
    let id = c.view.id;
    // The item's collection as configured now (none: removed from fencepost.toml, so its
    // files are no longer read and its pages come down).
    let coll = site.collections.get(&c.view.name.collection).filter(|k| {
        content::owner(&site.collections, &c.view.source_path).is_some_and(|o| o.name == k.name)
    });
    if c.action == Action::Withdraw {
        let notice = coll.is_some_and(|k| k.on_withdraw == OnWithdraw::Notice);
        return match still_withdrawn(site, &c, coll, now) {
            true => commit(c, None, notice),
            false => Prepared::Stale { id, lease: c.lease },
        };
    }
    let failed = |lease, error: String| Prepared::Failed { id, lease, error };
    let Some(coll) = coll else {
        let path = &c.view.source_path;
        let why = format!(
            "{path} belongs to no collection of fencepost.toml any more: it is no longer read"
        );
        return failed(c.lease, why);
    };
    let max_bytes = site.config.publish.max_item_bytes;
    let (item, hash) = match content::read_item(
        &site.root,
        &c.view.source_path,
        max_bytes,
        coll,
        &site.collections,
    ) {
        Ok(x) => x,
        Err(e) => return failed(c.lease, e.to_string()),
    };
    if Some(&hash) != c.view.source_hash.as_ref() || item.name != c.view.name {
        return Prepared::Stale { id, lease: c.lease };
    }
    let stored = match img {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(image::ImageError::Locked { .. })) => {
            return Prepared::Locked { id, lease: c.lease }
        }
        Some(Err(e)) => return failed(c.lease, e.to_string()),
    };
    // A shortcode that cannot render fails this item alone, naming its template.
    let page = match page_of(
        site,
        shortcodes,
        &c,
        item,
        stored,
        coll.commit_before_reveal,
    ) {
        Ok(page) => page,
        Err(e) => return failed(c.lease, e.to_string()),
    };
    commit(c, Some(page), false)
}

/// Re-checked under the lease, as publish and update re-read the file: a withdrawal stands
/// only while its expiry (as the ledger holds it) has come, or the file is still gone, or
/// still the very file that said `withdrawn = true` or `draft = true` (or whose expiry came),
/// or a file that now names another item. A scan that saw the file
/// missing for a moment (a save by rename,
/// a checkout) must not take the page down.
fn still_withdrawn(site: &Site, c: &Claimed, coll: Option<&Collection>, now: Instant) -> bool {
    // An expiry the ledger holds (read under the lease) was decided from a valid file: it is
    // carried out even when the file is broken now.
    if c.view.expired(now) {
        return true;
    }
    let path = site.root.join(&c.view.source_path);
    match (&c.view.source_hash, coll) {
        (None, None) => true,
        // Gone, or the file there now names another item (its `id` was changed).
        (None, Some(coll)) => {
            !path.exists()
                || content::read_item(
                    &site.root,
                    &c.view.source_path,
                    site.config.publish.max_item_bytes,
                    coll,
                    &site.collections,
                )
                .is_ok_and(|(item, _)| item.name != c.view.name)
        }
        (Some(_), None) => false,
        (Some(seen), Some(coll)) => {
            let max_bytes = site.config.publish.max_item_bytes;
            content::read_item(
                &site.root,
                &c.view.source_path,
                max_bytes,
                coll,
                &site.collections,
            )
            .is_ok_and(|(item, hash)| {
                &hash == seen
                    && (item.withdrawn || item.draft || item.expire_at.is_some_and(|t| t <= now))
            })
        }
    }
}

/// The page an item's file makes, rendered, with the one-way rules applied: a page that was
/// indexable stays so, and one that has its image keeps it.
fn page_of(
    site: &Site,
    shortcodes: Option<&Shortcodes>,
    c: &Claimed,
    item: content::Item,
    stored: Option<ledger::images::StoredImage>,
    committing: bool,
) -> Result<PageFields, ShortcodeError> {
    let rendered = fencepost_site::shortcodes::render(
        &item.body,
        &site.config.markdown,
        shortcodes,
        (&item.title, &item.data),
    )?;
    // The log holds the items of collections that commit before they reveal.
    let item_json = (site.config.transparency.log && committing).then(|| item.transparency_json());
    let mut page = PageFields {
        title: item.title,
        day: item.day.map(|d| d.to_string()).unwrap_or_default(),
        data: item.data,
        due_at: item.due,
        body_html: rendered.body_html,
        summary_html: rendered.summary_html,
        terms: item.terms,
        image_source: stored
            .as_ref()
            .map(|_| c.view.image_source.clone().unwrap_or_default()),
        image_sha256: stored.map(|s| s.sha256),
        indexable: item.indexable,
        item_json,
    };
    let Some(prev) = &c.view.page else {
        return Ok(page);
    };
    if prev.indexable && !page.indexable {
        tracing::warn!(
            item = %c.view.name,
            "indexable = false ignored: a page that was indexable never returns to noindex"
        );
        page.indexable = true;
    }
    if page.image_sha256.is_none() && prev.image_sha256.is_some() {
        tracing::warn!(
            item = %c.view.name,
            "image removed from the file ignored: a page that has its image keeps it"
        );
        page.image_source = prev.image_source.clone();
        page.image_sha256 = prev.image_sha256.clone();
    }
    Ok(page)
}

/// The commit batch of a claimed item (no page: a withdrawal). `notice`: a withdrawal keeps
/// a notice page (the collection's `on_withdraw` now).
fn commit(c: Claimed, page: Option<PageFields>, notice: bool) -> Prepared {
    Prepared::Commit(Box::new(Commit {
        id: c.view.id,
        name: c.view.name.clone(),
        action: c.action,
        expected_state: c.expected_state,
        expected_version: c.view.page.as_ref().map_or(0, |p| p.content_version),
        source_hash: c.view.source_hash.clone(),
        lease: c.lease,
        page,
        notice,
        token: uuid::Uuid::new_v4().simple().to_string(),
    }))
}
