//! Issue 35.7: hosts whose checkouts disagree never flip-flop an item. Two sites, two
//! checkouts, one PostgreSQL ledger, each host named by `FENCEPOST_HOST`: a host that would
//! write back over another host's change what its checkout has had all along parks the item,
//! naming both hosts, until the checkouts agree or a person re-arms it on the host whose
//! file is right. The run-loop version (two `run` processes) is in `run.rs`.
use crate::common::*;
use serde_json::Value;

/// Two checkouts of one site on one shared ledger.
struct Hosts {
    a: TestSite,
    b: TestSite,
}

impl Hosts {
    fn new() -> Hosts {
        let a = TestSite::on(Backend::Postgres);
        let b = TestSite::new();
        b.share_ledger_of(&a);
        Hosts { a, b }
    }

    /// `publish --json` on one host: (exit success, report).
    fn publish(s: &TestSite, host: &str, extra: &[&str]) -> (bool, Value) {
        let out = s
            .cmd(&["publish", "--now", NOW, "--json"])
            .args(extra)
            .env("FENCEPOST_HOST", host)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "publish on {host}: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.success(), v)
    }

    fn a(&self, extra: &[&str]) -> (bool, Value) {
        Hosts::publish(&self.a, "host-a", extra)
    }

    fn b(&self, extra: &[&str]) -> (bool, Value) {
        Hosts::publish(&self.b, "host-b", extra)
    }
}

fn body(text: &str) -> String {
    format!("+++\nid = 1\nday = 2026-11-01\ntitle = \"One\"\nprice = 4.99\n+++\n\n{text}\n")
}

/// Every host's status names both hosts, in JSON and in words, and the way out.
fn every_status_names_both_hosts(h: &Hosts) {
    let st = h.b.status();
    let p = &st["parked"][0];
    assert_eq!(p["disagreement"]["ledger_host"], "host-b", "{st}");
    assert_eq!(p["disagreement"]["other_host"], "host-a", "{st}");
    assert_eq!(p["file"], "content/answers/1.md", "{st}");
    let human = h.b.cmd(&["status", "--now", NOW]).output().unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("item 1 PARKED")
            && human.contains("host host-b has it as")
            && human.contains("host host-a has it as")
            && human.contains("fencepost publish --retry 1"),
        "{human}"
    );
}

#[test]
fn a_stale_checkout_never_writes_back_over_another_hosts_change() {
    let h = Hosts::new();
    h.a.write("content/answers/1.md", &body("first"));
    h.b.write("content/answers/1.md", &body("first"));
    assert!(h.a(&[]).0);
    assert!(h.b(&[]).0, "both checkouts agree: nothing to say");
    assert_eq!(h.a.revision(), 1);

    // B's checkout moves on; A's stays where it was.
    h.b.write("content/answers/1.md", &body("second"));
    let (ok, r) = h.b(&[]);
    assert!(ok, "{r}");
    assert_eq!(r["updated"], serde_json::json!([1]), "{r}");
    assert!(h.a.body("1").contains("second"));

    // A would undo B's change: it parks the item, names both hosts, exits non-zero, and
    // writes nothing — however often it runs.
    for newly in [true, false] {
        let (ok, r) = h.a(&[]);
        assert!(!ok, "a disagreeing checkout turns CI red: {r}");
        let d = &r["disagreed"];
        assert_eq!(d.as_array().map(Vec::len), Some(1), "{r}");
        assert_eq!(d[0]["id"], 1, "{r}");
        assert_eq!(d[0]["ledger_host"], "host-b", "{r}");
        assert_eq!(d[0]["other_host"], "host-a", "{r}");
        assert_ne!(d[0]["ledger_hash"], d[0]["other_hash"], "{r}");
        assert_eq!(d[0]["newly"], newly, "{r}");
        assert_eq!(r["updated"], serde_json::json!([]), "{r}");
    }
    assert_eq!(h.a.revision(), 2, "no flip");
    assert!(h.a.body("1").contains("second"));

    every_status_names_both_hosts(&h);
    // B runs on: nothing published, no complaint of its own (its checkout is what the
    // ledger has).
    let (ok, r) = h.b(&[]);
    assert!(ok, "{r}");
    assert_eq!(r["disagreed"], serde_json::json!([]), "{r}");
    assert_eq!(h.a.revision(), 2);

    // A person decides A's file is right: `--retry` on A writes it, and now B's checkout
    // is the one that disagrees.
    let (ok, r) = h.a(&["--retry", "1"]);
    assert!(ok, "{r}");
    assert_eq!(r["updated"], serde_json::json!([1]), "{r}");
    assert!(h.a.body("1").contains("first"));
    let (ok, r) = h.b(&[]);
    assert!(!ok);
    assert_eq!(r["disagreed"][0]["ledger_host"], "host-a", "{r}");
    assert_eq!(r["disagreed"][0]["other_host"], "host-b", "{r}");
    assert_eq!(h.a.revision(), 3);

    // B's checkout comes round to A's: they agree, the item is released, nothing moves.
    h.b.write("content/answers/1.md", &body("first"));
    let (ok, r) = h.b(&[]);
    assert!(ok, "{r}");
    assert_eq!(r["disagreed"], serde_json::json!([]), "{r}");
    assert_eq!(r["parked"], serde_json::json!([]), "{r}");
    assert_eq!(h.b.status()["parked"], serde_json::json!([]));
    assert!(h.a(&[]).0);
    assert_eq!(h.a.revision(), 3);

    // And a change of a host's own is written as ever, whoever wrote the row before.
    h.a.write("content/answers/1.md", &body("third"));
    let (ok, r) = h.a(&[]);
    assert!(ok, "{r}");
    assert_eq!(r["updated"], serde_json::json!([1]), "{r}");
    assert_eq!(h.a.revision(), 4);
}

