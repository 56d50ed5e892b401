//! On a ledger with a clock of its own (PostgreSQL), the due check is inside the statement
//! that makes a page public: no host clock decides a publication (issue 47.8).
use crate::common::*;
use chrono::{Duration as Span, SecondsFormat, Utc};
use serde_json::Value;
use std::time::Duration;

fn ids(v: &Value, key: &str) -> Vec<i64> {
    v[key]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

/// Guards: issue 47.8 — a host clock stepped inside a publish on PostgreSQL publishes nothing
/// early. `publish` measures the database's clock at its start; libfaketime then steps the
/// process's clock 60 s ahead (after its first 2 s), while a fail point holds the publish
/// before it decides what is due. The item due in 15 s looks due to the host; the page
/// statement, checking `due_at` against the database's own clock, writes nothing: the run
/// reports it `not_due`, the item goes back to pending (not parked, its attempt not
/// counted), no audit entry names it, and a plain publish at its instant publishes it.
/// (It used to be published ~60 s early.)
#[test]
fn a_host_clock_stepped_mid_publish_publishes_nothing_early_on_postgres() {
    let s = TestSite::on(Backend::Postgres);
    let due = Utc::now() + Span::seconds(15);
    s.item(1, "2026-11-01");
    s.item_with(
        2,
        "2026-11-02",
        &format!(
            "publish_at = {}\n",
            due.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        "At its instant, by the database's clock.",
    );
    let env: Vec<(String, String)> = [
        ("LD_PRELOAD", libfaketime().display().to_string()),
        ("FAKETIME", "+60s".into()),
        ("FAKETIME_START_AFTER_SECONDS", "2".into()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".into()),
        ("FAILPOINTS", "publish.after_list=sleep(4000)".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut c = s.cmd(&["publish", "--json"]);
    c.env_remove("FENCEPOST_ALLOW_FUTURE_NOW").envs(env);
    let out = c.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(Utc::now() < due, "the test was too slow to mean anything");
    assert_eq!(ids(&v, "published"), vec![1], "{v} {err}");
    assert_eq!(ids(&v, "not_due"), vec![2], "{v} {err}");
    assert!(err.contains("not by the ledger's"), "{err}");
    let status = s.json(&["status"]);
    assert_eq!(status["items"]["pending"], 1, "{status}");
    assert_eq!(status["items"]["processing"], 0, "{status}");
    assert_eq!(status["parked"], serde_json::json!([]), "{status}");
    let log = s.json(&["log", "--limit", "20"]);
    assert!(log.to_string().contains("answers/1"), "{log}");
    assert!(
        !log.to_string().contains("answers/2"),
        "no audit entry names item 2: {log}"
    );
    // At its instant (by the real clock), a plain publish publishes it.
    while Utc::now() < due + Span::milliseconds(200) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let v = s.json(&["publish"]);
    assert_eq!(ids(&v, "published"), vec![2], "{v}");
}
