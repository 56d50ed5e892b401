//! Site search built inside each revision.
//!
//! A revision's search index is made from the revision's own pages and nothing else, so it
//! holds a page exactly from the revision that publishes it: the pointer swap moves pages and
//! index together, an embargoed item is in neither, a withdrawn one leaves both.
//!
//! - [`fossick`]: one built page read as Pagefind's indexer reads it — its words at their
//!   positions and weights, its excerpt text, meta, filters, anchors — into a [`Record`],
//!   kept (by the build, beside the revision) so a page kept from the previous revision is
//!   never read again.
//! - [`pagefind`]: the records written as a Pagefind index (`/pagefind/`, Pagefind 1.6's
//!   format, its own `pagefind.js`, WebAssembly and UI taken from the `pagefind` crate), each
//!   file named by its content; page numbers and chunk boundaries carried over from the last
//!   index ([`pagefind::State`]) so a new page rewrites only the chunks its words are in.
//! - [`zola`]: Zola's own index (`search_index.<lang>.js`, elasticlunr or Fuse) for a Zola
//!   theme's search script, from the same records.
//!
//! Why a writer of our own and not the `pagefind` crate's indexer: the crate reads every page
//! again for every index (10,000 pages: 3.7 s on this machine, against a 0.3 s build), keeps
//! no state between runs, and numbers pages afresh each time (so every chunk changes when
//! one page is added). Measured in BENCHMARKS.md, "Search".

mod fossick;
pub mod pagefind;
mod words;
pub mod zola;

pub use fossick::fossick;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the search index takes from one page (its URL is the build's to say).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// `<html lang>`, lower-cased; `unknown` without one. Each language is its own index.
    pub language: String,
    /// The page marks what to index with `data-pagefind-body` (then pages without one are left
    /// out of the site's index).
    pub custom_body: bool,
    /// The indexed text, whitespace collapsed: the excerpt's source.
    pub content: String,
    pub word_count: u32,
    pub filters: BTreeMap<String, Vec<String>>,
    /// `title`, `image`, `image_alt` and any `data-pagefind-meta`.
    pub meta: BTreeMap<String, String>,
    pub anchors: Vec<Anchor>,
    /// The page's words, by key.
    pub words: Vec<Word>,
    /// `<meta name="description">` (Zola's index's `description`).
    pub description: Option<String>,
}

/// A heading with an `id`, where it starts (a word position).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    pub element: String,
    pub id: String,
    pub text: String,
    pub location: u32,
}

/// One indexed word of a page: where it is, at which weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Word {
    /// Normalised and stemmed: the form a query is matched against.
    pub key: String,
    /// (weight, position): weight 24 is an ordinary word's, 0 an unweighted one's.
    pub locs: Vec<(u8, u32)>,
    /// Forms written with diacritics, each with its own locations.
    pub variants: Vec<(String, Vec<(u8, u32)>)>,
    /// (meta field, position) in the page's meta fields, in key order.
    pub meta: Vec<(u16, u32)>,
}

impl Word {
    fn new(key: &str) -> Word {
        Word {
            key: key.to_string(),
            locs: Vec::new(),
            variants: Vec::new(),
            meta: Vec::new(),
        }
    }

    fn at(&mut self, original: Option<String>, weight: u8, position: u32) {
        match original {
            None => self.locs.push((weight, position)),
            Some(form) => match self.variants.iter_mut().find(|(f, _)| *f == form) {
                Some((_, locs)) => locs.push((weight, position)),
                None => self.variants.push((form, vec![(weight, position)])),
            },
        }
    }
}

/// Whether `path` (in a revision) is a file the search indexes make: under `pagefind/` with
/// Pagefind's, `search_index.<lang>.js|json` and `elasticlunr.min.js` with Zola's.
pub fn made_by_index(path: &str, pagefind: bool, zola: bool) -> bool {
    let zolas = || {
        path == "elasticlunr.min.js"
            || (path.strip_prefix("search_index.")).is_some_and(|rest| {
                !rest.contains('/') && (rest.ends_with(".js") || rest.ends_with(".json"))
            })
    };
    (pagefind && path.starts_with("pagefind/")) || (zola && zolas())
}

/// The URL Pagefind gives the page at `path` in the revision: `/a/b/` for `a/b/index.html`.
pub fn page_url(path: &str) -> String {
    let trimmed = match path {
        "index.html" => "",
        p => p.strip_suffix("/index.html").unwrap_or(p),
    };
    match trimmed.is_empty() {
        true => "/".to_string(),
        false if path.ends_with("/index.html") => format!("/{trimmed}/"),
        false => format!("/{trimmed}"),
    }
}

#[cfg(test)]
mod tests;
