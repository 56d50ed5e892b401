//! `fencepost run --metrics ADDR`: Prometheus text at `/metrics` (prometheus-client, the
//! Prometheus project's own Rust client), updated after every cycle.

use super::{CycleReport, Step};
use fencepost_serve::previews::PreviewCounts;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StepLabel {
    step: &'static str,
}

/// What the ledger has parked, after a cycle.
#[derive(Debug, Clone, Copy)]
pub struct Parked {
    pub items: usize,
    /// Of `items`, those parked because two hosts' checkouts disagree.
    pub disagreeing: usize,
    pub deploys: usize,
}

pub struct Metrics {
    registry: Registry,
    cycles: Counter,
    published: Counter,
    updated: Counter,
    withdrawn: Counter,
    expired: Counter,
    failures: Family<StepLabel, Counter>,
    parked_items: Gauge,
    disagreeing_items: Gauge,
    held_items: Gauge,
    held_pages: Gauge,
    parked_deploys: Gauge,
    revision: Gauge,
    last_cycle_ok: Gauge,
    until_next_change: Gauge<f64, AtomicU64>,
    lag: Histogram,
    /// The origin's preview requests (`--serve` with a preview key), by outcome.
    previews: Family<OutcomeLabel, Counter>,
    preview_counts: std::sync::OnceLock<Arc<PreviewCounts>>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("fencepost");
        let m = Metrics {
            cycles: Counter::default(),
            published: Counter::default(),
            updated: Counter::default(),
            withdrawn: Counter::default(),
            expired: Counter::default(),
            failures: Family::default(),
            parked_items: Gauge::default(),
            disagreeing_items: Gauge::default(),
            held_items: Gauge::default(),
            held_pages: Gauge::default(),
            parked_deploys: Gauge::default(),
            revision: Gauge::default(),
            last_cycle_ok: Gauge::default(),
            until_next_change: Gauge::default(),
            // 10 ms to 2 minutes: a cycle at the instant is well under a second; a cron
            // minute or a back-off lands in the upper buckets.
            lag: Histogram::new([
                0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0,
            ]),
            previews: Family::default(),
            preview_counts: std::sync::OnceLock::new(),
            registry: Registry::default(),
        };
        // Every step's failure counter exists from the start (at 0), so an alert on its rate
        // has a series to read before the first failure.
        for step in ["config", "publish", "build", "deploy", "gc"] {
            let _ = m.failures.get_or_create(&StepLabel { step });
        }
        m.register(&mut registry);
        Metrics { registry, ..m }
    }

    /// Every metric in `registry`, with its help text.
    fn register(&self, registry: &mut Registry) {
        let m = self;
        registry.register("cycles", "Cycles run", m.cycles.clone());
        registry.register(
            "items_published",
            "Items made public for the first time (or again after a withdrawal)",
            m.published.clone(),
        );
        registry.register(
            "items_updated",
            "Public items re-rendered",
            m.updated.clone(),
        );
        registry.register(
            "items_withdrawn",
            "Public items taken down",
            m.withdrawn.clone(),
        );
        registry.register(
            "items_expired",
            "Public items taken down because their expire_at came (also counted in items_withdrawn)",
            m.expired.clone(),
        );
        registry.register(
            "failures",
            "Cycles whose step failed (config, publish, build, deploy); the cycle backs off",
            m.failures.clone(),
        );
        registry.register(
            "parked_items",
            "Items parked: after publish.max_attempts failures, or because two hosts' checkouts disagree (fencepost status; publish --retry)",
            m.parked_items.clone(),
        );
        registry.register(
            "items_disagreeing",
            "Items parked because two hosts' checkouts have them differently (fencepost status names both hosts); last_cycle_ok is 0 on the host whose checkout disagrees",
            m.disagreeing_items.clone(),
        );
        registry.register(
            "items_held",
            "Items held as they are because a file of theirs is broken (fencepost status names each); last_cycle_ok is 0 while one that is due is held",
            m.held_items.clone(),
        );
        registry.register(
            "pages_held",
            "Pages of the live revision whose template fails for them (fencepost status names each); last_cycle_ok is 0 while one is",
            m.held_pages.clone(),
        );
        registry.register(
            "parked_deploys",
            "Deploy operations parked after deploy.max_attempts failures",
            m.parked_deploys.clone(),
        );
        registry.register(
            "revision",
            "The ledger's publication revision",
            m.revision.clone(),
        );
        registry.register(
            "last_cycle_ok",
            "1 when the last cycle carried out every step, 0 when one failed or a due item is held (what is live stays served)",
            m.last_cycle_ok.clone(),
        );
        registry.register(
            "seconds_until_next_change",
            "Seconds until the next scheduled publication (-1: none scheduled)",
            m.until_next_change.clone(),
        );
        registry.register(
            "preview_requests",
            "Requests under /.preview/ answered by the origin (--serve), by outcome: opened (a link's token exchanged for its cookie), served (a preview's page), refused (answered as a missing page)",
            m.previews.clone(),
        );
        registry.register(
            "embargo_lag_seconds",
            "From an item's due instant to its page being live (after the build, or the deploy with --deploy)",
            m.lag.clone(),
        );
    }

    /// After a cycle; `parked` is what the ledger has parked now, when it could be read.
    pub fn observe(&self, r: &CycleReport, parked: Option<Parked>) {
        self.cycles.inc();
        if let Some(p) = &r.publish {
            self.published.inc_by(p.published.len() as u64);
            self.updated.inc_by(p.updated.len() as u64);
            self.withdrawn.inc_by(p.withdrawn.len() as u64);
            self.expired.inc_by(p.expired.len() as u64);
        }
        if let Some(step) = r.failed_step {
            let step = match step {
                Step::Config => "config",
                Step::Publish => "publish",
                Step::Build => "build",
                Step::Deploy => "deploy",
                Step::Gc => "gc",
            };
            self.failures.get_or_create(&StepLabel { step }).inc();
        }
        // A cycle that holds a due item back did not carry out what it was there for, even
        // though every step ran: the page is late, and someone must fix its file.
        // So did one whose checkout disagrees with another host's.
        let holds_due = r
            .publish
            .as_ref()
            .is_some_and(|p| p.held.iter().any(|h| h.due) || !p.disagreed.is_empty());
        if let Some(p) = &r.publish {
            self.held_items.set(p.held.len() as i64);
        }
        self.held_pages.set(r.held_pages.len() as i64);
        self.last_cycle_ok.set(i64::from(
            r.failed_step.is_none() && !holds_due && r.held_pages.is_empty(),
        ));
        if r.revision > 0 {
            self.revision.set(r.revision);
        }
        if let Some(p) = parked {
            self.parked_items.set(p.items as i64);
            self.disagreeing_items.set(p.disagreeing as i64);
            self.parked_deploys.set(p.deploys as i64);
        }
        self.until_next_change.set(match r.next_change_at {
            Some(t) => (t.0 - r.ended_at.0) as f64 / 1000.0,
            None => -1.0,
        });
        for l in r.lags.iter().chain(&r.caught_up) {
            if let Some(ms) = l.live_lag_ms {
                self.lag.observe(ms.max(0) as f64 / 1000.0);
            }
        }
    }

    /// Counts the origin's preview requests from now on.
    pub fn watch_previews(&self, counts: Arc<PreviewCounts>) {
        let _ = self.preview_counts.set(counts);
    }

    /// The Prometheus text exposition.
    pub fn text(&self) -> String {
        if let Some(c) = self.preview_counts.get() {
            for (outcome, n) in [
                ("opened", &c.opened),
                ("served", &c.served),
                ("refused", &c.refused),
            ] {
                let counter = self.previews.get_or_create(&OutcomeLabel { outcome });
                let now = n.load(Ordering::Relaxed);
                counter.inc_by(now.saturating_sub(counter.get()));
            }
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}
