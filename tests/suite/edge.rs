//! The seed's promises once a CDN, a crash or a second run is involved (issue 8): the embargo
//! instant reaches every consumer, parked work is not retried for ever, a stale look never
//! withdraws a page, the audit chain's tail is anchored, a rollback holds, and the seed's own
//! two proofs. Needs `--features failpoints`.
use crate::common::*;
use fencepost::ledger::items::State;
use std::sync::atomic::Ordering;

fn current_json(s: &TestSite) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(s.path("public/current.json")).unwrap()).unwrap()
}

/// What the publish job writes, as the ledger's API reads it back (every item with its
/// page, the audit log, the status), for "the last runs change nothing".
fn dump(s: &TestSite) -> String {
    let audit: Vec<String> = s
        .audit()
        .iter()
        .map(|e| format!("{} {} {} {}", e.seq, e.action, e.subject, e.current_hash))
        .collect();
    format!("{:#?}\n{}\n{}", s.items(), audit.join("\n"), s.status())
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
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s.current_dir().join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(m["next_change_at"], serde_json::Value::Null);
}

// 4 and 6. Parked after repeated failures; a parked item no longer pins the cap.

#[test]
fn a_broken_image_url_is_parked_after_max_attempts_and_retry_rearms_it() {
    let (base, hits) = image_server(vec![]); // every path is a 404
    let s = TestSite::new();
    s.write("fencepost.toml", "[publish]\nmax_attempts = 3\n");
    s.item(1, "2026-11-01");
    s.item_with(
        2,
        "2026-11-02",
        &format!("image = \"{base}/broken.png\"\n"),
        "two",
    );
    for round in 1..=3 {
        let r = s.publish(NOW);
        assert_eq!(r["failed"][0]["id"], 2, "round {round}: {r}");
    }
    assert_eq!(hits.load(Ordering::SeqCst), 3);
    // Parked: the next runs neither fetch nor count it as due.
    for _ in 0..2 {
        let r = s.publish(NOW);
        assert_eq!(ids(&r, "parked"), vec![2], "{r}");
        assert!(r["failed"].as_array().unwrap().is_empty());
    }
    assert_eq!(hits.load(Ordering::SeqCst), 3, "no fetch once parked");
    let st = s.status();
    assert_eq!(st["items"]["failed"], 1, "{st}");
    assert_eq!(st["parked"][0]["id"], 2);
    assert!(st["parked"][0]["error"].as_str().unwrap().contains("404"));
    assert_eq!(st["parked_images"].as_array().unwrap().len(), 1, "{st}");
    // A parked item no longer pins the next-change instant in the past.
    let b = s.build(&[]);
    assert_eq!(b["next_change_at"], serde_json::Value::Null, "{b}");
    // --retry re-arms the item and its image: one more fetch.
    let r = s.json(&["publish", "--retry", "2", "--now", NOW]);
    assert_eq!(ids(&r, "retried"), vec![2]);
    assert_eq!(r["failed"][0]["id"], 2);
    assert_eq!(hits.load(Ordering::SeqCst), 4);
    // An unknown id is refused.
    let out = s
        .cmd(&["publish", "--retry", "99", "--now", NOW])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no item 99"));
}

#[test]
fn a_changed_file_rearms_a_parked_item() {
    let s = TestSite::new();
    s.write("fencepost.toml", "[publish]\nmax_attempts = 2\n");
    s.item_with(1, "2026-11-01", "image = \"images/missing.png\"\n", "x");
    s.publish(NOW);
    s.publish(NOW);
    assert_eq!(ids(&s.publish(NOW), "parked"), vec![1]);
    // The editor fixes the file: the item is due again and publishes.
    s.item(1, "2026-11-01");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1], "{r}");
    assert_eq!(s.status()["items"]["failed"], 0);
}

// 7. A withdrawal re-checks the file under its lease.

