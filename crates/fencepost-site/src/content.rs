//! The content tree: items as Markdown files with TOML (`+++`) or YAML (`---`) front matter,
//! one folder per collection, and a scan that tells which files changed since the ledger last saw them.
//!
//! - [`item`]: one file, checked against its collection; [`fields`]: the typed keys.
//! - [`scan`]: the folders listed and stat-ed, changed files read; a file that cannot be
//!   read or does not validate is reported and holds back only its own item.
//!
//! The scan keeps a stat cache in the ledger (size, the later of mtime and ctime, inode, like git's index), so a run
//! over a large unchanged tree stats every file but reads only the ones that changed. A file
//! modified within [`RACY_WINDOW`] of the scan is always re-read: its change stamp cannot yet tell a
//! second edit apart from the first.

pub mod bundle;
pub mod claims;
pub mod fields;
pub mod item;
pub mod new;
pub mod plain;
mod read;
pub mod scan;
pub mod translation;
pub mod yaml;

use fencepost_core::item::ItemName;
pub use item::{guess_due, parse_item, Item};
pub use read::read_item;
pub use scan::{
    list_item_files, list_item_paths, owner, scan_listed, unclaimed, Broken, Listing, ReadFile,
    Scan,
};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// Files newer than this, at scan time, are re-hashed even when their stat matches the cache.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

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
        "{path}: front matter opened with `{fence}` on line 1 is never closed by another `{fence}` line"
    )]
    Unterminated { path: PathBuf, fence: &'static str },
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
        key: String,
        why: String,
    },
    #[error("{path} {why}; fix or remove it (nothing was published or withdrawn)")]
    Unreadable { path: PathBuf, why: String },
    #[error("{path}: {why}")]
    TooLarge { path: PathBuf, why: String },
    #[error("{second}: duplicate item id {} in collection {}: {first} says the same; give one of them another id (neither file was published, updated or withdrawn)", name.id, name.collection)]
    DuplicateId {
        name: ItemName,
        first: String,
        second: String,
    },
    #[error("{file}: item id {} in collection {} differs from {other} ({other_file}) only in case: a case-insensitive file system or bucket would hold one of them; give one another id (neither file was published, updated or withdrawn)", name.id, name.collection)]
    IdCase {
        name: ItemName,
        other: String,
        file: String,
        other_file: String,
    },
    #[error("{path}: {why}")]
    NoCollection { path: PathBuf, why: String },
    #[error("{path}{}: `id`: its URL {url} is {what}: give the item another id, or change the collection's `url` pattern (nothing was published, updated or withdrawn for it)", line.map(|l| format!(":{l}")).unwrap_or_default())]
    UrlTaken {
        path: PathBuf,
        /// The line of its `id` key (none when the id is the file's name).
        line: Option<usize>,
        url: String,
        /// What has that URL: the site's own page or file, or another item.
        what: String,
    },
    #[error("{path}{}: `aliases`: the alias {url} is {what}: remove it from the list or change it (nothing was published, updated or withdrawn for this item)", line.map(|l| format!(":{l}")).unwrap_or_default())]
    AliasTaken {
        path: PathBuf,
        /// The line of its `aliases` key.
        line: Option<usize>,
        url: String,
        /// What has that URL: the item itself, the site's own page or file, another item or
        /// another item's alias.
        what: String,
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

/// An alias as a site URL: a path from the site's root (`/old/url/`, `/old.html`), to a page
/// (a folder, or a file ending `.html`); a folder's trailing `/` is added. Nothing that would
/// leave the site (`..`, `//`), a query or fragment, a space or control character.
pub fn alias_url(alias: &str) -> Result<String, String> {
    let a = alias.trim();
    let bad = |why: &str| Err(format!("the alias {alias:?} {why}"));
    if !a.starts_with('/') {
        return bad(
            "is not a path from the site's root: begin it with / (aliases = [\"/old/url/\"])",
        );
    }
    if a.len() > 1024 {
        return bad("is longer than 1,024 bytes");
    }
    if a.chars()
        .any(|c| c.is_whitespace() || c.is_control() || is_forbidden_char(c))
        || a.contains(['?', '#', '\\'])
    {
        return bad("holds a space, control character, `?`, `#` or `\\`: write the path alone");
    }
    let inner = a[1..].strip_suffix('/').unwrap_or(&a[1..]);
    if inner.is_empty() {
        return bad("is the home page");
    }
    if inner
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..")
    {
        return bad("has an empty, `.` or `..` segment");
    }
    let last = inner.rsplit('/').next().unwrap_or(inner);
    if a.ends_with('/') {
        return Ok(a.to_string());
    }
    match last.rsplit_once('.') {
        None => Ok(format!("{a}/")),
        Some((_, ext)) if ext.eq_ignore_ascii_case("html") || ext.eq_ignore_ascii_case("htm") => {
            Ok(a.to_string())
        }
        Some(_) => bad("names a file that is not a page: end it with / or .html"),
    }
}

/// The aliases an item's data (canonical JSON, see `item.rs`) holds.
pub fn aliases_in(data: &str) -> Vec<String> {
    if !data.contains("\"aliases\"") {
        return Vec::new();
    }
    #[derive(serde::Deserialize)]
    struct Data {
        #[serde(default)]
        aliases: Vec<String>,
    }
    serde_json::from_str::<Data>(data)
        .map(|d| d.aliases)
        .unwrap_or_default()
}

/// How a file's front matter is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Between `+++` lines.
    Toml,
    /// Between `---` lines (see [`yaml`]).
    Yaml,
}

