//! One item file: TOML front matter checked against its collection (built-in keys, declared
//! fields, `[extra]`), then the Markdown body.

use super::{fields, key_line, show, split_front_matter, ContentError, ImageSource};
use crate::clock::Instant;
use crate::config::collections::{Collection, IdKind, FRONT_MATTER as KEYS};
use crate::item::ItemName;
use chrono::NaiveDate;
use std::path::Path;

/// One item as its file says it.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub name: ItemName,
    pub day: Option<NaiveDate>,
    pub title: String,
    pub image: Option<ImageSource>,
    pub indexable: bool,
    /// The file's own `publish_at`.
    pub publish_at: Option<Instant>,
    /// When it becomes due, by its collection's rule (see [`Collection::due_at`]).
    pub due: Instant,
    pub withdrawn: bool,
    /// When it is withdrawn by itself (Hugo's `expiryDate`); always after `due`.
    pub expire_at: Option<Instant>,
    pub body: String,
    /// Declared fields and `extra`, as canonical JSON: an object, `{}` when there are none.
    pub data: String,
    /// Its terms per taxonomy of its collection, as written (trimmed, duplicates dropped),
    /// canonical JSON (`{"tags":["Rust","Web"]}`); `""` when it has none.
    pub terms: String,
}

/// A slug: `[a-z0-9][a-z0-9-]{0,79}`.
pub fn is_slug(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 80
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// The file's stem: `content/notes/two-oh.md` → `two-oh`.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Parses one item file of collection `coll`. `path` names the file in errors and gives a
/// slug id its default.
pub fn parse_item(text: &str, path: &Path, coll: &Collection) -> Result<Item, ContentError> {
    let split =
        split_front_matter(text).map_err(|_| ContentError::Unterminated { path: path.into() })?;
    let fm = split
        .front_matter
        .ok_or_else(|| ContentError::NoFrontMatter { path: path.into() })?;
    let body = split.body.to_string();
    let mut table: toml::Table = toml::from_str(fm).map_err(|e| {
        let line = e
            .span()
            .map(|s| fm[..s.start.min(fm.len())].matches('\n').count() + 2)
            .unwrap_or(2);
        ContentError::FrontMatter {
            path: path.into(),
            line,
            message: e.message().to_string(),
        }
    })?;
    let invalid = |key: &str, why: String| ContentError::Invalid {
        path: path.into(),
        line: key_line(fm, key),
        key: key.to_string(),
        why,
    };
    let missing = |key: &str| invalid(key, "is required but missing".into());

    // Anything neither built in, declared, a taxonomy, nor under [extra] is refused, naming
    // what is allowed.
    if let Some(unknown) = table.keys().find(|k| {
        !KEYS.contains(&k.as_str())
            && k.as_str() != "extra"
            && !coll.fields.contains_key(*k)
            && !coll.taxonomies.contains(*k)
    }) {
        let mut allowed: Vec<&str> = KEYS.to_vec();
        allowed.extend(coll.fields.keys().map(String::as_str));
        allowed.extend(coll.taxonomies.iter().map(String::as_str));
        return Err(invalid(
            unknown,
            format!(
                "is not a key of collection {}: the keys are {}, and anything else goes under [extra]",
                coll.name,
                allowed.join(", ")
            ),
        ));
    }

    let id = match (coll.id, table.remove("id")) {
        (_, Some(toml::Value::Integer(n))) if n > 0 => n.to_string(),
        (IdKind::Integer, None) => return Err(missing("id")),
        (IdKind::Integer, Some(other)) => {
            return Err(invalid(
                "id",
                format!("must be a positive integer, not {}", show(&other)),
            ))
        }
        (IdKind::Slug, Some(toml::Value::String(s))) if is_slug(&s) => s,
        (IdKind::Slug, Some(other)) => {
            return Err(invalid(
                "id",
                format!(
                    "must be a slug (a-z, 0-9 and -, at most 80, starting with a letter or digit) or a positive integer, not {}",
                    show(&other)
                ),
            ))
        }
        (IdKind::Slug, None) => {
            let s = stem(path);
            if !is_slug(&s) {
                return Err(invalid(
                    "id",
                    format!("is missing, and the file name {s:?} is not a slug (a-z, 0-9 and -, at most 80): rename the file or set `id`"),
                ));
            }
            s
        }
    };
    let day = match table.remove("day") {
        None => None,
        Some(v) => {
            let d = fields::parse_date(&v).map_err(|why| invalid("day", why))?;
            if !(first_day()..=last_day()).contains(&d) {
                return Err(invalid(
                    "day",
                    format!("{d} is out of range: a day from 0001-01-01 to 9998-12-31"),
                ));
            }
            Some(d)
        }
    };
    let title = match table.remove("title").ok_or_else(|| missing("title"))? {
        toml::Value::String(s) if s.chars().any(char::is_control) => return Err(invalid(
            "title",
            "holds a control character (a NUL, a tab, a line break…); a title is one line of text"
                .into(),
        )),
        toml::Value::String(s) if !s.trim().is_empty() => s,
        toml::Value::String(_) => return Err(invalid("title", "is empty".into())),
        other => {
            return Err(invalid(
                "title",
                format!("must be a string, not {}", show(&other)),
            ))
        }
    };
    let image = match table.remove("image") {
        None => None,
        Some(toml::Value::String(s)) => {
            Some(ImageSource::parse(&s).map_err(|why| invalid("image", why))?)
        }
        Some(other) => {
            return Err(invalid(
                "image",
                format!("must be a string, not {}", show(&other)),
            ))
        }
    };
    let bool_field = |key: &str, v: Option<toml::Value>, default: bool| match v {
        None => Ok(default),
        Some(toml::Value::Boolean(b)) => Ok(b),
        Some(other) => Err(invalid(
            key,
            format!("must be true or false, not {}", show(&other)),
        )),
    };
    let indexable = bool_field("indexable", table.remove("indexable"), true)?;
    let withdrawn = bool_field("withdrawn", table.remove("withdrawn"), false)?;
    let publish_at = match table.remove("publish_at") {
        None => None,
        Some(v) => Some(parse_publish_at(&v).map_err(|why| invalid("publish_at", why))?),
    };
    let expire_at = match table.remove("expire_at") {
        None => None,
        Some(v) => Some(parse_publish_at(&v).map_err(|why| invalid("expire_at", why))?),
    };
    let due = coll.due_at(day, publish_at).map_err(|key| {
        invalid(
            key,
            format!(
                "is required: collection {} makes items due by {}",
                coll.name,
                if key == "day" {
                    "their day"
                } else {
                    "their publish_at"
                }
            ),
        )
    })?;

    if let Some(at) = expire_at.filter(|at| *at <= due) {
        return Err(invalid(
            "expire_at",
            format!(
                "{} is at or before the instant the item is due ({}): it would never be public; move expire_at later or remove it",
                at.rfc3339(),
                due.rfc3339()
            ),
        ));
    }
    let mut terms = serde_json::Map::new();
    for tax in &coll.taxonomies {
        let Some(v) = table.remove(tax) else { continue };
        let list = match v {
            toml::Value::Array(a) => a,
            other => {
                return Err(invalid(
                    tax,
                    format!(
                        "must be a list of strings (tags = [\"a\", \"b\"]), not {}",
                        show(&other)
                    ),
                ))
            }
        };
        let mut seen: Vec<String> = Vec::new();
        let mut slugs: Vec<String> = Vec::new();
        for v in list {
            let t = match v {
                toml::Value::String(t)
                    if !t.trim().is_empty() && !t.chars().any(char::is_control) =>
                {
                    t.trim().to_string()
                }
                other => {
                    return Err(invalid(
                        tax,
                        format!(
                            "each term is a non-empty line of text, not {}",
                            show(&other)
                        ),
                    ))
                }
            };
            let slug = crate::config::taxonomies::term_slug(&t);
            if slug.is_empty() {
                return Err(invalid(
                    tax,
                    format!("the term {t:?} has no letter or digit, so it can have no URL"),
                ));
            }
            if let Some(i) = slugs.iter().position(|s| *s == slug) {
                if seen[i] != t {
                    return Err(invalid(
                        tax,
                        format!(
                            "{:?} and {t:?} have the same URL slug {slug:?}: spell them the same",
                            seen[i]
                        ),
                    ));
                }
                continue;
            }
            slugs.push(slug);
            seen.push(t);
        }
        if !seen.is_empty() {
            terms.insert(tax.clone(), serde_json::Value::from(seen));
        }
    }
    let mut data = serde_json::Map::new();
    for (name, spec) in &coll.fields {
        match table.remove(name) {
            Some(v) => {
                data.insert(
                    name.clone(),
                    fields::check(spec, &v).map_err(|why| invalid(name, why))?,
                );
            }
            None if spec.required => return Err(missing(name)),
            None => {}
        }
    }
    match table.remove("extra") {
        None => {}
        Some(toml::Value::Table(t)) => {
            data.insert("extra".into(), fields::extra(&toml::Value::Table(t)));
        }
        Some(other) => {
            return Err(invalid(
                "extra",
                format!(
                    "must be a table ([extra] with keys under it), not {}",
                    show(&other)
                ),
            ))
        }
    }
    // Nothing downstream can hold a NUL (PostgreSQL text cannot) or the other C0 controls
    // (XML 1.0 forbids them in feeds and sitemaps); a body is text.
    if let Some(at) = body
        .char_indices()
        .find(|(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        .map(|(i, _)| i)
    {
        let before = text.len() - body.len() + at;
        return Err(ContentError::Invalid {
            path: path.into(),
            line: Some(text[..before].matches('\n').count() + 1),
            key: "(body)".into(),
            why: format!(
                "holds the control character U+{:04X}; remove it",
                body[at..].chars().next().map_or(0, u32::from)
            ),
        });
    }
    Ok(Item {
        name: ItemName::new(&coll.name, &id),
        day,
        title,
        image,
        indexable,
        publish_at,
        due,
        withdrawn,
        expire_at,
        body,
        data: serde_json::Value::Object(data).to_string(),
        terms: if terms.is_empty() {
            String::new()
        } else {
            serde_json::Value::Object(terms).to_string()
        },
    })
}

/// A broken file's item, when it can still be told: the `id` its front matter gives (or its
/// stem, in a slug collection). Used to hold that item as it is.
pub fn guess_name(text: &str, path: &Path, coll: &Collection) -> Option<ItemName> {
    let fm = split_front_matter(text).ok()?.front_matter;
    let id = fm.and_then(|fm| {
        fm.lines().find_map(|l| {
            let rest = l
                .trim_start()
                .strip_prefix("id")?
                .trim_start()
                .strip_prefix('=')?;
            let v = rest.trim().trim_matches('"');
            (!v.is_empty()).then(|| v.to_string())
        })
    });
    let id = match (id, coll.id) {
        (Some(id), _) => id,
        (None, IdKind::Slug) => stem(path),
        (None, IdKind::Integer) => return None,
    };
    let ok = match coll.id {
        IdKind::Integer => id.parse::<i64>().is_ok_and(|n| n > 0),
        IdKind::Slug => is_slug(&id),
    };
    ok.then(|| ItemName::new(&coll.name, &id))
}

fn parse_publish_at(v: &toml::Value) -> Result<Instant, String> {
    let at = fields::parse_instant(v)?;
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

/// The earliest and latest days an item may have: every instant from the year 1 to the day
/// after 9998-12-31 plus any grace writes as an RFC 3339 date (four-digit years), and no
/// engine parses a day as a date any more (due instants are computed here). A daily site
/// that runs back centuries (the shared 100,000-item corpus reaches 1752) fits.
fn first_day() -> NaiveDate {
    NaiveDate::from_ymd_opt(1, 1, 1).expect("a date")
}

fn last_day() -> NaiveDate {
    NaiveDate::from_ymd_opt(9998, 12, 31).expect("a date")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::collections::Collections;
    use crate::config::Config;

    fn coll(toml_text: &str, name: &str) -> Collection {
        let c = Config::parse(toml_text, Path::new("fencepost.toml")).unwrap();
        Collections::resolve(&c, Path::new("fencepost.toml"))
            .unwrap()
            .get(name)
            .unwrap()
            .clone()
    }

    const ADVISORIES: &str = "[collections.advisories]\ndue = \"publish_at\"\n[collections.advisories.fields]\ncve = { type = \"string\", required = true }\nseverity = { type = \"string\", one_of = [\"low\", \"high\"], required = true }\naffected = { type = \"list\" }\ncvss = { type = \"decimal\" }\n";

    fn parse(text: &str) -> Result<Item, ContentError> {
        parse_item(
            text,
            Path::new("content/advisories/fp-1.md"),
            &coll(ADVISORIES, "advisories"),
        )
    }

    #[test]
    fn declared_fields_and_extra_become_canonical_json() {
        let item = parse("+++\ntitle = \"T\"\npublish_at = 2027-01-01T12:00:00Z\ncve = \"CVE-1\"\nseverity = \"high\"\naffected = [\"a\", \"b\"]\ncvss = 7.5\n[extra]\nz = 1\na = { b = true }\n+++\nBody.\n").unwrap();
        assert_eq!(item.name, ItemName::new("advisories", "fp-1"));
        assert_eq!(item.day, None);
        assert_eq!(item.due.rfc3339(), "2027-01-01T12:00:00Z");
        assert_eq!(
            item.data,
            r#"{"affected":["a","b"],"cve":"CVE-1","cvss":"7.5","extra":{"a":{"b":true},"z":1},"severity":"high"}"#
        );
    }

    #[test]
    fn each_mistake_is_named_with_its_line() {
        let base = "+++\ntitle = \"T\"\npublish_at = 2027-01-01T12:00:00Z\ncve = \"CVE-1\"\nseverity = \"high\"\n";
        for (extra, key, line) in [
            ("colour = 2\n", "colour", 6),
            ("cvss = \"high\"\n", "cvss", 6),
            ("id = \"Not A Slug\"\n", "id", 6),
        ] {
            let e = parse(&format!("{base}{extra}+++\n")).unwrap_err();
            match &e {
                ContentError::Invalid {
                    key: k, line: l, ..
                } => {
                    assert_eq!((k.as_str(), *l), (key, Some(line)), "{e}")
                }
                other => panic!("{other}"),
            }
        }
        let e = parse("+++\ntitle = \"T\"\npublish_at = 2027-01-01T12:00:00Z\ncve = \"C\"\n+++\n")
            .unwrap_err();
        assert!(e.to_string().contains("`severity`: is required"), "{e}");
        let e = parse("+++\ntitle = \"T\"\ncve = \"C\"\nseverity = \"low\"\n+++\n").unwrap_err();
        assert!(e.to_string().contains("`publish_at`: is required"), "{e}");
        assert!(parse("+++\nid = 1\n").is_err());
        assert!(matches!(
            parse("id = 1\n"),
            Err(ContentError::NoFrontMatter { .. })
        ));
    }

    #[test]
    fn the_day_rules_follow_the_zone() {
        let c = coll(
            "[collections.words]\ntimezone = \"America/New_York\"\ngrace_minutes = 0\n[collections.posts]\ndue = \"start_of_day\"\ngrace_minutes = 5\n",
            "words",
        );
        let item = parse_item(
            "+++\nday = 2026-03-07\ntitle = \"w\"\n+++\n",
            Path::new("content/words/w1.md"),
            &c,
        )
        .unwrap();
        // The end of 2026-03-07 in New York: midnight EST.
        assert_eq!(item.due.rfc3339(), "2026-03-08T05:00:00Z");
        let item = parse_item(
            "+++\nday = 2026-03-08\ntitle = \"w\"\n+++\n",
            Path::new("content/words/w2.md"),
            &c,
        )
        .unwrap();
        // After the clocks went forward: midnight EDT.
        assert_eq!(item.due.rfc3339(), "2026-03-09T04:00:00Z");
        let p = coll(
            "[collections.posts]\ndue = \"start_of_day\"\ngrace_minutes = 5\n",
            "posts",
        );
        let item = parse_item(
            "+++\nday = 2026-03-08\ntitle = \"p\"\n+++\n",
            Path::new("content/posts/hello.md"),
            &p,
        )
        .unwrap();
        assert_eq!(item.due.rfc3339(), "2026-03-08T00:05:00Z");
        assert_eq!(item.name, ItemName::new("posts", "hello"));
    }

    #[test]
    fn a_broken_file_still_names_its_item_when_it_can() {
        let c = coll(ADVISORIES, "advisories");
        assert_eq!(
            guess_name(
                "+++\nid = \"fp-9\"\ntitle = \n+++\n",
                Path::new("content/advisories/x.md"),
                &c
            ),
            Some(ItemName::new("advisories", "fp-9"))
        );
        assert_eq!(
            guess_name(
                "no front matter",
                Path::new("content/advisories/fp-2.md"),
                &c
            ),
            Some(ItemName::new("advisories", "fp-2"))
        );
    }
}
