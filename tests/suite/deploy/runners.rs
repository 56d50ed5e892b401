//! A decided publication always goes live from CI: runners racing on a shared ledger, fresh
//! runners with their own ledger or an empty `public/`, stale checkouts, damage in the bucket
//! repaired on resume.
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]

use crate::common::*;
use fencepost_bucket::remote::Remote;
use serde_json::Value;
use std::path::Path;

/// A second checkout of `s`'s site (content, templates, config; its own `public/`) whose
/// ledger is the same SQLite file, named by its absolute path.
fn checkout_sharing_sqlite(s: &TestSite) -> TestSite {
    let ledger = s.path(".fencepost/ledger.sqlite");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let cfg = cfg.replace(
        "path = \".fencepost/ledger.sqlite\"",
        &format!("path = \"{}\"", ledger.display()),
    );
    assert!(cfg.contains(&ledger.display().to_string()), "{cfg}");
    s.write("fencepost.toml", &cfg);
    checkout_of(s)
}

/// A fresh runner's checkout of `s`'s repository: content, templates, static files and
/// config copied; no `public/`, no ledger of its own unless the config names one.
fn checkout_of(s: &TestSite) -> TestSite {
    let t = TestSite::new();
    for dir in ["content", "templates", "static"] {
        let _ = std::fs::remove_dir_all(t.path(dir));
        copy_dir(&s.path(dir), &t.path(dir));
    }
    std::fs::copy(s.path("fencepost.toml"), t.path("fencepost.toml")).unwrap();
    t
}

fn copy_dir(from: &Path, to: &Path) {
    assert!(std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success());
}

fn audit_count(s: &TestSite, action: &str) -> usize {
    s.audited(action)
}

#[cfg(feature = "failpoints")]
#[test]
fn two_runners_on_one_postgres_ledger_leave_the_bucket_at_the_ledgers_revision_every_round() {
    let moto = Moto::start();
    moto.bucket("race");
    let env = Moto::env(&moto.endpoint);
    let a = TestSite::on(Backend::Postgres);
    let b = TestSite::new();
    b.share_ledger_of(&a);
    let settings = Moto::settings(&moto.endpoint);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let remote = Remote::open_with("s3://race/www", &settings).unwrap();
    for round in 1..=10i64 {
        let day = format!("2026-11-{round:02}");
        a.item(round, &day);
        b.item(round, &day);
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let jobs: Vec<_> = [a.root().to_path_buf(), b.root().to_path_buf()]
            .into_iter()
            .map(|root| {
                let (env, barrier) = (env.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut outs = Vec::new();
                    for (args, failpoints) in [
                        (vec!["publish", "--build"], ""),
                        // Each deploy holds the target a while (a slow link): the window in
                        // which the job that built the older revision holds the lease.
                        (
                            vec!["deploy", "--to", "s3://race/www"],
                            "deploy.after_blobs=sleep(400)",
                        ),
                    ] {
                        let out = fencepost()
                            .arg("--site")
                            .arg(&root)
                            .args(&args)
                            .args(["--json", "--now", NOW])
                            .envs(env.iter().map(|(k, v)| (k, v)))
                            .env("FAILPOINTS", failpoints)
                            .output()
                            .unwrap();
                        assert!(
                            out.status.success(),
                            "{args:?}: {}{}",
                            String::from_utf8_lossy(&out.stdout),
                            String::from_utf8_lossy(&out.stderr)
                        );
                        outs.push(serde_json::from_slice::<Value>(&out.stdout).unwrap());
                    }
                    outs
                })
            })
            .collect();
        let reports: Vec<Vec<Value>> = jobs.into_iter().map(|j| j.join().unwrap()).collect();
        let ledger = a.revision();
        assert_eq!(ledger, round, "one publication per round");
        let live = pointer_of(&remote);
        assert_eq!(
            live["revision"].as_i64(),
            Some(ledger),
            "round {round}: both jobs exited 0 and the bucket is behind the ledger: {reports:#?}"
        );
    }
}

/// Every key under the bucket's folders with its time, and the pointer's bytes.
fn bucket_state(remote: &Remote) -> (Vec<String>, Option<Vec<u8>>) {
    let r = rt();
    let mut keys: Vec<String> = Vec::new();
    for dir in ["objects", "manifests", ".fencepost-probe"] {
        keys.extend(
            r.block_on(remote.list(dir))
                .unwrap()
                .into_iter()
                .map(|(k, t)| format!("{dir}/{k}@{t}")),
        );
    }
    keys.sort();
    (keys, r.block_on(remote.get("current")).unwrap())
}