#[test]
fn a_stale_scan_that_missed_a_file_does_not_withdraw_its_page() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.publish(NOW);
    assert_eq!(s.revision(), 2);
    // Run A scans while item 1's file is briefly away (a save by rename), then stalls.
    let away = s.path("content/answers/.1.md.away");
    std::fs::rename(s.path("content/answers/1.md"), &away).unwrap();
    let a = Stalled::start(
        &s,
        &["publish", "--now", NOW],
        "publish.after_scan=sleep(1500)",
    );
    a.wait_until("publish.after_scan");
    std::fs::rename(&away, s.path("content/answers/1.md")).unwrap();
    // Run B sees the file where it always was: nothing to do.
    assert!(ids(&s.publish(NOW), "withdrawn").is_empty());
    // A wakes with its stale picture; under the lease the file is there: no withdrawal.
    let out = a.finish();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(ids(&r, "withdrawn").is_empty(), "{r}");
    assert_eq!(s.revision(), 2, "no spurious public change");
    let public = s.items().into_iter().filter_map(|i| i.page);
    assert_eq!(public.filter(|p| !p.withdrawn).count(), 2);
    // A run that decided to withdraw, and holds the lease, while the file comes back: the
    // re-check under the lease ends it as a conflict (no other run told the ledger).
    std::fs::rename(s.path("content/answers/1.md"), &away).unwrap();
    let a = Stalled::start(
        &s,
        &["publish", "--now", NOW],
        "publish.after_preflight=sleep(1500)",
    );
    a.wait_until("publish.after_preflight");
    std::fs::rename(&away, s.path("content/answers/1.md")).unwrap();
    let out = a.finish();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "conflict"), vec![1], "{r}");
    assert_eq!(s.revision(), 2);
    // A real removal still withdraws.
    std::fs::remove_file(s.path("content/answers/1.md")).unwrap();
    assert_eq!(ids(&s.publish(NOW), "withdrawn"), vec![1]);
}

// 8. The embargo follows the current config.

#[test]
fn a_changed_grace_window_applies_to_items_not_yet_public() {
    let s = TestSite::new();
    s.item(1, "2026-11-30"); // due 2026-12-01T00:10Z with the default 10 minutes
    let r = s.publish("2026-12-01T00:05:00Z");
    assert_eq!(r["next_embargo_at"], "2026-12-01T00:10:00Z");
    s.write("fencepost.toml", "[publish]\ngrace_minutes = 600\n");
    let r = s.publish("2026-12-01T00:15:00Z");
    assert!(ids(&r, "published").is_empty(), "{r}");
    assert_eq!(r["next_embargo_at"], "2026-12-01T10:00:00Z");
    // And back down: shortening the window takes effect too.
    s.write("fencepost.toml", "[publish]\ngrace_minutes = 5\n");
    let r = s.publish("2026-12-01T00:06:00Z");
    assert_eq!(ids(&r, "published"), vec![1], "{r}");
    // An explicit publish_at is left alone.
    s.item_with(2, "2026-11-30", "publish_at = 2026-12-05T00:00:00Z\n", "x");
    s.write("fencepost.toml", "[publish]\ngrace_minutes = 1\n");
    let r = s.publish("2026-12-01T00:07:00Z");
    assert_eq!(r["next_embargo_at"], "2026-12-05T00:00:00Z");
}

// 9. A file removed before publication leaves nothing, even if a run held its lease.

#[test]
fn a_file_removed_while_another_run_held_its_lease_leaves_nothing_behind() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let a = Stalled::start(
        &s,
        &["publish", "--now", NOW, "--lease-secs", "60"],
        "publish.after_preflight=return",
    );
    let out = a.finish();
    assert_eq!(out.status.code(), Some(137));
    std::fs::remove_file(s.path("content/answers/1.md")).unwrap();
    // While A's lease is live, B cannot forget the row.
    s.publish("2026-12-01T00:00:30Z");
    assert_eq!(s.items().len(), 1);
    // Once it expired, the next run does.
    s.publish("2026-12-01T00:01:01Z");
    assert_eq!(s.items().len(), 0);
    assert_eq!(s.status()["failing"].as_array().unwrap().len(), 0);
}

// 10. verify detects a truncated tail and a live revision the chain no longer holds.

