//! `fencepost run`, on one host: items live at their instants (never early), clocks stepped
//! back and forward, expiries, held items, file changes waking the loop.
use super::*;

#[test]
fn twenty_items_go_live_at_their_instants_on_the_local_origin() {
    let _t = timing();
    let s = TestSite::new();
    let r = Running::start(&s, &["--serve", "127.0.0.1:0"], &[]);
    // The first cycle (empty site) has run or is running; the items come after the start.
    let base = Utc::now() + chrono::Duration::milliseconds(1000);
    let due: BTreeMap<i64, DateTime<Utc>> = (1..=20)
        .map(|i| (i, base + chrono::Duration::milliseconds(100 * (i - 1))))
        .collect();
    for (&id, &at) in &due {
        item_at(&s, id, at);
    }
    let seen = watch_items(&[r.serve_addr()], &due, Duration::from_secs(20));
    assert_within(&seen, TARGET);
    let mut cycles = Vec::new();
    drain(&r, |n| n.len() == 20, &mut cycles);
    let (status, took, rest) = r.terminate(Duration::from_secs(15));
    cycles.extend(rest);
    assert_eq!(status.code(), Some(0));
    assert!(took < Duration::from_secs(10), "{took:?}");
    let n = lag_items(&cycles);
    assert_eq!(
        n,
        (1..=20).map(|i| (i, 1)).collect(),
        "each item reported exactly once"
    );
    for c in &cycles {
        assert!(c["error"].is_null(), "{c}");
        for l in c["lags"].as_array().unwrap() {
            assert!(l["live_lag_ms"].as_i64().unwrap() >= l["lag_ms"].as_i64().unwrap());
        }
    }
    assert_eq!(s.revision(), 20);
    assert_eq!(s.items_in(State::Published), 20);
}

