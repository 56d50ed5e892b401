//! Files as the file system gives them: symlinks inside and outside `content/`, files deleted
//! mid-scan, FIFOs, size caps, dotfiles and odd names, numbers and times at their limits.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;
use fencepost_ledger::items::State;
use std::time::{Duration, Instant as Wall};

// 7. Medium: an item file replaced by a symlink was treated as removed (and withdrawn).

#[test]
fn an_item_behind_a_symlink_is_read_or_named_never_withdrawn() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.publish(NOW);
    assert_eq!(s.revision(), 2);
    // Inside content/: followed.
    std::fs::create_dir_all(s.path("content/real")).unwrap();
    std::fs::rename(s.path("content/answers/1.md"), s.path("content/real/1.md")).unwrap();
    std::os::unix::fs::symlink("../real/1.md", s.path("content/answers/1.md")).unwrap();
    let r = s.publish(NOW);
    assert!(ids(&r, "withdrawn").is_empty(), "{r}");
    assert_eq!(s.revision(), 2);
    // Leading out of content/: the run stops and names the file.
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(s.path("content/answers/2.md"), outside.path().join("2.md")).unwrap();
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("2.md"), s.path("content/answers/2.md"))
        .unwrap();
    let err = s.failing(&["publish", "--now", NOW]);
    assert!(
        err.contains("content/answers/2.md") && err.contains("outside content/"),
        "{err}"
    );
    // A dangling one too.
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    std::os::unix::fs::symlink("nowhere.md", s.path("content/answers/2.md")).unwrap();
    assert!(s
        .failing(&["publish", "--now", NOW])
        .contains("leads nowhere"));
    assert_eq!(s.revision(), 2, "nothing was withdrawn");
    assert_eq!(s.items_in(State::Published), 2);
}

/// Issue 19: a symlinked folder under the item folder is followed when it stays inside
/// content/ (edits and new items in it publish), and named otherwise — never skipped.
#[test]
fn a_symlinked_folder_is_followed_inside_content_and_named_outside_it() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.write(
        "content/shared/5.md",
        "+++\nid = 5\nday = 2026-11-05\ntitle = \"Five\"\nprice = 1\n+++\nfive\n",
    );
    std::os::unix::fs::symlink("../shared", s.path("content/answers/linked")).unwrap();
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1, 5], "{r}");
    // An edit inside the linked folder is an update; a new file there is published.
    s.write(
        "content/shared/5.md",
        "+++\nid = 5\nday = 2026-11-05\ntitle = \"Five, edited\"\nprice = 1\n+++\nfive\n",
    );
    s.write(
        "content/shared/6.md",
        "+++\nid = 6\nday = 2026-11-06\ntitle = \"Six\"\nprice = 1\n+++\nsix\n",
    );
    let r = s.publish(NOW);
    assert_eq!(
        (ids(&r, "updated"), ids(&r, "published")),
        (vec![5], vec![6]),
        "{r}"
    );
    // A folder link leading out of content/: the run stops naming it, and nothing is withdrawn.
    let outside = tempfile::tempdir().unwrap();
    std::fs::remove_file(s.path("content/answers/linked")).unwrap();
    copy_dir_contents(&s.path("content/shared"), outside.path());
    std::os::unix::fs::symlink(outside.path(), s.path("content/answers/linked")).unwrap();
    let err = s.failing(&["publish", "--now", NOW]);
    assert!(
        err.contains("content/answers/linked") && err.contains("outside content/"),
        "{err}"
    );
    // A loop is named too.
    std::fs::remove_file(s.path("content/answers/linked")).unwrap();
    std::os::unix::fs::symlink("..", s.path("content/answers/loop")).unwrap();
    assert!(s.failing(&["publish", "--now", NOW]).contains("loop"));
    assert_eq!(s.items_in(State::Published), 3, "nothing was withdrawn");
}

fn copy_dir_contents(from: &std::path::Path, to: &std::path::Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Issue 19: a file deleted while the run scans (after it was listed, before it was read) is
/// taken as gone, not a failed run; its page comes down, because it is still gone under the
/// item's lease.
#[cfg(feature = "failpoints")]
#[test]
fn a_file_deleted_mid_scan_is_gone_not_a_failed_run() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.publish(NOW);
    // Item 2 is edited (so the scan must read it), then deleted while the run is stalled
    // between listing and reading.
    s.item_with(2, "2026-11-02", "", "edited");
    let run = Stalled::start(
        &s,
        &["publish", "--now", NOW],
        "publish.after_list=sleep(1500)",
    );
    run.wait_until("publish.after_list");
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    let out = run.finish();
    assert_success(&out);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "withdrawn"), vec![2], "{r}");
    assert_eq!(s.items_in(State::Published), 1);
}

