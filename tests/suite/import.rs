//! `fencepost import hugo|zola SRC DST` (issue 38): a real Hugo example site (vendored,
//! MIT), a Hugo site with YAML front matter, permalinks, a page bundle, a draft and an
//! embargoed post, and a Zola site — each imported, published, built and served.
mod assets;
mod docs;
mod edges;
mod functions;
mod hugo;
mod origins;
mod sections;
mod shortcodes;
mod tabi;
mod zola;

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// `fencepost import FROM SRC DST --json` (run from `dir`), expecting success.
fn import(dir: &Path, from: &str, src: &Path, dst: &Path) -> Value {
    let out = fencepost()
        .current_dir(dir)
        .args(["import", from])
        .arg(src)
        .arg(dst)
        .args(["--json", "--now", NOW])
        .output()
        .unwrap();
    assert_success(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A source site of `files` in a temporary folder.
fn source(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The imported site at `dst`, as a TestSite (its tempdir kept by the caller).
fn site_at(dst: &Path) -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(dst, dir.path());
    TestSite { dir }
}

/// No shortcode reached a page: `{{<`/`{{%` (or escaped) outside highlighted code spans.
fn assert_no_shortcodes(s: &TestSite) {
    assert_no_shortcodes_but(s, &[]);
}

/// The escaped shortcodes of a source (`{{</* x */>}}`) as Hugo shows them (`{{< x >}}`):
/// what a page may show.
fn escaped_shortcodes(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (_, bytes) in files_under(src) {
        let text = String::from_utf8_lossy(&bytes);
        for (open, close) in [("{{</*", "*/>}}"), ("{{%/*", "*/%}}")] {
            let mut rest = text.as_ref();
            while let Some(at) = rest.find(open) {
                let Some(end) = rest[at..].find(close) else {
                    break;
                };
                let inner = &rest[at + open.len()..at + end];
                let shown = format!("{}{inner}{}", &open[..3], &close[2..]);
                let html = |q: &str| {
                    shown
                        .replace('<', "&lt;")
                        .replace('>', "&gt;")
                        .replace('"', q)
                };
                // As written, in a page's HTML, and in a feed's (HTML escaped once more).
                for form in [shown.clone(), html("&quot;"), html("&#34;")] {
                    out.push(form.replace('&', "&amp;"));
                    out.push(form);
                }
                rest = &rest[at + end..];
            }
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// No shortcode reached a page but the escaped ones (`allowed`, as Hugo shows them).
fn assert_no_shortcodes_but(s: &TestSite, allowed: &[String]) {
    for (path, bytes) in files_under(&s.current_dir()) {
        let mut text = String::from_utf8_lossy(&bytes)
            .replace("{{</span>", "")
            .replace("{{&lt;/span&gt;", "");
        for a in allowed {
            text = text.replace(a.as_str(), "");
        }
        for bad in ["{{< ", "{{<", "{{% ", "{{&lt;", "{{%"] {
            assert!(!text.contains(bad), "{path} holds {bad:?}");
        }
    }
}

fn not_converted(r: &Value) -> Vec<(String, Option<i64>, String)> {
    r["not_converted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["file"].as_str().unwrap().to_string(),
                u["line"].as_i64(),
                u["what"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"4\" height=\"4\"/>\n";

/// An origin seen from under a site's base path: `get("/a/")` asks for `/project/a/`.
struct Under<'a>(&'a Server, &'a str);

impl Under<'_> {
    fn get(&self, url: &str) -> HttpResponse {
        self.0.get(&format!("{}{url}", self.1))
    }
}

/// A site whose `base_url` has a path (`https://user.github.io/project/`) works under it:
/// every root-relative link, stylesheet and image of its home page and of a post is under the
/// path and answers; its feeds and sitemap name URLs under it; outside the path nothing
/// answers but `/`, which redirects there.
fn assert_served_under_its_path(srv: &Server, path: &str, host: &str) {
    let home = srv.get(&format!("{path}/"));
    assert_eq!(home.status, 200);
    let first_post = {
        let t = home.text();
        let at = t
            .find(&format!("href=\"{path}/posts/"))
            .expect("a post link");
        let rest = &t[at + 6..];
        rest[..rest.find('"').unwrap()].to_string()
    };
    for page in [format!("{path}/"), first_post] {
        let html = srv.get(&page).text();
        let mut seen = 0;
        for attr in ["href=\"", "src=\""] {
            for (i, _) in html.match_indices(attr) {
                let v = &html[i + attr.len()..];
                let v = &v[..v.find('"').unwrap()];
                if !v.starts_with('/') || v.starts_with("//") {
                    continue;
                }
                assert!(v.starts_with(&format!("{path}/")), "{v} on {page}");
                let status = srv.get(v.split('#').next().unwrap()).status;
                assert!(status == 200 || status == 301, "{v} on {page}: {status}");
                seen += 1;
            }
        }
        assert!(seen > 3, "{page}: {html}");
        assert!(html.contains(&format!("{path}/style.")), "{html}");
    }
    let feed = srv.get(&format!("{path}/atom.xml")).text();
    assert!(feed.contains(&format!("{host}{path}/posts/")), "{feed}");
    assert!(!feed.contains(&format!("href=\"{host}/posts/")), "{feed}");
    let sitemap = srv.get(&format!("{path}/sitemap.xml")).text();
    assert!(
        sitemap.contains(&format!("<loc>{host}{path}/sitemaps/"))
            && !sitemap.contains(&format!("<loc>{host}/sitemaps/")),
        "{sitemap}"
    );
    assert_eq!(srv.get("/posts/").status, 404);
    let root = srv.get("/");
    assert_eq!(
        (root.status, root.header("location")),
        (301, Some(format!("{path}/").as_str()))
    );
}

/// The old URL of every page under `content` by Zola's rules: its path under content/,
/// `index.md` naming its folder, each segment slugified (`zola.386` is `zola-386`).
fn zola_old_urls(content: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(content).into_iter().flatten() {
        let rel = e
            .path()
            .strip_prefix(content)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if !rel.ends_with(".md") || rel.ends_with("_index.md") {
            continue;
        }
        let path = rel.trim_end_matches("/index.md").trim_end_matches(".md");
        let slugged: Vec<String> = path
            .split('/')
            .map(|p| p.to_lowercase().replace('.', "-"))
            .collect();
        out.push(format!("/{}/", slugged.join("/")));
    }
    out
}
