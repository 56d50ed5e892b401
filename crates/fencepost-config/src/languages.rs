//! Languages (docs/languages.md): `default_language` and one `[languages.<code>]` table per
//! language a site publishes in besides it.
//!
//! A translation is an item of its own: each collection gets, per other language, a
//! collection of its translations named `<collection>.<code>` (`posts.fr`), whose items are
//! the files `hello.fr.md` beside `hello.md` (Zola's and Hugo's translation by file name) or,
//! when the language names a `dir`, the files of `content/<dir>/<collection's folder>/`
//! (Hugo's translation by content directory). Each is published, withdrawn and expired on
//! its own, at its own instant (by default its original's), exactly once — the guarantees an
//! item has, because it is one. Its URLs are the collection's under the language's prefix
//! (`/fr/posts/hello/`), its lists, feeds and sitemaps its own.
//!
//! Chosen: translations as collections, so the ledger, the embargo, the reuse keys and the
//! lists need nothing new, and a translation that is invalid or held holds only itself.
//! Rejected: one item carrying every language (a late translation would hold the others, or
//! publish early with them), and a language column in the ledger (every engine's schema and
//! every existing ledger would change for what a collection already is).

use serde::Deserialize;
use std::collections::BTreeMap;

/// One `[languages.<code>]` table as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanguageConfig {
    /// The site's title in this language (`site.title`); default: the site's.
    pub title: Option<String>,
    /// The site's description in this language (`site.description`).
    pub description: Option<String>,
    /// The language's own name, for a language switcher (`Français`); default: its code.
    pub name: Option<String>,
    /// Where its pages live: default `/<code>`; the default language's is always the root.
    pub url_prefix: Option<String>,
    /// A folder under `content/` holding its translations in the collections' own folder
    /// names (Hugo's `contentDir`); default none: `name.<code>.md` beside the original.
    pub dir: Option<String>,
    /// Its feeds (home and collections'); default true.
    pub feed: Option<bool>,
    /// Order in switchers and `hreflang` lists: lightest first, then by code.
    pub weight: Option<i64>,
    /// The strings `trans(key=…, lang="<code>")` answers (Zola's `[languages.<code>.translations]`).
    #[serde(default)]
    pub translations: BTreeMap<String, String>,
}

/// A language, every default filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Language {
    pub code: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// `""` for the default language, else `/<code>` (no trailing `/`).
    pub url_prefix: String,
    pub dir: Option<String>,
    pub feed: bool,
    pub weight: i64,
    pub translations: BTreeMap<String, String>,
}

/// The site's languages: the default first, then by weight and code.
#[derive(Debug, Clone, PartialEq)]
pub struct Languages {
    pub list: Vec<Language>,
}

impl Languages {
    /// The default language's code.
    pub fn default_code(&self) -> &str {
        &self.list[0].code
    }

    /// Whether the site has more than one language.
    pub fn many(&self) -> bool {
        self.list.len() > 1
    }

    pub fn get(&self, code: &str) -> Option<&Language> {
        self.list.iter().find(|l| l.code == code)
    }

    /// The languages other than the default.
    pub fn others(&self) -> &[Language] {
        &self.list[1..]
    }

    /// The language a file name is a translation in (`hello.fr.md`, `index.fr.md`), among the
    /// languages kept beside their originals; with the name of its original.
    pub fn of_file_name<'a>(&'a self, name: &str) -> Option<(&'a Language, String)> {
        let stem = name.strip_suffix(".md")?;
        let (base, code) = stem.rsplit_once('.')?;
        let lang = self
            .others()
            .iter()
            .find(|l| l.code == code && l.dir.is_none())?;
        (!base.is_empty()).then(|| (lang, format!("{base}.md")))
    }
}

/// A language code as Zola and Hugo take them: letters first, then letters, digits and `-`
/// (`en`, `pt-br`, `zh-hant`); what it must be to stand in a file name and a URL.
pub fn is_code(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 35
        && b[0].is_ascii_alphabetic()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && !s.ends_with('-')
}

