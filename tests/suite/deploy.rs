//! `fencepost deploy` (`crates/fencepost-deploy/src/`, `crates/fencepost-deploy/src/targets/`): a revision to a bucket as a resumable
//! saga, against a folder and a real S3 server over HTTP (moto) — racing deployers, a crash at
//! every step, parking and retry, only what changed uploaded.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

mod cron;
mod killed;
mod previews;
mod runners;
mod targets;

use crate::common::*;
use fencepost_bucket::remote::Remote;
use fencepost_core::clock::{Clock, Instant};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Eight checkouts of `s`, each pointing at another of its revisions (1 to 8).
fn eight_checkouts(s: &TestSite) -> Vec<tempfile::TempDir> {
    (1..=8)
        .map(|r| {
            let d = tempfile::tempdir().unwrap();
            assert!(std::process::Command::new("cp")
                .arg("-a")
                .arg(format!("{}/.", s.root().display()))
                .arg(d.path())
                .status()
                .unwrap()
                .success());
            let out = fencepost()
                .arg("--site")
                .arg(d.path())
                .args(["rollback", &r.to_string(), "--now", NOW])
                .output()
                .unwrap();
            assert_success(&out);
            d
        })
        .collect()
}

/// Watches the pointer at `url` until `done`: it never goes back. Returns how often it moved.
fn pointer_watcher(
    url: String,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let remote = Remote::open(&url).unwrap();
        let rt = rt();
        let mut seen = 0;
        let mut moves = 0;
        while !done.load(Ordering::SeqCst) {
            if let Some((p, _)) = rt.block_on(remote.read_pointer()).unwrap() {
                assert!(
                    p.id.revision >= seen,
                    "the pointer went back from {seen} to {}",
                    p.id.revision
                );
                if p.id.revision > seen {
                    moves += 1;
                }
                seen = p.id.revision;
            }
        }
        moves
    })
}

#[test]
fn eight_racing_deployers_end_at_the_highest_revision_and_never_go_back() {
    let s = site_with_revisions(8);
    // Eight CI runners, each with its own checkout whose pointer names another revision.
    let copies = eight_checkouts(&s);
    let url = format!("memory://{}", unique("race"));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = pointer_watcher(url.clone(), done.clone());
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
    let runs: Vec<_> = copies
        .iter()
        .map(|d| {
            let (root, url, barrier) = (d.path().to_path_buf(), url.clone(), barrier.clone());
            std::thread::spawn(move || {
                let site = fencepost_site::Site::open(&root).unwrap();
                let clock = Clock::Fixed(Instant::parse_rfc3339(NOW).unwrap());
                barrier.wait();
                fencepost_deploy::run(
                    &site,
                    &clock,
                    &fencepost_deploy::Options {
                        to: Some(url),
                        ..Default::default()
                    },
                    &|_, _| {},
                )
                .unwrap()
            })
        })
        .collect();
    let reports: Vec<_> = runs.into_iter().map(|t| t.join().unwrap()).collect();
    done.store(true, Ordering::SeqCst);
    let moves = watcher.join().unwrap();
    assert!(moves >= 1);
    let remote = Remote::open(&url).unwrap();
    let (live, _) = rt().block_on(remote.read_pointer()).unwrap().unwrap();
    assert_eq!(live.id.revision, 8);
    let blobs = rt().block_on(remote.list("objects")).unwrap().len() as u64;
    let uploaded: u64 = reports.iter().map(|r| r.blobs_uploaded).sum();
    assert_eq!(
        uploaded, blobs,
        "every blob uploaded exactly once: {reports:#?}"
    );
    for r in &reports {
        let o = serde_json::to_value(r.outcome).unwrap();
        assert!(o == "deployed" || o == "superseded", "{r:?}");
    }
}

/// Every object of a folder bucket: key → bytes (the lock file aside).
fn bucket_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    tree(dir)
        .into_iter()
        .filter(|(k, _)| k != "current.lock")
        .collect()
}

#[cfg(feature = "failpoints")]
/// A folder bucket's objects, the pointer without what names one deploy: the operation that
/// moved it (the receipt's subject) and the audit tip when it moved.
fn without_operation(dir: &Path, point: &str) -> BTreeMap<String, Vec<u8>> {
    let mut t = bucket_tree(dir);
    let mut p: serde_json::Value = serde_json::from_slice(&t["current"]).unwrap();
    assert!(p["operation"].is_string(), "{point}: {p}");
    assert!(p["audit_tip"].is_object(), "{point}: {p}");
    p.as_object_mut().unwrap().remove("operation");
    p.as_object_mut().unwrap().remove("audit_tip");
    t.insert("current".into(), serde_json::to_vec(&p).unwrap());
    t
}

