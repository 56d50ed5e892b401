//! The link check of a revision: every internal link of a page rendered anew, and of a reused
//! one when something it could have pointed at is gone, resolved against the revision's files.

use super::links::resolves;
use super::report::{BrokenLink, BuildError};
use super::reuse::Previous;
use super::sink::Stored;
use super::snapshot::Rendered;
use fencepost_output::carried::Carried;
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashSet;

/// A path a later step of the build makes (the search index's): a link to it resolves, and
/// the previous revision's file there is not "gone" while the check runs.
pub(super) type Later<'a> = &'a (dyn Fn(&str) -> bool + Sync);

/// The broken internal links, logged; with `--strict` any is fatal (nothing is swapped).
pub(super) fn link_check(
    rendered: &Rendered,
    prev: Option<&Previous>,
    strict: bool,
    later: Later<'_>,
) -> Result<Vec<BrokenLink>, BuildError> {
    let broken = check_links(
        &rendered.entries,
        &rendered.fresh,
        prev.map(|(_, m)| m),
        later,
    );
    for b in broken.iter().take(20) {
        tracing::warn!(page = %b.page, link = %b.link, "broken internal link");
    }
    if strict && !broken.is_empty() {
        return Err(BuildError::BrokenLinks {
            count: broken.len(),
            first: format!("{} -> {}", broken[0].page, broken[0].link),
        });
    }
    Ok(broken)
}

