//! The build plan: which files a revision has, what goes into each, and the key that decides
//! whether a file can be reused from the previous revision. Pure: no I/O.
//!
//! Per collection: its item pages (prev/next within it), its list pages numbered from the
//! oldest (publication order) with an index at its list URL, its feed, and sitemaps chunked
//! by item (50,000 a file). Then the site's own: the home page over every collection, the
//! site-wide feed, plain pages, 404, the sitemap index and robots.txt. The layout keeps one
//! new item from touching many files: an item page's key covers only its own row and its
//! neighbours, earlier list pages stay as they were, feeds hold only the latest entries.

mod beside;
mod keys;
mod lists;
mod taxonomy;

pub use super::page::{CopyInput, CopySource, PageInput, ResourceInput};
use super::view::{
    CollectionView, Entries, HomeView, IdView, ItemPage, LinkView, ListIndexView, ListView,
    PlainView,
};
use fencepost_config::collections::{Collection, Collections, SortBy};
use fencepost_config::BuildConfig;
use fencepost_core::clock::Instant;
use fencepost_output::manifest::CacheClass;
use fencepost_site::content::claims::url_to_path;
use keys::{entries_key, key, link};
pub use keys::{hash_item, item_key};
use rayon::prelude::*;

/// Items per sitemap chunk: the sitemap protocol allows 50,000 URLs a file.
pub const SITEMAP_CHUNK: i64 = 50_000;

