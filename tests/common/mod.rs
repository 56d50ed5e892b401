//! A small fluent helper for driving the real `fencepost` binary against a temporary site.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

mod edge;
#[allow(unused_imports)]
pub use edge::*;

/// Instants the tests use. Items are played on 2026-11-0N and due at 00:10 the next day.
pub const NOW: &str = "2026-12-01T00:00:00Z";

pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("fencepost")
}

pub struct TestSite {
    pub dir: tempfile::TempDir,
}

impl TestSite {
    /// A site made by `fencepost init`, without its sample item.
    pub fn new() -> TestSite {
        let dir = tempfile::tempdir().unwrap();
        Command::new(bin())
            .args(["init"])
            .arg(dir.path())
            .args(["--now", NOW])
            .assert()
            .success();
        std::fs::remove_file(dir.path().join("content/answers/1.md")).unwrap();
        TestSite { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) -> &Self {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        self
    }

    /// Writes `content/answers/<id>.md` played on `day` with a default title and body.
    pub fn item(&self, id: i64, day: &str) -> &Self {
        self.item_with(id, day, "", &format!("Answer body for item {id}."))
    }

    pub fn item_with(&self, id: i64, day: &str, extra_front_matter: &str, body: &str) -> &Self {
        self.write(
            &format!("content/answers/{id}.md"),
            &format!("+++\nid = {id}\nday = {day}\ntitle = \"Item {id}\"\nprice = 4.99\n{extra_front_matter}+++\n\n{body}\n"),
        )
    }

    /// `fencepost --site <root> <args>`.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.arg("--site").arg(self.root()).args(args);
        c
    }

    /// Runs `fencepost <args>` with the fail points `failpoints` set (needs `--features
    /// failpoints`) and returns its output, whatever the exit status.
    pub fn with_failpoints(&self, args: &[&str], failpoints: &str) -> std::process::Output {
        self.cmd(args)
            .env("FAILPOINTS", failpoints)
            .output()
            .unwrap()
    }

    /// Runs `publish --json --now <now>` and returns its JSON; panics on failure.
    pub fn publish(&self, now: &str) -> Value {
        self.json(&["publish", "--now", now])
    }

    /// Runs a command with `--json`, expects success, parses stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.cmd(args).arg("--json").output().unwrap();
        assert!(
            out.status.success(),
            "fencepost {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "bad JSON from {args:?}: {e}: {}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }

    /// Like [`TestSite::json`], with extra environment variables (say, an S3 endpoint).
    pub fn json_env(&self, args: &[&str], env: &[(String, String)]) -> Value {
        let mut c = self.cmd(args);
        c.arg("--json");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "fencepost {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    pub fn status(&self) -> Value {
        self.json(&["status", "--now", NOW])
    }

    pub fn revision(&self) -> i64 {
        self.status()["revision"].as_i64().unwrap()
    }

