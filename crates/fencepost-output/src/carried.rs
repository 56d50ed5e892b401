//! The previous revision's manifest as the next build reads it ([`Carried`]), and the manifest
//! that build writes ([`Assembled`]): after one publish nearly every entry is the previous
//! revision's, so neither is turned into owned values and back.
//!
//! Reading keeps the file's bytes and, per entry, its raw JSON and the fields a build looks at
//! (path, key, cache class, and what `manifest.idx` lists), borrowed from those bytes when the
//! JSON holds them unescaped. Writing copies a kept entry's raw JSON as it was when the
//! previous revision was written by this same build (`raw_ok`: the same fingerprint, which
//! names the fencepost version, so the same serialiser) and its cache class is unchanged;
//! anything else is parsed whole and serialised, as before. At 100,000 entries (40 MB) the
//! owned parse, the serialisation and the drop took 111–115 ms; the lazy read and the
//! manifest written from it take 75–83 ms (`examples/manifest_read.rs`, BENCHMARKS.md), and in
//! a one-item build the CPU fell by ~60 ms.
//!
//! Rejected: the whole manifest as postcard in a cache file beside it (still every string
//! allocated: ~20–30 ms saved, for another file to verify); the entries' strings inline
//! (`compact_str`: parses slower — the JSON itself is the cost, not the allocations).

use super::index::{self, Line};
use super::manifest::{CacheClass, Entry, Json, Manifest, ManifestIn};
use super::{io_err, OutputError};
use fencepost_core::mapped::FileBytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;

/// A field of an entry: a stretch of the file (its JSON held it unescaped), or decoded.
enum Text {
    At(Range<usize>),
    Own(Box<str>),
}

struct Row {
    raw: Range<usize>,
    path: Text,
    key: Text,
    sha256: Text,
    content_type: Text,
    location: Option<Text>,
    bytes: u64,
    cache: CacheClass,
}

#[derive(Deserialize)]
struct RowIn<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(borrow)]
    sha256: Cow<'a, str>,
    bytes: u64,
    #[serde(borrow)]
    content_type: Cow<'a, str>,
    cache: CacheClass,
    #[serde(borrow)]
    key: Cow<'a, str>,
    #[serde(default, borrow)]
    location: Option<Cow<'a, str>>,
    // Not kept, but required as `Entry` requires them, so that an entry read here always
    // parses whole later (`Carried::entry`), as `Manifest::read` would have refused it.
    #[allow(dead_code)]
    max_age: u64,
    #[allow(dead_code)]
    #[serde(default)]
    links: Strings,
}

/// A list of strings, checked without being kept.
#[derive(Default)]
struct Strings;

impl<'de> Deserialize<'de> for Strings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Strings, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Strings;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of strings")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Strings, A::Error> {
                while seq.next_element::<Cow<'de, str>>()?.is_some() {}
                Ok(Strings)
            }
        }
        d.deserialize_seq(Visit)
    }
}

/// A revision's `manifest.json`, read for the next build (see the module doc).
pub struct Carried {
    /// The file, mapped (`fencepost_core::mapped`); checked as UTF-8 when read, and each
    /// field's stretch again as it is taken (cheap: they are short, and only a file changed
    /// in place under the build could fail it).
    bytes: FileBytes,
    /// Everything but the files (`files` is empty).
    head: Manifest,
    rows: Vec<Row>,
    sorted: bool,
}

