//! `fencepost run` stopped by SIGTERM in the middle of a build, a publish and a deploy (fail
//! points): exit 0 within the deadline, leases given back, the next run carries on.
use super::*;

/// `FAILPOINTS` and a log the process appends each fail point it reaches to.
fn failpoints(s: &TestSite, spec: &str) -> (Vec<(String, String)>, std::path::PathBuf) {
    let log = s.path("failpoints.log");
    (
        vec![
            ("FAILPOINTS".to_string(), spec.to_string()),
            (
                "FENCEPOST_FAILPOINT_LOG".to_string(),
                log.display().to_string(),
            ),
        ],
        log,
    )
}

fn reached(log: &std::path::Path, point: &str) -> bool {
    std::fs::read_to_string(log).is_ok_and(|t| t.lines().any(|l| l == point))
}

/// A site with items 1–3 due and a 2 s shutdown deadline; a run stalled 10 s at `point`
/// (after `before_signal` looked at it there), then SIGTERM: exit 0 within the deadline,
/// with no cycle reported.
fn stalled_and_stopped(point: &str, before_signal: impl FnOnce(&TestSite)) -> TestSite {
    let s = TestSite::new();
    configure(&s, "[serve]\nshutdown_deadline_secs = 2\n");
    for id in 1..=3 {
        s.item(id, "2026-11-01");
    }
    let (env, log) = failpoints(&s, &format!("{point}=sleep(10000)"));
    let r = Running::start(&s, &[], &env);
    wait_for(point, || reached(&log, point));
    before_signal(&s);
    let (status, took, cycles) = r.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "exit 0 on SIGTERM");
    assert!(
        took < Duration::from_millis(2000 + 1500),
        "exited {took:?} after SIGTERM (deadline 2 s)"
    );
    assert!(
        cycles.is_empty(),
        "the abandoned cycle reported nothing: {cycles:?}"
    );
    s
}

#[cfg(feature = "failpoints")]
#[test]
fn sigterm_in_the_middle_of_a_build_exits_0_within_the_deadline_and_the_next_run_builds() {
    // The build stalls after rendering, before its pointer moves.
    let s = stalled_and_stopped("build.after_render", |_| {});
    // Published, not yet live: the pointer never moved.
    assert_eq!(s.items_in(State::Published), 3);
    assert!(
        !s.path("public/current").exists(),
        "the abandoned build moved the pointer"
    );
    // The next run resumes: nothing to publish, the build completes.
    let r = Running::start(&s, &["--cycles", "1"], &[]);
    let c = r.next_cycle(Duration::from_secs(30));
    assert!(c["error"].is_null(), "{c}");
    assert_eq!(
        c["publish"]["published"].as_array().unwrap().len(),
        0,
        "nothing twice: {c}"
    );
    assert_eq!(c["build"]["pointer"], "moved", "{c}");
    assert_eq!(c["revision"], 3);
    for id in 1..=3 {
        assert!(s
            .current_file(&format!("answers/{id}/index.html"))
            .contains(&format!("item {id}")));
    }
    assert_eq!(s.audited("publish"), 3);
    s.cmd(&["verify"]).assert().success();
}

#[cfg(feature = "failpoints")]
#[test]
fn sigterm_in_the_middle_of_a_publish_gives_its_leases_back_so_the_next_run_publishes_at_once() {
    // The publish stalls with its leases taken (180 s each), before its commit.
    let s = stalled_and_stopped("publish.before_commit", |s| {
        assert_eq!(s.status()["leases"], 3);
    });
    assert!(r_log_says(&s, "gave back"), "the log names the give-back");
    assert_eq!(s.status()["leases"], 0, "every lease given back");
    assert_eq!(s.items_in(State::Published), 0);
    // The next run takes the items at once, not after 180 s: each published once.
    let r = Running::start(&s, &["--cycles", "1"], &[]);
    let c = r.next_cycle(Duration::from_secs(30));
    assert_eq!(
        c["publish"]["published"].as_array().unwrap().len(),
        3,
        "{c}"
    );
    assert_eq!(
        c["publish"]["skipped_locked"].as_array().unwrap().len(),
        0,
        "{c}"
    );
    assert_eq!(s.audited("publish"), 3);
}

/// Whether any `fencepost run` stderr of this site mentions `text`.
fn r_log_says(s: &TestSite, text: &str) -> bool {
    std::fs::read_dir(s.root()).unwrap().flatten().any(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        name.starts_with("run-")
            && name.ends_with(".err")
            && std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains(text))
    })
}

#[cfg(feature = "failpoints")]
#[test]
fn sigterm_in_the_middle_of_a_deploy_interrupts_it_and_the_next_run_resumes_it() {
    let moto = Moto::start();
    moto.bucket("runs");
    let mut env = Moto::env(&moto.endpoint);
    let s = TestSite::new();
    configure(
        &s,
        "[serve]\nshutdown_deadline_secs = 5\n\n[deploy]\nto = \"s3://runs/www\"\n",
    );
    for id in 1..=3 {
        s.item(id, "2026-11-01");
    }
    let (fp, log) = failpoints(&s, "deploy.after_blobs=sleep(1500)");
    env.extend(fp);
    let r = Running::start(&s, &["--deploy"], &env);
    wait_for("the deploy to reach deploy.after_blobs", || {
        reached(&log, "deploy.after_blobs")
    });
    let (status, took, cycles) = r.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "exit 0 on SIGTERM");
    assert!(
        took < Duration::from_secs(5),
        "exited {took:?} after SIGTERM (deadline 5 s)"
    );
    // The deploy stopped at its next step boundary, its lease released.
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let c = &cycles[0];
    assert_eq!(c["deploy"]["outcome"], "interrupted", "{c}");
    assert!(
        c["failed_step"].is_null(),
        "an interruption is not a failure: {c}"
    );
    let operation = c["deploy"]["operation"].clone();
    assert!(operation.is_string(), "{c}");
    // Not live at the bucket yet.
    let origin = s.serve_env(&["--from", "s3://runs/www"], &Moto::env(&moto.endpoint));
    assert_ne!(
        try_http(&origin.addr, "GET", "/answers/1/", &[])
            .map(|r| r.status)
            .ok(),
        Some(200)
    );
    // The next run resumes the same operation at once (no lease to wait out) and carries it out.
    let started = Instant::now();
    let r = Running::start(
        &s,
        &["--deploy", "--cycles", "1"],
        &Moto::env(&moto.endpoint),
    );
    let c = r.next_cycle(Duration::from_secs(30));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(c["deploy"]["outcome"], "deployed", "{c}");
    assert_eq!(c["deploy"]["resumed"], true, "{c}");
    assert_eq!(c["deploy"]["operation"], operation, "{c}");
    assert_eq!(
        c["publish"]["published"].as_array().unwrap().len(),
        0,
        "{c}"
    );
    wait_for("the bucket's origin to serve item 3", || {
        try_http(&origin.addr, "GET", "/answers/3/", &[]).is_ok_and(|r| r.status == 200)
    });
    assert_eq!(s.audited("publish"), 3);
}