/// Internal links that resolve to no file of the revision. A reused page is re-checked only
/// when some path of the previous revision is gone, or it had broken links there: otherwise
/// its links resolve exactly as they did. A kept page's links are read from the previous
/// manifest only when it is checked.
fn check_links(
    entries: &[Stored],
    fresh: &[bool],
    prev: Option<&Carried>,
    later: Later<'_>,
) -> Vec<BrokenLink> {
    let something_removed = prev.is_none_or(|m| {
        let mut now = entries.iter().map(|f| f.path(prev)).peekable();
        // The log's files are written after the check, and its partial tiles change names
        // with every entry: they are no page's link target.
        (0..m.len())
            .map(|i| m.path(i))
            .filter(|p| !p.starts_with(super::well_known::LOG_DIR) && !later(p))
            .any(|p| {
                while now.next_if(|n| *n < p).is_some() {}
                now.peek() != Some(&p)
            })
    });
    let broken_before: HashSet<&str> = prev
        .map(|m| {
            (m.head().broken_links.iter())
                .map(|(page, _)| page.as_str())
                .collect()
        })
        .unwrap_or_default();
    let checked: Vec<(&str, Cow<'_, [String]>)> = (entries.iter().zip(fresh))
        .filter(|(f, fresh)| something_removed || **fresh || broken_before.contains(f.path(prev)))
        .map(|(f, _)| match f {
            Stored::New(e) => (e.path.as_str(), Cow::Borrowed(e.links.as_slice())),
            Stored::Kept { index, .. } => {
                let m = prev.expect("a kept file comes from the previous manifest");
                (m.path(*index), Cow::Owned(m.links(*index)))
            }
        })
        .collect();
    // Every page has a handful of links: when most pages are checked (a cold build, a path
    // gone), at 100,000 pages some 700,000 lookups, cheaper in a set of the revision's paths
    // than as binary searches over the sorted entries (each ~17 string comparisons that miss
    // the cache): the check, the set's making included, 175 → 85 ms. When a few pages are
    // (one new item), the set itself was most of the check (~25 ms at 100,000 files, on the
    // build's main thread): their few links are searched for.
    // `entries` are in path order: `snapshot::entries` leaves them so.
    debug_assert!(entries.is_sorted_by(|a, b| a.path(prev) <= b.path(prev)));
    if checked.len() * 64 < entries.len() {
        let exists =
            |p: &str| later(p) || (entries.binary_search_by(|f| f.path(prev).cmp(p))).is_ok();
        broken_in(&checked, &exists)
    } else {
        // Hashed with foldhash, not SipHash: the paths are the build's own, no one's keys
        // to flood a table with, and the set is made and probed ~800,000 times at 100,000.
        let mut paths: HashSet<&str, foldhash::fast::RandomState> =
            HashSet::with_capacity_and_hasher(entries.len(), Default::default());
        paths.extend(entries.iter().map(|f| f.path(prev)));
        broken_in(&checked, &|p: &str| paths.contains(p) || later(p))
    }
}

/// The links of `pages` that resolve to no file `exists` knows, in parallel: a site with
/// taxonomies has a few hundred thousand links to check.
fn broken_in(
    pages: &[(&str, Cow<'_, [String]>)],
    exists: &(dyn Fn(&str) -> bool + Sync),
) -> Vec<BrokenLink> {
    pages
        .par_iter()
        .flat_map_iter(|(page, links)| {
            links
                .iter()
                .filter(|l| !resolves(l, exists))
                .map(|l| BrokenLink {
                    page: page.to_string(),
                    link: l.clone(),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencepost_output::manifest::{CacheClass, Entry, Manifest};

    fn page(path: String, links: &[&str]) -> Entry {
        Entry {
            path,
            sha256: String::new(),
            bytes: 0,
            content_type: "text/html; charset=utf-8".into(),
            cache: CacheClass::Content,
            max_age: 0,
            key: String::new(),
            links: links.iter().map(|l| l.to_string()).collect(),
            location: None,
        }
    }

    /// 300 pages, each linking to the next (the last to one that is not there), page 5
    /// rendered anew with a link to nowhere.
    fn site() -> (Vec<Entry>, Vec<bool>) {
        // In path order, as a build's entries are.
        let entries: Vec<Entry> = std::iter::once(page("index.html".into(), &[]))
            .chain((0..300).map(|i| {
                let next = format!("/p{:03}/", i + 1);
                let mut links = vec!["/", next.as_str()];
                if i == 5 {
                    links.push("/nowhere/");
                }
                page(format!("p{i:03}/index.html"), &links)
            }))
            .collect();
        assert!(entries.is_sorted_by(|a, b| a.path <= b.path));
        let fresh = entries
            .iter()
            .map(|e| e.path == "p005/index.html")
            .collect();
        (entries, fresh)
    }

    fn pairs(broken: &[BrokenLink]) -> Vec<(&str, &str)> {
        let mut v: Vec<_> = broken
            .iter()
            .map(|b| (b.page.as_str(), b.link.as_str()))
            .collect();
        v.sort();
        v
    }

    /// The revision's files: the fresh ones its own, the rest kept from `prev` (whose links
    /// the check then reads from the previous manifest's bytes).
    fn files(entries: &[Entry], fresh: &[bool], prev: &Carried) -> Vec<Stored> {
        (entries.iter().zip(fresh))
            .map(|(e, fresh)| match (fresh, prev.find(&e.path)) {
                (false, Some(index)) => Stored::Kept {
                    index,
                    cache: e.cache,
                },
                _ => Stored::New(e.clone()),
            })
            .collect()
    }

    fn carried(m: &Manifest) -> Carried {
        Carried::from_bytes(m.to_bytes()).unwrap()
    }

    #[test]
    fn a_few_pages_checked_by_search_find_what_every_page_checked_finds() {
        let (entries, fresh) = site();
        let mut prev = Manifest::of_files(entries.clone());
        prev.broken_links = vec![("p299/index.html".into(), "/p300/".into())];
        let kept = carried(&prev);
        let now = files(&entries, &fresh, &kept);
        assert!(matches!(now[1], Stored::Kept { .. }));
        // Nothing gone: the fresh page and the one broken before are checked, by search.
        let few = check_links(&now, &fresh, Some(&kept), &|_| false);
        assert_eq!(
            pairs(&few),
            [
                ("p005/index.html", "/nowhere/"),
                ("p299/index.html", "/p300/")
            ]
        );
        // A path gone: every page is checked, in a set; the same links are found (the kept
        // pages' links read from the previous manifest).
        let mut gone = prev.clone();
        gone.files.push(page("zz/index.html".into(), &[]));
        let gone = carried(&gone);
        let every = check_links(
            &files(&entries, &fresh, &gone),
            &fresh,
            Some(&gone),
            &|_| false,
        );
        assert_eq!(pairs(&every), pairs(&few));
        // No previous revision: every page is checked.
        let owned: Vec<Stored> = entries.iter().cloned().map(Stored::New).collect();
        assert_eq!(
            pairs(&check_links(&owned, &fresh, None, &|_| false)),
            pairs(&few)
        );
        // A page that was broken before and is no longer is not reported.
        let mut mended = entries.clone();
        mended[300].links = vec!["/".into()];
        let mut fresh_mended = fresh.clone();
        fresh_mended[300] = true;
        let mended = files(&mended, &fresh_mended, &kept);
        assert_eq!(
            pairs(&check_links(&mended, &fresh_mended, Some(&kept), &|_| {
                false
            })),
            [("p005/index.html", "/nowhere/")]
        );
    }
}
