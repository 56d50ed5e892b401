//! One cycle of `fencepost run`: publish, then build, then (with `--deploy`) deploy — the same
//! library calls as the three commands, in the same order as `publish --build && deploy`.

use super::wake::Reason;
use super::{CycleReport, Lag, Step};
use fencepost_core::clock::{Clock, Instant};
use fencepost_output::id::RevisionId;
use fencepost_site::Site;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the loop remembers between cycles.
#[derive(Default)]
pub struct Memory {
    /// The publication revision and build id last built here.
    pub built: Option<RevisionId>,
    /// The revision and build last carried out at the deploy target.
    pub deployed: Option<RevisionId>,
    /// Failed cycles in a row.
    pub failures: u32,
    /// The configuration the last cycle read.
    pub config: Option<fencepost_config::Config>,
    /// Items published by a cycle whose build or deploy then failed: reported (`caught_up`)
    /// by the cycle that makes them live.
    pub not_live: Vec<Lag>,
    /// Revisions built since the last gc.
    pub uncollected: usize,
    /// The last build's pages and manifest, so the next build reads only what changed.
    pub warm: fencepost_build::Warm,
}

pub struct Inputs<'a> {
    pub site_dir: &'a Path,
    pub clock: &'a Clock,
    pub deploy: bool,
    pub cancel: &'a Arc<AtomicBool>,
    pub number: u64,
    pub reasons: Vec<Reason>,
    /// The lease owner of this cycle's publish and deploy.
    pub owner: fencepost_ledger::lease::OwnerId,
}

pub fn run(i: Inputs<'_>, mem: &mut Memory) -> CycleReport {
    let started = std::time::Instant::now();
    // The clock this cycle decides by: on a shared ledger, the database's, measured now. A
    // database away at start, or a host clock stepped since, never makes a decision by the
    // host's clock: a cycle that cannot read the database's fails and backs off.
    let measured = cycle_clock(i.site_dir, i.clock);
    let clock = measured.clone().unwrap_or(*i.clock);
    let i = Inputs { clock: &clock, ..i };
    let mut r = CycleReport {
        cycle: i.number,
        woke_for: i.reasons.clone(),
        started_at: i.clock.now(),
        clock: measured.as_ref().ok().copied(),
        ..CycleReport::default()
    };
    let mut result = measured.map(|_| ()).and_then(|()| steps(&i, mem, &mut r));
    if result.is_ok() {
        result = collect(&i, mem, &mut r);
    }
    if result.is_ok() && !i.cancel.load(Ordering::Relaxed) {
        // The next build's links, made while the loop waits for its instant.
        mem.warm.link_ahead();
    }
    if result.is_err() {
        let stranded = r.lags.iter().filter(|l| l.live_at.is_none()).cloned();
        mem.not_live.extend(stranded);
    }
    if let Err((step, e)) = result {
        tracing::warn!(step = ?step, error = %e, "cycle failed; what is live stays live, retrying after a back-off");
        r.failed_step = Some(step);
        r.error = Some(e);
    }
    r.durations_ms.total = started.elapsed().as_millis() as u64;
    r.ended_at = i.clock.now();
    r
}

type StepResult = Result<(), (Step, String)>;

/// The cycle's clock: `--now` as given; else the one the site's ledger decides by, measured
/// afresh (an error fails the cycle): the database's on PostgreSQL, the store's on a bucket,
/// this host's on SQLite.
fn cycle_clock(site_dir: &Path, clock: &Clock) -> Result<Clock, (Step, String)> {
    if clock.is_given() {
        return Ok(*clock);
    }
    let site = Site::open(site_dir).map_err(|e| (Step::Config, e.to_string()))?;
    site.decision_clock().map_err(|e| match e {
        fencepost_ledger::LedgerError::ClockSkew { .. }
        | fencepost_ledger::LedgerError::NoBucket { .. } => (Step::Publish, e.to_string()),
        e => (
            Step::Publish,
            format!("cannot read the shared ledger's clock ({e}): nothing is decided by this host's clock"),
        ),
    })
}

