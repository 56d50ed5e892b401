//! Helpers for driving the real `fencepost` binary against temporary sites, by concern:
//! sites and fixtures here; HTTP (`http.rs`), the S3 server (`moto.rs`), PostgreSQL
//! (`pg.rs`) and the edge Worker (`edge.rs`) beside it.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

mod bucket_sites;
mod d1;
mod edge;
mod http;
mod moto;
mod observe;
mod pg;
mod revisions;
#[allow(unused_imports)]
pub use bucket_sites::*;
pub use d1::*;
pub use edge::*;
pub use http::*;
pub use moto::*;
pub use pg::*;
pub use revisions::*;

/// Instants the tests use. Items are played on 2026-11-0N and due at 00:10 the next day.
pub const NOW: &str = "2026-12-01T00:00:00Z";

/// `gc` keeping only the newest revision, with no grace period, at [`NOW`].
pub const GC_KEEP_1: [&str; 7] = ["gc", "--keep", "1", "--grace-secs", "0", "--now", NOW];

/// [`GC_KEEP_1`], every revision it removes deleted (none set aside as the spare).
pub const GC_KEEP_1_NO_SPARE: [&str; 8] = [
    "gc",
    "--keep",
    "1",
    "--grace-secs",
    "0",
    "--no-spare",
    "--now",
    NOW,
];
/// Before the embargoed post's instant (the features fixture and the origins' table).
pub const BEFORE: &str = NOW;

pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("fencepost")
}

/// `fencepost` as the tests run it: a harness that simulates the calendar, so a `--now`
/// ahead of the real clock stands (`FENCEPOST_ALLOW_FUTURE_NOW=1`; without it, PostgreSQL
/// re-checks every publication by its own clock). A test of that check removes the variable.
pub fn fencepost() -> std::process::Command {
    let mut c = std::process::Command::new(bin());
    c.env("FENCEPOST_ALLOW_FUTURE_NOW", "1");
    // The token of every test D1 proxy (a site on another engine never reads it).
    c.env("FENCEPOST_D1_TOKEN", D1_TOKEN);
    // The preview key of every test (docs/previews.md): origins serve previews, and
    // `preview deploy|link` sign with it; a test of "no key" removes it.
    c.env("FENCEPOST_PREVIEW_KEY", PREVIEW_KEY);
    c
}

/// The preview key every test binary and Worker is given.
pub const PREVIEW_KEY: &str = "7f3a9c0e5b2d4f6a8c1e3b5d7f9a0c2e4b6d8f1a3c5e7b9d0f2a4c6e8b1d3f5a";

pub struct TestSite {
    pub dir: tempfile::TempDir,
}

impl Drop for TestSite {
    /// A site on a test D1 ledger stops its proxy with it.
    fn drop(&mut self) {
        stop_d1_for(self.dir.path());
    }
}

impl TestSite {
    /// A site made by `fencepost init`, without its sample item.
    pub fn new() -> TestSite {
        let dir = tempfile::tempdir().unwrap();
        Command::from_std(fencepost())
            .args(["init"])
            .arg(dir.path())
            .args(["--now", NOW])
            .assert()
            .success();
        std::fs::remove_file(dir.path().join("content/answers/1.md")).unwrap();
        TestSite { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Writes `rel`. A whole new fencepost.toml is still this site's: it keeps the
    /// `ledger.site_id` the old one had, unless it names one itself (`set_site_id(None)`
    /// takes it away, for a site from before ids).
    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let kept = match (rel, self.site_id()) {
            ("fencepost.toml", Some(id)) if !text.contains("site_id") => {
                let line = format!("site_id = \"{id}\"\n");
                match text.find("[ledger]\n") {
                    Some(at) => {
                        let after = at + "[ledger]\n".len();
                        format!("{}{line}{}", &text[..after], &text[after..])
                    }
                    None => format!("{text}\n[ledger]\n{line}"),
                }
            }
            _ => text.to_string(),
        };
        std::fs::write(p, kept).unwrap();
        self
    }

    /// Writes `content/answers/<id>.md` played on `day` with a default title and body.
    pub fn item(&self, id: i64, day: &str) -> &Self {
        self.item_with(id, day, "", &format!("Answer body for item {id}."))
    }

    pub fn item_with(&self, id: i64, day: &str, extra_front_matter: &str, body: &str) -> &Self {
        self.write(
            &format!("content/answers/{id}.md"),
            &format!("+++\nid = {id}\nday = {day}\ntitle = \"Item {id}\"\nprice = 4.99\n{extra_front_matter}+++\n\n{body}\n"),
        )
    }

    /// `preview link NAME --ttl 1h`'s link, as a request sends it: its path and query.
    pub fn preview_target(&self, name: &str) -> String {
        let v = self.json(&[
            "preview",
            "link",
            name,
            "--ttl",
            "1h",
            "--base",
            "http://o/",
        ]);
        let url = v["url"].as_str().unwrap();
        url.strip_prefix("http://o").unwrap().to_string()
    }

    /// `fencepost --site <root> <args>`.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::from_std(fencepost());
        c.arg("--site").arg(self.root()).args(args);
        c
    }

