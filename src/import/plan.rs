//! What an import makes: every file of the new site in memory, and the report; the errors.

use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path} is not empty: import writes a new site (empty the folder or name another; nothing was written)")]
    NotEmpty { path: PathBuf },
    #[error("{path}: no {what} configuration here ({expected}): is this a {what} site?")]
    NoConfig {
        path: PathBuf,
        what: &'static str,
        expected: &'static str,
    },
    #[error("{path}{}: {why}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Source {
        path: PathBuf,
        line: Option<usize>,
        why: String,
    },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Where a site comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum From {
    Hugo,
    Zola,
}

impl std::str::FromStr for From {
    type Err = String;
    fn from_str(s: &str) -> Result<From, String> {
        match s {
            "hugo" => Ok(From::Hugo),
            "zola" => Ok(From::Zola),
            other => Err(format!("{other:?}: import takes hugo or zola")),
        }
    }
}

/// Something of the source that was not carried over, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unconverted {
    /// Source-relative file (`content/post/a.md`, `config.toml`, `layouts/`).
    pub file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub what: String,
    pub why: String,
}

/// What `import` did (`--json`: this object).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub from: Option<From>,
    pub source: PathBuf,
    pub site: PathBuf,
    /// Collection names, one per section.
    pub collections: Vec<String>,
    pub taxonomies: Vec<String>,
    pub items: usize,
    pub drafts: usize,
    pub plain_pages: usize,
    pub bundle_files: usize,
    pub static_files: usize,
    /// Aliases written: the source's own, and old URLs the new pattern does not give.
    pub aliases: usize,
    pub shortcodes_converted: usize,
    pub not_converted: Vec<Unconverted>,
}

impl Report {
    pub(super) fn skip(&mut self, file: &str, line: Option<usize>, what: &str, why: &str) {
        self.not_converted.push(Unconverted {
            file: file.to_string(),
            line,
            what: what.to_string(),
            why: why.to_string(),
        });
    }
}

/// Every file the new site will hold, and the report.
#[derive(Debug, Default)]
pub struct Plan {
    pub files: Vec<(String, Vec<u8>)>,
    pub report: Report,
}

impl Plan {
    pub(super) fn put(&mut self, rel: &str, bytes: impl Into<Vec<u8>>) {
        self.files.push((rel.to_string(), bytes.into()));
    }
}

pub(super) fn read_text(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Every file under `dir` (none if it is absent), as (path relative to `dir`, full path),
/// hidden ones left out, sorted.
pub(super) fn files_under(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .ok()?
                .to_string_lossy()
                .replace('\\', "/");
            Some((rel, e.path().to_path_buf()))
        })
        .collect();
    out.sort();
    out
}
