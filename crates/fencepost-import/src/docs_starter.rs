//! The docs starter: what documentation themes (Docsy, Hextra, Book, Learn, …) give a
//! documentation site, for a Hugo site whose Go templates cannot be kept. A sidebar tree of
//! its sections and pages in weight order (collapsible, open on the way to the current page),
//! a table of contents per page (its headings), previous/next in book order across sections,
//! and a landing page listing the chapters — written as Zola-style templates (`[build]
//! templates = "zola"`), which have `get_section`, `page.toc` and `page.book_prev`/`book_next`
//! (`build/zola.rs`). Chosen over fencepost's own template variables because those give an
//! item page no view of the other collections; rejected: porting a Go theme.
//!
//! `import hugo` picks it for documentation-shaped sites: mostly undated pages, in nested
//! sections or ordered by weight ([`is_docs`]).

use super::section::Section;
use super::source::Page;
use std::collections::BTreeMap;

const TEMPLATES: &[(&str, &str)] = &[
    (
        "base.html",
        include_str!("../../../starters/docs/templates/base.html"),
    ),
    (
        "macros.html",
        include_str!("../../../starters/docs/templates/macros.html"),
    ),
    (
        "index.html",
        include_str!("../../../starters/docs/templates/index.html"),
    ),
    (
        "section.html",
        include_str!("../../../starters/docs/templates/section.html"),
    ),
    (
        "page.html",
        include_str!("../../../starters/docs/templates/page.html"),
    ),
    (
        "404.html",
        include_str!("../../../starters/docs/templates/404.html"),
    ),
];

/// The starter's stylesheet, written to `static/docs.css`.
pub(super) const CSS: &str = include_str!("../../../starters/docs/static/docs.css");

/// Whether the site reads as documentation: at least three pages, four in five undated, and
/// either nested sections or half its pages weighted.
pub(super) fn is_docs(pages: &[Page], sections: &BTreeMap<String, Section>) -> bool {
    let n = pages.len();
    let undated = pages.iter().filter(|p| p.at.is_none()).count();
    let weighted = pages
        .iter()
        .filter(|p| {
            p.table
                .get("weight")
                .and_then(|w| w.as_integer())
                .is_some_and(|w| w != 0)
        })
        .count();
    let nested = sections.keys().any(|s| s.contains('/'))
        || pages
            .iter()
            .any(|p| p.section.as_deref().is_some_and(|s| s.contains('/')));
    n >= 3 && undated * 5 >= n * 4 && (nested || weighted * 2 >= n)
}

/// For a documentation-shaped Hugo site, the docs starter: its templates (to keep as a
/// Zola site's are kept) and its stylesheets put in the plan; `None` for any other site.
pub(super) fn choose(
    config: &super::source::Config,
    pages: &[Page],
    sections: &BTreeMap<String, Section>,
    plan: &mut super::plan::Plan,
) -> Option<BTreeMap<String, String>> {
    let hugo = config.dialect == super::plan::Dialect::Hugo;
    if !hugo || !is_docs(pages, sections) {
        return None;
    }
    plan.report.starter = "docs".into();
    // Its menus are kept, as `[extra.menu]` (see `menus_toml`): say so where they are named.
    for u in plan.report.not_converted.iter_mut() {
        if u.what.starts_with("[menu") || u.what.ends_with(".menu]") || u.what.ends_with(".menus]")
        {
            u.why = "kept as [extra.menu] in fencepost.toml: the docs starter shows main and home entries in its header, before and after entries around its sidebar (a pageRef as the URL it names; identifiers, parents and params are not kept)".into();
        }
    }
    let has = |p: &super::plan::Plan, f: &str| p.files.iter().any(|(n, _)| n == f);
    if !has(plan, "static/docs.css") {
        plan.put("static/docs.css", CSS);
    }
    if !has(plan, "static/highlight.css") {
        plan.put(
            "static/highlight.css",
            fencepost_site::markdown::highlight_css(),
        );
    }
    Some(templates(&config.taxonomies))
}

