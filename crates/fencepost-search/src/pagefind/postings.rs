//! The word index of one language in memory: every word with the pages it is on (absolute
//! page numbers, in order). Made from the previous index's chunk files (read back, page
//! numbers un-delta'd), pages dropped and renumbered, new pages' words added.

use super::format::{
    gunzip, pack_locs, pack_meta, PackedPage, PackedVariant, PackedWord, WordIndex,
};
use crate::Record;
use std::collections::{BTreeMap, HashMap};

/// By word; sorted only when cut into chunks.
pub(crate) type Words = HashMap<String, PackedWord>;

/// The words of a previous chunk file's bytes (gzipped, as written), page numbers absolute.
pub(crate) fn read_chunk(gz: &[u8]) -> Result<Vec<PackedWord>, String> {
    let bytes = gunzip(gz)?;
    let index: WordIndex =
        minicbor::decode(&bytes).map_err(|e| format!("a previous index chunk: {e}"))?;
    let mut words = index.words;
    for w in words.iter_mut() {
        let lists = std::iter::once(&mut w.pages)
            .chain(w.additional_variants.iter_mut().map(|v| &mut v.pages));
        for pages in lists {
            let mut at = 0;
            for p in pages.iter_mut() {
                at += p.page_number;
                p.page_number = at;
            }
        }
    }
    Ok(words)
}

/// Every page renumbered by `to` (old number → new, none: dropped); words left on no page
/// dropped. `to` keeps the order of the pages it keeps.
pub(crate) fn renumber(words: &mut Words, to: &[Option<usize>]) {
    let keep = |pages: &mut Vec<PackedPage>| {
        pages.retain_mut(|p| match to.get(p.page_number).copied().flatten() {
            Some(n) => {
                p.page_number = n;
                true
            }
            None => false,
        })
    };
    words.retain(|_, w| {
        keep(&mut w.pages);
        w.additional_variants.retain_mut(|v| {
            keep(&mut v.pages);
            !v.pages.is_empty()
        });
        !w.pages.is_empty() || !w.additional_variants.is_empty()
    });
}

/// A page's postings, packed: (word, its entry for the page, its variants' entries).
pub(crate) type Packed<'a> = Vec<(&'a str, Option<PackedPage>, Vec<(&'a str, PackedPage)>)>;

/// `record`'s words as page `number`'s postings; `fields` maps the record's meta fields (in
/// key order) to the index's field ids. (Pages are packed in parallel, added in order.)
pub(crate) fn pack<'a>(number: usize, record: &'a Record, fields: &[u16]) -> Packed<'a> {
    let mut out = Vec::with_capacity(record.words.len());
    for w in &record.words {
        let meta: Vec<(u16, u32)> = w
            .meta
            .iter()
            .map(|&(f, p)| (fields[f as usize], p))
            .collect();
        let page = (!w.locs.is_empty() || !meta.is_empty()).then(|| PackedPage {
            page_number: number,
            locs: pack_locs(&w.locs),
            meta_locs: pack_meta(&meta),
        });
        let variants = (w.variants.iter())
            .map(|(form, locs)| {
                let page = PackedPage {
                    page_number: number,
                    locs: pack_locs(locs),
                    meta_locs: Vec::new(),
                };
                (form.as_str(), page)
            })
            .collect();
        out.push((w.key.as_str(), page, variants));
    }
    out
}

/// A page's packed postings added (after every page already there).
pub(crate) fn add(words: &mut Words, packed: Packed<'_>) {
    for (key, page, variants) in packed {
        let word = match words.get_mut(key) {
            Some(w) => w,
            None => words.entry(key.to_string()).or_insert_with(|| PackedWord {
                word: key.to_string(),
                pages: Vec::new(),
                additional_variants: Vec::new(),
            }),
        };
        word.pages.extend(page);
        for (form, page) in variants {
            match word.additional_variants.iter_mut().find(|v| v.form == form) {
                Some(v) => v.pages.push(page),
                None => word.additional_variants.push(PackedVariant {
                    form: form.to_string(),
                    pages: vec![page],
                }),
            }
        }
    }
}

/// Filters renumbered by `to`, then `record`'s added as page `number`.
pub(crate) fn renumber_filters(
    filters: &mut BTreeMap<String, BTreeMap<String, Vec<usize>>>,
    to: &[Option<usize>],
) {
    for values in filters.values_mut() {
        for pages in values.values_mut() {
            *pages = pages
                .iter()
                .filter_map(|&p| to.get(p).copied().flatten())
                .collect();
        }
        values.retain(|_, pages| !pages.is_empty());
    }
    filters.retain(|_, values| !values.is_empty());
}

pub(crate) fn add_filters(
    filters: &mut BTreeMap<String, BTreeMap<String, Vec<usize>>>,
    number: usize,
    record: &Record,
) {
    for (filter, values) in &record.filters {
        for value in values {
            let pages = filters
                .entry(filter.clone())
                .or_default()
                .entry(value.clone())
                .or_default();
            if pages.last() != Some(&number) {
                pages.push(number);
            }
        }
    }
}
