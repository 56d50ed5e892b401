//! A language's word chunks: grown in place when pages were only added (a chunk none of
//! their words falls in is kept without being read), else read back whole, renumbered, added
//! to and cut again.

use super::chunks;
use super::format::{cbor, full_hash, MetaChunk, PackedWord, WordIndex};
use super::postings::{self, Packed, Words};
use super::{data_file, short_name, Added, LanguageState, Out, Source, DIR};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A previous chunk's words, read back (page numbers absolute).
fn read(hash: &str, src: &dyn Source) -> Result<Vec<PackedWord>, String> {
    let path = format!("{DIR}/index/{hash}.pf_index");
    let lost = || format!("{path}: the previous revision lost it");
    postings::read_chunk(&src.previous(&path).ok_or_else(lost)?)
}

/// The added pages' postings (numbered from `first`), their new meta fields and filters put
/// into `next`.
fn pack_added<'a>(added: &'a Added<'a>, first: usize, next: &mut LanguageState) -> Vec<Packed<'a>> {
    let new_fields: BTreeSet<&String> = (added.iter())
        .flat_map(|(_, r, _)| r.meta.keys())
        .filter(|k| !next.meta_fields.contains(k))
        .collect();
    next.meta_fields.extend(new_fields.into_iter().cloned());
    for (i, (_, record, _)) in added.iter().enumerate() {
        postings::add_filters(&mut next.filters, first + i, record);
    }
    let fields = &next.meta_fields;
    (added.par_iter().enumerate())
        .map(|(i, (_, record, _))| {
            let ids: Vec<u16> = (record.meta.keys())
                .map(|k| fields.iter().position(|f| f == k).unwrap_or(0) as u16)
                .collect();
            postings::pack(first + i, record, &ids)
        })
        .collect()
}

/// The language's words: the previous chunks read back, pages renumbered by `to`, the added
/// pages' words (numbered from `first`); meta fields and filters brought along in `next`.
pub(super) fn words_of(
    old: Option<&LanguageState>,
    to: &[Option<usize>],
    added: &Added<'_>,
    first: usize,
    next: &mut LanguageState,
    src: &dyn Source,
) -> Result<Words, String> {
    let chunks = old.map(|o| &o.chunks[..]).unwrap_or_default();
    let read: Vec<Vec<PackedWord>> = (chunks.par_iter())
        .map(|chunk| read(&chunk.hash, src))
        .collect::<Result<_, String>>()?;
    let mut words: Words = (read.into_iter().flatten())
        .map(|w| (w.word.clone(), w))
        .collect();
    if !to.iter().enumerate().all(|(i, n)| *n == Some(i)) {
        postings::renumber(&mut words, to);
        postings::renumber_filters(&mut next.filters, to);
    }
    for p in pack_added(added, first, next) {
        postings::add(&mut words, p);
    }
    Ok(words)
}

/// Pages only added: each chunk one of their words falls in read back, grown (cut where it
/// passed twice the target) and written; every other chunk kept as it was, unread.
pub(super) fn grow(
    lang: &str,
    added: &Added<'_>,
    first: usize,
    next: &mut LanguageState,
    src: &dyn Source,
) -> Result<(Vec<Out>, Vec<MetaChunk>), String> {
    let packed = pack_added(added, first, next);
    let mut touched: BTreeMap<usize, Words> = BTreeMap::new();
    for page in &packed {
        for (key, _, _) in page {
            touched.entry(chunks::slot(&next.bounds, key)).or_default();
        }
    }
    let slots: Vec<usize> = touched.keys().copied().collect();
    let read: Vec<Vec<PackedWord>> = (slots.par_iter())
        .map(|&i| read(&next.chunks[i].hash, src))
        .collect::<Result<_, String>>()?;
    for (&i, words) in slots.iter().zip(read) {
        touched.insert(i, words.into_iter().map(|w| (w.word.clone(), w)).collect());
    }
    for page in packed {
        let mut by_slot: BTreeMap<usize, Packed<'_>> = BTreeMap::new();
        for entry in page {
            by_slot
                .entry(chunks::slot(&next.bounds, entry.0))
                .or_default()
                .push(entry);
        }
        for (i, entries) in by_slot {
            postings::add(touched.get_mut(&i).expect("every slot was read"), entries);
        }
    }
    let target = next.target;
    let grown: Vec<(usize, Vec<(String, Vec<PackedWord>)>)> = (touched.into_par_iter())
        .map(|(i, words)| {
            let mut words: Vec<PackedWord> = words.into_values().collect();
            words.sort_unstable_by(|a, b| a.word.cmp(&b.word));
            (i, chunks::split(words, target))
        })
        .collect();
    let mut grown: HashMap<usize, Vec<(String, Vec<PackedWord>)>> = grown.into_iter().collect();
    let mut pieces: Vec<Piece> = Vec::new();
    for i in 0..next.chunks.len() {
        match grown.remove(&i) {
            None => pieces.push(Piece::Kept(i)),
            Some(parts) => pieces.extend(parts.into_iter().map(|(b, w)| Piece::New(b, w))),
        }
    }
    Ok(assemble(lang, pieces, next, src))
}

