//! Tabi's own site (issue 79): the most popular Zola theme's site — 70 template files, 18
//! shortcodes, Sass, four languages — imported as its author made it. Its templates are kept
//! and every page renders (they call `load_data` for their strings, `get_image_metadata` for
//! their pages' images, `get_section`, `page.ancestors`); its Sass is compiled; its shortcodes
//! render; every page of the default language is at the URL Zola gave it; and every non-HTML
//! file Zola wrote for that language is at its path, but for those named below with why.
use super::*;

/// The vendored site with its stand-ins written (`SOURCE.md` says which and why).
fn tabi_source() -> tempfile::TempDir {
    let fixture = fixture_dir("import/zola-tabi");
    let src = tempfile::tempdir().unwrap();
    copy_tree(&fixture, src.path());
    let standins = std::fs::read_to_string(fixture.join("STANDINS.txt")).unwrap();
    for rel in standins.lines().filter(|l| !l.is_empty()) {
        let path = src.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let ext = rel
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let image = fixture.join(format!(".standins/image.{ext}"));
        match image.is_file() {
            true => std::fs::copy(&image, &path).map(|_| ()),
            false => std::fs::write(&path, b"stand-in\n"),
        }
        .unwrap();
    }
    src
}

/// The non-HTML files Zola wrote for the default language, less the ones fencepost does not
/// make, each with why.
fn zolas_files() -> Vec<String> {
    let listed = std::fs::read_to_string(fixture_dir("import/zola-tabi/ZOLA_OUTPUT.txt")).unwrap();
    let other_language = |p: &str| ["es/", "ca/", "ar/"].iter().any(|l| p.starts_with(l));
    listed
        .lines()
        .filter(|p| !p.is_empty() && !p.ends_with(".html") && !other_language(p))
        // Zola's search index (`build_search_index`, reported) and its feeds' own names
        // (`atom.xml` everywhere, as here: checked) are the only ones left out by design.
        .filter(|p| !p.starts_with("search_index.") && !p.starts_with("elasticlunr"))
        .map(str::to_string)
        .collect()
}

#[test]
fn tabis_own_site_renders_with_its_templates_sass_shortcodes_and_files() {
    let src = tabi_source();
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert_eq!(r["starter"], "kept", "{r}");
    // Issue 83: every language's pages are imported, each beside its original.
    let langs = serde_json::json!({"ar": 3, "ca": 23, "en": 22, "es": 23});
    assert_eq!(r["languages"], langs, "{r}");
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    assert_eq!(p["build"]["held_pages"], serde_json::json!([]), "{p}");
    let origin = s.serve(&[]);
    let srv = Under(&origin, "/tabi");
    for url in [
        "/",
        "/blog/",
        "/blog/shortcodes/",
        "/blog/mastering-tabi-settings/",
        "/projects/",
        "/projects/tabi/",
        "/archive/",
        "/about/",
        "/tags/",
        "/tags/showcase/",
    ] {
        assert_eq!(srv.get(url).status, 200, "{url}");
    }
    // Its home page is its root section's: the header and text of `content/_index.md` and
    // its latest posts, as the theme's `section.extra` asks.
    let home = srv.get("/").text();
    for shown in [
        "Hello! I&#x27;m tabi~",
        "Latest posts",
        "Mastering tabi Settings",
    ] {
        assert!(home.contains(shown), "{shown} in {home}");
    }
    assert!(!home.contains("/blog//"), "{home}");
    // Its Sass, compiled as Zola compiles it.
    let css = srv.get("/main.css");
    assert_eq!(css.status, 200);
    assert!(
        !css.text().contains("@use") && css.text().contains("--"),
        "compiled"
    );
    // Its shortcodes, rendered as Zola renders them.
    let shortcodes = srv.get("/blog/shortcodes/").text();
    for shown in [
        "class=\"admonition warning\"",
        "class=\"mermaid",
        "class=\"spoiler-container",
        "class=\"full-width\"",
    ] {
        assert!(shortcodes.contains(shown), "{shown} in {shortcodes}");
    }
    // Each call rendered (the page shows each call's source too, escaped, as Zola does).
    assert_eq!(
        shortcodes.matches("class=\"admonition-content\"").count(),
        10
    );
    every_page_and_file_zola_wrote_is_there(&srv);
}

/// Every page Zola wrote, in every language (issue 83: the Spanish, Catalan and Arabic ones
/// too, 136 of them), at its URL — a page, or its redirect — and every non-HTML file of the
/// default language at its path.
fn every_page_and_file_zola_wrote_is_there(srv: &Under<'_>) {
    let pages: Vec<String> =
        std::fs::read_to_string(fixture_dir("import/zola-tabi/ZOLA_OUTPUT.txt"))
            .unwrap()
            .lines()
            .filter(|p| p.ends_with("index.html"))
            .map(|p| format!("/{}", p.trim_end_matches("index.html")))
            .collect();
    let other = |u: &&String| ["/es/", "/ca/", "/ar/"].iter().any(|l| u.starts_with(l));
    assert!(
        pages.len() > 190 && pages.iter().filter(other).count() == 136,
        "{pages:?}"
    );
    let gone: Vec<&String> = pages
        .iter()
        .filter(|u| ![200, 301].contains(&srv.get(u).status))
        .collect();
    assert!(gone.is_empty(), "{gone:?}");
    // Every non-HTML file Zola wrote (the default language's), at its path.
    let missing: Vec<String> = zolas_files()
        .into_iter()
        .filter(|f| srv.get(&format!("/{f}")).status != 200)
        .collect();
    assert_eq!(missing, Vec::<String>::new());
}
