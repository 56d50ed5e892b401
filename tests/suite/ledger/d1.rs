//! The ledger in Cloudflare D1 (issue 51): what only D1 has — the proxy Worker and its token,
//! the batch that fails as a whole, D1's limits, a proxy killed mid-request — through the
//! real binary against the proxy in workerd with a local D1 (`edge/cloudflare/d1-dev.mjs`).
//! The contract every engine keeps runs on D1 in `contract.rs`.
// The tests that crash processes at fail points need `--features failpoints`.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]
use crate::common::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

mod lost;

fn head(s: &TestSite) -> i64 {
    with_d1(s.root(), |d| d.rows("SELECT seq FROM fp_head", vec![]))[0]["seq"]
        .as_i64()
        .unwrap()
}

fn edge_revision(s: &TestSite) -> Value {
    with_d1(s.root(), |d| {
        d.rows(
            "SELECT publication_revision, log_seq FROM fp_site_state",
            vec![],
        )
    })[0]
        .clone()
}

/// Files up to 10 MB (the default refuses those over 1 MiB).
fn allow_big_items(s: &TestSite) {
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let cfg = cfg.replacen("[publish]\n", "[publish]\nmax_item_bytes = 10000000\n", 1);
    s.write("fencepost.toml", &cfg);
}

/// How many publish entries the audit log holds, and whether its chain verifies.
fn published_once_each(s: &TestSite, ids: &[i64]) {
    let log = s.json(&["log", "--limit", "10000"]);
    let mut seen = Vec::new();
    for e in log["entries"].as_array().unwrap() {
        if e["action"] == "publish" {
            seen.push(e["item"].as_str().unwrap_or("").to_string());
        }
    }
    assert_eq!(seen.len(), ids.len(), "each item once: {log}");
    let distinct: BTreeSet<&String> = seen.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "{log}");
    assert_eq!(s.json(&["verify"])["intact"], true);
}

/// The proxy answers only its token's holder; fencepost says where the token goes. A batch
/// whose compare-and-set on the head fails changes nothing, not even the statements before
/// it; the edge's publication revision moves with every commit, in its batch.
#[test]
fn the_proxy_takes_only_its_token_and_a_batch_that_loses_the_head_changes_nothing() {
    let s = TestSite::on(Backend::D1);
    s.item(1, "2026-11-01");
    s.publish(NOW);
    assert_eq!(edge_revision(&s)["publication_revision"], 1);
    assert_eq!(edge_revision(&s)["log_seq"], head(&s));

    let body = json!({"statements": [{"sql": "SELECT 1", "params": []}]});
    for token in [None, Some("wrong")] {
        let (code, v) = with_d1(s.root(), |d| d.post("/batch", &body, token)).unwrap_err();
        assert_eq!(code, 401, "{v}");
    }
    let out = s
        .cmd(&["status", "--json"])
        .env("FENCEPOST_D1_TOKEN", "not-the-token-7f3a9")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = err.to_string();
    assert!(
        text.contains("FENCEPOST_D1_TOKEN") && text.contains("LEDGER_TOKEN"),
        "{text}"
    );
    assert!(!text.contains("7f3a9"), "the token is never shown: {text}");
    let out = s
        .cmd(&["status"])
        .env_remove("FENCEPOST_D1_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("FENCEPOST_D1_TOKEN is not set")
            || String::from_utf8_lossy(&out.stderr).contains("which is not set")
    );

    // A writer that lost the race: its batch moves the revision first, then fails the head.
    let at = head(&s);
    let lost = with_d1(s.root(), |d| {
        d.batch(&[
            (
                "UPDATE fp_site_state SET publication_revision = 999 WHERE id = 1",
                vec![],
            ),
            (
                "INSERT INTO fp_log (seq, part, parts, bytes, sha256, writer, data) VALUES (?1, 0, 1, 0, 'x', 'loser', '')",
                vec![(at + 1).into()],
            ),
            (
                "UPDATE fp_head SET seq = CASE WHEN seq = ?1 THEN ?2 ELSE -1 END WHERE id = 1",
                vec![(at - 1).into(), at.into()],
            ),
        ])
    });
    let (code, v) = lost.unwrap_err();
    assert_eq!(code, 409, "{v}");
    assert_eq!(head(&s), at);
    assert_eq!(edge_revision(&s)["publication_revision"], 1);
    let rows = with_d1(s.root(), |d| {
        d.rows(
            "SELECT count(*) AS n FROM fp_log WHERE seq > ?1",
            vec![at.into()],
        )
    });
    assert_eq!(rows[0]["n"], 0);
    s.item(2, "2026-11-02");
    s.publish(NOW);
    assert_eq!(edge_revision(&s)["publication_revision"], 2);
    published_once_each(&s, &[1, 2]);
}