#[cfg(feature = "failpoints")]
#[test]
fn a_crash_at_every_deploy_step_resumes_to_the_same_bucket() {
    for point in [
        "deploy.after_plan",
        "deploy.after_blobs",
        "deploy.after_manifest",
        "deploy.before_pointer",
        "deploy.after_pointer",
    ] {
        let s = site_with_revisions(2);
        let crashed = tempfile::tempdir().unwrap();
        let clean = tempfile::tempdir().unwrap();
        let url = |d: &tempfile::TempDir| format!("file://{}", d.path().display());
        s.json(&[
            "deploy",
            "--to",
            &url(&crashed),
            "--now",
            NOW,
            "--revision",
            "1",
        ]);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = folder_reader(crashed.path().to_path_buf(), stop.clone());
        let out = s.with_failpoints(
            &["deploy", "--to", &url(&crashed), "--now", NOW],
            &format!("{point}=return"),
        );
        assert_eq!(out.status.code(), Some(137), "{point}");
        let st = s.status();
        assert_eq!(st["deploys"].as_array().unwrap().len(), 1, "{point}: {st}");
        // While the crashed run's lease is live, nobody else touches its operation.
        let early = s.json(&["deploy", "--to", &url(&crashed), "--now", NOW]);
        assert_eq!(early["outcome"], "skipped_locked", "{point}: {early}");
        // After it expired (deploy.lease_secs = 300), the next run resumes it.
        let later = "2026-12-01T00:05:01Z";
        let again = s.json(&["deploy", "--to", &url(&crashed), "--now", later]);
        assert_eq!(again["outcome"], "deployed", "{point}: {again}");
        assert_eq!(again["resumed"], true, "{point}: {again}");
        assert_eq!(again["revision"], 2);
        // A third run finds nothing to do.
        let third = s.json(&["deploy", "--to", &url(&crashed), "--now", later]);
        assert_eq!(third["outcome"], "already_deployed", "{point}: {third}");
        stop.store(true, Ordering::SeqCst);
        assert!(reader.join().unwrap() > 0);
        // An uninterrupted deploy of the same two revisions leaves the same bucket, object
        // for object. (The pointer records when it moved: the same instants here, unless
        // the crash came after the pointer had moved.)
        s.json(&[
            "deploy",
            "--to",
            &url(&clean),
            "--now",
            NOW,
            "--revision",
            "1",
        ]);
        let pointer_moved_at = if point == "deploy.after_pointer" {
            NOW
        } else {
            later
        };
        s.json(&["deploy", "--to", &url(&clean), "--now", pointer_moved_at]);
        // The pointer names the operation that moved it (the receipt's subject) and the
        // audit tip when it moved (both buckets are deployed from one ledger, one after the
        // other): those differ, everything else is the same.
        let without_operation = |dir: &Path| without_operation(dir, point);
        assert_same_tree(
            &without_operation(crashed.path()),
            &without_operation(clean.path()),
            point,
        );
        assert!(s.status()["deploys"].as_array().unwrap().is_empty());
        s.cmd(&["verify"]).assert().success();
    }
}

