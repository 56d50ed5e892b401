//! The public page rows a one-shot build leaves on disk for the next one
//! (`<state dir>/build-pages.bin`, beside the stat cache): what `warm.rs` keeps in memory for
//! `run`, kept for `publish --build` from cron or a `build` after each publish. The next
//! build reads the file, then from the ledger only the pages changed since
//! (`public.pages_since`), not every page row: at 100,000 items the file reads in about a
//! quarter of the ledger's full read (BENCHMARKS.md), whose rows pass through SQLite's
//! records, two lookups each and the ledger's generic rows.
//!
//! Only ever a cache, verified before use; anything off and the build reads every page from
//! the ledger, as it did before the file existed:
//! - the bytes: a magic line, then postcard, then the SHA-256 of the postcard bytes (a torn
//!   or truncated write, a file from another format or release: read as absent);
//! - the ledger: its id, and the audit chain's hash at the entry that was the chain's tip when
//!   the rows were read — the chain hashes every public change before it, so a ledger
//!   restored from a backup and moved on along another history no longer has that hash at
//!   that entry; the revision is not past the snapshot's;
//! - the transparency log's size: a site that keeps a log never saves (its rows carry item
//!   digests builds write, unstamped), and one that turned it on and off again reads anew.
//!
//! The digest guards against accidents, not against a forger: the file sits in the site's
//! state folder, trusted as the site's templates and content are (whoever can write there can
//! change what the site renders anyway). It holds only public pages: nothing embargoed is in
//! the ledger's page rows, and it is never under `public/`.
//!
//! Written after a full read, and again once the rows changed since the file's revision pass
//! [`STALE_ROWS`] (or 1% of the rows): until then each build reads those few from the ledger
//! and writes nothing (reading the file itself still grows with the site). The bytes are made
//! on the build's thread (~25 ms at 100,000 rows), hashed and written on another, joined
//! before the build returns; atomically (a temporary file renamed over the old), so a reader
//! sees the old file or the new one.
//!
//! Rejected: JSON (each string unescaped and copied, where postcard's are borrowed from the
//! file's bytes; not measured here); the page views
//! instead of the rows (they depend on the config and on the image store, so the cache
//! would have to prove more); appending changed rows to the file (the ledger already holds
//! them, indexed by revision: reading them from there is the append log).

use fencepost_core::clock::Instant;
use fencepost_core::item::ItemId;
use fencepost_ledger::public::{Interned, PublicPage};
use fencepost_ledger::Snapshot;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

/// Rows changed since the file's revision that a build reads from the ledger before it writes
/// the file again (or 1% of the rows, whichever is more): a one-item build reads one row more
/// each time and writes nothing, where a rewrite would cost ~45 ms of CPU at 100,000 rows.
pub(super) const STALE_ROWS: usize = 1_000;

/// The file's name in the site's state folder.
pub(crate) const FILE: &str = "build-pages.bin";

/// The first bytes of every such file; a new layout changes the number.
const MAGIC: &[u8] = b"fencepost build pages 1\n";

/// Whose rows they are, at which revision.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct Head<'a> {
    /// The release that wrote the file: another reads every page again.
    version: &'a str,
    ledger_id: &'a str,
    at: i64,
    /// The audit chain's tip when the rows were read: (entry, hash).
    audit_seq: i64,
    audit_hash: &'a str,
    tlog_size: u64,
}

/// One page row, borrowing its strings (from the page when written, from the file's bytes
/// when read).
#[derive(Serialize, Deserialize)]
struct Row<'a> {
    id: i64,
    collection: &'a str,
    key: &'a str,
    title: &'a str,
    day: &'a str,
    data: &'a str,
    indexable: bool,
    #[serde(borrow)]
    image_sha256: Option<&'a str>,
    #[serde(borrow)]
    image_content_type: Option<&'a str>,
    content_hash: &'a str,
    revision: i64,
    first_published_at: i64,
    updated_at: i64,
    due_at: Option<i64>,
    withdrawn: bool,
    #[serde(borrow)]
    summary_html: Option<&'a str>,
    terms: &'a str,
    notice: Option<bool>,
    #[serde(borrow)]
    json_digest: Option<&'a str>,
}

/// The same as written: each row made as it is serialised, not gathered first.
#[derive(Serialize)]
struct ToSave<'a> {
    head: Head<'a>,
    rows: RowsOf<'a>,
}

struct RowsOf<'a>(&'a [PublicPage]);

impl Serialize for RowsOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(row_of))
    }
}