#[test]
fn verify_detects_a_truncated_tail() {
    let s = TestSite::new();
    for i in 1..=4 {
        s.item(i, &format!("2026-11-0{i}"));
    }
    s.json(&["publish", "--build", "--now", NOW]);
    let v = s.json(&["verify"]);
    assert_eq!(v["intact"], true, "{v}");
    assert_eq!(v["live_revision"]["consistent"], true, "{v}");
    s.ledger()
        .execute("DELETE FROM audit_log WHERE seq > 2", [])
        .unwrap();
    let out = s.cmd(&["verify", "--json"]).output().unwrap();
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["intact"], false);
    assert!(
        v["first_break"]["reason"]
            .as_str()
            .unwrap()
            .contains("truncated"),
        "{v}"
    );
    // A forger who also rewinds the anchor is caught by the pages' revisions, which have no
    // receipts now, and by the live revision's manifest.
    s.ledger()
        .execute(
            "UPDATE site_state SET audit_tip_seq = 2, audit_tip_hash = (SELECT current_hash FROM audit_log WHERE seq = 2)",
            [],
        )
        .unwrap();
    let out = s.cmd(&["verify", "--json"]).output().unwrap();
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["first_break"]["reason"]
            .as_str()
            .unwrap()
            .contains("entries were removed"),
        "{v}"
    );
    assert_eq!(v["live_revision"]["consistent"], false, "{v}");
}

/// Issue 19: the newest entries deleted together with the anchor, after the live revision
/// was built (so its manifest's tip is still in the chain), are found through the
/// publication revision and the pages' revision stamps — on both engines.
#[test]
fn verify_checks_the_chain_against_the_publication_revision_and_page_stamps() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let s = TestSite::on(backend);
        s.item(1, "2026-11-01").item(2, "2026-11-02");
        s.json(&["publish", "--build", "--now", NOW]);
        s.item(3, "2026-11-03");
        s.json(&["publish", "--now", NOW]); // revision 3, not built
        assert_eq!(s.json(&["verify"])["intact"], true);
        s.execute("DELETE FROM audit_log WHERE seq = 3");
        s.execute(
            "UPDATE site_state SET audit_tip_seq = 2, audit_tip_hash = (SELECT current_hash FROM audit_log WHERE seq = 2)",
        );
        let out = s.cmd(&["verify", "--json"]).output().unwrap();
        assert!(!out.status.success(), "{backend:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let reason = v["first_break"]["reason"].as_str().unwrap();
        assert!(
            reason.contains("item 3") && reason.contains("removed"),
            "{backend:?}: {v}"
        );
    }
}

// 11. A rollback's audit entry survives a crash between the pointer move and the entry.

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

// 13. The seed's integration scenario: two cron runs at once, several rounds.

