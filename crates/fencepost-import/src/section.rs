//! A source section's own page (`_index.md`, Hugo's and Zola's alike) and what becomes of it.
//!
//! - Its `title` names the collection; `paginate_by` sizes its pages; Zola's
//!   `sort_by = "weight"` is the collection's `sort_by` (Hugo orders by weight whenever a page
//!   has one: see `site_config.rs`).
//! - Its own text is the collection's `list_text` (`content/<collection>/_index.md`), shown on
//!   the list URL, shortcodes and internal links converted as a page's are.
//! - `redirect_to` (Zola): the section's URL becomes an alias of the page it names, so it
//!   answers 301 there as it did; a section that redirects has no list page of its own.
//! - A section with no page of its own (Zola's `/documentation/`, which only holds
//!   subsections) keeps its URL as a plain page with its title and text where the URL has one
//!   segment; deeper ones cannot be plain pages and are reported.
//!
//! Everything else it says is reported key by key. The root section's text (Zola's home page)
//! is reported: the starter home page lists every collection.

use super::front::item_text;
use super::page::convert_body;
use super::plan::Plan;
use super::source::{collection_name, Config, Page};
use std::collections::{BTreeMap, BTreeSet};

/// What a section's `_index.md` says that the import keeps.
pub(super) struct Section {
    /// The `_index.md` file, source-relative.
    pub(super) file: String,
    pub(super) title: Option<String>,
    pub(super) page_size: Option<usize>,
    /// Zola's `sort_by = "weight"`.
    pub(super) by_weight: bool,
    /// Its own `weight`: its collection's place in navigation (`weight` in fencepost.toml).
    pub(super) weight: i64,
    /// What else it says, for kept Zola templates (`section.extra`).
    pub(super) extra: toml::Table,
    /// Zola's `redirect_to`, as a path of the site (`/documentation/overview/`).
    pub(super) redirect_to: Option<String>,
    /// The root section's (its text is the home page's).
    pub(super) root: bool,
    /// Zola's `render = false`: the section has no page of its own.
    pub(super) unrendered: bool,
    /// Its `template` and `page_template`, where the site's templates are kept.
    pub(super) template: Option<String>,
    pub(super) page_template: Option<String>,
    pub(super) body: String,
    pub(super) body_line: usize,
}

impl Section {
    /// The section's list page is taken by a redirect to one of its pages.
    pub(super) fn redirects(&self) -> bool {
        self.redirect_to.is_some()
    }
}

/// Reads a section's `_index.md` (`root`: the content folder's own), reporting key by key
/// what its collection cannot keep.
pub(super) fn read(
    config: &Config,
    (file, body_line): (&str, usize),
    table: &toml::Table,
    body: &str,
    root: bool,
    plan: &mut Plan,
) -> Section {
    let kept = |k: &str, v: &toml::Value| {
        matches!(
            k,
            "title" | "paginate_by" | "draft" | "redirect_to" | "render" | "weight"
        ) || (k == "sort_by" && matches!(v.as_str(), Some("date") | Some("weight")))
            || (config.keep_templates && matches!(k, "template" | "page_template"))
    };
    let text_of = |k: &str| table.get(k).and_then(|v| v.as_str()).map(str::to_string);
    // With Zola's templates kept, what else the section says is its `[extra]`: they read it.
    let mut extra = toml::Table::new();
    for (k, v) in table.iter().filter(|(k, v)| !kept(k, v)) {
        if config.keep_templates
            && config.dialect == super::plan::Dialect::Zola
            && !matches!(k.as_str(), "aliases" | "sort_by" | "insert_anchor_links")
        {
            extra.insert(k.clone(), v.clone());
            continue;
        }
        let why = match k.as_str() {
            "aliases" => "a section's list page keeps its URL; its aliases were not imported".to_string(),
            "sort_by" => format!("a collection is listed by date or by weight: sort_by = {v} is not kept (it is listed newest first)"),
            "template" | "page_template" => "templates are not ported: the starter templates render this section".to_string(),
            _ => "a section's front matter has no counterpart in a collection: not kept".to_string(),
        };
        plan.report.skip(file, None, k, &why);
    }
    if root && !body.trim().is_empty() && !config.keep_templates {
        plan.report.skip(file, None, "section text", "the root section's text is the source's home page: the starter home page lists every collection instead (put the text in templates/index.html)");
    }
    let redirect_to = table
        .get("redirect_to")
        .and_then(|v| v.as_str())
        .map(|t| site_path(config, t));
    Section {
        file: file.to_string(),
        title: table
            .get("title")
            .and_then(|v| v.as_str())
            .map(str::to_string),
        page_size: table
            .get("paginate_by")
            .and_then(|v| v.as_integer())
            .filter(|n| *n > 0)
            .map(|n| n as usize),
        by_weight: table.get("sort_by").and_then(|v| v.as_str()) == Some("weight"),
        weight: table
            .get("weight")
            .and_then(|v| v.as_integer())
            .unwrap_or(0),
        redirect_to,
        root,
        unrendered: table.get("render").and_then(|v| v.as_bool()) == Some(false),
        template: text_of("template"),
        extra,
        page_template: text_of("page_template"),
        body: body.to_string(),
        body_line,
    }
}