/// What the snapshot says the file must match: the ledger, the revision, the chain's tip.
pub(super) struct Origin {
    ledger_id: String,
    at: i64,
    audit_seq: i64,
    audit_hash: Option<String>,
    tlog_size: u64,
}

impl Origin {
    pub(super) fn of(snap: &Snapshot<'_>) -> Result<Origin, fencepost_ledger::LedgerError> {
        let tip = snap.anchor()?;
        Ok(Origin {
            ledger_id: snap.ledger_id()?,
            at: snap.revision()?,
            audit_seq: tip.seq,
            audit_hash: tip.hash,
            tlog_size: snap.tlog_size()?,
        })
    }

    fn head(&self) -> Option<Head<'_>> {
        Some(Head {
            version: env!("CARGO_PKG_VERSION"),
            ledger_id: &self.ledger_id,
            at: self.at,
            audit_seq: self.audit_seq,
            audit_hash: self.audit_hash.as_deref()?,
            tlog_size: self.tlog_size,
        })
    }
}

/// The rows the file at `path` holds and the revision they are of, when they are this
/// ledger's (see the module doc); sorted by item id. `None` (logged at debug) for anything
/// else: no file, another format, a torn write, another ledger or history. `ahead`: the
/// file read and decoded already (see [`read_ahead`]).
pub(super) fn load(
    path: &Path,
    snap: &Snapshot<'_>,
    now: &Origin,
    ahead: Option<Ahead>,
) -> Option<(i64, Vec<PublicPage>)> {
    let decoded = match ahead {
        Some(a) => {
            a.0.join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))?
        }
        None => decode(&fencepost_core::mapped::read(path).ok()?),
    };
    let why = match decoded.and_then(|found| found.fits(snap, now)) {
        Ok(found) => return Some(found),
        Err(why) => why,
    };
    tracing::debug!(file = %path.display(), why, "saved page rows not used: every page is read");
    None
}

/// The file read and decoded on a thread of its own, before the snapshot it is checked
/// against is taken: `publish --build` starts it before it publishes, so that the rows are
/// ready when its build begins (~7 ms of one core at 10,000 rows, ~60 ms at 100,000).
pub(super) struct Ahead(JoinHandle<Option<Result<Found, &'static str>>>);

/// Starts reading the file at `path` (see [`Ahead`]).
pub(super) fn read_ahead(path: PathBuf) -> Ahead {
    Ahead(std::thread::spawn(move || {
        Some(decode(&fencepost_core::mapped::read(&path).ok()?))
    }))
}

/// What a file holds, decoded: the rows and whose they are, not yet checked against a
/// snapshot.
pub(super) struct Found {
    ledger_id: String,
    at: i64,
    audit_seq: i64,
    audit_hash: String,
    tlog_size: u64,
    rows: Vec<PublicPage>,
}

impl Found {
    /// The rows and their revision, when they are the snapshot's ledger's (the module doc).
    fn fits(
        self,
        snap: &Snapshot<'_>,
        now: &Origin,
    ) -> Result<(i64, Vec<PublicPage>), &'static str> {
        if self.ledger_id != now.ledger_id || self.at > now.at || self.tlog_size != now.tlog_size {
            return Err("another ledger, a later revision or another transparency log");
        }
        let same_history = snap.audit_hash_at(self.audit_seq).ok().flatten();
        if same_history.as_deref() != Some(self.audit_hash.as_str()) {
            return Err("the ledger's history differs (restored and moved on?)");
        }
        Ok((self.at, self.rows))
    }
}

/// The bytes of a file checked (magic, digest, release) and its rows decoded.
fn decode(bytes: &[u8]) -> Result<Found, &'static str> {
    let body = bytes.strip_prefix(MAGIC).ok_or("another format")?;
    let split = body.len().checked_sub(32).ok_or("truncated")?;
    let (body, digest) = body.split_at(split);
    if Sha256::digest(body).as_slice() != digest {
        return Err("its digest does not match (a torn write)");
    }
    // The head, then (only when it is this release's) the rows, each made a page as it is
    // decoded.
    let (h, rows): (Head<'_>, &[u8]) =
        postcard::take_from_bytes(body).map_err(|_| "undecodable")?;
    if h.version != env!("CARGO_PKG_VERSION") {
        return Err("written by another release");
    }
    use serde::de::DeserializeSeed;
    let mut de = postcard::Deserializer::from_bytes(rows);
    // A row takes 16 bytes at the least: room for more than that is never reserved.
    let rows = IntoPages(rows.len() / 16)
        .deserialize(&mut de)
        .map_err(|_| "undecodable")?;
    Ok(Found {
        ledger_id: h.ledger_id.to_string(),
        at: h.at,
        audit_seq: h.audit_seq,
        audit_hash: h.audit_hash.to_string(),
        tlog_size: h.tlog_size,
        rows,
    })
}

