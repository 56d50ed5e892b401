//! `fencepost publish` (`crates/fencepost-publish/src/`): due items recorded once, embargoed ones left, edits,
//! withdrawals and returns each one revision, one-way rules, results slots.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

mod crashes;
mod hosts;
mod races;
mod retries;

use crate::common::*;
use predicates::str::contains;

/// Issue 19, small gaps: out-of-range settings, a test-only target, a bad --revision, and a
/// rollback to what is live are refused or change nothing, and write nothing.
#[test]
fn small_gaps_are_refused_before_anything_is_written() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    for (extra, key) in [
        ("[publish]\ngrace_minutes = 4294967295\n", "grace_minutes"),
        ("[images]\nmax_bytes = 0\n", "max_bytes"),
    ] {
        let text = if cfg.contains(extra.lines().next().unwrap()) {
            cfg.replace(extra.lines().next().unwrap(), extra.trim_end())
        } else {
            format!("{cfg}\n{extra}")
        };
        s.write("fencepost.toml", &text);
        s.cmd(&["publish", "--now", NOW])
            .assert()
            .failure()
            .stderr(contains(key));
    }
    s.write("fencepost.toml", &cfg);
    s.json(&["publish", "--build", "--now", NOW]);
    // memory:// keeps nothing after the command: refused, not audited.
    for args in [
        vec!["deploy", "--to", "memory://x"],
        vec!["gc", "--to", "memory://x", "--keep", "1"],
        vec!["serve", "--from", "memory://x"],
    ] {
        s.cmd(&args)
            .assert()
            .failure()
            .stderr(contains("memory://"));
    }
    // A revision that is not there: no target folder made, no target recorded.
    let gone = tempfile::tempdir().unwrap();
    let target = gone.path().join("bucket");
    let url = format!("file://{}", target.display());
    s.cmd(&["deploy", "--to", &url, "--revision", "99", "--now", NOW])
        .assert()
        .failure();
    assert!(!target.exists(), "the target folder was made");
    let st = s.status();
    assert!(st["targets"].as_array().unwrap().is_empty(), "{st}");
    assert!(s.audit().iter().all(|e| e.action == "publish"));
    // Rolling back to what is live, locally or in a bucket, moves nothing and audits nothing.
    s.json(&["rollback", "1", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let r = s.json(&["rollback", "1", "--to", &url, "--now", NOW]);
    assert_eq!(r["operation"], serde_json::Value::Null, "{r}");
    assert_eq!(s.audited("rollback"), 0);
}

/// `publish --build` whose items another publisher holds builds what the ledger holds after
/// that publisher's commit, not the revision before it.
#[cfg(feature = "failpoints")]
#[test]
fn publish_build_waits_for_the_publisher_holding_its_items() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let holder = Stalled::start(
        &s,
        &["publish", "--now", NOW],
        "publish.after_preflight=sleep(1500)",
    );
    holder.wait_until("publish.after_preflight");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(ids(&r, "skipped_locked"), vec![1], "{r}");
    assert_eq!(
        r["build"]["revision"], 1,
        "built before the holder committed: {r}"
    );
    assert_success(&holder.finish());
    assert!(s.current_dir().join("answers/1/index.html").exists());
}

// 8. The embargo follows the current config.

#[test]
fn a_changed_grace_window_applies_to_items_not_yet_public() {
    let s = TestSite::new();
    s.item(1, "2026-11-30"); // due 2026-12-01T00:10Z with the default 10 minutes
    let r = s.publish("2026-12-01T00:05:00Z");
    assert_eq!(r["next_embargo_at"], "2026-12-01T00:10:00Z");
    s.write("fencepost.toml", "[publish]\ngrace_minutes = 600\n");
    let r = s.publish("2026-12-01T00:15:00Z");
    assert!(ids(&r, "published").is_empty(), "{r}");
    assert_eq!(r["next_embargo_at"], "2026-12-01T10:00:00Z");
    // And back down: shortening the window takes effect too.
    s.write("fencepost.toml", "[publish]\ngrace_minutes = 5\n");
    let r = s.publish("2026-12-01T00:06:00Z");
    assert_eq!(ids(&r, "published"), vec![1], "{r}");
    // An explicit publish_at is left alone.
    s.item_with(2, "2026-11-30", "publish_at = 2026-12-05T00:00:00Z\n", "x");
    s.write("fencepost.toml", "[publish]\ngrace_minutes = 1\n");
    let r = s.publish("2026-12-01T00:07:00Z");
    assert_eq!(r["next_embargo_at"], "2026-12-05T00:00:00Z");
}

