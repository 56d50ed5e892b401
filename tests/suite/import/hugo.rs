//! Real Hugo sites imported: Hugo's own example site, Ananke's, PaperMod's nested sections,
//! and a YAML site with a bundle, a draft and an embargo — every old URL kept.
use super::*;

/// What the report says it skipped (the menu, a shortcode, a headless bundle, the feeds'
/// URLs), and the settings that came along.
fn the_report_and_the_settings_of_hugos_example(r: &serde_json::Value, dst: &Path) {
    let skipped = not_converted(r);
    assert!(
        skipped.contains(&("config.toml".into(), None, "[menu]".into())),
        "{r}"
    );
    assert!(
        skipped.contains(&(
            "content/post/emoji-support.md".into(),
            Some(32),
            "shortcode css.inline".into()
        )),
        "{r}"
    );
    assert!(skipped.iter().any(|s| s.2 == "headless bundle"), "{r}");
    assert!(
        skipped.contains(&("config.toml".into(), None, "feed URLs".into())),
        "{r}"
    );
    // The site's author, page size and RSS come along.
    let config: toml::Table =
        toml::from_str(&std::fs::read_to_string(dst.join("fencepost.toml")).unwrap()).unwrap();
    assert_eq!(config["author"].as_str(), Some("Steve Francia"));
    assert_eq!(config["build"]["page_size"].as_integer(), Some(3));
    assert_eq!(config["feeds"], toml::Value::from(vec!["atom", "rss"]));
    assert!(r["shortcodes_converted"].as_i64().unwrap() >= 4, "{r}");
}

/// Every post at the URL Hugo gave it (/post/<file>/), an alias redirected, the home page
/// newest first (by the posts' own dates).
fn every_url_of_hugos_example_answers(srv: &Server) {
    for post in [
        "emoji-support",
        "markdown-syntax",
        "math-typesetting",
        "placeholder-text",
        "rich-content",
    ] {
        assert_eq!(srv.get(&format!("/post/{post}/")).status, 200, "{post}");
    }
    // The About page keeps its date and its aliases (relative ones are against the root).
    let about = srv.get("/about/");
    assert_eq!(about.status, 200);
    assert!(
        about.text().contains("28 February 2019"),
        "{}",
        about.text()
    );
    for alias in ["/about-us/", "/about-hugo/", "/contact/"] {
        let r = srv.get(alias);
        assert_eq!(
            (r.status, r.header("location")),
            (301, Some("/about/")),
            "{alias}"
        );
    }
    let moved = srv.get("/post/migrate-from-jekyl/");
    assert_eq!(moved.status, 301);
    assert_eq!(moved.header("location"), Some("/post/markdown-syntax/"));
    let home = srv.get("/").text();
    let at = |t: &str| {
        home.find(t)
            .unwrap_or_else(|| panic!("{t} not on the home page"))
    };
    assert!(
        at("Rich Content") < at("Emoji Support"),
        "newest first: {home}"
    );
}

#[test]
fn hugos_own_example_site_imports_publishes_and_keeps_every_url() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", &fixture_dir("import/hugo-basic"), &dst);
    assert_eq!(r["items"], 5, "{r}");
    assert_eq!(r["plain_pages"], 2, "{r}");
    assert_eq!(r["collections"], serde_json::json!(["post"]), "{r}");
    the_report_and_the_settings_of_hugos_example(&r, &dst);

    // Again into the same folder: refused, nothing changed.
    let before = tree(&dst);
    let out = fencepost()
        .args(["import", "hugo"])
        .arg(fixture_dir("import/hugo-basic"))
        .arg(&dst)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("is not empty"), "{said}");
    assert_eq!(tree(&dst), before);

    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 5, "{p}");
    assert_eq!(p["build"]["broken_links"], serde_json::json!([]), "{p}");
    assert_no_shortcodes(&s);
    // The paired inline shortcode's body (a `<style>` block: template code) went with it.
    let emoji = s.current_file("post/emoji-support/index.html");
    assert!(
        !emoji.contains("emojify {") && !emoji.contains("&lt;style&gt;"),
        "{emoji}"
    );
    let rich = s.current_file("post/rich-content/index.html");
    assert!(
        rich.contains("https://www.youtube-nocookie.com/embed/ZJthWmvUzzc"),
        "{rich}"
    );
    every_url_of_hugos_example_answers(&s.serve(&[]));
}

