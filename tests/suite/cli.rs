//! The command line's manners: pipes that close, `--json` failures as one object, causes
//! printed once, `--bind` spellings, `log`, `--version` and completions, bad config and flags
//! named, `init` and `new`.
mod output;

use crate::common::*;
use predicates::str::contains;
use serde_json::Value;
use std::process::Stdio;

/// `fencepost new` writes a draft.
#[test]
fn new_writes_a_draft() {
    let s = TestSite::new();
    let w = s.json(&["new", "answers", "--now", NOW]);
    let text = std::fs::read_to_string(s.path(w["path"].as_str().unwrap())).unwrap();
    assert!(text.contains("\ndraft = true\n"), "{text}");
    let r = s.json(&["publish", "--now", "2027-12-01T00:00:00Z"]);
    assert_eq!(r["published"], serde_json::json!([]), "{r}");
    assert_eq!(
        r["drafts"][0]["id"],
        w["id"].as_str().unwrap().parse::<i64>().unwrap(),
        "{r}"
    );
}

#[test]
fn bad_config_and_bad_flags_are_named() {
    let s = TestSite::new();
    s.write("fencepost.toml", "[publish]\ngrace = 5\n");
    s.cmd(&["publish"])
        .assert()
        .failure()
        .stderr(contains("fencepost.toml"))
        .stderr(contains("grace"));
    let out = s.cmd(&["publish", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"]["kind"], "config", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("grace"),
        "{e}"
    );
    s.write("fencepost.toml", "");
    s.cmd(&["publish", "--now", "yesterday"])
        .assert()
        .failure()
        .stderr(contains("RFC 3339"));
    s.cmd(&["publish", "--lease-secs", "0"]).assert().failure();
    let empty = tempfile::tempdir().unwrap();
    assert_cmd::Command::from_std(fencepost())
        .arg("--site")
        .arg(empty.path())
        .arg("publish")
        .assert()
        .failure()
        .stderr(contains("fencepost init"));
}

#[test]
fn init_refuses_an_existing_site() {
    let s = TestSite::new();
    assert_cmd::Command::from_std(fencepost())
        .arg("init")
        .arg(s.root())
        .assert()
        .failure()
        .stderr(contains("already"));
}

#[test]
fn serve_bind_takes_a_port_host_and_port_or_localhost_and_port() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    for bind in ["0", "127.0.0.1:0", "localhost:0"] {
        let mut child = fencepost()
            .arg("--site")
            .arg(s.root())
            .args(["serve", "--json", "--bind", bind])
            .env("FENCEPOST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{bind}: {line:?}: {e}"));
        let addr = v["listening"].as_str().unwrap().to_string();
        assert!(addr.starts_with("127.0.0.1:"), "{bind} → {addr}");
        assert_eq!(http(&addr, "GET", "/answers/1/", &[]).status, 200, "{bind}");
        let _ = child.kill();
        let _ = child.wait();
    }
    let out = s
        .cmd(&["serve", "--bind", "no-port-here"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected PORT, HOST:PORT or localhost:PORT")
    );
}

