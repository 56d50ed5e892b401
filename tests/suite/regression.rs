//! Regressions, each through the real binary, each opening with one line, `Guards: …`,
//! saying what it guards (`house.rs` holds every test here and under `regression/` to it),
//! then the issue it came from; a file per topic (`urls.rs`, `content.rs`, `publishing.rs`). Hold round 4 (issue 34): one file never freezes the site, and nothing a person
//! removes stays public.
mod content;
mod publishing;
mod urls;

use crate::common::*;
use serde_json::Value;

const BEFORE: &str = "2026-12-01T00:00:00Z";

/// Runs `args` with `--json`, whatever its exit status: (status code, JSON on stdout).
fn run_json(s: &TestSite, args: &[&str]) -> (i32, Value) {
    let out = s.cmd(args).arg("--json").output().unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: bad JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

fn post(s: &TestSite, id: &str, extra: &str) {
    s.write(
        &format!("content/posts/{id}.md"),
        &format!("+++\ntitle = \"Post {id}\"\npublish_at = 2026-11-20T09:00:00Z\n{extra}+++\n\nBody of {id}.\n"),
    );
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .iter()
        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
        .collect()
}
