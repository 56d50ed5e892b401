//! `manifest.json`: every file of a revision with its sha256, size, content type and cache
//! rule, plus the build's own bookkeeping (the inputs key that decides reuse, and a page's
//! internal links for the link check).

use super::id::RevisionId;
use super::{io_err, OutputError};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FILE: &str = super::own::MANIFEST;

/// How caches may keep a file. A URL that names a file by its path is answered differently
/// by the next revision, and no purge reaches every edge: every cache must revalidate it
/// (`max-age=0, must-revalidate` with its strong ETag, so a revalidation is a cheap 304). Only
/// a URL that names its bytes — a content hash in the name — may be kept long.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheClass {
    /// The home page: revalidated; changes with every publication.
    Home,
    /// Every other page, list, feed, sitemap and 404: revalidated.
    Content,
    /// A static file under its own path: revalidated.
    Asset,
    /// A URL that names its bytes (`/images/<sha256>.<ext>`, a fingerprinted static file):
    /// `public, max-age=31536000, immutable`.
    Immutable,
    /// A withdrawn item's notice page (`on_withdraw = "notice"`): revalidated, and served
    /// with status 410 Gone by every origin.
    Gone,
    /// An alias of an item (its old URL): an HTML page that sends a browser on (for a static
    /// host), answered by every origin as a 301 to the entry's `location`; revalidated.
    Redirect,
}

/// A year: the lifetime of a URL that names its bytes.
pub const IMMUTABLE_MAX_AGE: u64 = 31_536_000;

impl CacheClass {
    /// Seconds any cache (browser, CDN) may keep the response without revalidating it.
    pub fn max_age(self) -> u64 {
        match self {
            CacheClass::Immutable => IMMUTABLE_MAX_AGE,
            _ => 0,
        }
    }

    /// The `Cache-Control` value every response of this class carries.
    pub fn cache_control(self) -> &'static str {
        match self {
            CacheClass::Immutable => "public, max-age=31536000, immutable",
            _ => "public, max-age=0, must-revalidate",
        }
    }

    /// Whether what the URL shows can change at the next embargo end (pages do; a static
    /// file's or an image's bytes do not).
    pub fn capped_by_embargo(self) -> bool {
        matches!(
            self,
            CacheClass::Home | CacheClass::Content | CacheClass::Gone | CacheClass::Redirect
        )
    }

    /// The status a URL of this class is answered with: 410 for a withdrawal notice.
    pub fn status(self) -> u16 {
        match self {
            CacheClass::Gone => 410,
            CacheClass::Redirect => 301,
            _ => 200,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Path inside the revision, `/`-separated, no leading slash.
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
    pub content_type: String,
    pub cache: CacheClass,
    /// Seconds any cache may keep the file without revalidating (0, or a year for a URL that
    /// names its bytes).
    pub max_age: u64,
    /// Hash of everything that went into the file; equal keys mean equal bytes.
    pub key: String,
    /// Site-internal links of an HTML page, as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
    /// A redirect's target, a site URL (`/answers/3/`): what every origin answers it with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "ManifestIn<Entry>")]
pub struct Manifest {
    /// `R` and `B`. In JSON, `revision` comes first and `build` after `audit_tip`: a contract
    /// (manifests on disk are read by every origin and hashed as bytes), kept by
    /// `ManifestOut` and `ManifestIn` below.
    pub id: RevisionId,
    /// The ledger the revision was built from (absent in manifests older than the field).
    pub ledger_id: Option<String>,
    /// The audit chain's tip when the revision's snapshot was read: `verify` checks that the
    /// chain still holds it.
    pub audit_tip: Option<AuditAnchor>,
    pub preview: bool,
    /// (page, link) pairs whose target is not in this revision.
    pub broken_links: Vec<(String, String)>,
    pub files: Vec<Entry>,
}

/// A manifest's JSON as written, field by field in the contract's order, borrowing the
/// manifest (a big one is never copied to be written).
#[derive(Serialize)]
struct ManifestOut<'a> {
    revision: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ledger_id: Option<&'a String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    audit_tip: Option<&'a AuditAnchor>,
    build: &'a str,
    preview: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    broken_links: &'a [(String, String)],
    files: &'a [Entry],
}

impl Serialize for Manifest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ManifestOut {
            revision: self.id.revision,
            ledger_id: self.ledger_id.as_ref(),
            audit_tip: self.audit_tip.as_ref(),
            build: &self.id.fingerprint,
            preview: self.preview,
            broken_links: &self.broken_links,
            files: &self.files,
        }
        .serialize(s)
    }
}

