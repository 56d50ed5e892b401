//! Regression tests for what an attacker and an unlucky operator broke (issue 7): each failed
//! before its fix. Racy ones hold a window open with a `sleep` fail point and wait for the
//! process to reach it (`FENCEPOST_FAILPOINT_LOG`), so they are deterministic.
//! Needs `--features failpoints`.
use crate::common::*;
use fencepost::ledger::items::State;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant as Wall};

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn sha256_file(p: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(p).unwrap()))
}

/// Every file of the revision `dir` hashes to its manifest entry, and every answer page
/// carries its body.
fn assert_revision_whole(dir: &Path) {
    let m = manifest(dir);
    for f in m["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        assert_eq!(
            sha256_file(&dir.join(path)),
            f["sha256"].as_str().unwrap(),
            "{path} in {} does not match its manifest",
            dir.display()
        );
        if let Some(id) = path
            .strip_prefix("answers/")
            .and_then(|p| p.strip_suffix("/index.html"))
            .and_then(|p| p.parse::<i64>().ok())
        {
            let html = std::fs::read_to_string(dir.join(path)).unwrap();
            assert!(
                html.contains(&format!("Answer body for item {id}.")),
                "answers/{id}/ lost its body in {}",
                dir.display()
            );
        }
    }
}

fn revision_dir(s: &TestSite, build: &serde_json::Value) -> PathBuf {
    PathBuf::from(build["path"].as_str().unwrap())
        .canonicalize()
        .unwrap_or_else(|_| s.path("public/missing"))
}

// 1. Critical: a reusable page that cannot be linked was rendered with an empty body.

#[test]
fn a_reused_page_whose_old_file_was_pruned_is_rendered_with_its_body() {
    let s = TestSite::new();
    for i in 1..=3 {
        s.item(i, &format!("2026-11-0{i}"));
    }
    s.publish(NOW);
    let first = s.build(&[]);
    // Someone prunes a file of the live revision (the manifest still lists it).
    std::fs::remove_file(revision_dir(&s, &first).join("answers/1/index.html")).unwrap();
    s.item(4, "2026-11-04");
    s.publish(NOW);
    let second = s.build(&[]);
    assert!(second["rendered"].as_u64().unwrap() >= 2, "{second}");
    assert_revision_whole(&revision_dir(&s, &second));
}

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

// 3. Medium: a static file or template saved during a build.

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

// 4. Medium: preview and watch followed image symlinks out of content/.

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nSECRET-OUTSIDE-CONTENT";

#[test]
fn preview_and_watch_never_serve_an_image_from_outside_content() {
    let s = TestSite::new();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.png"), PNG).unwrap();
    std::fs::create_dir_all(s.path("content/images")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.png"),
        s.path("content/images/a.png"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/passwd", s.path("content/images/b.png")).unwrap();
    s.write("content/images/big.png", &"x".repeat(64));
    s.write(
        "fencepost.toml",
        "title = \"t\"\n[images]\nmax_bytes = 32\n",
    );
    s.item_with(1, "2026-11-01", "image = \"images/a.png\"\n", "one");
    s.item_with(2, "2026-11-02", "image = \"images/b.png\"\n", "two");
    s.item_with(3, "2026-11-03", "image = \"images/big.png\"\n", "three");
    let p = s.build(&["--preview"]);
    let dir = PathBuf::from(p["path"].as_str().unwrap());
    for (path, bytes) in tree(&dir) {
        assert!(
            !bytes.windows(6).any(|w| w == b"SECRET") && !path.starts_with("images/"),
            "preview wrote {path} from outside content/"
        );
    }
    let srv = s.serve(&["--watch"]);
    for id in 1..=3 {
        let page = srv.get(&format!("/answers/{id}/"));
        assert_eq!(page.status, 200);
        assert!(!page.text().contains("/images/"), "{}", page.text());
    }
    // The blob an unchecked loader would have made.
    use sha2::Digest;
    let sha = hex::encode(sha2::Sha256::digest(PNG));
    assert_eq!(srv.get(&format!("/images/{sha}.png")).status, 404);
}

// 5. Medium: serve could be pinned open.

#[test]
fn half_sent_requests_neither_starve_clients_nor_hold_shutdown() {
    use std::io::{Read, Write};
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    s.write(
        "fencepost.toml",
        "[serve]\nheader_timeout_secs = 1\nmax_connections = 32\nshutdown_deadline_secs = 2\n",
    );
    let srv = s.serve(&[]);
    // 200 clients that send half a request and then nothing (slowloris).
    let mut slow: Vec<std::net::TcpStream> = (0..200)
        .filter_map(|_| std::net::TcpStream::connect(&srv.addr).ok())
        .collect();
    for c in &mut slow {
        let _ = c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    }
    // A real client is still served, within a few header timeouts.
    let start = Wall::now();
    let r = srv.get("/answers/1/");
    assert_eq!(r.status, 200);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "a real client waited {:?}",
        start.elapsed()
    );
    // The server closed the half-sent ones that it accepted.
    std::thread::sleep(Duration::from_millis(1500));
    let mut closed = 0;
    for c in &mut slow {
        c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let mut buf = [0u8; 512];
        // EOF or a reset: the server gave up on it. A time-out: still open.
        match c.read(&mut buf) {
            Ok(0) => closed += 1,
            Ok(_) => closed += 1, // an error response, then the close
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => closed += 1,
            Err(_) => {}
        }
    }
    assert!(
        closed >= 32,
        "only {closed} half-sent connections were closed"
    );
    // SIGTERM completes even while half-sent requests are open.
    let mut open: Vec<std::net::TcpStream> = (0..20)
        .map(|_| std::net::TcpStream::connect(&srv.addr).unwrap())
        .collect();
    for c in &mut open {
        c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    }
    let start = Wall::now();
    assert_eq!(srv.stop().code(), Some(0));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "shutdown took {:?}",
        start.elapsed()
    );
}

