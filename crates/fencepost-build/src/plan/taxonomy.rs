//! The taxonomies' files: per term its pages (numbered from the oldest at `url + "page/N/"`,
//! so a new item changes only the newest of them, plus the landing page at `url` with the
//! newest entries) and its feed; per taxonomy its index of terms with their counts, and a
//! sitemap of the term pages. Built from [`super::super::terms::collect`], which sees public
//! pages only.

use super::keys::{key, term_key};
use super::{feeds, planned, FeedOf, Inputs, Job, Planned, SITEMAP_CHUNK};
use crate::terms;
use crate::view::{TermLink, TermView};
use fencepost_config::taxonomies::Taxonomy;
use fencepost_output::manifest::CacheClass;
use fencepost_site::content::claims::url_to_path;
use rayon::prelude::*;

pub(super) fn plan_taxonomies(
    inp: &Inputs<'_>,
    all_by_pub: &[u32],
    out: &mut Vec<Planned>,
    sitemap_files: &mut Vec<String>,
) {
    if inp.collections.taxonomies.is_empty() {
        return;
    }
    let all = terms::collect(inp.pages, inp.collections, all_by_pub);
    for (ti, (tax, terms)) in inp.collections.taxonomies.iter().zip(&all).enumerate() {
        let mut sitemap: Vec<(String, Option<String>)> = Vec::new();
        let pages: Vec<Vec<Planned>> = terms
            .par_iter()
            .map(|t| term_pages(inp, ti, tax, t))
            .collect();
        for (t, files) in terms.iter().zip(pages) {
            sitemap.extend(files.iter().map(|p| match &p.job {
                Job::Term(v) => (v.page_url.clone(), None),
                _ => unreachable!("term pages only"),
            }));
            out.extend(files);
            if tax.feed {
                let url = format!("{}atom.xml", tax.term_url(&t.slug));
                let of = FeedOf::Term(ti, t.name.clone(), tax.term_url(&t.slug));
                feeds(inp, of, url, &t.entries, out);
            }
        }
        if let Some(index_url) = &tax.index_url {
            out.push(terms_index(inp, ti, tax, index_url, terms));
            if !terms.is_empty() {
                sitemap.push((index_url.clone(), None));
            }
        }
        sitemap.sort();
        for (chunk, urls) in sitemap.chunks(SITEMAP_CHUNK as usize).enumerate() {
            let path = format!("sitemaps/taxonomy-{}-{chunk}.xml", tax.name);
            let k = key(inp.generated_fingerprint, "sitemap", &urls, "");
            sitemap_files.push(path.clone());
            let job = Job::Sitemap(urls.to_vec());
            out.push(planned(path, job, CacheClass::Content, k));
        }
    }
}

/// One term's pages: numbered from the oldest (`page/N/`), and the landing page at its URL
/// with the newest entries.
fn term_pages(inp: &Inputs<'_>, ti: usize, tax: &Taxonomy, t: &terms::Term) -> Vec<Planned> {
    let url = tax.term_url(&t.slug);
    let chunks: Vec<&[u32]> = t.entries.chunks(tax.page_size).collect();
    let n = chunks.len();
    let page_url = |k: usize| tax.term_page_url(&t.slug, k);
    let view = |page_url: String, entries: Vec<u32>, number, prev_url, next_url| TermView {
        taxonomy: ti,
        name: t.name.clone(),
        url: url.clone(),
        page_url,
        entries,
        number,
        prev_url,
        next_url,
    };
    let mut views: Vec<TermView> = chunks
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let (prev, next) = (
                (i > 0).then(|| page_url(i)),
                (i + 1 < n).then(|| page_url(i + 2)),
            );
            view(page_url(i + 1), chunk.to_vec(), i + 1, prev, next)
        })
        .collect();
    let newest = t
        .entries
        .iter()
        .rev()
        .take(tax.page_size)
        .copied()
        .collect();
    views.push(view(
        url.clone(),
        newest,
        n,
        (n > 1).then(|| page_url(n - 1)),
        None,
    ));
    views
        .into_iter()
        .map(|v| {
            let k = term_key(inp.render_fingerprint, &v, inp.pages);
            planned(
                url_to_path(&v.page_url),
                Job::Term(Box::new(v)),
                CacheClass::Content,
                k,
            )
        })
        .collect()
}

/// A taxonomy's index of terms, with their counts.
fn terms_index(
    inp: &Inputs<'_>,
    ti: usize,
    tax: &Taxonomy,
    index_url: &str,
    terms: &[terms::Term],
) -> Planned {
    let links: Vec<TermLink> = terms
        .iter()
        .map(|t| TermLink {
            name: t.name.clone(),
            url: tax.term_url(&t.slug),
            count: t.entries.len(),
        })
        .collect();
    let k = key(
        inp.render_fingerprint,
        "terms",
        &(ti, index_url, &links),
        "",
    );
    planned(
        url_to_path(index_url),
        Job::Terms(ti, links),
        CacheClass::Content,
        k,
    )
}
