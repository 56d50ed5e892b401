//! The edge Worker (`edge/cloudflare/worker.js`) in workerd, through miniflare, as
//! `edge/cloudflare/dev.mjs` runs it: its R2 bucket filled from (and kept in step with) a
//! folder `fencepost deploy --to file://` writes. Needs node and `edge/cloudflare/node_modules`
//! (`scripts/test` installs them from npm, pinned by the lockfile); a test that needs the edge
//! fails, never skips, without them.

use super::{try_http, HttpResponse};
use serde_json::Value;
use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub fn edge_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("edge/cloudflare")
}

/// A running `dev.mjs`, stopped (its whole process group: node and workerd) when dropped.
pub struct Edge {
    child: Child,
    pub addr: String,
    /// Every `{"synced":…}` line it printed.
    synced: Arc<Mutex<Vec<Value>>>,
    log: PathBuf,
}

impl Edge {
    /// Starts the Worker over the folder bucket `bucket`, its objects under `prefix` in R2
    /// (the Worker's `PREFIX`), with `extra` flags (`--pointer-ttl-ms 0`, `--stats`), and
    /// waits until it has copied the folder and answers.
    pub fn start(bucket: &Path, prefix: &str, extra: &[&str]) -> Edge {
        let dir = edge_dir();
        assert!(
            dir.join("node_modules/miniflare").exists(),
            "this test needs miniflare in {}: run scripts/test, which installs it (npm ci)",
            dir.display()
        );
        let log = bucket.with_extension(format!("edge-{}.log", std::process::id()));
        let mut cmd = std::process::Command::new("node");
        cmd.arg(dir.join("dev.mjs"))
            .arg("--bucket")
            .arg(format!("file://{}", bucket.display()))
            .args(["--prefix", prefix, "--port", "0"])
            .args(extra)
            .env("FENCEPOST_PREVIEW_KEY", super::PREVIEW_KEY)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start node (scripts/test installs it): {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let synced = Arc::new(Mutex::new(Vec::new()));
        {
            let synced = synced.clone();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    let Ok(v) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    if let Some(addr) = v["listening"].as_str() {
                        let _ = tx.send(addr.to_string());
                    } else if v.get("synced").is_some() {
                        synced.lock().unwrap().push(v);
                    }
                }
            });
        }
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "the edge Worker did not start; its log:\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
        Edge {
            child,
            addr,
            synced,
            log,
        }
    }

    /// A request exactly as given (no normalisation); the panic shows the Worker's log.
    pub fn request(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> HttpResponse {
        try_http(&self.addr, method, target, headers).unwrap_or_else(|e| {
            panic!(
                "{method} {target} from the edge Worker at {}: {e}; its log:\n{}",
                self.addr,
                std::fs::read_to_string(&self.log).unwrap_or_default()
            )
        })
    }

    pub fn get(&self, target: &str) -> HttpResponse {
        self.request("GET", target, &[])
    }

    /// Waits until `key` has been copied into R2 with bytes hashing to `sha256`.
    pub fn wait_synced(&self, key: &str, sha256: &str) {
        let start = Instant::now();
        loop {
            if self
                .synced
                .lock()
                .unwrap()
                .iter()
                .any(|v| v["keys"][key].as_str() == Some(sha256))
            {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the edge never copied {key} ({sha256}); its log:\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the folder's pointer, as it is now, is the bucket's.
    pub fn wait_pointer(&self, bucket: &Path) {
        let bytes = std::fs::read(bucket.join("current")).unwrap();
        self.wait_synced("current", &fencepost_core::digest::sha256_hex(&bytes));
    }

    /// The Worker's own count of R2 reads (needs `--stats`).
    pub fn stats(&self) -> Value {
        let r = self.get("/__fencepost/edge-stats");
        assert_eq!(r.status, 200, "{}", r.text());
        serde_json::from_slice(&r.body).unwrap()
    }
}

impl Drop for Edge {
    fn drop(&mut self) {
        let group = -(self.child.id() as i32);
        unsafe { libc::kill(group, libc::SIGTERM) };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}
