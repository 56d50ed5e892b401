//! A D1 ledger for the tests: `edge/cloudflare/d1-dev.mjs` runs the ledger proxy
//! (`ledger-proxy.js`) in workerd through miniflare, with a local D1 database kept in a folder
//! of the site. One server per site (a D1 database is one ledger), started by
//! `TestSite::on(Backend::D1)` and stopped when the site is dropped (or, if the test process
//! dies, when its stdin closes). Needs node and `edge/cloudflare/node_modules` (`scripts/test`
//! installs them); a test that needs D1 fails, never skips, without them.

use super::edge_dir;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::BufRead;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The proxy's token in every test (fencepost reads it from FENCEPOST_D1_TOKEN).
pub const D1_TOKEN: &str = "fencepost-test-d1-token-0123456789abcdef";

/// A running `d1-dev.mjs`, its whole process group stopped when dropped.
pub struct D1Server {
    child: Child,
    /// `http://127.0.0.1:P`.
    pub addr: String,
    pub persist: PathBuf,
    log: PathBuf,
}

/// The servers of the sites alive, by site root.
static SERVERS: Mutex<Option<HashMap<PathBuf, D1Server>>> = Mutex::new(None);

/// The servers, even after a test panicked holding them: one test's failure is its own,
/// not every later D1 test's (a poisoned lock would fail them all).
fn servers() -> std::sync::MutexGuard<'static, Option<HashMap<PathBuf, D1Server>>> {
    SERVERS.lock().unwrap_or_else(|e| e.into_inner())
}

impl D1Server {
    /// Starts the proxy over the D1 kept in `persist`, on `port` (0: a free one), with
    /// `extra` flags (`--crash-after-batch N`), and waits until it answers.
    pub fn start(persist: &Path, port: u16, extra: &[&str]) -> D1Server {
        Self::try_start(persist, port, extra)
            .unwrap_or_else(|log| panic!("the D1 proxy did not start; its log:\n{log}"))
    }