#[test]
fn log_lists_the_audit_trail_newest_first() {
    let s = TestSite::new();
    let empty = s.json(&["log"]);
    assert_eq!(empty["entries"], serde_json::json!([]));
    for i in 1..=3 {
        s.item(i, &format!("2026-11-0{i}"));
    }
    s.publish(NOW);
    s.item_with(2, "2026-11-02", "", "A new body.");
    s.publish("2026-12-01T01:00:00Z");
    let all = s.json(&["log"]);
    let entries = all["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4, "{all}");
    let seqs: Vec<i64> = entries.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, [4, 3, 2, 1]);
    let newest = &entries[0];
    assert_eq!(newest["action"], "update", "{newest}");
    assert_eq!(newest["item"], "answers/2", "{newest}");
    assert_eq!(newest["revision"], 4, "{newest}");
    assert_eq!(newest["at"], "2026-12-01T01:00:00Z", "{newest}");
    assert_eq!(newest["hash"].as_str().unwrap().len(), 64);
    assert_eq!(newest["previous_hash"], entries[1]["hash"]);
    let two = s.json(&["log", "--limit", "2"]);
    assert_eq!(two["entries"].as_array().unwrap().len(), 2);
    assert_eq!(two["entries"][0]["seq"], 4);
    // The human form: one line per entry, newest first.
    let out = s.cmd(&["log", "--limit", "3"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("#4") && lines[0].contains("update") && lines[0].contains("answers/2"),
        "{text}"
    );
    assert!(
        s.cmd(&["log", "--limit", "0"])
            .output()
            .unwrap()
            .status
            .code()
            == Some(2)
    );
}

/// Issue 38 (install): `--version` names the commit the binary was built from, and
/// `completions` prints a script for each shell, naming the subcommands.
#[test]
fn version_names_the_commit_and_completions_print_for_each_shell() {
    let out = fencepost().arg("--version").output().unwrap();
    assert!(out.status.success());
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let commit = v
        .strip_prefix(&format!("fencepost {} (", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        commit.len() == 12 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
        "built from this git checkout, so the commit is known: {v}"
    );
    for (shell, marker) in [
        ("bash", "_fencepost()"),
        ("zsh", "#compdef fencepost"),
        ("fish", "complete -c fencepost"),
    ] {
        let out = fencepost().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(
            script.contains("publish") && script.contains("deploy"),
            "{shell}"
        );
    }
}

#[test]
fn new_writes_an_item_that_validates_and_never_overwrites() {
    let s = fixture("features");
    let w = s.json(&[
        "new",
        "advisories",
        "--title",
        "Heap overflow in the decoder",
        "--now",
        BEFORE,
    ]);
    assert_eq!(
        w["path"], "content/advisories/heap-overflow-in-the-decoder.md",
        "{w}"
    );
    let text = std::fs::read_to_string(s.path(w["path"].as_str().unwrap())).unwrap();
    assert!(
        text.contains("severity = \"low\""),
        "the first allowed value: {text}"
    );
    assert!(
        text.contains("publish_at = 2026-12-02T00:00:00"),
        "a day ahead: {text}"
    );
    let again = s
        .cmd(&[
            "new",
            "advisories",
            "--title",
            "Heap overflow in the decoder",
        ])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists already"));
    assert_eq!(
        std::fs::read_to_string(s.path(w["path"].as_str().unwrap())).unwrap(),
        text
    );
    let p = s.json(&["new", "posts", "--id", "my-post", "--now", BEFORE]);
    let text = std::fs::read_to_string(s.path(p["path"].as_str().unwrap())).unwrap();
    assert!(text.contains("tags = []"), "{text}");
    // Both files are items their collections accept: the run names no invalid file.
    let r = s.publish(BEFORE);
    assert_eq!(r["invalid"], serde_json::json!([]), "{r}");
    // Integer ids: the next free one.
    let w = fixture("word_puzzle");
    let n = w.json(&["new", "words", "--now", BEFORE]);
    assert!(n["id"].as_str().unwrap().parse::<i64>().unwrap() > 1, "{n}");
    let bad = w.cmd(&["new", "nope"]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no collection"));
}

/// Guards: issue 49.3 — no command publishes by surprise. A `--now` two days ahead of the
/// real clock on `publish` is refused before anything is written, pointing at `build
/// --preview` (which takes it and writes nothing public); with `--allow-future-now` (a
/// simulated calendar) it publishes, and the audit entry says the instant was given by hand;
/// a plain `deploy` of that ledger is then refused (its publication lies in the future),
/// and `--allow-future-now` lets a test's bucket take it.
#[test]
fn a_future_now_publishes_nothing_by_surprise() {
    let s = TestSite::new();
    let real = chrono::Utc::now();
    let day = (real + chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    s.item(1, &day);
    let later =
        (real + chrono::Duration::days(2)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let plain = |args: &[&str]| {
        let mut c = s.cmd(args);
        c.env_remove("FENCEPOST_ALLOW_FUTURE_NOW");
        c.output().unwrap()
    };
    let out = plain(&["publish", "--json", "--now", &later]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("ahead of this machine's clock") && m.contains("build --preview"),
        "{m}"
    );
    assert_eq!(s.revision(), 0, "nothing was written");
    let out = plain(&["build", "--preview", "--json", "--now", &later]);
    assert_success(&out);
    assert!(
        !s.path("public/current").exists(),
        "a preview is nothing public"
    );
    // A harness simulating the calendar.
    let out = plain(&["publish", "--json", "--allow-future-now", "--now", &later]);
    assert_success(&out);
    let log = s.json(&["log", "--limit", "5"]);
    let detail: Value =
        serde_json::from_str(log["entries"][0]["detail"].as_str().unwrap()).unwrap();
    assert_eq!(detail["now_given"], true, "{log}");
    let human = String::from_utf8(plain(&["log"]).stdout).unwrap();
    assert!(human.contains("--now given by hand"), "{human}");
    // Its build, deployed by a plain deploy, would serve the item two days early.
    s.json(&["build", "--now", &later]);
    let bucket = tempfile::tempdir().unwrap();
    let url = format!("file://{}", bucket.path().display());
    let out = plain(&["deploy", "--to", &url, "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ahead of this machine's clock"),
        "{v}"
    );
    assert_eq!(
        std::fs::read_dir(bucket.path()).unwrap().count(),
        0,
        "nothing uploaded"
    );
    let out = plain(&["deploy", "--to", &url, "--json", "--allow-future-now"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Guards: issue 49.6 — the build's word on the next embargo says plainly that nothing goes
/// live until a publish runs after the instant (it used to say "the site changes then
/// without a write", which read as if it would).
#[test]
fn the_next_embargo_line_says_a_publish_must_run_after_it() {
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-12-05");
    let out = s
        .cmd(&["publish", "--build", "--now", NOW])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("nothing goes live by itself")
            && text.contains("fencepost publish --build` after then"),
        "{text}"
    );
}

/// Guards: issue 49 (point 5): deploying a site whose `base_url` is still `localhost` warns
/// by name (its feeds, sitemap and robots.txt would point there); `deploy --strict` refuses
/// it before anything is uploaded, and deploys once `base_url` is the public URL.
#[test]
fn deploying_a_localhost_base_url_warns_and_strict_refuses() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", "2026-12-01T00:00:00Z"]);
    let strict_bucket = tempfile::tempdir().unwrap();
    let to = format!("file://{}", strict_bucket.path().display());
    let out = s
        .cmd(&["deploy", "--json", "--strict", "--to", &to])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("http://localhost:8080/")
            && m.contains("feeds, sitemap, robots.txt")
            && m.contains("Nothing was uploaded"),
        "{m}"
    );
    assert_eq!(
        std::fs::read_dir(strict_bucket.path()).unwrap().count(),
        0,
        "nothing uploaded"
    );
    let bucket = tempfile::tempdir().unwrap();
    let to = format!("file://{}", bucket.path().display());
    let out = s.cmd(&["deploy", "--json", "--to", &to]).output().unwrap();
    assert_success(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("base_url is a local address") && err.contains("robots.txt"),
        "{err}"
    );
    let config = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &config.replace("http://localhost:8080/", "https://example.org/"),
    );
    s.json(&["build", "--now", "2026-12-01T00:00:00Z"]);
    let out = s
        .cmd(&["deploy", "--json", "--strict", "--to", &to])
        .output()
        .unwrap();
    assert_success(&out);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("local address"));
}

/// Guards: issue 49 (point 4): `status` before anything was published writes nothing (no
/// ledger appears; it says there is none yet), and `serve --from URL` runs outside a site
/// folder, serving the bucket.
#[test]
fn status_writes_nothing_and_serve_from_runs_outside_a_site() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let v = s.json(&["status"]);
    assert_eq!(
        (v["ledger_id"].as_str(), v["revision"].as_i64()),
        (Some(""), Some(0)),
        "{v}"
    );
    assert!(!s.path(".fencepost").exists(), "status made a ledger");
    let out = s.cmd(&["status"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("no ledger yet"));
    s.json(&["publish", "--build", "--now", "2026-12-01T00:00:00Z"]);
    assert!(s.json(&["status"])["ledger_id"]
        .as_str()
        .is_some_and(|id| !id.is_empty()));
    let bucket = tempfile::tempdir().unwrap();
    let to = format!("file://{}", bucket.path().display());
    s.json(&["deploy", "--to", &to]);
    let elsewhere = tempfile::tempdir().unwrap();
    let srv = s.serve_in_with(elsewhere.path(), &["--from", &to]);
    let r = srv.get("/answers/1/");
    assert_eq!(r.status, 200, "{}", r.text());
    // Still refused where there is a site folder whose config is broken.
    std::fs::write(elsewhere.path().join("fencepost.toml"), "base_url = 3\n").unwrap();
    let out = fencepost()
        .arg("--site")
        .arg(elsewhere.path())
        .args(["serve", "--from", &to, "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// Guards: issue 49 (point 4): with a bucket ledger or target and no credentials in the
/// environment, every command says so by name at once — never an instance-metadata address
/// after a wait.
#[test]
fn a_bucket_without_credentials_is_named_at_once() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let bare = |args: &[&str], ledger: Option<&str>| {
        let mut c = s.cmd(args);
        if let Some(l) = ledger {
            c.env("FENCEPOST_LEDGER", l);
        }
        for k in [
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
            "FENCEPOST_AWS_INSTANCE_METADATA",
        ] {
            c.env_remove(k);
        }
        c.env("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
            .env("AWS_REGION", "us-east-1");
        let started = std::time::Instant::now();
        let out = c.output().unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{args:?} waited"
        );
        out
    };
    for args in [
        vec!["status", "--json"],
        vec!["publish", "--json", "--now", "2026-12-01T00:00:00Z"],
    ] {
        let out = bare(&args, Some("s3://nobody/ledger"));
        assert!(!out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("no credentials for s3://nobody") && text.contains("AWS_ACCESS_KEY_ID"),
            "{args:?}: {text}"
        );
        assert!(
            !text.contains("169.254") && !text.contains("metadata address"),
            "{text}"
        );
    }
    s.json(&["publish", "--build", "--now", "2026-12-01T00:00:00Z"]);
    let out = bare(&["deploy", "--json", "--to", "s3://nobody/www"], None);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no credentials for s3://nobody"),
        "{v}"
    );
}

/// Guards: issue 49 (point 6): a preview shows an embargoed item's instant on the clocks of
/// its collection's time zone as well as in UTC.
#[test]
fn the_preview_shows_an_embargo_in_the_sites_time_zone_too() {
    let s = TestSite::new();
    let config = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &config.replace("[publish]\n", "[publish]\ntimezone = \"Europe/Berlin\"\n"),
    );
    s.item(3, "2026-12-20");
    s.json(&["build", "--preview", "--now", "2026-12-01T00:00:00Z"]);
    let page = std::fs::read_to_string(s.path(".fencepost/preview/answers/3/index.html")).unwrap();
    assert!(
        page.contains("Embargoed until 2026-12-20T23:10:00Z (2026-12-21 00:10 CET)"),
        "{page}"
    );
}

/// Guards: issue 49 (point 4): `fencepost new` works while the ledger cannot be reached (a
/// bucket ledger without credentials here): it proposes an id from the files it sees, says
/// on stderr why it could not ask the ledger, and writes the file.
#[test]
fn new_works_while_the_ledger_cannot_be_reached() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let mut c = s.cmd(&["new", "answers", "--json"]);
    for k in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "FENCEPOST_AWS_INSTANCE_METADATA",
    ] {
        c.env_remove(k);
    }
    c.env("FENCEPOST_LEDGER", "s3://nobody/ledger")
        .env("AWS_ENDPOINT_URL", "http://127.0.0.1:9");
    let out = c.output().unwrap();
    assert_success(&out);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["path"]
            .as_str()
            .unwrap()
            .ends_with("content/answers/2.md"),
        "{v}"
    );
    assert!(s.path("content/answers/2.md").exists());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the ledger cannot be read") && err.contains("no credentials"),
        "{err}"
    );
}
