//! Markdown to HTML for page bodies: CommonMark plus tables, footnotes and strikethrough,
//! rendered when an item is published (the ledger stores the HTML).
//!
//! The rule for HTML written inside Markdown: it is shown as text, never passed through —
//! unless `[markdown] unsafe_html = true`, for sites whose authors are trusted. Link and image
//! destinations with a scheme other than http, https or mailto (for example `javascript:`)
//! are replaced by `#` either way.
//!
//! Headings get stable ids (`[markdown] heading_ids`); fenced code blocks with a language
//! syntect knows are highlighted as CSS classes (`hl-…`; `fencepost init` writes the
//! stylesheet). syntect's syntax set is loaded the first time a code block with a language
//! is met, so a site without code blocks pays nothing for it. Text before `<!-- more -->` is
//! the summary; the marker never appears in the output.

use fencepost_config::MarkdownConfig;
use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::sync::OnceLock;

/// The summary marker.
pub const MORE: &str = "<!-- more -->";

/// The class prefix of highlighted tokens (`hl-keyword`, `hl-string`, …).
pub const HIGHLIGHT_PREFIX: &str = "hl-";

/// A body rendered: the whole of it, and the part before `<!-- more -->` when there is one.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub body_html: String,
    pub summary_html: Option<String>,
}

/// Where the summary marker is: a line holding only `<!-- more -->` (or Hugo's
/// `<!--more-->`), so the marker written about in a sentence or a code span is just text.
/// (start, end) of that line, its line break included.
fn find_more(md: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    for line in md.split_inclusive('\n') {
        let t = line.trim();
        if t == MORE || t == "<!--more-->" {
            return Some((at, at + line.len()));
        }
        at += line.len();
    }
    None
}

/// Renders an item body with the site's settings.
pub fn render(md: &str, opts: &MarkdownConfig) -> Rendered {
    match find_more(md) {
        Some((at, end)) => {
            let mut whole = String::with_capacity(md.len());
            whole.push_str(&md[..at]);
            whole.push('\n');
            whole.push_str(&md[end..]);
            Rendered {
                body_html: to_html(&whole, opts),
                summary_html: Some(to_html(&md[..at], opts)),
            }
        }
        None => Rendered {
            body_html: to_html(md, opts),
            summary_html: None,
        },
    }
}

/// Renders with the default settings as they were before `[markdown]` existed (no heading
/// ids, no highlighting, HTML shown as text).
pub fn markdown_to_html(md: &str) -> String {
    to_html(
        md,
        &MarkdownConfig {
            heading_ids: false,
            highlight: false,
            unsafe_html: false,
            github_alerts: false,
            definition_lists: false,
            heading_attributes: false,
        },
    )
}

