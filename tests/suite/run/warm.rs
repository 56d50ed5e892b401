//! Issue 52: a run keeps its last build's pages and manifest (`crates/fencepost-build/src/warm.rs`) and reads
//! from the ledger only the pages changed since. What it builds that way must be, file for
//! file, what a build from nothing makes of the same ledger — through new items, an edit and
//! an expiry (a withdrawal), each in a cycle of its own.
use super::{item_at, items_due_an_hour_ago, rfc3339, timing, Running};
use crate::common::*;
use chrono::Utc;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Cycles until `done` holds of them all (at most 30 s).
fn cycles_until(r: &Running, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let (started, mut cycles) = (Instant::now(), Vec::new());
    while !done(&cycles) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "cycles so far: {cycles:?} {}",
            r.log()
        );
        if let Ok(c) = r.lines.recv_timeout(Duration::from_millis(200)) {
            cycles.push(c);
        }
    }
    cycles
}

/// The items of `key` over `cycles`, by id: within a cycle they come in the order they were
/// due, which items made a millisecond apart do not fix.
fn published(cycles: &[Value], key: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = (cycles.iter())
        .flat_map(|c| c["publish"][key].as_array().cloned().unwrap_or_default())
        .map(|v| v.as_i64().or_else(|| v["item"].as_i64()).unwrap_or(-1))
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn a_run_builds_from_the_pages_it_kept_what_a_build_from_nothing_makes() {
    let _t = timing();
    let s = TestSite::new();
    let now = Utc::now();
    items_due_an_hour_ago(&s, 4);
    let past = format!(
        "publish_at = {}\n",
        rfc3339(now - chrono::Duration::hours(1))
    );
    // Item 3 expires during the run (a withdrawal); items 5 and 6 go live during it.
    let expire = rfc3339(now + chrono::Duration::milliseconds(4500));
    s.item_with(
        3,
        "2026-11-03",
        &format!("{past}expire_at = {expire}\n"),
        "Item 3.",
    );
    item_at(&s, 5, now + chrono::Duration::milliseconds(2500));
    item_at(&s, 6, now + chrono::Duration::milliseconds(3500));
    let r = Running::start_inside(&s, &["--serve", "127.0.0.1:0"]);
    let first = cycles_until(&r, |c| !published(c, "published").is_empty());
    assert_eq!(
        published(&first, "published"),
        vec![1, 2, 3, 4],
        "{first:?}"
    );
    // An edit of a public item, picked up from the file change.
    s.item_with(2, "2026-11-02", &past, "Item 2, edited.");
    let rest = cycles_until(&r, |c| {
        published(c, "updated").contains(&2)
            && published(c, "published").contains(&6)
            && !published(c, "expired").is_empty()
    });
    let (status, _, tail) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
    let builds: Vec<&Value> = (first.iter().chain(&rest).chain(&tail))
        .filter_map(|c| c.get("build").filter(|b| b.is_object()))
        .collect();
    // The first build read every page; the later ones only what changed since the last.
    assert_eq!(builds[0]["pages_read"], 4, "{builds:?}");
    let later: Vec<i64> = (builds[1..].iter())
        .map(|b| b["pages_read"].as_i64().unwrap())
        .collect();
    assert!(
        later.len() >= 3 && later.iter().all(|&n| (1..=2).contains(&n)),
        "{later:?}"
    );
    // And each started from the live revision's files, linked between instants.
    assert!(
        builds[1..].iter().all(|b| b["linked_ahead"] == true),
        "{builds:?}"
    );
    // The same ledger, built from nothing in a copy of the site (its output left behind).
    let copy = built_from_nothing(&s);
    let (run_revision, run_files) = files_of(s.root());
    let (revision, files) = files_of(copy.path());
    assert_eq!(run_revision, s.revision());
    assert_eq!(run_revision, revision);
    assert_eq!(run_files, files);
    let page = std::fs::read_to_string(s.path("public/current/answers/2/index.html")).unwrap();
    assert!(page.contains("Item 2, edited."), "{page}");
    assert!(!s.path("public/current/answers/3/index.html").exists());
}
