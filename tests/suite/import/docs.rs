//! A documentation theme's own site (issue 79.5): hugo-book's example site (vendored, MIT)
//! imported gets the docs starter — a sidebar of its sections and pages in weight order,
//! collapsible and open on the way to the current page; a table of contents per page;
//! previous and next in book order across sections; its landing text — every page at the URL
//! Hugo gave it under the base path, the theme's shortcodes kept as what they show.
use super::*;

fn imported() -> (tempfile::TempDir, TestSite, Value) {
    let fixture = fixture_dir("import/hugo-book");
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", &fixture, &dst);
    (tmp, site_at(&dst), r)
}

/// The sidebar of one page: the sections in weight order, the current one open, the page
/// marked, the sections off its way closed.
fn the_sidebar_is_the_books_tree(page: &str) {
    let nav = &page[page.find("<nav class=\"sidebar\"").unwrap()..];
    let nav = &nav[..nav.find("</nav>").unwrap()];
    let order: Vec<usize> = [
        "Getting Started",
        "Content &amp; Structure",
        "Customization",
    ]
    .iter()
    .map(|t| nav.find(t).unwrap_or_else(|| panic!("{t} in {nav}")))
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "by weight: {nav}");
    assert!(
        nav.contains("<details open><summary><a href=\"/hugo-book/docs/getting-started/\">"),
        "{nav}"
    );
    assert!(
        nav.contains("<details><summary><a href=\"/hugo-book/docs/customization/\">"),
        "{nav}"
    );
    assert!(
        nav.contains(
            "href=\"/hugo-book/docs/getting-started/introduction/\" aria-current=\"page\""
        ),
        "{nav}"
    );
    // Nested three deep, as the book nests them.
    assert!(
        nav.contains("/hugo-book/docs/content/shortcodes/experimental/images/"),
        "{nav}"
    );
}

/// Issue 83: its Hebrew and Chinese content folders (`content.he`, `content.zh`), at Hugo's
/// URLs, in their language.
fn its_other_languages_are_at_hugos_urls(srv: &Under<'_>) {
    for url in [
        "/he/",
        "/he/docs/",
        "/he/tags/",
        "/he/404.html",
        "/zh/",
        "/zh/docs/",
        "/zh/categories/",
    ] {
        assert_eq!(srv.get(url).status, 200, "{url}");
    }
    let he = srv.get("/he/docs/").text();
    assert!(he.contains("lang=\"he\""), "{he}");
}

#[test]
fn hugo_books_example_site_keeps_its_navigation_toc_and_book_order() {
    let (_tmp, s, r) = imported();
    assert_eq!(r["starter"], "docs", "{r}");
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    assert_eq!(p["build"]["broken_links"], serde_json::json!([]), "{p}");
    let origin = s.serve(&[]);
    let srv = Under(&origin, "/hugo-book");
    for url in [
        "/",
        "/docs/",
        "/docs/getting-started/introduction/",
        "/docs/content/shortcodes/experimental/images/",
        "/docs/customization/styles/",
        "/posts/example-post/",
        "/showcases/",
        "/docs.css",
    ] {
        assert_eq!(srv.get(url).status, 200, "{url}");
    }
    its_other_languages_are_at_hugos_urls(&srv);
    let intro = srv.get("/docs/getting-started/introduction/").text();
    the_sidebar_is_the_books_tree(&intro);
    // Its table of contents, and the next chapter.
    assert!(intro.contains("<aside class=\"toc\">"), "{intro}");
    assert!(
        intro.contains(
            "href=\"/hugo-book/docs/getting-started/introduction/#design-goals\">Design Goals"
        ),
        "{intro}"
    );
    assert!(
        intro.contains("<a rel=\"next\" href=\"/hugo-book/docs/getting-started/create-a-site/\">"),
        "{intro}"
    );
    assert_eq!(intro.matches("<h1").count(), 1, "one title: {intro}");
    // Goldmark's definition lists and heading attributes, as Hugo rendered them.
    assert!(
        intro.contains("<dt>Minimalism over features.</dt>"),
        "{intro}"
    );
    // Across a section's end, book order goes on into the next section.
    let config = srv.get("/docs/getting-started/configuration/").text();
    assert!(
        config.contains("<a rel=\"next\" href=\"/hugo-book/docs/content/"),
        "{config}"
    );
    // The landing page is the root section's text, its button a link.
    let home = srv.get("/").text();
    assert!(home.contains("as simple as plain book"), "{home}");
    assert!(!home.contains("{anchor=false}"), "{home}");
    assert!(
        home.contains("href=\"/hugo-book/docs/getting-started/introduction\">Explore</a>"),
        "{home}"
    );
    // The theme's shortcodes: hints are alerts, a mermaid diagram a code block.
    let hints = srv.get("/docs/content/shortcodes/hints/").text();
    assert!(hints.contains("markdown-alert"), "{hints}");
    let mermaid = srv.get("/docs/content/shortcodes/mermaid/").text();
    assert!(mermaid.contains("language-mermaid"), "{mermaid}");
    every_file_of_the_sites_own_is_there(&srv);
    assert!(
        r["not_converted"]
            .to_string()
            .contains("/categories/Example/ (Hugo kept its case"),
        "{r}"
    );
    assert_eq!(srv.get("/categories/example/").status, 200);
    its_menus_are_kept(&srv, &intro);
    // No shortcode reaches a page but the escaped ones the docs show, as Hugo shows them.
    let shown = escaped_shortcodes(&fixture_dir("import/hugo-book/content.en"));
    assert_no_shortcodes_but(&s, &shown);
}

