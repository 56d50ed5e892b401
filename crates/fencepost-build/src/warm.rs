//! What a long-lived process keeps between its builds (`fencepost run`, one build per
//! instant): the ledger's public pages at the revision it built last, and which folder that
//! revision is (to link it ahead of the next build). The next build then reads from the
//! ledger only the pages changed since (`public.pages_since`: every public change stamps the
//! pages it wrote with the revision it made, and no page row is ever deleted).
//!
//! What is kept is only ever a cache of what is in the ledger, checked before use: the pages
//! belong to one ledger (its id) and one revision; a snapshot of another ledger, or of an
//! older revision, reads every page again. A site that keeps a transparency log reads every
//! page every time: the log's item digests are written by builds, not stamped with a
//! revision.
//!
//! The previous revision's manifest is kept as read lazily (`fencepost_output::carried`), and
//! read ahead: once a revision is in place, a thread reads its `manifest.json` while the
//! process waits for the next instant (`warm/kept.rs`, which says how a stale one is told).
//! It used to be the parsed manifest itself, every entry's strings owned, handed on in memory;
//! a build now writes most of its manifest by copying the kept entries' bytes, which only a
//! manifest read from its file has.
//!
//! A one-shot build (`build`, `publish --build` from cron) keeps the pages on disk instead
//! (`warm/saved.rs`): decoded and allocated again each time, but without SQLite's records and
//! lookups they read in about a quarter of the ledger's time. (An earlier note here guessed the
//! file would cost what the ledger read costs; measured, it does not.)

mod kept;
mod saved;

use super::prelink::Early;
use super::report::BuildError;
use fencepost_ledger::public::PublicPage;
use fencepost_ledger::Snapshot;
use fencepost_output::carried::Carried;
use fencepost_output::revision::Staging;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// What one build leaves the next (see the module doc). `Warm::default()` keeps nothing:
/// every build reads everything, as a one-shot command does.
#[derive(Default)]
pub struct Warm {
    keep: bool,
    pages: Option<Pages>,
    /// The revision folder built (or found built) last, its manifest being read: what the
    /// next build reuses from.
    built: Option<kept::Kept>,
    ahead: Option<Ahead>,
    /// Where a one-shot build keeps its pages between processes (see `warm/saved.rs`).
    saved: Option<PathBuf>,
    /// That file being read and decoded already.
    saved_ahead: Option<saved::Ahead>,
    /// The write of those pages under way; dropped last, so a build waits for it.
    writing: Option<saved::Writing>,
}

/// The files of revision folder `from` linked into a staging folder ahead of the next build
/// (see [`Warm::link_ahead`]). Fields drop in order: the linking thread is waited for before
/// the folder is removed.
struct Ahead {
    from: PathBuf,
    early: Early,
    staging: Staging,
}

/// The public pages of revision `at` of ledger `ledger_id`, sorted by item id (so a changed
/// row finds its item's by binary search, [`merge_by_id`]).
struct Pages {
    ledger_id: String,
    at: i64,
    rows: Vec<PublicPage>,
}

impl Warm {
    /// A cache for a process that builds again and again (`run`).
    pub fn keeping() -> Warm {
        Warm {
            keep: true,
            ..Warm::default()
        }
    }

    /// A cache for a one-shot build: the page rows saved in `state_dir` by the last build
    /// (see `warm/saved.rs`), nothing kept in memory.
    pub fn saved_in(state_dir: &Path) -> Warm {
        Warm {
            saved: Some(state_dir.join(saved::FILE)),
            ..Warm::default()
        }
    }

    /// As [`Warm::saved_in`], with that file read and decoded from now on, and the manifest
    /// of the revision the next build reuses from (the live one, in `public_dir`) read, each
    /// on a thread of its own: `publish --build` starts both before it publishes. The build
    /// checks the rows against its snapshot as it would have after reading them itself, and
    /// takes the manifest only while it is that folder's file (see `warm/kept.rs`).
    pub fn read_ahead(state_dir: &Path, public_dir: &Path) -> Warm {
        let path = state_dir.join(saved::FILE);
        let public = fencepost_output::public::Public::read(public_dir.to_path_buf());
        Warm {
            saved_ahead: Some(saved::read_ahead(path.clone())),
            saved: Some(path),
            built: public.ok().and_then(|p| p.newest()).map(kept::Kept::read),
            ..Warm::default()
        }
    }

