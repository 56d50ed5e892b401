//! Languages in the build (docs/languages.md): which public pages are versions of one item,
//! and each language's own home page and feed.
//!
//! `page.translations` lists the versions of an item *in this revision's public pages*, so an
//! `hreflang` link or a language switcher names a translation only from the revision that
//! makes it public: a translation held back, embargoed or withdrawn is in no other page. And
//! because the list is part of each page's reuse key, the page of the original is rendered
//! again in the revision that reveals (or withdraws) a translation, and only then.

use super::page::PageInput;
use super::view::Translation;
use fencepost_config::collections::Collections;
use std::sync::Arc;

/// Fills in `page.translations` of every page (nothing on a site of one language). The
/// versions of an item are found by sorting (original collection, id, language) once: one
/// pass over the pages, no map of strings.
pub(super) fn link(pages: &mut [PageInput], collections: &Collections) {
    let langs = &collections.languages;
    if !langs.many() {
        return;
    }
    let list = &collections.list;
    let original: Vec<usize> = (list.iter().enumerate())
        .map(|(i, c)| {
            let o = c.original.as_deref();
            o.and_then(|o| list.iter().position(|x| x.name == o))
                .unwrap_or(i)
        })
        .collect();
    let order: Vec<usize> = (list.iter())
        .map(|c| {
            langs
                .list
                .iter()
                .position(|l| l.code == c.lang)
                .unwrap_or(usize::MAX)
        })
        .collect();
    let name: Vec<Arc<str>> = (list.iter())
        .map(|c| {
            langs
                .get(&c.lang)
                .map_or(c.lang.as_str(), |l| l.name.as_str())
                .into()
        })
        .collect();
    let mut keys: Vec<(usize, &super::view::IdView, usize, u32)> = (pages.iter().enumerate())
        .map(|(i, p)| (original[p.coll], &p.view.id, order[p.coll], i as u32))
        .collect();
    keys.sort_unstable();
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    for i in 1..=keys.len() {
        if i == keys.len() || (keys[i].0, keys[i].1) != (keys[start].0, keys[start].1) {
            runs.push(start..i);
            start = i;
        }
    }
    let members: Vec<u32> = keys.into_iter().map(|k| k.3).collect();
    for run in runs {
        let shared: Arc<[Translation]> = (members[run.clone()].iter())
            .map(|&i| {
                let p = &pages[i as usize];
                Translation {
                    lang: p.view.lang.clone(),
                    name: name[p.coll].clone(),
                    url: p.view.url.clone(),
                    title: p.view.title.clone(),
                }
            })
            .collect();
        for &i in &members[run] {
            pages[i as usize].view.translations = shared.clone();
        }
    }
}

/// `site.languages`: every language with its name and home page.
pub(super) fn links(collections: &Collections) -> Vec<super::view::LanguageLink> {
    (collections.languages.list.iter())
        .map(|l| super::view::LanguageLink {
            code: l.code.clone(),
            name: l.name.clone(),
            url: format!("{}/", l.url_prefix),
        })
        .collect()
}

/// A language's home page URL (`/`, `/fr/`); the default's for `""`.
pub(super) fn home_url(collections: &Collections, code: &str) -> String {
    let prefix = collections
        .languages
        .get(code)
        .map_or("", |l| l.url_prefix.as_str());
    format!("{prefix}/")
}

/// Each other language's `site` (its title, description and home page), in a context of its
/// own, made once per build.
pub(super) fn site_contexts(
    collections: &Collections,
    site: &super::view::SiteView,
) -> Vec<(String, tera::Context)> {
    (collections.languages.others().iter())
        .map(|l| {
            let mut v = site.clone();
            v.title = l.title.clone().unwrap_or_else(|| site.title.clone());
            v.description = l.description.clone();
            v.home_url = format!("{}/", l.url_prefix);
            let mut c = tera::Context::new();
            c.insert("site", &v);
            (l.code.clone(), c)
        })
        .collect()
}
