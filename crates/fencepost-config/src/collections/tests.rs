use super::*;

fn parse(text: &str) -> Result<Collections, ConfigError> {
    let c = Config::parse(text, Path::new("fencepost.toml"))?;
    Collections::resolve(&c, Path::new("fencepost.toml"))
}

#[test]
fn a_site_without_collections_has_the_default_one() {
    let c = parse("").unwrap();
    assert_eq!(c.naming, Naming::Legacy);
    assert_eq!(c.list.len(), 1);
    assert_eq!(c.list[0].item_url("3", None), "/answers/3/");
}

#[test]
fn collections_are_checked() {
    for (text, key) in [
        ("[collections.Notes]\n", "collections.Notes"),
        (
            "[collections.a]\ndir = \"x\"\n[collections.b]\ndir = \"x\"\n",
            "collections.b.dir",
        ),
        (
            "[collections.a]\ndir = \"x\"\n[collections.b]\ndir = \"x/y\"\n",
            "collections.b.dir",
        ),
        (
            "[collections.a]\nurl = \"/p/{id}/\"\n[collections.b]\nurl = \"/p/{id}/\"\n",
            "collections.b.url",
        ),
        ("[collections.a]\nurl = \"/p/{id}\"\n", "collections.a.url"),
        (
            "[collections.a]\nurl = \"/p/{slug}/\"\n",
            "collections.a.url",
        ),
        ("[collections.a]\nurl = \"/p/\"\n", "collections.a.url"),
        (
            "[collections.a]\ntimezone = \"Mars/Olympus\"\n",
            "collections.a.timezone",
        ),
        ("[publish]\ntimezone = \"Nowhere\"\n", "publish.timezone"),
        (
            "[collections.a]\n[collections.a.fields]\ntitle = { type = \"string\" }\n",
            "collections.a.fields.title",
        ),
        (
            "[collections.a]\n[collections.a.fields]\nn = { type = \"bool\", one_of = [\"x\"] }\n",
            "collections.a.fields.n",
        ),
    ] {
        let e = parse(text).unwrap_err().to_string();
        assert!(e.contains(key), "{text}: {e}");
    }
    assert!(parse("[collections.a]\n[collections.b]\n").is_ok());
    // A fields table under a collection that has no table of its own: a ghost, refused.
    let e = parse("[collections.a]\n[collections.b.fields]\nn = { type = \"bool\" }\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("collections.b.fields") && e.contains("no [collections.b] table"),
        "{e}"
    );
}

#[test]
fn midnights_follow_the_zone_across_clock_changes() {
    let ny: chrono_tz::Tz = "America/New_York".parse().unwrap();
    // 2026-03-08: clocks go forward at 02:00; midnight is still EST (UTC-5).
    let d = NaiveDate::from_ymd_opt(2026, 3, 8).unwrap();
    assert_eq!(local_midnight(ny, d).rfc3339(), "2026-03-08T05:00:00Z");
    // The next midnight is EDT (UTC-4).
    let d = NaiveDate::from_ymd_opt(2026, 3, 9).unwrap();
    assert_eq!(local_midnight(ny, d).rfc3339(), "2026-03-09T04:00:00Z");
    // Santiago skips from 00:00 to 01:00 on 2026-09-06: the day starts at 01:00 local.
    let scl: chrono_tz::Tz = "America/Santiago".parse().unwrap();
    let d = NaiveDate::from_ymd_opt(2026, 9, 6).unwrap();
    assert_eq!(local_midnight(scl, d).rfc3339(), "2026-09-06T04:00:00Z");
}

#[test]
fn a_day_the_zone_skipped_begins_where_the_next_day_does() {
    // Samoa skipped 2011-12-30: 29 December 23:59:59 (UTC-10) was followed by 31 December
    // 00:00 (UTC+14), 2011-12-30T10:00:00Z.
    let apia: chrono_tz::Tz = "Pacific/Apia".parse().unwrap();
    let skipped = NaiveDate::from_ymd_opt(2011, 12, 30).unwrap();
    let next = NaiveDate::from_ymd_opt(2011, 12, 31).unwrap();
    let start = local_midnight(apia, skipped);
    assert_eq!(start, local_midnight(apia, next));
    assert_eq!(start.rfc3339(), "2011-12-30T10:00:00Z");
    // Never earlier than the end of the day before.
    assert!(
        start
            >= local_midnight(apia, NaiveDate::from_ymd_opt(2011, 12, 29).unwrap())
                .plus_secs(86_400 - 1)
    );
}
