//! When `fencepost run` wakes: the pure rule ([`next`]) and the place that waits for it or
//! for an event ([`Waker`]).
//!
//! Waking is never what makes anything public: the cycle's publish decides from the clock, so
//! a wake-up that comes early (a timer, a clock stepped back) publishes nothing and the next
//! wake is computed again. The wait re-reads the clock at least every [`SLICE`], so a clock
//! stepped forward past an instant is caught up within that slice, not after the old sleep.

use fencepost_core::clock::{Clock, Instant};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The longest the wait sleeps without looking at the clock again.
pub const SLICE: Duration = Duration::from_millis(100);

/// Why a cycle runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The first cycle.
    Start,
    /// The instant of the next scheduled change came.
    Due,
    /// A file under content/, templates/, static/ or fencepost.toml changed.
    Files,
    /// Another host moved the shared ledger's publication revision.
    Ledger,
    /// `run.poll_secs` passed (the backstop).
    Poll,
    /// The back-off after a failed cycle ran out.
    Retry,
}

/// The instant to wake at, and why: the earliest of the next scheduled change, the backstop
/// poll and, after a failure, the end of the back-off. Pure.
pub fn next(
    now: Instant,
    next_change: Option<Instant>,
    poll: Duration,
    retry_at: Option<Instant>,
) -> (Instant, Reason) {
    let poll_at = Instant(
        now.0
            .saturating_add(poll.as_millis().min(i64::MAX as u128) as i64),
    );
    let mut best = (poll_at, Reason::Poll);
    for (at, why) in [(retry_at, Reason::Retry), (next_change, Reason::Due)] {
        if let Some(at) = at {
            if at <= best.0 {
                best = (at, why);
            }
        }
    }
    best
}

/// The back-off after `failures` failed cycles in a row: 1 s, doubling, at most `max`.
pub fn backoff(failures: u32, max: Duration) -> Duration {
    let secs = 1u64 << failures.saturating_sub(1).min(20);
    Duration::from_secs(secs)
        .min(max)
        .max(Duration::from_millis(1))
}

#[derive(Default)]
struct Pending {
    /// When the last file event of a burst came (the burst is reported once it is quiet).
    files: Option<std::time::Instant>,
    ledger: bool,
    stop: bool,
}

/// Where events meet the wait. Shared by the watcher, the ledger listener, the signal handler
/// and the cycle loop.
#[derive(Default)]
pub struct Waker {
    pending: Mutex<Pending>,
    bell: Condvar,
}

impl Waker {
    fn with(&self, f: impl FnOnce(&mut Pending)) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut p);
        self.bell.notify_all();
    }

    pub fn files_changed(&self) {
        self.with(|p| p.files = Some(std::time::Instant::now()));
    }

    pub fn ledger_changed(&self) {
        self.with(|p| p.ledger = true);
    }

    pub fn stop(&self) {
        self.with(|p| p.stop = true);
    }

    pub fn stopping(&self) -> bool {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).stop
    }

    /// Waits until `clock` reaches `at` (then `why`), or an event comes: file changes once
    /// `debounce` has passed without another, a change by another host at once. Returns the
    /// reasons, or `None` when asked to stop. The wait also ends once as much time has passed
    /// on this host's monotonic clock as `at` was ahead when it began: a clock stepped back
    /// then wakes the loop early (it publishes nothing early and waits again), and a fixed
    /// `--now` clock still polls.
    pub fn wait(
        &self,
        clock: &Clock,
        at: Instant,
        why: Reason,
        debounce: Duration,
    ) -> Option<Vec<Reason>> {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let began = std::time::Instant::now();
        let span = Duration::from_millis((at.0 - clock.now().0).max(0) as u64);
        loop {
            if p.stop {
                return None;
            }
            let mut reasons = Vec::new();
            let mut timeout = SLICE;
            if std::mem::take(&mut p.ledger) {
                reasons.push(Reason::Ledger);
            }
            if let Some(last) = p.files {
                let quiet = last.elapsed();
                if quiet >= debounce {
                    p.files = None;
                    reasons.push(Reason::Files);
                } else {
                    timeout = timeout.min(debounce - quiet);
                }
            }
            let now = clock.now();
            let elapsed = began.elapsed();
            if now >= at || elapsed >= span {
                reasons.push(why);
            }
            if !reasons.is_empty() {
                return Some(reasons);
            }
            let until = Duration::from_millis((at.0 - now.0).max(1) as u64)
                .min(span.saturating_sub(elapsed).max(Duration::from_millis(1)));
            p = self
                .bell
                .wait_timeout(p, timeout.min(until))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLL: Duration = Duration::from_secs(60);

    #[test]
    fn the_earliest_of_change_poll_and_retry_wins() {
        let now = Instant(1_000_000);
        let cases = [
            (None, None, (Instant(1_060_000), Reason::Poll)),
            (
                Some(Instant(1_000_500)),
                None,
                (Instant(1_000_500), Reason::Due),
            ),
            (
                Some(Instant(2_000_000)),
                None,
                (Instant(1_060_000), Reason::Poll),
            ),
            // A change already due (the cycle could not publish it: a failure) waits for the
            // back-off, not a busy loop... unless the change is what comes first.
            (
                Some(Instant(1_005_000)),
                Some(Instant(1_002_000)),
                (Instant(1_002_000), Reason::Retry),
            ),
            (
                Some(Instant(1_001_000)),
                Some(Instant(1_002_000)),
                (Instant(1_001_000), Reason::Due),
            ),
            // An instant in the past wakes at once.
            (Some(Instant(10)), None, (Instant(10), Reason::Due)),
        ];
        for (change, retry, want) in cases {
            assert_eq!(next(now, change, POLL, retry), want, "{change:?} {retry:?}");
        }
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let max = Duration::from_secs(60);
        let got: Vec<u64> = (1..=8).map(|n| backoff(n, max).as_secs()).collect();
        assert_eq!(got, [1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(backoff(u32::MAX, max).as_secs(), 60);
    }

    #[test]
    fn an_early_wake_is_not_an_instant() {
        // The clock is fixed short of the instant: only the event comes back.
        let w = Waker::default();
        let clock = Clock::Fixed(Instant(100));
        w.ledger_changed();
        let r = w.wait(&clock, Instant(200), Reason::Due, Duration::ZERO);
        assert_eq!(r, Some(vec![Reason::Ledger]));
        w.stop();
        assert_eq!(
            w.wait(&clock, Instant(200), Reason::Due, Duration::ZERO),
            None
        );
    }

    #[test]
    fn file_bursts_are_reported_once_quiet() {
        let w = Waker::default();
        let clock = Clock::Fixed(Instant(100));
        w.files_changed();
        let started = std::time::Instant::now();
        let r = w.wait(
            &clock,
            Instant(100_000),
            Reason::Poll,
            Duration::from_millis(50),
        );
        assert_eq!(r, Some(vec![Reason::Files]));
        assert!(started.elapsed() >= Duration::from_millis(50));
    }
}
