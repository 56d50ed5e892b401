//! The build (`crates/fencepost-build/src/`): one ledger snapshot becomes `public/revisions/<R>-<B>/` — complete,
//! deterministic, incremental runs byte-identical to full ones, templates' and links' errors
//! named, markdown rendered safely.
mod collections;
mod crashes;
mod features;
mod guard;
mod habits;
mod held;
mod markdown;
mod reuse;
mod sass;
mod saved;
mod shortcodes;

use crate::common::*;
use predicates::str::contains;
use serde_json::Value;

/// The manifest of revision folder `dir` lists every file exactly, with true hashes and
/// sizes; the index (the origin's lookup table) has one line per listed file, in path order.
/// Returns the folder's files.
fn the_manifest_lists_every_file(
    dir: &std::path::Path,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    let m = manifest(dir);
    let files = tree(dir);
    let listed: Vec<&str> = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let on_disk: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .filter(|p| !p.starts_with(".fencepost/"))
        .collect();
    assert_eq!(listed, on_disk);
    // The index (the origin's lookup table) has one line per listed file, in path order.
    let idx = String::from_utf8(files[".fencepost/manifest.idx"].clone()).unwrap();
    let mut lines = idx.lines();
    assert_eq!(lines.next(), Some("fencepost-index 1"));
    let indexed: Vec<String> = lines
        .map(|l| serde_json::from_str(l.split('\t').next().unwrap()).unwrap())
        .collect();
    assert_eq!(indexed, listed);
    for f in m["files"].as_array().unwrap() {
        let bytes = &files[f["path"].as_str().unwrap()];
        assert_eq!(f["sha256"], fencepost_core::digest::sha256_hex(bytes));
        assert_eq!(f["bytes"], bytes.len());
        assert!(f["content_type"].is_string() && f["cache"].is_string());
    }
    files
}