    /// Spawns `publish --json` as a separate OS process (stdout piped).
    pub fn spawn_publish(&self, now: &str, extra: &[&str], env: &[(&str, &str)]) -> Child {
        let mut c = std::process::Command::new(bin());
        c.arg("--site")
            .arg(self.root())
            .args(["publish", "--json", "--now", now])
            .args(extra);
        for (k, v) in env {
            c.env(k, v);
        }
        c.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub fn ledger(&self) -> rusqlite::Connection {
        let c = rusqlite::Connection::open(self.path(".fencepost/ledger.sqlite")).unwrap();
        c.busy_timeout(std::time::Duration::from_secs(10)).unwrap();
        c
    }

    /// Like [`TestSite::count`], but `None` while the ledger is still being created.
    pub fn try_count(&self, sql: &str) -> Option<i64> {
        if !self.path(".fencepost/ledger.sqlite").exists() {
            return None;
        }
        self.ledger().query_row(sql, [], |r| r.get(0)).ok()
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.ledger().query_row(sql, [], |r| r.get(0)).unwrap()
    }
}

/// Waits for a spawned publish and parses its JSON report.
pub fn finish(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "publish failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Asserts that a finished command exited 0, showing its stderr when it did not.
pub fn assert_success(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn ids(v: &Value, key: &str) -> Vec<i64> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

impl TestSite {
    /// Runs `build --json --now <now>` (plus `extra`) and returns its JSON.
    pub fn build(&self, extra: &[&str]) -> Value {
        let mut args = vec!["build", "--now", NOW];
        args.extend_from_slice(extra);
        self.json(&args)
    }

    /// What `public/current` resolves to.
    pub fn current_dir(&self) -> PathBuf {
        std::fs::canonicalize(self.path("public/current")).unwrap()
    }

    pub fn current_file(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path("public/current").join(rel)).unwrap()
    }
}

/// How many entries of folder `dir` have names starting with `prefix`.
pub fn count_named(dir: &Path, prefix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .count()
}

/// Every file under `dir` (relative path → bytes).
pub fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// Asserts two trees are byte-identical, naming the paths that differ.
pub fn assert_same_tree(
    a: &std::collections::BTreeMap<String, Vec<u8>>,
    b: &std::collections::BTreeMap<String, Vec<u8>>,
    what: &str,
) {
    let differ: Vec<&String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    assert!(differ.is_empty(), "{what}: these files differ: {differ:?}");
}

/// A running `fencepost serve`, stopped (SIGTERM) when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
    /// The server's stderr (warnings and errors), shown when a request cannot connect.
    pub log: Option<PathBuf>,
}

impl TestSite {
    /// Starts `fencepost serve --bind 127.0.0.1:0 --json [extra]` and waits for its address.
    pub fn serve(&self, extra: &[&str]) -> Server {
        self.serve_env(extra, &[])
    }

    /// `fencepost serve` of the site at `root` (a folder inside this one's).
    pub fn serve_in(&self, root: &Path) -> Server {
        let log = self.path(&format!(".serve-{}.log", uuid_like()));
        serve_child(root, &[], &[], &log)
    }

    /// [`TestSite::serve`] with extra environment variables (say, an S3 endpoint).
    pub fn serve_env(&self, extra: &[&str], env: &[(String, String)]) -> Server {
        let log = self.path(&format!(".serve-{}.log", uuid_like()));
        serve_child(self.root(), extra, env, &log)
    }
}

/// Starts `fencepost --site root serve --bind 127.0.0.1:0 --json [extra]`, its stderr to
/// `log`, and waits for its address.
fn serve_child(root: &Path, extra: &[&str], env: &[(String, String)], log: &Path) -> Server {
    use std::io::BufRead;
    {
        let mut child = std::process::Command::new(bin())
            .arg("--site")
            .arg(root)
            .args(["serve", "--json", "--bind", "127.0.0.1:0"])
            .args(extra)
            .env("FENCEPOST_LOG", "warn")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("serve said {line:?}: {e}"));
        Server {
            addr: v["listening"].as_str().unwrap().to_string(),
            child,
            log: Some(log.to_path_buf()),
        }
    }
}

impl Server {
    /// GET `target`; when the server cannot be reached, the panic says whether its process is
    /// still there and what it logged.
    pub fn get(&self, target: &str) -> HttpResponse {
        try_http(&self.addr, "GET", target, &[]).unwrap_or_else(|e| {
            let state = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find(|l| l.starts_with("State:"))
                        .map(str::to_string)
                })
                .unwrap_or_else(|| "gone".into());
            let log = self
                .log
                .as_ref()
                .and_then(|p| std::fs::read_to_string(p).ok())
                .unwrap_or_default();
            panic!(
                "GET {target} from the server at {}: {e}; its process: {state}; its log:\n{log}",
                self.addr
            )
        })
    }

    /// Sends SIGTERM and waits; returns the exit status.
    pub fn stop(mut self) -> std::process::ExitStatus {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let status = self.child.wait().unwrap();
        std::mem::forget(self);
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Whether a server at `addr` answers an HTTP request (not merely accepts a connection: a
/// connection to oneself, which a free ephemeral port allows, does not count).
pub fn answers_http(addr: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return false;
    };
    if s.local_addr().ok() == s.peer_addr().ok() {
        return false;
    }
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(5)));
    if s.write_all(
        format!("GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .is_err()
    {
        return false;
    }
    let mut head = [0u8; 8];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
}

/// A minimal HTTP/1.1 client that sends `target` exactly as given (no normalisation).
pub fn http(addr: &str, method: &str, target: &str, headers: &[(&str, &str)]) -> HttpResponse {
    try_http(addr, method, target, headers).unwrap()
}

/// [`http`], with a connection failure returned instead of a panic.
pub fn try_http(
    addr: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
) -> std::io::Result<HttpResponse> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr)?;
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut req = format!("{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += "\r\n";
    s.write_all(req.as_bytes())?;
    // Read until the response is complete by its own framing (some servers — workerd among
    // them — keep the connection open a while after `Connection: close`), or the server
    // closes the connection (a response cut off short is returned as it arrived).
    let mut raw = Vec::new();
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if response_complete(&raw, method == "HEAD") {
            break;
        }
    }
    Ok(parse_response(&raw, method == "HEAD"))
}

