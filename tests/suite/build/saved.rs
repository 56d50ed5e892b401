//! Issue 52: a one-shot build (`build`, `publish --build`) reads the public page rows the last
//! one saved (`.fencepost/build-pages.bin`, `crates/fencepost-build/src/warm/saved.rs`) and
//! from the ledger only the rows changed since. What it builds that way is, file for file,
//! what a build from nothing makes; a file that is torn, garbled or of another history is
//! read as absent (every row from the ledger).
use crate::common::*;

const SAVED: &str = ".fencepost/build-pages.bin";

fn pages_read(report: &serde_json::Value) -> i64 {
    report["pages_read"]
        .as_i64()
        .unwrap_or_else(|| panic!("{report}"))
}

/// What the live revision holds is what a build from nothing makes of the same ledger.
fn assert_as_from_nothing(s: &TestSite) {
    let copy = built_from_nothing(s);
    let (revision, files) = files_of(s.root());
    assert_eq!((revision, files), files_of(copy.path()));
}

/// Item `new` published and item 2 edited: the next build reads those two rows, and makes
/// what a build from nothing makes.
fn a_new_item_and_an_edit_read_two_rows(s: &TestSite, new: i64) {
    s.item(new, &format!("2026-11-{new:02}"));
    s.item_with(2, "2026-11-02", "", "Item 2, edited.");
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 2);
    assert!(s
        .current_file("answers/2/index.html")
        .contains("Item 2, edited."));
    assert_as_from_nothing(s);
}

#[test]
fn a_build_reads_the_saved_rows_and_only_those_changed_since() {
    let s = site_with(4);
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 4);
    assert!(s.path(SAVED).is_file());
    a_new_item_and_an_edit_read_two_rows(&s, 5);
    // As cron runs it: publish and build in one process. The file is not written again for
    // a few rows: the build reads every row changed since it (items 2, 5 and 6).
    s.item(6, "2026-11-06");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(pages_read(&r["build"]), 3, "{r}");
    assert!(s.path("public/current/answers/6/index.html").is_file());
    assert_as_from_nothing(&s);
    // `--full` trusts nothing a build left: every row.
    s.item(7, "2026-11-07");
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&["--full"])), 7);
}

/// A site of three items, published and built (its rows saved), and the saved file's path.
fn built_with_three() -> (TestSite, std::path::PathBuf) {
    let s = site_with(3);
    s.publish(NOW);
    s.build(&[]);
    let saved = s.path(SAVED);
    (s, saved)
}

/// One byte in the middle of the file at `path` changed, its length kept.
fn garble(path: &std::path::Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x20;
    std::fs::write(path, &bytes).unwrap();
}

#[test]
fn a_torn_or_garbled_file_is_read_as_absent() {
    let (s, saved) = built_with_three();
    // Torn: the first half of the file.
    let bytes = std::fs::read(&saved).unwrap();
    std::fs::write(&saved, &bytes[..bytes.len() / 2]).unwrap();
    s.item(4, "2026-11-04");
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 4);
    // Garbled: one byte of a row changed, the length kept.
    garble(&saved);
    s.item(5, "2026-11-05");
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 5);
    // Each of those builds, finding no good file, read every row and saved them again.
    s.item(6, "2026-11-06");
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 1);
    assert_as_from_nothing(&s);
}

/// Guards: a file the previous release saved (format 1) is read as absent once, the site built whole from the ledger, and the file saved anew is used by the next build.
#[test]
fn a_file_of_the_previous_format_is_read_as_absent_then_written_anew() {
    let (s, saved) = built_with_three();
    let bytes = std::fs::read(&saved).unwrap();
    let magic = b"fencepost build pages 2\n";
    assert!(bytes.starts_with(magic), "this release writes format 2");
    let old = [
        b"fencepost build pages 1\n".as_slice(),
        &bytes[magic.len()..],
    ]
    .concat();
    std::fs::write(&saved, old).unwrap();
    s.item(4, "2026-11-04");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(pages_read(&r["build"]), 4, "{r}");
    assert!(s.path("public/current/answers/4/index.html").is_file());
    assert!(std::fs::read(&saved).unwrap().starts_with(magic));
    s.item(5, "2026-11-05");
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 1);
    assert_as_from_nothing(&s);
}

/// Guards: rows `publish --build` reads ahead (before it publishes) are checked as a build's own.
#[test]
fn rows_read_ahead_by_publish_build_are_checked_as_a_builds_own_read() {
    let (s, saved) = built_with_three();
    let publish_build = |id: i64| {
        s.item(id, &format!("2026-11-{id:02}"));
        let r = s.json(&["publish", "--build", "--now", NOW]);
        assert!(r["build"].is_object(), "{r}");
        pages_read(&r["build"])
    };
    // Garbled: every row read; the file saved again is read ahead by the next run.
    garble(&saved);
    assert_eq!(publish_build(4), 4);
    assert_eq!(publish_build(5), 1);
    // Another ledger's file (a site of the same items): not this ledger's rows.
    let other = site_with(5);
    other.publish(NOW);
    other.build(&[]);
    std::fs::copy(other.path(SAVED), &saved).unwrap();
    assert_eq!(publish_build(6), 6);
    assert_as_from_nothing(&s);
}

