//! Issue 52: what may be due is read from the items that can be (`items.candidates`, a
//! partial index over a page hash the ledger keeps on each item by trigger), not joined from
//! every item and its page. On every engine, through every write of a page — a first publish,
//! an edit published, an edit due later, a withdrawal, a notice rewritten — the candidates are
//! exactly the items not published and current, and the count of the rest is right.
use crate::common::*;
use fencepost_ledger::items;

/// The ids [`items::candidate_views`] returns, sorted, and the published-and-current count.
fn candidates(s: &TestSite) -> (Vec<i64>, usize) {
    s.read(|tx| {
        let views = items::candidate_views(tx)?;
        let rest = items::count_published_current(tx, &views)?;
        let mut ids: Vec<i64> = views.iter().map(|v| v.id.0).collect();
        ids.sort();
        Ok((ids, rest))
    })
}

pub(super) fn the_candidates_are_the_items_not_published_and_current(b: Backend) {
    let s = TestSite::on(b);
    s.item(1, "2026-11-01")
        .item(2, "2026-11-02")
        .item(3, "2026-11-03")
        .item(4, "2026-12-20");
    s.publish(NOW);
    // Pages written for 1-3 (a first write of each page); 4 is embargoed.
    assert_eq!(candidates(&s), (vec![4], 3));

    // An edit due later: the page is the old one until then, so item 2 may be due.
    s.item_with(2, "2026-12-25", "", "Edited, for later.");
    s.publish("2026-12-01T00:01:00Z");
    assert_eq!(candidates(&s), (vec![2, 4], 2));

    // Its instant comes: the page is rewritten with the file's hash, and it is current again.
    let r = s.publish("2026-12-26T00:11:00Z");
    assert_eq!(r["unchanged"], 2, "{r}");
    assert_eq!(candidates(&s), (vec![], 4), "item 4 came due as well");

    // A withdrawal, then its notice rewritten by an edit of the withdrawn file.
    s.item_with(3, "2026-11-03", "withdrawn = true\n", "Gone.");
    s.publish("2026-12-26T00:12:00Z");
    assert_eq!(candidates(&s).0, vec![3]);
    s.item_with(3, "2026-11-03", "withdrawn = true\n", "Gone, said again.");
    s.publish("2026-12-26T00:13:00Z");
    assert_eq!(candidates(&s), (vec![3], 3));

    // Nothing changed: a publish finds nothing to do and counts every item unchanged, the
    // withdrawn one (its notice up to date) with the three published.
    let r = s.publish("2026-12-26T00:14:00Z");
    assert_eq!(r["unchanged"], 4, "{r}");
    assert!(r["published"].as_array().unwrap().is_empty(), "{r}");
}
