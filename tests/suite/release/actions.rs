//! A GitHub Actions job, run here as a hosted runner would run it: a fresh workspace and home
//! per run, `actions/checkout` as a clone, `actions/cache` restored before the steps that
//! follow it and saved after a job that succeeded (an exact key is never saved twice),
//! `actions/cache/restore` and `actions/cache/save` where they stand, `run:` steps in
//! `bash -e` with the workflow's and the step's `env:`, `${{ … }}` expressions (`expr.rs`),
//! the job's and each step's `if:` (a failed step skips the rest but for `always()`), and
//! `$GITHUB_PATH`. It knows only the actions and expressions a fencepost workflow uses and
//! panics on any other, so a workflow that grows one fails here until this runner learns it.

mod expr;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use yaml_rust2::{Yaml, YamlLoader};

/// What stays between runs: the saved caches, and what the runner is given.
pub struct Runner {
    store: tempfile::TempDir,
    /// Saved caches in the order they were saved: (key, folder holding the saved path).
    caches: Vec<(String, PathBuf)>,
    pub secrets: HashMap<String, String>,
    /// The host's environment under the job's (the S3 endpoint, the CA of a local release).
    pub env: Vec<(String, String)>,
    /// Text replaced in every `run:` script where it occurs: (from, to).
    pub rewrites: Vec<(String, String)>,
    /// The event that starts each run (`schedule`, `push`, `workflow_dispatch`) and the
    /// branch it runs on; the repository's default branch.
    pub event_name: String,
    pub ref_name: String,
    pub default_branch: String,
    /// This repository (`owner/name`), and for a `pull_request` run its number and the
    /// repository its head branch is in (another one: a fork's).
    pub repository: String,
    pub pr_number: u32,
    pub head_repository: String,
}

/// What one run did, step by step.
#[derive(Debug, Default)]
pub struct RunReport {
    /// (step name, stdout) of each `run:` step that ran.
    pub ran: Vec<(String, String)>,
    /// Names of the steps skipped by their `if:`.
    pub skipped: Vec<String>,
    /// (cache key, exact hit, files restored) of each cache step.
    pub caches: Vec<(String, bool, usize)>,
    /// The keys of the caches saved (by `actions/cache/save`, or after the job).
    pub saved: Vec<String>,
    /// The step that failed (its exit status), when one did: the job failed.
    pub failed: Option<(String, i32)>,
    /// The job's `if:` was false: no step ran.
    pub job_skipped: bool,
    /// What the steps wrote to `$GITHUB_STEP_SUMMARY`.
    pub summary: String,
}

/// One job's state while it runs.
struct Job<'a> {
    workspace: PathBuf,
    home: PathBuf,
    github_path: PathBuf,
    summary: PathBuf,
    run_id: u32,
    env: HashMap<String, String>,
    outputs: HashMap<String, HashMap<String, String>>,
    saves: Vec<(String, PathBuf)>,
    failed: bool,
    runner: &'a Runner,
}

impl Runner {
    pub fn new() -> Runner {
        Runner {
            store: tempfile::tempdir().unwrap(),
            caches: Vec::new(),
            secrets: HashMap::new(),
            env: Vec::new(),
            rewrites: Vec::new(),
            event_name: "schedule".into(),
            ref_name: "main".into(),
            default_branch: "main".into(),
            repository: "owner/site".into(),
            pr_number: 0,
            head_repository: "owner/site".into(),
        }
    }

    /// Runs job `job` of `workflow` (its text) on a fresh runner for the repository `repo`.
    pub fn run(&mut self, workflow: &str, job: &str, repo: &Path, run_id: u32) -> RunReport {
        let doc = YamlLoader::load_from_str(workflow).unwrap().remove(0);
        let machine = tempfile::tempdir().unwrap();
        let mut state = Job {
            workspace: machine.path().join("work"),
            home: machine.path().join("home"),
            github_path: machine.path().join("github_path"),
            summary: machine.path().join("step_summary"),
            run_id,
            env: strings(&doc["env"]),
            outputs: HashMap::new(),
            saves: Vec::new(),
            failed: false,
            runner: self,
        };
        std::fs::create_dir_all(&state.home).unwrap();
        std::fs::write(&state.github_path, "").unwrap();
        std::fs::write(&state.summary, "").unwrap();
        let mut report = RunReport::default();
        if let Some(cond) = doc["jobs"][job]["if"].as_str() {
            if !expr::eval(cond, &state).truthy() {
                report.job_skipped = true;
                return report;
            }
        }
        let steps = doc["jobs"][job]["steps"]
            .as_vec()
            .unwrap_or_else(|| panic!("the workflow has no job {job} with steps"));
        let mut saved_now = Vec::new();
        for step in steps {
            state.step(step, repo, &mut report, &mut saved_now);
        }
        // `actions/cache` saves in its post step, which runs only when the job succeeded.
        let saves = match state.failed {
            true => Vec::new(),
            false => std::mem::take(&mut state.saves),
        };
        report.summary = std::fs::read_to_string(&state.summary).unwrap();
        for (key, path) in saved_now.into_iter().chain(saves) {
            if self.save(&key, &path) {
                report.saved.push(key);
            }
        }
        report
    }