/// D1 stores no value over 2 MB: a page body past it is refused at publish as an invalid
/// file, named, while the other items go ahead. Entries larger than one value travel in parts
/// a fresh runner reads back whole; an entry larger than one request is staged and lands
/// whole. (Statements, parameters, values and integers past D1's limits are refused by name
/// before they are sent: a unit test of the encoder.)
#[test]
fn d1s_limits_hold_by_parts_and_by_name() {
    let s = TestSite::on(Backend::D1);
    allow_big_items(&s);
    let big = "x".repeat(2_100_000);
    let near = "y".repeat(1_900_000);
    s.item(1, "2026-11-01");
    s.item_with(2, "2026-11-02", "", &big);
    for id in 3..=5 {
        s.item_with(id, &format!("2026-11-0{id}"), "", &near);
    }
    let r = publish_held(&s, NOW);
    assert_eq!(ids(&r, "published"), vec![1, 3, 4, 5], "{r}");
    let invalid = r["invalid"].as_array().unwrap();
    assert_eq!(invalid.len(), 1, "{r}");
    assert_eq!(invalid[0]["file"], "content/answers/2.md");
    assert_eq!(invalid[0]["key"], "(body)");
    assert!(
        invalid[0]["error"].as_str().unwrap().contains("2000000"),
        "{r}"
    );
    // What the public sees after the build: the others live, the held one nowhere.
    s.build(&[]);
    let live = s.current_dir();
    for id in [1, 3, 4, 5] {
        assert!(
            live.join(format!("answers/{id}/index.html")).exists(),
            "{id}"
        );
    }
    assert!(!live.join("answers/2/index.html").exists());
    assert!(!std::fs::read_to_string(live.join("answers/index.html"))
        .unwrap()
        .contains("/answers/2/"));
    // Three bodies of 1.9 MB went in one commit: an entry in parts, read back whole.
    let parts = with_d1(s.root(), |d| {
        d.rows("SELECT max(parts) AS p FROM fp_log", vec![])
    });
    assert!(parts[0]["p"].as_i64().unwrap() >= 3, "{parts:?}");
    let fresh = s.checkout();
    assert_eq!(fresh.status()["revision"], 4);
    fresh.cmd(&["verify"]).assert().success();

    // A SQLite ledger of 20 such pages is more than one batch carries: copied into D1, its
    // entry goes ahead in parts (fp_staged) and lands whole with the head, in one batch.
    let local = TestSite::new();
    allow_big_items(&local);
    for id in 1..=20 {
        local.item_with(id, "2026-11-01", "", &near);
    }
    local.publish(NOW);
    let other = TestSite::on(Backend::D1);
    let target = other.ledger_url().unwrap();
    let r = local.json(&["ledger", "copy", "--to", &target]);
    assert_eq!(r["verified"], true, "{r}");
    let stats = with_d1(other.root(), |d| d.stats());
    assert!(stats["batches"].as_u64().unwrap() >= 3, "{stats}");
    let staged = with_d1(other.root(), |d| {
        d.rows("SELECT count(*) AS n FROM fp_staged", vec![])
    });
    assert_eq!(staged[0]["n"], 0, "nothing left staged");
    let biggest = with_d1(other.root(), |d| {
        d.rows("SELECT max(bytes) AS b FROM fp_log", vec![])
    });
    assert!(
        biggest[0]["b"].as_i64().unwrap() > 33_554_432,
        "{biggest:?}"
    );
    other.set_site_id(local.site_id().as_deref());
    let fresh = other.checkout();
    assert_eq!(fresh.status()["revision"], 20);
    fresh.cmd(&["verify"]).assert().success();
}