    /// Runs `fencepost <args>`, which must fail, and returns what it wrote on stderr.
    pub fn failing(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        assert!(!out.status.success(), "fencepost {args:?} succeeded");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Runs `fencepost <args>` with the fail points `failpoints` set (needs `--features
    /// failpoints`) and returns its output, whatever the exit status.
    pub fn with_failpoints(&self, args: &[&str], failpoints: &str) -> std::process::Output {
        self.cmd(args)
            .env("FAILPOINTS", failpoints)
            .output()
            .unwrap()
    }

    /// Runs `publish --json --now <now>` and returns its JSON; panics on failure.
    pub fn publish(&self, now: &str) -> Value {
        self.json(&["publish", "--now", now])
    }

    /// Runs a command with `--json`, expects success, parses stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "fencepost {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "bad JSON from {args:?}: {e}: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// Like [`TestSite::json`], with extra environment variables (say, an S3 endpoint).
    pub fn json_env(&self, args: &[&str], env: &[(String, String)]) -> Value {
        let mut c = self.cmd(args);
        c.arg("--json");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "fencepost {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    pub fn status(&self) -> Value {
        self.json(&["status", "--now", NOW])
    }

    pub fn revision(&self) -> i64 {
        self.status()["revision"].as_i64().unwrap()
    }

    /// Spawns `publish --json` as a separate OS process (stdout piped).
    pub fn spawn_publish(&self, now: &str, extra: &[&str], env: &[(&str, &str)]) -> Child {
        let mut c = fencepost();
        c.arg("--site")
            .arg(self.root())
            .args(["publish", "--json", "--now", now])
            .args(extra);
        for (k, v) in env {
            c.env(k, v);
        }
        c.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// A raw connection to the SQLite ledger, for the tests that act as a writer which
    /// skips fencepost's rules (a tampered audit entry, a schema from the future). Tests
    /// observe the ledger through `observe.rs` (the `Ledger` API) or `--json`, never SQL.
    pub fn ledger(&self) -> rusqlite::Connection {
        let c = rusqlite::Connection::open(self.path(".fencepost/ledger.sqlite")).unwrap();
        c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
        c
    }
}

/// Waits for a spawned publish and parses its JSON report.
pub fn finish(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "publish failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Asserts that a finished command exited 0, showing its stderr when it did not.
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn ids(v: &Value, key: &str) -> Vec<i64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

impl TestSite {
    /// Runs `build --json --now <now>` (plus `extra`) and returns its JSON.
    pub fn build(&self, extra: &[&str]) -> Value {
        let mut args = vec!["build", "--now", NOW];
        args.extend_from_slice(extra);
        self.json(&args)
    }

    /// What `public/current` resolves to.
    pub fn current_dir(&self) -> PathBuf {
        std::fs::canonicalize(self.path("public/current")).unwrap()
    }

    pub fn current_file(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path("public/current").join(rel)).unwrap()
    }
}

/// How many entries of folder `dir` have names starting with `prefix`.
pub fn count_named(dir: &Path, prefix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .count()
}

/// Every file under `dir` (relative path → bytes).
pub fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// Asserts two trees are byte-identical, naming the paths that differ.
pub fn assert_same_tree(
    a: &std::collections::BTreeMap<String, Vec<u8>>,
    b: &std::collections::BTreeMap<String, Vec<u8>>,
    what: &str,
) {
    let differ: Vec<&String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    assert!(differ.is_empty(), "{what}: these files differ: {differ:?}");
}

pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A fencepost process stalled at a fail point, and the log that says when it got there.
pub struct Stalled {
    pub child: Child,
    log: PathBuf,
}

impl Stalled {
    pub fn start(s: &TestSite, args: &[&str], failpoints: &str) -> Stalled {
        Stalled::start_env(s, args, failpoints, &[])
    }

    /// [`Stalled::start`] with extra environment variables (an S3 endpoint, say).
    pub fn start_env(
        s: &TestSite,
        args: &[&str],
        failpoints: &str,
        env: &[(String, String)],
    ) -> Stalled {
        let log = s.path(&format!(".fp-{}.log", uuid_like()));
        let child = fencepost()
            .arg("--site")
            .arg(s.root())
            .args(args)
            .arg("--json")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("FAILPOINTS", failpoints)
            .env("FENCEPOST_FAILPOINT_LOG", &log)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Stalled { child, log }
    }

    pub fn wait_until(&self, point: &str) {
        wait_for(point, || {
            std::fs::read_to_string(&self.log).is_ok_and(|t| t.lines().any(|l| l == point))
        });
    }

    pub fn finish(self) -> std::process::Output {
        self.child.wait_with_output().unwrap()
    }
}

pub fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

pub fn copy_tree(src: &Path, dst: &Path) {
    for e in walkdir::WalkDir::new(src) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(src).unwrap();
        let to = dst.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

pub fn fixture_dir(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

impl TestSite {
    /// A fresh checkout of this site, as a stateless CI runner has it: its files, without
    /// `.fencepost/` (ledger, caches) or `public/`.
    pub fn checkout(&self) -> TestSite {
        let dir = tempfile::tempdir().unwrap();
        for e in walkdir::WalkDir::new(self.root())
            .into_iter()
            .filter_entry(|e| {
                let name = e.file_name().to_string_lossy();
                e.depth() != 1
                    || !(name == ".fencepost"
                        || name == "public"
                        || name == ".d1"
                        || name.starts_with(".bucket"))
            })
        {
            let e = e.unwrap();
            let to = dir.path().join(e.path().strip_prefix(self.root()).unwrap());
            if e.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::copy(e.path(), &to).unwrap();
            }
        }
        TestSite { dir }
    }
}

/// A copy of fixture site `name` in a temporary folder.
pub fn fixture(name: &str) -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture_dir(name), dir.path());
    TestSite { dir }
}

/// Runs `n` publishers at once, as separate processes, and returns each one's JSON.
pub fn race_publish(s: &TestSite, now: &str, n: usize) -> Vec<Value> {
    let children: Vec<_> = (0..n).map(|_| s.spawn_publish(now, &[], &[])).collect();
    children.into_iter().map(finish).collect()
}

/// Every item the runs published, checking that none was published twice.
pub fn published_once(runs: &[Value]) -> std::collections::BTreeSet<String> {
    let mut all = Vec::new();
    for r in runs {
        for v in r["published"].as_array().unwrap() {
            all.push(
                v.as_str()
                    .expect("items are named collection/id")
                    .to_string(),
            );
        }
    }
    let set: std::collections::BTreeSet<String> = all.iter().cloned().collect();
    assert_eq!(set.len(), all.len(), "an item was published twice: {all:?}");
    set
}

pub fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// None of `secrets` occurs in any of `files`, except the pointers (which name the next
/// embargo end on purpose and are never served).
pub fn assert_nothing_reveals(what: &str, files: &[(String, Vec<u8>)], secrets: &[&str]) {
    assert!(!files.is_empty(), "{what}: no files");
    for (name, bytes) in files {
        if name.ends_with("current.json") || name.ends_with("/current") {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        for s in secrets {
            assert!(!text.contains(s), "{what}: {name} reveals {s:?}");
        }
    }
}

/// The exit status of a command that held something back and did the rest (`EXIT_HELD`).
pub const HELD: i32 = 3;

/// Runs `publish --json` expecting the held status (3: something was held, the rest went
/// out) with its JSON on stdout.
pub fn publish_held(s: &TestSite, now: &str) -> Value {
    let out = s
        .cmd(&["publish", "--json", "--now", now])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(HELD),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// libfaketime (Debian's `faketime`), which shifts one process's clock: `scripts/test`
/// installs it, and a test that needs it fails without it.
pub fn libfaketime() -> std::path::PathBuf {
    let found = ["x86_64-linux-gnu", "aarch64-linux-gnu"]
        .iter()
        .map(|a| std::path::PathBuf::from(format!("/usr/lib/{a}/faketime/libfaketime.so.1")))
        .find(|p| p.exists());
    found.expect(
        "this test needs libfaketime (Debian's faketime): run scripts/test, which installs it",
    )
}
