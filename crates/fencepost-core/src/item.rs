//! What every stage calls an item: its name (a collection and an id within it) and the stat
//! of the file it comes from. The vocabulary the content tree, the ledger and the build
//! share, kept apart so none of them imports another's types.

use std::sync::Arc;

/// An item's name: its collection and its id there (an integer id written in decimal, or a
/// slug). Ids are unique within a collection; two collections may share one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemName {
    pub collection: Arc<str>,
    pub id: Arc<str>,
}

impl ItemName {
    pub fn new(collection: &str, id: &str) -> ItemName {
        ItemName {
            collection: collection.into(),
            id: id.into(),
        }
    }

    /// How output names the item: `"<collection>/<id>"` on a site with `[collections]`, the
    /// plain integer id on a site without (what every release before collections printed).
    pub fn shown(&self, naming: Naming) -> serde_json::Value {
        match naming {
            Naming::Legacy => match self.id.parse::<i64>() {
                Ok(n) => serde_json::Value::from(n),
                Err(_) => serde_json::Value::from(self.id.as_ref()),
            },
            Naming::Qualified => serde_json::Value::from(self.to_string()),
        }
    }

    /// Parses what a person typed (`--retry`): `collection/id`, or a bare id of the only
    /// collection (`default`).
    pub fn parse(text: &str, default: Option<&str>) -> Option<ItemName> {
        match text.split_once('/') {
            Some((c, id)) if !c.is_empty() && !id.is_empty() => Some(ItemName::new(c, id)),
            Some(_) => None,
            None => default.map(|c| ItemName::new(c, text)),
        }
    }
}

impl std::fmt::Display for ItemName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.collection, self.id)
    }
}

/// How a site's output names items (see [`ItemName::shown`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// No `[collections]` in `fencepost.toml`: integer ids, as before collections.
    Legacy,
    /// `"<collection>/<id>"`.
    Qualified,
}

/// An item name in JSON output, as the site names items.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown(pub serde_json::Value);

impl serde::Serialize for Shown {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            serde_json::Value::String(s) => f.write_str(s),
            other => write!(f, "{other}"),
        }
    }
}

/// An item's row in the ledger: the key leases, pages and receipts use (and the build fetches
/// bodies by). People and output name items by their [`ItemName`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ItemId(pub i64);

impl std::fmt::Display for ItemId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What the stat cache remembers of a file.
///
/// `changed_ns` is the later of the file's mtime and its ctime (the inode's change time).
/// mtime alone misses an in-place edit whose tool puts the old mtime back (`touch -d`,
/// `cp -p`, `rsync -t`, `tar x`): with the size unchanged such a file looked unchanged for
/// ever. No tool can set the ctime back, and every write moves it, so an edit is always
/// seen; a chmod or a rename moves it too, which costs one re-read and publishes nothing
/// (the content hash decides). The ledger keeps it in its `source_mtime_ns` column: a ledger
/// that stored plain mtimes re-reads each file once after the upgrade.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    pub size: i64,
    pub changed_ns: i64,
    pub ino: i64,
}

/// How to open a folder only to look names up in it (`statat`, `linkat`, `mkdirat`): `O_PATH`
/// on Linux (no read permission needed, nothing read), read-only elsewhere (macOS has no
/// `O_PATH`).
#[cfg(unix)]
pub fn lookup_dir_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    #[cfg(target_os = "linux")]
    let how = OFlags::PATH;
    #[cfg(not(target_os = "linux"))]
    let how = OFlags::RDONLY;
    how | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// One folder's files stat-ed by name: relative to its open descriptor (`statat`: the kernel
/// resolves one name, not the whole path) on POSIX, by path elsewhere.
pub struct FolderStats {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

impl FolderStats {
    pub fn open(dir: &std::path::Path) -> std::io::Result<FolderStats> {
        #[cfg(unix)]
        {
            let fd = rustix::fs::open(dir, lookup_dir_flags(), rustix::fs::Mode::empty())?;
            Ok(FolderStats { fd })
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            Ok(FolderStats {})
        }
    }

