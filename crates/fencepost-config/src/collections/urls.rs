//! Every file the configuration makes the build write — the home page, the site's feeds,
//! sitemap, robots.txt and 404 page; each collection's list pages, numbered pages and feeds;
//! each taxonomy's index, term pages, their numbered pages and feeds — checked against every
//! other when the config loads, before any command records anything. Two that can land on
//! one file (or one a file where the other needs a folder) are refused, naming both and
//! the key to change: such a site used to pass `publish` (its items recorded) and fail every
//! build after (none live).
//!
//! A file's path is a list of segments, each a literal or a pattern: a taxonomy's `{term}`
//! (a slug: lower-case letters, digits and `-`, with the literal text around it in the
//! segment) or a page number (`1`, `2`, …). Two segments can be one when their literals are
//! equal or a literal is one the pattern makes; two patterns are taken to meet (a term can be
//! any slug). Items' own URLs are not here: an item that lands on a list page is left out of
//! the revision by name, alone (the build's rule), and a pattern of one collection equal to
//! another's is refused by `check_apart`.

use super::{Collection, Collections};
use crate::taxonomies::Taxonomy;

#[derive(Debug, Clone)]
enum Seg {
    Lit(String),
    /// `prefix{term}suffix`.
    Term(String, String),
    /// A page number.
    Num,
}

/// One file (or family of files) the config makes: what it is, the key that sets it, and its
/// output path.
struct File {
    what: String,
    key: String,
    path: Vec<Seg>,
}

/// The segments of a folder URL (`/tags/{term}/`) followed by `file`.
fn under(url: &str, tail: &[Seg]) -> Vec<Seg> {
    let mut out: Vec<Seg> = url
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| match s.split_once("{term}") {
            Some((pre, post)) => Seg::Term(pre.into(), post.into()),
            None => Seg::Lit(s.into()),
        })
        .collect();
    out.extend(tail.iter().cloned());
    out
}

fn lit(s: &str) -> Seg {
    Seg::Lit(s.into())
}

fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

/// Whether two segments can be the same name.
fn meet(a: &Seg, b: &Seg) -> bool {
    match (a, b) {
        (Seg::Lit(x), Seg::Lit(y)) => x == y,
        (Seg::Lit(x), Seg::Num) | (Seg::Num, Seg::Lit(x)) => {
            !x.is_empty() && !x.starts_with('0') && x.bytes().all(|c| c.is_ascii_digit())
        }
        (Seg::Lit(x), Seg::Term(pre, post)) | (Seg::Term(pre, post), Seg::Lit(x)) => x
            .strip_prefix(pre.as_str())
            .and_then(|r| r.strip_suffix(post.as_str()))
            .is_some_and(is_slug),
        (Seg::Term(p1, s1), Seg::Term(p2, s2)) => {
            (p1.starts_with(p2.as_str()) || p2.starts_with(p1.as_str()))
                && (s1.ends_with(s2.as_str()) || s2.ends_with(s1.as_str()))
        }
        (Seg::Num, Seg::Term(..)) | (Seg::Term(..), Seg::Num) | (Seg::Num, Seg::Num) => true,
    }
}

/// Whether `a` and `b` can be one file, or `a` a file where `b` needs a folder.
fn clash(a: &[Seg], b: &[Seg]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short.iter().zip(long).all(|(x, y)| meet(x, y))
}

/// What the config makes, file by file (see the module doc).
fn files(c: &Collections, rss: bool) -> Vec<File> {
    let site = |what: &str, name: &str| File {
        what: what.into(),
        key: "the site's own files".into(),
        path: vec![lit(name)],
    };
    let mut out = vec![
        site("the home page", "index.html"),
        site("the site's feed", "atom.xml"),
        site("the sitemap", "sitemap.xml"),
        site("robots.txt", "robots.txt"),
        site("the 404 page", "404.html"),
    ];
    if rss {
        out.push(site("the site's RSS feed", "rss.xml"));
    }
    for coll in &c.list {
        out.extend(collection_files(coll, rss));
    }
    for t in &c.taxonomies {
        out.extend(taxonomy_files(t, rss));
    }
    out
}

fn feeds(url: &str, rss: bool) -> Vec<Vec<Seg>> {
    let mut out = vec![under(url, &[lit("atom.xml")])];
    if rss {
        out.push(under(url, &[lit("rss.xml")]));
    }
    out
}

