//! Site-internal links in rendered HTML, and checking them against a revision's files; a
//! `base_url`'s path put in front of root-relative ones ([`rebase`]).

mod rebase;

pub use rebase::rebase;

/// Attributes whose value is a URL, as the build reads and rebases them (`srcset`: a list of
/// URLs, each followed by its width or density).
const URL_ATTRIBUTES: &[&str] = &["href", "src", "action", "poster", "srcset"];

/// Every URL-valued attribute inside a tag, in order: its name and its value's byte range
/// (quoted with `"` or `'`). Text is not a tag: `&lt;a href="{{ page.permalink }}"&gt;` in a
/// code sample (Markdown escapes `<` in text, not `"`) is no attribute.
fn url_attributes(html: &str) -> Vec<(&'static str, std::ops::Range<usize>)> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut in_tag = false;
    // Only `<`, `>` and `=` matter between attributes: jump from one to the next (memchr's
    // vector search) rather than looking at every byte of the page.
    let mut i = 0;
    while let Some(at) = memchr::memchr3(b'<', b'>', b'=', &b[i..]) {
        let j = i + at;
        i = j + 1;
        match b[j] {
            b'<' => in_tag = true,
            b'>' => in_tag = false,
            _ => {
                let Some(&quote) = b.get(j + 1).filter(|q| matches!(q, b'"' | b'\'')) else {
                    continue;
                };
                if !in_tag {
                    continue;
                }
                if let Some(name) = url_attribute_before(b, j) {
                    let start = j + 2;
                    let Some(len) = memchr::memchr(quote, &b[start..]) else {
                        break;
                    };
                    out.push((name, start..start + len));
                    i = start + len + 1;
                }
            }
        }
    }
    out
}

/// The URL attribute whose name ends at `eq` (an `=`), when the name stands alone: at the
/// start or after whitespace (`data-href=` and `xhref=` are not `href=`). The letters before
/// `eq` are taken as one run and matched whole, with no comparison per candidate name.
fn url_attribute_before(b: &[u8], eq: usize) -> Option<&'static str> {
    let start = b[..eq]
        .iter()
        .rposition(|c| !c.is_ascii_alphabetic())
        .map_or(0, |p| p + 1);
    if start > 0 && !b[start - 1].is_ascii_whitespace() {
        return None;
    }
    URL_ATTRIBUTES
        .iter()
        .copied()
        .find(|n| n.as_bytes() == &b[start..eq])
}

