//! Publishers racing: the same instant, a stalled publisher and its takeover, a file removed
//! under another run's lease, a stale scan.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;
use fencepost_ledger::items::State;
use std::sync::atomic::Ordering;

/// What the publish job writes, as the ledger's API reads it back (every item with its
/// page, the audit log, the status), for "the last runs change nothing".
fn dump(s: &TestSite) -> String {
    let audit: Vec<String> = s
        .audit()
        .iter()
        .map(|e| format!("{} {} {} {}", e.seq, e.action, e.subject, e.current_hash))
        .collect();
    format!("{:#?}\n{}\n{}", s.items(), audit.join("\n"), s.status())
}

// 7. A withdrawal re-checks the file under its lease.

#[cfg(feature = "failpoints")]
#[test]
fn a_stale_scan_that_missed_a_file_does_not_withdraw_its_page() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.publish(NOW);
    assert_eq!(s.revision(), 2);
    // Run A scans while item 1's file is briefly away (a save by rename), then stalls.
    let away = s.path("content/answers/.1.md.away");
    std::fs::rename(s.path("content/answers/1.md"), &away).unwrap();
    let a = Stalled::start(
        &s,
        &["publish", "--now", NOW],
        "publish.after_scan=sleep(1500)",
    );
    a.wait_until("publish.after_scan");
    std::fs::rename(&away, s.path("content/answers/1.md")).unwrap();
    // Run B sees the file where it always was: nothing to do.
    assert!(ids(&s.publish(NOW), "withdrawn").is_empty());
    // A wakes with its stale picture; under the lease the file is there: no withdrawal.
    let out = a.finish();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(ids(&r, "withdrawn").is_empty(), "{r}");
    assert_eq!(s.revision(), 2, "no spurious public change");
    let public = s.items().into_iter().filter_map(|i| i.page);
    assert_eq!(public.filter(|p| !p.withdrawn).count(), 2);
    // A run that decided to withdraw, and holds the lease, while the file comes back: the
    // re-check under the lease ends it as a conflict (no other run told the ledger).
    std::fs::rename(s.path("content/answers/1.md"), &away).unwrap();
    let a = Stalled::start(
        &s,
        &["publish", "--now", NOW],
        "publish.after_preflight=sleep(1500)",
    );
    a.wait_until("publish.after_preflight");
    std::fs::rename(&away, s.path("content/answers/1.md")).unwrap();
    let out = a.finish();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "conflict"), vec![1], "{r}");
    assert_eq!(s.revision(), 2);
    // A real removal still withdraws.
    std::fs::remove_file(s.path("content/answers/1.md")).unwrap();
    assert_eq!(ids(&s.publish(NOW), "withdrawn"), vec![1]);
}

// 9. A file removed before publication leaves nothing, even if a run held its lease.

#[cfg(feature = "failpoints")]
#[test]
fn a_file_removed_while_another_run_held_its_lease_leaves_nothing_behind() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let a = Stalled::start(
        &s,
        &["publish", "--now", NOW, "--lease-secs", "60"],
        "publish.after_preflight=return",
    );
    let out = a.finish();
    assert_eq!(out.status.code(), Some(137));
    std::fs::remove_file(s.path("content/answers/1.md")).unwrap();
    // While A's lease is live, B cannot forget the row.
    s.publish("2026-12-01T00:00:30Z");
    assert_eq!(s.items().len(), 1);
    // Once it expired, the next run does.
    s.publish("2026-12-01T00:01:01Z");
    assert_eq!(s.items().len(), 0);
    assert_eq!(s.status()["failing"].as_array().unwrap().len(), 0);
}

// 13. The seed's integration scenario: two cron runs at once, several rounds.

#[test]
fn two_publishers_at_the_same_instant_publish_six_items_once_each() {
    let png = |n: u8| {
        let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
        b.push(n);
        b
    };
    let routes: Vec<(&'static str, u16, Vec<u8>)> = vec![
        ("/1.png", 200, png(1)),
        ("/2.png", 200, png(2)),
        ("/3.png", 200, png(3)),
        ("/4.png", 200, png(4)),
        ("/5.png", 200, png(5)),
        ("/6.png", 200, png(6)),
    ];
    let (base, hits) = image_server(routes);
    let s = TestSite::new();
    for i in 1..=6 {
        s.item_with(
            i,
            &format!("2026-11-0{i}"),
            &format!("image = \"{base}/{i}.png\"\n"),
            &format!("Answer body for item {i}."),
        );
    }
    s.publish("2026-11-01T00:00:00Z"); // creates the ledger; nothing is due yet
    let mut published = Vec::new();
    for round in 0..4 {
        let now = format!("2026-12-0{}T00:00:00Z", round + 1);
        let a = s.spawn_publish(&now, &[], &[]);
        let b = s.spawn_publish(&now, &[], &[]);
        let (ra, rb) = (finish(a), finish(b));
        published.extend(ids(&ra, "published"));
        published.extend(ids(&rb, "published"));
    }
    // Every item exactly once between the two, whichever run did it (one may skip what the
    // other holds, and finish it in a later round).
    published.sort();
    assert_eq!(published, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(s.revision(), 6);
    let pages = s.items().into_iter().filter_map(|i| i.page);
    assert_eq!(pages.filter(|p| p.content_version == 1).count(), 6);
    assert_eq!(hits.load(Ordering::SeqCst), 6, "each image fetched once");
    let stored = s.items().into_iter().filter(|i| i.image_stored).count();
    assert_eq!(stored, 6, "every item's image is stored");
    let blobs = walkdir::WalkDir::new(s.path(".fencepost/images"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .count();
    assert_eq!(blobs, 6, "each image stored once");
    // Two more runs at once change nothing.
    let before = dump(&s);
    let a = s.spawn_publish("2026-12-09T00:00:00Z", &[], &[]);
    let b = s.spawn_publish("2026-12-09T00:00:00Z", &[], &[]);
    let (ra, rb) = (finish(a), finish(b));
    for r in [&ra, &rb] {
        assert!(ids(r, "published").is_empty() && ids(r, "updated").is_empty());
    }
    assert_eq!(dump(&s), before);
    assert_eq!(hits.load(Ordering::SeqCst), 6);
    s.cmd(&["verify"]).assert().success();
}

// 14. The takeover in the seed's exact shape.

#[cfg(feature = "failpoints")]
#[test]
fn a_stalled_publisher_loses_to_a_takeover_that_has_not_committed_yet() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    // The first publisher stalls after preflight with a 60 s lease.
    let first = Stalled::start(
        &s,
        &["publish", "--now", NOW, "--lease-secs", "60"],
        "publish.after_preflight=sleep(2500)",
    );
    first.wait_until("publish.after_preflight");
    // Its lease expires; a second run takes the lease (fence 2) but does not commit.
    let out = s.with_failpoints(
        &["publish", "--now", "2026-12-01T00:01:01Z"],
        "publish.after_preflight=return",
    );
    assert_eq!(out.status.code(), Some(137));
    assert_eq!(s.fence("publication:1").unwrap(), 2);
    let out = first.finish();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "lease_lost"), vec![1], "{r}");
    // No page, revision 0, the item still processing.
    assert_eq!(s.pages(), 0);
    assert_eq!(s.revision(), 0);
    assert_eq!(s.ledger_item("1").state, State::Processing);
}
