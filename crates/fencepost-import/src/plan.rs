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
    /// The config the import would write is one its own site refuses: nothing is written.
    #[error("the site imported from {source_dir} would not load: {why}. Nothing was written: change the source ({hint}) and import again")]
    Refused {
        source_dir: PathBuf,
        why: String,
        hint: String,
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

/// Where a site comes from: the generator whose dialect (front matter, shortcodes, config,
/// URLs) it is written in. `import --from` and the report's `from` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    Hugo,
    Zola,
}

impl std::str::FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> Result<Dialect, String> {
        match s {
            "hugo" => Ok(Dialect::Hugo),
            "zola" => Ok(Dialect::Zola),
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
    pub from: Option<Dialect>,
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
    /// Files of `content/` that belong to no page (a section's images), and Hugo's `assets/`,
    /// copied to `static/` at their path.
    pub section_assets: usize,
    /// Pages (items) imported per language, by code.
    pub languages: std::collections::BTreeMap<String, usize>,
    /// Aliases written: the source's own, and old URLs the new pattern does not give.
    pub aliases: usize,
    pub shortcodes_converted: usize,
    /// Terms written in the spelling another page gave their slug first (Hugo folds case:
    /// `HTML` and `html` are one term).
    pub terms_folded: usize,
    /// Every page whose URL changed (its old URL is an alias of the new one, unless
    /// `not_converted` says why not).
    pub moved: Vec<Moved>,
    pub not_converted: Vec<Unconverted>,
    /// The templates written: `posts` (the starter), `docs` (the docs starter, for a
    /// documentation-shaped Hugo site), `kept` (a Zola site's own).
    pub starter: String,
}

/// A page at a new URL: `from` (its generator's) and `to` (the new site's).
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    pub file: String,
    pub from: String,
    pub to: String,
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
    /// Every page URL and alias written so far, in the spelling publish compares: an alias
    /// another page (or an earlier alias) has is never written twice.
    pub(super) urls_taken: std::collections::BTreeSet<String>,
}

impl Plan {
    pub(super) fn put(&mut self, rel: &str, bytes: impl Into<Vec<u8>>) {
        self.files.push((rel.to_string(), bytes.into()));
    }

    /// Reports (once) a source path that leads out of the source, and where.
    pub(super) fn outside(&mut self, file: &str, to: &Path) {
        if self.report.not_converted.iter().any(|u| u.file == file) {
            return;
        }
        self.report.skip(
            file,
            None,
            "symbolic link",
            &format!(
                "it leads out of the source site (to {}): import reads nothing outside it, so it was not followed",
                to.display()
            ),
        );
    }
}

/// The source's configuration file `name`, refused when it is a link that leads out of `src`.
pub(super) fn read_config_file(src: &Path, name: &str) -> Result<String, ImportError> {
    let path = src.join(name);
    let inside = src.canonicalize().ok();
    let real = path.canonicalize().ok();
    if let (Some(inside), Some(real)) = (inside, real) {
        if !real.starts_with(&inside) {
            return Err(ImportError::Source {
                path,
                line: None,
                why: format!(
                    "a symbolic link that leads out of the source site (to {}): import reads nothing outside it; nothing was written",
                    real.display()
                ),
            });
        }
    }
    read_text(&path)
}

pub(super) fn read_text(path: &Path) -> Result<String, ImportError> {
    std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Every regular file under `src/rel` (none if it is absent), as (path relative to that folder,
/// full path), hidden ones left out, sorted — and never a byte from outside `src`. A git
/// checkout can carry symbolic links, so a source may hold a `static/` or `content/` that
/// links to `~/.ssh`: a link (or `rel` itself) that leads out of `src` is not followed, and
/// is reported with the reason ([`Plan::outside`]); a link to a file inside `src` is read as
/// that file; a link to a folder is not followed (it could loop, or reach out further down).
/// Why a check of our own and not walkdir's alone: walkdir follows a symbolic root unless told
/// not to, and a link to a file is still a way out.
pub(super) fn files_under(src: &Path, rel: &str, plan: &mut Plan) -> Vec<(String, PathBuf)> {
    let dir = src.join(rel);
    let Ok(inside) = src.canonicalize() else {
        return Vec::new();
    };
    let shown = |p: &Path| {
        p.strip_prefix(src)
            .unwrap_or(p)
            .to_string_lossy()
            .replace('\\', "/")
    };
    match dir.canonicalize() {
        Ok(real) if real.starts_with(&inside) => {}
        Ok(real) => {
            plan.outside(&format!("{}/", rel.trim_end_matches('/')), &real);
            return Vec::new();
        }
        Err(_) => return Vec::new(),
    }
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    for e in walkdir::WalkDir::new(&dir)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(Result::ok)
    {
        let path = e.path().to_path_buf();
        let Ok(rel) = path
            .strip_prefix(&dir)
            .map(|r| r.to_string_lossy().replace('\\', "/"))
        else {
            continue;
        };
        if e.path_is_symlink() && e.depth() > 0 {
            match path.canonicalize() {
                Ok(real) if !real.starts_with(&inside) => plan.outside(&shown(&path), &real),
                Ok(real) if real.is_file() => out.push((rel, real)),
                Ok(_) => plan.report.skip(
                    &shown(&path),
                    None,
                    "symbolic link",
                    "a link to a folder is not followed: copy the folder in its place",
                ),
                Err(_) => plan.report.skip(
                    &shown(&path),
                    None,
                    "symbolic link",
                    "a link to nothing: not imported",
                ),
            }
            continue;
        }
        if e.file_type().is_file() {
            out.push((rel, path));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// A folder of the source named by its configuration (Hugo's `contentDir`): a relative path
/// that stays inside the source, or the refusal.
pub(super) fn inside_source(
    config_file: &str,
    key: &str,
    dir: &str,
) -> Result<String, ImportError> {
    let p = Path::new(dir);
    let escapes = p.is_absolute()
        || p.components().any(|c| {
            matches!(
                c,
                std::path::Component::ParentDir
                    | std::path::Component::RootDir
                    | std::path::Component::Prefix(_)
            )
        });
    if escapes {
        return Err(ImportError::Source {
            path: PathBuf::from(config_file),
            line: None,
            why: format!(
                "{key} = {dir:?} leads out of the source site: import reads only inside it. Copy that folder into the site and name it relatively (contentDir = \"content\"); nothing was written"
            ),
        });
    }
    Ok(dir.trim_end_matches('/').to_string())
}