/// Whether `raw` holds a whole response: its headers and, by `Content-Length` or chunked
/// framing, its whole body (none for HEAD, 1xx, 204 and 304).
fn response_complete(raw: &[u8], head: bool) -> bool {
    let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head_text = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let status: u16 = head_text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    if head || status == 204 || status == 304 || (100..200).contains(&status) {
        return true;
    }
    let body = &raw[split + 4..];
    for line in head_text.split("\r\n").skip(1) {
        if let Some((k, v)) = line.split_once(':') {
            match k.trim() {
                "content-length" => {
                    return v.trim().parse::<usize>().is_ok_and(|n| body.len() >= n)
                }
                "transfer-encoding" if v.contains("chunked") => {
                    return body.ends_with(b"0\r\n\r\n")
                        && (body.len() == 5 || body[..body.len() - 5].ends_with(b"\r\n"))
                }
                _ => {}
            }
        }
    }
    false
}

pub fn parse_response(raw: &[u8], head: bool) -> HttpResponse {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a complete header block");
    let head_text = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head_text.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked && !head {
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let nl = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..nl]).unwrap().trim(), 16)
                .unwrap();
            if size == 0 {
                break;
            }
            out.extend_from_slice(&rest[nl + 2..nl + 2 + size]);
            rest = &rest[nl + 2 + size + 2..];
        }
        body = out;
    }
    HttpResponse {
        status,
        headers,
        body,
    }
}

/// A tiny HTTP/1.1 image server on loopback that counts the requests it answers.
pub fn image_server(
    routes: Vec<(&'static str, u16, Vec<u8>)>,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    use std::io::{BufRead, Write};
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
            }
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let (status, body) = routes
                .iter()
                .find(|(p, _, _)| *p == path)
                .map(|(_, s, b)| (*s, b.clone()))
                .unwrap_or((404, b"not found".to_vec()));
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    (base, hits)
}

pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A fencepost process stalled at a fail point, and the log that says when it got there.
pub struct Stalled {
    pub child: Child,
    log: PathBuf,
}

impl Stalled {
    pub fn start(s: &TestSite, args: &[&str], failpoints: &str) -> Stalled {
        let log = s.path(&format!(".fp-{}.log", uuid_like()));
        let child = std::process::Command::new(bin())
            .arg("--site")
            .arg(s.root())
            .args(args)
            .arg("--json")
            .env("FAILPOINTS", failpoints)
            .env("FENCEPOST_FAILPOINT_LOG", &log)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Stalled { child, log }
    }

    pub fn wait_until(&self, point: &str) {
        wait_for(point, || {
            std::fs::read_to_string(&self.log).is_ok_and(|t| t.lines().any(|l| l == point))
        });
    }

    pub fn finish(self) -> std::process::Output {
        self.child.wait_with_output().unwrap()
    }
}

