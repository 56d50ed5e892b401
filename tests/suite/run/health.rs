//! `fencepost run` over time and through trouble: deploys reaching `serve --from`, a soak of
//! 10,000 cycles, a bucket down, old revisions collected.
use super::*;

#[test]
fn deployed_items_reach_serve_from_within_the_target_and_the_pointer_ttl() {
    let _t = timing();
    let moto = Moto::start();
    moto.bucket("runs");
    let env = Moto::env(&moto.endpoint);
    let s = TestSite::new();
    s.write(
        "fencepost.toml",
        &(std::fs::read_to_string(s.path("fencepost.toml")).unwrap()
            + "\n[deploy]\nto = \"s3://runs/www\"\n"),
    );
    let r = Running::start(&s, &["--deploy"], &env);
    let c = r.next_cycle(Duration::from_secs(30));
    assert_eq!(c["deploy"]["outcome"], "deployed", "{c}");
    let origin = s.serve_env(&["--from", "s3://runs/www"], &env);
    let base = Utc::now() + chrono::Duration::milliseconds(1500);
    let due: BTreeMap<i64, DateTime<Utc>> = (1..=5)
        .map(|i| (i, base + chrono::Duration::milliseconds(400 * (i - 1))))
        .collect();
    for (&id, &at) in &due {
        item_at(&s, id, at);
    }
    let seen = watch_items(
        std::slice::from_ref(&origin.addr),
        &due,
        Duration::from_secs(30),
    );
    // serve.pointer_ttl_ms is 1 s by default.
    assert_within(&seen, TARGET + Duration::from_millis(1000));
    // The site's base_url is localhost: said once, not at every one of the cycles' deploys.
    let warned = r.log().matches("base_url is a local address").count();
    assert_eq!(warned, 1, "{}", r.log());
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}

/// VmRSS of a process, in KiB.
fn rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn open_fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

#[test]
fn a_soak_of_10000_cycles_keeps_rss_flat_and_leaks_no_file_descriptor() {
    let _t = timing();
    let s = TestSite::new();
    configure(&s, "[run]\npoll_secs = 0.001\n");
    let r = Running::start(&s, &[], &[]);
    // Items due every few milliseconds of the soak, written as it goes.
    let mut next_item = 1i64;
    let mut sample = None;
    let mut cycles = 0u64;
    let mut lags = BTreeMap::new();
    let started = Instant::now();
    while cycles < 10_000 {
        let c = r.next_cycle(Duration::from_secs(30));
        cycles = c["cycle"].as_u64().unwrap();
        assert!(c["error"].is_null(), "{c}");
        for l in c["lags"].as_array().unwrap() {
            *lags.entry(l["item"].as_i64().unwrap()).or_insert(0) += 1;
            assert!(l["lag_ms"].as_i64().unwrap() >= 0, "{l}");
        }
        if cycles.is_multiple_of(40) && next_item <= 200 {
            item_at(
                &s,
                next_item,
                Utc::now() + chrono::Duration::milliseconds(5),
            );
            next_item += 1;
        }
        if cycles == 1_000 {
            sample = Some((rss_kib(r.pid()), open_fds(r.pid())));
        }
    }
    let (rss_end, fds_end) = (rss_kib(r.pid()), open_fds(r.pid()));
    let (rss_start, fds_start) = sample.unwrap();
    println!(
        "soak: 10,000 cycles in {:.1} s; VmRSS at cycle 1,000: {rss_start} KiB, at 10,000: {rss_end} KiB; open fds {fds_start} -> {fds_end}",
        started.elapsed().as_secs_f64()
    );
    let (status, _, rest) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
    for c in rest {
        for l in c["lags"].as_array().unwrap() {
            *lags.entry(l["item"].as_i64().unwrap()).or_insert(0) += 1;
        }
    }
    assert!(
        fds_end <= fds_start,
        "file descriptors leaked: {fds_start} -> {fds_end}"
    );
    // Flat: within 8 MiB (the site grew from 0 to 200 items meanwhile).
    assert!(
        rss_end <= rss_start + 8 * 1024,
        "RSS grew: {rss_start} -> {rss_end} KiB"
    );
    let written = next_item - 1;
    assert!(written >= 200, "only {written} items written");
    assert!(lags.values().all(|&n| n == 1), "an item reported twice");
    assert_eq!(s.audited("publish"), lags.len());
}

