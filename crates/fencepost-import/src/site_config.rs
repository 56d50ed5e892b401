//! `fencepost.toml` for an imported site.

use super::front::url_path;
use super::plan::Dialect;
use super::section::Section;
use super::source::{collection_name, new_pattern, patterns, Config, Page};
use super::zola_templates::Kind;
use std::collections::{BTreeMap, BTreeSet};

/// The collections an import writes: one per section with pages (`names`), each with what
/// its `_index.md` said (`sections`), and those given a `list_text` (`texts`).
pub(super) struct Collections<'a> {
    pub(super) names: &'a BTreeSet<String>,
    pub(super) sections: &'a BTreeMap<String, Section>,
    pub(super) texts: &'a BTreeSet<String>,
}

/// `fencepost.toml` for the site: its title, base URL, author, feeds and page size, a
/// collection per section (its page size, order and text as the section had them; numbered
/// newest first, as Hugo and Zola number list pages), the taxonomies.
pub(super) fn text(config: &Config, colls: &Collections<'_>, pages: &[Page]) -> String {
    let t = &config.table;
    let get = |k: &str| t.get(k).and_then(|v| v.as_str());
    let title = get("title").unwrap_or("My site");
    let base = get("baseURL")
        .or(get("baseurl"))
        .or(get("base_url"))
        .unwrap_or("http://localhost:8080/");
    let mut out = format!(
        "# Imported by `fencepost import`. Every key is optional (see the docs).\ntitle = {}\nbase_url = {}\n",
        toml::Value::from(title),
        toml::Value::from(url_path(base).trim_start_matches('/').to_string()),
    );
    if let Some(author) = author(t) {
        out.push_str(&format!("author = {}\n", toml::Value::from(author)));
    }
    let feeds = match rss(config) {
        true => "[\"atom\", \"rss\"]",
        false => "[\"atom\"]",
    };
    out.push_str(&format!("feeds = {feeds}\n"));
    out.push_str(&config.languages.top_keys());
    if let Some(tz) = get("timeZone").or(get("timezone")) {
        out.push_str(&format!(
            "\n[publish]\ntimezone = {}\n",
            toml::Value::from(tz)
        ));
    }
    out.push_str("\n[ledger]\npath = \".fencepost/ledger.sqlite\"\n");
    out.push_str(&build_table(config));
    out.push_str(&search_table(config));
    for s in colls.names {
        let (old, _) = patterns(config, Some(s));
        let url = new_pattern(&old, s)
            .replace(":slug", "{id}")
            .replace(":year", "{year}")
            .replace(":month", "{month}")
            .replace(":day", "{day}");
        let used: Vec<&String> = config
            .taxonomies
            .iter()
            .filter(|tx| {
                pages
                    .iter()
                    .any(|p| p.section.as_deref() == Some(s) && p.table.contains_key(*tx))
            })
            .collect();
        let last = s.rsplit('/').next().unwrap_or(s);
        let (page_template, list_template) = templates_of(config, colls, s);
        out.push_str(&format!(
            "\n[collections.{}]\nurl = {}\ntemplate = {}\nlist_template = {}\nlist_url = {}\ntitle = {}\nid = \"slug\"\ndue = \"publish_at\"\nfeed = true\ntaxonomies = {}\n",
            collection_name(s),
            toml::Value::from(url),
            toml::Value::from(page_template),
            toml::Value::from(list_template),
            toml::Value::from(list_url(colls, s)),
            toml::Value::from(title_of(colls, s).unwrap_or_else(|| capitalised(last))),
            toml::Value::from(used.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
        ));
        out.push_str(&collection_extras(config, colls, s, pages));
    }
    for tx in &config.taxonomies {
        let (single, list) = taxonomy_templates(config, tx);
        out.push_str(&format!(
            "\n[taxonomies.{tx}]\nurl = \"/{tx}/{{term}}/\"\ntemplate = {}\nindex_url = \"/{tx}/\"\nindex_template = {}\nfeed = true\n",
            toml::Value::from(single),
            toml::Value::from(list),
        ));
    }
    out.push_str(&extra_table(config));
    out.push_str(&config.languages.tables(config.dialect));
    out
}

/// `[build]`: the page size, and Zola's templates where they are kept.
fn build_table(config: &Config) -> String {
    let mut build = String::new();
    if let Some(n) = page_size(&config.table) {
        build.push_str(&format!("page_size = {n}\n"));
    }
    if config.keep_templates {
        build.push_str("templates = \"zola\"\n");
    }
    if compiles_sass(config) {
        build.push_str("compile_sass = true\n");
    }
    match build.is_empty() {
        true => build,
        false => format!("\n[build]\n{build}"),
    }
}

/// `[search]`: Zola's `build_search_index` and its `[search]` options, kept as they are (the
/// build writes Zola's own index, for the theme's search script).
fn search_table(config: &Config) -> String {
    let on = config
        .table
        .get("build_search_index")
        .and_then(toml::Value::as_bool);
    if config.dialect != Dialect::Zola || on != Some(true) {
        return String::new();
    }
    let mut out = String::from("\n[search]\nbuild_search_index = true\n");
    if let Some(toml::Value::Table(search)) = config.table.get("search") {
        let keys = [
            "index_format",
            "include_title",
            "include_description",
            "include_path",
            "include_content",
            "truncate_content_length",
        ];
        for key in keys {
            if let Some(v) = search.get(key) {
                out.push_str(&format!("{key} = {v}\n"));
            }
        }
    }
    out
}

/// Whether the source compiles its `sass/` (Zola's `compile_sass = true`): the site then
/// keeps the folder and compiles it the same way (`[build] compile_sass`).
pub(super) fn compiles_sass(config: &Config) -> bool {
    config.dialect == Dialect::Zola
        && config
            .table
            .get("compile_sass")
            .and_then(toml::Value::as_bool)
            == Some(true)
}

/// Zola's `[extra]`, which its kept templates read as `config.extra`, and its
/// `[translations]` (the default language's strings), which they read with `trans`.
fn extra_table(config: &Config) -> String {
    let mut table = toml::Table::new();
    if let Some(toml::Value::Table(extra)) = config.table.get("extra") {
        if config.keep_templates && !extra.is_empty() {
            table.insert("extra".into(), toml::Value::Table(extra.clone()));
        }
    }
    if let Some(toml::Value::Table(t)) = config.table.get("translations") {
        let strings: toml::Table = t
            .iter()
            .filter(|(_, v)| v.is_str())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if config.dialect == Dialect::Zola && !strings.is_empty() {
            table.insert("translations".into(), toml::Value::Table(strings));
        }
    }
    match table.is_empty() {
        true => String::new(),
        false => format!("\n{}", toml::to_string(&table).unwrap_or_default()),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The site's author: Hugo's `author` (a name, or a table with `name`), else
/// `params.author`; Zola's `author`.
fn author(t: &toml::Table) -> Option<String> {
    let name = |v: &toml::Value| match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Table(t) => t.get("name").and_then(|n| n.as_str()).map(str::to_string),
        _ => None,
    };
    t.get("author")
        .and_then(name)
        .or_else(|| t.get("params")?.get("author").and_then(name))
        .filter(|a| !a.trim().is_empty())
}

/// Whether the source made RSS feeds: Hugo does by default (at `…/index.xml`); Zola when a
/// feed file name says `rss`.
fn rss(config: &Config) -> bool {
    let t = &config.table;
    if config.dialect == Dialect::Hugo {
        let disabled = t.get("disableKinds").and_then(|v| v.as_array());
        return !disabled.is_some_and(|d| {
            d.iter()
                .any(|k| k.as_str() == Some("rss") || k.as_str() == Some("RSS"))
        });
    }
    let names: Vec<&str> = match (t.get("feed_filenames"), t.get("feed_filename")) {
        (Some(toml::Value::Array(a)), _) => a.iter().filter_map(|v| v.as_str()).collect(),
        (_, Some(toml::Value::String(s))) => vec![s.as_str()],
        _ => Vec::new(),
    };
    names.iter().any(|n| n.contains("rss"))
}

/// Entries per list page: Hugo's `pagination.pagerSize` (0.128+) or `paginate`.
fn page_size(t: &toml::Table) -> Option<i64> {
    t.get("pagination")
        .and_then(|p| p.get("pagerSize"))
        .or_else(|| t.get("paginate"))
        .and_then(|v| v.as_integer())
        .filter(|n| (1..=100_000).contains(n))
}

/// A collection's keys beyond its URLs: its page size, `sort_by = "weight"` (Zola's section
/// asked for it; in Hugo, which orders by weight first, a page of it has a weight), its
/// `list_text`, and `newest_first` numbering.
fn collection_extras(config: &Config, colls: &Collections<'_>, s: &str, pages: &[Page]) -> String {
    let section = colls.sections.get(s);
    let mut out = String::from("pagination = \"newest_first\"\n");
    match section.and_then(|x| x.page_size) {
        Some(n) => out.push_str(&format!("page_size = {n}\n")),
        // Zola's templates get no paginator for a section without `paginate_by`.
        None if config.keep_templates => out.push_str(&format!(
            "page_size = {}\n",
            fencepost_config::TemplateDialect::ZOLA_UNPAGINATED
        )),
        None => {}
    }
    let weighted = match config.dialect {
        Dialect::Zola => section.is_some_and(|x| x.by_weight),
        Dialect::Hugo => pages
            .iter()
            .filter(|p| p.section.as_deref() == Some(s))
            .any(|p| {
                p.table
                    .get("weight")
                    .and_then(|w| w.as_integer())
                    .is_some_and(|w| w != 0)
            }),
    };
    if weighted {
        out.push_str("sort_by = \"weight\"\n");
    }
    // The section's own weight: its place among its siblings in navigation.
    if let Some(w) = section.map(|x| x.weight).filter(|w| *w != 0) {
        out.push_str(&format!("weight = {w}\n"));
    }
    if colls.texts.contains(s) {
        out.push_str("list_text = \"_index.md\"\n");
    }
    out
}

/// A collection's list URL: its section's, or none where the section redirects to a page (its
/// URL is an alias of that page: no list page may take it).
fn list_url(colls: &Collections<'_>, s: &str) -> String {
    match colls
        .sections
        .get(s)
        .is_some_and(|x| x.redirects() && !x.root)
    {
        true => String::new(),
        false => format!("/{s}/"),
    }
}

/// The title a section's `_index.md` gives it.
fn title_of(colls: &Collections<'_>, s: &str) -> Option<String> {
    colls.sections.get(s)?.title.clone()
}

/// A collection's item and list templates: the starter's, or (Zola's kept) its section's
/// (see `zola_templates.rs`).
fn templates_of(config: &Config, colls: &Collections<'_>, s: &str) -> (String, String) {
    if !config.keep_templates {
        return ("post.html".into(), "list.html".into());
    }
    let page = config
        .page_templates
        .get(s)
        .cloned()
        .unwrap_or_else(|| "page.html".into());
    let list = match s == config.root_posts {
        true => "index.html".to_string(),
        false => colls
            .sections
            .get(s)
            .and_then(|x| x.template.clone())
            .unwrap_or_else(|| "section.html".into()),
    };
    (page, list)
}

/// A taxonomy's term and index templates: the starter's, or Zola's `<name>/single.html` and
/// `<name>/list.html`.
fn taxonomy_templates(config: &Config, tx: &str) -> (String, String) {
    match config.keep_templates {
        true => (format!("{tx}/single.html"), format!("{tx}/list.html")),
        false => ("term.html".into(), "terms.html".into()),
    }
}

/// Every template the new site needs, with what it renders (for a plain stand-in where the
/// Zola site has none).
pub(super) fn zola_templates_needed(
    config: &Config,
    colls: &Collections<'_>,
) -> Vec<(String, Kind)> {
    let mut out = vec![
        ("index.html".to_string(), Kind::Home),
        ("page.html".to_string(), Kind::Page),
        ("404.html".to_string(), Kind::NotFound),
    ];
    for s in colls.names {
        let (page, list) = templates_of(config, colls, s);
        out.push((page, Kind::Page));
        if !list_url(colls, s).is_empty() {
            out.push((list, Kind::Section));
        }
    }
    for tx in &config.taxonomies {
        let (single, list) = taxonomy_templates(config, tx);
        out.push((single, Kind::Term));
        out.push((list, Kind::Terms));
    }
    out
}
