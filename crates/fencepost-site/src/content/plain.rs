//! Plain pages: `content/<name>.md`, served at `/<name>/`. Read here, by `publish` (which
//! names a page `build` could not place) and by `build` (which renders it), with one set of
//! checks: a page name of letters, digits, `-` and `_` that is none of the site's own
//! folders, and front matter of `title`, `indexable`, `aliases` (old URLs redirected to the
//! page, checked as an item's are), `date` and `lastmod` (shown by templates, the sitemap's
//! `lastmod`), `template` and `[extra]` (anything its template wants) only.

use super::{split_front_matter, ContentError, Format};
use fencepost_config::collections::Collections;
use std::path::PathBuf;

/// One plain page as its file says it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlainPage {
    /// Site-relative: `content/<slug>.md`.
    pub path: String,
    pub slug: String,
    /// `/<slug>/`.
    pub url: String,
    pub title: Option<String>,
    pub indexable: Option<bool>,
    /// Old URLs of the page ([`crate::content::alias_url`]'s form), each redirected to it.
    pub aliases: Vec<String>,
    /// Its date and last change as written (a date or an RFC 3339 date-time).
    pub date: Option<String>,
    pub lastmod: Option<String>,
    /// The template it renders through (default `page.html`).
    pub template: Option<String>,
    /// Its `[extra]`: anything its template wants (`page.extra`; a Zola section's `extra`).
    pub extra: toml::Table,
    pub body: String,
    /// Its language's code (`about.fr.md` is `about` in French).
    pub lang: String,
}

/// The keys a plain page takes (named in the error for any other).
const KEYS: &str = "`title`, `indexable`, `aliases`, `date`, `lastmod`, `template` and `[extra]`";

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    title: Option<String>,
    indexable: Option<bool>,
    #[serde(default)]
    aliases: Vec<String>,
    date: Option<toml::Value>,
    lastmod: Option<toml::Value>,
    template: Option<String>,
    #[serde(default)]
    extra: toml::Table,
}

/// A `date` or `lastmod` as text: a TOML date or date-time, or a string holding one.
fn date_text(key: &str, v: Option<toml::Value>) -> Result<Option<String>, String> {
    let text = match v {
        None => return Ok(None),
        Some(toml::Value::Datetime(d)) => d.to_string(),
        Some(toml::Value::String(s)) => s,
        Some(other) => return Err(format!("`{key}` is {other}, not a date")),
    };
    let ok = chrono::NaiveDate::parse_from_str(&text, "%Y-%m-%d").is_ok()
        || chrono::DateTime::parse_from_rfc3339(&text).is_ok()
        || chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%dT%H:%M:%S").is_ok();
    match ok {
        true => Ok(Some(text)),
        false => Err(format!(
            "`{key}` is {text:?}: write a date (2024-05-01) or an RFC 3339 date-time"
        )),
    }
}

/// The names a plain page may not take: the site's own folders, and every one-folder URL
/// the site's collections and taxonomies answer at themselves (a list URL `/blog/`, a
/// taxonomy's index `/tags/`, a one-folder item pattern's fixed folder). A folder that only
/// holds the site's other pages (`/guides/` above `/guides/basics/…`, a Zola section of
/// subsections) is free: its page is the section's own.
pub fn reserved_names(collections: &Collections) -> Vec<String> {
    let mut reserved: Vec<String> = ["images", "sitemaps", "index", "revisions"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let tax_urls = collections
        .taxonomies
        .iter()
        .flat_map(|t| t.index_url.iter());
    let urls = collections
        .list
        .iter()
        .flat_map(|c| std::iter::once(&c.url).chain(c.list_url.as_ref()))
        .chain(tax_urls);
    for u in urls {
        let inner = u.trim_matches('/');
        if !inner.is_empty() && !inner.contains(['/', '{']) && !reserved.iter().any(|r| r == inner)
        {
            reserved.push(inner.to_string());
        }
    }
    reserved
}

/// The plain pages' files, `content/*.md` (hidden files left out), sorted, site-relative.
pub fn list(root: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root.join("content")) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && !n.starts_with('.'))
        .map(|n| format!("content/{n}"))
        .collect();
    out.sort();
    out
}

/// A plain page's name and language: `about.fr.md` is the page `about` in French, at
/// `/fr/about/` (docs/languages.md).
fn slug_and_language<'a>(
    rel: &str,
    languages: &'a fencepost_config::collections::Languages,
) -> (String, Option<&'a fencepost_config::collections::Language>) {
    let stem = std::path::Path::new(rel)
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match languages.of_file_name(name) {
        Some((l, _)) => (stem[..stem.len() - l.code.len() - 1].to_string(), Some(l)),
        None => (stem, None),
    }
}

/// A plain page's URL, its name (`about.fr` for a translation: names are unique) and its
/// language's code.
fn placed(
    slug: String,
    lang: Option<&fencepost_config::collections::Language>,
    languages: &fencepost_config::collections::Languages,
) -> (String, String, String) {
    let prefix = lang.map_or("", |l| l.url_prefix.as_str());
    let url = format!("{prefix}/{slug}/");
    match lang {
        Some(l) => (url, format!("{slug}.{}", l.code), l.code.clone()),
        None => (url, slug, languages.default_code().to_string()),
    }
}

