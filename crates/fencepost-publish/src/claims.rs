//! Step 1b of a publish run: every file read claims the URL its item would have, so a file
//! `build` could not place is found when it is read. An item whose URL the site keeps for
//! itself (see [`content::claims`]) or another collection's item has is an invalid file:
//! held as it is, named with its file, line, key and the URL, while everything else goes
//! ahead. Plain pages are read here too: one that `build` could not read is named the same
//! way (it holds no item back).

use super::PublishError;
use fencepost_config::collections::OnWithdraw;
use fencepost_core::item::ItemName;
use fencepost_ledger::items::{self, State};
use fencepost_ledger::Ledger;
use fencepost_site::content::claims::SiteUrls;
use fencepost_site::content::{self, Broken, ContentError, Scan};
use fencepost_site::Site;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// Reads the plain pages; each that does not read is a broken file of no item. Returns the
/// URLs of the others, with their files.
pub(super) fn check_plain_pages(site: &Site, scan: &mut Scan) -> Vec<(String, String)> {
    let reserved = content::plain::reserved_names(&site.collections);
    let mut urls = Vec::new();
    for rel in content::plain::list(&site.root) {
        let path = site.root.join(&rel);
        let read = std::fs::read_to_string(&path)
            .map_err(|source| ContentError::Read {
                path: PathBuf::from(&rel),
                source,
            })
            .and_then(|text| {
                content::plain::parse_plain(&rel, &text, &reserved, &site.collections.languages)
            });
        match read {
            Ok(p) => urls.push((p.url, rel)),
            Err(error) => scan.broken.push(Broken {
                path: rel,
                error,
                name: None,
            }),
        }
    }
    urls
}

/// Moves every file read whose item's URL is taken to the broken files (its item held).
pub(super) fn hold_taken_urls(
    site: &Site,
    ledger: &mut Ledger,
    scan: &mut Scan,
    plain: &[(String, String)],
) -> Result<(), PublishError> {
    if scan.read.is_empty() {
        return Ok(());
    }
    let urls = SiteUrls::new(&site.root, &site.collections, site.config.rss(), plain);
    let others = Others::read(site, ledger, scan)?;
    let mut kept = Vec::with_capacity(scan.read.len());
    for f in std::mem::take(&mut scan.read) {
        let Some(url) = url_of(site, &f.item.name, f.item.day, f.item.due) else {
            kept.push(f);
            continue;
        };
        match urls
            .taken(&url)
            .or_else(|| others.taken(&url, &f.item.name))
        {
            None => kept.push(f),
            Some(what) => scan.broken.push(refused(site, f, url, what)),
        }
    }
    scan.read = kept;
    Ok(())
}

/// The URL an item has, by its collection's pattern (none for an unknown collection).
fn url_of(
    site: &Site,
    name: &ItemName,
    day: Option<chrono::NaiveDate>,
    due: fencepost_core::clock::Instant,
) -> Option<String> {
    let c = site.collections.get(&name.collection)?;
    Some(c.item_url(&name.id, Some(c.date_of(day, due))))
}

/// Other items by URL, on a site with more than one collection, each with its standing: 0
/// public (or keeping a notice), 1 a file accepted before this run, 2 read in this run and
/// not public. An item is held for another of a lower standing, and two new ones for each
/// other; a public item is never held for a newcomer.
struct Others {
    by_url: HashMap<String, Vec<(ItemName, u8)>>,
    public: HashSet<ItemName>,
}