fn steps(i: &Inputs<'_>, mem: &mut Memory, r: &mut CycleReport) -> StepResult {
    // 1. The site as it is now (fencepost.toml may have changed).
    let site = Site::open(i.site_dir).map_err(|e| (Step::Config, e.to_string()))?;
    mem.config = Some(site.config.clone());

    // 2. Publish.
    let t = std::time::Instant::now();
    let published = publish(i, &site)?;
    r.durations_ms.publish = t.elapsed().as_millis() as u64;
    r.revision = published.revision;
    // The next publication or expiry the ledger knows, whether or not this cycle builds:
    // an expiry after a cycle that built nothing used to wait for the poll.
    r.next_change_at = min_opt(published.next_embargo_at, published.next_change_at);
    r.lags = lags(&published);
    r.publish = Some(published);
    if i.cancel.load(Ordering::Relaxed) {
        return Ok(());
    }

    // 3. Build, when the ledger moved, a file changed, or nothing was built yet here.
    let files = i
        .reasons
        .iter()
        .any(|w| matches!(w, Reason::Files | Reason::Start));
    if files || mem.built.as_ref().map(|b| b.revision) != Some(r.revision) {
        build(i, &site, mem, r)?;
    }
    // The live revision's held pages, said every cycle until they are fixed.
    r.held_pages = fencepost_build::held_in(&site.public_dir().join("current"));
    for h in &r.held_pages {
        tracing::warn!(page = %h.path, what = %h.what, previous_kept = h.previous_kept, error = %h.why, "page HELD in the live revision: its template fails for it (fix the template; everything else is live)");
    }
    if !i.deploy {
        live(mem, r, i.clock.now());
    }
    if !i.deploy || i.cancel.load(Ordering::Relaxed) {
        return Ok(());
    }

    // 4. Deploy what was built, unless the target already has it from this loop.
    match mem.built.clone() {
        Some(built) if mem.deployed.as_ref() != Some(&built) || files => {
            deploy(i, &site, built, mem, r)
        }
        _ => Ok(()),
    }
}

/// Each item published this cycle, with how late after its due instant.
fn lags(published: &fencepost_publish::Report) -> Vec<Lag> {
    published
        .published_at
        .iter()
        .map(|(item, due, at)| Lag {
            item: item.clone(),
            due_at: *due,
            published_at: *at,
            lag_ms: at.0 - due.0,
            live_at: None,
            live_lag_ms: None,
        })
        .collect()
}

fn build(i: &Inputs<'_>, site: &Site, mem: &mut Memory, r: &mut CycleReport) -> StepResult {
    let t = std::time::Instant::now();
    let opts = fencepost_build::Options::default();
    let b = fencepost_build::run_warm(site, i.clock, &opts, &|_, _| {}, &mut mem.warm)
        .map_err(|e| (Step::Build, e.to_string()))?;
    r.durations_ms.build = Some(t.elapsed().as_millis() as u64);
    mem.built = Some(b.id.clone());
    r.revision = r.revision.max(b.id.revision);
    r.next_change_at = min_opt(r.next_change_at, b.next_change_at);
    r.build = Some(b);
    Ok(())
}

fn deploy(
    i: &Inputs<'_>,
    site: &Site,
    built: RevisionId,
    mem: &mut Memory,
    r: &mut CycleReport,
) -> StepResult {
    use fencepost_deploy::targets::Outcome;
    let t = std::time::Instant::now();
    let opts = fencepost_deploy::Options {
        to: site.config.deploy.to.clone(),
        cancel: Some(i.cancel.clone()),
        owner: Some(i.owner.clone()),
        // `run` publishes by its own clock: its ledger holds nothing dated ahead unless a
        // person published with --allow-future-now, which `deploy` alone checks.
        allow_future_entries: true,
        strict: false,
        ..Default::default()
    };
    let d = fencepost_deploy::run(site, i.clock, &opts, &|_, _| {})
        .map_err(|e| (Step::Deploy, e.to_string()))?;
    r.durations_ms.deploy = Some(t.elapsed().as_millis() as u64);
    let (outcome, error) = (d.outcome, d.error.clone());
    r.deploy = Some(d);
    match outcome {
        Outcome::Deployed | Outcome::AlreadyDeployed | Outcome::Superseded => {
            mem.deployed = Some(built);
            live(mem, r, i.clock.now());
            Ok(())
        }
        // Another run is carrying out this revision or a newer one: it goes live without us.
        Outcome::SkippedLocked | Outcome::Held | Outcome::Interrupted => Ok(()),
        _ => Err((
            Step::Deploy,
            error.unwrap_or_else(|| format!("deploy ended {outcome:?}")),
        )),
    }
}

