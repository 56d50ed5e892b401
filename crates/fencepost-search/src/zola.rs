//! Zola's own search index, for a Zola theme's search script (`build_search_index = true` in
//! Zola's config; `[search] build_search_index` here): the files Zola writes at the site's
//! root, in its formats —
//!
//! - `elasticlunr_javascript` (Zola's default): `search_index.<lang>.js`, which sets
//!   `window.searchIndex` to an elasticlunr index, and `elasticlunr.min.js` (elasticlunr
//!   0.9.5 from its npm package, MIT, `vendor/`) beside it, as Zola ships it;
//! - `elasticlunr_json`: `search_index.<lang>.json`;
//! - `fuse_javascript`, `fuse_json`: the documents as a list, for Fuse.js.
//!
//! Written with `elasticlunr-rs`, Zola's own writer, from the same records as the Pagefind
//! index — the revision's own pages — so it never holds a page before its instant either.
//! Each document's ref is its permalink; its fields, in Zola's order, `title`, `description`,
//! `path`, `body` as `[search]`'s `include_*` say (the body cut at
//! `truncate_content_length` characters). Zola's `include_date` and its other languages'
//! files and pipelines are not made: every page is in `search_index.en.*`, indexed with the
//! English pipeline.

use crate::pagefind::{PageIn, Source};
use crate::Record;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// elasticlunr.js, as the page loads it (`/elasticlunr.min.js`).
const ELASTICLUNR_JS: &[u8] = include_bytes!("../vendor/elasticlunr.min.js");

/// What Zola's `[search]` says to index, and the site's base URL (refs are permalinks).
pub struct Options<'a> {
    pub format: &'a str,
    pub include_title: bool,
    pub include_description: bool,
    pub include_path: bool,
    pub include_content: bool,
    pub truncate_content_length: Option<usize>,
    pub base_url: &'a str,
}

/// One document's fields.
#[derive(Serialize)]
struct Doc {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<String>,
}

impl Options<'_> {
    fn doc(&self, url: &str, r: &Record) -> Doc {
        let body = match self.truncate_content_length {
            Some(n) => r.content.chars().take(n).collect(),
            None => r.content.clone(),
        };
        Doc {
            title: (self.include_title).then(|| r.meta.get("title").cloned().unwrap_or_default()),
            description: (self.include_description)
                .then(|| r.description.clone().unwrap_or_default()),
            path: self.include_path.then(|| url.to_string()),
            body: self.include_content.then_some(body),
        }
    }

    fn permalink(&self, url: &str) -> String {
        format!("{}{}", self.base_url.trim_end_matches('/'), url)
    }
}

/// Every page of `pages` read (in parallel; Zola's index is made whole each time), with its
/// URL, those left out by the body rule (some page marks its body: only such pages) dropped.
pub fn read_all(pages: &[PageIn], src: &dyn Source) -> Result<Vec<(String, Arc<Record>)>, String> {
    let read: Vec<(String, Arc<Record>)> =
        (pages.par_iter())
            .map(|p| {
                Ok(crate::fossick(&src.page(&p.path)?)
                    .map(|r| (crate::page_url(&p.path), Arc::new(r))))
            })
            .collect::<Result<Vec<_>, String>>()?
            .into_iter()
            .flatten()
            .collect();
    let custom = read.iter().any(|(_, r)| r.custom_body);
    Ok(read
        .into_iter()
        .filter(|(_, r)| r.custom_body || !custom)
        .collect())
}

/// Zola's language of a page: Zola names the file by the site's language, not by a page's
/// `<html lang>` (`en-gb` in a theme's template), and a fencepost site has one, Zola's
/// default `en`.
fn language(_: &Record) -> &str {
    "en"
}

/// The files, by path in the revision, of the index of `pages` (URL, record).
pub fn write(pages: &[(String, Arc<Record>)], o: &Options<'_>) -> Vec<(String, Vec<u8>)> {
    let mut by_language: BTreeMap<&str, Vec<(&str, &Record)>> = BTreeMap::new();
    for (url, r) in pages {
        by_language.entry(language(r)).or_default().push((url, r));
    }
    let mut out = Vec::new();
    for (lang, pages) in by_language {
        let docs: Vec<(String, Doc)> = (pages.iter())
            .map(|(url, r)| (o.permalink(url), o.doc(url, r)))
            .collect();
        let json = match o.format {
            "fuse_javascript" | "fuse_json" => fuse(docs),
            _ => elasticlunr(docs, o),
        };
        let (ext, bytes) = match o.format {
            "elasticlunr_json" | "fuse_json" => ("json", json.into_bytes()),
            _ => ("js", format!("window.searchIndex = {json};").into_bytes()),
        };
        out.push((format!("search_index.{lang}.{ext}"), bytes));
    }
    if o.format == "elasticlunr_javascript" {
        out.push(("elasticlunr.min.js".into(), ELASTICLUNR_JS.to_vec()));
    }
    out
}

fn elasticlunr(docs: Vec<(String, Doc)>, o: &Options<'_>) -> String {
    let fields = [
        ("title", o.include_title),
        ("description", o.include_description),
        ("path", o.include_path),
        ("body", o.include_content),
    ];
    let names: Vec<&str> = fields
        .iter()
        .filter(|(_, on)| *on)
        .map(|(n, _)| *n)
        .collect();
    let mut index = elasticlunr::Index::new(&names);
    for (permalink, doc) in docs {
        let values = [doc.title, doc.description, doc.path, doc.body];
        index.add_doc(&permalink, values.into_iter().flatten());
    }
    index.to_json()
}

/// Fuse's list: each document with its ref as `path` (Zola's shape).
fn fuse(docs: Vec<(String, Doc)>) -> String {
    let list: Vec<serde_json::Value> = (docs.into_iter())
        .map(|(permalink, doc)| {
            let mut v = serde_json::to_value(doc).expect("a document serialises");
            v["path"] = serde_json::Value::String(permalink);
            v
        })
        .collect();
    serde_json::to_string(&list).expect("the list serialises")
}
