//! Built sites and their revisions' manifests, shared by the build, history and preview tests.
use super::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub fn manifest(dir: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join(".fencepost/manifest.json")).unwrap()).unwrap()
}

pub fn site_with(n: i64) -> TestSite {
    let s = TestSite::new();
    for id in 1..=n {
        s.item(id, &format!("2026-11-{:02}", id.min(28)));
    }
    s
}

pub fn sha256_file(p: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(p).unwrap()))
}

/// Every file of the revision `dir` hashes to its manifest entry, and every answer page
/// carries its body.
pub fn assert_revision_whole(dir: &Path) {
    let m = manifest(dir);
    for f in m["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        assert_eq!(
            sha256_file(&dir.join(path)),
            f["sha256"].as_str().unwrap(),
            "{path} in {} does not match its manifest",
            dir.display()
        );
        if let Some(id) = path
            .strip_prefix("answers/")
            .and_then(|p| p.strip_suffix("/index.html"))
            .and_then(|p| p.parse::<i64>().ok())
        {
            let html = std::fs::read_to_string(dir.join(path)).unwrap();
            assert!(
                html.contains(&format!("Answer body for item {id}.")),
                "answers/{id}/ lost its body in {}",
                dir.display()
            );
        }
    }
}

pub fn revision_dir(s: &TestSite, build: &serde_json::Value) -> PathBuf {
    PathBuf::from(build["path"].as_str().unwrap())
        .canonicalize()
        .unwrap_or_else(|_| s.path("public/missing"))
}

pub fn built_site() -> TestSite {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    s
}

/// `(path, sha256)` of every file of the live revision's manifest.
pub fn files_of(site: &std::path::Path) -> (i64, BTreeMap<String, String>) {
    let m: Value = serde_json::from_slice(
        &std::fs::read(site.join("public/current/.fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    let files = m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_string();
            (s("path"), s("sha256"))
        })
        .collect();
    (m["revision"].as_i64().unwrap(), files)
}

/// A copy of site `s` without its output, built from nothing.
pub fn built_from_nothing(s: &TestSite) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(s.root()).unwrap().map(Result::unwrap) {
        let to = copy.path().join(e.file_name());
        match e.file_type().unwrap().is_dir() {
            true if e.file_name() != "public" => copy_tree(&e.path(), &to),
            true => {}
            false => drop(std::fs::copy(e.path(), to).unwrap()),
        }
    }
    // Nothing a build saved for the next one either: this build reads every page.
    let _ = std::fs::remove_file(copy.path().join(".fencepost/build-pages.bin"));
    let out = fencepost()
        .arg("--site")
        .arg(copy.path())
        .args(["build", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    copy
}
