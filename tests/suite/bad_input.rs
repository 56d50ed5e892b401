//! Bad input: a clear error naming the file, item or key, a non-zero exit where the run cannot
//! go on, and nothing half-written.
use crate::common::*;
use predicates::str::contains;
use std::sync::atomic::Ordering;

fn nothing_written(s: &TestSite) {
    assert_eq!(s.items().len(), 0);
    assert_eq!(s.pages(), 0);
    assert_eq!(s.revision(), 0);
}

/// Issue 20: a broken file holds back only its own item; the run publishes the others, names
/// the file, and exits non-zero.
#[test]
fn malformed_front_matter_holds_back_only_its_own_item() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.write(
        "content/answers/2.md",
        "+++\nid = 2\nday = 2026-11-02\ntitle = \"unclosed\nprice = 1\n+++\nbody\n",
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stdout(contains("content/answers/2.md:4:"))
        .stderr(contains("content/answers/2.md:4:"));
    assert!(s.items().iter().all(|i| &*i.name.id != "2"));
    assert_eq!(s.revision(), 1, "item 1 went ahead");
    let s = TestSite::new();
    s.write("content/answers/2.md", "+++\nid = 2\nday = 2026-11-02\n");
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("never closed"));
    s.write("content/answers/2.md", "no front matter\n");
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("content/answers/2.md: no front matter"));
    nothing_written(&s);
}

#[test]
fn a_missing_or_wrong_field_is_named() {
    let s = TestSite::new();
    s.write(
        "content/answers/5.md",
        "+++\nid = 5\nday = 2026-11-02\nprice = 1\n+++\nbody\n",
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains(
            "content/answers/5.md: `title`: is required but missing",
        ));
    s.write(
        "content/answers/5.md",
        "+++\nid = 5\nday = \"yesterday\"\ntitle = \"t\"\nprice = 1\n+++\nbody\n",
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("`day`"));
    s.write("content/answers/5.md", "+++\nid = 5\nday = 2026-11-02\ntitle = \"t\"\nprice = 1\nimage = \"../../etc/passwd\"\n+++\n");
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("leaves content/"));
    nothing_written(&s);
}

#[test]
fn duplicate_ids_name_both_files_and_a_published_page_is_not_withdrawn() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    assert_eq!(s.publish(NOW)["revision"], 1);
    s.write(
        "content/answers/copy-of-1.md",
        &std::fs::read_to_string(s.path("content/answers/1.md")).unwrap(),
    );
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stdout(contains("duplicate item id 1"))
        .stderr(contains("content/answers/1.md"))
        .stderr(contains("content/answers/copy-of-1.md"));
    // A broken file must not look like a removed one.
    std::fs::remove_file(s.path("content/answers/copy-of-1.md")).unwrap();
    s.write("content/answers/1.md", "+++\nbroken");
    s.cmd(&["publish", "--now", NOW]).assert().failure();
    assert_eq!(s.status()["items"]["published"], 1);
    assert_eq!(s.revision(), 1);
}

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
fn a_corrupt_ledger_is_refused_and_left_alone() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    std::fs::create_dir_all(s.path(".fencepost")).unwrap();
    let garbage =
        b"this is not a database, just some bytes that are long enough to look like a header......"
            .repeat(20);
    std::fs::write(s.path(".fencepost/ledger.sqlite"), &garbage).unwrap();
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains(".fencepost/ledger.sqlite"))
        .stderr(contains("not a usable fencepost ledger"));
    assert_eq!(
        std::fs::read(s.path(".fencepost/ledger.sqlite")).unwrap(),
        garbage
    );
    s.cmd(&["status"]).assert().failure();
}