/// Checks that a planned path stays inside the output root.
pub(crate) fn safe_rel(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains('\0')
        && std::path::Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

/// A feed: the site-wide one (`coll` None), a collection's or a term's.
#[derive(Debug, Clone)]
pub struct FeedJob {
    pub coll: Option<usize>,
    /// A term's feed: (taxonomy index, term name, the term's URL).
    pub term: Option<(usize, String, String)>,
    /// A language's site-wide feed: its code (empty for the others).
    pub lang: String,
    /// Its own URL (site-relative).
    pub url: String,
    /// The latest entries, newest first, with their update and first-publication instants.
    pub entries: Vec<(ItemPage, Instant, Instant)>,
    /// RSS 2.0 (`rss.xml`) rather than Atom.
    pub rss: bool,
}

#[derive(Debug, Clone)]
pub enum Job {
    /// The item page of `Inputs::pages[i]`; its view (with neighbours) is made by
    /// [`item_view`] when the page is rendered, not for the many pages that are reused.
    Item(usize),
    Home(Box<HomeView>),
    /// A collection's list index (its `list_url`).
    ListIndex(usize, Box<ListIndexView>),
    /// A collection's numbered list page.
    List(usize, Box<ListView>),
    Plain(Box<PlainView>),
    /// A term's page (landing or numbered).
    Term(Box<super::view::TermView>),
    /// A taxonomy's index: every term with its count.
    Terms(usize, Vec<super::view::TermLink>),
    /// The notice page of withdrawn item `Inputs::notices[i]`.
    Notice(usize),
    NotFound,
    Feed(Box<FeedJob>),
    SitemapIndex(Vec<String>),
    /// (site-relative URL, last modification date)
    Sitemap(Vec<(String, Option<String>)>),
    /// `robots.txt`: generated, or from `templates/robots.txt` (true).
    Robots(bool),
    /// A public item's JSON for the transparency log (`item`: `collection/id`): the JSON is
    /// read from the ledger only when the previous revision's file cannot be kept.
    ItemJson {
        row: i64,
        item: String,
        json: Option<std::sync::Arc<str>>,
    },
    /// An alias of an item: a redirect to `target`, the item's URL.
    Alias {
        target: String,
    },
    /// A file of item `of`'s page bundle, copied as it is.
    Resource {
        of: String,
        source: CopySource,
        sha256: String,
    },
    Copy {
        source: CopySource,
        sha256: String,
    },
}

#[derive(Debug, Clone)]
pub struct Planned {
    pub path: String,
    pub job: Job,
    pub cache: CacheClass,
    pub key: String,
}

impl Planned {
    /// What it is, in words, for the error, the left-out or the held entry that names it.
    pub(crate) fn what(&self, pages: &[PageInput], notices: &[PageInput]) -> String {
        let p = self;
        match &p.job {
            Job::Item(i) => {
                let v = &pages[*i].view;
                format!("item {}/{}", v.collection, v.id.text())
            }
            Job::List(..) | Job::ListIndex(..) => "a list page".into(),
            Job::Term(v) => format!("a page of the term {:?}", v.name),
            Job::Terms(..) => "a taxonomy's index of terms".into(),
            Job::Notice(i) => {
                let v = &notices[*i].view;
                format!("the withdrawal notice of {}/{}", v.collection, v.id.text())
            }
            Job::Plain(v) => format!("plain page content/{}.md", v.slug),
            Job::Copy { .. } => "a file of static/ (or the hashed copy of one)".into(),
            Job::Home(_) => "the home page".into(),
            Job::Alias { target } => format!("an alias of the page {target}"),
            Job::Resource { of, .. } => format!("a file of the bundle {of}"),
            _ => "a generated file".into(),
        }
    }
}

pub struct Inputs<'a> {
    /// Public items, sorted by [`PageInput::order`].
    pub pages: &'a [PageInput],
    pub plain: &'a [PlainView],
    /// Each collection's list text (by index into `collections.list`).
    pub list_texts: &'a [Option<super::view::ListText>],
    /// The root section's text (Zola mode's `content/_index.md`).
    /// Each language's root section text (Zola mode's `content/_index.md`,
    /// `_index.<code>.md`), by language code.
    pub root_texts: &'a std::collections::BTreeMap<String, super::view::ListText>,
    pub copies: &'a [CopyInput],
    /// The files of the page bundles in `pages`.
    pub resources: &'a [ResourceInput],
    /// The render fingerprint (templates, the assets they link, config, version): seeds the
    /// key of every templated page.
    pub render_fingerprint: &'a str,
    /// Config and version only: seeds the keys of the generated files (feed, sitemaps,
    /// robots.txt), which no template or stylesheet touches.
    pub generated_fingerprint: &'a str,
    pub config: &'a BuildConfig,
    pub collections: &'a Collections,
    /// Withdrawn items of collections with `on_withdraw = "notice"`: only their notice
    /// pages are planned from them.
    pub notices: &'a [PageInput],
    /// Write `rss.xml` beside each `atom.xml`.
    pub rss: bool,
    /// Where `robots.txt` comes from.
    pub robots: RobotsFrom,
    /// Serve each public item's JSON beside the transparency log (`[transparency] log`).
    pub transparency: bool,
}

/// Where a site's `robots.txt` comes from: generated (allow all, name the sitemap), the
/// site's `templates/robots.txt` rendered with `site`, or its `static/robots.txt` copied as
/// it is (then nothing is planned here: the copy is the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RobotsFrom {
    Generated,
    Template,
    Static,
}

/// Item page `i`'s neighbours within its collection: its `prev` and `next`.
pub fn neighbours(pages: &[PageInput], i: usize) -> (Option<LinkView>, Option<LinkView>) {
    let same = |j: usize| pages[j].coll == pages[i].coll;
    let prev = i.checked_sub(1).filter(|&j| same(j));
    let next = Some(i + 1).filter(|&j| j < pages.len() && same(j));
    (
        prev.map(|j| link(&pages[j].view)),
        next.map(|j| link(&pages[j].view)),
    )
}

