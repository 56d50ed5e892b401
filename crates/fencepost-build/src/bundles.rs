//! The files of page bundles (see `content/bundle.rs`), copied beside their pages: only for
//! pages in this revision (so an embargoed bundle's image is nowhere before its instant), and
//! only when the file still has the bytes the ledger recorded for the page. A file edited
//! since it was published is left out and named (`left_out`), never shipped unpublished.
//!
//! A file is checked by its digest, known by its stat where the build read it before
//! (`digests.rs`), and carried as its path (`CopySource::File`): a site of photos is neither
//! read whole nor held in memory by each build. Its bytes are read where they are needed — a
//! new revision's copy, a resize — and checked against the digest again there.

mod digests;

use super::page::PageInput;
use super::plan::{CopySource, ResourceInput};
use super::report::LeftOut;
use fencepost_config::collections::Collections;
use fencepost_site::content::bundle;
use fencepost_site::content::claims::url_to_path;
use std::path::{Path, PathBuf};

/// Reads the resources of every page of `pages` that has some, checked against the ledger.
pub(super) fn read(
    site: &fencepost_site::Site,
    pages: &[PageInput],
    left_out: &mut Vec<LeftOut>,
) -> Vec<ResourceInput> {
    let state = site.state_dir();
    let mut digests = digests::Digests::load(&state);
    let out = read_with(&site.root, &mut digests, &site.collections, pages, left_out);
    digests.save(&state);
    out
}

fn read_with(
    root: &Path,
    digests: &mut digests::Digests,
    collections: &Collections,
    pages: &[PageInput],
    left_out: &mut Vec<LeftOut>,
) -> Vec<ResourceInput> {
    let mut out = Vec::new();
    for p in pages {
        let coll = &collections.list[p.coll];
        if !p.view.data.contains("\"resources\"") || coll.fields.contains_key("resources") {
            continue;
        }
        let of = format!("{}/{}", p.view.collection, p.view.id.text());
        let page_path = url_to_path(&p.view.url);
        let dir = page_path.rsplit_once('/').map_or("", |(d, _)| d);
        for r in bundle::recorded(&p.view.data) {
            let path = match dir {
                "" => r.name.clone(),
                d => format!("{d}/{}", r.name),
            };
            // A name is where the file goes beside its page (`img/cover.png`): nothing
            // else, whatever a ledger's data says.
            let plain = Path::new(&r.name)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
            let got = match plain && !r.name.is_empty() {
                true => checked(root, digests, &r),
                false => Err(format!("{:?} is not a path beside the page", r.name)),
            };
            match got {
                Ok(file) => out.push(ResourceInput {
                    of: of.clone(),
                    path,
                    source: CopySource::File(file),
                    sha256: r.sha256,
                }),
                Err(why) => {
                    tracing::error!(what = %of, path = %path, why = %why, "left out of this revision");
                    left_out.push(LeftOut {
                        what: format!("a file of the bundle {of}"),
                        path: Some(path),
                        why,
                    });
                }
            }
        }
    }
    out
}

/// The resource's file, when it still has the bytes recorded.
fn checked(
    root: &Path,
    digests: &mut digests::Digests,
    r: &bundle::Resource,
) -> Result<PathBuf, String> {
    let rel = Path::new(&r.path);
    let inside = rel.starts_with("content")
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !inside {
        return Err(format!("{} is not a file under content/", r.path));
    }
    let sha = digests.sha256(root, &r.path).map_err(|e| {
        format!(
            "{} cannot be read ({e}): restore it, or run `fencepost publish`",
            r.path
        )
    })?;
    if sha != r.sha256 {
        return Err(format!(
            "{} has changed since it was published: run `fencepost publish` to publish the change",
            r.path
        ));
    }
    Ok(root.join(rel))
}