#[test]
fn a_clock_stepped_back_publishes_nothing_early_and_one_stepped_forward_is_caught_up() {
    let _t = timing();
    let s = TestSite::new();
    let clock = s.path("clock-offset");
    std::fs::write(&clock, "0").unwrap();
    let env = vec![(
        "FENCEPOST_TEST_CLOCK_FILE".to_string(),
        clock.display().to_string(),
    )];
    let r = Running::start(&s, &["--serve", "127.0.0.1:0"], &env);
    let addr = r.serve_addr();
    let status = |id: i64| {
        try_http(&addr, "GET", &format!("/answers/{id}/"), &[])
            .ok()
            .map(|r| r.status)
    };
    let due = Utc::now() + chrono::Duration::milliseconds(1500);
    item_at(&s, 1, due);
    // A minute back, before the instant: the instant passes on this host's clock, not on the
    // run's.
    // The run has read it (a cycle counts it embargoed) before its clock steps back.
    while r.next_cycle(Duration::from_secs(30))["publish"]["embargoed"] != 1 {}
    std::fs::write(&clock, "-60000").unwrap();
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        assert_eq!(
            status(1),
            Some(404),
            "published by a clock that says it is not due"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Back to true time: late now, published at once.
    std::fs::write(&clock, "0").unwrap();
    let t = Instant::now();
    wait_for("item 1 after the clock came back", || {
        status(1) == Some(200)
    });
    assert!(t.elapsed() < TARGET, "{:?}", t.elapsed());
    // An item due in an hour, and the clock stepped an hour forward: caught up at once, not
    // after the hour the loop meant to sleep.
    item_at(&s, 2, Utc::now() + chrono::Duration::hours(1));
    while r.next_cycle(Duration::from_secs(30))["publish"]["embargoed"] != 1 {}
    assert_eq!(status(2), Some(404));
    std::fs::write(&clock, (3_600_000 + 1000).to_string()).unwrap();
    let t = Instant::now();
    wait_for("item 2 after the clock stepped forward", || {
        status(2) == Some(200)
    });
    assert!(t.elapsed() < TARGET, "{:?}", t.elapsed());
    let (st, _, rest) = r.terminate(Duration::from_secs(15));
    assert_eq!(st.code(), Some(0));
    let _ = rest;
    assert_eq!(s.items_in(State::Published), 2);
    // Each was committed at or after its instant on the clock the run was given.
    let due: std::collections::HashMap<_, _> = s
        .items()
        .into_iter()
        .map(|i| (i.id, i.publish_at))
        .collect();
    let pages = s.public_pages();
    let early: Vec<_> = pages
        .iter()
        .filter(|p| p.first_published_at < due[&p.id])
        .collect();
    assert!(early.is_empty(), "{early:?}");
}

#[test]
fn an_item_expires_at_its_instant_once_and_the_metrics_count_it() {
    let _t = timing();
    let s = TestSite::new();
    let now = Utc::now();
    let expire = now + chrono::Duration::milliseconds(2500);
    s.item_with(
        1,
        "2026-11-01",
        &format!(
            "publish_at = {}\nexpire_at = {}\n",
            rfc3339(now - chrono::Duration::seconds(1)),
            rfc3339(expire)
        ),
        "Gone soon.",
    );
    let r = Running::start(
        &s,
        &["--serve", "127.0.0.1:0", "--metrics", "127.0.0.1:0"],
        &[],
    );
    let metrics_addr = r.first["metrics"].as_str().unwrap().to_string();
    // Live until its expiry (never taken down early), then gone within the target.
    gone_at_its_expiry(&r, "/answers/1/", expire);
    // The metrics count a cycle when it ends (its build swapped the pointer before that).
    let mut cycles = Vec::new();
    while !cycles.iter().any(|c: &Value| {
        c["publish"]["expired"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    }) {
        cycles.push(r.next_cycle(Duration::from_secs(10)));
    }
    let text = http(&metrics_addr, "GET", "/metrics", &[]).text();
    expect_metrics(
        &text,
        &[
            ("fencepost_items_published_total", 1.0),
            ("fencepost_items_withdrawn_total", 1.0),
            ("fencepost_items_expired_total", 1.0),
            ("fencepost_revision", 2.0),
        ],
    );
    let (status, _, rest) = r.terminate(Duration::from_secs(15));
    cycles.extend(rest);
    assert_eq!(status.code(), Some(0));
    let expired: usize = cycles
        .iter()
        .filter_map(|c| c["publish"]["expired"].as_array())
        .map(|a| a.len())
        .sum();
    assert_eq!(expired, 1, "{cycles:?}");
    assert_eq!(s.revision(), 2, "one publication, one expiry");
}

/// Issue 34.13: a held item pages someone. The cycle's JSON line names it with its due
/// instant, `/metrics` counts it (`fencepost_items_held`) and `fencepost_last_cycle_ok` is 0
/// while it is due; `status` names it. Fixed, the next cycle publishes it and is ok again.
#[test]
fn a_held_item_that_is_due_is_visible_to_operators() {
    let _t = timing();
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.write(
        "content/answers/2.md",
        "+++\nid = 2\nday = 2026-11-02\ntitle = \"Two\"\nprice = \"cheap\"\n+++\nx\n",
    );
    let r = Running::start(
        &s,
        &["--serve", "127.0.0.1:0", "--metrics", "127.0.0.1:0"],
        &[],
    );
    let metrics_addr = r.first["metrics"].as_str().unwrap().to_string();
    let first = r.next_cycle(Duration::from_secs(30));
    let held = &first["publish"]["held"];
    assert_eq!(held.as_array().map(Vec::len), Some(1), "{first}");
    assert_eq!(held[0]["id"], 2, "{first}");
    assert_eq!(held[0]["due"], true, "{first}");
    assert_eq!(held[0]["due_at"], "2026-11-03T00:10:00Z", "{first}");
    assert_eq!(held[0]["file"], "content/answers/2.md", "{first}");
    let text = http(&metrics_addr, "GET", "/metrics", &[]).text();
    expect_metrics(
        &text,
        &[
            ("fencepost_items_held", 1.0),
            ("fencepost_last_cycle_ok", 0.0),
        ],
    );
    let st = s.json(&["status"]);
    assert_eq!(st["held"][0]["id"], 2, "{st}");
    let human = s.cmd(&["status"]).output().unwrap();
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("item 2 HELD (DUE since 2026-11-03T00:10:00Z)") && human.contains("`price`"),
        "{human}"
    );
    // Fixed: the next cycle (woken by the file) publishes it and is ok.
    s.item(2, "2026-11-02");
    let fixed = loop {
        let c = r.next_cycle(Duration::from_secs(30));
        if c["publish"]["held"].as_array().is_some_and(Vec::is_empty) {
            break c;
        }
    };
    assert_eq!(
        fixed["publish"]["published"],
        serde_json::json!([2]),
        "{fixed}"
    );
    let text = http(&metrics_addr, "GET", "/metrics", &[]).text();
    expect_metrics(
        &text,
        &[
            ("fencepost_items_held", 0.0),
            ("fencepost_last_cycle_ok", 1.0),
        ],
    );
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}

/// Polls `path` on the run's origin: never gone before `expire`, gone within [`TARGET`] after.
fn gone_at_its_expiry(r: &Running, path: &str, expire: DateTime<Utc>) {
    let addr = r.serve_addr();
    let gone_at = loop {
        let st = http(&addr, "GET", path, &[]).status;
        let t = Utc::now();
        if st == 404 {
            assert!(t >= expire, "taken down {:?} early", expire - t);
            break t;
        }
        assert!(
            t < expire + chrono::Duration::seconds(10),
            "still up 10 s after its expiry: {}",
            r.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        (gone_at - expire).to_std().unwrap() < TARGET,
        "gone {:?} after its expiry",
        gone_at - expire
    );
}

/// Issue 35.2: `run` wakes for an expiry after any cycle, built or not. A poll cycle that
/// built nothing used to forget the expiry and take the page down at the next poll.
#[test]
fn run_wakes_for_an_expiry_after_a_cycle_that_built_nothing() {
    let _t = timing();
    let s = TestSite::new();
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write("fencepost.toml", &format!("{cfg}\n[run]\npoll_secs = 4\n"));
    let now = Utc::now();
    // Past the first poll (a cycle that builds nothing), before the second.
    let expire = now + chrono::Duration::milliseconds(6500);
    s.item_with(
        1,
        "2026-11-01",
        &format!(
            "publish_at = {}\nexpire_at = {}\n",
            rfc3339(now - chrono::Duration::seconds(1)),
            rfc3339(expire)
        ),
        "Gone soon.",
    );
    let r = Running::start(&s, &["--serve", "127.0.0.1:0"], &[]);
    gone_at_its_expiry(&r, "/answers/1/", expire);
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}

/// Issue 35.6: `cd site && fencepost run` (as the shipped systemd unit runs it) wakes on a
/// file change within `run.debounce_ms`, not at the next poll.
#[test]
fn run_started_inside_the_site_wakes_on_file_changes() {
    let _t = timing();
    let s = TestSite::new();
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &format!("{cfg}\n[run]\npoll_secs = 600\n"),
    );
    s.item(1, "2026-11-01");
    let r = Running::start_inside(&s, &["--serve", "127.0.0.1:0"]);
    let first = r.next_cycle(Duration::from_secs(30));
    assert_eq!(
        first["publish"]["published"],
        serde_json::json!([1]),
        "{first}"
    );
    let changed = Instant::now();
    s.item(2, "2026-11-02");
    let next = r.next_cycle(Duration::from_secs(10));
    assert!(
        changed.elapsed() < Duration::from_secs(3),
        "woke {:?} after the change",
        changed.elapsed()
    );
    assert_eq!(next["woke_for"][0], "files", "{next}");
    assert_eq!(
        next["publish"]["published"],
        serde_json::json!([2]),
        "{next}"
    );
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
}