/// Date order, oldest first — (due instant, collection, id) — of the pages `which`, as
/// indices into `pages`. Never the order publishers committed them in: a fresh ledger on a
/// CI runner orders the same content the same way. The ledger hands pages over in table
/// order, which follows publication and so mostly dates: the sort (a merge of sorted runs)
/// costs little more than a pass.
fn by_publication(pages: &[PageInput], which: std::ops::Range<usize>) -> Vec<u32> {
    // Sorted over small keys on every core (each page's fields are read once, not at every
    // comparison); (due, collection, id) names one page, so the order is the stable sort's.
    let mut keys: Vec<(Instant, usize, &IdView, u32)> = (which.map(|i| {
        let p = &pages[i];
        (p.due, p.coll, &p.view.id, i as u32)
    }))
    .collect();
    keys.par_sort_unstable();
    keys.into_iter().map(|k| k.3).collect()
}

fn newest(by_pub: &[u32], n: usize) -> Entries {
    by_pub.iter().rev().take(n).copied().collect()
}

/// Every file of the site, sorted by path, each with its reuse key.
pub fn plan(inp: &Inputs<'_>) -> Vec<Planned> {
    let mut out = item_pages(inp);
    beside::aliases(inp, &mut out);
    let mut maps = Sitemaps {
        pages: vec![("/".into(), None)],
        files: vec!["sitemaps/pages.xml".to_string()],
    };
    let home = collection_pages(inp, &mut out, &mut maps);
    let all_by_pub = by_publication(inp.pages, 0..inp.pages.len());
    for lang in &inp.collections.languages.list {
        let home = home_of(inp, &home, &lang.code);
        let by_pub = of_lang(inp, &all_by_pub, &lang.code);
        home_and_site_feed(inp, home, &by_pub, lang, &mut out);
    }
    taxonomy::plan_taxonomies(inp, &all_by_pub, &mut out, &mut maps.files);
    notices_and_plain_pages(inp, &mut out);
    site_files(inp, maps, &mut out);
    copies(inp, &mut out);
    beside::resources(inp, &mut out);
    beside::item_json(inp, &mut out);
    by_path(out)
}

/// The planned files sorted by path, each (a few hundred bytes) moved once.
fn by_path(out: Vec<Planned>) -> Vec<Planned> {
    use rayon::prelude::*;
    let mut keys: Vec<(&str, u32)> = (out.iter().enumerate())
        .map(|(i, p)| (p.path.as_str(), i as u32))
        .collect();
    keys.par_sort_unstable();
    let order: Vec<u32> = keys.into_iter().map(|(_, i)| i).collect();
    super::page::permute(out, order)
}

/// What the sitemaps list: the pages of `sitemaps/pages.xml`, and every sitemap file.
struct Sitemaps {
    pages: Vec<(String, Option<String>)>,
    files: Vec<String>,
}

/// Item pages with prev/next within their collection; keys in parallel (this is the bulk of
/// the plan). Each collection's pages are one run of `pages`.
fn item_pages(inp: &Inputs<'_>) -> Vec<Planned> {
    // Each collection's run found once, not by two binary searches per page (their probes
    // over 600-byte inputs were a tenth of a one-item plan at 100,000 pages).
    let runs: Vec<std::ops::Range<usize>> = (0..inp.collections.list.len())
        .map(|ci| collection_range(inp.pages, ci))
        .collect();
    // Room for what is planned after them (lists, feeds, aliases, bundles, copies, each
    // item's JSON — rarely more than a second file a page): the list is then not grown by
    // copying ~10,000 planned files into one twice the size (room never written is never
    // touched).
    let room = 2 * inp.pages.len()
        + inp.notices.len()
        + inp.plain.len()
        + inp.copies.len()
        + inp.resources.len()
        + 1024;
    let mut out = Vec::with_capacity(room);
    out.par_extend((0..inp.pages.len()).into_par_iter().map(|i| {
        let run = runs[inp.pages[i].coll].clone();
        Planned {
            path: url_to_path(&inp.pages[i].view.url),
            job: Job::Item(i),
            cache: CacheClass::Content,
            key: item_key(
                inp.render_fingerprint,
                &inp.pages[run.clone()],
                i - run.start,
            ),
        }
    }));
    out
}

