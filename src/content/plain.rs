//! Plain pages: `content/<name>.md`, served at `/<name>/`. Read here, by `publish` (which
//! names a page `build` could not place) and by `build` (which renders it), with one set of
//! checks: a page name of letters, digits, `-` and `_` that is none of the site's own
//! folders, and front matter of `title` and `indexable` only.

use super::{split_front_matter, ContentError, Format};
use crate::config::collections::Collections;
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
    pub body: String,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    title: Option<String>,
    indexable: Option<bool>,
}

/// The names a plain page may not take: the site's own folders, and the first folder of
/// every collection's and taxonomy's URLs.
pub fn reserved_names(collections: &Collections) -> Vec<String> {
    let mut reserved: Vec<String> = ["images", "sitemaps", "index", "revisions"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let tax_urls: Vec<String> = collections
        .taxonomies
        .iter()
        .flat_map(|t| std::iter::once(t.url.clone()).chain(t.index_url.clone()))
        .collect();
    for c in &collections.list {
        for u in std::iter::once(&c.url)
            .chain(c.list_url.as_ref())
            .chain(tax_urls.iter())
        {
            if let Some(top) = u.trim_start_matches('/').split('/').next() {
                if !top.is_empty() && !top.contains('{') && !reserved.iter().any(|r| r == top) {
                    reserved.push(top.to_string());
                }
            }
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

/// Reads the plain page `rel` (`content/<name>.md`) from its text. `reserved` comes from
/// [`reserved_names`].
pub fn parse_plain(rel: &str, text: &str, reserved: &[String]) -> Result<PlainPage, ContentError> {
    let slug = std::path::Path::new(rel)
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let path = PathBuf::from(rel);
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
            message: format!("{} (a plain page takes `title` and `indexable`)", e.message),
        })?,
        None => FrontMatter {
            title: None,
            indexable: None,
        },
    };
    Ok(PlainPage {
        path: rel.to_string(),
        url: format!("/{slug}/"),
        slug,
        title: fm.title,
        indexable: fm.indexable,
        body: split.body.to_string(),
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

    #[test]
    fn an_unknown_key_is_named_with_its_line() {
        let reserved = vec!["images".to_string()];
        let e = parse_plain(
            "content/about.md",
            "+++\ntitle = \"A\"\ntitel = \"B\"\n+++\nx\n",
            &reserved,
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(text.contains("content/about.md:3:"), "{text}");
        assert!(text.contains("titel"), "{text}");
        assert!(parse_plain("content/images.md", "x", &reserved).is_err());
        let p = parse_plain(
            "content/about.md",
            "+++\ntitle = \"A\"\n+++\nBody\n",
            &reserved,
        )
        .unwrap();
        assert_eq!((p.url.as_str(), p.title.as_deref()), ("/about/", Some("A")));
    }
}
