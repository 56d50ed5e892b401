//! Languages in the build (docs/languages.md): which public pages are versions of one item,
//! and each language's own home page and feed.
//!
//! `page.translations` lists the versions of an item *in this revision's public pages*, so an
//! `hreflang` link or a language switcher names a translation only from the revision that
//! makes it public: a translation held back, embargoed or withdrawn is in no other page. And
//! because the list is part of each page's reuse key, the page of the original is rendered
//! again in the revision that reveals (or withdraws) a translation, and only then.

use super::page::PageInput;
use super::plan::{Job, Planned};
use super::render::Renderer;
use super::view::Translation;
use fencepost_config::collections::Collections;
use std::collections::HashMap;
use std::sync::Arc;

/// Fills in `page.translations` of every page (nothing on a site of one language).
pub(super) fn link(pages: &mut [PageInput], collections: &Collections) {
    let langs = &collections.languages;
    if !langs.many() {
        return;
    }
    let order = |code: &str| langs.list.iter().position(|l| l.code == code);
    let mut groups: HashMap<(&str, String), Vec<usize>> = HashMap::new();
    for (i, p) in pages.iter().enumerate() {
        let c = &collections.list[p.coll];
        let original = c.original.as_deref().unwrap_or(&c.name);
        groups
            .entry((original, p.view.id.text()))
            .or_default()
            .push(i);
    }
    let mut found: Vec<(usize, Arc<[Translation]>)> = Vec::with_capacity(pages.len());
    for members in groups.into_values() {
        let mut list: Vec<(Option<usize>, Translation)> = (members.iter())
            .map(|&i| {
                let v = &pages[i].view;
                let name = langs.get(&v.lang).map_or(&*v.lang, |l| l.name.as_str());
                let t = Translation {
                    lang: v.lang.clone(),
                    name: name.into(),
                    url: v.url.clone(),
                    title: v.title.clone(),
                };
                (order(&v.lang), t)
            })
            .collect();
        list.sort_by(|a, b| (a.0, &a.1.lang).cmp(&(b.0, &b.1.lang)));
        let shared: Arc<[Translation]> = list.into_iter().map(|(_, t)| t).collect();
        found.extend(members.iter().map(|&i| (i, shared.clone())));
    }
    for (i, t) in found {
        pages[i].view.translations = t;
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

/// The site's title in language `code`: its `[languages.<code>] title`, else the site's.
pub(super) fn title(r: &Renderer<'_>, code: &str) -> String {
    let lang = r.collections.languages.get(code);
    lang.and_then(|l| l.title.clone())
        .unwrap_or_else(|| r.site.title.clone())
}

/// The language of planned file `p`: its page's, its list's or term's, a language's home
/// page's; the default language's for the site's own files.
pub(crate) fn lang_of<'a>(r: &'a Renderer<'_>, p: &'a Planned) -> &'a str {
    let cs = r.collections;
    match &p.job {
        Job::Item(i) => &r.pages[*i].view.lang,
        Job::Notice(i) => &r.notices[*i].view.lang,
        Job::Home(h) if !h.lang.is_empty() => &h.lang,
        Job::ListIndex(ci, _) | Job::List(ci, _) => &cs.list[*ci].lang,
        Job::Term(v) => &cs.taxonomies[v.taxonomy].lang,
        Job::Terms(ti, _) => &cs.taxonomies[*ti].lang,
        Job::Plain(v) if !v.lang.is_empty() => &v.lang,
        // A language's own files (`fr/404.html`) are under its prefix.
        _ => (cs.languages.others().iter())
            .find(|l| {
                p.path
                    .starts_with(&format!("{}/", l.url_prefix.trim_matches('/')))
            })
            .map_or(cs.languages.default_code(), |l| l.code.as_str()),
    }
}

/// `lang` and `translations` (its page's versions; none but on an item page) in the context
/// of planned file `p`, and on a site of many languages `site` as its
/// language shows it (its title and description).
pub(super) fn put_lang(r: &Renderer<'_>, c: &mut tera::Context, p: &Planned) {
    let code = lang_of(r, p);
    c.insert("lang", code);
    let none: &[Translation] = &[];
    let translations = match &p.job {
        Job::Item(i) => &r.pages[*i].view.translations[..],
        _ => none,
    };
    c.insert("translations", translations);
    let langs = &r.collections.languages;
    if !langs.many() || code == langs.default_code() {
        return;
    }
    if let Some(l) = langs.get(code) {
        let mut site = r.site.clone();
        site.title = title(r, code);
        site.description = l.description.clone();
        site.home_url = format!("{}/", l.url_prefix);
        c.insert("site", &site);
    }
}