#[test]
fn publishes_due_items_once_and_leaves_embargoed_ones() {
    let s = TestSite::new();
    s.item(1, "2026-11-28")
        .item(2, "2026-11-29")
        .item(3, "2026-11-30")
        .item(4, "2026-12-05");
    // 2026-11-30 is due at 2026-12-01T00:10Z: not yet at NOW (00:00).
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1, 2]);
    assert_eq!(r["revision"], 2);
    assert_eq!(r["embargoed"], 2);
    assert_eq!(r["next_embargo_at"], "2026-12-01T00:10:00Z");
    for key in [
        "owner",
        "updated",
        "withdrawn",
        "unchanged",
        "skipped_locked",
        "lease_lost",
        "conflict",
    ] {
        assert!(r.get(key).is_some(), "missing {key}");
    }
    // One millisecond before the grace window ends: still embargoed.
    let r = s.publish("2026-12-01T00:09:59.999Z");
    assert!(ids(&r, "published").is_empty());
    assert_eq!(r["unchanged"], 2);
    let r = s.publish("2026-12-01T00:10:00Z");
    assert_eq!(ids(&r, "published"), vec![3]);
    assert_eq!(r["revision"], 3);
    // A rerun changes nothing public and leaves the revision alone.
    let r = s.publish("2026-12-01T00:11:00Z");
    assert!(ids(&r, "published").is_empty() && ids(&r, "updated").is_empty());
    assert_eq!(r["unchanged"], 3);
    assert_eq!(r["revision"], 3);
    let st = s.status();
    assert_eq!(st["items"]["published"], 3);
    assert_eq!(st["items"]["pending"], 1);
    assert_eq!(
        st["leases"], 0,
        "every lease is released when its run is done"
    );
    assert_eq!(s.audit().len(), 3);
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn publish_at_overrides_the_day_rule() {
    let s = TestSite::new();
    s.item_with(
        1,
        "2026-11-01",
        "publish_at = 2026-12-24T18:00:00Z\n",
        "later",
    );
    assert!(ids(&s.publish(NOW), "published").is_empty());
    assert_eq!(
        ids(&s.publish("2026-12-24T18:00:00Z"), "published"),
        vec![1]
    );
}

#[test]
fn edits_withdrawals_and_returns_each_bump_the_revision_once() {
    let s = TestSite::new();
    s.item(1, "2026-11-01")
        .item(2, "2026-11-02")
        .item(3, "2026-11-03");
    assert_eq!(s.publish(NOW)["revision"], 3);

    // Edit the body: one update.
    s.item_with(1, "2026-11-01", "", "A corrected body.");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "updated"), vec![1]);
    assert_eq!(r["revision"], 4);
    assert_eq!(s.body("1"), "<p>A corrected body.</p>\n");

    // A change to the file that renders the same page (comment, key order) is not public.
    s.write(
        "content/answers/1.md",
        "+++\n# reordered\nprice = 4.99\ntitle = \"Item 1\"\nday = 2026-11-01\nid = 1\n+++\n\nA corrected body.\n",
    );
    let r = s.publish(NOW);
    assert!(ids(&r, "updated").is_empty(), "{r}");
    assert_eq!(r["revision"], 4);
    let r = s.publish(NOW);
    assert_eq!(
        r["unchanged"], 3,
        "the new source hash was recorded, so it is not re-rendered: {r}"
    );

    // Withdraw by flag and by removing the file.
    s.item_with(2, "2026-11-02", "withdrawn = true\n", "gone");
    std::fs::remove_file(s.path("content/answers/3.md")).unwrap();
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "withdrawn"), vec![2, 3]);
    assert_eq!(r["revision"], 6);
    assert_eq!(s.status()["items"]["withdrawn"], 2);
    assert_eq!(
        s.publish(NOW)["revision"],
        6,
        "withdrawing again changes nothing"
    );

    // Bring item 3 back: published again, one more revision.
    s.item(3, "2026-11-03");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![3]);
    assert_eq!(r["revision"], 7);
    let page = s.ledger_item("3").page.unwrap();
    assert_eq!((page.content_version, page.withdrawn), (3, false));
    assert_eq!(s.audit().len(), 7);
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn a_file_removed_before_publication_leaves_no_trace() {
    let s = TestSite::new();
    s.item(1, "2026-12-20");
    s.publish(NOW);
    assert_eq!(s.status()["items"]["pending"], 1);
    std::fs::remove_file(s.path("content/answers/1.md")).unwrap();
    let r = s.publish(NOW);
    assert!(
        ids(&r, "withdrawn").is_empty(),
        "never public, so nothing to withdraw"
    );
    assert_eq!(r["revision"], 0);
    assert_eq!(s.status()["items"]["pending"], 0);
}

