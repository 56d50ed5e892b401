//! Typed front-matter fields: each declared key checked against its [`FieldSpec`], then every
//! field and the `[extra]` table written as one canonical JSON object (keys sorted, decimals
//! as their exact text), which the ledger stores and the page's content hash covers.

use super::show;
use fencepost_config::collections::{FieldSpec, FieldType};
use fencepost_core::clock::Instant;
use serde_json::{Map, Value};

/// Checks one declared field's value; `Err` says what was expected.
pub fn check(spec: &FieldSpec, v: &toml::Value) -> Result<Value, String> {
    match spec.kind {
        FieldType::String => one_of(spec, text(v, "a string")?).map(Value::String),
        FieldType::Integer => match v {
            toml::Value::Integer(n) => {
                at_least(spec, *n as f64, &n.to_string())?;
                Ok(Value::from(*n))
            }
            other => Err(format!("must be an integer like 42, not {}", show(other))),
        },
        FieldType::Decimal => decimal(spec, v).map(Value::String),
        FieldType::Bool => match v {
            toml::Value::Boolean(b) => Ok(Value::Bool(*b)),
            other => Err(format!("must be true or false, not {}", show(other))),
        },
        FieldType::Date => date(v).map(Value::String),
        FieldType::Datetime => datetime(v).map(Value::String),
        FieldType::Url => url(v).map(Value::String),
        FieldType::List => match v {
            toml::Value::Array(items) => items
                .iter()
                .map(|i| one_of(spec, text(i, "a list of strings")?).map(Value::String))
                .collect::<Result<Vec<Value>, String>>()
                .map(Value::Array),
            other => Err(format!(
                "must be a list of strings like [\"a\", \"b\"], not {}",
                show(other)
            )),
        },
    }
}

fn text(v: &toml::Value, what: &str) -> Result<String, String> {
    match v {
        toml::Value::String(s) => {
            if let Some(c) = s
                .chars()
                .find(|&c| c != '\r' && super::is_forbidden_char(c))
            {
                return Err(super::forbidden_char_why(c));
            }
            Ok(s.clone())
        }
        other => Err(format!("must be {what}, not {}", show(other))),
    }
}

