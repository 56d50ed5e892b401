//! Where a build gets its pages from: the ledger's snapshot, or (previews) the content tree
//! as it is now, parsed files kept between watch-mode rebuilds; and the site's other inputs
//! (plain pages, static files).

use super::fingerprint;
use super::page::{date_of, CopyInput, CopySource, PageInput};
use super::report::{io, BuildError};
use super::view::{IdView, ItemPage, PlainView};
use chrono::NaiveDate;
use fencepost_config::collections::{Collection, Collections, IdKind};
use fencepost_core::clock::Instant;
use fencepost_site::content::{self, ContentError, ImageSource};
use fencepost_site::shortcodes::render as render_with;
use fencepost_site::shortcodes::Shortcodes;
use fencepost_site::Site;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

mod as_of;
mod ledger_rows;
pub(super) use as_of::as_of_source;
pub use as_of::next_due_after;
pub(super) use ledger_rows::ledger_source;

/// Where a build gets its pages from.
pub(super) struct Source {
    pub(super) revision: i64,
    pub(super) pages: Vec<PageInput>,
    /// Withdrawn items of collections that keep a notice (`on_withdraw = "notice"`).
    pub(super) notices: Vec<PageInput>,
    pub(super) images: Vec<CopyInput>,
    pub(super) next_change_at: Option<Instant>,
    /// Bodies already in memory (preview); the ledger build fetches them in chunks.
    pub(super) bodies: HashMap<i64, Arc<str>>,
    /// Page rows read from the ledger for this source (see `warm.rs`); 0 for a preview.
    pub(super) pages_read: usize,
}

pub(super) fn image_copy(store: &Path, sha: &str, content_type: Option<&str>) -> Option<CopyInput> {
    let src = match content_type {
        Some(ct) => fencepost_site::images::blob_path(store, sha, ct),
        None => std::fs::read_dir(store.join(&sha[..2.min(sha.len())]))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_stem().is_some_and(|s| s == sha))?,
    };
    let name = src.file_name()?.to_string_lossy().into_owned();
    Some(CopyInput {
        path: format!("images/{name}"),
        source: CopySource::Blob(src),
        sha256: sha.to_string(),
        immutable_url: true,
    })
}