/// Renders `md` to HTML under `opts`.
pub fn to_html(md: &str, opts: &MarkdownConfig) -> String {
    let mut o = Options::empty();
    o.insert(Options::ENABLE_TABLES);
    o.insert(Options::ENABLE_FOOTNOTES);
    o.insert(Options::ENABLE_STRIKETHROUGH);
    if opts.github_alerts {
        o.insert(Options::ENABLE_GFM);
    }
    if opts.definition_lists {
        o.insert(Options::ENABLE_DEFINITION_LIST);
    }
    if opts.heading_attributes {
        o.insert(Options::ENABLE_HEADING_ATTRIBUTES);
    }
    let unsafe_html = opts.unsafe_html;
    let events = Parser::new_ext(md, o).map(move |ev| match ev {
        Event::Html(s) | Event::InlineHtml(s) if !unsafe_html => Event::Text(s),
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
    let mut events: Vec<Event<'_>> = events.collect();
    if opts.heading_ids {
        events = heading_ids(events);
    }
    if opts.highlight {
        events = highlight(events);
    }
    let mut out = String::with_capacity(md.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

/// Gives every heading without an id one from its text (`slug` of it; `-1`, `-2`… when
/// taken), so anchors are stable as long as the heading reads the same.
fn heading_ids(events: Vec<Event<'_>>) -> Vec<Event<'_>> {
    let mut out = Vec::with_capacity(events.len());
    let mut taken = std::collections::HashSet::new();
    let mut open: Option<(HeadingLevel, usize, String)> = None;
    for ev in events {
        match &ev {
            Event::Start(Tag::Heading {
                level, id: None, ..
            }) => {
                open = Some((*level, out.len(), String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, text)) = open.as_mut() {
                    text.push_str(t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, at, text)) = open.take() {
                    let base = match slug::slugify(&text) {
                        s if s.is_empty() => "section".to_string(),
                        s => s,
                    };
                    let mut id = base.clone();
                    let mut n = 0;
                    while !taken.insert(id.clone()) {
                        n += 1;
                        id = format!("{base}-{n}");
                    }
                    if let Event::Start(Tag::Heading { classes, attrs, .. }) = &out[at] {
                        out[at] = Event::Start(Tag::Heading {
                            level,
                            id: Some(CowStr::from(id)),
                            classes: classes.clone(),
                            attrs: attrs.clone(),
                        });
                    }
                }
            }
            _ => {}
        }
        out.push(ev);
    }
    out
}

fn syntaxes() -> &'static syntect::parsing::SyntaxSet {
    static SET: OnceLock<syntect::parsing::SyntaxSet> = OnceLock::new();
    SET.get_or_init(syntect::parsing::SyntaxSet::load_defaults_newlines)
}

/// Replaces each fenced code block whose language syntect knows by its highlighted HTML.
fn highlight(events: Vec<Event<'_>>) -> Vec<Event<'_>> {
    let has_lang = |ev: &Event<'_>| matches!(ev, Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(l))) if !lang_of(l).is_empty());
    if !events.iter().any(has_lang) {
        return events;
    }
    let mut out = Vec::with_capacity(events.len());
    let mut iter = events.into_iter();
    while let Some(ev) = iter.next() {
        let lang = match &ev {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(l))) if !lang_of(l).is_empty() => {
                lang_of(l).to_string()
            }
            _ => {
                out.push(ev);
                continue;
            }
        };
        let mut inner = Vec::new();
        let mut code = String::new();
        for e in iter.by_ref() {
            if matches!(e, Event::End(TagEnd::CodeBlock)) {
                break;
            }
            if let Event::Text(t) = &e {
                code.push_str(t);
            }
            inner.push(e);
        }
        match highlighted(&lang, &code) {
            Some(html) => out.push(Event::Html(CowStr::from(html))),
            None => {
                out.push(ev);
                out.extend(inner);
                out.push(Event::End(TagEnd::CodeBlock));
            }
        }
    }
    out
}

/// The language of an info string (`rust,ignore` → `rust`).
fn lang_of(info: &str) -> &str {
    info.split([',', ' ', '{']).next().unwrap_or("").trim()
}

/// `code` highlighted as `lang`, or `None` for a language syntect does not know.
fn highlighted(lang: &str, code: &str) -> Option<String> {
    use syntect::html::{ClassStyle, ClassedHTMLGenerator};
    use syntect::util::LinesWithEndings;
    let set = syntaxes();
    let syntax = set
        .find_syntax_by_token(lang)
        .or_else(|| set.find_syntax_by_extension(lang))?;
    let mut g = ClassedHTMLGenerator::new_with_class_style(
        syntax,
        set,
        ClassStyle::SpacedPrefixed {
            prefix: HIGHLIGHT_PREFIX,
        },
    );
    for line in LinesWithEndings::from(code) {
        g.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    let class: String = lang
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || "-_+#.".contains(*c))
        .collect();
    Some(format!(
        "<pre class=\"highlight\"><code class=\"language-{class}\">{}</code></pre>\n",
        g.finalize()
    ))
}

/// The stylesheet of highlighted code (`fencepost init` writes it to `static/highlight.css`).
pub fn highlight_css() -> String {
    use syntect::highlighting::ThemeSet;
    use syntect::html::{css_for_theme_with_class_style, ClassStyle};
    let themes = ThemeSet::load_defaults();
    let light = &themes.themes["InspiredGitHub"];
    let dark = &themes.themes["base16-ocean.dark"];
    let style = ClassStyle::SpacedPrefixed {
        prefix: HIGHLIGHT_PREFIX,
    };
    let mut css = css_for_theme_with_class_style(light, style).unwrap_or_default();
    css.push_str("\n@media (prefers-color-scheme: dark) {\n");
    css.push_str(&css_for_theme_with_class_style(dark, style).unwrap_or_default());
    css.push_str("}\n");
    css
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

    fn all_on() -> MarkdownConfig {
        MarkdownConfig::default()
    }

    #[test]
    fn headings_get_stable_unique_ids() {
        let html = to_html(
            "# Hello, World\n\n## Hello, World\n\n## `code` bit\n",
            &all_on(),
        );
        assert!(html.contains(r#"<h1 id="hello-world">"#), "{html}");
        assert!(html.contains(r#"<h2 id="hello-world-1">"#), "{html}");
        assert!(html.contains(r#"<h2 id="code-bit">"#), "{html}");
        assert!(!markdown_to_html("# Hi\n").contains("id="));
    }

    #[test]
    fn known_languages_are_highlighted_unknown_stay_plain() {
        let html = to_html("```rust\nfn main() { let x = \"<b>\"; }\n```\n", &all_on());
        assert!(
            html.contains(r#"<pre class="highlight"><code class="language-rust">"#),
            "{html}"
        );
        assert!(html.contains("hl-"), "{html}");
        assert!(html.contains("&lt;b&gt;"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        let plain = to_html("```nosuchlang\nx <y>\n```\n", &all_on());
        assert_eq!(
            plain,
            "<pre><code class=\"language-nosuchlang\">x &lt;y&gt;\n</code></pre>\n"
        );
    }

    #[test]
    fn summary_is_what_comes_before_the_marker() {
        let r = render("First *para*.\n\n<!-- more -->\n\nRest.\n", &all_on());
        assert_eq!(
            r.summary_html.as_deref(),
            Some("<p>First <em>para</em>.</p>\n")
        );
        assert!(!r.body_html.contains("more"), "{}", r.body_html);
        assert!(r.body_html.contains("<p>Rest.</p>"));
        assert_eq!(render("No marker.\n", &all_on()).summary_html, None);
        // Written about in a sentence, it is just text.
        let r = render("Put `<!-- more -->` on a line.\n\nMore.\n", &all_on());
        assert_eq!(r.summary_html, None);
        assert!(
            r.body_html.contains("&lt;!-- more --&gt;"),
            "{}",
            r.body_html
        );
        let r = render("A\n<!--more-->\nB\n", &all_on());
        assert_eq!(r.summary_html.as_deref(), Some("<p>A</p>\n"));
    }

    /// Definition lists and heading attributes render as Hugo's Goldmark renders them, only
    /// when the site asks: as before otherwise.
    #[test]
    fn definition_lists_and_heading_attributes_render_when_asked() {
        let md = "## Goals {#goals .wide}\n\nMinimalism.\n: Only what is needed.\n";
        let off = to_html(md, &all_on());
        assert!(
            off.contains("{#goals .wide}") && !off.contains("<dl>"),
            "{off}"
        );
        let on = MarkdownConfig {
            definition_lists: true,
            heading_attributes: true,
            ..all_on()
        };
        let html = to_html(md, &on);
        assert!(
            html.contains("<h2 id=\"goals\" class=\"wide\">Goals</h2>"),
            "{html}"
        );
        assert!(
            html.contains("<dl>") && html.contains("<dd>Only what is needed.</dd>"),
            "{html}"
        );
    }

    /// GitHub's alerts render as Zola and Hugo render them, only when the site asks: as
    /// before otherwise (a blockquote showing `[!TIP]`).
    #[test]
    fn github_alerts_render_when_asked() {
        let md = "> [!TIP]\n> Save often.\n";
        let off = to_html(md, &all_on());
        assert!(
            off.contains("[!TIP]") && off.contains("<blockquote>"),
            "{off}"
        );
        let on = MarkdownConfig {
            github_alerts: true,
            ..all_on()
        };
        let html = to_html(md, &on);
        assert!(
            html.contains("<blockquote class=\"markdown-alert-tip\">"),
            "{html}"
        );
        assert!(
            html.contains("Save often.") && !html.contains("[!TIP]"),
            "{html}"
        );
    }

    #[test]
    fn unsafe_html_passes_through_only_when_asked() {
        let md = "<div class=\"x\">raw</div>\n\nhi <b>b</b>\n";
        let safe = to_html(md, &all_on());
        assert!(!safe.contains("<div"), "{safe}");
        let raw = to_html(
            md,
            &MarkdownConfig {
                unsafe_html: true,
                ..all_on()
            },
        );
        assert!(raw.contains("<div class=\"x\">raw</div>"), "{raw}");
        assert!(raw.contains("<b>b</b>"), "{raw}");
        let link = to_html(
            "[x](javascript:alert(1))",
            &MarkdownConfig {
                unsafe_html: true,
                ..all_on()
            },
        );
        assert!(link.contains(r##"href="#""##), "{link}");
    }

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
