//! The ledger in the bucket: stateless runners — fresh checkouts with no `.fencepost/` —
//! publish, build and deploy against one S3 server (moto, over HTTP) that holds both the
//! ledger's log and the site, with no other server. Every runner is a separate OS process.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]
use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;

const LEDGER: &str = "s3://site/ledger";
const SITE: &str = "s3://site/www";

/// A repository as CI checks it out, and the S3 server its runners share.
struct Ci {
    repo: TestSite,
    /// Kept for the test's length (dropped, it stops the server).
    _moto: Moto,
    env: Vec<(String, String)>,
}

impl Ci {
    fn new() -> Ci {
        let moto = Moto::start();
        moto.bucket("site");
        let mut env = Moto::env(&moto.endpoint);
        env.push(("FENCEPOST_LEDGER".into(), LEDGER.into()));
        let repo = TestSite::new();
        let toml = std::fs::read_to_string(repo.path("fencepost.toml")).unwrap();
        repo.write(
            "fencepost.toml",
            &format!("{toml}\n[serve]\npointer_ttl_ms = 0\n"),
        );
        Ci {
            repo,
            _moto: moto,
            env,
        }
    }

    /// What CI runs: `publish --build && deploy --to s3://…`, in one fresh checkout.
    fn publish_and_deploy(&self, now: &str) -> (Value, Value) {
        let checkout = self.repo.checkout();
        let published = checkout.json_env(&["publish", "--build", "--now", now], &self.env);
        let deployed = checkout.json_env(&["deploy", "--to", SITE, "--now", now], &self.env);
        (published, deployed)
    }

    /// `fencepost ARGS --json` in a fresh checkout (a runner that only looks).
    fn look(&self, args: &[&str]) -> Value {
        self.repo.checkout().json_env(args, &self.env)
    }

    fn revision(&self) -> i64 {
        self.look(&["status"])["revision"].as_i64().unwrap()
    }

    /// How many audit entries say `action`.
    fn audited(&self, action: &str) -> usize {
        let log = self.look(&["log", "--limit", "100000"]);
        let entries = log["entries"].as_array().unwrap();
        entries.iter().filter(|e| e["action"] == action).count()
    }

    fn verify(&self) {
        let v = self.look(&["verify"]);
        assert_eq!(v["intact"], true, "{v}");
    }

    /// The item ids the bucket's site serves (through `serve --from`), out of `ids`.
    fn served(&self, ids: &[i64]) -> BTreeSet<i64> {
        let server = self.repo.serve_env(&["--from", SITE], &self.env);
        ids.iter()
            .copied()
            .filter(|id| server.get(&format!("/answers/{id}/")).status == 200)
            .collect()
    }
}

fn round_now(r: i64) -> String {
    format!("2026-12-{:02}T00:10:00Z", r + 1)
}

/// Four fresh runners race `publish --build && deploy` for ten rounds; each round makes two
/// items due (one written this round, one embargoed since the last). After every round: each
/// item published exactly once, one revision per publication, the audit chain intact, and
/// the bucket serves exactly the items that are due.
#[test]
fn four_fresh_runners_race_publish_and_deploy_for_ten_rounds_exactly_once() {
    let ci = Ci::new();
    let mut published: Vec<i64> = Vec::new();
    let mut written: Vec<i64> = Vec::new();
    for r in 1..=10i64 {
        // Due now (played yesterday), and one embargoed until the next round.
        ci.repo.item(2 * r - 1, &format!("2026-12-{r:02}"));
        ci.repo.item(2 * r, &format!("2026-12-{:02}", r + 1));
        written.extend([2 * r - 1, 2 * r]);
        let now = round_now(r);
        let runs: Vec<(Value, Value)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| ci.publish_and_deploy(&now)))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (p, d) in &runs {
            let outcome = d["outcome"].as_str().unwrap_or("");
            assert!(
                [
                    "deployed",
                    "already_deployed",
                    "superseded",
                    "skipped_locked"
                ]
                .contains(&outcome),
                "round {r}: {d}"
            );
            for id in ids(p, "published") {
                assert!(
                    !published.contains(&id),
                    "round {r}: {id} published twice: {runs:#?}"
                );
                published.push(id);
            }
        }
        let due: BTreeSet<i64> = (1..=2 * r - 1).collect();
        assert_eq!(published.len(), due.len(), "round {r}: {runs:#?}");
        assert_eq!(
            ci.revision(),
            due.len() as i64,
            "round {r}: one revision per publication"
        );
        assert_eq!(ci.audited("publish"), due.len(), "round {r}");
        ci.verify();
        assert_eq!(
            ci.served(&written),
            due,
            "round {r}: the bucket serves exactly the due items"
        );
    }
}

