//! What a bundle file's bytes were when the build last read them, by its stat: a file whose
//! size, inode, change time and modification time are all as they were then has the same
//! bytes (its change time moves on any write, and no one can set it back), so a build of a
//! site of photos does not read and hash every photo again to learn that none changed — it
//! reads only those that did. Kept in `build-digests.bin` of the state folder (postcard);
//! losing it costs one read of each file.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A file's stat, as far as it tells one content from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    ino: u64,
}

impl Stat {
    fn of(path: &Path) -> Option<Stat> {
        let m = std::fs::metadata(path).ok()?;
        let ns = |t: std::io::Result<std::time::SystemTime>| {
            t.ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i128)
        };
        #[cfg(unix)]
        let (ctime_ns, ino) = {
            use std::os::unix::fs::MetadataExt;
            (
                m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128,
                m.ino(),
            )
        };
        #[cfg(not(unix))]
        let (ctime_ns, ino) = (ns(m.created()), 0);
        Some(Stat {
            len: m.len(),
            mtime_ns: ns(m.modified()),
            ctime_ns,
            ino,
        })
    }
}

/// The digests known, by path under the site's root.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Digests {
    known: HashMap<String, (Stat, String)>,
    #[serde(skip)]
    changed: bool,
}

impl Digests {
    const FILE: &'static str = "build-digests.bin";

    pub(crate) fn load(state: &Path) -> Digests {
        std::fs::read(state.join(Self::FILE))
            .ok()
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or_default()
    }

    /// The sha256 of the file at `rel` (under `root`): known by its stat, else read. `None`
    /// when it cannot be read.
    pub(crate) fn sha256(&mut self, root: &Path, rel: &str) -> Result<String, std::io::Error> {
        let path: PathBuf = root.join(rel);
        let stat = Stat::of(&path);
        if let (Some(s), Some((k, sha))) = (stat, self.known.get(rel)) {
            if s == *k {
                return Ok(sha.clone());
            }
        }
        let bytes = std::fs::read(&path)?;
        let sha = fencepost_core::digest::sha256_hex(&bytes);
        // The stat after the read: a write while it was read leaves a stat nothing matches.
        if let Some(s) = stat.filter(|s| Stat::of(&path) == Some(*s)) {
            self.known.insert(rel.to_string(), (s, sha.clone()));
            self.changed = true;
        }
        Ok(sha)
    }

    /// Saved, when anything was learnt (written beside, then renamed).
    pub(crate) fn save(&self, state: &Path) {
        if !self.changed {
            return;
        }
        let Ok(bytes) = postcard::to_allocvec(self) else {
            return;
        };
        let tmp = state.join(format!(".{}.{}", Self::FILE, std::process::id()));
        if std::fs::create_dir_all(state).is_ok() && std::fs::write(&tmp, bytes).is_ok() {
            let _ = std::fs::rename(&tmp, state.join(Self::FILE));
        }
    }
}
