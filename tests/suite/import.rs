//! `fencepost import hugo|zola SRC DST` (issue 38): a real Hugo example site (vendored,
//! MIT), a Hugo site with YAML front matter, permalinks, a page bundle, a draft and an
//! embargoed post, and a Zola site — each imported, published, built and served.
mod origins;
mod sections;

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// `fencepost import FROM SRC DST --json` (run from `dir`), expecting success.
fn import(dir: &Path, from: &str, src: &Path, dst: &Path) -> Value {
    let out = fencepost()
        .current_dir(dir)
        .args(["import", from])
        .arg(src)
        .arg(dst)
        .args(["--json", "--now", NOW])
        .output()
        .unwrap();
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A source site of `files` in a temporary folder.
fn source(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The imported site at `dst`, as a TestSite (its tempdir kept by the caller).
fn site_at(dst: &Path) -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(dst, dir.path());
    TestSite { dir }
}

/// No shortcode reached a page: `{{<`/`{{%` (or escaped) outside highlighted code spans.
fn assert_no_shortcodes(s: &TestSite) {
    for (path, bytes) in files_under(&s.current_dir()) {
        let text = String::from_utf8_lossy(&bytes)
            .replace("{{</span>", "")
            .replace("{{&lt;/span&gt;", "");
        for bad in ["{{< ", "{{<", "{{% ", "{{&lt;", "{{%"] {
            assert!(!text.contains(bad), "{path} holds {bad:?}");
        }
    }
}

fn not_converted(r: &Value) -> Vec<(String, Option<i64>, String)> {
    r["not_converted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["file"].as_str().unwrap().to_string(),
                u["line"].as_i64(),
                u["what"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn hugos_own_example_site_imports_publishes_and_keeps_every_url() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", &fixture_dir("import/hugo-basic"), &dst);
    assert_eq!(r["items"], 5, "{r}");
    assert_eq!(r["plain_pages"], 2, "{r}");
    assert_eq!(r["collections"], serde_json::json!(["post"]), "{r}");
    let skipped = not_converted(&r);
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
    // Every post at the URL Hugo gave it (/post/<file>/), an alias redirected, the home
    // page newest first (by the posts' own dates).
    let srv = s.serve(&[]);
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

/// The example site of the Ananke theme (vendored, MIT): YAML front matter, its content
/// under `[languages.en] contentDir = "content/en"` beside a French one, a bundle at the root
/// (`about/index.md`), `figure` and a custom shortcode.
#[test]
fn the_ananke_example_site_imports_its_default_language_and_keeps_every_url() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", &fixture_dir("import/hugo-ananke"), &dst);
    assert_eq!(
        (r["items"].as_i64(), r["plain_pages"].as_i64()),
        (Some(6), Some(2)),
        "{r}"
    );
    assert_eq!(r["collections"], serde_json::json!(["post"]), "{r}");
    let skipped = not_converted(&r);
    for expected in [
        ("content/fr/".into(), None, "language fr".into()),
        (
            "content/en/contact.md".into(),
            Some(14),
            "shortcode form-contact".into(),
        ),
    ] {
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
    assert_eq!(p["published"].as_array().unwrap().len(), 6, "{p}");
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
    assert_eq!(srv.get("/fr/").status, 404, "one language only");
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

/// The Terminimal theme's own site (vendored, MIT), a Zola blog as people write one: posts in
/// the root section, a `render = false` section of pages at `path = "about"`, the theme's own
/// shortcodes, Tera templates.
#[test]
fn the_terminimal_zola_site_imports_its_root_blog_with_dates_tags_and_urls() {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let src = fixture_dir("import/zola-terminimal");
    let r = import(tmp.path(), "zola", &src, &dst);
    assert_eq!(
        (r["items"].as_i64(), r["plain_pages"].as_i64()),
        (Some(5), Some(2)),
        "{r}"
    );
    let skipped = not_converted(&r);
    for expected in [
        (
            "content/welcome-terminimal-theme.md".into(),
            Some(84),
            "shortcode figure".into(),
        ),
        (
            "content/welcome-terminimal-theme.md".into(),
            Some(100),
            "shortcode image".into(),
        ),
    ] {
        assert!(skipped.contains(&expected), "{expected:?} in {r}");
    }
    // Its own templates are kept (Zola writes Tera): nothing says they were not.
    assert!(
        !skipped.iter().any(|(f, _, _)| f.starts_with("templates")),
        "{r}"
    );
    // The root section's `paginate_by = 2` is the posts' page size.
    let config: toml::Table =
        toml::from_str(&std::fs::read_to_string(dst.join("fencepost.toml")).unwrap()).unwrap();
    assert_eq!(
        config["collections"]["posts"]["page_size"].as_integer(),
        Some(2)
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 5, "{p}");
    // The only broken links are the theme's stylesheets, which the fixture leaves out.
    for l in p["build"]["broken_links"].as_array().unwrap() {
        assert!(l["link"].as_str().unwrap().ends_with(".css"), "{l}");
    }
    let srv = s.serve(&[]);
    assert_terminimal_renders_its_own_templates(&Under(&srv, "/zola-theme-terminimal"));
    // Every page at the URL Zola gave it, under the base URL's path (a GitHub Pages project
    // site): root posts at /slug/, pages at their `path`.
    let srv = Under(&srv, "/zola-theme-terminimal");
    for url in [
        "/zola-is-nice/",
        "/more-ranting/",
        "/welcome-terminimal-theme/",
        "/about/",
        "/archive/",
        "/tags/zola/",
    ] {
        assert_eq!(srv.get(url).status, 200, "{url}");
    }
    let zola = srv.get("/tags/zola/").text();
    assert!(
        zola.contains("/zola-is-nice/") && !zola.contains("/more-ranting/"),
        "{zola}"
    );
    let welcome = srv.get("/welcome-terminimal-theme/").text();
    for call in ["{{ figure(", "{{ image("] {
        assert!(!welcome.contains(call), "{call} left in {welcome}");
    }
    // Newest first, by the posts' own dates (2019-02-04 … 2019-01-03), as the archive page
    // lists every post.
    let home = srv.get("/archive/").text();
    let at = |t: &str| {
        home.find(&format!("/zola-theme-terminimal{t}"))
            .unwrap_or_else(|| panic!("{t} not on the archive page"))
    };
    assert!(
        at("/welcome-terminimal-theme/") < at("/more-ranting/"),
        "{home}"
    );
    assert!(at("/zola-is-nice/") < at("/learning-javascript/"), "{home}");
}

const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"/>\n";

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

#[test]
fn a_zola_site_imports_with_its_taxonomies_and_its_shortcodes_reported() {
    let src = source(&[
        ("config.toml", "base_url = \"https://zola.example.org\"\ntitle = \"Zola blog\"\ntaxonomies = [{ name = \"tags\", feed = true }]\n"),
        ("content/blog/_index.md", "+++\ntitle = \"Blog\"\nsort_by = \"date\"\n+++\n"),
        ("content/blog/first.md", "+++\ntitle = \"First\"\ndate = 2026-01-05\n[taxonomies]\ntags = [\"intro\"]\n[extra]\nmood = \"glad\"\n+++\nHello.\n\n{{ youtube(id=\"abc\") }}\n"),
        ("content/blog/second.md", "+++\ntitle = \"Second\"\ndate = 2026-02-05\npath = \"/blog/2nd/\"\n+++\nAgain.\n"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert_eq!(r["items"], 2, "{r}");
    assert!(
        not_converted(&r).contains(&(
            "content/blog/first.md".into(),
            Some(11),
            "shortcode youtube".into()
        )),
        "{r}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 2, "{p}");
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/blog/first/").status, 200);
    assert_eq!(srv.get("/tags/intro/").status, 200);
    assert_eq!(srv.get("/blog/2nd/").status, 301);
    assert!(!srv.get("/blog/first/").text().contains("youtube("));
}

/// Issue 47.1: import never reads outside its source. A symlinked `static/`, a symlinked file
/// and a symlinked bundle folder that lead out of SRC (a cloned repository can carry them)
/// are not followed — each reported with its reason — and after `publish --build` nothing of
/// the importer's disk is in the live revision; a `contentDir` that is absolute or leaves SRC
/// is refused, writing nothing. A link to a file inside SRC is read as that file.
#[test]
fn import_never_reads_outside_its_source() {
    let secrets = tempfile::tempdir().unwrap();
    std::fs::write(secrets.path().join("id_rsa"), "PRIVATE KEY").unwrap();
    std::fs::write(secrets.path().join("secret.txt"), "SECRET").unwrap();
    std::fs::create_dir_all(secrets.path().join("bundle")).unwrap();
    std::fs::write(
        secrets.path().join("bundle/index.md"),
        "---\ntitle: Stolen\ndate: 2026-01-01\n---\nx\n",
    )
    .unwrap();
    std::fs::write(secrets.path().join("bundle/key.pem"), "PEM").unwrap();
    let src = source(&[
        (
            "hugo.toml",
            "baseURL = \"https://example.org/\"\ntitle = \"T\"\n",
        ),
        (
            "content/posts/a.md",
            "---\ntitle: A\ndate: 2026-01-01\n---\nBody.\n",
        ),
        ("assets/real.css", "body{}"),
    ]);
    let link = |to: &Path, at: &str| {
        let p = src.path().join(at);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(to, p).unwrap();
    };
    link(secrets.path(), "static");
    link(
        &secrets.path().join("secret.txt"),
        "content/posts/secret.md",
    );
    link(&secrets.path().join("bundle"), "content/posts/stolen");
    link(&src.path().join("content/posts/a.md"), "content/posts/b.md");
    let work = tempfile::tempdir().unwrap();
    let dst = work.path().join("site");
    let r = import(work.path(), "hugo", src.path(), &dst);
    let reported: Vec<String> = not_converted(&r)
        .into_iter()
        .filter(|(_, _, what)| what == "symbolic link")
        .map(|(f, _, _)| f)
        .collect();
    for f in ["static/", "content/posts/secret.md", "content/posts/stolen"] {
        assert!(reported.iter().any(|r| r == f), "{f} not reported: {r}");
    }
    let s = site_at(&dst);
    s.json(&["publish", "--build", "--now", NOW]);
    for (path, bytes) in files_under(&s.current_dir())
        .into_iter()
        .chain(files_under(s.root()))
    {
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["PRIVATE KEY", "SECRET", "PEM", "Stolen"] {
            assert!(!text.contains(secret), "{path} holds {secret}");
        }
    }
    // The link inside SRC is the file it names: b is A's text.
    assert!(s.path("content/posts/b.md").exists(), "{r}");
    // A contentDir outside SRC: refused, nothing written.
    for dir in ["../outside", "/etc"] {
        let src = source(&[(
            "hugo.toml",
            &format!("baseURL = \"https://example.org/\"\ncontentDir = \"{dir}\"\n"),
        )]);
        let dst = work.path().join("refused");
        let out = fencepost()
            .args(["import", "hugo"])
            .arg(src.path())
            .arg(&dst)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("leads out of the source site"), "{err}");
        assert!(!dst.exists(), "nothing written");
    }
}

/// Issue 47.10: one page that is not UTF-8 is reported and the rest imported (it used to abort
/// the import); `url: ".."` or `"."` makes no hidden `content/.md` (reported; the page keeps
/// its section's URL); an alias spelt `…/index.html` is the page it names, so one onto the
/// page itself is dropped and one onto the home page reported — the site's own publish then
/// holds nothing.
#[test]
fn import_reports_a_non_utf8_page_a_dot_url_and_index_html_aliases_and_publishes_clean() {
    let src = source(&[
        ("hugo.toml", "baseURL = \"https://example.org/\"\ntitle = \"T\"\n"),
        ("content/posts/a.md", "---\ntitle: A\ndate: 2026-01-01\naliases: [\"/posts/a/index.html\", \"/old/a/index.html\", \"/index.html\"]\n---\nBody.\n"),
        ("content/posts/dots.md", "---\ntitle: Dots\nurl: \"..\"\n---\nDots.\n"),
        ("content/posts/dot.md", "---\ntitle: Dot\nurl: \".\"\n---\nDot.\n"),
    ]);
    std::fs::write(
        src.path().join("content/posts/latin1.md"),
        b"---\ntitle: Caf\xe9\ndate: 2026-01-01\n---\nCaf\xe9.\n",
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let dst = work.path().join("site");
    let r = import(work.path(), "hugo", src.path(), &dst);
    let nc = not_converted(&r);
    assert!(
        nc.iter()
            .any(|(f, l, w)| f == "content/posts/latin1.md" && *l == Some(2) && w == "page"),
        "{r}"
    );
    for f in ["content/posts/dots.md", "content/posts/dot.md"] {
        assert!(nc.iter().any(|(g, _, w)| g == f && w == "url"), "{f}: {r}");
    }
    assert!(
        nc.iter()
            .any(|(f, _, w)| f == "content/posts/a.md" && w == "alias"),
        "the home page alias: {r}"
    );
    assert!(!dst.join("content/.md").exists());
    let a = std::fs::read_to_string(dst.join("content/posts/a.md")).unwrap();
    assert!(
        a.contains("\"/old/a/\"") && !a.contains("index.html"),
        "{a}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    assert_eq!(p["held"], serde_json::json!([]), "{p}");
    assert!(s.current_file("old/a/index.html").contains("/posts/a/"));
}

/// Guards: issue 48 (points 1, 3, 4) — a Zola site as Zola reads it: front matter after blank
/// lines (Zola's own docs write it so), `@/` internal links resolved to the new URLs (a
/// section's `_index.md` to its list), only `{{ name(key=literal) }}` taken for a shortcode
/// (`{{ get_url(path=asset) }}` is text), a link written out in a code sample no broken link, the `{{/* … */}}` escape
/// shown as Zola shows it, a taxonomy named `theme-tags` accepted by publish; and Hugo tags
/// `HTML` and `html` folded into one term as Hugo does, and no alias written twice or onto
/// another page. Each site's own `publish` accepts it whole.
#[test]
fn a_zola_site_with_blank_lines_links_and_escapes_and_a_hugo_site_with_folded_tags_publish_whole() {
    let src = source(&[
        ("config.toml", "base_url = \"https://zola.example.org\"\ntitle = \"Docs\"\ntaxonomies = [{ name = \"theme-tags\" }]\n"),
        ("content/docs/_index.md", "\n+++\ntitle = \"Docs\"\n+++\n"),
        ("content/docs/install.md", "\n\n+++\ntitle = \"Install\"\ndate = 2026-01-05\n[taxonomies]\ntheme-tags = [\"setup\"]\n+++\nSee [usage](@/docs/usage.md#flags) and [all docs](@/docs/_index.md).\n\nUse `{{ page.title }}` or {{ get_url(path=asset) }} in templates.\n\n```\n<a href=\"{{ page.permalink }}\">x</a>\n```\n\n{{/* youtube(id=\"shown\") */}}\n"),
        ("content/docs/usage.md", "+++\ntitle = \"Usage\"\ndate = 2026-01-06\n+++\nBack to [install](@/docs/install.md) or [nowhere](@/docs/gone.md).\n"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert_eq!(r["items"], 2, "{r}");
    let nc = not_converted(&r);
    assert!(
        nc.contains(&(
            "content/docs/usage.md".into(),
            Some(5),
            "link @/docs/gone.md".into()
        )),
        "{r}"
    );
    assert!(
        !nc.iter()
            .any(|(_, _, what)| what.contains("shortcode") || what.contains("front matter")),
        "nothing here is a shortcode or bad front matter: {r}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 2, "{p}");
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    // A link written out in a code sample is no broken link.
    assert!(!p.to_string().contains("permalink"), "{p}");
    let srv = s.serve(&[]);
    let page = srv.get("/docs/install/").text();
    assert!(
        page.contains("<h1>Install</h1>") || page.contains(">Install<"),
        "{page}"
    );
    assert!(
        !page.contains("+++") && !page.contains("title ="),
        "no raw front matter: {page}"
    );
    assert!(page.contains("href=\"/docs/usage/#flags\""), "{page}");
    assert!(page.contains("href=\"/docs/\""), "{page}");
    assert!(!page.contains("@/"), "{page}");
    assert!(page.contains("{{ get_url(path=asset) }}"), "{page}");
    assert!(
        page.contains("&lt;a href=\"{{ page.permalink }}\"&gt;")
            || page.contains("&lt;a href=&quot;{{ page.permalink }}&quot;&gt;"),
        "{page}"
    );
    assert!(
        page.contains("{{ youtube(id=&quot;shown&quot;) }}")
            || page.contains("{{ youtube(id=\"shown\") }}"),
        "{page}"
    );
    assert_eq!(srv.get("/theme-tags/setup/").status, 200);
    assert!(srv
        .get("/docs/usage/")
        .text()
        .contains("href=\"/docs/install/\""));

    // Hugo folds tag case: `HTML` and `html` are one term, spelt as the first page did.
    let src = source(&[
        (
            "hugo.toml",
            "baseURL = \"https://hugo.example.org/\"\ntitle = \"Posts\"\nenableEmoji = true\n[markup.goldmark.renderer]\nunsafe = true\n",
        ),
        (
            "content/posts/a.md",
            "---\ntitle: A\ndate: 2026-01-05\ntags: [HTML, css]\n---\nA.\n\n<div class=\"raw\">raw</div>\n",
        ),
        (
            "content/posts/b.md",
            "---\ntitle: B\ndate: 2026-01-06\ntags: [html, Html, CSS]\n---\nB.\n",
        ),
        // Two pages claim one alias, and one claims another page's URL.
        (
            "content/posts/c.md",
            "---\ntitle: C\ndate: 2026-01-07\naliases: [/old/]\n---\nC.\n",
        ),
        (
            "content/posts/d.md",
            "---\ntitle: D\ndate: 2026-01-08\naliases: [/old/, /posts/a/]\n---\nD.\n",
        ),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", src.path(), &dst);
    assert_eq!(r["terms_folded"], 3, "{r}");
    let nc = not_converted(&r);
    assert_eq!(
        nc.iter()
            .filter(|(f, _, w)| f == "content/posts/d.md" && w == "alias")
            .count(),
        2,
        "{r}"
    );
    let b = std::fs::read_to_string(dst.join("content/posts/b.md")).unwrap();
    assert!(b.contains("tags = [\"HTML\", \"css\"]"), "{b}");
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 4, "{p}");
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    let srv = s.serve(&[]);
    let old = srv.get("/old/");
    assert_eq!(old.status, 301);
    assert_eq!(old.header("location"), Some("/posts/c/"));
    // Hugo's `unsafe = true` kept: raw HTML renders as it did; `enableEmoji` reported.
    assert!(srv
        .get("/posts/a/")
        .text()
        .contains("<div class=\"raw\">raw</div>"));
    assert!(
        not_converted(&r)
            .iter()
            .any(|(f, _, w)| f == "hugo.toml" && w == "enableEmoji"),
        "{r}"
    );
}

/// Guards: issue 48 (points 1–4, 9, 10) on a real site it was not built against: Zola's own
/// documentation (vendored, MIT), with nested sections, front matter after blank lines, `@/`
/// links, Tera written out in code samples and Zola's escape, and a `theme-tags` taxonomy.
/// Its own `publish` accepts it whole; every page answers at the URL Zola gave it (nested
/// section paths kept, `zola.386` slugified to `zola-386`); no page holds raw front matter, a
/// `@/` link or an unescaped shortcode; the report names only the site's own shortcodes
/// (no false "no date" or "bundle file" lines); the starter templates invent no `/about/`
/// link and show no date on an undated page.
#[test]
fn zolas_own_documentation_imports_publishes_and_keeps_every_url() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/zola-docs");
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", &fixture, &dst);
    assert_eq!(r["items"], 46, "{r}");
    // What is lost: the image shortcodes (the site's own templates), the settings and the
    // sections' keys with no counterpart, each named. Nothing else (no false "no date" or "bundle file" lines).
    let nc = not_converted(&r);
    for (file, _, what) in &nc {
        let image = what.starts_with("shortcode ") && file.ends_with("image-processing/index.md");
        let section = file.ends_with("/_index.md");
        let template = what == "template";
        assert!(
            image || section || template || file == "config.toml",
            "{file}: {what}"
        );
    }
    // A section's keys its collection cannot keep are named (its own weight among the
    // sections); `redirect_to` and `sort_by = "weight"` are kept, so not named.
    let content_index = "content/documentation/content/_index.md".to_string();
    for (key, named) in [("weight", true), ("redirect_to", false), ("sort_by", false)] {
        assert_eq!(
            nc.contains(&(content_index.clone(), None, key.to_string())),
            named,
            "{key}: {r}"
        );
    }
    for setting in [
        "build_search_index",
        "markdown highlighting theme",
        "markdown",
    ] {
        assert!(
            nc.iter()
                .any(|(f, _, w)| f == "config.toml" && w == setting),
            "{setting}: {r}"
        );
    }
    // Zola passes HTML written in Markdown through: so does the imported site.
    let toml = std::fs::read_to_string(dst.join("fencepost.toml")).unwrap();
    assert!(
        toml.contains("[markdown]\n") && toml.contains("unsafe_html = true"),
        "{toml}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 46, "{p}");
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    let old_urls = zola_old_urls(&fixture.join("content"));
    assert_eq!(old_urls.len(), 46);
    let srv = s.serve(&[]);
    for url in &old_urls {
        let r = srv.get(url);
        assert_eq!(r.status, 200, "{url}");
        let page = r.text();
        assert!(!page.contains("<p>+++"), "{url}: raw front matter");
        assert!(
            !page.contains("<a href=\"@/"),
            "{url}: an unresolved @/ link"
        );
        assert!(
            !page.contains("href=\"/about/\""),
            "{url}: a link to a page that is not there"
        );
        assert!(
            !page.contains("{{/*"),
            "{url}: Zola's escape left as written"
        );
    }
    for list in ["/themes/", "/theme-tags/"] {
        assert_eq!(srv.get(list).status, 200, "{list}");
    }
    // Sections that redirect keep doing so, through a chain of them (`/documentation/` to
    // `getting-started/`, which redirects to its overview).
    for (section, to) in [
        (
            "/documentation/",
            "/documentation/getting-started/overview/",
        ),
        (
            "/documentation/getting-started/",
            "/documentation/getting-started/overview/",
        ),
        (
            "/documentation/content/",
            "/documentation/content/overview/",
        ),
    ] {
        let r = srv.get(section);
        assert_eq!(
            (r.status, r.header("location")),
            (301, Some(to)),
            "{section}"
        );
    }
    // `sort_by = "weight"`: each page's next is the next heavier one (overview 5,
    // installation 10, cli-usage 15, directory-structure 30, configuration 40).
    // Its own templates render every page: `documentation.html`'s sidebar lists each
    // subsection's pages through `get_section`, in their weight order.
    let installation = srv
        .get("/documentation/getting-started/installation/")
        .text()
        .replace("&#x2F;", "/");
    assert!(
        installation.contains("<title>Installation | Zola"),
        "{installation}"
    );
    assert!(
        installation.contains("documentation__sidebar__title\">Getting Started</span>"),
        "{installation}"
    );
    let at = |t: &str| {
        installation
            .find(&format!("href=\"/documentation/getting-started/{t}/\""))
            .unwrap_or_else(|| panic!("{t}: {installation}"))
    };
    assert!(
        at("overview") < at("installation")
            && at("installation") < at("cli-usage")
            && at("cli-usage") < at("directory-structure")
            && at("directory-structure") < at("configuration"),
        "{installation}"
    );
    assert!(installation.contains("<li class=\"active\">\n                            <a href=\"/documentation/getting-started/installation/\">"), "{installation}");
    let themes = srv.get("/themes/").text().replace("&#x2F;", "/");
    assert!(
        themes.contains("<h1>Zola themes</h1>") && themes.contains("href=\"/themes/zola-386/\""),
        "{themes}"
    );
    let home = srv.get("/").text().replace("&#x2F;", "/");
    assert!(
        home.contains("Your one-stop static site engine")
            && home.contains("href=\"/documentation/content/shortcodes/\""),
        "{home}"
    );
    for url in [
        "/",
        "/themes/",
        "/documentation/getting-started/installation/",
        "/theme-tags/",
    ] {
        let page = srv.get(url).text();
        assert!(
            !page.contains("{{") && !page.contains("{%"),
            "{url}: template code in {page}"
        );
    }
    let linking = srv.get("/documentation/templates/overview/").text();
    assert!(
        linking.contains("href=\"/documentation/content/linking/#internal-links\""),
        "{linking}"
    );
}

/// Terminimal's own templates, run with Zola's variables: its home page lists the newest
/// posts with their tags and a link to the older ones; its archive page (a page at the root
/// with `template = "archive.html"`) lists every post through `get_section`; a tag's page and
/// the tags index count their posts; a post links its tags and its neighbours.
fn assert_terminimal_renders_its_own_templates(srv: &Under<'_>) {
    let home = srv.get("/").text();
    assert_eq!(home.matches("class=\"post on-list\"").count(), 2, "{home}");
    assert!(
        home.contains("<a href=\"/zola-theme-terminimal/posts/page/2/\">"),
        "{home}"
    );
    assert!(
        home.contains("Terminimal theme") && home.contains("class=\"header__logo\""),
        "{home}"
    );
    let archive = srv.get("/archive/").text();
    assert_eq!(
        archive.matches("<li class=\"post-list\">").count(),
        5,
        "{archive}"
    );
    let tag = srv.get("/tags/zola/").text();
    assert!(
        tag.contains("tag: #zola") && tag.contains("(2 posts)"),
        "{tag}"
    );
    let tags = srv.get("/tags/").text();
    assert!(tags.contains("class=\"tag-list\""), "{tags}");
    let post = srv.get("/zola-is-nice/").text();
    assert!(
        post.contains("class=\"post-tag\" href=\"/zola-theme-terminimal/tags/zola/\""),
        "{post}"
    );
    assert!(post.contains("class=\"pagination__buttons\""), "{post}");
    let older = srv.get("/posts/page/2/").text();
    assert_eq!(
        older.matches("class=\"post on-list\"").count(),
        2,
        "{older}"
    );
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
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    assert_eq!(p["published"].as_array().unwrap().len(), 10, "{p}");
    let origin = s.serve(&[]);
    let srv = Under(&origin, "/hugo-PaperMod");
    for url in [
        "/posts/audio-video/",
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
    // The report names what the languages held that one language cannot: its menus.
    let nc = not_converted(&r);
    assert!(
        nc.iter()
            .any(|(f, _, w)| f == "config.yml" && w == "[languages.en.menu]"),
        "{r}"
    );
}

/// An origin seen from under a site's base path: `get("/a/")` asks for `/project/a/`.
struct Under<'a>(&'a Server, &'a str);

impl Under<'_> {
    fn get(&self, url: &str) -> HttpResponse {
        self.0.get(&format!("{}{url}", self.1))
    }
}

/// A site whose `base_url` has a path (`https://user.github.io/project/`) works under it:
/// every root-relative link, stylesheet and image of its home page and of a post is under the
/// path and answers; its feeds and sitemap name URLs under it; outside the path nothing
/// answers but `/`, which redirects there.
fn assert_served_under_its_path(srv: &Server, path: &str, host: &str) {
    let home = srv.get(&format!("{path}/"));
    assert_eq!(home.status, 200);
    let first_post = {
        let t = home.text();
        let at = t
            .find(&format!("href=\"{path}/posts/"))
            .expect("a post link");
        let rest = &t[at + 6..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    for page in [format!("{path}/"), first_post] {
        let html = srv.get(&page).text();
        let mut seen = 0;
        for attr in ["href=\"", "src=\""] {
            for (i, _) in html.match_indices(attr) {
                let v = &html[i + attr.len()..];
                let v = &v[..v.find('"').unwrap()];
                if !v.starts_with('/') || v.starts_with("//") {
                    continue;
                }
                assert!(v.starts_with(&format!("{path}/")), "{v} on {page}");
                let status = srv.get(v.split('#').next().unwrap()).status;
                assert!(status == 200 || status == 301, "{v} on {page}: {status}");
                seen += 1;
            }
        }
        assert!(seen > 3, "{page}: {html}");
        assert!(html.contains(&format!("{path}/style.")), "{html}");
    }
    let feed = srv.get(&format!("{path}/atom.xml")).text();
    assert!(feed.contains(&format!("{host}{path}/posts/")), "{feed}");
    assert!(!feed.contains(&format!("href=\"{host}/posts/")), "{feed}");
    let sitemap = srv.get(&format!("{path}/sitemap.xml")).text();
    assert!(
        sitemap.contains(&format!("<loc>{host}{path}/sitemaps/"))
            && !sitemap.contains(&format!("<loc>{host}/sitemaps/")),
        "{sitemap}"
    );
    assert_eq!(srv.get("/posts/").status, 404);
    let root = srv.get("/");
    assert_eq!(
        (root.status, root.header("location")),
        (301, Some(format!("{path}/").as_str()))
    );
}

/// The old URL of every page under `content` by Zola's rules: its path under content/,
/// `index.md` naming its folder, each segment slugified (`zola.386` is `zola-386`).
fn zola_old_urls(content: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(content).into_iter().flatten() {
        let rel = e
            .path()
            .strip_prefix(content)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if !rel.ends_with(".md") || rel.ends_with("_index.md") {
            continue;
        }
        let path = rel.trim_end_matches("/index.md").trim_end_matches(".md");
        let slugged: Vec<String> = path
            .split('/')
            .map(|p| p.to_lowercase().replace('.', "-"))
            .collect();
        out.push(format!("/{}/", slugged.join("/")));
    }
    out
}
