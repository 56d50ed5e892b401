//! What a long-lived process keeps between its builds (`fencepost run`, one build per
//! instant): the ledger's public pages at the revision it built last, and that revision's
//! manifest. The next build then reads from the ledger only the pages changed since
//! (`public.pages_since`: every public change stamps the pages it wrote with the revision it
//! made, and no page row is ever deleted), and takes the previous manifest from memory
//! instead of parsing `manifest.json` again. At 100,000 items those two reads were ~0.4 of
//! the ~1.9 CPU-seconds a one-item build took (BENCHMARKS.md).
//!
//! What is kept is only ever a cache of what is on disk and in the ledger, checked before use:
//! - the pages belong to one ledger (its id) and one revision; a snapshot of another ledger,
//!   or of an older revision, reads every page again. A site that keeps a transparency log
//!   reads every page every time: the log's item digests are written by builds, not stamped
//!   with a revision.
//! - the manifest belongs to one revision folder and one `manifest.json` (its device, inode,
//!   length and modification time); a folder rebuilt in place or a previous revision that is
//!   not that folder (another host built meanwhile) is read from disk.
//!
//! Rejected: keeping the same on disk for `publish --build` from cron. A file of 100,000 page
//! rows costs about what the ledger read costs (the rows must be decoded and allocated either
//! way); what a process can keep in memory it need not decode at all.

use super::report::BuildError;
use crate::ledger::public::PublicPage;
use crate::ledger::Snapshot;
use crate::output::manifest::{self, Manifest};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What one build leaves the next (see the module doc). `Warm::default()` keeps nothing:
/// every build reads everything, as a one-shot command does.
#[derive(Default)]
pub struct Warm {
    keep: bool,
    pages: Option<Pages>,
    built: Option<Built>,
}

/// The public pages of revision `at` of ledger `ledger_id`, in the ledger's row order, with
/// where each item's row is.
struct Pages {
    ledger_id: String,
    at: i64,
    rows: Vec<PublicPage>,
    position: HashMap<i64, usize>,
}

/// The manifest of the revision folder `dir`, as its `manifest.json` (`stamp`) holds it.
struct Built {
    dir: PathBuf,
    stamp: Stamp,
    manifest: Manifest,
}

/// What tells one `manifest.json` from another written in its place.
#[derive(PartialEq, Eq)]
struct Stamp {
    id: (u64, u64),
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(dir: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(dir.join(manifest::FILE)).ok()?;
        #[cfg(unix)]
        let id = {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        };
        #[cfg(not(unix))]
        let id = (0, 0);
        Some(Stamp {
            id,
            len: m.len(),
            modified: m.modified().ok(),
        })
    }
}

impl Warm {
    /// A cache for a process that builds again and again (`run`).
    pub fn keeping() -> Warm {
        Warm {
            keep: true,
            ..Warm::default()
        }
    }

    /// The public pages of the snapshot, and how many rows were read for them: what changed
    /// since the kept revision merged into the kept pages, or every page. Kept for the next
    /// build when this one keeps (`logged`: a site with a transparency log never does).
    pub(super) fn pages(
        &mut self,
        snap: &Snapshot<'_>,
        logged: bool,
    ) -> Result<(Vec<PublicPage>, usize), BuildError> {
        let keep = self.keep && !logged;
        let (ledger_id, at) = (snap.ledger_id()?, snap.revision()?);
        let kept = self
            .pages
            .take()
            .filter(|p| keep && p.ledger_id == ledger_id && p.at <= at);
        let (pages, read) = match kept {
            Some(mut p) => {
                let changed = snap.pages_since(p.at)?;
                let read = changed.len();
                tracing::debug!(since = p.at, read, "pages kept from the last build");
                p.merge(changed, at);
                (p, read)
            }
            None if !keep => {
                let rows = snap.pages()?;
                let read = rows.len();
                return Ok((rows, read));
            }
            None => {
                let rows = snap.pages()?;
                let read = rows.len();
                (Pages::new(ledger_id, at, rows), read)
            }
        };
        let rows = pages.rows.clone();
        self.pages = Some(pages);
        Ok((rows, read))
    }

    /// The previous revision's manifest when it is the one kept for folder `dir` (and its
    /// `manifest.json` is still the file it was read from).
    pub(super) fn previous(&mut self, dir: Option<&Path>) -> Option<(PathBuf, Manifest)> {
        let b = self.built.take()?;
        (Some(b.dir.as_path()) == dir && Stamp::of(&b.dir).as_ref() == Some(&b.stamp))
            .then_some((b.dir, b.manifest))
    }

    /// Keeps the manifest just written into `dir`; gives it back when this cache keeps
    /// nothing (the caller drops it).
    pub(super) fn built(&mut self, dir: PathBuf, manifest: Manifest) -> Option<Manifest> {
        if !self.keep {
            return Some(manifest);
        }
        let Some(stamp) = Stamp::of(&dir) else {
            return Some(manifest);
        };
        self.built = Some(Built {
            dir,
            stamp,
            manifest,
        });
        None
    }
}

impl Pages {
    fn new(ledger_id: String, at: i64, rows: Vec<PublicPage>) -> Pages {
        let position = rows.iter().enumerate().map(|(i, r)| (r.id.0, i)).collect();
        Pages {
            ledger_id,
            at,
            rows,
            position,
        }
    }

    /// The pages at revision `at`: each changed row in its item's place, new items in item
    /// order (the order a full read gives on SQLite).
    fn merge(&mut self, changed: Vec<PublicPage>, at: i64) {
        let mut added = false;
        for row in changed {
            match self.position.get(&row.id.0) {
                Some(&i) => self.rows[i] = row,
                None => {
                    self.position.insert(row.id.0, self.rows.len());
                    self.rows.push(row);
                    added = true;
                }
            }
        }
        if added {
            self.rows.sort_by_key(|r| r.id.0);
            self.position = (self.rows.iter().enumerate())
                .map(|(i, r)| (r.id.0, i))
                .collect();
        }
        self.at = at;
    }
}