    /// Saves `path` under `key` unless that key is saved already (caches are immutable).
    fn save(&mut self, key: &str, path: &Path) -> bool {
        if !path.exists() || self.caches.iter().any(|(k, _)| k == key) {
            return false;
        }
        let to = self.store.path().join(self.caches.len().to_string());
        copy_path(path, &to);
        self.caches.push((key.to_string(), to));
        true
    }
}

impl Job<'_> {
    fn step(
        &mut self,
        step: &Yaml,
        repo: &Path,
        report: &mut RunReport,
        saved_now: &mut Vec<(String, PathBuf)>,
    ) {
        let name = step["name"]
            .as_str()
            .or(step["uses"].as_str())
            .or(step["run"].as_str())
            .unwrap()
            .to_string();
        let runs = match step["if"].as_str() {
            Some(cond) if expr::names_status(cond) => expr::eval(cond, &*self).truthy(),
            Some(cond) => !self.failed && expr::eval(cond, &*self).truthy(),
            None => !self.failed,
        };
        if !runs {
            report.skipped.push(name);
            return;
        }
        match (step["uses"].as_str(), step["run"].as_str()) {
            (Some(a), None) if a.starts_with("actions/checkout@") => {
                let out = std::process::Command::new("git")
                    .args(["clone", "-q"])
                    .arg(repo)
                    .arg(&self.workspace)
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{out:?}");
            }
            (Some(a), None) if a.starts_with("actions/cache@") => {
                let restored = self.restore(step, true);
                report.caches.push(restored);
            }
            (Some(a), None) if a.starts_with("actions/cache/restore@") => {
                let restored = self.restore(step, false);
                report.caches.push(restored);
            }
            (Some(a), None) if a.starts_with("actions/cache/save@") => {
                let with = &step["with"];
                let path = self.path(&self.expand(with["path"].as_str().unwrap()));
                saved_now.push((self.expand(with["key"].as_str().unwrap()), path));
            }
            (None, Some(script)) => {
                let (stdout, code) = self.shell(script, &strings(&step["env"]));
                if code != 0 {
                    self.failed = true;
                    report.failed = Some((name.clone(), code));
                }
                report.ran.push((name, stdout));
            }
            _ => panic!("this runner does not know the step {step:?}"),
        }
    }

    /// `actions/cache` (`save_after`) or `actions/cache/restore`: the exact key, else the
    /// newest cache whose key starts with a restore key; `actions/cache` saves after the job
    /// unless the exact key was restored.
    fn restore(&mut self, step: &Yaml, save_after: bool) -> (String, bool, usize) {
        let with = &step["with"];
        let path = self.path(&self.expand(with["path"].as_str().unwrap()));
        let key = self.expand(with["key"].as_str().unwrap());
        let prefixes: Vec<String> = with["restore-keys"]
            .as_str()
            .unwrap_or_default()
            .lines()
            .map(|l| self.expand(l.trim()))
            .filter(|l| !l.is_empty())
            .collect();
        let caches = &self.runner.caches;
        let exact = caches.iter().find(|(k, _)| *k == key);
        let found = exact.or_else(|| {
            caches
                .iter()
                .rev()
                .find(|(k, _)| prefixes.iter().any(|p| k.starts_with(p.as_str())))
        });
        let files = found.map_or(0, |(_, saved)| copy_path(saved, &path));
        let hit = exact.is_some();
        let matched = found.map(|(k, _)| k.clone()).unwrap_or_default();
        if let Some(id) = step["id"].as_str() {
            let outputs = self.outputs.entry(id.to_string()).or_default();
            outputs.insert("cache-hit".into(), hit.to_string());
            outputs.insert("cache-matched-key".into(), matched);
        }
        if !hit && save_after {
            self.saves.push((key.clone(), path));
        }
        (key, hit, files)
    }

    /// A `run:` script in `bash -e`, in the workspace, as the runner's user: its stdout and
    /// exit status (stderr goes to the test's, as a runner's log shows it).
    fn shell(&self, script: &str, step_env: &HashMap<String, String>) -> (String, i32) {
        let mut script = self.expand(script);
        for (from, to) in &self.runner.rewrites {
            if script.contains(from.as_str()) {
                script = script.replace(from.as_str(), to);
            }
        }
        let added = std::fs::read_to_string(&self.github_path).unwrap();
        let mut path: Vec<&str> = added.lines().rev().collect();
        path.extend(["/usr/local/bin", "/usr/bin", "/bin"]);
        let mut cmd = std::process::Command::new("bash");
        cmd.arg("-e")
            .arg("-c")
            .arg(&script)
            .current_dir(&self.workspace)
            .env_clear()
            .env("PATH", path.join(":"))
            .env("HOME", &self.home)
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_PATH", &self.github_path)
            .env("GITHUB_STEP_SUMMARY", &self.summary)
            .env("RUNNER_OS", "Linux")
            .envs(self.runner.env.iter().map(|(k, v)| (k, v)))
            .envs(&self.env);
        for (k, v) in step_env {
            cmd.env(k, self.expand(v));
        }
        let out = cmd.output().unwrap();
        if !out.status.success() {
            eprintln!(
                "step failed ({}):\n{script}\nstderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let code = out.status.code().unwrap_or(-1);
        (String::from_utf8_lossy(&out.stdout).into_owned(), code)
    }

    /// A path as `actions/cache` reads it: `~` is the runner's home, the rest the workspace's.
    fn path(&self, p: &str) -> PathBuf {
        match p.strip_prefix("~/") {
            Some(rest) => self.home.join(rest),
            None => self.workspace.join(p),
        }
    }

    /// Every `${{ expr }}` in `text`, evaluated.
    fn expand(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("${{") {
            out.push_str(&rest[..at]);
            let end = rest[at..].find("}}").expect("an unclosed ${{") + at;
            out.push_str(&expr::eval(rest[at + 3..end].trim(), self).text());
            rest = &rest[end + 2..];
        }
        out + rest
    }
}

impl expr::Context for Job<'_> {
    fn lookup(&self, path: &str) -> String {
        let parts: Vec<&str> = path.split('.').collect();
        match parts.as_slice() {
            ["runner", "os"] => "Linux".into(),
            ["runner", "arch"] => "X64".into(),
            ["github", "run_id"] => self.run_id.to_string(),
            ["github", "run_attempt"] => "1".into(),
            ["github", "event_name"] => self.runner.event_name.clone(),
            ["github", "ref_name"] => self.runner.ref_name.clone(),
            ["github", "event", "repository", "default_branch"] => {
                self.runner.default_branch.clone()
            }
            ["github", "repository"] => self.runner.repository.clone(),
            ["github", "event", "number"] => self.runner.pr_number.to_string(),
            ["github", "event", "pull_request", "head", "repo", "full_name"] => {
                self.runner.head_repository.clone()
            }
            ["env", k] => self.env.get(*k).cloned().unwrap_or_default(),
            ["secrets", k] => self.runner.secrets.get(*k).cloned().unwrap_or_default(),
            ["vars", _] => String::new(),
            ["steps", id, "outputs", k] => self
                .outputs
                .get(*id)
                .and_then(|o| o.get(*k))
                .cloned()
                .unwrap_or_default(),
            _ => panic!("this runner does not know the expression {path:?}"),
        }
    }

    fn failed(&self) -> bool {
        self.failed
    }

    /// The one form the workflows use, `folder/**`: a digest of every file under the folder
    /// (names and bytes), "" when there is none.
    fn hash_files(&self, pattern: &str) -> String {
        use sha2::Digest;
        let dir = pattern
            .strip_suffix("/**")
            .unwrap_or_else(|| panic!("this runner does not know hashFiles({pattern:?})"));
        let root = self.workspace.join(dir);
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| e.into_path())
            .collect();
        if files.is_empty() {
            return String::new();
        }
        files.sort();
        let mut h = sha2::Sha256::new();
        for f in files {
            h.update(f.strip_prefix(&root).unwrap().to_string_lossy().as_bytes());
            h.update(sha2::Sha256::digest(std::fs::read(&f).unwrap()));
        }
        hex::encode(h.finalize())
    }
}

/// A mapping of strings (`env:`), empty when absent.
fn strings(y: &Yaml) -> HashMap<String, String> {
    y.as_hash()
        .map(|h| {
            h.iter()
                .map(|(k, v)| {
                    let v = v
                        .as_str()
                        .map(str::to_string)
                        .or_else(|| v.as_i64().map(|n| n.to_string()))
                        .unwrap_or_default();
                    (k.as_str().unwrap().to_string(), v)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Copies a file or a folder to `to` (made as needed), symlinks as symlinks; returns the
/// number of files.
fn copy_path(from: &Path, to: &Path) -> usize {
    let mut files = 0;
    for e in walkdir::WalkDir::new(from) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(from).unwrap();
        // (`to.join("")` would end in a slash: a file saved as a folder.)
        let dest = match rel.as_os_str().is_empty() {
            true => to.to_path_buf(),
            false => to.join(rel),
        };
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else if e.file_type().is_symlink() {
            // As the cache's tar keeps it: the link, not what it points at.
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            let _ = std::fs::remove_file(&dest);
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).unwrap(), &dest).unwrap();
        } else {
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(e.path(), &dest).unwrap();
            files += 1;
        }
    }
    files
}
