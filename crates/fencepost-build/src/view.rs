//! What templates see. These are separate `Serialize` structs rather than the ledger's own
//! types, so a template can only use what the build accounts for in its reuse keys.
//!
//! An item's declared fields and `[extra]` travel as the canonical JSON text the ledger
//! stores ([`ItemPage::data`]): hashed as text for reuse keys, parsed only for the pages that
//! are rendered, and flattened into `page` and list entries there.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::sync::Arc;

#[derive(Debug, Clone, Serialize)]
pub struct SiteView {
    pub title: String,
    pub base_url: String,
    /// True for `build --preview` and watch mode: templates show a PREVIEW banner.
    pub preview: bool,
    /// `[search] enabled`: the revision has a Pagefind index (templates show a search box).
    pub search: bool,
    /// `[search] build_search_index`: Zola's index is written (Zola's templates read
    /// `config.build_search_index`).
    #[serde(skip)]
    pub build_search_index: bool,
    /// The config's `[extra]`.
    pub extra: serde_json::Value,
    /// The site's languages, the default first (`site.languages`: code, name, home URL);
    /// one on a site of one language.
    pub languages: Vec<LanguageLink>,
    /// `[languages.<code>] description` of the page's language (null elsewhere).
    pub description: Option<String>,
    /// The home page of the page's language: `/`, `/fr/` (what its own links start from).
    pub home_url: String,
}

/// A language of the site, for a language switcher: its code, its name, its home page.
#[derive(Debug, Clone, Serialize)]
pub struct LanguageLink {
    pub code: String,
    pub name: String,
    pub url: String,
}

/// A neighbour of an item page (`page.prev`, `page.next`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkView {
    pub url: String,
    pub title: String,
    pub day: Option<String>,
}

/// One public version of an item (`page.translations`): its language's code and name, its
/// URL and title.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Translation {
    pub lang: Arc<str>,
    pub name: Arc<str>,
    pub url: String,
    pub title: String,
}

/// The translations of a page that has none yet (one shared empty list, not one a page).
pub fn no_translations() -> Arc<[Translation]> {
    static NONE: std::sync::LazyLock<Arc<[Translation]>> =
        std::sync::LazyLock::new(|| Arc::from([]));
    NONE.clone()
}

/// An item's id as templates see it: a number in an integer collection, else the slug.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdView {
    Number(i64),
    Slug(Arc<str>),
}

impl IdView {
    pub fn text(&self) -> String {
        match self {
            IdView::Number(n) => n.to_string(),
            IdView::Slug(s) => s.to_string(),
        }
    }
}

impl Serialize for IdView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            IdView::Number(n) => s.serialize_i64(*n),
            IdView::Slug(t) => s.serialize_str(t),
        }
    }
}

/// An item page. Everything but the body goes into the reuse key (`plan::item_key`, which
/// hashes each field: a new field must be added there); the body and `data` are covered by
/// `content_hash`.
#[derive(Debug, Clone, Serialize)]
pub struct ItemPage {
    pub id: IdView,
    pub collection: Arc<str>,
    pub url: String,
    pub title: String,
    pub day: Option<String>,
    pub image_url: Option<String>,
    pub indexable: bool,
    /// Date (YYYY-MM-DD) of the commit that first published it (when a publisher ran: not
    /// reproducible; `date` is the item's own).
    pub published: String,
    /// Date (YYYY-MM-DD) of the commit of its last change.
    pub updated: String,
    /// Its date: the instant it was due (RFC 3339), whenever a publisher committed it.
    pub date: String,
    /// When it last changed as the public saw it (RFC 3339): the later of `date` and the
    /// commit of its last change after it went public.
    pub lastmod: String,
    pub prev: Option<LinkView>,
    pub next: Option<LinkView>,
    /// Preview only: when an embargoed item becomes public.
    pub embargoed_until: Option<String>,
    /// Preview only: the same instant on the clocks of its collection's time zone
    /// (`2026-12-02 10:00 CET`).
    pub embargoed_until_local: Option<String>,
    /// Preview only: the item says `draft = true` (never published while it does).
    pub draft: bool,
    /// The body before `<!-- more -->` (null without the marker).
    pub summary_html: Option<Arc<str>>,
    /// Notice pages only: when it was withdrawn (RFC 3339).
    pub withdrawn_at: Option<String>,
    /// Its language's code (`page.lang`).
    pub lang: Arc<str>,
    /// Every public version of it in the revision, itself included, in the site's order of
    /// languages (`page.translations`; see `languages.rs`): empty on a site of one language.
    pub translations: Arc<[Translation]>,
    /// Taxonomy terms as the ledger stores them (canonical JSON, `""` for none); templates
    /// see them as `page.taxonomies` (see `render.rs`).
    #[serde(skip)]
    pub terms: Arc<str>,
    /// Declared fields and `extra`: canonical JSON (flattened into `page` when rendered).
    #[serde(skip)]
    pub data: Arc<str>,
    #[serde(skip)]
    pub content_hash: String,
    /// The key its body is fetched by (the ledger row; a preview's own numbering).
    #[serde(skip)]
    pub row: i64,
}

