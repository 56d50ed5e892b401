//! Collections (issue 20): the content model as data. Three fixture sites under
//! `tests/fixtures/` — a daily word puzzle, security advisories, a newsletter — go through
//! racing publishers, a build, deploys to a folder and to S3 (moto), and both origins, with no
//! change to fencepost; a site and ledger made by the release before collections keep their
//! output byte for byte; broken files hold back only their own item.

mod broken;
mod release;

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// `build --json --now <now>` (plus `extra`).
fn build_at(s: &TestSite, now: &str, extra: &[&str]) -> Value {
    let mut args = vec!["build", "--now", now];
    args.extend_from_slice(extra);
    s.json(&args)
}

/// What each fixture site is checked for.
struct Expect<'a> {
    now: &'a str,
    published: &'a [&'a str],
    /// (URL, texts the page must hold)
    pages: &'a [(&'a str, &'a [&'a str])],
    /// Texts of the embargoed items that must be nowhere yet.
    embargoed: &'a [&'a str],
    /// Their URLs, which both origins answer 404.
    embargoed_urls: &'a [&'a str],
}

/// Racing publishers, a build, deploys to a folder and to moto, both origins; nothing
/// embargoed anywhere.
fn exercise(s: &TestSite, e: &Expect<'_>) {
    let runs = race_publish(s, e.now, 3);
    let published = published_once(&runs);
    let expected: BTreeSet<String> = e.published.iter().map(|s| s.to_string()).collect();
    assert_eq!(published, expected);
    assert_eq!(s.revision(), e.published.len() as i64);
    // A rerun changes nothing.
    let again = s.publish(e.now);
    assert!(again["published"].as_array().unwrap().is_empty());
    assert!(s.status()["ledger_id"].is_string());
    build_at(s, e.now, &["--strict"]);
    s.cmd(&["verify"]).assert().success();

    let folder = tempfile::tempdir().unwrap();
    let to_folder = format!("file://{}", folder.path().display());
    s.json(&["deploy", "--to", &to_folder, "--now", e.now]);
    let moto = Moto::start();
    moto.bucket("site");
    let env = Moto::env(&moto.endpoint);
    s.json_env(&["deploy", "--to", "s3://site/www", "--now", e.now], &env);

    let local = s.serve(&[]);
    let remote = s.serve_env(&["--from", "s3://site/www"], &env);
    for srv in [&local, &remote] {
        for (url, texts) in e.pages {
            let r = srv.get(url);
            assert_eq!(r.status, 200, "{url}: {}", r.text());
            let body = r.text();
            for t in *texts {
                assert!(body.contains(t), "{url} lacks {t:?}:\n{body}");
            }
        }
        for page in ["/", "/atom.xml", "/sitemap.xml"] {
            let r = srv.get(page);
            assert_eq!(r.status, 200, "{page}");
            for secret in e.embargoed {
                assert!(!r.text().contains(secret), "{page} reveals {secret:?}");
            }
        }
    }
    assert_nothing_reveals(
        "public/",
        &files_under(&s.path("public/revisions")),
        e.embargoed,
    );
    assert_nothing_reveals(
        "the folder bucket",
        &files_under(folder.path()),
        e.embargoed,
    );
    // The S3 bucket holds what the folder does (one layout); through its origin, no
    // embargoed page is there.
    for url in e.embargoed_urls {
        assert_eq!(remote.get(url).status, 404, "{url}");
        assert_eq!(local.get(url).status, 404, "{url}");
    }
}

