//! What depends on the engine: a target's key, `ledger copy` across engines, the environment
//! choosing PostgreSQL, TLS, the deploy saga's journal.
use super::*;

/// Issue 35.5: rows a ledger keyed by a target's bare name before the endpoint was part of
/// the key go to the first endpoint's key that asks, once, and never over rows of its own.
pub(super) fn a_target_keyed_by_its_bare_name_goes_to_its_endpoints_key_once(b: Backend) {
    use fencepost_ledger::deploys;
    let s = TestSite::on(b);
    let mut l = open(&s);
    let (bare, one, two) = (
        "s3://x/www",
        "s3://x/www via http://127.0.0.1:1",
        "s3://x/www via http://127.0.0.1:2",
    );
    l.write(|tx| deploys::mark_probed(tx, bare, bare, at(NOW)))
        .unwrap();
    assert!(l.write(|tx| deploys::rename_legacy(tx, bare, one)).unwrap() > 0);
    assert_eq!(
        l.write(|tx| deploys::rename_legacy(tx, bare, two)).unwrap(),
        0
    );
    l.write(|tx| deploys::mark_probed(tx, bare, bare, at(NOW)))
        .unwrap();
    assert_eq!(
        l.write(|tx| deploys::rename_legacy(tx, bare, one)).unwrap(),
        0,
        "the key has rows of its own"
    );
    let targets: Vec<String> = l
        .read(deploys::targets)
        .unwrap()
        .into_iter()
        .map(|t| t.target)
        .collect();
    assert_eq!(targets, [bare, one]);
}

/// A site with an image, a withdrawal, a pending item and a daily result, published on
/// SQLite.
fn site_to_copy() -> TestSite {
    let s = TestSite::new();
    s.write(
        "content/images/a.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    s.item_with(
        1,
        "2026-11-01",
        "image = \"images/a.svg\"\n",
        "with an image",
    );
    for id in 2..=5 {
        s.item(id, &format!("2026-11-0{id}"));
    }
    s.item(6, "2026-12-20"); // embargoed: pending at the copy
    s.publish(NOW);
    s.item_with(2, "2026-11-02", "withdrawn = true\n", "gone");
    s.publish(NOW);
    s.json(&[
        "results",
        "add",
        "--puzzle",
        "1",
        "--session",
        "a",
        "--outcome",
        "win",
        "--guesses",
        "3",
    ]);
    s
}

/// The status keys two copies of one ledger must agree on.
fn same_status(a: &serde_json::Value, b: &serde_json::Value) {
    for key in [
        "revision",
        "items",
        "audit_entries",
        "audit_tip",
        "next_embargo_at",
    ] {
        assert_eq!(a[key], b[key], "{key}");
    }
}

/// `ledger copy`: publish on SQLite, copy into an empty PostgreSQL database, carry on there.
/// The first build from PostgreSQL, into an empty output folder, is byte-identical to the
/// last one from SQLite; a second copy into the now non-empty database is refused.
#[test]
fn ledger_copy_moves_sqlite_to_a_bucket_to_postgres_and_the_build_stays_byte_identical() {
    let s = site_to_copy();
    s.build(&[]);
    let before = tree(&s.current_dir());
    let sqlite_status = s.status();

    // SQLite → a ledger in a bucket → PostgreSQL, each hop verified, each build the same.
    let bucket = format!("file://{}", s.path(".bucket/ledger").display());
    let r = s.json(&["ledger", "copy", "--to", &bucket]);
    assert_eq!(r["verified"], true, "{r}");
    assert_eq!(r["tables"]["daily_results"], 1, "{r}");
    s.set_ledger_url(&bucket);
    let bucket_status = s.status();
    same_status(&bucket_status, &sqlite_status);
    s.cmd(&["verify"]).assert().success();
    std::fs::rename(s.path("public"), s.path("public-from-sqlite")).unwrap();
    s.build(&[]);
    assert_same_tree(
        &before,
        &tree(&s.current_dir()),
        "build from the bucket ledger",
    );
    std::fs::rename(s.path("public"), s.path("public-from-bucket")).unwrap();

    let url = pg().database();
    let r = s.json(&["ledger", "copy", "--from", &bucket, "--to", &url]);
    assert_eq!(r["verified"], true, "{r}");
    assert_eq!(r["revision"], 6, "{r}");
    assert_eq!(r["tables"]["pages"], 5, "{r}");
    assert_eq!(r["tables"]["items"], 6, "{r}");
    assert_eq!(r["tables"]["audit_log"], 6, "{r}");
    assert_eq!(r["tables"]["daily_results"], 1, "{r}");
    // A second copy into the same database is refused, and changes nothing.
    let err = s.failing(&["ledger", "copy", "--to", &url]);
    assert!(err.contains("is not empty"), "{err}");

    s.set_ledger_url(&url);
    let pg_status = s.status();
    same_status(&pg_status, &sqlite_status);
    s.cmd(&["verify"]).assert().success();
    // The same ledger id travelled: a fresh output folder gets the very same bytes.
    s.build(&[]);
    assert_same_tree(
        &before,
        &tree(&s.current_dir()),
        "build from PostgreSQL after the copy",
    );

    // And publishing carries on there.
    let r = s.publish("2026-12-21T00:10:00Z");
    assert_eq!(ids(&r, "published"), vec![6]);
    assert_eq!(r["revision"], 7);
    s.cmd(&["verify"]).assert().success();
    assert_eq!(
        s.query_i64("SELECT count(*) FROM items WHERE source_size IS NOT NULL"),
        0,
        "a shared ledger keeps no per-host stats"
    );
}