impl Format {
    /// The line that opens and closes it.
    pub fn fence(self) -> &'static str {
        match self {
            Format::Toml => "+++",
            Format::Yaml => "---",
        }
    }
}

/// A file split at its front matter: the keys between the fences and the body after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// `None`: the file has no front matter (it does not start with a `+++` or `---` line).
    pub front_matter: Option<&'a str>,
    pub format: Format,
    pub body: &'a str,
}

/// The one front-matter splitter for answer items and plain pages: a leading BOM is
/// skipped, fence lines may end in `\n` or `\r\n` (an editor on Windows) and may carry
/// trailing spaces. Err: a front matter opened on line 1 is never closed.
pub fn split_front_matter(text: &str) -> Result<Split<'_>, UnclosedFrontMatter> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let format = match lines.next().map(str::trim_end) {
        Some("+++") => Format::Toml,
        Some("---") => Format::Yaml,
        _ => {
            return Ok(Split {
                front_matter: None,
                format: Format::Toml,
                body: text,
            })
        }
    };
    let fm_start = text.find('\n').map(|i| i + 1).unwrap_or(text.len());
    let mut offset = fm_start;
    for line in lines {
        if line.trim_end() == format.fence() {
            return Ok(Split {
                front_matter: Some(&text[fm_start..offset]),
                format,
                body: text[offset + line.len()..].trim_start_matches(['\n', '\r']),
            });
        }
        offset += line.len();
    }
    Err(UnclosedFrontMatter(format))
}

/// A front matter opened on line 1 (with `+++` or `---`) that no later such line closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnclosedFrontMatter(pub Format);

/// Why a front matter's keys cannot be read: the file's line (1 is the opening fence) and
/// what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    pub line: usize,
    pub message: String,
}

/// A front matter's keys, whichever way it is written, as one TOML table (so every check
/// and message downstream is the same for both).
pub fn front_matter_table(fm: &str, format: Format) -> Result<toml::Table, Unreadable> {
    match format {
        Format::Toml => toml::from_str(fm).map_err(|e: toml::de::Error| Unreadable {
            line: e
                .span()
                .map_or(0, |s| fm[..s.start.min(fm.len())].matches('\n').count())
                + 2,
            message: e.message().to_string(),
        }),
        // An error found at the end of the text (an unclosed list) is on its last line, not
        // the closing fence.
        Format::Yaml => yaml::to_table(fm).map_err(|e| Unreadable {
            line: e.line.min(fm.lines().count().max(1)) + 1,
            message: e.message,
        }),
    }
}

impl ContentError {
    /// The file was not there (deleted while the run looked at it).
    pub fn is_not_found(&self) -> bool {
        matches!(self, ContentError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The line of the file (line 1 is the opening fence) where `key` is set in the front
/// matter `fm` (`key = …` in TOML, `key: …` in YAML), if it is there.
pub fn key_line(fm: &str, key: &str) -> Option<usize> {
    fm.lines()
        .position(|l| key_value(l, key).is_some())
        .map(|i| i + 2)
}

/// What `line` sets `key` to, as written (`key = v` or `key: v`), if it sets `key`.
pub fn key_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.trim_start().strip_prefix(key)?.trim_start();
    rest.strip_prefix('=')
        .or_else(|| rest.strip_prefix(':'))
        .map(str::trim)
}

/// A front-matter value as the editor wrote it, for error messages (a date-time deserialised
/// into a `toml::Value` can arrive as a table under toml's private marker key).
pub(crate) fn show(v: &toml::Value) -> String {
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

/// A character no item may hold: the C0 and C1 controls but tab, line feed and carriage
/// return (PostgreSQL text cannot hold a NUL; XML 1.0 forbids the C0 controls in feeds and
/// sitemaps), and the Unicode non-characters (U+FFFE, U+FFFF, U+FDD0–U+FDEF and the last two
/// code points of every plane), which XML forbids or discourages and which a strict feed
/// reader rejects the whole feed for. Refused when the file is read, so one file can never
/// break a feed that every item shares.
pub fn is_forbidden_char(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        || ('\u{FDD0}'..='\u{FDEF}').contains(&c)
        || (u32::from(c) & 0xFFFE) == 0xFFFE
}

/// How a forbidden character is named in an error.
pub fn forbidden_char_why(c: char) -> String {
    if c.is_control() {
        format!(
            "holds the control character U+{:04X}; remove it",
            u32::from(c)
        )
    } else {
        format!(
            "holds U+{:04X}, a Unicode non-character that feeds cannot carry; remove it",
            u32::from(c)
        )
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_site_paths_to_pages() {
        assert_eq!(alias_url("/old/url/").unwrap(), "/old/url/");
        assert_eq!(alias_url("/old/url").unwrap(), "/old/url/");
        assert_eq!(alias_url(" /old.html ").unwrap(), "/old.html");
        assert_eq!(alias_url("/v1.2/notes").unwrap(), "/v1.2/notes/");
        for bad in [
            "old/",
            "/",
            "//x/",
            "/a/../b/",
            "/a?b",
            "/a b/",
            "/feed.xml",
            "/a/./b",
        ] {
            assert!(alias_url(bad).is_err(), "{bad}");
        }
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
}