/// A `redirect_to` as a path of the site: relative to its root, or a URL under its base URL;
/// another site's URL stays as written.
fn site_path(config: &Config, to: &str) -> String {
    let base = ["base_url", "baseURL", "baseurl"]
        .iter()
        .find_map(|k| config.table.get(*k).and_then(|v| v.as_str()))
        .unwrap_or_default()
        .trim_end_matches('/');
    let path = match to.strip_prefix(base).filter(|_| !base.is_empty()) {
        Some(rest) => rest,
        None if to.contains("://") => return to.to_string(),
        None => to,
    };
    let path = path.trim_matches('/');
    match path.is_empty() {
        true => "/".to_string(),
        false => format!("/{path}/"),
    }
}

/// A page of a section Zola never renders (`render = false`: a folder of pages such as
/// `pages/about/`) whose `path` is one segment (`path = "privacy"`) is a plain page at that
/// URL, dated or not: its section has no list here either (no new `/pages/`), and it keeps
/// its date. (An undated one is placed so already: `place::section_of`.)
pub(super) fn unrendered_pages(sections: &BTreeMap<String, Section>, pages: &mut [Page]) {
    for p in pages.iter_mut() {
        let unrendered = (p.section.as_ref())
            .and_then(|s| sections.get(s))
            .is_some_and(|s| s.unrendered);
        let one = p.old_url.trim_matches('/');
        let plain = !one.is_empty()
            && !one.contains('/')
            && !one.ends_with(".html")
            && fencepost_site::content::item::is_slug(one);
        if unrendered && plain && p.table.contains_key("url") {
            p.section = None;
            p.id = one.to_string();
            p.new_url = p.old_url.clone();
        }
    }
}

/// Each section's `redirect_to` made an alias of the page it names (before the pages are
/// written), or reported where it names none.
pub(super) fn redirect(sections: &BTreeMap<String, Section>, pages: &mut [Page], plan: &mut Plan) {
    let spelling = fencepost_site::content::claims::page_spelling;
    for (name, s) in sections.iter().filter(|(_, s)| !s.root) {
        let Some(to) = final_target(sections, s) else {
            continue;
        };
        let target = pages
            .iter_mut()
            .find(|p| spelling(&p.old_url) == spelling(to));
        let Some(page) = target else {
            let why = format!("the section redirects to {to}, which is no page the import wrote: add the redirect from /{name}/ at your host");
            plan.report.skip(&s.file, None, "redirect_to", &why);
            continue;
        };
        let from = toml::Value::String(format!("/{name}/"));
        match page.table.get_mut("aliases") {
            Some(toml::Value::Array(a)) => a.push(from),
            Some(toml::Value::String(one)) => {
                let one = toml::Value::String(one.clone());
                page.table
                    .insert("aliases".into(), toml::Value::Array(vec![one, from]));
            }
            _ => {
                page.table
                    .insert("aliases".into(), toml::Value::Array(vec![from]));
            }
        }
    }
}

/// Where a section's `redirect_to` leads: through sections that redirect in turn (Zola's
/// `/documentation/` to `/documentation/getting-started/`, which redirects to its overview
/// page), at most as many steps as there are sections.
fn final_target<'a>(sections: &'a BTreeMap<String, Section>, s: &'a Section) -> Option<&'a String> {
    let mut to = s.redirect_to.as_ref()?;
    for _ in 0..sections.len() {
        let name = to.trim_matches('/');
        match sections
            .get(name)
            .and_then(|next| next.redirect_to.as_ref())
        {
            Some(next) => to = next,
            None => break,
        }
    }
    Some(to)
}

