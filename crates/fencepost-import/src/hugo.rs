//! A Hugo site read into a [`Plan`]: `hugo.toml`/`config.toml` (or `.yaml`), `content/`
//! (sections as collections, root pages as plain pages, leaf bundles with their files),
//! `static/`. See [`super`] for the steps and `docs/hugo.md` for the key mapping.

use super::plan::{files_under, Dialect, ImportError, Plan};
use super::section::Section;
use super::source::{Config, Page};
use fencepost_site::content::front_matter_table;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const CONFIGS: &[&str] = &[
    "hugo.toml",
    "hugo.yaml",
    "hugo.yml",
    "config.toml",
    "config.yaml",
    "config.yml",
];

fn read_config(src: &Path, plan: &mut Plan) -> Result<Config, ImportError> {
    let Some(name) = CONFIGS.iter().find(|c| src.join(c).is_file()) else {
        return Err(ImportError::NoConfig {
            path: src.to_path_buf(),
            what: "Hugo",
            expected: "hugo.toml, hugo.yaml, config.toml or config.yaml",
        });
    };
    let text = super::plan::read_config_file(src, name)?;
    let format = match name.ends_with(".toml") {
        true => fencepost_site::content::Format::Toml,
        false => fencepost_site::content::Format::Yaml,
    };
    let table = front_matter_table(&text, format).map_err(|e| ImportError::Source {
        path: src.join(name),
        line: Some(e.line.saturating_sub(1).max(1)),
        why: e.message,
    })?;
    let taxonomies = taxonomies_of(&table);
    let permalinks = permalinks_of(&table);
    let content_dir = content_dir(&table, name)?;
    let languages = super::languages::Languages::read(&table, Dialect::Hugo, name)?;
    report_config(name, &table, plan);
    let path_to_lower = table.get("disablePathToLower").and_then(|v| v.as_bool()) != Some(true);
    Ok(Config {
        file: name.to_string(),
        table,
        taxonomies,
        permalinks,
        dialect: Dialect::Hugo,
        content_dir,
        root_posts: String::new(),
        slugify_paths: false,
        path_to_lower,
        keep_templates: false,
        page_templates: BTreeMap::new(),
        shortcodes: Default::default(),
        languages,
    })
}

/// The default language's table (`[languages.en]`), if the site has languages.
fn default_language(table: &toml::Table) -> Option<(&str, &toml::Table)> {
    let lang = table
        .get("defaultContentLanguage")
        .and_then(|v| v.as_str())
        .unwrap_or("en");
    let t = table.get("languages")?.get(lang)?.as_table()?;
    Some((lang, t))
}

/// The taxonomies: the default language's own (`[languages.en.taxonomies]`), else the top
/// level's, else Hugo's defaults.
fn taxonomies_of(table: &toml::Table) -> Vec<String> {
    let of_language = default_language(table).and_then(|(_, l)| l.get("taxonomies"));
    match of_language
        .or_else(|| table.get("taxonomies"))
        .and_then(|t| t.as_table())
    {
        Some(t) => t
            .values()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        None => vec!["categories".to_string(), "tags".to_string()],
    }
}