/// Each collection's list pages and sitemaps; returns the home page's view of them.
fn collection_pages(inp: &Inputs<'_>, out: &mut Vec<Planned>, maps: &mut Sitemaps) -> HomeView {
    let mut home = HomeView {
        latest: Vec::new(),
        collections: Default::default(),
        root_text: None,
        lang: String::new(),
    };
    for (ci, coll) in inp.collections.list.iter().enumerate() {
        let run = collection_range(inp.pages, ci);
        let by_pub = by_publication(inp.pages, run.clone());
        // The order its lists read in, last first: by date, or (`sort_by = "weight"`) the
        // pages' own reading order (lightest first), reversed.
        let listed: Vec<u32> = match coll.sort_by {
            SortBy::Date => by_pub.clone(),
            SortBy::Weight => run.clone().rev().map(|i| i as u32).collect(),
        };
        home.collections.insert(
            coll.name.clone(),
            CollectionView {
                title: coll.title.clone(),
                url: coll.list_url.clone(),
                latest: newest(&listed, inp.config.home_entries),
            },
        );
        if coll.list_url.is_some() {
            let order = lists::Order {
                listed: &listed,
                by_pub: &by_pub,
            };
            lists::plan_lists(inp, ci, coll, order, out, &mut maps.pages);
        }
        let g = inp.generated_fingerprint;
        sitemap_chunks(g, coll, &inp.pages[run], out, &mut maps.files);
    }
    home
}

/// Language `lang`'s home page: its collections, each by the name of the collection it
/// translates (`collections.posts` on `/fr/` is `posts.fr`'s).
fn home_of(inp: &Inputs<'_>, all: &HomeView, lang: &str) -> HomeView {
    let collections = (inp.collections.of_lang(lang))
        .filter_map(|(_, c)| {
            let name = c.original.as_ref().unwrap_or(&c.name);
            all.collections
                .get(&c.name)
                .map(|v| (name.clone(), v.clone()))
        })
        .collect();
    HomeView {
        latest: Vec::new(),
        collections,
        root_text: inp.root_texts.get(lang).cloned(),
        lang: lang.to_string(),
    }
}

/// The pages of `by_pub` in language `lang` (all of them on a site of one language).
fn of_lang(inp: &Inputs<'_>, by_pub: &[u32], lang: &str) -> Vec<u32> {
    if !inp.collections.languages.many() {
        return by_pub.to_vec();
    }
    (by_pub.iter().copied())
        .filter(|&i| inp.collections.list[inp.pages[i as usize].coll].lang == lang)
        .collect()
}

/// A language's home page (`index.html`, `fr/index.html`), and its feed of every collection
/// that has one.
fn home_and_site_feed(
    inp: &Inputs<'_>,
    mut home: HomeView,
    all_by_pub: &[u32],
    lang: &fencepost_config::collections::Language,
    out: &mut Vec<Planned>,
) {
    let dir = match lang.url_prefix.trim_matches('/') {
        "" => String::new(),
        p => format!("{p}/"),
    };
    home.latest = newest(all_by_pub, inp.config.home_entries);
    let lists: Vec<&[u32]> = std::iter::once(home.latest.as_slice())
        .chain(home.collections.values().map(|c| c.latest.as_slice()))
        .collect();
    let names = serde_json::to_string(&home.collections.keys().collect::<Vec<_>>());
    let b = inp.render_fingerprint;
    let k = entries_key(b, "home", &lists, inp.pages, &names.unwrap_or_default());
    out.push(planned(
        format!("{dir}index.html"),
        Job::Home(Box::new(home)),
        CacheClass::Home,
        k,
    ));
    let fed: Vec<u32> = all_by_pub
        .iter()
        .copied()
        .filter(|&i| inp.collections.list[inp.pages[i as usize].coll].feed)
        .collect();
    if lang.feed {
        let of = FeedOf::Site(lang.code.clone());
        feeds(inp, of, format!("/{dir}atom.xml"), &fed, out);
    }
}

