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
/// before it decides what is due. The item due in 15 s is not due by the database's instant
/// carried by the monotonic clock (issue 77.4), and the page statement would refuse it anyway:
/// it stays pending (not parked), no audit entry names it, and a plain publish at its instant
/// publishes it. (It used to be published ~60 s early.)
#[test]
fn a_host_clock_stepped_mid_publish_publishes_nothing_early_on_postgres() {
    let (v, err, s, due) = a_publish_whose_clock_steps_ahead(Backend::Postgres);
    assert_eq!(ids(&v, "published"), vec![1], "{v} {err}");
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

/// A publish whose host clock libfaketime steps 60 s ahead (after its first 2 s, while a fail
/// point holds it before it decides what is due), with the item due in 15 s: `(published,
/// stderr)` of the run, and the site.
fn a_publish_whose_clock_steps_ahead(
    backend: Backend,
) -> (Value, String, TestSite, chrono::DateTime<Utc>) {
    let s = TestSite::on(backend);
    let due = Utc::now() + Span::seconds(15);
    s.item(1, "2026-11-01");
    s.item_with(
        2,
        "2026-11-02",
        &format!(
            "publish_at = {}\n",
            due.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        "At its instant, by the store's clock.",
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
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(Utc::now() < due, "the test was too slow to mean anything");
    (v, err, s, due)
}

/// Guards: issue 77.4 — on a bucket ledger and on D1, a +60 s host clock step after the
/// clock check decides nothing early: the store's instant, sampled once, is carried by the
/// monotonic clock, which no wall-clock step moves. (Items went live 16 s early.)
#[cfg(feature = "failpoints")]
#[test]
fn a_host_clock_stepped_mid_publish_publishes_nothing_early_on_a_bucket_and_on_d1() {
    for backend in [Backend::Bucket, Backend::D1] {
        let (v, err, s, due) = a_publish_whose_clock_steps_ahead(backend);
        assert_eq!(ids(&v, "published"), vec![1], "{backend:?}: {v} {err}");
        let status = s.json(&["status"]);
        assert_eq!(status["items"]["pending"], 1, "{backend:?}: {status}");
        while Utc::now() < due + Span::milliseconds(200) {
            std::thread::sleep(Duration::from_millis(100));
        }
        let v = s.json(&["publish"]);
        assert_eq!(ids(&v, "published"), vec![2], "{backend:?}: {v}");
    }
}

/// Guards: issue 77.4 — D1's commit batch checks the due instants by its own clock, as it
/// checks the head: a runner deciding by an instant 30 s ahead of it (`--now`, or a clock
/// measured wrong) publishes nothing early; the page is `not_due`, back to pending, and the
/// rest of the batch goes through.
#[test]
fn a_runner_ahead_of_d1s_clock_publishes_nothing_early() {
    let s = TestSite::on(Backend::D1);
    let due = Utc::now() + Span::seconds(15);
    let ahead = (Utc::now() + Span::seconds(30)).to_rfc3339_opts(SecondsFormat::Secs, true);
    s.item(1, "2026-11-01");
    s.item_with(
        2,
        "2026-11-02",
        &format!(
            "publish_at = {}\n",
            due.to_rfc3339_opts(SecondsFormat::Secs, true)
        ),
        "At its instant, by D1's clock.",
    );
    let mut c = s.cmd(&["publish", "--json", "--now", &ahead]);
    c.env_remove("FENCEPOST_ALLOW_FUTURE_NOW");
    let out = c.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(Utc::now() < due, "the test was too slow to mean anything");
    assert_eq!(ids(&v, "not_due"), vec![2], "{v} {err}");
    assert_eq!(ids(&v, "published"), vec![1], "{v} {err}");
    let status = s.json(&["status"]);
    assert_eq!(status["items"]["pending"], 1, "{status}");
    assert_eq!(status["parked"], serde_json::json!([]), "{status}");
}
