//! Where a source page goes: which pages a folder holds (headless bundles left out), its
//! front matter read as either generator writes it, its collection and name, its id, and
//! the URL it had against the one it gets.

use super::front::{id_of, instant, url_path, ymd};
use super::plan::{files_under, read_text, Dialect, Plan};
use super::source::{patterns, Config, Page};
use super::ImportError;
use fencepost_site::content::{front_matter_table, split_front_matter};
use std::collections::BTreeSet;
use std::path::Path;

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