/// `ledger copy` SQLite → D1 → a bucket: each hop verified, and the builds byte-identical.
#[test]
fn ledger_copy_moves_sqlite_to_d1_to_a_bucket_and_the_build_stays_byte_identical() {
    let s = TestSite::new();
    for id in 1..=4 {
        s.item(id, &format!("2026-11-0{id}"));
    }
    s.item(5, "2026-12-20");
    s.publish(NOW);
    s.build(&[]);
    let before = tree(&s.current_dir());
    let status = s.status();
    let d1 = serve_d1_for(s.root());
    let r = s.json(&["ledger", "copy", "--to", &d1]);
    assert_eq!(r["verified"], true, "{r}");
    s.set_ledger_url(&d1);
    for key in ["revision", "items", "audit_entries", "audit_tip"] {
        assert_eq!(s.status()[key], status[key], "{key}");
    }
    std::fs::rename(s.path("public"), s.path("public-from-sqlite")).unwrap();
    s.build(&[]);
    assert_same_tree(&before, &tree(&s.current_dir()), "build from D1");
    std::fs::rename(s.path("public"), s.path("public-from-d1")).unwrap();

    let bucket = format!("file://{}", s.path(".bucket/ledger").display());
    let r = s.json(&["ledger", "copy", "--from", &d1, "--to", &bucket]);
    assert_eq!(r["verified"], true, "{r}");
    s.set_ledger_url(&bucket);
    s.build(&[]);
    assert_same_tree(&before, &tree(&s.current_dir()), "build from the bucket");
    // A second copy into D1 is refused: it is not empty.
    let err = s.failing(&["ledger", "copy", "--from", &bucket, "--to", &d1]);
    assert!(err.contains("is not empty"), "{err}");
}

/// Four fresh runners race their first run on an empty D1, then three more rounds: every
/// due item published once, one revision each, the chain intact.
#[test]
fn fresh_runners_racing_on_an_empty_d1_publish_each_item_once() {
    let s = TestSite::on(Backend::D1);
    let mut due = Vec::new();
    for round in 1..=3i64 {
        for k in 0..2 {
            let id = round * 2 - 1 + k;
            s.item(id, "2026-11-01");
            due.push(id);
        }
        let runs: Vec<Value> = std::thread::scope(|scope| {
            let hs: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| s.checkout().json(&["publish", "--build", "--now", NOW])))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut published: Vec<i64> = runs.iter().flat_map(|r| ids(r, "published")).collect();
        published.sort();
        let mut from: Vec<i64> = due
            .iter()
            .copied()
            .filter(|i| *i > (round - 1) * 2)
            .collect();
        from.sort();
        assert_eq!(published, from, "round {round}: {runs:#?}");
        assert_eq!(s.checkout().status()["revision"], due.len() as i64);
    }
    published_once_each(&s.checkout(), &due);
}