#[test]
fn one_way_rules_indexable_and_image_never_go_back() {
    let s = TestSite::new();
    s.write(
        "content/images/a.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    s.item_with(1, "2026-11-01", "image = \"images/a.svg\"\n", "first");
    assert_eq!(ids(&s.publish(NOW), "published"), vec![1]);
    // The editor drops the image and marks the page noindex, and changes the body.
    s.item_with(1, "2026-11-01", "indexable = false\n", "second");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "updated"), vec![1]);
    let page = s.ledger_item("1").page.unwrap();
    assert!(page.indexable, "an indexable page never returns to noindex");
    assert!(
        page.image_sha256.is_some(),
        "a page that has its image keeps it"
    );
    assert_eq!(s.body("1"), "<p>second</p>\n");
    // A noindex page may become indexable.
    s.item_with(2, "2026-11-02", "indexable = false\n", "x");
    s.publish(NOW);
    s.item_with(2, "2026-11-02", "indexable = true\n", "x");
    assert_eq!(ids(&s.publish(NOW), "updated"), vec![2]);
}

#[test]
fn results_add_gives_dense_slots_and_refuses_duplicates() {
    let s = TestSite::new();
    let add = |session: &str| {
        s.json(&[
            "results",
            "add",
            "--puzzle",
            "4",
            "--session",
            session,
            "--outcome",
            "win",
            "--guesses",
            "3",
            "--now",
            NOW,
        ])
    };
    assert_eq!(
        add("a"),
        serde_json::json!({"inserted": true, "slot": 1, "reason": null})
    );
    assert_eq!(add("b")["slot"], 2);
    assert_eq!(
        add("a"),
        serde_json::json!({"inserted": false, "slot": 1, "reason": "duplicate"})
    );
    s.write("fencepost.toml", "[results]\nmax_per_puzzle = 2\n");
    assert_eq!(
        add("c"),
        serde_json::json!({"inserted": false, "slot": null, "reason": "full"})
    );
    s.cmd(&[
        "results",
        "add",
        "--puzzle",
        "4",
        "--session",
        "d",
        "--outcome",
        "draw",
        "--guesses",
        "3",
    ])
    .assert()
    .failure();
    s.cmd(&[
        "results",
        "add",
        "--puzzle",
        "4",
        "--session",
        "d",
        "--outcome",
        "win",
        "--guesses",
        "0",
    ])
    .assert()
    .failure()
    .stderr(predicates::str::contains("--guesses"));
}

#[test]
fn unchanged_files_are_not_read_again() {
    let s = TestSite::new();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let age = |id: i64, t: std::time::SystemTime| {
        let f = std::fs::File::options()
            .write(true)
            .open(s.path(&format!("content/answers/{id}.md")))
            .unwrap();
        f.set_modified(t).unwrap();
    };
    // A file changed within the racy window (2 s, by the later of its mtime and ctime, which
    // no tool can set back) is always re-read; past it, only a changed stat is.
    let past_racy_window = || {
        std::thread::sleep(
            fencepost_site::content::RACY_WINDOW + std::time::Duration::from_millis(100),
        )
    };
    for id in 1..=20 {
        s.item(id, "2026-11-01");
        age(id, old);
    }
    assert_eq!(s.publish(NOW)["files_read"], 20);
    past_racy_window();
    assert_eq!(s.publish(NOW)["files_read"], 0);
    // Same size, new content and mtime: the stat cache notices.
    s.item_with(7, "2026-11-01", "", "Answer body for item 8.");
    age(7, old + std::time::Duration::from_secs(1));
    past_racy_window();
    let r = s.publish(NOW);
    assert_eq!(r["files_read"], 1);
    assert_eq!(ids(&r, "updated"), vec![7]);
    // A file written just now is always re-read: its stamp cannot yet be trusted.
    s.item_with(8, "2026-11-01", "", "Answer body for item 8.");
    assert_eq!(s.publish(NOW)["files_read"], 1);
}