// 12. Low: unchecked numbers and times.

#[test]
fn out_of_range_numbers_and_times_are_refused() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let out = s
        .cmd(&[
            "publish",
            "--lease-secs",
            "9223372036854775808",
            "--now",
            NOW,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = s
        .cmd(&["publish", "--now", "1969-12-31T23:59:59Z"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1970"));
    s.write("fencepost.toml", "[images]\nfetch_timeout_secs = 0\n");
    let out = s.cmd(&["publish", "--now", NOW]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("images.fetch_timeout_secs"));
    assert!(
        !s.path(".fencepost/ledger.sqlite").exists(),
        "nothing written"
    );
}

// 13. Low: dotfiles under static/, and unrepresentable file names.

#[test]
fn static_dotfiles_are_copied_and_odd_names_are_named() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.write("static/.well-known/security.txt", "Contact: mailto:a@b.c\n");
    s.write("static/.htaccess", "x\n");
    s.write("static/.git/HEAD", "ref\n");
    s.write("static/.style.css.swp", "junk\n");
    s.build(&[]);
    let dir = s.current_dir();
    assert!(dir.join(".well-known/security.txt").exists());
    assert!(dir.join(".htaccess").exists());
    assert!(!dir.join(".git").exists());
    assert!(!dir.join(".style.css.swp").exists());
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/.well-known/security.txt").status, 200);
    drop(srv);

    s.write("static/a\\b.css", "x\n");
    let err = s.failing(&["build", "--now", NOW]);
    assert!(
        err.contains("a\\b.css") && err.contains("backslash"),
        "{err}"
    );
    std::fs::remove_file(s.path("static/a\\b.css")).unwrap();

    use std::os::unix::ffi::OsStrExt;
    let bad = s
        .path("static")
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9.css"));
    std::fs::write(&bad, "x\n").unwrap();
    let err = s.failing(&["build", "--now", NOW]);
    assert!(
        err.contains("caf") && err.contains("not valid UTF-8"),
        "{err}"
    );
}

// 14. Low: a FIFO as an image or an item, and items with no size cap.

#[test]
fn a_fifo_never_blocks_publish_and_items_have_a_size_cap() {
    let s = TestSite::new();
    std::fs::create_dir_all(s.path("content/images")).unwrap();
    let fifo = s.path("content/images/pipe.png");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    s.item_with(1, "2026-11-01", "image = \"images/pipe.png\"\n", "x");
    let start = Wall::now();
    let r = s.publish(NOW);
    assert!(start.elapsed() < Duration::from_secs(20));
    let failed = r["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{r}");
    assert!(failed[0]["error"]
        .as_str()
        .unwrap()
        .contains("not a regular file"));
    assert_eq!(s.status()["leases"], 0, "the lease was released");

    std::fs::remove_file(s.path("content/answers/1.md")).unwrap();
    s.write("fencepost.toml", "[publish]\nmax_item_bytes = 4096\n");
    s.item_with(2, "2026-11-02", "", &"word ".repeat(2000));
    let err = s.failing(&["publish", "--now", NOW]);
    assert!(
        err.contains("content/answers/2.md") && err.contains("publish.max_item_bytes"),
        "{err}"
    );
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    let item_fifo = s.path("content/answers/3.md");
    let c = std::ffi::CString::new(item_fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let start = Wall::now();
    let out = s.cmd(&["publish", "--now", NOW]).output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("content/answers/3.md"));
}

// 15. Low: small things that read wrong.

#[test]
fn negative_zero_prices_and_datetime_days_read_right() {
    let s = TestSite::new();
    s.write(
        "content/answers/1.md",
        "+++\nid = 1\nday = 2026-11-01\ntitle = \"Free\"\nprice = -0.0\n+++\nx\n",
    );
    s.publish(NOW);
    s.build(&[]);
    let html = s.current_file("answers/1/index.html");
    assert!(html.contains("0.00") && !html.contains("-0.00"), "{html}");
    s.write(
        "content/answers/1.md",
        "+++\nid = 1\nday = 2026-11-01T10:00:00Z\ntitle = \"Free\"\nprice = 1\n+++\nx\n",
    );
    let out = s.cmd(&["publish", "--now", NOW]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not 2026-11-01T10:00:00Z") && !err.contains("$__toml"),
        "{err}"
    );
}
