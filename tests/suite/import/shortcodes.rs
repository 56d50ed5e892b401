//! Shortcodes as their authors meant them (issue 79.4): a Hugo shortcode fencepost cannot
//! render keeps its body as a block of its own — a mermaid diagram a code block with its
//! language, a notice an alert — never as prose; an escaped shortcode in a code sample reads
//! as Hugo shows it, with no stray backticks.
use super::*;

const PAGE: &str = "---\ntitle: Flow\ndate: 2026-01-05\n---\nBefore.\n{{< mermaid >}}\ngraph TD;\n  A-->B;\n{{< /mermaid >}}\nBetween.\n{{% notice warning %}}\nBack up first.\n{{% /notice %}}\nTo write one:\n\n```md\n{{</* figure src=\"image.jpg\" */>}}\n```\n";

#[test]
fn a_hugo_shortcodes_body_is_kept_as_its_own_block_and_escapes_read_as_hugo_shows_them() {
    let src = source(&[
        (
            "hugo.toml",
            "baseURL = \"https://example.org/\"\ntitle = \"T\"\n",
        ),
        ("content/posts/flow.md", PAGE),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", src.path(), &dst);
    let text = std::fs::read_to_string(dst.join("content/posts/flow.md")).unwrap();
    assert!(
        text.contains("```mermaid\ngraph TD;\n  A-->B;\n```"),
        "{text}"
    );
    assert!(text.contains("> [!WARNING]\n> Back up first."), "{text}");
    assert!(
        text.contains("```md\n{{< figure src=\"image.jpg\" >}}\n```"),
        "{text}"
    );
    let why = r["not_converted"].to_string();
    assert!(why.contains("its body was kept as a code block"), "{r}");
    assert!(why.contains("its body was kept as a GitHub alert"), "{r}");

    let s = site_at(&dst);
    s.json(&["publish", "--build", "--now", NOW]);
    let html = s.current_file("posts/flow/index.html");
    // The diagram is a code block a client-side renderer finds, not a paragraph.
    assert!(html.contains("language-mermaid"), "{html}");
    assert!(!html.contains("<p>graph TD;"), "{html}");
    assert!(html.contains("markdown-alert-warning"), "{html}");
    let shown = strip_tags(&html)
        .replace("&lt;", "<")
        .replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&gt;", ">");
    assert!(shown.contains("{{< figure src=\"image.jpg\" >}}"), "{html}");
    assert!(!shown.contains("`{{<"), "{html}");
}

/// The text of some HTML, tags left out (highlighted code is split into spans).
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' if !in_tag => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}
