//! `manifest.idx`: the manifest's file list as one sorted line per file, so that a reader
//! finds a path by binary search over the file, without parsing the whole manifest.
//!
//! The origin opens a new revision's index in constant time instead of parsing a
//! 100,000-entry `manifest.json` on the first request after a pointer swap; each lookup
//! reads a few short stretches of a file the page cache already holds. It is written beside
//! the manifest, before it (a complete revision has both), and is not served or deployed.
//!
//! Format, after the line `fencepost-index 1`: per file, sorted by path (bytes),
//! `<path as a JSON string>\t<sha256>\t<bytes>\t<cache class>\t<content type>\n`, and for a
//! redirect a sixth field, `\t<location as a JSON string>`. A JSON string holds no raw tab or
//! newline, and the other fields are fixed-alphabet.

use super::manifest::{CacheClass, Manifest};
use fencepost_core::mapped::FileBytes;
use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::path::Path;

pub const FILE: &str = super::own::INDEX;
const HEADER: &[u8] = b"fencepost-index 1\n";

/// One file of the revision, as the index records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
    pub cache: CacheClass,
    pub content_type: String,
    /// A redirect's target (see [`super::manifest::Entry::location`]).
    pub location: Option<String>,
}

fn class_name(c: CacheClass) -> &'static str {
    match c {
        CacheClass::Home => "home",
        CacheClass::Content => "content",
        CacheClass::Asset => "asset",
        CacheClass::Immutable => "immutable",
        CacheClass::Gone => "gone",
        CacheClass::Redirect => "redirect",
    }
}

fn class_of(s: &str) -> Option<CacheClass> {
    Some(match s {
        "home" => CacheClass::Home,
        "content" => CacheClass::Content,
        "asset" => CacheClass::Asset,
        "immutable" => CacheClass::Immutable,
        "gone" => CacheClass::Gone,
        "redirect" => CacheClass::Redirect,
        _ => return None,
    })
}

/// The index of `m` (whose files are sorted by path, as every manifest's are), its lines made
/// in parallel chunks.
pub fn to_bytes(m: &Manifest) -> Vec<u8> {
    let mut out = Vec::new();
    write_to(m, &mut out).expect("a Vec takes every write");
    out
}

/// One line of the index: a file as the index records it, borrowed.
pub struct Line<'a> {
    pub path: &'a str,
    pub sha256: &'a str,
    pub bytes: u64,
    pub cache: CacheClass,
    pub content_type: &'a str,
    pub location: Option<&'a str>,
}