/// A one-item publish by a warm runner makes the same number of requests whatever the
/// ledger's size (O(1)): a catch-up and a batch per transaction, never a read of the rest.
#[test]
fn a_one_item_publish_makes_as_many_requests_at_200_items_as_at_5() {
    let mut counts = Vec::new();
    for n in [5i64, 200] {
        let s = TestSite::on(Backend::D1);
        for id in 1..=n {
            s.item(id, "2026-11-01");
        }
        s.cmd(&["publish", "--now", NOW])
            .env("FENCEPOST_LEDGER_SNAPSHOT_EVERY", "100000")
            .assert()
            .success();
        s.item(n + 1, "2026-11-02");
        let before = with_d1(s.root(), |d| d.stats())["batches"]
            .as_u64()
            .unwrap();
        s.cmd(&["publish", "--now", NOW])
            .env("FENCEPOST_LEDGER_SNAPSHOT_EVERY", "100000")
            .assert()
            .success();
        let after = with_d1(s.root(), |d| d.stats())["batches"]
            .as_u64()
            .unwrap();
        counts.push(after - before);
    }
    assert_eq!(
        counts[0], counts[1],
        "requests for one item at 5 and 200 items: {counts:?}"
    );
    assert!(counts[0] <= 16, "{counts:?}");
}

/// The proxy killed mid-request — before D1 ran the batch, or after it committed and before
/// the answer left — at each commit of a publish in turn: the run fails (or its retry finds
/// its own entry there), the proxy comes back on the same data, and the next run finishes
/// the work, each item once.
#[test]
fn a_proxy_killed_mid_request_loses_nothing_and_publishes_nothing_twice() {
    let mut crashes = 0;
    for flag in ["--crash-before-batch", "--crash-after-batch"] {
        for n in [2, 3, 4, 5] {
            let s = TestSite::on(Backend::D1);
            for id in 1..=3 {
                s.item(id, &format!("2026-11-0{id}"));
            }
            s.publish(NOW); // the ledger exists; item 1..3 published
            for id in 4..=6 {
                s.item(id, "2026-11-04");
            }
            restart_d1_for(s.root(), &[flag, &n.to_string()]);
            let out = s
                .cmd(&["publish", "--json", "--lease-secs", "60", "--now", NOW])
                .output()
                .unwrap();
            let crashed = with_d1(s.root(), |d| !d.running());
            crashes += usize::from(crashed);
            restart_d1_for(s.root(), &[]);
            if out.status.success() {
                // The retry of a lost answer found the entry its first try had written.
                let r: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert!(!ids(&r, "published").is_empty() || !crashed, "{r}");
            }
            s.json(&["publish", "--now", "2026-12-01T00:01:01Z"]);
            assert_eq!(s.status()["revision"], 6, "{flag} {n}");
            published_once_each(&s, &[1, 2, 3, 4, 5, 6]);
        }
    }
    assert!(crashes >= 6, "the proxy crashed {crashes} times");
}

