//! `[search]`: a search index in every revision (docs/search.md): Pagefind's, and Zola's own
//! for a Zola theme's search script.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// A Pagefind index under `/pagefind/` in every revision, built from the revision's own
    /// pages (Pagefind's own search script and UI read it unchanged).
    pub enabled: bool,
    /// Zola's `build_search_index`: `search_index.<lang>.js` (or `.json`) as Zola writes it,
    /// for a Zola theme's own search script (and `elasticlunr.min.js` beside it).
    pub build_search_index: bool,
    /// Zola's `index_format`: `elasticlunr_javascript` (default), `elasticlunr_json`,
    /// `fuse_javascript` or `fuse_json`.
    pub index_format: String,
    /// Zola's fields: the title, the description (`<meta name="description">`), the URL, the
    /// text.
    pub include_title: bool,
    pub include_description: bool,
    pub include_path: bool,
    pub include_content: bool,
    /// Zola's `truncate_content_length`: at most this many characters of a page's text.
    pub truncate_content_length: Option<usize>,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            enabled: false,
            build_search_index: false,
            index_format: "elasticlunr_javascript".into(),
            include_title: true,
            include_description: false,
            include_path: false,
            include_content: true,
            truncate_content_length: None,
        }
    }
}

/// Zola's `index_format` values.
pub const INDEX_FORMATS: [&str; 4] = [
    "elasticlunr_javascript",
    "elasticlunr_json",
    "fuse_javascript",
    "fuse_json",
];

impl SearchConfig {
    /// What serde cannot check: the index format's name.
    pub(crate) fn check(&self, path: &std::path::Path) -> Result<(), crate::ConfigError> {
        if INDEX_FORMATS.contains(&self.index_format.as_str()) {
            return Ok(());
        }
        Err(crate::ConfigError::Invalid {
            path: path.to_path_buf(),
            key: "search.index_format",
            value: format!("{:?}", self.index_format),
            why: "Zola's index formats are \"elasticlunr_javascript\", \"elasticlunr_json\", \"fuse_javascript\" and \"fuse_json\"",
        })
    }
}
