//! `public/` (`crates/fencepost-output/src/`): one owner per command, the pointer swapped atomically and only
//! forward, leftovers of killed work removed, readers never see a mix of revisions, output of
//! another ledger refused.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;

/// A reader resolves `public/current` once, then reads files of that revision while 50
/// publish+build rounds swap the pointer. Every file it reads must belong to the revision the
/// pointer named when it started (checked against that revision's manifest), and the pointer
/// must always name a complete revision.
#[test]
fn readers_never_see_a_mix_of_revisions_during_50_publish_build_rounds() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let current = s.path("public/current");
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut reads = 0u64;
            let mut revisions = std::collections::BTreeSet::new();
            while !stop.load(Ordering::Relaxed) {
                let dir = std::fs::canonicalize(&current).expect("the pointer always resolves");
                let m: serde_json::Value = serde_json::from_slice(
                    &std::fs::read(dir.join(".fencepost/manifest.json"))
                        .expect("complete: manifest present"),
                )
                .unwrap();
                revisions.insert(m["revision"].as_i64().unwrap());
                for f in m["files"].as_array().unwrap() {
                    let path = f["path"].as_str().unwrap();
                    let bytes = std::fs::read(dir.join(path))
                        .unwrap_or_else(|e| panic!("{path} in {dir:?}: {e}"));
                    assert_eq!(
                        fencepost_core::digest::sha256_hex(&bytes),
                        f["sha256"].as_str().unwrap(),
                        "{path} does not belong to {dir:?}"
                    );
                    reads += 1;
                }
            }
            (reads, revisions)
        })
    };
    for round in 2..=51 {
        s.item(round, &format!("2026-11-{:02}", (round % 28) + 1));
        let r = s.json(&["publish", "--build", "--now", NOW]);
        assert_eq!(r["build"]["revision"], round);
    }
    stop.store(true, Ordering::Relaxed);
    let (reads, revisions) = reader.join().expect("the reader saw no mixed revision");
    assert!(reads > 100, "the reader read {reads} files");
    assert!(revisions.len() > 5, "the reader saw only {revisions:?}");
}

fn current_json(s: &TestSite) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(s.path("public/current.json")).unwrap()).unwrap()
}

// 3. The next-change instant is not lost when the revision directory already exists.

#[test]
fn a_new_embargo_reaches_current_json_though_nothing_public_changed() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(current_json(&s)["next_change_at"], serde_json::Value::Null);
    // An editor adds tomorrow's item: nothing public changes, <R>-<B> already exists.
    s.item(2, "2026-12-01"); // due 2026-12-02T00:10Z
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(r["build"]["already_built"], true, "{r}");
    assert_eq!(r["build"]["next_change_at"], "2026-12-02T00:10:00Z");
    assert_eq!(current_json(&s)["next_change_at"], "2026-12-02T00:10:00Z");
    // The revision directory itself was not rewritten.
    let m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(s.current_dir().join(".fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["next_change_at"], serde_json::Value::Null);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_crash_between_the_symlink_and_current_json_is_repaired_by_the_next_build() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    s.item(2, "2026-11-02");
    s.publish(NOW);
    let out = s.with_failpoints(&["build", "--now", NOW], "build.after_pointer_swap=return");
    assert_eq!(out.status.code(), Some(137));
    // The symlink already names the new, complete revision; the JSON still names the old one.
    assert!(s
        .current_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("2-"));
    let stale: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.path("public/current.json")).unwrap()).unwrap();
    assert_eq!(stale["revision"], 1);
    let r = s.build(&[]);
    assert_eq!(r["already_built"], true);
    let fixed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.path("public/current.json")).unwrap()).unwrap();
    assert_eq!(fixed["revision"], 2);
}