/// Entries of a list page, the home page or a collection's `latest`: indices into the
/// plan's item pages (the pages are not copied for every list that shows them).
pub type Entries = Vec<u32>;

/// One entry as templates see it: the item's id, collection, URL, title, day, first
/// publication, date and lastmod, and its declared fields and `extra` (a declared field
/// named `date` or `lastmod` wins over the built-in one, as it did before they existed).
#[derive(Debug, Clone, Copy)]
pub struct EntryView<'a>(pub &'a ItemPage);

impl Serialize for EntryView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.0;
        let data = parse_data(&p.data);
        let mut m = s.serialize_map(Some(9 + data.len()))?;
        m.serialize_entry("id", &p.id)?;
        m.serialize_entry("collection", &*p.collection)?;
        m.serialize_entry("url", &p.url)?;
        m.serialize_entry("title", &p.title)?;
        m.serialize_entry("day", &p.day)?;
        m.serialize_entry("published", &p.published)?;
        m.serialize_entry("date", &p.date)?;
        m.serialize_entry("lastmod", &p.lastmod)?;
        m.serialize_entry("summary_html", &p.summary_html)?;
        for (k, v) in &data {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The stored JSON object of fields and `extra` (empty when it does not parse: the ledger
/// only ever stores objects).
pub fn parse_data(data: &str) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::from_str(data) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ArchiveLink {
    pub number: usize,
    pub url: String,
}

/// `<list_url>page/N/`: numbered from the oldest, so earlier pages stay the same as the
/// collection grows.
#[derive(Debug, Clone, Serialize)]
pub struct ListView {
    pub collection: Arc<str>,
    pub number: usize,
    pub url: String,
    pub entries: Entries,
    pub prev_url: Option<String>,
    pub next_url: Option<String>,
}

/// `<list_url>`: the latest entries, newest first, and links to every numbered page.
#[derive(Debug, Clone, Serialize)]
pub struct ListIndexView {
    pub collection: Arc<str>,
    pub latest: Entries,
    pub archive: Vec<ArchiveLink>,
    /// The page of the next older entries, where the list URL is page 1 (`newest_first`).
    pub prev_url: Option<String>,
    /// The collection's own text (`list_text`), shown on its list URL.
    pub text: Option<ListText>,
}

/// A collection's `list_text`, rendered: its `title` (the list URL's, where it gives one) and
/// its body.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ListText {
    pub title: Option<String>,
    pub html: String,
    /// Its `[extra]` (a Zola section's `extra`).
    pub extra: serde_json::Value,
}

/// A collection as the home page sees it: `collections.<name>`.
#[derive(Debug, Clone, Serialize)]
pub struct CollectionView {
    pub title: String,
    /// Its list URL (`null` when it has no list pages).
    pub url: Option<String>,
    pub latest: Entries,
}

/// `index.html`: the latest entries of every collection, newest first, and each collection's.
#[derive(Debug, Clone, Serialize)]
pub struct HomeView {
    pub latest: Entries,
    pub collections: std::collections::BTreeMap<String, CollectionView>,
    /// The root section's text (Zola mode).
    pub root_text: Option<ListText>,
    /// The language whose home page it is.
    pub lang: String,
}

/// One term's page: `url` (its newest entries, newest first) or `url + "page/N/"` (numbered
/// from the oldest, so earlier pages stay as they are when the term grows).
#[derive(Debug, Clone)]
pub struct TermView {
    /// Index into the site's taxonomies.
    pub taxonomy: usize,
    pub name: String,
    /// The term's own URL (its landing page).
    pub url: String,
    /// This page's URL.
    pub page_url: String,
    /// Every page: the newest entries, newest first; a numbered page: its entries.
    pub entries: Entries,
    /// The page number (the landing page: the number of the newest page).
    pub number: usize,
    pub prev_url: Option<String>,
    pub next_url: Option<String>,
}

/// One term as the taxonomy's index lists it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TermLink {
    pub name: String,
    pub url: String,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlainView {
    pub slug: String,
    pub url: String,
    pub title: String,
    pub indexable: bool,
    /// Its `date` and `lastmod` as its file wrote them (null when it has none).
    pub date: Option<String>,
    pub lastmod: Option<String>,
    /// Its old URLs: a redirect to it at each.
    #[serde(skip)]
    pub aliases: Vec<String>,
    /// Its template (`page.html` unless its file names one).
    pub template: String,
    /// Its `[extra]`.
    pub extra: serde_json::Value,
    #[serde(skip)]
    pub body_html: String,
    /// Its language's code (`page.lang`).
    pub lang: String,
}