/// The example site of the Ananke theme (vendored, MIT): YAML front matter, its content
/// under `[languages.en] contentDir = "content/en"` beside a French one, a bundle at the root
/// (`about/index.md`), `figure` and a custom shortcode.
#[test]
fn the_ananke_example_site_imports_both_languages_and_keeps_every_url() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", &fixture_dir("import/hugo-ananke"), &dst);
    assert_eq!(
        (r["items"].as_i64(), r["plain_pages"].as_i64()),
        (Some(7), Some(3)),
        "{r}"
    );
    // Issue 83: the French content folder is imported, each page beside its original.
    assert_eq!(r["languages"], serde_json::json!({"en": 6, "fr": 1}), "{r}");
    assert!(dst.join("content/post/chapter-1.fr.md").is_file());
    assert_eq!(r["collections"], serde_json::json!(["post"]), "{r}");
    let skipped = not_converted(&r);
    for expected in [(
        "content/en/contact.md".into(),
        Some(14),
        "shortcode form-contact".into(),
    )] {
        assert!(skipped.contains(&expected), "{expected:?} in {r}");
    }
    // The post's own instant, offset and all.
    let chapter = std::fs::read_to_string(dst.join("content/post/chapter-1.md")).unwrap();
    assert!(
        chapter.contains("publish_at = 2017-04-09T10:58:08-04:00"),
        "{chapter}"
    );

    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 7, "{p}");
    assert_eq!(p["build"]["broken_links"], serde_json::json!([]), "{p}");
    assert_no_shortcodes(&s);
    let srv = s.serve(&[]);
    for n in 1..=6 {
        assert_eq!(
            srv.get(&format!("/post/chapter-{n}/")).status,
            200,
            "chapter {n}"
        );
    }
    let about = srv.get("/about/").text();
    assert!(
        about.contains("<img src=\"/images/Victor_Hugo-Hunchback.jpg\""),
        "{about}"
    );
    assert_eq!(srv.get("/images/Victor_Hugo-Hunchback.jpg").status, 200);
    assert_eq!(srv.get("/contact/").status, 200);
    // Hugo's French URLs: the language's home, its post, its contact page.
    for url in [
        "/fr/",
        "/fr/post/chapter-1/",
        "/fr/contact/",
        "/fr/404.html",
    ] {
        assert_eq!(srv.get(url).status, 200, "{url}");
    }
    let fr = srv.get("/fr/post/chapter-1/").text();
    assert!(
        fr.contains("<html lang=\"fr\">") && fr.contains("hreflang=\"en\""),
        "{fr}"
    );
    let home = srv.get("/").text();
    let at = |t: &str| {
        home.find(t)
            .unwrap_or_else(|| panic!("{t} not on the home page"))
    };
    assert!(
        at("/post/chapter-6/") < at("/post/chapter-1/"),
        "newest first: {home}"
    );
}

