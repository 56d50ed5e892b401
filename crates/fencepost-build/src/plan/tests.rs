use super::keys::list_key;
use super::*;
use crate::view::LinkView;
use fencepost_config::Config;
use serde::Serialize;

/// The view of item page `i` as its template sees it: with its neighbours.
fn item_view(pages: &[PageInput], i: usize) -> ItemPage {
    let mut v = pages[i].view.clone();
    (v.prev, v.next) = neighbours(pages, i);
    v
}

fn collections(text: &str) -> Collections {
    let c = Config::parse(text, std::path::Path::new("fencepost.toml")).unwrap();
    Collections::resolve(&c, std::path::Path::new("fencepost.toml")).unwrap()
}

fn page(cs: &Collections, coll: usize, id: i64, day: &str, published: i64) -> PageInput {
    let c = &cs.list[coll];
    PageInput {
        view: ItemPage {
            id: IdView::Number(id),
            collection: c.name.as_str().into(),
            url: c.item_url(&id.to_string(), None),
            title: format!("Item {id}"),
            day: Some(day.into()),
            image_url: None,
            indexable: true,
            published: "2026-01-01".into(),
            updated: "2026-01-01".into(),
            date: "2026-01-01T00:00:00Z".into(),
            lastmod: "2026-01-01T00:00:00Z".into(),
            prev: None,
            next: None,
            embargoed_until: None,
            embargoed_until_local: None,
            draft: false,
            summary_html: None,
            withdrawn_at: None,
            lang: "en".into(),
            translations: std::sync::Arc::from([]),
            terms: "".into(),
            data: "{}".into(),
            content_hash: format!("h{id}"),
            row: id,
        },
        first_published_at: Instant(published),
        updated_at: Instant(published),
        due: Instant(published),
        changed: Instant(published),
        coll,
        date: chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d").unwrap(),
        weight: None,
        json_digest: None,
    }
}

fn keys(cs: &Collections, pages: &[PageInput]) -> std::collections::BTreeMap<String, String> {
    planned_for(cs, pages)
        .into_iter()
        .map(|p| (p.path, p.key))
        .collect()
}

/// Every file planned for `pages` (2 entries a page).
fn planned_for(cs: &Collections, pages: &[PageInput]) -> Vec<Planned> {
    let config = BuildConfig {
        page_size: 2,
        feed_entries: 2,
        home_entries: 2,
        ..BuildConfig::default()
    };
    let mut cs = cs.clone();
    for c in &mut cs.list {
        c.page_size = 2;
    }
    plan(&Inputs {
        pages,
        plain: &[],
        list_texts: &[],
        root_texts: &Default::default(),
        copies: &[],
        resources: &[],
        render_fingerprint: "b",
        generated_fingerprint: "g",
        config: &config,
        collections: &cs,
        notices: &[],
        rss: false,
        robots: super::RobotsFrom::Generated,
        transparency: false,
    })
}

fn tagged(cs: &Collections, id: i64, tags: &[&str]) -> PageInput {
    let mut p = page(cs, 0, id, &format!("2026-01-{id:02}"), id);
    if !tags.is_empty() {
        p.view.terms = serde_json::json!({ "tags": tags }).to_string().into();
    }
    p
}

const TAGGED: &str = "[collections.notes]\nid = \"integer\"\ntaxonomies = [\"tags\"]\n[taxonomies.tags]\npage_size = 2\n";

#[test]
fn terms_come_from_the_pages_planned_and_nothing_else() {
    let cs = collections(TAGGED);
    let pages: Vec<PageInput> = (1..=5)
        .map(|i| {
            tagged(
                &cs,
                i,
                if i % 2 == 0 {
                    &["Rust", "web"]
                } else {
                    &["Rust"]
                },
            )
        })
        .collect();
    let k = keys(&cs, &pages);
    // Rust: 5 items at 2 a page = 3 numbered pages and the landing page; web: 2 items, 1 page.
    for p in [
        "tags/index.html",
        "tags/rust/index.html",
        "tags/rust/page/1/index.html",
        "tags/rust/page/3/index.html",
        "tags/rust/atom.xml",
        "tags/web/index.html",
        "tags/web/page/1/index.html",
        "tags/web/atom.xml",
        "sitemaps/taxonomy-tags-0.xml",
    ] {
        assert!(
            k.contains_key(p),
            "{p} missing from {:?}",
            k.keys().collect::<Vec<_>>()
        );
    }
    assert!(!k.contains_key("tags/rust/page/4/index.html"));
    // A term whose only item is not among the planned pages (embargoed, withdrawn, expired:
    // the source never gives them) has no file at all.
    let without: Vec<PageInput> = pages
        .iter()
        .filter(|p| p.view.id != IdView::Number(4))
        .cloned()
        .collect();
    let mut only = without.clone();
    only[1].view.terms = serde_json::json!({ "tags": ["Rust"] }).to_string().into();
    let k2 = keys(&cs, &only);
    assert!(
        !k2.keys().any(|p| p.contains("web")),
        "{:?}",
        k2.keys().collect::<Vec<_>>()
    );
}

