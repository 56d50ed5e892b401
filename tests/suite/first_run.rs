//! Racing first runs (issue 12): eight publishers fired at the same instant at a site whose
//! ledger does not exist yet, round after round, with the CPUs kept busy. Every process must
//! exit 0 (a busy ledger is waited for, never called corrupt), the schema is created once, and
//! every item is published once.
use crate::common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
                    std::process::Command::new(bin())
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
