//! One ledger, one site — held against the sites it exists to stop: a new site pointed at an
//! older site's ledger (made before site ids), an intruder's id already in a ledger, a site
//! made from a copy of another's `fencepost.toml` (same id, same ledger). The adversary
//! controls its own checkout and config; it must never claim, or withdraw, the other site.
//! The ledger is a bucket's (a folder), as `init --ci` makes it.

use crate::common::*;
use serde_json::Value;

/// A ledger in a bucket (a folder) that every site of a test is pointed at.
struct Shared {
    _dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Shared {
    fn new() -> Shared {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}/ledger", dir.path().display());
        Shared {
            env: vec![("FENCEPOST_LEDGER".into(), url)],
            _dir: dir,
        }
    }

    /// `fencepost ARGS --json` in `site`: (exit code, JSON, stderr).
    fn run(&self, site: &TestSite, args: &[&str]) -> (i32, Value, String) {
        let out = site
            .cmd(args)
            .arg("--json")
            .envs(self.env.clone())
            .output()
            .unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), v, err)
    }

    /// `run`, which must exit 0.
    fn ok(&self, site: &TestSite, args: &[&str]) -> Value {
        let (code, v, err) = self.run(site, args);
        assert_eq!(code, 0, "{args:?}: {v} {err}");
        v
    }

    fn published(&self, site: &TestSite) -> i64 {
        self.ok(site, &["status"])["items"]["published"]
            .as_i64()
            .unwrap()
    }
}

/// A site made before site ids, with items 1 and 2 public in the shared ledger.
fn an_old_site(l: &Shared) -> TestSite {
    let old = TestSite::new();
    old.set_site_id(None);
    old.item(1, "2026-11-01").item(2, "2026-11-02");
    l.ok(&old, &["publish", "--build", "--now", NOW]);
    old
}