/// Withdrawal notices (answered 410) and the plain pages of `content/`.
fn notices_and_plain_pages(inp: &Inputs<'_>, out: &mut Vec<Planned>) {
    let b = inp.render_fingerprint;
    for (i, n) in inp.notices.iter().enumerate() {
        let k = key(b, "notice", &n.view, &n.view.content_hash);
        let path = url_to_path(&n.view.url);
        out.push(planned(path, Job::Notice(i), CacheClass::Gone, k));
    }
    for p in inp.plain {
        let k = key(b, "plain", p, &super::report::content_key(&p.body_html));
        let path = url_to_path(&p.url);
        out.push(planned(
            path,
            Job::Plain(Box::new(p.clone())),
            CacheClass::Content,
            k,
        ));
        for alias in &p.aliases {
            let target = p.url.clone();
            let k = key(inp.generated_fingerprint, "alias", &(alias, &target), "");
            let job = Job::Alias { target };
            out.push(planned(url_to_path(alias), job, CacheClass::Redirect, k));
        }
    }
}

/// 404.html, the sitemaps and robots.txt.
fn site_files(inp: &Inputs<'_>, mut maps: Sitemaps, out: &mut Vec<Planned>) {
    let (b, g) = (inp.render_fingerprint, inp.generated_fingerprint);
    // Each language's 404 page (`404.html`, `fr/404.html`), as Hugo writes them.
    for lang in &inp.collections.languages.list {
        let dir = lang.url_prefix.trim_matches('/');
        let path = match dir {
            "" => "404.html".to_string(),
            d => format!("{d}/404.html"),
        };
        let k = key(b, "404", &(), dir);
        out.push(planned(path, Job::NotFound, CacheClass::Content, k));
    }
    let indexable = inp.plain.iter().filter(|p| p.indexable);
    // A sitemap's `lastmod` is a W3C date: the day of the page's last change, or of its date.
    let day = |p: &PlainView| {
        p.lastmod
            .as_ref()
            .or(p.date.as_ref())
            .map(|d| d[..10].to_string())
    };
    maps.pages
        .extend(indexable.map(|p| (p.url.clone(), day(p))));
    let k = key(g, "sitemap", &maps.pages, "");
    let job = Job::Sitemap(maps.pages);
    out.push(planned(
        "sitemaps/pages.xml".into(),
        job,
        CacheClass::Content,
        k,
    ));
    let k = key(g, "sitemap-index", &maps.files, "");
    let job = Job::SitemapIndex(maps.files);
    out.push(planned("sitemap.xml".into(), job, CacheClass::Content, k));
    let (k, templated) = match inp.robots {
        RobotsFrom::Static => return,
        RobotsFrom::Generated => (key(g, "robots", &(), ""), false),
        RobotsFrom::Template => (key(b, "robots-template", &(), ""), true),
    };
    out.push(planned(
        "robots.txt".into(),
        Job::Robots(templated),
        CacheClass::Content,
        k,
    ));
}

/// Static files and hashed assets, copied (linked) as they are.
fn copies(inp: &Inputs<'_>, out: &mut Vec<Planned>) {
    for c in inp.copies {
        let job = Job::Copy {
            source: c.source.clone(),
            sha256: c.sha256.clone(),
        };
        let cache = match c.immutable_url {
            true => CacheClass::Immutable,
            false => CacheClass::Asset,
        };
        out.push(planned(
            c.path.clone(),
            job,
            cache,
            format!("copy:{}", c.sha256),
        ));
    }
}

fn planned(path: String, job: Job, cache: CacheClass, key: String) -> Planned {
    Planned {
        path,
        job,
        cache,
        key,
    }
}

