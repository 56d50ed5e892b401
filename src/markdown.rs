//! Markdown to HTML for page bodies: CommonMark plus tables, footnotes and strikethrough.
//!
//! The rule for HTML written inside Markdown: it is shown as text, never passed through.
//! Link and image destinations with a scheme other than http, https or mailto (for example
//! `javascript:`) are replaced by `#`.

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag};

pub fn markdown_to_html(md: &str) -> String {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_FOOTNOTES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    let events = Parser::new_ext(md, opts).map(|ev| match ev {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        other => other,
    });
    let mut out = String::with_capacity(md.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    let lower = url.trim_start().to_ascii_lowercase();
    let scheme_end = lower.find([':', '/', '?', '#']);
    let has_scheme = scheme_end.is_some_and(|i| lower.as_bytes()[i] == b':');
    if !has_scheme
        || ["http:", "https:", "mailto:"]
            .iter()
            .any(|s| lower.starts_with(s))
    {
        url
    } else {
        CowStr::Borrowed("#")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_are_on() {
        let html =
            markdown_to_html("| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~ new[^1]\n\n[^1]: note\n");
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("<del>old</del>"), "{html}");
        assert!(html.contains("footnote-definition"), "{html}");
    }

    #[test]
    fn raw_html_is_shown_as_text() {
        let html = markdown_to_html("hi <script>alert(1)</script>\n\n<div onclick=x>block</div>\n");
        assert!(!html.contains("<script>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(!html.contains("<div"), "{html}");
    }

    #[test]
    fn dangerous_link_schemes_are_dropped() {
        let html = markdown_to_html(
            "[x](javascript:alert(1)) [y](https://ok.example/) [z](/rel) [m](mailto:a@b)",
        );
        assert!(html.contains(r##"<a href="#">x</a>"##), "{html}");
        assert!(html.contains("https://ok.example/"));
        assert!(html.contains(r#"href="/rel""#));
        assert!(html.contains("mailto:a@b"));
    }

    #[test]
    fn unicode_survives() {
        assert_eq!(
            markdown_to_html("Crème brûlée — 日本"),
            "<p>Crème brûlée — 日本</p>\n"
        );
    }
}
