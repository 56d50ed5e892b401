//! Issue 52: between its builds a run links the live revision's files into a staging folder
//! of its own (`Warm::link_ahead`), so the next instant's build finds its links made. What is
//! linked ahead is the live revision only (nothing embargoed is on disk any earlier); another
//! build leaves it alone while the run holds it; links of a revision the output has moved on
//! from (a template changed) are never used; a run killed meanwhile leaves a folder the next
//! build removes.
use super::{item_at, items_due_an_hour_ago, signal, timing, Running};
use crate::common::*;
use chrono::Utc;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The staging folders in `public/revisions/`.
fn staging(s: &TestSite) -> Vec<PathBuf> {
    let dir = s.path("public/revisions");
    let mut out: Vec<PathBuf> = (std::fs::read_dir(dir).unwrap().map(Result::unwrap))
        .filter(|e| e.file_type().unwrap().is_dir())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp-"))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// The files under `dir` (relative, sorted), without the manifest and its index.
fn files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(dir).unwrap().display().to_string())
        .filter(|p| !p.starts_with(".fencepost/"))
        .collect();
    out.sort();
    out
}

fn until(what: &str, r: &Running, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what}: {}",
            r.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The next cycle that built.
fn next_build(r: &Running) -> Value {
    loop {
        let c = r.next_cycle(Duration::from_secs(20));
        if c["build"].is_object() {
            return c;
        }
    }
}

/// The first cycle that built after `done` held of one.
fn build_where(r: &Running, done: impl Fn(&Value) -> bool) -> Value {
    loop {
        let c = next_build(r);
        if done(&c) {
            return c;
        }
    }
}

/// Every path under `public/`.
fn everything(s: &TestSite) -> Vec<String> {
    (walkdir::WalkDir::new(s.path("public"))
        .into_iter()
        .map(Result::unwrap))
    .map(|e| e.path().display().to_string())
    .collect()
}

#[test]
fn a_run_links_the_live_revision_ahead_and_its_next_build_starts_from_those_links() {
    let _t = timing();
    let s = TestSite::new();
    items_due_an_hour_ago(&s, 3);
    let r = Running::start_inside(&s, &["--serve", "127.0.0.1:0"]);
    let first = next_build(&r);
    assert_eq!(first["build"]["linked_ahead"], false, "{first}");
    // Once built, the live revision's files are linked into a staging folder, and only they.
    until("links made ahead", &r, || staging(&s).len() == 1);
    let live = std::fs::canonicalize(s.path("public/current")).unwrap();
    let ahead = staging(&s).remove(0);
    until("every file linked", &r, || files(&ahead) == files(&live));
    use std::os::unix::fs::MetadataExt;
    let ino = |p: PathBuf| std::fs::metadata(p).unwrap().ino();
    let page = "answers/1/index.html";
    assert_eq!(ino(ahead.join(page)), ino(live.join(page)));
    // Another build while the run waits leaves the folder it holds alone.
    let other = s.json(&["build"]);
    assert_eq!(other["abandoned_removed"], 0, "{other}");
    assert!(ahead.is_dir());

    // An item due soon is on disk nowhere under public/ before its instant; at the instant
    // the build starts from the links made ahead.
    let instant = Utc::now() + chrono::Duration::milliseconds(2500);
    item_at(&s, 4, instant);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        Utc::now() < instant,
        "the test ran too slowly to look before the instant"
    );
    let early = everything(&s);
    assert!(!early.iter().any(|p| p.contains("answers/4")), "{early:?}");
    let published = |c: &Value| {
        (c["publish"]["published"].as_array().into_iter().flatten())
            .any(|v| v.as_i64().or_else(|| v["item"].as_i64()) == Some(4))
    };
    let at = build_where(&r, published);
    assert_eq!(at["build"]["linked_ahead"], true, "{at}");
    assert!(at["build"]["early_links"].as_u64().unwrap() >= 4, "{at}");
    assert!(s
        .current_file("answers/4/index.html")
        .contains("Body of item 4"));

    // A template changed (renamed into place, so the run never reads half a file): the links
    // made ahead are of a revision with other templates, so the build makes its own, and
    // the stale folder goes.
    let base = std::fs::read_to_string(s.path("templates/base.html")).unwrap();
    let new = tempfile::NamedTempFile::new_in(s.root().parent().unwrap()).unwrap();
    std::fs::write(
        new.path(),
        base.replace("</body>", "<p>marked-ahead</p></body>"),
    )
    .unwrap();
    new.persist(s.path("templates/base.html")).unwrap();
    let fingerprint = at["build"]["build"].clone();
    let changed = build_where(&r, |c| c["build"]["build"] != fingerprint);
    assert_eq!(changed["build"]["linked_ahead"], false, "{changed}");
    assert!(s.current_file(page).contains("marked-ahead"));
    assert!(s
        .current_file("answers/4/index.html")
        .contains("marked-ahead"));
    until("one folder, of the new revision", &r, || {
        staging(&s).len() == 1 && !staging(&s).contains(&ahead)
    });

    // A run killed while it holds the folder leaves it to the next build's clean-up.
    signal(r.pid(), libc::SIGKILL);
    drop(r);
    assert_eq!(staging(&s).len(), 1);
    let after = s.json(&["build"]);
    assert_eq!(after["abandoned_removed"], 1, "{after}");
    assert!(staging(&s).is_empty());
}

/// A run started on a site built already (its first cycle finds the revision built) keeps
/// what that revision holds: the first instant after the start reads only the pages that
/// changed and starts from links made ahead, as every later one does.
#[test]
fn the_first_instant_after_a_start_reads_only_what_changed() {
    let _t = timing();
    let s = TestSite::new();
    items_due_an_hour_ago(&s, 3);
    s.json(&["publish", "--build"]);
    item_at(&s, 4, Utc::now() + chrono::Duration::milliseconds(3000));
    let r = Running::start_inside(&s, &["--serve", "127.0.0.1:0"]);
    let start = next_build(&r);
    assert_eq!(start["build"]["already_built"], true, "{start}");
    let published = |c: &Value| {
        (c["publish"]["published"].as_array().into_iter().flatten())
            .any(|v| v.as_i64().or_else(|| v["item"].as_i64()) == Some(4))
    };
    let at = build_where(&r, published);
    assert_eq!(at["build"]["pages_read"], 1, "{at}");
    assert_eq!(at["build"]["linked_ahead"], true, "{at}");
    assert!(s
        .current_file("answers/4/index.html")
        .contains("Body of item 4"));
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
    assert!(
        staging(&s).is_empty(),
        "a run that stops removes its folder"
    );
}