/// The root section's text (Hugo's `content/_index.md`, the docs landing page) put into the
/// starter's `index.html`, rendered, where a theme's landing layout put it: fencepost has no
/// page of its own for a root text. Its shortcodes are converted as a page's are; the
/// report's line for it says where it went.
pub(super) fn landing(
    config: &super::source::Config,
    sections: &BTreeMap<String, Section>,
    urls: &BTreeMap<String, String>,
    templates: &mut BTreeMap<String, String>,
    plan: &mut super::plan::Plan,
) {
    let Some(root) = sections
        .values()
        .find(|s| s.root && !s.body.trim().is_empty())
    else {
        return;
    };
    let at = (root.file.as_str(), root.body_line);
    let body = super::page::convert_body(config, at, &root.body, urls, plan);
    let unsafe_html = ["markup", "goldmark", "renderer", "unsafe"]
        .iter()
        .try_fold(&toml::Value::Table(config.table.clone()), |v, k| v.get(*k))
        .and_then(|v| v.as_bool())
        == Some(true);
    let opts = fencepost_config::MarkdownConfig {
        unsafe_html,
        github_alerts: true,
        definition_lists: true,
        heading_attributes: true,
        ..Default::default()
    };
    let html = fencepost_site::markdown::to_html(&body, &opts);
    if let Some(index) = templates.get_mut("index.html") {
        // A text with a heading of its own names the site itself: no second title.
        let title = "<h1>{{ section.title }}</h1>\n";
        if html.contains("<h1") {
            *index = index.replace(title, "");
        }
        *index = index.replace(
            "{{ section.content | safe }}",
            &format!("{{% raw %}}{html}{{% endraw %}}"),
        );
    }
    plan.report
        .not_converted
        .retain(|u| !(u.file == root.file && u.what == "section text"));
    let why = "the root section's text is the landing page: written, rendered, into templates/index.html (edit it there)";
    plan.report.skip(&root.file, None, "section text", why);
}

/// Hugo's menus (`[[menu.main]]`, `[[menu.home]]`, `[[menu.before]]`, `[[menu.after]]`,
/// the default language's too) as `[extra.menu]` of the new site: each entry's `name` and
/// `url` (a `pageRef` made the site path it names), by weight. The docs starter shows
/// `main` and `home` in its header, `before` and `after` around its sidebar tree. Empty when
/// the site has none, or another starter than the docs one.
pub(super) fn menus_toml(config: &super::source::Config, plan: &super::plan::Plan) -> String {
    if plan.report.starter != "docs" {
        return String::new();
    }
    let menus = config
        .table
        .get("menu")
        .or_else(|| config.table.get("menus"));
    let Some(toml::Value::Table(menus)) = menus else {
        return String::new();
    };
    let mut out = toml::Table::new();
    for (name, entries) in menus {
        let Some(entries) = entries.as_array() else {
            continue;
        };
        let mut kept: Vec<(i64, toml::Table)> = entries
            .iter()
            .filter_map(|e| {
                let e = e.as_table()?;
                let label = e.get("name")?.as_str()?;
                let url = match (
                    e.get("url").and_then(|v| v.as_str()),
                    e.get("pageRef").and_then(|v| v.as_str()),
                ) {
                    (Some(u), _) => u.to_string(),
                    (None, Some(r)) => super::front::url_path(r.trim_end_matches(".md")),
                    _ => return None,
                };
                let mut entry = toml::Table::new();
                entry.insert("name".into(), toml::Value::String(label.to_string()));
                entry.insert("url".into(), toml::Value::String(url));
                Some((
                    e.get("weight").and_then(|w| w.as_integer()).unwrap_or(0),
                    entry,
                ))
            })
            .collect();
        kept.sort_by_key(|(w, _)| *w);
        let list = kept
            .into_iter()
            .map(|(_, t)| toml::Value::Table(t))
            .collect();
        out.insert(name.clone(), toml::Value::Array(list));
    }
    let mut extra = toml::Table::new();
    extra.insert("menu".into(), toml::Value::Table(out));
    let mut top = toml::Table::new();
    top.insert("extra".into(), toml::Value::Table(extra));
    format!(
        "\n# Hugo's [menu], for the docs starter's header and sidebar.\n{}",
        toml::to_string(&top).unwrap_or_default()
    )
}

/// The starter's templates, with a term and a terms page for each of `taxonomies`.
fn templates(taxonomies: &[String]) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = TEMPLATES
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    for tx in taxonomies {
        out.insert(format!("{tx}/single.html"), TERM.to_string());
        out.insert(format!("{tx}/list.html"), TERMS.to_string());
    }
    out
}

const TERM: &str = "{% extends \"base.html\" %}\n{% block title %}{{ term.name }} · {{ config.title }}{% endblock title %}\n{% block content %}<h1>{{ term.name }}</h1>\n<ul>{% for p in term.pages %}\n<li><a href=\"{{ p.permalink | safe }}\">{{ p.title }}</a></li>{% endfor %}\n</ul>{% endblock content %}\n";

const TERMS: &str = "{% extends \"base.html\" %}\n{% block content %}<h1>{{ taxonomy.name }}</h1>\n<ul>{% for t in terms %}\n<li><a href=\"{{ t.permalink | safe }}\">{{ t.name }}</a> ({{ t.page_count }})</li>{% endfor %}\n</ul>{% endblock content %}\n";
