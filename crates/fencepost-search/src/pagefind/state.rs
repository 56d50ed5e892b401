//! What an index leaves for the next one (kept beside the revision, never served): which page
//! had which bytes, and per language the pages by number with their fragment's name, the
//! chunks' names and boundaries, the meta fields and the filters. Not the pages' words — those
//! are in the chunk files themselves, which the next index reads back — so the state stays a
//! few hundred bytes a page and a new page costs its own reading, not every page's.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped when the state's meaning changes: a state of another format is not used (the index
/// is made afresh, every page read).
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub format: u32,
    /// Some page marks its body (`data-pagefind-body`): only such pages are indexed.
    pub custom: bool,
    /// Every page read, by path.
    pub seen: BTreeMap<String, Seen>,
    pub languages: BTreeMap<String, LanguageState>,
}

/// A page as last read.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Seen {
    pub sha256: String,
    /// The language it is indexed in; none: nothing to index (or left out by the body rule).
    pub language: Option<String>,
    /// It marks its body.
    pub custom: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LanguageState {
    /// The indexed pages by page number.
    pub pages: Vec<PageState>,
    /// Each chunk's first word (where it is cut), and its range and file's name in the meta
    /// file, in order.
    pub bounds: Vec<String>,
    pub chunks: Vec<Chunk>,
    /// Each chunk's first and last word (its range before shortening), and the target size
    /// the chunks were cut at: a chunk no new page's word falls in is kept without being read.
    #[serde(default)]
    pub ends: Vec<(String, String)>,
    #[serde(default)]
    pub target: usize,
    /// The meta fields, in the order their ids number them.
    pub meta_fields: Vec<String>,
    /// Filter → value → page numbers.
    pub filters: BTreeMap<String, BTreeMap<String, Vec<usize>>>,
}

/// A chunk as the meta file names it.
pub type Chunk = super::format::MetaChunk;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PageState {
    pub path: String,
    /// A digest of what the page gives the index (its record): a page whose bytes changed
    /// but not its record (a neighbour's link outside its indexed body) keeps its place.
    #[serde(default)]
    pub digest: String,
    pub fragment: String,
    pub word_count: u32,
}
