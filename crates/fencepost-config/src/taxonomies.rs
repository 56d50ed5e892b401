//! Taxonomies: `[taxonomies.<name>]` tables. A collection opts in with `taxonomies = ["tags"]`
//! and its items then carry `tags = ["…"]`. Each term gets its own pages (numbered from the
//! oldest, so a new item changes only the last of them), an entry in the taxonomy's index
//! with its count, and optionally an Atom feed. Everything is derived from public pages only
//! (see `build::terms`), so a term exists exactly while one of its items is public.

use super::{Config, ConfigError};
use serde::Deserialize;
use std::path::Path;

/// One `[taxonomies.<name>]` table as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaxonomyConfig {
    /// A term's pages: `{term}` is replaced by the term's slug; default `/<name>/{term}/`.
    /// Numbered pages at `url + "page/N/"`.
    pub url: Option<String>,
    /// Default `term.html`.
    pub template: Option<String>,
    /// Every term with its count; default `/<name>/`; `""`: no index.
    pub index_url: Option<String>,
    /// Default `terms.html`.
    pub index_template: Option<String>,
    /// An Atom feed per term at `url + "atom.xml"`; default true.
    pub feed: Option<bool>,
    /// Entries per term page; default `build.page_size`.
    pub page_size: Option<usize>,
    /// The taxonomy's title, given to templates; default its name.
    pub title: Option<String>,
}

/// One taxonomy, every default filled in and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Taxonomy {
    pub name: String,
    pub title: String,
    /// With `{term}`; starts and ends with `/`.
    pub url: String,
    pub template: String,
    pub index_url: Option<String>,
    pub index_template: String,
    pub feed: bool,
    pub page_size: usize,
    /// The front-matter key its terms are written under (its name, but for a language's
    /// taxonomy `tags.fr`: `tags`).
    pub key: String,
    /// The language of the items it lists (each language has its own terms and pages).
    pub lang: String,
}

impl Taxonomy {
    /// The URL of term `slug`'s first page.
    pub fn term_url(&self, slug: &str) -> String {
        self.url.replace("{term}", slug)
    }

    /// The URL of term `slug`'s numbered page `n`.
    pub fn term_page_url(&self, slug: &str, n: usize) -> String {
        format!("{}page/{n}/", self.term_url(slug))
    }
}

/// Front-matter keys a taxonomy may not take: they are built in.
fn reserved(name: &str) -> bool {
    super::names::FRONT_MATTER.contains(&name)
        || super::names::TEMPLATE_ONLY.contains(&name)
        || ["expire_at", "taxonomies", "summary_html", "withdrawn_at"].contains(&name)
}

/// Resolves and checks `config.taxonomies`.
pub fn resolve(config: &Config, path: &Path) -> Result<Vec<Taxonomy>, ConfigError> {
    let bad = |key: String, why: String| ConfigError::Collection {
        path: path.to_path_buf(),
        key,
        why,
    };
    let mut out = Vec::new();
    for (name, t) in &config.taxonomies {
        let key = |k: &str| format!("taxonomies.{name}.{k}");
        if !super::names::is_taxonomy_name(name) || reserved(name) {
            return Err(bad(
                format!("taxonomies.{name}"),
                "a taxonomy name is a lower-case letter, then lower-case letters, digits, _ and - (not at the end), and not a built-in front-matter key".into(),
            ));
        }
        let url = t
            .url
            .clone()
            .unwrap_or_else(|| format!("/{name}/{{term}}/"));
        let bare = url.replace("{term}", "x");
        if !url.contains("{term}") || url.matches("{term}").count() != 1 {
            return Err(bad(
                key("url"),
                format!("{url:?} must hold {{term}} once, or every term would get the same URL"),
            ));
        }
        super::names::check_url(&bare, false)
            .map_err(|why| bad(key("url"), format!("{url:?} {why}")))?;
        let index_url = match t.index_url.clone() {
            Some(u) if u.is_empty() => None,
            Some(u) => Some(u),
            None => Some(format!("/{name}/")),
        };
        if let Some(u) = &index_url {
            super::names::check_url(u, false)
                .map_err(|why| bad(key("index_url"), format!("{u:?} {why}")))?;
            if u == "/" {
                return Err(bad(key("index_url"), "\"/\" is the home page".into()));
            }
        }
        let template = t.template.clone().unwrap_or_else(|| "term.html".into());
        let index_template = t
            .index_template
            .clone()
            .unwrap_or_else(|| "terms.html".into());
        for (k, v) in [("template", &template), ("index_template", &index_template)] {
            if v.is_empty() || v.starts_with('/') || v.split('/').any(|p| p == ".." || p.is_empty())
            {
                return Err(bad(
                    key(k),
                    format!("{v:?} must name a file under templates/"),
                ));
            }
        }
        let page_size = t.page_size.unwrap_or(config.build.page_size);
        if page_size == 0 || page_size > 100_000 {
            return Err(bad(key("page_size"), "must be between 1 and 100000".into()));
        }
        out.push(Taxonomy {
            name: name.clone(),
            title: t.title.clone().unwrap_or_else(|| name.clone()),
            url,
            template,
            index_url,
            index_template,
            feed: t.feed.unwrap_or(true),
            page_size,
            key: name.clone(),
            lang: String::new(),
        });
    }
    Ok(out)
}

/// A term's URL slug: Unicode folded to ASCII (`Ünïcode Tag` → `unicode-tag`), by the
/// `slug` crate (deunicode underneath). Empty for a term with no letters or digits.
/// The longest term slug (in bytes; slugs are ASCII). A slug is one folder name of the
/// output: most file systems allow 255 bytes a name, and a term URL pattern may put text
/// around `{term}` in the same segment, so the slug keeps well under that.
pub const MAX_TERM_SLUG: usize = 100;

pub fn term_slug(term: &str) -> String {
    slug::slugify(term)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Taxonomy>, ConfigError> {
        let c = Config::parse(text, Path::new("fencepost.toml"))?;
        resolve(&c, Path::new("fencepost.toml"))
    }

    #[test]
    fn defaults_and_checks() {
        let t = parse("[taxonomies.tags]\n").unwrap();
        assert_eq!(t[0].url, "/tags/{term}/");
        assert_eq!(t[0].index_url.as_deref(), Some("/tags/"));
        assert_eq!(t[0].term_page_url("rust", 2), "/tags/rust/page/2/");
        assert!(t[0].feed);
        let e = parse("[taxonomies.tags]\nurl = \"/tags/\"\n").unwrap_err();
        assert!(e.to_string().contains("taxonomies.tags.url"), "{e}");
        let e = parse("[taxonomies.title]\n").unwrap_err();
        assert!(e.to_string().contains("taxonomies.title"), "{e}");
        let e = parse("[taxonomies.tags]\nbogus = 1\n").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let t = parse("[taxonomies.tags]\nindex_url = \"\"\n").unwrap();
        assert_eq!(t[0].index_url, None);
    }

    #[test]
    fn slugs_fold_unicode() {
        assert_eq!(term_slug("Ünïcode Tag"), "unicode-tag");
        assert_eq!(term_slug("C++"), "c");
        assert_eq!(term_slug("Rust"), term_slug("rust"));
    }
}
