//! Every page of the source's content folders that can be imported (the others are
//! reported), and what each section's `_index.md` says: the default language's folder, and
//! each language's own (Hugo's `contentDir`); a file named for a language (`page.es.md`,
//! `_index.es.md`) is that language's version of the page it is named for.

use super::place::{headless_bundles, place, read_front, section_of};
use super::plan::{files_under, Dialect, ImportError, Plan};
use super::section::Section;
use super::source::{Config, Page};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Pages already placed: (language, section) and id, so each language's ids are its own
/// (a translation keeps its original's).
type Ids = BTreeMap<Option<String>, BTreeSet<(Option<String>, String)>>;

/// The pages, and the sections' texts by section (the default language's) and by
/// (section, language) for the others' `_index.<code>.md`.
pub(super) struct Collected {
    pub(super) pages: Vec<Page>,
    pub(super) sections: BTreeMap<String, Section>,
    pub(super) translated_sections: BTreeMap<(String, String), Section>,
}

/// Reads every content folder of the source.
pub(super) fn collect(
    src: &Path,
    config: &Config,
    plan: &mut Plan,
) -> Result<Collected, ImportError> {
    let mut out = Collected {
        pages: Vec::new(),
        sections: BTreeMap::new(),
        translated_sections: BTreeMap::new(),
    };
    let mut ids = Ids::new();
    for (dir, lang) in config.languages.folders(&config.content_dir) {
        collect_dir(src, config, (dir, lang), &mut ids, &mut out, plan)?;
    }
    Ok(out)
}

/// One content folder, its pages in language `lang` unless a file's name says another.
fn collect_dir(
    src: &Path,
    config: &Config,
    (dir, lang): (&str, Option<&str>),
    ids: &mut Ids,
    out: &mut Collected,
    plan: &mut Plan,
) -> Result<(), ImportError> {
    let headless = headless_bundles(src, dir, plan)?;
    for (rel, path) in files_under(src, dir, plan) {
        let file = format!("{dir}/{rel}");
        if headless.iter().any(|h| rel.starts_with(h.as_str())) || !rel.ends_with(".md") {
            continue; // Bundle files go with their page; others are reported below.
        }
        let Some((lang, owned)) = language_of(config, &rel, lang) else {
            plan.report.skip(&file, None, "translation", "its name names no language of the site's configuration ([languages]): not imported");
            continue;
        };
        let parts: Vec<&str> = owned.split('/').collect();
        let Some(text) = read_utf8(&file, path, plan)? else {
            continue;
        };
        let Some((mut table, body)) = read_front(&file, &text, plan) else {
            continue;
        };
        if config.dialect == Dialect::Zola {
            super::dialect::normalize(&mut table);
        }
        // A translation's own URL names its language (`path = "/ar/about"`): without it, the
        // rest is the page's place in its language; one that does not keeps its URL as old.
        let own_url = lang.and_then(|code| unprefixed_url(&mut table, code));
        let body_line = text[..text.len() - body.len()].matches('\n').count() + 1;
        let name = parts[parts.len() - 1];
        if name == "_index.md" {
            let root = parts.len() == 1;
            let s = super::section::read(config, (&file, body_line), &table, &body, root, plan);
            let section = match root {
                true => config.root_posts.clone(),
                false => parts[..parts.len() - 1].join("/"),
            };
            match lang {
                Some(code) => out
                    .translated_sections
                    .insert((section, code.to_string()), s),
                None => out.sections.insert(section, s),
            };
            continue;
        }
        let bundle = (name == "index.md" && parts.len() > 1)
            .then(|| format!("{dir}/{}", parts[..parts.len() - 1].join("/")));
        let (section, stem) = section_of(config, &parts, bundle.is_some(), &table);
        if let Some(u) = table
            .get("url")
            .and_then(|v| v.as_str())
            .filter(|u| !u.chars().any(|c| c.is_ascii_alphanumeric()))
        {
            let why =
                format!("url = {u:?} names no page of its own: the page keeps its section's URL");
            plan.report.skip(&file, None, "url", &why);
        }
        let ids = ids.entry(lang.map(str::to_string)).or_default();
        let mut page = place(config, &file, section, bundle, stem, table, body, ids, plan);
        page.body_line = body_line;
        if let Some(code) = lang {
            let prefix = super::languages::Languages::prefix(Some(code));
            if own_url != Some(false) {
                page.old_url = format!("{prefix}{}", page.old_url);
            }
            page.new_url = format!("{prefix}{}", page.new_url);
            page.lang = Some(code.to_string());
        }
        out.pages.push(page);
    }
    Ok(())
}

/// The language of the file `rel` of a folder of language `lang`, and its path as its
/// original's (`blog/a.es.md` is `es`, `blog/a.md`); None for a name with a language suffix
/// the site has no language for.
fn language_of<'a>(
    config: &'a Config,
    rel: &str,
    lang: Option<&'a str>,
) -> Option<(Option<&'a str>, String)> {
    let (dir, last) = rel.rsplit_once('/').map_or(("", rel), |(d, l)| (d, l));
    let joined = |name: &str| match dir {
        "" => name.to_string(),
        d => format!("{d}/{name}"),
    };
    match config.languages.of_name(last) {
        Some((code, name)) => Some((Some(code), joined(&name))),
        None if last.matches('.').count() > 1 => None,
        None => Some((lang, rel.to_string())),
    }
}

/// A translation's `url`, taken out of its language's prefix: Some(true) when it had one,
/// Some(false) when it names a URL outside its language's (kept as it is), None without one.
fn unprefixed_url(table: &mut toml::Table, code: &str) -> Option<bool> {
    let toml::Value::String(u) = table.get_mut("url")? else {
        return None;
    };
    let bare = u.trim_start_matches('/');
    let Some(rest) = bare.strip_prefix(code).map(str::to_string) else {
        return Some(false);
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return Some(false);
    }
    *u = match rest.trim_matches('/') {
        "" => "/".to_string(),
        r => format!("/{r}"),
    };
    Some(true)
}

/// A page's text; a page that is not UTF-8 is reported (None), and the rest is imported.
fn read_utf8(
    file: &str,
    path: std::path::PathBuf,
    plan: &mut Plan,
) -> Result<Option<String>, ImportError> {
    match std::fs::read(&path).map(String::from_utf8) {
        Ok(Ok(text)) => Ok(Some(text)),
        Ok(Err(e)) => {
            let at = e.utf8_error().valid_up_to();
            let line = e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() + 1;
            plan.report.skip(file, Some(line), "page", &format!("not UTF-8 text (byte {at} is not): save it as UTF-8 and import it again, or copy it by hand"));
            Ok(None)
        }
        Err(source) => Err(ImportError::Read { path, source }),
    }
}