/// A runner killed (SIGKILL's exit, at a fail point) at every log commit of a publish — just
/// before its entry is written, and just after, before its replica knows — and at a snapshot:
/// the next fresh runner finishes the work, nothing lost and nothing twice.
#[cfg(feature = "failpoints")]
#[test]
fn a_runner_killed_at_any_commit_step_is_finished_by_the_next_nothing_lost_or_twice() {
    let ci = Ci::new();
    for id in 1..=3 {
        ci.repo.item(id, &format!("2026-11-0{id}"));
    }
    ci.repo.item(4, "2026-12-20");
    let now = round_now(1);
    let later = "2026-12-02T00:11:01Z";
    let mut killed = 0;
    for point in [
        "ledger.bucket.before_log_entry",
        "ledger.bucket.after_log_entry",
        "ledger.bucket.before_snapshot",
    ] {
        for k in 0..40 {
            let prefix = format!("s3://site/kill-{}-{k}", point.rsplit('.').next().unwrap());
            let mut env = ci.env.clone();
            env.retain(|(key, _)| key != "FENCEPOST_LEDGER");
            env.push(("FENCEPOST_LEDGER".into(), prefix));
            env.push(("FENCEPOST_LEDGER_SNAPSHOT_EVERY".into(), "2".into()));
            let first = ci.repo.checkout();
            let out = first
                .cmd(&[
                    "publish",
                    "--build",
                    "--json",
                    "--lease-secs",
                    "60",
                    "--now",
                    &now,
                ])
                .envs(env.iter().map(|(k, v)| (k, v)))
                .env("FAILPOINTS", format!("{point}={k}*off->return"))
                .output()
                .unwrap();
            if out.status.success() {
                assert!(k > 0, "{point} was never reached");
                break;
            }
            assert_eq!(
                out.status.code(),
                Some(137),
                "{point} #{k}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            killed += 1;
            let next = ci.repo.checkout();
            // After the killed runner's leases ran out.
            let r = next.json_env(&["publish", "--build", "--now", later], &env);
            let look = |args: &[&str]| ci.repo.checkout().json_env(args, &env);
            let status = look(&["status"]);
            assert_eq!(status["revision"], 3, "{point} #{k}: {status} {r}");
            let log = look(&["log", "--limit", "1000"]);
            let publishes: Vec<&Value> = log["entries"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["action"] == "publish")
                .collect();
            assert_eq!(publishes.len(), 3, "{point} #{k}: each item once: {log}");
            assert_eq!(look(&["verify"])["intact"], true);
        }
    }
    assert!(killed >= 10, "only {killed} kills");
}

/// A runner stalled inside its commit, past its lease: another runner takes the item over and
/// publishes it; when the stalled one wakes, the store refuses its entry (the next one is
/// taken), it runs its transaction again on the new state, and its lease guard says lost.
#[cfg(feature = "failpoints")]
#[test]
fn a_runner_stalled_past_its_lease_has_its_late_commit_refused_by_the_store() {
    let ci = Ci::new();
    ci.repo.item(1, "2026-11-01");
    let t0 = "2026-12-01T00:00:00Z";
    let (stalled, child) = {
        let checkout = ci.repo.checkout();
        let log = checkout.path(".fp.log");
        let mut c = fencepost();
        c.arg("--site").arg(checkout.root());
        c.args(["publish", "--json", "--lease-secs", "60", "--now", t0]);
        c.envs(ci.env.iter().map(|(k, v)| (k, v)));
        c.env("FAILPOINTS", "publish.commit.after_page=sleep(4000)")
            .env("FENCEPOST_FAILPOINT_LOG", &log)
            .env("FENCEPOST_LOG", "fencepost=debug");
        let child = c
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        wait_for("the first runner to stall in its commit", || {
            std::fs::read_to_string(&log).is_ok_and(|t| t.contains("publish.commit.after_page"))
        });
        (checkout, child)
    };
    // Another runner, after the stalled one's lease ran out, takes over and publishes.
    let b = ci.repo.checkout();
    let r = b.json_env(&["publish", "--now", "2026-12-01T00:01:01Z"], &ci.env);
    assert_eq!(ids(&r, "published"), vec![1], "{r}");
    let out = child.wait_with_output().unwrap();
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(ids(&a, "lease_lost"), vec![1], "{a}\n{stderr}");
    assert!(ids(&a, "published").is_empty(), "{a}");
    assert!(
        stderr.contains("another writer took the next log entry"),
        "the store refused the stale entry: {stderr}"
    );
    drop(stalled);
    assert_eq!(ci.revision(), 1);
    assert_eq!(ci.audited("publish"), 1);
    ci.verify();
}

/// After 1,000 commits a fresh runner reads one snapshot and a tail shorter than the snapshot
/// interval, not the history; the store keeps two snapshots, not ten.
#[test]
fn after_a_thousand_commits_a_fresh_runner_reads_one_snapshot_and_a_short_tail() {
    use fencepost_ledger::{Ledger, Location};
    let s = TestSite::new();
    let url = format!("file://{}", s.path(".bucket/ledger").display());
    let location = Location::parse(&url, s.root()).unwrap();
    let mut l = Ledger::open_at(&location, std::time::Duration::from_secs(10)).unwrap();
    for i in 0..1000 {
        l.execute_unchecked(&format!(
            "INSERT INTO job_leases (key, owner_id, fence, expires_at, updated_at) VALUES ('k{i}', 'o', 1, 9999999999999, 0)"
        ))
        .unwrap();
    }
    drop(l);
    let snapshots = std::fs::read_dir(s.path(".bucket/ledger/snapshots"))
        .unwrap()
        .count();
    assert_eq!(snapshots, 2, "older snapshots are pruned");
    s.set_ledger_url(&url);
    let fresh = s.checkout();
    let out = fresh
        .cmd(&["status", "--json"])
        .env("FENCEPOST_LOG", "fencepost=debug")
        .output()
        .unwrap();
    assert_success(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let read_snapshots = stderr.matches("read a snapshot of the log").count();
    assert_eq!(read_snapshots, 1, "{stderr}");
    let entries: usize = stderr
        .lines()
        .filter(|l| l.contains("read log entries"))
        .map(|l| {
            let n = l.split("entries=").nth(1).unwrap();
            n.split_whitespace()
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert!(entries < 100, "a tail of {entries} entries: {stderr}");
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["leases"], 1000, "{status}");
}

/// `init --ci s3://…` makes a site whose ledger lives in the bucket beside its output, with a
/// workflow that needs no database service; two fresh checkouts of it publish and deploy at
/// once, and the item is published once and served.
#[test]
fn init_ci_sets_a_site_up_for_stateless_runners() {
    let ci = Ci::new();
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let out = fencepost()
        .args([
            "init",
            "--json",
            "--now",
            "2026-12-01T00:00:00Z",
            "--ci",
            "s3://site/ci",
        ])
        .arg(&site)
        .output()
        .unwrap();
    assert_success(&out);
    let toml = std::fs::read_to_string(site.join("fencepost.toml")).unwrap();
    assert!(toml.contains("url = \"s3://site/ci/ledger\""), "{toml}");
    assert!(toml.contains("to = \"s3://site/ci/www\""), "{toml}");
    let workflow = std::fs::read_to_string(site.join(".github/workflows/publish.yml")).unwrap();
    assert!(
        !workflow.contains("services:") && !workflow.contains("concurrency:"),
        "{workflow}"
    );
    // The target is fencepost.toml's deploy.to (above), named nowhere else.
    assert!(
        workflow.contains("fencepost deploy --json") && !workflow.contains("s3://site"),
        "{workflow}"
    );
    let mut env = ci.env.clone();
    env.retain(|(k, _)| k != "FENCEPOST_LEDGER");
    let repo = site.clone();
    let runs: Vec<Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (repo, env) = (&repo, &env);
                s.spawn(move || {
                    let checkout = tempfile::tempdir().unwrap();
                    copy_tree(repo, checkout.path());
                    let run = |args: &[&str]| {
                        let out = fencepost()
                            .arg("--site")
                            .arg(checkout.path())
                            .args(args)
                            .args(["--json", "--now", "2026-12-01T12:00:00Z"])
                            .envs(env.iter().map(|(k, v)| (k, v)))
                            .output()
                            .unwrap();
                        assert_success(&out);
                        serde_json::from_slice::<Value>(&out.stdout).unwrap()
                    };
                    let p = run(&["publish", "--build"]);
                    run(&["deploy"]);
                    p
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let published: Vec<i64> = runs.iter().flat_map(|r| ids(r, "published")).collect();
    assert_eq!(published, vec![1], "{runs:#?}");
    let served = ci.repo.serve_env(&["--from", "s3://site/ci/www"], &ci.env);
    assert_eq!(served.get("/answers/1/").status, 200);
}

/// `deploy` creates no ledger: a bucket ledger whose log has not begun (a typo in the URL, a
/// wrong prefix) is refused, and nothing is written there.
#[test]
fn deploy_and_copy_refuse_a_bucket_ledger_that_does_not_exist_and_create_nothing() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    let ledger = s.path(".bucket/typo");
    s.set_ledger_url(&format!("file://{}", ledger.display()));
    let target = format!("file://{}", s.path(".bucket/www").display());
    let err = s.failing(&["deploy", "--to", &target, "--now", NOW]);
    assert!(
        err.contains("does not exist") && err.contains("creates no ledger"),
        "{err}"
    );
    // Nor does copying from it.
    let from = format!("file://{}", ledger.display());
    let to = format!("file://{}", s.path(".bucket/copy").display());
    let err = s.failing(&["ledger", "copy", "--from", &from, "--to", &to]);
    assert!(err.contains("there is no ledger at"), "{err}");
    assert!(!s.path(".bucket/copy").exists());
    let written: Vec<_> = walkdir::WalkDir::new(&ledger)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .collect();
    assert!(written.is_empty(), "{written:?}");
}

/// A bucket that does not exist is named as such, with the way out, by the commands a new
/// user runs first — not as a clock that cannot be read, with S3's XML to dig through; and a
/// deploy to a missing bucket names `deploy.to`.
#[test]
fn a_bucket_that_does_not_exist_is_named_with_the_way_out() {
    let moto = Moto::start();
    moto.bucket("site");
    let mut env = Moto::env(&moto.endpoint);
    env.push(("FENCEPOST_LEDGER".into(), "s3://fp-ci/ledger".into()));
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    for args in [&["publish", "--build"][..], &["status"][..]] {
        let out = s.cmd(args).envs(env.clone()).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("bucket fp-ci does not exist (create it, or check ledger.url"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("<Code>") && !err.contains("clock"),
            "{args:?}: {err}"
        );
    }
    env.pop();
    s.publish(NOW);
    s.build(&[]);
    let out = s
        .cmd(&["deploy", "--to", "s3://nowhere/www", "--now", NOW])
        .envs(env)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bucket nowhere does not exist (create it, or check deploy.to)"),
        "{err}"
    );
}

/// The log entries one `publish` appends, in bytes: what a runner writes to the bucket.
fn publish_writes(s: &TestSite, now: &str) -> u64 {
    let log = s.path(".bucket/ledger/log");
    let sizes = || -> std::collections::BTreeMap<String, u64> {
        std::fs::read_dir(&log)
            .unwrap()
            .map(|e| e.unwrap())
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, e.metadata().unwrap().len())
            })
            .collect()
    };
    let before = sizes();
    s.checkout().publish(now);
    let after = sizes();
    after
        .iter()
        .filter(|(name, _)| !before.contains_key(*name))
        .map(|(_, len)| len)
        .sum()
}

