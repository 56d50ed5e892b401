//! The stat cache of a shared ledger, kept on this host.
//!
//! A scan skips a file whose size, change stamp (see `FileStat`) and inode match what the last scan saw. Those
//! describe one host's checkout: with a ledger many hosts share, two hosts' stats would never
//! match each other's, and each run would rewrite every row the other wrote. So a shared
//! ledger holds only what the files say (path and source hash), and each host keeps its
//! stats here, beside its own state (`<ledger.path's folder>/stat-cache-<ledger id>.json`).
//! A stat counts only while the ledger still has the same source hash for that path, so a
//! file another host changed is read again. Losing the file costs one full re-read, nothing
//! more.

use fencepost_core::item::{FileStat, ItemName};
use fencepost_site::content::ReadFile;
use fencepost_site::Site;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct File {
    /// path → (size, change stamp in ns, inode, source hash)
    files: BTreeMap<String, (i64, i64, i64, String)>,
}

pub struct Local {
    path: PathBuf,
    file: File,
}

impl Local {
    pub fn load(site: &Site, ledger_id: &str) -> Local {
        let path = site
            .state_dir()
            .join(format!("stat-cache-{ledger_id}.json"));
        let file = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Local { path, file }
    }

    /// The source hash this host's checkout had at `path` when it last scanned it.
    pub fn last_hash(&self, path: &str) -> Option<&str> {
        self.file.files.get(path).map(|f| f.3.as_str())
    }

    /// Whether this host remembers any scan of this ledger (a stateless runner does not).
    pub fn remembers(&self) -> bool {
        !self.file.files.is_empty()
    }

    /// Gives the ledger's entries this host's stats, where the source hash still agrees.
    pub fn overlay(&self, cache: &mut fencepost_core::item::StatCache) {
        for (path, c) in cache.iter_mut() {
            if let Some((size, changed_ns, ino, hash)) = self.file.files.get(path) {
                if *hash == c.source_hash {
                    c.stat = FileStat {
                        size: *size,
                        changed_ns: *changed_ns,
                        ino: *ino,
                    };
                }
            }
        }
    }

    /// Records this scan: the files it read, and the unchanged ones it kept.
    pub fn save(
        mut self,
        cache: &fencepost_core::item::StatCache,
        read: &[ReadFile],
        present: &HashSet<ItemName>,
    ) {
        let mut files = BTreeMap::new();
        for (path, c) in cache {
            if present.contains(&c.name) && c.stat.size >= 0 {
                files.insert(
                    path.clone(),
                    (
                        c.stat.size,
                        c.stat.changed_ns,
                        c.stat.ino,
                        c.source_hash.clone(),
                    ),
                );
            }
        }
        // A draft is read every time (see `drafts.rs`): never remembered as unchanged.
        for f in read.iter().filter(|f| !f.item.draft) {
            files.insert(
                f.path.clone(),
                (
                    f.stat.size,
                    f.stat.changed_ns,
                    f.stat.ino,
                    f.source_hash.clone(),
                ),
            );
        }
        if files == self.file.files {
            return; // Nothing new: a rerun over an unchanged tree writes nothing.
        }
        self.file.files = files;
        let write = || -> std::io::Result<()> {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = self
                .path
                .with_extension(format!("tmp-{}", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec(&self.file).expect("serialises"))?;
            std::fs::rename(&tmp, &self.path)
        };
        if let Err(e) = write() {
            tracing::warn!(path = %self.path.display(), error = %e, "could not save this host's stat cache; the next run reads every file again");
        }
    }
}