impl<'a> Line<'a> {
    pub fn of(e: &'a super::manifest::Entry) -> Line<'a> {
        Line {
            path: &e.path,
            sha256: &e.sha256,
            bytes: e.bytes,
            cache: e.cache,
            content_type: &e.content_type,
            location: e.location.as_deref(),
        }
    }
}

/// [`to_bytes`] written to `out` chunk by chunk, not gathered into one buffer first.
pub fn write_to(m: &Manifest, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let mut lines: Vec<Line<'_>> = m.files.iter().map(Line::of).collect();
    lines.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    write_lines(&lines, out)
}

/// The index of `lines` (sorted by path, bytes), its lines made in parallel chunks.
pub fn write_lines(lines: &[Line<'_>], out: &mut impl std::io::Write) -> std::io::Result<()> {
    use rayon::prelude::*;
    debug_assert!(lines.is_sorted_by(|a, b| a.path.as_bytes() <= b.path.as_bytes()));
    let chunks: Vec<Vec<u8>> = lines
        .par_chunks(4096)
        .map(|chunk| {
            let mut out = Vec::with_capacity(chunk.len() * 160);
            for e in chunk {
                serde_json::to_writer(&mut out, e.path).expect("strings serialise");
                for field in [
                    e.sha256,
                    &e.bytes.to_string(),
                    class_name(e.cache),
                    &e.content_type.replace(['\t', '\n', '\r'], " "),
                ] {
                    out.push(b'\t');
                    out.extend_from_slice(field.as_bytes());
                }
                if let Some(location) = e.location {
                    out.push(b'\t');
                    serde_json::to_writer(&mut out, location).expect("strings serialise");
                }
                out.push(b'\n');
            }
            out
        })
        .collect();
    out.write_all(HEADER)?;
    for c in chunks {
        out.write_all(&c)?;
    }
    Ok(())
}

/// An open index.
pub struct Index {
    file: File,
    len: u64,
}

fn corrupt(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{FILE}: {why}"))
}

impl Index {
    /// Opens the index in `dir`; `None` when the revision has none (built before indexes).
    pub fn open(dir: &Path) -> io::Result<Option<Index>> {
        let file = match File::open(super::own::index(dir)) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Index::from_file(file).map(Some)
    }

    pub fn from_file(file: File) -> io::Result<Index> {
        let len = file.metadata()?.len();
        let mut head = vec![0; HEADER.len()];
        if len < HEADER.len() as u64 {
            return Err(corrupt("too short"));
        }
        fencepost_core::os::read_exact_at(&file, &mut head, 0)?;
        if head != HEADER {
            return Err(corrupt("not a fencepost index (version 1)"));
        }
        Ok(Index { file, len })
    }

    /// The first line start at or after `at` (`at` itself when it follows a newline).
    fn line_start(&self, at: u64) -> io::Result<u64> {
        let mut pos = at - 1;
        let mut buf = [0u8; 512];
        while pos < self.len {
            let n = fencepost_core::os::read_at(&self.file, &mut buf, pos)?;
            if n == 0 {
                break;
            }
            if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
                return Ok(pos + i as u64 + 1);
            }
            pos += n as u64;
        }
        Ok(self.len)
    }

    /// The line starting at `at`, without its newline, and where the next one starts.
    fn line(&self, at: u64) -> io::Result<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        let mut buf = [0u8; 512];
        let mut pos = at;
        while pos < self.len {
            let n = fencepost_core::os::read_at(&self.file, &mut buf, pos)?;
            if n == 0 {
                break;
            }
            if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
                out.extend_from_slice(&buf[..i]);
                return Ok((out, pos + i as u64 + 1));
            }
            out.extend_from_slice(&buf[..n]);
            pos += n as u64;
        }
        Err(corrupt("the last line has no newline"))
    }

    /// The record for `path`, if the revision has that file.
    pub fn get(&self, path: &str) -> io::Result<Option<Record>> {
        let (mut lo, mut hi) = (HEADER.len() as u64, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let mut start = if mid == lo { lo } else { self.line_start(mid)? };
            if start >= hi {
                // No line starts in [mid, hi): look at the one at lo.
                start = lo;
            }
            let (line, next) = self.line(start)?;
            let record = parse(&line)?;
            match record.path.as_bytes().cmp(path.as_bytes()) {
                std::cmp::Ordering::Equal => return Ok(Some(record)),
                std::cmp::Ordering::Less => lo = next,
                std::cmp::Ordering::Greater => hi = start,
            }
        }
        Ok(None)
    }
}

/// Every path the index in `dir` lists, in its (byte) order; `None` when the revision has no
/// index. One read of the file, no per-line allocation but the path itself.
pub fn paths(dir: &Path) -> io::Result<Option<Vec<String>>> {
    let Some(bytes) = read(dir)? else {
        return Ok(None);
    };
    lines_of(&bytes, |path, _| Ok(path.into_owned())).map(Some)
}

/// Every file the index bytes `bytes` (as [`read`] gives them) list, as (path, sha256 as its
/// 64 hex digits), in their (byte) order; each borrowed from the bytes (a path with an escape
/// in its JSON string decoded): comparing two revisions' indexes (the spare's and the live
/// one's, ~10,000 lines each at 10,000 items) allocates nothing per line.
pub fn hashes_in(bytes: &[u8]) -> io::Result<Vec<(Cow<'_, str>, &[u8])>> {
    lines_of(bytes, |path, rest| {
        let sha256 = rest
            .get(..64)
            .filter(|f| rest.get(64).is_none_or(|&b| b == b'\t') && is_hex(f))
            .ok_or_else(|| corrupt("a line's sha256 is not 64 hex digits"))?;
        Ok((path, sha256))
    })
}

/// Whether every byte is an ASCII hex digit (branch-free per byte, so the compiler can do
/// many at once: a live index's and a spare's at 10,000 lines each checked byte by byte with
/// an early exit were a measurable share of a one-item build).
fn is_hex(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &c| {
        ok & (c.is_ascii_digit() | matches!(c | 0x20, b'a'..=b'f'))
    })
}