fn uuid_like() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// A throw-away S3 server (moto) on a free port of 127.0.0.1, stopped when dropped. Found at
/// `FENCEPOST_MOTO_SERVER`, else `target/tools/moto/bin/moto_server` (what `scripts/test`
/// installs). A test that needs it fails, never skips, when it is missing.
pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Moto {
    pub fn start() -> Moto {
        let bin = std::env::var("FENCEPOST_MOTO_SERVER")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/moto/bin/moto_server")
            });
        assert!(
            bin.exists(),
            "this test needs moto (an S3 server) at {}: run scripts/test, which installs it",
            bin.display()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new(&bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        let mut moto = Moto {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        // Up when it answers HTTP: a bare connect can succeed before it listens (a connect
        // to a free port in the ephemeral range may pick that very port and reach itself).
        let start = std::time::Instant::now();
        let addr = format!("127.0.0.1:{port}");
        while !answers_http(&addr) {
            if let Ok(Some(status)) = moto.child.try_wait() {
                panic!("moto exited ({status}) before it answered on {addr} (port taken?)");
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "moto did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        moto
    }

    /// Creates a bucket (moto takes an unsigned request).
    pub fn bucket(&self, name: &str) -> &Self {
        let addr = self.endpoint.trim_start_matches("http://");
        let r = http(addr, "PUT", &format!("/{name}"), &[]);
        assert_eq!(r.status, 200, "creating bucket {name}: {}", r.text());
        self
    }

    /// The environment a fencepost process needs to reach `endpoint` (moto, or a proxy).
    pub fn env(endpoint: &str) -> Vec<(String, String)> {
        vec![
            ("AWS_ENDPOINT_URL".into(), endpoint.into()),
            ("AWS_ACCESS_KEY_ID".into(), "testing".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "testing".into()),
            ("AWS_REGION".into(), "us-east-1".into()),
        ]
    }

    /// The same, as settings for `Remote::open_with`.
    pub fn settings(endpoint: &str) -> Vec<(&'static str, String)> {
        vec![
            ("aws_endpoint", endpoint.into()),
            ("aws_access_key_id", "testing".into()),
            ("aws_secret_access_key", "testing".into()),
            ("aws_region", "us-east-1".into()),
        ]
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP proxy on 127.0.0.1 in front of an S3 server: records every request's method, path
/// and status, and, with `strip_conditionals`, removes `If-Match`/`If-None-Match` from the
/// requests it forwards — what Garage does by ignoring them.
pub struct Proxy {
    pub endpoint: String,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<(String, String, u16)>>>,
    /// Milliseconds every request waits before it is forwarded (a slow or hanging bucket;
    /// set it any time).
    pub delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl Proxy {
    pub fn start(upstream: &str, strip_conditionals: bool) -> Proxy {
        use std::io::{BufRead, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let log: std::sync::Arc<std::sync::Mutex<Vec<(String, String, u16)>>> = Default::default();
        let log2 = log.clone();
        let delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64> = Default::default();
        let delay2 = delay_ms.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let (upstream, log, delay) = (upstream.clone(), log2.clone(), delay2.clone());
                std::thread::spawn(move || {
                    let mut reader = std::io::BufReader::new(client.try_clone().unwrap());
                    let mut client = client;
                    // One request per connection: the answer says Connection: close.
                    {
                        let mut head = Vec::new();
                        loop {
                            let mut line = String::new();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let end = line == "\r\n";
                            head.push(line);
                            if end {
                                break;
                            }
                        }
                        let request_line = head[0].clone();
                        let mut parts = request_line.split_whitespace();
                        let method = parts.next().unwrap_or("").to_string();
                        let path = parts.next().unwrap_or("").to_string();
                        let len: usize = head
                            .iter()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse().ok())?
                            })
                            .unwrap_or(0);
                        let mut body = vec![0u8; len];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let forwarded: String = head
                            .iter()
                            .filter(|l| {
                                let k = l.split(':').next().unwrap_or("").to_ascii_lowercase();
                                k != "connection"
                                    && !(strip_conditionals
                                        && (k == "if-match" || k == "if-none-match"))
                            })
                            .map(|l| {
                                if l == "\r\n" {
                                    "Connection: close\r\n\r\n".to_string()
                                } else {
                                    l.clone()
                                }
                            })
                            .collect();
                        let wait = delay.load(std::sync::atomic::Ordering::SeqCst);
                        if wait > 0 {
                            std::thread::sleep(std::time::Duration::from_millis(wait));
                        }
                        let Ok(mut up) = std::net::TcpStream::connect(&upstream) else {
                            return;
                        };
                        if up.write_all(forwarded.as_bytes()).is_err()
                            || up.write_all(&body).is_err()
                        {
                            return;
                        }
                        let mut response = Vec::new();
                        let _ = up.read_to_end(&mut response);
                        let status: u16 = String::from_utf8_lossy(&response)
                            .split_whitespace()
                            .nth(1)
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(0);
                        log.lock().unwrap().push((method, path, status));
                        // Tell the client this connection ends here, so it never reuses it.
                        let split = response
                            .windows(4)
                            .position(|w| w == b"\r\n\r\n")
                            .unwrap_or(response.len());
                        let head_text = String::from_utf8_lossy(&response[..split]);
                        let mut out: String = head_text
                            .split("\r\n")
                            .filter(|l| !l.to_ascii_lowercase().starts_with("connection:"))
                            .map(|l| format!("{l}\r\n"))
                            .collect();
                        out += "Connection: close\r\n";
                        let mut bytes = out.into_bytes();
                        bytes.extend_from_slice(&response[(split + 2).min(response.len())..]);
                        let _ = client.write_all(&bytes);
                    }
                });
            }
        });
        Proxy {
            endpoint,
            log,
            delay_ms,
        }
    }

    /// Successful PUTs of objects (not buckets), by key.
    pub fn puts(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, p, s)| m == "PUT" && *s == 200 && p.trim_start_matches('/').contains('/'))
            .map(|(_, p, _)| p.split('?').next().unwrap_or("").to_string())
            .collect()
    }
}