/// The metrics `addr` serves, as text.
fn scrape(addr: &str) -> String {
    let resp = http(addr, "GET", "/metrics", &[]);
    assert_eq!(resp.status, 200);
    assert!(resp
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    resp.text()
}

/// After the `first` failed cycle the next waits at least a second, and the one after twice
/// that; what was built is served locally all the while.
fn two_failures_back_off_doubling(r: &Running, first: &Value) {
    let retry1: DateTime<Utc> = first["retry_at"].as_str().unwrap().parse().unwrap();
    let ended1: DateTime<Utc> = first["ended_at"].as_str().unwrap().parse().unwrap();
    assert!((retry1 - ended1).num_milliseconds() >= 900, "{first}");
    // What was built is served locally all the while.
    assert_eq!(http(&r.serve_addr(), "GET", "/answers/1/", &[]).status, 200);
    let second = r.next_cycle(Duration::from_secs(30));
    assert_eq!(second["woke_for"][0], "retry", "{second}");
    assert_eq!(second["failed_step"], "deploy", "{second}");
    let retry2: DateTime<Utc> = second["retry_at"].as_str().unwrap().parse().unwrap();
    let ended2: DateTime<Utc> = second["ended_at"].as_str().unwrap().parse().unwrap();
    assert!(
        (retry2 - ended2).num_milliseconds() >= 1900,
        "the back-off doubles: {second}"
    );
}

#[test]
fn a_bucket_down_backs_off_keeps_serving_and_says_so_in_the_log_and_the_metrics() {
    let _t = timing();
    let moto = Moto::start();
    let env = Moto::env(&moto.endpoint);
    let s = TestSite::new();
    // The bucket does not exist yet: every deploy fails until it does.
    configure(
        &s,
        "[run]\nmax_backoff_secs = 2\n\n[deploy]\nto = \"s3://later/www\"\n",
    );
    s.item(1, "2026-11-01");
    let r = Running::start(
        &s,
        &[
            "--deploy",
            "--serve",
            "127.0.0.1:0",
            "--metrics",
            "127.0.0.1:0",
        ],
        &env,
    );
    let metrics_addr = r.first["metrics"].as_str().unwrap().to_string();
    let scrape = || scrape(&metrics_addr);
    let first = r.next_cycle(Duration::from_secs(30));
    assert_eq!(first["failed_step"], "deploy", "{first}");
    assert!(
        first["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{first}"
    );
    two_failures_back_off_doubling(&r, &first);
    let text = scrape();
    expect_metrics(
        &text,
        &[
            ("fencepost_failures_total{step=\"deploy\"}", 2.0),
            // The other steps' series exist, at 0, before any failure of theirs.
            ("fencepost_failures_total{step=\"build\"}", 0.0),
            ("fencepost_failures_total{step=\"publish\"}", 0.0),
            ("fencepost_last_cycle_ok", 0.0),
            ("fencepost_items_published_total", 1.0),
            ("fencepost_revision", 1.0),
            ("fencepost_cycles_total", 2.0),
        ],
    );
    assert!(r.log().contains("cycle failed"), "{}", r.log());
    // The bucket comes back: the next attempt carries the deploy out.
    moto.bucket("later");
    let third = r.next_cycle(Duration::from_secs(30));
    assert!(third["failed_step"].is_null(), "{third}");
    assert_eq!(third["deploy"]["outcome"], "deployed", "{third}");
    // Item 1, published by the first cycle, is live at the target only now: reported once,
    // here, with its whole lag.
    assert_eq!(first["lags"][0]["item"], 1, "{first}");
    assert!(first["lags"][0]["live_at"].is_null(), "{first}");
    assert_eq!(third["caught_up"].as_array().unwrap().len(), 1, "{third}");
    assert_eq!(third["caught_up"][0]["item"], 1, "{third}");
    assert!(
        third["caught_up"][0]["live_lag_ms"].as_i64().unwrap() >= 3000,
        "{third}"
    );
    let text = scrape();
    expect_metrics(
        &text,
        &[
            ("fencepost_last_cycle_ok", 1.0),
            ("fencepost_parked_deploys", 0.0),
            ("fencepost_parked_items", 0.0),
            ("fencepost_seconds_until_next_change", -1.0),
            // Item 1's lag, observed once.
            ("fencepost_embargo_lag_seconds_count", 1.0),
        ],
    );
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_run_keeps_only_the_newest_revisions_it_built() {
    let s = TestSite::new();
    configure(&s, "[run]\nkeep_revisions = 2\ngc_grace_secs = 0\n");
    let r = Running::start(&s, &["--serve", "127.0.0.1:0"], &[]);
    r.next_cycle(Duration::from_secs(30));
    for id in 1..=5 {
        s.item(id, "2026-11-01");
        // The file change wakes a cycle that publishes it, builds, and collects.
        loop {
            let c = r.next_cycle(Duration::from_secs(30));
            assert!(c["error"].is_null(), "{c}");
            if c["lags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["item"] == id)
            {
                assert!(c["gc"].is_object(), "{c}");
                assert!(c["durations_ms"]["gc"].is_u64(), "{c}");
                break;
            }
        }
    }
    let complete: Vec<String> = std::fs::read_dir(s.path("public/revisions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(complete.len(), 2, "{complete:?}");
    assert!(complete.iter().any(|n| n.starts_with("5-")), "{complete:?}");
    for id in 1..=5 {
        assert_eq!(
            http(&r.serve_addr(), "GET", &format!("/answers/{id}/"), &[]).status,
            200
        );
    }
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}

/// A page whose template fails is said loudly, every cycle until it is fixed: in each cycle's
/// JSON (`held_pages`), on stderr, in `/metrics` (`fencepost_pages_held`, and
/// `last_cycle_ok` 0) and in `status`; the other item went live at its instant all the same.
#[test]
fn a_held_page_is_said_every_cycle_until_its_template_is_fixed() {
    let _t = timing();
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    let template = std::fs::read_to_string(s.path("templates/answer.html")).unwrap();
    s.write(
        "templates/answer.html",
        &template.replace("{{ page.price }}", "{{ page.price | date }}"),
    );
    let r = Running::start(&s, &["--metrics", "127.0.0.1:0"], &[]);
    let metrics_addr = r.first["metrics"].as_str().unwrap().to_string();
    let first = r.next_cycle(Duration::from_secs(30));
    assert_eq!(
        first["publish"]["published"],
        serde_json::json!([1]),
        "{first}"
    );
    assert_eq!(
        first["held_pages"][0]["path"], "answers/1/index.html",
        "{first}"
    );
    assert!(
        s.current_file("index.html").contains("/answers/1/"),
        "the rest is live"
    );
    // A file changed elsewhere: the next cycle says it again.
    s.write(
        "content/about.md",
        "+++\ntitle = \"About\"\n+++\n\nAgain.\n",
    );
    let second = r.next_cycle(Duration::from_secs(30));
    assert_eq!(
        second["held_pages"][0]["path"], "answers/1/index.html",
        "{second}"
    );
    assert!(r.log().matches("page HELD").count() >= 2, "{}", r.log());
    expect_metrics(
        &scrape(&metrics_addr),
        &[
            ("fencepost_pages_held", 1.0),
            ("fencepost_last_cycle_ok", 0.0),
        ],
    );
    let status = s.json(&["status"]);
    assert_eq!(
        status["held_pages"][0]["path"], "answers/1/index.html",
        "{status}"
    );
    s.write("templates/answer.html", &template);
    let fixed = r.next_cycle(Duration::from_secs(30));
    assert!(
        fixed["held_pages"].as_array().unwrap().is_empty(),
        "{fixed}"
    );
    assert!(s.current_file("answers/1/index.html").contains("4.99"));
    expect_metrics(
        &scrape(&metrics_addr),
        &[
            ("fencepost_pages_held", 0.0),
            ("fencepost_last_cycle_ok", 1.0),
        ],
    );
}

/// Issue 80.6: every preview request is accounted for — `run --serve`'s origin counts them
/// on `/metrics` by outcome (a link opened, a page served, a request refused).
#[test]
fn preview_requests_are_counted_on_the_metrics() {
    let s = fixture("features");
    s.publish("2026-12-01T00:00:00Z");
    s.json(&["build"]);
    let at = [
        "--as-of",
        "2026-12-02T09:00:00Z",
        "--now",
        "2026-12-01T00:00:00Z",
    ];
    s.json(&[&["preview", "deploy", "pr-7"][..], &at].concat());
    let r = Running::start(
        &s,
        &["--serve", "127.0.0.1:0", "--metrics", "127.0.0.1:0"],
        &[],
    );
    let (serve, metrics) = (
        r.first["listening"].as_str().unwrap(),
        r.first["metrics"].as_str().unwrap(),
    );
    let target = s.preview_target("pr-7");
    let cookie = open_preview(serve, &target);
    assert_eq!(
        http(serve, "GET", "/.preview/pr-7/", &[("Cookie", &cookie)]).status,
        200
    );
    assert_eq!(http(serve, "GET", "/.preview/pr-7/", &[]).status, 404);
    let text = http(metrics, "GET", "/metrics", &[]).text();
    for outcome in ["opened", "served", "refused"] {
        let line = format!("fencepost_preview_requests_total{{outcome=\"{outcome}\"}} 1");
        assert!(text.contains(&line), "no {line} in:\n{text}");
    }
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}
