//! Several OS processes over one site: readers and writers of its output. (The ledger's own
//! races, on both engines, are in `ledger_contract.rs`.)
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
