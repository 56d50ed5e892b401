//! End to end in headless Chromium: open a page of `fencepost serve --watch`, edit its
//! Markdown file and see the new text appear without any action from the test, then break a
//! template and see the error page, then fix it and see the page again.
//!
//! Needs Debian's `chromium` and `npm install` in tests/e2e (`.ci/run` does both).
use crate::common::*;

#[test]
fn live_preview_in_a_real_browser() {
    let e2e = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    assert!(
        std::path::Path::new("/usr/bin/chromium").exists(),
        "this test needs Debian's chromium: apt-get install chromium"
    );
    assert!(
        e2e.join("node_modules/playwright-core").exists(),
        "this test needs playwright-core: (cd tests/e2e && npm install)"
    );
    let s = TestSite::new();
    s.item(1, "2026-11-01").item(2, "2026-11-02");
    s.publish(NOW);
    let srv = s.serve(&["--watch"]);
    let shots = std::env::var("FENCEPOST_SCREENSHOTS").unwrap_or_default();
    let out = std::process::Command::new("node")
        .arg(e2e.join("watch.mjs"))
        .arg(format!("http://{}", srv.addr))
        .arg(s.root())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/templates/answer.html"
        ))
        .arg(&shots)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "browser test failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(srv.stop().code(), Some(0));
}
