//! `[search]`: a search index in every revision (docs/search.md).

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// A Pagefind index under `/pagefind/` in every revision, built from the revision's own
    /// pages (Pagefind's own search script and UI read it unchanged).
    pub enabled: bool,
}
