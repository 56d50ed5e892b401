//! One item file: TOML front matter checked against its collection (built-in keys, declared
//! fields, `[extra]`), then the Markdown body.

mod front;
mod json;

use super::{fields, split_front_matter, ContentError, ImageSource};
use chrono::NaiveDate;
use fencepost_config::collections::{Collection, IdKind};
use fencepost_core::clock::Instant;
use fencepost_core::item::ItemName;
use front::Front;
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
    /// `draft = true`: never published, counted or in any output (see `publish/drafts.rs`);
    /// `serve --watch` previews it.
    pub draft: bool,
    /// When it is withdrawn by itself (Hugo's `expiryDate`); always after `due`.
    pub expire_at: Option<Instant>,
    pub body: String,
    /// Declared fields and `extra`, as canonical JSON: an object, `{}` when there are none.
    pub data: String,
    /// Its terms per taxonomy of its collection, as written (trimmed, duplicates dropped),
    /// canonical JSON (`{"tags":["Rust","Web"]}`); `""` when it has none.
    pub terms: String,
}

/// An id of an `id = "slug"` collection, kept as written in its URL: at most 80 of
/// `A–Z a–z 0–9 . _ ~ -` (the characters a URL path segment needs no escaping for), not
/// starting with `.` (no hidden file, no `.` or `..` segment). `FPSA-2026-0007`,
/// `CVE-2026-12345`, `1.2.0` and every lower-case slug are ids.
pub fn is_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 80
        && b[0] != b'.'
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'~' | b'-'))
}

/// A slug: `[a-z0-9][a-z0-9-]{0,79}` (what `new` makes of a title).
pub fn is_slug(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 80
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// A slug item's id when its front matter gives none: the file's stem, or for a page bundle
/// (`content/posts/hello/index.md`, a folder of its own below the collection's) the folder's
/// name, as Hugo and Zola name it.
pub fn default_id(path: &Path, coll: &Collection) -> String {
    match bundle_folder(path, coll) {
        Some(folder) => folder
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        None => {
            let stem = stem(path);
            // A translation beside its original (`hello.fr.md`) has the original's id.
            match coll.beside {
                true => (stem.strip_suffix(&format!(".{}", coll.lang)))
                    .map_or(stem.clone(), str::to_string),
                false => stem,
            }
        }
    }
}

/// The folder of a page bundle, when `path` is one's `index.md` (in a folder below the
/// collection's own).
pub fn bundle_folder<'a>(path: &'a Path, coll: &Collection) -> Option<&'a Path> {
    let name = path.file_name()?;
    let translated = coll.beside && *name == *format!("index.{}.md", coll.lang);
    if name != "index.md" && !translated {
        return None;
    }
    let folder = path.parent()?;
    let own = Path::new("content").join(&coll.dir);
    (folder != own && folder.starts_with(&own)).then_some(folder)
}

/// The file's stem: `content/notes/two-oh.md` → `two-oh`.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Parses one item file of collection `coll`. `path` names the file in errors and gives a
/// slug id its default. Keys are checked in a fixed order, so a file with two mistakes
/// always reports the same one first.
pub fn parse_item(text: &str, path: &Path, coll: &Collection) -> Result<Item, ContentError> {
    parse_item_with(text, path, coll, None)
}

/// [`parse_item`] of a translation: without an instant of its own (`day`, `publish_at`) it
/// takes its original's, `inherited` (see [`super::translation`]).
pub fn parse_item_with(
    text: &str,
    path: &Path,
    coll: &Collection,
    inherited: Option<super::translation::Inherited>,
) -> Result<Item, ContentError> {
    let split = split_front_matter(text).map_err(|e| ContentError::Unterminated {
        path: path.into(),
        fence: e.0.fence(),
    })?;
    let fm = split
        .front_matter
        .ok_or_else(|| ContentError::NoFrontMatter { path: path.into() })?;
    let body = split.body.to_string();
    let mut front = Front::parse(fm, split.format, path, coll)?;
    front.refuse_unknown_keys()?;
    let id = front.id()?;
    let day = front.day()?;
    let title = front.title()?;
    let image = front.image()?;
    let indexable = front.flag("indexable", true)?;
    let withdrawn = front.flag("withdrawn", false)?;
    let draft = front.flag("draft", false)?;
    let publish_at = front.instant("publish_at")?;
    let (day, publish_at) = match (day, publish_at, inherited) {
        (None, None, Some(i)) => (i.day, i.publish_at),
        own => (own.0, own.1),
    };
    let expire_at = front.instant("expire_at")?;
    let due = front.due(day, publish_at, expire_at)?;
    let terms = front.terms()?;
    let data = front.data()?;
    check_text(text, &body, path)?;
    Ok(Item {
        name: ItemName::new(&coll.name, &id),
        day,
        title,
        image,
        indexable,
        publish_at,
        due,
        withdrawn,
        draft,
        expire_at,
        body,
        data,
        terms,
    })
}

