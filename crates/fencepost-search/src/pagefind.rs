//! A revision's Pagefind index (`/pagefind/`), written from its pages.
//!
//! A page is read ([`crate::fossick`]) only when it is new or its bytes changed: the previous
//! index's [`State`] says which page had which bytes, and its chunk files hold every other
//! page's words, read back (`postings.rs`). Pages keep their numbers (a changed or removed
//! page's are given up, the rest close ranks in order; new pages come last) and the chunks
//! keep their boundaries while they stay in shape (`chunks.rs`), so a language no page of
//! which changed keeps every file, and one new page rewrites its fragment, the chunks its words
//! are in, the meta file and the entry.
//!
//! Every data file is named by its content: a file the previous revision has under the same
//! name has the same bytes, is not compressed again ([`Out::Kept`]), and the deploy does not
//! upload it again.

mod assets;
mod chunks;
mod format;
mod grow;
mod postings;
pub mod state;

use crate::Record;
use format::*;
use grow::{chunk_files, grow, words_of};
use rayon::prelude::*;
pub use state::{LanguageState, PageState, Seen, State};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// The folder of the revision the index is written to (Pagefind's default bundle path).
pub const DIR: &str = "pagefind";

/// A page of the revision: its path, and its bytes' SHA-256 when it is not the previous
/// revision's file unchanged.
pub struct PageIn {
    pub path: String,
    pub sha256: Option<String>,
}

/// Where the index reads from.
pub trait Source: Sync {
    /// A page of the revision being built.
    fn page(&self, path: &str) -> Result<Vec<u8>, String>;
    /// A file of the previous revision, when it has it.
    fn previous(&self, path: &str) -> Option<Vec<u8>>;
    /// Whether the previous revision has the file at `path`.
    fn had(&self, path: &str) -> bool;
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

/// The pages a language's index adds: path, record, the record's digest.
type Added<'a> = [(&'a str, &'a Arc<Record>, &'a str)];

/// The index: every file, the state the next index starts from, how many pages it holds and
/// how many were read.
pub struct Index {
    pub files: Vec<Out>,
    pub state: State,
    pub pages: usize,
    pub read: usize,
}

/// A page read by this index: its bytes' digest and what it has to index.
struct Read {
    sha256: String,
    record: Option<Arc<Record>>,
    /// A digest of the record (see [`PageState::digest`]).
    digest: String,
}

/// The index of `pages`, `before` being the previous index's state.
pub fn write(pages: &[PageIn], before: &State, src: &dyn Source) -> Result<Index, String> {
    let usable = (before.format == state::FORMAT).then_some(before);
    let mut read = read_pages(pages, usable, &HashMap::new(), src)?;
    let custom = is_custom(pages, usable, &read);
    let before = match usable {
        Some(b) if b.custom == custom => Some(b),
        _ => {
            let rest = read_pages(pages, None, &read, src)?;
            read.extend(rest);
            None
        }
    };
    let seen = seen(pages, before, &read, custom);
    let mut by_language: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (path, s) in &seen {
        if let Some(lang) = &s.language {
            by_language.entry(lang.clone()).or_default().push(path);
        }
    }
    let runtime = assets::runtime(&by_language.keys().cloned().collect())?;
    let (mut files, mut languages, mut entry) = (Vec::new(), BTreeMap::new(), Entry::new());
    for (lang, paths) in by_language {
        let old = before.and_then(|b| b.languages.get(&lang));
        let (written, lang_state) = language(&lang, old, &paths, &read, src)?;
        entry.add(&lang, &written, assets::has_wasm(&runtime, &lang));
        files.extend(written.files);
        languages.insert(lang, lang_state);
    }
    let count = languages.values().map(|l| l.pages.len()).sum();
    files.push(Out::New {
        path: format!("{DIR}/pagefind-entry.json"),
        bytes: Arc::new(serde_json::to_vec(&entry).expect("the entry serialises")),
        immutable: false,
    });
    files.extend(runtime.into_iter().map(|(name, bytes)| Out::New {
        path: format!("{DIR}/{name}"),
        bytes,
        immutable: false,
    }));
    files.sort_by(|a, b| a.path().cmp(b.path()));
    let state = State {
        format: state::FORMAT,
        custom,
        seen,
        languages,
    };
    Ok(Index {
        files,
        state,
        pages: count,
        read: read.len(),
    })
}

