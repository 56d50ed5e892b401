//! Pagefind 1.6's files, byte for byte as its writer lays them out and its WebAssembly
//! decodes them (`pagefind/src/index/index_*.rs`, `pagefind_web/src/{metadata,index}.rs`):
//! CBOR arrays of fields in declaration order, gzipped behind the `pagefind_dcd` signature,
//! named by the SHA-1 of their uncompressed bytes.

use flate2::write::GzEncoder;
use flate2::Compression;
use minicbor::{Decode, Encode};
use serde::Serialize;
use sha1::{Digest, Sha1};
use std::collections::BTreeMap;
use std::io::Write;

/// The version written into the entry and meta files: the crate's whose runtime is served.
pub(crate) const VERSION: &str = "1.6.0";

/// `pagefind.<lang>_<hash>.pf_meta`: loaded first, on a search's start.
#[derive(Encode)]
pub(crate) struct MetaIndex {
    #[n(0)]
    pub version: String,
    #[n(1)]
    pub pages: Vec<MetaPage>,
    #[n(2)]
    pub index_chunks: Vec<MetaChunk>,
    #[n(3)]
    pub filters: Vec<MetaFilter>,
    #[n(4)]
    pub sorts: Vec<MetaSort>,
    #[n(5)]
    pub meta_fields: Vec<String>,
}

#[derive(Encode)]
pub(crate) struct MetaPage {
    #[n(0)]
    pub hash: String,
    #[n(1)]
    pub word_count: u32,
    #[n(2)]
    pub group_hash: String,
}

/// The chunk to load for a word sorting between `from` and `to`.
#[derive(Encode, Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetaChunk {
    #[n(0)]
    pub from: String,
    #[n(1)]
    pub to: String,
    #[n(2)]
    pub hash: String,
}

#[derive(Encode)]
pub(crate) struct MetaFilter {
    #[n(0)]
    pub filter: String,
    #[n(1)]
    pub hash: String,
}

#[derive(Encode)]
pub(crate) struct MetaSort {
    #[n(0)]
    pub sort: String,
    #[n(1)]
    pub pages: Vec<usize>,
}

/// `index/<lang>_<hash>.pf_index`: a range of words, each with the pages it is on.
#[derive(Encode, Decode)]
pub(crate) struct WordIndex {
    #[n(0)]
    pub words: Vec<PackedWord>,
}

#[derive(Encode, Decode, Clone, Debug)]
pub(crate) struct PackedWord {
    #[n(0)]
    pub word: String,
    #[n(1)]
    pub pages: Vec<PackedPage>,
    #[n(2)]
    pub additional_variants: Vec<PackedVariant>,
}

#[derive(Encode, Decode, Clone, Debug)]
pub(crate) struct PackedVariant {
    #[n(0)]
    pub form: String,
    #[n(1)]
    pub pages: Vec<PackedPage>,
}

/// A word's locations on one page: page numbers delta-coded within a word's list, positions
/// delta-coded within a weight, a weight change a negative marker followed by an absolute
/// position.
#[derive(Encode, Decode, Clone, Debug)]
pub(crate) struct PackedPage {
    #[n(0)]
    pub page_number: usize,
    #[n(1)]
    pub locs: Vec<i32>,
    #[n(2)]
    pub meta_locs: Vec<i32>,
}

/// `filter/<lang>_<hash>.pf_filter`: one filter's values, each with its pages.
#[derive(Encode)]
pub(crate) struct FilterIndex {
    #[n(0)]
    pub filter: String,
    #[n(1)]
    pub values: Vec<PackedValue>,
}

#[derive(Encode)]
pub(crate) struct PackedValue {
    #[n(0)]
    pub value: String,
    #[n(1)]
    pub pages: Vec<usize>,
}

