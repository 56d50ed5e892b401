//! A deploy killed anywhere is finished by the next runner, whoever it is — a fresh CI
//! runner that never had the files the killed run's plan froze included (issue 77.5). The
//! ledger lives in the bucket, as `init --ci` makes it; each runner is a fresh checkout.

use crate::common::*;
use serde_json::Value;

/// The bucket (a folder) holding the ledger and the site, and its environment.
struct Ci {
    repo: TestSite,
    _dir: tempfile::TempDir,
    env: Vec<(String, String)>,
    www: String,
}

impl Ci {
    fn new() -> Ci {
        let dir = tempfile::tempdir().unwrap();
        let repo = TestSite::new();
        let ledger = format!("file://{}/ledger", dir.path().display());
        Ci {
            repo,
            env: vec![("FENCEPOST_LEDGER".into(), ledger)],
            www: format!("file://{}/www", dir.path().display()),
            _dir: dir,
        }
    }

    /// `fencepost ARGS --json` in `runner` with `failpoints`: (exit code, JSON).
    fn run(&self, runner: &TestSite, args: &[&str], failpoints: &str) -> (i32, Value) {
        let mut c = runner.cmd(args);
        c.arg("--json").envs(self.env.clone());
        if !failpoints.is_empty() {
            c.env("FAILPOINTS", failpoints);
        }
        let out = c.output().unwrap();
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out.status.code().unwrap_or(-1), v)
    }

    /// What CI runs in a fresh checkout: publish and build, then deploy (killed at `kill`).
    fn runner(&self, now: &str, kill: &str) -> (i32, Value) {
        let runner = self.repo.checkout();
        let (code, v) = self.run(&runner, &["publish", "--build", "--now", now], "");
        assert_eq!(code, 0, "{v}");
        self.run(&runner, &["deploy", "--to", &self.www, "--now", now], kill)
    }

    /// The revision the bucket's pointer names, through `serve --from`.
    fn live(&self) -> Value {
        let srv = self.repo.serve_env(&["--from", &self.www], &self.env);
        let r = srv.get("/");
        serde_json::json!({"status": r.status, "revision": r.header("x-revision")})
    }
}

/// Killed before its pointer moved — with the manifest uploaded (every object there), or
/// before it (objects missing) — a deploy is finished or closed by the next fresh runner,
/// whose own newer revision then goes live: no red job, no attempt counted for files the
/// runner never had, nothing parked, and the four runners after it deploy as usual.
#[cfg(feature = "failpoints")]
#[test]
fn a_deploy_killed_before_its_pointer_moved_is_finished_by_the_next_fresh_runner() {
    for (round, kill) in [
        ("a", "deploy.before_pointer=panic"),
        ("b", "deploy.after_blobs=panic"),
    ] {
        let ci = Ci::new();
        ci.repo.item(1, "2026-11-01");
        let (code, v) = ci.runner(NOW, kill);
        assert_ne!(code, 0, "{round}: killed: {v}");
        ci.repo.item(2, "2026-11-02");
        let (code, v) = ci.runner("2026-12-01T00:05:00Z", "");
        assert_eq!(code, 0, "{round}: the next fresh runner: {v}");
        assert_eq!(v["outcome"], "deployed", "{round}: {v}");
        let live = ci.live();
        assert_eq!(live["status"], 200, "{round}: {live}");
        assert!(
            live["revision"].as_str().unwrap().starts_with("2-"),
            "{round}: the runner's own revision is live: {live}"
        );
        for n in 3..=6 {
            ci.repo.item(n, &format!("2026-11-0{n}"));
            let now = format!("2026-12-01T00:{:02}:00Z", n * 5);
            let (code, v) = ci.runner(&now, "");
            assert_eq!(code, 0, "{round}: runner {n}: {v}");
        }
        let status = ci.run(&ci.repo.checkout(), &["status"], "").1;
        let parked = status["deploys"].as_array().map_or(0, |d| d.len());
        assert_eq!(parked, 0, "{round}: nothing pending or parked: {status}");
    }
}
