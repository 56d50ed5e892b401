//! Zola's template functions over one [`ZolaSite`]: `get_url`, `get_section`, `get_page`,
//! `get_taxonomy_url` and `get_taxonomy`. Each answers from the public site only. A page or a
//! term that is not public — embargoed, a draft, or no such thing: the answer never tells them
//! apart — is absent (`get_url`: an empty link; `get_page`, `get_taxonomy_url`: null), with a
//! warning, never an error: a template naming a post before its instant neither reveals it nor
//! holds the page that names it (it used to fail every build until the instant). A missing
//! section or taxonomy — the site's configuration, public as it is — stays an error (Zola's
//! behaviour), or null where Zola takes `required = false`.

use super::{split_path, ZolaSite, ZolaTerm};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

type Args = HashMap<String, Value>;

/// A function needing the site, which is made after the functions are registered (the site
/// holds the templates they are registered on): filled in by [`register`].
#[derive(Clone)]
struct Site(Arc<OnceLock<std::sync::Weak<ZolaSite>>>);

impl Site {
    fn get(&self) -> tera::Result<Arc<ZolaSite>> {
        self.0
            .get()
            .and_then(|w| w.upgrade())
            .ok_or_else(|| tera::Error::msg("the Zola site is not ready"))
    }
}

fn text<'a>(args: &'a Args, name: &str, f: &str) -> tera::Result<&'a str> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| tera::Error::msg(format!("{f} needs {name}=\"…\"")))
}

fn flag(args: &Args, name: &str, default: bool) -> bool {
    args.get(name).and_then(Value::as_bool).unwrap_or(default)
}

/// Registers the functions on `tera` and makes the site that holds it.
pub(super) fn register(mut tera: tera::Tera, mut site: ZolaSite) -> Arc<ZolaSite> {
    let cell = Site(Arc::new(OnceLock::new()));
    let s = cell.clone();
    tera.register_function("get_url", move |a: &Args| get_url(&*s.get()?, a));
    let s = cell.clone();
    tera.register_function("get_section", move |a: &Args| {
        let path = text(a, "path", "get_section")?;
        let z = s.get()?;
        let (dir, _) = z.key_of(path, a.get("lang").and_then(Value::as_str));
        match z.sections.contains_key(&dir) {
            true => Ok(z.section_value(&dir, flag(a, "metadata_only", false))),
            false => Err(tera::Error::msg(format!(
                "get_section: there is no section {path:?}"
            ))),
        }
    });
    let s = cell.clone();
    tera.register_function("get_page", move |a: &Args| {
        let path = text(a, "path", "get_page")?;
        Ok(s.get()?.page_at(path).unwrap_or_else(|| {
            tracing::warn!(
                path,
                "get_page: no public page at this path (not due yet, a draft, or none): absent"
            );
            Value::Null
        }))
    });
    let s = cell.clone();
    tera.register_function("get_taxonomy_url", move |a: &Args| {
        let (kind, name) = (
            text(a, "kind", "get_taxonomy_url")?,
            text(a, "name", "get_taxonomy_url")?,
        );
        let z = s.get()?;
        let slug = fencepost_config::taxonomies::term_slug(name);
        let lang = a.get("lang").and_then(Value::as_str);
        let found = z
            .taxonomy(kind, lang)
            .and_then(|t| z.terms[t].iter().find(|x| x.slug == slug));
        match (found, z.taxonomy(kind, lang)) {
            (Some(t), _) => Ok(json!(t.url)),
            (None, Some(_)) => {
                tracing::warn!(
                    kind,
                    term = name,
                    "get_taxonomy_url: no public page has this term (yet): absent"
                );
                Ok(Value::Null)
            }
            (None, None) if !flag(a, "required", true) => Ok(Value::Null),
            (None, None) => Err(tera::Error::msg(format!(
                "get_taxonomy_url: no taxonomy {kind:?}"
            ))),
        }
    });
    let s = cell.clone();
    tera.register_function("get_taxonomy", move |a: &Args| {
        let kind = text(a, "kind", "get_taxonomy")?;
        let z = s.get()?;
        let lang = a.get("lang").and_then(Value::as_str);
        match (z.taxonomy(kind, lang), flag(a, "required", true)) {
            (Some(t), _) => Ok(z.taxonomy_value(t)),
            (None, false) => Ok(Value::Null),
            (None, true) => Err(tera::Error::msg(format!(
                "get_taxonomy: no taxonomy {kind:?}"
            ))),
        }
    });
    site.tera = tera;
    let site = Arc::new(site);
    let _ = cell.0.set(Arc::downgrade(&site));
    site
}

