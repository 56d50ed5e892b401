//! `fencepost run`: one long-running process that publishes, builds and (with `--deploy`)
//! deploys at the instant of every scheduled change, and sleeps in between.
//!
//! A cycle ([`cycle`]) is `publish`, `build`, `deploy` — the same library calls, guarantees
//! and JSON as the three commands. Between cycles the loop waits ([`wake`]) for the earliest
//! of: the next scheduled change (from the ledger, recomputed every cycle), a change under
//! the site's sources (debounced), another host's commit on a shared PostgreSQL ledger
//! (LISTEN/NOTIFY), the back-off after a failure, and `run.poll_secs`. Beside the loop, in
//! the same process: the origin (`--serve`, the same server as `fencepost serve`, which
//! follows the pointer the cycles move) and Prometheus metrics (`--metrics`).
//!
//! Shutting down (SIGINT/SIGTERM): the current step finishes, or a deploy stops at its next
//! chunk (its cursor kept, its lease released); what is left undone at
//! `serve.shutdown_deadline_secs` is abandoned — as safe as a crash, which every step is
//! built for. A second signal exits at once.

pub mod cycle;
pub mod metrics;
mod side;
pub mod wake;

use fencepost_core::clock::{Clock, Instant};
use fencepost_core::item::Shown;
use fencepost_ledger::lease::OwnerId;
use fencepost_site::Site;
use serde::Serialize;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wake::Reason;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] fencepost_config::ConfigError),
    #[error(transparent)]
    Serve(#[from] fencepost_serve::ServeError),
    #[error("metrics: cannot listen on {addr}: {source} (choose another with --metrics)")]
    MetricsBind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Deploy every new build to `deploy.to`.
    pub deploy: bool,
    /// Serve `public/current` here (as `fencepost serve`).
    pub serve: Option<SocketAddr>,
    /// Serve Prometheus metrics here.
    pub metrics: Option<SocketAddr>,
    /// Stop after this many cycles (tests, soaks; a one-shot run is `--cycles 1`).
    pub max_cycles: Option<u64>,
}

/// The step a cycle failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Config,
    Publish,
    Build,
    Deploy,
    /// Removing old local revisions (`run.keep_revisions`).
    Gc,
}

/// Each step's wall time; `build`/`deploy` are absent when the step did not run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Durations {
    pub publish: u64,
    pub build: Option<u64>,
    pub deploy: Option<u64>,
    pub gc: Option<u64>,
    pub total: u64,
}

/// One item published in a cycle: due at `due_at`, committed at `published_at`, and live
/// (the local pointer moved, or with `--deploy` the bucket's) at `live_at`.
#[derive(Debug, Clone, Serialize)]
pub struct Lag {
    pub item: Shown,
    pub due_at: Instant,
    pub published_at: Instant,
    /// `published_at - due_at`.
    pub lag_ms: i64,
    pub live_at: Option<Instant>,
    /// `live_at - due_at`.
    pub live_lag_ms: Option<i64>,
}

/// One JSON line per cycle on stdout with `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct CycleReport {
    pub cycle: u64,
    pub woke_for: Vec<Reason>,
    pub started_at: Instant,
    pub ended_at: Instant,
    /// The ledger's publication revision after the cycle.
    pub revision: i64,
    /// What `fencepost publish --json` prints.
    pub publish: Option<fencepost_publish::Report>,
    /// What `fencepost build --json` prints (absent: nothing to build).
    pub build: Option<fencepost_build::Report>,
    /// What `fencepost deploy --json` prints (absent: not deploying, or nothing new).
    pub deploy: Option<fencepost_deploy::Report>,
    /// What `fencepost gc --json` prints, after a cycle that built (absent: nothing built, or
    /// `run.keep_revisions = 0`).
    pub gc: Option<fencepost_deploy::history::local::GcReport>,
    pub durations_ms: Durations,
    /// The embargo lag of every item this cycle published.
    pub lags: Vec<Lag>,
    /// Items an earlier cycle published whose build or deploy failed, live as of this cycle
    /// (each reported once here, with its whole lag).
    pub caught_up: Vec<Lag>,
    /// The pages the live revision holds (their template failed for them alone; see
    /// `fencepost_build::HeldPage`), read every cycle until they are fixed.
    pub held_pages: Vec<fencepost_build::HeldPage>,
    /// The next scheduled change: the loop wakes then.
    pub next_change_at: Option<Instant>,
    pub failed_step: Option<Step>,
    pub error: Option<String>,
    /// After a failure: when the next attempt is.
    pub retry_at: Option<Instant>,
    /// The clock the cycle decided by (on a shared ledger, the database's as measured at its
    /// start): the loop waits by it too.
    #[serde(skip)]
    pub clock: Option<Clock>,
}

impl Default for CycleReport {
    fn default() -> Self {
        CycleReport {
            cycle: 0,
            woke_for: Vec::new(),
            started_at: Instant(0),
            ended_at: Instant(0),
            revision: 0,
            publish: None,
            build: None,
            deploy: None,
            gc: None,
            durations_ms: Durations::default(),
            lags: Vec::new(),
            caught_up: Vec::new(),
            held_pages: Vec::new(),
            next_change_at: None,
            failed_step: None,
            error: None,
            retry_at: None,
            clock: None,
        }
    }
}

/// What the caller is told as the run goes.
pub enum Event<'a> {
    /// The servers are listening (before the first cycle).
    Listening {
        serve: Option<SocketAddr>,
        metrics: Option<SocketAddr>,
    },
    Cycle(&'a CycleReport),
}