/// A stored day, `YYYY-MM-DD` (`""` for none). Read digit by digit: it runs once per page
/// of the site, and a format-string parse costs more than the rest of the page's row.
fn parse_day(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| {
        b[r].iter().try_fold(0u32, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)
}

/// The id templates see: a number in an integer collection, else the slug.
fn id_view(coll: &Collection, id: &str) -> IdView {
    match id_number(coll, id) {
        Some(n) => IdView::Number(n),
        None => IdView::Slug(id.into()),
    }
}

/// The id as a number, in a collection of integer ids (else its view is the slug).
fn id_number(coll: &Collection, id: &str) -> Option<i64> {
    match coll.id {
        IdKind::Integer => id.parse().ok(),
        _ => None,
    }
}

/// An item's URL and the date it is ordered by: its day, or the date it was due.
fn place(coll: &Collection, id: &str, day: Option<NaiveDate>, due: Instant) -> (String, NaiveDate) {
    let date = coll.date_of(day, due);
    (coll.item_url(id, Some(date)), date)
}

/// One parsed item file, kept between preview builds.
pub(super) struct TreeItem {
    pub(super) item: content::Item,
    pub(super) body_html: Arc<str>,
    /// The page as the plan needs it, built once when the file is read (`embargoed_until` is
    /// filled in per rebuild, since it depends on the clock).
    pub(super) page: PageInput,
    /// Local image: (copy, URL); remote image: (None, URL).
    pub(super) image: Option<(Option<CopyInput>, String)>,
}

/// Parsed item files of the content tree, kept between preview builds (watch mode) so a
/// save re-reads one file, not the whole tree. Keyed by path, checked against the file's stat.
#[derive(Default)]
pub struct TreeCache {
    pub(super) files: HashMap<String, (fencepost_core::item::FileStat, Arc<TreeItem>)>,
    /// A file watcher reports every change ([`TreeCache::invalidate`]), so cached files need
    /// no stat: a rebuild only lists names.
    pub trust_invalidations: bool,
}

/// A body as the preview shows it: rendered with its shortcodes, or — when one fails — the
/// failure, named, where the body would be (what `publish` would refuse), never a guess.
fn preview_body(
    site: &Site,
    shortcodes: Option<&Shortcodes>,
    item: &content::Item,
) -> fencepost_site::markdown::Rendered {
    render_with(
        &item.body,
        &site.config.markdown,
        shortcodes,
        (&item.title, &item.data),
    )
    .unwrap_or_else(|e| {
        tracing::warn!(item = %item.name, error = %e, "preview: a shortcode failed");
        fencepost_site::markdown::Rendered {
            body_html: format!(
                "<pre class=\"fencepost-error\">{}</pre>",
                htmlize::escape_text(e.to_string())
            ),
            summary_html: None,
        }
    })
}

impl TreeCache {
    /// Forgets one file (the watcher saw it change).
    pub fn invalidate(&mut self, rel: &str) {
        self.files.remove(rel);
    }

    /// Forgets everything (an image or other non-item file changed).
    pub fn clear(&mut self) {
        self.files.clear();
    }
}

/// A preview item's image: a local one copied by its hash, a remote one linked as it is (one
/// that cannot be read is left out, logged).
fn preview_image(site: &Site, item: &content::Item) -> Option<(Option<CopyInput>, String)> {
    match &item.image {
        None => None,
        Some(ImageSource::Remote(url)) => Some((None, url.clone())),
        Some(src @ ImageSource::Local(img_rel)) => {
            match fencepost_site::images::load_local(site, img_rel) {
                Ok((bytes, content_type)) => {
                    let sha = fencepost_core::digest::sha256_hex(&bytes);
                    let c = CopyInput {
                        path: format!(
                            "images/{sha}.{}",
                            fencepost_site::images::extension(content_type)
                        ),
                        sha256: sha,
                        source: CopySource::Bytes(Arc::new(bytes)),
                        immutable_url: true,
                    };
                    let url = format!("/{}", c.path);
                    Some((Some(c), url))
                }
                Err(why) => {
                    tracing::warn!(item = %item.name, image = src.key(), error = %why, "preview: image left out");
                    None
                }
            }
        }
    }
}

pub(super) fn read_tree_item(
    site: &Site,
    shortcodes: Option<&Shortcodes>,
    rel: &str,
) -> Result<TreeItem, BuildError> {
    let (ci, coll) = site
        .collections
        .list
        .iter()
        .enumerate()
        .find(|(_, c)| content::owner(&site.collections, rel).is_some_and(|o| o.name == c.name))
        .ok_or_else(|| ContentError::NoCollection {
            path: rel.into(),
            why: "belongs to no collection".into(),
        })?;
    let (item, _) = content::read_item(
        &site.root,
        rel,
        site.config.publish.max_item_bytes,
        coll,
        &site.collections,
    )?;
    let image = preview_image(site, &item);
    let rendered = preview_body(site, shortcodes, &item);
    let body_html: Arc<str> = rendered.body_html.into();
    let due = item.due;
    let (url, date) = place(coll, &item.name.id, item.day, due);
    let mut hashed = body_html.as_bytes().to_vec();
    hashed.push(0);
    hashed.extend_from_slice(item.data.as_bytes());
    hashed.push(0);
    hashed.extend_from_slice(item.terms.as_bytes());
    hashed.push(0);
    hashed.extend_from_slice(rendered.summary_html.as_deref().unwrap_or("").as_bytes());
    let page = PageInput {
        view: ItemPage {
            id: id_view(coll, &item.name.id),
            collection: item.name.collection.clone(),
            url,
            title: item.title.clone(),
            day: item.day.map(|d| d.to_string()),
            image_url: image.as_ref().map(|(_, url)| url.clone()),
            indexable: item.indexable,
            published: date_of(due),
            updated: date_of(due),
            date: due.rfc3339(),
            lastmod: due.rfc3339(),
            prev: None,
            next: None,
            embargoed_until: None,
            embargoed_until_local: None,
            draft: item.draft,
            summary_html: rendered.summary_html.map(Arc::from),
            withdrawn_at: None,
            lang: coll.lang.as_str().into(),
            translations: super::view::no_translations(),
            terms: item.terms.as_str().into(),
            data: item.data.as_str().into(),
            content_hash: fencepost_core::digest::sha256_hex(&hashed),
            row: 0,
        },
        first_published_at: due,
        updated_at: due,
        due,
        changed: due,
        coll: ci,
        date,
        weight: PageInput::weight_of(coll, &item.data),
        json_digest: None,
    };
    Ok(TreeItem {
        item,
        body_html,
        page,
        image,
    })
}

/// The content tree as it is now: every item not withdrawn, embargoed ones included.
pub(super) fn tree_source(
    site: &Site,
    revision: i64,
    now: Instant,
    cache: &mut TreeCache,
) -> Result<Source, BuildError> {
    let files = tree_files(site, cache)?;
    cache.refresh(site, &files)?;
    let mut images = HashMap::new();
    let mut pages = Vec::new();
    let mut bodies = HashMap::new();
    let mut next_change_at: Option<Instant> = None;
    for (row, (rel, _)) in files.iter().enumerate() {
        let t = &cache.files[rel].1;
        let item = &t.item;
        if item.withdrawn || item.expire_at.is_some_and(|at| at <= now) {
            continue;
        }
        let due = t.page.first_published_at;
        let mut page = t.page.clone();
        page.view.row = row as i64;
        if due > now {
            next_change_at = Some(next_change_at.map_or(due, |n| n.min(due)));
            page.view.embargoed_until = Some(due.rfc3339());
            let tz = site.collections.list[page.coll].timezone;
            let local = due.to_datetime().with_timezone(&tz);
            page.view.embargoed_until_local = Some(local.format("%Y-%m-%d %H:%M %Z").to_string());
        }
        if let Some((Some(c), _)) = &t.image {
            images.insert(c.path.clone(), c.clone());
        }
        bodies.insert(row as i64, t.body_html.clone());
        pages.push(page);
    }
    let pages = PageInput::in_order(pages);
    Ok(Source {
        revision,
        pages,
        notices: Vec::new(),
        images: images.into_values().collect(),
        next_change_at,
        bodies,
        pages_read: 0,
    })
}

/// The item files of the tree with their stats. When a watcher reports every change, only
/// names are listed and known files keep their cached stat. A folder that cannot be listed
/// fails the preview.
fn tree_files(
    site: &Site,
    cache: &TreeCache,
) -> Result<Vec<(String, fencepost_core::item::FileStat)>, BuildError> {
    if !cache.trust_invalidations || cache.files.is_empty() {
        let listing = content::list_item_files(&site.root, &site.collections)?;
        if let Some(b) = listing.broken.into_iter().next() {
            return Err(b.error.into());
        }
        return Ok(listing.files);
    }
    let unknown = fencepost_core::item::FileStat {
        size: -1,
        changed_ns: -1,
        ino: -1,
    };
    let (paths, broken) = content::list_item_paths(&site.root, &site.collections)?;
    if let Some(b) = broken.into_iter().next() {
        return Err(b.error.into());
    }
    let stat_of = |rel: &String| cache.files.get(rel).map_or(unknown, |(s, _)| *s);
    Ok(paths
        .iter()
        .map(|p| {
            let rel = content::relative(&site.root, p);
            let stat = stat_of(&rel);
            (rel, stat)
        })
        .collect())
}

impl TreeCache {
    /// Reads the files that changed (in parallel), forgets the ones gone, and refuses two
    /// files with one item name.
    fn refresh(
        &mut self,
        site: &Site,
        files: &[(String, fencepost_core::item::FileStat)],
    ) -> Result<(), BuildError> {
        let shortcodes = Shortcodes::load(&site.root, &site.config);
        let sc = shortcodes.as_ref();
        let fresh: Vec<(String, fencepost_core::item::FileStat, TreeItem)> = files
            .par_iter()
            .filter(|(rel, stat)| self.files.get(rel).is_none_or(|(s, _)| s != stat))
            .map(|(rel, stat)| read_tree_item(site, sc, rel).map(|t| (rel.clone(), *stat, t)))
            .collect::<Result<_, _>>()?;
        for (rel, stat, t) in fresh {
            self.files.insert(rel, (stat, Arc::new(t)));
        }
        let present: std::collections::HashSet<&String> = files.iter().map(|(r, _)| r).collect();
        self.files.retain(|rel, _| present.contains(rel));
        let mut seen = HashMap::new();
        for (rel, _) in files {
            let name = &self.files[rel].1.item.name;
            if let Some(first) = seen.insert(name, rel) {
                return Err(ContentError::DuplicateId {
                    name: name.clone(),
                    first: first.clone(),
                    second: rel.clone(),
                }
                .into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[test]
fn days_parse_as_chrono_does() {
    for d in ["2026-11-30", "0001-01-01", "9998-12-31", "2028-02-29"] {
        assert_eq!(
            parse_day(d),
            NaiveDate::parse_from_str(d, "%Y-%m-%d").ok(),
            "{d}"
        );
    }
    for d in ["", "2026-11-3", "2026/11/30", "2027-02-29", "abcd-ef-gh"] {
        assert_eq!(parse_day(d), None, "{d}");
    }
}

/// A plain page's or a list's text, read and rendered with the site's shortcodes (an error
/// names the file).
fn read_text(
    (rel, text): (&str, &str),
    (reserved, languages): (&[String], &fencepost_config::collections::Languages),
    markdown: &fencepost_config::MarkdownConfig,
    shortcodes: Option<&Shortcodes>,
) -> Result<(content::plain::PlainPage, String), String> {
    let p =
        content::plain::parse_plain(rel, text, reserved, languages).map_err(|e| e.to_string())?;
    let html = render_with(
        &p.body,
        markdown,
        shortcodes,
        (p.title.as_deref().unwrap_or(""), "{}"),
    )
    .map_err(|e| format!("{rel}: {e}"))?;
    Ok((p, html.body_html))
}

fn extra_of(t: &toml::Table) -> serde_json::Value {
    serde_json::to_value(t).unwrap_or_else(|_| serde_json::json!({}))
}

/// The site's root text: in Zola mode, `content/_index.md` is the root section's (Zola's home
/// page text and `[extra]`), not a plain page.
pub(super) const ROOT_TEXT: &str = "content/_index.md";

/// The plain pages `content/*.md` that can be placed, the root text (Zola mode), and the ones
/// left out (each named with why: `publish` reported it already; the rest of the site is
/// built without it).
pub(super) fn plain_pages(
    files: &fingerprint::SiteFiles,
    collections: &Collections,
    markdown: &fencepost_config::MarkdownConfig,
    (shortcodes, zola): (Option<&Shortcodes>, bool),
) -> (
    Vec<PlainView>,
    std::collections::BTreeMap<String, super::view::ListText>,
    Vec<super::report::LeftOut>,
) {
    let reserved = content::plain::reserved_names(collections);
    let (mut out, mut roots, mut left_out) =
        (Vec::new(), std::collections::BTreeMap::new(), Vec::new());
    let langs = &collections.languages;
    // Zola's root section texts: `content/_index.md`, and `_index.<code>.md` of each language.
    let root_of = |rel: &str| match rel == ROOT_TEXT {
        true => Some(langs.default_code().to_string()),
        false => (langs.others().iter())
            .find(|l| rel == format!("content/_index.{}.md", l.code))
            .map(|l| l.code.clone()),
    };
    for (rel, text) in &files.plain {
        let root = root_of(rel).filter(|_| zola);
        match read_text((rel, text), (&reserved, langs), markdown, shortcodes) {
            Ok((p, html)) if root.is_some() => {
                let text = super::view::ListText {
                    title: p.title,
                    html,
                    extra: extra_of(&p.extra),
                };
                roots.insert(root.unwrap_or_default(), text);
            }
            Ok((p, body_html)) => out.push(PlainView {
                url: p.url,
                title: p.title.unwrap_or_else(|| p.slug.clone()),
                indexable: p.indexable.unwrap_or(true),
                date: p.date,
                lastmod: p.lastmod,
                aliases: p.aliases,
                template: p.template.unwrap_or_else(|| "page.html".into()),
                extra: extra_of(&p.extra),
                body_html,
                slug: p.slug,
                lang: p.lang,
            }),
            Err(why) => left_out.push(super::report::LeftOut {
                what: rel.clone(),
                path: None,
                why,
            }),
        }
    }
    (out, roots, left_out)
}

/// Each collection's list text (`list_text`, by collection index; None without one), and the
/// ones left out (a text whose front matter is not a plain page's: named, the list is built
/// without it).
pub(super) fn list_texts(
    files: &fingerprint::SiteFiles,
    collections: &Collections,
    markdown: &fencepost_config::MarkdownConfig,
    shortcodes: Option<&Shortcodes>,
    left_out: &mut Vec<super::report::LeftOut>,
) -> Vec<Option<super::view::ListText>> {
    let text_of = |c: &fencepost_config::collections::Collection| {
        let rel = format!("content/{}/{}", c.dir, c.list_text.as_ref()?);
        let (rel, text) = files.list_texts.iter().find(|(r, _)| *r == rel)?;
        match read_text(
            (rel, text),
            (&[], &collections.languages),
            markdown,
            shortcodes,
        ) {
            Ok((p, html)) => Some(super::view::ListText {
                title: p.title,
                html,
                extra: extra_of(&p.extra),
            }),
            Err(why) => {
                left_out.push(super::report::LeftOut {
                    what: rel.clone(),
                    path: None,
                    why,
                });
                None
            }
        }
    };
    collections.list.iter().map(text_of).collect()
}

pub(super) fn static_copies(site: &Site) -> Result<Vec<CopyInput>, BuildError> {
    fingerprint::list_files(&site.root, "static", fingerprint::Hidden::Keep)?
        .into_par_iter()
        .map(|rel| {
            let src = site.root.join(&rel);
            let bytes = std::fs::read(&src).map_err(io(&src))?;
            Ok(CopyInput {
                path: rel.trim_start_matches("static/").to_string(),
                sha256: fencepost_core::digest::sha256_hex(&bytes),
                source: CopySource::Bytes(Arc::new(bytes)),
                immutable_url: false,
            })
        })
        .collect()
}
