//! Early links from a spare: the staging folder is the tree of a revision `gc` set aside
//! (`fencepost_output::revision::set_aside_as_spare`) instead of an empty folder, and it is
//! made to hold the previous revision's files by changing only what differs between the two
//! indexes — a file whose SHA-256 is the same stays as it is, one that differs is replaced by
//! a link to the previous revision's, one the previous revision lacks goes (and the folders
//! that leaves empty), one it adds is linked. After one publish that is a dozen files, where
//! an empty folder needs every folder made and every file linked (at 100,000 items ~200,000
//! calls, ~0.8 s of CPU on two cores: the link floor itself).
//!
//! The spare is trusted as the previous revision is: fencepost never writes into a revision
//! folder, so the files its index lists are there with the bytes it says (`fencepost verify`
//! checks a revision against its manifest). Anything that does not fit — no index, one that
//! cannot be read or is out of order, a path that would leave the folder — and the folder is
//! emptied and linked as if there had been no spare.
//!
//! Rejected: checking every kept file's existence and size (a `stat` each: ~0.13 s of CPU at
//! 100,000 files, for what only a hand in `public/revisions/` could break, and would break in
//! the live revision the same way); hashing the kept files (reading every byte of the site).

use super::super::plan::safe_rel;
use super::{Between, Prelinked};
use fencepost_output::index;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::io;
use std::path::Path;

impl Prelinked {
    /// Makes `staging` — a spare, holding the tree of the revision it was — hold `prev`'s
    /// files as [`Prelinked::link`] links them into an empty folder (see the module doc).
    /// An error: the folder holds files no one can account for, and must not become a
    /// revision.
    pub(in super::super) fn patch(prev: &Path, staging: &Path) -> io::Result<Prelinked> {
        if let Some(done) = patched(prev, staging)? {
            return Ok(done);
        }
        tracing::debug!(folder = %staging.display(), "spare not usable: linked from empty");
        std::fs::remove_dir_all(staging)?;
        std::fs::create_dir(staging)?;
        Ok(Prelinked::link(prev, staging))
    }
}

/// `None`: the spare does not fit (its files are left as they are, for the caller to clear).
fn patched(prev: &Path, staging: &Path) -> io::Result<Option<Prelinked>> {
    let (Ok(Some(was)), Ok(Some(now))) = (index::read(staging), index::read(prev)) else {
        return Ok(None);
    };
    let (Ok(was), Ok(mut now)) = (index::hashes_in(&was), index::hashes_in(&now)) else {
        return Ok(None);
    };
    let sorted = |v: &[(Cow<str>, &[u8])]| v.is_sorted_by(|a, b| a.0.as_bytes() < b.0.as_bytes());
    if !sorted(&was) || !sorted(&now) || !was.iter().all(|(p, _)| safe_rel(p)) {
        return Ok(None);
    }
    // As `link`: a path of the previous index that would leave the folder is never linked.
    now.retain(|(p, _)| safe_rel(p));
    let Some(between) = Between::open(prev, staging) else {
        return Ok(None);
    };
    // The spare's own files are no files of the new revision (the build writes its own),
    // wherever the release that wrote the spare kept them.
    for own in fencepost_output::own::Layout::of(staging).own_paths() {
        remove(&staging.join(own))?;
    }
    let mut linked = vec![false; now.len()];
    let mut to_link = Vec::new();
    let mut emptied: Vec<&str> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < was.len() || j < now.len() {
        let order = match (was.get(i), now.get(j)) {
            (Some(w), Some(n)) => w.0.as_bytes().cmp(n.0.as_bytes()),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            // Only the spare has it: it goes, and maybe its folders.
            Ordering::Less => {
                remove(&staging.join(&*was[i].0))?;
                let mut p = &*was[i].0;
                while let Some((parent, _)) = p.rsplit_once('/') {
                    emptied.push(parent);
                    p = parent;
                }
                i += 1;
            }
            // Only the previous revision has it: linked below.
            Ordering::Greater => {
                to_link.push(j);
                j += 1;
            }
            Ordering::Equal => {
                if was[i].1 == now[j].1 {
                    linked[j] = true;
                } else {
                    remove(&staging.join(&*now[j].0))?;
                    to_link.push(j);
                }
                i += 1;
                j += 1;
            }
        }
    }
    remove_emptied(staging, emptied);
    for j in to_link {
        let path = &*now[j].0;
        // Nothing the spare's index does not list is ever in it; should something be there,
        // it goes, so no file is ever written through it later.
        remove(&staging.join(path))?;
        let mut end = 0;
        while let Some(k) = path[end..].find('/') {
            between.mkdir(&path[..end + k]);
            end += k + 1;
        }
        linked[j] = between.link(path);
    }
    Ok(Some(Prelinked {
        paths: now.into_iter().map(|(p, _)| p.into_owned()).collect(),
        linked,
    }))
}

/// Removes the folders of `staging` that files were removed from, deepest first; a folder
/// that still holds something stays.
fn remove_emptied(staging: &Path, mut emptied: Vec<&str>) {
    emptied
        .sort_unstable_by(|a, b| (b.matches('/').count(), *b).cmp(&(a.matches('/').count(), *a)));
    emptied.dedup();
    for d in emptied {
        let _ = std::fs::remove_dir(staging.join(d));
    }
}

/// Removes file `path`; one already gone is fine.
fn remove(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