/// Step 5, old local revisions: removed as `fencepost gc --keep run.keep_revisions --grace-secs
/// run.gc_grace_secs` would (never the current one, one live within the grace period, or one
/// an unfinished deploy carries out), so a run that publishes all day does not fill the disk.
/// Deleting a 100,000-directory revision takes seconds of both cores, so it is done when
/// [`should_collect`] says: in idle time, or when it can wait no longer.
fn collect(i: &Inputs<'_>, mem: &mut Memory, r: &mut CycleReport) -> StepResult {
    if r.build.as_ref().is_some_and(|b| !b.already_built) {
        mem.uncollected += 1;
    }
    if i.cancel.load(Ordering::Relaxed) {
        return Ok(());
    }
    let site = Site::open(i.site_dir).map_err(|e| (Step::Config, e.to_string()))?;
    let run = &site.config.run;
    let idle = std::time::Duration::from_secs(run.gc_idle_secs);
    if !should_collect(
        mem.uncollected,
        run.keep_revisions,
        r.next_change_at,
        i.clock.now(),
        idle,
    ) {
        return Ok(());
    }
    let t = std::time::Instant::now();
    let g =
        // No spare: a run makes the next build's tree ahead while it waits (`link_ahead`).
        fencepost_deploy::history::local::gc(
            &site,
            i.clock,
            run.keep_revisions,
            run.gc_grace_secs,
            false,
        )
            .map_err(|e| (Step::Gc, e.to_string()))?;
    r.durations_ms.gc = Some(t.elapsed().as_millis() as u64);
    r.gc = Some(g);
    mem.uncollected = 0;
    Ok(())
}

/// Whether to collect now: never with `keep = 0` or nothing built since the last time; else
/// when the next scheduled change is at least `idle` away (or there is none), or when `keep`
/// revisions have piled up since (at most about twice `keep` are ever on disk).
pub fn should_collect(
    uncollected: usize,
    keep: usize,
    next_change_at: Option<Instant>,
    now: Instant,
    idle: std::time::Duration,
) -> bool {
    if keep == 0 || uncollected == 0 {
        return false;
    }
    let quiet = next_change_at
        .is_none_or(|t| t.0.saturating_sub(now.0) >= idle.as_millis().min(i64::MAX as u128) as i64);
    quiet || uncollected >= keep
}

fn publish(i: &Inputs<'_>, site: &Site) -> Result<fencepost_publish::Report, (Step, String)> {
    let err = |e: fencepost_publish::PublishError| (Step::Publish, e.to_string());
    let opts = fencepost_publish::Options {
        lease_secs: site.config.publish.lease_secs,
        retry: Vec::new(),
        owner: Some(i.owner.clone()),
        rerender: false,
        // `run` never withdraws a whole collection: that takes a person's `publish
        // --allow-withdraw-collection`.
        allow_withdraw_collection: Vec::new(),
        // Nor a mass withdrawal: `publish --allow-mass-withdrawal`, by a person.
        allow_mass_withdrawal: false,
    };
    let report = fencepost_publish::run(site, i.clock, &opts).map_err(err)?;
    if !report.skipped_locked.is_empty() {
        // Another publisher holds some due items: build after its commit (as publish --build).
        fencepost_publish::wait_for_items(
            site,
            i.clock,
            &report.skipped_ids,
            site.config.deploy.wait_secs(),
        )
        .map_err(err)?;
    }
    Ok(report)
}

/// What this cycle published, and what earlier failed cycles left published but not live, is
/// live as of `at`.
fn live(mem: &mut Memory, r: &mut CycleReport, at: Instant) {
    r.caught_up = std::mem::take(&mut mem.not_live);
    for l in r.lags.iter_mut().chain(r.caught_up.iter_mut()) {
        l.live_at = Some(at);
        l.live_lag_ms = Some(at.0 - l.due_at.0);
    }
}

fn min_opt(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn old_revisions_are_collected_in_idle_time_or_when_they_pile_up() {
        let now = Instant(1_000_000);
        let idle = Duration::from_secs(30);
        let at = |secs: i64| Some(Instant(now.0 + secs * 1000));
        // (uncollected, keep, next change, collect?)
        let table = [
            (1, 0, None, false),
            (0, 10, None, false),
            (1, 10, None, true),
            (1, 10, at(30), true),
            (1, 10, at(29), false),
            (1, 10, at(-5), false),
            (9, 10, at(3), false),
            (10, 10, at(3), true),
            (12, 10, at(0), true),
        ];
        for (uncollected, keep, next, want) in table {
            assert_eq!(
                should_collect(uncollected, keep, next, now, idle),
                want,
                "{uncollected} {keep} {next:?}"
            );
        }
    }
}
