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

    /// `YYYY-MM-DDTHH:MM:SS[.mmm]Z`, as chrono writes it (`SecondsFormat::AutoSi`, `Z`).
    /// Written digit by digit for the years 0–9999: a build writes three or four of these
    /// for each of a site's pages, and chrono's formatter took ~250 ns each (a tenth of a
    /// one-item build's page views at 100,000 pages). Other years take chrono's way.
    pub fn rfc3339(self) -> String {
        match self.civil() {
            Some(c) => c.rfc3339(),
            None => self
                .to_datetime()
                .to_rfc3339_opts(SecondsFormat::AutoSi, true),
        }
    }

    /// The UTC calendar day, `YYYY-MM-DD` (chrono's `NaiveDate` display), the same way.
    pub fn day_string(self) -> String {
        match self.civil() {
            Some(c) => c.day(),
            None => self.to_datetime().date_naive().to_string(),
        }
    }

    /// The UTC calendar fields of a year 0–9999 (days to a civil date: Howard Hinnant's
    /// `civil_from_days`).
    fn civil(self) -> Option<Civil> {
        let (days, ms) = (self.0.div_euclid(86_400_000), self.0.rem_euclid(86_400_000));
        let z = days + 719_468;
        let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        (0..=9999).contains(&year).then_some(Civil {
            year,
            month,
            day,
            ms,
        })
    }

    pub fn plus_secs(self, secs: u64) -> Self {
        Instant(self.0.saturating_add((secs as i64).saturating_mul(1000)))
    }
}

/// A calendar date and the milliseconds into it, of a year 0–9999.
struct Civil {
    year: i64,
    month: i64,
    day: i64,
    ms: i64,
}

impl Civil {
    fn day(&self) -> String {
        let mut b = Vec::with_capacity(10);
        digits(&mut b, self.year, 4);
        b.push(b'-');
        digits(&mut b, self.month, 2);
        b.push(b'-');
        digits(&mut b, self.day, 2);
        String::from_utf8(b).expect("ASCII digits")
    }

    fn rfc3339(&self) -> String {
        let mut b = self.day().into_bytes();
        let secs = self.ms / 1000;
        for (sep, n) in [
            (b'T', secs / 3600),
            (b':', secs / 60 % 60),
            (b':', secs % 60),
        ] {
            b.push(sep);
            digits(&mut b, n, 2);
        }
        if self.ms % 1000 != 0 {
            b.push(b'.');
            digits(&mut b, self.ms % 1000, 3);
        }
        b.push(b'Z');
        String::from_utf8(b).expect("ASCII digits")
    }
}

/// `n` (0 ≤ n < 10^width) in `width` decimal digits, zero-padded.
fn digits(b: &mut Vec<u8>, n: i64, width: u32) {
    for p in (0..width).rev() {
        b.push(b'0' + (n / 10_i64.pow(p) % 10) as u8);
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
/// `Database` is a shared ledger's clock: the database's (or store's) instant measured once,
/// carried forward by this host's monotonic clock — not its wall clock, so a wall-clock step
/// after the measurement (NTP slewing, an administrator, a VM resumed) changes nothing that
/// is decided by it; hosts with skewed clocks agree on lease expiry and audit times.
/// `Simulated` is `--now` given with `--allow-future-now` (or `FENCEPOST_ALLOW_FUTURE_NOW=1`):
/// a harness simulating the calendar, whose instant the ledger's own clock does not overrule
/// (see [`Clock::overrules_due`]).
#[derive(Debug, Clone, Copy)]
pub enum Clock {
    System,
    Fixed(Instant),
    Simulated(Instant),
    Database {
        /// The ledger's instant at the measurement.
        at: Instant,
        /// This host's monotonic clock at the measurement.
        since: std::time::Instant,
    },
}

impl Clock {
    pub fn now(&self) -> Instant {
        match self {
            Clock::System => Instant(host_millis()),
            Clock::Fixed(t) | Clock::Simulated(t) => *t,
            Clock::Database { at, since } => {
                let elapsed = since.elapsed().as_millis().min(i64::MAX as u128) as i64;
                Instant(at.0.saturating_add(elapsed))
            }
        }
    }

    /// A shared ledger's clock from `offset_ms` measured against this host's wall clock just
    /// now: from here on, carried by the monotonic clock ([`Clock::Database`]).
    pub fn measured(offset_ms: i64) -> Clock {
        let since = std::time::Instant::now();
        Clock::Database {
            at: Instant(host_millis().saturating_add(offset_ms)),
            since,
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

    /// The digit-by-digit forms are chrono's, byte for byte: every day of 1900–2199 and every
    /// 97th day of years 0–9999 (a prime step, so each month and leap day comes round), each
    /// at a moment with and without milliseconds and at its last millisecond; 200,000 instants
    /// spread over the range; the years either side of it (chrono's own forms).
    #[test]
    fn rfc3339_and_day_string_are_what_chrono_writes() {
        let chrono_forms = |t: Instant| {
            let dt = t.to_datetime();
            (
                dt.to_rfc3339_opts(SecondsFormat::AutoSi, true),
                dt.date_naive().to_string(),
            )
        };
        let at = |s: &str| Instant::parse_rfc3339(s).unwrap().0;
        let check = |moment: i64| {
            let i = Instant(moment);
            assert_eq!((i.rfc3339(), i.day_string()), chrono_forms(i), "{moment}");
        };
        let (first, last) = (at("0000-01-01T00:00:00Z"), at("9999-12-31T23:59:59.999Z"));
        let day = 86_400_000;
        for (from, to, step) in [
            (at("1900-01-01T00:00:00Z"), at("2200-01-01T00:00:00Z"), day),
            (first, last, 97 * day),
        ] {
            let mut t = from;
            while t < to {
                for moment in [t, t + 45_296_007, t + day - 1] {
                    check(moment);
                }
                t += step;
            }
        }
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            check(first + (x % (last - first) as u64) as i64);
        }
        for outside in [first - 1, last + 1, i64::MIN, i64::MAX, -62_198_755_200_001] {
            check(outside);
        }
    }

    #[test]
    fn fixed_clock_does_not_move() {
        let t = Instant(1_000);
        let c = Clock::Fixed(t);
        assert_eq!(c.now(), t);
        assert_eq!(c.now(), t);
    }
}