/// `get_url(path=…, trailing_slash=false)`: an `@/` path's page or section URL, else the
/// site path (a full URL as it is). An `@/` page that is not public (embargoed, a draft, or
/// no page at all) gives an empty string and a warning, never its URL: a template linking a
/// page before its instant neither reveals it nor stops the site's build.
fn get_url(z: &ZolaSite, a: &Args) -> tera::Result<Value> {
    let path = text(a, "path", "get_url")?;
    let lang = a.get("lang").and_then(Value::as_str);
    if path.starts_with("@/") {
        let (dir, name) = z.key_of(path, lang);
        let url = match name {
            Some(_) => z.page_in(path, lang).and_then(|p| p.get("path").cloned()),
            None => z
                .sections
                .contains_key(&dir)
                .then(|| json!(section_url(&dir))),
        };
        return Ok(url.unwrap_or_else(|| {
            tracing::warn!(
                path,
                "get_url: no public page or section at this path: an empty link"
            );
            json!("")
        }));
    }
    if path.contains("://") {
        return Ok(json!(path));
    }
    // Another language's path is under its prefix (`get_url(path="blog", lang="ca")`).
    // A path already under it (a translated section's `path`) is left as it is.
    let prefix = lang.map_or(String::new(), |l| z.langs.key("", l));
    let bare = path.trim_start_matches('/');
    let under = bare == prefix || bare.starts_with(&format!("{prefix}/"));
    let prefix = match prefix.is_empty() || under {
        true => String::new(),
        false => format!("/{prefix}"),
    };
    let mut url = format!("{prefix}/{}", path.trim_start_matches('/'));
    // As Zola: a trailing slash only when asked for (`get_url(path="blog/") ~ "/"` is
    // `/blog/`, not `/blog//`).
    match flag(a, "trailing_slash", false) {
        true if !url.ends_with('/') => url.push('/'),
        false if url.len() > 1 => url = url.trim_end_matches('/').to_string(),
        _ => {}
    }
    Ok(json!(url))
}

pub(super) fn section_url(dir: &str) -> String {
    match dir {
        "" => "/".to_string(),
        d => format!("/{d}/"),
    }
}

impl ZolaSite {
    /// The index of taxonomy `kind` in language `lang` (the default language's without one).
    fn taxonomy(&self, kind: &str, lang: Option<&str>) -> Option<usize> {
        let lang = lang.unwrap_or(&self.langs.default);
        (self.taxonomies.iter()).position(|(k, l, _)| k == kind && l == lang)
    }

    /// The section key and page name a Zola path names (`blog/_index.ca.md` is `ca/blog`),
    /// in language `lang` when given.
    pub(super) fn key_of(&self, path: &str, lang: Option<&str>) -> (String, Option<String>) {
        let (plain, own) = self.langs.strip(path);
        let (dir, name) = split_path(&plain);
        let code = lang.or(own).unwrap_or(&self.langs.default);
        (self.langs.key(&dir, code), name)
    }

    /// A term as Zola's templates see it.
    pub(super) fn term_value(&self, t: &ZolaTerm) -> Value {
        let pages: Vec<&Value> = t.pages.iter().map(|&i| &self.pages[i]).collect();
        json!({ "name": t.name, "slug": t.slug, "permalink": t.url, "path": t.url, "pages": pages, "page_count": pages.len() })
    }

    /// `get_taxonomy`'s answer: the taxonomy and its terms.
    pub(super) fn taxonomy_value(&self, ti: usize) -> Value {
        let items: Vec<Value> = self.terms[ti].iter().map(|t| self.term_value(t)).collect();
        json!({ "kind": self.taxonomies[ti].2, "items": items })
    }

    /// The page `path` (`blog/a.md`, `@/blog/a/index.md`, `about.md`) names.
    pub(super) fn page_at(&self, path: &str) -> Option<Value> {
        self.page_in(path, None)
    }

    /// [`Self::page_at`] in language `lang` when given (else the path's own).
    pub(super) fn page_in(&self, path: &str, lang: Option<&str>) -> Option<Value> {
        let (dir, name) = self.key_of(path, lang);
        let name = name?;
        if dir.is_empty() || self.langs.is_root(&dir) {
            let prefix = match dir.is_empty() {
                true => String::new(),
                false => format!("/{dir}"),
            };
            if let Some(p) = self.plain.get(&format!("{prefix}/{name}/")) {
                return Some(p.clone());
            }
        }
        let s = self.sections.get(&dir)?;
        s.pages
            .iter()
            .map(|&i| &self.pages[i])
            .find(|p| p["slug"] == name.as_str())
            .cloned()
    }

    /// A section as Zola's templates see it (without its pages when `metadata_only`).
    pub(super) fn section_value(&self, dir: &str, metadata_only: bool) -> Value {
        let s = &self.sections[dir];
        let pages: Vec<&Value> = match metadata_only {
            true => Vec::new(),
            false => s.pages.iter().map(|&i| &self.pages[i]).collect(),
        };
        let url = section_url(dir);
        let mut v = json!({
            "title": s.title, "content": s.content, "permalink": url, "path": url,
            "pages": pages, "subsections": s.subsections, "description": null,
            "extra": if s.extra.is_object() { s.extra.clone() } else { json!({}) },
            "toc": [], "assets": [], "translations": self.section_translations(dir),
            "lang": self.langs.split(dir).0,
        });
        if let Value::Object(m) = &mut v {
            for (k, x) in super::paths_in(&self.langs, &url, true) {
                m.insert(k.into(), x);
            }
        }
        v
    }

    /// Every language's version of section `dir` the site has (itself included).
    fn section_translations(&self, dir: &str) -> Value {
        if self.langs.others.is_empty() {
            return json!([]);
        }
        let rest = self.langs.split(dir).1;
        let codes =
            std::iter::once(&self.langs.default).chain(self.langs.others.iter().map(|(c, _)| c));
        let list: Vec<Value> = codes
            .filter_map(|code| {
                let key = self.langs.key(rest, code);
                let s = self.sections.get(&key)?;
                let url = section_url(&key);
                Some(json!({ "lang": code, "permalink": url, "path": url, "title": s.title }))
            })
            .collect();
        Value::Array(list)
    }
}
