//! The content tree: answer items as Markdown files with TOML front matter (`+++`), and a scan
//! that tells which files changed since the ledger last saw them.
//!
//! The scan keeps a stat cache in the ledger (size, mtime, inode, like git's index), so a run
//! over a large unchanged tree stats every file but reads only the ones that changed. A file
//! modified within [`RACY_WINDOW`] of the scan is always re-read: its mtime cannot yet tell a
//! second edit apart from the first.

use crate::clock::Instant;
use chrono::{NaiveDate, NaiveTime, TimeZone, Utc};
use rayon::prelude::*;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Files newer than this, at scan time, are re-hashed even when their stat matches the cache.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct ItemId(pub i64);

impl std::fmt::Display for ItemId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}: no front matter: the file must start with a line `+++`, then TOML, then `+++`"
    )]
    NoFrontMatter { path: PathBuf },
    #[error(
        "{path}: front matter opened with `+++` on line 1 is never closed by another `+++` line"
    )]
    Unterminated { path: PathBuf },
    #[error("{path}:{line}: front matter: {message}")]
    FrontMatter {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}{}: `{key}`: {why}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        /// The line the key (or the bad character) is on, when the file has it.
        line: Option<usize>,
        key: &'static str,
        why: String,
    },
    #[error("{path} {why}; fix or remove it (nothing was published or withdrawn)")]
    Unreadable { path: PathBuf, why: String },
    #[error("{path}: {why}")]
    TooLarge { path: PathBuf, why: String },
    #[error("duplicate item id {id}: {first} and {second} both say `id = {id}`; give one of them a new id")]
    DuplicateId {
        id: ItemId,
        first: String,
        second: String,
    },
}

/// Where an item's image comes from: a file under `content/` or an http(s) URL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ImageSource {
    /// Path relative to the site root, always starting with `content/`.
    Local(String),
    Remote(String),
}

impl ImageSource {
    /// The key the ledger stores: the site-relative path or the URL.
    pub fn key(&self) -> &str {
        match self {
            ImageSource::Local(p) | ImageSource::Remote(p) => p,
        }
    }

    pub fn from_key(key: &str) -> ImageSource {
        if key.starts_with("http://") || key.starts_with("https://") {
            ImageSource::Remote(key.to_string())
        } else {
            ImageSource::Local(key.to_string())
        }
    }

    /// Parses the front-matter `image` value. Local paths are taken relative to `content/`
    /// (a leading `/` means the same) and may not climb out of it.
    pub fn parse(value: &str) -> Result<ImageSource, String> {
        let v = value.trim();
        if v.is_empty() {
            return Err("is empty".into());
        }
        if let Some(rest) = v
            .strip_prefix("http://")
            .or_else(|| v.strip_prefix("https://"))
        {
            if rest.is_empty() || rest.starts_with('/') {
                return Err(format!("{v:?} is not a valid http(s) URL"));
            }
            return Ok(ImageSource::Remote(v.to_string()));
        }
        if v.contains("://") {
            return Err(format!(
                "{v:?}: only http:// and https:// URLs or paths under content/ are allowed"
            ));
        }
        let rel = Path::new(v.trim_start_matches('/'));
        let mut clean = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => clean.push(s.to_string_lossy().into_owned()),
                Component::CurDir => {}
                _ => {
                    return Err(format!(
                        "{v:?} leaves content/: image paths may not use `..`"
                    ))
                }
            }
        }
        if clean.is_empty() || v.contains('\0') {
            return Err(format!("{v:?} is not a file path"));
        }
        Ok(ImageSource::Local(format!("content/{}", clean.join("/"))))
    }
}

/// One answer item as its file says it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub id: ItemId,
    pub day: NaiveDate,
    pub title: String,
    /// Price with exactly two decimals, e.g. `"4.99"`.
    pub price: String,
    pub image: Option<ImageSource>,
    pub indexable: bool,
    pub publish_at: Option<Instant>,
    pub withdrawn: bool,
    pub body: String,
}

