//! A Zola site's own templates, kept: Zola writes Tera, as fencepost does, so the site's
//! `templates/` (over its theme's, `themes/<theme>/templates/`) are copied as they are and
//! the new site renders them with Zola's variables (`[build] templates = "zola"`, see
//! `build/zola.rs`). Each collection renders its pages with its section's `page_template`
//! (or the one `template` all its pages name, or `page.html`) and its list with the section's
//! `template` (or `section.html`; the root section's with `index.html`); each taxonomy with
//! `<name>/single.html` and `<name>/list.html`. A template fencepost needs that the site
//! lacks (Zola has built-in ones) is written as a plain one and reported.
//!
//! Never all or nothing: every Zola function a page template may call runs here (issue 81
//! brought the last, `resize_image`); a template whose call fails for a page (a file that is
//! not there) costs only that page, which the build holds, named. Zola's other
//! functions and filters (`load_data`, `get_hash`, `base64_encode`, `regex_replace`, …) run
//! (`build/templates/files.rs`). Shortcode templates (`templates/shortcodes/`) are kept where
//! they can render here ([`shortcodes`]; `fencepost_site::shortcodes` renders them at
//! publish), whether or not the page templates are; the calls of the others are converted or
//! reported page by page.

use super::plan::{files_under, read_text, ImportError, Plan};
use super::source::Config;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The templates to keep (name under `templates/` → text), or None (each reason reported)
/// when the site has none or one of them cannot run.
pub(super) fn read(
    src: &Path,
    config: &Config,
    plan: &mut Plan,
) -> Result<Option<BTreeMap<String, String>>, ImportError> {
    let mut out = BTreeMap::new();
    for dir in &template_dirs(config) {
        if !src.join(dir).is_dir() {
            continue;
        }
        for (rel, path) in files_under(src, dir, plan) {
            if rel.starts_with("shortcodes/") || !rel.ends_with(".html") {
                continue;
            }
            out.insert(rel, (format!("{dir}/"), read_text(&path)?));
        }
    }
    if out.is_empty() {
        return Ok(None);
    }
    for (rel, (dir, text)) in &out {
        for (n, line) in text.lines().enumerate() {
            if line.contains("get_env(") {
                let why = "it reads an environment variable: fencepost lets a template read only what [security] getenv in fencepost.toml allows (none by default) and never a credential; allow what it needs, or it gets its default";
                plan.report
                    .skip(&format!("{dir}{rel}"), Some(n + 1), "get_env", why);
            }
        }
    }
    Ok(Some(
        out.into_iter()
            .map(|(rel, (_, text))| (rel, text))
            .collect(),
    ))
}

/// The site's shortcode templates (`shortcodes/*.html`, `*.md`; the site's over its
/// theme's) that render here, written to `templates/shortcodes/`; each that cannot is
/// reported with why, and its calls are converted or reported page by page. Their names.
pub(super) fn shortcodes(
    src: &Path,
    config: &Config,
    plan: &mut Plan,
) -> Result<BTreeSet<String>, ImportError> {
    let mut found: BTreeMap<String, (String, String)> = BTreeMap::new();
    for dir in template_dirs(config) {
        let dir = format!("{dir}/shortcodes");
        for (rel, path) in files_under(src, &dir, plan) {
            if rel.contains('/') || !(rel.ends_with(".html") || rel.ends_with(".md")) {
                continue;
            }
            found.insert(rel, (format!("{dir}/"), read_text(&path)?));
        }
    }
    let mut kept = BTreeSet::new();
    for (file, (dir, text)) in found {
        if let Some(why) = fencepost_site::shortcodes::cannot_render(&file, &text) {
            let why = format!("{why}: not kept, and each call of it is reported where it is");
            plan.report
                .skip(&format!("{dir}{file}"), None, "shortcode template", &why);
            continue;
        }
        plan.put(&format!("templates/shortcodes/{file}"), text.as_bytes());
        let name = file.rsplit_once('.').map_or(file.as_str(), |(n, _)| n);
        kept.insert(name.to_string());
    }
    Ok(kept)
}

/// The folders templates are read from, the theme's first (the site's win).
fn template_dirs(config: &Config) -> Vec<String> {
    let mut dirs = Vec::new();
    if let Some(theme) = config.table.get("theme").and_then(|v| v.as_str()) {
        dirs.push(format!("themes/{theme}/templates"));
    }
    dirs.push("templates".to_string());
    dirs
}

/// What a template fencepost needs is, for its plain stand-in.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Page,
    Section,
    Home,
    Term,
    Terms,
    NotFound,
}

/// Writes the kept templates, and a plain one for each of `needed` the site lacks (reported).
pub(super) fn write(
    templates: &BTreeMap<String, String>,
    needed: &[(String, Kind)],
    plan: &mut Plan,
) {
    for (rel, text) in templates {
        plan.put(&format!("templates/{rel}"), text.as_bytes());
    }
    let mut done = Vec::new();
    for (name, kind) in needed {
        if templates.contains_key(name) || done.contains(name) {
            continue;
        }
        done.push(name.clone());
        plan.put(&format!("templates/{name}"), stand_in(*kind));
        let why = "the site has no such template (Zola has a built-in one): a plain one was written; style it as the others";
        plan.report
            .skip(&format!("templates/{name}"), None, "template", why);
    }
}

/// A plain template with Zola's variables.
fn stand_in(kind: Kind) -> String {
    let body = match kind {
        Kind::Page => "<h1>{{ page.title }}</h1>\n{{ page.content | safe }}",
        Kind::Section | Kind::Home => "<h1>{{ section.title }}</h1>\n{{ section.content | safe }}\n<ul>{% if paginator %}{% set shown = paginator.pages %}{% else %}{% set shown = section.pages %}{% endif %}{% for p in shown %}\n<li><a href=\"{{ p.permalink | safe }}\">{{ p.title }}</a></li>{% endfor %}\n</ul>\n{% if paginator.next %}<a href=\"{{ paginator.next | safe }}\">Older</a>{% endif %}{% if paginator.previous %} <a href=\"{{ paginator.previous | safe }}\">Newer</a>{% endif %}",
        Kind::Term => "<h1>{{ term.name }}</h1>\n<ul>{% for p in term.pages %}\n<li><a href=\"{{ p.permalink | safe }}\">{{ p.title }}</a></li>{% endfor %}\n</ul>",
        Kind::Terms => "<h1>{{ taxonomy.name }}</h1>\n<ul>{% for t in terms %}\n<li><a href=\"{{ t.permalink | safe }}\">{{ t.name }}</a> ({{ t.page_count }})</li>{% endfor %}\n</ul>",
        Kind::NotFound => "<h1>Not found</h1>\n<p><a href=\"/\">{{ config.title }}</a></p>",
    };
    format!("<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>{{{{ config.title }}}}</title></head>\n<body>\n{body}\n</body>\n</html>\n")
}

/// The template a section's pages render with: its `page_template`, else the one
/// `template` every page of it names, else `page.html`.
pub(super) fn page_template(
    section_page_template: Option<&str>,
    pages_templates: &[Option<&str>],
) -> String {
    if let Some(t) = section_page_template {
        return t.to_string();
    }
    match pages_templates.first() {
        Some(Some(t)) if pages_templates.iter().all(|x| x == &Some(*t)) => t.to_string(),
        _ => "page.html".to_string(),
    }
}