    /// The stat of `name` in `dir` (the folder this was opened on); `None` when it is gone.
    pub fn stat(
        &self,
        dir: &std::path::Path,
        name: &std::ffi::OsStr,
    ) -> std::io::Result<Option<FileStat>> {
        #[cfg(unix)]
        {
            let _ = dir;
            match rustix::fs::statat(&self.fd, name, rustix::fs::AtFlags::empty()) {
                Ok(st) => Ok(Some(FileStat::of_stat(&st))),
                Err(rustix::io::Errno::NOENT) => Ok(None),
                Err(e) => Err(e.into()),
            }
        }
        #[cfg(not(unix))]
        {
            match std::fs::metadata(dir.join(name)) {
                Ok(m) => Ok(Some(FileStat::of(&m))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e),
            }
        }
    }
}

impl FileStat {
    /// A stat no file has: the next scan re-reads the file.
    pub const UNKNOWN: FileStat = FileStat {
        size: -1,
        changed_ns: -1,
        ino: -1,
    };

    /// The same fields as [`FileStat::of`], from a raw `stat`.
    #[cfg(unix)]
    pub fn of_stat(st: &rustix::fs::Stat) -> FileStat {
        FileStat {
            size: st.st_size,
            changed_ns: epoch_ns(st.st_mtime, st.st_mtime_nsec as i64)
                .max(epoch_ns(st.st_ctime, st.st_ctime_nsec as i64)),
            ino: st.st_ino as i64,
        }
    }

    pub fn of(meta: &std::fs::Metadata) -> FileStat {
        #[cfg(unix)]
        let (changed_ns, ino) = {
            use std::os::unix::fs::MetadataExt;
            let changed = epoch_ns(meta.mtime(), meta.mtime_nsec())
                .max(epoch_ns(meta.ctime(), meta.ctime_nsec()));
            (changed, meta.ino() as i64)
        };
        #[cfg(not(unix))]
        let (changed_ns, ino) = {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::SystemTime::UNIX_EPOCH).ok())
                .map(|d| d.as_nanos() as i64)
                .unwrap_or(0);
            (mtime, 0)
        };
        FileStat {
            size: meta.len() as i64,
            changed_ns,
            ino,
        }
    }
}

/// Nanoseconds since the epoch, 0 for an instant before it.
#[cfg(unix)]
fn epoch_ns(secs: i64, nsec: i64) -> i64 {
    if secs < 0 {
        0
    } else {
        secs.saturating_mul(1_000_000_000).saturating_add(nsec)
    }
}

/// The stat cache: each file the ledger knows, by its path under the site. Every publish
/// makes one of the whole tree and looks every listed path up in it, so it hashes with
/// `foldhash` (a keyed, fast hash of the kind hashbrown uses by default) rather than std's
/// SipHash: the paths are the site's own, and the map lives for one command.
pub type StatCache = std::collections::HashMap<String, CachedFile, foldhash::fast::RandomState>;

/// A file the ledger already knows: its item, stat and content hash as last scanned.
#[derive(Debug, Clone)]
pub struct CachedFile {
    pub name: ItemName,
    pub stat: FileStat,
    pub source_hash: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_show_as_the_site_names_them() {
        let n = ItemName::new("answers", "7");
        assert_eq!(n.shown(Naming::Legacy), serde_json::json!(7));
        assert_eq!(n.shown(Naming::Qualified), serde_json::json!("answers/7"));
        assert_eq!(
            ItemName::parse("notes/two-oh", None),
            Some(ItemName::new("notes", "two-oh"))
        );
        assert_eq!(
            ItemName::parse("7", Some("answers")),
            Some(ItemName::new("answers", "7"))
        );
        assert_eq!(ItemName::parse("7", None), None);
        assert_eq!(ItemName::parse("/7", None), None);
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
}