impl Item {
    /// When the item becomes due: its `publish_at`, or the end of its `day` (00:00 UTC the next
    /// day) plus the grace window.
    pub fn due_at(&self, grace_minutes: u32) -> Instant {
        if let Some(t) = self.publish_at {
            return t;
        }
        let next = self.day.succ_opt().unwrap_or(self.day);
        let midnight = Utc.from_utc_datetime(&next.and_time(NaiveTime::MIN));
        Instant::from_datetime(midnight).plus_secs(u64::from(grace_minutes) * 60)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFrontMatter {
    id: Option<toml::Value>,
    day: Option<toml::Value>,
    title: Option<toml::Value>,
    price: Option<toml::Value>,
    image: Option<toml::Value>,
    indexable: Option<toml::Value>,
    publish_at: Option<toml::Value>,
    withdrawn: Option<toml::Value>,
}

/// A file split at its `+++` front matter: the TOML between the fences and the body after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// `None`: the file has no front matter (it does not start with a `+++` line).
    pub front_matter: Option<&'a str>,
    pub body: &'a str,
}

/// The one front-matter splitter for answer items and plain pages: a leading BOM is
/// skipped, fence lines may end in `\n` or `\r\n` (an editor on Windows) and may carry
/// trailing spaces. Err: a front matter opened on line 1 is never closed.
pub fn split_front_matter(text: &str) -> Result<Split<'_>, UnclosedFrontMatter> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if first.trim_end() == "+++" => {}
        _ => {
            return Ok(Split {
                front_matter: None,
                body: text,
            })
        }
    }
    let fm_start = text.find('\n').map(|i| i + 1).unwrap_or(text.len());
    let mut offset = fm_start;
    for line in lines {
        if line.trim_end() == "+++" {
            return Ok(Split {
                front_matter: Some(&text[fm_start..offset]),
                body: text[offset + line.len()..].trim_start_matches(['\n', '\r']),
            });
        }
        offset += line.len();
    }
    Err(UnclosedFrontMatter)
}

/// A front matter opened with `+++` on line 1 that no later `+++` line closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnclosedFrontMatter;

impl ContentError {
    /// The file was not there (deleted while the run looked at it).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ContentError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Parses one item file. `path` is only used in error messages.
pub fn parse_item(text: &str, path: &Path) -> Result<Item, ContentError> {
    let split =
        split_front_matter(text).map_err(|_| ContentError::Unterminated { path: path.into() })?;
    let fm = split
        .front_matter
        .ok_or_else(|| ContentError::NoFrontMatter { path: path.into() })?;
    let body = split.body.to_string();

    let raw: RawFrontMatter = toml::from_str(fm).map_err(|e| {
        let line = e
            .span()
            .map(|s| fm[..s.start.min(fm.len())].matches('\n').count() + 2)
            .unwrap_or(2);
        ContentError::FrontMatter {
            path: path.into(),
            line,
            message: e.message().to_string(),
        }
    })?;
    let invalid = |key: &'static str, why: String| ContentError::Invalid {
        path: path.into(),
        line: key_line(fm, key),
        key,
        why,
    };
    let missing = |key: &'static str| invalid(key, "is required but missing".into());