/// The range of `pages` (sorted by collection) that holds collection `ci`.
fn collection_range(pages: &[PageInput], ci: usize) -> std::ops::Range<usize> {
    pages.partition_point(|p| p.coll < ci)..pages.partition_point(|p| p.coll <= ci)
}

/// Whose feed it is.
#[derive(Debug, Clone)]
enum FeedOf {
    /// A language's (its code).
    Site(String),
    Collection(usize),
    /// (taxonomy, term name, term URL)
    Term(usize, String, String),
}

/// The Atom feed at `url` (`…/atom.xml`) of the latest entries of `by_pub` (oldest first),
/// and its RSS twin (`…/rss.xml`) when the site asks for RSS.
fn feeds(inp: &Inputs<'_>, of: FeedOf, url: String, by_pub: &[u32], out: &mut Vec<Planned>) {
    let entries: Vec<(ItemPage, Instant, Instant)> = by_pub
        .iter()
        .rev()
        .take(inp.config.feed_entries)
        .map(|&i| &inp.pages[i as usize])
        .map(|p| (p.view.clone(), p.changed, p.due))
        .collect();
    let hashes: String = entries
        .iter()
        .map(|(v, _, _)| v.content_hash.as_str())
        .collect();
    let (coll, term, lang) = match &of {
        FeedOf::Site(lang) => (None, None, lang.clone()),
        FeedOf::Collection(ci) => (Some(*ci), None, String::new()),
        FeedOf::Term(t, name, u) => (None, Some((*t, name.clone(), u.clone())), String::new()),
    };
    let mut urls = vec![(url.clone(), false)];
    if inp.rss {
        urls.push((format!("{}rss.xml", url.trim_end_matches("atom.xml")), true));
    }
    for (url, rss) in urls {
        let k = key(
            inp.generated_fingerprint,
            if rss { "rss" } else { "feed" },
            &(
                &url,
                &term,
                &lang,
                entries
                    .iter()
                    .map(|(v, t, p)| (v, t.0, p.0))
                    .collect::<Vec<_>>(),
            ),
            &hashes,
        );
        out.push(planned(
            url_to_path(&url),
            Job::Feed(Box::new(FeedJob {
                coll,
                term: term.clone(),
                lang: lang.clone(),
                url,
                entries: entries.clone(),
                rss,
            })),
            CacheClass::Content,
            k,
        ));
    }
}

/// A collection's sitemaps: integer ids chunked by id (50,000 ids a file, so a new item
/// touches one file), slugs by their place in id order.
fn sitemap_chunks(
    g: &str,
    coll: &Collection,
    pages: &[PageInput],
    out: &mut Vec<Planned>,
    files: &mut Vec<String>,
) {
    let mut by_chunk: std::collections::BTreeMap<i64, Vec<(String, Option<String>)>> =
        Default::default();
    let mut ids: Vec<&PageInput> = pages.iter().filter(|p| p.view.indexable).collect();
    ids.par_sort_unstable_by(|a, b| a.view.id.cmp(&b.view.id));
    // Each page's URL and date made on every core (two strings a page), then put in chunks.
    let urls: Vec<(String, Option<String>)> = (ids.par_iter())
        .map(|p| (p.view.url.clone(), Some(super::page::date_of(p.changed))))
        .collect();
    for (i, (p, url)) in ids.iter().zip(urls).enumerate() {
        let chunk = match &p.view.id {
            IdView::Number(n) => n / SITEMAP_CHUNK,
            IdView::Slug(_) => i as i64 / SITEMAP_CHUNK,
        };
        by_chunk.entry(chunk).or_default().push(url);
    }
    for (chunk, urls) in by_chunk {
        let path = format!("sitemaps/{}-{chunk}.xml", coll.name);
        let k = keys::sitemap_key(g, &urls);
        files.push(path.clone());
        out.push(planned(path, Job::Sitemap(urls), CacheClass::Content, k));
    }
}

#[cfg(test)]
mod tests;
