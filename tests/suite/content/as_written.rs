//! Content as written: the item's own dates and order, drafts, ids with case and dots, local
//! times across DST, YAML front matter and page bundles.
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
    // Every file the public gets; `.fencepost/` holds the revision's own record (its ledger,
    // revision and audit tip), not a page.
    let text = |b: Option<&Vec<u8>>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    for path in ta.keys().filter(|p| !p.starts_with(".fencepost/")) {
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
        let s = notes_site(&format!("due = \"{rule}\"\n"));
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

/// A site with ids as advisories and releases keep them.
fn cased_ids_site() -> TestSite {
    let s = site_with(
        "[collections.advisories]\nid = \"slug\"\ndue = \"publish_at\"\ntemplate = \"note.html\"\nlist_url = \"/advisories/\"\n\n[collections.releases]\nid = \"slug\"\ndue = \"publish_at\"\ntemplate = \"note.html\"\n",
    );
    let item = |title: &str, id: Option<&str>| {
        let id = id.map(|i| format!("id = \"{i}\"\n")).unwrap_or_default();
        format!("+++\n{id}title = \"{title}\"\npublish_at = 2026-11-01T00:00:00Z\n+++\n\nText.\n")
    };
    // The id from the file's name, and from `id`.
    s.write("content/advisories/FPSA-2026-0007.md", &item("Seven", None));
    s.write(
        "content/advisories/cve.md",
        &item("A CVE", Some("CVE-2026-12345")),
    );
    s.write("content/releases/1.2.0.md", &item("One two oh", None));
    s
}

/// Issue 36.3: ids keep their case and dots, in URLs, on every origin.
#[test]
fn ids_keep_their_case_and_dots_on_every_origin() {
    let s = cased_ids_site();
    let r = s.json(&["publish", "--build", "--now", NOW]);
    let mut published: Vec<String> = serde_json::from_value(r["published"].clone()).unwrap();
    published.sort();
    assert_eq!(
        published,
        [
            "advisories/CVE-2026-12345",
            "advisories/FPSA-2026-0007",
            "releases/1.2.0"
        ],
        "{r}"
    );
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let local = s.serve(&[]);
    let folder = s.serve(&["--from", &url]);
    let edge = Edge::start(bucket.path(), "", &["--pointer-ttl-ms", "0"]);
    for addr in [&local.addr, &folder.addr, &edge.addr] {
        for (path, text) in [
            ("/advisories/FPSA-2026-0007/", "Seven (FPSA-2026-0007)"),
            ("/advisories/CVE-2026-12345/", "A CVE (CVE-2026-12345)"),
            ("/releases/1.2.0/", "One two oh (1.2.0)"),
        ] {
            let r = http(addr, "GET", path, &[]);
            assert_eq!(r.status, 200, "{addr} {path}");
            assert!(r.text().contains(text), "{addr} {path}: {}", r.text());
        }
        // Another case is another URL: not found, never someone else's page.
        assert_eq!(
            http(addr, "GET", "/advisories/fpsa-2026-0007/", &[]).status,
            404
        );
    }
    let list = http(&local.addr, "GET", "/advisories/", &[]).text();
    assert!(list.contains("/advisories/FPSA-2026-0007/"), "{list}");
}

/// Two ids of one collection equal but for case are refused by name: case-insensitive file
/// systems and buckets would hold one of them. Everything else publishes.
#[test]
fn ids_that_differ_only_in_case_are_refused_by_name() {
    let s = cased_ids_site();
    s.write(
        "content/advisories/Fpsa-2026-0007.md",
        "+++\ntitle = \"Imposter\"\npublish_at = 2026-11-01T00:00:00Z\n+++\n\nNo.\n",
    );
    let out = s
        .cmd(&["publish", "--json", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(HELD));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let invalid = r["invalid"].as_array().unwrap();
    assert_eq!(invalid.len(), 2, "{r}");
    for i in invalid {
        let e = i["error"].as_str().unwrap();
        assert!(e.contains("only in case"), "{e}");
        assert_eq!(i["key"], "id", "{r}");
    }
    let files: Vec<&str> = invalid
        .iter()
        .map(|i| i["file"].as_str().unwrap())
        .collect();
    assert!(
        files.contains(&"content/advisories/Fpsa-2026-0007.md"),
        "{r}"
    );
    assert!(
        files.contains(&"content/advisories/FPSA-2026-0007.md"),
        "{r}"
    );
    let mut published: Vec<String> = serde_json::from_value(r["published"].clone()).unwrap();
    published.sort();
    assert_eq!(
        published,
        ["advisories/CVE-2026-12345", "releases/1.2.0"],
        "{r}"
    );
    // The imposter gone, the advisory publishes; `new --id` refuses its id in another case.
    std::fs::remove_file(s.path("content/advisories/Fpsa-2026-0007.md")).unwrap();
    let r = s.json(&["publish", "--now", NOW]);
    assert_eq!(
        r["published"],
        serde_json::json!(["advisories/FPSA-2026-0007"]),
        "{r}"
    );
    let e = s.failing(&["new", "advisories", "--id", "fpsa-2026-0007", "--now", NOW]);
    assert!(e.contains("fpsa-2026-0007"), "{e}");
}

/// A site with one collection `notes` (slug ids) configured by `extra` (TOML lines).
fn notes_site(extra: &str) -> TestSite {
    site_with(&format!(
        "[collections.notes]\nid = \"slug\"\ntemplate = \"note.html\"\n{extra}"
    ))
}

/// A new site with `collections` (TOML) added to its config, and `templates/note.html`: an
/// item's title and id, and its body.
fn site_with(collections: &str) -> TestSite {
    let s = TestSite::new();
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write("fencepost.toml", &format!("{cfg}\n{collections}"));
    s.write(
        "templates/note.html",
        "{% extends \"base.html\" %}{% block content %}<h1>{{ page.title }} ({{ page.id }})</h1>{{ page.body_html | safe }}{% endblock content %}",
    );
    s
}

/// Not published one second before `utc`, published at it.
fn due_exactly_at(s: &TestSite, utc: &str, what: &str) {
    let at = chrono::DateTime::parse_from_rfc3339(utc).unwrap();
    let before = (at - chrono::Duration::seconds(1)).to_rfc3339();
    let r = s.json(&["publish", "--now", &before]);
    assert_eq!(r["published"], serde_json::json!([]), "{what}: {r}");
    assert_eq!(r["embargoed"], 1, "{what}: {r}");
    assert_eq!(r["next_embargo_at"], utc, "{what}: {r}");
    let r = s.json(&["publish", "--now", utc]);
    assert_eq!(
        r["published"],
        serde_json::json!(["notes/n"]),
        "{what}: {r}"
    );
}

/// Issue 36.4: `publish_at` without an offset is wall-clock time in the collection's zone,
/// across the US and EU daylight-saving changes (the hour the clocks go back: its first
/// occurrence).
#[test]
fn publish_at_without_an_offset_is_local_time_across_both_dst_changes() {
    for (zone, local, utc) in [
        (
            "America/New_York",
            "2027-03-13T09:00:00",
            "2027-03-13T14:00:00Z",
        ),
        (
            "America/New_York",
            "2027-03-14T09:00:00",
            "2027-03-14T13:00:00Z",
        ),
        (
            "America/New_York",
            "2027-11-07T01:30:00",
            "2027-11-07T05:30:00Z",
        ),
        (
            "America/New_York",
            "2027-11-07T09:00:00",
            "2027-11-07T14:00:00Z",
        ),
        (
            "Europe/Berlin",
            "2027-03-28T09:00:00",
            "2027-03-28T07:00:00Z",
        ),
        (
            "Europe/Berlin",
            "2027-10-31T09:00:00",
            "2027-10-31T08:00:00Z",
        ),
    ] {
        let s = notes_site(&format!("due = \"publish_at\"\ntimezone = \"{zone}\"\n"));
        s.write(
            "content/notes/n.md",
            &format!("+++\ntitle = \"N\"\npublish_at = {local}\n+++\n\nText.\n"),
        );
        due_exactly_at(&s, utc, &format!("{zone} {local}"));
    }
}

/// Issue 36.4: `due_time = "09:00"` with the day rules: 09:00 local on the item's day
/// (`start_of_day`) or the day after (`end_of_day`), whatever the offset that day.
#[test]
fn due_time_is_local_time_across_both_dst_changes() {
    for (zone, rule, day, utc) in [
        (
            "America/New_York",
            "end_of_day",
            "2027-03-13",
            "2027-03-14T13:00:00Z",
        ),
        (
            "America/New_York",
            "start_of_day",
            "2027-03-13",
            "2027-03-13T14:00:00Z",
        ),
        (
            "America/New_York",
            "start_of_day",
            "2027-11-07",
            "2027-11-07T14:00:00Z",
        ),
        (
            "Europe/Berlin",
            "end_of_day",
            "2027-10-30",
            "2027-10-31T08:00:00Z",
        ),
        (
            "Europe/Berlin",
            "start_of_day",
            "2027-03-28",
            "2027-03-28T07:00:00Z",
        ),
    ] {
        let s = notes_site(&format!(
            "due = \"{rule}\"\ntimezone = \"{zone}\"\ndue_time = \"09:00\"\n"
        ));
        s.write(
            "content/notes/n.md",
            &format!("+++\ntitle = \"N\"\nday = {day}\n+++\n\nText.\n"),
        );
        due_exactly_at(&s, utc, &format!("{zone} {rule} {day}"));
    }
    // Not with `due = "publish_at"`: such items carry their own time.
    let s = notes_site("due = \"publish_at\"\ndue_time = \"09:00\"\n");
    let e = s.failing(&["publish", "--now", NOW]);
    assert!(e.contains("collections.notes.due_time"), "{e}");
}

/// Issue 36.4: a wall-clock time the zone skips is refused by name; a legacy zone name that
/// keeps one offset all year gets a warning naming the zone to use.
#[test]
fn a_time_in_a_dst_gap_is_refused_and_a_legacy_zone_is_warned_about() {
    let s = notes_site("due = \"publish_at\"\ntimezone = \"America/New_York\"\n");
    s.write(
        "content/notes/n.md",
        "+++\ntitle = \"N\"\npublish_at = 2027-03-14T02:30:00\n+++\n\nText.\n",
    );
    let out = s
        .cmd(&["publish", "--json", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(HELD));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["invalid"][0]["key"], "publish_at", "{r}");
    let e = r["invalid"][0]["error"].as_str().unwrap();
    assert!(
        e.contains("2027-03-14T02:30:00 does not exist in America/New_York"),
        "{e}"
    );
    let s = notes_site("due = \"end_of_day\"\ntimezone = \"EST\"\n");
    let out = s.cmd(&["publish", "--now", NOW]).output().unwrap();
    assert!(out.status.success());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("collections.notes.timezone") && log.contains("America/New_York"),
        "{log}"
    );
}

/// A YAML front matter (`---`) is read as TOML is: the item publishes and renders the same,
/// and a typo in it is named with the same file, line, key and words as in TOML — and holds
/// back only its own item.
#[test]
fn yaml_front_matter_publishes_and_its_typos_read_as_tomls_do() {
    let s = TestSite::new();
    s.write(
        "content/answers/1.md",
        "---\nid: 1\nday: 2026-11-01\ntitle: \"Yaml: one\"\nprice: 4.99\n---\n\nThe body.\n",
    );
    s.item(2, "2026-11-02");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1, 2], "{r}");
    s.build(&[]);
    let page = s.current_file("answers/1/index.html");
    assert!(
        page.contains("Yaml: one") && page.contains("The body."),
        "{page}"
    );

    // The same mistake in each format: an unknown key on line 5, a wrong type on line 4.
    s.write(
        "content/answers/3.md",
        "+++\nid = 3\nday = 2026-11-03\nprice = \"cheap\"\ncolour = 2\n+++\n",
    );
    s.write(
        "content/answers/4.md",
        "---\nid: 4\nday: 2026-11-03\nprice: cheap\ncolour: 2\n---\n",
    );
    s.write(
        "content/answers/5.md",
        "---\nid: 5\nday: 2026-11-03\ntitle: [unclosed\n---\n",
    );
    s.item(6, "2026-11-03");
    let r = publish_held(&s, "2026-11-05T00:00:00Z");
    assert_eq!(ids(&r, "published"), vec![6], "{r}");
    let invalid = r["invalid"].as_array().unwrap();
    let of = |file: &str| {
        invalid
            .iter()
            .find(|i| i["file"] == file)
            .unwrap_or_else(|| panic!("{file} is not named: {r}"))
            .clone()
    };
    let (toml, yaml) = (of("content/answers/3.md"), of("content/answers/4.md"));
    assert_eq!(yaml["line"], toml["line"], "{r}");
    assert_eq!(yaml["key"], toml["key"], "{r}");
    let words = |v: &serde_json::Value| {
        v["error"]
            .as_str()
            .unwrap()
            .replace("content/answers/3.md", "FILE")
            .replace("content/answers/4.md", "FILE")
            .replace(" 3 ", " N ")
            .replace(" 4 ", " N ")
    };
    assert_eq!(words(&yaml), words(&toml), "{r}");
    let broken = of("content/answers/5.md");
    assert_eq!(broken["line"], 4, "{r}");
}

