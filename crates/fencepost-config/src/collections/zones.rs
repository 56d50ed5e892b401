//! Time zones and due times of collections: parsed, checked, and warned about when a zone
//! is a legacy name whose rules are not its region's.

use super::{CollectionConfig, ConfigError, DueRule};
use chrono::NaiveTime;

/// `"HH:MM"`, 00:00 to 23:59.
pub(super) fn parse_due_time(t: &str) -> Result<NaiveTime, String> {
    NaiveTime::parse_from_str(t, "%H:%M")
        .map_err(|_| format!("{t:?} is no time of day: write \"HH:MM\", like \"09:00\""))
}

/// Zones named for a region's standard time that keep it all year (`EST` is UTC−5 in July
/// too), or legacy names for a region: almost always a mistake for the region's own zone,
/// whose clocks change. Warned about, naming the zone to use.
const FIXED_ZONES: &[(&str, &str)] = &[
    (
        "EST",
        "America/New_York (or America/Panama, which keeps UTC-5 all year)",
    ),
    (
        "MST",
        "America/Denver (or America/Phoenix, which keeps UTC-7 all year)",
    ),
    ("HST", "Pacific/Honolulu"),
    ("CET", "Europe/Paris, Europe/Berlin or another city's zone"),
    ("MET", "Europe/Paris, Europe/Berlin or another city's zone"),
    (
        "EET",
        "Europe/Athens, Europe/Helsinki or another city's zone",
    ),
    ("WET", "Europe/Lisbon"),
    ("EST5EDT", "America/New_York"),
    ("CST6CDT", "America/Chicago"),
    ("MST7MDT", "America/Denver"),
    ("PST8PDT", "America/Los_Angeles"),
];

pub(super) fn warn_fixed_zone(key: &str, name: &str) {
    if let Some((_, instead)) = FIXED_ZONES
        .iter()
        .find(|(z, _)| z.eq_ignore_ascii_case(name))
    {
        tracing::warn!(
            "{key} = {name:?} is a legacy zone name, not a region's: its daylight-saving rules may not be the region's; use {instead}"
        );
    }
}

pub(super) fn parse_tz(name: &str) -> Result<chrono_tz::Tz, String> {
    name.parse::<chrono_tz::Tz>().map_err(|_| {
        format!("{name:?} is not a time zone of the IANA database (like \"UTC\", \"Europe/Berlin\" or \"America/New_York\")")
    })
}

/// A collection's time zone (warned about when it is a legacy name), due rule and due time.
pub(super) fn timing(
    name: &str,
    c: &CollectionConfig,
    site_tz: chrono_tz::Tz,
    bad: &dyn Fn(String, String) -> ConfigError,
) -> Result<(chrono_tz::Tz, DueRule, Option<NaiveTime>), ConfigError> {
    let key = |k: &str| format!("collections.{name}.{k}");
    let timezone = match &c.timezone {
        Some(t) => {
            let tz = parse_tz(t).map_err(|why| bad(key("timezone"), why))?;
            warn_fixed_zone(&key("timezone"), t);
            tz
        }
        None => site_tz,
    };
    let due = c.due.unwrap_or(DueRule::EndOfDay);
    let due_time = match (&c.due_time, due) {
        (None, _) => None,
        (Some(_), DueRule::PublishAt) => {
            return Err(bad(
                key("due_time"),
                "applies to the day rules (due = \"start_of_day\" or \"end_of_day\"): items due by `publish_at` carry their own time".into(),
            ))
        }
        (Some(t), _) => Some(parse_due_time(t).map_err(|why| bad(key("due_time"), why))?),
    };
    Ok((timezone, due, due_time))
}