fn collection_files(coll: &Collection, rss: bool) -> Vec<File> {
    let Some(l) = &coll.list_url else {
        return Vec::new();
    };
    let key = format!("collections.{}.list_url", coll.name);
    let file = |what: String, path| File {
        what,
        key: key.clone(),
        path,
    };
    let mut out = vec![
        file(
            format!("collection {}'s list page ({l})", coll.name),
            under(l, &[lit("index.html")]),
        ),
        file(
            format!(
                "collection {}'s numbered list pages ({l}page/N/)",
                coll.name
            ),
            under(l, &[lit("page"), Seg::Num, lit("index.html")]),
        ),
    ];
    if coll.own_feed && coll.feed {
        for path in feeds(l, rss) {
            out.push(file(
                format!("collection {}'s feed ({l}atom.xml)", coll.name),
                path,
            ));
        }
    }
    out
}

fn taxonomy_files(t: &Taxonomy, rss: bool) -> Vec<File> {
    let key = format!("taxonomies.{}.url", t.name);
    let u = &t.url;
    let file = |what: String, key: &str, path| File {
        what,
        key: key.to_string(),
        path,
    };
    let mut out = vec![
        file(
            format!("taxonomy {}'s term pages ({u})", t.name),
            &key,
            under(u, &[lit("index.html")]),
        ),
        file(
            format!("taxonomy {}'s numbered term pages ({u}page/N/)", t.name),
            &key,
            under(u, &[lit("page"), Seg::Num, lit("index.html")]),
        ),
    ];
    if t.feed {
        for path in feeds(u, rss) {
            out.push(file(
                format!("taxonomy {}'s term feeds ({u}atom.xml)", t.name),
                &key,
                path,
            ));
        }
    }
    if let Some(i) = &t.index_url {
        let key = format!("taxonomies.{}.index_url", t.name);
        let what = format!("taxonomy {}'s index of terms ({i})", t.name);
        out.push(file(what, &key, under(i, &[lit("index.html")])));
    }
    out
}

/// The first two files of the config that can land on one path: (the key to change, why).
pub(super) fn check_generated(c: &Collections, rss: bool) -> Result<(), (String, String)> {
    let all = files(c, rss);
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            if a.key != b.key && clash(&a.path, &b.path) {
                // The key named: a collection's list_url before a taxonomy's, and either
                // before the site's own files (which no key moves).
                let rank = |k: &str| match k {
                    k if k.starts_with("collections.") => 0,
                    "the site's own files" => 2,
                    _ => 1,
                };
                let key = match rank(&a.key) <= rank(&b.key) {
                    true => a.key.clone(),
                    false => b.key.clone(),
                };
                return Err((
                    key,
                    format!(
                        "{} ({}) and {} ({}) can be written at the same path (or one where the other needs a folder), and the build could write neither: give one of them another URL",
                        a.what, a.key, b.what, b.key
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(url: &str, file: &str) -> Vec<Seg> {
        under(url, &[lit(file)])
    }

    #[test]
    fn files_meet_where_a_path_can_be_both() {
        assert!(clash(
            &segs("/tags/", "index.html"),
            &segs("/tags/", "index.html")
        ));
        assert!(clash(
            &segs("/tags/rust/", "index.html"),
            &segs("/tags/{term}/", "index.html")
        ));
        assert!(!clash(
            &segs("/tags/", "index.html"),
            &segs("/tags/{term}/", "index.html")
        ));
        assert!(clash(
            &segs("/t-{term}/", "index.html"),
            &segs("/t-rust/", "index.html")
        ));
        assert!(!clash(
            &segs("/t-{term}/", "index.html"),
            &segs("/u-rust/", "index.html")
        ));
        assert!(!clash(
            &segs("/tags/R_1/", "index.html"),
            &segs("/tags/{term}/", "index.html")
        ));
        // A file where the other needs a folder: `/atom.xml/` beside the site's feed.
        assert!(clash(&[lit("atom.xml")], &segs("/atom.xml/", "index.html")));
        let pages = under("/posts/", &[lit("page"), Seg::Num, lit("index.html")]);
        assert!(clash(&pages, &segs("/posts/page/2/", "index.html")));
        assert!(!clash(&pages, &segs("/posts/page/02/", "index.html")));
        assert!(!clash(&pages, &segs("/posts/", "index.html")));
    }
}