#[test]
fn two_publishers_at_the_same_instant_publish_six_items_once_each() {
    let png = |n: u8| {
        let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
        b.push(n);
        b
    };
    let routes: Vec<(&'static str, u16, Vec<u8>)> = vec![
        ("/1.png", 200, png(1)),
        ("/2.png", 200, png(2)),
        ("/3.png", 200, png(3)),
        ("/4.png", 200, png(4)),
        ("/5.png", 200, png(5)),
        ("/6.png", 200, png(6)),
    ];
    let (base, hits) = image_server(routes);
    let s = TestSite::new();
    for i in 1..=6 {
        s.item_with(
            i,
            &format!("2026-11-0{i}"),
            &format!("image = \"{base}/{i}.png\"\n"),
            &format!("Answer body for item {i}."),
        );
    }
    s.publish("2026-11-01T00:00:00Z"); // creates the ledger; nothing is due yet
    let mut published = Vec::new();
    for round in 0..4 {
        let now = format!("2026-12-0{}T00:00:00Z", round + 1);
        let a = s.spawn_publish(&now, &[], &[]);
        let b = s.spawn_publish(&now, &[], &[]);
        let (ra, rb) = (finish(a), finish(b));
        published.extend(ids(&ra, "published"));
        published.extend(ids(&rb, "published"));
    }
    // Every item exactly once between the two, whichever run did it (one may skip what the
    // other holds, and finish it in a later round).
    published.sort();
    assert_eq!(published, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(s.revision(), 6);
    let pages = s.items().into_iter().filter_map(|i| i.page);
    assert_eq!(pages.filter(|p| p.content_version == 1).count(), 6);
    assert_eq!(hits.load(Ordering::SeqCst), 6, "each image fetched once");
    let stored = s.items().into_iter().filter(|i| i.image_stored).count();
    assert_eq!(stored, 6, "every item's image is stored");
    let blobs = walkdir::WalkDir::new(s.path(".fencepost/images"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .count();
    assert_eq!(blobs, 6, "each image stored once");
    // Two more runs at once change nothing.
    let before = dump(&s);
    let a = s.spawn_publish("2026-12-09T00:00:00Z", &[], &[]);
    let b = s.spawn_publish("2026-12-09T00:00:00Z", &[], &[]);
    let (ra, rb) = (finish(a), finish(b));
    for r in [&ra, &rb] {
        assert!(ids(r, "published").is_empty() && ids(r, "updated").is_empty());
    }
    assert_eq!(dump(&s), before);
    assert_eq!(hits.load(Ordering::SeqCst), 6);
    s.cmd(&["verify"]).assert().success();
}

// 14. The takeover in the seed's exact shape.

#[test]
fn a_stalled_publisher_loses_to_a_takeover_that_has_not_committed_yet() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    // The first publisher stalls after preflight with a 60 s lease.
    let first = Stalled::start(
        &s,
        &["publish", "--now", NOW, "--lease-secs", "60"],
        "publish.after_preflight=sleep(2500)",
    );
    first.wait_until("publish.after_preflight");
    // Its lease expires; a second run takes the lease (fence 2) but does not commit.
    let out = s.with_failpoints(
        &["publish", "--now", "2026-12-01T00:01:01Z"],
        "publish.after_preflight=return",
    );
    assert_eq!(out.status.code(), Some(137));
    assert_eq!(s.fence("publication:1").unwrap(), 2);
    let out = first.finish();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "lease_lost"), vec![1], "{r}");
    // No page, revision 0, the item still processing.
    assert_eq!(s.pages(), 0);
    assert_eq!(s.revision(), 0);
    assert_eq!(s.ledger_item("1").state, State::Processing);
}

// 5. A revision that disappears under the running origin: 503, never cached bytes or a 404.

#[test]
fn a_revision_deleted_under_the_running_origin_is_a_503() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/").status, 200); // now kept in memory
    assert_eq!(srv.get("/answers/1/").status, 200);
    let dir = s.current_dir();
    std::fs::remove_dir_all(&dir).unwrap();
    for path in ["/", "/answers/1/", "/no/such/"] {
        let r = srv.get(path);
        assert_eq!(r.status, 503, "{path}");
        assert_eq!(r.header("cache-control"), Some("no-store"));
        // The public is told nothing of the server's folders (issue 19).
        let body = r.text();
        assert!(
            !body.contains('/') && !body.contains("revision"),
            "{path}: {body}"
        );
    }
    // Moved away and another folder put in its place: the new one is read, not the cache.
    let again = s.build(&[]);
    assert_eq!(again["already_built"], false);
    assert_eq!(srv.get("/answers/1/").status, 200);
}

/// Issue 19: parking stops retries of the operation that failed; it never keeps a page
/// public against a newer decision. A published item whose update is parked comes down when
/// its file is deleted.
#[test]
fn a_parked_published_item_is_withdrawn_when_its_file_is_deleted() {
    let (base, _hits) = image_server(vec![]); // every path is a 404
    let s = TestSite::new();
    s.write("fencepost.toml", "[publish]\nmax_attempts = 2\n");
    s.item(1, "2026-11-01");
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    assert!(s.current_dir().join("answers/2/index.html").exists());
    // An update that cannot succeed: parked after two attempts, the old page still public.
    s.item_with(
        2,
        "2026-11-02",
        &format!("image = \"{base}/gone.png\"\n"),
        "edited",
    );
    for _ in 0..2 {
        s.publish(NOW);
    }
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "parked"), vec![2], "{r}");
    // The editor deletes the file: the page comes down.
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(ids(&r, "withdrawn"), vec![2], "{r}");
    assert!(ids(&r, "parked").is_empty(), "{r}");
    assert!(!s.current_dir().join("answers/2/index.html").exists());
    assert!(s.status()["parked"].as_array().unwrap().is_empty());
}