#[cfg(feature = "failpoints")]
#[test]
fn concurrent_builds_move_the_pointer_forward_only() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    // A reads revision 1, then stalls before rendering (waited for on the fail-point log,
    // not guessed with a sleep).
    let slow = Stalled::start(
        &s,
        &["build", "--now", NOW],
        "build.after_snapshot=sleep(4000)",
    );
    slow.wait_until("build.after_snapshot");
    // Meanwhile revision 2 is published and built by B.
    s.item(2, "2026-11-02");
    let b = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(b["build"]["revision"], 2);
    assert_eq!(b["build"]["pointer"], "moved");
    let out = slow.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(a["revision"], 1);
    assert_eq!(a["pointer"], "kept_higher", "{a}");
    assert!(s
        .current_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("2-"));
    // And several builds of one revision at once: all succeed, one directory.
    s.item(3, "2026-11-03");
    s.publish(NOW);
    let children: Vec<_> = (0..4)
        .map(|_| {
            fencepost()
                .arg("--site")
                .arg(s.root())
                .args(["build", "--json", "--now", NOW])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        assert_eq!(finish(c)["revision"], 3);
    }
    let dirs: Vec<String> = std::fs::read_dir(s.path("public/revisions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("3-"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    assert!(s
        .current_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("3-"));
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

/// The same when the other ledger's revision has the number of one built already: the folder
/// found built names its ledger in the head of its manifest (read without the file list),
/// and that is not this one.
#[test]
fn a_revision_found_built_from_another_ledger_is_not_pointed_to() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    let ours = s.build(&[]);
    for f in ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"] {
        let _ = std::fs::remove_file(s.path(&format!(".fencepost/{f}")));
    }
    put_foreign_ledger(&s, 1);
    let out = s.cmd(&["build", "--now", NOW, "--json"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("another ledger"), "{err}");
    assert_eq!(s.current_dir(), revision_dir(&s, &ours));
}

/// Puts a ledger published elsewhere (items 1..=n) in `s`'s ledger's place.
fn put_foreign_ledger(s: &TestSite, n: i64) {
    let other = TestSite::new();
    // The same site's id (another ledger of this site: a wrong backup restored), so what
    // refuses it is the output's check, not the ledger's site check.
    other.set_site_id(s.site_id().as_deref());
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

#[cfg(feature = "failpoints")]
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
        // No spare: the revision gc removes is deleted, through the trash.
        &GC_KEEP_1_NO_SPARE,
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
    std::fs::write(
        live.join(".fencepost/manifest.json"),
        serde_json::to_vec(&m).unwrap(),
    )
    .unwrap();
    for f in ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"] {
        let _ = std::fs::remove_file(s.path(&format!(".fencepost/{f}")));
    }
    std::fs::remove_file(s.path("content/answers/3.md")).unwrap();
    put_foreign_ledger(&s, 2); // a ledger at revision 2, behind the live revision 3
    let err = s.failing(&["build", "--now", NOW]);
    assert!(err.contains("ahead of its ledger"), "{err}");
    assert_eq!(s.current_dir(), live);
}

/// A revision an earlier release wrote keeps its manifest and index at its root, where a
/// site's own files now may be: it is still complete, served, reused by the next build, rolled
/// back to and deployed. Every revision written now keeps them in its `.fencepost/`.
#[test]
fn a_revision_of_an_earlier_release_is_served_reused_and_rolled_back_to() {
    let s = site_with(2);
    s.publish(NOW);
    let first = s.build(&[])["revision"].to_string();
    let old = s.current_dir();
    for f in ["manifest.json", "manifest.idx"] {
        std::fs::rename(old.join(".fencepost").join(f), old.join(f)).unwrap();
    }
    std::fs::remove_dir(old.join(".fencepost")).unwrap();
    let srv = s.serve(&[]);
    let page = srv.get("/answers/1/");
    assert_eq!(page.status, 200);
    assert!(page.header("etag").is_some());
    assert_eq!(
        srv.get("/manifest.json").status,
        404,
        "its own, not the site's"
    );
    s.item(3, "2026-11-03");
    s.publish(NOW);
    let r = s.build(&[]);
    assert!(r["reused"].as_u64().unwrap() > 0, "{r}");
    let new = s.current_dir();
    assert!(new.join(".fencepost/manifest.json").is_file());
    assert!(!new.join("manifest.json").exists());
    assert_eq!(
        std::fs::read(new.join("answers/1/index.html")).unwrap(),
        std::fs::read(old.join("answers/1/index.html")).unwrap()
    );
    let rb = s.json(&["rollback", &first, "--now", NOW]);
    assert_eq!(rb["to"]["revision"].to_string(), first, "{rb}");
    assert_eq!(s.current_dir(), old);
    assert_eq!(srv.get("/answers/3/").status, 404);
    let bucket = format!("file://{}", s.path("bucket").display());
    let d = s.json(&["deploy", "--to", &bucket, "--now", NOW]);
    assert_eq!(d["outcome"], "deployed", "{d}");
}

/// A file of `static/` where fencepost keeps its own files (`.fencepost/`) or its log
/// (`.well-known/fencepost/`) is refused at publish by name and left out of the build, named
/// again there; every item still goes out, and the revision's own manifest is its own.
#[test]
fn a_static_file_where_fencepost_keeps_its_own_is_refused_by_name() {
    let s = site_with(1);
    s.write("static/.fencepost/manifest.json", "{\"files\": []}");
    s.write("static/.well-known/fencepost/log/checkpoint", "forged\n");
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(HELD));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["published"], serde_json::json!([1]), "{r}");
    let refused: Vec<&str> = (r["invalid"].as_array().unwrap().iter())
        .map(|i| i["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        refused,
        [
            "static/.fencepost/manifest.json",
            "static/.well-known/fencepost/log/checkpoint"
        ],
        "{r}"
    );
    assert!(
        r["invalid"][0]["error"]
            .as_str()
            .unwrap()
            .contains("move it"),
        "{r}"
    );
    assert_eq!(r["build"]["left_out"].as_array().unwrap().len(), 2, "{r}");
    let manifest = s.current_file(".fencepost/manifest.json");
    assert!(manifest.contains("answers/1/index.html"), "{manifest}");
    assert!(!s
        .current_dir()
        .join(".well-known/fencepost/log/checkpoint")
        .exists());
}
