//! Markdown as people write it renders safely: raw HTML, unicode, CRLF line endings, edge cases.
use super::*;

#[test]
fn markdown_html_and_unicode_render_safely_in_pages() {
    let s = TestSite::new();
    s.write(
        "content/answers/1.md",
        "+++\nid = 1\nday = 2026-11-01\ntitle = \"<b>Crème</b> & 日本\"\nprice = 1\n+++\n\n<script>alert(1)</script>\n",
    );
    s.publish(NOW);
    s.build(&[]);
    let page = s.current_file("answers/1/index.html");
    assert!(
        page.contains("&lt;b&gt;Crème&lt;&#x2F;b&gt; &amp; 日本"),
        "title autoescaped: {page}"
    );
    assert!(!page.contains("<script>alert"));
    assert!(s.current_file("atom.xml").contains("&lt;b&gt;Crème"));
    // Every byte of the page and the feed, against reviewed snapshots (the site is named for
    // its temporary folder, which differs each run).
    let folder = s.root().file_name().unwrap().to_string_lossy().into_owned();
    let same = |text: String| text.replace(&folder, "[site folder]");
    insta::assert_snapshot!("escaped_page", same(page));
    insta::assert_snapshot!("escaped_feed", same(s.current_file("atom.xml")));
}

#[test]
fn a_plain_page_saved_with_crlf_line_endings_keeps_its_front_matter_out_of_the_body() {
    let s = site_with(1);
    s.publish(NOW);
    s.write(
        "content/about.md",
        "+++\r\ntitle = \"About this game\"\r\n+++\r\n\r\nHello from Windows.\r\n",
    );
    s.build(&[]);
    let html = s.current_file("about/index.html");
    assert!(html.contains("About this game"), "{html}");
    assert!(html.contains("Hello from Windows."));
    assert!(
        !html.contains("title ="),
        "the TOML leaked into the body: {html}"
    );
}

#[test]
fn markdown_edge_cases_render_safely() {
    let s = TestSite::new();
    let long: String = "word ".repeat(50_000);
    s.write(
        "content/answers/1.md",
        &format!("+++\nid = 1\nday = 2026-11-01\ntitle = \"Crème brûlée — 日本 🍰\"\nprice = \"$12\"\n+++\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n{long}\n"),
    );
    assert_eq!(ids(&s.publish(NOW), "published"), vec![1]);
    let page = s.public_pages().into_iter().find(|p| p.key == "1").unwrap();
    let data: serde_json::Value = serde_json::from_str(&page.data).unwrap();
    let body = s.body("1");
    assert_eq!(page.title, "Crème brûlée — 日本 🍰");
    assert_eq!(data["price"], "12.00");
    assert!(body.contains("&lt;script&gt;") && !body.contains("<script>"));
    assert!(body.contains("<table>"));
    assert!(body.len() > 250_000);
}