#[test]
fn a_newer_ledger_is_refused_and_left_alone() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    {
        let c = s.ledger();
        c.execute_batch("PRAGMA journal_mode = DELETE; PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(s.path(".fencepost/ledger.sqlite")).unwrap();
    s.cmd(&["publish", "--now", NOW])
        .assert()
        .failure()
        .stderr(contains("schema version 99"))
        .stderr(contains("upgrade fencepost"));
    assert_eq!(
        std::fs::read(s.path(".fencepost/ledger.sqlite")).unwrap(),
        before
    );
    assert!(
        !s.path(".fencepost/ledger.sqlite-wal").exists(),
        "not even switched to WAL"
    );
}

#[test]
fn bad_config_and_bad_flags_are_named() {
    let s = TestSite::new();
    s.write("fencepost.toml", "[publish]\ngrace = 5\n");
    s.cmd(&["publish"])
        .assert()
        .failure()
        .stderr(contains("fencepost.toml"))
        .stderr(contains("grace"));
    let out = s.cmd(&["publish", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"]["kind"], "config", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("grace"),
        "{e}"
    );
    s.write("fencepost.toml", "");
    s.cmd(&["publish", "--now", "yesterday"])
        .assert()
        .failure()
        .stderr(contains("RFC 3339"));
    s.cmd(&["publish", "--lease-secs", "0"]).assert().failure();
    let empty = tempfile::tempdir().unwrap();
    assert_cmd::Command::new(bin())
        .arg("--site")
        .arg(empty.path())
        .arg("publish")
        .assert()
        .failure()
        .stderr(contains("fencepost init"));
}

#[test]
fn init_refuses_an_existing_site() {
    let s = TestSite::new();
    assert_cmd::Command::new(bin())
        .arg("init")
        .arg(s.root())
        .assert()
        .failure()
        .stderr(contains("already"));
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
        .read(|tx| fencepost::ledger::images::state(tx, &missing))
        .unwrap();
    assert_eq!((state.as_str(), attempts), ("failed", 2));
    let page = s.ledger_item("2").page.unwrap();
    assert_eq!(
        page.image_sha256.unwrap(),
        fencepost::content::sha256_hex(&png)
    );
}

/// Every file and folder under the site (names only), for "nothing was created".
fn listing(s: &TestSite) -> Vec<String> {
    tree(s.root()).into_keys().collect()
}

/// Issue 19: a scheme typo in `FENCEPOST_LEDGER` is an error — never a SQLite ledger created
/// at a path built from the URL (with the password in a folder name), republishing
/// everything into it.
#[test]
fn a_scheme_typo_in_fencepost_ledger_is_an_error_that_creates_nothing() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let before = listing(&s);
    for bad in [
        "Postgres://fp:hunter2@127.0.0.1:5432/db",
        "postgres:/fp:hunter2@127.0.0.1:5432/db",
        "postgress://fp:hunter2@127.0.0.1:5432/db",
        "mysql://fp:hunter2@127.0.0.1/db",
    ] {
        for args in [
            &["publish", "--now", NOW][..],
            &["build", "--now", NOW],
            &["status"],
        ] {
            let out = s.cmd(args).env("FENCEPOST_LEDGER", bad).output().unwrap();
            assert!(!out.status.success(), "{bad} {args:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("postgres://"), "{bad}: {err}");
            assert!(
                !err.contains("hunter2"),
                "{bad}: the password is shown: {err}"
            );
        }
        assert_eq!(before, listing(&s), "{bad} created something");
    }
    // A plain relative path still names a SQLite ledger.
    let out = s
        .cmd(&["publish", "--now", NOW])
        .env("FENCEPOST_LEDGER", "elsewhere/ledger.sqlite")
        .output()
        .unwrap();
    assert_success(&out);
    assert!(s.path("elsewhere/ledger.sqlite").exists());
}

/// A SQLite ledger that went missing while `public/` holds output built from it is not
/// silently re-created by `publish` (which would republish everything under new revisions).
#[test]
fn publish_refuses_to_recreate_a_missing_ledger_when_public_holds_output() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    std::fs::remove_file(s.path(".fencepost/ledger.sqlite")).unwrap();
    let out = s.cmd(&["publish", "--now", NOW]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not exist") && err.contains("public"),
        "{err}"
    );
    assert!(!s.path(".fencepost/ledger.sqlite").exists());
}

/// Issue 19, small gaps: out-of-range settings, a test-only target, a bad --revision, and a
/// rollback to what is live are refused or change nothing, and write nothing.
#[test]
fn small_gaps_are_refused_before_anything_is_written() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    for (extra, key) in [
        ("[publish]\ngrace_minutes = 4294967295\n", "grace_minutes"),
        ("[images]\nmax_bytes = 0\n", "max_bytes"),
    ] {
        let text = if cfg.contains(extra.lines().next().unwrap()) {
            cfg.replace(extra.lines().next().unwrap(), extra.trim_end())
        } else {
            format!("{cfg}\n{extra}")
        };
        s.write("fencepost.toml", &text);
        s.cmd(&["publish", "--now", NOW])
            .assert()
            .failure()
            .stderr(contains(key));
    }
    s.write("fencepost.toml", &cfg);
    s.json(&["publish", "--build", "--now", NOW]);
    // memory:// keeps nothing after the command: refused, not audited.
    for args in [
        vec!["deploy", "--to", "memory://x"],
        vec!["gc", "--to", "memory://x", "--keep", "1"],
        vec!["serve", "--from", "memory://x"],
    ] {
        s.cmd(&args)
            .assert()
            .failure()
            .stderr(contains("memory://"));
    }
    // A revision that is not there: no target folder made, no target recorded.
    let gone = tempfile::tempdir().unwrap();
    let target = gone.path().join("bucket");
    let url = format!("file://{}", target.display());
    s.cmd(&["deploy", "--to", &url, "--revision", "99", "--now", NOW])
        .assert()
        .failure();
    assert!(!target.exists(), "the target folder was made");
    let st = s.status();
    assert!(st["targets"].as_array().unwrap().is_empty(), "{st}");
    assert!(s.audit().iter().all(|e| e.action == "publish"));
    // Rolling back to what is live, locally or in a bucket, moves nothing and audits nothing.
    s.json(&["rollback", "1", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let r = s.json(&["rollback", "1", "--to", &url, "--now", NOW]);
    assert_eq!(r["operation"], serde_json::Value::Null, "{r}");
    assert_eq!(s.audited("rollback"), 0);
}

/// Issue 19: values the engines cannot hold (a day past 9998 on SQLite, year 0 or a NUL on
/// PostgreSQL) are named when the file is read — file, line, key — the same on both engines,
/// never an SQL error naming no file; and a control character never reaches a feed.
#[test]
fn out_of_range_days_and_control_characters_are_named_the_same_on_both_engines() {
    let cases = [
        (
            "+++\nid = 2\nday = 9999-12-31\ntitle = \"t\"\nprice = 1\n+++\nbody\n",
            "content/answers/2.md:3",
            "day",
        ),
        (
            "+++\nid = 2\nday = 0000-01-01\ntitle = \"t\"\nprice = 1\n+++\nbody\n",
            "content/answers/2.md:3",
            "day",
        ),
        (
            "+++\nid = 2\nday = 2026-11-02\ntitle = \"a\\u0000b\"\nprice = 1\n+++\nbody\n",
            "content/answers/2.md:4",
            "title",
        ),
        (
            "+++\nid = 2\nday = 2026-11-02\ntitle = \"t\"\nprice = 1\n+++\nline one\nbad \u{0} here\n",
            "content/answers/2.md:8",
            "(body)",
        ),
        (
            "+++\nid = 2\nday = 2026-11-02\ntitle = \"t\"\nprice = 1\npublish_at = 0000-12-31T23:59:59Z\n+++\nbody\n",
            "content/answers/2.md:6",
            "publish_at",
        ),
    ];
    for backend in [Backend::Sqlite, Backend::Postgres] {
        for (file, at, key) in cases {
            let s = TestSite::on(backend);
            s.item(1, "2026-11-01");
            s.write("content/answers/2.md", file);
            let out = s.cmd(&["publish", "--now", NOW]).output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{backend:?} {key}");
            let err = String::from_utf8_lossy(&out.stdout);
            assert!(err.contains(at) && err.contains(key), "{backend:?}: {err}");
            assert!(!err.to_lowercase().contains("sql"), "{backend:?}: {err}");
            // Item 2 is held; item 1 is not its hostage (issue 20).
            assert!(s.items().iter().all(|i| &*i.name.id != "2"));
            assert_eq!(s.pages(), 1);
            assert_eq!(s.revision(), 1);
        }
    }
}
