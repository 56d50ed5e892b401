//! What a bundle file's bytes were when the build last read them, by its stat
//! (`fencepost_core::item::FileStat`, publish's stat cache's: size, inode and the later of
//! its modification and change times — a write always moves the change time, and no one can
//! set it back), so a build of a site of photos does not read and hash every photo again to
//! learn that none changed: it reads only those that did. Kept in `build-digests.bin` of the
//! state folder (postcard); losing it costs one read of each file.

use fencepost_core::item::FileStat;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The digests known, by path under the site's root: (size, change stamp, inode, sha256).
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Digests {
    known: HashMap<String, (i64, i64, i64, String)>,
    #[serde(skip)]
    changed: bool,
}

fn stat(path: &Path) -> Option<FileStat> {
    std::fs::metadata(path).ok().map(|m| FileStat::of(&m))
}

impl Digests {
    const FILE: &'static str = "build-digests.bin";

    pub(crate) fn load(state: &Path) -> Digests {
        std::fs::read(state.join(Self::FILE))
            .ok()
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or_default()
    }

    /// The sha256 of the file at `rel` (under `root`): known by its stat, else read.
    pub(crate) fn sha256(&mut self, root: &Path, rel: &str) -> Result<String, std::io::Error> {
        let path = root.join(rel);
        let before = stat(&path);
        if let (Some(s), Some((size, changed, ino, sha))) = (before, self.known.get(rel)) {
            if (s.size, s.changed_ns, s.ino) == (*size, *changed, *ino) {
                return Ok(sha.clone());
            }
        }
        let bytes = std::fs::read(&path)?;
        let sha = fencepost_core::digest::sha256_hex(&bytes);
        // The stat after the read: a write while it was read leaves a stat nothing matches.
        if let Some(s) = before.filter(|s| stat(&path) == Some(*s)) {
            let row = (s.size, s.changed_ns, s.ino, sha.clone());
            self.known.insert(rel.to_string(), row);
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
