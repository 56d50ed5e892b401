//! `fencepost verify`: the audit chain against the publication revision and the pages' stamps,
//! tampering and truncation named.
use crate::common::*;

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
