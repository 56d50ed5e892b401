//! Site features on `tests/fixtures/features`: taxonomies that follow their items' instants,
//! withdrawal notices, valid Atom and RSS for every fixture site, markdown and template features,
//! re-rendering after a markdown setting changes.
mod tags;

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `posts/secret` (tags Zeppelin and Rust) is due.
const LAUNCH: &str = "2026-12-02T09:00:00Z";

/// `posts/secret` expires.
const EXPIRY: &str = "2026-12-05T00:00:00Z";

/// What nothing may name while `posts/secret` is not public.
const SECRETS: &[&str] = &["eppelin", "posts/secret"];

fn build(s: &TestSite, now: &str, extra: &[&str]) -> Value {
    let mut args = vec!["build", "--now", now, "--strict"];
    args.extend_from_slice(extra);
    s.json(&args)
}

fn dir_of(b: &Value) -> PathBuf {
    PathBuf::from(b["path"].as_str().unwrap())
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every item named under `key` in any of `runs`, each at most once across them.
fn once(runs: &[Value], key: &str) -> Vec<String> {
    let mut all: Vec<String> = runs
        .iter()
        .flat_map(|r| r[key].as_array().unwrap().clone())
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "{key}: an item twice across {runs:?}");
    all
}

/// The count the terms index shows for `name`.
fn count_of(terms_page: &str, name: &str) -> Option<u64> {
    let at = terms_page.find(&format!(">{name}</a> <span class=\"count\">("))?;
    let rest = &terms_page[at..];
    let open = rest.find('(')? + 1;
    let close = rest.find(')')?;
    rest[open..close].parse().ok()
}

/// The site keeps a transparency log that commits to every post before its instant: every
/// leak check below covers the log's files (tiles, bundles, checkpoint, item JSON) too.
fn keep_a_log(s: &TestSite) {
    let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let toml = toml.replacen(
        "taxonomies = [\"tags\"]\n",
        "taxonomies = [\"tags\"]\ncommit_before_reveal = true\n",
        1,
    );
    s.write(
        "fencepost.toml",
        &format!("{toml}\n[transparency]\nlog = true\nskey_file = \".tlog-skey\"\n"),
    );
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    s.write(".tlog-skey", &keys.skey);
}

/// Out of lists, feeds and sitemaps; its neighbour still there.
fn a_withdrawn_advisory_is_out_of_every_list(d: &Path) {
    for rel in [
        "advisories/index.html",
        "advisories/page/1/index.html",
        "advisories/atom.xml",
        "advisories/rss.xml",
        "atom.xml",
        "rss.xml",
        "index.html",
        "sitemaps/advisories-0.xml",
        "sitemaps/pages.xml",
    ] {
        let text = read(d, rel);
        assert!(
            !text.contains("Timing leak") && !text.contains("adv-2"),
            "{rel} lists the withdrawn advisory"
        );
    }
    assert!(read(d, "advisories/index.html").contains("Buffer overrun"));
}

/// The notice answers 410 on the local origin and from S3, kept out of search engines.
fn both_origins_answer_410(s: &TestSite) {
    let moto = Moto::start();
    moto.bucket("site");
    let env = Moto::env(&moto.endpoint);
    s.json_env(&["deploy", "--to", "s3://site/www", "--now", BEFORE], &env);
    let local = s.serve(&[]);
    let remote = s.serve_env(&["--from", "s3://site/www"], &env);
    for srv in [&local, &remote] {
        let r = srv.get("/advisories/adv-2/");
        assert_eq!(r.status, 410, "{}", r.text());
        assert!(r.text().contains("was withdrawn on"));
        assert_eq!(r.header("x-robots-tag"), Some("noindex"));
        assert_eq!(
            r.header("cache-control"),
            Some("public, max-age=0, must-revalidate")
        );
        assert_eq!(srv.get("/advisories/adv-1/").status, 200);
    }
}

