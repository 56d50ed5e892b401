//! Several OS processes publishing at the same instant over one ledger.
mod common;
use common::*;
use std::collections::BTreeSet;

/// Runs `n` publish processes at once and returns their reports.
fn race(s: &TestSite, n: usize, now: &str) -> Vec<serde_json::Value> {
    let children: Vec<_> = (0..n).map(|_| s.spawn_publish(now, &[], &[])).collect();
    children.into_iter().map(finish).collect()
}

/// Every id in `key` across the reports, asserting none appears twice.
fn union_no_dupes(reports: &[serde_json::Value], key: &str) -> BTreeSet<i64> {
    let mut all = BTreeSet::new();
    for r in reports {
        for id in ids(r, key) {
            assert!(
                all.insert(id),
                "item {id} was {key} by two processes: {reports:?}"
            );
        }
    }
    all
}

#[test]
fn four_processes_publish_every_item_exactly_once_over_several_rounds() {
    let s = TestSite::new();
    // Small batches make the processes interleave on the lease table.
    s.write("fencepost.toml", "[publish]\nbatch_size = 4\n");
    let days = ["2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"];
    let per_day = 30;
    for (d, day) in days.iter().enumerate() {
        for k in 0..per_day {
            s.item((d * per_day + k + 1) as i64, day);
        }
    }
    // Round r runs just after day r's embargo ends, so 30 more items are due each round.
    let rounds = [
        "2026-11-02T00:10:00Z",
        "2026-11-03T00:10:00Z",
        "2026-11-04T00:10:00Z",
        "2026-11-05T00:10:00Z",
    ];
    let mut expected = BTreeSet::new();
    for (r, now) in rounds.iter().enumerate() {
        let reports = race(&s, 4, now);
        let published = union_no_dupes(&reports, "published");
        let new: BTreeSet<i64> = ((r * per_day + 1) as i64..=((r + 1) * per_day) as i64).collect();
        assert_eq!(published, new, "round {r}");
        expected.extend(new);
        for rep in &reports {
            assert!(
                ids(rep, "lease_lost").is_empty() && ids(rep, "conflict").is_empty(),
                "{rep}"
            );
        }
        assert_eq!(s.revision(), expected.len() as i64);
    }
    assert_eq!(s.count("SELECT count(*) FROM pages"), 120);
    assert_eq!(s.count("SELECT count(*) FROM audit_log"), 120);
    assert_eq!(s.count("SELECT max(content_version) FROM pages"), 1);
    s.cmd(&["verify"]).assert().success();

    // One more round at once: nothing to do, nothing changes.
    let reports = race(&s, 4, rounds[3]);
    for rep in &reports {
        assert!(
            ids(rep, "published").is_empty() && ids(rep, "updated").is_empty(),
            "{rep}"
        );
    }
    assert_eq!(s.revision(), 120);

    // Edits, withdrawals and removals, then racing re-runs: one revision per public change.
    for id in 1..=10 {
        s.item_with(id, "2026-11-01", "", &format!("Edited body {id}."));
    }
    for id in 11..=15 {
        s.item_with(id, "2026-11-01", "withdrawn = true\n", "gone");
    }
    for id in 16..=20 {
        std::fs::remove_file(s.path(&format!("content/answers/{id}.md"))).unwrap();
    }
    let reports = race(&s, 4, rounds[3]);
    assert_eq!(union_no_dupes(&reports, "updated"), (1..=10).collect());
    assert_eq!(union_no_dupes(&reports, "withdrawn"), (11..=20).collect());
    assert!(union_no_dupes(&reports, "published").is_empty());
    assert_eq!(s.revision(), 140);
    let reports = race(&s, 4, rounds[3]);
    for rep in &reports {
        assert!(
            ids(rep, "updated").is_empty() && ids(rep, "withdrawn").is_empty(),
            "{rep}"
        );
    }
    assert_eq!(s.revision(), 140);
    assert_eq!(s.count("SELECT count(*) FROM audit_log"), 140);
    s.cmd(&["verify"]).assert().success();
}

