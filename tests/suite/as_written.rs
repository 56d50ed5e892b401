//! Issue 36: content as people write it. An item's date is its due instant, never the moment
//! a publisher committed it: the same content and config give the same pages, lists and feeds
//! whatever order, host or time the publishers ran.
use crate::common::*;

/// Posts with tags, written in an order that is not their dates' (a backfill: the oldest
/// post comes last), each with its instant.
const POSTS: &[(&str, &str, &str)] = &[
    ("gamma", "2026-11-05T09:00:00Z", "[\"rust\", \"web\"]"),
    ("alpha", "2026-11-01T09:00:00Z", "[\"rust\"]"),
    ("delta", "2026-11-07T18:30:00Z", "[\"web\"]"),
    ("beta", "2026-11-03T12:00:00Z", "[\"rust\", \"web\"]"),
    ("epsilon", "2026-11-08T07:15:00Z", "[\"rust\"]"),
    ("zeta", "2026-11-08T07:15:00Z", "[\"web\"]"),
    ("eta", "2026-10-20T10:00:00Z", "[\"rust\", \"web\"]"),
];

/// The features fixture (tags with pages and feeds, Atom and RSS) with its posts replaced by
/// `POSTS`, lists two entries a page.
fn blog() -> TestSite {
    let s = fixture("features");
    for f in ["hello", "second", "secret"] {
        std::fs::remove_file(s.path(&format!("content/posts/{f}.md"))).unwrap();
    }
    for f in ["adv-1", "adv-2"] {
        std::fs::remove_file(s.path(&format!("content/advisories/{f}.md"))).unwrap();
    }
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let cfg = cfg.replace(
        "taxonomies = [\"tags\"]\n",
        "taxonomies = [\"tags\"]\npage_size = 2\n",
    );
    s.write("fencepost.toml", &cfg);
    s
}

fn write_post(s: &TestSite, (id, at, tags): (&str, &str, &str)) {
    s.write(
        &format!("content/posts/{id}.md"),
        &format!(
            "+++\ntitle = \"Post {id}\"\npublish_at = {at}\ntags = {tags}\n+++\n\nAbout {id}.\n"
        ),
    );
}

#[test]
fn the_same_content_gives_the_same_site_whoever_published_it_when() {
    let later = "2026-12-01T00:00:00Z";
    // One ledger: each post committed in the order above, published at its instant or
    // some hours after it, and the site built after each publish.
    let a = blog();
    let mut now = chrono::DateTime::parse_from_rfc3339("2026-10-01T00:00:00Z").unwrap();
    for (n, p) in POSTS.iter().enumerate() {
        write_post(&a, *p);
        let due = chrono::DateTime::parse_from_rfc3339(p.1).unwrap();
        now = now.max(due + chrono::Duration::hours(n as i64 % 3));
        let t = now.to_rfc3339();
        a.json(&["publish", "--build", "--now", &t]);
    }
    a.json(&["publish", "--build", "--now", later]);
    // Another: a fresh ledger (a CI runner's) that publishes everything at once, later.
    let b = blog();
    for p in POSTS {
        write_post(&b, *p);
    }
    let r = b.json(&["publish", "--build", "--now", later]);
    assert_eq!(r["published"].as_array().map(Vec::len), Some(POSTS.len()));
    let (ta, tb) = (tree(&a.current_dir()), tree(&b.current_dir()));
    let names: Vec<&String> = ta.keys().collect();
    for want in [
        "posts/index.html",
        "posts/page/1/index.html",
        "posts/page/4/index.html",
        "posts/atom.xml",
        "posts/rss.xml",
        "atom.xml",
        "tags/rust/index.html",
        "tags/rust/page/1/index.html",
        "tags/rust/atom.xml",
        "sitemaps/posts-0.xml",
        "index.html",
        "posts/eta/index.html",
    ] {
        assert!(ta.contains_key(want), "{want} not built: {names:?}");
    }
    // Every file the public gets; `manifest.json` is the revision's own record (its ledger,
    // revision and audit tip), not a page.
    let text = |b: Option<&Vec<u8>>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    for path in ta.keys().filter(|p| *p != "manifest.json") {
        let (x, y) = (text(ta.get(path)), text(tb.get(path)));
        assert!(x == y, "{path} differs:\n{x:?}\n---\n{y:?}");
    }
    assert_eq!(ta.len(), tb.len());
    // Dates are the items' own: newest first by their instants, ties by id.
    let feed = String::from_utf8_lossy(&ta["posts/atom.xml"]).into_owned();
    let order: Vec<&str> = feed
        .match_indices("<id>http://localhost:8080/posts/")
        .map(|(i, _)| feed[i + 32..].split('/').next().unwrap())
        .filter(|id| *id != "<")
        .collect();
    assert_eq!(
        order,
        ["zeta", "epsilon", "delta", "gamma", "beta", "alpha", "eta"],
        "{feed}"
    );
    assert!(
        feed.contains("<published>2026-10-20T10:00:00Z</published>"),
        "{feed}"
    );
    let page = String::from_utf8_lossy(&ta["posts/eta/index.html"]).into_owned();
    assert!(page.contains("20 October 2026"), "{page}");
}
