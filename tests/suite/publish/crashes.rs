//! Publish killed or stalled at each step boundary (fail points): leases have one holder across
//! processes, a crash at any step writes all or nothing, reruns never repeat.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;
use fencepost_ledger::items::{self, State};

fn processing(s: &TestSite) -> usize {
    let all = s.try_read(items::every_view).unwrap_or_default();
    all.iter().filter(|i| i.state == State::Processing).count()
}

#[cfg(feature = "failpoints")]
#[test]
fn takeover_between_preflight_and_commit_changes_nothing_for_the_stalled_run() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    // A: stalls after preflight with a 60 s lease at NOW.
    let a = s.spawn_publish(
        NOW,
        &["--lease-secs", "60"],
        &[("FAILPOINTS", "publish.after_preflight=sleep(3000)")],
    );
    wait_for("A to pass preflight", || {
        s.path(".fencepost/ledger.sqlite").exists() && processing(&s) == 1
    });
    // While A holds a live lease, another run skips the item.
    let early = s.publish("2026-12-01T00:00:30Z");
    assert_eq!(ids(&early, "skipped_locked"), vec![1]);
    // B: after A's lease expired, takes it over (fence 2) and publishes.
    let b = s.publish("2026-12-01T00:01:01Z");
    assert_eq!(ids(&b, "published"), vec![1]);
    assert_eq!(s.fence("publication:1").unwrap(), 2);
    // A wakes up and tries its commit: lease_lost, and nothing of it lands.
    let a = finish(a);
    assert_eq!(ids(&a, "lease_lost"), vec![1], "{a}");
    assert!(ids(&a, "published").is_empty());
    assert_eq!(a["revision"], 1);
    assert_eq!(s.revision(), 1);
    assert_eq!(s.pages(), 1);
    assert_eq!(s.ledger_item("1").page.unwrap().content_version, 1);
    assert_eq!(s.audit().len(), 1);
    let owner_b = b["owner"].as_str().unwrap().to_string();
    let detail = s.audit()[0].detail.clone();
    assert!(
        detail.contains(&owner_b),
        "the audit entry is B's: {detail}"
    );
    s.cmd(&["verify"]).assert().success();
}

#[cfg(feature = "failpoints")]
#[test]
fn a_live_lease_has_exactly_one_holder_across_processes() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish("2026-11-01T00:00:00Z"); // create the ledger; the item is not due yet
    let children: Vec<_> = (0..5)
        .map(|_| {
            s.spawn_publish(
                NOW,
                &[],
                &[("FAILPOINTS", "publish.after_preflight=sleep(1500)")],
            )
        })
        .collect();
    let reports: Vec<_> = children.into_iter().map(finish).collect();
    let published: Vec<i64> = reports.iter().flat_map(|r| ids(r, "published")).collect();
    let skipped: usize = reports.iter().map(|r| ids(r, "skipped_locked").len()).sum();
    let found_done = reports.iter().filter(|r| r["unchanged"] == 1).count();
    assert_eq!(published, vec![1], "{reports:?}");
    // Every other run met the live lease, or (if it started after the holder finished) found
    // the item already published; none took the lease over.
    assert_eq!(skipped + found_done, 4, "{reports:?}");
    assert!(skipped >= 1, "the runs overlapped: {reports:?}");
    assert_eq!(s.fence("publication:1").unwrap(), 1);
    assert_eq!(s.revision(), 1);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_crash_after_preflight_is_redriven_once_the_lease_expires() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    let out = s.with_failpoints(
        &["publish", "--now", NOW, "--lease-secs", "60"],
        "publish.after_preflight=panic",
    );
    assert!(!out.status.success());
    // Decided but not carried out: processing, under a live lease, nothing public.
    assert_eq!(processing(&s), 2);
    assert_eq!(s.revision(), 0);
    assert_eq!(s.pages(), 0);
    // The crashed attempt counts (publish.max_attempts parks an item that keeps crashing).
    assert_eq!(s.ledger_item("1").attempts, 1);
    let r = s.publish("2026-12-01T00:00:59Z");
    assert_eq!(ids(&r, "skipped_locked"), vec![1, 2]);
    let r = s.publish("2026-12-01T00:01:00Z");
    assert_eq!(ids(&r, "published"), vec![1, 2]);
    assert_eq!(s.revision(), 2);
    // Carried out: the count starts again for the item's next change.
    assert_eq!(s.ledger_item("1").attempts, 0);
    s.cmd(&["verify"]).assert().success();
}

#[cfg(feature = "failpoints")]
#[test]
fn a_crash_inside_the_commit_batch_writes_nothing() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let points = [
        "publish.commit.after_page=panic",
        "publish.commit.before_read_back=panic",
        "publish.before_commit=panic",
    ];
    for (i, fp) in points.into_iter().enumerate() {
        // Each crash leaves a 1 s lease behind; the next attempt comes after it.
        let now = format!("2026-12-01T00:00:0{}Z", 2 * i);
        let out = s.with_failpoints(&["publish", "--now", &now, "--lease-secs", "1"], fp);
        assert!(!out.status.success(), "{fp}");
        assert_eq!(s.revision(), 0, "{fp}");
        assert_eq!(s.pages(), 0, "{fp}");
        assert_eq!(s.audit().len(), 0, "{fp}");
    }
    let r = s.publish("2026-12-01T00:00:06Z");
    assert_eq!(ids(&r, "published"), vec![1]);
    assert_eq!(s.revision(), 1);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_crash_after_the_commit_keeps_the_publication_and_reruns_do_not_repeat_it() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let out = s.with_failpoints(&["publish", "--now", NOW], "publish.after_commit=panic");
    assert!(!out.status.success());
    assert_eq!(s.revision(), 1);
    assert_eq!(s.status()["leases"], 0, "released in the commit");
    let r = s.publish(NOW);
    assert!(ids(&r, "published").is_empty());
    assert_eq!(r["unchanged"], 1);
    assert_eq!(s.revision(), 1);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_crash_before_the_sync_writes_nothing() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let out = s.with_failpoints(&["publish", "--now", NOW], "publish.after_scan=panic");
    assert!(!out.status.success());
    assert_eq!(s.items().len(), 0);
    assert_eq!(ids(&s.publish(NOW), "published"), vec![1]);
}