/// A manifest's JSON as read (older manifests lack `ledger_id`, `audit_tip` and
/// `broken_links`), its files as `F`: owned entries, or each entry's raw JSON
/// (`carried.rs`).
#[derive(Deserialize)]
pub(crate) struct ManifestIn<F> {
    revision: i64,
    #[serde(default)]
    ledger_id: Option<String>,
    #[serde(default)]
    audit_tip: Option<AuditAnchor>,
    build: String,
    preview: bool,
    #[serde(default)]
    broken_links: Vec<(String, String)>,
    files: Vec<F>,
}

impl<F> ManifestIn<F> {
    /// The manifest without its files, and the files.
    pub(crate) fn split(self) -> (Manifest, Vec<F>) {
        let head = Manifest {
            id: RevisionId::new(self.revision, self.build),
            ledger_id: self.ledger_id,
            audit_tip: self.audit_tip,
            preview: self.preview,
            broken_links: self.broken_links,
            files: Vec::new(),
        };
        (head, self.files)
    }
}

impl From<ManifestIn<Entry>> for Manifest {
    fn from(m: ManifestIn<Entry>) -> Manifest {
        let (head, files) = m.split();
        Manifest { files, ..head }
    }
}

/// An audit chain position: entry `seq` with hash `hash` (seq 0: the empty chain).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditAnchor {
    pub seq: i64,
    pub hash: Option<String>,
}

/// A manifest's JSON in the chunks [`Manifest::to_json`] made.
pub struct Json {
    head: Vec<u8>,
    chunks: Vec<Vec<u8>>,
}

impl Json {
    /// The JSON of `head` (a manifest whose `files` are left out) with `chunks` as its files:
    /// each chunk entries joined by commas.
    pub(crate) fn new(head: &Manifest, chunks: Vec<Vec<u8>>) -> Json {
        Json {
            head: Json::open(head),
            chunks,
        }
    }

    /// `head`'s JSON up to and with the `[` that opens its files.
    pub(crate) fn open(head: &Manifest) -> Vec<u8> {
        let mut head =
            serde_json::to_vec(&head.clone_without_files()).expect("manifests serialise");
        // `..."files":[]}`: open the array again and splice the entries in.
        debug_assert!(head.ends_with(b"[]}"));
        head.truncate(head.len() - 2);
        head
    }

    /// What follows the last entry.
    pub(crate) const CLOSE: &'static [u8] = b"]}\n";

    /// The bytes, in order: the head, the entries' chunks joined by commas, the close.
    pub fn write_to(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        out.write_all(&self.head)?;
        for (i, c) in self.chunks.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            out.write_all(c)?;
        }
        out.write_all(Json::CLOSE)
    }
}

impl Manifest {
    pub fn read(dir: &Path) -> Result<Manifest, OutputError> {
        let path = super::own::manifest(dir);
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        serde_json::from_slice(&bytes).map_err(|e| OutputError::Manifest {
            path,
            message: e.to_string(),
        })
    }

    /// Reads only the ledger id of the manifest in `dir` (without its file list).
    /// Its first 64 KiB are read first (the field is in the first hundred bytes of every
    /// manifest that has it); the whole file only when they do not settle it.
    pub fn read_ledger_id(dir: &Path) -> Result<Option<String>, OutputError> {
        use std::io::Read;
        const HEAD: u64 = 64 * 1024;
        let path = super::own::manifest(dir);
        let mut head = Vec::new();
        let file = std::fs::File::open(&path).map_err(io_err(&path))?;
        file.take(HEAD)
            .read_to_end(&mut head)
            .map_err(io_err(&path))?;
        match ledger_id_of(&head) {
            Ok(Some(id)) => return Ok(Some(id)),
            Ok(None) if (head.len() as u64) < HEAD => return Ok(None),
            _ => {}
        }
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        ledger_id_of(&bytes).map_err(|e| OutputError::Manifest {
            path,
            message: e.to_string(),
        })
    }