/// A fresh runner publishing one new item writes as many bytes to the log on a site of 400
/// items as on one of 40: its commit holds what changed, not every row the runner re-read.
#[test]
fn a_fresh_runners_one_item_publish_writes_the_same_bytes_whatever_the_sites_size() {
    let written = |n: i64| {
        let s = TestSite::new();
        s.set_ledger_url(&format!("file://{}", s.path(".bucket/ledger").display()));
        for id in 1..=n {
            s.item(id, "2026-11-01");
        }
        s.checkout().publish(NOW);
        s.item(n + 1, "2026-11-01");
        publish_writes(&s, NOW)
    };
    let small = written(40);
    let large = written(400);
    assert!(
        large < small + small / 4,
        "a one-item publish wrote {small} bytes at 40 items and {large} at 400"
    );
}

/// Issue 77.6: a snapshot is trusted for its tables, not only its bytes. A runner whose cache
/// was edited outside fencepost (a page's body changed in its SQLite file) writes the next
/// snapshot from it: the log's record vouches for those bytes, and a fresh runner reading it
/// builds the edited page — but the record also names the digest of the tables it holds, and
/// `verify` replays the log to the snapshot's position and finds them different, naming the
/// snapshot; on the edited runner it names its cache too. (Verify said intact.)
#[test]
fn a_snapshot_of_an_edited_cache_is_named_by_verify() {
    let s = TestSite::on(Backend::Bucket);
    let env = vec![(
        "FENCEPOST_LEDGER_SNAPSHOT_EVERY".to_string(),
        "3".to_string(),
    )];
    s.item(1, "2026-11-01");
    s.json_env(&["publish", "--build", "--now", NOW], &env);
    {
        let c = rusqlite::Connection::open(s.replica_file()).unwrap();
        let n = c
            .execute(
                "UPDATE page_bodies SET body_html = 'EDITED OUTSIDE FENCEPOST'",
                [],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    for id in 2..=5 {
        s.item(id, &format!("2026-11-0{id}"));
        s.json_env(&["publish", "--now", NOW], &env);
    }
    let snapshots: Vec<_> = std::fs::read_dir(s.path(".bucket/ledger/snapshots"))
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    assert!(!snapshots.is_empty(), "a snapshot was taken");
    let fresh = s.checkout();
    fresh.json_env(&["build", "--now", NOW], &env);
    assert!(
        fresh
            .current_file("answers/1/index.html")
            .contains("EDITED OUTSIDE FENCEPOST"),
        "the fresh runner read the edited snapshot (what verify must catch)"
    );
    for (who, site) in [("a fresh runner", &s.checkout()), ("the edited runner", &s)] {
        let out = site
            .cmd(&["verify", "--json"])
            .envs(env.clone())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{who}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["intact"], false, "{who}: {v}");
        let problems = v["log"]["problems"].to_string();
        assert!(problems.contains("vouches for tables"), "{who}: {v}");
        if who == "the edited runner" {
            assert!(problems.contains("holds tables the log"), "{who}: {v}");
        }
    }
}
