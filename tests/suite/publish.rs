//! `fencepost publish` on one process: the item life cycle and the revision rule.
use crate::common::*;

#[test]
fn publishes_due_items_once_and_leaves_embargoed_ones() {
    let s = TestSite::new();
    s.item(1, "2026-11-28")
        .item(2, "2026-11-29")
        .item(3, "2026-11-30")
        .item(4, "2026-12-05");
    // 2026-11-30 is due at 2026-12-01T00:10Z: not yet at NOW (00:00).
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1, 2]);
    assert_eq!(r["revision"], 2);
    assert_eq!(r["embargoed"], 2);
    assert_eq!(r["next_embargo_at"], "2026-12-01T00:10:00Z");
    for key in [
        "owner",
        "updated",
        "withdrawn",
        "unchanged",
        "skipped_locked",
        "lease_lost",
        "conflict",
    ] {
        assert!(r.get(key).is_some(), "missing {key}");
    }
    // One millisecond before the grace window ends: still embargoed.
    let r = s.publish("2026-12-01T00:09:59.999Z");
    assert!(ids(&r, "published").is_empty());
    assert_eq!(r["unchanged"], 2);
    let r = s.publish("2026-12-01T00:10:00Z");
    assert_eq!(ids(&r, "published"), vec![3]);
    assert_eq!(r["revision"], 3);
    // A rerun changes nothing public and leaves the revision alone.
    let r = s.publish("2026-12-01T00:11:00Z");
    assert!(ids(&r, "published").is_empty() && ids(&r, "updated").is_empty());
    assert_eq!(r["unchanged"], 3);
    assert_eq!(r["revision"], 3);
    let st = s.status();
    assert_eq!(st["items"]["published"], 3);
    assert_eq!(st["items"]["pending"], 1);
    assert_eq!(
        st["leases"], 0,
        "every lease is released when its run is done"
    );
    assert_eq!(s.audit().len(), 3);
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn publish_at_overrides_the_day_rule() {
    let s = TestSite::new();
    s.item_with(
        1,
        "2026-11-01",
        "publish_at = 2026-12-24T18:00:00Z\n",
        "later",
    );
    assert!(ids(&s.publish(NOW), "published").is_empty());
    assert_eq!(
        ids(&s.publish("2026-12-24T18:00:00Z"), "published"),
        vec![1]
    );
}

#[test]
fn edits_withdrawals_and_returns_each_bump_the_revision_once() {
    let s = TestSite::new();
    s.item(1, "2026-11-01")
        .item(2, "2026-11-02")
        .item(3, "2026-11-03");
    assert_eq!(s.publish(NOW)["revision"], 3);

    // Edit the body: one update.
    s.item_with(1, "2026-11-01", "", "A corrected body.");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "updated"), vec![1]);
    assert_eq!(r["revision"], 4);
    assert_eq!(s.body("1"), "<p>A corrected body.</p>\n");

    // A change to the file that renders the same page (comment, key order) is not public.
    s.write(
        "content/answers/1.md",
        "+++\n# reordered\nprice = 4.99\ntitle = \"Item 1\"\nday = 2026-11-01\nid = 1\n+++\n\nA corrected body.\n",
    );
    let r = s.publish(NOW);
    assert!(ids(&r, "updated").is_empty(), "{r}");
    assert_eq!(r["revision"], 4);
    let r = s.publish(NOW);
    assert_eq!(
        r["unchanged"], 3,
        "the new source hash was recorded, so it is not re-rendered: {r}"
    );

    // Withdraw by flag and by removing the file.
    s.item_with(2, "2026-11-02", "withdrawn = true\n", "gone");
    std::fs::remove_file(s.path("content/answers/3.md")).unwrap();
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "withdrawn"), vec![2, 3]);
    assert_eq!(r["revision"], 6);
    assert_eq!(s.status()["items"]["withdrawn"], 2);
    assert_eq!(
        s.publish(NOW)["revision"],
        6,
        "withdrawing again changes nothing"
    );

    // Bring item 3 back: published again, one more revision.
    s.item(3, "2026-11-03");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![3]);
    assert_eq!(r["revision"], 7);
    let page = s.ledger_item("3").page.unwrap();
    assert_eq!((page.content_version, page.withdrawn), (3, false));
    assert_eq!(s.audit().len(), 7);
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn a_file_removed_before_publication_leaves_no_trace() {
    let s = TestSite::new();
    s.item(1, "2026-12-20");
    s.publish(NOW);
    assert_eq!(s.status()["items"]["pending"], 1);
    std::fs::remove_file(s.path("content/answers/1.md")).unwrap();
    let r = s.publish(NOW);
    assert!(
        ids(&r, "withdrawn").is_empty(),
        "never public, so nothing to withdraw"
    );
    assert_eq!(r["revision"], 0);
    assert_eq!(s.status()["items"]["pending"], 0);
}

#[test]
fn one_way_rules_indexable_and_image_never_go_back() {
    let s = TestSite::new();
    s.write(
        "content/images/a.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    s.item_with(1, "2026-11-01", "image = \"images/a.svg\"\n", "first");
    assert_eq!(ids(&s.publish(NOW), "published"), vec![1]);
    // The editor drops the image and marks the page noindex, and changes the body.
    s.item_with(1, "2026-11-01", "indexable = false\n", "second");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "updated"), vec![1]);
    let page = s.ledger_item("1").page.unwrap();
    assert!(page.indexable, "an indexable page never returns to noindex");
    assert!(
        page.image_sha256.is_some(),
        "a page that has its image keeps it"
    );
    assert_eq!(s.body("1"), "<p>second</p>\n");
    // A noindex page may become indexable.
    s.item_with(2, "2026-11-02", "indexable = false\n", "x");
    s.publish(NOW);
    s.item_with(2, "2026-11-02", "indexable = true\n", "x");
    assert_eq!(ids(&s.publish(NOW), "updated"), vec![2]);
}

