//! The spare (`gc` sets the newest revision it removes aside whole; the next build starts from
//! it and changes only what differs): every revision made from one is the revision a cold
//! build makes, file for file, with nothing else in its folder.

use crate::common::*;
use predicates::str::contains;
use sha2::Digest;
use std::collections::BTreeMap;

/// Every file in revision folder `dir` (but its manifest and index), with its SHA-256; and
/// every file the manifest lists, with its own: a revision whole and with nothing else in it
/// gives the same map twice.
fn files_in(dir: &std::path::Path) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    for e in walkdir::WalkDir::new(dir).min_depth(1) {
        let e = e.unwrap();
        let empty = e.file_type().is_dir() && std::fs::read_dir(e.path()).unwrap().next().is_none();
        assert!(!empty, "folder {} left empty", e.path().display());
    }
    let found = tree(dir)
        .into_iter()
        .filter(|(rel, _)| !rel.starts_with(".fencepost/"))
        .map(|(rel, bytes)| (rel, hex::encode(sha2::Sha256::digest(bytes))))
        .collect();
    let listed = manifest(dir)["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap().to_string();
            (path, f["sha256"].as_str().unwrap().to_string())
        })
        .collect();
    (found, listed)
}

/// A site with items 1..=`n` and a revision built for each from the second on (the first
/// revision holds items 1 and 2).
fn built(n: i64) -> TestSite {
    let s = site_with(2);
    s.publish(NOW);
    s.build(&[]);
    for i in 3..=n {
        s.item(i, &format!("2026-11-{i:02}"));
        s.publish(NOW);
        s.build(&[]);
    }
    s
}

fn spares(s: &TestSite) -> Vec<String> {
    std::fs::read_dir(s.path("public/revisions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".spare-"))
        .collect()
}

/// Builds, checks whether the build started from the spare, and that the live revision holds
/// what its manifest lists and nothing else; the build's report, and its manifest's files and
/// hashes.
fn build_whole(s: &TestSite, from_spare: bool) -> (serde_json::Value, BTreeMap<String, String>) {
    let b = s.build(&[]);
    assert_eq!(b["from_spare"], from_spare, "{b}");
    let (found, listed) = files_in(&s.current_dir());
    assert_eq!(found, listed, "files beyond (or short of) the manifest");
    (b, listed)
}

/// The revision a cold build of the same ledger makes: its files and their hashes.
fn cold(s: &TestSite) -> BTreeMap<String, String> {
    std::fs::remove_dir_all(s.path("public")).unwrap();
    s.build(&[]);
    files_in(&s.current_dir()).1
}

#[test]
fn gc_sets_the_newest_removed_revision_aside_and_the_next_build_starts_from_it() {
    let s = built(5);
    let gc = s.json(&GC_KEEP_1);
    let removed: Vec<&str> = (gc["removed"].as_array().unwrap().iter())
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(removed.len(), 3, "{gc}");
    // The newest one removed is the spare (and counts as removed: it is no revision now).
    assert_eq!(gc["spare"], removed[0], "{gc}");
    assert_eq!(spares(&s), [format!(".spare-{}", removed[0])]);
    let spare_revision = removed[0].split('-').next().unwrap();
    s.cmd(&["rollback", spare_revision, "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("no complete revision"));
    // The next build takes it: an item added and one changed since.
    s.item(6, "2026-11-06");
    std::fs::write(
        s.path("content/answers/2.md"),
        std::fs::read_to_string(s.path("content/answers/2.md"))
            .unwrap()
            .replace(
                "Answer body for item 2.",
                "Answer body for item 2. Corrected.",
            ),
    )
    .unwrap();
    s.publish(NOW);
    let (_, listed) = build_whole(&s, true);
    assert!(spares(&s).is_empty());
    assert_revision_whole(&s.current_dir());
    assert_eq!(
        listed,
        cold(&s),
        "the revision made from the spare is not the cold build's"
    );
}

#[test]
fn gc_without_a_spare_deletes_the_one_there_is_and_builds_start_empty() {
    let s = built(3);
    let gc = s.json(&GC_KEEP_1);
    assert!(gc["spare"].is_string(), "{gc}");
    assert_eq!(spares(&s).len(), 1);
    let gc = s.json(&GC_KEEP_1_NO_SPARE);
    assert!(gc["spare"].is_null(), "{gc}");
    assert_eq!(gc["abandoned_removed"], 1, "{gc}");
    assert!(spares(&s).is_empty());
    s.item(4, "2026-11-04");
    s.publish(NOW);
    build_whole(&s, false);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_build_killed_after_taking_the_spare_leaves_the_next_build_whole() {
    let s = built(3);
    let served = s.current_dir();
    s.json(&GC_KEEP_1);
    s.item(4, "2026-11-04");
    s.publish(NOW);
    let out = s.with_failpoints(&["build", "--now", NOW], "build.after_spare_taken=return");
    assert_eq!(
        out.status.code(),
        Some(137),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(s.current_dir(), served, "the pointer must not move");
    assert!(spares(&s).is_empty(), "the dead build had taken it");
    // The next build clears the dead build's folder (the spare, half made) and starts empty.
    let (b, listed) = build_whole(&s, false);
    assert_eq!(b["abandoned_removed"], 1, "{b}");
    assert_eq!(listed, cold(&s));
}

#[cfg(feature = "failpoints")]
#[test]
fn a_gc_killed_after_setting_the_spare_aside_leaves_one_the_next_build_can_start_from() {
    let s = built(4);
    let out = s.with_failpoints(&GC_KEEP_1, "gc.after_spare_rename=return");
    assert_eq!(
        out.status.code(),
        Some(137),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(spares(&s).len(), 1);
    // The next gc removes what the dead one had not: the newest of those is the spare now,
    // the one before deleted.
    let again = s.json(&GC_KEEP_1);
    assert_eq!(again["removed"].as_array().unwrap().len(), 1, "{again}");
    assert_eq!(
        spares(&s),
        [format!(".spare-{}", again["spare"].as_str().unwrap())]
    );
    s.item(5, "2026-11-05");
    s.publish(NOW);
    let (_, listed) = build_whole(&s, true);
    assert_eq!(listed, cold(&s));
}