/// A chunk of the grown index: kept (the previous one at this place), or new words (first
/// word, words).
enum Piece {
    Kept(usize),
    New(String, Vec<PackedWord>),
}

/// A piece encoded: kept, or (first word, first and last word, full hash, bytes).
enum Encoded {
    Kept(usize),
    New(String, (String, String), String, Vec<u8>),
}

/// The grown chunks' files, their ranges, and `next`'s chunks, ends and bounds set.
fn assemble(
    lang: &str,
    pieces: Vec<Piece>,
    next: &mut LanguageState,
    src: &dyn Source,
) -> (Vec<Out>, Vec<MetaChunk>) {
    let encoded: Vec<Encoded> = (pieces.into_par_iter())
        .map(|p| match p {
            Piece::Kept(i) => Encoded::Kept(i),
            Piece::New(first, words) => {
                let ends = chunks::ends(std::slice::from_ref(&words)).remove(0);
                let bytes = cbor(&WordIndex { words });
                Encoded::New(first, ends, full_hash(lang, &bytes), bytes)
            }
        })
        .collect();
    let mut taken: HashMap<String, String> = (next.chunks.iter())
        .map(|c| (c.hash.clone(), String::new()))
        .collect();
    let (mut bounds, mut ends, mut hashes, mut files) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut new = Vec::new();
    for piece in &encoded {
        match piece {
            Encoded::Kept(i) => {
                bounds.push(next.bounds[*i].clone());
                ends.push(next.ends[*i].clone());
                hashes.push(next.chunks[*i].hash.clone());
                files.push(Out::Kept {
                    path: format!("{DIR}/index/{}.pf_index", next.chunks[*i].hash),
                });
            }
            Encoded::New(first, end, full, bytes) => {
                let name = short_name(lang, full, &mut taken);
                bounds.push(first.clone());
                ends.push(end.clone());
                new.push((format!("{DIR}/index/{name}.pf_index"), bytes));
                hashes.push(name);
            }
        }
    }
    files.extend(
        new.into_par_iter()
            .map(|(path, bytes)| data_file(path, bytes, src))
            .collect::<Vec<_>>(),
    );
    let mut ranges = chunks::ranges(&ends);
    for (r, h) in ranges.iter_mut().zip(hashes) {
        r.hash = h;
    }
    next.bounds = bounds;
    next.ends = ends;
    next.chunks = ranges.clone();
    (files, ranges)
}

/// The word index's chunk files and their ranges for the meta file: the previous ones, kept,
/// when no page of the language changed (`words` none), else every word cut again.
pub(super) fn chunk_files(
    lang: &str,
    words: Option<Words>,
    next: &mut LanguageState,
    src: &dyn Source,
) -> Result<(Vec<Out>, Vec<MetaChunk>), String> {
    let Some(words) = words else {
        let files = (next.chunks.iter())
            .map(|c| Out::Kept {
                path: format!("{DIR}/index/{}.pf_index", c.hash),
            })
            .collect();
        return Ok((files, next.chunks.clone()));
    };
    let (chunked, bounds, target) = chunks::cut(words, &next.bounds);
    let ends = chunks::ends(&chunked);
    let mut ranges = chunks::ranges(&ends);
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
        .map(|((_, bytes), r)| data_file(format!("{DIR}/index/{}.pf_index", r.hash), bytes, src))
        .collect();
    next.bounds = bounds;
    next.ends = ends;
    next.target = target;
    next.chunks = ranges.clone();
    Ok((files, ranges))
}
