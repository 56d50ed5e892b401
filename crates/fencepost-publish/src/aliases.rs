//! Step 1c of a publish run: every alias of a file read must be a URL nothing else has — not
//! the item's own, not the site's own pages and files, not another item's page, not another
//! item's alias. A file with such an alias is an invalid file, held as it is and named with
//! its `aliases` line and the URL, while everything else goes ahead (the rule of
//! [`super::claims`] for an item's own URL).
//!
//! Item pages win over aliases: an alias is checked against every item the ledger keeps and
//! every file read, whatever its collection's URL pattern would allow later. A later item
//! whose page takes a published alias's URL is published; the build then leaves that alias
//! out and names it (see `build/inputs.rs`).

use super::PublishError;
use fencepost_config::collections::Collections;
use fencepost_core::item::ItemName;
use fencepost_ledger::items::{self, State};
use fencepost_ledger::Ledger;
use fencepost_site::content::claims::{page_spelling, SiteUrls};
use fencepost_site::content::{self, Broken, ContentError, ReadFile, Scan};
use fencepost_site::Site;
use std::collections::HashMap;
use std::path::PathBuf;

/// The aliases an item of `collections` has, from its data: none in a collection that
/// declared a field of its own named `aliases` (that field wins; see `config/names.rs`).
pub(super) fn aliases_of(collections: &Collections, name: &ItemName, data: &str) -> Vec<String> {
    match collections.get(&name.collection) {
        Some(c) if !c.fields.contains_key("aliases") => content::aliases_in(data),
        _ => Vec::new(),
    }
}

/// Moves every file read that has an alias something else has to the broken files.
pub(super) fn hold_taken_aliases(
    site: &Site,
    ledger: &mut Ledger,
    scan: &mut Scan,
    plain: &[(String, String)],
) -> Result<(), PublishError> {
    let colls = &site.collections;
    // A file that withdraws its item (or keeps it a draft) redirects nothing: never held.
    let checked = |f: &ReadFile| !f.item.withdrawn && !f.item.draft;
    let aliased =
        |f: &ReadFile| checked(f) && !aliases_of(colls, &f.item.name, &f.item.data).is_empty();
    if !scan.read.iter().any(aliased) {
        return Ok(());
    }
    let urls = SiteUrls::new(&site.root, colls, site.config.rss(), plain);
    let taken = Taken::read(site, ledger, scan)?;
    let mut kept = Vec::with_capacity(scan.read.len());
    for f in std::mem::take(&mut scan.read) {
        if !checked(&f) {
            kept.push(f);
            continue;
        }
        // Every spelling of one page is one URL (`/x/`, `/x`, `/x/index.html`), and the
        // site's generated pages — a taxonomy's terms, a list's numbered pages — are taken by
        // their shape: the build would drop such an alias in every revision.
        let clash = aliases_of(colls, &f.item.name, &f.item.data)
            .into_iter()
            .find_map(|alias| {
                let page = page_spelling(&alias);
                let what = urls
                    .taken(&page)
                    .or_else(|| taken.by_other(&page, &f.item.name))?;
                Some((alias, what))
            });
        match clash {
            None => kept.push(f),
            Some((alias, what)) => scan.broken.push(refused(site, f, alias, what)),
        }
    }
    scan.read = kept;
    Ok(())
}

/// Every URL an item has (its page, its aliases), lower-cased (a case-insensitive file
/// system or bucket holds one file for both spellings), with the items that have it.
struct Taken {
    by_url: HashMap<String, Vec<(ItemName, &'static str)>>,
    /// Items the public can see: their aliases stand against a newcomer's, never the other
    /// way round (two newcomers hold each other).
    public: std::collections::HashSet<ItemName>,
}

impl Taken {
    fn read(site: &Site, ledger: &mut Ledger, scan: &Scan) -> Result<Taken, PublishError> {
        let colls = &site.collections;
        let mut t = Taken {
            by_url: HashMap::new(),
            public: Default::default(),
        };
        let read: std::collections::HashSet<&ItemName> =
            scan.read.iter().map(|f| &f.item.name).collect();
        for p in ledger.read(items::placed)? {
            if p.state == State::Published {
                t.public.insert(p.name.clone());
            }
            let kept = p.state == State::Published || p.has_file;
            if !kept || read.contains(&p.name) {
                continue; // An item read in this run is placed below, as its file says now.
            }
            let day = chrono::NaiveDate::parse_from_str(&p.day, "%Y-%m-%d").ok();
            if let Some(c) = colls.get(&p.name.collection) {
                let url = c.item_url(&p.name.id, Some(c.date_of(day, p.due)));
                t.put(&url, &p.name, "page");
            }
        }
        for (name, data) in ledger.read(items::aliased)? {
            let aliases = content::aliases_in(&data);
            let built_in = colls
                .get(&name.collection)
                .is_some_and(|c| !c.fields.contains_key("aliases"));
            if built_in && !read.contains(&name) {
                for a in aliases {
                    t.put(&a, &name, "alias");
                }
            }
        }
        for f in &scan.read {
            let name = &f.item.name;
            if let Some(c) = colls.get(&name.collection) {
                let url = c.item_url(&name.id, Some(c.date_of(f.item.day, f.item.due)));
                t.put(&url, name, "page");
            }
            if !f.item.withdrawn && !f.item.draft {
                for a in aliases_of(colls, name, &f.item.data) {
                    t.put(&a, name, "alias");
                }
            }
        }
        Ok(t)
    }

    fn put(&mut self, url: &str, name: &ItemName, what: &'static str) {
        self.by_url
            .entry(page_spelling(url).to_lowercase())
            .or_default()
            .push((name.clone(), what));
    }

    /// What other than `name`'s alias itself has `url`, in words.
    fn by_other(&self, url: &str, name: &ItemName) -> Option<String> {
        let all = self.by_url.get(&page_spelling(url).to_lowercase())?;
        if all.iter().any(|(n, what)| n == name && *what == "page") {
            return Some("this item's own URL".into());
        }
        let mine = self.public.contains(name);
        all.iter()
            .find(|(n, what)| {
                // Another's page always; another's alias unless it is a newcomer's and this
                // item is public.
                n != name && (*what == "page" || !mine || self.public.contains(n))
            })
            .map(|(n, what)| match *what {
                "page" => format!("the URL of item {n}"),
                _ => format!("an alias of item {n} too"),
            })
    }
}

/// A file refused because an alias of it is taken: named with the line of its `aliases` key.
fn refused(site: &Site, f: ReadFile, url: String, what: String) -> Broken {
    let line = super::claims::line_of_key(site, &f.path, "aliases");
    let path = PathBuf::from(&f.path);
    super::claims::held(
        f,
        ContentError::AliasTaken {
            path,
            line,
            url,
            what,
        },
    )
}