/// `FENCEPOST_LEDGER` picks the ledger over fencepost.toml, and a password in the URL never
/// reaches stdout, stderr or JSON — not even in an error.
#[test]
fn the_environment_selects_postgres_and_the_password_stays_secret() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let url = pg().database();
    let secret_url = url.replace("fencepost@", "fencepost:hunter2secret@");
    let out = s
        .cmd(&["publish", "--json", "--now", NOW, "-vv"])
        .env("FENCEPOST_LEDGER", &secret_url)
        .output()
        .unwrap();
    assert_success(&out);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("hunter2secret"), "{all}");
    assert!(
        !s.path(".fencepost/ledger.sqlite").exists(),
        "the SQLite ledger was not used"
    );
    // The publication is in that database: its status says so.
    let out = s
        .cmd(&["status", "--json"])
        .env("FENCEPOST_LEDGER", &url)
        .output()
        .unwrap();
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(st["revision"], 1, "{st}");
    // An error names the database without the password.
    let bad = secret_url.replace(&format!(":{}/", pg().port), ":1/");
    let out = s
        .cmd(&["status", "--json"])
        .env("FENCEPOST_LEDGER", &bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("127.0.0.1:1"),
        "the error names the database: {err}"
    );
    assert!(!err.contains("hunter2secret"), "{err}");
    assert!(err.contains("***"), "{err}");
}

/// The deploy saga's journal and receipts live in the ledger too: deploy twice to a folder
/// target, roll the bucket back, deploy again; the status lists the target, the chain holds
/// one receipt per operation.
pub(super) fn deploys_and_remote_rollbacks_are_journaled_and_audited(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "deployed", "{r}");
    s.item(2, "2026-11-02");
    s.publish(NOW);
    s.build(&[]);
    let r = s.json(&["deploy", "--to", &url, "--now", NOW]);
    assert_eq!(r["outcome"], "deployed", "{r}");
    assert_eq!(r["revision"], 2, "{r}");
    let r = s.json(&["rollback", "1", "--to", &url, "--now", NOW]);
    assert!(r.to_string().contains('1'), "{r}");
    let st = s.status();
    let targets = st["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 1, "{st}");
    assert!(st["deploys"].as_array().unwrap().is_empty(), "{st}");
    assert_eq!(s.audited("deploy"), 2);
    assert_eq!(s.audited("rollback"), 1);
    let unfinished = s.status()["deploys"].as_array().unwrap().len();
    assert_eq!(unfinished, 0, "every operation done");
    s.cmd(&["verify"]).assert().success();
}

/// TLS to a server whose certificate comes from a private CA (as managed databases' often
/// do): the test server admits the role `tlsonly` over TLS only. Plain text is refused by the
/// server; TLS without trusting the CA is refused by fencepost (the certificate is verified);
/// `sslrootcert=` in the URL, or `PGSSLROOTCERT`, makes it work.
#[test]
fn tls_to_a_server_with_a_private_ca() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let url = pg().database().replace("fencepost@", "tlsonly@");
    let run = |ledger: &str, env: &[(&str, &str)]| {
        let mut c = s.cmd(&["publish", "--json", "--now", NOW]);
        c.env("FENCEPOST_LEDGER", ledger);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let out = run(&url, &[]);
    assert!(
        !out.status.success(),
        "plain text must be refused for tlsonly"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no encryption"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&format!("{url}?sslmode=require"), &[]);
    assert!(!out.status.success(), "an unknown CA must be refused");
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(err.contains("certificate"), "{err}");
    let ca = pg().ca_cert().display().to_string();
    let out = run(&format!("{url}?sslmode=verify-full&sslrootcert={ca}"), &[]);
    assert_success(&out);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "published"), vec![1]);
    let out = s
        .cmd(&["status", "--json"])
        .env("FENCEPOST_LEDGER", format!("{url}?sslmode=require"))
        .env("PGSSLROOTCERT", &ca)
        .output()
        .unwrap();
    assert_success(&out);
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(st["revision"], 1);
}
