//! A `base_url` with a path (`https://user.github.io/project/`) put in front of every
//! root-relative URL in a page's URL attributes, whatever its templates and Markdown wrote —
//! as Hugo's `canonifyURLs` does, with a path.
//!
//! **Only URLs are rewritten.** The page is read as HTML's tokenizer reads it: the contents of
//! `script`, `style`, `textarea` and comments are not tags; an attribute value is quoted with
//! `"`, `'` or not at all; its character references are decoded by the WHATWG's rules for
//! attributes (`&sol;`, `&#x2f;`, `&#47;`, `&amp` before `=` left as it is). A value is
//! root-relative as a browser's URL parser decides it: after leading spaces and controls, and
//! with tabs and newlines removed, a `/` or `\` not followed by another (`//cdn…` and `/\evil`
//! are another host's). A `srcset` is split into candidates by the HTML spec's algorithm — a
//! URL runs to whitespace, so a `data:` URL's commas stay inside it — and `ping` into its
//! space-separated URLs. An attribute that changes is written back double-quoted with its
//! value re-escaped; every other byte of the page is kept.
//!
//! **Chosen**: `lol_html` (Cloudflare's streaming rewriter, the engine of Workers'
//! HTMLRewriter) for the tokenizing and the byte-preserving rewrite, and `htmlize` for the
//! full table of named character references. **Rejected**: the hand scanner this replaced
//! (quoted values only, six entities; it cut a `data:` image in a `srcset` at its commas and
//! wrote the path into the base64), and a regex (HTML's raw-text elements and quoting are not
//! regular). The link checker keeps its fast scanner (`super::url_attributes`): it reads
//! pages after this rewrite, whose changed attributes are quoted and plainly written.

/// Attributes whose whole value is one URL, on any element (HTML's and SVG's).
const ONE_URL: &[&str] = &[
    "href",
    "src",
    "action",
    "formaction",
    "poster",
    "cite",
    "data",
    "background",
    "longdesc",
    "manifest",
    "icon",
    "codebase",
    "xlink:href",
];

/// `html` with `base_path` (`/project`) in front of every root-relative URL of its URL
/// attributes (see the module doc). A page the rewriter cannot read is returned as it is,
/// with a warning.
pub fn rebase(html: &str, base_path: &str) -> String {
    if base_path.is_empty() {
        return html.to_string();
    }
    let handler = lol_html::element!("*", |el| {
        let mut changed = Vec::new();
        for a in el.attributes() {
            let name = a.name();
            let kind = match name.as_str() {
                "srcset" | "imagesrcset" => Kind::Srcset,
                "ping" => Kind::Spaced,
                n if ONE_URL.contains(&n) => Kind::One,
                _ => continue,
            };
            let raw = a.value();
            let value = htmlize::unescape_attribute(raw.as_str());
            if let Some(new) = rebased(&value, kind, base_path) {
                changed.push((name, new.replace('&', "&amp;")));
            }
        }
        for (name, value) in changed {
            el.set_attribute(&name, &value)?;
        }
        Ok(())
    });
    let settings = lol_html::RewriteStrSettings {
        element_content_handlers: vec![handler],
        ..lol_html::RewriteStrSettings::new()
    };
    lol_html::rewrite_str(html, settings).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "a page could not be read as HTML: its URLs are not rebased");
        html.to_string()
    })
}

#[derive(Clone, Copy)]
enum Kind {
    One,
    Srcset,
    Spaced,
}

/// `value` with `base` put before each of its root-relative URLs; `None`: none is.
fn rebased(value: &str, kind: Kind, base: &str) -> Option<String> {
    let starts: Vec<usize> = match kind {
        Kind::One => vec![0],
        Kind::Srcset => srcset_urls(value),
        Kind::Spaced => spaced_urls(value),
    };
    let at: Vec<usize> = starts
        .into_iter()
        .filter_map(|s| root_relative_at(&value[s..]).map(|i| s + i))
        .collect();
    if at.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(value.len() + base.len() * at.len());
    let mut last = 0;
    for i in at {
        out.push_str(&value[last..i]);
        out.push_str(base);
        last = i;
    }
    out.push_str(&value[last..]);
    Some(out)
}

/// Where the path of `url` starts when it is root-relative, as the URL parser reads it:
/// leading C0 controls and spaces skipped, tabs and newlines ignored, then `/` or `\` not
/// followed by another.
fn root_relative_at(url: &str) -> Option<usize> {
    let start = url.find(|c: char| c > ' ')?;
    let mut chars = url[start..]
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'));
    let slash = |c: Option<char>| matches!(c, Some('/' | '\\'));
    (slash(chars.next()) && !slash(chars.next())).then_some(start)
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0c' | '\r')
}

