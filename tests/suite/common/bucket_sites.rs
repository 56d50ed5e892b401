//! Sites with a folder or S3 bucket, shared by the deploy, history and origin tests.
use super::*;
use fencepost_bucket::remote::Remote;
use serde_json::Value;
use std::sync::atomic::Ordering;

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A site with item 1 published and built, and an empty folder bucket with its URL.
pub fn one_item_and_a_bucket() -> (TestSite, tempfile::TempDir, String) {
    let s = TestSite::new();
    let bucket = tempfile::tempdir().unwrap();
    let url = folder(&bucket);
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    (s, bucket, url)
}

pub fn folder(d: &tempfile::TempDir) -> String {
    format!("file://{}", d.path().display())
}

/// `fencepost <args> --json` with `env`, as its own process: (exit code, stdout JSON).
pub fn run(s: &TestSite, args: &[&str], env: &[(String, String)]) -> (Option<i32>, Value) {
    let mut c = fencepost();
    c.arg("--site").arg(s.root()).args(args).arg("--json");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        Value::String(format!(
            "stdout: {} stderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    });
    (out.status.code(), v)
}

/// The live pointer of a bucket as JSON.
pub fn pointer_of(remote: &Remote) -> Value {
    let bytes = rt().block_on(remote.get("current")).unwrap().unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// Every page path of the live local revision (`index.html`, `answers/N/index.html`, …).
pub fn pages_of(s: &TestSite) -> Vec<String> {
    let m: Value = serde_json::from_slice(
        &std::fs::read(s.current_dir().join(".fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .filter(|p| p.ends_with(".html"))
        .collect()
}

/// GETs every page through `serve --from URL`: all must answer 200.
pub fn serves_every_page(s: &TestSite, url: &str) {
    serves_every_page_env(s, url, &[]);
}

/// [`serves_every_page`] with `env` (an S3 endpoint and its credentials).
pub fn serves_every_page_env(s: &TestSite, url: &str, env: &[(String, String)]) {
    let server = s.serve_env(&["--from", url], env);
    for p in pages_of(s) {
        let target = format!("/{}", p.trim_end_matches("index.html"));
        let r = server.get(&target);
        assert_eq!(r.status, 200, "{target}: {}", r.text());
    }
}

pub fn unique(name: &str) -> String {
    format!(
        "{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// A site with revisions 1..=n built (nothing collected).
pub fn site_with_revisions(n: i64) -> TestSite {
    let s = TestSite::new();
    for i in 1..=n {
        s.item(i, &format!("2026-11-{:02}", i));
        s.json(&["publish", "--build", "--now", NOW]);
    }
    s
}

/// A reader that follows the bucket's pointer and fetches every file of the revision it
/// names, checking each against the manifest, until told to stop. Returns the checks made.
pub fn folder_reader(
    dir: std::path::PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let remote = Remote::open(&format!("file://{}", dir.display())).unwrap();
        let rt = rt();
        let mut checks = 0;
        while !stop.load(Ordering::SeqCst) {
            if live_root_is_whole(&rt, &remote) {
                checks += 1;
            }
        }
        checks
    })
}

/// Reads the bucket's live revision as an origin would: its pointer, its root, and every
/// blob the root names, each hashing to its name. False if no pointer is there yet.
pub fn live_root_is_whole(rt: &tokio::runtime::Runtime, remote: &Remote) -> bool {
    let Some((p, _)) = rt.block_on(remote.read_pointer()).unwrap() else {
        return false;
    };
    let root_bytes = rt
        .block_on(remote.get(&Remote::root_key(&p.manifest)))
        .unwrap()
        .expect("the pointer names a manifest that is there");
    let root: fencepost_bucket::layout::Root = serde_json::from_slice(&root_bytes).unwrap();
    let entries = rt
        .block_on(fencepost_deploy::targets::objects::read_entries(
            remote, &root,
        ))
        .unwrap();
    for e in entries {
        let bytes = rt
            .block_on(remote.get(&Remote::blob_key(&e.sha256)))
            .unwrap()
            .unwrap_or_else(|| panic!("{} of revision {} is missing", e.path, p.id));
        assert!(
            fencepost_bucket::layout::verified(&bytes, &e.sha256),
            "{}",
            e.path
        );
    }
    true
}