#[test]
fn a_withdrawn_advisory_keeps_a_notice_that_both_origins_answer_410() {
    let s = fixture("features");
    s.publish(BEFORE);
    build(&s, BEFORE, &[]);
    let adv = std::fs::read_to_string(s.path("content/advisories/adv-2.md")).unwrap();
    s.write(
        "content/advisories/adv-2.md",
        &adv.replacen(
            "severity = \"low\"",
            "severity = \"low\"\nwithdrawn = true",
            1,
        ),
    );
    let r = s.publish(BEFORE);
    assert_eq!(
        r["withdrawn"],
        serde_json::json!(["advisories/adv-2"]),
        "{r}"
    );
    let b = build(&s, BEFORE, &[]);
    let d = dir_of(&b);
    let notice = read(&d, "advisories/adv-2/index.html");
    assert!(notice.contains("Timing leak in login"), "{notice}");
    assert!(notice.contains("was withdrawn on"), "{notice}");
    assert!(notice.contains("noindex"), "{notice}");
    let manifest: Value = serde_json::from_str(&read(&d, ".fencepost/manifest.json")).unwrap();
    let entry = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "advisories/adv-2/index.html")
        .unwrap();
    assert_eq!(entry["cache"], "gone", "{entry}");
    a_withdrawn_advisory_is_out_of_every_list(&d);
    both_origins_answer_410(&s);
    // The file removed too: the notice stays (the page's row keeps it).
    std::fs::remove_file(s.path("content/advisories/adv-2.md")).unwrap();
    s.publish(BEFORE);
    let b = build(&s, BEFORE, &[]);
    assert!(dir_of(&b).join("advisories/adv-2/index.html").exists());
    // A collection that removes (the default) leaves nothing at the URL.
    std::fs::remove_file(s.path("content/posts/second.md")).unwrap();
    let r = s.publish(BEFORE);
    assert_eq!(r["withdrawn"], serde_json::json!(["posts/second"]), "{r}");
    let b = build(&s, BEFORE, &[]);
    assert!(!dir_of(&b).join("posts/second/index.html").exists());
}

/// The RFC 4287 rules fencepost promises, checked on a strictly parsed document.
fn check_atom(path: &Path, text: &str) {
    let doc =
        roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let feed = doc.root_element();
    let ns = "http://www.w3.org/2005/Atom";
    assert_eq!(feed.tag_name().name(), "feed");
    assert_eq!(feed.tag_name().namespace(), Some(ns));
    fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
        n.children()
            .find(|c| c.is_element() && c.tag_name().name() == name)
    }
    let text_of = |n: roxmltree::Node<'_, '_>, name: &str| -> String {
        child(n, name)
            .and_then(|c| c.text())
            .unwrap_or_else(|| panic!("{}: <{name}> missing or empty", path.display()))
            .to_string()
    };
    let rfc3339 = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap_or_else(|e| panic!("{}: {s}: {e}", path.display()))
    };
    assert!(!text_of(feed, "title").is_empty());
    assert!(text_of(feed, "id").starts_with("http"));
    rfc3339(&text_of(feed, "updated"));
    let author =
        child(feed, "author").unwrap_or_else(|| panic!("{}: no feed author", path.display()));
    assert!(!text_of(author, "name").is_empty());
    assert!(feed
        .children()
        .any(|c| c.tag_name().name() == "link" && c.attribute("rel") == Some("self")));
    let mut ids = std::collections::HashSet::new();
    for e in feed.children().filter(|c| c.tag_name().name() == "entry") {
        assert!(!text_of(e, "title").is_empty());
        assert!(
            ids.insert(text_of(e, "id")),
            "{}: duplicate entry id",
            path.display()
        );
        let updated = rfc3339(&text_of(e, "updated"));
        let published = rfc3339(&text_of(e, "published"));
        assert!(published <= updated, "{}", path.display());
        assert!(e.children().any(|c| c.tag_name().name() == "link"
            && c.attribute("rel").unwrap_or("alternate") == "alternate"
            && c.attribute("href").is_some_and(|h| h.starts_with("http"))));
        assert!(child(e, "content").is_some() || child(e, "summary").is_some());
    }
}

