//! `fencepost run` on several hosts sharing a ledger: each item published once and served by
//! every host, another host's commit built here, the database's clock, checkouts that differ.
use super::*;

#[test]
fn two_hosts_on_one_postgres_ledger_publish_each_item_once_and_both_serve_it() {
    two_hosts_on_one_shared_ledger_publish_each_item_once_and_both_serve_it(Backend::Postgres);
}

/// The same on D1, where `run` polls (no NOTIFY): a catch-up is one request.
#[test]
fn two_hosts_on_one_d1_ledger_publish_each_item_once_and_both_serve_it() {
    two_hosts_on_one_shared_ledger_publish_each_item_once_and_both_serve_it(Backend::D1);
}

fn two_hosts_on_one_shared_ledger_publish_each_item_once_and_both_serve_it(backend: Backend) {
    let _t = timing();
    let a = TestSite::on(backend);
    let b = TestSite::new();
    b.share_ledger_of(&a);
    let ra = Running::start(&a, &["--serve", "127.0.0.1:0"], &[]);
    let rb = Running::start(&b, &["--serve", "127.0.0.1:0"], &[]);
    let base = Utc::now() + chrono::Duration::milliseconds(1500);
    let due: BTreeMap<i64, DateTime<Utc>> = (1..=10)
        .map(|i| (i, base + chrono::Duration::milliseconds(200 * (i - 1))))
        .collect();
    for (&id, &at) in &due {
        item_at(&a, id, at);
        item_at(&b, id, at);
    }
    let seen = watch_items(
        &[ra.serve_addr(), rb.serve_addr()],
        &due,
        Duration::from_secs(20),
    );
    assert_within(&seen, TARGET);
    let (sa, _, ca) = ra.terminate(Duration::from_secs(15));
    let (sb, _, cb) = rb.terminate(Duration::from_secs(15));
    assert_eq!((sa.code(), sb.code()), (Some(0), Some(0)));
    let mut all = ca;
    all.extend(cb);
    assert_eq!(
        lag_items(&all),
        (1..=10).map(|i| (i, 1)).collect(),
        "every item published once, by one host or the other"
    );
    assert_eq!(a.revision(), 10);
    assert_eq!(a.audited("publish"), 10);
    a.cmd(&["verify"]).assert().success();
}

#[test]
fn a_change_on_another_host_is_built_here_within_a_second() {
    // No instant involved: host B learns of A's commit from the ledger's notification (its
    // poll is an hour away).
    let _t = timing();
    let a = TestSite::on(Backend::Postgres);
    let b = TestSite::new();
    b.share_ledger_of(&a);
    b.write(
        "fencepost.toml",
        &(std::fs::read_to_string(b.path("fencepost.toml")).unwrap()
            + "\n[run]\npoll_secs = 3600\n"),
    );
    // Hosts sharing a ledger share one content tree (a host whose tree lacks a published
    // item withdraws it): both have the item, due in a day, so B's own clock never wakes it
    // for it within the test.
    let due = Utc::now() + chrono::Duration::days(1);
    item_at(&a, 1, due);
    item_at(&b, 1, due);
    let rb = Running::start(&b, &["--serve", "127.0.0.1:0"], &[]);
    let c = rb.next_cycle(Duration::from_secs(20));
    assert_eq!(c["publish"]["embargoed"], 1, "{c}");
    // Settle: no file event left to wake B.
    while rb.lines.recv_timeout(Duration::from_millis(800)).is_ok() {}
    // A publishes it with a plain `publish` whose clock says it is due.
    let t = Instant::now();
    a.json(&[
        "publish",
        "--now",
        &rfc3339(due + chrono::Duration::seconds(1)),
    ]);
    let addr = rb.serve_addr();
    while !try_http(&addr, "GET", "/answers/1/", &[]).is_ok_and(|r| r.status == 200) {
        if t.elapsed() > Duration::from_secs(10) {
            let cycles: Vec<Value> = rb.lines.try_iter().collect();
            panic!("host B never served A's item: {cycles:?} {}", rb.log());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let c = rb.next_cycle(Duration::from_secs(5));
    assert_eq!(c["woke_for"][0], "ledger", "{c}");
}

/// Forwards 127.0.0.1:`port` to `to` from `delay` on (a database away for that long).
fn forward_after(delay: Duration, port: u16, to: String) {
    use std::net::{Shutdown, TcpListener, TcpStream};
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        for client in listener.incoming() {
            let (Ok(client), Ok(server)) = (client, TcpStream::connect(&to)) else {
                continue;
            };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut &client, &mut &server);
                let _ = server.shutdown(Shutdown::Write);
            });
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut &s2, &mut &c2);
                let _ = c2.shutdown(Shutdown::Write);
            });
        }
    });
}