/// The rows decoded straight into pages, equal strings shared as the ledger's read shares
/// them: no list of borrowed rows is made first (at 100,000 rows ~20 MB, grown by doubling,
/// every page of it faulted in on the build's main thread). Holds the most rows the bytes
/// can hold.
struct IntoPages(usize);

impl<'de> serde::de::DeserializeSeed<'de> for IntoPages {
    type Value = Vec<PublicPage>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for IntoPages {
    type Value = Vec<PublicPage>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("page rows")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut shared = Interned::default();
        // Room for the rows the next builds add before the file is written again, so merging
        // them in moves no row (see `merge_by_id`).
        let rows = seq.size_hint().unwrap_or(0).min(self.0);
        let mut pages = Vec::with_capacity(rows + STALE_ROWS.max(rows / 100));
        while let Some(row) = seq.next_element::<Row<'de>>()? {
            pages.push(page_of(row, &mut shared));
        }
        Ok(pages)
    }
}

/// One row as a page.
fn page_of(r: Row<'_>, shared: &mut Interned) -> PublicPage {
    PublicPage {
        id: ItemId(r.id),
        collection: shared.get(r.collection),
        key: r.key.to_string(),
        title: r.title.to_string(),
        day: r.day.to_string(),
        data: shared.get(r.data),
        indexable: r.indexable,
        image_sha256: r.image_sha256.map(str::to_string),
        image_content_type: r.image_content_type.map(str::to_string),
        content_hash: r.content_hash.to_string(),
        revision: r.revision,
        first_published_at: Instant(r.first_published_at),
        updated_at: Instant(r.updated_at),
        due_at: r.due_at.map(Instant),
        withdrawn: r.withdrawn,
        summary_html: r.summary_html.map(str::to_string),
        terms: shared.get(r.terms),
        notice: r.notice,
        json_digest: r.json_digest.map(str::to_string),
    }
}

fn row_of(p: &PublicPage) -> Row<'_> {
    Row {
        id: p.id.0,
        collection: &p.collection,
        key: &p.key,
        title: &p.title,
        day: &p.day,
        data: &p.data,
        indexable: p.indexable,
        image_sha256: p.image_sha256.as_deref(),
        image_content_type: p.image_content_type.as_deref(),
        content_hash: &p.content_hash,
        revision: p.revision,
        first_published_at: p.first_published_at.0,
        updated_at: p.updated_at.0,
        due_at: p.due_at.map(|d| d.0),
        withdrawn: p.withdrawn,
        summary_html: p.summary_html.as_deref(),
        terms: &p.terms,
        notice: p.notice,
        json_digest: p.json_digest.as_deref(),
    }
}

/// A write under way; dropping it waits for the write (so a one-shot build's process never
/// exits halfway through one).
pub(super) struct Writing(Option<JoinHandle<()>>);

impl Drop for Writing {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            let _ = t.join();
        }
    }
}

/// Starts writing `rows` (sorted by item id), of the snapshot `origin` describes, to `path`:
/// the bytes made here, hashed and written on another thread. Nothing is written for a
/// ledger whose audit chain is empty (nothing to check a later read against).
pub(super) fn save(path: PathBuf, origin: &Origin, rows: &[PublicPage]) -> Option<Writing> {
    let head = origin.head()?;
    let saved = ToSave {
        head,
        rows: RowsOf(rows),
    };
    // Some 180 bytes a row: room made once.
    let room = Vec::with_capacity(rows.len() * 256);
    let body = match postcard::to_extend(&saved, room) {
        Ok(b) => b,
        Err(e) => {
            tracing::debug!(error = %e, "page rows not saved");
            return None;
        }
    };
    let t = std::thread::spawn(move || {
        if let Err(e) = write(&path, &body) {
            tracing::debug!(error = %e, file = %path.display(), "page rows not saved");
        }
    });
    Some(Writing(Some(t)))
}

/// Written beside its place under a name of this process's, then renamed over it.
fn write(path: &Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_file_name(format!(".{FILE}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        f.write_all(MAGIC)?;
        f.write_all(body)?;
        f.write_all(&Sha256::digest(body))?;
        f.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
