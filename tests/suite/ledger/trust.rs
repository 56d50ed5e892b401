//! The ledger in a bucket trusts nothing it did not check (issue 46): its site, its log, its
//! snapshots, its cache, the store's answers and each runner's clock. Every test drives the
//! real binary against moto over HTTP (S3), as fresh or cached CI runners, and changes the
//! bucket behind fencepost's back with a client of its own.
use crate::common::*;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::Value;

const LEDGER: &str = "s3://site/ledger";

/// One repository, the S3 server its runners share (directly, or through a proxy), and a
/// client of the bucket for the test's own reads and writes.
struct Bucket {
    repo: TestSite,
    moto: Moto,
    env: Vec<(String, String)>,
}

impl Bucket {
    fn new() -> Bucket {
        let moto = Moto::start();
        moto.bucket("site");
        let env = Bucket::env_for(&moto.endpoint);
        Bucket {
            repo: TestSite::new(),
            moto,
            env,
        }
    }

    fn env_for(endpoint: &str) -> Vec<(String, String)> {
        let mut env = Moto::env(endpoint);
        env.push(("FENCEPOST_LEDGER".into(), LEDGER.into()));
        env
    }

    /// `fencepost ARGS` in `site` with this bucket's environment: (exit code, JSON, stderr).
    fn run(&self, site: &TestSite, args: &[&str]) -> (Option<i32>, Value, String) {
        run_env(site, args, &self.env)
    }

    /// The keys under `ledger/` (relative to it), sorted.
    fn keys(&self, under: &str) -> Vec<String> {
        let store = self.moto.store("site");
        let prefix = object_store::path::Path::from(format!("ledger/{under}"));
        let mut keys: Vec<String> = rt()
            .block_on(async {
                use futures_util::TryStreamExt;
                store.list(Some(&prefix)).try_collect::<Vec<_>>().await
            })
            .unwrap()
            .into_iter()
            .map(|m| {
                m.location
                    .as_ref()
                    .trim_start_matches("ledger/")
                    .to_string()
            })
            .collect();
        keys.sort();
        keys
    }

    fn get(&self, rel: &str) -> Vec<u8> {
        let store = self.moto.store("site");
        let key = object_store::path::Path::from(format!("ledger/{rel}"));
        rt().block_on(async { store.get(&key).await.unwrap().bytes().await.unwrap() })
            .to_vec()
    }

    fn put(&self, rel: &str, bytes: Vec<u8>) {
        let store = self.moto.store("site");
        let key = object_store::path::Path::from(format!("ledger/{rel}"));
        rt().block_on(store.put(&key, PutPayload::from(bytes)))
            .unwrap();
    }

    fn delete(&self, rel: &str) {
        let store = self.moto.store("site");
        let key = object_store::path::Path::from(format!("ledger/{rel}"));
        rt().block_on(store.delete(&key)).unwrap();
    }

    /// A fresh checkout publishes one item per instant: items `ids`, each due at its day.
    fn publish_each(&self, ids: std::ops::RangeInclusive<i64>) {
        for id in ids {
            self.repo.item(id, &format!("2026-11-{id:02}"));
            let (code, v, err) = self.run(
                &self.repo.checkout(),
                &[
                    "publish",
                    "--now",
                    &format!("2026-11-{:02}T00:11:00Z", id + 1),
                ],
            );
            assert_eq!(code, Some(0), "{v} {err}");
            assert_eq!(ids_of(&v, "published"), vec![id], "{v}");
        }
    }

    fn status(&self) -> Value {
        let (code, v, err) = self.run(&self.repo.checkout(), &["status"]);
        assert_eq!(code, Some(0), "{v} {err}");
        v
    }
}