#[test]
fn two_concurrent_commits_of_the_same_page_exactly_one_wins() {
    use fencepost::clock::Instant;
    use fencepost::content::ItemId;
    use fencepost::ledger::items::{Action, State};
    use fencepost::ledger::lease::{self, OwnerId};
    use fencepost::ledger::pages::{self, Commit, Outcome, PageFields};
    use fencepost::ledger::Ledger;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    let s = TestSite::new();
    s.item(1, "2026-12-20"); // embargoed: the scan records it, nothing publishes it
    s.publish(NOW);
    let path = s.path(".fencepost/ledger.sqlite");
    let now = Instant::parse_rfc3339("2026-12-21T01:00:00Z").unwrap();
    let held = {
        let l = Ledger::open(&path, Duration::from_secs(5)).unwrap();
        let held = lease::acquire(
            l.conn(),
            &fencepost::ledger::lease::LeaseKey::Publication(fencepost::content::ItemId(1)),
            &OwnerId::random(),
            now,
            60,
        )
        .unwrap()
        .unwrap();
        assert!(
            fencepost::ledger::items::mark_processing(l.conn(), ItemId(1), &held, now).unwrap()
        );
        held
    };
    let source_hash: String = s
        .ledger()
        .query_row("SELECT source_hash FROM items WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = ["alpha", "beta"]
        .into_iter()
        .map(|body| {
            let (path, held, source_hash, barrier) = (
                path.clone(),
                held.clone(),
                source_hash.clone(),
                barrier.clone(),
            );
            std::thread::spawn(move || {
                let mut l = Ledger::open(&path, Duration::from_secs(10)).unwrap();
                let c = Commit {
                    id: ItemId(1),
                    action: Action::Publish,
                    lease: held,
                    expected_state: State::Processing,
                    expected_version: 0,
                    source_hash: Some(source_hash),
                    page: Some(PageFields {
                        title: "t".into(),
                        day: "2026-12-20".into(),
                        price: "1.00".into(),
                        body_html: body.into(),
                        image_source: None,
                        image_sha256: None,
                        indexable: true,
                    }),
                    token: format!("token-{body}"),
                };
                barrier.wait();
                let tx = l.write().unwrap();
                let r = pages::commit(&tx, &c, now).unwrap();
                tx.commit().unwrap();
                r.outcome
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == Outcome::Published)
            .count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(
        outcomes.iter().filter(|o| **o == Outcome::Conflict).count(),
        1,
        "{outcomes:?}"
    );
    assert_eq!(s.revision(), 1);
    assert_eq!(s.count("SELECT count(*) FROM audit_log"), 1);
    assert_eq!(
        s.count("SELECT content_version FROM pages WHERE item_id = 1"),
        1
    );
}

#[test]
fn concurrent_result_reports_get_dense_unique_slots() {
    let s = TestSite::new();
    let children: Vec<_> = (0..12)
        .map(|i| {
            std::process::Command::new(bin())
                .arg("--site")
                .arg(s.root())
                .args([
                    "results",
                    "add",
                    "--json",
                    "--puzzle",
                    "9",
                    "--outcome",
                    "win",
                    "--guesses",
                    "2",
                    "--session",
                ])
                .arg(format!("s{}", i % 10)) // two sessions report twice
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut slots = Vec::new();
    let mut dupes = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if v["inserted"] == true {
            slots.push(v["slot"].as_i64().unwrap());
        } else {
            assert_eq!(v["reason"], "duplicate");
            dupes += 1;
        }
    }
    slots.sort();
    assert_eq!(slots, (1..=10).collect::<Vec<_>>());
    assert_eq!(dupes, 2);
}

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
                    &std::fs::read(dir.join("manifest.json")).expect("complete: manifest present"),
                )
                .unwrap();
                revisions.insert(m["revision"].as_i64().unwrap());
                for f in m["files"].as_array().unwrap() {
                    let path = f["path"].as_str().unwrap();
                    let bytes = std::fs::read(dir.join(path))
                        .unwrap_or_else(|e| panic!("{path} in {dir:?}: {e}"));
                    assert_eq!(
                        fencepost::content::sha256_hex(&bytes),
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