/// The manifest's head and a row per entry. One pass over the JSON when it is written as
/// fencepost writes it (compact, each entry's path first and unescaped): each entry's bytes
/// then run from its `{"path":"` to the comma before the next one's, checked, not found by
/// parsing every entry a second time as a raw value (which was half the read). Anything else
/// (spaced, fields in another order, an escaped path) is read entry by entry as raw values.
fn rows_of(text: &str) -> Result<(Manifest, Vec<Row>), String> {
    let base = text.as_ptr() as usize;
    let at = |s: &str| {
        let start = s.as_ptr() as usize - base;
        start..start + s.len()
    };
    let row = |r: RowIn<'_>, raw: Range<usize>| {
        let text = |c: Cow<'_, str>| match c {
            Cow::Borrowed(s) => Text::At(at(s)),
            Cow::Owned(s) => Text::Own(s.into_boxed_str()),
        };
        Row {
            raw,
            path: text(r.path),
            key: text(r.key),
            sha256: text(r.sha256),
            content_type: text(r.content_type),
            location: r.location.map(text),
            bytes: r.bytes,
            cache: r.cache,
        }
    };
    let file: ManifestIn<RowIn<'_>> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let (head, files) = file.split();
    if let Some(raws) = compact_entries(text, &files, at) {
        return Ok((
            head,
            files
                .into_iter()
                .zip(raws)
                .map(|(r, raw)| row(r, raw))
                .collect(),
        ));
    }
    let file: ManifestIn<&RawValue> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let (head, files) = file.split();
    let mut rows = Vec::with_capacity(files.len());
    for raw in &files {
        let r: RowIn<'_> = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
        rows.push(row(r, at(raw.get())));
    }
    Ok((head, rows))
}

