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

/// Issue 36.2: `draft = true` on every due rule: never public, never counted, in no output;
/// named under `drafts` by `publish` and `status`; previewed by `serve --watch` with its
/// banner; published at its due instant once the key goes. A public item that becomes a
/// draft is taken down, and comes back when the key goes.
#[test]
fn a_draft_is_never_public_and_publishes_when_the_key_goes() {
    for (rule, when) in [
        ("end_of_day", "day = 2026-11-20"),
        ("start_of_day", "day = 2026-11-20"),
        ("publish_at", "publish_at = 2026-11-20T09:00:00Z"),
    ] {
        let s = TestSite::new();
        let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
        s.write(
            "fencepost.toml",
            &format!("{cfg}\n[collections.notes]\nid = \"slug\"\ndue = \"{rule}\"\ntemplate = \"note.html\"\n"),
        );
        s.write(
            "templates/note.html",
            "{% extends \"base.html\" %}{% block content %}<h1>{{ page.title }}</h1>{{ page.body_html | safe }}{% endblock content %}",
        );
        let text =
            |draft: &str| format!("+++\ntitle = \"Secret plan\"\n{when}\n{draft}+++\n\nNot yet.\n");
        s.write("content/notes/plan.md", &text("draft = true\n"));
        let r = s.json(&["publish", "--build", "--now", NOW]);
        assert_eq!(r["published"], serde_json::json!([]), "{rule}: {r}");
        assert_eq!(r["drafts"][0]["id"], "notes/plan", "{rule}: {r}");
        assert_eq!(
            r["drafts"][0]["file"], "content/notes/plan.md",
            "{rule}: {r}"
        );
        assert_eq!(r["embargoed"], 0, "{rule}: a draft is not counted: {r}");
        let st = s.status();
        assert_eq!(st["drafts"][0]["id"], "notes/plan", "{st}");
        assert_eq!(st["items"]["pending"], 0, "{rule}: {st}");
        assert_eq!(st["items"]["published"], 0, "{rule}: {st}");
        assert_nothing_reveals(
            rule,
            &files_under(&s.current_dir()),
            &["plan", "Secret plan", "Not yet"],
        );
        // Published at its instant once the key goes.
        s.write("content/notes/plan.md", &text(""));
        let r = s.json(&["publish", "--build", "--now", NOW]);
        assert_eq!(
            r["published"],
            serde_json::json!(["notes/plan"]),
            "{rule}: {r}"
        );
        assert_eq!(r["drafts"], serde_json::json!([]), "{r}");
        assert!(s.current_dir().join("notes/plan/index.html").exists());
        // Public, then a draft again: taken down; the key gone: back.
        s.write("content/notes/plan.md", &text("draft = true\n"));
        let r = s.json(&["publish", "--build", "--now", NOW]);
        assert_eq!(
            r["withdrawn"],
            serde_json::json!(["notes/plan"]),
            "{rule}: {r}"
        );
        assert_eq!(r["drafts"][0]["id"], "notes/plan", "{r}");
        assert!(!s.current_dir().join("notes/plan/index.html").exists());
        let r = s.json(&["publish", "--now", NOW]);
        assert_eq!(r["drafts"][0]["id"], "notes/plan", "named every run: {r}");
        s.write("content/notes/plan.md", &text(""));
        let r = s.json(&["publish", "--now", NOW]);
        assert_eq!(
            r["published"],
            serde_json::json!(["notes/plan"]),
            "{rule}: {r}"
        );
    }
}

/// The preview shows a draft, with its banner; the public site never does.
#[test]
fn serve_watch_previews_a_draft_with_its_banner() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.item_with(2, "2026-11-02", "draft = true\n", "Draft body.");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(r["drafts"][0]["id"], 2, "{r}");
    let srv = s.serve(&["--watch"]);
    let page = srv.get("/answers/2/");
    assert_eq!(page.status, 200);
    assert!(
        page.text().contains("Draft: not published") && page.text().contains("Draft body."),
        "{}",
        page.text()
    );
    drop(srv);
    let public = s.serve(&[]);
    assert_eq!(public.get("/answers/2/").status, 404);
}

/// `fencepost new` writes a draft.
#[test]
fn new_writes_a_draft() {
    let s = TestSite::new();
    let w = s.json(&["new", "answers", "--now", NOW]);
    let text = std::fs::read_to_string(s.path(w["path"].as_str().unwrap())).unwrap();
    assert!(text.contains("\ndraft = true\n"), "{text}");
    let r = s.json(&["publish", "--now", "2027-12-01T00:00:00Z"]);
    assert_eq!(r["published"], serde_json::json!([]), "{r}");
    assert_eq!(
        r["drafts"][0]["id"],
        w["id"].as_str().unwrap().parse::<i64>().unwrap(),
        "{r}"
    );
}
