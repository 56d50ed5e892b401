//! `[markdown]`: how item bodies are rendered (see `fencepost_site::markdown`).

use serde::Deserialize;

/// How item bodies are rendered (at publish, into the ledger).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MarkdownConfig {
    /// Headings get stable ids (from their text) for anchors.
    pub heading_ids: bool,
    /// Code blocks with a language are highlighted at publish time, as CSS classes.
    pub highlight: bool,
    /// HTML in Markdown is passed through (trusted authors only) instead of shown as text.
    pub unsafe_html: bool,
    /// GitHub's alerts (`> [!NOTE]`, `[!TIP]`, `[!IMPORTANT]`, `[!WARNING]`, `[!CAUTION]`)
    /// render as `<blockquote class="markdown-alert-note">`, as Zola's `github_alerts` and
    /// Hugo do; off, they stay a blockquote showing `[!NOTE]` (as before the setting).
    pub github_alerts: bool,
}

impl Default for MarkdownConfig {
    fn default() -> Self {
        MarkdownConfig {
            heading_ids: true,
            highlight: true,
            unsafe_html: false,
            github_alerts: false,
        }
    }
}
