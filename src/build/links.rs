//! Site-internal links in rendered HTML, and checking them against a revision's files.

/// `href` and `src` values that point inside the site, without their query or fragment, as
/// absolute paths: `/a/b/` as written, and a relative one (`cover.svg`, `../nowhere/`)
/// resolved against the page at output path `page` (`posts/a/index.html` is at `/posts/a/`),
/// as a browser would (`..` stops at the root). A page that answers at any URL (`404.html`)
/// has its relative links left alone: they resolve differently at every URL.
pub fn internal_links(html: &str, page: &str) -> Vec<String> {
    let b = html.as_bytes();
    let base = (page != "404.html").then(|| match page.rsplit_once('/') {
        Some((dir, _)) => format!("/{dir}/"),
        None => "/".to_string(),
    });
    let mut out = Vec::new();
    // One pass over the bytes: every `="` preceded by `href` or `src` inside a tag. Text is
    // not a tag: `&lt;a href="{{ page.permalink }}"&gt;` in a code sample (Markdown escapes
    // `<` in text, not `"`) is no link.
    let mut i = 0;
    let mut in_tag = false;
    while i + 1 < b.len() {
        match b[i] {
            b'<' => in_tag = true,
            b'>' => in_tag = false,
            _ => {}
        }
        if in_tag
            && b[i] == b'='
            && b[i + 1] == b'"'
            && (b[..i].ends_with(b"href") || b[..i].ends_with(b"src"))
        {
            let start = i + 2;
            let Some(len) = b[start..].iter().position(|&c| c == b'"') else {
                break;
            };
            let v = decode_entities(&html[start..start + len]);
            let v = v.split(['?', '#']).next().unwrap_or(&v);
            if v.starts_with('/') {
                if !v.starts_with("//") {
                    out.push(v.to_string());
                }
            } else if let Some(base) = base.as_deref().filter(|_| is_relative_path(v)) {
                out.push(resolve_relative(base, v));
            }
            i = start + len;
        }
        i += 1;
    }
    out.sort();
    out.dedup();
    out
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

/// Undoes the entity escaping templates apply to attribute values.
fn decode_entities(v: &str) -> String {
    if !v.contains('&') {
        return v.to_string();
    }
    v.replace("&#x2F;", "/")
        .replace("&#47;", "/")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The file a link needs: `/a/` → `a/index.html`; `/a` → `a` or `a/index.html`.
pub fn resolves(link: &str, exists: impl Fn(&str) -> bool) -> bool {
    let decoded = link.replace("%20", " ");
    let p = decoded.trim_start_matches('/');
    if p.is_empty() {
        return exists("index.html");
    }
    if p.ends_with('/') {
        return exists(&format!("{p}index.html"));
    }
    exists(p) || exists(&format!("{p}/index.html"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_in_escaped_text_are_no_links() {
        let html = "<pre><code>&lt;a href=\"{{ page.permalink }}\"&gt;x&lt;/a&gt;</code></pre>\
                    <p>`src=\"/nowhere.png\"`</p><a class=\"x\" href=\"/real/\">r</a>";
        assert_eq!(internal_links(html, "a/index.html"), ["/real/"]);
    }

    #[test]
    fn finds_internal_links_only() {
        let html = r#"<a href="/a/">x</a><a href="https://e.org/">y</a><img src="/i.png?x=1"><a href="//cdn/x"></a><a href="/b#top"></a><a href="&#x2F;c&#x2F;">"#;
        assert_eq!(
            internal_links(html, "index.html"),
            vec!["/a/", "/b", "/c/", "/i.png"]
        );
    }

    #[test]
    fn relative_links_resolve_against_their_page() {
        let html = r##"<img src="cover.svg"><a href="../nowhere/">x</a><a href="./b/c.html#x">y</a><a href="mailto:a@b">m</a><a href="#top">t</a><a href="?q=1">q</a><a href="../../../..">r</a><a href="https://e.org/">e</a>"##;
        assert_eq!(
            internal_links(html, "posts/a/index.html"),
            vec![
                "/",
                "/posts/a/b/c.html",
                "/posts/a/cover.svg",
                "/posts/nowhere/"
            ]
        );
        assert_eq!(
            internal_links(html, "index.html"),
            vec!["/", "/b/c.html", "/cover.svg", "/nowhere/"]
        );
        assert_eq!(internal_links(html, "404.html"), Vec::<String>::new());
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
}
