//! Site search (issue 82, docs/search.md): a Pagefind index in every revision, read by
//! Pagefind's own search script in Node, that never finds a page before its instant. The
//! adversary is a reader who fetches every file of every public revision and bucket, and
//! queries the index for the embargoed post's words.
mod embargo;
mod reuse;

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A site with `[search] enabled = true` (and Zola's index beside it) and one public post.
fn site() -> TestSite {
    let s = TestSite::new();
    let mut config = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    config.push_str("\n[search]\nenabled = true\nbuild_search_index = true\n");
    s.write("fencepost.toml", &config);
    s.item_with(1, "2026-11-20", "", "Lanterns over the quiet harbour.");
    s
}

/// `publish --build` at `now`, which must succeed.
fn publish_build(s: &TestSite, now: &str) -> Value {
    s.json(&["publish", "--build", "--now", now])
}

/// The outside checkers' folder (`npm ci` by scripts/test): a test needing them fails, never
/// skips, without them.
fn checkers() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/search");
    for package in ["pagefind", "elasticlunr"] {
        assert!(
            dir.join("node_modules").join(package).exists(),
            "this test needs {package} in {}: run scripts/test, which installs it (npm ci)",
            dir.display()
        );
    }
    dir
}

/// Pagefind's own search — its npm package's pagefind.js and WebAssembly, run by Node
/// (tests/search/query.mjs) over the origin's index files — for `word`: the results' URL
/// paths.
fn query(server: &Server, word: &str) -> Vec<String> {
    let origin = format!("http://{}", server.addr);
    let v = node("query.mjs", &[origin.as_ref(), word.as_ref()]);
    (v.as_array().unwrap().iter())
        .map(|r| {
            r["url"]
                .as_str()
                .unwrap()
                .trim_start_matches(&origin)
                .to_string()
        })
        .collect()
}

/// elasticlunr itself (its npm package, tests/search/elasticlunr.mjs) loads Zola's index file
/// and searches it for `word`: the refs (permalinks) found.
pub(crate) fn elasticlunr(index: &Path, word: &str) -> Vec<String> {
    serde_json::from_value(node("elasticlunr.mjs", &[index.as_os_str(), word.as_ref()])).unwrap()
}

/// Runs checker `script` of tests/search with Node, which must succeed: its JSON output.
fn node(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let out = std::process::Command::new("node")
        .arg(checkers().join(script))
        .args(args)
        .output()
        .expect("node (Node.js) must be installed: scripts/test installs it");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every file under `dir`, Pagefind's gzipped data files (`pagefind_dcd` behind gzip)
/// unpacked, so a grep sees their words.
pub(crate) fn readable_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    (files_under(dir).into_iter())
        .map(|(name, bytes)| {
            let mut out = Vec::new();
            match flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut out) {
                Ok(_) if out.starts_with(b"pagefind_dcd") => (name, out),
                _ => (name, bytes),
            }
        })
        .collect()
}
