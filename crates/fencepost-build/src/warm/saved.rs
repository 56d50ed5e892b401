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
//!   or truncated write, a file from another format or release: read as absent). The rows
//!   are in chunks of [`CHUNK_ROWS`], each written as bytes, so a reader finds every chunk
//!   without decoding the rows before it and decodes them on every core, the digest checked
//!   beside them (at 100,000 rows one core decoded for ~60 ms while a cold build waited);
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
//! on every core (~25 ms of CPU at 100,000 rows), hashed and written on another thread, joined
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

/// The first bytes of every such file; a new layout changes the number (1: the rows in one
/// sequence; 2: in chunks).
const MAGIC: &[u8] = b"fencepost build pages 2\n";

/// Rows in one chunk of the file (see the module doc).
const CHUNK_ROWS: usize = 4096;

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

/// The file's body: whose rows, then the rows' chunks.
#[derive(Serialize, Deserialize)]
struct Body<'a> {
    #[serde(borrow)]
    head: Head<'a>,
    #[serde(borrow)]
    chunks: Vec<Chunk<'a>>,
}

/// One chunk: a sequence of rows in postcard, as bytes (a length, then the bytes).
struct Chunk<'a>(&'a [u8]);

impl Serialize for Chunk<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Chunk<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Borrowed;
        impl<'de> serde::de::Visitor<'de> for Borrowed {
            type Value = &'de [u8];
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a chunk of rows")
            }
            fn visit_borrowed_bytes<E: serde::de::Error>(
                self,
                b: &'de [u8],
            ) -> Result<&'de [u8], E> {
                Ok(b)
            }
        }
        d.deserialize_bytes(Borrowed).map(Chunk)
    }
}

/// Rows serialised each as it is made, not gathered first.
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

/// The bytes of a file checked (magic, digest, release) and its rows decoded: the chunks on
/// every core while the digest is checked, nothing of them used unless it matches.
fn decode(bytes: &[u8]) -> Result<Found, &'static str> {
    let body = bytes.strip_prefix(MAGIC).ok_or("another format")?;
    let split = body.len().checked_sub(32).ok_or("truncated")?;
    let (body, digest) = body.split_at(split);
    let (intact, read) = rayon::join(
        || Sha256::digest(body).as_slice() == digest,
        || -> Result<_, &'static str> {
            let b: Body<'_> = postcard::from_bytes(body).map_err(|_| "undecodable")?;
            if b.head.version != env!("CARGO_PKG_VERSION") {
                return Err("written by another release");
            }
            use rayon::prelude::*;
            let chunks = (b.chunks.par_iter())
                .map(|c| decode_chunk(c.0))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((b.head, chunks))
        },
    );
    if !intact {
        return Err("its digest does not match (a torn write)");
    }
    let (h, chunks) = read?;
    // Room for the rows the next builds add before the file is written again, so merging
    // them in moves no row (see `merge_by_id`).
    let n: usize = chunks.iter().map(Vec::len).sum();
    let mut rows = Vec::with_capacity(n + STALE_ROWS.max(n / 100));
    for chunk in chunks {
        rows.extend(chunk);
    }
    Ok(Found {
        ledger_id: h.ledger_id.to_string(),
        at: h.at,
        audit_seq: h.audit_seq,
        audit_hash: h.audit_hash.to_string(),
        tlog_size: h.tlog_size,
        rows,
    })
}

/// One chunk's rows as pages.
fn decode_chunk(bytes: &[u8]) -> Result<Vec<PublicPage>, &'static str> {
    use serde::de::DeserializeSeed;
    let mut de = postcard::Deserializer::from_bytes(bytes);
    // A row takes 16 bytes at the least: room for more than that is never reserved.
    let rows = (IntoPages(bytes.len() / 16).deserialize(&mut de)).map_err(|_| "undecodable")?;
    match de.finalize() {
        Ok(rest) if rest.is_empty() => Ok(rows),
        _ => Err("undecodable"),
    }
}