/// Where each entry's JSON is in `text`, when every entry starts `{"path":"` right before its
/// (borrowed) path and the entries are joined by bare commas; `None` otherwise.
fn compact_entries(
    text: &str,
    files: &[RowIn<'_>],
    at: impl Fn(&str) -> Range<usize>,
) -> Option<Vec<Range<usize>>> {
    const OPEN: &str = "{\"path\":\"";
    let bytes = text.as_bytes();
    // Compared as bytes: no slicing of the text at a place not yet known to be ASCII.
    let starts = (files.iter())
        .map(|r| match &r.path {
            Cow::Borrowed(p) => {
                let start = at(p).start.checked_sub(OPEN.len())?;
                bytes[start..].starts_with(OPEN.as_bytes()).then_some(start)
            }
            Cow::Owned(_) => None,
        })
        .collect::<Option<Vec<usize>>>()?;
    let mut raws = Vec::with_capacity(starts.len());
    for (k, &start) in starts.iter().enumerate() {
        let end = match starts.get(k + 1) {
            // The comma before the next entry, right after this one's closing brace.
            Some(&next) => (bytes[next - 1] == b',').then_some(next - 1)?,
            // The last entry: the one entry parsed as a raw value, then the array's close.
            None => {
                let mut d = serde_json::Deserializer::from_str(&text[start..]);
                let raw = <&RawValue>::deserialize(&mut d).ok()?;
                let end = start + raw.get().len();
                (bytes.get(end) == Some(&b']')).then_some(end)?
            }
        };
        (end > start && bytes[end - 1] == b'}').then_some(())?;
        raws.push(start..end);
    }
    Some(raws)
}

impl Carried {
    pub fn read(dir: &Path) -> Result<Carried, OutputError> {
        let path = super::own::manifest(dir);
        let bytes = fencepost_core::mapped::read(&path).map_err(io_err(&path))?;
        Carried::from_bytes(bytes).map_err(|message| OutputError::Manifest { path, message })
    }

    pub fn from_bytes(bytes: impl Into<FileBytes>) -> Result<Carried, String> {
        let bytes = bytes.into();
        let (head, rows) = rows_of(std::str::from_utf8(&bytes).map_err(|e| e.to_string())?)?;
        let mut c = Carried {
            bytes,
            head,
            rows,
            sorted: false,
        };
        c.sorted = (1..c.rows.len()).all(|i| c.path(i - 1).as_bytes() <= c.path(i).as_bytes());
        Ok(c)
    }

    fn text<'a>(&'a self, t: &'a Text) -> &'a str {
        match t {
            Text::At(r) => self.str_at(r.clone()),
            Text::Own(s) => s,
        }
    }

    /// The manifest without its files: id, ledger, audit tip, broken links.
    pub fn head(&self) -> &Manifest {
        &self.head
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether the entries are in path order (by bytes), as every manifest fencepost writes.
    pub fn is_sorted(&self) -> bool {
        self.sorted
    }

    pub fn path(&self, i: usize) -> &str {
        self.text(&self.rows[i].path)
    }

    pub fn key(&self, i: usize) -> &str {
        self.text(&self.rows[i].key)
    }

    pub fn cache(&self, i: usize) -> CacheClass {
        self.rows[i].cache
    }

    fn raw(&self, i: usize) -> &str {
        self.str_at(self.rows[i].raw.clone())
    }

    /// The file's bytes in `r` (a field or an entry found when it was read), as text.
    fn str_at(&self, r: Range<usize>) -> &str {
        std::str::from_utf8(&self.bytes[r]).expect("manifest.json changed in place while read")
    }

    /// Entry `i`, parsed whole.
    pub fn entry(&self, i: usize) -> Entry {
        serde_json::from_str(self.raw(i)).expect("parsed once already")
    }

    /// The internal links of entry `i`.
    pub fn links(&self, i: usize) -> Vec<String> {
        #[derive(Deserialize)]
        struct Links {
            #[serde(default)]
            links: Vec<String>,
        }
        let l: Links = serde_json::from_str(self.raw(i)).expect("parsed once already");
        l.links
    }

    /// The index of the entry at `path`.
    pub fn find(&self, path: &str) -> Option<usize> {
        if !self.sorted {
            return (0..self.len()).find(|&i| self.path(i) == path);
        }
        (self.rows)
            .binary_search_by(|r| self.text(&r.path).as_bytes().cmp(path.as_bytes()))
            .ok()
    }
}

/// One file of the manifest a build writes: its own entry, or the previous revision's
/// entry `index` kept with this revision's cache class.
pub enum File {
    New(Entry),
    Kept { index: usize, cache: CacheClass },
}

impl File {
    /// Its path; `prev` is the manifest a kept file indexes into.
    pub fn path<'a>(&'a self, prev: Option<&'a Carried>) -> &'a str {
        match self {
            File::New(e) => &e.path,
            File::Kept { index, .. } => prev
                .expect("a kept file comes from the previous manifest")
                .path(*index),
        }
    }
}

/// The manifest a build writes, its kept entries still in the previous one's bytes.
pub struct Assembled<'a> {
    /// Everything but the files (`files` is empty).
    pub head: Manifest,
    /// In path order.
    pub files: Vec<File>,
    pub prev: Option<&'a Carried>,
    /// Whether a kept entry's raw JSON is what this build would write (see the module doc).
    pub raw_ok: bool,
}

impl Assembled<'_> {
    fn carried(&self) -> &Carried {
        self.prev
            .expect("a kept file comes from the previous manifest")
    }

    /// Whether `f` is written as the previous manifest's bytes of it.
    fn copies_raw(&self, f: &File) -> bool {
        match f {
            File::New(_) => false,
            File::Kept { index, cache } => self.raw_ok && self.carried().cache(*index) == *cache,
        }
    }

    /// The JSON written as it is made, for a manifest that is mostly the previous one's
    /// entries (a build after one publish): each run of kept entries that lie side by side in
    /// the previous file (commas and all) written straight from its mapped bytes, the rest
    /// serialised through a small buffer. Made whole first, a 10,000-file manifest took ~5 MB
    /// of fresh memory (~1,300 pages faulted in, zeroed and torn down) to write 4 MB.
    fn stream_json(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        use std::io::Write;
        let mut w = std::io::BufWriter::with_capacity(64 * 1024, out);
        w.write_all(&Json::open(&self.head))?;
        let mut run: Option<Range<usize>> = None;
        for (i, f) in self.files.iter().enumerate() {
            if let (true, File::Kept { index, .. }) = (self.copies_raw(f), f) {
                let c = self.carried();
                let r = c.rows[*index].raw.clone();
                match &mut run {
                    // The next entry of the previous file: the run takes its comma and it.
                    Some(p) if p.end + 1 == r.start && c.bytes[p.end] == b',' => p.end = r.end,
                    _ => {
                        if let Some(p) = run.take() {
                            w.write_all(&c.bytes[p])?;
                        }
                        if i > 0 {
                            w.write_all(b",")?;
                        }
                        run = Some(r);
                    }
                }
                continue;
            }
            if let Some(p) = run.take() {
                w.write_all(&self.carried().bytes[p])?;
            }
            if i > 0 {
                w.write_all(b",")?;
            }
            self.write_entry(f, &mut w)?;
        }
        if let Some(p) = run.take() {
            w.write_all(&self.carried().bytes[p])?;
        }
        w.write_all(Json::CLOSE)?;
        w.flush()
    }

    /// File `f`'s entry: the previous manifest's bytes of it where they are what this build
    /// writes ([`Assembled::copies_raw`]), else serialised.
    fn write_entry(&self, f: &File, out: &mut impl std::io::Write) -> std::io::Result<()> {
        match f {
            File::Kept { index, .. } if self.copies_raw(f) => {
                out.write_all(self.carried().raw(*index).as_bytes())
            }
            File::Kept { index, cache } => Ok(serde_json::to_writer(
                out,
                &self.kept_entry(*index, *cache),
            )?),
            File::New(e) => Ok(serde_json::to_writer(out, e)?),
        }
    }

    fn kept_entry(&self, index: usize, cache: CacheClass) -> Entry {
        let mut e = self.carried().entry(index);
        e.cache = cache;
        e.max_age = cache.max_age();
        e
    }

    /// Every entry owned: a manifest as [`Manifest`] holds it (for what edits the file list,
    /// the transparency log).
    pub fn into_manifest(self) -> Manifest {
        let files = (self.files.iter())
            .map(|f| match f {
                File::New(e) => e.clone(),
                File::Kept { index, cache } => self.kept_entry(*index, *cache),
            })
            .collect();
        Manifest { files, ..self.head }
    }

    /// The JSON, kept entries copied as they were where they can be.
    pub fn to_json(&self) -> Json {
        use rayon::prelude::*;
        let chunks = (self.files.par_chunks(4096))
            .map(|chunk| {
                // Sized to what it will hold (a kept entry's JSON is known; a new one's is
                // guessed): a buffer that doubles copies the ~1 MB written so far each time.
                let size = |f: &File| match f {
                    File::Kept { index, .. } => self.carried().raw(*index).len() + 1,
                    File::New(_) => 1024,
                };
                let mut buf = Vec::with_capacity(chunk.iter().map(size).sum());
                for (i, f) in chunk.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    self.write_entry(f, &mut buf)
                        .expect("entries serialise into memory");
                }
                buf
            })
            .collect();
        Json::new(&self.head, chunks)
    }

    /// `manifest.idx`'s lines, in path order.
    pub fn index_lines(&self) -> Vec<Line<'_>> {
        let mut lines: Vec<Line<'_>> = (self.files.iter())
            .map(|f| match f {
                File::New(e) => Line::of(e),
                File::Kept { index, cache } => {
                    let (c, r) = (self.carried(), &self.carried().rows[*index]);
                    Line {
                        path: c.text(&r.path),
                        sha256: c.text(&r.sha256),
                        bytes: r.bytes,
                        cache: *cache,
                        content_type: c.text(&r.content_type),
                        location: r.location.as_ref().map(|l| c.text(l)),
                    }
                }
            })
            .collect();
        if !lines.is_sorted_by(|a, b| a.path.as_bytes() <= b.path.as_bytes()) {
            lines.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        }
        lines
    }
}