    /// The public pages of the snapshot, and how many rows were read for them: what changed
    /// since the kept (or saved) revision merged into those pages, or every page. Kept for the
    /// next build when this one keeps or saves (`logged`: a site with a transparency log
    /// never does).
    pub(super) fn pages(
        &mut self,
        snap: &Snapshot<'_>,
        logged: bool,
    ) -> Result<(Vec<PublicPage>, usize), BuildError> {
        if let Some(path) = self.saved.clone().filter(|_| !self.keep && !logged) {
            return self.saved_pages(&path, snap);
        }
        if !self.keep || logged {
            self.pages = None;
            let rows = snap.pages()?;
            let read = rows.len();
            return Ok((rows, read));
        }
        let read = self.catch_up(snap)?;
        // A copy for the build to consume (100,000 rows: ~45 ms on one core), on every core.
        let rows =
            (self.pages.as_ref()).map_or_else(Vec::new, |p| p.rows.par_iter().cloned().collect());
        Ok((rows, read))
    }

    /// The pages saved at `path` brought to the snapshot's revision (or every page read), and
    /// saved again when they moved.
    fn saved_pages(
        &mut self,
        path: &Path,
        snap: &Snapshot<'_>,
    ) -> Result<(Vec<PublicPage>, usize), BuildError> {
        let origin = saved::Origin::of(snap)?;
        let ahead = self.saved_ahead.take();
        let (rows, read, save) = match saved::load(path, snap, &origin, ahead) {
            Some((at, mut rows)) => {
                let changed = snap.pages_since(at)?;
                let read = changed.len();
                tracing::debug!(since = at, read, "pages saved by the last build");
                merge_by_id(&mut rows, changed);
                let save = read > saved::STALE_ROWS.max(rows.len() / 100);
                (rows, read, save)
            }
            None => {
                let rows = by_id(snap.pages()?);
                let read = rows.len();
                (rows, read, true)
            }
        };
        if save {
            self.writing = None;
            self.writing = saved::save(path.to_path_buf(), &origin, &rows);
        }
        Ok((rows, read))
    }

    /// Brings the kept pages to the snapshot's revision (or reads them all); how many rows
    /// were read.
    fn catch_up(&mut self, snap: &Snapshot<'_>) -> Result<usize, BuildError> {
        let (ledger_id, at) = (snap.ledger_id()?, snap.revision()?);
        let kept = (self.pages.take()).filter(|p| p.ledger_id == ledger_id && p.at <= at);
        let (pages, read) = match kept {
            Some(mut p) => {
                let changed = snap.pages_since(p.at)?;
                let read = changed.len();
                tracing::debug!(since = p.at, read, "pages kept from the last build");
                merge_by_id(&mut p.rows, changed);
                p.at = at;
                (p, read)
            }
            None => {
                let rows = by_id(snap.pages()?);
                let read = rows.len();
                (
                    Pages {
                        ledger_id,
                        at,
                        rows,
                    },
                    read,
                )
            }
        };
        self.pages = Some(pages);
        Ok(read)
    }

    /// Keeps what the next build reads of revision folder `dir`, found built complete (a
    /// run's first cycle; a revision another process built): the snapshot's pages, and the
    /// folder. So the first instant after a run starts costs what the later ones do, not a
    /// read of everything. Only a cache: what cannot be read now is read by the next build,
    /// and this one (which renders nothing) does not fail for it.
    pub(super) fn found_built(&mut self, snap: &Snapshot<'_>, logged: bool, dir: &Path) {
        if !self.keep {
            return;
        }
        if !logged {
            if let Err(e) = self.catch_up(snap) {
                tracing::debug!(error = %e, "the pages are read by the next build");
                self.pages = None;
            }
        }
        if self.built.as_ref().is_none_or(|k| k.dir != dir) {
            self.built = Some(kept::Kept::read(dir.to_path_buf()));
        }
    }

    /// Remembers the folder just built, for the links made ahead of the next build, and starts
    /// reading its manifest for that build.
    pub(super) fn built(&mut self, dir: PathBuf) {
        if self.keep {
            self.built = Some(kept::Kept::read(dir));
        }
    }

    /// The previous revision's manifest when it is the one read for folder `dir` (and its
    /// `manifest.json` is still the file that was read).
    pub(super) fn previous(&mut self, dir: Option<&Path>) -> Option<(PathBuf, Carried)> {
        self.built.take()?.take(dir)
    }

    /// Starts linking the revision just built into a staging folder of its own, on a thread,
    /// so the next build finds the links made: a one-item build's one unavoidable cost (every
    /// folder and link of a self-contained revision, ~0.4–0.6 s of both cores at 100,000
    /// files) is paid between instants, not after one. Only what is public already is
    /// linked — the live revision's files, in a staging folder no pointer names — so nothing
    /// embargoed is on disk any earlier; the next build decides every file as it always does
    /// (see `prelink.rs`). The folder's lock is held meanwhile, so no other build or `gc`
    /// takes it for abandoned; a process killed meanwhile leaves it to the next build's
    /// clean-up.
    pub fn link_ahead(&mut self) {
        if !self.keep || self.ahead.is_some() {
            return;
        }
        let Some(dir) = self.built.as_ref().map(|k| &k.dir) else {
            return;
        };
        let (Some(revisions), Some(name)) = (dir.parent(), dir.file_name()) else {
            return;
        };
        match Staging::create_in(revisions, &name.to_string_lossy()) {
            Ok(staging) => {
                let early = Early::start(dir.clone(), staging.path.clone(), false);
                tracing::debug!(from = %dir.display(), "linking the live revision ahead of the next build");
                self.ahead = Some(Ahead {
                    from: dir.clone(),
                    early,
                    staging,
                });
            }
            Err(e) => tracing::debug!(error = %e, "no links made ahead"),
        }
    }

