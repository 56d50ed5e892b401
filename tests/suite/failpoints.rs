//! Crashes and stalls at named step boundaries (`FAILPOINTS`), with real OS processes.
//! Needs `--features failpoints`.
use crate::common::*;
use fencepost::ledger::items::{self, State};

fn processing(s: &TestSite) -> usize {
    let all = s.try_read(items::every_view).unwrap_or_default();
    all.iter().filter(|i| i.state == State::Processing).count()
}

#[test]
fn takeover_between_preflight_and_commit_changes_nothing_for_the_stalled_run() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    // A: stalls after preflight with a 60 s lease at NOW.
    let a = s.spawn_publish(
        NOW,
        &["--lease-secs", "60"],
        &[("FAILPOINTS", "publish.after_preflight=sleep(3000)")],
    );
    wait_for("A to pass preflight", || {
        s.path(".fencepost/ledger.sqlite").exists() && processing(&s) == 1
    });
    // While A holds a live lease, another run skips the item.
    let early = s.publish("2026-12-01T00:00:30Z");
    assert_eq!(ids(&early, "skipped_locked"), vec![1]);
    // B: after A's lease expired, takes it over (fence 2) and publishes.
    let b = s.publish("2026-12-01T00:01:01Z");
    assert_eq!(ids(&b, "published"), vec![1]);
    assert_eq!(s.fence("publication:1").unwrap(), 2);
    // A wakes up and tries its commit: lease_lost, and nothing of it lands.
    let a = finish(a);
    assert_eq!(ids(&a, "lease_lost"), vec![1], "{a}");
    assert!(ids(&a, "published").is_empty());
    assert_eq!(a["revision"], 1);
    assert_eq!(s.revision(), 1);
    assert_eq!(s.pages(), 1);
    assert_eq!(s.ledger_item("1").page.unwrap().content_version, 1);
    assert_eq!(s.audit().len(), 1);
    let owner_b = b["owner"].as_str().unwrap().to_string();
    let detail = s.audit()[0].detail.clone();
    assert!(
        detail.contains(&owner_b),
        "the audit entry is B's: {detail}"
    );
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn a_live_lease_has_exactly_one_holder_across_processes() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish("2026-11-01T00:00:00Z"); // create the ledger; the item is not due yet
    let children: Vec<_> = (0..5)
        .map(|_| {
            s.spawn_publish(
                NOW,
                &[],
                &[("FAILPOINTS", "publish.after_preflight=sleep(1500)")],
            )
        })
        .collect();
    let reports: Vec<_> = children.into_iter().map(finish).collect();
    let published: Vec<i64> = reports.iter().flat_map(|r| ids(r, "published")).collect();
    let skipped: usize = reports.iter().map(|r| ids(r, "skipped_locked").len()).sum();
    let found_done = reports.iter().filter(|r| r["unchanged"] == 1).count();
    assert_eq!(published, vec![1], "{reports:?}");
    // Every other run met the live lease, or (if it started after the holder finished) found
    // the item already published; none took the lease over.
    assert_eq!(skipped + found_done, 4, "{reports:?}");
    assert!(skipped >= 1, "the runs overlapped: {reports:?}");
    assert_eq!(s.fence("publication:1").unwrap(), 1);
    assert_eq!(s.revision(), 1);
}

#[test]
fn a_crash_after_preflight_is_redriven_once_the_lease_expires() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    let out = s.with_failpoints(
        &["publish", "--now", NOW, "--lease-secs", "60"],
        "publish.after_preflight=panic",
    );
    assert!(!out.status.success());
    // Decided but not carried out: processing, under a live lease, nothing public.
    assert_eq!(processing(&s), 2);
    assert_eq!(s.revision(), 0);
    assert_eq!(s.pages(), 0);
    // The crashed attempt counts (publish.max_attempts parks an item that keeps crashing).
    assert_eq!(s.ledger_item("1").attempts, 1);
    let r = s.publish("2026-12-01T00:00:59Z");
    assert_eq!(ids(&r, "skipped_locked"), vec![1, 2]);
    let r = s.publish("2026-12-01T00:01:00Z");
    assert_eq!(ids(&r, "published"), vec![1, 2]);
    assert_eq!(s.revision(), 2);
    // Carried out: the count starts again for the item's next change.
    assert_eq!(s.ledger_item("1").attempts, 0);
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn a_crash_inside_the_commit_batch_writes_nothing() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let points = [
        "publish.commit.after_page=panic",
        "publish.commit.before_read_back=panic",
        "publish.before_commit=panic",
    ];
    for (i, fp) in points.into_iter().enumerate() {
        // Each crash leaves a 1 s lease behind; the next attempt comes after it.
        let now = format!("2026-12-01T00:00:0{}Z", 2 * i);
        let out = s.with_failpoints(&["publish", "--now", &now, "--lease-secs", "1"], fp);
        assert!(!out.status.success(), "{fp}");
        assert_eq!(s.revision(), 0, "{fp}");
        assert_eq!(s.pages(), 0, "{fp}");
        assert_eq!(s.audit().len(), 0, "{fp}");
    }
    let r = s.publish("2026-12-01T00:00:06Z");
    assert_eq!(ids(&r, "published"), vec![1]);
    assert_eq!(s.revision(), 1);
}

#[test]
fn a_crash_after_the_commit_keeps_the_publication_and_reruns_do_not_repeat_it() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let out = s.with_failpoints(&["publish", "--now", NOW], "publish.after_commit=panic");
    assert!(!out.status.success());
    assert_eq!(s.revision(), 1);
    assert_eq!(s.status()["leases"], 0, "released in the commit");
    let r = s.publish(NOW);
    assert!(ids(&r, "published").is_empty());
    assert_eq!(r["unchanged"], 1);
    assert_eq!(s.revision(), 1);
}

#[test]
fn a_crash_before_the_sync_writes_nothing() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let out = s.with_failpoints(&["publish", "--now", NOW], "publish.after_scan=panic");
    assert!(!out.status.success());
    assert_eq!(s.items().len(), 0);
    assert_eq!(ids(&s.publish(NOW), "published"), vec![1]);
}

#[test]
fn a_build_crash_at_any_step_leaves_the_previous_revision_served() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    let served = s.current_dir();
    let mut n = 1;
    for point in [
        "build.after_snapshot",
        "build.after_render",
        "build.before_rename",
        "build.before_pointer_rename",
    ] {
        n += 1;
        s.item(n, "2026-11-02");
        s.publish(NOW);
        let out = s.with_failpoints(&["build", "--now", NOW], &format!("{point}=return"));
        assert_eq!(
            out.status.code(),
            Some(137),
            "{point}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            s.current_dir(),
            served,
            "{point}: the pointer must not move"
        );
        assert!(s.current_dir().join("manifest.json").exists());
        // The next build succeeds and clears what the dead one left.
        let r = s.build(&[]);
        assert_eq!(r["revision"], n, "{point}");
        assert_eq!(r["pointer"], "moved", "{point}");
        let leftovers: Vec<String> = std::fs::read_dir(s.path("public/revisions"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{point}: {leftovers:?}");
        // Roll the served revision back so the next crash is judged against it.
        let _ = std::fs::remove_dir_all(s.current_dir());
        std::fs::remove_file(s.path("public/current")).unwrap();
        std::os::unix::fs::symlink(&served, s.path("public/current")).unwrap();
    }
}

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
            std::process::Command::new(bin())
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