/// The rows decoded straight into pages, equal strings shared within a chunk as the
/// ledger's read shares them: no list of borrowed rows is made first. Holds the most rows
/// the bytes can hold.
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
        let mut pages = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.0));
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
/// the bytes made here (each chunk on a core of its own), hashed and written on another thread. Nothing is written for a
/// ledger whose audit chain is empty (nothing to check a later read against).
pub(super) fn save(path: PathBuf, origin: &Origin, rows: &[PublicPage]) -> Option<Writing> {
    let head = origin.head()?;
    let body = match encode(head, rows) {
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

/// The file's body: each chunk's rows serialised on a core of its own (some 180 bytes a
/// row: room made once), then the chunks one after another behind the head.
fn encode(head: Head<'_>, rows: &[PublicPage]) -> postcard::Result<Vec<u8>> {
    use rayon::prelude::*;
    let chunks: Vec<Vec<u8>> = (rows.par_chunks(CHUNK_ROWS))
        .map(|c| postcard::to_extend(&RowsOf(c), Vec::with_capacity(c.len() * 256)))
        .collect::<postcard::Result<_>>()?;
    let room = chunks.iter().map(|c| c.len() + 8).sum::<usize>() + 256;
    let body = Body {
        head,
        chunks: chunks.iter().map(|c| Chunk(c)).collect(),
    };
    postcard::to_extend(&body, Vec::with_capacity(room))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn page(i: i64) -> PublicPage {
        let some = |s: String| (i % 3 == 0).then_some(s);
        PublicPage {
            id: ItemId(i),
            collection: format!("c{}", i % 2).into(),
            key: i.to_string(),
            title: format!("Item {i} — «title»"),
            day: if i % 5 == 0 {
                String::new()
            } else {
                "2026-12-05".into()
            },
            data: format!("{{\"price\":{}}}", i % 7).into(),
            indexable: i % 4 != 0,
            image_sha256: some(format!("{i:064x}")),
            image_content_type: some("image/png".into()),
            content_hash: format!("h{i}"),
            revision: i / 10,
            first_published_at: Instant(i * 60),
            updated_at: Instant(i * 61),
            due_at: (i % 2 == 0).then_some(Instant(i)),
            withdrawn: i % 11 == 0,
            summary_html: some(format!("<p>{i}</p>")),
            terms: if i % 2 == 0 {
                "".into()
            } else {
                "{\"tags\":[\"a\"]}".into()
            },
            notice: (i % 11 == 0).then_some(i % 2 == 0),
            json_digest: some(format!("d{i}")),
        }
    }

    fn head() -> Head<'static> {
        Head {
            version: env!("CARGO_PKG_VERSION"),
            ledger_id: "L",
            at: 9,
            audit_seq: 4,
            audit_hash: "H",
            tlog_size: 0,
        }
    }

    fn file(rows: &[PublicPage]) -> Vec<u8> {
        let body = encode(head(), rows).unwrap();
        [MAGIC, &body, &Sha256::digest(&body)].concat()
    }

    /// Guards: rows saved in chunks (a partial last one, exactly one, none) read back as the very rows, in order; a torn or older file is read as absent.
    #[test]
    fn rows_saved_in_chunks_read_back_the_same() {
        for n in [0, 1, CHUNK_ROWS, 2 * CHUNK_ROWS + 17] {
            let rows: Vec<PublicPage> = (1..=n as i64).map(page).collect();
            let found = decode(&file(&rows)).unwrap();
            assert_eq!((found.ledger_id.as_str(), found.at), ("L", 9));
            assert_eq!(found.rows, rows, "{n} rows");
            assert!(found.rows.capacity() >= n + STALE_ROWS);
        }
        let rows: Vec<PublicPage> = (1..=CHUNK_ROWS as i64 + 5).map(page).collect();
        let mut torn = file(&rows);
        let mid = torn.len() / 2;
        torn[mid] ^= 1;
        assert_eq!(
            decode(&torn).err(),
            Some("its digest does not match (a torn write)")
        );
        let older = [
            b"fencepost build pages 1\n".as_slice(),
            &file(&rows)[MAGIC.len()..],
        ]
        .concat();
        assert_eq!(decode(&older).err(), Some("another format"));
    }
}