/// A throw-away PostgreSQL cluster for this test process: initdb into a temporary folder,
/// `postgres` on 127.0.0.1 at a free port, stopped when the process ends (the server gets
/// SIGINT, a fast shutdown, from the kernel when the thread that started it exits, and that
/// thread lives as long as the process). Each test gets a database of its own.
///
/// The binaries come from `FENCEPOST_PG_BIN`, or Debian's `/usr/lib/postgresql/<version>/bin`
/// (`scripts/test` installs them). A test that needs PostgreSQL fails, never skips, without it.
pub struct Pg {
    pub port: u16,
    pub dir: PathBuf,
}

static PG: std::sync::OnceLock<Pg> = std::sync::OnceLock::new();

pub fn pg() -> &'static Pg {
    PG.get_or_init(Pg::start)
}

fn pg_bin_dir() -> PathBuf {
    if let Ok(d) = std::env::var("FENCEPOST_PG_BIN") {
        return PathBuf::from(d);
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).unwrap_or_else(|| {
        panic!("PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/postgres (run scripts/test, which installs it, or set FENCEPOST_PG_BIN)")
    })
}

/// uid and gid of the `postgres` user, when running as root (PostgreSQL refuses root).
fn pg_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: getpwnam is given a valid C string; the result is read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !pw.is_null(),
        "running as root and there is no `postgres` user to run the test cluster as (install Debian's postgresql package: scripts/test does)"
    );
    // SAFETY: checked non-null above.
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

fn as_pg_user(c: &mut std::process::Command, user: Option<(u32, u32)>, die_with_parent: bool) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            if let Some((uid, gid)) = user {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Set after the uid change, which would clear it.
            if die_with_parent {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT);
            }
            Ok(())
        });
    }
}