/// Every non-HTML file Hugo wrote for the default language that is the site's own (from its
/// `assets/`, `static/` and content) is at its path; each other one is named with why.
fn every_file_of_the_sites_own_is_there(srv: &Under<'_>) {
    let read = |f: &str| std::fs::read_to_string(fixture_dir(&format!("import/hugo-book/{f}")));
    let theme: Vec<String> = read("THEME_FILES.txt")
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let why_not = |p: &str| -> Option<&str> {
        if p.ends_with("index.xml") {
            return Some(
                "Hugo's RSS URLs: fencepost writes atom.xml and rss.xml (reported: feed URLs)",
            );
        }
        if p.starts_with("categories/Example/") {
            return Some("a term's URL in Hugo's case (disablePathToLower): a slug here, /categories/example/ (reported)");
        }
        if p.ends_with("source.txt") {
            return Some("a custom output format (reported: [outputFormats])");
        }
        if ["zh/", "he/", "en/"].iter().any(|l| p.starts_with(l))
            || p.starts_with("he.")
            || p.starts_with("zh.")
        {
            return Some("another language's, or Hugo's per-language sitemap (one language)");
        }
        let fingerprinted = ["book.min.", "sw.min.", "en.search"]
            .iter()
            .any(|t| p.starts_with(t));
        if fingerprinted || theme.iter().any(|t| t == p) {
            return Some(
                "the theme's own (its Go templates are not ported; the theme is not vendored)",
            );
        }
        None
    };
    let listed = read("HUGO_OUTPUT.txt").unwrap();
    let own: Vec<&str> = listed
        .lines()
        .filter(|p| !p.is_empty() && !p.ends_with(".html") && why_not(p).is_none())
        .collect();
    // And every page of the default language at the URL Hugo gave it (a page, or a redirect).
    let pages: Vec<String> = (listed.lines())
        .filter(|p| p.ends_with("index.html") && why_not(p).is_none())
        .map(|p| format!("/{}", p.trim_end_matches("index.html")))
        .collect();
    assert!(pages.len() > 20, "{pages:?}");
    let gone: Vec<&String> = (pages.iter())
        .filter(|u| ![200, 301].contains(&srv.get(u).status))
        .collect();
    assert!(gone.is_empty(), "{gone:?}");
    assert!(
        own.contains(&"asciinema-627097.cast") && own.contains(&"sitemap.xml"),
        "{own:?}"
    );
    let missing: Vec<&&str> = own
        .iter()
        .filter(|f| srv.get(&format!("/{f}")).status != 200)
        .collect();
    assert!(missing.is_empty(), "{missing:?} of {own:?}");
}

/// Its menus: the header's (`menu.home`), the sidebar's (`menu.after`); a page hidden from
/// the book's menu (`bookHidden`) is not in the sidebar, but is served.
fn its_menus_are_kept(srv: &Under<'_>, intro: &str) {
    assert!(intro.contains("<nav class=\"menu\"><a href=\"/hugo-book/docs/getting-started/introduction/\">Documentation</a>"), "{intro}");
    assert!(
        intro.contains(
            "class=\"menu-link\" href=\"https://github.com/alex-shpak/hugo-book/\">Github</a>"
        ),
        "{intro}"
    );
    assert!(
        !intro.contains("/hugo-book/docs/content/shortcodes/section/\""),
        "{intro}"
    );
    assert_eq!(srv.get("/docs/content/shortcodes/section/").status, 200);
}
