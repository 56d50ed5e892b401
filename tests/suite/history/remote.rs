//! Rollback and gc on a bucket (`rollback --to`, `gc --to`): receipts, the grace period, waits
//! for running deploys, refusals of incomplete roots.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;
use fencepost_bucket::remote::Remote;
use serde_json::Value;
use std::path::Path;

/// Object ages in a folder bucket are file times: set one to `at` (RFC 3339).
fn touch(path: &Path, at: &str) {
    assert!(std::process::Command::new("touch")
        .arg("-d")
        .arg(at)
        .arg(path)
        .status()
        .unwrap()
        .success());
}

fn touch_all(dir: &Path, at: &str) {
    for e in walk(dir) {
        touch(&e, at);
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn gc_keeps_everything_a_young_root_names_and_rollback_to_it_serves_every_page() {
    let s = TestSite::new();
    let bucket = tempfile::tempdir().unwrap();
    let url = folder(&bucket);
    let mut roots = Vec::new();
    for i in 1..=3 {
        s.item(i, &format!("2026-11-0{i}"));
        s.json(&["publish", "--build", "--now", NOW]);
        let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
        assert_eq!(r["outcome"], "deployed");
        roots.push(
            pointer_of(&Remote::open(&url).unwrap())["manifest"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    // Everything is two hours old except revision 2's root, uploaded a minute ago; the
    // revisions stopped being live long before the grace period.
    let later = "2026-12-01T12:00:00Z";
    touch_all(bucket.path(), "2026-12-01T10:00:00Z");
    touch(
        &bucket.path().join(format!("manifests/{}.json", roots[1])),
        "2026-12-01T11:59:00Z",
    );
    let gc = s.json(&["gc", "--to", &url, "--keep", "1", "--now", later]);
    assert_eq!(gc["removed_manifests"], 1, "{gc}");
    // Revision 2 is complete: a rollback to it is allowed, and serves every page.
    let rb = s.json(&["rollback", "2", "--to", &url, "--now", later]);
    assert!(rb["to"].as_str().unwrap().starts_with("2-"), "{rb}");
    let ok = s.json(&["verify", "--to", &url]);
    assert_eq!(ok["ok"], true, "{ok}");
    s.json(&["rollback", "2", "--now", later]);
    serves_every_page(&s, &url);
    // Revision 1's root is gone: a rollback to it is refused, naming what is missing, and
    // leaves the pointer alone.
    let before = pointer_of(&Remote::open(&url).unwrap());
    let out = s
        .cmd(&["rollback", "1", "--to", &url, "--now", later])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(pointer_of(&Remote::open(&url).unwrap()), before);
}

#[test]
fn a_rollback_to_an_incomplete_root_is_refused_naming_what_is_missing() {
    let s = TestSite::new();
    let bucket = tempfile::tempdir().unwrap();
    let url = folder(&bucket);
    for i in 1..=2 {
        s.item(i, &format!("2026-11-0{i}"));
        s.json(&["publish", "--build", "--now", NOW]);
        s.json(&["deploy", "--to", &url, "--now", NOW]);
    }
    // A blob only revision 1 has (its home page lists one item) disappears.
    let home1 = std::fs::read(
        s.path("public/revisions")
            .read_dir()
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with("1-"))
            .unwrap()
            .path()
            .join("index.html"),
    )
    .unwrap();
    let sha = fencepost_core::digest::sha256_hex(&home1);
    std::fs::remove_file(bucket.path().join("objects").join(&sha)).unwrap();
    let before = tree(bucket.path());
    let out = s
        .cmd(&["rollback", "1", "--to", &url, "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&sha) && err.contains("incomplete"), "{err}");
    assert_same_tree(&before, &tree(bucket.path()), "nothing moved");
    assert_eq!(s.audited("rollback"), 0);
}

#[cfg(feature = "failpoints")]
#[test]
fn gc_to_waits_for_a_running_deploy_so_no_live_root_names_a_missing_object() {
    let (s, _bucket, url) = one_item_and_a_bucket();
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    // The deploy of revision 2 stalls with its new blobs uploaded and the pointer still on
    // revision 1: to a gc without the lease they are unreferenced, and with --grace-secs 0
    // they would go.
    let deploy = Stalled::start(
        &s,
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_blobs=sleep(1500)",
    );
    deploy.wait_until("deploy.after_blobs");
    let gc = s.json(&[
        "gc",
        "--to",
        &url,
        "--keep",
        "1",
        "--grace-secs",
        "0",
        "--now",
        NOW,
    ]);
    let out = deploy.finish();
    assert_success(&out);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["outcome"], "deployed", "{r}");
    assert_eq!(gc["kept"].as_array().unwrap().len(), 1, "{gc}");
    let ok = s.json(&["verify", "--to", &url]);
    assert_eq!(
        (ok["ok"].as_bool(), ok["revision"].as_i64()),
        (Some(true), Some(2)),
        "{ok}"
    );
    serves_every_page(&s, &url);
}

#[cfg(feature = "failpoints")]
#[test]
fn local_gc_keeps_the_revision_a_crashed_deploy_needs_and_the_deploy_finishes() {
    let (s, _bucket, url) = one_item_and_a_bucket();
    let out = s.with_failpoints(
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_blobs=return",
    );
    assert_eq!(out.status.code(), Some(137));
    let needed = s.current_dir();
    // A newer revision is built, and local gc runs with no grace at all.
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let gc = s.json(&["gc", "--keep", "1", "--grace-secs", "0", "--now", NOW]);
    assert!(
        needed.exists(),
        "gc removed the revision an unfinished deploy needs: {gc}"
    );
    // After the crashed run's lease expired: the operation resumes and finishes, then the
    // newer revision goes live.
    let later = "2026-12-01T00:05:01Z";
    let r = s.json(&["deploy", "--to", &url, "--now", later]);
    assert_eq!(
        (r["outcome"].as_str(), r["revision"].as_i64()),
        (Some("deployed"), Some(2)),
        "{r}"
    );
    assert!(s.status()["deploys"].as_array().unwrap().is_empty());
    assert_eq!(s.audited("deploy"), 2);
    // Now nothing needs it.
    s.json(&["gc", "--keep", "1", "--grace-secs", "0", "--now", later]);
    assert!(!needed.exists());
}

/// `gc --to` keeps the root that was live until less than `--grace-secs` ago (origins within
/// their pointer TTL still serve it), and collects it once the grace period is over.
#[test]
fn gc_to_keeps_the_root_retired_within_the_grace_period() {
    let (s, bucket, url) = one_item_and_a_bucket();
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    // Revision 1 is retired at NOW.
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    // Every object is old; only the pointer's retirement record says revision 1 was live.
    touch_all(bucket.path(), "2026-11-30T00:00:00Z");
    let soon = "2026-12-01T00:01:00Z";
    let gc = s.json(&[
        "gc",
        "--to",
        &url,
        "--keep",
        "1",
        "--grace-secs",
        "300",
        "--now",
        soon,
    ]);
    assert_eq!(gc["removed_manifests"], 0, "{gc}");
    assert_eq!(gc["retired_kept"].as_array().unwrap().len(), 1, "{gc}");
    let later = "2026-12-01T00:06:00Z";
    let gc = s.json(&[
        "gc",
        "--to",
        &url,
        "--keep",
        "1",
        "--grace-secs",
        "300",
        "--now",
        later,
    ]);
    assert_eq!(gc["removed_manifests"], 1, "{gc}");
    assert_eq!(s.json(&["verify", "--to", &url])["ok"], true);
}

#[test]
fn gc_to_keeps_the_live_and_newest_revisions_and_young_objects() {
    let s = site_with_revisions(3);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    for r in 1..=3 {
        s.json(&[
            "deploy",
            "--to",
            &url,
            "--revision",
            &r.to_string(),
            "--now",
            NOW,
        ]);
    }
    let manifests = || {
        std::fs::read_dir(bucket.path().join("manifests"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .count()
    };
    assert_eq!(manifests(), 3);
    // Everything is younger than an hour (object times are the real clock's): nothing goes.
    let young = s.json(&["gc", "--to", &url, "--keep", "1"]);
    assert_eq!(young["removed_manifests"], 0, "{young}");
    let gc = s.json(&["gc", "--to", &url, "--keep", "1", "--grace-secs", "0"]);
    assert_eq!(gc["removed_manifests"], 2, "{gc}");
    assert!(gc["removed_blobs"].as_u64().unwrap() >= 1, "{gc}");
    assert_eq!(manifests(), 1);
    // What is left still serves completely.
    let remote = Remote::open(&url).unwrap();
    assert!(live_root_is_whole(&rt(), &remote));
}

#[cfg(feature = "failpoints")]
#[test]
fn a_remote_rollback_killed_after_the_pointer_moved_gets_its_receipt_from_the_next_deploy() {
    let s = site_with_revisions(2);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--revision", "1", "--now", NOW]);
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let out = s.with_failpoints(
        &["rollback", "1", "--to", &url, "--now", NOW],
        "rollback.remote.after_pointer=return",
    );
    assert_eq!(out.status.code(), Some(137));
    let rollbacks = |s: &TestSite| s.audited("rollback");
    assert_eq!(rollbacks(&s), 0, "the receipt is what the crash lost");
    // The pointer did move (and holds); the next deploy writes the receipt, once.
    let r = s.json(&["deploy", "--to", &url, "--now", "2026-12-01T00:05:01Z"]);
    assert_eq!(r["outcome"], "held", "{r}");
    assert_eq!(rollbacks(&s), 1);
    s.json(&["deploy", "--to", &url, "--now", "2026-12-01T00:10:01Z"]);
    assert_eq!(rollbacks(&s), 1);
    assert!(s.status()["deploys"].as_array().unwrap().is_empty());
    s.cmd(&["verify"]).assert().success();
}

/// Issue 35.10: a remote rollback's receipt is written under the target's lease. A rollback
/// paused after moving the pointer loses its lease to a later deploy, which writes the
/// receipt; resumed, the rollback writes nothing more and says it lost the lease (it used to
/// report the rollback as its own, done).
#[cfg(feature = "failpoints")]
#[test]
fn a_rollback_that_lost_its_lease_writes_no_receipt_and_says_so() {
    let s = site_with_revisions(2);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--revision", "1", "--now", NOW]);
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let paused = Stalled::start(
        &s,
        &["rollback", "1", "--to", &url, "--now", NOW],
        "rollback.remote.after_pointer=sleep(2500)",
    );
    paused.wait_until("rollback.remote.after_pointer");
    // Past the rollback's lease: a deploy takes the target over and finishes the receipt.
    let r = s.json(&["deploy", "--to", &url, "--now", "2026-12-01T00:05:01Z"]);
    assert_eq!(r["outcome"], "held", "{r}");
    assert_eq!(s.audited("rollback"), 1);
    let out = paused.finish();
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("lost the deploy lease"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(s.audited("rollback"), 1, "one receipt");
    assert!(s.status()["deploys"].as_array().unwrap().is_empty());
    assert_eq!(s.json(&["verify", "--to", &url])["ok"], true);
}

/// Issue 77.8: after `deploy --adopt`, the adopted ledger's revisions are not this ledger's to
/// count: `gc --keep 2` keeps this ledger's two newest (and the other's, untouched, named as
/// `foreign_kept`), so `rollback 2` still works. (It counted the other's revision 6 and
/// deleted this ledger's revision 2.)
#[test]
fn gc_after_adopt_counts_only_this_ledgers_revisions() {
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    let owner = TestSite::new();
    for i in 1..=6 {
        owner.item(i, &format!("2026-11-0{i}"));
    }
    owner.json(&["publish", "--build", "--now", NOW]);
    owner.json(&["deploy", "--to", &url, "--now", NOW]);
    let ours = TestSite::new();
    ours.item(1, "2026-11-01").item(2, "2026-11-02");
    ours.json(&["publish", "--build", "--now", NOW]);
    let adopted = ours.json(&["deploy", "--to", &url, "--adopt", "--now", NOW]);
    assert_eq!(adopted["revision"], 2, "{adopted}");
    ours.item(3, "2026-11-03");
    ours.json(&["publish", "--build", "--now", NOW]);
    ours.json(&["deploy", "--to", &url, "--now", NOW]);
    let gc = ours.json(&["gc", "--to", &url, "--keep", "2", "--grace-secs", "0"]);
    assert_eq!(gc["removed_manifests"], 0, "{gc}");
    assert_eq!(gc["foreign_kept"].as_array().unwrap().len(), 1, "{gc}");
    let rb = ours.json(&["rollback", "2", "--to", &url, "--now", NOW]);
    assert!(rb["to"].as_str().unwrap().starts_with("2-"), "{rb}");
    let remote = Remote::open(&url).unwrap();
    assert!(live_root_is_whole(&rt(), &remote));
}