/// The start of each URL of a `srcset` (HTML's "parse a srcset attribute": skip spaces and
/// commas; the URL runs to the next space; a URL ending in commas ends there; otherwise
/// descriptors run to a comma outside parentheses).
fn srcset_urls(v: &str) -> Vec<usize> {
    let b = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (is_space(b[i] as char) || b[i] == b',') {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        out.push(i);
        while i < b.len() && !is_space(b[i] as char) {
            i += 1;
        }
        if b[i - 1] == b',' {
            continue;
        }
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                b',' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// The start of each space-separated URL (`ping`).
fn spaced_urls(v: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut prev_space = true;
    for (i, c) in v.char_indices() {
        if !is_space(c) && prev_space {
            out.push(i);
        }
        prev_space = is_space(c);
    }
    out
}

/// The decoded text a test compares: character references expanded.
#[cfg(test)]
fn decoded(v: &str) -> std::borrow::Cow<'_, str> {
    htmlize::unescape_attribute(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(html: &str) -> String {
        rebase(html, "/project")
    }

    /// The HTML spec's attribute forms and URL attributes, each rebased; what is not a
    /// root-relative URL in an attribute, kept byte for byte.
    #[test]
    fn every_attribute_form_is_rebased_and_nothing_else() {
        let cases = [
            (r#"<a href="/a/">"#, r#"<a href="/project/a/">"#),
            (r#"<a href='/a/'>"#, r#"<a href="/project/a/">"#),
            (r#"<a href=/a/>"#, r#"<a href="/project/a/">"#),
            (r#"<a HREF = "/a/">"#, r#"<a HREF="/project/a/">"#),
            (r#"<a href="&#x2f;a/">"#, r#"<a href="/project/a/">"#),
            (r#"<a href="&#X2F;a/">"#, r#"<a href="/project/a/">"#),
            (r#"<a href="&#47;a/">"#, r#"<a href="/project/a/">"#),
            (r#"<a href="&sol;a/">"#, r#"<a href="/project/a/">"#),
            (r#"<a href=" /a/">"#, r#"<a href=" /project/a/">"#),
            (
                r#"<a href="/a/?x=1&amp;y=2">"#,
                r#"<a href="/project/a/?x=1&amp;y=2">"#,
            ),
            (
                r#"<button formaction="/go">"#,
                r#"<button formaction="/project/go">"#,
            ),
            (
                r#"<blockquote cite="/src/">"#,
                r#"<blockquote cite="/project/src/">"#,
            ),
            (
                r#"<object data="/o.svg">"#,
                r#"<object data="/project/o.svg">"#,
            ),
            (
                r#"<svg><image xlink:href="/i.png"/></svg>"#,
                r#"<svg><image xlink:href="/project/i.png" /></svg>"#,
            ),
            (
                r#"<a ping="/p1 https://x.org/p /p2">"#,
                r#"<a ping="/project/p1 https://x.org/p /project/p2">"#,
            ),
            (
                r#"<link imagesrcset="/a.png 1x">"#,
                r#"<link imagesrcset="/project/a.png 1x">"#,
            ),
        ];
        for (html, want) in cases {
            assert_eq!(r(html), want, "{html}");
        }
        let kept = [
            r#"<a href="//cdn.example/x">"#,
            r#"<a href="/\evil.example/">"#,
            "<a href=\"/\t/evil.example/\">",
            r#"<a href="https://x.org/a">"#,
            r#"<a href="rel/a/">"#,
            r##"<a href="#top">"##,
            r#"<a data-href="/a/">"#,
            r#"<p title="/a/">"#,
            r#"<p title="<a href=/a/>">t</p>"#,
            r#"<script>var a = '<a href="/a/">';</script>"#,
            r#"<style>a[href="/a/"]{}</style>"#,
            r#"<textarea><a href="/a/"></textarea>"#,
            r#"<!-- <a href="/a/"> -->"#,
            r#"<p>&lt;a href="/a/"&gt;</p>"#,
        ];
        for html in kept {
            assert_eq!(r(html), html);
        }
    }

    /// A `srcset` is split as the spec splits it: a `data:` image's commas are inside its URL
    /// (it used to be cut there: `base64,/project/9j/…`); each root-relative candidate is
    /// rebased, whatever its descriptors.
    #[test]
    fn a_srcset_is_split_into_its_candidates() {
        let data = "data:image/jpeg;base64,/9j/4AAQSkZJRg==";
        let html = format!(r#"<img srcset="{data} 1x, /b.png 2x,/c.png 3w">"#);
        let out = r(&html);
        assert_eq!(
            decoded(&out),
            format!(r#"<img srcset="{data} 1x, /project/b.png 2x,/project/c.png 3w">"#)
        );
        // A URL runs to whitespace: `/a.png,/b.png` is one (as a browser reads it).
        let html = r#"<img srcset="/a.png,/b.png 2x">"#;
        assert_eq!(r(html), r#"<img srcset="/project/a.png,/b.png 2x">"#);
        assert_eq!(
            r(r#"<img srcset="data:,x 1x">"#),
            r#"<img srcset="data:,x 1x">"#
        );
    }
}