/// The pages to read — new, changed, or every one without a usable state — but those in
/// `done`, read in parallel.
fn read_pages(
    pages: &[PageIn],
    before: Option<&State>,
    done: &HashMap<String, Read>,
    src: &dyn Source,
) -> Result<HashMap<String, Read>, String> {
    let wanted: Vec<&PageIn> = (pages.iter())
        .filter(|p| !done.contains_key(&p.path))
        .filter(|p| {
            let known = before.and_then(|b| b.seen.get(&p.path));
            match (known, &p.sha256) {
                (Some(s), Some(sha)) => s.sha256 != *sha,
                (Some(_), None) => false,
                (None, _) => true,
            }
        })
        .collect();
    (wanted.into_par_iter())
        .map(|p| {
            let bytes = src.page(&p.path)?;
            let sha256 = match &p.sha256 {
                Some(s) => s.clone(),
                None => fencepost_core::digest::sha256_hex(&bytes),
            };
            let record = crate::fossick(&bytes).map(Arc::new);
            let digest = record.as_ref().map(|r| digest(r)).unwrap_or_default();
            let read = Read {
                sha256,
                record,
                digest,
            };
            Ok((p.path.clone(), read))
        })
        .collect()
}

/// What a page gives the index, as a digest.
fn digest(r: &Record) -> String {
    let bytes = postcard::to_allocvec(r).expect("a record serialises");
    full_hash("", &bytes)
}

/// Whether some page of the revision marks its body.
fn is_custom(pages: &[PageIn], before: Option<&State>, read: &HashMap<String, Read>) -> bool {
    pages.iter().any(|p| match read.get(&p.path) {
        Some(r) => r.record.as_ref().is_some_and(|r| r.custom_body),
        None => before
            .and_then(|b| b.seen.get(&p.path))
            .is_some_and(|s| s.custom),
    })
}

/// Every page of the revision as this index sees it.
fn seen(
    pages: &[PageIn],
    before: Option<&State>,
    read: &HashMap<String, Read>,
    custom: bool,
) -> BTreeMap<String, Seen> {
    let mut out = BTreeMap::new();
    for p in pages {
        let s = match (read.get(&p.path), before.and_then(|b| b.seen.get(&p.path))) {
            (Some(r), _) => {
                let rec = r.record.as_ref();
                let marks = rec.is_some_and(|r| r.custom_body);
                Seen {
                    sha256: r.sha256.clone(),
                    language: rec.filter(|_| marks || !custom).map(|r| r.language.clone()),
                    custom: marks,
                }
            }
            (None, Some(s)) => s.clone(),
            (None, None) => continue,
        };
        out.insert(p.path.clone(), s);
    }
    out
}

struct Written {
    files: Vec<Out>,
    meta_hash: String,
    page_count: usize,
}

impl Entry {
    fn new() -> Entry {
        Entry {
            version: VERSION,
            languages: BTreeMap::new(),
            include_characters: Vec::new(),
        }
    }

    fn add(&mut self, lang: &str, written: &Written, wasm: bool) {
        let language = EntryLanguage {
            hash: written.meta_hash.clone(),
            wasm: wasm.then(|| lang.to_string()),
            page_count: written.page_count,
        };
        self.languages.insert(lang.to_string(), language);
    }
}