/// fencepost killed (a fail point's SIGKILL exit) just before its batch is sent, just after
/// D1 committed it, and before a snapshot: the next run finishes the work, each item once.
#[cfg(feature = "failpoints")]
#[test]
fn fencepost_killed_at_each_commit_step_on_d1_is_finished_by_the_next_run() {
    let mut killed = 0;
    for point in [
        "ledger.bucket.before_log_entry",
        "ledger.bucket.after_log_entry",
        "ledger.bucket.before_snapshot",
    ] {
        for k in [0, 2, 4, 7, 11] {
            let s = TestSite::on(Backend::D1);
            for id in 1..=3 {
                s.item(id, &format!("2026-11-0{id}"));
            }
            let out = s
                .cmd(&[
                    "publish",
                    "--build",
                    "--json",
                    "--lease-secs",
                    "60",
                    "--now",
                    NOW,
                ])
                .env("FENCEPOST_LEDGER_SNAPSHOT_EVERY", "2")
                .env("FAILPOINTS", format!("{point}={k}*off->return"))
                .output()
                .unwrap();
            if out.status.success() {
                continue;
            }
            assert_eq!(
                out.status.code(),
                Some(137),
                "{point} #{k}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            killed += 1;
            let next = s.checkout();
            next.json(&["publish", "--build", "--now", "2026-12-01T00:01:01Z"]);
            assert_eq!(s.checkout().status()["revision"], 3, "{point} #{k}");
            published_once_each(&s.checkout(), &[1, 2, 3]);
        }
    }
    assert!(killed >= 8, "only {killed} kills");
}

/// The edge Worker bound to the ledger's D1 (`LEDGER`) reads its publication revision with
/// the pointer: every answer says it, it runs ahead of the deployed revision until the deploy
/// lands, and a database that holds no ledger is a 503 with no-store, never a 200.
#[test]
fn the_edge_reads_the_d1_ledgers_revision_with_its_pointer() {
    let s = TestSite::on(Backend::D1);
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let bucket = s.path(".bucket/www");
    let to = format!("file://{}", bucket.display());
    s.json(&["deploy", "--to", &to, "--now", NOW]);
    let persist = with_d1(s.root(), |d| d.persist.clone());
    let dir = persist.display().to_string();
    let edge = Edge::start(&bucket, "", &["--pointer-ttl-ms", "0", "--ledger-d1", &dir]);
    let r = edge.get("/answers/1/");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-ledger-revision"), Some("1"));
    assert!(r.header("x-revision").unwrap().starts_with("1-"));

    s.item(2, "2026-11-02");
    s.json(&["publish", "--build", "--now", NOW]);
    let r = edge.get("/answers/1/");
    assert_eq!(r.header("x-ledger-revision"), Some("2"), "the ledger moved");
    assert!(
        r.header("x-revision").unwrap().starts_with("1-"),
        "not deployed yet"
    );
    assert_eq!(edge.get("/answers/2/").status, 404);
    s.json(&["deploy", "--to", &to, "--now", NOW]);
    edge.wait_pointer(&bucket);
    let r = edge.get("/answers/2/");
    assert_eq!(r.status, 200);
    assert!(r.header("x-revision").unwrap().starts_with("2-"));
    drop(edge);

    // Bound to a D1 that cannot answer (it holds no ledger): issue 77.7 — an edge fault
    // degrades, never blanks. The pointer alone decides: the bucket's complete revision is
    // served, without a ledger revision it could not read. (Every page was a 503.)
    let empty = s.path(".d1-empty");
    std::fs::create_dir_all(&empty).unwrap();
    let dir = empty.display().to_string();
    let edge = Edge::start(
        &bucket,
        "",
        &["--pointer-ttl-ms", "60000", "--ledger-d1", &dir],
    );
    let r = edge.get("/answers/2/");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.header("x-revision").unwrap().starts_with("2-"));
    assert_eq!(r.header("x-ledger-revision"), None);
    assert_eq!(
        r.header("cache-control"),
        Some("public, max-age=0, must-revalidate")
    );
    // Not knowing the ledger's revision, it re-reads the pointer as soon as if the ledger were
    // ahead (POINTER_HOT_MS), not once a minute: a new deploy is served at once.
    s.item(3, "2026-11-03");
    s.json(&["publish", "--build", "--now", NOW]);
    s.json(&["deploy", "--to", &to, "--now", NOW]);
    edge.wait_pointer(&bucket);
    let started = std::time::Instant::now();
    while edge.get("/answers/3/").status != 200 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "never re-read"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A D1 ledger an older fencepost began (schema 12, before the transparency tables) is
/// migrated by this one with an entry — the whole database, migrated — and keeps its data; a
/// fresh runner reads it at the new schema.
#[test]
fn an_older_schemas_d1_ledger_is_migrated_by_an_entry_and_keeps_its_data() {
    use base64::Engine as _;
    let s = TestSite::on(Backend::D1);
    let image = s.path(".old.sqlite");
    {
        let c = rusqlite::Connection::open(&image).unwrap();
        for sql in &fencepost_ledger::schema::SQLITE[..12] {
            c.execute_batch(sql).unwrap();
        }
        c.execute_batch(
            "PRAGMA user_version = 12;
             UPDATE site_state SET publication_revision = 7 WHERE id = 1;
             CREATE TABLE fp_replica (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, snapshot_seq INTEGER NOT NULL DEFAULT 0);
             INSERT INTO fp_replica (id, seq, snapshot_seq) VALUES (1, 1, 0);
             PRAGMA journal_mode = DELETE;",
        )
        .unwrap();
    }
    let bytes = std::fs::read(&image).unwrap();
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let sha = fencepost_core::digest::sha256_hex(&bytes);
    // What the older binary's first command sent: the tables, then entry 1 with the head.
    with_d1(s.root(), |d| {
        d.batch(&[
            ("CREATE TABLE IF NOT EXISTS fp_head (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL CHECK (seq >= 0))", vec![]),
            ("INSERT OR IGNORE INTO fp_head (id, seq) VALUES (1, 0)", vec![]),
            ("CREATE TABLE IF NOT EXISTS fp_log (seq INTEGER NOT NULL, part INTEGER NOT NULL, parts INTEGER NOT NULL, bytes INTEGER NOT NULL, sha256 TEXT NOT NULL, writer TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (seq, part), CHECK (part >= 0 AND part < parts)) WITHOUT ROWID", vec![]),
            ("UPDATE fp_head SET seq = CASE WHEN seq = 0 THEN 1 ELSE -1 END WHERE id = 1", vec![]),
            (
                "INSERT INTO fp_log (seq, part, parts, bytes, sha256, writer, data) VALUES (1, 0, 1, ?1, ?2, 'an-older-fencepost', ?3)",
                vec![bytes.len().into(), sha.into(), data.into()],
            ),
        ])
        .unwrap();
    });
    assert_eq!(s.status()["revision"], 7);
    assert_eq!(head(&s), 2, "one migration entry");
    assert_eq!(
        s.query_i64("PRAGMA user_version"),
        fencepost_ledger::schema::SQLITE_LATEST
    );
    let fresh = s.checkout();
    assert_eq!(fresh.status()["revision"], 7);
    s.item(1, "2026-11-01");
    s.publish(NOW);
    assert_eq!(fresh.checkout().status()["revision"], 8);
    s.cmd(&["verify"]).assert().success();
}

/// A batch D1 ran whose answer never came back (the connection closed on it): fencepost
/// sends it again, the head refuses the second, and the entry there — this writer's id and
/// digest — is taken for its commit: the run succeeds, each item once, at each commit of a
/// publish in turn.
#[test]
fn a_lost_answer_is_resolved_by_reading_back_the_writers_own_entry() {
    for n in [1, 2, 3, 4] {
        let s = TestSite::on(Backend::D1);
        s.item(1, "2026-11-01");
        s.publish(NOW);
        s.item(2, "2026-11-02").item(3, "2026-11-03");
        restart_d1_for(s.root(), &["--drop-answer-batch", &n.to_string()]);
        let out = s
            .cmd(&["publish", "--json", "--now", NOW])
            .env("FENCEPOST_LOG", "fencepost=debug")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "batch {n}: {err}");
        assert!(
            err.contains("its first answer was lost"),
            "batch {n}: the entry was read back: {err}"
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut published = ids(&r, "published");
        published.sort();
        assert_eq!(published, vec![2, 3], "batch {n}: {r}");
        assert!(
            with_d1(s.root(), |d| d.running()),
            "the proxy went on serving"
        );
        assert_eq!(s.status()["revision"], 3);
        published_once_each(&s, &[1, 2, 3]);
    }
}

/// The harness's own restart: a proxy brought back on its port while another process holds
/// that port a while (what made eight D1 tests fail together once in CI) waits for the port
/// and starts on it, rather than failing.
#[test]
fn a_proxy_restarted_on_a_port_held_a_while_starts_once_it_is_free() {
    let dir = tempfile::tempdir().unwrap();
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let freed = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(2));
        drop(holder);
    });
    let started = std::time::Instant::now();
    let server = D1Server::restart_on(&dir.path().join(".d1"), port, &[]);
    freed.join().unwrap();
    assert_eq!(server.port(), port);
    assert!(started.elapsed() >= std::time::Duration::from_secs(2));
    assert!(server.stats()["batches"].is_number(), "{}", server.stats());
}
