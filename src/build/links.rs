//! Site-internal links in rendered HTML, and checking them against a revision's files.

/// `href` and `src` values that point inside the site (start with one `/`), without their
/// query or fragment.
pub fn internal_links(html: &str) -> Vec<String> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    // One pass over the bytes: every `="` preceded by `href` or `src`.
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'='
            && b[i + 1] == b'"'
            && (b[..i].ends_with(b"href") || b[..i].ends_with(b"src"))
        {
            let start = i + 2;
            let Some(len) = b[start..].iter().position(|&c| c == b'"') else {
                break;
            };
            let raw = &html[start..start + len];
            if raw.starts_with('/') || raw.starts_with("&#x2F;") {
                let v = decode_entities(raw);
                if !v.starts_with("//") {
                    let v = v.split(['?', '#']).next().unwrap_or(&v);
                    out.push(v.to_string());
                }
            }
            i = start + len;
        }
        i += 1;
    }
    out.sort();
    out.dedup();
    out
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
    fn finds_internal_links_only() {
        let html = r#"<a href="/a/">x</a><a href="https://e.org/">y</a><img src="/i.png?x=1"><a href="//cdn/x"></a><a href="/b#top"></a><a href="&#x2F;c&#x2F;">"#;
        assert_eq!(internal_links(html), vec!["/a/", "/b", "/c/", "/i.png"]);
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
