//! Rollback and gc on `public/` (`crates/fencepost-deploy/src/history/`): the pointer moves only to complete
//! revisions, gc keeps what a build or a recent pointer needs, every rollback audited.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

mod remote;
mod spare;
mod verify;

use crate::common::*;
use predicates::str::contains;

#[test]
fn rollback_and_gc() {
    let s = site_with(1);
    s.publish(NOW);
    let r1 = s.build(&[]);
    s.item(2, "2026-11-02");
    s.publish(NOW);
    s.build(&[]);
    s.item(3, "2026-11-03");
    s.publish(NOW);
    let r3 = s.build(&[]);
    assert_eq!(r3["revision"], 3);
    let rb = s.json(&["rollback", "1", "--now", NOW]);
    assert_eq!(rb["to"]["revision"], 1);
    assert_eq!(rb["from"]["revision"], 3);
    assert_eq!(
        s.current_dir().file_name().unwrap().to_string_lossy(),
        format!("1-{}", r1["build"].as_str().unwrap())
    );
    assert_eq!(s.audit().last().unwrap().action, "rollback");
    s.cmd(&["verify"]).assert().success();
    // A rollback holds: building revision 3 again (a cron every minute) leaves it alone...
    assert_eq!(s.build(&[])["pointer"], "held");
    assert!(s
        .current_dir()
        .ends_with(format!("1-{}", r1["build"].as_str().unwrap())));
    // ...until something new is published: revision 4 moves the pointer forward again.
    s.item(4, "2026-11-04");
    s.publish(NOW);
    assert_eq!(s.build(&[])["pointer"], "moved");
    assert!(!s.path("public/rollback.json").exists());
    s.json(&["rollback", "1", "--now", NOW]);
    // gc keeps the newest N and always the current one.
    // (No grace period here: this test is about which revisions count, not about when.)
    let gc = s.json(&["gc", "--keep", "1", "--grace-secs", "0"]);
    assert_eq!(gc["removed"].as_array().unwrap().len(), 2, "{gc}");
    assert_eq!(gc["kept"].as_array().unwrap().len(), 2, "{gc}");
    assert!(s.current_dir().join(".fencepost/manifest.json").exists());
    s.cmd(&["rollback", "2"])
        .assert()
        .failure()
        .stderr(contains("no complete revision 2"));
}

// 11. A rollback's audit entry survives a crash between the pointer move and the entry.

#[cfg(feature = "failpoints")]
#[test]
fn a_rollback_killed_after_the_pointer_moved_still_gets_its_audit_entry() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let out = s.with_failpoints(
        &["rollback", "1", "--now", NOW],
        "rollback.after_pointer=return",
    );
    assert_eq!(out.status.code(), Some(137));
    assert!(s
        .current_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("1-"));
    let rollbacks = |s: &TestSite| s.audited("rollback");
    assert_eq!(rollbacks(&s), 0, "the receipt is what the crash lost");
    // The next build writes it (once), and the rollback still holds.
    let b = s.build(&[]);
    assert_eq!(b["pointer"], "held");
    assert_eq!(rollbacks(&s), 1);
    s.build(&[]);
    assert_eq!(rollbacks(&s), 1);
    s.cmd(&["verify"]).assert().success();
}

#[cfg(feature = "failpoints")]
#[test]
fn gc_removing_the_revision_a_build_reuses_from_never_empties_a_page() {
    let s = TestSite::new();
    for i in 1..=6 {
        s.item(i, &format!("2026-11-0{i}"));
    }
    s.publish(NOW);
    s.build(&[]); // revision 6
    s.item(7, "2026-11-07");
    s.publish(NOW); // revision 7
                    // Build A of revision 7 reads revision 6's manifest, then stalls.
    let a = Stalled::start(
        &s,
        &["build", "--now", NOW],
        "build.after_previous=sleep(2500)",
    );
    a.wait_until("build.after_previous");
    // Meanwhile revision 8 is published and built, and gc removes revision 6.
    s.item(8, "2026-11-08");
    s.publish(NOW);
    s.build(&[]);
    let gc = s.json(&["gc", "--keep", "1", "--grace-secs", "0", "--now", NOW]);
    assert!(
        gc["removed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.as_str().unwrap().starts_with("6-")),
        "{gc}"
    );
    let out = a.finish();
    assert_success(&out);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["revision"], 7);
    assert_eq!(report["pointer"], "kept_higher", "{report}");
    assert_revision_whole(&revision_dir(&s, &report));
    assert_revision_whole(&s.current_dir());
}

// 2. High: rollback racing gc left the pointer on a deleted revision.

#[cfg(feature = "failpoints")]
#[test]
fn rollback_to_a_revision_gc_removed_meanwhile_fails_and_leaves_the_pointer() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    s.item(2, "2026-11-02");
    s.publish(NOW);
    s.build(&[]);
    let live = s.current_dir();
    let audits = s.audit().len();
    let r = Stalled::start(
        &s,
        &["rollback", "1", "--now", NOW],
        "rollback.before_pointer=sleep(2000)",
    );
    r.wait_until("rollback.before_pointer");
    let gc = s.json(&["gc", "--keep", "1", "--grace-secs", "0", "--now", NOW]);
    assert_eq!(gc["removed"].as_array().unwrap().len(), 1, "{gc}");
    let out = r.finish();
    assert!(!out.status.success(), "the rollback must fail");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no complete revision 1-"), "{err}");
    assert_eq!(s.current_dir(), live, "the pointer stays where it was");
    assert_eq!(s.audit().len(), audits, "a failed rollback is not audited");
}

#[test]
fn gc_keeps_a_revision_that_was_live_within_the_grace_period() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    let first = s.build(&[]); // live from NOW
    s.item(2, "2026-11-02");
    s.publish(NOW);
    s.build(&[]); // revision 1 retired at NOW
    let old = revision_dir(&s, &first);
    let within = s.json(&["gc", "--keep", "1", "--now", "2026-12-01T00:04:59Z"]);
    assert_eq!(within["in_grace"].as_array().unwrap().len(), 1, "{within}");
    assert!(old.exists());
    let after = s.json(&["gc", "--keep", "1", "--now", "2026-12-01T00:05:01Z"]);
    assert_eq!(after["removed"].as_array().unwrap().len(), 1, "{after}");
    assert!(!old.exists());
}
