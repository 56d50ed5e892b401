//! Answers lost past the retries (issue 77.8): a publish whose batch D1 ran, but whose answer
//! never came back however often it was sent, reads the log back before it reports a failure.

use super::*;

/// Every answer to the commit batch lost — the first send and each retry (D1 ran the first;
/// the head refused the rest) — yet the run reads its own entry back: it exits 0, each item
/// published once, and no lease is left held (a second run publishes the next item at once,
/// not 180 s later). It used to exit 1 with its publish landed, or hold the item on a lease
/// take it never heard of.
#[test]
fn an_answer_lost_past_the_retries_is_read_back_before_failing() {
    for n in [1, 2] {
        let s = TestSite::on(Backend::D1);
        s.item(1, "2026-11-01");
        s.publish(NOW);
        s.item(2, "2026-11-02");
        restart_d1_for(
            s.root(),
            &["--drop-answer-batch", &n.to_string(), "--drop-answers", "6"],
        );
        let out = s
            .cmd(&["publish", "--json", "--now", NOW])
            .env("FENCEPOST_LOG", "fencepost=info")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "batch {n}: {err}");
        assert!(
            err.contains("this writer's entry is there: committed"),
            "batch {n}: {err}"
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(ids(&r, "published"), vec![2], "batch {n}: {r}");
        s.item(3, "2026-11-03");
        let again = s.json(&["publish", "--now", NOW]);
        assert_eq!(
            ids(&again, "published"),
            vec![3],
            "batch {n}: no lease held: {again}"
        );
        published_once_each(&s, &[1, 2, 3]);
    }
}
