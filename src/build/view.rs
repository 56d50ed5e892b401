//! What templates see. These are separate `Serialize` structs rather than the ledger's own
//! types, so a template can only use what the build accounts for in its reuse keys.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct SiteView {
    pub title: String,
    pub base_url: String,
    /// True for `build --preview` and watch mode: templates show a PREVIEW banner.
    pub preview: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkView {
    pub url: String,
    pub title: String,
    pub day: String,
}

/// An answer page. Everything but the body goes into the reuse key (`plan::answer_key`, which
/// hashes each field: a new field must be added there); the body is covered by `content_hash`.
#[derive(Debug, Clone, Serialize)]
pub struct AnswerView {
    pub id: i64,
    pub url: String,
    pub title: String,
    pub day: String,
    pub price: String,
    pub image_url: Option<String>,
    pub indexable: bool,
    /// Date (YYYY-MM-DD) of first publication.
    pub published: String,
    /// Date (YYYY-MM-DD) of the last change.
    pub updated: String,
    pub prev: Option<LinkView>,
    pub next: Option<LinkView>,
    /// Preview only: when an embargoed item becomes public.
    pub embargoed_until: Option<String>,
    #[serde(skip)]
    pub content_hash: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ArchiveLink {
    pub number: usize,
    pub url: String,
}

/// `/answers/page/N/`: numbered from the oldest, so earlier pages stay the same as the site
/// grows.
#[derive(Debug, Clone, Serialize)]
pub struct ListView {
    pub number: usize,
    pub url: String,
    pub entries: Vec<LinkView>,
    pub prev_url: Option<String>,
    pub next_url: Option<String>,
}

/// `/answers/`: the latest entries, newest first, and links to every numbered page.
#[derive(Debug, Clone, Serialize)]
pub struct AnswersIndexView {
    pub latest: Vec<LinkView>,
    pub archive: Vec<ArchiveLink>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlainView {
    pub slug: String,
    pub url: String,
    pub title: String,
    pub indexable: bool,
    #[serde(skip)]
    pub body_html: String,
}
