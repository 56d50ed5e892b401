//! Cutting the sorted word list into chunks, a query loading the one its word falls in.
//!
//! Pagefind cuts afresh at every `index_chunk_size` (20,000) units of postings, so one new
//! page shifts every later boundary and every later chunk's bytes. Here the boundaries are
//! kept from the last index while each chunk stays between a quarter and twice the target;
//! only when one leaves that range are they all cut again.
//!
//! The target ([`target`]) grows with the site so that a new page — whose words fall in nearly
//! every chunk — rewrites at most [`MOST_CHUNKS`] of them (and the deploy uploads ~20 files),
//! until a chunk would pass [`LARGEST`]; a larger site is cut at Pagefind's own size, where a
//! new page rewrites only the chunks its words are in (more files, far fewer bytes). Measured
//! in BENCHMARKS.md, "Search".

use super::format::{MetaChunk, PackedWord};
use rayon::prelude::*;
use std::collections::HashMap;

/// Pagefind's default chunk size, in units (a page of a word: its locations + 1).
const PAGEFIND_UNITS: usize = 20_000;
/// The largest target (~2 MB of CBOR; 10,000 pages of the bench corpus cut at a sixteenth
/// are ~800 KB, ~270 KB gzipped: a query loads one chunk per word).
const LARGEST: usize = 600_000;
/// The most chunks a site is cut into at the target size.
const MOST_CHUNKS: usize = 16;

fn units(w: &PackedWord) -> usize {
    let pages = w
        .pages
        .iter()
        .chain(w.additional_variants.iter().flat_map(|v| &v.pages));
    pages
        .map(|p| p.locs.len() + p.meta_locs.len() + 1)
        .sum::<usize>()
        + w.additional_variants.len()
}

/// Fresh boundaries: a new chunk every `target` units.
fn fresh(words: &[PackedWord], target: usize) -> Vec<String> {
    let mut bounds = Vec::new();
    let mut size = target;
    for w in words {
        if size >= target {
            bounds.push(w.word.clone());
            size = 0;
        }
        size += units(w);
    }
    bounds
}

/// Each chunk's size in units under `bounds`.
fn sizes(words: &[PackedWord], bounds: &[String]) -> Vec<usize> {
    let mut out = vec![0; bounds.len().max(1)];
    for w in words {
        out[slot(bounds, &w.word)] += units(w);
    }
    out
}

/// The chunk `key` falls in: the last whose first word is not after it.
pub(crate) fn slot(bounds: &[String], key: &str) -> usize {
    bounds
        .partition_point(|b| b.as_str() <= key)
        .saturating_sub(1)
}

/// The target size of a chunk for an index of `total` units: a sixteenth of the whole while
/// that stays within [`LARGEST`] (a new page rewrites at most 16 chunks), else Pagefind's own
/// size (a new page rewrites the chunks its words are in, a small part of a large index).
pub(crate) fn target(total: usize) -> usize {
    match total.div_ceil(MOST_CHUNKS) {
        t if t <= LARGEST => t.max(PAGEFIND_UNITS),
        _ => PAGEFIND_UNITS,
    }
}

/// The words cut into chunks (page numbers delta-coded within each word, as stored), the
/// boundaries used, and the target size.
pub(crate) fn cut(
    words: HashMap<String, PackedWord>,
    before: &[String],
) -> (Vec<Vec<PackedWord>>, Vec<String>, usize) {
    let mut words: Vec<PackedWord> = words.into_values().collect();
    words.par_sort_unstable_by(|a, b| a.word.cmp(&b.word));
    let total: usize = words.iter().map(units).sum();
    let target = target(total);
    let sized = sizes(&words, before);
    let last = sized.len() - 1;
    let keep = !before.is_empty()
        && (sized.iter().enumerate())
            .all(|(i, &s)| s <= 2 * target && (i == last || s >= target / 4));
    let mut bounds = match keep {
        true => before.to_vec(),
        false => fresh(&words, target),
    };
    if bounds.is_empty() {
        bounds.push(String::new());
    }
    let mut chunks: Vec<Vec<PackedWord>> = vec![Vec::new(); bounds.len()];
    for w in words {
        let at = slot(&bounds, &w.word);
        chunks[at].push(delta(w));
    }
    let (chunks, bounds): (Vec<_>, Vec<_>) = chunks
        .into_iter()
        .zip(bounds)
        .filter(|(c, _)| !c.is_empty())
        .unzip();
    (chunks, bounds, target)
}