/// Nothing downstream can hold a NUL (PostgreSQL text cannot), the other controls or a
/// non-character (XML forbids them in feeds and sitemaps; see
/// [`super::is_forbidden_char`]). Checked over the whole file once its keys are read, so a
/// string in `[extra]` or a term is caught like the body; the error names the line and, in
/// the front matter, the key on it.
fn check_text(text: &str, body: &str, path: &Path) -> Result<(), ContentError> {
    let Some((at, c)) = text
        .char_indices()
        .find(|&(_, c)| super::is_forbidden_char(c))
    else {
        return Ok(());
    };
    let line = text[..at].matches('\n').count() + 1;
    let key = if at >= text.len() - body.len() {
        "(body)".to_string()
    } else {
        let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        text[start..at]
            .split_once(['=', ':'])
            .map(|(k, _)| k.trim().trim_matches('"').to_string())
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "(front matter)".to_string())
    };
    Err(ContentError::Invalid {
        path: path.into(),
        line: Some(line),
        key,
        why: super::forbidden_char_why(c),
    })
}

/// A broken file's due instant, when its front matter still reads as TOML and its
/// `publish_at` or `day` does (what an operator is told of a held item).
pub fn guess_due(text: &str, coll: &Collection) -> Option<Instant> {
    let split = split_front_matter(text).ok()?;
    let table = super::front_matter_table(split.front_matter?, split.format).ok()?;
    let publish_at = table
        .get("publish_at")
        .and_then(|v| parse_publish_at(v, coll.timezone).ok());
    let day = table.get("day").and_then(|v| fields::parse_date(v).ok());
    coll.due_at(day, publish_at).ok()
}

/// A broken file's item, when it can still be told: the `id` its front matter gives (or its
/// stem, in a slug collection). Used to hold that item as it is.
pub fn guess_name(text: &str, path: &Path, coll: &Collection) -> Option<ItemName> {
    let fm = split_front_matter(text).ok()?.front_matter;
    let id = fm.and_then(|fm| {
        fm.lines().find_map(|l| {
            let v = super::key_value(l, "id")?.trim_matches(['"', '\'']);
            (!v.is_empty()).then(|| v.to_string())
        })
    });
    let id = match (id, coll.id) {
        (Some(id), _) => id,
        (None, IdKind::Slug) => default_id(path, coll),
        (None, IdKind::Integer) => return None,
    };
    let ok = match coll.id {
        IdKind::Integer => id.parse::<i64>().is_ok_and(|n| n > 0),
        IdKind::Slug => is_id(&id),
    };
    ok.then(|| ItemName::new(&coll.name, &id))
}

/// `publish_at` (or `expire_at`): an instant with an offset, or a wall-clock time without
/// one, in the collection's time zone (see [`fields::parse_instant_local`]).
fn parse_publish_at(v: &toml::Value, tz: chrono_tz::Tz) -> Result<Instant, String> {
    fields::parse_instant_local(v, tz)
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
    use fencepost_config::collections::Collections;
    use fencepost_config::Config;

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

    /// The same item, and the same mistakes, written in YAML: the same item, and the same
    /// file, line and key in every message.
    #[test]
    fn yaml_front_matter_reads_as_toml_does() {
        let toml = parse("+++\ntitle = \"T\"\npublish_at = 2027-01-01T12:00:00Z\ncve = \"CVE-1\"\nseverity = \"high\"\naffected = [\"a\", \"b\"]\ncvss = 7.5\n[extra]\nz = 1\na = { b = true }\n+++\nBody.\n").unwrap();
        let yaml = parse("---\ntitle: T\npublish_at: 2027-01-01T12:00:00Z\ncve: CVE-1\nseverity: high\naffected: [a, b]\ncvss: 7.5\nextra:\n  z: 1\n  a: {b: true}\n---\nBody.\n").unwrap();
        assert_eq!(format!("{yaml:?}"), format!("{toml:?}"));
        let base_toml = "+++\ntitle = \"T\"\npublish_at = 2027-01-01T12:00:00Z\ncve = \"CVE-1\"\nseverity = \"high\"\n";
        let base_yaml =
            "---\ntitle: T\npublish_at: 2027-01-01T12:00:00Z\ncve: CVE-1\nseverity: high\n";
        for (t, y) in [
            ("colour = 2\n", "colour: 2\n"),
            ("cvss = \"high\"\n", "cvss: high\n"),
            ("id = \"Not A Slug\"\n", "id: Not A Slug\n"),
        ] {
            let t = parse(&format!("{base_toml}{t}+++\n"))
                .unwrap_err()
                .to_string();
            let y = parse(&format!("{base_yaml}{y}---\n"))
                .unwrap_err()
                .to_string();
            assert_eq!(y, t);
        }
        let e = parse("---\ntitle: T\ncve: [a\n---\n").unwrap_err();
        assert!(
            matches!(e, ContentError::FrontMatter { line: 3 | 4, .. }),
            "{e}"
        );
        let e = parse("---\ntitle: T\n").unwrap_err();
        assert!(e.to_string().contains("another `---` line"), "{e}");
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