/// `href`, `src`, `action` and `poster` values, and each candidate of a `srcset` (a processed
/// image is a page's link like any other), that point inside the site, without their
/// query or fragment, as site paths: `/a/b/` as written (with `base_path`, the site's own
/// path from `base_url`, taken off: `/project/a/` is `/a/`; a root-relative link outside it
/// is another site's), and a relative one (`cover.svg`, `../nowhere/`) resolved against the
/// page at output path `page` (`posts/a/index.html` is at `/posts/a/`), as a browser would
/// (`..` stops at the root). A page that answers at any URL (`404.html`) has its relative
/// links left alone: they resolve differently at every URL.
pub fn internal_links(html: &str, page: &str, base_path: &str) -> Vec<String> {
    let base = (page != "404.html").then(|| match page.rsplit_once('/') {
        Some((dir, _)) => format!("/{dir}/"),
        None => "/".to_string(),
    });
    let mut out = Vec::new();
    for (name, range) in url_attributes(html) {
        let value = decode_entities(&html[range]);
        // A `srcset` is a list of candidates, each a URL and its width or density.
        let urls: Vec<&str> = match name {
            "srcset" => (value.split(','))
                .filter_map(|c| c.split_whitespace().next())
                .collect(),
            _ => vec![&value],
        };
        for v in urls {
            link_of(v, base.as_deref(), base_path, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The site path `v` (an attribute's URL) links to, if it is one, pushed onto `out`.
pub(crate) fn link_of(v: &str, base: Option<&str>, base_path: &str, out: &mut Vec<String>) {
    let v = v.split(['?', '#']).next().unwrap_or(v);
    {
        if v.starts_with('/') {
            if v.starts_with("//") {
                return;
            }
            match v.strip_prefix(base_path) {
                Some(rest) if base_path.is_empty() => out.push(rest.to_string()),
                Some(rest) if rest.starts_with('/') => out.push(rest.to_string()),
                Some("") => out.push("/".to_string()),
                _ => {}
            }
        } else if let Some(base) = base.filter(|_| is_relative_path(v)) {
            out.push(resolve_relative(base, v));
        }
    }
}

/// A relative reference to a path of this site: not empty (a link to the page itself, or
/// only a query or fragment), and no scheme (`https:`, `mailto:`, `data:`, `javascript:`).
fn is_relative_path(v: &str) -> bool {
    let scheme = v.find(':').is_some_and(|c| {
        !v[..c].contains('/')
            && v[..c]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    });
    !v.is_empty() && !scheme
}

/// `rel` against the folder URL `base` (`/posts/a/`), with `.` and `..` resolved.
fn resolve_relative(base: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = base
        .trim_matches('/')
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    let segments: Vec<&str> = rel.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            ".." => {
                parts.pop();
                if last {
                    parts.push("");
                }
            }
            "." => {
                if last {
                    parts.push("");
                }
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Undoes the entity escaping templates apply to attribute values (`&#x2F;` and `&#47;`,
/// `&quot;`, `&#x27;`, `&lt;`, `&gt;`, `&amp;`), in one pass that borrows a value with no `&`
/// (most of them). The same text as replacing each entity in turn with `&amp;` last: no
/// entity is the start of another, none holds `&` after its first character, and none is
/// made by decoding another — so `&amp;lt;` is `&lt;` either way.
fn decode_entities(v: &str) -> std::borrow::Cow<'_, str> {
    const ENTITIES: [(&str, &str); 7] = [
        ("&#x2F;", "/"),
        ("&#47;", "/"),
        ("&quot;", "\""),
        ("&#x27;", "'"),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&amp;", "&"),
    ];
    let Some(first) = v.find('&') else {
        return std::borrow::Cow::Borrowed(v);
    };
    let mut out = String::with_capacity(v.len());
    out.push_str(&v[..first]);
    let mut rest = &v[first..];
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match ENTITIES.iter().find(|(e, _)| rest.starts_with(e)) {
            Some((e, ch)) => {
                out.push_str(ch);
                rest = &rest[e.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The file a link needs: `/a/` → `a/index.html`; `/a` → `a` or `a/index.html`.
pub fn resolves(link: &str, exists: impl Fn(&str) -> bool) -> bool {
    let decoded = match link.contains("%20") {
        true => std::borrow::Cow::Owned(link.replace("%20", " ")),
        false => std::borrow::Cow::Borrowed(link),
    };
    let p = decoded.trim_start_matches('/');
    if p.is_empty() {
        return exists("index.html");
    }
    // The folder's `index.html` named in one buffer, not `format!` (a link check resolves
    // some 700,000 links at 100,000 pages).
    let index = |slash: &str| {
        let mut f = String::with_capacity(p.len() + 11);
        f.push_str(p);
        f.push_str(slash);
        f.push_str("index.html");
        exists(&f)
    };
    if p.ends_with('/') {
        return index("");
    }
    exists(p) || index("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte-at-a-time scan `url_attributes` replaced, kept as its specification.
    fn url_attributes_byte_by_byte(html: &str) -> Vec<(&'static str, std::ops::Range<usize>)> {
        let b = html.as_bytes();
        let (mut out, mut i, mut in_tag) = (Vec::new(), 0, false);
        while i + 1 < b.len() {
            match b[i] {
                b'<' => in_tag = true,
                b'>' => in_tag = false,
                _ => {}
            }
            let quote = b[i + 1];
            if in_tag && b[i] == b'=' && (quote == b'"' || quote == b'\'') {
                let name = URL_ATTRIBUTES.iter().find(|n| {
                    b[..i].ends_with(n.as_bytes())
                        && (i == n.len() || b[i - n.len() - 1].is_ascii_whitespace())
                });
                if let Some(name) = name {
                    let start = i + 2;
                    let Some(len) = b[start..].iter().position(|&c| c == quote) else {
                        break;
                    };
                    out.push((*name, start..start + len));
                    i = start + len;
                }
            }
            i += 1;
        }
        out
    }

    #[test]
    fn the_attribute_scan_finds_what_the_byte_by_byte_scan_found() {
        let pieces = [
            "<",
            ">",
            "=",
            "\"",
            "'",
            " ",
            "\n",
            "href",
            "src",
            "srcset",
            "xhref",
            "a",
            "/x/",
            "<a href=\"/a/\">",
            "<img src='/i.png'>",
            "=\"",
            "='",
            "é",
            "&amp;",
            "<p>t</p>",
            "data-",
            "\t",
            "H",
            "action",
            "poster",
        ];
        let fixed = [
            "",
            "=",
            "href=\"/a/\"",
            "<a href=\"/a/\"",
            "<a href=\"/a/",
            "<a class=\"a>b\" href=\"/c/\">",
            "<a title='x=\"/y/\"' href='/z/'>",
            "<a\thref=\"/t/\"><img src=\"\">",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut random = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let generated = (0..20_000).map(|_| {
            let n = random() % 24;
            (0..n)
                .map(|_| pieces[(random() % pieces.len() as u64) as usize])
                .collect::<String>()
        });
        for html in fixed.iter().map(|s| s.to_string()).chain(generated) {
            assert_eq!(
                url_attributes(&html),
                url_attributes_byte_by_byte(&html),
                "{html:?}"
            );
        }
    }

    #[test]
    fn links_in_escaped_text_are_no_links() {
        let html = "<pre><code>&lt;a href=\"{{ page.permalink }}\"&gt;x&lt;/a&gt;</code></pre>\
                    <p>`src=\"/nowhere.png\"`</p><a class=\"x\" href=\"/real/\">r</a>";
        assert_eq!(internal_links(html, "a/index.html", ""), ["/real/"]);
    }

    #[test]
    fn finds_internal_links_only() {
        let html = r#"<a href="/a/">x</a><a href="https://e.org/">y</a><img src="/i.png?x=1"><a href="//cdn/x"></a><a href="/b#top"></a><a href="&#x2F;c&#x2F;">"#;
        assert_eq!(
            internal_links(html, "index.html", ""),
            vec!["/a/", "/b", "/c/", "/i.png"]
        );
    }

    #[test]
    fn relative_links_resolve_against_their_page() {
        let html = r##"<img src="cover.svg"><a href="../nowhere/">x</a><a href="./b/c.html#x">y</a><a href="mailto:a@b">m</a><a href="#top">t</a><a href="?q=1">q</a><a href="../../../..">r</a><a href="https://e.org/">e</a>"##;
        assert_eq!(
            internal_links(html, "posts/a/index.html", ""),
            vec![
                "/",
                "/posts/a/b/c.html",
                "/posts/a/cover.svg",
                "/posts/nowhere/"
            ]
        );
        assert_eq!(
            internal_links(html, "index.html", ""),
            vec!["/", "/b/c.html", "/cover.svg", "/nowhere/"]
        );
        assert_eq!(internal_links(html, "404.html", ""), Vec::<String>::new());
    }

    #[test]
    fn under_a_base_path_every_root_relative_url_is_rebased_and_checked_without_it() {
        let html = r#"<a href="&#x2F;posts&#x2F;a&#x2F;">a</a><link rel="stylesheet" href='/style.css'><img src="/i.png" srcset="/i.png 1x, /i@2x.png 2x, https://e.org/x.png 3x"><a href="//cdn/x">c</a><a href="https://e.org/">e</a><a href="rel/">r</a><a data-href="/no/">d</a><p>href="/text/"</p><pre><code>&lt;a href="/code/"&gt;</code></pre>"#;
        let rebased = rebase(html, "/project");
        assert_eq!(
            rebased,
            r#"<a href="/project/posts/a/">a</a><link rel="stylesheet" href="/project/style.css"><img src="/project/i.png" srcset="/project/i.png 1x, /project/i@2x.png 2x, https://e.org/x.png 3x"><a href="//cdn/x">c</a><a href="https://e.org/">e</a><a href="rel/">r</a><a data-href="/no/">d</a><p>href="/text/"</p><pre><code>&lt;a href="/code/"&gt;</code></pre>"#
        );
        assert_eq!(rebase(html, ""), html);
        assert_eq!(
            internal_links(&rebased, "posts/b/index.html", "/project"),
            // Each candidate of a `srcset` is a link (`/i@2x.png`), checked like any other.
            vec![
                "/i.png",
                "/i@2x.png",
                "/posts/a/",
                "/posts/b/rel/",
                "/style.css"
            ]
        );
        // A root-relative link outside the base path is another site's, not a missing page.
        assert_eq!(
            internal_links(
                r#"<a href="/other/">o</a><a href="/project">p</a>"#,
                "index.html",
                "/project"
            ),
            vec!["/"]
        );
    }

    #[test]
    fn resolution_rules() {
        let files = ["index.html", "a/index.html", "s.css"];
        let exists = |p: &str| files.contains(&p);
        assert!(resolves("/", exists));
        assert!(resolves("/a/", exists));
        assert!(resolves("/a", exists));
        assert!(resolves("/s.css", exists));
        assert!(!resolves("/missing/", exists));
    }

    /// Guards: the one-pass entity decoding gives what replacing each entity in turn gave
    /// (`&amp;` last), for every entity next to every other, cut short, doubled and bare.
    #[test]
    fn entities_decode_as_the_replacements_in_turn_did() {
        let in_turn = |v: &str| {
            v.replace("&#x2F;", "/")
                .replace("&#47;", "/")
                .replace("&quot;", "\"")
                .replace("&#x27;", "'")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        };
        let pieces = [
            "&#x2F;", "&#47;", "&quot;", "&#x27;", "&lt;", "&gt;", "&amp;", "&", "&am", "&#x2",
            "amp;", "lt;", "a", "é", "/", "",
        ];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let v = format!("{a}{b}{c}");
                    assert_eq!(decode_entities(&v), in_turn(&v), "{v:?}");
                }
            }
        }
    }

    /// Guards: rebasing looks at the first characters of a URL without cutting one in two
    /// (a value whose 12th byte is inside `é` panicked).
    #[test]
    fn a_url_of_multibyte_characters_is_rebased_whole() {
        let html = r#"<a href="/abcdefghijé/x/">a</a><a href="éééééééé">b</a>"#;
        assert_eq!(
            rebase(html, "/p"),
            r#"<a href="/p/abcdefghijé/x/">a</a><a href="éééééééé">b</a>"#
        );
    }
}
