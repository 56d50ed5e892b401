//! What the log promises, tried by the party it exists to check: the operator, who may change
//! an embargoed text just before its instant. The adversary controls the site, its ledger and
//! its deploys; the reader controls only the checkpoints it saved. A text is "committed before"
//! only if a checkpoint the reader saved holds its commitment.

use super::site::logged_site;
use crate::common::*;
use serde_json::Value;

/// Runs `fencepost ARGS --json`, whatever its exit status: (status, JSON, stderr).
fn run(s: &TestSite, args: &[&str]) -> (i32, Value, String) {
    let out = s.cmd(args).arg("--json").output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (
        out.status.code().unwrap_or(-1),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The reveal of `item` in a verify report.
fn reveal_of<'a>(report: &'a Value, item: &str) -> &'a Value {
    (report["reveals"].as_array().unwrap().iter())
        .find(|r| r["item"] == item)
        .unwrap_or_else(|| panic!("no reveal of {item}: {report}"))
}

/// Issue 77.1. The monitor saves the checkpoint the morning before; at 08:59 the operator
/// swaps the text of `posts/secret` (due 09:00) and deploys; at 09:00 it is revealed. The
/// swap is logged at 08:59 — before the instant — as a recommit naming the commitment it
/// replaces, blind as every commitment is. A reader with the morning's checkpoint is told,
/// by `tlog verify --since` and by `tlog watch` (exit 1, the item named), that the text was
/// fixed after it last looked; `watch` says so once. Without a saved checkpoint `verify`
/// says only what the log proves — committed N revisions before the reveal, recommitted —
/// and never "before their instant". An item first written after its instant is "committed
/// at its reveal", and late for a checkpoint saved before.
#[test]
fn a_text_swapped_before_its_instant_is_recommitted_and_the_reader_told() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    let bucket = format!("file://{}", s.path("bucket").display());
    let deploy = |now: &str| {
        s.json(&["publish", "--build", "--now", now]);
        s.json(&["deploy", "--to", &bucket, "--now", now]);
    };
    deploy("2026-12-01T12:05:00Z");
    let origin = s.serve(&["--from", &bucket]);
    let url = format!("http://{}/", origin.addr);
    let state = s.path("monitor");
    let watch = || {
        run(
            &s,
            &[
                "tlog",
                "watch",
                &url,
                "--vkey",
                &keys.vkey,
                "--state",
                state.to_str().unwrap(),
            ],
        )
    };
    assert_eq!(watch().0, 0);
    std::fs::copy(state.join("checkpoint"), s.path("morning")).unwrap();

    the_swap_is_logged_before_the_instant(&s, &url, &keys.vkey, &origin, &deploy);
    deploy("2026-12-02T09:00:00Z");
    let (code, since, stderr) = run(
        &s,
        &[
            "tlog",
            "verify",
            &url,
            "--vkey",
            &keys.vkey,
            "--since",
            s.path("morning").to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{since}");
    assert_eq!(
        since["late"],
        serde_json::json!(["posts/secret"]),
        "{since}"
    );
    assert!(
        stderr.contains("posts/secret") && stderr.contains("after you last looked"),
        "{stderr}"
    );
    let r = reveal_of(&since, "posts/secret");
    assert_eq!(r["in_saved_checkpoint"], false, "{r}");
    assert_eq!(r["superseded"].as_array().unwrap().len(), 1, "{r}");
    // The monitor: told once, with the item named; the next look starts from there.
    let (code, told, stderr) = watch();
    assert_eq!(code, 1, "{told}");
    assert!(stderr.contains("posts/secret"), "{stderr}");
    assert_eq!(watch().0, 0);

    without_a_checkpoint_verify_says_only_what_the_log_proves(&s, &url, &keys.vkey);
    an_item_written_after_its_instant_is_committed_at_its_reveal(&s, &url, &keys.vkey, &deploy);
}

/// A post first written after its instant is revealed with a commitment of the same build:
/// "committed at its reveal", and late for the checkpoint saved before it.
fn an_item_written_after_its_instant_is_committed_at_its_reveal(
    s: &TestSite,
    url: &str,
    vkey: &str,
    deploy: &dyn Fn(&str),
) {
    let saved = s.path("before-late");
    std::fs::copy(
        s.current_dir().join(".well-known/fencepost/log/checkpoint"),
        &saved,
    )
    .unwrap();
    s.write(
        "content/posts/late.md",
        "+++\ntitle = \"Late\"\npublish_at = 2026-12-01T00:00:00Z\n+++\n\nWritten after its instant.\n",
    );
    deploy("2026-12-02T09:30:00Z");
    let (code, r, _) = run(s, &["tlog", "verify", url, "--vkey", vkey]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(reveal_of(&r, "posts/late")["revisions_before"], 0, "{r}");
    let (code, r, _) = run(
        s,
        &[
            "tlog",
            "verify",
            url,
            "--vkey",
            vkey,
            "--since",
            saved.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{r}");
    assert_eq!(r["late"], serde_json::json!(["posts/late"]), "{r}");
}

/// 08:59: the text swapped and deployed, a minute before its instant — logged there, as a
/// recommit, and nothing of the item public.
fn the_swap_is_logged_before_the_instant(
    s: &TestSite,
    url: &str,
    vkey: &str,
    origin: &Server,
    deploy: &dyn Fn(&str),
) {
    // 08:59: the text swapped and deployed, a minute before its instant.
    let secret = std::fs::read_to_string(s.path("content/posts/secret.md")).unwrap();
    s.write(
        "content/posts/secret.md",
        &secret.replace("The airship goes up.", "The balloon goes up."),
    );
    deploy("2026-12-02T08:59:00Z");
    let (code, before, _) = run(s, &["tlog", "verify", url, "--vkey", vkey]);
    assert_eq!(code, 0, "{before}");
    assert_eq!(
        before["entries"]["recommit"], 1,
        "logged before the instant: {before}"
    );
    let revealed = before["reveals"].as_array().unwrap();
    assert!(
        !revealed.iter().any(|r| r["item"] == "posts/secret"),
        "{before}"
    );
    assert!(!origin.get("/").text().contains("balloon"));
}

/// Without a saved checkpoint: what the log proves, never "before their instant".
fn without_a_checkpoint_verify_says_only_what_the_log_proves(s: &TestSite, url: &str, vkey: &str) {
    // Without a saved checkpoint: what the log proves, never "before their instant".
    let out = s
        .cmd(&["tlog", "verify", url, "--vkey", vkey])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("before their instant"), "{text}");
    assert!(
        text.contains("posts/secret: committed at entry") && text.contains("recommitted at entry"),
        "{text}"
    );
}

/// Issue 78.4. The operator makes a new key for the same origin (a lost key file, a
/// rotation): readers hold the old verifier key, so to them it is a new log. A build over a
/// revision whose log the old key signed refuses, naming both key ids; a revision built
/// without one to compare (its folder cleared) is refused by the deploy over the bucket the
/// old key's log is live in — before anything is uploaded — and the live pointer stays.
#[test]
fn a_new_key_under_the_same_origin_is_refused_by_build_and_deploy() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    let bucket = format!("file://{}", s.path("bucket").display());
    s.json(&["publish", "--build", "--now", "2026-12-01T12:05:00Z"]);
    s.json(&["deploy", "--to", &bucket, "--now", "2026-12-01T12:05:00Z"]);
    let live = std::fs::read(s.path("bucket/current")).unwrap();
    let again = fencepost_tlog::note::generate("example.org/features").unwrap();
    s.write(".tlog-skey", &format!("{}\n", again.skey));
    let hello = std::fs::read_to_string(s.path("content/posts/hello.md")).unwrap();
    s.write("content/posts/hello.md", &format!("{hello}\nEdited.\n"));
    let err = s.failing(&["publish", "--build", "--now", "2026-12-02T09:00:00Z"]);
    assert!(err.contains("the log's signing key changed"), "{err}");
    std::fs::remove_dir_all(s.path("public")).unwrap();
    s.json(&["build", "--now", "2026-12-02T09:00:00Z"]);
    let err = s.failing(&["deploy", "--to", &bucket, "--now", "2026-12-02T09:00:00Z"]);
    assert!(err.contains("the log's signing key changed"), "{err}");
    assert_eq!(std::fs::read(s.path("bucket/current")).unwrap(), live);
}

/// Issue 78.4. With the log turned off, a rollback to a revision built while it was on
/// serves no log — not the shorter one it was built with, which a reader who saw the later
/// log would take for a log rewritten — in the local folder and in a bucket.
#[test]
fn a_rollback_with_the_log_off_never_serves_a_shorter_log() {
    let keys = fencepost_tlog::note::generate("example.org/features").unwrap();
    let s = logged_site(&keys);
    let bucket = format!("file://{}", s.path("bucket").display());
    let first = s.json(&["publish", "--build", "--now", "2026-12-01T12:05:00Z"]);
    s.json(&["deploy", "--to", &bucket, "--now", "2026-12-01T12:05:00Z"]);
    let hello = std::fs::read_to_string(s.path("content/posts/hello.md")).unwrap();
    s.write("content/posts/hello.md", &format!("{hello}\nEdited.\n"));
    s.json(&["publish", "--build", "--now", "2026-12-02T09:00:00Z"]);
    s.json(&["deploy", "--to", &bucket, "--now", "2026-12-02T09:00:00Z"]);
    let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let off = toml
        .replace("log = true", "log = false")
        .replace("commit_before_reveal = true\n", "");
    s.write("fencepost.toml", &off);
    let dir = format!(
        "{}-{}",
        first["build"]["revision"],
        first["build"]["build"].as_str().unwrap()
    );
    s.json(&["rollback", &dir]);
    let checkpoint = s.current_dir().join(".well-known/fencepost/log/checkpoint");
    assert!(
        !checkpoint.exists(),
        "the rolled-back folder serves its old log"
    );
    assert!(s.current_file("posts/hello/index.html").len() > 0);
    let revision = first["build"]["revision"].to_string();
    let r = s.json(&["rollback", &revision, "--to", &bucket]);
    assert_eq!(r["outcome"], "deployed", "{r}");
    let origin = s.serve(&["--from", &bucket]);
    assert_eq!(
        origin.get("/.well-known/fencepost/log/checkpoint").status,
        404
    );
    assert_eq!(origin.get("/posts/hello/").status, 200);
}