/// Each section's text: its collection's `list_text` where it has pages, a plain page at its
/// URL where it has none and the URL has one segment; else reported. Returns the sections
/// whose collection has a `list_text`.
pub(super) fn write_texts(
    config: &Config,
    (sections, translated): (
        &BTreeMap<String, Section>,
        &BTreeMap<(String, String), Section>,
    ),
    with_pages: &BTreeSet<String>,
    urls: &BTreeMap<String, String>,
    plan: &mut Plan,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    root_text(config, sections, urls, plan);
    let written = |s: &&Section| !s.root && !s.redirects() && !s.unrendered;
    for (name, s) in sections.iter().filter(|(_, s)| written(s)) {
        let has_text = !s.body.trim().is_empty();
        let own = with_pages.contains(name);
        if !own && name.contains('/') {
            let why = format!("a section without pages of its own: /{name}/ is not a page of the new site (a nested section's URL cannot be a plain page); link its subsections instead");
            plan.report.skip(&s.file, None, "section", &why);
            continue;
        }
        if own && !has_text && s.title.is_none() && s.extra.is_empty() {
            continue;
        }
        // A section of no pages of its own is a plain page: with Zola's templates kept, it
        // renders with the section's own template, which reads `section`.
        let text = section_text(config, s, !own, urls, plan);
        match own {
            true => {
                plan.put(
                    &format!("content/{}/_index.md", collection_name(name)),
                    text,
                );
                out.insert(name.clone());
            }
            false => {
                plan.put(&format!("content/{name}.md"), text);
                plan.report.plain_pages += 1;
            }
        }
    }
    write_translated(config, translated, &out, urls, plan);
    out
}

/// The other languages' section texts (`_index.<code>.md`): beside the original's list text
/// where its collection has one (`content/<collection>/_index.<code>.md`), the root's as
/// `content/_index.<code>.md` (Zola mode); any other is reported.
fn write_translated(
    config: &Config,
    translated: &BTreeMap<(String, String), Section>,
    texts: &BTreeSet<String>,
    urls: &BTreeMap<String, String>,
    plan: &mut Plan,
) {
    for ((name, code), s) in translated {
        let plain = format!("content/{name}.md");
        let as_plain = plan.files.iter().any(|(p, _)| *p == plain);
        let dst = match (s.root, texts.contains(name)) {
            (true, _) if config.keep_templates && config.dialect == super::plan::Dialect::Zola => {
                format!("content/_index.{code}.md")
            }
            (false, true) => format!("content/{}/_index.{code}.md", collection_name(name)),
            // The original is a plain page (a section of no pages): so is its translation.
            (false, false) if as_plain => format!("content/{name}.{code}.md"),
            _ => {
                let why = "a section text whose default-language original was not imported as a list text: its list page shows the default language's title";
                plan.report.skip(&s.file, None, "section", why);
                continue;
            }
        };
        let text = section_text(config, s, as_plain, urls, plan);
        plan.put(&dst, text);
    }
}

/// A section's text as the new site's file: its title, its template (`with_template`, where
/// Zola's templates are kept), its `[extra]`, its body converted.
fn section_text(
    config: &Config,
    s: &Section,
    with_template: bool,
    urls: &BTreeMap<String, String>,
    plan: &mut Plan,
) -> String {
    let body = convert_body(config, (&s.file, s.body_line), &s.body, urls, plan);
    let mut front = toml::Table::new();
    if let Some(t) = &s.title {
        front.insert("title".into(), toml::Value::String(t.clone()));
    }
    if let Some(t) = s
        .template
        .as_ref()
        .filter(|_| with_template && config.keep_templates)
    {
        front.insert("template".into(), toml::Value::String(t.clone()));
    }
    if !s.extra.is_empty() {
        front.insert("extra".into(), toml::Value::Table(s.extra.clone()));
    }
    item_text(&front, &body)
}

/// With Zola's templates kept, the root section's `_index.md` — its title, text and `[extra]`,
/// which the theme's home page reads as `section` — as `content/_index.md`, which Zola mode
/// reads as the root section's.
fn root_text(
    config: &Config,
    sections: &BTreeMap<String, Section>,
    urls: &BTreeMap<String, String>,
    plan: &mut Plan,
) {
    let Some(root) = sections.values().find(|s| s.root) else {
        return;
    };
    let has = !root.body.trim().is_empty() || !root.extra.is_empty() || root.title.is_some();
    if !config.keep_templates || config.dialect != super::plan::Dialect::Zola || !has {
        return;
    }
    let body = convert_body(config, (&root.file, root.body_line), &root.body, urls, plan);
    let mut front = toml::Table::new();
    if let Some(t) = &root.title {
        front.insert("title".into(), toml::Value::String(t.clone()));
    }
    if !root.extra.is_empty() {
        front.insert("extra".into(), toml::Value::Table(root.extra.clone()));
    }
    plan.put("content/_index.md", item_text(&front, &body));
}