/// The ledger's files, copied aside or back (with its journal, if one is left).
fn copy_ledger(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().map(Result::unwrap) {
        let name = e.file_name();
        if name.to_string_lossy().starts_with("ledger.sqlite") {
            std::fs::copy(e.path(), to.join(name)).unwrap();
        }
    }
}

#[test]
fn rows_saved_from_a_history_the_ledger_no_longer_has_are_not_used() {
    let s = site_with(1);
    s.publish(NOW);
    s.build(&[]);
    let backup = tempfile::tempdir().unwrap();
    copy_ledger(&s.path(".fencepost"), backup.path());
    // Revision 2 publishes item 2; its build saves the rows of revision 2 (a build that
    // finds no file reads every row and saves them).
    s.item(2, "2026-11-02");
    s.publish(NOW);
    std::fs::remove_file(s.path(SAVED)).unwrap();
    assert_eq!(pages_read(&s.build(&[])), 2);
    // The ledger restored from the backup (revision 1), and moved on along another history:
    // items 3 and 4, revisions 2 and 3. The saved rows (revision 2, with item 2) are of a
    // revision the ledger has, but not of its history.
    copy_ledger(backup.path(), &s.path(".fencepost"));
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    s.item(3, "2026-11-03");
    s.publish(NOW);
    s.item(4, "2026-11-04");
    s.publish(NOW);
    assert_eq!(s.revision(), 3);
    assert_eq!(pages_read(&s.build(&[])), 3);
    assert!(!s.path("public/current/answers/2/index.html").exists());
    assert!(s.path("public/current/answers/3/index.html").is_file());
    assert_as_from_nothing(&s);
}

#[test]
fn the_file_is_written_again_once_many_rows_changed_since_it() {
    let s = site_with(2);
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 2);
    // 1,001 new items: past what a build reads before it writes the file again.
    for id in 3..=1003 {
        s.item(id, "2026-11-20");
    }
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 1001);
    s.item(1004, "2026-11-21");
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 1);
    assert_as_from_nothing(&s);
}

/// The same on every ledger engine: the rows changed since, read through the engine's own
/// `pages_since` and checked against its audit chain.
fn saved_rows_on(backend: Backend) {
    let s = TestSite::on(backend);
    for i in 1..=3 {
        s.item(i, &format!("2026-11-0{i}"));
    }
    s.publish(NOW);
    assert_eq!(pages_read(&s.build(&[])), 3);
    a_new_item_and_an_edit_read_two_rows(&s, 4);
}

#[test]
fn saved_rows_on_postgres() {
    saved_rows_on(Backend::Postgres);
}

#[test]
fn saved_rows_on_a_bucket_ledger() {
    saved_rows_on(Backend::Bucket);
}

#[test]
fn saved_rows_on_d1() {
    saved_rows_on(Backend::D1);
}

/// An item can go public after items with later ids (it was known, embargoed, first): its row
/// comes back from the ledger among the changed rows before a later item's edit, and both
/// take their own places — no row twice, none lost.
#[test]
fn an_item_known_first_and_public_later_takes_its_place_among_the_saved_rows() {
    let s = TestSite::new();
    // Item 1, of the day before NOW, is due ten minutes after NOW (as the demo's collection
    // reveals a day's answer), and is known before item 2 exists.
    let later = "2026-12-01T00:20:00Z";
    s.item(1, "2026-11-30");
    s.publish(NOW);
    for i in 2..=6 {
        s.item(i, &format!("2026-11-2{i}"));
    }
    s.publish(NOW);
    assert_eq!(pages_read(&s.json(&["build", "--now", NOW])), 5);
    // Item 1 goes public (a revision), then item 6, the last id, is edited (the next): the
    // ledger gives back item 1's row first, then item 6's.
    assert_eq!(s.publish(later)["published"], serde_json::json!([1]));
    s.item_with(6, "2026-11-26", "", "Item 6, edited.");
    assert_eq!(s.publish(later)["updated"], serde_json::json!([6]));
    assert_eq!(pages_read(&s.json(&["build", "--now", later])), 2);
    assert!(s.path("public/current/answers/1/index.html").is_file());
    assert!(s
        .current_file("answers/6/index.html")
        .contains("Item 6, edited."));
    assert_as_from_nothing(&s);
}