/// Resolves `default_language` and `[languages]`. `Err((key, why))`.
pub fn resolve(
    default: &str,
    tables: &BTreeMap<String, LanguageConfig>,
) -> Result<Languages, (String, String)> {
    if !is_code(default) {
        return Err((
            "default_language".into(),
            format!(
                "{default:?} is no language code: write letters, digits and - (\"en\", \"pt-br\")"
            ),
        ));
    }
    let mut list = (tables.iter())
        .map(|(code, t)| language(code, t, code == default))
        .collect::<Result<Vec<_>, _>>()?;
    if !list.iter().any(|l| l.code == default) {
        list.push(Language {
            code: default.to_string(),
            name: default.to_string(),
            title: None,
            description: None,
            url_prefix: String::new(),
            dir: None,
            feed: true,
            weight: 0,
            translations: BTreeMap::new(),
        });
    }
    list.sort_by(|a, b| {
        (a.code != default, a.weight, &a.code).cmp(&(b.code != default, b.weight, &b.code))
    });
    for (i, a) in list.iter().enumerate() {
        if let Some(b) = list[i + 1..].iter().find(|b| b.url_prefix == a.url_prefix) {
            return Err((
                format!("languages.{}.url_prefix", b.code),
                format!(
                    "{} and {} have the same URL prefix {:?}",
                    a.code, b.code, a.url_prefix
                ),
            ));
        }
    }
    Ok(Languages { list })
}

/// One `[languages.<code>]` table, checked.
fn language(
    code: &str,
    t: &LanguageConfig,
    is_default: bool,
) -> Result<Language, (String, String)> {
    let key = |k: &str| format!("languages.{code}.{k}");
    if !is_code(code) {
        return Err((
            format!("languages.{code}"),
            "a language code is letters, digits and - (\"fr\", \"pt-br\")".into(),
        ));
    }
    let url_prefix = match (&t.url_prefix, is_default) {
        (Some(p), true) if !p.trim_matches('/').is_empty() => {
            return Err((key("url_prefix"), "the default language's pages are at the site's root: remove the key, or make another language the default".into()))
        }
        (_, true) => String::new(),
        (Some(p), false) => check_prefix(p).map_err(|why| (key("url_prefix"), why))?,
        (None, false) => format!("/{code}"),
    };
    let dir = match (&t.dir, is_default) {
        (Some(_), true) => {
            return Err((
                key("dir"),
                "the default language's files are the collections' own: remove the key".into(),
            ))
        }
        (Some(d), false) => Some(check_dir(d).map_err(|why| (key("dir"), why))?),
        (None, _) => None,
    };
    Ok(Language {
        code: code.to_string(),
        name: t.name.clone().unwrap_or_else(|| code.to_string()),
        title: t.title.clone(),
        description: t.description.clone(),
        url_prefix,
        dir,
        feed: t.feed.unwrap_or(true),
        weight: t.weight.unwrap_or(0),
        translations: t.translations.clone(),
    })
}

/// `/fr`, `/francais`: one or more path segments; no trailing `/` kept.
fn check_prefix(p: &str) -> Result<String, String> {
    let inner = p.trim_matches('/');
    let ok = !inner.is_empty()
        && inner.split('/').all(|s| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"-_.~".contains(&c))
        });
    if !ok {
        return Err(format!(
            "{p:?} must be a path like \"/fr\": letters, digits, -, _, . and ~ between slashes"
        ));
    }
    let top = inner.split('/').next().unwrap_or_default();
    if [
        "images",
        "sitemaps",
        "revisions",
        "assets",
        "pagefind",
        ".well-known",
    ]
    .contains(&top)
    {
        return Err(format!(
            "{p:?} starts with /{top}/, which the site's own files use"
        ));
    }
    Ok(format!("/{inner}"))
}

/// A folder under `content/`: no `..`, `.` or hidden parts.
fn check_dir(d: &str) -> Result<String, String> {
    let dir = d.trim_matches('/');
    if dir.is_empty()
        || dir
            .split('/')
            .any(|p| p.is_empty() || p.starts_with('.') || p.contains('\\'))
    {
        return Err(format!(
            "{d:?} must be a folder under content/, without `..`, `.` or hidden parts"
        ));
    }
    Ok(dir.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(code: &str, t: LanguageConfig) -> BTreeMap<String, LanguageConfig> {
        BTreeMap::from([(code.to_string(), t)])
    }

    #[test]
    fn default_first_and_prefixes() {
        let l = resolve("en", &table("fr", LanguageConfig::default())).unwrap();
        assert_eq!(l.default_code(), "en");
        assert_eq!(l.list[1].url_prefix, "/fr");
        assert_eq!(l.of_file_name("hello.fr.md").unwrap().1, "hello.md");
        assert!(l.of_file_name("hello.de.md").is_none());
        assert!(l.of_file_name(".fr.md").is_none());
    }

    #[test]
    fn refusals_name_the_key() {
        let t = LanguageConfig {
            url_prefix: Some("/../x".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve("en", &table("fr", t)).unwrap_err().0,
            "languages.fr.url_prefix"
        );
        assert_eq!(
            resolve("e n", &BTreeMap::new()).unwrap_err().0,
            "default_language"
        );
        let t = LanguageConfig {
            dir: Some("fr".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve("fr", &table("fr", t)).unwrap_err().0,
            "languages.fr.dir"
        );
    }
}