/// Each line of index bytes `bytes` (the header checked) made one `T` by `f`, given its path
/// (decoded; borrowed unless its JSON string has an escape) and the rest of the line after the
/// path's tab. Lines and fields are found with `memchr` (SIMD), not a byte-at-a-time split.
fn lines_of<'a, T>(
    bytes: &'a [u8],
    f: impl Fn(Cow<'a, str>, &'a [u8]) -> io::Result<T>,
) -> io::Result<Vec<T>> {
    let body = &bytes[HEADER.len()..];
    let mut out = Vec::with_capacity(body.len() / 128);
    let mut start = 0;
    while start < body.len() {
        let end = memchr::memchr(b'\n', &body[start..]).map_or(body.len(), |i| start + i);
        let line = &body[start..end];
        start = end + 1;
        if line.is_empty() {
            continue;
        }
        let (field, rest) = match memchr::memchr(b'\t', line) {
            Some(i) => (&line[..i], &line[i + 1..]),
            None => (line, &[][..]),
        };
        if field.len() < 2 || field[0] != b'"' || field[field.len() - 1] != b'"' {
            return Err(corrupt("a line's path is not a JSON string"));
        }
        let inner = &field[1..field.len() - 1];
        let path = if memchr::memchr(b'\\', inner).is_some() {
            Cow::Owned(
                serde_json::from_slice(field)
                    .map_err(|_| corrupt("a line's path is not a JSON string"))?,
            )
        } else {
            Cow::Borrowed(std::str::from_utf8(inner).map_err(|_| corrupt("a line is not UTF-8"))?)
        };
        out.push(f(path, rest)?);
    }
    Ok(out)
}

/// How many files the index in `dir` lists; `None` when the revision has none.
pub fn count(dir: &Path) -> io::Result<Option<usize>> {
    Ok(read(dir)?.map(|b| memchr::memchr_iter(b'\n', &b[HEADER.len()..]).count()))
}

/// The whole index in `dir` (mapped: `fencepost_core::mapped`), its header checked, for
/// [`hashes_in`]; `None` when the revision has none.
pub fn read(dir: &Path) -> io::Result<Option<FileBytes>> {
    let bytes = match fencepost_core::mapped::read(&super::own::index(dir)) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !bytes.starts_with(HEADER) {
        return Err(corrupt("not a fencepost index (version 1)"));
    }
    Ok(Some(bytes))
}

