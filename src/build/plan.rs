//! The build plan: which files a revision has, what goes into each, and the key that decides
//! whether a file can be reused from the previous revision. Pure: no I/O.
//!
//! The layout keeps one new item from touching many files: list pages are numbered from the
//! oldest (publication order), sitemaps are chunked by item id (50,000 ids per file), the
//! feed holds only the latest entries, and an answer page's key covers only its own row and
//! its neighbours.

use super::view::{AnswerView, AnswersIndexView, ArchiveLink, LinkView, ListView, PlainView};
use crate::clock::Instant;
use crate::config::BuildConfig;
use crate::output::manifest::CacheClass;
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::PathBuf;
use std::sync::Arc;

/// Item ids per sitemap chunk: the sitemap protocol allows 50,000 URLs a file.
pub const SITEMAP_CHUNK: i64 = 50_000;

/// One public answer page, as the plan needs it.
#[derive(Debug, Clone)]
pub struct PageInput {
    /// The view, without prev/next (the plan fills them in).
    pub view: AnswerView,
    pub first_published_at: Instant,
    pub updated_at: Instant,
}

/// Where the bytes of a copied file come from.
#[derive(Debug, Clone)]
pub enum CopySource {
    /// A content-addressed blob of the image store: it never changes in place, so a revision
    /// may hard-link it.
    Blob(PathBuf),
    /// Bytes read, and hashed, when the build started: files an editor can rewrite
    /// (`static/`, preview images under `content/`). Writing these very bytes keeps the
    /// manifest's sha256, the reuse key and the build fingerprint true of what the revision
    /// holds, even when the file is rewritten while the build runs; a hard link would even
    /// let a later edit reach into a finished revision.
    Bytes(Arc<Vec<u8>>),
}

/// A file copied as is: a static file or a stored image.
#[derive(Debug, Clone)]
pub struct CopyInput {
    pub path: String,
    pub source: CopySource,
    /// A content hash of the bytes (sha256), so equal sources are reused across builds.
    pub sha256: String,
    /// The path names the bytes (a content hash in the name): caches may keep it for a year.
    pub immutable_url: bool,
}

#[derive(Debug, Clone)]
pub enum Job {
    /// The answer page of `Inputs::pages[i]`; its view (with neighbours) is made by
    /// [`answer_view`] when the page is rendered, not for the many pages that are reused.
    Answer(usize),
    Home(Vec<LinkView>),
    AnswersIndex(AnswersIndexView),
    List(ListView),
    Plain(PlainView),
    NotFound,
    /// Latest answers for the Atom feed, newest first, with their update instants.
    Feed(Vec<(AnswerView, Instant)>),
    SitemapIndex(Vec<String>),
    /// (site-relative URL, last modification date)
    Sitemap(Vec<(String, Option<String>)>),
    Robots,
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

pub struct Inputs<'a> {
    /// Public answers in (day, id) order.
    pub pages: &'a [PageInput],
    pub plain: &'a [PlainView],
    pub copies: &'a [CopyInput],
    /// The render fingerprint (templates, the assets they link, config, version): seeds the
    /// key of every templated page.
    pub render_fingerprint: &'a str,
    /// Config and version only: seeds the keys of the generated files (feed, sitemaps,
    /// robots.txt), which no template or stylesheet touches.
    pub generated_fingerprint: &'a str,
    pub config: &'a BuildConfig,
}

fn key(build: &str, kind: &str, data: &impl Serialize, extra: &str) -> String {
    let mut h = Sha256::new();
    h.update(build);
    h.update([0]);
    h.update(kind);
    h.update([0]);
    h.update(serde_json::to_vec(data).expect("views serialise"));
    h.update([0]);
    h.update(extra);
    hex::encode(h.finalize())
}

