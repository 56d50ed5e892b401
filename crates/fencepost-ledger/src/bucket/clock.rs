//! A bucket ledger's clock: the store's, read off an object this runner just created.
//!
//! Object stores answer every request with a `Date` and stamp every object with a
//! `Last-Modified`, both in whole seconds; object_store hands back the stamp. So a runner
//! creates a probe object (the same write that checks the store still refuses a second
//! create-if-absent), notes its own clock before and after, and reads the stamp: its clock
//! minus the store's then lies in a window about one second wide (see [`Skew`]).
//!
//! What a runner does with it: it refuses to decide anything when its clock is certainly off
//! by more than `ledger.clock_tolerance_ms` (default 5 s) — a host that is hours fast is
//! broken, and saying so beats quietly correcting it — and otherwise decides by its own clock
//! moved back by the window's upper end: the earliest the store's clock can be. Nothing is then
//! early against the store's clock (an honest runner decides up to about a second late), and
//! leases, due instants and audit times on every runner agree with one clock.
//!
//! Measuring is once per command that decides (a `run` measures again at every cycle): four
//! small requests, which also probe the store's conditional writes for the process.
//! A `file://` ledger's "store clock" is its filesystem's timestamps, i.e. the host's own for a
//! local folder and the file server's for a shared one.

use super::store::{Log, Skew};
use crate::LedgerError;

/// This host's clock against the store of the ledger at `url`, measured now (the probe of
/// the store's conditional writes comes with it).
pub(crate) fn measure(url: &str, name: &str) -> Result<Skew, LedgerError> {
    Log::open(url, name)?
        .probe(true)?
        .ok_or_else(|| LedgerError::Internal("a clock probe without a clock".into()))
}

/// The offset to add to this host's clock to decide by the store's (the earliest it can be),
/// or the refusal when this host is certainly off by more than `tolerance_ms`.
pub(crate) fn offset(skew: &Skew, tolerance_ms: u64, name: &str) -> Result<i64, LedgerError> {
    let tolerance = tolerance_ms as i64;
    // How far off it is, said as the middle of the window.
    let middle = (skew.min_ms + skew.max_ms) / 2;
    let off = if skew.min_ms > tolerance {
        Some((middle, "fast"))
    } else if skew.max_ms < -tolerance {
        Some((-middle, "slow"))
    } else {
        None
    };
    match off {
        Some((by, way)) => Err(LedgerError::ClockSkew {
            ledger: name.to_string(),
            by: fencepost_core::clock::human_ms(by),
            way,
            host: fencepost_core::clock::Instant(skew.host_ms).rfc3339(),
            store: fencepost_core::clock::Instant(skew.store_ms).rfc3339(),
            tolerance_ms,
        }),
        None => Ok(-skew.max_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skew(min_ms: i64, max_ms: i64) -> Skew {
        Skew {
            min_ms,
            max_ms,
            store_ms: 1_000_000,
            host_ms: 1_000_000 + max_ms,
        }
    }

    #[test]
    fn a_clock_within_the_tolerance_decides_by_the_earliest_the_store_can_be() {
        // Honest: the window holds 0; the clock moves back by its upper end, never forward.
        assert_eq!(offset(&skew(-950, 60), 5000, "l").unwrap(), -60);
        // 3 s fast, within 5 s: corrected to the store's earliest.
        assert_eq!(offset(&skew(2_100, 3_150), 5000, "l").unwrap(), -3_150);
        // 3 s slow: moved forward by at most what it is certainly behind.
        assert_eq!(offset(&skew(-4_000, -2_900), 5000, "l").unwrap(), 2_900);
    }

    #[test]
    fn a_clock_certainly_off_by_more_than_the_tolerance_is_refused() {
        let e = offset(&skew(21_599_000, 21_600_100), 5000, "s3://b/l").unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("6 h 0 min") && text.contains("fast"),
            "{text}"
        );
        assert!(offset(&skew(-9_000, -7_000), 5000, "l").is_err());
        // The window straddles the tolerance: not certainly off, so decided (by the store's
        // earliest), never early.
        assert_eq!(offset(&skew(4_500, 5_600), 5000, "l").unwrap(), -5_600);
        assert_eq!(fencepost_core::clock::human_ms(6_200), "6.2 s");
    }
}
