//! `manifest.json`: every file of a revision with its sha256, size, content type and cache
//! rule, plus the build's own bookkeeping (the inputs key that decides reuse, and a page's
//! internal links for the link check).

use super::{io_err, OutputError};
use crate::clock::Instant;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FILE: &str = "manifest.json";

/// How long a cache may keep a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheClass {
    /// Home page: at most 60 s, capped at the next embargo end.
    Home,
    /// Every other page, list, feed and sitemap: at most 300 s, capped at the next embargo end.
    Content,
    /// Static files and images: an hour; their bytes cannot change within a revision.
    Asset,
}

impl CacheClass {
    pub fn max_age(self) -> u64 {
        match self {
            CacheClass::Home => 60,
            CacheClass::Content => 300,
            CacheClass::Asset => 3600,
        }
    }

    pub fn capped_by_embargo(self) -> bool {
        !matches!(self, CacheClass::Asset)
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
    /// The origin's own cache lifetime in seconds (browsers always get max-age=0).
    pub max_age: u64,
    /// No cache may keep the file past this instant (the next embargo end), if any.
    pub cache_until: Option<Instant>,
    /// Hash of everything that went into the file; equal keys mean equal bytes.
    pub key: String,
    /// Site-internal links of an HTML page, as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub revision: i64,
    /// The ledger the revision was built from (absent in manifests older than the field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_id: Option<String>,
    pub build: String,
    pub preview: bool,
    pub next_change_at: Option<Instant>,
    /// (page, link) pairs whose target is not in this revision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub broken_links: Vec<(String, String)>,
    pub files: Vec<Entry>,
}

impl<'de> Deserialize<'de> for Instant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Instant::parse_rfc3339(&s).map_err(serde::de::Error::custom)
    }
}

impl Manifest {
    pub fn read(dir: &Path) -> Result<Manifest, OutputError> {
        let path = dir.join(FILE);
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        serde_json::from_slice(&bytes).map_err(|e| OutputError::Manifest {
            path,
            message: e.to_string(),
        })
    }

    /// Reads only the ledger id of the manifest in `dir` (without its file list).
    pub fn read_ledger_id(dir: &Path) -> Result<Option<String>, OutputError> {
        #[derive(Deserialize)]
        struct Head {
            #[serde(default)]
            ledger_id: Option<String>,
        }
        let path = dir.join(FILE);
        let bytes = std::fs::read(&path).map_err(io_err(&path))?;
        let head: Head = serde_json::from_slice(&bytes).map_err(|e| OutputError::Manifest {
            path,
            message: e.to_string(),
        })?;
        Ok(head.ledger_id)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(self).expect("manifests serialise");
        out.push(b'\n');
        out
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