/// One language's index: the previous one's pages that are still there unchanged keep their
/// place (closing ranks), the others (`paths` read by this index) come after, by path.
fn language(
    lang: &str,
    old: Option<&LanguageState>,
    paths: &[&str],
    read: &HashMap<String, Read>,
    src: &dyn Source,
) -> Result<(Written, LanguageState), String> {
    let here: HashSet<&str> = paths.iter().copied().collect();
    let old_pages = old.map(|o| &o.pages[..]).unwrap_or_default();
    let mut to = Vec::with_capacity(old_pages.len());
    let mut kept: Vec<PageState> = Vec::new();
    let mut stayed: HashSet<&str> = HashSet::new();
    for p in old_pages {
        let same = read.get(&p.path).is_none_or(|r| r.digest == p.digest);
        let stays = here.contains(p.path.as_str()) && same;
        to.push(stays.then_some(kept.len()));
        if stays {
            kept.push(p.clone());
            stayed.insert(&p.path);
        }
    }
    let mut added: Vec<(&str, &Arc<Record>, &str)> = (paths.iter())
        .filter(|p| !stayed.contains(**p))
        .filter_map(|p| {
            let r = read.get(*p)?;
            r.record.as_ref().map(|rec| (*p, rec, r.digest.as_str()))
        })
        .collect();
    added.sort_by_key(|(p, _, _)| *p);
    let identity = kept.len() == old_pages.len();
    let mut next = old.cloned().unwrap_or_default();
    let first = kept.len();
    next.pages = kept;
    let mut files = fragment_files(lang, &added, &mut next, src);
    let grows = old.is_some_and(|o| o.ends.len() == o.chunks.len() && o.target > 0);
    let (chunk_files, ranges) = match (identity, old.is_some() && added.is_empty(), grows) {
        (true, true, _) => chunk_files(lang, None, &mut next, src)?,
        (true, false, true) => grow(lang, &added, first, &mut next, src)?,
        _ => {
            let words = words_of(old, &to, &added, first, &mut next, src)?;
            chunk_files(lang, Some(words), &mut next, src)?
        }
    };
    files.extend(chunk_files);
    let (filter_files, filters) = filter_files(lang, &next.filters, src);
    files.extend(filter_files);
    let meta = MetaIndex {
        version: VERSION.into(),
        pages: (next.pages.iter())
            .map(|p| MetaPage {
                hash: p.fragment.clone(),
                word_count: p.word_count,
                group_hash: String::new(),
            })
            .collect(),
        index_chunks: ranges,
        filters,
        sorts: Vec::new(),
        meta_fields: next.meta_fields.clone(),
    };
    let bytes = cbor(&meta);
    let meta_hash = full_hash(lang, &bytes)[..lang.len() + 1 + 7].to_string();
    files.push(data_file(
        format!("{DIR}/pagefind.{meta_hash}.pf_meta"),
        &bytes,
        src,
    ));
    let written = Written {
        files,
        meta_hash,
        page_count: next.pages.len(),
    };
    Ok((written, next))
}

/// The kept pages' fragments (the previous revision's files) and the added pages' (new,
/// named by content), the added pages appended to `next.pages`.
fn fragment_files(
    lang: &str,
    added: &Added<'_>,
    next: &mut LanguageState,
    src: &dyn Source,
) -> Vec<Out> {
    let mut files: Vec<Out> = (next.pages.iter())
        .map(|p| Out::Kept {
            path: format!("{DIR}/fragment/{}.pf_fragment", p.fragment),
        })
        .collect();
    let fresh: Vec<(String, Vec<u8>)> = (added.par_iter())
        .map(|(path, r, _)| {
            let json = fragment_json(&crate::page_url(path), r);
            (full_hash(lang, &json), json)
        })
        .collect();
    let mut taken: HashMap<String, String> = (next.pages.iter())
        .map(|p| (p.fragment.clone(), String::new()))
        .collect();
    let names: Vec<String> = (fresh.iter())
        .map(|(full, _)| short_name(lang, full, &mut taken))
        .collect();
    let written: Vec<Out> = (fresh.par_iter().zip(names.par_iter()))
        .map(|((_, json), name)| data_file(format!("{DIR}/fragment/{name}.pf_fragment"), json, src))
        .collect();
    files.extend(written);
    for (name, (path, r, digest)) in names.into_iter().zip(added) {
        next.pages.push(PageState {
            path: path.to_string(),
            digest: digest.to_string(),
            fragment: name,
            word_count: r.word_count,
        });
    }
    files
}

/// Each filter's file and its entry in the meta file.
fn filter_files(
    lang: &str,
    filters: &BTreeMap<String, BTreeMap<String, Vec<usize>>>,
    src: &dyn Source,
) -> (Vec<Out>, Vec<MetaFilter>) {
    let (mut files, mut metas, mut taken) = (Vec::new(), Vec::new(), HashMap::new());
    for (filter, values) in filters {
        let index = FilterIndex {
            filter: filter.clone(),
            values: (values.iter())
                .map(|(value, pages)| PackedValue {
                    value: value.clone(),
                    pages: pages.clone(),
                })
                .collect(),
        };
        let bytes = cbor(&index);
        let hash = short_name(lang, &full_hash(lang, &bytes), &mut taken);
        files.push(data_file(
            format!("{DIR}/filter/{hash}.pf_filter"),
            &bytes,
            src,
        ));
        metas.push(MetaFilter {
            filter: filter.clone(),
            hash,
        });
    }
    (files, metas)
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
fn data_file(path: String, bytes: &[u8], src: &dyn Source) -> Out {
    match src.had(&path) {
        true => Out::Kept { path },
        false => Out::New {
            bytes: Arc::new(gzip(bytes)),
            path,
            immutable: true,
        },
    }
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