#[test]
fn a_checkout_that_lacks_another_hosts_new_file_does_not_withdraw_it() {
    let h = Hosts::new();
    h.a.item(1, "2026-11-01");
    h.b.item(1, "2026-11-01");
    assert!(h.a(&[]).0);
    assert!(h.b(&[]).0);
    // A adds item 2; B's checkout has not got it yet.
    h.a.item(2, "2026-11-02");
    assert_eq!(h.a(&[]).1["published"], serde_json::json!([2]));
    let (ok, r) = h.b(&[]);
    assert!(!ok, "{r}");
    assert_eq!(r["withdrawn"], serde_json::json!([]), "{r}");
    let d = &r["disagreed"][0];
    assert_eq!(d["id"], 2, "{r}");
    assert_eq!(d["ledger_host"], "host-a", "{r}");
    assert_eq!(d["other_host"], "host-b", "{r}");
    assert_eq!(d["other_hash"], Value::Null, "B lacks the file: {r}");
    assert_eq!(h.a.revision(), 2, "item 2 stays public");
    // B pulls it: they agree.
    h.b.item(2, "2026-11-02");
    let (ok, r) = h.b(&[]);
    assert!(ok, "{r}");
    assert_eq!(r["parked"], serde_json::json!([]), "{r}");
    // A file B itself had and removes is withdrawn as ever; A, which still has it,
    // then disagrees rather than publish it again.
    std::fs::remove_file(h.b.path("content/answers/1.md")).unwrap();
    let (ok, r) = h.b(&[]);
    assert!(ok, "{r}");
    assert_eq!(r["withdrawn"], serde_json::json!([1]), "{r}");
    let (ok, r) = h.a(&[]);
    assert!(!ok, "{r}");
    assert_eq!(r["published"], serde_json::json!([]), "{r}");
    assert_eq!(r["disagreed"][0]["ledger_hash"], Value::Null, "{r}");
    assert_eq!(h.a.revision(), 3);
}

#[test]
fn a_host_that_remembers_nothing_trusts_its_checkout() {
    // A stateless CI runner: every run a fresh host with no memory of earlier scans. Its
    // checkout is the commit it was given, so a removal there withdraws the item.
    let h = Hosts::new();
    h.a.item(1, "2026-11-01");
    h.b.item(1, "2026-11-01");
    assert!(h.a(&[]).0);
    std::fs::remove_file(h.b.path("content/answers/1.md")).unwrap();
    let (ok, r) = h.b(&[]);
    assert!(ok, "{r}");
    assert_eq!(r["withdrawn"], serde_json::json!([1]), "{r}");
}
