//! Issue 22: `fencepost run` — every page live at its instant. Each test drives the real
//! binary as separate long-running OS processes against real SQLite or PostgreSQL and moto
//! over HTTP, and reads pages over HTTP from the origins. Needs `--features failpoints`
//! (the test clock, stalls), moto and PostgreSQL (`scripts/test` installs them).
// The tests that crash processes at fail points need `--features failpoints`; without it
// their helpers go unused.
#![cfg_attr(not(feature = "failpoints"), allow(unused_imports, dead_code))]
use crate::common::*;
use chrono::{DateTime, SecondsFormat, Utc};
use fencepost_ledger::items::State;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod ahead;
mod health;
mod hosts;
mod instants;
mod signals;
mod warm;

/// The embargo-lag bound the tests hold a small site to (the target at 10,000 items
/// is 1 s; `scripts/bench run` measures the figures).
const TARGET: Duration = Duration::from_millis(1000);

/// The timing tests run one at a time: two of them at once on two cores would measure each
/// other.
static TIMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn timing() -> std::sync::MutexGuard<'static, ()> {
    TIMING.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running `fencepost run --json`: its JSON lines arrive on a channel.
struct Running {
    child: Child,
    lines: mpsc::Receiver<Value>,
    first: Value,
    stderr: std::path::PathBuf,
}

impl Running {
    fn start(s: &TestSite, args: &[&str], env: &[(String, String)]) -> Running {
        let stderr = s.path(&format!(
            "run-{}.err",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let mut c = fencepost();
        c.arg("--site").arg(s.root());
        Running::spawn(c, args, env, stderr)
    }

    /// `cd <site> && fencepost run <args> --json`, as the shipped systemd unit starts it.
    fn start_inside(s: &TestSite, args: &[&str]) -> Running {
        let mut c = fencepost();
        c.current_dir(s.root());
        Running::spawn(c, args, &[], s.path("run-inside.err"))
    }

    fn spawn(
        mut c: std::process::Command,
        args: &[&str],
        env: &[(String, String)],
        stderr: std::path::PathBuf,
    ) -> Running {
        c.arg("run")
            .args(args)
            .arg("--json")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).unwrap());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in std::io::BufReader::new(out).lines() {
                let Ok(l) = l else { break };
                let v: Value =
                    serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let first = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| {
                panic!(
                    "run did not start: {}",
                    std::fs::read_to_string(&stderr).unwrap_or_default()
                )
            });
        assert!(first.get("listening").is_some(), "{first}");
        Running {
            child,
            lines,
            first,
            stderr,
        }
    }

    fn serve_addr(&self) -> String {
        self.first["listening"].as_str().unwrap().to_string()
    }

    fn next_cycle(&self, within: Duration) -> Value {
        self.lines
            .recv_timeout(within)
            .unwrap_or_else(|_| panic!("no cycle within {within:?}: {}", self.log()))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// SIGTERM; waits (at most `within`) for the exit: (status, the time it took, the cycles
    /// printed since the last read).
    fn terminate(mut self, within: Duration) -> (std::process::ExitStatus, Duration, Vec<Value>) {
        let started = Instant::now();
        signal(self.pid(), libc::SIGTERM);
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            if started.elapsed() > within {
                let _ = self.child.kill();
                panic!(
                    "run did not exit within {within:?} of SIGTERM: {}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let took = started.elapsed();
        let rest = self.lines.iter().collect();
        (status, took, rest)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on a child this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Items 1 to `n` ("Item <id>."), each due an hour ago.
fn items_due_an_hour_ago(s: &TestSite, n: i64) {
    let past = format!(
        "publish_at = {}\n",
        rfc3339(Utc::now() - chrono::Duration::hours(1))
    );
    for id in 1..=n {
        s.item_with(id, &format!("2026-11-0{id}"), &past, &format!("Item {id}."));
    }
}

/// `content/answers/<id>.md` due at `at` exactly (`publish_at`).
fn item_at(s: &TestSite, id: i64, at: DateTime<Utc>) {
    s.item_with(
        id,
        "2026-11-01",
        &format!("publish_at = {}\n", rfc3339(at)),
        &format!("Body of item {id}."),
    );
}

/// Polls `/answers/<id>/` on every origin until each item answers 200 there, checking that
/// none answers before its instant. Returns, per origin, each item's delay past its instant.
fn watch_items(
    origins: &[String],
    due: &BTreeMap<i64, DateTime<Utc>>,
    give_up: Duration,
) -> Vec<BTreeMap<i64, Duration>> {
    let started = Instant::now();
    let mut seen: Vec<BTreeMap<i64, Duration>> = vec![BTreeMap::new(); origins.len()];
    while seen.iter().any(|s| s.len() < due.len()) {
        assert!(
            started.elapsed() < give_up,
            "not every item went live within {give_up:?}: {seen:?}"
        );
        for (o, addr) in origins.iter().enumerate() {
            for (&id, &at) in due {
                if seen[o].contains_key(&id) {
                    continue;
                }
                let Ok(r) = try_http(addr, "GET", &format!("/answers/{id}/"), &[]) else {
                    continue;
                };
                let now = Utc::now();
                if r.status == 200 {
                    assert!(
                        now >= at,
                        "item {id} on {addr} live at {now}, before its instant {at}"
                    );
                    assert!(
                        r.text().contains(&format!("Body of item {id}.")),
                        "{}",
                        r.text()
                    );
                    seen[o].insert(id, (now - at).to_std().unwrap_or_default());
                } else {
                    // 503 until the origin's first build.
                    assert!(
                        matches!(r.status, 404 | 503),
                        "item {id} on {addr}: {}",
                        r.status
                    );
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    seen
}

fn assert_within(seen: &[BTreeMap<i64, Duration>], target: Duration) {
    for (o, s) in seen.iter().enumerate() {
        for (id, lag) in s {
            assert!(*lag <= target, "origin {o}: item {id} live {lag:?} after its instant (target {target:?}); all: {s:?}");
        }
    }
}

/// Every `lags[].item` of the cycles, counted.
fn lag_items(cycles: &[Value]) -> BTreeMap<i64, usize> {
    let mut n = BTreeMap::new();
    for c in cycles {
        for l in c["lags"].as_array().into_iter().flatten() {
            *n.entry(l["item"].as_i64().unwrap()).or_insert(0) += 1;
            assert!(
                l["lag_ms"].as_i64().unwrap() >= 0,
                "published before its instant: {l}"
            );
        }
    }
    n
}

fn drain(r: &Running, until: impl Fn(&BTreeMap<i64, usize>) -> bool, cycles: &mut Vec<Value>) {
    let started = Instant::now();
    while !until(&lag_items(cycles)) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "cycles so far: {cycles:?}"
        );
        if let Ok(c) = r.lines.recv_timeout(Duration::from_millis(200)) {
            cycles.push(c);
        }
    }
}

/// Appends `text` to the site's fencepost.toml.
fn configure(s: &TestSite, text: &str) {
    let p = s.path("fencepost.toml");
    std::fs::write(&p, std::fs::read_to_string(&p).unwrap() + "\n" + text).unwrap();
}

/// Each series has its value in the Prometheus text.
fn expect_metrics(text: &str, want: &[(&str, f64)]) {
    for (series, value) in want {
        assert_eq!(metric(text, series), Some(*value), "{series}: {text}");
    }
}

/// A metric's value in Prometheus text (the first sample line starting with `series`).
fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}