// 6. Medium: watch mode went deaf after a folder was deleted and recreated.

#[test]
fn watch_follows_folders_created_or_recreated_after_start() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    std::fs::remove_dir_all(s.path("static")).unwrap();
    let srv = s.serve(&["--watch"]);
    assert_eq!(srv.get("/late.css").status, 404);
    // (The shipped templates link static/style.css, so the preview shows an error until it
    // is back.)
    s.write("static/style.css", "body{}\n");
    s.write("static/late.css", "p{}\n");
    wait_for("static/ created after start to be served", || {
        srv.get("/late.css").status == 200
    });
    // A branch switch: templates/ removed and created again (a new inode).
    std::fs::rename(s.path("templates"), s.path("templates.old")).unwrap();
    let mut opts = std::process::Command::new("cp");
    assert!(opts
        .arg("-r")
        .arg(s.path("templates.old"))
        .arg(s.path("templates"))
        .status()
        .unwrap()
        .success());
    std::fs::remove_dir_all(s.path("templates.old")).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let answer = std::fs::read_to_string(s.path("templates/answer.html")).unwrap();
    s.write(
        "templates/answer.html",
        &answer.replace("{{ page.title }}", "{{ page.title }} REARMED"),
    );
    wait_for("an edit in the recreated templates/ to show", || {
        srv.get("/answers/1/").text().contains("REARMED")
    });
    // And content/ too.
    std::fs::rename(s.path("content"), s.path("content.old")).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    s.item_with(1, "2026-11-01", "", "Body after the switch.");
    wait_for("content/ recreated to be read", || {
        srv.get("/answers/1/")
            .text()
            .contains("Body after the switch.")
    });
    s.item_with(1, "2026-11-01", "", "Edited once more.");
    wait_for("an edit in the recreated content/ to show", || {
        srv.get("/answers/1/").text().contains("Edited once more.")
    });
}

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

// 8. Medium: a new ledger beside old revisions restarted the numbering silently.

#[test]
fn a_new_ledger_beside_another_ledgers_output_is_refused() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    let live = s.current_dir();
    for f in ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"] {
        let _ = std::fs::remove_file(s.path(&format!(".fencepost/{f}")));
    }
    s.item(2, "2026-11-02");
    // publish does not re-create the lost ledger beside its output (issue 19)...
    assert!(s
        .failing(&["publish", "--now", NOW])
        .contains("does not exist"));
    assert!(!s.path(".fencepost/ledger.sqlite").exists());
    // ...and another ledger put in its place is refused by build.
    put_foreign_ledger(&s, 2);
    let out = s.cmd(&["build", "--now", NOW]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another ledger"), "{err}");
    assert!(err.contains("move"), "the message says the way out: {err}");
    assert_eq!(s.current_dir(), live);
}

/// Puts a ledger published elsewhere (items 1..=n) in `s`'s ledger's place.
fn put_foreign_ledger(s: &TestSite, n: i64) {
    let other = TestSite::new();
    for i in 1..=n {
        other.item(i, &format!("2026-11-0{i}"));
    }
    other.publish(NOW);
    std::fs::create_dir_all(s.path(".fencepost")).unwrap();
    for f in ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"] {
        let from = other.path(&format!(".fencepost/{f}"));
        if from.exists() {
            std::fs::copy(from, s.path(&format!(".fencepost/{f}"))).unwrap();
        }
    }
}

// 9. Low: leftovers of killed gc runs and swaps.

