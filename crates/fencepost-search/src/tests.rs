use super::*;

const PAGE: &str = r#"<!doctype html><html lang="en"><head><title>Head title</title>
<script>var hidden = "scriptword";</script></head>
<body><nav>navword</nav><main>
<h1 id="top">Golden <b>har</b>vest</h1>
<p>Running rivers &amp; stones. e-mail café</p>
<div data-pagefind-ignore>ignoredword</div>
<h2 id="more">More</h2><p data-pagefind-filter="color">red</p>
<span data-pagefind-meta="date:2026-01-02"></span>
<img src="/a.png" alt="An &quot;a&quot;">
</main><footer>footerword</footer></body></html>"#;

fn keys(r: &Record) -> Vec<&str> {
    r.words.iter().map(|w| w.key.as_str()).collect()
}

/// Guards: what is indexed and what is not, as Pagefind's documentation says.
#[test]
fn a_page_is_read_as_pagefind_reads_it() {
    let r = fossick(PAGE.as_bytes()).unwrap();
    assert_eq!(r.language, "en");
    let k = keys(&r);
    for word in [
        "golden", "harvest", "run", "river", "stone", "email", "mail", "cafe", "more", "red",
    ] {
        assert!(k.contains(&word), "{word} missing from {k:?}");
    }
    for word in [
        "scriptword",
        "navword",
        "ignoredword",
        "footerword",
        "head",
        "har",
        "vest",
    ] {
        assert!(!k.contains(&word), "{word} indexed: {k:?}");
    }
    assert_eq!(r.meta["title"], "Golden harvest");
    assert_eq!(r.meta["date"], "2026-01-02");
    assert_eq!(r.meta["image"], "/a.png");
    assert_eq!(r.meta["image_alt"], "An \"a\"");
    assert_eq!(r.filters["color"], ["red"]);
    assert_eq!(
        r.content,
        "Golden harvest Running rivers & stones. e-mail café More red"
    );
    let golden = r.words.iter().find(|w| w.key == "golden").unwrap();
    assert_eq!(golden.locs, [(168, 0)], "an h1's word weighs 7");
    assert!(
        !golden.meta.is_empty(),
        "the title's words are meta words too"
    );
    let cafe = r.words.iter().find(|w| w.key == "cafe").unwrap();
    assert_eq!(cafe.variants[0].0, "café");
    assert_eq!(r.anchors.len(), 2);
    assert_eq!(
        (r.anchors[1].id.as_str(), r.anchors[1].text.as_str()),
        ("more", "More")
    );
}

/// Guards: with `data-pagefind-body`, only those elements are the page's text.
#[test]
fn a_marked_body_is_all_that_is_read() {
    let html = r#"<html><body><p>outside</p><article data-pagefind-body><p>inside</p></article></body></html>"#;
    let r = fossick(html.as_bytes()).unwrap();
    assert!(r.custom_body);
    assert_eq!(r.language, "unknown");
    assert_eq!(keys(&r), ["inside"]);
    assert!(fossick(b"<html><body><script>x</script></body></html>").is_none());
}

#[test]
fn urls_are_pagefinds() {
    assert_eq!(page_url("index.html"), "/");
    assert_eq!(page_url("a/b/index.html"), "/a/b/");
    assert_eq!(page_url("404.html"), "/404.html");
}