/// Issue 35.1: on a shared PostgreSQL ledger the database's clock decides for the whole life
/// of `run`. A host 30 s fast (libfaketime on the `run` process only), with the database
/// away for its first 2 s and its clock stepped 20 s further after start, publishes nothing
/// before the instant, and publishes at it. (It used to fall back to the host clock for
/// good when the database was away at start: 29.9 s early.)
#[test]
fn run_on_a_shared_ledger_decides_by_the_database_clock_for_its_whole_life() {
    let _t = timing();
    let faketime = libfaketime();
    let s = TestSite::on(Backend::Postgres);
    let url = s.ledger_url().unwrap();
    let late_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let real_port = pg().port;
    forward_after(
        Duration::from_secs(2),
        late_port,
        format!("127.0.0.1:{real_port}"),
    );
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace(&format!(":{real_port}/"), &format!(":{late_port}/")),
    );
    let due = Utc::now() + chrono::Duration::seconds(12);
    s.item_with(
        1,
        "2026-11-01",
        &format!("publish_at = {}\n", rfc3339(due)),
        "At its instant.",
    );
    let skew = s.path("faketime.rc");
    std::fs::write(&skew, "+30s\n").unwrap();
    let env: Vec<(String, String)> = [
        ("LD_PRELOAD", faketime.display().to_string()),
        ("FAKETIME_TIMESTAMP_FILE", skew.display().to_string()),
        ("FAKETIME_NO_CACHE", "1".into()),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let r = Running::start(&s, &["--serve", "127.0.0.1:0"], &env);
    let addr = r.serve_addr();
    let mut stepped = false;
    let live_at = loop {
        let t = Utc::now();
        if !stepped && t > due - chrono::Duration::seconds(8) {
            std::fs::write(&skew, "+50s\n").unwrap();
            stepped = true;
        }
        if http(&addr, "GET", "/answers/1/", &[]).status == 200 {
            assert!(
                t >= due,
                "live {:?} before its instant: {}",
                due - t,
                r.log()
            );
            break t;
        }
        assert!(
            t < due + chrono::Duration::seconds(10),
            "not live: {}",
            r.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(stepped);
    assert!(
        (live_at - due).to_std().unwrap() < Duration::from_secs(2),
        "live {:?} after its instant",
        live_at - due
    );
    assert!(
        r.log().contains("cannot read the shared ledger's clock"),
        "{}",
        r.log()
    );
    let (status, _, _) = r.terminate(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0));
    drop(url);
}

/// Issue 35.7: two `run` hosts on one PostgreSQL ledger whose checkouts differ by one file
/// (before: 72 publications of it in 20 s). The host that would write back over the other's
/// change parks the item, and says so in its cycle's JSON, `status` and both hosts'
/// `/metrics`; once its checkout agrees, the item is released and nothing moves.
/// A says, in a cycle's JSON, `status` and both hosts' `/metrics`, that its checkout
/// disagrees with B's change; A serves B's text.
fn the_disagreement_is_said_everywhere(a: &TestSite, ra: &Running, rb: &Running, cycles: &[Value]) {
    let d = cycles
        .iter()
        .find_map(|c| {
            c["publish"]["disagreed"]
                .as_array()
                .filter(|d| !d.is_empty())
        })
        .unwrap_or_else(|| panic!("A never said it disagrees: {cycles:?}"));
    assert_eq!(d[0]["ledger_host"], "host-b", "{d:?}");
    assert_eq!(d[0]["other_host"], "host-a", "{d:?}");
    let page = http(&ra.serve_addr(), "GET", "/answers/1/", &[]).text();
    assert!(page.contains("As B has it."), "{page}");
    let st = a.status();
    assert_eq!(
        st["parked"][0]["disagreement"]["other_host"], "host-a",
        "{st}"
    );
    for (r, ok) in [(ra, 0.0), (rb, 1.0)] {
        let text = http(r.first["metrics"].as_str().unwrap(), "GET", "/metrics", &[]).text();
        expect_metrics(
            &text,
            &[
                ("fencepost_items_disagreeing", 1.0),
                ("fencepost_last_cycle_ok", ok),
            ],
        );
    }
}

#[test]
fn hosts_whose_checkouts_differ_do_not_flip_flop() {
    let _t = timing();
    let a = TestSite::on(Backend::Postgres);
    let b = TestSite::new();
    b.share_ledger_of(&a);
    let text = |who: &str| {
        format!("+++\nid = 1\nday = 2026-11-01\ntitle = \"One\"\nprice = 4.99\n+++\n\nAs {who} has it.\n")
    };
    for (s, who) in [(&a, "A"), (&b, "B")] {
        configure(s, "[run]\npoll_secs = 0.2\n");
        s.write("content/answers/1.md", &text(who));
    }
    let host = |h: &str| vec![("FENCEPOST_HOST".to_string(), h.to_string())];
    let args = ["--serve", "127.0.0.1:0", "--metrics", "127.0.0.1:0"];
    let ra = Running::start(&a, &args, &host("host-a"));
    let c = ra.next_cycle(Duration::from_secs(30));
    assert_eq!(c["publish"]["published"], serde_json::json!([1]), "{c}");
    // B starts with no memory of its checkout: it trusts it (one update), and from then on
    // A is the host that would undo a change.
    let rb = Running::start(&b, &args, &host("host-b"));
    // A's cycles until it says it disagrees, then ten more of each host: counted in cycles,
    // not seconds, so a slow machine watches as long (a flip-flop used to show within two).
    let disagreed = |c: &Value| {
        c["publish"]["disagreed"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
    };
    let mut cycles: Vec<Value> = Vec::new();
    while !cycles.iter().any(disagreed) {
        cycles.push(ra.next_cycle(Duration::from_secs(30)));
    }
    for _ in 0..10 {
        cycles.push(ra.next_cycle(Duration::from_secs(30)));
        rb.next_cycle(Duration::from_secs(30));
    }
    assert_eq!(a.revision(), 2, "one publication, one update, no flip-flop");
    the_disagreement_is_said_everywhere(&a, &ra, &rb, &cycles);
    // A's checkout comes round to B's: released, and nothing is published again.
    a.write("content/answers/1.md", &text("B"));
    wait_for("the item released", || {
        a.status()["parked"].as_array().is_some_and(Vec::is_empty)
    });
    let metrics = ra.first["metrics"].as_str().unwrap().to_string();
    wait_for("A's metrics to show it", || {
        let text = http(&metrics, "GET", "/metrics", &[]).text();
        metric(&text, "fencepost_items_disagreeing") == Some(0.0)
            && metric(&text, "fencepost_last_cycle_ok") == Some(1.0)
    });
    // Five more of each host's cycles from now (the queued ones set aside) move nothing.
    let _ = (ra.lines.try_iter().count(), rb.lines.try_iter().count());
    for _ in 0..5 {
        ra.next_cycle(Duration::from_secs(30));
        rb.next_cycle(Duration::from_secs(30));
    }
    assert_eq!(a.revision(), 2);
    let (sa, _, _) = ra.terminate(Duration::from_secs(15));
    let (sb, _, _) = rb.terminate(Duration::from_secs(15));
    assert_eq!((sa.code(), sb.code()), (Some(0), Some(0)));
}
