//! One planned file rendered with Zola's variables: which template (the same choice as
//! fencepost's own: each collection's `template` and `list_template`, `index.html`, each
//! taxonomy's templates, `page.html`, `404.html`) and what it sees.

use super::functions::section_url;
use super::{ZolaSite, UNPAGINATED};
use crate::plan::{Job, Planned};
use crate::render::Renderer;
use crate::report::BuildError;
use fencepost_config::collections::Pagination;
use serde_json::{json, Value};

/// The bytes of `p` rendered with Zola's variables, or None for a file no template makes
/// (feeds, sitemaps, redirects, copies: fencepost's own).
pub(crate) fn render(
    r: &Renderer<'_>,
    z: &ZolaSite,
    p: &Planned,
) -> Option<Result<String, BuildError>> {
    let mut c = base_context(r, z, p);
    let template = match &p.job {
        Job::Item(i) => {
            c.insert("page", &z.pages[*i]);
            r.collections.list[r.pages[*i].coll].template.clone()
        }
        Job::Notice(i) => {
            let v = &r.notices[*i].view;
            c.insert("page", &json!({ "title": v.title, "permalink": v.url, "path": v.url, "content": "", "extra": {}, "taxonomies": {} }));
            r.collections.list[r.notices[*i].coll]
                .withdrawn_template
                .clone()
        }
        Job::Home(h) => home(r, z, &z.langs.key("", &h.lang), &mut c),
        Job::ListIndex(ci, v) => {
            let pager = Pager {
                entries: &v.latest,
                number: 1,
                pages: v.archive.len(),
                newer: None,
                older: v.prev_url.as_deref(),
            };
            list(r, z, *ci, pager, &mut c)
        }
        Job::List(ci, v) => {
            let pager = Pager {
                entries: &v.entries,
                number: v.number,
                pages: z.sections[&z.coll_sections[*ci]]
                    .pages
                    .len()
                    .div_ceil(r.collections.list[*ci].page_size)
                    .max(v.number),
                newer: v.next_url.as_deref(),
                older: v.prev_url.as_deref(),
            };
            list(r, z, *ci, pager, &mut c)
        }
        Job::Term(v) => {
            let tax = &r.collections.taxonomies[v.taxonomy];
            let t = z.terms[v.taxonomy].iter().find(|t| t.name == v.name);
            c.insert("taxonomy", &super::taxonomy_value(tax));
            c.insert("term", &t.map_or(Value::Null, |t| z.term_value(t)));
            c.insert("paginator", &Value::Null);
            tax.template.clone()
        }
        Job::Terms(ti, _) => {
            let tax = &r.collections.taxonomies[*ti];
            let terms: Vec<Value> = z.terms[*ti].iter().map(|t| z.term_value(t)).collect();
            c.insert("taxonomy", &super::taxonomy_value(tax));
            c.insert("terms", &terms);
            tax.index_template.clone()
        }
        Job::Plain(v) => {
            c.insert("page", &z.plain.get(&v.url).cloned().unwrap_or(Value::Null));
            // A section of no pages of its own (Zola's archive, a docs root) is this page:
            // its template reads `section`, as Zola renders it.
            let dir = v.url.trim_matches('/');
            let section = match z.sections.contains_key(dir) {
                true => z.section_value(dir, false),
                false => section_of_plain(z, &z.plain.get(&v.url).cloned().unwrap_or(Value::Null)),
            };
            c.insert("section", &section);
            v.template.clone()
        }
        Job::NotFound => "404.html".to_string(),
        _ => return None,
    };
    // The functions' warnings (a page named before its instant) name the template and file.
    let _named = tracing::warn_span!("render", template = %template, file = %p.path).entered();
    Some(r.templates.render_in(&z.tera, &template, &c, &p.path))
}

/// What every page sees: `config`, `site`, `lang`, `current_path` and `current_url`.
fn base_context(r: &Renderer<'_>, z: &ZolaSite, p: &Planned) -> tera::Context {
    let file = p.path.as_str();
    let mut c = tera::Context::new();
    c.insert("config", &z.config);
    c.insert("site", &r.site);
    c.insert("lang", crate::render::lang_of(r, p));
    let path = current_path(file);
    let url = format!("{}{path}", r.base_url.trim_end_matches('/'));
    c.insert("current_url", &url);
    c.insert("current_path", &path);
    c
}