/// A Hugo site as people write one now: `hugo.yaml`, YAML front matter, a permalink with
/// dates, a page bundle, a draft, an embargoed post, aliases and a typo.
#[test]
fn a_yaml_hugo_site_with_a_bundle_a_draft_and_an_embargo_imports_as_it_was() {
    let src = source(&[
        ("hugo.yaml", "baseURL: https://blog.example.org/\ntitle: A blog\npermalinks:\n  posts: /:year/:month/:slug/\ntaxonomies:\n  tag: tags\n"),
        ("content/posts/_index.md", "---\ntitle: Posts\n---\n"),
        ("content/posts/trip/index.md", "---\ntitle: The trip\ndate: 2026-05-02T10:00:00Z\ntags: [travel]\naliases: [/trip.html]\n---\n![cover](cover.svg)\n{{< figure src=\"cover.svg\" caption=\"The view\" >}}\n"),
        ("content/posts/trip/cover.svg", SVG),
        ("content/posts/wip.md", "---\ntitle: Not yet\ndate: 2026-06-01\ndraft: true\n---\nWIP.\n"),
        ("content/posts/later.md", "---\ntitle: Later\npublishDate: 2027-01-01T00:00:00Z\nslug: the-future\n---\nSoon.\n"),
        ("static/robots.txt", "User-agent: *\n"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", src.path(), &dst);
    assert_eq!(
        (
            r["items"].as_i64(),
            r["drafts"].as_i64(),
            r["bundle_files"].as_i64()
        ),
        (Some(3), Some(1), Some(1)),
        "{r}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"], serde_json::json!(["posts/trip"]), "{p}");
    assert_eq!(s.current_file("2026/05/trip/cover.svg"), SVG);
    assert_eq!(s.current_file("robots.txt"), "User-agent: *\n");
    assert!(s
        .current_file("2026/05/trip/index.html")
        .contains("The view"));
    assert!(
        !s.current_dir().join("2027").exists(),
        "embargoed: nowhere yet"
    );
    assert_no_shortcodes(&s);
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/trip.html").status, 301);
    drop(srv);
    let p = s.json(&["publish", "--build", "--now", "2027-01-01T00:00:00Z"]);
    assert_eq!(
        p["published"],
        serde_json::json!(["posts/the-future"]),
        "{p}"
    );
    assert!(s
        .current_dir()
        .join("2027/01/the-future/index.html")
        .is_file());
}

/// Guards: issue 48 (points 1, 2, 4, 9) on a second real site: PaperMod's example site
/// (vendored, MIT) — YAML, three languages with the taxonomies under `languages.en`, nested
/// sections, inline shortcodes. Its own `publish` accepts it whole; every page Hugo publishes
/// (not the drafts, not the expired one) answers at the URL Hugo gave it, nested section
/// paths kept; its aliases answer 301; the `series` taxonomy of the default language is
/// kept; no shortcode syntax reaches a page.
#[test]
fn papermods_example_site_imports_with_nested_sections_at_their_urls() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/hugo-papermod");
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", &fixture, &dst);
    assert_eq!(
        r["taxonomies"],
        serde_json::json!(["categories", "series", "tags"]),
        "{r}"
    );
    // Issue 79.6: the custom output formats (a JSON search index) are named, not dropped.
    let named = |key: &str| not_converted(&r).contains(&("config.yml".into(), None, key.into()));
    assert!(named("[outputFormats]") && named("[outputs]"), "{r}");
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    let published = p["published"].as_array().unwrap().len();
    assert_eq!(published, 12, "and 2 translations: {p}");
    let origin = s.serve(&[]);
    let srv = Under(&origin, "/hugo-PaperMod");
    for url in [
        "/posts/audio-video/",
        "/fr/posts/markdown-syntax/",
        "/fa/posts/markdown-syntax/",
        "/posts/code_syntax/",
        "/posts/emoji-support/",
        "/posts/markdown-syntax/",
        "/posts/math-typesetting/",
        "/posts/rich-content/",
        "/posts/inner-section/md-blog/",
        "/posts/inner-section/md-headings/",
        "/posts/inner-section/md-lists/",
        "/posts/papermod/papermod-installation/",
        "/posts/",
        "/posts/inner-section/",
        "/posts/papermod/",
        "/about/",
        "/series/themes-guide/",
    ] {
        assert_eq!(srv.get(url).status, 200, "{url}");
    }
    for (alias, to) in [
        ("/posts/migrate-from-jekyl/", "/posts/markdown-syntax/"),
        (
            "/papermod-installation/",
            "/posts/papermod/papermod-installation/",
        ),
    ] {
        let r = srv.get(alias);
        let to = format!("/hugo-PaperMod{to}");
        assert_eq!(
            (r.status, r.header("location")),
            (301, Some(to.as_str())),
            "{alias}"
        );
    }
    assert_served_under_its_path(&origin, "/hugo-PaperMod", "https://adityatelange.github.io");
    assert_no_shortcodes(&s);
    // Issue 78.9: `math.inline`'s body (Go template code, a blank line, a `{{</ x >}}`
    // closing tag) goes with it, reported at its line; it used to reach the page whole.
    let math = srv.get("/posts/math-typesetting/").text();
    for leak in ["{{ if", ".Page.Params", "{{ end", "katex.min.css"] {
        assert!(!math.contains(leak), "{leak} in {math}");
    }
    for line in [32, 44] {
        let at = (
            "content/posts/math-typesetting.md".to_string(),
            Some(line),
            "shortcode math.inline".to_string(),
        );
        assert!(not_converted(&r).contains(&at), "{at:?}: {r}");
    }
    // The report names what the languages held that one language cannot: its menus.
    let nc = not_converted(&r);
    assert!(
        nc.iter()
            .any(|(f, _, w)| f == "config.yml" && w == "[languages.en.menu]"),
        "{r}"
    );
}
