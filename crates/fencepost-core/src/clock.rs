//! Time as the whole program sees it. Every time decision (embargo ends, lease expiry, audit
//! timestamps) goes through [`Clock`], so `--now` makes a run reproducible.

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use std::fmt;

/// An instant, stored in the ledger as whole milliseconds since the Unix epoch (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(pub i64);

impl Instant {
    pub fn from_datetime(dt: DateTime<Utc>) -> Self {
        Instant(dt.timestamp_millis())
    }

    pub fn to_datetime(self) -> DateTime<Utc> {
        Utc.timestamp_millis_opt(self.0)
            .single()
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    pub fn parse_rfc3339(s: &str) -> Result<Self, chrono::ParseError> {
        Ok(Self::from_datetime(
            DateTime::parse_from_rfc3339(s)?.with_timezone(&Utc),
        ))
    }

    pub fn rfc3339(self) -> String {
        self.to_datetime()
            .to_rfc3339_opts(SecondsFormat::AutoSi, true)
    }

    pub fn plus_secs(self, secs: u64) -> Self {
        Instant(self.0.saturating_add((secs as i64).saturating_mul(1000)))
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rfc3339())
    }
}

impl serde::Serialize for Instant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.rfc3339())
    }
}

impl<'de> serde::Deserialize<'de> for Instant {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Instant::parse_rfc3339(&s).map_err(serde::de::Error::custom)
    }
}

/// A span as a person reads it, for messages: `6200` → "6.2 s", `21600000` → "6 h 0 min 0 s",
/// two days and more → "2 d 3 h 4 min".
pub fn human_ms(ms: i64) -> String {
    if ms < 60_000 {
        return format!("{:.1} s", ms as f64 / 1000.0);
    }
    let s = (ms + 500) / 1000;
    match s {
        ..3600 => format!("{} min {} s", s / 60, s % 60),
        ..86_400 => format!("{} h {} min {} s", s / 3600, s % 3600 / 60, s % 60),
        _ => format!(
            "{} d {} h {} min",
            s / 86_400,
            s % 86_400 / 3600,
            s % 3600 / 60
        ),
    }
}

/// The source of "now". `Fixed` comes from `--now` and never advances, so a test can place
/// two runs at chosen instants (for example, the second one after the first one's lease).
/// `Database` is a shared ledger's clock: this host's, corrected by the offset measured
/// against the database, so hosts with skewed clocks agree on lease expiry and audit times.
/// `Simulated` is `--now` given with `--allow-future-now` (or `FENCEPOST_ALLOW_FUTURE_NOW=1`):
/// a harness simulating the calendar, whose instant the ledger's own clock does not overrule
/// (see [`Clock::overrules_due`]).
#[derive(Debug, Clone, Copy)]
pub enum Clock {
    System,
    Fixed(Instant),
    Simulated(Instant),
    Database { offset_ms: i64 },
}

impl Clock {
    pub fn now(&self) -> Instant {
        match self {
            Clock::System => Instant(host_millis()),
            Clock::Fixed(t) | Clock::Simulated(t) => *t,
            Clock::Database { offset_ms } => Instant(host_millis().saturating_add(*offset_ms)),
        }
    }

    /// Whether an instant was given by hand (`--now`), with or without
    /// `--allow-future-now`: it is used as given, never measured.
    pub fn is_given(&self) -> bool {
        matches!(self, Clock::Fixed(_) | Clock::Simulated(_))
    }

    /// Whether a ledger with a clock of its own (PostgreSQL) re-checks, inside the statement
    /// that makes a page public, that the page is due by that clock: always, unless the
    /// instant is a simulated one. A host clock stepped mid-run, or a `--now` ahead of the
    /// real clock, then publishes nothing early.
    pub fn overrules_due(&self) -> bool {
        !matches!(self, Clock::Simulated(_))
    }
}

/// This host's clock in milliseconds. In a build with the `failpoints` feature (tests only),
/// `FENCEPOST_TEST_CLOCK_FILE` names a file holding an offset in milliseconds, read on every
/// call: a test steps a running process's clock back and forth without touching the host's.
pub fn host_millis() -> i64 {
    let now = Utc::now().timestamp_millis();
    #[cfg(feature = "failpoints")]
    if let Some(path) = std::env::var_os("FENCEPOST_TEST_CLOCK_FILE") {
        let offset = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or(0);
        return now.saturating_add(offset);
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_through_millis() {
        let t = Instant::parse_rfc3339("2026-11-30T00:10:00+01:00").unwrap();
        assert_eq!(t.rfc3339(), "2026-11-29T23:10:00Z");
        assert_eq!(Instant::parse_rfc3339(&t.rfc3339()).unwrap(), t);
        assert_eq!(t.plus_secs(180).0 - t.0, 180_000);
    }

    #[test]
    fn fixed_clock_does_not_move() {
        let t = Instant(1_000);
        let c = Clock::Fixed(t);
        assert_eq!(c.now(), t);
        assert_eq!(c.now(), t);
    }
}