fn message(v: &Value) -> String {
    v["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Issue 77.2: a new site (with an id) pointed at an older site's ledger (no id, history)
/// takes nothing: its commands are refused before anything is written, naming the items its
/// checkout lacks, and the old site publishes as before. The old site adding an id of its own
/// claims its ledger (its checkout holds every item's file); the new site is then refused as
/// another site.
#[test]
fn a_ledger_with_history_is_never_claimed_by_another_site() {
    let l = Shared::new();
    let old = an_old_site(&l);
    let new = TestSite::new();
    new.item(7, "2026-11-07");
    for args in [&["publish", "--build", "--now", NOW][..], &["status"][..]] {
        let (code, v, _) = l.run(&new, args);
        assert_eq!(code, 1, "{args:?}: {v}");
        let m = message(&v);
        if args[0] == "publish" {
            assert!(
                m.contains("has history")
                    && m.contains("lacks the files of 2")
                    && m.contains("Nothing was written"),
                "{m}"
            );
        }
    }
    assert!(!new.path("public/current").exists());
    // The old site is untouched, and still its ledger's.
    l.ok(&old, &["publish", "--build", "--now", NOW]);
    assert_eq!(l.published(&old), 2);
    old.set_site_id(Some("the-old-site"));
    l.ok(&old, &["publish", "--build", "--now", NOW]);
    let (code, v, _) = l.run(&new, &["publish", "--now", NOW]);
    assert_eq!(code, 1);
    assert!(
        message(&v).contains("belongs to site \"the-old-site\""),
        "{v}"
    );
    assert_eq!(l.published(&old), 2);
}

/// Issue 77.2: an id another site put into a ledger after its history began (here by an
/// explicit claim) is never proposed to the ledger's own site: the refusal names when it was
/// claimed and the way back, `ledger claim --replace`, which the old site takes (naming the id
/// it replaces) — and publishes as before, nothing withdrawn.
#[test]
fn a_refusal_never_proposes_an_id_claimed_after_the_ledgers_history_began() {
    let l = Shared::new();
    let old = an_old_site(&l);
    let intruder = TestSite::new();
    let theirs = intruder.site_id().unwrap();
    let claimed = l.ok(&intruder, &["ledger", "claim"]);
    assert_eq!(claimed["site"], theirs.as_str(), "{claimed}");
    let (code, v, _) = l.run(&old, &["publish", "--now", NOW]);
    assert_eq!(code, 1, "{v}");
    let m = message(&v);
    assert!(
        m.contains("claimed by another site at publication revision"),
        "{m}"
    );
    assert!(
        m.contains("do not adopt") && m.contains(&format!("--replace {theirs}")),
        "{m}"
    );
    assert!(
        !m.contains(&format!("site_id = \"{theirs}\"")),
        "never proposed: {m}"
    );
    old.set_site_id(Some("the-old-site"));
    let (code, v, _) = l.run(&old, &["ledger", "claim"]);
    assert_eq!(code, 1, "taken only by naming the id it replaces: {v}");
    let back = l.ok(&old, &["ledger", "claim", "--replace", &theirs]);
    assert_eq!(back["was"], theirs.as_str(), "{back}");
    let r = l.ok(&old, &["publish", "--build", "--now", NOW]);
    assert!(r["withdrawn"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(l.published(&old), 2);
}

/// Issue 77.3: a new site made from a copy of another's fencepost.toml (same id, same ledger,
/// another base_url, its own content but for the one sample item they share) withdraws
/// nothing: the run that would take down most of the public items is refused by count (exit
/// 3, named under `invalid`), and the other base_url is warned about by name. Deleting one
/// file is an ordinary edit; `--allow-mass-withdrawal` withdraws on purpose.
#[test]
fn a_copy_of_another_sites_config_withdraws_nothing() {
    let l = Shared::new();
    let a = TestSite::new();
    for id in 1..=8 {
        a.item(id, &format!("2026-11-0{id}"));
    }
    let base = |s: &TestSite, url: &str| {
        let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
        let toml: String = (toml.lines())
            .map(|line| match line.starts_with("base_url") {
                true => format!("base_url = \"{url}\"\n"),
                false => format!("{line}\n"),
            })
            .collect();
        s.write("fencepost.toml", &toml);
    };
    base(&a, "https://a.example/");
    l.ok(&a, &["publish", "--build", "--now", NOW]);
    // One file deleted is an edit.
    std::fs::remove_file(a.path("content/answers/8.md")).unwrap();
    let r = l.ok(&a, &["publish", "--now", NOW]);
    assert_eq!(r["withdrawn"], serde_json::json!([8]), "{r}");
    let b = TestSite::new();
    b.write(
        "fencepost.toml",
        &std::fs::read_to_string(a.path("fencepost.toml")).unwrap(),
    );
    base(&b, "https://b.example/");
    b.item(1, "2026-11-01").item(9, "2026-11-09");
    let (code, r, err) = l.run(&b, &["publish", "--now", NOW]);
    assert_eq!(code, HELD, "{r} {err}");
    assert!(r["withdrawn"].as_array().unwrap().is_empty(), "{r}");
    let refusal = r["invalid"][0]["error"].as_str().unwrap();
    assert!(
        refusal.contains("withdraw 6 of the site's 7 public items"),
        "{r}"
    );
    assert!(
        r["warnings"][0]
            .as_str()
            .unwrap()
            .contains("https://a.example/"),
        "{r}"
    );
    assert!(err.contains("https://a.example/"), "{err}");
    assert_eq!(l.published(&a), 8, "a's seven, and b's one");
    let r = l.ok(&b, &["publish", "--allow-mass-withdrawal", "--now", NOW]);
    assert_eq!(r["withdrawn"].as_array().unwrap().len(), 6, "{r}");
}

/// Issue 78.6. The ledger in a folder bucket (`file:///…/b/site/ledger`): a deploy over the
/// folder around it is refused under every spelling — percent-encoded (`%73ite`), through a
/// symbolic link to it, and (where the file system folds case) in another case — as the
/// plain spelling always was; nothing is written there. A folder beside it deploys.
#[test]
fn the_ledger_stays_private_under_every_spelling_of_a_target() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let b = tempfile::tempdir().unwrap();
    let site = b.path().join("site");
    let ledger = format!("file://{}/ledger", site.display());
    let env = [("FENCEPOST_LEDGER", ledger.as_str())];
    let run = |args: &[&str]| s.cmd(args).envs(env).output().unwrap();
    assert!(run(&["publish", "--build", "--now", NOW]).status.success());
    std::os::unix::fs::symlink(&site, b.path().join("link")).unwrap();
    let folds = b.path().join("SITE").exists();
    let mut spellings = vec![
        format!("file://{}/site", b.path().display()),
        format!("file://{}/%73ite", b.path().display()),
        format!("file://{}/link", b.path().display()),
        format!("file://{}/link/", b.path().display()),
    ];
    if folds {
        spellings.push(format!("file://{}/SITE", b.path().display()));
    }
    for to in &spellings {
        let out = run(&["deploy", "--to", to, "--now", NOW]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{to}: deployed");
        assert!(err.contains("would hold the ledger"), "{to}: {err}");
        assert!(!site.join("current").exists() && !site.join("objects").exists());
    }
    let beside = format!("file://{}/www", b.path().display());
    let out = run(&["deploy", "--to", &beside, "--now", NOW]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 78.9. `ledger copy` without `--from` copies the ledger every other command uses —
/// here the one `FENCEPOST_LEDGER` names, in a bucket — not `ledger.path` (which it used to
/// copy whatever the environment said).
#[test]
fn ledger_copy_copies_the_configured_ledger() {
    let s = TestSite::new();
    for n in 1..=3 {
        s.item(n, &format!("2026-11-0{n}"));
    }
    let b = tempfile::tempdir().unwrap();
    let ledger = format!("file://{}/ledger", b.path().display());
    let env = [("FENCEPOST_LEDGER", ledger.as_str())];
    let run = |args: &[&str]| {
        let out = s.cmd(args).arg("--json").envs(env).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code(), v)
    };
    assert_eq!(run(&["publish", "--now", NOW]).0, Some(0));
    assert!(!s.path(".fencepost/ledger.sqlite").exists());
    let to = format!("file://{}/copy", b.path().display());
    let (code, r) = run(&["ledger", "copy", "--to", &to]);
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["tables"]["items"], 3, "{r}");
    assert_eq!(r["verified"], true, "{r}");
}
