//! The origin under hostile requests and files: half-sent requests, symlinks planted after
//! start, SVG sandboxed, nothing sniffed.
use crate::common::*;
use std::time::{Duration, Instant as Wall};

// 5. Medium: serve could be pinned open.

#[test]
fn half_sent_requests_neither_starve_clients_nor_hold_shutdown() {
    use std::io::{Read, Write};
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.build(&[]);
    s.write(
        "fencepost.toml",
        "[serve]\nheader_timeout_secs = 1\nmax_connections = 32\nshutdown_deadline_secs = 2\n",
    );
    let srv = s.serve(&[]);
    // 200 clients that send half a request and then nothing (slowloris).
    let mut slow: Vec<std::net::TcpStream> = (0..200)
        .filter_map(|_| std::net::TcpStream::connect(&srv.addr).ok())
        .collect();
    for c in &mut slow {
        let _ = c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ");
    }
    // A real client is still served, within a few header timeouts.
    let start = Wall::now();
    let r = srv.get("/answers/1/");
    assert_eq!(r.status, 200);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "a real client waited {:?}",
        start.elapsed()
    );
    // The server closes the half-sent ones that it accepted once their header timeout
    // passes: watched as it happens, not guessed with a sleep.
    let mut closed = vec![false; slow.len()];
    for c in &slow {
        c.set_nonblocking(true).unwrap();
    }
    wait_for("the server to close 32 half-sent connections", || {
        for (c, closed) in slow.iter_mut().zip(closed.iter_mut()) {
            let mut buf = [0u8; 512];
            // EOF, an error response before the close, or a reset: the server gave up on
            // it. Nothing to read yet: still open.
            match c.read(&mut buf) {
                Ok(_) => *closed = true,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => *closed = true,
                Err(_) => {}
            }
        }
        closed.iter().filter(|c| **c).count() >= 32
    });
    // SIGTERM completes even while half-sent requests are open.
    let mut open: Vec<std::net::TcpStream> = (0..20)
        .map(|_| std::net::TcpStream::connect(&srv.addr).unwrap())
        .collect();
    for c in &mut open {
        c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    }
    let start = Wall::now();
    assert_eq!(srv.stop().code(), Some(0));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "shutdown took {:?}",
        start.elapsed()
    );
}

// 10. Low: a folder symlink planted in a revision after the first request escaped it.

#[test]
fn a_folder_symlink_planted_after_the_first_request_does_not_escape() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    let big = "b".repeat(400 * 1024); // streamed, not kept in memory
    s.write("static/big/blob.bin", &big);
    s.build(&[]);
    let srv = s.serve(&[]);
    let first = srv.get("/big/blob.bin");
    assert_eq!(first.status, 200);
    assert_eq!(first.body.len(), big.len());
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("blob.bin"),
        "SECRET".repeat(70 * 1024).as_bytes(),
    )
    .unwrap();
    let rev = s.current_dir();
    std::fs::remove_dir_all(rev.join("big")).unwrap();
    std::os::unix::fs::symlink(outside.path(), rev.join("big")).unwrap();
    let again = srv.get("/big/blob.bin");
    assert_ne!(again.status, 200);
    assert!(!again.text().contains("SECRET"));
}

// 11. Low: SVG served without a sandbox.

#[test]
fn svg_is_served_sandboxed_and_nothing_is_sniffed() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.publish(NOW);
    s.write(
        "static/logo.svg",
        "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>",
    );
    s.build(&[]);
    let srv = s.serve(&[]);
    let r = srv.get("/logo.svg");
    assert_eq!(r.status, 200);
    let csp = r.header("content-security-policy").unwrap_or_default();
    assert!(
        csp.contains("sandbox") && csp.contains("default-src 'none'"),
        "{csp}"
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(
        srv.get("/").header("x-content-type-options"),
        Some("nosniff")
    );
    let watch = s.serve(&["--watch"]);
    let r = watch.get("/logo.svg");
    assert!(r
        .header("content-security-policy")
        .unwrap_or_default()
        .contains("sandbox"));
}
