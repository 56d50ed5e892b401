//! A target's identity: one bucket under two spellings is one target; one name at two endpoints
//! is two.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;

/// Issue 35.5: one bucket, one name. A deploy under `file:///b` stalls with its new blobs
/// uploaded while `gc --to file:///b/` runs: the two spellings are one target, so gc waits
/// for (or protects) the deploy, and the site stays whole. Under two names gc deleted the
/// blobs the deploy counted on and every origin answered 503.
#[cfg(feature = "failpoints")]
#[test]
fn two_spellings_of_one_target_are_one_target() {
    let (s, _bucket, url) = one_item_and_a_bucket();
    let slashed = format!("{url}/");
    s.json(&["deploy", "--to", &slashed, "--now", NOW]);
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let deploy = Stalled::start(
        &s,
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_blobs=sleep(1500)",
    );
    deploy.wait_until("deploy.after_blobs");
    s.json(&[
        "gc",
        "--to",
        &slashed,
        "--keep",
        "1",
        "--grace-secs",
        "0",
        "--now",
        NOW,
    ]);
    let out = deploy.finish();
    assert_success(&out);
    let ok = s.json(&["verify", "--to", &slashed]);
    assert_eq!(
        (ok["ok"].as_bool(), ok["revision"].as_i64()),
        (Some(true), Some(2)),
        "{ok}"
    );
    serves_every_page(&s, &url);
    // The ledger knows one target, under its canonical name.
    let targets = s.status()["targets"].clone();
    assert_eq!(targets.as_array().map(Vec::len), Some(1), "{targets}");
    assert_eq!(targets[0]["target"], url.as_str(), "{targets}");
}

/// Issue 35.5: the endpoint is part of a target's key. One bucket name and prefix at two S3
/// endpoints (two stores) are two targets: a deploy interrupted after its plan at one leaves
/// its pending operation and lease there, and a deploy at the other plans and finishes its
/// own instead of waiting on that lease or resuming the other store's operation against
/// this one. The interrupted one then resumes its own. `status` keys each by its endpoint.
#[cfg(feature = "failpoints")]
#[test]
fn one_bucket_name_at_two_endpoints_is_two_targets() {
    let (one, two) = (Moto::start(), Moto::start());
    one.bucket("site");
    two.bucket("site");
    let (s, _bucket, _url) = one_item_and_a_bucket();
    s.write("fencepost.toml", "[deploy]\nwait_secs = 1\n");
    let to = ["deploy", "--to", "s3://site/www", "--now", NOW];
    let mut env = Moto::env(&one.endpoint);
    env.push(("FAILPOINTS".into(), "deploy.after_plan=return".into()));
    let (code, _) = run(&s, &to, &env);
    assert_eq!(code, Some(137));
    let pending = s.status()["deploys"].clone();
    let first = pending[0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        pending[0]["target"],
        format!("s3://site/www via {}", one.endpoint).as_str(),
        "{pending}"
    );
    let (code, r) = run(&s, &to, &Moto::env(&two.endpoint));
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["outcome"], "deployed", "{r}");
    assert_eq!(r["target"], "s3://site/www", "reports keep the URL: {r}");
    assert_ne!(r["operation"], first.as_str(), "{r}");
    // At the first endpoint, after the crashed run's lease: its own operation resumes.
    let later = [
        "deploy",
        "--to",
        "s3://site/www",
        "--now",
        "2026-12-01T01:00:00Z",
    ];
    let (code, r) = run(&s, &later, &Moto::env(&one.endpoint));
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["operation"], first.as_str(), "{r}");
    let targets = s.status()["targets"].clone();
    let names: std::collections::BTreeSet<String> = targets
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["target"].as_str().map(str::to_string))
        .collect();
    let want = [&one.endpoint, &two.endpoint].map(|e| format!("s3://site/www via {e}"));
    assert_eq!(names, want.into_iter().collect(), "{targets}");
}

/// Issue 47.9: one bucket, one name, endpoint included. A deploy through
/// `http://127.0.0.1:P` and a `gc --to` through `http://localhost:P/` reach one S3 server:
/// one target, one lease — the gc waits for the stalled deploy instead of running beside it —
/// and the ledger lists it once, under its canonical endpoint.
#[cfg(feature = "failpoints")]
#[test]
fn one_server_under_two_spellings_of_its_endpoint_is_one_target_with_one_lease() {
    let moto = Moto::start();
    moto.bucket("spelt");
    let port = moto.endpoint.rsplit(':').next().unwrap().to_string();
    let ip = Moto::env(&format!("http://127.0.0.1:{port}"));
    let named = Moto::env(&format!("http://LOCALHOST:{port}/"));
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let url = "s3://spelt/www";
    let (code, r) = run(&s, &["deploy", "--to", url, "--now", NOW], &ip);
    assert_eq!(code, Some(0), "{r}");
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let deploy = Stalled::start_env(
        &s,
        &["deploy", "--to", url, "--now", NOW],
        "deploy.after_blobs=sleep(1500)",
        &ip,
    );
    deploy.wait_until("deploy.after_blobs");
    let (code, gc) = run(
        &s,
        &[
            "gc",
            "--to",
            url,
            "--keep",
            "1",
            "--grace-secs",
            "0",
            "--now",
            NOW,
        ],
        &named,
    );
    let out = deploy.finish();
    assert_success(&out);
    assert_eq!(code, Some(0), "{gc}");
    let status = s.json(&["status"]);
    let targets: Vec<&str> = status["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        vec![format!("s3://spelt/www via http://127.0.0.1:{port}").as_str()],
        "{status}"
    );
    let (code, ok) = run(&s, &["verify", "--to", url], &named);
    assert_eq!((code, ok["ok"].as_bool()), (Some(0), Some(true)), "{ok}");
    serves_every_page_env(&s, url, &named);
}