impl Pg {
    fn start() -> Pg {
        let bin = pg_bin_dir();
        let user = pg_user();
        let base = std::env::temp_dir();
        // Clusters of test processes that died without cleaning up.
        for e in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix("fencepost-pg-") {
                if pid
                    .parse::<i32>()
                    // SAFETY: kill with signal 0 only checks whether the process exists.
                    .is_ok_and(|p| unsafe { libc::kill(p, 0) } != 0)
                {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = base.join(format!("fencepost-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        }
        let data = dir.join("data");
        let mut init = std::process::Command::new(bin.join("initdb"));
        init.arg("-D")
            .arg(&data)
            .args([
                "-A",
                "trust",
                "-U",
                "fencepost",
                "-E",
                "UTF8",
                "--no-sync",
                "--locale=C",
            ])
            .stdout(Stdio::null());
        as_pg_user(&mut init, user, false);
        let out = init.output().expect("run initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tls = pg_tls(&dir, user);
        // The role `tlsonly` may connect over TLS only: a test can tell TLS was used.
        let hba = data.join("pg_hba.conf");
        let rules = std::fs::read_to_string(&hba).unwrap();
        std::fs::write(
            &hba,
            format!("hostnossl all tlsonly 127.0.0.1/32 reject\n{rules}"),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let (tx, rx) = std::sync::mpsc::channel();
        let (bin2, data2, dir2, tls) = (bin.clone(), data.clone(), dir.clone(), tls.clone());
        std::thread::spawn(move || {
            let mut c = std::process::Command::new(bin2.join("postgres"));
            c.arg("-D")
                .arg(&data2)
                .args(["-p", &port.to_string(), "-k"])
                .arg(&dir2)
                .args([
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "fsync=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "full_page_writes=off",
                    "-c",
                    "max_connections=300",
                    "-c",
                    "shared_buffers=64MB",
                    "-c",
                    "ssl=on",
                ])
                .arg("-c")
                .arg(format!(
                    "ssl_cert_file={}",
                    tls.join("server.crt").display()
                ))
                .arg("-c")
                .arg(format!("ssl_key_file={}", tls.join("server.key").display()))
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir2.join("server.log")).unwrap());
            as_pg_user(&mut c, user, true);
            let child = c.spawn();
            let ok = child.is_ok();
            tx.send(child.map(|_| ()).map_err(|e| e.to_string()))
                .unwrap();
            if ok {
                // This thread must outlive every test: its exit signals the server.
                loop {
                    std::thread::park();
                }
            }
        });
        rx.recv().unwrap().expect("start postgres");
        let pg = Pg { port, dir };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match ::postgres::Client::connect(&pg.url("postgres"), ::postgres::NoTls) {
                Ok(_) => break,
                Err(e) if std::time::Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => panic!(
                    "the test PostgreSQL did not come up: {e}\n{}",
                    std::fs::read_to_string(pg.dir.join("server.log")).unwrap_or_default()
                ),
            }
        }
        let mut c = ::postgres::Client::connect(&pg.url("postgres"), ::postgres::NoTls).unwrap();
        c.batch_execute("CREATE ROLE tlsonly LOGIN SUPERUSER")
            .unwrap();
        pg
    }

    /// The CA that signed the test server's certificate (for `sslrootcert`).
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.join("tls").join("ca.crt")
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://fencepost@127.0.0.1:{}/{db}", self.port)
    }

    /// A new, empty database; returns its URL.
    pub fn database(&self) -> String {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let mut c = ::postgres::Client::connect(&self.url("postgres"), ::postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(&name)
    }

    pub fn client(url: &str) -> ::postgres::Client {
        ::postgres::Client::connect(url, ::postgres::NoTls).unwrap()
    }
}

/// A throw-away CA and a certificate for 127.0.0.1 signed by it, made with openssl, for the
/// test server's TLS. Returns the folder.
fn pg_tls(dir: &Path, user: Option<(u32, u32)>) -> PathBuf {
    let tls = dir.join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(&tls)
            .output()
            .expect("openssl (scripts/test installs it) makes the test server's certificate");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec![
        "req",
        "-x509",
        "-days",
        "2",
        "-subj",
        "/CN=fencepost test CA",
    ];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.crt"]);
    openssl(&ca);
    let mut csr = vec!["req", "-subj", "/CN=127.0.0.1"];
    csr.extend(ec);
    csr.extend(["-keyout", "server.key", "-out", "server.csr"]);
    openssl(&csr);
    std::fs::write(
        tls.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.crt",
    ]);
    use std::os::unix::fs::PermissionsExt;
    for f in ["server.key", "server.crt"] {
        let p = tls.join(f);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&p, Some(uid), Some(gid)).unwrap();
        }
    }
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&tls, Some(uid), Some(gid)).unwrap();
    }
    tls
}