    /// The manifest as JSON (one line). Byte for byte what `serde_json::to_vec` gives, but
    /// the file list (`files` is the last field) is serialised in parallel chunks.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.to_json()
            .write_to(&mut out)
            .expect("a Vec takes every write");
        out
    }

    /// [`Manifest::to_bytes`] as its chunks, to be written one after another: a
    /// 100,000-entry manifest is ~40 MB, and gathering the chunks into one buffer first cost
    /// a copy of them all (and the buffer's growth) at the end of every build.
    pub fn to_json(&self) -> Json {
        use rayon::prelude::*;
        let chunks = self
            .files
            .par_chunks(4096)
            .map(|chunk| {
                let mut buf = Vec::with_capacity(chunk.len() * 256);
                for (i, e) in chunk.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    serde_json::to_writer(&mut buf, e).expect("entries serialise");
                }
                buf
            })
            .collect();
        Json::new(self, chunks)
    }

    fn clone_without_files(&self) -> Manifest {
        Manifest {
            id: self.id.clone(),
            ledger_id: self.ledger_id.clone(),
            audit_tip: self.audit_tip.clone(),
            preview: self.preview,
            broken_links: self.broken_links.clone(),
            files: Vec::new(),
        }
    }

    pub fn find(&self, path: &str) -> Option<&Entry> {
        self.files
            .binary_search_by(|e| e.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }
}

/// Content type by file extension.
pub fn content_type(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "xml" => "application/xml",
        "txt" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "pdf" => "application/pdf",
        "wasm" => "application/wasm",
        _ => "application/octet-stream",
    }
}

impl Manifest {
    /// A revision-1 manifest of build `b` over `files`: what the tests of the crates that
    /// read manifests (bucket, build) start from.
    pub fn of_files(files: Vec<Entry>) -> Manifest {
        Manifest {
            id: RevisionId::new(1, "b"),
            ledger_id: None,
            audit_tip: None,
            preview: false,
            broken_links: Vec::new(),
            files,
        }
    }
}