    let id = match raw.id.ok_or_else(|| missing("id"))? {
        toml::Value::Integer(n) if n > 0 => ItemId(n),
        other => {
            return Err(invalid(
                "id",
                format!("must be a positive integer, not {}", show(&other)),
            ))
        }
    };
    let day = match raw.day.ok_or_else(|| missing("day"))? {
        toml::Value::Datetime(dt) if dt.date.is_some() && dt.time.is_none() => {
            let d = dt.date.unwrap();
            NaiveDate::from_ymd_opt(i32::from(d.year), u32::from(d.month), u32::from(d.day))
                .ok_or_else(|| invalid("day", format!("{dt} is not a calendar date")))?
        }
        toml::Value::String(s) => NaiveDate::parse_from_str(&s, "%Y-%m-%d")
            .map_err(|_| invalid("day", format!("{s:?} is not a date like 2026-11-30")))?,
        other => {
            return Err(invalid(
                "day",
                format!("must be a date like 2026-11-30, not {}", show(&other)),
            ))
        }
    };
    if !(first_day()..=last_day()).contains(&day) {
        return Err(invalid(
            "day",
            format!("{day} is out of range: a day from 1970-01-01 to 9998-12-31"),
        ));
    }
    let title = match raw.title.ok_or_else(|| missing("title"))? {
        toml::Value::String(s) if s.chars().any(char::is_control) => return Err(invalid(
            "title",
            "holds a control character (a NUL, a tab, a line break…); a title is one line of text"
                .into(),
        )),
        toml::Value::String(s) if !s.trim().is_empty() => s,
        toml::Value::String(_) => return Err(invalid("title", "is empty".into())),
        other => {
            return Err(invalid(
                "title",
                format!("must be a string, not {}", show(&other)),
            ))
        }
    };
    let price = parse_price(&raw.price.ok_or_else(|| missing("price"))?)
        .map_err(|why| invalid("price", why))?;
    let image = match raw.image {
        None => None,
        Some(toml::Value::String(s)) => {
            Some(ImageSource::parse(&s).map_err(|why| invalid("image", why))?)
        }
        Some(other) => {
            return Err(invalid(
                "image",
                format!("must be a string, not {}", show(&other)),
            ))
        }
    };
    let bool_field = |key: &'static str, v: Option<toml::Value>, default: bool| match v {
        None => Ok(default),
        Some(toml::Value::Boolean(b)) => Ok(b),
        Some(other) => Err(invalid(
            key,
            format!("must be true or false, not {}", show(&other)),
        )),
    };
    let indexable = bool_field("indexable", raw.indexable, true)?;
    let withdrawn = bool_field("withdrawn", raw.withdrawn, false)?;
    let publish_at = match raw.publish_at {
        None => None,
        Some(v) => {
            let s = match &v {
                toml::Value::Datetime(dt) if dt.offset.is_some() => dt.to_string(),
                toml::Value::String(s) => s.clone(),
                other => {
                    return Err(invalid(
                        "publish_at",
                        format!(
                            "must be a date-time with an offset like 2026-12-01T00:10:00Z, not {}",
                            show(other)
                        ),
                    ))
                }
            };
            let at = Instant::parse_rfc3339(&s)
                .map_err(|e| invalid("publish_at", format!("{s:?}: {e}")))?;
            let first = Instant::parse_rfc3339("1970-01-01T00:00:00Z").expect("valid");
            let last = Instant::parse_rfc3339("9999-01-01T00:00:00Z").expect("valid");
            if at < first || at >= last {
                return Err(invalid(
                    "publish_at",
                    format!("{s} is out of range: an instant from 1970 to the end of 9998"),
                ));
            }
            Some(at)
        }
    };
    // Nothing downstream can hold a NUL (PostgreSQL text cannot) or the other C0 controls
    // (XML 1.0 forbids them in feeds and sitemaps); a body is text.
    if let Some(at) = body
        .char_indices()
        .find(|(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        .map(|(i, _)| i)
    {
        let before = text.len() - body.len() + at;
        return Err(ContentError::Invalid {
            path: path.into(),
            line: Some(text[..before].matches('\n').count() + 1),
            key: "(body)",
            why: format!(
                "holds the control character U+{:04X}; remove it",
                body[at..].chars().next().map_or(0, u32::from)
            ),
        });
    }
    Ok(Item {
        id,
        day,
        title,
        price,
        image,
        indexable,
        publish_at,
        withdrawn,
        body,
    })
}

/// The earliest and latest days an item may have: due instants are milliseconds since 1970,
/// and the day after 9998-12-31 plus any grace still writes as an RFC 3339 date.
fn first_day() -> NaiveDate {
    NaiveDate::from_ymd_opt(1970, 1, 1).expect("a date")
}

fn last_day() -> NaiveDate {
    NaiveDate::from_ymd_opt(9998, 12, 31).expect("a date")
}

/// The line of the file (line 1 is the opening `+++`) where `key` is set in the front
/// matter `fm`, if it is there.
fn key_line(fm: &str, key: &str) -> Option<usize> {
    fm.lines()
        .position(|l| {
            l.trim_start()
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 2)
}

/// A front-matter value as the editor wrote it, for error messages (a date-time deserialised
/// into a `toml::Value` can arrive as a table under toml's private marker key).
fn show(v: &toml::Value) -> String {
    const MARKER: &str = "$__toml_private_datetime";
    match v {
        toml::Value::Datetime(dt) => dt.to_string(),
        toml::Value::Table(t) if t.len() == 1 && t.contains_key(MARKER) => match &t[MARKER] {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        },
        toml::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Normalises a price to two decimals. Accepts a TOML number (`4.99`, `5`) or a string
/// (`"4.99"`, `"$4.99"`).
fn parse_price(v: &toml::Value) -> Result<String, String> {
    let text = match v {
        toml::Value::Integer(n) if *n >= 0 => return Ok(format!("{n}.00")),
        // `+ 0.0` turns -0.0 into 0.0, which would otherwise print as "-0.00".
        toml::Value::Float(f) if f.is_finite() && *f >= 0.0 => {
            return Ok(format!("{:.2}", f + 0.0))
        }
        toml::Value::String(s) => s.trim().trim_start_matches('$').to_string(),
        other => {
            return Err(format!(
                "must be a non-negative number like 4.99, not {}",
                show(other)
            ))
        }
    };
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(frac.is_empty() || (frac.len() <= 2 && digits(frac))) {
        return Err(format!("{text:?} is not a price like 4.99"));
    }
    Ok(format!("{whole}.{frac:0<2}"))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What the stat cache remembers of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    pub size: i64,
    pub mtime_ns: i64,
    pub ino: i64,
}

impl FileStat {
    /// The same fields as [`FileStat::of`], from a raw `stat`.
    pub fn of_stat(st: &rustix::fs::Stat) -> FileStat {
        FileStat {
            size: st.st_size,
            // As `of` has it: nanoseconds since the epoch, 0 for an instant before it.
            mtime_ns: if st.st_mtime < 0 {
                0
            } else {
                st.st_mtime
                    .saturating_mul(1_000_000_000)
                    .saturating_add(st.st_mtime_nsec as i64)
            },
            ino: st.st_ino as i64,
        }
    }

    pub fn of(meta: &std::fs::Metadata) -> FileStat {
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i64)
            .unwrap_or(0);
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(meta) as i64;
        #[cfg(not(unix))]
        let ino = 0;
        FileStat {
            size: meta.len() as i64,
            mtime_ns,
            ino,
        }
    }
}

/// A file the ledger already knows: its item id, stat and content hash.
#[derive(Debug, Clone)]
pub struct CachedFile {
    pub id: ItemId,
    pub stat: FileStat,
    pub source_hash: String,
}

/// A file that was read in this scan.
#[derive(Debug, Clone)]
pub struct ReadFile {
    /// Site-relative path with `/` separators.
    pub path: String,
    pub stat: FileStat,
    pub source_hash: String,
    pub item: Item,
}

#[derive(Debug, Default)]
pub struct Scan {
    /// Files whose stat matched the cache: path → id.
    pub unchanged: BTreeMap<String, ItemId>,
    /// New or changed files, read and parsed.
    pub read: Vec<ReadFile>,
}

impl Scan {
    /// Every item id present in the tree.
    pub fn present_ids(&self) -> impl Iterator<Item = ItemId> + '_ {
        self.unchanged
            .values()
            .copied()
            .chain(self.read.iter().map(|r| r.item.id))
    }
}

/// Item files under `content/answers/` (`**/*.md`, hidden files skipped), sorted, as absolute
/// paths, without a stat per regular file. A symlink named `*.md` is followed when it leads
/// to a regular file inside `content/`; any other entry by that name (a symlink leading out
/// or nowhere, a FIFO, a socket) stops the scan with an error naming it: an entry that
/// cannot be read must never look like a removed item, whose page would be withdrawn.
pub fn list_item_paths(root: &Path) -> Result<Vec<PathBuf>, ContentError> {
    Ok(list_item_groups(root)?
        .into_iter()
        .flat_map(|(dir, names)| names.into_iter().map(move |n| dir.join(n)))
        .collect())
}

/// [`list_item_paths`] as runs of names in one folder, in the same order: (folder, names).
fn list_item_groups(root: &Path) -> Result<Vec<(PathBuf, Vec<std::ffi::OsString>)>, ContentError> {
    let dir = root.join(crate::site::ANSWERS_DIR);
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut linked = std::collections::HashSet::new();
    walk_items(root, &dir, &mut out, &mut linked)?;
    Ok(out)
}

/// One folder of the item walk: names sorted by bytes, each subfolder walked where its name
/// sorts (so the order is the full paths' order). The file type comes from the directory
/// entry, with no stat. A symlink to a folder is followed when it stays inside `content/`
/// (the rule for symlinked files) and named as an error otherwise, never skipped: skipping it
/// would leave its edits unpublished while its removals withdraw. `linked` holds the folders
/// reached through links, so a loop is named too.
fn walk_items(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(PathBuf, Vec<std::ffi::OsString>)>,
    linked: &mut std::collections::HashSet<PathBuf>,
) -> Result<(), ContentError> {
    let read_err = |source| ContentError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = Vec::new();
    for e in std::fs::read_dir(dir).map_err(read_err)? {
        let e = e.map_err(read_err)?;
        let kind = e.file_type().map_err(read_err)?;
        entries.push((e.file_name(), kind));
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut names = Vec::new();
    for (name, kind) in entries {
        let linked_dir = kind.is_symlink() && dir.join(&name).is_dir();
        if kind.is_dir() || linked_dir {
            if !names.is_empty() {
                out.push((dir.to_path_buf(), std::mem::take(&mut names)));
            }
            let sub = dir.join(&name);
            if linked_dir {
                let real = check_linked(root, &sub, "folder")?;
                if !linked.insert(real.clone())
                    || dir.canonicalize().is_ok_and(|d| d.starts_with(&real))
                {
                    return Err(ContentError::Unreadable {
                        path: PathBuf::from(relative(root, &sub)),
                        why: format!(
                            "is a symlink to {}, which it is already inside or was reached through another link: a loop",
                            real.display()
                        ),
                    });
                }
            }
            walk_items(root, &sub, out, linked)?;
            continue;
        }
        let text = name.to_string_lossy();
        if text.starts_with('.') || !text.ends_with(".md") {
            continue;
        }
        if !kind.is_file() {
            check_linked(root, &dir.join(&name), "file")?;
        }
        names.push(name);
    }
    if !names.is_empty() {
        out.push((dir.to_path_buf(), names));
    }
    Ok(())
}

/// Accepts a non-regular entry only if it is a symlink to a regular file (`what` = "file", an
/// entry named `*.md`) or a folder (`what` = "folder") inside `content/`; returns where it
/// leads.
fn check_linked(root: &Path, path: &Path, what: &str) -> Result<PathBuf, ContentError> {
    let unreadable = |why: String| ContentError::Unreadable {
        path: PathBuf::from(relative(root, path)),
        why,
    };
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Err(unreadable(
            "is not a regular file (a FIFO, socket or device)".into(),
        ));
    }
    let content = root
        .join("content")
        .canonicalize()
        .map_err(|e| unreadable(format!("content/ cannot be resolved: {e}")))?;
    let real = path
        .canonicalize()
        .map_err(|e| unreadable(format!("is a symlink that leads nowhere ({e})")))?;
    if !real.starts_with(&content) {
        return Err(unreadable(format!(
            "is a symlink to {}, outside content/",
            real.display()
        )));
    }
    let fits = if what == "folder" {
        real.is_dir()
    } else {
        real.is_file()
    };
    if !fits {
        return Err(unreadable(format!(
            "is a symlink to {}, which is not a regular {what}",
            real.display()
        )));
    }
    Ok(real)
}

/// A file an editor writes while saving (swap, backup and probe files), never site content.
pub fn is_editor_temp(name: &str) -> bool {
    name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.ends_with(".tmp")
        || name.starts_with(".#")
        || name == "4913"
}

/// The path and I/O error of a failed directory walk (`fallback` when the walk names none).
pub fn walk_error(e: walkdir::Error, fallback: &Path) -> (PathBuf, std::io::Error) {
    let path = e
        .path()
        .map_or_else(|| fallback.to_path_buf(), Path::to_path_buf);
    let source = e
        .into_io_error()
        .unwrap_or_else(|| std::io::Error::other("walk failed"));
    (path, source)
}

/// Site-relative `/`-separated form of a path under `root`.
pub fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

pub fn list_item_files(root: &Path) -> Result<Vec<(String, FileStat)>, ContentError> {
    // Stat the files in parallel: on a large tree the stats are most of the scan. Each is
    // taken relative to its open folder (`statat`), so the kernel resolves one name, not the
    // whole path.
    let groups = list_item_groups(root)?;
    let mut out = Vec::with_capacity(groups.iter().map(|(_, n)| n.len()).sum());
    for (dir, names) in groups {
        let fd = rustix::fs::open(
            &dir,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| ContentError::Read {
            path: dir.clone(),
            source: e.into(),
        })?;
        let folder = relative(root, &dir);
        let stats: Vec<Result<Option<(String, FileStat)>, ContentError>> = names
            .into_par_iter()
            .map(|name| {
                let st =
                    match rustix::fs::statat(&fd, name.as_os_str(), rustix::fs::AtFlags::empty()) {
                        Ok(st) => st,
                        // Deleted between the listing and the stat: not there.
                        Err(rustix::io::Errno::NOENT) => return Ok(None),
                        Err(e) => {
                            return Err(ContentError::Read {
                                path: dir.join(&name),
                                source: e.into(),
                            })
                        }
                    };
                Ok(Some((
                    format!("{folder}/{}", name.to_string_lossy().replace('\\', "/")),
                    FileStat::of_stat(&st),
                )))
            })
            .collect();
        for r in stats {
            out.extend(r?);
        }
    }
    Ok(out)
}

/// Reads and parses one item file (at most `max` bytes, see `publish.max_item_bytes`),
/// returning it with its content hash.
pub fn read_item(root: &Path, rel: &str, max: u64) -> Result<(Item, String), ContentError> {
    let path = root.join(rel);
    let bytes = read_bounded(&path, max)?;
    let text = std::str::from_utf8(&bytes).map_err(|e| ContentError::Invalid {
        path: PathBuf::from(rel),
        line: Some(
            bytes[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1,
        ),
        key: "(file)",
        why: format!("is not UTF-8 ({e})"),
    })?;
    let item = parse_item(text, Path::new(rel))?;
    Ok((item, sha256_hex(&bytes)))
}

/// Reads a content file of at most `max` bytes; never blocks on a FIFO.
fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, ContentError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let read_err = |source| ContentError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(ContentError::Unreadable {
            path: path.to_path_buf(),
            why: "is not a regular file (a FIFO, socket or device)".into(),
        });
    }
    let mut bytes = Vec::with_capacity(meta.len().min(max) as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > max {
        return Err(ContentError::TooLarge {
            path: path.to_path_buf(),
            why: format!(
                "is larger than publish.max_item_bytes = {max}; shorten it or raise the limit in fencepost.toml"
            ),
        });
    }
    Ok(bytes)
}

/// Scans the tree against the stat cache. Fails on the first bad file or on a duplicate id:
/// a tree that cannot be read completely must not be acted on (a file we could not parse
/// would otherwise look removed, and its page would be withdrawn).
pub fn scan(
    root: &Path,
    cache: &HashMap<String, CachedFile>,
    max_item_bytes: u64,
) -> Result<Scan, ContentError> {
    scan_listed(root, list_item_files(root)?, cache, max_item_bytes)
}

/// [`scan`] over files already listed and stat-ed by [`list_item_files`] (which a caller
/// may run while it reads the stat cache).
pub fn scan_listed(
    root: &Path,
    files: Vec<(String, FileStat)>,
    cache: &HashMap<String, CachedFile>,
    max_item_bytes: u64,
) -> Result<Scan, ContentError> {
    let racy_after = SystemTime::now()
        .checked_sub(RACY_WINDOW)
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(i64::MAX);
    let mut scan = Scan::default();
    let mut to_read = Vec::new();
    let mut unchanged = Vec::with_capacity(files.len());
    for (rel, stat) in files {
        match cache.get(&rel) {
            Some(c) if c.stat == stat && stat.mtime_ns < racy_after => {
                unchanged.push((rel, c.id));
            }
            _ => to_read.push((rel, stat)),
        }
    }
    // Listed in path order, so the map is built in one pass, not 100,000 searches.
    scan.unchanged = unchanged.into_iter().collect();
    // A file deleted after it was listed is simply not there: the run treats it as gone, and
    // a withdrawal is re-checked under the item's lease anyway.
    scan.read = to_read
        .into_par_iter()
        .map(|(rel, stat)| match read_item(root, &rel, max_item_bytes) {
            Ok((item, source_hash)) => Ok(Some(ReadFile {
                path: rel,
                stat,
                source_hash,
                item,
            })),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        })
        .collect::<Result<Vec<Option<ReadFile>>, ContentError>>()?
        .into_iter()
        .flatten()
        .collect();
    let mut seen: HashMap<ItemId, &str> =
        HashMap::with_capacity(scan.unchanged.len() + scan.read.len());
    for (path, id) in &scan.unchanged {
        seen.insert(*id, path);
    }
    for r in &scan.read {
        if let Some(first) = seen.insert(r.item.id, &r.path) {
            let (a, b) = if first < r.path.as_str() {
                (first, r.path.as_str())
            } else {
                (r.path.as_str(), first)
            };
            return Err(ContentError::DuplicateId {
                id: r.item.id,
                first: a.to_string(),
                second: b.to_string(),
            });
        }
    }
    Ok(scan)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Item, ContentError> {
        parse_item(s, Path::new("content/answers/1.md"))
    }

    #[test]
    fn a_raw_stat_and_metadata_agree() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.md");
        std::fs::write(&f, "x").unwrap();
        let st = rustix::fs::stat(&f).unwrap();
        assert_eq!(
            FileStat::of_stat(&st),
            FileStat::of(&std::fs::metadata(&f).unwrap())
        );
    }

    #[test]
    fn parses_a_full_item() {
        let item = parse(
            "+++\nid = 7\nday = 2026-11-29\ntitle = \"Rotisserie chicken\"\nprice = 4.99\nimage = \"images/c.png\"\nindexable = false\n+++\n\nBody *here*.\n",
        )
        .unwrap();
        assert_eq!(item.id, ItemId(7));
        assert_eq!(item.price, "4.99");
        assert_eq!(
            item.image,
            Some(ImageSource::Local("content/images/c.png".into()))
        );
        assert!(!item.indexable);
        assert_eq!(item.body, "Body *here*.\n");
        assert_eq!(item.due_at(10).rfc3339(), "2026-11-30T00:10:00Z");
    }

    #[test]
    fn publish_at_overrides_the_day_rule() {
        let item = parse("+++\nid = 1\nday = 2026-11-29\ntitle = \"t\"\nprice = \"$5\"\npublish_at = 2027-01-01T12:00:00Z\n+++\n").unwrap();
        assert_eq!(item.price, "5.00");
        assert_eq!(item.due_at(10).rfc3339(), "2027-01-01T12:00:00Z");
    }

    #[test]
    fn missing_field_is_named() {
        let e = parse("+++\nid = 1\nday = 2026-11-29\nprice = 1\n+++\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "content/answers/1.md: `title`: is required but missing"
        );
    }

    #[test]
    fn toml_error_names_the_file_line() {
        let e = parse("+++\nid = 1\nday = 2026-11-29\ntitle = \"unterminated\nprice = 1\n+++\n")
            .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("content/answers/1.md:4:"), "{msg}");
    }

    #[test]
    fn unknown_key_and_unterminated_are_errors() {
        assert!(parse(
            "+++\nid = 1\nday = 2026-11-29\ntitle = \"t\"\nprice = 1\ncolour = 2\n+++\n"
        )
        .unwrap_err()
        .to_string()
        .contains("colour"));
        assert!(matches!(
            parse("+++\nid = 1\n"),
            Err(ContentError::Unterminated { .. })
        ));
        assert!(matches!(
            parse("id = 1\n"),
            Err(ContentError::NoFrontMatter { .. })
        ));
    }

    #[test]
    fn image_paths_may_not_escape_content() {
        assert!(ImageSource::parse("../secret.png").is_err());
        assert!(ImageSource::parse("images/../../x.png").is_err());
        assert!(ImageSource::parse("file:///etc/passwd").is_err());
        assert_eq!(
            ImageSource::parse("/a/b.png").unwrap(),
            ImageSource::Local("content/a/b.png".into())
        );
        assert_eq!(
            ImageSource::parse("https://cdn.example/x.jpg").unwrap(),
            ImageSource::Remote("https://cdn.example/x.jpg".into())
        );
    }

    #[test]
    fn front_matter_splits_alike_with_lf_crlf_and_a_bom() {
        for text in [
            "+++\ntitle = \"T\"\n+++\n\nBody.\n",
            "+++\r\ntitle = \"T\"\r\n+++\r\n\r\nBody.\n",
            "\u{feff}+++ \ntitle = \"T\"\n+++  \nBody.\n",
        ] {
            let s = split_front_matter(text).unwrap();
            assert_eq!(
                s.front_matter.map(str::trim),
                Some("title = \"T\""),
                "{text:?}"
            );
            assert_eq!(s.body, "Body.\n", "{text:?}");
        }
        let none = split_front_matter("Just text.\n").unwrap();
        assert_eq!((none.front_matter, none.body), (None, "Just text.\n"));
        assert!(split_front_matter("+++\ntitle = 1\n").is_err());
    }

    #[test]
    fn prices_are_normalised_or_refused() {
        assert_eq!(parse_price(&toml::Value::Float(12.3)).unwrap(), "12.30");
        assert_eq!(
            parse_price(&toml::Value::String("7.5".into())).unwrap(),
            "7.50"
        );
        assert!(parse_price(&toml::Value::String("seven".into())).is_err());
        assert!(parse_price(&toml::Value::Float(-1.0)).is_err());
        assert_eq!(parse_price(&toml::Value::Float(-0.0)).unwrap(), "0.00");
    }
}
