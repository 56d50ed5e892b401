//! A collection's list pages: how they order its items (`sort_by`), how they are numbered
//! (`pagination`), and the text the list URL shows (`list_text`).
//!
//! `list_text = "_index.md"` names a Markdown file in the collection's folder — Hugo's and
//! Zola's section page — shown on the list URL as `list.text_html` (its front matter may
//! give `title`, the list URL's title). It is the site's own text, like a plain page, not an
//! item: never published, embargoed or listed. Rejected: treating every `_index.md` as one
//! without the key (an existing site's item named `_index` would change meaning).
//!
//! By date (the default): lists newest first, numbered from the oldest, so earlier numbered
//! pages stay as they are while the collection grows. By weight (`sort_by = "weight"`, the
//! name Zola gives it; Hugo orders by weight first by default): documentation and other
//! pages read in an order of the author's choosing — the item's `weight` front-matter key,
//! lightest first, the unweighted last, ties newest first. Lists, the home page's
//! `collections.<name>.latest` and prev/next follow it; the collection's feed stays newest
//! first (a feed is news). Rejected: ordering by title or slug (Zola's other modes): no site
//! imported so far needs one, and each would be another order to keep stable.

use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortBy {
    /// Newest first, by the instant each item was due.
    #[default]
    Date,
    /// Lightest `weight` first; the unweighted after them; ties newest first.
    Weight,
}

/// How a collection's list pages are numbered (`pagination`).
///
/// `oldest_first` (the default): `page/1/` holds the oldest items, and the list URL the
/// newest with links to every numbered page; a page, once full, never changes as the
/// collection grows (cheap to rebuild, and a link to page 3 keeps meaning what it meant).
/// `newest_first`, as Hugo and Zola number them: the list URL is page 1 (the newest), `page/2/`
/// the next older ones and so on, `page/1/` redirects to the list URL; every numbered page
/// shifts when an item is added. Imported sites get it, so their old page URLs keep showing
/// what they showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pagination {
    #[default]
    OldestFirst,
    NewestFirst,
}

impl super::Collection {
    /// The URL of numbered list page `n` (None without list pages).
    pub fn list_page_url(&self, n: usize) -> Option<String> {
        self.list_url.as_ref().map(|u| format!("{u}page/{n}/"))
    }

    pub fn page_title(&self, n: usize) -> String {
        self.page_title.replace("{number}", &n.to_string())
    }
}

/// `list_text`: a Markdown file name in the collection's folder (no folder, not hidden).
pub(super) fn list_text(c: &super::CollectionConfig) -> Result<Option<String>, String> {
    match &c.list_text {
        None => Ok(None),
        Some(n) if n.ends_with(".md") && !n.starts_with('.') && !n.contains(['/', '\\']) => {
            Ok(Some(n.clone()))
        }
        Some(n) => Err(format!(
            "{n:?} must be a Markdown file's name in the collection's folder (\"_index.md\")"
        )),
    }
}
