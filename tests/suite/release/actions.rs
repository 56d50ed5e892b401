//! A GitHub Actions job, run here as a hosted runner would run it: a fresh workspace and home
//! per run, `actions/checkout` as a clone, `actions/cache` restored before the steps that
//! follow it and saved after the job (an exact key is never saved twice), `run:` steps in
//! `bash -e` with the workflow's and the step's `env:`, `${{ … }}` expressions, `if:`, and
//! `$GITHUB_PATH`. It knows only the actions and expressions a fencepost workflow uses and
//! panics on any other, so a workflow that grows one fails here until this runner learns it.

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
}

/// One job's state while it runs.
struct Job<'a> {
    workspace: PathBuf,
    home: PathBuf,
    github_path: PathBuf,
    run_id: u32,
    env: HashMap<String, String>,
    outputs: HashMap<String, HashMap<String, String>>,
    saves: Vec<(String, PathBuf)>,
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
            run_id,
            env: strings(&doc["env"]),
            outputs: HashMap::new(),
            saves: Vec::new(),
            runner: self,
        };
        std::fs::create_dir_all(&state.home).unwrap();
        std::fs::write(&state.github_path, "").unwrap();
        let mut report = RunReport::default();
        let steps = doc["jobs"][job]["steps"]
            .as_vec()
            .unwrap_or_else(|| panic!("the workflow has no job {job} with steps"));
        for step in steps {
            state.step(step, repo, &mut report);
        }
        let saves = std::mem::take(&mut state.saves);
        for (key, path) in saves {
            self.save(&key, &path);
        }
        report
    }

    fn save(&mut self, key: &str, path: &Path) {
        if !path.exists() || self.caches.iter().any(|(k, _)| k == key) {
            return;
        }
        let to = self.store.path().join(self.caches.len().to_string());
        copy_path(path, &to);
        self.caches.push((key.to_string(), to));
    }
}

impl Job<'_> {
    fn step(&mut self, step: &Yaml, repo: &Path, report: &mut RunReport) {
        let name = step["name"]
            .as_str()
            .or(step["uses"].as_str())
            .or(step["run"].as_str())
            .unwrap()
            .to_string();
        if let Some(cond) = step["if"].as_str() {
            if !self.condition(cond) {
                report.skipped.push(name);
                return;
            }
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
                let restored = self.restore(step);
                report.caches.push(restored);
            }
            (None, Some(script)) => {
                let stdout = self.shell(&name, script, &strings(&step["env"]));
                report.ran.push((name, stdout));
            }
            _ => panic!("this runner does not know the step {step:?}"),
        }
    }

    /// `actions/cache`: the exact key, else the newest cache whose key starts with a
    /// restore key; saved after the job unless the exact key was restored.
    fn restore(&mut self, step: &Yaml) -> (String, bool, usize) {
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
        if let Some(id) = step["id"].as_str() {
            let outputs = self.outputs.entry(id.to_string()).or_default();
            outputs.insert("cache-hit".into(), hit.to_string());
        }
        if !hit {
            self.saves.push((key.clone(), path));
        }
        (key, hit, files)
    }

    /// A `run:` script in `bash -e`, in the workspace, as the runner's user.
    fn shell(&self, name: &str, script: &str, step_env: &HashMap<String, String>) -> String {
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
            .env("RUNNER_OS", "Linux")
            .envs(self.runner.env.iter().map(|(k, v)| (k, v)))
            .envs(&self.env);
        for (k, v) in step_env {
            cmd.env(k, self.expand(v));
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "step {name:?} failed:\n{script}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A path as `actions/cache` reads it: `~` is the runner's home, the rest the workspace's.
    fn path(&self, p: &str) -> PathBuf {
        match p.strip_prefix("~/") {
            Some(rest) => self.home.join(rest),
            None => self.workspace.join(p),
        }
    }

    /// `if:` — the one form the workflows use: `steps.ID.outputs.NAME != 'VALUE'`.
    fn condition(&self, cond: &str) -> bool {
        let (lhs, rhs) = cond
            .split_once(" != ")
            .unwrap_or_else(|| panic!("this runner does not know the condition {cond:?}"));
        self.value(lhs.trim()) != rhs.trim().trim_matches('\'')
    }

    /// Every `${{ expr }}` in `text`, evaluated.
    fn expand(&self, text: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("${{") {
            out.push_str(&rest[..at]);
            let end = rest[at..].find("}}").expect("an unclosed ${{") + at;
            out.push_str(&self.value(rest[at + 3..end].trim()));
            rest = &rest[end + 2..];
        }
        out + rest
    }

    /// One expression: a context value, or `A || 'default'`.
    fn value(&self, expr: &str) -> String {
        if let Some((a, default)) = expr.split_once("||") {
            let v = self.value(a.trim());
            return if v.is_empty() {
                default.trim().trim_matches('\'').to_string()
            } else {
                v
            };
        }
        let parts: Vec<&str> = expr.split('.').collect();
        match parts.as_slice() {
            ["runner", "os"] => "Linux".into(),
            ["runner", "arch"] => "X64".into(),
            ["github", "run_id"] => self.run_id.to_string(),
            ["github", "run_attempt"] => "1".into(),
            ["env", k] => self.env.get(*k).cloned().unwrap_or_default(),
            ["secrets", k] => self.runner.secrets.get(*k).cloned().unwrap_or_default(),
            ["vars", _] => String::new(),
            ["steps", id, "outputs", k] => self
                .outputs
                .get(*id)
                .and_then(|o| o.get(*k))
                .cloned()
                .unwrap_or_default(),
            _ => panic!("this runner does not know the expression {expr:?}"),
        }
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
