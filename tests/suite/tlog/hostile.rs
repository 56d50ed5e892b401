//! Issue 78.4: `tlog verify` against a hostile server. The adversary is the server a reader
//! points the check at — the site's publisher (who holds the log's signing key) or anyone
//! answering for it: it chooses every status, header, byte and delay. The reader's check
//! must end, within its deadline, in bounded memory, reading nothing off the site's origin,
//! and name what it refused.

use super::write_log;
use crate::common::*;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the hostile server answers for a path.
enum Answer {
    Bytes(Vec<u8>),
    Redirect(String),
    /// The body one byte per second, forever.
    Drip,
    NotFound,
}

/// A server on 127.0.0.1 answering each request by `answer(path)`; its port and how many
/// requests it has had. It lives as long as the test process (one thread per connection).
fn hostile(answer: impl Fn(&str) -> Answer + Send + Sync + 'static) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let (answer, counted) = (Arc::new(answer), hits.clone());
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let (answer, counted) = (answer.clone(), counted.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                let _ = reader.read_line(&mut line);
                let path = line.split(' ').nth(1).unwrap_or("/").to_string();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) <= 2 {
                        break;
                    }
                }
                counted.fetch_add(1, Ordering::SeqCst);
                respond(conn, answer(&path));
            });
        }
    });
    (port, hits)
}

fn respond(mut conn: std::net::TcpStream, answer: Answer) {
    let head = |status: &str, extra: &str, len: Option<usize>| {
        let len = len
            .map(|n| format!("content-length: {n}\r\n"))
            .unwrap_or_default();
        format!("HTTP/1.1 {status}\r\n{extra}{len}connection: close\r\n\r\n")
    };
    let _ = match answer {
        Answer::Bytes(b) => conn
            .write_all(head("200 OK", "", Some(b.len())).as_bytes())
            .and_then(|_| conn.write_all(&b)),
        Answer::Redirect(to) => {
            conn.write_all(head("302 Found", &format!("location: {to}\r\n"), Some(0)).as_bytes())
        }
        Answer::NotFound => conn.write_all(head("404 Not Found", "", Some(0)).as_bytes()),
        Answer::Drip => conn
            .write_all(head("200 OK", "", Some(1 << 20)).as_bytes())
            .and_then(|_| loop {
                conn.write_all(b"x")?;
                conn.flush()?;
                std::thread::sleep(Duration::from_secs(1));
            }),
    };
}

/// A log of `n` entries signed by a fresh key, written into a temporary folder: (folder of
/// the log's files, the verifier key, the signer).
fn a_log(n: usize) -> (tempfile::TempDir, String, fencepost_tlog::note::LogSigner) {
    let keys = fencepost_tlog::note::generate("example.org/hostile").unwrap();
    let signer = fencepost_tlog::note::LogSigner::from_skey(&keys.skey).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<String> = (0..n)
        .map(|i| {
            fencepost_tlog::entry::Entry::Revision {
                ledger: "L".into(),
                revision: i as u64 + 1,
                build: "1".into(),
                manifest: "a".repeat(64),
                audit: "b".repeat(64),
            }
            .to_text()
        })
        .collect();
    write_log(dir.path(), &signer, &entries, &[n]);
    (dir, keys.vkey, signer)
}

/// The files of `log` served under /.well-known/fencepost/log/.
fn served(log: &std::path::Path, path: &str) -> Answer {
    match path.strip_prefix("/.well-known/fencepost/log/") {
        Some(rel) => match std::fs::read(log.join(rel)) {
            Ok(b) => Answer::Bytes(b),
            Err(_) => Answer::NotFound,
        },
        None => Answer::NotFound,
    }
}

/// `tlog verify URL --vkey VKEY [extra]`, whatever its exit: (status, stdout + stderr, how
/// long it took).
fn check(url: &str, vkey: &str, extra: &[&str]) -> (Option<i32>, String, Duration) {
    let started = Instant::now();
    let out = fencepost()
        .args(["tlog", "verify", url, "--vkey", vkey])
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text, started.elapsed())
}