const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"><rect width=\"4\" height=\"4\"/></svg>\n";

/// Page bundles: `posts/NAME/index.md` is item NAME (two bundles no longer collide on
/// `index`), and the folder's other files are published beside the page — not before the
/// page is public, updated with it, and never shipped with bytes the ledger did not record.
#[test]
fn page_bundles_are_items_named_by_their_folder_with_their_files_beside_them() {
    let s = fixture("features");
    let bundle = |name: &str, at: &str| {
        s.write(
            &format!("content/posts/{name}/index.md"),
            &format!("+++\ntitle = \"{name}\"\npublish_at = {at}\n+++\n\n![map](map.svg) [data](data.csv)\n"),
        );
        s.write(&format!("content/posts/{name}/map.svg"), SVG);
        s.write(
            &format!("content/posts/{name}/data.csv"),
            &format!("{name},1\n"),
        );
    };
    bundle("trip", "2026-11-20T00:00:00Z");
    bundle("launch", "2026-12-10T00:00:00Z");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    let published = r["published"].to_string();
    assert!(
        published.contains("trip") && !published.contains("launch"),
        "{r}"
    );
    assert_eq!(r["build"]["broken_links"], serde_json::json!([]), "{r}");
    let current = s.current_dir();
    assert_eq!(s.current_file("posts/trip/map.svg"), SVG);
    assert_eq!(s.current_file("posts/trip/data.csv"), "trip,1\n");
    assert!(
        !current.join("posts/launch").exists(),
        "an embargoed bundle is nowhere"
    );
    let manifest = std::fs::read_to_string(current.join(".fencepost/manifest.json")).unwrap();
    assert!(!manifest.contains("launch"), "{manifest}");
    let srv = s.serve(&[]);
    let r = srv.get("/posts/trip/map.svg");
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("cache-control"),
        Some("public, max-age=0, must-revalidate")
    );
    drop(srv);

    // An edit to a resource alone is an update of its item.
    s.write("content/posts/trip/data.csv", "trip,2\n");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert!(r["updated"].to_string().contains("trip"), "{r}");
    assert_eq!(s.current_file("posts/trip/data.csv"), "trip,2\n");

    // Bytes the ledger never recorded are not shipped: a build from scratch (the revision
    // already built keeps what was published) names the file instead.
    s.write("content/posts/trip/data.csv", "trip,3 unpublished\n");
    std::fs::remove_dir_all(s.path("public")).unwrap();
    let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(HELD),
        "a file left out fails the build's exit code"
    );
    let b: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        b["pointer"], "moved",
        "the rest of the site goes ahead: {b}"
    );
    let left_out = b["left_out"].to_string();
    assert!(
        left_out.contains("posts/trip/data.csv")
            && left_out.contains("changed since it was published"),
        "{b}"
    );

    // At its instant, the other bundle goes up with its files.
    s.json(&["publish", "--build", "--now", "2026-12-10T00:00:00Z"]);
    assert_eq!(s.current_file("posts/launch/map.svg"), SVG);
    assert_eq!(
        s.current_file("posts/trip/data.csv"),
        "trip,3 unpublished\n"
    );
}