    /// The links made ahead, when they are of revision folder `from` (the one this build
    /// reuses from). Links of another folder are stale (another build moved the output on):
    /// they are removed on another thread.
    pub(super) fn ahead(&mut self, from: Option<&Path>) -> Option<(Early, Staging)> {
        let a = self.ahead.take()?;
        if Some(a.from.as_path()) == from {
            return Some((a.early, a.staging));
        }
        fencepost_core::drop_later(a);
        None
    }
}

/// Rows in item-id order (SQLite gives them so already; PostgreSQL in table order).
fn by_id(mut rows: Vec<PublicPage>) -> Vec<PublicPage> {
    rows.sort_by_key(|r| r.id.0);
    rows
}

/// `changed` rows merged into `rows` (sorted by item id, and left so): each in its item's
/// place, or added. Added rows wait until every changed row was looked up: an item can go
/// public after items with later ids (it was known, embargoed, first), and one pushed early
/// would unsort what the next lookup searches. They are then merged in from the first place
/// one goes: only the rows after it move (new items mostly have the latest ids, so mostly
/// none do), where appending and sorting moved every row (~20 ms at 100,000, on the build's
/// main thread).
fn merge_by_id(rows: &mut Vec<PublicPage>, changed: Vec<PublicPage>) {
    let mut added = Vec::new();
    for row in changed {
        match rows.binary_search_by_key(&row.id.0, |r| r.id.0) {
            Ok(i) => rows[i] = row,
            Err(_) => added.push(row),
        }
    }
    let Some(first) = added.iter().map(|r| r.id.0).min() else {
        return;
    };
    added.sort_by_key(|r| r.id.0);
    let tail = rows.split_off(rows.partition_point(|r| r.id.0 < first));
    rows.reserve(tail.len() + added.len());
    let (mut tail, mut added) = (tail.into_iter().peekable(), added.into_iter().peekable());
    loop {
        let next = match (tail.peek(), added.peek()) {
            (Some(t), Some(a)) if t.id.0 <= a.id.0 => tail.next(),
            (_, Some(_)) => added.next(),
            (Some(_), None) => tail.next(),
            (None, None) => break,
        };
        rows.extend(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fencepost_core::clock::Instant;
    use fencepost_core::item::ItemId;

    fn page(id: i64, title: &str) -> PublicPage {
        PublicPage {
            id: ItemId(id),
            collection: "c".into(),
            key: id.to_string(),
            title: title.to_string(),
            day: String::new(),
            data: "{}".into(),
            indexable: true,
            image_sha256: None,
            image_content_type: None,
            content_hash: String::new(),
            revision: 1,
            first_published_at: Instant(0),
            updated_at: Instant(0),
            due_at: None,
            withdrawn: false,
            summary_html: None,
            terms: "".into(),
            notice: None,
            json_digest: None,
        }
    }

    fn ids_titles(rows: &[PublicPage]) -> Vec<(i64, &str)> {
        rows.iter().map(|r| (r.id.0, r.title.as_str())).collect()
    }

    #[test]
    fn changed_rows_are_merged_in_id_order_wherever_they_go() {
        let mut rows: Vec<PublicPage> = [1, 3, 5, 7].iter().map(|&i| page(i, "old")).collect();
        // An edit, new items before, between and after the others, out of order.
        let changed = vec![
            page(9, "new"),
            page(3, "edited"),
            page(4, "new"),
            page(0, "new"),
        ];
        merge_by_id(&mut rows, changed);
        assert_eq!(
            ids_titles(&rows),
            [
                (0, "new"),
                (1, "old"),
                (3, "edited"),
                (4, "new"),
                (5, "old"),
                (7, "old"),
                (9, "new")
            ]
        );
        // New items after every other (the usual case) and nothing changed.
        merge_by_id(&mut rows, vec![page(11, "new"), page(10, "new")]);
        assert_eq!(
            rows.iter().map(|r| r.id.0).collect::<Vec<_>>(),
            [0, 1, 3, 4, 5, 7, 9, 10, 11]
        );
        merge_by_id(&mut rows, Vec::new());
        assert_eq!(rows.len(), 9);
        let mut empty = Vec::new();
        merge_by_id(&mut empty, vec![page(2, "a"), page(1, "b")]);
        assert_eq!(ids_titles(&empty), [(1, "b"), (2, "a")]);
    }
}