/// The key of a list page: every field of its view, hashed directly (a thousand list pages at
/// 100,000 items).
fn list_key(render_fingerprint: &str, v: &ListView) -> String {
    let mut h = Sha256::new();
    let mut field = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    field(render_fingerprint);
    field("list");
    field(&v.number.to_string());
    field(&v.url);
    field(&v.entries.len().to_string());
    for e in &v.entries {
        field(&e.url);
        field(&e.title);
        field(&e.day);
    }
    for u in [&v.prev_url, &v.next_url] {
        field(u.as_deref().unwrap_or("\0none"));
    }
    hex::encode(h.finalize())
}

/// The view of answer page `i`, with its neighbours by day.
pub fn answer_view(pages: &[PageInput], i: usize) -> AnswerView {
    let mut v = pages[i].view.clone();
    v.prev = i.checked_sub(1).map(|j| link(&pages[j].view));
    v.next = pages.get(i + 1).map(|n| link(&n.view));
    v
}

/// The key of answer page `i`: every field of its view ([`answer_view`]), hashed directly
/// from the inputs (this runs once per page per build, so it neither clones the view nor
/// takes the JSON detour of [`key`]).
fn answer_key(render_fingerprint: &str, pages: &[PageInput], i: usize) -> String {
    fn neighbour(v: &AnswerView) -> (&str, &str, &str) {
        (v.url.as_str(), v.title.as_str(), v.day.as_str())
    }
    hash_answer(
        render_fingerprint,
        &pages[i].view,
        i.checked_sub(1).map(|j| neighbour(&pages[j].view)),
        pages.get(i + 1).map(|n| neighbour(&n.view)),
    )
}

/// The hash of an answer view's fields, its neighbours given as (url, title, day).
fn hash_answer(
    render_fingerprint: &str,
    v: &AnswerView,
    prev: Option<(&str, &str, &str)>,
    next: Option<(&str, &str, &str)>,
) -> String {
    let mut h = Sha256::new();
    let mut field = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    field(render_fingerprint);
    field("answer");
    field(&v.id.to_string());
    for s in [
        &v.url,
        &v.title,
        &v.day,
        &v.price,
        &v.published,
        &v.updated,
        &v.content_hash,
    ] {
        field(s);
    }
    field(v.image_url.as_deref().unwrap_or("\0none"));
    field(if v.indexable { "1" } else { "0" });
    field(v.embargoed_until.as_deref().unwrap_or("\0none"));
    for l in [prev, next] {
        match l {
            Some((url, title, day)) => {
                field(url);
                field(title);
                field(day);
            }
            None => field("\0none"),
        }
    }
    hex::encode(h.finalize())
}

fn link(v: &AnswerView) -> LinkView {
    LinkView {
        url: v.url.clone(),
        title: v.title.clone(),
        day: v.day.clone(),
    }
}

pub fn answer_url(id: i64) -> String {
    format!("/answers/{id}/")
}

pub fn list_url(n: usize) -> String {
    format!("/answers/page/{n}/")
}

/// Maps a site URL (`/a/b/`) to its file in the revision (`a/b/index.html`).
pub fn url_to_path(url: &str) -> String {
    let p = url.trim_start_matches('/');
    if p.is_empty() || p.ends_with('/') {
        format!("{p}index.html")
    } else {
        p.to_string()
    }
}

