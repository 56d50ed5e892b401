//! Opening the ledger: created once by racing first runs; a corrupt, newer or mistyped one
//! refused and left alone; never recreated beside output it did not make.
use crate::common::*;
use predicates::str::contains;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

#[test]
fn eight_publishers_racing_to_create_the_ledger_all_succeed() {
    let rounds: usize = std::env::var("FENCEPOST_FIRST_RUN_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(25);
    // Keep both cores busy, as a loaded CI machine would.
    let stop = Arc::new(AtomicBool::new(false));
    let burners: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    std::hint::black_box(x);
                }
            })
        })
        .collect();
    for round in 0..rounds {
        let s = TestSite::new();
        for i in 1..=5 {
            s.item(i, &format!("2026-11-0{i}"));
        }
        assert!(!s.path(".fencepost/ledger.sqlite").exists());
        let barrier = Arc::new(std::sync::Barrier::new(8));
        let runs: Vec<_> = (0..8)
            .map(|_| {
                let (root, barrier) = (s.root().to_path_buf(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    fencepost()
                        .arg("--site")
                        .arg(&root)
                        .args(["publish", "--json", "--now", NOW])
                        .output()
                        .unwrap()
                })
            })
            .collect();
        let mut published = Vec::new();
        for r in runs {
            let out = r.join().unwrap();
            assert!(
                out.status.success(),
                "round {round}: a racing first run failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            published.extend(ids(&v, "published"));
        }
        published.sort();
        assert_eq!(published, vec![1, 2, 3, 4, 5], "round {round}");
        assert_eq!(s.revision(), 5);
        // The schema was created once: one ledger id, one intact chain.
        s.cmd(&["verify"]).assert().success();
    }
    stop.store(true, Ordering::Relaxed);
    for b in burners {
        b.join().unwrap();
    }
}
