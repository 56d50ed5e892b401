//! The URLs a site keeps for itself, so `publish` can refuse an item whose URL `build` could
//! not give it: the home page, each collection's list pages and feeds, each taxonomy's index
//! and term pages, the site's feeds, sitemaps, `robots.txt` and `404.html`, the plain pages
//! and the files of `static/`. Pure but for `static/`, which is looked up on disk.
//!
//! Generated URLs that depend on data — a collection's numbered list pages, a taxonomy's
//! term pages — are refused by their shape (`/posts/page/7/`, `/tags/<slug>/`), not by the
//! pages that exist today: a term that appears tomorrow must not find its URL taken.

use fencepost_config::collections::Collections;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The output path of a URL: `/a/b/` → `a/b/index.html`, `/atom.xml` → `atom.xml`.
pub fn url_to_path(url: &str) -> String {
    let u = url.trim_start_matches('/');
    if u.is_empty() || u.ends_with('/') {
        format!("{u}index.html")
    } else {
        u.to_string()
    }
}

/// One URL in the spelling every check compares: `/a/b/index.html` and `/a/b` are the page
/// `/a/b/` (a static host serves the one file for all three, and writing the other spelling
/// would need a file where the page needs a folder); a URL naming a file (`/feed.xml`) stays.
/// Compared lower-cased by the callers (a case-insensitive host holds one file for both).
pub fn page_spelling(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or_default();
    if let Some(dir) = url.strip_suffix("index.html") {
        if dir.ends_with('/') {
            return dir.to_string();
        }
    }
    let last = url.rsplit('/').next().unwrap_or_default();
    if url.ends_with('/') || last.contains('.') {
        url.to_string()
    } else {
        format!("{url}/")
    }
}

/// One part of a URL shape.
#[derive(Debug, Clone)]
enum Part {
    Text(String),
    /// One path segment of slug characters (`a-z 0-9 -`).
    Slug,
    /// One run of digits.
    Number,
}

#[derive(Debug, Clone)]
struct Shape {
    parts: Vec<Part>,
    what: String,
}

impl Shape {
    fn matches(&self, url: &str) -> bool {
        fn go(parts: &[Part], rest: &str) -> bool {
            match parts.split_first() {
                None => rest.is_empty(),
                Some((Part::Text(t), more)) => {
                    rest.strip_prefix(t.as_str()).is_some_and(|r| go(more, r))
                }
                Some((p, more)) => {
                    let ok = |c: char| match p {
                        Part::Number => c.is_ascii_digit(),
                        _ => c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
                    };
                    let n = rest.find(|c| !ok(c)).unwrap_or(rest.len());
                    (1..=n).any(|k| go(more, &rest[k..]))
                }
            }
        }
        go(&self.parts, url)
    }
}

/// A pattern with `{term}` (a slug) and `N` marked by `page/{n}/` at its end, as a shape.
fn shape(pattern: &str, numbered: bool, what: String) -> Shape {
    let mut parts = Vec::new();
    let mut rest = pattern;
    while let Some(i) = rest.find("{term}") {
        parts.push(Part::Text(rest[..i].to_string()));
        parts.push(Part::Slug);
        rest = &rest[i + "{term}".len()..];
    }
    parts.push(Part::Text(rest.to_string()));
    if numbered {
        parts.push(Part::Text("page/".into()));
        parts.push(Part::Number);
        parts.push(Part::Text("/".into()));
    }
    Shape { parts, what }
}

/// The site's own URLs (see the module's comment).
#[derive(Debug, Clone)]
pub struct SiteUrls {
    /// Output path → what the site keeps there.
    fixed: HashMap<String, String>,
    shapes: Vec<Shape>,
    static_dir: PathBuf,
}

impl SiteUrls {
    /// `plain` holds the URLs of the site's plain pages with their files.
    pub fn new(
        root: &Path,
        collections: &Collections,
        rss: bool,
        plain: &[(String, String)],
    ) -> SiteUrls {
        let mut fixed = HashMap::new();
        // Kept lower-cased, and looked up so: an item at `/Tags/` would be the index at
        // `/tags/` on a case-insensitive file system or bucket.
        let mut put = |url: &str, what: String| {
            fixed.entry(url_to_path(url).to_lowercase()).or_insert(what);
        };
        put("/", "the home page".into());
        for f in ["/atom.xml", "/sitemap.xml", "/robots.txt", "/404.html"] {
            put(f, format!("the site's {}", f.trim_start_matches('/')));
        }
        if rss {
            put("/rss.xml", "the site's rss.xml".into());
        }
        let mut shapes = Vec::new();
        for c in &collections.list {
            if let Some(list) = &c.list_url {
                put(list, format!("the list page of collection {}", c.name));
                put(
                    &format!("{list}atom.xml"),
                    format!("the feed of collection {}", c.name),
                );
                if rss {
                    put(
                        &format!("{list}rss.xml"),
                        format!("the feed of collection {}", c.name),
                    );
                }
                let what = format!("the numbered list pages of collection {}", c.name);
                shapes.push(shape(list, true, what));
            }
        }
        for t in &collections.taxonomies {
            if let Some(index) = &t.index_url {
                put(index, format!("the index of taxonomy {}", t.name));
            }
            shapes.push(shape(
                &t.url,
                false,
                format!("the term pages of taxonomy {}", t.name),
            ));
            shapes.push(shape(
                &t.url,
                true,
                format!("the term pages of taxonomy {}", t.name),
            ));
        }
        for (url, file) in plain {
            put(url, format!("plain page {file}"));
        }
        SiteUrls {
            fixed,
            shapes,
            static_dir: root.join("static"),
        }
    }