#[test]
fn leftovers_of_a_killed_gc_and_a_killed_swap_are_removed() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    s.item(2, "2026-11-02");
    s.publish(NOW);
    s.build(&[]);
    let out = s.with_failpoints(
        &["gc", "--keep", "1", "--grace-secs", "0", "--now", NOW],
        "gc.after_trash_rename=return",
    );
    assert_eq!(out.status.code(), Some(137));
    let trash = || count_named(&s.path("public/revisions"), ".trash-");
    assert_eq!(trash(), 1);
    let gc = s.json(&["gc", "--keep", "5", "--now", NOW]);
    assert_eq!(gc["abandoned_removed"], 1, "{gc}");
    assert_eq!(trash(), 0);
    s.item(3, "2026-11-03");
    s.publish(NOW);
    let out = s.with_failpoints(
        &["build", "--now", NOW],
        "build.before_pointer_rename=return",
    );
    assert_eq!(out.status.code(), Some(137));
    let tmp_links = || count_named(&s.path("public"), ".current.tmp-");
    assert_eq!(tmp_links(), 1);
    let b = s.build(&[]);
    assert_eq!(b["abandoned_removed"], 1, "{b}");
    assert_eq!(tmp_links(), 0);
}

// 10. Low: a folder symlink planted in a revision after the first request escaped it.

#[test]
fn a_folder_symlink_planted_after_the_first_request_does_not_escape() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    let big = "b".repeat(400 * 1024); // streamed, not kept in memory
    s.write("static/big/blob.bin", &big);
    s.build(&[]);
    let srv = s.serve(&[]);
    let first = srv.get("/big/blob.bin");
    assert_eq!(first.status, 200);
    assert_eq!(first.body.len(), big.len());
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("blob.bin"),
        "SECRET".repeat(70 * 1024).as_bytes(),
    )
    .unwrap();
    let rev = s.current_dir();
    std::fs::remove_dir_all(rev.join("big")).unwrap();
    std::os::unix::fs::symlink(outside.path(), rev.join("big")).unwrap();
    let again = srv.get("/big/blob.bin");
    assert_ne!(again.status, 200);
    assert!(!again.text().contains("SECRET"));
}

// 11. Low: SVG served without a sandbox.

#[test]
fn svg_is_served_sandboxed_and_nothing_is_sniffed() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.write(
        "static/logo.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
    );
    s.build(&[]);
    let srv = s.serve(&[]);
    let r = srv.get("/logo.svg");
    assert_eq!(r.status, 200);
    let csp = r.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("sandbox") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(
        srv.get("/").header("x-content-type-options"),
        Some("nosniff")
    );
    let watch = s.serve(&["--watch"]);
    let r = watch.get("/logo.svg");
    assert!(r
        .header("content-security-policy")
        .unwrap_or_default()
        .contains("sandbox"));
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

#[test]
fn pointer_troubles_are_named_and_a_stuck_current_json_does_not_fail_a_build() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    // current.json cannot be written: the swap happened, so the build succeeds and warns.
    std::fs::remove_file(s.path("public/current.json")).unwrap();
    std::fs::create_dir_all(s.path("public/current.json/blocker")).unwrap();
    s.item(2, "2026-11-02");
    s.publish(NOW);
    let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("current.json"));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["pointer"], "moved");
    assert!(s
        .current_dir()
        .ends_with(format!("2-{}", report["build"].as_str().unwrap())));
    // public/current is a folder: the message says what it is and what to do.
    std::fs::remove_file(s.path("public/current")).unwrap();
    std::fs::create_dir_all(s.path("public/current")).unwrap();
    s.item(3, "2026-11-03");
    s.publish(NOW);
    let err = s.failing(&["build", "--now", NOW]);
    assert!(err.contains("public/current is not a symlink"), "{err}");
}

#[test]
fn a_new_ledger_beside_output_from_before_ledger_ids_is_refused_too() {
    let s = TestSite::new();
    for i in 1..=3 {
        s.item(i, &format!("2026-11-0{i}"));
    }
    s.publish(NOW);
    s.build(&[]);
    // Output from before manifests carried a ledger id.
    let live = s.current_dir();
    let mut m = manifest(&live);
    m.as_object_mut().unwrap().remove("ledger_id");
    std::fs::write(live.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
    for f in ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"] {
        let _ = std::fs::remove_file(s.path(&format!(".fencepost/{f}")));
    }
    std::fs::remove_file(s.path("content/answers/3.md")).unwrap();
    put_foreign_ledger(&s, 2); // a ledger at revision 2, behind the live revision 3
    let err = s.failing(&["build", "--now", NOW]);
    assert!(err.contains("ahead of its ledger"), "{err}");
    assert_eq!(s.current_dir(), live);
}