/// `fencepost ARGS --json` in `site` with `env`: (exit code, stdout JSON, stderr).
fn run_env(
    site: &TestSite,
    args: &[&str],
    env: &[(String, String)],
) -> (Option<i32>, Value, String) {
    let mut c = site.cmd(args);
    c.arg("--json");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ids_of(v: &Value, key: &str) -> Vec<i64> {
    v[key]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

fn message(v: &Value) -> String {
    v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn entry_key(seq: i64) -> String {
    format!("log/{seq:020}")
}

/// 46.1: a second site pointed at the first's bucket ledger (an organisation-wide
/// `FENCEPOST_LEDGER`, a copied workflow) is refused before it writes anything, naming both;
/// a clone of the first site's repository is the same site and works. (It used to publish its
/// items into the first site's ledger, and its next run withdrew all of the first's.)
#[test]
fn a_second_site_on_a_bucket_ledger_is_refused_before_it_writes_and_a_clone_works() {
    let b = Bucket::new();
    b.publish_each(1..=2);
    let theirs = b.repo.site_id().unwrap();
    let other = TestSite::new();
    other.item(7, "2026-11-07");
    let ours = other.site_id().unwrap();
    let before = b.keys("log/");
    for args in [
        &["publish", "--build", "--now", "2026-12-01T00:00:00Z"][..],
        &["status"][..],
        &["build", "--now", "2026-12-01T00:00:00Z"][..],
    ] {
        let (code, v, _) = b.run(&other, args);
        assert_eq!(code, Some(1), "{args:?}: {v}");
        let m = message(&v);
        assert!(
            m.contains(&theirs) && m.contains(&ours) && m.contains("belongs to site"),
            "{args:?}: {m}"
        );
        assert!(m.contains("Nothing was written"), "{m}");
    }
    assert_eq!(b.keys("log/"), before, "the other site wrote nothing");
    assert!(!other.path("public/current").exists(), "and built nothing");
    // A site with no id (made before ids) is refused too, told the line to add.
    other.set_site_id(None);
    let (code, v, _) = b.run(&other, &["publish", "--now", "2026-12-01T00:00:00Z"]);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        message(&v).contains(&format!("site_id = \"{theirs}\"")),
        "{v}"
    );
    assert_eq!(b.keys("log/"), before);
    // A fresh clone of the first site is that site.
    let (code, v, err) = b.run(
        &b.repo.checkout(),
        &["publish", "--build", "--now", "2026-12-01T00:00:00Z"],
    );
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(b.status()["revision"], 2);
}

/// 46.2: an entry missing in the middle of the log (deleted, a lifecycle rule, a partial
/// restore) is refused by name, never skipped; `verify` from a runner whose cache needs no
/// catch-up still replays the whole log and says it is broken. (A fresh runner used to skip
/// it silently, losing what it decided and renumbering the audit history; verify said intact.)
#[test]
fn a_hole_in_the_log_is_refused_by_name_and_verify_finds_it() {
    let b = Bucket::new();
    b.publish_each(1..=4);
    let cached = b.repo.checkout();
    let (code, v, err) = b.run(&cached, &["verify"]);
    assert_eq!(
        (code, v["intact"].clone()),
        (Some(0), Value::Bool(true)),
        "{v} {err}"
    );
    assert!(v["log"]["entries"].as_i64().unwrap() >= 5, "{v}");
    let entries = b.keys("log/");
    let middle = entries.len() as i64 / 2;
    b.delete(&entry_key(middle));
    let before = b.keys("");
    let (code, v, _) = b.run(
        &b.repo.checkout(),
        &["publish", "--now", "2026-12-01T00:00:00Z"],
    );
    assert_eq!(code, Some(1), "{v}");
    let m = message(&v);
    assert!(
        m.contains(&format!(
            "log entry {middle} is missing from s3://site/ledger/{}",
            entry_key(middle)
        )),
        "{m}"
    );
    assert!(!m.contains("delete the cache"), "{m}");
    assert_eq!(b.keys(""), before, "nothing was written");
    // The runner whose cache is at the tip lists nothing new, but verify replays it all.
    let (code, v, _) = b.run(&cached, &["verify"]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["intact"], false, "{v}");
    assert!(
        v["log"]["problems"][0]
            .as_str()
            .unwrap()
            .contains(&format!("log entry {middle} is missing")),
        "{v}"
    );
}

/// 46.3: a runner whose clock is 6 h fast (libfaketime) refuses to decide anything on a bucket
/// ledger, naming its offset against the store's clock; given a tolerance of a day it decides
/// by the store's clock, so an item due in 5 h stays embargoed and the audit time is the
/// store's. (It used to publish the item 5 h early and date the audit 6 h ahead.) `verify`
/// names audit times that go backwards.
/// The audit time of the publication is the store's, not the runner's.
fn the_audit_time_is_the_stores(b: &Bucket) {
    let (_, log, _) = b.run(&b.repo.checkout(), &["log", "--limit", "10"]);
    let at = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "publish")
        .unwrap()["at"]
        .as_str()
        .unwrap()
        .to_string();
    let at = chrono::DateTime::parse_from_rfc3339(&at).unwrap();
    let off = (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
        .num_seconds()
        .abs();
    assert!(
        off < 120,
        "the audit time is the store's, not the runner's: {at}"
    );
}

/// A hand-given --now that goes back is named by verify, whose chain still holds.
fn verify_names_audit_times_that_go_back(b: &Bucket) {
    let (code, v, err) = b.run(
        &b.repo.checkout(),
        &["publish", "--now", "2026-11-20T00:00:00Z"],
    );
    assert_eq!(code, Some(0), "{v} {err}");
    b.repo.item(3, "2026-11-10");
    let (code, _, _) = b.run(
        &b.repo.checkout(),
        &["publish", "--now", "2026-11-20T00:00:00Z"],
    );
    assert_eq!(code, Some(0));
    let (code, v, _) = b.run(&b.repo.checkout(), &["verify"]);
    assert_eq!(code, Some(0), "{v}");
    assert!(
        !v["times_backwards"].as_array().unwrap().is_empty(),
        "an audit entry dated before the one it follows: {v}"
    );
}

#[test]
fn a_runner_whose_clock_is_hours_fast_decides_nothing_early() {
    let b = Bucket::new();
    let now = chrono::Utc::now();
    let rfc =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    b.repo.item(1, "2026-11-01");
    b.repo.item_with(
        2,
        "2026-11-02",
        &format!("publish_at = {}\n", rfc(now + chrono::Duration::hours(5))),
        "Embargoed for five hours.",
    );
    let fast: Vec<(String, String)> = b
        .env
        .iter()
        .cloned()
        .chain([
            ("LD_PRELOAD".into(), libfaketime().display().to_string()),
            ("FAKETIME".into(), "+6h".into()),
            ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
        ])
        .collect();
    let runner = b.repo.checkout();
    let (code, v, _) = run_env(&runner, &["publish", "--build"], &fast);
    assert_eq!(code, Some(1), "{v}");
    let m = message(&v);
    // The middle of what the store's one-second stamps allow: 6 h, give or take a second.
    assert!(
        (m.contains("6 h 0 min") || m.contains("5 h 59 min"))
            && m.contains("fast")
            && m.contains("ledger.clock_tolerance_ms"),
        "{m}"
    );
    assert!(
        b.keys("log/").is_empty(),
        "nothing decided, nothing written"
    );
    // With a tolerance of a day the fast runner decides, by the store's clock.
    let cfg = std::fs::read_to_string(runner.path("fencepost.toml")).unwrap();
    runner.write(
        "fencepost.toml",
        &cfg.replace("[ledger]\n", "[ledger]\nclock_tolerance_ms = 86400000\n"),
    );
    let (code, v, err) = run_env(&runner, &["publish", "--build"], &fast);
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(
        ids_of(&v, "published"),
        vec![1],
        "item 2 is not due by the store's clock: {v}"
    );
    the_audit_time_is_the_stores(&b);
    // An honest runner agrees.
    let (code, v, err) = b.run(&b.repo.checkout(), &["publish"]);
    assert_eq!(code, Some(0), "{v} {err}");
    assert!(ids_of(&v, "published").is_empty(), "{v}");
    verify_names_audit_times_that_go_back(&b);
}

/// 46.4: a truncated or zeroed snapshot costs a fresh runner time, never the site: it falls
/// back to the older snapshot, or to the log from its first entry, naming the damaged object.
/// A damaged entry is refused naming the object in the bucket, never blaming the cache.
#[test]
fn damage_to_a_snapshot_costs_time_and_a_damaged_entry_is_named() {
    let mut b = Bucket::new();
    b.env
        .push(("FENCEPOST_LEDGER_SNAPSHOT_EVERY".into(), "3".into()));
    b.publish_each(1..=9);
    let revision = b.status()["revision"].clone();
    let snapshots = b.keys("snapshots/");
    assert_eq!(snapshots.len(), 2, "{snapshots:?}");
    let (older, newest) = (snapshots[0].clone(), snapshots[1].clone());
    // Truncated: the older one is used.
    let bytes = b.get(&newest);
    b.put(&newest, bytes[..bytes.len() / 2].to_vec());
    let (code, v, err) = b.run(&b.repo.checkout(), &["status"]);
    assert_eq!(
        (code, v["revision"].clone()),
        (Some(0), revision.clone()),
        "{v} {err}"
    );
    assert!(
        err.contains(&format!("s3://site/ledger/{newest} not used")),
        "{err}"
    );
    // Both zeroed: the log from its first entry.
    b.put(&newest, vec![0; bytes.len()]);
    let old = b.get(&older);
    b.put(&older, vec![0; old.len()]);
    let (code, v, err) = b.run(
        &b.repo.checkout(),
        &["publish", "--build", "--now", "2026-12-01T00:00:00Z"],
    );
    assert_eq!(code, Some(0), "{v} {err}");
    assert!(err.contains(&older) && err.contains(&newest), "{err}");
    assert_eq!(b.status()["revision"], revision);
    // A damaged entry: refused by name; a decided transaction, restored from the bucket.
    b.put(&entry_key(4), b"{\"not\": \"an entry\"".to_vec());
    let snapshots = b.keys("snapshots/");
    for s in &snapshots {
        b.delete(s);
    }
    let (code, v, _) = b.run(&b.repo.checkout(), &["status"]);
    assert_eq!(code, Some(1), "{v}");
    let m = message(&v);
    assert!(
        m.contains(&format!(
            "log entry 4 (s3://site/ledger/{}) is damaged",
            entry_key(4)
        )) && m.contains("decided transaction")
            && m.contains("cache is not at fault"),
        "{m}"
    );
}

/// 46.5: a replica edited outside fencepost and uploaded as the newest snapshot is not what
/// the log recorded for it: fresh runners pass it over (and read the true state), and `verify`
/// names it. (Every fresh runner used to build from it — split brain — and verify said intact.)
#[test]
fn a_snapshot_the_log_does_not_vouch_for_is_passed_over_and_named_by_verify() {
    let mut b = Bucket::new();
    b.env
        .push(("FENCEPOST_LEDGER_SNAPSHOT_EVERY".into(), "3".into()));
    b.publish_each(1..=5);
    let newest = b.keys("snapshots/").pop().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("edited.sqlite");
    std::fs::write(&file, b.get(&newest)).unwrap();
    {
        let c = rusqlite::Connection::open(&file).unwrap();
        c.execute_batch("UPDATE site_state SET publication_revision = 99")
            .unwrap();
    }
    b.put(&newest, std::fs::read(&file).unwrap());
    let (code, v, err) = b.run(&b.repo.checkout(), &["status"]);
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(
        v["revision"], 5,
        "the true state, not the edited snapshot's: {v}"
    );
    assert!(err.contains("does not match what log entry"), "{err}");
    let (code, v, _) = b.run(&b.repo.checkout(), &["verify"]);
    assert_eq!(
        (code, v["intact"].clone()),
        (Some(1), Value::Bool(false)),
        "{v}"
    );
    assert!(v["log"]["problems"].to_string().contains(&newest), "{v}");
}

/// 46.6: a runner whose cache is ahead of the log (the prefix emptied, the bucket recreated, a
/// restore from an older backup) refuses to write into it and says what happened; one whose
/// cache follows another log at this prefix refuses too. (It used to write its next entry into
/// the empty log with exit 0, and every fresh runner was refused from then on.)
#[test]
fn a_cache_never_writes_into_a_log_it_does_not_follow() {
    let b = Bucket::new();
    b.publish_each(1..=2);
    let cached = b.repo.checkout();
    let (code, _, _) = b.run(&cached, &["status"]);
    assert_eq!(code, Some(0));
    for k in b.keys("") {
        b.delete(&k);
    }
    cached.item(3, "2026-11-03");
    let (code, v, _) = b.run(&cached, &["publish", "--now", "2026-12-01T00:00:00Z"]);
    assert_eq!(code, Some(1), "{v}");
    let m = message(&v);
    assert!(
        m.contains("ahead of the log")
            && m.contains("has no entries")
            && m.contains("Nothing was written"),
        "{m}"
    );
    assert!(
        b.keys("log/").is_empty(),
        "nothing was written: {:?}",
        b.keys("")
    );
    // Another ledger started at the prefix, longer than the cache: refused as another log.
    for id in 4..=8 {
        b.repo.item(id, &format!("2026-11-{id:02}"));
        let now = format!("2026-11-{:02}T00:11:00Z", id + 1);
        let (code, v, err) = b.run(&b.repo.checkout(), &["publish", "--now", &now]);
        assert_eq!(code, Some(0), "{v} {err}");
    }
    let (code, v, _) = b.run(&cached, &["publish", "--now", "2026-12-01T00:00:00Z"]);
    assert_eq!(code, Some(1), "{v}");
    assert!(message(&v).contains("not the one the cache follows"), "{v}");
}

/// 46.7: a create that landed but whose answer was lost (a 500 after the write; object_store
/// tries again and hears "already exists") is this runner's own commit, not another writer's:
/// the publish reports the item published, once.
#[test]
fn a_lost_answer_to_a_create_is_a_commit_not_a_lost_race() {
    let moto = Moto::start();
    moto.bucket("site");
    let proxy = Proxy::start(&moto.endpoint, false);
    let repo = TestSite::new();
    repo.item(1, "2026-11-01");
    let env = Bucket::env_for(&proxy.endpoint);
    // The ledger begins (its first entry), then every create of the publish loses its answer.
    let (code, v, err) = run_env(&repo.checkout(), &["status"], &env);
    assert_eq!(code, Some(0), "{v} {err}");
    *proxy.lose_answers.lock().unwrap() = ("/site/ledger/log/".into(), 100);
    let runner = repo.checkout();
    let mut c = runner.cmd(&["publish", "--json", "--now", NOW]);
    c.envs(env.iter().map(|(k, v)| (k, v)))
        .env("FENCEPOST_LOG", "fencepost=debug");
    let out = c.output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{v} {err}");
    assert_eq!(ids_of(&v, "published"), vec![1], "{v}");
    assert!(err.contains("its first answer was lost"), "{err}");
    assert!(
        proxy.lose_answers.lock().unwrap().1 < 100,
        "answers were lost"
    );
    let (_, log, _) = run_env(&repo.checkout(), &["log", "--limit", "100"], &env);
    let publishes = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "publish")
        .count();
    assert_eq!(publishes, 1, "{log}");
}

/// 46.8: a cached runner checks the store's conditional writes in every process: a store
/// that stops honouring If-None-Match is refused before anything is written.
#[test]
fn a_cached_runner_refuses_a_store_that_stopped_honouring_conditional_writes() {
    let moto = Moto::start();
    moto.bucket("site");
    let proxy = Proxy::start(&moto.endpoint, false);
    let repo = TestSite::new();
    repo.item(1, "2026-11-01");
    let env = Bucket::env_for(&proxy.endpoint);
    let runner = repo.checkout();
    let (code, v, err) = run_env(&runner, &["publish", "--now", NOW], &env);
    assert_eq!(code, Some(0), "{v} {err}");
    proxy.strip.store(true, std::sync::atomic::Ordering::SeqCst);
    let puts = proxy.puts().len();
    runner.item(2, "2026-11-02");
    let (code, v, _) = run_env(&runner, &["publish", "--now", NOW], &env);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        message(&v).contains("does not enforce conditional writes"),
        "{v}"
    );
    let log_puts = proxy.puts()[puts..]
        .iter()
        .filter(|p| p.contains("/ledger/log/"))
        .count();
    assert_eq!(log_puts, 0, "no entry was written");
}