#[test]
fn one_new_tagged_item_changes_only_what_lists_it() {
    let cs = collections(TAGGED);
    let mut pages: Vec<PageInput> = (1..=9).map(|i| tagged(&cs, i, &["Rust"])).collect();
    pages.push(tagged(&cs, 10, &["Go"]));
    let before = keys(&cs, &pages);
    pages.push(tagged(&cs, 11, &["Rust"]));
    let after = keys(&cs, &pages);
    let changed: Vec<&str> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(String::as_str)
        .collect();
    assert_eq!(
        changed,
        vec![
            "atom.xml",
            "index.html",
            "notes/10/index.html",
            "notes/11/index.html",
            "notes/atom.xml",
            "notes/index.html",
            "notes/page/5/index.html",
            "notes/page/6/index.html",
            "sitemaps/notes-0.xml",
            "sitemaps/pages.xml",
            "tags/index.html",
            "tags/rust/atom.xml",
            "tags/rust/index.html",
            "tags/rust/page/5/index.html",
        ],
        "the Go term and Rust's earlier pages stay as they are"
    );
}

#[test]
fn one_new_item_changes_few_keys() {
    let cs = collections("");
    let mut pages: Vec<PageInput> = (1..=9)
        .map(|i| page(&cs, 0, i, &format!("2026-01-{i:02}"), i))
        .collect();
    let before = keys(&cs, &pages);
    pages.push(page(&cs, 0, 10, "2026-01-10", 10));
    let after = keys(&cs, &pages);
    let changed: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    // The new page, its previous neighbour, the last list page, the list index, home, feed
    // and one sitemap chunk. (9 -> 10 items at 2 a page adds no list page, so the sitemap of
    // list pages stays.)
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
    pages.push(page(&cs, 0, 11, "2026-01-11", 11));
    let more = keys(&cs, &pages);
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

#[test]
fn collections_keep_to_themselves() {
    let cs = collections(
        "[collections.notes]\nid = \"integer\"\n[collections.words]\nid = \"integer\"\nlist_url = \"\"\n",
    );
    let mut pages = vec![
        page(&cs, 0, 1, "2026-01-01", 1),
        page(&cs, 0, 2, "2026-01-02", 2),
        page(&cs, 1, 1, "2026-01-01", 3),
    ];
    let before = keys(&cs, &pages);
    assert!(before.contains_key("notes/1/index.html"));
    assert!(before.contains_key("words/1/index.html"));
    assert!(before.contains_key("notes/atom.xml"));
    assert!(!before.keys().any(|k| k.starts_with("words/page")));
    assert!(before.contains_key("sitemaps/words-0.xml"));
    // Neighbours stay within a collection.
    let v = item_view(&pages, 1);
    assert_eq!(v.next, None);
    assert_eq!(v.prev.as_ref().map(|l| l.url.as_str()), Some("/notes/1/"));
    // A new word changes no page of notes.
    pages.push(page(&cs, 1, 2, "2026-01-02", 4));
    let after = keys(&cs, &pages);
    for p in [
        "notes/1/index.html",
        "notes/2/index.html",
        "notes/index.html",
        "notes/atom.xml",
    ] {
        assert_eq!(before[p], after[p], "{p}");
    }
    assert_ne!(before["index.html"], after["index.html"]);
}

fn n(l: &LinkView) -> (&str, &str, Option<&str>) {
    (l.url.as_str(), l.title.as_str(), l.day.as_deref())
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
fn every_field_of_an_item_view_changes_its_key() {
    let cs = collections("");
    let base = page(&cs, 0, 1, "2026-01-01", 1).view;
    let k = |v: &ItemPage| hash_item("fp", v, v.prev.as_ref().map(n), v.next.as_ref().map(n));
    let link = LinkView {
        url: "/a/".into(),
        title: "t".into(),
        day: Some("d".into()),
    };
    let variants: Vec<Change<ItemPage>> = vec![
        Box::new(|v| v.id = IdView::Number(2)),
        Box::new(|v| v.collection = "other".into()),
        Box::new(|v| v.url.push('x')),
        Box::new(|v| v.title.push('x')),
        Box::new(|v| v.day = None),
        Box::new(|v| v.image_url = Some("/i.png".into())),
        Box::new(|v| v.indexable = false),
        Box::new(|v| v.published.push('x')),
        Box::new(|v| v.updated.push('x')),
        Box::new(|v| v.date.push('x')),
        Box::new(|v| v.lastmod.push('x')),
        Box::new(move |v| v.prev = Some(link.clone())),
        Box::new(|v| {
            v.next = Some(LinkView {
                url: "/b/".into(),
                title: "u".into(),
                day: None,
            })
        }),
        Box::new(|v| v.embargoed_until = Some("2027".into())),
        Box::new(|v| v.embargoed_until_local = Some("2027-01-01 01:00 CET".into())),
        Box::new(|v| v.draft = true),
        Box::new(|v| v.content_hash.push('x')),
        Box::new(|v| v.summary_html = Some("<p>s</p>".into())),
        Box::new(|v| v.withdrawn_at = Some("2027".into())),
        Box::new(|v| v.terms = "{\"tags\":[\"a\"]}".into()),
        Box::new(|v| v.lang = "fr".into()),
        Box::new(|v| {
            v.translations = std::sync::Arc::from([crate::view::Translation {
                lang: "fr".into(),
                name: "Français".into(),
                url: "/fr/a/".into(),
                title: "t".into(),
            }])
        }),
    ];
    // A new field must be added to hash_item and above; the count is the reminder (data and
    // the body are covered by content_hash).
    each_change_changes_the_key(&base, &variants, k, 20);
}

#[test]
fn every_field_of_a_list_view_changes_its_key() {
    let cs = collections("");
    let pages: Vec<PageInput> = (1..=2)
        .map(|i| page(&cs, 0, i, &format!("2026-01-0{i}"), i))
        .collect();
    let base = ListView {
        collection: "answers".into(),
        number: 2,
        url: "/answers/page/2/".into(),
        entries: vec![0, 1],
        prev_url: Some("/answers/page/1/".into()),
        next_url: None,
    };
    type Both = (ListView, Vec<PageInput>);
    let variants: Vec<Change<Both>> = vec![
        Box::new(|(v, _)| v.collection = "x".into()),
        Box::new(|(v, _)| v.number = 3),
        Box::new(|(v, _)| v.url.push('x')),
        Box::new(|(v, _)| v.entries.truncate(1)),
        Box::new(|(v, _)| v.entries.swap(0, 1)),
        Box::new(|(v, _)| v.prev_url = None),
        Box::new(|(v, _)| v.next_url = Some("/answers/page/3/".into())),
        // Every field an entry shows.
        Box::new(|(_, p)| p[0].view.title.push('x')),
        Box::new(|(_, p)| p[1].view.day = None),
        Box::new(|(_, p)| p[1].view.url.push('x')),
        Box::new(|(_, p)| p[1].view.published.push('x')),
        Box::new(|(_, p)| p[1].view.date.push('x')),
        Box::new(|(_, p)| p[1].view.lastmod.push('x')),
        Box::new(|(_, p)| p[1].view.data = "{\"a\":1}".into()),
        Box::new(|(_, p)| p[1].view.id = IdView::Slug("s".into())),
        Box::new(|(_, p)| p[1].view.collection = "y".into()),
        Box::new(|(_, p)| p[1].view.summary_html = Some("<p>s</p>".into())),
    ];
    let k = |(v, p): &Both| list_key("fp", v, p);
    let both: Both = (base.clone(), pages.clone());
    for (i, change) in variants.iter().enumerate() {
        let mut changed = (base.clone(), pages.clone());
        change(&mut changed);
        assert_ne!(k(&changed), k(&both), "change {i} did not change the key");
    }
    // A new field must be added to list_key and above; the counts are the reminder.
    assert_eq!(
        serde_json::to_value(&base)
            .unwrap()
            .as_object()
            .unwrap()
            .len(),
        6
    );
    let entry = serde_json::to_value(crate::view::EntryView(&pages[0].view)).unwrap();
    assert_eq!(entry.as_object().unwrap().len(), 9);
}

#[test]
fn an_item_key_covers_the_view_that_is_rendered() {
    let cs = collections("");
    let pages: Vec<PageInput> = (1..=3)
        .map(|i| page(&cs, 0, i, &format!("2026-01-0{i}"), i))
        .collect();
    for i in 0..pages.len() {
        let v = item_view(&pages, i);
        assert_eq!(v.prev.is_some(), i > 0);
        assert_eq!(v.next.is_some(), i + 1 < pages.len());
        assert_eq!(
            item_key("fp", &pages, i),
            hash_item("fp", &v, v.prev.as_ref().map(n), v.next.as_ref().map(n))
        );
    }
}

#[test]
fn urls_map_to_files() {
    assert_eq!(url_to_path("/"), "index.html");
    assert_eq!(url_to_path("/answers/3/"), "answers/3/index.html");
    assert_eq!(url_to_path("/style.css"), "style.css");
}

#[test]
fn a_collection_sorted_by_weight_and_numbered_from_the_newest_reads_as_hugo_and_zola_list_it() {
    let (cs, pages) = weighted_docs();
    let ids = |entries: &[u32]| -> Vec<String> {
        entries
            .iter()
            .map(|&i| pages[i as usize].view.id.text())
            .collect()
    };
    let reading: Vec<String> = pages.iter().map(|p| p.view.id.text()).collect();
    assert_eq!(reading, ["5", "2", "4", "1", "3"]);
    // Next is the heavier page, prev the lighter.
    let v = item_view(&pages, 1);
    assert_eq!(v.prev.map(|l| l.url), Some("/docs/5/".to_string()));
    assert_eq!(v.next.map(|l| l.url), Some("/docs/4/".to_string()));
    let planned = planned_for(&cs, &pages);
    let job = |path: &str| {
        &planned
            .iter()
            .find(|p| p.path == path)
            .unwrap_or_else(|| panic!("{path}"))
            .job
    };
    // The list URL is page 1; page/2/ and page/3/ the next ones; page/1/ redirects there.
    let Job::ListIndex(_, idx) = job("docs/index.html") else {
        panic!()
    };
    assert_eq!(ids(&idx.latest), ["5", "2"]);
    assert_eq!(idx.prev_url.as_deref(), Some("/docs/page/2/"));
    assert_eq!(
        idx.archive
            .iter()
            .map(|a| a.url.as_str())
            .collect::<Vec<_>>(),
        ["/docs/", "/docs/page/2/", "/docs/page/3/"]
    );
    let Job::List(_, two) = job("docs/page/2/index.html") else {
        panic!()
    };
    assert_eq!(
        (
            ids(&two.entries),
            two.next_url.as_deref(),
            two.prev_url.as_deref()
        ),
        (
            vec!["4".to_string(), "1".to_string()],
            Some("/docs/"),
            Some("/docs/page/3/")
        )
    );
    let Job::List(_, three) = job("docs/page/3/index.html") else {
        panic!()
    };
    assert_eq!(
        (ids(&three.entries), three.prev_url.as_deref()),
        (vec!["3".to_string()], None)
    );
    assert!(matches!(job("docs/page/1/index.html"), Job::Alias { target } if target == "/docs/"));
    // The feed stays newest first, by date.
    let Job::Feed(f) = job("docs/atom.xml") else {
        panic!()
    };
    let fed: Vec<String> = f.entries.iter().map(|(v, _, _)| v.id.text()).collect();
    assert_eq!(fed, ["5", "4"]);
}

/// A `docs` collection sorted by weight, numbered from the newest: (id, weight, published)
/// 2 and 5 weigh 1 (5 is newer), 4 weighs 2, 1 weighs 3, 3 none; in reading order.
fn weighted_docs() -> (Collections, Vec<PageInput>) {
    let cs = collections(
        "[collections.docs]\nid = \"integer\"\nsort_by = \"weight\"\npagination = \"newest_first\"\n",
    );
    let mut pages: Vec<PageInput> = [
        (1, Some(3), 1),
        (2, Some(1), 2),
        (3, None, 3),
        (4, Some(2), 4),
        (5, Some(1), 5),
    ]
    .into_iter()
    .map(|(id, w, at)| {
        let mut p = page(&cs, 0, id, "2026-01-01", at);
        p.weight = Some(w.unwrap_or(i64::MAX));
        p
    })
    .collect();
    pages.sort_by(|a, b| a.order().cmp(&b.order()));
    (cs, pages)
}

/// `PageInput::in_order` (each page moved once) orders as sorting the pages themselves does,
/// across collections, dates, weights and ties broken by id; the plan's files come sorted by
/// path.
#[test]
fn pages_and_files_in_order_as_a_sort_of_the_values_gives_them() {
    let cs = collections(
        "[collections.news]\nid = \"integer\"\n[collections.docs]\nid = \"integer\"\nsort_by = \"weight\"\n",
    );
    let mut pages: Vec<PageInput> = (0..300)
        .map(|i| {
            let coll = (i * 7 % 3 == 0) as usize;
            let mut p = page(&cs, coll, (i * 37 % 300) + 1, "2026-01-01", i * 13 % 50);
            if coll == 1 {
                p.weight = Some([1, 2, i64::MAX][i as usize % 3]);
            }
            p
        })
        .collect();
    pages.dedup_by_key(|p| (p.coll, p.view.id.clone()));
    let ids = |ps: &[PageInput]| -> Vec<(usize, String)> {
        ps.iter().map(|p| (p.coll, p.view.id.text())).collect()
    };
    let mut sorted = pages.clone();
    sorted.sort_by(|a, b| a.order().cmp(&b.order()));
    let ordered = PageInput::in_order(pages);
    assert_eq!(ids(&ordered), ids(&sorted));
    let files = planned_for(&cs, &ordered);
    assert!(files.windows(2).all(|w| w[0].path < w[1].path));
}