/// Runs cycles until SIGINT/SIGTERM (or `max_cycles`).
pub fn run(
    site_dir: &Path,
    clock: Clock,
    opts: &Options,
    emit: &mut dyn FnMut(Event<'_>),
) -> Result<(), RunError> {
    // 1. The site must load before anything starts; later cycles re-read it.
    let site = Site::open(site_dir)?;
    let deadline = Duration::from_secs(site.config.serve.shutdown_deadline_secs);
    let waker = Arc::new(wake::Waker::default());
    let cancel = Arc::new(AtomicBool::new(false));
    let metrics = Arc::new(metrics::Metrics::new());
    let owner: Arc<Mutex<Option<OwnerId>>> = Arc::default();

    // 2. What runs beside the loop: signals, servers, the file watcher, the ledger listener.
    let side = side::start(side::Start {
        site: &site,
        clock,
        serve: opts.serve,
        metrics_addr: opts.metrics,
        metrics: metrics.clone(),
        waker: waker.clone(),
        cancel: cancel.clone(),
        deadline,
        give_back: give_back(site_dir, clock, owner.clone()),
    })?;
    emit(Event::Listening {
        serve: side.serve_addr,
        metrics: side.metrics_addr,
    });

    // 3. Cycles.
    let mut memory = cycle::Memory {
        warm: fencepost_build::Warm::keeping(),
        ..Default::default()
    };
    let mut reasons = vec![Reason::Start];
    let mut number = 0u64;
    loop {
        number += 1;
        let cycle_owner = OwnerId::random();
        *owner.lock().unwrap_or_else(|e| e.into_inner()) = Some(cycle_owner.clone());
        let mut report = cycle::run(
            cycle::Inputs {
                site_dir,
                clock: &clock,
                deploy: opts.deploy,
                cancel: &cancel,
                number,
                reasons: std::mem::take(&mut reasons),
                owner: cycle_owner,
            },
            &mut memory,
        );
        let config = memory.config.clone().unwrap_or_else(|| site.config.clone());
        // Wait by the clock the cycle decided by: with a host clock stepped since start, the
        // startup clock would see the next instant as passed and spin until it comes.
        let clock = report.clock.unwrap_or(clock);
        let retry_at = schedule_retry(&mut memory, &report, &config, clock.now());
        report.retry_at = retry_at;
        let parked = opts.metrics.and_then(|_| parked(site_dir));
        metrics.observe(&report, parked);
        emit(Event::Cycle(&report));
        if opts.max_cycles.is_some_and(|m| number >= m) || waker.stopping() {
            break;
        }
        let poll = Duration::from_secs_f64(config.run.poll_secs);
        let (at, why) = wake::next(clock.now(), report.next_change_at, poll, retry_at);
        let debounce = Duration::from_millis(config.run.debounce_ms);
        match waker.wait(&clock, at, why, debounce) {
            Some(r) => reasons = r,
            None => break,
        }
    }

    // 4. Stop the servers (open responses get the deadline).
    side.stop();
    Ok(())
}

/// What the shutdown deadline calls before it abandons the cycle: every lease the cycle holds
/// is given back, so the next run (here or on another host) need not wait for them to expire.
fn give_back(
    site_dir: &Path,
    clock: Clock,
    owner: Arc<Mutex<Option<OwnerId>>>,
) -> Box<dyn FnOnce() + Send> {
    let site_dir = site_dir.to_path_buf();
    Box::new(move || {
        let Some(owner) = owner.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
            return;
        };
        let released = Site::open(&site_dir)
            .map_err(|e| e.to_string())
            .and_then(|site| site.open_ledger().map_err(|e| e.to_string()))
            .and_then(|mut ledger| {
                ledger
                    .write(|tx| fencepost_ledger::lease::release_owner(tx, &owner, clock.now()))
                    .map_err(|e| e.to_string())
            });
        match released {
            Ok(n) => tracing::warn!(leases = n, "gave back the abandoned cycle's leases"),
            Err(e) => {
                tracing::warn!(error = %e, "could not give back the abandoned cycle's leases; they expire on their own")
            }
        }
    })
}

/// After a failed cycle, or items that failed and are retried: when to try again.
fn schedule_retry(
    memory: &mut cycle::Memory,
    report: &CycleReport,
    config: &fencepost_config::Config,
    now: Instant,
) -> Option<Instant> {
    let items_failed = report
        .publish
        .as_ref()
        .is_some_and(|p| !p.failed.is_empty());
    if report.failed_step.is_none() && !items_failed {
        memory.failures = 0;
        return None;
    }
    memory.failures = memory.failures.saturating_add(1);
    let wait = wake::backoff(
        memory.failures,
        Duration::from_secs(config.run.max_backoff_secs.max(1)),
    );
    Some(Instant(now.0.saturating_add(wait.as_millis() as i64)))
}

/// Parked items and deploy operations, for the metrics (None when the ledger cannot be read).
fn parked(site_dir: &Path) -> Option<metrics::Parked> {
    let site = Site::open(site_dir).ok()?;
    let mut ledger = site.open_ledger().ok()?;
    ledger
        .read(|tx| {
            let items = fencepost_ledger::items::parked(tx)?;
            let ops = fencepost_ledger::deploys::unfinished(tx)?;
            Ok(metrics::Parked {
                items: items.len(),
                disagreeing: items.iter().filter(|p| p.disagreement.is_some()).count(),
                deploys: ops.iter().filter(|o| o.status == "failed").count(),
            })
        })
        .ok()
}