#[cfg(feature = "failpoints")]
#[test]
fn a_deploy_that_keeps_failing_is_parked_and_retry_rearms_it() {
    let s = site_with_revisions(1);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.write("fencepost.toml", "[deploy]\nmax_attempts = 3\n");
    let out = s.with_failpoints(
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_plan=return",
    );
    assert_eq!(out.status.code(), Some(137));
    // The revision the plan names disappears: every attempt fails, and says why.
    let dir = s.current_dir();
    let aside = s.path("revision-aside");
    std::fs::rename(&dir, &aside).unwrap();
    for attempt in 1..=2 {
        // Each run comes after the previous one's lease (deploy.lease_secs = 300).
        let now = format!("2026-12-01T0{attempt}:00:00Z");
        let out = s
            .cmd(&["deploy", "--to", &url, "--json", "--now", &now])
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(1), "{r}");
        assert_eq!(r["outcome"], "failed");
        assert!(
            r["error"].as_str().unwrap().contains("garbage-collected"),
            "{r}"
        );
    }
    let st = s.status();
    let op = &st["deploys"][0];
    assert_eq!(op["status"], "failed", "{st}");
    let id = op["id"].as_str().unwrap().to_string();
    // Parked means stopped: a run neither retries it nor plans a new one for its revision;
    // it exits non-zero naming the operation and the two ways out.
    std::fs::rename(&aside, &dir).unwrap();
    let out = s
        .cmd(&[
            "deploy",
            "--to",
            &url,
            "--json",
            "--now",
            "2026-12-01T03:00:00Z",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["outcome"], "parked", "{r}");
    assert_eq!(
        s.status()["deploys"].as_array().unwrap().len(),
        1,
        "one operation, parked"
    );
    // --retry re-arms the parked one, which resumes and finds its work done.
    let r = s.json(&[
        "deploy",
        "--to",
        &url,
        "--retry",
        &id,
        "--now",
        "2026-12-01T04:00:00Z",
    ]);
    assert_eq!(r["resumed"], true, "{r}");
    assert_eq!(r["operation"], id.as_str(), "{r}");
    assert!(s.status()["deploys"].as_array().unwrap().is_empty());
}

#[test]
fn previews_and_backward_moves_are_refused() {
    let s = site_with_revisions(2);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--revision", "1", "--now", NOW]);
    assert_eq!(
        s.json(&["deploy", "--to", &url, "--now", NOW])["outcome"],
        "deployed"
    );
    let out = s
        .cmd(&["deploy", "--to", &url, "--revision", "1", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("rollback"));
    // Rollback moves it back, and holds.
    let rb = s.json(&["rollback", "1", "--to", &url, "--now", NOW]);
    assert!(rb["to"].as_str().unwrap().starts_with("1-"), "{rb}");
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "held", "{r}");
    assert_eq!(s.audited("rollback"), 1);
    // No target at all is a clear error.
    let out = s.cmd(&["deploy", "--now", NOW]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("deploy.to"));
    // Credentials in the URL are refused, never echoed back (issue 19: by any command).
    let bad = "s3://AKIAEXAMPLEKEY:wJalrSecretKey@bucket/x";
    for args in [
        vec!["deploy", "--to", bad],
        vec!["gc", "--to", bad, "--keep", "1"],
        vec!["rollback", "1", "--to", bad],
        vec!["verify", "--to", bad],
        vec!["serve", "--bind", "127.0.0.1:0", "--from", bad],
    ] {
        for json in [false, true] {
            let mut c = s.cmd(&args);
            c.args(["--now", NOW]);
            if json {
                c.arg("--json");
            }
            let out = c
                .timeout(std::time::Duration::from_secs(20))
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                !out.status.success() && said.contains("credentials"),
                "{args:?}: {said}"
            );
            assert!(
                !said.contains("wJalrSecretKey") && !said.contains("AKIAEXAMPLEKEY"),
                "{args:?} echoes the credentials: {said}"
            );
        }
    }
}

#[test]
fn a_deploy_after_one_publish_puts_only_what_changed_and_lists_nothing() {
    let moto = Moto::start();
    moto.bucket("incremental");
    let proxy = Proxy::start(&moto.endpoint, false);
    let s = site_with_revisions(20);
    let env = Moto::env(&proxy.endpoint);
    let deploy = |s: &TestSite| {
        s.json_env(
            &["deploy", "--to", "s3://incremental/www", "--now", NOW],
            &env,
        )
    };
    deploy(&s);
    let files = s.current_dir();
    let total_files = tree(&files).len();
    s.item(21, "2026-11-21");
    s.json(&["publish", "--build", "--now", NOW]);
    let before = proxy.log.lock().unwrap().len();
    let r = deploy(&s);
    let log: Vec<(String, String, u16)> = proxy.log.lock().unwrap()[before..].to_vec();
    let puts = log.iter().filter(|(m, _, _)| m == "PUT").count() as u64;
    let lists = log
        .iter()
        .filter(|(_, p, _)| p.contains("list-type"))
        .count();
    assert_eq!(
        lists, 0,
        "the bucket's pointer names the manifest the ledger recorded: no listing needed: {log:#?}"
    );
    let uploaded = r["blobs_uploaded"].as_u64().unwrap();
    assert!(uploaded >= 1 && uploaded < total_files as u64 / 3, "{r}");
    // PUTs: the changed files, their shards (at most one per file), the root, the pointer.
    assert!(
        puts <= 2 * uploaded + 2,
        "{puts} PUTs for {uploaded} changed files: {log:#?}"
    );
}

