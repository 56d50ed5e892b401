//! Built sites and their revisions' manifests, shared by the build, history and preview tests.
use super::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub fn manifest(dir: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
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
