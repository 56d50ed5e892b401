//! What a build reuses from the previous revision is what that revision holds, even when files
//! were pruned or edited while the build ran.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;

// 1. Critical: a reusable page that cannot be linked was rendered with an empty body.

#[test]
fn a_reused_page_whose_old_file_was_pruned_is_rendered_with_its_body() {
    let (s, second) = items_then_one_more_with_the_first_pruned(3);
    assert!(second["rendered"].as_u64().unwrap() >= 2, "{second}");
    assert_revision_whole(&revision_dir(&s, &second));
}

/// The same where no other page needs that body: more items than the feeds hold, the pruned
/// one the oldest. The bodies of a chunk are read before its reuse is tried, for the files
/// not found in the previous revision (`Sink::find`); one found but not had is read after.
#[test]
fn a_pruned_page_no_feed_holds_is_rendered_with_its_body() {
    let (s, second) = items_then_one_more_with_the_first_pruned(25);
    let dir = revision_dir(&s, &second);
    assert_revision_whole(&dir);
    let feed = std::fs::read_to_string(dir.join("atom.xml")).unwrap();
    assert!(
        !feed.contains("Answer body for item 1."),
        "the feed holds item 1: {feed}"
    );
}

/// Items 1..=n published and built; someone prunes item 1's file from the live revision (the
/// manifest still lists it); item n + 1 published and built. Returns the second build.
fn items_then_one_more_with_the_first_pruned(n: i64) -> (TestSite, serde_json::Value) {
    let s = TestSite::new();
    for i in 1..=n {
        s.item(i, &format!("2026-11-{i:02}"));
    }
    s.publish(NOW);
    let first = s.build(&[]);
    std::fs::remove_file(revision_dir(&s, &first).join("answers/1/index.html")).unwrap();
    s.item(n + 1, &format!("2026-11-{:02}", n + 1));
    s.publish(NOW);
    let second = s.build(&[]);
    (s, second)
}

// 3. Medium: a static file or template saved during a build.

#[cfg(feature = "failpoints")]
#[test]
fn a_static_file_saved_during_a_build_is_what_its_manifest_says() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.write("static/style.css", "body { color: red }\n");
    let b = Stalled::start(
        &s,
        &["build", "--now", NOW],
        "build.after_snapshot=sleep(1500)",
    );
    b.wait_until("build.after_snapshot");
    s.write("static/style.css", "body { color: blue }\n");
    s.write(
        "templates/404.html",
        "{% extends \"base.html\" %}{% block content %}EDITED-DURING-BUILD{% endblock content %}",
    );
    let out = b.finish();
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dir = revision_dir(&s, &report);
    assert_revision_whole(&dir);
    assert_eq!(
        std::fs::read_to_string(dir.join("style.css")).unwrap(),
        "body { color: red }\n",
        "the revision holds the bytes its fingerprint was computed from"
    );
    assert!(!std::fs::read_to_string(dir.join("404.html"))
        .unwrap()
        .contains("EDITED-DURING-BUILD"));
    // The next build sees the new files under a new fingerprint.
    let next = s.build(&[]);
    assert_ne!(next["build"], report["build"]);
    let dir2 = revision_dir(&s, &next);
    assert_revision_whole(&dir2);
    assert!(std::fs::read_to_string(dir2.join("404.html"))
        .unwrap()
        .contains("EDITED-DURING-BUILD"));
    assert!(std::fs::read_to_string(dir2.join("style.css"))
        .unwrap()
        .contains("blue"));
}
