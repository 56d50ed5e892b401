//! Items that cannot be published yet: unreadable or remote images retried, parked after their
//! attempts, re-armed by a change or `retry`, withdrawn when deleted.
use crate::common::*;
use std::sync::atomic::Ordering;

#[test]
fn an_unreadable_image_leaves_the_item_pending_and_the_next_run_retries() {
    let s = TestSite::new();
    s.item_with(1, "2026-11-01", "image = \"images/missing.png\"\n", "x");
    s.item_with(
        2,
        "2026-11-01",
        "image = \"images/not-an-image.png\"\n",
        "x",
    );
    s.item(3, "2026-11-01");
    s.write("content/images/not-an-image.png", "hello");
    let r = s.publish(NOW);
    assert_eq!(
        ids(&r, "published"),
        vec![3],
        "the run goes on for the other items: {r}"
    );
    let failed = r["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 2);
    assert_eq!(failed[0]["id"], 1);
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("images/missing.png"),
        "{r}"
    );
    assert!(
        failed[1]["error"]
            .as_str()
            .unwrap()
            .contains("not an image"),
        "{r}"
    );
    let st = s.status();
    assert_eq!(st["items"]["pending"], 2);
    assert_eq!(st["items"]["processing"], 0);
    assert_eq!(st["failing"].as_array().unwrap().len(), 2);
    let failing = st["failing"].as_array().unwrap();
    let one = failing
        .iter()
        .find(|f| f["id"] == 1)
        .expect("item 1 is failing");
    assert!(
        one["error"].as_str().unwrap().contains("missing.png"),
        "{st}"
    );
    // Fix the files: the next run publishes both and clears the errors.
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    std::fs::write(s.path("content/images/missing.png"), png).unwrap();
    std::fs::write(s.path("content/images/not-an-image.png"), png).unwrap();
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1, 2]);
    assert_eq!(s.status()["failing"].as_array().unwrap().len(), 0);
    // Same bytes from two sources: one blob in the store.
    let blobs = walkdir::WalkDir::new(s.path(".fencepost/images"))
        .into_iter()
        .filter(|e| e.as_ref().unwrap().file_type().is_file())
        .count();
    assert_eq!(blobs, 1);
}

#[test]
fn a_remote_image_is_fetched_exactly_once_and_a_404_is_retried() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDRremote".to_vec();
    let (base, hits) = image_server(vec![("/a.png", 200, png.clone())]);
    let s = TestSite::new();
    s.item_with(1, "2026-11-01", &format!("image = \"{base}/a.png\"\n"), "x");
    s.item_with(2, "2026-11-01", &format!("image = \"{base}/a.png\"\n"), "y");
    s.item_with(
        3,
        "2026-11-01",
        &format!("image = \"{base}/missing.png\"\n"),
        "z",
    );
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1, 2]);
    assert_eq!(r["failed"][0]["id"], 3);
    assert!(
        r["failed"][0]["error"].as_str().unwrap().contains("404"),
        "{r}"
    );
    let after_first = hits.load(Ordering::SeqCst);
    assert_eq!(after_first, 2, "one fetch for a.png, one for missing.png");
    // Reruns and an edit of a page never fetch the stored image again; the 404 is retried.
    s.item_with(
        1,
        "2026-11-01",
        &format!("image = \"{base}/a.png\"\n"),
        "x edited",
    );
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "updated"), vec![1]);
    assert_eq!(hits.load(Ordering::SeqCst), after_first + 1);
    let missing = format!("{base}/missing.png");
    let (state, attempts) = s
        .read(|tx| fencepost_ledger::images::state(tx, &missing))
        .unwrap();
    assert_eq!((state.as_str(), attempts), ("failed", 2));
    let page = s.ledger_item("2").page.unwrap();
    assert_eq!(
        page.image_sha256.unwrap(),
        fencepost_core::digest::sha256_hex(&png)
    );
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