#[test]
fn a_daily_word_puzzle_in_new_york() {
    let s = fixture("word_puzzle");
    // 2026-12-01T00:00Z is 19:00 on 2026-11-30 in New York: puzzle 4 (played that day) is
    // embargoed until local midnight, 05:00Z.
    exercise(
        &s,
        &Expect {
            now: NOW,
            published: &["words/1", "words/2", "words/3"],
            pages: &[
                (
                    "/words/1/",
                    &["CRANE", "(5 letters)", "2026-11-27", "data-id=\"1\""],
                ),
                (
                    "/words/2/",
                    &["SLATE", "Hint: a roof", "rel=\"prev\" href=\"/words/1/\""],
                ),
                (
                    "/words/",
                    &["Every word", "data-collection=\"words\"", "/words/3/"],
                ),
                ("/words/page/1/", &["Words, page 1"]),
                ("/about/", &["A word a day."]),
            ],
            embargoed: &["ZEBRA", "Puzzle #4", "/words/4/"],
            embargoed_urls: &["/words/4/"],
        },
    );
    // One millisecond before New York's midnight: still nothing; at it: puzzle 4.
    assert!(s.publish("2026-12-01T04:59:59.999Z")["published"]
        .as_array()
        .unwrap()
        .is_empty());
    let r = s.publish("2026-12-01T05:00:00Z");
    assert_eq!(r["published"], serde_json::json!(["words/4"]));
    build_at(&s, "2026-12-01T05:00:00Z", &[]);
    assert!(s.current_file("words/4/index.html").contains("ZEBRA"));
}