pub fn plan(inp: &Inputs<'_>) -> Vec<Planned> {
    let b = inp.render_fingerprint;
    let g = inp.generated_fingerprint;
    // Answer pages with prev/next by day; keys in parallel (this is the bulk of the plan).
    let mut out: Vec<Planned> = (0..inp.pages.len())
        .into_par_iter()
        .map(|i| Planned {
            path: url_to_path(&inp.pages[i].view.url),
            job: Job::Answer(i),
            cache: CacheClass::Content,
            key: answer_key(b, inp.pages, i),
        })
        .collect();
    let mut push = |path: String, job: Job, cache: CacheClass, key: String| {
        out.push(Planned {
            path,
            job,
            cache,
            key,
        })
    };

    // Publication order (oldest first) for lists and the feed.
    let mut by_pub: Vec<&PageInput> = inp.pages.iter().collect();
    by_pub.sort_by_key(|p| (p.first_published_at, p.view.id));
    let size = inp.config.page_size;
    let chunks: Vec<&[&PageInput]> = by_pub.chunks(size).collect();
    let n_pages = chunks.len();
    let lists: Vec<Planned> = chunks
        .par_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let number = i + 1;
            let v = ListView {
                number,
                url: list_url(number),
                entries: chunk.iter().map(|p| link(&p.view)).collect(),
                prev_url: (number > 1).then(|| list_url(number - 1)),
                next_url: (number < n_pages).then(|| list_url(number + 1)),
            };
            Planned {
                path: url_to_path(&v.url),
                key: list_key(b, &v),
                job: Job::List(v),
                cache: CacheClass::Content,
            }
        })
        .collect();
    for l in lists {
        push(l.path, l.job, l.cache, l.key);
    }
    let newest: Vec<LinkView> = by_pub
        .iter()
        .rev()
        .take(size)
        .map(|p| link(&p.view))
        .collect();
    let idx = AnswersIndexView {
        latest: newest,
        archive: (1..=n_pages)
            .map(|n| ArchiveLink {
                number: n,
                url: list_url(n),
            })
            .collect(),
    };
    let k = key(b, "answers-index", &idx, "");
    push(
        "answers/index.html".into(),
        Job::AnswersIndex(idx),
        CacheClass::Content,
        k,
    );

    let home: Vec<LinkView> = by_pub
        .iter()
        .rev()
        .take(inp.config.home_entries)
        .map(|p| link(&p.view))
        .collect();
    let k = key(b, "home", &home, "");
    push("index.html".into(), Job::Home(home), CacheClass::Home, k);

    let feed: Vec<(AnswerView, Instant)> = by_pub
        .iter()
        .rev()
        .take(inp.config.feed_entries)
        .map(|p| (p.view.clone(), p.updated_at))
        .collect();
    let feed_hashes: String = feed.iter().map(|(v, _)| v.content_hash.as_str()).collect();
    let k = key(
        g,
        "feed",
        &feed.iter().map(|(v, t)| (v, t.0)).collect::<Vec<_>>(),
        &feed_hashes,
    );
    push("atom.xml".into(), Job::Feed(feed), CacheClass::Content, k);

    for p in inp.plain {
        let k = key(b, "plain", p, &super::content_key(&p.body_html));
        push(
            url_to_path(&p.url),
            Job::Plain(p.clone()),
            CacheClass::Content,
            k,
        );
    }
    push(
        "404.html".into(),
        Job::NotFound,
        CacheClass::Content,
        key(b, "404", &(), ""),
    );

    // Sitemaps: one for the site's own pages, one per 50,000 item ids.
    let mut pages_urls: Vec<(String, Option<String>)> =
        vec![("/".into(), None), ("/answers/".into(), None)];
    pages_urls.extend((1..=n_pages).map(|n| (list_url(n), None)));
    pages_urls.extend(
        inp.plain
            .iter()
            .filter(|p| p.indexable)
            .map(|p| (p.url.clone(), None)),
    );
    let mut sitemap_files = vec!["sitemaps/pages.xml".to_string()];
    let mut by_chunk: std::collections::BTreeMap<i64, Vec<(i64, String, Option<String>)>> =
        Default::default();
    for p in inp.pages.iter().filter(|p| p.view.indexable) {
        by_chunk
            .entry(p.view.id / SITEMAP_CHUNK)
            .or_default()
            .push((p.view.id, p.view.url.clone(), Some(p.view.updated.clone())));
    }
    let k = key(g, "sitemap", &pages_urls, "");
    push(
        "sitemaps/pages.xml".into(),
        Job::Sitemap(pages_urls),
        CacheClass::Content,
        k,
    );
    for (chunk, mut urls) in by_chunk {
        urls.sort();
        let urls: Vec<(String, Option<String>)> =
            urls.into_iter().map(|(_, u, d)| (u, d)).collect();
        let path = format!("sitemaps/answers-{chunk}.xml");
        let k = key(g, "sitemap", &urls, "");
        sitemap_files.push(path.clone());
        push(path, Job::Sitemap(urls), CacheClass::Content, k);
    }
    let k = key(g, "sitemap-index", &sitemap_files, "");
    push(
        "sitemap.xml".into(),
        Job::SitemapIndex(sitemap_files),
        CacheClass::Content,
        k,
    );
    push(
        "robots.txt".into(),
        Job::Robots,
        CacheClass::Content,
        key(g, "robots", &(), ""),
    );

    for c in inp.copies {
        push(
            c.path.clone(),
            Job::Copy {
                source: c.source.clone(),
                sha256: c.sha256.clone(),
            },
            if c.immutable_url {
                CacheClass::Immutable
            } else {
                CacheClass::Asset
            },
            format!("copy:{}", c.sha256),
        );
    }
    out.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: i64, day: &str, published: i64) -> PageInput {
        PageInput {
            view: AnswerView {
                id,
                url: answer_url(id),
                title: format!("Item {id}"),
                day: day.into(),
                price: "1.00".into(),
                image_url: None,
                indexable: true,
                published: "2026-01-01".into(),
                updated: "2026-01-01".into(),
                prev: None,
                next: None,
                embargoed_until: None,
                content_hash: format!("h{id}"),
            },
            first_published_at: Instant(published),
            updated_at: Instant(published),
        }
    }

    fn keys(pages: &[PageInput]) -> std::collections::BTreeMap<String, String> {
        let config = BuildConfig {
            page_size: 2,
            feed_entries: 2,
            home_entries: 2,
        };
        plan(&Inputs {
            pages,
            plain: &[],
            copies: &[],
            render_fingerprint: "b",
            generated_fingerprint: "g",
            config: &config,
        })
        .into_iter()
        .map(|p| (p.path, p.key))
        .collect()
    }

    #[test]
    fn one_new_item_changes_few_keys() {
        let mut pages: Vec<PageInput> = (1..=9)
            .map(|i| page(i, &format!("2026-01-{i:02}"), i))
            .collect();
        let before = keys(&pages);
        pages.push(page(10, "2026-01-10", 10));
        let after = keys(&pages);
        let changed: Vec<&String> = after
            .keys()
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        // The new page, its previous neighbour, the last list page, the answers index, home,
        // feed and one sitemap chunk. (9 -> 10 items at 2 a page adds no list page, so the
        // sitemap of list pages stays.)
        assert_eq!(
            changed,
            vec![
                "answers/10/index.html",
                "answers/9/index.html",
                "answers/index.html",
                "answers/page/5/index.html",
                "atom.xml",
                "index.html",
                "sitemaps/answers-0.xml",
            ]
        );
        // An 11th item opens list page 6: page 5 gains a "newer" link, pages.xml lists page 6.
        pages.push(page(11, "2026-01-11", 11));
        let more = keys(&pages);
        assert!(more.contains_key("answers/page/6/index.html"));
        assert_ne!(
            more["answers/page/5/index.html"],
            after["answers/page/5/index.html"]
        );
        assert_ne!(more["sitemaps/pages.xml"], after["sitemaps/pages.xml"]);
        assert_eq!(
            more["answers/page/4/index.html"],
            after["answers/page/4/index.html"]
        );
        assert_eq!(more["answers/1/index.html"], after["answers/1/index.html"]);
    }

    fn n(l: &LinkView) -> (&str, &str, &str) {
        (l.url.as_str(), l.title.as_str(), l.day.as_str())
    }

    #[test]
    fn every_field_of_an_answer_view_changes_its_key() {
        let base = page(1, "2026-01-01", 1).view;
        let k =
            |v: &AnswerView| hash_answer("fp", v, v.prev.as_ref().map(n), v.next.as_ref().map(n));
        let link = LinkView {
            url: "/a/".into(),
            title: "t".into(),
            day: "d".into(),
        };
        let variants: Vec<Change<AnswerView>> = vec![
            Box::new(|v| v.id = 2),
            Box::new(|v| v.url.push('x')),
            Box::new(|v| v.title.push('x')),
            Box::new(|v| v.day.push('x')),
            Box::new(|v| v.price.push('x')),
            Box::new(|v| v.image_url = Some("/i.png".into())),
            Box::new(|v| v.indexable = false),
            Box::new(|v| v.published.push('x')),
            Box::new(|v| v.updated.push('x')),
            Box::new(move |v| v.prev = Some(link.clone())),
            Box::new(|v| {
                v.next = Some(LinkView {
                    url: "/b/".into(),
                    title: "u".into(),
                    day: "e".into(),
                })
            }),
            Box::new(|v| v.embargoed_until = Some("2027".into())),
            Box::new(|v| v.content_hash.push('x')),
        ];
        // A new field must be added to answer_key and above; the count is the reminder.
        each_change_changes_the_key(&base, &variants, k, 12);
    }

    type Change<V> = Box<dyn Fn(&mut V)>;

    /// Every change in `variants` gives `base` another key, and the view has `fields` fields.
    fn each_change_changes_the_key<V: Clone + Serialize>(
        base: &V,
        variants: &[Change<V>],
        key: impl Fn(&V) -> String,
        fields: usize,
    ) {
        for (i, change) in variants.iter().enumerate() {
            let mut v = base.clone();
            change(&mut v);
            assert_ne!(
                key(&v),
                key(base),
                "field change {i} did not change the key"
            );
        }
        let json = serde_json::to_value(base).unwrap();
        assert_eq!(json.as_object().unwrap().len(), fields);
    }

    #[test]
    fn every_field_of_a_list_view_changes_its_key() {
        let l = |u: &str| LinkView {
            url: u.into(),
            title: "t".into(),
            day: "d".into(),
        };
        let base = ListView {
            number: 2,
            url: list_url(2),
            entries: vec![l("/a/"), l("/b/")],
            prev_url: Some(list_url(1)),
            next_url: None,
        };
        let variants: Vec<Change<ListView>> = vec![
            Box::new(|v| v.number = 3),
            Box::new(|v| v.url.push('x')),
            Box::new(|v| v.entries.pop().map(drop).unwrap_or(())),
            Box::new(|v| v.entries[0].title.push('x')),
            Box::new(|v| v.entries[1].day.push('x')),
            Box::new(|v| v.entries[1].url.push('x')),
            Box::new(|v| v.entries.swap(0, 1)),
            Box::new(|v| v.prev_url = None),
            Box::new(|v| v.next_url = Some(list_url(3))),
        ];
        // A new field must be added to list_key and above; the count is the reminder.
        each_change_changes_the_key(&base, &variants, |v| list_key("fp", v), 5);
    }

    #[test]
    fn an_answer_key_covers_the_view_that_is_rendered() {
        let pages: Vec<PageInput> = (1..=3)
            .map(|i| page(i, &format!("2026-01-0{i}"), i))
            .collect();
        for i in 0..pages.len() {
            let v = answer_view(&pages, i);
            assert_eq!(v.prev.is_some(), i > 0);
            assert_eq!(v.next.is_some(), i + 1 < pages.len());
            assert_eq!(
                answer_key("fp", &pages, i),
                hash_answer("fp", &v, v.prev.as_ref().map(n), v.next.as_ref().map(n))
            );
        }
    }

    #[test]
    fn urls_map_to_files() {
        assert_eq!(url_to_path("/"), "index.html");
        assert_eq!(url_to_path("/answers/3/"), "answers/3/index.html");
        assert_eq!(url_to_path("/style.css"), "style.css");
    }
}
