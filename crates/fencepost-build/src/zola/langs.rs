//! Languages as Zola's templates see them (docs/languages.md): a translated section or page
//! is named by its file (`blog/_index.ca.md`, `blog/a/index.ca.md`), lives at its language's
//! prefix (`/ca/blog/`), and each language has a root section of its own (`_index.ca.md`,
//! at `/ca/`). Here sections are keyed by their URL path (`ca/blog`, `ca` for a language's
//! root), and this is the one place that turns Zola's file names into those keys and back.

use crate::render::Renderer;
use fencepost_config::collections::Collections;
use serde_json::{json, Map, Value};

/// The site's languages: the default's code, and each other's code and URL prefix (without
/// its slashes: `ca`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Langs {
    pub(crate) default: String,
    pub(crate) others: Vec<(String, String)>,
}

impl Langs {
    pub(crate) fn of(collections: &Collections) -> Langs {
        let l = &collections.languages;
        Langs {
            default: l.default_code().to_string(),
            others: (l.others().iter())
                .map(|x| (x.code.clone(), x.url_prefix.trim_matches('/').to_string()))
                .collect(),
        }
    }

    /// The language of a section key or URL path (no outer slashes), and the rest of it:
    /// `ca/blog` is (`ca`, `blog`), `blog` (the default, `blog`).
    pub(crate) fn split<'a>(&'a self, key: &'a str) -> (&'a str, &'a str) {
        for (code, prefix) in &self.others {
            if key == prefix {
                return (code, "");
            }
            if let Some(rest) = key
                .strip_prefix(prefix.as_str())
                .and_then(|r| r.strip_prefix('/'))
            {
                return (code, rest);
            }
        }
        (&self.default, key)
    }

    /// The key of the section `dir` (a default-language path) in language `code`.
    pub(crate) fn key(&self, dir: &str, code: &str) -> String {
        match self.others.iter().find(|(c, _)| c == code) {
            Some((_, prefix)) if dir.is_empty() => prefix.clone(),
            Some((_, prefix)) => format!("{prefix}/{dir}"),
            None => dir.to_string(),
        }
    }

    /// Whether `key` is a language's root section (`ca`).
    pub(crate) fn is_root(&self, key: &str) -> bool {
        self.others.iter().any(|(_, p)| p == key)
    }

    /// Zola's name of the section `key`: `blog/_index.md`, `blog/_index.ca.md`, `_index.ca.md`.
    pub(crate) fn section_name(&self, key: &str) -> String {
        let (code, rest) = self.split(key);
        let file = self.file("_index", code);
        match rest {
            "" => file,
            r => format!("{r}/{file}"),
        }
    }

    /// The section key a Zola section name (`blog/_index.ca.md`) is.
    pub(crate) fn key_of_name(&self, name: &str) -> String {
        let (path, code) = self.strip(name);
        let dir = path.trim_end_matches("_index.md").trim_end_matches('/');
        self.key(dir, code.unwrap_or(&self.default))
    }

    /// `name.md` for the default language, `name.<code>.md` for another.
    fn file(&self, name: &str, code: &str) -> String {
        match code == self.default {
            true => format!("{name}.md"),
            false => format!("{name}.{code}.md"),
        }
    }

    /// A Zola path without its language (`blog/a.ca.md` is `blog/a.md`, `ca`).
    pub(crate) fn strip<'a>(&'a self, path: &str) -> (String, Option<&'a str>) {
        if let Some(stem) = path.strip_suffix(".md") {
            if let Some((base, code)) = stem.rsplit_once('.') {
                if let Some((c, _)) = self.others.iter().find(|(c, _)| c == code) {
                    return (format!("{base}.md"), Some(c.as_str()));
                }
            }
        }
        (path.to_string(), None)
    }

    /// `relative_path` and `ancestors` of a translated page or section, from the default
    /// language's (`blog/_index.md` in `ca` is `blog/_index.ca.md`).
    pub(crate) fn translate_file(&self, file: &str, code: &str) -> String {
        match code == self.default {
            true => file.to_string(),
            false => match file.strip_suffix(".md") {
                Some(stem) => format!("{stem}.{code}.md"),
                None => file.to_string(),
            },
        }
    }
}

/// `config.languages`: each language besides the default, as Zola's config gives it.
pub(crate) fn languages_value(r: &Renderer<'_>) -> Value {
    let langs = &r.collections.languages;
    let mut m = Map::new();
    for l in langs.others() {
        let taxonomies: Vec<Value> = (r.collections.taxonomies.iter())
            .filter(|t| t.lang == l.code)
            .map(super::taxonomy_value)
            .collect();
        m.insert(
            l.code.clone(),
            json!({
                "title": l.title, "description": l.description, "generate_feeds": l.feed,
                "feed_filenames": ["atom.xml"], "taxonomies": taxonomies,
                "build_search_index": false, "translations": l.translations,
            }),
        );
    }
    Value::Object(m)
}

/// `translations` of a page: every public version of it, as Zola lists them.
pub(crate) fn translations_value(t: &[crate::view::Translation]) -> Value {
    let list: Vec<Value> = (t.iter())
        .map(|t| json!({ "lang": t.lang, "permalink": t.url, "path": t.url, "title": t.title }))
        .collect();
    Value::Array(list)
}

/// [`paths_of`] of a page or section in any language: a translation's `relative_path` and
/// `ancestors` are Zola's file names in its language (`blog/_index.ca.md`).
pub(crate) fn paths_in(langs: &Langs, url: &str, section: bool) -> [(&'static str, Value); 3] {
    let (code, rest) = langs.split(url.trim_matches('/'));
    let mut out = super::paths_of(url, section);
    if code == langs.default {
        return out;
    }
    let own = super::paths_of(&format!("/{rest}/"), section);
    let file = |v: &Value| json!(langs.translate_file(v.as_str().unwrap_or_default(), code));
    out[1].1 = file(&own[1].1);
    let ancestors: Vec<Value> = own[2]
        .1
        .as_array()
        .into_iter()
        .flatten()
        .map(file)
        .collect();
    out[2].1 = Value::Array(ancestors);
    out
}
