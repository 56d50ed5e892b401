//! A revision's Pagefind index (`/pagefind/`), written from its pages' [`Record`]s.
//!
//! What a revision's index reuses from the previous one's ([`State`], kept beside it):
//! - **page numbers**: a page keeps its number; a new page is numbered after the last, so
//!   one new page leaves every other page's postings as they were;
//! - **chunk boundaries**: words are cut into chunks at the same words as before while every
//!   chunk stays within twice the target size, so a chunk's bytes change only where its words
//!   gained or lost a page ([`chunks`]).
//!
//! Every data file is named by its content: a file the previous revision has under the same
//! name has the same bytes, is not compressed again ([`Out::Kept`]), and the deploy does not
//! upload it again.

mod assets;
mod chunks;
mod format;

use crate::Record;
use format::*;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

/// The folder of the revision the index is written to (Pagefind's default bundle path).
pub const DIR: &str = "pagefind";

/// What the next index reuses, per language.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub languages: BTreeMap<String, LanguageState>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LanguageState {
    /// The pages' URLs by page number.
    pub order: Vec<String>,
    /// Each chunk's first word.
    pub bounds: Vec<String>,
}

/// One file of the index, by its path in the revision (`pagefind/…`).
pub enum Out {
    /// New bytes (or the runtime's).
    New {
        path: String,
        bytes: Arc<Vec<u8>>,
        immutable: bool,
    },
    /// A content-named file the previous revision has: the same bytes.
    Kept { path: String },
}

impl Out {
    pub fn path(&self) -> &str {
        match self {
            Out::New { path, .. } | Out::Kept { path } => path,
        }
    }
}

/// The index: every file, and the state the next index starts from.
pub struct Index {
    pub files: Vec<Out>,
    pub state: State,
    pub pages: usize,
}

/// The index of `pages` (URL, record), `before` the previous index's state; `had` says whether
/// the previous revision holds a path (its file then has the same bytes, being named by them).
pub fn write(
    pages: &[(String, Arc<Record>)],
    before: &State,
    had: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Index, String> {
    let custom = pages.iter().any(|(_, r)| r.custom_body);
    let mut by_language: BTreeMap<&str, Vec<(&str, &Record)>> = BTreeMap::new();
    for (url, record) in pages.iter().filter(|(_, r)| r.custom_body || !custom) {
        by_language
            .entry(&record.language)
            .or_default()
            .push((url, record));
    }
    let languages: BTreeSet<String> = by_language.keys().map(|l| l.to_string()).collect();
    let runtime = assets::runtime(&languages)?;
    let mut files = Vec::new();
    let mut state = State::default();
    let mut entry = Entry {
        version: VERSION,
        languages: BTreeMap::new(),
        include_characters: Vec::new(),
    };
    let mut count = 0;
    for (lang, pages) in by_language {
        let previous = before.languages.get(lang).cloned().unwrap_or_default();
        let (written, lang_state) = language(lang, pages, &previous, had);
        count += written.page_count;
        entry.languages.insert(
            lang.to_string(),
            EntryLanguage {
                hash: written.meta_hash,
                wasm: assets::has_wasm(&runtime, lang).then(|| lang.to_string()),
                page_count: written.page_count,
            },
        );
        files.extend(written.files);
        state.languages.insert(lang.to_string(), lang_state);
    }
    let json = serde_json::to_vec(&entry).expect("the entry serialises");
    files.push(Out::New {
        path: format!("{DIR}/pagefind-entry.json"),
        bytes: Arc::new(json),
        immutable: false,
    });
    for (name, bytes) in runtime {
        files.push(Out::New {
            path: format!("{DIR}/{name}"),
            bytes,
            immutable: false,
        });
    }
    files.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(Index {
        files,
        state,
        pages: count,
    })
}

struct Written {
    files: Vec<Out>,
    meta_hash: String,
    page_count: usize,
}

/// Page numbers: the previous order where the pages are still there, then new pages by URL.
fn number<'a>(
    pages: Vec<(&'a str, &'a Record)>,
    previous: &LanguageState,
) -> Vec<(&'a str, &'a Record)> {
    let mut by_url: HashMap<&str, &Record> = pages.iter().copied().collect();
    let mut ordered = Vec::with_capacity(pages.len());
    for url in &previous.order {
        if let Some((url, record)) = by_url.remove_entry(url.as_str()) {
            ordered.push((url, record));
        }
    }
    let mut fresh: Vec<(&str, &Record)> = by_url.into_iter().collect();
    fresh.sort_by_key(|(url, _)| *url);
    ordered.extend(fresh);
    ordered
}

