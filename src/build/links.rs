//! Site-internal links in rendered HTML, and checking them against a revision's files.

/// `href` and `src` values that point inside the site (start with one `/`), without their
/// query or fragment.
pub fn internal_links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            rest = &rest[i + attr.len()..];
            let Some(end) = rest.find('"') else { break };
            let v = decode_entities(&rest[..end]);
            let v = v.as_str();
            if v.starts_with('/') && !v.starts_with("//") {
                let v = v.split(['?', '#']).next().unwrap_or(v);
                out.push(v.to_string());
            }
            rest = &rest[end..];
        }
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

/// Every link form that resolves in a revision: `/a/b/index.html` answers `/a/b/`, `/a/b`
/// and `/a/b/index.html`. One hash lookup per link, no allocation.
pub struct Targets(std::collections::HashSet<String>);

impl Targets {
    pub fn new<'a>(paths: impl Iterator<Item = &'a str>) -> Targets {
        let mut set = std::collections::HashSet::new();
        for p in paths {
            set.insert(format!("/{p}"));
            if let Some(dir) = p.strip_suffix("index.html") {
                set.insert(format!("/{dir}"));
                if let Some(d) = dir.strip_suffix('/') {
                    set.insert(format!("/{d}"));
                }
            }
        }
        Targets(set)
    }

    pub fn resolves(&self, link: &str) -> bool {
        self.0.contains(link)
            || (link.contains("%20") && self.0.contains(&link.replace("%20", " ")))
    }
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
    fn targets_agree_with_resolves() {
        let files = ["index.html", "a/index.html", "s.css", "b c/index.html"];
        let t = Targets::new(files.iter().copied());
        for l in [
            "/",
            "/a/",
            "/a",
            "/a/index.html",
            "/s.css",
            "/missing/",
            "/b%20c/",
            "/s.css/",
        ] {
            assert_eq!(t.resolves(l), resolves(l, |p| files.contains(&p)), "{l}");
        }
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
