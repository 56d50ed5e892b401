//! Real Zola sites imported: terminimal's root blog, Zola's own documentation, taxonomies and
//! shortcodes reported — every old URL kept.
use super::*;

/// The Terminimal theme's own site (vendored, MIT), a Zola blog as people write one: posts in
/// the root section, a `render = false` section of pages at `path = "about"`, the theme's own
/// shortcodes, Tera templates.
/// The report names nothing of its templates or its shortcodes (both kept); the root section's `paginate_by = 2` is the posts' page size.
fn the_terminimal_report_and_page_size(r: &Value, dst: &Path) {
    let skipped = not_converted(r);
    // Issue 79.4: the theme's shortcodes (`figure`, `image`) are kept and render: no call
    // of them is reported.
    assert!(
        !skipped.iter().any(|(_, _, w)| w.starts_with("shortcode")),
        "{r}"
    );
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
}

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
    the_terminimal_report_and_page_size(&r, &dst);
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 5, "{p}");
    // Its stylesheets are compiled from its sass/ (`compile_sass = true`), as Zola compiles
    // them: no link is broken, and the theme's CSS is served.
    assert_eq!(p["build"]["broken_links"], serde_json::json!([]), "{p}");
    assert_eq!(p["build"]["left_out"], serde_json::json!([]), "{p}");
    let srv = s.serve(&[]);
    let css = Under(&srv, "/zola-theme-terminimal").get("/style.css");
    assert_eq!(css.status, 200);
    let css = css.text();
    assert!(css.contains(".logo") && !css.contains("@import"), "{css}");
    let blue = Under(&srv, "/zola-theme-terminimal").get("/color/blue.css");
    assert!(
        blue.status == 200 && blue.text().contains(":root"),
        "{}",
        blue.text()
    );
    assert_terminimal_renders_its_own_templates(&Under(&srv, "/zola-theme-terminimal"));
    // Its shortcodes render as Zola renders them: a figure with its Markdown caption, an
    // image placed left.
    let welcome = Under(&srv, "/zola-theme-terminimal")
        .get("/welcome-terminimal-theme/")
        .text();
    for shown in [
        "<figcaption class=\"left\" style=\"font-style: italic;\"><p><strong>Ferris</strong>",
        "<img src=\"https://upload.wikimedia.org/wikipedia/commons/3/35/Tux.svg\" class=\"left\"",
    ] {
        assert!(welcome.contains(shown), "{shown} in {welcome}");
    }
    assert!(!welcome.contains("{{ figure("), "{welcome}");
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
    the_report_names_only_what_is_lost(&r);
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
    // Zola's search index, as its config asks (`elasticlunr_json`), read by elasticlunr.
    let index = s.path("public/current/search_index.en.json");
    let found = crate::search::elasticlunr(&index, "shortcodes");
    assert!(
        !found.is_empty()
            && found
                .iter()
                .all(|r| r.starts_with("https://www.getzola.org/")),
        "{found:?}"
    );
    let srv = s.serve(&[]);
    every_old_url_answers_without_zolas_syntax(&srv, &old_urls);
    sections_that_redirect_keep_doing_so(&srv);
    its_own_templates_render_every_page(&srv);
}

/// What is lost: the image shortcodes (the site's own templates), the settings and the
/// sections' keys with no counterpart, each named. Nothing else (no false "no date" or
/// "bundle file" lines).
fn the_report_names_only_what_is_lost(r: &serde_json::Value) {
    let nc = not_converted(r);
    for (file, _, what) in &nc {
        let image = what.starts_with("shortcode ") && file.ends_with("image-processing/index.md");
        let section = file.ends_with("/_index.md");
        let template = what == "template";
        assert!(
            image || section || template || file == "config.toml",
            "{file}: {what}"
        );
    }
    // A section's keys its collection cannot keep are named; `redirect_to`, `sort_by =
    // "weight"` and its own weight (its collection's place in navigation) are kept.
    let content_index = "content/documentation/content/_index.md".to_string();
    for (key, named) in [
        ("insert_anchor_links", true),
        ("weight", false),
        ("redirect_to", false),
        ("sort_by", false),
    ] {
        assert_eq!(
            nc.contains(&(content_index.clone(), None, key.to_string())),
            named,
            "{key}: {r}"
        );
    }
    for setting in ["markdown highlighting theme", "markdown"] {
        assert!(
            nc.iter()
                .any(|(f, _, w)| f == "config.toml" && w == setting),
            "{setting}: {r}"
        );
    }
}