/// A short name for `full` (`<lang>_` and 7 hex digits), longer while it collides with a
/// different file's in `taken`.
fn short_name(lang: &str, full: &str, taken: &mut HashMap<String, String>) -> String {
    let mut len = lang.len() + 1 + 7;
    loop {
        let short = &full[..len.min(full.len())];
        match taken.get(short) {
            Some(other) if other != full && len < full.len() => len += 1,
            _ => {
                taken.insert(short.to_string(), full.to_string());
                return short.to_string();
            }
        }
    }
}

/// A data file: kept when the previous revision has its name, else gzipped.
fn data_file(path: String, bytes: &[u8], had: &(dyn Fn(&str) -> bool + Sync)) -> Out {
    match had(&path) {
        true => Out::Kept { path },
        false => Out::New {
            bytes: Arc::new(gzip(bytes)),
            path,
            immutable: true,
        },
    }
}

fn language(
    lang: &str,
    pages: Vec<(&str, &Record)>,
    previous: &LanguageState,
    had: &(dyn Fn(&str) -> bool + Sync),
) -> (Written, LanguageState) {
    let pages = number(pages, previous);
    let meta_fields: Vec<String> = {
        let set: BTreeSet<&String> = pages.iter().flat_map(|(_, r)| r.meta.keys()).collect();
        set.into_iter().cloned().collect()
    };
    let (names, mut files) = fragment_files(lang, &pages, had);
    let (index_chunks, chunk_files, bounds) =
        chunk_files(lang, &pages, &meta_fields, previous, had);
    files.extend(chunk_files);
    let (filter_files, filters) = filters(lang, &pages, had);
    files.extend(filter_files);
    let meta = MetaIndex {
        version: VERSION.into(),
        pages: (names.iter().zip(&pages))
            .map(|(hash, (_, r))| MetaPage {
                hash: hash.clone(),
                word_count: r.word_count,
                group_hash: String::new(),
            })
            .collect(),
        index_chunks,
        filters,
        sorts: Vec::new(),
        meta_fields,
    };
    let bytes = cbor(&meta);
    let full = full_hash(lang, &bytes);
    let meta_hash = full[..lang.len() + 1 + 7].to_string();
    files.push(data_file(
        format!("{DIR}/pagefind.{meta_hash}.pf_meta"),
        &bytes,
        had,
    ));
    let state = LanguageState {
        order: pages.iter().map(|(u, _)| u.to_string()).collect(),
        bounds,
    };
    let written = Written {
        files,
        meta_hash,
        page_count: pages.len(),
    };
    (written, state)
}

/// Each page's fragment file, and its name (by page number).
fn fragment_files(
    lang: &str,
    pages: &[(&str, &Record)],
    had: &(dyn Fn(&str) -> bool + Sync),
) -> (Vec<String>, Vec<Out>) {
    let fragments: Vec<(String, Vec<u8>)> = (pages.par_iter())
        .map(|(url, r)| {
            let json = fragment_json(url, r);
            (full_hash(lang, &json), json)
        })
        .collect();
    let mut taken = HashMap::new();
    let names: Vec<String> = (fragments.iter())
        .map(|(full, _)| short_name(lang, full, &mut taken))
        .collect();
    let files = (fragments.par_iter().zip(names.par_iter()))
        .map(|((_, json), name)| data_file(format!("{DIR}/fragment/{name}.pf_fragment"), json, had))
        .collect();
    (names, files)
}