/// `fragment/<lang>_<hash>.pf_fragment`: what a result shows (JSON).
#[derive(Serialize)]
pub(crate) struct Fragment<'a> {
    pub url: &'a str,
    pub content: &'a str,
    pub word_count: u32,
    pub filters: &'a BTreeMap<String, Vec<String>>,
    pub meta: &'a BTreeMap<String, String>,
    pub anchors: Vec<FragmentAnchor<'a>>,
}

#[derive(Serialize)]
pub(crate) struct FragmentAnchor<'a> {
    pub element: &'a str,
    pub id: &'a str,
    pub text: &'a str,
    pub location: u32,
}

/// `pagefind-entry.json`: the languages, each with its meta file.
#[derive(Serialize)]
pub(crate) struct Entry {
    pub version: &'static str,
    pub languages: BTreeMap<String, EntryLanguage>,
    pub include_characters: Vec<char>,
}

#[derive(Serialize)]
pub(crate) struct EntryLanguage {
    pub hash: String,
    pub wasm: Option<String>,
    pub page_count: usize,
}

pub(crate) fn cbor<T: Encode<()>>(value: &T) -> Vec<u8> {
    minicbor::to_vec(value).expect("encoding to memory cannot fail")
}

/// `<lang>_` and the SHA-1 of `bytes` in hex (Pagefind's `full_hash`; names are its first
/// seven digits, more on a collision).
pub(crate) fn full_hash(lang: &str, bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    let mut out = format!("{lang}_");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// zlib's level for the data files: 4 — at 10,000 pages 4 % more bytes than zlib's default 6
/// for a third less time, every chunk being compressed again after each new page (Pagefind
/// uses 9). Measured in BENCHMARKS.md, "Search".
const GZIP_LEVEL: u32 = 4;

/// `bytes` gzipped behind Pagefind's signature (its script checks for the signature to
/// know whether the server already took the gzip off).
pub(crate) fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = GzEncoder::new(
        Vec::with_capacity(bytes.len() / 3 + 64),
        Compression::new(GZIP_LEVEL),
    );
    gz.write_all(b"pagefind_dcd").expect("to memory");
    gz.write_all(bytes).expect("to memory");
    gz.finish().expect("to memory")
}

/// A data file's bytes, un-gzipped and without the signature.
pub(crate) fn gunzip(gz: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut out = Vec::with_capacity(gz.len() * 3);
    let mut d = flate2::read::GzDecoder::new(gz);
    d.read_to_end(&mut out)
        .map_err(|e| format!("a previous index file: {e}"))?;
    match out.starts_with(b"pagefind_dcd") {
        true => Ok(out.split_off(12)),
        false => Err("a previous index file without Pagefind's signature".into()),
    }
}

/// Positions as [`PackedPage::locs`]: ordinary-weight (24, coded 25 as Pagefind's default)
/// first, then by weight, delta-coded within a weight.
pub(crate) fn pack_locs(locs: &[(u8, u32)]) -> Vec<i32> {
    let mut sorted: Vec<(u8, u32)> = locs.to_vec();
    sorted.sort_by_key(|&(w, p)| (if w == 25 { 0 } else { w }, p));
    let mut out = Vec::with_capacity(sorted.len() + 2);
    let (mut current, mut last) = (25u8, 0u32);
    for (weight, position) in sorted {
        if weight != current {
            out.push(-(weight as i32) - 1);
            out.push(position as i32);
            current = weight;
        } else {
            out.push((position - last) as i32);
        }
        last = position;
    }
    out
}

/// Meta positions as [`PackedPage::meta_locs`]: by field, a field change a negative marker,
/// positions delta-coded within a field.
pub(crate) fn pack_meta(meta: &[(u16, u32)]) -> Vec<i32> {
    let mut sorted = meta.to_vec();
    sorted.sort();
    let mut out = Vec::with_capacity(sorted.len() + 2);
    let (mut current, mut last) = (None, 0u32);
    for (field, position) in sorted {
        if current != Some(field) {
            out.push(-(field as i32) - 1);
            current = Some(field);
            last = 0;
        }
        out.push((position - last) as i32);
        last = position;
    }
    out
}