/// 46.9: the ledger is never served: a deploy, gc or rollback into a target that holds the
/// ledger is refused, and `serve --from` refuses a ledger's prefix; `init --ci` says plainly
/// that the ledger must not be public.
#[test]
fn no_target_or_origin_ever_holds_or_serves_the_ledger() {
    let b = Bucket::new();
    b.publish_each(1..=1);
    let site = b.repo.checkout();
    let (code, v, err) = b.run(&site, &["publish", "--build", "--now", NOW]);
    assert_eq!(code, Some(0), "{v} {err}");
    for to in ["s3://site", "s3://site/ledger", "s3://site/ledger/www"] {
        let (code, v, _) = b.run(&site, &["deploy", "--to", to, "--now", NOW]);
        assert_eq!(code, Some(1), "{to}: {v}");
        assert!(
            message(&v).contains("would hold the ledger s3://site/ledger"),
            "{v}"
        );
        let (code, v, _) = b.run(&site, &["gc", "--keep", "1", "--to", to, "--now", NOW]);
        assert_eq!(code, Some(1), "{to}: {v}");
    }
    let (code, v, err) = b.run(&site, &["deploy", "--to", "s3://site/www", "--now", NOW]);
    assert_eq!(code, Some(0), "{v} {err}");
    // An origin over the ledger's prefix: refused, from this site and from another folder.
    let (code, v, _) = b.run(&site, &["serve", "--from", "s3://site/ledger"]);
    assert_eq!(code, Some(1), "{v}");
    assert!(message(&v).contains("serves no ledger"), "{v}");
    let elsewhere = TestSite::new();
    let mut env = b.env.clone();
    env.retain(|(k, _)| k != "FENCEPOST_LEDGER");
    let (code, v, _) = run_env(&elsewhere, &["serve", "--from", "s3://site/ledger"], &env);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        message(&v).contains("is a fencepost ledger's prefix"),
        "{v}"
    );
    // init --ci says so.
    let dir = tempfile::tempdir().unwrap();
    let out = fencepost()
        .args(["init", "--json", "--now", NOW, "--ci", "s3://site/ci"])
        .arg(dir.path().join("new"))
        .output()
        .unwrap();
    assert_success(&out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["ledger_private"]
            .as_str()
            .unwrap()
            .contains("must never be public"),
        "{v}"
    );
}
