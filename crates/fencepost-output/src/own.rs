//! A revision's own files: fencepost's bookkeeping about the revision (its manifest, the
//! manifest's index, the pages a build held), kept in a folder of the revision that no file
//! of the site can have — `.fencepost/` — so a site's own `manifest.json` (a web app's
//! manifest, which documentation themes ship) is a file of the site like any other.
//!
//! **Chosen, and rejected.** A reserved folder *inside* the revision keeps the one rename that
//! puts a complete revision in place (a revision with its manifest is complete, files and
//! all); files *beside* the revision folder would take a second rename and a window where a
//! revision has no manifest. `publish` refuses a static file or URL under the folder by name
//! (`fencepost_site::content::claims::RESERVED`), and no origin serves it: every origin
//! answers only what the manifest lists, and the manifest never lists its own folder.
//!
//! Revisions written before the folder existed keep their manifest and index at the
//! revision's root; every reader here finds them there ([`Layout::of`]), so an existing
//! `public/` is served, reused and rolled back to as before.

use std::path::{Path, PathBuf};

/// The folder, under a revision's root.
pub const DIR: &str = ".fencepost";

/// The pages a build held (`HeldPage`s as JSON), in the folder; absent when none were.
pub const HELD: &str = "held.json";

/// The processed images each page of the revision shows (`{page path: [image name]}` as
/// JSON; the build's `images/revision.rs`): what a page reused by the next build still
/// needs. Absent when no page shows one.
pub const IMAGES: &str = "images.json";

/// The manifest's name (`manifest::FILE`): named here, where every own file is, so the
/// manifest and its index stand on this module and not the other way round.
pub const MANIFEST: &str = "manifest.json";

/// The manifest's index's name (`index::FILE`).
pub const INDEX: &str = "manifest.idx";

/// Where a revision keeps its own files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// In `.fencepost/` (every revision this release writes).
    Own,
    /// At the revision's root, as releases before the folder wrote them.
    Root,
}

impl Layout {
    /// The layout of revision folder `dir`: [`Layout::Own`] unless the folder is absent and
    /// a manifest or index lies at the root (a revision of an earlier release).
    pub fn of(dir: &Path) -> Layout {
        let at_root = |name: &str| dir.join(name).is_file();
        if !dir.join(DIR).is_dir() && (at_root(MANIFEST) || at_root(INDEX)) {
            Layout::Root
        } else {
            Layout::Own
        }
    }

    /// Where file `name` (`manifest.json`, `manifest.idx`) of revision folder `dir` is.
    pub fn path(self, dir: &Path, name: &str) -> PathBuf {
        match self {
            Layout::Own => dir.join(DIR).join(name),
            Layout::Root => dir.join(name),
        }
    }

    /// Its own files' names, as paths under the revision's root (`.fencepost/manifest.json`
    /// or `manifest.json`): what is not a file of the site.
    pub fn own_paths(self) -> Vec<String> {
        let names = [MANIFEST, INDEX, HELD, IMAGES];
        match self {
            Layout::Own => names.iter().map(|n| format!("{DIR}/{n}")).collect(),
            Layout::Root => names[..2].iter().map(|n| n.to_string()).collect(),
        }
    }
}

/// The manifest of revision folder `dir`, wherever its release put it.
pub fn manifest(dir: &Path) -> PathBuf {
    Layout::of(dir).path(dir, MANIFEST)
}

/// The manifest's index of revision folder `dir`, wherever its release put it.
pub fn index(dir: &Path) -> PathBuf {
    Layout::of(dir).path(dir, INDEX)
}

/// The pages held in the revision at `dir` (empty when none were, or for a revision of an
/// earlier release), as the JSON the build wrote.
pub fn held(dir: &Path) -> Option<Vec<u8>> {
    std::fs::read(dir.join(DIR).join(HELD)).ok()
}

/// Writes the held pages' JSON into staging folder `dir` (before it is renamed into place).
pub fn write_held(dir: &Path, json: &[u8]) -> Result<(), super::OutputError> {
    write_own(dir, HELD, json)
}

/// Writes own file `name` (a build step's record, such as the search index's) into staging
/// folder `dir`'s folder.
pub fn write_own_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), super::OutputError> {
    write_own(dir, name, bytes)
}

/// Writes own file `name` into staging folder `dir`'s folder.
fn write_own(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), super::OutputError> {
    let folder = dir.join(DIR);
    std::fs::create_dir_all(&folder).map_err(super::io_err(&folder))?;
    let path = folder.join(name);
    std::fs::write(&path, bytes).map_err(super::io_err(&path))
}

/// The processed images of the revision at `dir`, as the JSON the build wrote.
pub fn images(dir: &Path) -> Option<Vec<u8>> {
    std::fs::read(dir.join(DIR).join(IMAGES)).ok()
}

/// Writes the processed images' JSON into staging folder `dir`.
pub fn write_images(dir: &Path, json: &[u8]) -> Result<(), super::OutputError> {
    write_own(dir, IMAGES, json)
}

/// Whether a path under a revision's root (`/`-separated, no leading slash) is in the
/// folder: a site's file may never be.
pub fn is_own(rel: &str) -> bool {
    rel == DIR || rel.starts_with(".fencepost/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_of_an_earlier_release_is_read_at_its_root_and_a_sites_manifest_is_its_own() {
        let d = tempfile::tempdir().unwrap();
        let old = d.path().join("1-a");
        std::fs::create_dir(&old).unwrap();
        std::fs::write(old.join("manifest.json"), "{}").unwrap();
        assert_eq!(manifest(&old), old.join("manifest.json"));
        assert_eq!(index(&old), old.join("manifest.idx"));
        let new = d.path().join("2-a");
        std::fs::create_dir_all(new.join(DIR)).unwrap();
        // The site's own manifest.json at the root is a file of the site.
        std::fs::write(new.join("manifest.json"), "{\"name\": \"app\"}").unwrap();
        assert_eq!(manifest(&new), new.join(".fencepost/manifest.json"));
        assert!(is_own(".fencepost/manifest.json") && !is_own(".fencepostx/a"));
        assert!(!is_own("manifest.json"));
    }
}