/// Which ledger a conformance test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl TestSite {
    /// A site whose ledger is on `backend` (PostgreSQL: a fresh database in the test cluster,
    /// named by `ledger.url`).
    pub fn on(backend: Backend) -> TestSite {
        let s = TestSite::new();
        if backend == Backend::Postgres {
            let url = pg().database();
            s.set_ledger_url(&url);
        }
        s
    }

    pub fn set_ledger_url(&self, url: &str) {
        let cfg = std::fs::read_to_string(self.path("fencepost.toml")).unwrap();
        let cfg = cfg.replace("[ledger]\n", &format!("[ledger]\nurl = \"{url}\"\n"));
        assert!(
            cfg.contains("url = "),
            "fencepost.toml has no [ledger] table"
        );
        std::fs::write(self.path("fencepost.toml"), cfg).unwrap();
    }

    /// The `ledger.url` this site uses, if any.
    pub fn ledger_url(&self) -> Option<String> {
        let cfg = std::fs::read_to_string(self.path("fencepost.toml")).unwrap();
        cfg.lines()
            .skip_while(|l| l.trim() != "[ledger]")
            .skip(1)
            .take_while(|l| !l.starts_with('['))
            .find_map(|l| l.strip_prefix("url = \""))
            .map(|u| u.trim_end_matches('"').to_string())
    }

    /// One integer from the ledger, whichever engine holds it.
    pub fn query_i64(&self, sql: &str) -> i64 {
        match self.ledger_url() {
            Some(url) => Pg::client(&url).query_one(sql, &[]).unwrap().get(0),
            None => self.count(sql),
        }
    }

    /// Runs a statement on the ledger, whichever engine holds it.
    pub fn execute(&self, sql: &str) {
        match self.ledger_url() {
            Some(url) => {
                Pg::client(&url).batch_execute(sql).unwrap();
            }
            None => {
                self.ledger().execute_batch(sql).unwrap();
            }
        }
    }
}

// ---------------------------------------------------------------- fixture sites

pub fn copy_tree(src: &Path, dst: &Path) {
    for e in walkdir::WalkDir::new(src) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(src).unwrap();
        let to = dst.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

pub fn fixture_dir(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of fixture site `name` in a temporary folder.
pub fn fixture(name: &str) -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture_dir(name), dir.path());
    TestSite { dir }
}

/// Runs `n` publishers at once, as separate processes, and returns each one's JSON.
pub fn race_publish(s: &TestSite, now: &str, n: usize) -> Vec<Value> {
    let children: Vec<_> = (0..n).map(|_| s.spawn_publish(now, &[], &[])).collect();
    children.into_iter().map(finish).collect()
}

/// Every item the runs published, checking that none was published twice.
pub fn published_once(runs: &[Value]) -> std::collections::BTreeSet<String> {
    let mut all = Vec::new();
    for r in runs {
        for v in r["published"].as_array().unwrap() {
            all.push(
                v.as_str()
                    .expect("items are named collection/id")
                    .to_string(),
            );
        }
    }
    let set: std::collections::BTreeSet<String> = all.iter().cloned().collect();
    assert_eq!(set.len(), all.len(), "an item was published twice: {all:?}");
    set
}

pub fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// None of `secrets` occurs in any of `files`, except the pointers (which name the next
/// embargo end on purpose and are never served).
pub fn assert_nothing_reveals(what: &str, files: &[(String, Vec<u8>)], secrets: &[&str]) {
    assert!(!files.is_empty(), "{what}: no files");
    for (name, bytes) in files {
        if name.ends_with("current.json") || name.ends_with("/current") {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        for s in secrets {
            assert!(!text.contains(s), "{what}: {name} reveals {s:?}");
        }
    }
}

/// Runs `publish --json` expecting exit 1 with its JSON on stdout.
pub fn publish_failing(s: &TestSite, now: &str) -> Value {
    let out = s
        .cmd(&["publish", "--json", "--now", now])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