#[test]
fn a_fresh_runner_with_its_own_ledger_is_refused_and_adopt_takes_the_bucket_over() {
    let moto = Moto::start();
    moto.bucket("own");
    let env = Moto::env(&moto.endpoint);
    let settings = Moto::settings(&moto.endpoint);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let remote = Remote::open_with("s3://own/www", &settings).unwrap();
    let url = "s3://own/www";
    let owner = TestSite::new();
    for i in 1..=3 {
        owner.item(i, &format!("2026-11-0{i}"));
    }
    owner.json(&["publish", "--build", "--now", NOW]);
    let (code, r) = run(&owner, &["deploy", "--to", url, "--now", NOW], &env);
    assert_eq!(
        (code, r["outcome"].as_str()),
        (Some(0), Some("deployed")),
        "{r}"
    );
    // A fresh runner: the same content, an empty SQLite ledger of its own.
    let fresh = TestSite::new();
    for i in 1..=4 {
        fresh.item(i, &format!("2026-11-0{i}"));
    }
    fresh.json(&["publish", "--build", "--now", NOW]);
    let state = || bucket_state(&remote);
    let before = state();
    let out = fresh
        .cmd(&["deploy", "--to", url, "--now", NOW])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let ours = fresh.status()["ledger_id"].as_str().unwrap().to_string();
    let theirs = owner.status()["ledger_id"].as_str().unwrap().to_string();
    assert!(
        err.contains(&ours) && err.contains(&theirs) && err.contains("--adopt"),
        "{err}"
    );
    assert_eq!(before, state(), "the refused runner touched the bucket");
    // gc and rollback from the foreign ledger are refused too.
    for args in [
        vec!["gc", "--to", url, "--keep", "1"],
        vec!["rollback", "1", "--to", url],
    ] {
        let (code, _) = run(&fresh, &[&args[..], &["--now", NOW]].concat(), &env);
        assert_eq!(code, Some(1), "{args:?}");
    }
    assert_eq!(before, state());
    adopt_takes_the_bucket_over(&owner, &fresh, &remote, &env);
}

/// An explicit, audited takeover; the rollback never names a revision only the adopted
/// ledger built; the old owner is now the stranger.
fn adopt_takes_the_bucket_over(
    owner: &TestSite,
    fresh: &TestSite,
    remote: &Remote,
    env: &[(String, String)],
) {
    let url = "s3://own/www";
    let ours = fresh.status()["ledger_id"].as_str().unwrap().to_string();
    let theirs = owner.status()["ledger_id"].as_str().unwrap().to_string();
    let (code, r) = run(
        &fresh,
        &["deploy", "--to", url, "--adopt", "--now", NOW],
        env,
    );
    assert_eq!(
        (code, r["outcome"].as_str()),
        (Some(0), Some("deployed")),
        "{r}"
    );
    let live = pointer_of(remote);
    assert_eq!(live["ledger_id"], ours.as_str());
    assert_eq!(live["revision"], 4);
    assert_eq!(audit_count(fresh, "adopt"), 1);
    // Issue 47.7: a rollback never names a revision only the adopted ledger built (it used to
    // point this ledger's pointer at the other's root: 503 everywhere, rollback `deployed`).
    let (code, r) = run(fresh, &["rollback", "3", "--to", url, "--now", NOW], env);
    assert_eq!(code, Some(1), "{r}");
    assert!(
        r.to_string().contains(&format!("built by ledger {theirs}")),
        "{r}"
    );
    assert_eq!(pointer_of(remote)["revision"], 4);
    // Now the old owner is the stranger.
    let (code, _) = run(owner, &["deploy", "--to", url, "--now", NOW], env);
    assert_eq!(code, Some(1));
}