    /// What the site keeps at `url` (or at a folder the URL needs), if anything: the reason
    /// an item cannot have it.
    pub fn taken(&self, url: &str) -> Option<String> {
        let lower = url.to_lowercase();
        if let Some(s) = self.shapes.iter().find(|s| s.matches(&lower)) {
            if !self.fixed.contains_key(&url_to_path(url).to_lowercase()) {
                return Some(s.what.clone());
            }
        }
        self.taken_by_site(url)
    }

    /// What of the site's own (a page, a generated file, a file of `static/`) has `url`, or
    /// needs it as a folder — leaving out the shapes of item URLs (an alias may take the URL
    /// an item no longer has).
    pub fn taken_by_site(&self, url: &str) -> Option<String> {
        let path = url_to_path(url);
        let folded = path.to_lowercase();
        if let Some(what) = self.fixed.get(&folded) {
            return Some(what.clone());
        }
        // A generated file, or a file of static/, where this URL needs a folder
        // (`/atom.xml/` against the feed `atom.xml`).
        let mut at = path.as_str();
        while let Some((parent, _)) = at.rsplit_once('/') {
            if let Some(what) = self.fixed.get(&parent.to_lowercase()) {
                return Some(what.clone());
            }
            if self.static_dir.join(parent).is_file() {
                return Some(format!("the file static/{parent}"));
            }
            at = parent;
        }
        self.static_dir
            .join(&path)
            .is_file()
            .then(|| format!("the file static/{path}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_page_is_one() {
        for u in ["/tags/news/", "/tags/news", "/tags/news/index.html"] {
            assert_eq!(page_spelling(u), "/tags/news/", "{u}");
        }
        assert_eq!(page_spelling("/atom.xml"), "/atom.xml");
        assert_eq!(page_spelling("/"), "/");
        assert_eq!(page_spelling("/index.html"), "/");
        assert_eq!(page_spelling("/a/b?x=1"), "/a/b/");
    }

    #[test]
    fn shapes_match_only_their_urls() {
        let s = shape("/tags/{term}/", true, "t".into());
        assert!(s.matches("/tags/rust/page/2/"));
        assert!(!s.matches("/tags/rust/"));
        assert!(!s.matches("/tags/rust/page/x/"));
        let s = shape("/tags/{term}/", false, "t".into());
        assert!(s.matches("/tags/rust-lang/"));
        assert!(!s.matches("/tags/a/b/"));
        assert!(!s.matches("/tags//"));
        let s = shape("/posts/", true, "l".into());
        assert!(s.matches("/posts/page/12/"));
        assert!(!s.matches("/posts/page/"));
        assert_eq!(url_to_path("/"), "index.html");
        assert_eq!(url_to_path("/a/b/"), "a/b/index.html");
        assert_eq!(url_to_path("/atom.xml"), "atom.xml");
    }
}

/// The folders of `static/` whose files fencepost keeps for itself in every revision — its
/// own files (`.fencepost/`, `fencepost_output::own`) and the transparency log's
/// (`.well-known/fencepost/`) — with what each is for.
pub const RESERVED: &[(&str, &str)] = &[
    (
        ".fencepost",
        "a revision's own files (its manifest and index)",
    ),
    (
        ".well-known/fencepost",
        "the transparency log and its items' JSON",
    ),
    (
        ".preview",
        "nothing: every origin serves previews there, to holders of a link only",
    ),
];

/// The files of `static/` (site-relative: `static/.fencepost/manifest.json`) under a folder
/// fencepost keeps for itself ([`RESERVED`]), each with why: `publish` refuses them by name,
/// and `build` leaves them out.
pub fn reserved_static(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (dir, what) in RESERVED {
        let base = root.join("static").join(dir);
        if !base.exists() {
            continue;
        }
        for e in walkdir::WalkDir::new(&base).sort_by_file_name() {
            let Ok(e) = e else { continue };
            if e.file_type().is_dir() {
                continue;
            }
            let rel = e.path().strip_prefix(root).unwrap_or(e.path());
            let rel = rel.to_string_lossy().replace('\\', "/");
            let why = format!(
                "{rel}: static/{dir}/ is where every revision keeps {what}: no file of the site may be there (move it elsewhere under static/)"
            );
            out.push((rel, why));
        }
    }
    out
}