fn one_of(spec: &FieldSpec, s: String) -> Result<String, String> {
    match &spec.one_of {
        Some(allowed) if !allowed.contains(&s) => Err(format!(
            "{s:?} is not one of {}",
            allowed
                .iter()
                .map(|a| format!("{a:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => Ok(s),
    }
}

fn at_least(spec: &FieldSpec, n: f64, shown: &str) -> Result<(), String> {
    match spec.min {
        Some(min) if n < min => Err(format!(
            "{shown} is below the smallest allowed value, {min}"
        )),
        _ => Ok(()),
    }
}

/// A decimal as exact text: an integer or a string of digits with one optional point (and
/// the spec's prefix dropped); a TOML float is written at the spec's scale, or shortest.
fn decimal(spec: &FieldSpec, v: &toml::Value) -> Result<String, String> {
    let example = match spec.scale {
        Some(s) if s > 0 => format!("like 4.{}", "9".repeat(s as usize)),
        _ => "like 4.99".into(),
    };
    let text = match v {
        toml::Value::Integer(n) => n.to_string(),
        // `+ 0.0` turns -0.0 into 0.0, which would otherwise print as "-0".
        toml::Value::Float(f) if f.is_finite() => match spec.scale {
            Some(s) => format!("{:.*}", s as usize, f + 0.0),
            None => format!("{}", f + 0.0),
        },
        toml::Value::String(s) => {
            let t = s.trim();
            match &spec.prefix {
                Some(p) => t.strip_prefix(p.as_str()).unwrap_or(t).trim().to_string(),
                None => t.to_string(),
            }
        }
        other => return Err(format!("must be a number {example}, not {}", show(other))),
    };
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(whole) || !(frac.is_empty() || all_digits(frac)) {
        return Err(format!("{text:?} is not a number {example}"));
    }
    let out = match spec.scale {
        Some(s) if frac.len() > s as usize => {
            return Err(format!(
                "{text:?} has more than {s} digit(s) after the point"
            ))
        }
        Some(0) => format!("{sign}{whole}"),
        Some(s) => format!("{sign}{whole}.{frac:0<w$}", w = s as usize),
        None if frac.is_empty() => format!("{sign}{whole}"),
        None => format!("{sign}{whole}.{frac}"),
    };
    at_least(spec, out.parse::<f64>().unwrap_or(f64::NAN), &out)?;
    Ok(out)
}

fn date(v: &toml::Value) -> Result<String, String> {
    let d = parse_date(v)?;
    if !(1..=9998).contains(&chrono::Datelike::year(&d)) {
        return Err(format!(
            "{d} is out of range: a date from 0001-01-01 to 9998-12-31"
        ));
    }
    Ok(d.to_string())
}

/// A date: a TOML date or a string like `2026-11-30`.
pub(super) fn parse_date(v: &toml::Value) -> Result<chrono::NaiveDate, String> {
    match v {
        toml::Value::Datetime(dt) if dt.date.is_some() && dt.time.is_none() => {
            let d = dt.date.expect("checked");
            chrono::NaiveDate::from_ymd_opt(i32::from(d.year), u32::from(d.month), u32::from(d.day))
                .ok_or_else(|| format!("{dt} is not a calendar date"))
        }
        toml::Value::String(s) => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .map_err(|_| format!("{s:?} is not a date like 2026-11-30")),
        other => Err(format!(
            "must be a date like 2026-11-30, not {}",
            show(other)
        )),
    }
}

fn datetime(v: &toml::Value) -> Result<String, String> {
    parse_instant_in_range(v).map(|t| t.rfc3339())
}

/// [`parse_instant`], from the year 1 to the end of 9998: every such instant writes as an
/// RFC 3339 date-time with a four-digit year in every zone, in feeds and sitemaps alike.
pub(super) fn parse_instant_in_range(v: &toml::Value) -> Result<Instant, String> {
    let at = parse_instant(v)?;
    let first = Instant::parse_rfc3339("0001-01-01T00:00:00Z").expect("valid");
    let last = Instant::parse_rfc3339("9999-01-01T00:00:00Z").expect("valid");
    if at < first || at >= last {
        return Err(format!(
            "{} is out of range: an instant from the year 1 to the end of 9998",
            at.rfc3339()
        ));
    }
    Ok(at)
}

/// An instant: with an offset (as [`parse_instant_in_range`] takes it), or a wall-clock
/// date-time without one — a TOML local date-time `2027-03-14T09:00:00` or that string — in
/// the time zone `tz`. A time the zone skips (a daylight-saving gap) is refused by name; one
/// it has twice (the hour the clocks go back) is the first.
pub(crate) fn parse_instant_local(v: &toml::Value, tz: chrono_tz::Tz) -> Result<Instant, String> {
    use chrono::{offset::LocalResult, TimeZone};
    let text = match v {
        toml::Value::Datetime(dt)
            if dt.offset.is_none() && dt.date.is_some() && dt.time.is_some() =>
        {
            dt.to_string()
        }
        toml::Value::String(s) if chrono::DateTime::parse_from_rfc3339(s).is_err() => s.clone(),
        _ => return parse_instant_in_range(v),
    };
    let naive = chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%d %H:%M:%S%.f"))
        .map_err(|_| {
            format!("{text:?} is no date-time: write 2027-03-14T09:00:00 (in {tz}) or give an offset like 2027-03-14T09:00:00-04:00")
        })?;
    let at = match tz.from_local_datetime(&naive) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t,
        LocalResult::None => {
            return Err(format!(
                "{text} does not exist in {tz}: the clocks skip it (daylight saving); write a time outside the gap, or give an offset"
            ))
        }
    };
    parse_instant_in_range(&toml::Value::String(at.to_rfc3339()))
}

/// An instant: a TOML date-time with an offset, or a string in RFC 3339.
pub(super) fn parse_instant(v: &toml::Value) -> Result<Instant, String> {
    let s = match v {
        toml::Value::Datetime(dt) if dt.offset.is_some() => dt.to_string(),
        toml::Value::String(s) => s.clone(),
        other => {
            return Err(format!(
                "must be a date-time with an offset like 2026-12-01T00:10:00Z, not {}",
                show(other)
            ))
        }
    };
    Instant::parse_rfc3339(&s).map_err(|e| format!("{s:?}: {e}"))
}

fn url(v: &toml::Value) -> Result<String, String> {
    let s = text(v, "a URL")?;
    // A browser reads `\` as `/` and drops tabs and line breaks, so `/\evil.example/` and
    // `/\t/evil.example/` lead off-site like `//evil.example/`: a path on this site has
    // neither, nor any other space or control character.
    let ok = if s.starts_with('/') {
        !s.starts_with("//")
            && !s.contains('\\')
            && !s.contains(|c: char| c.is_whitespace() || c.is_control())
    } else {
        url::Url::parse(&s)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
    };
    if !ok {
        return Err(format!(
            "{s:?} is not an http(s) URL or a path on this site starting with /"
        ));
    }
    Ok(s)
}

/// The `[extra]` table as JSON: any TOML, date-times as their text.
pub fn extra(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(n) => Value::from(*n),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(f.to_string())),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(dt) => Value::String(dt.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(extra).collect()),
        toml::Value::Table(t) => {
            if t.len() == 1 {
                if let Some(toml::Value::String(s)) = t.get("$__toml_private_datetime") {
                    return Value::String(s.clone());
                }
            }
            Value::Object(
                t.iter()
                    .map(|(k, v)| (k.clone(), extra(v)))
                    .collect::<Map<_, _>>(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: FieldType) -> FieldSpec {
        FieldSpec {
            kind,
            required: false,
            one_of: None,
            scale: None,
            prefix: None,
            min: None,
        }
    }

    #[test]
    fn decimals_keep_their_text_or_the_scale() {
        let d = spec(FieldType::Decimal);
        assert_eq!(
            check(&d, &toml::Value::String("4.990".into())).unwrap(),
            "4.990"
        );
        assert_eq!(check(&d, &toml::Value::Float(7.5)).unwrap(), "7.5");
        assert_eq!(check(&d, &toml::Value::Integer(-3)).unwrap(), "-3");
        assert!(check(&d, &toml::Value::String("seven".into())).is_err());
        let money = FieldSpec {
            scale: Some(2),
            prefix: Some("$".into()),
            min: Some(0.0),
            ..spec(FieldType::Decimal)
        };
        assert_eq!(check(&money, &toml::Value::Integer(5)).unwrap(), "5.00");
        assert_eq!(check(&money, &toml::Value::Float(12.3)).unwrap(), "12.30");
        assert_eq!(check(&money, &toml::Value::Float(-0.0)).unwrap(), "0.00");
        assert_eq!(
            check(&money, &toml::Value::String("$7.5".into())).unwrap(),
            "7.50"
        );
        assert!(check(&money, &toml::Value::String("4.999".into())).is_err());
        assert!(check(&money, &toml::Value::Float(-1.0)).is_err());
    }

    #[test]
    fn each_type_refuses_the_wrong_value() {
        let v = |s: &str| -> toml::Value {
            toml::from_str::<toml::Table>(&format!("v = {s}")).unwrap()["v"].clone()
        };
        for (kind, good, bad) in [
            (FieldType::String, "\"x\"", "1"),
            (FieldType::Integer, "3", "\"3\""),
            (FieldType::Bool, "true", "\"yes\""),
            (FieldType::Date, "2026-01-02", "\"2026-13-01\""),
            (
                FieldType::Datetime,
                "2026-01-02T03:04:05+01:00",
                "2026-01-02",
            ),
            (FieldType::Url, "\"https://example.org/a\"", "\"ftp://x\""),
            (FieldType::List, "[\"a\", \"b\"]", "[1]"),
        ] {
            let s = spec(kind);
            assert!(check(&s, &v(good)).is_ok(), "{kind:?} {good}");
            assert!(check(&s, &v(bad)).is_err(), "{kind:?} {bad}");
        }
        assert_eq!(
            check(&spec(FieldType::Datetime), &v("2026-01-02T03:04:05+01:00")).unwrap(),
            "2026-01-02T02:04:05Z"
        );
        let sev = FieldSpec {
            one_of: Some(vec!["low".into(), "high".into()]),
            ..spec(FieldType::String)
        };
        assert!(check(&sev, &v("\"low\"")).is_ok());
        assert!(check(&sev, &v("\"medium\""))
            .unwrap_err()
            .contains("not one of"));
    }
}