/// One chunk's words (sorted, page numbers absolute) grown by new pages: as it is, or cut
/// where it grew past twice `target`; each piece delta-coded, with its first word.
pub(crate) fn split(words: Vec<PackedWord>, target: usize) -> Vec<(String, Vec<PackedWord>)> {
    let total: usize = words.iter().map(units).sum();
    let bounds = match total > 2 * target {
        true => fresh(&words, target),
        false => vec![words.first().map(|w| w.word.clone()).unwrap_or_default()],
    };
    let mut pieces: Vec<(String, Vec<PackedWord>)> =
        bounds.into_iter().map(|b| (b, Vec::new())).collect();
    let firsts: Vec<String> = pieces.iter().map(|(b, _)| b.clone()).collect();
    for w in words {
        let at = slot(&firsts, &w.word);
        pieces[at].1.push(delta(w));
    }
    pieces
}

/// Page numbers as differences from the previous page's in the word's list.
fn delta(mut w: PackedWord) -> PackedWord {
    let lists =
        std::iter::once(&mut w.pages).chain(w.additional_variants.iter_mut().map(|v| &mut v.pages));
    for pages in lists {
        let mut last = 0;
        for p in pages.iter_mut() {
            let n = p.page_number;
            p.page_number = n - last;
            last = n;
        }
    }
    w
}

/// Each chunk's first and last word.
pub(crate) fn ends(chunks: &[Vec<PackedWord>]) -> Vec<(String, String)> {
    (chunks.iter())
        .map(|c| {
            let word = |w: Option<&PackedWord>| w.map(|w| w.word.clone()).unwrap_or_default();
            (word(c.first()), word(c.last()))
        })
        .collect()
}

/// Each chunk's range in the meta file, as Pagefind writes it: first and last word (`ends`),
/// shortened between neighbours to the prefixes that tell them apart.
pub(crate) fn ranges(ends: &[(String, String)]) -> Vec<MetaChunk> {
    let mut out: Vec<MetaChunk> = (ends.iter())
        .map(|(first, last)| MetaChunk {
            from: first.clone(),
            to: last.clone(),
            hash: String::new(),
        })
        .collect();
    for i in 1..out.len() {
        let (a, b) = (out[i - 1].to.clone(), out[i].from.clone());
        let common = b.chars().zip(a.chars()).take_while(|(x, y)| x == y).count();
        let a_prefix: String = a.chars().take(common + 1).collect();
        let b_prefix: String = b.chars().take(common + 1).collect();
        if a_prefix >= out[i - 1].from {
            out[i - 1].to = a_prefix;
        }
        out[i].from = b_prefix;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pagefind::format::PackedPage;

    fn word(key: &str, pages: &[usize]) -> PackedWord {
        PackedWord {
            word: key.into(),
            pages: (pages.iter())
                .map(|&n| PackedPage {
                    page_number: n,
                    locs: vec![0; 10],
                    meta_locs: vec![],
                })
                .collect(),
            additional_variants: vec![],
        }
    }

    /// Guards: a page added to a few words leaves the boundaries, and so every chunk it has
    /// no word in, as they were.
    #[test]
    fn boundaries_hold_while_chunks_stay_in_range() {
        let mut words = HashMap::new();
        for i in 0..4000 {
            let key = format!("w{i:05}");
            words.insert(key.clone(), word(&key, &(0..10).collect::<Vec<_>>()));
        }
        let (first, bounds, _) = cut(words.clone(), &[]);
        assert!(
            first.len() > 1 && first.len() <= MOST_CHUNKS,
            "{}",
            first.len()
        );
        words
            .get_mut("w00001")
            .unwrap()
            .pages
            .push(word("", &[10]).pages.remove(0));
        let (second, again, _) = cut(words, &bounds);
        assert_eq!(bounds, again);
        let changed = (first.iter().zip(&second))
            .filter(|(a, b)| format!("{a:?}") != format!("{b:?}"))
            .count();
        assert_eq!(changed, 1);
        assert_eq!(
            second[0][1].pages.last().unwrap().page_number,
            1,
            "delta-coded"
        );
    }
}