/// Every page answers at the URL Zola gave it, with no raw front matter, `@/` link, invented
/// link or Zola escape left in it.
fn every_old_url_answers_without_zolas_syntax(srv: &Server, old_urls: &[String]) {
    for url in old_urls {
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
}

/// Sections that redirect keep doing so, through a chain of them (`/documentation/` to
/// `getting-started/`, which redirects to its overview).
fn sections_that_redirect_keep_doing_so(srv: &Server) {
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
}

/// Its own templates render every page (`sort_by = "weight"` orders the sidebar), with no
/// template code left, and its links resolved.
fn its_own_templates_render_every_page(srv: &Server) {
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

/// Guards: issue 78.2. A Zola home template naming a post due in three weeks (`get_page`)
/// and a term only that post has (`get_taxonomy_url`) used to fail every build until the
/// instant: the post's neighbours recorded, none live. Now both answer "absent" before the
/// instant (the page is built, says nothing of the post) and the post goes live at its
/// instant with the home naming it.
#[test]
fn a_zola_template_naming_a_post_before_its_instant_holds_nothing_back() {
    let home = "{% set p = get_page(path=\"blog/secret.md\") %}\
        {% set t = get_taxonomy_url(kind=\"tags\", name=\"surprise\") %}\
        <p>{% if p %}<a href=\"{{ p.permalink | safe }}\">{{ p.title }}</a>{% else %}soon{% endif %}</p>\
        <p>{% if t %}<a href=\"{{ t | safe }}\">surprise</a>{% endif %}</p>\
        {% set b = get_section(path=\"blog/_index.md\") %}{% for q in b.pages %}<a href=\"{{ q.permalink | safe }}\">{{ q.title }}</a>{% endfor %}";
    let src = source(&[
        ("config.toml", "base_url = \"https://zola.example.org\"\ntitle = \"Zola blog\"\ntaxonomies = [{ name = \"tags\" }]\n"),
        ("content/blog/_index.md", "+++\ntitle = \"Blog\"\nsort_by = \"date\"\n+++\n"),
        ("content/blog/open.md", "+++\ntitle = \"Open\"\ndate = 2026-11-20\n+++\nHello.\n"),
        ("content/blog/secret.md", "+++\ntitle = \"Secret\"\ndate = 2026-12-22\n[taxonomies]\ntags = [\"surprise\"]\n+++\nThe answer.\n"),
        ("templates/index.html", home),
        ("templates/section.html", "{{ section.title }}"),
        ("templates/page.html", "<h1>{{ page.title }}</h1>{{ page.content | safe }}"),
        ("templates/tags/list.html", "{% for t in terms %}{{ t.name }}{% endfor %}"),
        ("templates/tags/single.html", "{{ term.name }}"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    import(tmp.path(), "zola", src.path(), &dst);
    let s = site_at(&dst);
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{p}");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("get_page") && log.contains("template=index.html"),
        "the warning names the function and the template: {log}"
    );
    let before = s.current_file("index.html");
    assert!(
        before.contains("soon") && before.contains("/blog/open/"),
        "{before}"
    );
    for leak in ["Secret", "surprise", "secret"] {
        assert!(
            !before.contains(leak),
            "{leak} before its instant: {before}"
        );
    }
    let at = "2026-12-22T00:00:01Z";
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", at])
        .output()
        .unwrap();
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{p}");
    assert_eq!(p["published"].as_array().unwrap().len(), 1, "{p}");
    let after = s.current_file("index.html");
    assert!(
        after.contains(">Secret</a>") && after.contains("/tags/surprise/"),
        "{after}"
    );
    assert!(s
        .current_file("blog/secret/index.html")
        .contains("The answer."));
}