#[test]
fn security_advisories_with_an_embargo_to_the_second() {
    let s = fixture("advisories");
    let now = "2026-12-01T08:29:59Z";
    exercise(
        &s,
        &Expect {
            now,
            published: &["advisories/fp-2026-001", "advisories/fp-2026-002"],
            pages: &[
                (
                    "/advisories/fp-2026-001/",
                    &[
                        "CVE-2026-10001",
                        "class=\"severity\">high",
                        "<span>1.0.0</span>, <span>1.0.1</span>",
                        "class=\"cvss\">7.5",
                        "Reported by A. Researcher",
                    ],
                ),
                ("/advisories/fp-2026-002/", &["CVE-2026-10002", "low"]),
                ("/advisories/", &["Security advisories", "fp-2026-002"]),
                ("/advisories/atom.xml", &["Cookie without the Secure flag"]),
                ("/policy/", &["security@example.org"]),
            ],
            embargoed: &[
                "CVE-2026-10003",
                "Remote code execution",
                "fp-2026-003",
                "2026-12-01T08:30",
            ],
            embargoed_urls: &["/advisories/fp-2026-003/"],
        },
    );
    // To the second: 08:30:00Z (09:30 in Berlin).
    let r = s.publish("2026-12-01T08:30:00Z");
    assert_eq!(
        r["published"],
        serde_json::json!(["advisories/fp-2026-003"])
    );
    // An update after publication, and a withdrawal.
    let p = s.path("content/advisories/fp-2026-001.md");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(
        &p,
        text.replace("severity = \"high\"", "severity = \"critical\""),
    )
    .unwrap();
    let p2 = s.path("content/advisories/fp-2026-002.md");
    let text = std::fs::read_to_string(&p2).unwrap();
    std::fs::write(&p2, text.replace("+++\n\n", "withdrawn = true\n+++\n\n")).unwrap();
    let r = s.publish("2026-12-01T09:00:00Z");
    assert_eq!(r["updated"], serde_json::json!(["advisories/fp-2026-001"]));
    assert_eq!(
        r["withdrawn"],
        serde_json::json!(["advisories/fp-2026-002"])
    );
    build_at(&s, "2026-12-01T09:00:00Z", &["--strict"]);
    assert!(s
        .current_file("advisories/fp-2026-001/index.html")
        .contains("class=\"severity\">critical"));
    assert!(!s.path("public/current/advisories/fp-2026-002").exists());
    assert!(!s
        .current_file("advisories/index.html")
        .contains("fp-2026-002"));
    assert!(s
        .current_file("advisories/index.html")
        .contains("fp-2026-003"));
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn a_newsletter_with_two_collections() {
    let s = fixture("newsletter");
    exercise(
        &s,
        &Expect {
            now: NOW,
            published: &[
                "notes/1",
                "notes/2",
                "posts/1",
                "posts/hello-world",
                "posts/two-oh",
            ],
            pages: &[
                (
                    "/posts/2026/11/hello-world/",
                    &["Why we started a newsletter.", "#meta", "2026-11-02"],
                ),
                (
                    "/posts/2026/11/two-oh/",
                    &["#release #meta", "rel=\"next\" href=\"/posts/2026/11/1/\""],
                ),
                ("/posts/2026/11/1/", &["A post whose id is 1"]),
                ("/notes/1/", &["A first note", "data-collection=\"notes\""]),
                ("/notes/", &["Notes"]),
                ("/posts/", &["All posts"]),
                ("/posts/atom.xml", &["Two point oh"]),
                ("/", &["id=\"posts\"", "id=\"notes\"", "One to watch"]),
            ],
            embargoed: &["Next week", "next-week", "Scheduled for Wednesday"],
            embargoed_urls: &["/posts/2026/12/next-week/"],
        },
    );
    // Notes have no feed of their own; the site-wide one has only the posts.
    assert!(!s.path("public/current/notes/atom.xml").exists());
    let atom = s.current_file("atom.xml");
    assert!(atom.contains("Two point oh") && !atom.contains("A second note"));
    // The sitemap covers both collections.
    let index = s.current_file("sitemap.xml");
    assert!(index.contains("sitemaps/posts-0.xml") && index.contains("sitemaps/notes-0.xml"));
    // The start of 2026-12-02 in Los Angeles is 08:00Z.
    assert!(s.publish("2026-12-02T07:59:59Z")["published"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(
        s.publish("2026-12-02T08:00:00Z")["published"],
        serde_json::json!(["posts/next-week"])
    );
}

/// Due exactly at the local midnight (plus the grace period) across both clock changes of
/// 2026 in New York, never a millisecond early.
#[test]
fn day_boundaries_follow_the_zone_across_clock_changes() {
    let s = fixture("word_puzzle");
    for f in ["1", "2", "3", "4"] {
        std::fs::remove_file(s.path(&format!("content/words/{f}.md"))).unwrap();
    }
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    std::fs::write(
        s.path("fencepost.toml"),
        cfg.replace("grace_minutes = 0", "grace_minutes = 10"),
    )
    .unwrap();
    // (id, day, when it is due: the next local midnight + 10 minutes)
    let cases = [
        (11, "2026-03-07", "2026-03-08T05:10:00Z"), // EST midnight, before the spring change
        (12, "2026-03-08", "2026-03-09T04:10:00Z"), // EDT from then on
        (13, "2026-10-31", "2026-11-01T04:10:00Z"), // still EDT at midnight on the fall change
        (14, "2026-11-01", "2026-11-02T05:10:00Z"), // EST again
    ];
    for (id, day, _) in cases {
        s.write(
            &format!("content/words/{id}.md"),
            &format!("+++\nid = {id}\nday = {day}\ntitle = \"P{id}\"\nword = \"W\"\n+++\n"),
        );
    }
    for (id, _, due) in cases {
        let at = chrono::DateTime::parse_from_rfc3339(due).unwrap();
        let before = (at - chrono::Duration::milliseconds(1))
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let r = s.publish(&before);
        assert!(
            r["published"].as_array().unwrap().is_empty(),
            "early at {before}: {r}"
        );
        let r = s.publish(due);
        assert_eq!(
            r["published"],
            serde_json::json!([format!("words/{id}")]),
            "{due}"
        );
    }
}

#[test]
fn config_mistakes_are_named_before_anything_is_written() {
    for (extra, says) in [
        (
            "[collections.more]\nurl = \"/words/{id}/\"\n",
            "produce the same URLs",
        ),
        (
            "[collections.more]\ndir = \"words\"\n",
            "read the same folder",
        ),
        (
            "[collections.more]\ntimezone = \"Mars/Olympus_Mons\"\n",
            "collections.more.timezone",
        ),
        (
            "[collections.more]\n[collections.more.fields]\ntitle = { type = \"string\" }\n",
            "built-in key",
        ),
    ] {
        let s = fixture("word_puzzle");
        let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
        std::fs::write(s.path("fencepost.toml"), format!("{cfg}\n{extra}")).unwrap();
        let out = s
            .cmd(&["publish", "--json", "--now", NOW])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{extra}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(says), "{extra}: {text}");
        assert!(!s.path(".fencepost/ledger.sqlite").exists(), "{extra}");
    }
    // Publishing in a zone that does not exist.
    let s = fixture("word_puzzle");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    std::fs::write(
        s.path("fencepost.toml"),
        cfg.replace("America/New_York", "America/Gotham"),
    )
    .unwrap();
    let out = s
        .cmd(&["publish", "--json", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("publish.timezone"));
}

/// `fencepost init --starter …`: each starter publishes, builds (no broken link) and serves
/// as it comes.
#[test]
fn each_starter_publishes_builds_and_serves_as_it_comes() {
    for (starter, published, pages) in [
        (
            "answers",
            serde_json::json!([1]),
            vec![("/answers/1/", "$4.99"), ("/answers/", "All answers")],
        ),
        (
            "advisories",
            serde_json::json!(["advisories/fp-2026-001"]),
            vec![
                ("/advisories/fp-2026-001/", "CVE-2026-00001"),
                ("/advisories/", "Security advisories"),
                ("/", "CVE-2026-00001: Path traversal"),
                ("/advisories/atom.xml", "Path traversal"),
            ],
        ),
        (
            "posts",
            serde_json::json!(["posts/hello-world"]),
            vec![
                ("/posts/2026/12/hello-world/", "Hello, world"),
                ("/", "Why this newsletter exists."),
                ("/posts/", "All posts"),
            ],
        ),
    ] {
        a_starter_publishes_builds_and_serves(starter, published, pages);
    }
}

/// `init --starter <starter>`, then `publish --build --strict`: it publishes `published` and
/// serves each of `pages` with its text, as a reviewed snapshot has it.
fn a_starter_publishes_builds_and_serves(
    starter: &str,
    published: Value,
    pages: Vec<(&str, &str)>,
) {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    assert_cmd::Command::from_std(fencepost())
        .args(["init", "--starter", starter])
        .arg(&site)
        .args(["--now", NOW])
        .assert()
        .success();
    let s = TestSite { dir };
    let run = |args: &[&str]| -> Value {
        let out = assert_cmd::Command::from_std(fencepost())
            .arg("--site")
            .arg(&site)
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{starter} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    // An hour after init: the answers starter's sample (played yesterday) is due at 00:10.
    let r = run(&[
        "publish",
        "--build",
        "--strict",
        "--now",
        "2026-12-01T01:00:00Z",
    ]);
    assert_eq!(r["published"], published, "{starter}: {r}");
    assert!(
        r["build"]["broken_links"].as_array().unwrap().is_empty(),
        "{starter}: {r}"
    );
    let srv = s.serve_in(&site);
    for (url, text) in pages {
        let resp = srv.get(url);
        assert_eq!(resp.status, 200, "{starter} {url}");
        assert!(
            resp.text().contains(text),
            "{starter} {url}: {}",
            resp.text()
        );
        // And the whole page as the starter ships it, against a reviewed snapshot.
        let page = match url.trim_matches('/') {
            "" => "home".to_string(),
            path => path.replace('/', "_"),
        };
        insta::assert_snapshot!(format!("starter_{starter}_{page}"), resp.text());
    }
}

/// A collection removed from fencepost.toml: its pages come down (its files are named as
/// unclaimed), the other collection's stay.
#[test]
fn a_removed_collection_comes_down() {
    let s = fixture("newsletter");
    s.publish(NOW);
    build_at(&s, NOW, &[]);
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let cut = cfg.find("[collections.notes]").unwrap();
    std::fs::write(s.path("fencepost.toml"), &cfg[..cut]).unwrap();
    // Issue 34.4: a collection gone from the config looks just like a typo: refused, named,
    // nothing withdrawn, until a person says so.
    let refused = publish_held(&s, NOW);
    assert_eq!(refused["withdrawn"], serde_json::json!([]), "{refused}");
    assert_eq!(
        refused["invalid"][0]["key"], "collections.notes",
        "{refused}"
    );
    let r = s.json(&[
        "publish",
        "--now",
        NOW,
        "--allow-withdraw-collection",
        "notes",
    ]);
    assert_eq!(
        r["withdrawn"],
        serde_json::json!(["notes/1", "notes/2"]),
        "{r}"
    );
    assert_eq!(
        r["unclaimed"],
        serde_json::json!(["content/notes/1.md", "content/notes/2.md"])
    );
    build_at(&s, NOW, &["--strict"]);
    assert!(!s.path("public/current/notes").exists());
    assert!(s
        .path("public/current/posts/2026/11/two-oh/index.html")
        .exists());
    s.cmd(&["verify"]).assert().success();
}