/// Issue 18: a deploy that fails for good is parked after `deploy.max_attempts` (5), and
/// then every run exits non-zero without planning or uploading anything until a person acts;
/// `--abandon` closes it (audited), and a newer revision deploys past it.
#[test]
fn a_parked_deploy_stops_every_later_run_until_abandoned_and_a_newer_revision_passes() {
    let s = site_with_revisions(1);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    // `objects` is a file, not a folder: every blob upload fails, however often it is tried.
    std::fs::write(bucket.path().join("objects"), "in the way").unwrap();
    let deploy = |now: &str| {
        let out = s
            .cmd(&["deploy", "--to", &url, "--json", "--now", now])
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.code(), r)
    };
    for attempt in 1..=5 {
        let (code, r) = deploy(NOW);
        assert_eq!(
            (code, r["outcome"].as_str()),
            (Some(1), Some("failed")),
            "attempt {attempt}: {r}"
        );
    }
    let st = s.status();
    assert_eq!(st["deploys"][0]["status"], "failed", "{st}");
    assert_eq!(st["deploys"][0]["attempts"], 5, "{st}");
    let id = st["deploys"][0]["id"].as_str().unwrap().to_string();
    let before = bucket_tree(bucket.path());
    for run in 1..=5 {
        let (code, r) = deploy(NOW);
        assert_eq!(
            (code, r["outcome"].as_str()),
            (Some(1), Some("parked")),
            "run {run}: {r}"
        );
        let e = r["error"].as_str().unwrap();
        assert!(
            e.contains(&id) && e.contains("--retry") && e.contains("--abandon"),
            "{e}"
        );
        assert_eq!(r["blobs_uploaded"], 0);
    }
    let unfinished = s.status()["deploys"].as_array().unwrap().len();
    assert_eq!(unfinished, 1, "no new operation: the parked one only");
    assert_same_tree(&before, &bucket_tree(bucket.path()), "nothing uploaded");
    // A person closes it: audited, and no longer unfinished.
    let r = s.json(&["deploy", "--to", &url, "--abandon", &id, "--now", NOW]);
    assert_eq!(r["outcome"], "abandoned", "{r}");
    assert_eq!(s.audited("abandon"), 1);
    assert!(s.status()["deploys"].as_array().unwrap().is_empty());
    let out = s
        .cmd(&["deploy", "--to", &url, "--abandon", &id, "--now", NOW])
        .output()
        .unwrap();
    assert!(!out.status.success(), "abandoning twice is refused");
    // A newer revision deploys (the bucket fixed meanwhile).
    std::fs::remove_file(bucket.path().join("objects")).unwrap();
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(
        (r["outcome"].as_str(), r["revision"].as_i64()),
        (Some("deployed"), Some(2)),
        "{r}"
    );
}

/// A newer revision may deploy past a parked older one (which blocks only itself); once it
/// is live, the older one is closed (issue 35.10: it has nothing left to do, and the parked
/// gauge must fall), with an audit entry.
#[test]
fn a_newer_revision_deploys_past_a_parked_older_one() {
    let s = site_with_revisions(1);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.write("fencepost.toml", "[deploy]\nmax_attempts = 1\n");
    std::fs::write(bucket.path().join("objects"), "in the way").unwrap();
    let out = s
        .cmd(&["deploy", "--to", &url, "--json", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(s.status()["deploys"][0]["status"], "failed");
    std::fs::remove_file(bucket.path().join("objects")).unwrap();
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(
        (r["outcome"].as_str(), r["revision"].as_i64()),
        (Some("deployed"), Some(2)),
        "{r}"
    );
    assert_eq!(
        s.status()["deploys"],
        serde_json::json!([]),
        "closed once passed"
    );
    let log = s.json(&["log", "--limit", "5"]);
    let closed = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "abandon")
        .unwrap_or_else(|| panic!("no audit entry: {log}"))
        .clone();
    assert!(
        closed["detail"]
            .as_str()
            .unwrap()
            .contains("\"passed_by\":2"),
        "{closed}"
    );
}
