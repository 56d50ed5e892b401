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
    /// Definition lists (`Term` then `: its definition`), as Hugo's Goldmark renders them:
    /// `<dl>`. Off, such lines stay a paragraph (as before the setting).
    pub definition_lists: bool,
    /// Heading attributes (`## Install {#setup .wide}`), as Hugo's Goldmark reads them: the
    /// id and classes go on the heading, and the braces are not shown. Off, they are text.
    pub heading_attributes: bool,
}

impl Default for MarkdownConfig {
    fn default() -> Self {
        MarkdownConfig {
            heading_ids: true,
            highlight: true,
            unsafe_html: false,
            github_alerts: false,
            definition_lists: false,
            heading_attributes: false,
        }
    }
}
