//! A planned file's language as the renderer sees it: which language a file is in, the
//! context it starts from (its language's `site`, `lang`, `translations`), the title its feed
//! gives (see `languages.rs` for how versions are linked and languages' contexts made).

use super::Renderer;
use crate::plan::{Job, Planned};
use crate::view::Translation;

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

/// The context planned file `p` starts from: its language's `site`, `lang`, and
/// `translations` (its page's versions; none but on an item page).
pub(super) fn context(r: &Renderer<'_>, p: &Planned) -> tera::Context {
    let code = lang_of(r, p);
    let own = r.lang_contexts.iter().find(|(c, _)| c == code);
    let mut c = own.map_or_else(|| r.site_context.clone(), |(_, c)| c.clone());
    c.insert("lang", code);
    let none: &[Translation] = &[];
    let translations = match &p.job {
        Job::Item(i) => &r.pages[*i].view.translations[..],
        _ => none,
    };
    c.insert("translations", translations);
    c
}