#[test]
fn builds_a_complete_revision_and_points_to_it() {
    let s = site_with(5);
    s.item(6, "2026-12-03"); // embargoed until 2026-12-04T00:10Z
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(ids(&r, "published"), vec![1, 2, 3, 4, 5]);
    let b = &r["build"];
    for key in [
        "revision",
        "build",
        "path",
        "rendered",
        "reused",
        "next_change_at",
    ] {
        assert!(b.get(key).is_some(), "missing {key}: {b}");
    }
    assert_eq!(b["revision"], 5);
    assert_eq!(b["next_change_at"], "2026-12-04T00:10:00Z");
    let dir_name = format!("5-{}", b["build"].as_str().unwrap());
    assert!(b["path"]
        .as_str()
        .unwrap()
        .ends_with(&format!("public/revisions/{dir_name}")));
    assert_eq!(
        s.current_dir(),
        std::fs::canonicalize(s.path(&format!("public/revisions/{dir_name}"))).unwrap()
    );
    let pointer: Value =
        serde_json::from_str(&std::fs::read_to_string(s.path("public/current.json")).unwrap())
            .unwrap();
    assert_eq!(
        pointer,
        serde_json::json!({"revision": 5, "build": b["build"], "dir": dir_name,
                           "next_change_at": b["next_change_at"]})
    );

    let files = the_manifest_lists_every_file(&s.current_dir());
    for p in [
        "index.html",
        "answers/index.html",
        "answers/page/1/index.html",
        "answers/3/index.html",
        "404.html",
        "atom.xml",
        "sitemap.xml",
        "robots.txt",
        "style.css",
        "about/index.html",
    ] {
        assert!(files.contains_key(p), "missing {p}");
    }
    assert!(
        !files.contains_key("answers/6/index.html"),
        "embargoed item leaked"
    );
    let page = s.current_file("answers/3/index.html");
    assert!(page.contains("<h1>Item 3</h1>") && page.contains("$4.99"));
    assert!(page.contains(r#"href="/answers/2/""#) && page.contains(r#"href="/answers/4/""#));

    // Building again finds the revision complete and does nothing.
    let again = s.build(&[]);
    assert_eq!(again["already_built"], true);
    assert_eq!(again["rendered"], 0);
}

/// Issue 18: the instant the next embargoed item goes live is in the build's JSON and in
/// `public/current.json` (outside the served tree), never in a file under `public/revisions/`
/// — a static server rooted at `public/current` would show it to anyone.
#[test]
fn the_next_embargo_instant_is_beside_the_revision_never_in_it() {
    let s = site_with(3);
    s.item(4, "2026-12-01"); // due 2026-12-02T00:10Z
    s.publish(NOW);
    let b = s.build(&[]);
    assert_eq!(b["next_change_at"], "2026-12-02T00:10:00Z");
    let current: Value =
        serde_json::from_slice(&std::fs::read(s.path("public/current.json")).unwrap()).unwrap();
    assert_eq!(current["next_change_at"], "2026-12-02T00:10:00Z");
    let leaks: Vec<String> = tree(&s.path("public/revisions"))
        .into_iter()
        .filter(|(_, bytes)| {
            let text = String::from_utf8_lossy(bytes);
            text.contains("2026-12-02T00:10") || text.contains("next_change_at")
        })
        .map(|(path, _)| path)
        .collect();
    assert!(
        leaks.is_empty(),
        "files naming the embargo instant: {leaks:?}"
    );
    let m = manifest(&s.current_dir());
    assert_eq!(m["next_change_at"], Value::Null);
    let entry = |p: &str| {
        m["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == p)
            .unwrap()
            .clone()
    };
    // URL-keyed files are revalidated by every cache (max_age 0).
    let home = entry("index.html");
    assert_eq!(
        (home["cache"].as_str(), home["max_age"].as_i64()),
        (Some("home"), Some(0))
    );
    assert_eq!(home["cache_until"], Value::Null);
    let page = entry("answers/1/index.html");
    assert_eq!(
        (page["cache"].as_str(), page["max_age"].as_i64()),
        (Some("content"), Some(0))
    );
    let css = entry("style.css");
    assert_eq!(
        (css["cache"].as_str(), css["max_age"].as_i64()),
        (Some("asset"), Some(0))
    );
    // Only a URL that names its bytes may be kept long: the hashed copy of the stylesheet.
    let hashed = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            let p = f["path"].as_str().unwrap();
            p.starts_with("style.") && p != "style.css"
        })
        .unwrap();
    assert_eq!(
        (hashed["cache"].as_str(), hashed["max_age"].as_i64()),
        (Some("immutable"), Some(31_536_000))
    );

    // After the embargo ends and the item is published, nothing else is pending.
    let r = s.json(&["publish", "--build", "--now", "2026-12-02T00:10:00Z"]);
    assert_eq!(ids(&r, "published"), vec![4]);
    assert_eq!(r["build"]["next_change_at"], Value::Null);
    let current: Value =
        serde_json::from_slice(&std::fs::read(s.path("public/current.json")).unwrap()).unwrap();
    assert_eq!(current["next_change_at"], Value::Null);
}

#[test]
fn incremental_build_is_byte_identical_to_a_full_build() {
    let s = site_with(12);
    s.write(
        "fencepost.toml",
        "[build]\npage_size = 5\nfeed_entries = 3\nhome_entries = 3\n",
    );
    s.write(
        "content/images/a.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    s.item_with(2, "2026-11-02", "image = \"images/a.svg\"\n", "with image");
    s.publish(NOW);
    let first = s.build(&[]);
    assert_eq!(first["reused"], 0);
    let prev_dir = s.current_dir();
    let prev = tree(&prev_dir);
    // One new item, one edit, one withdrawal.
    s.item(13, "2026-11-29");
    s.item_with(5, "2026-11-05", "", "Edited five.");
    std::fs::remove_file(s.path("content/answers/9.md")).unwrap();
    s.publish(NOW);
    let inc = s.build(&[]);
    assert!(inc["early_links"].as_i64().unwrap() > 10, "{inc}");
    // The previous revision's files were linked early, then the plan had its way: changed
    // files got new bytes without touching the previous revision, and the withdrawn page
    // went with its folder.
    assert_same_tree(
        &tree(&prev_dir),
        &prev,
        "the previous revision after the build",
    );
    assert!(!s.current_dir().join("answers/9").exists());
    assert!(inc["reused"].as_i64().unwrap() > 10, "{inc}");
    assert!(
        inc["rendered"].as_i64().unwrap() < inc["reused"].as_i64().unwrap(),
        "{inc}"
    );
    let dir = s.current_dir();
    let incremental = tree(&dir);
    // Unchanged pages are hard links to the previous revision's files.
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        assert!(
            std::fs::metadata(dir.join("answers/1/index.html"))
                .unwrap()
                .nlink()
                >= 2
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let full = s.build(&["--full"]);
    assert_eq!(full["reused"], 0);
    assert_eq!(full["build"], inc["build"]);
    assert_same_tree(
        &tree(&s.current_dir()),
        &incremental,
        "incremental against full",
    );
}

#[test]
fn output_is_deterministic() {
    let a = site_with(4);
    let b = site_with(4);
    for s in [&a, &b] {
        s.write("fencepost.toml", "title = \"Same\"\n");
    }
    a.publish(NOW);
    b.publish("2026-12-01T00:00:00Z");
    a.build(&[]);
    // Apart on the wall clock too (not a wait for anything: a wall-clock instant leaking into
    // the output would differ).
    std::thread::sleep(std::time::Duration::from_millis(20));
    b.json(&["build", "--now", "2027-06-01T00:00:00Z"]);
    // Different sites, different clocks for the build, identical bytes; only the manifest's
    // ledger id (each ledger has its own, random) tells them apart.
    let without_ledger_id = |dir: std::path::PathBuf| {
        let mut t = tree(&dir);
        let mut m: serde_json::Value =
            serde_json::from_slice(&t[".fencepost/manifest.json"]).unwrap();
        assert_eq!(m["ledger_id"].as_str().map(str::len), Some(32));
        // Provenance of the ledger, not content: its id and its audit chain's tip (entries
        // carry each run's random owner id).
        m.as_object_mut().unwrap().remove("ledger_id");
        m.as_object_mut().unwrap().remove("audit_tip");
        t.insert(
            ".fencepost/manifest.json".into(),
            serde_json::to_vec(&m).unwrap(),
        );
        t
    };
    assert_same_tree(
        &without_ledger_id(a.current_dir()),
        &without_ledger_id(b.current_dir()),
        "two builds of equal ledgers",
    );
}

#[test]
fn withdrawn_items_vanish_from_every_page_list_feed_and_sitemap() {
    let s = site_with(4);
    s.publish(NOW);
    s.build(&[]);
    let everywhere = |needle: &str| -> Vec<String> {
        tree(&s.current_dir())
            .into_iter()
            .filter(|(p, b)| {
                !p.starts_with(".fencepost/") && String::from_utf8_lossy(b).contains(needle)
            })
            .map(|(p, _)| p)
            .collect()
    };
    assert!(
        everywhere("/answers/3/").len() >= 5,
        "{:?}",
        everywhere("/answers/3/")
    );
    s.item_with(3, "2026-11-03", "withdrawn = true\n", "gone");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(ids(&r, "withdrawn"), vec![3]);
    assert_eq!(everywhere("/answers/3/"), Vec::<String>::new());
    assert_eq!(everywhere("Item 3<"), Vec::<String>::new());
    assert!(!s.current_dir().join("answers/3").exists());
    // Neighbours now link past it.
    assert!(s
        .current_file("answers/2/index.html")
        .contains(r#"href="/answers/4/""#));
}

#[test]
fn noindex_pages_get_a_robots_meta_and_stay_out_of_the_sitemap() {
    let s = site_with(2);
    s.item_with(3, "2026-11-03", "indexable = false\n", "hidden");
    s.publish(NOW);
    s.build(&[]);
    assert!(s
        .current_file("answers/3/index.html")
        .contains(r#"<meta name="robots" content="noindex">"#));
    assert!(!s.current_file("answers/2/index.html").contains("noindex"));
    let sitemap = s.current_file("sitemaps/answers-0.xml");
    assert!(sitemap.contains("/answers/2/") && !sitemap.contains("/answers/3/"));
    assert!(s
        .current_file("sitemap.xml")
        .contains("sitemaps/answers-0.xml"));
    assert!(s
        .current_file("robots.txt")
        .contains("Sitemap: http://localhost:8080/sitemap.xml"));
    let feed = s.current_file("atom.xml");
    assert!(feed.starts_with("<?xml") && feed.contains("<entry>"));
}

#[test]
fn a_template_change_without_a_publication_makes_a_new_directory() {
    let s = site_with(2);
    s.publish(NOW);
    let a = s.build(&[]);
    let t = std::fs::read_to_string(s.path("templates/answer.html")).unwrap();
    s.write("templates/answer.html", &t.replace("Played", "Played on"));
    let b = s.build(&[]);
    assert_eq!(a["revision"], b["revision"]);
    assert_ne!(a["build"], b["build"]);
    assert_eq!(b["pointer"], "moved");
    assert!(s.current_file("answers/1/index.html").contains("Played on"));
    // A static file no template links re-renders only itself.
    s.write("static/notes.txt", "one\n");
    s.build(&[]);
    s.write("static/notes.txt", "two\n");
    let c = s.build(&[]);
    assert_eq!(c["rendered"], 1, "{c}");
    // The stylesheet the templates link by its hashed URL: the pages that link it re-render
    // (their output changes), with the new hashed copy beside the plain one.
    let css_url = |s: &TestSite| {
        let html = s.current_file("answers/1/index.html");
        let at = html.find("href=\"/style.").unwrap() + 6;
        html[at..at + html[at..].find('"').unwrap()].to_string()
    };
    let old_url = css_url(&s);
    s.write("static/style.css", "body { color: red }\n");
    let d = s.build(&[]);
    let new_url = css_url(&s);
    assert_ne!(old_url, new_url);
    assert_eq!(
        s.current_file(new_url.trim_start_matches('/')),
        "body { color: red }\n"
    );
    assert!(!s
        .current_dir()
        .join(old_url.trim_start_matches('/'))
        .exists());
    let pages = manifest(&s.current_dir())["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"].as_str().unwrap().ends_with(".html"))
        .count() as u64;
    assert_eq!(d["rendered"].as_u64(), Some(pages + 2), "{d}");
    assert_eq!(d["broken_links"].as_array().map(Vec::len), Some(0));
}

#[test]
fn strict_link_check() {
    let s = site_with(1);
    s.item_with(
        2,
        "2026-11-02",
        "",
        "See [nowhere](/no/such/page/) and [one](/answers/1/).",
    );
    s.publish(NOW);
    s.cmd(&["build", "--strict", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("broken internal link"))
        .stderr(contains("/no/such/page/"));
    assert!(
        !s.path("public/current").exists(),
        "no pointer swap on a fatal error"
    );
    let r = s.build(&[]);
    assert_eq!(
        r["broken_links"],
        serde_json::json!([{"page": "answers/2/index.html", "link": "/no/such/page/"}])
    );
    assert!(s.path("public/current").exists());
}

#[test]
fn an_unwritable_output_folder_fails_cleanly() {
    let s = site_with(1);
    s.publish(NOW);
    s.build(&[]);
    let before = s.current_dir();
    s.item(2, "2026-11-02");
    s.publish(NOW);
    // `public/revisions` replaced by a file: nothing can be written there (works as root too).
    let rev = s.path("public/revisions");
    let keep = s.path("public/revisions.keep");
    std::fs::rename(&rev, &keep).unwrap();
    std::fs::write(&rev, "not a folder").unwrap();
    s.cmd(&["build", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("public/revisions"));
    std::fs::remove_file(&rev).unwrap();
    std::fs::rename(&keep, &rev).unwrap();
    assert_eq!(s.current_dir(), before);
    assert_eq!(s.build(&[])["revision"], 2);
}

#[test]
fn incremental_link_check_keeps_reporting_and_catches_links_broken_by_a_withdrawal() {
    let s = site_with(3);
    s.item_with(4, "2026-11-04", "", "Unrelated.");
    s.item_with(
        5,
        "2026-11-20",
        "",
        "See [gone](/nowhere/) and [three](/answers/3/).",
    );
    s.publish(NOW);
    let first = s.build(&[]);
    assert_eq!(first["broken_links"].as_array().unwrap().len(), 1);
    // A new item elsewhere: page 5 is reused, and its broken link is still reported.
    s.item(6, "2026-11-21");
    s.publish(NOW);
    let second = s.build(&[]);
    assert!(second["reused"].as_i64().unwrap() > 0);
    assert_eq!(
        second["broken_links"],
        serde_json::json!([{"page": "answers/5/index.html", "link": "/nowhere/"}])
    );
    // Withdrawing item 3 breaks page 5's link to it, although page 5 itself is reused
    // (its neighbours are 4 and 6).
    std::fs::remove_file(s.path("content/answers/3.md")).unwrap();
    s.publish(NOW);
    let third = s.build(&[]);
    let broken: Vec<String> = third["broken_links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["link"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(broken, vec!["/answers/3/", "/nowhere/"], "{third}");
    let m: Value = serde_json::from_slice(
        &std::fs::read(s.current_dir().join(".fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    let page5 = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "answers/5/index.html")
        .unwrap()
        .clone();
    let prev_dir = s.path(&format!(
        "public/revisions/{}-{}",
        second["revision"],
        second["build"].as_str().unwrap()
    ));
    let prev: Value =
        serde_json::from_slice(&std::fs::read(prev_dir.join(".fencepost/manifest.json")).unwrap())
            .unwrap();
    let prev5 = prev["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "answers/5/index.html")
        .unwrap()
        .clone();
    assert_eq!(
        page5["key"], prev5["key"],
        "page 5 was reused, not re-rendered"
    );
}

/// Regression: static files used to be hard-linked into the revision, so rewriting one in
/// place changed a finished (and served) revision.
#[test]
fn editing_a_static_file_in_place_never_changes_a_finished_revision() {
    let s = site_with(1);
    s.write("static/app.js", "console.log(1);\n");
    s.publish(NOW);
    s.build(&[]);
    let dir = s.current_dir();
    // Rewrite the same inode, as editors and `>` redirection do.
    std::fs::write(s.path("static/app.js"), "console.log(2);\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("app.js")).unwrap(),
        "console.log(1);\n"
    );
    let m = manifest(&dir);
    let e = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "app.js")
        .unwrap();
    assert_eq!(
        e["sha256"],
        fencepost_core::digest::sha256_hex(b"console.log(1);\n")
    );
}
