//! Files planned beside item pages, from what each page's data records: a redirect page at
//! each of its aliases, and the files of its page bundle.

use super::{key, planned, CacheClass, Inputs, Job, Planned};
use fencepost_site::content::claims::url_to_path;

/// A redirect page at each alias of each public item (a collection that declared a field of
/// its own named `aliases` has none: see `config/names.rs`).
pub(super) fn aliases(inp: &Inputs<'_>, out: &mut Vec<Planned>) {
    let g = inp.generated_fingerprint;
    for p in inp.pages {
        if !p.view.data.contains("\"aliases\"")
            || inp.collections.list[p.coll].fields.contains_key("aliases")
        {
            continue;
        }
        for alias in fencepost_site::content::aliases_in(&p.view.data) {
            let target = p.view.url.clone();
            let k = key(g, "alias", &(&alias, &target), "");
            let job = Job::Alias { target };
            out.push(planned(url_to_path(&alias), job, CacheClass::Redirect, k));
        }
    }
}

/// Each public item's JSON (the bytes the log vouches for), when the site keeps a log, the
/// item's collection commits before it reveals and the ledger holds the item's JSON; keyed by
/// the JSON's digest, so an unchanged one is kept.
pub(super) fn item_json(inp: &Inputs<'_>, out: &mut Vec<Planned>) {
    if !inp.transparency {
        return;
    }
    for p in inp.pages {
        let Some(digest) = &p.json_digest else {
            continue;
        };
        if !inp.collections.list[p.coll].commit_before_reveal {
            continue;
        }
        let item = format!("{}/{}", p.view.collection, p.view.id.text());
        let path = crate::well_known::item_json_path(&item);
        let job = Job::ItemJson {
            row: p.view.row,
            item,
            json: None,
        };
        out.push(planned(
            path,
            job,
            CacheClass::Content,
            format!("tlog-json:{digest}"),
        ));
    }
}

/// The files of the page bundles, each copied at its path beside its page.
pub(super) fn resources(inp: &Inputs<'_>, out: &mut Vec<Planned>) {
    for r in inp.resources {
        let job = Job::Resource {
            of: r.of.clone(),
            source: r.source.clone(),
            sha256: r.sha256.clone(),
        };
        let k = format!("copy:{}", r.sha256);
        out.push(planned(r.path.clone(), job, CacheClass::Asset, k));
    }
}
