//! What a source site is read into: its configuration, its pages, and the URL patterns of
//! its sections (Hugo's, and fencepost's for the same pages).

use std::collections::BTreeMap;

/// The site's configuration, as far as fencepost uses it.
pub(super) struct Config {
    pub(super) table: toml::Table,
    pub(super) taxonomies: Vec<String>,
    pub(super) permalinks: BTreeMap<String, String>,
    /// Zola's site (its front matter and shortcodes differ; see `zola.rs`).
    pub(super) zola: bool,
    /// The folder of the default language's content, source-relative: `content`, or what
    /// Hugo's `contentDir` (top level or the default language's) says.
    pub(super) content_dir: String,
    /// The collection that Zola's dated pages at the root (a blog in the root section) go
    /// to: `posts`, unless a section has that name (see `hugo::root_posts`).
    pub(super) root_posts: String,
}

/// One page of the source.
pub(super) struct Page {
    pub(super) rel: String,
    pub(super) section: Option<String>,
    /// A leaf bundle's folder (source-relative), whose other files go with it.
    pub(super) bundle: Option<String>,
    pub(super) table: toml::Table,
    pub(super) body: String,
    pub(super) old_url: String,
    pub(super) new_url: String,
    pub(super) id: String,
    pub(super) at: Option<toml::value::Datetime>,
    /// The file's line where the body starts.
    pub(super) body_line: usize,
}

/// A section's URL pattern in Hugo's words, and fencepost's (`{id}` for the page's name).
pub(super) fn patterns(config: &Config, section: Option<&str>) -> (String, String) {
    let Some(section) = section else {
        return ("/:slug/".into(), "/:slug/".into());
    };
    if section == config.root_posts {
        return ("/:slugorfilename/".into(), "/:slug/".into());
    }
    let old = config
        .permalinks
        .get(section)
        .cloned()
        .unwrap_or_else(|| format!("/{section}/:slugorfilename/"));
    let new = new_pattern(&old, section);
    (old, new)
}

/// Hugo's pattern as fencepost can have it: the page's name becomes `{id}`, dates stay,
/// anything else falls back to `/SECTION/{id}/` (an alias keeps each old URL).
pub(super) fn new_pattern(old: &str, section: &str) -> String {
    let mut p = old.to_string();
    for name in [
        ":slugorfilename",
        ":slugorcontentbasename",
        ":slug",
        ":title",
        ":filename",
        ":contentbasename",
    ] {
        p = p.replace(name, ":slug");
    }
    let p = p.replace(":sections", section).replace(":section", section);
    let ok = p.matches(":slug").count() == 1
        && p.ends_with('/')
        && p.starts_with('/')
        && p.split(':').skip(1).all(|t| {
            ["slug", "year", "month", "day"]
                .iter()
                .any(|k| t.starts_with(k))
        });
    match ok {
        true => p,
        false => format!("/{section}/:slug/"),
    }
}