/// The `ledger_id` of a manifest's JSON, read up to that field and no further: every manifest
/// written since the field exists has it before the file list, so a cron tick that finds its
/// revision built no longer scans a 40 MB file list to learn it (~50 ms at 100,000 files). A
/// manifest without the field (a preview's, or one older than it) is read to its end, as
/// before; one that is not JSON is still an error.
fn ledger_id_of(bytes: &[u8]) -> Result<Option<String>, serde_json::Error> {
    use serde::de::{Deserializer, Error, IgnoredAny, MapAccess, Visitor};
    use std::cell::RefCell;
    /// What the visitor found; `Some` once it stopped at the field.
    struct Head<'a>(&'a RefCell<Option<Option<String>>>);
    impl<'de> Visitor<'de> for Head<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a manifest object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "ledger_id" {
                    *self.0.borrow_mut() = Some(map.next_value()?);
                    // Stops the parse here; the caller knows it stopped on purpose.
                    return Err(A::Error::custom("stopped at ledger_id"));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let found = RefCell::new(None);
    let parsed = serde_json::Deserializer::from_slice(bytes).deserialize_map(Head(&found));
    match (found.into_inner(), parsed) {
        (Some(id), _) => Ok(id),
        (None, Ok(())) => Ok(None),
        (None, Err(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_id_is_read_from_the_head_whatever_follows() {
        let full = |id: Option<&str>| {
            let mut m = Manifest {
                id: RevisionId::new(7, "abc"),
                ledger_id: id.map(str::to_string),
                audit_tip: None,
                preview: false,
                broken_links: Vec::new(),
                files: Vec::new(),
            };
            m.files.push(Entry {
                path: "a/index.html".into(),
                sha256: "0".repeat(64),
                bytes: 1,
                content_type: "text/html".into(),
                cache: CacheClass::Content,
                max_age: CacheClass::Content.max_age(),
                key: "k".into(),
                links: vec!["/ledger_id/".into()],
                location: None,
            });
            m.to_bytes()
        };
        assert_eq!(
            ledger_id_of(&full(Some("L1"))).unwrap().as_deref(),
            Some("L1")
        );
        assert_eq!(ledger_id_of(&full(None)).unwrap(), None);
        // The head is enough: what follows the field is not read.
        let written = full(Some("L2"));
        let cut = &written[..written.windows(7).position(|w| w == b"\"files\"").unwrap() + 20];
        assert_eq!(ledger_id_of(cut).unwrap().as_deref(), Some("L2"));
        // The field after the file list (as no release writes it) is still found.
        let late = br#"{"revision":1,"build":"b","preview":false,"files":[],"ledger_id":"L3"}"#;
        assert_eq!(ledger_id_of(late).unwrap().as_deref(), Some("L3"));
        // Not JSON, or cut before the field: an error, not "no id".
        assert!(ledger_id_of(b"not json").is_err());
        assert!(ledger_id_of(&full(Some("L4"))[..10]).is_err());
    }

    /// A manifest's JSON is a contract (every origin reads it, and the previous release's
    /// manifests must still read): its keys in this order, the optional ones left out when
    /// empty, and what is read writes back the same bytes.
    #[test]
    fn a_manifests_json_keeps_its_keys_in_their_order() {
        let m = Manifest {
            id: RevisionId::new(3, "b1"),
            ledger_id: Some("L".into()),
            audit_tip: Some(AuditAnchor {
                seq: 2,
                hash: Some("h".into()),
            }),
            preview: false,
            broken_links: vec![("a/index.html".into(), "/x/".into())],
            files: vec![],
        };
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(
            json,
            r#"{"revision":3,"ledger_id":"L","audit_tip":{"seq":2,"hash":"h"},"build":"b1","preview":false,"broken_links":[["a/index.html","/x/"]],"files":[]}"#
        );
        assert_eq!(serde_json::from_str::<Manifest>(&json).unwrap(), m);
        // One from before ledger ids, audit tips and the link check.
        let old = r#"{"revision":1,"build":"b","preview":true,"files":[]}"#;
        let m = serde_json::from_str::<Manifest>(old).unwrap();
        assert_eq!(m.id, RevisionId::new(1, "b"));
        assert_eq!(serde_json::to_string(&m).unwrap(), old);
    }

    #[test]
    fn the_parallel_serialisation_is_serde_json_byte_for_byte() {
        let entry = |i: usize| Entry {
            path: format!("answers/{i}/index.html"),
            sha256: format!("{i:064x}"),
            bytes: i as u64,
            content_type: "text/html; charset=utf-8".into(),
            cache: if i.is_multiple_of(3) {
                CacheClass::Immutable
            } else {
                CacheClass::Content
            },
            max_age: 0,
            location: None,
            key: format!("k\"{i}\\"),
            links: (0..i % 4).map(|l| format!("/answers/{l}/")).collect(),
        };
        for n in [0, 1, 4095, 4096, 4097, 10_000] {
            let m = Manifest {
                id: RevisionId::new(7, "b"),
                ledger_id: Some("id".into()),
                audit_tip: Some(AuditAnchor { seq: 3, hash: None }),
                preview: false,
                broken_links: vec![("a.html".into(), "/b/".into())],
                files: (0..n).map(entry).collect(),
            };
            let mut want = serde_json::to_vec(&m).unwrap();
            want.push(b'\n');
            assert!(m.to_bytes() == want, "{n} entries");
        }
    }

    /// Manifests written before the schedule left the revision (issue 18) still read; the
    /// instants they carried are dropped, and a manifest written now carries none.
    #[test]
    fn an_old_manifest_with_schedule_instants_reads_and_a_new_one_has_none() {
        let old =
            br#"{"revision":2,"build":"b","preview":false,"next_change_at":"2026-12-02T00:10:00Z",
            "files":[{"path":"index.html","sha256":"00","bytes":1,"content_type":"text/html",
            "cache":"home","max_age":0,"cache_until":"2026-12-02T00:10:00Z","key":"k"}]}"#;
        let m: Manifest = serde_json::from_slice(old).unwrap();
        assert_eq!(m.files.len(), 1);
        let again = String::from_utf8(m.to_bytes()).unwrap();
        assert!(!again.contains("2026-12-02"), "{again}");
        assert!(!again.contains("next_change_at") && !again.contains("cache_until"));
    }
}
