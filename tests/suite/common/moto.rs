//! An S3 server (moto) on 127.0.0.1 and a recording proxy in front of it.
#![allow(dead_code)]

use super::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// A throw-away S3 server (moto) on a free port of 127.0.0.1, stopped when dropped. Found at
/// `FENCEPOST_MOTO_SERVER`, else `target/tools/moto/bin/moto_server` (what `scripts/test`
/// installs). A test that needs it fails, never skips, when it is missing.
pub struct Moto {
    child: Child,
    pub endpoint: String,
}

impl Moto {
    /// A client of `bucket` on this server, as a test writes behind fencepost's back (its
    /// endpoint and credentials given: no credential chain is ever asked).
    pub fn store(&self, bucket: &str) -> object_store::aws::AmazonS3 {
        // fencepost builds its clients with the process's rustls provider (see Cargo.toml);
        // a test's own client needs one installed in the test's process too.
        let _ = rustls::crypto::ring::default_provider().install_default();
        object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(bucket)
            .with_endpoint(&self.endpoint)
            .with_allow_http(true)
            .with_access_key_id("testing")
            .with_secret_access_key("testing")
            .with_region("us-east-1")
            .build()
            .unwrap()
    }

    /// Starts moto on a free port. The port is found free and then handed to moto, which
    /// binds it a moment later: another process may take it between the two, and moto then
    /// exits. A start that ends so is made again on another port (five tries), so a lost port
    /// is not a failed test.
    pub fn start() -> Moto {
        for _ in 0..4 {
            if let Some(moto) = Self::try_start() {
                return moto;
            }
        }
        Self::try_start().expect("moto exited before it answered, five times over")
    }

    /// One start: `None` when moto exited before it answered (its port taken meanwhile).
    fn try_start() -> Option<Moto> {
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
        // moto's own python runs it with its conditional writes made atomic, as every real
        // store's are (see scripts/moto_atomic.py).
        let python = bin.with_file_name("python");
        assert!(
            python.exists(),
            "moto's venv has no python at {}: run scripts/test, which installs it",
            python.display()
        );
        let wrapper = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/moto_atomic.py");
        let child = std::process::Command::new(&python)
            .arg(&wrapper)
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
                eprintln!("moto exited ({status}) before it answered on {addr} (port taken?)");
                return None;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "moto did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // What answered may be another test's server on the port this one lost.
        if let Ok(Some(status)) = moto.child.try_wait() {
            eprintln!("moto exited ({status}); what answered on {addr} was another server");
            return None;
        }
        Some(moto)
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
    /// Whether `If-Match`/`If-None-Match` are stripped (set it any time: a store that stops
    /// honouring them).
    pub strip: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// (a path fragment, how many): the next that many PUTs whose path holds the fragment and
    /// that the server accepted have their answer replaced by a 500 — a write that landed but
    /// whose answer was lost (the client's retry then hears the server's own answer).
    pub lose_answers: std::sync::Arc<std::sync::Mutex<(String, u32)>>,
}

impl Proxy {
    pub fn start(upstream: &str, strip_conditionals: bool) -> Proxy {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let shared = Shared {
            upstream: upstream.trim_start_matches("http://").to_string(),
            log: Default::default(),
            delay_ms: Default::default(),
            strip: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(strip_conditionals)),
            lose_answers: Default::default(),
        };
        let proxy = Proxy {
            endpoint,
            log: shared.log.clone(),
            delay_ms: shared.delay_ms.clone(),
            strip: shared.strip.clone(),
            lose_answers: shared.lose_answers.clone(),
        };
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                let shared = shared.clone();
                std::thread::spawn(move || shared.handle(client));
            }
        });
        proxy
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

/// What the proxy's connection threads share with its [`Proxy`].
#[derive(Clone)]
struct Shared {
    upstream: String,
    log: std::sync::Arc<std::sync::Mutex<Vec<(String, String, u16)>>>,
    delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    strip: std::sync::Arc<std::sync::atomic::AtomicBool>,
    lose_answers: std::sync::Arc<std::sync::Mutex<(String, u32)>>,
}

/// A request as read off the client: its head's lines (the blank one last) and its body.
struct Request {
    method: String,
    path: String,
    head: Vec<String>,
    body: Vec<u8>,
}

impl Request {
    fn read(reader: &mut impl std::io::BufRead) -> Option<Request> {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return None;
            }
            let end = line == "\r\n";
            head.push(line);
            if end {
                break;
            }
        }
        let mut parts = head[0].split_whitespace();
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
        reader.read_exact(&mut body).ok()?;
        Some(Request {
            method,
            path,
            head,
            body,
        })
    }
}

impl Shared {
    /// One request per connection: the answer says Connection: close.
    fn handle(&self, client: std::net::TcpStream) {
        use std::io::Write;
        let mut reader = std::io::BufReader::new(client.try_clone().unwrap());
        let mut client = client;
        let Some(req) = Request::read(&mut reader) else {
            return;
        };
        let Some(response) = self.forward(&req) else {
            return;
        };
        let status: u16 = String::from_utf8_lossy(&response)
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let lost = req.method == "PUT" && (200..300).contains(&status) && self.lose(&req.path);
        self.log
            .lock()
            .unwrap()
            .push((req.method, req.path, status));
        if lost {
            let _ = client.write_all(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            );
            return;
        }
        let _ = client.write_all(&closing(&response));
    }

    /// The request sent upstream (its conditionals stripped when asked, after the delay
    /// asked for); the whole answer.
    fn forward(&self, req: &Request) -> Option<Vec<u8>> {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let forwarded: String = (req.head.iter())
            .filter(|l| {
                let k = l.split(':').next().unwrap_or("").to_ascii_lowercase();
                k != "connection"
                    && !(self.strip.load(Ordering::SeqCst)
                        && (k == "if-match" || k == "if-none-match"))
            })
            .map(|l| match l == "\r\n" {
                true => "Connection: close\r\n\r\n".to_string(),
                false => l.clone(),
            })
            .collect();
        let wait = self.delay_ms.load(Ordering::SeqCst);
        if wait > 0 {
            std::thread::sleep(std::time::Duration::from_millis(wait));
        }
        let mut up = std::net::TcpStream::connect(&self.upstream).ok()?;
        up.write_all(forwarded.as_bytes()).ok()?;
        up.write_all(&req.body).ok()?;
        let mut response = Vec::new();
        let _ = up.read_to_end(&mut response);
        Some(response)
    }

    /// Whether the answer to an accepted PUT of `path` is to be lost (and counts it).
    fn lose(&self, path: &str) -> bool {
        let mut l = self.lose_answers.lock().unwrap();
        let hit = l.1 > 0 && !l.0.is_empty() && path.contains(l.0.as_str());
        if hit {
            l.1 -= 1;
        }
        hit
    }
}

/// `response` with its `Connection` header replaced by `close`, so the client never reuses
/// the connection.
fn closing(response: &[u8]) -> Vec<u8> {
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
    bytes
}