/// The URL a planned file answers at: `a/b/index.html` is `/a/b/`.
fn current_path(file: &str) -> String {
    match file.strip_suffix("index.html") {
        Some(dir) => format!("/{dir}"),
        None => format!("/{file}"),
    }
}

/// One page of a list: its entries (indices into the plan), its number, how many there are,
/// and its newer and older neighbours' URLs.
struct Pager<'a> {
    entries: &'a [u32],
    number: usize,
    pages: usize,
    newer: Option<&'a str>,
    older: Option<&'a str>,
}

/// `section` (the collection's, with every page) and `paginator` (this page's entries) of a
/// list page; no paginator where the collection is not paginated (see [`UNPAGINATED`]).
/// Returns the list's template.
fn list(
    r: &Renderer<'_>,
    z: &ZolaSite,
    ci: usize,
    pager: Pager<'_>,
    c: &mut tera::Context,
) -> String {
    let coll = &r.collections.list[ci];
    let dir = &z.coll_sections[ci];
    c.insert("section", &z.section_value(dir, false));
    let paged = coll.page_size < UNPAGINATED && coll.pagination == Pagination::NewestFirst;
    if !paged {
        c.insert("paginator", &Value::Null);
        return coll.list_template.clone();
    }
    let list_url = coll.list_url.clone().unwrap_or_default();
    let pages: Vec<&Value> = pager
        .entries
        .iter()
        .map(|&i| &z.pages[i as usize])
        .collect();
    let last = match pager.pages {
        0 | 1 => list_url.clone(),
        n => coll.list_page_url(n).unwrap_or_default(),
    };
    c.insert(
        "paginator",
        &json!({
            "paginate_by": coll.page_size, "pages": pages, "current_index": pager.number,
            "number_pagers": pager.pages.max(1), "first": list_url, "last": last,
            "previous": pager.newer, "next": pager.older,
            "base_url": format!("{list_url}page/"), "paginate_path": "page",
        }),
    );
    coll.list_template.clone()
}

/// The home page (of the language whose root section is `key`): the root section, and a
/// paginator over the root section's collection.
/// Returns its template.
fn home(r: &Renderer<'_>, z: &ZolaSite, key: &str, c: &mut tera::Context) -> String {
    home_of(r, z, key, c);
    "index.html".to_string()
}

fn home_of(r: &Renderer<'_>, z: &ZolaSite, key: &str, c: &mut tera::Context) {
    let Some(root) = z.sections.get(key) else {
        c.insert("section", &Value::Null);
        c.insert("paginator", &Value::Null);
        return;
    };
    c.insert("section", &z.section_value(key, false));
    let Some(ci) = root.coll else {
        c.insert("paginator", &Value::Null);
        return;
    };
    let coll = &r.collections.list[ci];
    if coll.page_size >= UNPAGINATED {
        c.insert("paginator", &Value::Null);
        return;
    }
    let first: Vec<&Value> = root
        .pages
        .iter()
        .take(coll.page_size)
        .map(|&i| &z.pages[i])
        .collect();
    let n = root.pages.len().div_ceil(coll.page_size).max(1);
    let older = (n > 1).then(|| coll.list_page_url(2)).flatten();
    c.insert(
        "paginator",
        &json!({
            "paginate_by": coll.page_size, "pages": first, "current_index": 1,
            "number_pagers": n, "first": section_url(key), "previous": null, "next": older,
        }),
    );
}

/// A plain page seen as the section it was (one of no pages and no subsections: Zola's
/// archive): its title, text and paths, no pages.
fn section_of_plain(z: &ZolaSite, page: &Value) -> Value {
    let mut s = page.clone();
    if let Value::Object(m) = &mut s {
        m.insert("pages".into(), json!([]));
        m.insert("subsections".into(), json!([]));
        let url = m
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or("/")
            .to_string();
        for (k, x) in super::paths_in(&z.langs, &url, true) {
            m.insert(k.into(), x);
        }
    }
    s
}