/// The word index's chunks: their ranges for the meta file, their files, the boundaries.
fn chunk_files(
    lang: &str,
    pages: &[(&str, &Record)],
    meta_fields: &[String],
    previous: &LanguageState,
    had: &(dyn Fn(&str) -> bool + Sync),
) -> (Vec<MetaChunk>, Vec<Out>, Vec<String>) {
    let words = postings(pages, meta_fields);
    let (chunked, bounds) = chunks::cut(words, &previous.bounds);
    let mut ranges = chunks::ranges(&chunked);
    let encoded: Vec<(String, Vec<u8>)> = (chunked.into_par_iter())
        .map(|words| {
            let bytes = cbor(&WordIndex { words });
            (full_hash(lang, &bytes), bytes)
        })
        .collect();
    let mut taken = HashMap::new();
    for ((full, _), range) in encoded.iter().zip(ranges.iter_mut()) {
        range.hash = short_name(lang, full, &mut taken);
    }
    let files = (encoded.par_iter().zip(ranges.par_iter()))
        .map(|((_, bytes), r)| data_file(format!("{DIR}/index/{}.pf_index", r.hash), bytes, had))
        .collect();
    (ranges, files, bounds)
}

fn fragment_json(url: &str, r: &Record) -> Vec<u8> {
    let fragment = Fragment {
        url,
        content: &r.content,
        word_count: r.word_count,
        filters: &r.filters,
        meta: &r.meta,
        anchors: (r.anchors.iter())
            .map(|a| FragmentAnchor {
                element: &a.element,
                id: &a.id,
                text: &a.text,
                location: a.location,
            })
            .collect(),
    };
    serde_json::to_vec(&fragment).expect("a fragment serialises")
}

/// Every word of `pages` with its pages in page-number order, by word.
fn postings(pages: &[(&str, &Record)], meta_fields: &[String]) -> BTreeMap<String, PackedWord> {
    let mut words: BTreeMap<String, PackedWord> = BTreeMap::new();
    for (number, (_, record)) in pages.iter().enumerate() {
        let fields: Vec<u16> = (record.meta.keys())
            .map(|k| meta_fields.iter().position(|f| f == k).unwrap_or(0) as u16)
            .collect();
        for w in &record.words {
            let packed = words.entry(w.key.clone()).or_insert_with(|| PackedWord {
                word: w.key.clone(),
                pages: Vec::new(),
                additional_variants: Vec::new(),
            });
            let meta: Vec<(u16, u32)> = w
                .meta
                .iter()
                .map(|&(f, p)| (fields[f as usize], p))
                .collect();
            if !w.locs.is_empty() || !meta.is_empty() {
                packed.pages.push(PackedPage {
                    page_number: number,
                    locs: pack_locs(&w.locs),
                    meta_locs: pack_meta(&meta),
                });
            }
            for (form, locs) in &w.variants {
                let page = PackedPage {
                    page_number: number,
                    locs: pack_locs(locs),
                    meta_locs: Vec::new(),
                };
                match packed
                    .additional_variants
                    .iter_mut()
                    .find(|v| v.form == *form)
                {
                    Some(v) => v.pages.push(page),
                    None => packed.additional_variants.push(PackedVariant {
                        form: form.clone(),
                        pages: vec![page],
                    }),
                }
            }
        }
    }
    words
}

/// Each filter's file and its entry in the meta file.
fn filters(
    lang: &str,
    pages: &[(&str, &Record)],
    had: &(dyn Fn(&str) -> bool + Sync),
) -> (Vec<Out>, Vec<MetaFilter>) {
    let mut by_filter: BTreeMap<&str, BTreeMap<&str, Vec<usize>>> = BTreeMap::new();
    for (number, (_, record)) in pages.iter().enumerate() {
        for (filter, values) in &record.filters {
            for value in values {
                let list = by_filter
                    .entry(filter)
                    .or_default()
                    .entry(value)
                    .or_default();
                if list.last() != Some(&number) {
                    list.push(number);
                }
            }
        }
    }
    let (mut files, mut metas, mut taken) = (Vec::new(), Vec::new(), HashMap::new());
    for (filter, values) in by_filter {
        let index = FilterIndex {
            filter: filter.to_string(),
            values: (values.into_iter())
                .map(|(value, pages)| PackedValue {
                    value: value.to_string(),
                    pages,
                })
                .collect(),
        };
        let bytes = cbor(&index);
        let hash = short_name(lang, &full_hash(lang, &bytes), &mut taken);
        files.push(data_file(
            format!("{DIR}/filter/{hash}.pf_filter"),
            &bytes,
            had,
        ));
        metas.push(MetaFilter {
            filter: filter.to_string(),
            hash,
        });
    }
    (files, metas)
}