/// Reads the plain page `rel` (`content/<name>.md`) from its text. `reserved` comes from
/// [`reserved_names`].
pub fn parse_plain(
    rel: &str,
    text: &str,
    reserved: &[String],
    languages: &fencepost_config::collections::Languages,
) -> Result<PlainPage, ContentError> {
    let path = PathBuf::from(rel);
    let (slug, lang) = slug_and_language(rel, languages);
    if slug.is_empty()
        || !slug
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        || reserved.contains(&slug)
    {
        return Err(ContentError::Unreadable {
            path,
            why: format!(
                "cannot be a plain page: `{slug}` is no page name (use letters, digits, - and _, and none of {})",
                reserved.join(", ")
            ),
        });
    }
    let split = split_front_matter(text).map_err(|e| ContentError::Unterminated {
        path: path.clone(),
        fence: e.0.fence(),
    })?;
    let fm: FrontMatter = match split.front_matter {
        Some(f) => plain_front_matter(f, split.format).map_err(|e| ContentError::FrontMatter {
            path: path.clone(),
            line: e.line,
            message: format!("{} (a plain page takes {KEYS})", e.message),
        })?,
        None => FrontMatter::default(),
    };
    let invalid = |key: &str, why: String| ContentError::FrontMatter {
        path: path.clone(),
        line: split
            .front_matter
            .and_then(|f| super::key_line(f, key))
            .unwrap_or(1),
        message: why,
    };
    let (url, slug, lang) = placed(slug, lang, languages);
    let mut aliases: Vec<String> = Vec::new();
    for a in &fm.aliases {
        let a = crate::content::alias_url(a).map_err(|why| invalid("aliases", why))?;
        if a != url && !aliases.contains(&a) {
            aliases.push(a);
        }
    }
    Ok(PlainPage {
        path: rel.to_string(),
        url,
        slug,
        title: fm.title,
        indexable: fm.indexable,
        aliases,
        date: date_text("date", fm.date).map_err(|why| invalid("date", why))?,
        lastmod: date_text("lastmod", fm.lastmod).map_err(|why| invalid("lastmod", why))?,
        template: match fm.template {
            Some(t)
                if t.is_empty()
                    || t.starts_with('/')
                    || t.split('/').any(|p| p.is_empty() || p == "..") =>
            {
                return Err(invalid(
                    "template",
                    format!("`template` {t:?} must name a file under templates/"),
                ));
            }
            t => t,
        },
        extra: fm.extra,
        body: split.body.to_string(),
        lang,
    })
}

/// A plain page's keys, from either format (unknown keys refused, as the struct says).
fn plain_front_matter(fm: &str, format: Format) -> Result<FrontMatter, super::Unreadable> {
    if format == Format::Toml {
        // Straight from the text, so an error points at its key's line.
        return toml::from_str(fm).map_err(|e: toml::de::Error| super::Unreadable {
            line: e
                .span()
                .map_or(0, |s| fm[..s.start.min(fm.len())].matches('\n').count())
                + 2,
            message: e.message().to_string(),
        });
    }
    let table = super::front_matter_table(fm, format)?;
    toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| {
            // "unknown field `x`, expected …" / "invalid type … for key `x`": the key's line.
            let key = e.message().split('`').nth(1).unwrap_or_default();
            super::Unreadable {
                line: super::key_line(fm, key).unwrap_or(2),
                message: e.message().to_string(),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> fencepost_config::collections::Languages {
        fencepost_config::languages::resolve("en", &Default::default()).unwrap()
    }

    #[test]
    fn a_translated_page_is_at_its_language_prefix() {
        let fr = std::collections::BTreeMap::from([("fr".to_string(), Default::default())]);
        let langs = fencepost_config::languages::resolve("en", &fr).unwrap();
        let p = parse_plain(
            "content/about.fr.md",
            "+++\ntitle = \"À propos\"\n+++\nx\n",
            &[],
            &langs,
        );
        let p = p.unwrap();
        assert_eq!(
            (p.url.as_str(), p.slug.as_str(), p.lang.as_str()),
            ("/fr/about/", "about.fr", "fr")
        );
        assert!(parse_plain("content/about.de.md", "x", &[], &langs).is_err());
    }

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let reserved = vec!["images".to_string()];
        let e = parse_plain(
            "content/about.md",
            "+++\ntitle = \"A\"\ntitel = \"B\"\n+++\nx\n",
            &reserved,
            &one(),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("content/about.md:3:"), "{text}");
        assert!(text.contains("titel"), "{text}");
        assert!(parse_plain("content/images.md", "x", &reserved, &one()).is_err());
        let p = parse_plain(
            "content/about.md",
            "+++\ntitle = \"A\"\n+++\nBody\n",
            &reserved,
            &one(),
        )
        .unwrap();
        assert_eq!((p.url.as_str(), p.title.as_deref()), ("/about/", Some("A")));
    }

    #[test]
    fn aliases_and_dates_are_read_and_checked() {
        let reserved = vec!["images".to_string()];
        let p = parse_plain(
            "content/about.md",
            "+++\ndate = 2019-02-28\nlastmod = \"2020-01-02T03:04:05Z\"\naliases = [\"/about-us\", \"/about/\", \"/about-us/\", \"/old.html\"]\n+++\nx\n",
            &reserved,
            &one(),
        )
        .unwrap();
        assert_eq!(p.aliases, ["/about-us/", "/old.html"]);
        assert_eq!(p.date.as_deref(), Some("2019-02-28"));
        assert_eq!(p.lastmod.as_deref(), Some("2020-01-02T03:04:05Z"));
        for (text, line, what) in [
            (
                "+++\ntitle = \"A\"\naliases = [\"about-us\"]\n+++\n",
                3,
                "begin it with /",
            ),
            ("+++\ndate = \"last week\"\n+++\n", 2, "`date`"),
            ("+++\nlastmod = 3\n+++\n", 2, "not a date"),
        ] {
            let e = parse_plain("content/about.md", text, &reserved, &one())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(&format!("content/about.md:{line}:")) && e.contains(what),
                "{e}"
            );
        }
    }
}
