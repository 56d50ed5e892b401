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

/// A Zola site's shortcode templates are kept where they can render here; one that calls a
/// function shortcodes lack (`resize_image`) is named, and its calls reported and removed.
/// With shortcodes kept, an escape stays an escape (the new site reads it as Zola does).
#[test]
fn a_zola_sites_shortcodes_are_kept_where_they_can_render() {
    let src = source(&[
        ("config.toml", "base_url = \"https://example.org\"\ntitle = \"Z\"\n"),
        ("content/blog/_index.md", "+++\ntitle = \"Blog\"\nsort_by = \"date\"\n+++\n"),
        ("content/blog/a.md", "+++\ntitle = \"A\"\ndate = 2026-01-05\n+++\n{% admonition(type=\"tip\") %}\nKeep **calm**.\n{% end %}\n\n{{ gallery(n=2) }}\n\nWrite `{{/* admonition() */}}`.\n"),
        ("templates/shortcodes/admonition.html", "<div class=\"admonition {{ type }}\">{{ body | markdown | safe }}</div>"),
        ("templates/shortcodes/gallery.html", "{{ resize_image(path=\"a.png\", width=n) }}"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    let skipped = not_converted(&r);
    assert!(
        skipped.contains(&(
            "templates/shortcodes/gallery.html".into(),
            None,
            "shortcode template".into()
        )),
        "{r}"
    );
    assert!(
        skipped.contains(&(
            "content/blog/a.md".into(),
            Some(9),
            "shortcode gallery".into()
        )),
        "{r}"
    );
    assert!(dst.join("templates/shortcodes/admonition.html").is_file());
    assert!(!dst.join("templates/shortcodes/gallery.html").exists());
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["failed"], serde_json::json!([]), "{p}");
    let html = s.current_file("blog/a/index.html");
    assert!(
        html.contains("<div class=\"admonition tip\"><p>Keep <strong>calm</strong>.</p>\n</div>"),
        "{html}"
    );
    assert!(html.contains("<code>{{ admonition() }}</code>"), "{html}");
    assert!(
        !html.contains("resize_image") && !html.contains("gallery("),
        "{html}"
    );
}
