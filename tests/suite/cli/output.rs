//! Output manners: a pipe whose reader left, `--json` failures as one object on stdout, a
//! cause printed once.
use super::*;

/// Runs `fencepost --site <root> <args>` with stdout a pipe whose reader has gone away.
fn into_closed_pipe(s: &TestSite, args: &[&str]) -> (Option<i32>, String) {
    let mut child = fencepost()
        .arg("--site")
        .arg(s.root())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn output_piped_into_a_reader_that_left_ends_quietly() {
    let s = TestSite::new();
    for i in 1..=3 {
        s.item(i, &format!("2026-11-0{i}"));
    }
    s.publish(NOW);
    for args in [
        vec!["status"],
        vec!["status", "--json"],
        vec!["log"],
        vec!["log", "--json"],
        vec!["verify"],
        vec!["build", "--now", NOW],
    ] {
        let (code, stderr) = into_closed_pipe(&s, &args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Runs a failing command with `--json`: (exit code, the one JSON object on stdout, stderr).
fn failing_json(s: &TestSite, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = s.cmd(args).arg("--json").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{args:?}: one JSON object on stdout, got {stdout:?}"
    );
    let v: Value = serde_json::from_str(lines[0]).unwrap();
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn with_json_a_failure_is_one_object_naming_where_and_the_human_message_stays_on_stderr() {
    let s = TestSite::new();
    // A bad config value: the file and the key.
    let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &format!("{toml}\n[serve]\npointer_hot_ms = 1\n"),
    );
    let (code, v, stderr) = failing_json(&s, &["status"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["error"]["kind"], "config", "{v}");
    assert_eq!(v["error"]["key"], "serve.pointer_hot_ms", "{v}");
    assert!(
        v["error"]["file"]
            .as_str()
            .unwrap()
            .ends_with("fencepost.toml"),
        "{v}"
    );
    assert!(stderr.contains("serve.pointer_hot_ms"), "{stderr}");
    s.write("fencepost.toml", &toml);
    // A template that does not parse holds the pages that use it (the held status, 3), each
    // named with the file; the rest of the site is built.
    s.publish(NOW);
    let page = std::fs::read_to_string(s.path("templates/index.html")).unwrap();
    s.write("templates/index.html", "{% if %}");
    let (code, v, stderr) = failing_json(&s, &["build", "--now", NOW]);
    assert_eq!(code, Some(3), "{v}");
    let held = &v["held_pages"][0];
    assert_eq!(held["path"], "index.html", "{v}");
    assert_eq!(held["template"], "templates/index.html", "{v}");
    assert!(
        held["why"]
            .as_str()
            .unwrap()
            .contains("templates/index.html"),
        "{v}"
    );
    assert!(stderr.contains("index.html"), "{stderr}");
    s.write("templates/index.html", &page);
    // A deploy target that cannot be: the URL.
    s.json(&["build", "--now", NOW]);
    let (code, v, _) = failing_json(
        &s,
        &["deploy", "--to", "ftp://example.invalid/x", "--now", NOW],
    );
    assert_eq!(code, Some(1));
    assert_eq!(v["error"]["kind"], "deploy", "{v}");
    assert_eq!(v["error"]["url"], "ftp://example.invalid/x", "{v}");
    // A command line clap refuses: kind "usage", clap's own exit status.
    let (code, v, stderr) = failing_json(&s, &["serve", "--bind", "nonsense"]);
    assert_eq!(code, Some(2));
    assert_eq!(v["error"]["kind"], "usage", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("--bind"),
        "{v}"
    );
    assert!(stderr.contains("--bind"), "{stderr}");
    // Help is not a failure: no JSON error.
    let out = s.cmd(&["--help", "--json"]).output().unwrap();
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\"error\""));
}

#[test]
fn an_errors_cause_is_printed_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = fencepost()
        .arg("--site")
        .arg(dir.path())
        .arg("status")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("fencepost init DIR"), "{stderr}");
}
