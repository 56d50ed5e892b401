//! A Hugo site read into a [`Plan`]: `hugo.toml`/`config.toml` (or `.yaml`), `content/`
//! (sections as collections, root pages as plain pages, leaf bundles with their files),
//! `static/`. See [`super`] for the steps and `docs/hugo.md` for the key mapping.

use super::front::{id_of, instant, url_path, ymd};
use super::plan::{files_under, read_text, Dialect, ImportError, Plan};
use super::section::Section;
use super::source::{patterns, Config, Page};
use fencepost_site::content::{front_matter_table, split_front_matter};
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

/// The folders of headless bundles (`headless = true` in their `index.md`): pages that are
/// never rendered, nor their files.
pub(super) fn headless_bundles(
    src: &Path,
    content_dir: &str,
    plan: &mut Plan,
) -> Result<Vec<String>, ImportError> {
    let mut out = Vec::new();
    for (rel, path) in files_under(src, content_dir, plan) {
        if !rel.ends_with("/index.md") {
            continue;
        }
        let text = read_text(&path)?;
        let file = format!("{content_dir}/{rel}");
        let headless = split_front_matter(&text)
            .ok()
            .and_then(|s| front_matter_table(s.front_matter?, s.format).ok())
            .and_then(|t| t.get("headless").and_then(|v| v.as_bool()))
            == Some(true);
        if headless {
            plan.report.skip(
                &file,
                None,
                "headless bundle",
                "a headless bundle has no page of its own: its files were not imported",
            );
            out.push(rel.trim_end_matches("index.md").to_string());
        }
    }
    Ok(out)
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

/// A page's collection (none: a plain page) and its name, from where it is and what it says:
/// - `SECTION/a.md`, `SECTION/a/index.md` (a bundle): item `a` of `SECTION`;
/// - `a.md`, `a/index.md` at the root: plain page `a`, except a dated one in a Zola site,
///   whose root section is a blog: item `a` of the root posts' collection, at `/a/` still;
/// - a page in a section with no date and a one-segment `url`/`path` (`path = "about"`, as
///   a Zola section with `render = false` holds): plain page `about`, at the URL it had.
pub(super) fn section_of(
    config: &Config,
    parts: &[&str],
    bundle: bool,
    table: &toml::Table,
) -> (Option<String>, String) {
    let stem = match bundle {
        true => parts[parts.len() - 2].to_string(),
        false => parts[parts.len() - 1].trim_end_matches(".md").to_string(),
    };
    let dated = ["publishDate", "publishdate", "date"]
        .iter()
        .any(|k| table.contains_key(*k));
    let at_root = parts.len() == 1 || (bundle && parts.len() == 2);
    if at_root {
        let blog = config.dialect == Dialect::Zola && dated;
        return (blog.then(|| config.root_posts.clone()), stem);
    }
    let one_segment = table
        .get("url")
        .and_then(|v| v.as_str())
        .map(|u| u.trim_matches('/'))
        .filter(|u| !u.is_empty() && !u.contains('/') && !u.ends_with(".html"))
        // `.` and `..` name no page (they would make a hidden `content/.md`).
        .filter(|u| u.chars().any(|c| c.is_ascii_alphanumeric()));
    // The page's section is its folder (a bundle's: the folder's parent), nested or not.
    let folders = parts.len() - if bundle { 2 } else { 1 };
    match (dated, one_segment) {
        (false, Some(name)) => (None, name.to_string()),
        _ => (Some(parts[..folders].join("/")), stem),
    }
}

pub(super) fn read_front(file: &str, text: &str, plan: &mut Plan) -> Option<(toml::Table, String)> {
    if text.trim_start().starts_with('{') {
        plan.report.skip(
            file,
            Some(1),
            "JSON front matter",
            "only TOML (+++) and YAML (---) front matter is read: convert it to one of them",
        );
        return None;
    }
    // Zola reads front matter after blank lines (its pattern opens with `^[[:space:]]*`),
    // and Hugo's page lexer skips leading whitespace too: so do we, counting them for the lines we report.
    let lead = text.len() - text.trim_start().len();
    let (text, skipped) = match text[lead..].starts_with("+++") || text[lead..].starts_with("---") {
        true => (&text[lead..], text[..lead].matches('\n').count()),
        false => (text, 0),
    };
    let split = match split_front_matter(text) {
        Ok(s) => s,
        Err(_) => {
            plan.report.skip(
                file,
                Some(skipped + 1),
                "front matter",
                &format!("it is opened on line {} and never closed", skipped + 1),
            );
            return None;
        }
    };
    let table = match split.front_matter {
        None => toml::Table::new(),
        Some(fm) => match front_matter_table(fm, split.format) {
            Ok(t) => t,
            Err(e) => {
                plan.report
                    .skip(file, Some(e.line + skipped), "front matter", &e.message);
                return None;
            }
        },
    };
    Some((table, split.body.to_string()))
}

/// The name the generator put in a page's URL: its slug or file name, which Zola slugifies
/// (`zola.386` is `zola-386`).
fn url_name(config: &Config, slug: Option<&str>, stem: &str) -> String {
    let name = slug.map_or_else(|| cased(config, stem), str::to_string);
    match config.slugify_paths {
        true => Some(slug::slugify(&name))
            .filter(|s| !s.is_empty())
            .unwrap_or(name),
        false => name,
    }
}

/// A URL (or a part) as the generator wrote it: lower case unless it kept the case.
fn cased(config: &Config, s: &str) -> String {
    match config.path_to_lower {
        true => s.to_lowercase(),
        false => s.to_string(),
    }
}

/// Where a page goes: its id, its new URL and the URL it had.
#[allow(clippy::too_many_arguments)]
pub(super) fn place(
    config: &Config,
    file: &str,
    section: Option<String>,
    bundle: Option<String>,
    stem: String,
    table: toml::Table,
    body: String,
    ids: &mut BTreeSet<(Option<String>, String)>,
    plan: &mut Plan,
) -> Page {
    let title = table
        .get("title")
        .and_then(|v| v.as_str())
        .unwrap_or(&stem)
        .to_string();
    let slug = table
        .get("slug")
        .and_then(|v| v.as_str())
        .map(str::to_string);
    let at = ["publishDate", "publishdate", "date"]
        .iter()
        .find_map(|k| table.get(*k).and_then(instant));
    let mut id = match config.slugify_paths {
        true => Some(slug::slugify(slug.as_deref().unwrap_or(&stem)))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| id_of(&stem, false)),
        false => id_of(slug.as_deref().unwrap_or(&stem), !config.path_to_lower),
    };
    if !ids.insert((section.clone(), id.clone())) {
        let mut n = 2;
        while !ids.insert((section.clone(), format!("{id}-{n}"))) {
            n += 1;
        }
        plan.report.skip(file, None, "id", &format!("{id:?} is another page's id in its section: this one is {id}-{n} (its old URL is an alias)"));
        id = format!("{id}-{n}");
    }
    let (old_pattern, new_pattern) = patterns(config, section.as_deref());
    let fill = |pattern: &str, slug_value: &str| {
        let (y, m, d) = at.as_ref().map(ymd).unwrap_or_default();
        let mut u = pattern.to_string();
        for (k, v) in [
            (":year", y.as_str()),
            (":month", m.as_str()),
            (":day", d.as_str()),
            (":slugorfilename", slug_value),
            (":slugorcontentbasename", slug_value),
            (":slug", slug_value),
            (":title", &slug::slugify(&title)),
            (":filename", &cased(config, &stem)),
            (":contentbasename", &cased(config, &stem)),
            (":sections", section.as_deref().unwrap_or("")),
            (":section", section.as_deref().unwrap_or("")),
        ] {
            u = u.replace(k, v);
        }
        url_path(&u.replace("//", "/"))
    };
    let old_url = match table.get("url").and_then(|v| v.as_str()) {
        Some(u) => url_path(u),
        None => cased(
            config,
            &fill(&old_pattern, &url_name(config, slug.as_deref(), &stem)),
        ),
    };
    let new_url = fill(&new_pattern, &id);
    Page {
        rel: file.to_string(),
        section,
        bundle,
        table,
        body,
        old_url,
        new_url,
        id,
        at,
        body_line: 1,
        lang: None,
    }
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