impl Others {
    fn read(site: &Site, ledger: &mut Ledger, scan: &Scan) -> Result<Others, PublishError> {
        let colls = &site.collections;
        let mut o = Others {
            by_url: HashMap::new(),
            public: HashSet::new(),
        };
        // Within one collection, ids differ, and so do URLs — but for case: `FPSA-1` against
        // a withdrawn `Fpsa-1`'s notice is one file on a case-insensitive file system or
        // bucket. URLs are compared lower-cased.
        let cased = scan
            .read
            .iter()
            .any(|f| f.item.name.id.bytes().any(|b| b.is_ascii_uppercase()));
        if colls.list.len() < 2 && !cased {
            return Ok(o);
        }
        let read: HashSet<&ItemName> = scan.read.iter().map(|f| &f.item.name).collect();
        for p in ledger.read(items::placed)? {
            let notice = || {
                colls
                    .get(&p.name.collection)
                    .is_some_and(|c| c.on_withdraw == OnWithdraw::Notice)
            };
            let standing = match p.state {
                State::Published => 0,
                State::Withdrawn if notice() => 0,
                _ if p.has_file && !read.contains(&p.name) => 1,
                _ => continue,
            };
            if standing == 0 {
                o.public.insert(p.name.clone());
                if read.contains(&p.name) {
                    continue; // Placed below, at the URL its file gives it now.
                }
            }
            let day = chrono::NaiveDate::parse_from_str(&p.day, "%Y-%m-%d").ok();
            if let Some(url) = url_of(site, &p.name, day, p.due) {
                let url = url.to_lowercase();
                o.by_url.entry(url).or_default().push((p.name, standing));
            }
        }
        for f in &scan.read {
            if let Some(url) = url_of(site, &f.item.name, f.item.day, f.item.due) {
                let standing = if o.public.contains(&f.item.name) {
                    0
                } else {
                    2
                };
                o.by_url
                    .entry(url.to_lowercase())
                    .or_default()
                    .push((f.item.name.clone(), standing));
            }
        }
        Ok(o)
    }

    /// The other item that keeps `url` from `name`, in words.
    fn taken(&self, url: &str, name: &ItemName) -> Option<String> {
        let mine: u8 = if self.public.contains(name) { 0 } else { 2 };
        self.by_url.get(&url.to_lowercase()).and_then(|names| {
            names
                .iter()
                .find(|(n, standing)| {
                    n != name && (*standing < mine || (*standing, mine) == (2, 2))
                })
                .map(|(n, _)| format!("item {n}'s"))
        })
    }
}

/// The line of `key` in the front matter of the site's file `rel`, if it is there.
pub(super) fn line_of_key(site: &Site, rel: &str, key: &str) -> Option<usize> {
    let text = std::fs::read_to_string(site.root.join(rel)).unwrap_or_default();
    content::split_front_matter(&text)
        .ok()
        .and_then(|s| s.front_matter)
        .and_then(|fm| content::key_line(fm, key))
}

/// Moves every file read whose body is larger than the ledger stores in one value (D1's
/// 2,000,000 bytes) to the broken files: its item held as it is, named with the way out,
/// everything else going ahead. Checked on the Markdown, before anything is rendered or
/// written. (The log itself could carry a larger page — its entries travel in parts — but
/// every row of a ledger on D1 stays a row D1 could hold, so its pages can move into D1's own
/// tables, for the edge to read, without refusing old ones: see `docs/ledger.md`.)
pub(super) fn hold_oversized(ledger: &Ledger, scan: &mut Scan) {
    let Some(limit) = ledger.value_limit() else {
        return;
    };
    let (big, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut scan.read)
        .into_iter()
        .partition(|f| f.item.body.len() > limit);
    scan.read = kept;
    for f in big {
        let why = format!(
            "the body is {} bytes, more than the ledger ({}) stores in one value ({limit} bytes, D1's limit): split the page, or move large media out of the Markdown into files beside it",
            f.item.body.len(),
            ledger.name()
        );
        let path = PathBuf::from(&f.path);
        scan.broken.push(held(
            f,
            ContentError::Invalid {
                path,
                line: None,
                key: "(body)".into(),
                why,
            },
        ));
    }
}

/// A file refused because its URL is taken: named with the line of its `id` key.
fn refused(site: &Site, f: content::ReadFile, url: String, what: String) -> Broken {
    let line = line_of_key(site, &f.path, "id");
    let path = PathBuf::from(&f.path);
    held(
        f,
        ContentError::UrlTaken {
            path,
            line,
            url,
            what,
        },
    )
}

/// A file read, moved to the broken files with `error`: its item held as it is.
pub(super) fn held(f: content::ReadFile, error: ContentError) -> Broken {
    Broken {
        error,
        name: Some(f.item.name.clone()),
        path: f.path,
    }
}
