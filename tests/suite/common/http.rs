//! HTTP for the tests: `fencepost serve` as a child process, a raw HTTP/1.1 client that sends
//! request targets exactly as written, and a tiny image server.
#![allow(dead_code)]

use super::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

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

    /// `fencepost --site root serve … [extra]` of any folder (`root` need not be a site).
    pub fn serve_in_with(&self, root: &Path, extra: &[&str]) -> Server {
        let log = self.path(&format!(".serve-{}.log", uuid_like()));
        serve_child(root, extra, &[], &log)
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
        let mut child = fencepost()
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

/// A static file server (Python's) on 127.0.0.1 at a free port serving `root` — over TLS with
/// `tls` (a folder from [`test_tls`]: `server.crt`, `server.key`). A plain host, as a CDN or a
/// release download serves files. Returns the child (kill it when done) and the port.
pub fn file_server(root: &Path, tls: Option<&Path>) -> (Child, u16) {
    let script = "import functools, http.server, ssl, sys\n\
        root = sys.argv[1]\n\
        class Quiet(http.server.SimpleHTTPRequestHandler):\n    def log_message(self, *a): pass\n\
        srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=root))\n\
        if len(sys.argv) > 2:\n\
        \x20   ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
        \x20   ctx.load_cert_chain(sys.argv[2], sys.argv[3])\n\
        \x20   srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n\
        print(srv.server_address[1], flush=True)\n\
        srv.serve_forever()\n";
    let mut cmd = std::process::Command::new("python3");
    cmd.arg("-c").arg(script).arg(root);
    if let Some(tls) = tls {
        cmd.arg(tls.join("server.crt")).arg(tls.join("server.key"));
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 serves the files");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("the file server did not start: {line:?}"));
    (child, port)
}

/// Opens a preview link at `addr` (`target`: its path and query): it must answer 303; the
/// cookie it sets (`fp_preview=…`), as a request sends it back.
pub fn open_preview(addr: &str, target: &str) -> String {
    let opened = http(addr, "GET", target, &[]);
    assert_eq!(opened.status, 303, "{target}: {}", opened.text());
    let cookie = opened.header("set-cookie").expect("a cookie");
    cookie.split(';').next().unwrap().to_string()
}
