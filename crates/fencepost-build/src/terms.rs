//! Taxonomy terms, derived from the public pages of one snapshot and nothing else: a term
//! exists exactly while one of its items is public, so a tag used only by an embargoed,
//! withdrawn or expired item has no page, no index entry, no count and no feed. Pure.

use super::page::PageInput;
use fencepost_config::collections::Collections;
use fencepost_config::taxonomies::term_slug;
use std::collections::BTreeMap;

/// One term of a taxonomy.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    pub slug: String,
    /// As the earliest-published item that has it spells it.
    pub name: String,
    /// Its items, as indices into the plan's pages, oldest publication first.
    pub entries: Vec<u32>,
}

/// Every taxonomy's terms (indexed like [`Collections::taxonomies`]), each sorted by slug.
/// `by_pub`: every page, oldest publication first.
pub fn collect(pages: &[PageInput], collections: &Collections, by_pub: &[u32]) -> Vec<Vec<Term>> {
    let n = collections.taxonomies.len();
    let mut out: Vec<BTreeMap<String, Term>> = vec![BTreeMap::new(); n];
    if n == 0 {
        return Vec::new();
    }
    // Which taxonomies (by index) each collection carries.
    let carried: Vec<Vec<(usize, &str)>> = collections
        .list
        .iter()
        .map(|c| {
            c.taxonomies
                .iter()
                .filter_map(|t| {
                    collections
                        .taxonomy_index(t, &c.lang)
                        .map(|i| (i, t.as_str()))
                })
                .collect()
        })
        .collect();
    // Each page's terms parsed and slugged in parallel (slugging is most of the work), then
    // gathered in publication order.
    use rayon::prelude::*;
    let found: Vec<Vec<(usize, String, String)>> = pages
        .par_iter()
        .map(|p| {
            let carried = &carried[p.coll];
            if carried.is_empty() || p.view.terms.is_empty() {
                return Vec::new();
            }
            let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&p.view.terms) else {
                return Vec::new();
            };
            let mut out = Vec::new();
            for &(ti, tname) in carried {
                for name in m
                    .get(tname)
                    .and_then(|v| v.as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str())
                {
                    let slug = term_slug(name);
                    if !slug.is_empty() {
                        out.push((ti, name.to_string(), slug));
                    }
                }
            }
            out
        })
        .collect();
    for &i in by_pub {
        let p = &pages[i as usize];
        for (ti, name, slug) in &found[i as usize] {
            let t = out[*ti].entry(slug.clone()).or_insert_with(|| Term {
                slug: slug.clone(),
                name: name.clone(),
                entries: Vec::new(),
            });
            if t.name != *name {
                tracing::warn!(
                    taxonomy = %collections.taxonomies[*ti].name,
                    term = %t.name,
                    other = %name,
                    item = %format!("{}/{}", p.view.collection, p.view.id.text()),
                    "a term spelt two ways: the earlier item's spelling is shown"
                );
            }
            if t.entries.last() != Some(&i) {
                t.entries.push(i);
            }
        }
    }
    out.into_iter().map(|m| m.into_values().collect()).collect()
}