fn parse(line: &[u8]) -> io::Result<Record> {
    let text = std::str::from_utf8(line).map_err(|_| corrupt("a line is not UTF-8"))?;
    let mut f = text.splitn(6, '\t');
    let mut next = || f.next().ok_or_else(|| corrupt("a line has too few fields"));
    let path: String =
        serde_json::from_str(next()?).map_err(|_| corrupt("a line's path is not a JSON string"))?;
    let sha256 = next()?.to_string();
    let bytes = next()?
        .parse()
        .map_err(|_| corrupt("a line's size is not a number"))?;
    let cache = class_of(next()?).ok_or_else(|| corrupt("a line's cache class is unknown"))?;
    let content_type = next()?.to_string();
    let location = match f.next() {
        None => None,
        Some(l) => Some(
            serde_json::from_str(l)
                .map_err(|_| corrupt("a line's location is not a JSON string"))?,
        ),
    };
    Ok(Record {
        path,
        sha256,
        bytes,
        cache,
        content_type,
        location,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Entry;

    fn entry(path: &str) -> Entry {
        Entry {
            path: path.into(),
            sha256: format!("{:064x}", path.len()),
            bytes: path.len() as u64,
            content_type: super::super::manifest::content_type(path).into(),
            cache: if path.starts_with("images/") {
                CacheClass::Immutable
            } else {
                CacheClass::Content
            },
            max_age: 0,
            location: None,
            key: String::new(),
            links: Vec::new(),
        }
    }

    fn index_of(paths: &[&str]) -> (tempfile::TempDir, Index) {
        let mut files: Vec<Entry> = paths.iter().map(|p| entry(p)).collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let m = Manifest::of_files(files);
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE), to_bytes(&m)).unwrap();
        let i = Index::open(d.path()).unwrap().unwrap();
        (d, i)
    }

    #[test]
    fn finds_every_path_and_nothing_else() {
        let mut paths: Vec<String> = (0..5000)
            .map(|i| format!("answers/{i}/index.html"))
            .collect();
        paths.extend([
            "index.html".into(),
            "404.html".into(),
            "images/ab.webp".into(),
            "odd \"name\"\twith tab/ü.html".into(),
            "a".repeat(3000),
        ]);
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let (_d, idx) = index_of(&refs);
        for p in &paths {
            let r = idx
                .get(p)
                .unwrap()
                .unwrap_or_else(|| panic!("{p} not found"));
            assert_eq!(&r.path, p);
            assert_eq!(r.bytes, p.len() as u64);
        }
        for missing in [
            "",
            "answers/5000/index.html",
            "answers/",
            "zzz",
            "answers/1/index.htm",
            "0",
        ] {
            assert_eq!(idx.get(missing).unwrap(), None, "{missing:?}");
        }
        assert_eq!(
            idx.get("images/ab.webp").unwrap().unwrap().cache,
            CacheClass::Immutable
        );
        // The whole list, in byte order, escapes undone.
        let mut sorted = paths.clone();
        sorted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        assert_eq!(super::paths(_d.path()).unwrap().unwrap(), sorted);
        assert_eq!(super::count(_d.path()).unwrap(), Some(sorted.len()));
        // The same with each sha256, borrowed from the bytes but where a path had escapes.
        let bytes = super::read(_d.path()).unwrap().unwrap();
        let hashes = hashes_in(&bytes).unwrap();
        let got: Vec<&str> = hashes.iter().map(|(p, _)| &**p).collect();
        assert_eq!(got, sorted);
        for (p, sha) in &hashes {
            assert_eq!(*sha, format!("{:064x}", p.len()).as_bytes());
            let escaped = p.contains(['"', '\t']);
            assert_eq!(matches!(p, Cow::Owned(_)), escaped, "{p:?}");
        }
    }

    /// Guards: a line whose sha256 is not exactly 64 hex digits is refused, not compared.
    #[test]
    fn hashes_in_refuses_a_sha256_that_is_not_64_hex_digits() {
        let sha = "ab".repeat(32);
        let h = std::str::from_utf8(HEADER).unwrap();
        let line = |sha: &str| format!("{h}\"a.html\"\t{sha}\t3\tcontent\ttext/html\n");
        let ok = line(&sha);
        assert_eq!(hashes_in(ok.as_bytes()).unwrap()[0].1, sha.as_bytes());
        assert!(hashes_in(line(&sha.to_uppercase()).as_bytes()).is_ok());
        assert!(hashes_in(format!("{h}\"a.html\"\t{sha}\n").as_bytes()).is_ok());
        for bad in [
            &sha[..63],
            &format!("{sha}0")[..],
            &format!("{}g", &sha[..63])[..],
            "",
        ] {
            let e = hashes_in(line(bad).as_bytes()).unwrap_err().to_string();
            assert!(e.contains("64 hex digits"), "{bad:?}: {e}");
        }
        let e = hashes_in(format!("{h}a.html\t{sha}\n").as_bytes()).unwrap_err();
        assert!(e.to_string().contains("JSON string"), "{e}");
    }

    #[test]
    fn empty_and_single_entry_indexes() {
        let (_d, idx) = index_of(&[]);
        assert_eq!(idx.get("index.html").unwrap(), None);
        let (_d, idx) = index_of(&["index.html"]);
        assert!(idx.get("index.html").unwrap().is_some());
        assert_eq!(idx.get("a").unwrap(), None);
        assert_eq!(idx.get("z").unwrap(), None);
    }

    #[test]
    fn a_file_that_is_not_an_index_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE), "{}").unwrap();
        assert!(Index::open(d.path()).is_err());
        assert!(super::paths(d.path()).is_err());
        assert!(super::paths(tempfile::tempdir().unwrap().path())
            .unwrap()
            .is_none());
        assert!(Index::open(tempfile::tempdir().unwrap().path())
            .unwrap()
            .is_none());
    }
}