/// What a revision folder's manifest and index are written from: a [`Manifest`], or what a
/// build [`Assembled`].
pub trait Listing: Sync {
    fn to_json(&self) -> Json;
    fn write_index(&self, out: &mut std::fs::File) -> std::io::Result<()>;

    /// The JSON written to `out`: made whole first ([`Listing::to_json`], on every core)
    /// unless the listing can write it as it goes.
    fn write_json(&self, out: &mut std::fs::File) -> std::io::Result<()> {
        self.to_json().write_to(out)
    }
}

impl Listing for Manifest {
    fn to_json(&self) -> Json {
        Manifest::to_json(self)
    }

    fn write_index(&self, out: &mut std::fs::File) -> std::io::Result<()> {
        index::write_to(self, out)
    }
}

impl Listing for Assembled<'_> {
    fn to_json(&self) -> Json {
        Assembled::to_json(self)
    }

    fn write_json(&self, out: &mut std::fs::File) -> std::io::Result<()> {
        let new = (self.files.iter()).filter(|f| !self.copies_raw(f)).count();
        match new > self.files.len() / 8 {
            // Mostly entries to serialise: on every core, as a cold build's.
            true => self.to_json().write_to(out),
            false => self.stream_json(out),
        }
    }

    fn write_index(&self, out: &mut std::fs::File) -> std::io::Result<()> {
        index::write_lines(&self.index_lines(), out)
    }
}

#[cfg(test)]
mod tests;
