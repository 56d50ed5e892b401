//! A tag only an embargoed item uses: nowhere before the item's instant, in one revision at
//! it, gone in one revision at its expiry — on disk, in two buckets, through two origins.
use super::*;

#[test]
fn a_tag_only_an_embargoed_item_uses_appears_at_its_instant_and_goes_at_its_expiry() {
    let s = fixture("features");
    keep_a_log(&s);
    let moto = Moto::start();
    moto.bucket("site");
    let env = Moto::env(&moto.endpoint);
    before_its_instant_nothing_names_it(&s, &env);
    at_its_instant_it_comes_in_one_revision(&s, &env);
    at_its_expiry_it_goes_in_one_revision(&s, &env);
    s.cmd(&["verify"]).assert().success();
}

/// Before its instant: no file names the tag, the title or the id — in `public/`, a folder
/// bucket, S3 — and Rust (which the embargoed post also has) still counts 2.
fn before_its_instant_nothing_names_it(s: &TestSite, env: &[(String, String)]) {
    let runs = race_publish(s, BEFORE, 3);
    assert_eq!(
        once(&runs, "published"),
        [
            "advisories/adv-1",
            "advisories/adv-2",
            "posts/hello",
            "posts/second"
        ]
    );
    assert_eq!(s.revision(), 4);
    let b1 = build(s, BEFORE, &[]);
    assert_eq!(b1["next_change_at"], LAUNCH, "{b1}");
    let d1 = dir_of(&b1);
    assert!(d1.join(".well-known/fencepost/log/checkpoint").exists());
    assert!(d1
        .join(".well-known/fencepost/items/posts/hello.json")
        .exists());

    assert_nothing_reveals(
        "public/",
        &files_under(&s.path("public/revisions")),
        SECRETS,
    );
    let terms = read(&d1, "tags/index.html");
    assert_eq!(count_of(&terms, "Rust"), Some(2), "{terms}");
    assert_eq!(count_of(&terms, "Web"), Some(1), "{terms}");
    assert_eq!(count_of(&terms, "Ünïcode"), Some(1), "{terms}");
    assert!(
        d1.join("tags/unicode/index.html").exists(),
        "Unicode folds to ASCII"
    );
    let folder = tempfile::tempdir().unwrap();
    let to_folder = format!("file://{}", folder.path().display());
    s.json(&["deploy", "--to", &to_folder, "--now", BEFORE]);
    assert_nothing_reveals("the folder bucket", &files_under(folder.path()), SECRETS);
    s.json_env(&["deploy", "--to", "s3://site/www", "--now", BEFORE], env);
    {
        let local = s.serve(&[]);
        let remote = s.serve_env(&["--from", "s3://site/www"], env);
        for srv in [&local, &remote] {
            assert_eq!(srv.get("/tags/zeppelin/").status, 404);
            assert_eq!(srv.get("/tags/zeppelin/atom.xml").status, 404);
            assert_eq!(srv.get("/posts/secret/").status, 404);
            for page in [
                "/tags/",
                "/tags/rust/",
                "/tags/rust/atom.xml",
                "/atom.xml",
                "/rss.xml",
                "/sitemaps/taxonomy-tags-0.xml",
            ] {
                let r = srv.get(page);
                assert_eq!(r.status, 200, "{page}");
                for secret in SECRETS {
                    assert!(!r.text().contains(secret), "{page} reveals {secret}");
                }
            }
        }
    }
}

/// At its instant, racing publishers publish it once; term page, index entry, count and feed
/// entry all come in the one revision that publication made.
fn at_its_instant_it_comes_in_one_revision(s: &TestSite, env: &[(String, String)]) {
    let runs = race_publish(s, LAUNCH, 3);
    assert_eq!(once(&runs, "published"), ["posts/secret"]);
    assert_eq!(s.revision(), 5, "one publication, one revision");
    let b2 = build(s, LAUNCH, &[]);
    assert_eq!(b2["revision"], 5);
    assert_eq!(b2["next_change_at"], EXPIRY, "{b2}");
    let d2 = dir_of(&b2);
    let terms = read(&d2, "tags/index.html");
    assert_eq!(count_of(&terms, "Zeppelin"), Some(1), "{terms}");
    assert_eq!(count_of(&terms, "Rust"), Some(3), "{terms}");
    assert_eq!(count_of(&terms, "Web"), Some(1), "{terms}");
    assert!(read(&d2, "tags/zeppelin/index.html").contains("Zeppelin launch"));
    let feed = read(&d2, "tags/zeppelin/atom.xml");
    assert!(feed.contains("<title>Zeppelin launch</title>"), "{feed}");
    assert!(read(&d2, "tags/rust/atom.xml").contains("Zeppelin launch"));
    assert!(read(&d2, "posts/secret/index.html").contains("href=\"/tags/zeppelin/\""));
    // Incremental: only what lists it was rendered, and the result is what a full build makes.
    let rendered = b2["rendered"].as_u64().unwrap();
    let reused = b2["reused"].as_u64().unwrap();
    assert!(rendered < reused, "{b2}");
    let incremental = tree(&d2);
    std::fs::remove_dir_all(&d2).unwrap();
    let full = build(s, LAUNCH, &["--full"]);
    assert_eq!(full["reused"], 0);
    assert_same_tree(
        &tree(&dir_of(&full)),
        &incremental,
        "incremental against full",
    );
    s.json_env(&["deploy", "--to", "s3://site/www", "--now", LAUNCH], env);
    {
        let remote = s.serve_env(&["--from", "s3://site/www"], env);
        let r = remote.get("/tags/zeppelin/");
        assert_eq!(r.status, 200);
        assert!(r.text().contains("Zeppelin launch"));
    }
}

/// A second before its expiry nothing changes; at it, racing publishers withdraw it once,
/// and the tag is gone everywhere in the one revision that made.
fn at_its_expiry_it_goes_in_one_revision(s: &TestSite, env: &[(String, String)]) {
    let r = s.publish("2026-12-04T23:59:59Z");
    assert_eq!(r["withdrawn"], serde_json::json!([]), "{r}");
    let runs = race_publish(s, EXPIRY, 3);
    assert_eq!(once(&runs, "withdrawn"), ["posts/secret"]);
    assert_eq!(once(&runs, "expired"), ["posts/secret"]);
    assert_eq!(s.revision(), 6, "one expiry, one revision");
    let b3 = build(s, EXPIRY, &[]);
    assert_eq!(b3["revision"], 6);
    assert!(b3["next_change_at"].is_null(), "{b3}");
    let d3 = dir_of(&b3);
    // After its expiry no page names it; the log keeps its history (its reveal, then its
    // expiry): an append-only record of what was public is the log's point.
    let mut files = files_under(&d3);
    files.retain(|(name, _)| !name.contains("/.well-known/fencepost/log/"));
    assert_nothing_reveals("the revision after the expiry", &files, SECRETS);
    let bundle = files_under(&d3.join(".well-known/fencepost/log/tile/entries"));
    let text = String::from_utf8_lossy(&bundle[0].1);
    assert!(text.contains("item posts/secret\nchange expire"), "{text}");
    let terms = read(&d3, "tags/index.html");
    assert_eq!(count_of(&terms, "Rust"), Some(2), "{terms}");
    assert_eq!(count_of(&terms, "Zeppelin"), None, "{terms}");
    s.json_env(&["deploy", "--to", "s3://site/www", "--now", EXPIRY], env);
    let remote = s.serve_env(&["--from", "s3://site/www"], env);
    assert_eq!(remote.get("/tags/zeppelin/").status, 404);
    assert_eq!(remote.get("/posts/secret/").status, 404);
}
