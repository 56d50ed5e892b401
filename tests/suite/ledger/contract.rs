//! The ledger contract's conformance suite: every test here runs against SQLite and against
//! PostgreSQL (a throw-away cluster the tests start), through the real binary where a
//! command is the contract and through the library where the contract is the ledger API.
//! Concurrency uses separate OS processes (or, for two transactions held open at chosen
//! moments, two connections).
use crate::common::*;
use fencepost_core::clock::Instant;
use fencepost_core::item::ItemId;
use fencepost_core::item::ItemName;
use fencepost_ledger::items::{Action, Claim, State};
use fencepost_ledger::lease::{self, Fence, LeaseKey, OwnerId};
use fencepost_ledger::pages::{self, Commit, DueCheck, Outcome, PageFields};
use fencepost_ledger::{items, public, Ledger, Location};
use std::collections::BTreeSet;
use std::time::Duration;

/// Generates `mod sqlite { #[test] fn name() }`, `mod postgres { … }`, `mod bucket { … }` and
/// `mod d1 { … }`
/// for each test body `fn name(b: Backend)`.
macro_rules! conformance {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(super::Backend::Sqlite) })*
        }
        mod postgres {
            $(#[test] fn $name() { super::$name(super::Backend::Postgres) })*
        }
        mod bucket {
            $(#[test] fn $name() { super::$name(super::Backend::Bucket) })*
        }
        mod d1 {
            $(#[test] fn $name() { super::$name(super::Backend::D1) })*
        }
    };
}

conformance!(
    leases_have_one_holder_and_the_fence_grows_on_expiry,
    an_owner_gives_back_all_its_leases_at_once_and_its_guards_then_fail,
    racing_processes_over_one_due_item_publish_it_once,
    two_racing_commits_of_one_page_exactly_one_wins,
    a_takeover_between_preflight_and_commit_is_lease_lost_and_writes_nothing,
    the_one_way_rules_hold_in_sql_against_a_confused_writer,
    the_audit_chain_verifies_and_tampering_is_named,
    racing_result_reports_get_dense_unique_slots,
    racing_publishers_with_skewed_clocks_publish_every_item_once,
    a_newer_schema_is_refused_and_left_untouched,
    deploys_and_remote_rollbacks_are_journaled_and_audited,
    collections_and_slug_ids_hold_the_contract,
    racing_processes_publish_once_and_expire_once,
    a_target_keyed_by_its_bare_name_goes_to_its_endpoints_key_once,
    a_ledger_refuses_another_sites_commands_before_they_write,
    a_page_due_after_the_ledgers_own_clock_is_not_written,
    the_transparency_log_reads_back_the_tree_it_appended,
    the_pages_since_a_revision_bring_its_pages_to_the_snapshots,
    the_candidates_are_the_items_not_published_and_current,
    rows_read_in_place_are_the_rows_read_owned,
);

mod candidates;
use candidates::the_candidates_are_the_items_not_published_and_current;
mod each;
use each::rows_read_in_place_are_the_rows_read_owned;
mod engines;
use engines::*;
mod integrity;
use integrity::*;
mod leases;
use leases::*;
mod publishing;
use publishing::*;
mod since;
use since::the_pages_since_a_revision_bring_its_pages_to_the_snapshots;
mod transparency;
use transparency::*;

fn location(s: &TestSite) -> Location {
    match s.ledger_url() {
        Some(url) => Location::parse(&url, s.root()).unwrap(),
        None => Location::Sqlite(s.path(".fencepost/ledger.sqlite")),
    }
}

fn open(s: &TestSite) -> Ledger {
    Ledger::open_at(&location(s), Duration::from_secs(30)).unwrap()
}

fn at(t: &str) -> Instant {
    Instant::parse_rfc3339(t).unwrap()
}

/// An item in the ledger, embargoed (the scan records it; nothing publishes it yet).
fn embargoed_item(s: &TestSite) -> String {
    s.item(1, "2026-12-20");
    s.publish(NOW);
    let mut l = open(s);
    l.read(|tx| Ok(items::view(tx, ItemId(1))?.unwrap().source_hash.unwrap()))
        .unwrap()
}

/// Takes item `id`'s publication lease for 60 s at `t` (a fresh owner); `None` if held.
fn take(l: &mut Ledger, id: i64, t: Instant) -> Option<lease::Lease> {
    lease::acquire_all(
        l,
        &[LeaseKey::Publication(ItemId(id))],
        &OwnerId::random(),
        t,
        60,
    )
    .unwrap()
    .remove(0)
}

fn page(body: &str) -> PageFields {
    PageFields {
        title: "t".into(),
        day: "2026-12-20".into(),
        data: r#"{"price":"1.00"}"#.into(),
        body_html: body.into(),
        summary_html: None,
        terms: String::new(),
        image_source: None,
        image_sha256: None,
        indexable: true,
        due_at: at("2026-12-21T00:10:00Z"),
        item_json: None,
    }
}