#[test]
fn a_fresh_runner_rebuilding_the_live_revision_uploads_nothing_and_writes_no_receipt() {
    let bucket = tempfile::tempdir().unwrap();
    let url = folder(&bucket);
    let a = TestSite::on(Backend::Postgres);
    for i in 1..=3 {
        a.item(i, &format!("2026-11-0{i}"));
    }
    a.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(
        a.json(&["deploy", "--to", &url, "--now", NOW])["outcome"],
        "deployed"
    );
    let receipts = audit_count(&a, "deploy");
    // The deploy's receipt moved the audit tip after the revision was built: a fresh runner
    // (its own checkout, an empty public/) builds the same revision at another tip.
    let b = checkout_of(&a);
    let built = b.json(&["build", "--now", NOW]);
    assert_eq!(
        built["path"]
            .as_str()
            .map(|p| Path::new(p).file_name().unwrap().to_owned()),
        a.json(&["build", "--now", NOW])["path"]
            .as_str()
            .map(|p| Path::new(p).file_name().unwrap().to_owned()),
        "the same <R>-<B>"
    );
    let before = tree(bucket.path());
    let r = b.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "already_deployed", "{r}");
    assert_eq!(r["blobs_uploaded"], 0);
    assert_eq!(audit_count(&a, "deploy"), receipts, "no second receipt");
    assert_same_tree(&before, &tree(bucket.path()), "nothing uploaded");
}

#[test]
fn four_racing_deployers_write_exactly_one_receipt_per_pointer_move() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        racing_deployers_on(backend);
    }
}

fn racing_deployers_on(backend: Backend) {
    let s = TestSite::on(backend);
    let bucket = tempfile::tempdir().unwrap();
    let url = folder(&bucket);
    for rep in 1..=10i64 {
        s.item(rep, &format!("2026-11-{rep:02}"));
        s.json(&["publish", "--build", "--now", NOW]);
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
        let racers: Vec<_> = (0..4)
            .map(|_| {
                let (root, url, barrier) = (s.root().to_path_buf(), url.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let out = fencepost()
                        .arg("--site")
                        .arg(&root)
                        .args(["deploy", "--to", &url, "--json", "--now", NOW])
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    serde_json::from_slice::<Value>(&out.stdout).unwrap()
                })
            })
            .collect();
        let outcomes: Vec<Value> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        assert_eq!(
            audit_count(&s, "deploy"),
            rep as usize,
            "{backend:?} rep {rep}: {outcomes:#?}"
        );
        let deployed = outcomes
            .iter()
            .filter(|o| o["outcome"] == "deployed")
            .count();
        assert_eq!(deployed, 1, "{backend:?} rep {rep}: {outcomes:#?}");
    }
}

#[test]
fn the_bucket_pointer_follows_a_new_embargo_without_a_new_revision() {
    let (s, bucket, url) = one_item_and_a_bucket();
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let remote = Remote::open(&url).unwrap();
    assert_eq!(pointer_of(&remote)["next_change_at"], Value::Null);
    // An embargoed item: no publication, no new revision, but a new instant.
    s.item(2, "2026-12-05");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(r["revision"], 1);
    let d = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(d["outcome"], "already_deployed", "{d}");
    assert_eq!(
        pointer_of(&remote)["next_change_at"],
        "2026-12-06T00:10:00Z"
    );
    // Nothing in the bucket but the pointer names that instant.
    let leaks: Vec<String> = tree(bucket.path())
        .into_iter()
        .filter(|(k, b)| k != "current" && String::from_utf8_lossy(b).contains("2026-12-06"))
        .map(|(k, _)| k)
        .collect();
    assert!(leaks.is_empty(), "{leaks:?}");
}