fn check_rss(path: &Path, text: &str) {
    let doc =
        roxmltree::Document::parse(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rss = doc.root_element();
    assert_eq!(rss.tag_name().name(), "rss");
    assert_eq!(rss.attribute("version"), Some("2.0"));
    let channel = rss
        .children()
        .find(|c| c.tag_name().name() == "channel")
        .unwrap();
    for k in ["title", "link", "description"] {
        assert!(
            channel.children().any(|c| c.tag_name().name() == k),
            "{}: {k}",
            path.display()
        );
    }
    for item in channel.children().filter(|c| c.tag_name().name() == "item") {
        for k in ["title", "link", "guid", "pubDate", "description"] {
            assert!(
                item.children().any(|c| c.tag_name().name() == k),
                "{}: item {k}",
                path.display()
            );
        }
        let date = item
            .children()
            .find(|c| c.tag_name().name() == "pubDate")
            .unwrap()
            .text()
            .unwrap();
        chrono::DateTime::parse_from_rfc2822(date)
            .unwrap_or_else(|e| panic!("{}: {date}: {e}", path.display()));
    }
}

/// feedparser (the Python library most readers build on) reads each file without a bozo flag.
fn feedparser_reads(files: &[PathBuf]) {
    let python = std::env::var("FENCEPOST_PYTHON").expect(
        "FENCEPOST_PYTHON names a Python with feedparser (scripts/test installs it into target/tools/moto)",
    );
    let out = std::process::Command::new(python)
        .arg("-c")
        .arg("import feedparser, json, sys\nout = {}\nfor f in sys.argv[1:]:\n    d = feedparser.parse(f)\n    out[f] = [bool(d.bozo), str(d.get('bozo_exception', '')), d.version, len(d.entries)]\nprint(json.dumps(out))\n")
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    for (f, r) in v.as_object().unwrap() {
        assert_eq!(r[0], false, "feedparser flags {f}: {r}");
        assert!(
            r[2].as_str()
                .is_some_and(|v| v.starts_with("atom") || v.starts_with("rss")),
            "{f}: {r}"
        );
    }
}

#[test]
fn every_feed_of_every_fixture_site_is_valid_atom_or_rss() {
    let mut all = Vec::new();
    let mut checked = 0;
    let keep = tempfile::tempdir().unwrap();
    for name in ["word_puzzle", "advisories", "newsletter", "features"] {
        let s = fixture(name);
        let later = "2027-06-01T00:00:00Z";
        s.publish(later);
        let d = dir_of(&build(&s, later, &[]));
        for e in walkdir::WalkDir::new(&d).into_iter().flatten() {
            let file = e.file_name().to_string_lossy().to_string();
            if file != "atom.xml" && file != "rss.xml" {
                continue;
            }
            let text = std::fs::read_to_string(e.path()).unwrap();
            if file == "atom.xml" {
                check_atom(e.path(), &text);
            } else {
                check_rss(e.path(), &text);
            }
            checked += 1;
            let copy = keep.path().join(format!("{name}-{checked}-{file}"));
            std::fs::copy(e.path(), &copy).unwrap();
            all.push(copy);
        }
    }
    // Site, collection and term feeds, Atom and RSS.
    assert!(checked >= 15, "only {checked} feeds");
    assert!(all.iter().any(|p| p.to_string_lossy().ends_with("rss.xml")));
    feedparser_reads(&all);
}

/// Highlighting (classes, escaped code; an unknown language stays plain code); the summary,
/// and no marker anywhere.
fn highlighting_and_summaries_render(d: &Path, hello: &str) {
    assert!(
        hello.contains("<pre class=\"highlight\"><code class=\"language-rust\">"),
        "{hello}"
    );
    assert!(
        hello.contains("<span class=\"hl-storage hl-type hl-function hl-rust\">fn</span>"),
        "{hello}"
    );
    assert!(hello.contains("&lt;post&gt;"));
    assert!(
        hello.contains(
            "<pre><code class=\"language-nosuchlanguage\">plain &lt;text&gt;\n</code></pre>"
        ),
        "{hello}"
    );
    // The summary, and no marker anywhere.
    assert!(
        hello.contains(
            "<div class=\"summary\"><p>Why fences matter, in <em>one</em> paragraph.</p>"
        ),
        "{hello}"
    );
    assert!(read(d, "posts/second/index.html").contains("no summary"));
    let list = read(d, "posts/index.html");
    assert!(
        list.contains("<div class=\"summary\"><p>Why fences matter"),
        "{list}"
    );
    assert!(read(d, "posts/atom.xml").contains("<summary type=\"html\">&lt;p&gt;Why fences matter"));
    for (name, bytes) in files_under(d) {
        let t = String::from_utf8_lossy(&bytes);
        assert!(
            !t.contains("<!-- more -->") && !t.contains("&lt;!-- more"),
            "{name} shows the marker"
        );
    }
}

/// Heading ids, on items and plain pages; Tera's built-in filters; HTML in Markdown is text
/// by default.
fn ids_filters_and_html_as_text(d: &Path, hello: &str) {
    // Heading ids, on items and plain pages.
    assert!(
        hello.contains("<h2 id=\"getting-started\">Getting started</h2>"),
        "{hello}"
    );
    assert!(read(d, "about/index.html").contains("<h1 id=\"about-this-site\">About this site</h1>"));
    // Tera's built-in filters: date and slugify. The date is the post's own (its
    // publish_at), not the day this test published it.
    assert!(hello.contains("<time>01 November 2026</time>"), "{hello}");
    assert!(
        hello.contains("<span class=\"slug\">hello-fences</span>"),
        "{hello}"
    );
    assert!(read(d, "tags/rust/index.html").contains(" 1 November 2026"));
    // HTML in Markdown is text by default.
    assert!(
        hello.contains("Raw &lt;span class=\"raw\"&gt;html&lt;/span&gt; stays text here."),
        "{hello}"
    );
    assert!(!hello.contains("<span class=\"raw\">"));
}

/// `unsafe_html = true` passes HTML through, and heading ids can be turned off.
fn unsafe_html_passes_through_and_ids_turn_off() {
    let t = fixture("features");
    let cfg = std::fs::read_to_string(t.path("fencepost.toml")).unwrap();
    t.write(
        "fencepost.toml",
        &cfg.replace("unsafe_html = false", "unsafe_html = true")
            .replace("heading_ids = true", "heading_ids = false"),
    );
    t.publish(BEFORE);
    let d = dir_of(&build(&t, BEFORE, &[]));
    let hello = read(&d, "posts/hello/index.html");
    assert!(
        hello.contains("Raw <span class=\"raw\">html</span> stays text here."),
        "{hello}"
    );
    assert!(hello.contains("<h2>Getting started</h2>"), "{hello}");
}

#[test]
fn markdown_and_template_features_render() {
    let s = fixture("features");
    s.publish(BEFORE);
    let d = dir_of(&build(&s, BEFORE, &[]));
    let hello = read(&d, "posts/hello/index.html");
    highlighting_and_summaries_render(&d, &hello);
    ids_filters_and_html_as_text(&d, &hello);
    // And every byte of them, against reviewed snapshots: what the checks above do not name
    // must not change unseen either.
    for path in [
        "posts/hello/index.html",
        "posts/index.html",
        "posts/atom.xml",
        "posts/rss.xml",
        "tags/rust/index.html",
        "about/index.html",
    ] {
        insta::assert_snapshot!(path.replace('/', "_"), read(&d, path));
    }
    unsafe_html_passes_through_and_ids_turn_off();
}

#[test]
fn rerender_applies_a_changed_markdown_setting_to_published_items_only_where_pages_change() {
    let s = fixture("features");
    s.publish(BEFORE);
    build(&s, BEFORE, &[]);
    let before = s.revision();
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("heading_ids = true", "heading_ids = false"),
    );
    // A plain run leaves published bodies as they were rendered.
    let r = s.publish(BEFORE);
    assert_eq!(r["updated"], serde_json::json!([]), "{r}");
    // --rerender: the two posts have headings and change; the advisories do not.
    let out = s
        .cmd(&["publish", "--json", "--now", BEFORE, "--rerender"])
        .output()
        .unwrap();
    assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut updated: Vec<String> = r["updated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    updated.sort();
    assert_eq!(updated, ["posts/hello", "posts/second"], "{r}");
    assert_eq!(
        s.revision(),
        before + 2,
        "one revision per changed page, none for the rest"
    );
    let d = dir_of(&build(&s, BEFORE, &[]));
    assert!(read(&d, "posts/hello/index.html").contains("<h2>Getting started</h2>"));
    // Again: nothing left to change.
    let out = s
        .cmd(&["publish", "--json", "--now", BEFORE, "--rerender"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["updated"], serde_json::json!([]), "{r}");
    assert_eq!(s.revision(), before + 2);
    s.cmd(&["verify"]).assert().success();
}