/// A redirect to another origin (another port of the same host is another origin) is
/// refused and the other server is never asked; a redirect within the origin is followed.
#[test]
fn verify_never_follows_a_redirect_off_the_sites_origin() {
    let (log, vkey, _) = a_log(3);
    let (elsewhere, asked) = {
        let log = log.path().to_path_buf();
        hostile(move |p| served(&log, p))
    };
    let (port, _) = hostile(move |_| {
        Answer::Redirect(format!(
            "http://127.0.0.1:{elsewhere}/.well-known/fencepost/log/checkpoint"
        ))
    });
    let (code, text, _) = check(&format!("http://127.0.0.1:{port}/"), &vkey, &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("redirected off the site's origin"), "{text}");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        0,
        "the other origin was asked"
    );

    let moved = log.path().to_path_buf();
    let (port, _) = hostile(move |p| match p.strip_prefix("/.well-known/fencepost/") {
        Some(rel) => Answer::Redirect(format!("/moved/{rel}")),
        None => served(&moved, &p.replacen("/moved/", "/.well-known/fencepost/", 1)),
    });
    let (code, text, _) = check(&format!("http://127.0.0.1:{port}/"), &vkey, &[]);
    assert_eq!(
        code,
        Some(0),
        "a redirect within the origin is followed: {text}"
    );
}

/// The log's own publisher turned hostile: a bundle of 8 million empty entries where its
/// path says 3, and a checkpoint signed for 2^40 entries, are each refused while parsing —
/// before the memory they name is taken (the process used to abort, exit 134, allocating
/// 114 TB) — with what was refused named.
#[test]
fn verify_refuses_counts_the_server_chose_before_allocating() {
    let (log, vkey, signer) = a_log(3);
    std::fs::write(log.path().join("tile/entries/000.p/3"), vec![0u8; 16 << 20]).unwrap();
    let dir = log.path().to_path_buf();
    let (port, _) = hostile(move |p| served(&dir, p));
    let (code, text, _) = check(&format!("http://127.0.0.1:{port}/"), &vkey, &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("holds more than the 3 entries its path says"),
        "{text}"
    );

    let huge = signer.sign_checkpoint(1 << 40, fencepost_tlog::Hash([7u8; 32]));
    let (port, _) = hostile(move |p| match p.ends_with("/log/checkpoint") {
        true => Answer::Bytes(huge.clone()),
        false => Answer::NotFound,
    });
    let (code, text, _) = check(&format!("http://127.0.0.1:{port}/"), &vkey, &[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("names 1099511627776 entries, more than a reader checks"),
        "{text}"
    );
}

/// A server dripping one byte a second costs the reader the deadline it chose, not 30 s a
/// file with no end: the check fails naming the deadline.
#[test]
fn a_dripping_server_fails_the_check_at_its_deadline() {
    let (log, vkey, _) = a_log(3);
    let dir = log.path().to_path_buf();
    let (port, _) = hostile(move |p| match p.contains("/tile/") {
        true => Answer::Drip,
        false => served(&dir, p),
    });
    let url = format!("http://127.0.0.1:{port}/");
    let (code, text, _) = check(&url, &vkey, &["--deadline", "3"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("total deadline of 3 s"), "{text}");
    assert!(
        !text.contains("Merkle"),
        "a slow tile is not a proof failing: {text}"
    );
}

/// A signing key given where the verifier key belongs is refused as one, and no output
/// repeats it (it used to be printed in full).
#[test]
fn a_signing_key_given_as_the_verifier_key_is_refused_unrepeated() {
    let keys = fencepost_tlog::note::generate("example.org/hostile").unwrap();
    let secret = keys.skey.rsplit('+').next().unwrap().to_string();
    let (log, _, _) = a_log(1);
    for extra in [&[][..], &["--json"][..]] {
        let (code, text, _) = check(log.path().to_str().unwrap(), &keys.skey, extra);
        assert_eq!(code, Some(1), "{text}");
        assert!(text.contains("is a signing key"), "{text}");
        assert!(
            !text.contains(&secret),
            "the signing key is repeated: {text}"
        );
    }
    let out = fencepost()
        .args([
            "tlog",
            "verify",
            log.path().to_str().unwrap(),
            "--vkey",
            "x+y",
        ])
        .args(["--witness", &keys.skey])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("is a signing key"),
        "{text}"
    );
    assert!(!text.contains(&secret), "{text}");
}
