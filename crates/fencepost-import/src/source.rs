//! What a source site is read into: its configuration, its pages, and the URL patterns of
//! its sections (Hugo's, and fencepost's for the same pages).

use std::collections::BTreeMap;

/// The site's configuration, as far as fencepost uses it.
pub(super) struct Config {
    /// The configuration file's name (`hugo.toml`, `config.toml`, …), for the report.
    pub(super) file: String,
    pub(super) table: toml::Table,
    pub(super) taxonomies: Vec<String>,
    pub(super) permalinks: BTreeMap<String, String>,
    /// Whose site it is (Zola's front matter, shortcodes and config differ; see `zola.rs`).
    pub(super) dialect: super::plan::Dialect,
    /// The folder of the default language's content, source-relative: `content`, or what
    /// Hugo's `contentDir` (top level or the default language's) says.
    pub(super) content_dir: String,
    /// The collection that Zola's dated pages at the root (a blog in the root section) go
    /// to: `posts`, unless a section has that name (see `hugo::root_posts`).
    pub(super) root_posts: String,
    /// Zola's `[slugify] paths = "on"` (its default): a page's URL name is its file name or
    /// `slug` made a slug (`zola.386` is at `/themes/zola-386/`). Hugo keeps the name as it is.
    pub(super) slugify_paths: bool,
    /// The URL in lower case, as Hugo writes it unless `disablePathToLower = true` (Zola:
    /// as its slugified paths are). fencepost's ids are lower case: a page whose old URL
    /// kept its case moves, and its old URL redirects (reported).
    pub(super) path_to_lower: bool,
    /// A Zola site's own templates are kept (see `zola_templates.rs`): its sections'
    /// template keys are used, not reported.
    pub(super) keep_templates: bool,
    /// With kept templates, the template each section's pages render with.
    pub(super) page_templates: BTreeMap<String, String>,
    /// The names of the Zola shortcodes whose templates were kept (`templates/shortcodes/`):
    /// their calls stay in the bodies, and render at publish.
    pub(super) shortcodes: std::collections::BTreeSet<String>,
    /// Its languages besides the default (see `languages.rs`).
    pub(super) languages: super::languages::Languages,
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
    /// A translation's language (None: the default language's page).
    pub(super) lang: Option<String>,
}

/// The collection a section's pages go to. A section is named by its folder's path under
/// `content/` (`docs/content/page`: nested sections are sections of their own, so each page
/// keeps the URL its generator gave it); the collection's name is that path made a name
/// (`docs_content_page`).
pub(super) fn collection_name(section: &str) -> String {
    let mut name: String = section
        .to_lowercase()
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' => c,
            _ => '_',
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "s_");
    }
    name
}

/// A section's URL pattern in Hugo's words, and fencepost's (`{id}` for the page's name).
/// Hugo's `[permalinks]` are keyed by the top-level section, and its `:sections` is the
/// whole path, `:section` the top-level one.
pub(super) fn patterns(config: &Config, section: Option<&str>) -> (String, String) {
    let Some(section) = section else {
        return ("/:slug/".into(), "/:slug/".into());
    };
    if section == config.root_posts {
        return ("/:slugorfilename/".into(), "/:slug/".into());
    }
    let top = section.split('/').next().unwrap_or(section);
    let old = config
        .permalinks
        .get(section)
        .or_else(|| config.permalinks.get(top))
        .cloned()
        .unwrap_or_else(|| format!("/{section}/:slugorfilename/"));
    let old = old.replace(":sections", section).replace(":section", top);
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
    let top = section.split('/').next().unwrap_or(section);
    let p = p.replace(":sections", section).replace(":section", top);
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