/// The first shard (in the folder bucket at `bucket`) that names, or does not name, `page`.
fn shard_naming(bucket: &Path, page: &str, names: bool) -> std::path::PathBuf {
    std::fs::read_dir(bucket.join("manifests/shards"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::read_to_string(p).unwrap().contains(page) == names)
        .unwrap()
}

/// Damage: a shard deleted, a blob corrupted — `verify` names both, `deploy --repair` mends
/// both.
fn a_missing_shard_and_a_corrupt_blob_are_named_and_repaired(
    y: &TestSite,
    bucket: &Path,
    url: &str,
) {
    let ok = y.json(&["verify", "--to", url]);
    assert_eq!(ok["ok"], true, "{ok}");
    // A shard that does not list the page whose blob is corrupted below (a blob is found
    // corrupt only through a shard that names it).
    let shard = shard_naming(bucket, "answers/2/index.html", false);
    std::fs::remove_file(&shard).unwrap();
    let page = y.current_dir().join("answers/2/index.html");
    let sha = fencepost_core::digest::sha256_hex(&std::fs::read(&page).unwrap());
    std::fs::write(bucket.join("objects").join(&sha), "tampered").unwrap();
    let out = y.cmd(&["verify", "--to", url, "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    let shard_sha = shard.file_stem().unwrap().to_string_lossy().to_string();
    assert_eq!(
        found["missing_shards"],
        serde_json::json!([shard_sha]),
        "{found}"
    );
    assert_eq!(found["corrupt_blobs"], serde_json::json!([sha]), "{found}");
    let r = y.json(&["deploy", "--to", url, "--repair", "--now", NOW]);
    assert_eq!(r["outcome"], "repaired", "{r}");
    assert_eq!(y.json(&["verify", "--to", url])["ok"], true);
    assert!(y.status()["deploys"].as_array().unwrap().is_empty());
    serves_every_page(y, url);
}

/// The shard that names a page gone, and that page's blob corrupted: the check cannot see the
/// blob until the shard is back, so the repair checks again and mends it too.
fn a_blob_behind_a_missing_shard_is_repaired_too(y: &TestSite, bucket: &Path, url: &str) {
    let page = y.current_dir().join("answers/3/index.html");
    let sha = fencepost_core::digest::sha256_hex(&std::fs::read(&page).unwrap());
    let naming = shard_naming(bucket, "answers/3/index.html", true);
    std::fs::remove_file(&naming).unwrap();
    std::fs::write(bucket.join("objects").join(&sha), "tampered").unwrap();
    let r = y.json(&["deploy", "--to", url, "--repair", "--now", NOW]);
    assert_eq!(r["outcome"], "repaired", "{r}");
    assert_eq!(y.json(&["verify", "--to", url])["ok"], true);
    serves_every_page(y, url);
}

#[test]
fn a_stale_checkout_is_refused_after_its_build_was_replaced_and_damage_is_repaired() {
    let x = TestSite::new();
    for i in 1..=3 {
        x.item(i, &format!("2026-11-0{i}"));
    }
    let y = checkout_sharing_sqlite(&x);
    // y's templates are newer.
    let tpl = std::fs::read_to_string(y.path("templates/answer.html")).unwrap();
    y.write(
        "templates/answer.html",
        &format!("{tpl}\n<!-- new layout -->\n"),
    );
    x.json(&["publish", "--build", "--now", NOW]);
    y.json(&["build", "--now", NOW]);
    let bucket = tempfile::tempdir().unwrap();
    let url = folder(&bucket);
    let remote = Remote::open(&url).unwrap();
    let dx = x.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(dx["outcome"], "deployed");
    // y's build of the same revision was never live there: it moves the pointer, once.
    let dy = y.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(dy["outcome"], "deployed", "{dy}");
    assert_ne!(dx["build"], dy["build"]);
    let moved = pointer_of(&remote);
    assert_eq!(moved["build"], dy["build"]);
    for _ in 0..2 {
        let out = x
            .cmd(&["deploy", "--to", &url, "--now", NOW])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "a stale build is a backward move"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("3-{}", dy["build"].as_str().unwrap())),
            "the error names the newer build: {err}"
        );
        assert_eq!(
            y.json(&["deploy", "--to", &url, "--now", NOW])["outcome"],
            "already_deployed"
        );
    }
    assert_eq!(pointer_of(&remote), moved, "no flip-flop");
    assert_eq!(x.audited("deploy"), 2);

    a_missing_shard_and_a_corrupt_blob_are_named_and_repaired(&y, bucket.path(), &url);
    a_blob_behind_a_missing_shard_is_repaired_too(&y, bucket.path(), &url);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_deploy_of_an_older_revision_holding_the_target_is_waited_for_not_stepped_aside_for() {
    let (s, _bucket, url) = one_item_and_a_bucket();
    // A deploy of revision 1 stalls holding the target.
    let older = Stalled::start(
        &s,
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_manifest=sleep(1500)",
    );
    older.wait_until("deploy.after_manifest");
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(
        (r["outcome"].as_str(), r["revision"].as_i64()),
        (Some("deployed"), Some(2)),
        "{r}"
    );
    assert_success(&older.finish());
    assert_eq!(pointer_of(&Remote::open(&url).unwrap())["revision"], 2);
    s.write(
        "fencepost.toml",
        &format!(
            "{}\n[deploy]\nwait_secs = 1\n",
            std::fs::read_to_string(s.path("fencepost.toml")).unwrap()
        ),
    );
    s.item(3, "2026-11-03");
    s.json(&["publish", "--build", "--now", NOW]);
    let stuck = s.with_failpoints(
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_plan=return",
    );
    assert_eq!(stuck.status.code(), Some(137));
    // A deploy of the same revision while the (dead) run's lease holds it steps aside:
    // the holder does that work.
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "skipped_locked", "{r}");
    // A newer one waits (deploy.wait_secs = 1) and then says it is not live, non-zero.
    s.item(4, "2026-11-04");
    s.json(&["publish", "--build", "--now", NOW]);
    let out = s
        .cmd(&["deploy", "--to", &url, "--json", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["outcome"], "not_live", "{r}");
}

/// A resume at the manifest step re-checks the blobs the journal says went up: one deleted
/// meanwhile is uploaded again before the pointer moves.
#[cfg(feature = "failpoints")]
#[test]
fn a_resume_at_the_manifest_step_puts_back_a_blob_that_went_missing() {
    let (s, bucket, url) = one_item_and_a_bucket();
    let out = s.with_failpoints(
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_manifest=return",
    );
    assert_eq!(out.status.code(), Some(137));
    let page = s.current_dir().join("answers/1/index.html");
    let sha = fencepost_core::digest::sha256_hex(&std::fs::read(&page).unwrap());
    std::fs::remove_file(bucket.path().join("objects").join(&sha)).unwrap();
    let r = s.json(&["deploy", "--to", &url, "--now", "2026-12-01T00:05:01Z"]);
    assert_eq!(
        (r["outcome"].as_str(), r["resumed"].as_bool()),
        (Some("deployed"), Some(true)),
        "{r}"
    );
    assert!(bucket.path().join("objects").join(&sha).exists());
    assert_eq!(s.json(&["verify", "--to", &url])["ok"], true);
}

/// A resume past the pointer step checks that the pointer still names the plan's root: a
/// move that was lost (the pointer put back by hand) is made again, and audited once.
#[cfg(feature = "failpoints")]
#[test]
fn a_resume_past_the_pointer_step_makes_a_lost_move_again() {
    let (s, bucket, url) = one_item_and_a_bucket();
    s.json(&["deploy", "--to", &url, "--now", NOW]);
    let old_pointer = std::fs::read(bucket.path().join("current")).unwrap();
    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let out = s.with_failpoints(
        &["deploy", "--to", &url, "--now", NOW],
        "deploy.after_pointer=return",
    );
    assert_eq!(out.status.code(), Some(137));
    std::fs::write(bucket.path().join("current"), &old_pointer).unwrap();
    let r = s.json(&["deploy", "--to", &url, "--now", "2026-12-01T00:05:01Z"]);
    assert_eq!(r["resumed"], true, "{r}");
    let remote = Remote::open(&url).unwrap();
    assert_eq!(pointer_of(&remote)["revision"], 2);
    assert_eq!(s.audited("deploy"), 2);
}

/// Issue 47.7 (the deploy side): a bucket whose pointer names this ledger over a root another
/// ledger built (what an older release's `rollback --to` could leave after `deploy --adopt`)
/// is served by no origin; this ledger's next deploy replaces that root whatever its revision
/// number, instead of reporting `superseded` until its own revisions pass the other's.
#[test]
fn a_deploy_replaces_a_live_root_another_ledger_built_whatever_its_number() {
    let bucket = tempfile::tempdir().unwrap();
    let url = folder(&bucket);
    let other = TestSite::new();
    for i in 1..=9 {
        other.item(i, &format!("2026-11-{i:02}"));
    }
    other.json(&["publish", "--build", "--now", NOW]);
    other.json(&["deploy", "--to", &url, "--now", NOW]);
    let current = bucket.path().join("current");
    let theirs: Value = serde_json::from_slice(&std::fs::read(&current).unwrap()).unwrap();
    assert_eq!(theirs["revision"], 9);
    let s = TestSite::new();
    for i in 1..=4 {
        s.item(i, &format!("2026-11-{i:02}"));
    }
    s.json(&["publish", "--build", "--now", NOW]);
    let r = s.json(&["deploy", "--to", &url, "--adopt", "--now", NOW]);
    assert_eq!(r["outcome"], "deployed", "{r}");
    // The state an older rollback left: our pointer over the other ledger's revision 9.
    let mut ours: Value = serde_json::from_slice(&std::fs::read(&current).unwrap()).unwrap();
    for k in ["revision", "build", "manifest"] {
        ours[k] = theirs[k].clone();
    }
    std::fs::write(&current, serde_json::to_vec(&ours).unwrap()).unwrap();
    s.item(5, "2026-11-05");
    s.json(&["publish", "--build", "--now", NOW]);
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "deployed", "not superseded: {r}");
    let live: Value = serde_json::from_slice(&std::fs::read(&current).unwrap()).unwrap();
    assert_eq!(live["revision"], 5, "{live}");
    serves_every_page(&s, &url);
}