/// `[permalinks]` by section (Hugo 0.120+ also writes `[permalinks.page] section = pattern`).
fn permalinks_of(table: &toml::Table) -> BTreeMap<String, String> {
    let mut permalinks = BTreeMap::new();
    let Some(p) = table.get("permalinks").and_then(|t| t.as_table()) else {
        return permalinks;
    };
    for (k, v) in p {
        match v {
            toml::Value::String(s) => {
                permalinks.insert(k.clone(), s.clone());
            }
            toml::Value::Table(t) if k == "page" => {
                for (s, v) in t {
                    if let Some(v) = v.as_str() {
                        permalinks.insert(s.clone(), v.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    permalinks
}

/// What the configuration says that the import does not carry over, reported.
fn report_config(name: &str, table: &toml::Table, plan: &mut Plan) {
    plan.report.skip(name, None, "feed URLs", "Hugo's RSS feeds were at …/index.xml; fencepost writes …/atom.xml and …/rss.xml beside each list: redirect the old URLs at your host, or tell subscribers");
    let menus = "menus are templates' business: write them into templates/base.html";
    if let Some((lang, l)) = default_language(table) {
        for key in ["menu", "menus"].into_iter().filter(|k| l.contains_key(*k)) {
            plan.report
                .skip(name, None, &format!("[languages.{lang}.{key}]"), menus);
        }
    }
    for (key, why) in [
        ("menu", menus),
        ("menus", menus),
        ("theme", "themes are Go templates, which cannot be ported: the starter templates were written instead"),
        ("outputFormats", "custom output formats are rendered by Go templates: fencepost writes HTML pages, Atom and RSS feeds, sitemaps and robots.txt; write another format as a template of a plain page, or a static file"),
        ("outputs", "the outputs a kind of page gets (JSON, AMP, a search index…) are Hugo's: each page here is HTML, each list has its Atom (and RSS) feed; the others were not made"),
        ("mediaTypes", "custom media types go with custom output formats, which were not imported"),
    ] {
        if table.contains_key(key) {
            plan.report.skip(name, None, &format!("[{key}]"), why);
        }
    }
}

/// The default language's content folder: its `[languages.X] contentDir`, else the top
/// level's `contentDir`, else `content` (the other languages' are read by `languages.rs`).
fn content_dir(table: &toml::Table, config_file: &str) -> Result<String, ImportError> {
    let str_of = |t: &toml::Table, k: &str| t.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let top = str_of(table, "contentDir").unwrap_or_else(|| "content".to_string());
    let default = str_of(table, "defaultContentLanguage").unwrap_or_else(|| "en".to_string());
    let Some(languages) = table.get("languages").and_then(|v| v.as_table()) else {
        return super::plan::inside_source(config_file, "contentDir", &top);
    };
    let dir_of = |lang: &str| {
        languages
            .get(lang)
            .and_then(|v| v.as_table())
            .and_then(|t| str_of(t, "contentDir"))
    };
    let dir = dir_of(&default).unwrap_or(top);
    super::plan::inside_source(config_file, "contentDir", &dir)
}

/// Reads the Hugo site at `src`.
pub fn plan(src: &Path, now: fencepost_core::clock::Instant) -> Result<Plan, ImportError> {
    let mut plan = Plan::default();
    let config = read_config(src, &mut plan)?;
    plan_with(src, config, plan, now)
}

/// Reads the content and static files of a site whose configuration is read.
pub(super) fn plan_with(
    src: &Path,
    mut config: Config,
    mut plan: Plan,
    now: fencepost_core::clock::Instant,
) -> Result<Plan, ImportError> {
    config.root_posts = root_posts(src, &config);
    let templates = match config.dialect {
        Dialect::Zola => super::zola_templates::read(src, &config, &mut plan)?,
        Dialect::Hugo => None,
    };
    config.keep_templates = templates.is_some();
    if config.dialect == Dialect::Zola {
        config.shortcodes = super::zola_templates::shortcodes(src, &config, &mut plan)?;
    }
    let collected = super::collect::collect(src, &config, &mut plan)?;
    let (mut pages, sections) = (collected.pages, collected.sections);
    let templates = templates.or_else(|| {
        let docs = super::docs_starter::choose(&config, &pages, &sections, &mut plan);
        config.keep_templates |= docs.is_some();
        docs
    });
    if config.keep_templates {
        config.page_templates = page_templates(&sections, &pages);
    }
    super::section::unrendered_pages(&sections, &mut pages);
    super::section::redirect(&sections, &mut pages, &mut plan);
    plan.report.terms_folded = super::page::fold_terms(&config.taxonomies, &mut pages);
    super::page::report_term_case(&config, &pages, &mut plan);
    let with_pages: BTreeSet<String> = pages.iter().filter_map(|p| p.section.clone()).collect();
    let urls: BTreeMap<String, String> = pages
        .iter()
        .map(|p| {
            (
                p.rel
                    .strip_prefix(&format!("{}/", config.content_dir))
                    .unwrap_or(&p.rel)
                    .to_string(),
                p.new_url.clone(),
            )
        })
        .collect();
    let spelling = fencepost_site::content::claims::page_spelling;
    plan.urls_taken
        .extend(pages.iter().map(|p| spelling(&p.new_url)));
    for p in &pages {
        super::page::write(src, &config, p, &urls, &mut plan, now)?;
    }
    let all = (&sections, &collected.translated_sections);
    let texts = super::section::write_texts(&config, all, &with_pages, &urls, &mut plan);
    let mut templates = templates;
    if let Some(t) = templates
        .as_mut()
        .filter(|_| config.dialect == Dialect::Hugo)
    {
        super::docs_starter::landing(&config, &sections, &urls, t, &mut plan);
    }
    let markdown = super::settings::markdown(&config, &mut plan);
    let collections = super::site_config::Collections {
        names: &with_pages,
        sections: &sections,
        texts: &texts,
    };
    if let Some(t) = &templates {
        let needed = super::site_config::zola_templates_needed(&config, &collections);
        super::zola_templates::write(t, &needed, &mut plan);
    }
    let menus = super::docs_starter::menus_toml(&config, &plan);
    plan.put(
        "fencepost.toml",
        super::site_config::text(&config, &collections, &pages) + &markdown + &menus,
    );
    plan.report.collections = with_pages
        .iter()
        .map(|s| super::source::collection_name(s))
        .collect();
    plan.report.taxonomies = config.taxonomies.clone();
    super::assets::copy_site_files(src, &config, &mut plan)?;
    Ok(plan)
}

/// The name of the collection for Zola's dated root pages: `posts`, else `blog`, else
/// `articles`, whichever no section of the site has taken.
fn root_posts(src: &Path, config: &Config) -> String {
    let sections: BTreeSet<String> = files_under(src, &config.content_dir, &mut Plan::default())
        .into_iter()
        .filter_map(|(rel, _)| rel.split_once('/').map(|(s, _)| s.to_string()))
        .collect();
    ["posts", "blog", "articles"]
        .into_iter()
        .find(|n| !sections.contains(*n))
        .unwrap_or("root-posts")
        .to_string()
}

/// With a Zola site's templates kept: the template each section's pages render with (see
/// `zola_templates::page_template`).
fn page_templates(
    sections: &BTreeMap<String, Section>,
    pages: &[Page],
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let with_pages: BTreeSet<&String> = pages.iter().filter_map(|p| p.section.as_ref()).collect();
    for s in with_pages {
        let named: Vec<Option<&str>> = pages
            .iter()
            .filter(|p| p.section.as_ref() == Some(s))
            .map(|p| p.table.get("template").and_then(|v| v.as_str()))
            .collect();
        let own = sections.get(s).and_then(|x| x.page_template.as_deref());
        out.insert(s.clone(), super::zola_templates::page_template(own, &named));
    }
    out
}