    /// Starts the proxy again on the `port` it had: another process may hold that port a
    /// while (an outgoing connection's ephemeral port, another test's listener), so a start
    /// refused with EADDRINUSE is tried again for up to a minute.
    pub fn restart_on(persist: &Path, port: u16, extra: &[&str]) -> D1Server {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            match Self::try_start(persist, port, extra) {
                Ok(server) => return server,
                Err(log) if log.contains("EADDRINUSE") && std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(250))
                }
                Err(log) => {
                    panic!("the D1 proxy did not start again on port {port}; its log:\n{log}")
                }
            }
        }
    }

    /// Starts the proxy; `Err` with its log when it exits or stays silent for a minute
    /// before listening.
    fn try_start(persist: &Path, port: u16, extra: &[&str]) -> Result<D1Server, String> {
        let dir = edge_dir();
        assert!(
            dir.join("node_modules/miniflare").exists(),
            "this test needs miniflare in {}: run scripts/test, which installs it (npm ci)",
            dir.display()
        );
        // The library's own opens (tests that drive the ledger API) read it here.
        std::env::set_var("FENCEPOST_D1_TOKEN", D1_TOKEN);
        std::fs::create_dir_all(persist).unwrap();
        let log = persist.join(format!("d1-dev-{port}.log"));
        let mut child = std::process::Command::new("node")
            .arg(dir.join("d1-dev.mjs"))
            .arg("--port")
            .arg(port.to_string())
            .arg("--persist")
            .arg(persist)
            .args(["--token", D1_TOKEN, "--watch-stdin"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start node (scripts/test installs it): {e}"));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if let Some(addr) = v["listening"].as_str() {
                        let _ = tx.send(addr.to_string());
                    }
                }
            }
            // stdout closed: the process is gone; dropping `tx` tells the waiter at once.
        });
        // Waits for the line, or for node to exit first (workerd may keep stdout open).
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let addr = loop {
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(addr) => break Some(addr),
                Err(_) if child.try_wait().unwrap().is_some() => break None,
                Err(_) if std::time::Instant::now() >= deadline => break None,
                Err(_) => {}
            }
        };
        let mut server = D1Server {
            child,
            addr: addr.clone().unwrap_or_default(),
            persist: persist.to_path_buf(),
            log,
        };
        match addr {
            Some(_) => Ok(server),
            None => {
                server.kill();
                Err(server.log())
            }
        }
    }

    /// `d1+http://127.0.0.1:P`, as `ledger.url` names it.
    pub fn url(&self) -> String {
        format!("d1+{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    /// Stops the server (node and workerd) at once, as a crash would.
    pub fn kill(&mut self) {
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }

    /// Whether the server is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for a server started with a `--crash-…` flag to have crashed.
    pub fn wait_crashed(&mut self) {
        let status = self.child.wait().unwrap();
        assert!(!status.success(), "the proxy exited cleanly");
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
    }

    /// A batch sent as fencepost sends one (what a writer that skips fencepost's rules, or
    /// the edge, would send): `Ok` with the results, `Err` with the status and answer.
    pub fn batch(&self, statements: &[(&str, Vec<Value>)]) -> Result<Value, (u16, Value)> {
        let body = json!({"statements": statements.iter().map(|(sql, params)| json!({"sql": sql, "params": params})).collect::<Vec<_>>()});
        self.post("/batch", &body, Some(D1_TOKEN))
    }

    /// A POST with any token (or none).
    pub fn post(
        &self,
        path: &str,
        body: &Value,
        token: Option<&str>,
    ) -> Result<Value, (u16, Value)> {
        let mut req = ureq::post(&format!("{}{path}", self.addr));
        if let Some(t) = token {
            req = req.set("Authorization", &format!("Bearer {t}"));
        }
        match req.send_json(body.clone()) {
            Ok(r) => Ok(r.into_json().unwrap()),
            Err(ureq::Error::Status(code, r)) => Err((code, r.into_json().unwrap_or(Value::Null))),
            Err(e) => panic!(
                "the D1 proxy at {} did not answer: {e}; its log:\n{}",
                self.addr,
                self.log()
            ),
        }
    }

    /// Rows of one query.
    pub fn rows(&self, sql: &str, params: Vec<Value>) -> Vec<Value> {
        let v = self
            .batch(&[(sql, params)])
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        v["results"][0]["rows"].as_array().unwrap().clone()
    }

    /// What the proxy has received: {"batches", "statements", "bytes"}.
    pub fn stats(&self) -> Value {
        ureq::get(&format!("{}/__fencepost/d1-stats", self.addr))
            .call()
            .unwrap()
            .into_json()
            .unwrap()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for D1Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts a D1 server for the site at `root` (its data under `root/.d1`) and returns the
/// `ledger.url` that names it.
pub fn serve_d1_for(root: &Path) -> String {
    let server = D1Server::start(&root.join(".d1"), 0, &[]);
    let url = server.url();
    servers()
        .get_or_insert_with(HashMap::new)
        .insert(root.to_path_buf(), server);
    url
}

/// Runs `f` on the D1 server of the site at `root`.
pub fn with_d1<T>(root: &Path, f: impl FnOnce(&mut D1Server) -> T) -> T {
    let mut all = servers();
    let server = all
        .as_mut()
        .and_then(|m| m.get_mut(root))
        .expect("this site's ledger is not on a test D1 server");
    f(server)
}

/// Stops the D1 server of the site at `root`, if it has one.
pub fn stop_d1_for(root: &Path) {
    let server = servers().as_mut().and_then(|m| m.remove(root));
    drop(server);
}

/// Restarts the D1 server of the site at `root` — on the same port and data, with `extra`
/// flags (`--crash-after-batch N`) — after stopping the one running (or reaping a crashed
/// one).
pub fn restart_d1_for(root: &Path, extra: &[&str]) {
    let old = servers()
        .as_mut()
        .and_then(|m| m.remove(root))
        .expect("this site's ledger is not on a test D1 server");
    let (persist, port) = (old.persist.clone(), old.port());
    drop(old);
    // Not under the lock: a start may wait for its port.
    let server = D1Server::restart_on(&persist, port, extra);
    servers()
        .get_or_insert_with(HashMap::new)
        .insert(root.to_path_buf(), server);
}