#[test]
fn verify_names_the_first_tampered_entry() {
    let s = TestSite::new();
    s.item(1, "2026-11-01")
        .item(2, "2026-11-02")
        .item(3, "2026-11-03");
    s.publish(NOW);
    let v = s.json(&["verify"]);
    assert_eq!(v["intact"], true);
    assert_eq!(v["entries"], 3);
    s.ledger()
        .execute("UPDATE audit_log SET subject = 'item:99' WHERE seq = 2", [])
        .unwrap();
    let out = s.cmd(&["verify", "--json"]).output().unwrap();
    assert!(!out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["intact"], false);
    assert_eq!(v["first_break"]["seq"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("entry 2"), "{stderr}");
    // Deleting an entry is caught too.
    s.ledger()
        .execute("UPDATE audit_log SET subject = 'item:2' WHERE seq = 2", [])
        .unwrap();
    s.cmd(&["verify"]).assert().success();
    s.ledger()
        .execute("DELETE FROM audit_log WHERE seq = 2", [])
        .unwrap();
    let out = s.cmd(&["verify"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("entry 3"));
}

#[test]
fn markdown_edge_cases_render_safely() {
    let s = TestSite::new();
    let long: String = "word ".repeat(50_000);
    s.write(
        "content/answers/1.md",
        &format!("+++\nid = 1\nday = 2026-11-01\ntitle = \"Crème brûlée — 日本 🍰\"\nprice = \"$12\"\n+++\n\n<script>alert(1)</script>\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n{long}\n"),
    );
    assert_eq!(ids(&s.publish(NOW), "published"), vec![1]);
    let page = s.public_pages().into_iter().find(|p| p.key == "1").unwrap();
    let data: serde_json::Value = serde_json::from_str(&page.data).unwrap();
    let body = s.body("1");
    assert_eq!(page.title, "Crème brûlée — 日本 🍰");
    assert_eq!(data["price"], "12.00");
    assert!(body.contains("&lt;script&gt;") && !body.contains("<script>"));
    assert!(body.contains("<table>"));
    assert!(body.len() > 250_000);
}

#[test]
fn results_add_gives_dense_slots_and_refuses_duplicates() {
    let s = TestSite::new();
    let add = |session: &str| {
        s.json(&[
            "results",
            "add",
            "--puzzle",
            "4",
            "--session",
            session,
            "--outcome",
            "win",
            "--guesses",
            "3",
            "--now",
            NOW,
        ])
    };
    assert_eq!(
        add("a"),
        serde_json::json!({"inserted": true, "slot": 1, "reason": null})
    );
    assert_eq!(add("b")["slot"], 2);
    assert_eq!(
        add("a"),
        serde_json::json!({"inserted": false, "slot": 1, "reason": "duplicate"})
    );
    s.write("fencepost.toml", "[results]\nmax_per_puzzle = 2\n");
    assert_eq!(
        add("c"),
        serde_json::json!({"inserted": false, "slot": null, "reason": "full"})
    );
    s.cmd(&[
        "results",
        "add",
        "--puzzle",
        "4",
        "--session",
        "d",
        "--outcome",
        "draw",
        "--guesses",
        "3",
    ])
    .assert()
    .failure();
    s.cmd(&[
        "results",
        "add",
        "--puzzle",
        "4",
        "--session",
        "d",
        "--outcome",
        "win",
        "--guesses",
        "0",
    ])
    .assert()
    .failure()
    .stderr(predicates::str::contains("--guesses"));
}

#[test]
fn unchanged_files_are_not_read_again() {
    let s = TestSite::new();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let age = |id: i64, t: std::time::SystemTime| {
        let f = std::fs::File::options()
            .write(true)
            .open(s.path(&format!("content/answers/{id}.md")))
            .unwrap();
        f.set_modified(t).unwrap();
    };
    // A file changed within the racy window (2 s, by the later of its mtime and ctime, which
    // no tool can set back) is always re-read; past it, only a changed stat is.
    let past_racy_window = || std::thread::sleep(std::time::Duration::from_millis(2100));
    for id in 1..=20 {
        s.item(id, "2026-11-01");
        age(id, old);
    }
    assert_eq!(s.publish(NOW)["files_read"], 20);
    past_racy_window();
    assert_eq!(s.publish(NOW)["files_read"], 0);
    // Same size, new content and mtime: the stat cache notices.
    s.item_with(7, "2026-11-01", "", "Answer body for item 8.");
    age(7, old + std::time::Duration::from_secs(1));
    past_racy_window();
    let r = s.publish(NOW);
    assert_eq!(r["files_read"], 1);
    assert_eq!(ids(&r, "updated"), vec![7]);
    // A file written just now is always re-read: its stamp cannot yet be trusted.
    s.item_with(8, "2026-11-01", "", "Answer body for item 8.");
    assert_eq!(s.publish(NOW)["files_read"], 1);
}
