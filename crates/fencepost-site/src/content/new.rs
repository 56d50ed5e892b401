//! `fencepost new COLLECTION`: a new item file with every required key and field filled in
//! with a placeholder, so an editor starts from a file that validates.

use super::item::{guess_name, is_id, parse_item};
use super::ContentError;
use fencepost_config::collections::{Collection, DueRule, FieldSpec, FieldType, IdKind};
use fencepost_core::clock::Instant;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum NewError {
    #[error("no collection {name:?}: the collections are {known}")]
    NoCollection { name: String, known: String },
    #[error("{path} exists already: nothing was written (pick another --id)")]
    Exists { path: PathBuf },
    #[error("--id {id:?}: {why}")]
    BadId { id: String, why: String },
    #[error("--id {id:?}: the ledger has had an item {collection}/{id} (it may be withdrawn): an id names one item for ever, so a new item takes another --id")]
    Taken { collection: String, id: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Content(#[from] ContentError),
}

/// What `new` wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Written {
    /// Site-relative.
    pub path: String,
    pub collection: String,
    pub id: String,
}

/// The next free integer id of `coll`: one more than the highest its files or the ledger
/// (`known`) name.
fn next_integer_id(root: &Path, coll: &Collection, known: &HashSet<String>) -> i64 {
    let dir = root.join("content").join(&coll.dir);
    let mut max = known
        .iter()
        .filter_map(|k| k.parse::<i64>().ok())
        .max()
        .unwrap_or(0);
    for e in walkdir::WalkDir::new(&dir).into_iter().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        if let Some(n) = guess_name(&text, p, coll).and_then(|n| n.id.parse::<i64>().ok()) {
            max = max.max(n);
        }
        if let Ok(n) = super::item::stem(p).parse::<i64>() {
            max = max.max(n);
        }
    }
    max + 1
}

/// A placeholder value of a field, as TOML.
fn placeholder(spec: &FieldSpec, today: &str, now: &str) -> String {
    if let Some(first) = spec.one_of.as_ref().and_then(|o| o.first()) {
        return match spec.kind {
            FieldType::List => format!("[{first:?}]"),
            _ => format!("{first:?}"),
        };
    }
    match spec.kind {
        FieldType::String => "\"TODO\"".into(),
        FieldType::Integer => format!("{}", spec.min.unwrap_or(0.0).max(0.0) as i64),
        FieldType::Decimal => {
            let scale = spec.scale.unwrap_or(2) as usize;
            format!("\"{:.scale$}\"", spec.min.unwrap_or(0.0).max(0.0))
        }
        FieldType::Bool => "false".into(),
        FieldType::Date => today.to_string(),
        FieldType::Datetime => now.to_string(),
        FieldType::Url => "\"https://example.com/\"".into(),
        FieldType::List => "[]".into(),
    }
}

/// The first local day, from today on, on which an item of `coll` is due at least a day after
/// `now`: a placeholder is never public the moment it is saved, whatever the due rule
/// (`start_of_day` on today would be due already; `end_of_day` on today is due within hours
/// of an evening `new`).
fn first_safe_day(coll: &Collection, now: Instant) -> chrono::NaiveDate {
    let mut day = now.to_datetime().with_timezone(&coll.timezone).date_naive();
    let safe = now.plus_secs(86_400);
    for _ in 0..4 {
        match coll.due_at(Some(day), None) {
            Ok(due) if due < safe => day = day.succ_opt().unwrap_or(day),
            _ => break,
        }
    }
    day
}

/// The text of a new item of `coll` with id `id`, titled `title`, at `now`. It parses as an
/// item of `coll` (checked before anything is written).
pub fn item_text(coll: &Collection, id: &str, title: &str, now: Instant) -> String {
    let local = now.to_datetime().with_timezone(&coll.timezone);
    let today = local.date_naive().to_string();
    let now_s = now.rfc3339();
    let mut fm = String::new();
    if coll.id == IdKind::Integer {
        fm += &format!("id = {id}\n");
    }
    fm += &format!("title = {title:?}\n");
    // A draft until its author removes the key: saved half-written, it is never public.
    fm += "draft = true\n";
    match coll.due {
        DueRule::PublishAt => {
            // A day from now, to the second: never public by accident the moment it is saved.
            let at = Instant(now.0 - now.0.rem_euclid(1000) + 86_400_000);
            fm += &format!("publish_at = {}\n", at.rfc3339());
        }
        _ => fm += &format!("day = {}\n", first_safe_day(coll, now)),
    }
    for (name, spec) in &coll.fields {
        if spec.required {
            fm += &format!("{name} = {}\n", placeholder(spec, &today, &now_s));
        }
    }
    for t in &coll.taxonomies {
        fm += &format!("{t} = []\n");
    }
    format!("+++\n{fm}+++\n\nWrite the body here.\n")
}

/// The new item's id: the one given, checked against the collection's kind; else the next
/// free integer, or the title as a slug. Never an id in `known` (the ids the ledger keeps):
/// a slug made from the title takes the first free `-2`, `-3`, … suffix.
fn new_id(
    root: &Path,
    coll: &Collection,
    id: Option<&str>,
    title: &str,
    known: &HashSet<String>,
) -> Result<String, NewError> {
    let bad = |id: &str, why: String| NewError::BadId { id: id.into(), why };
    let id = match (id, coll.id) {
        (Some(id), IdKind::Integer) => match id.parse::<i64>() {
            Ok(n) if n > 0 => n.to_string(),
            _ => {
                return Err(bad(
                    id,
                    format!("collection {} takes positive integer ids", coll.name),
                ))
            }
        },
        (Some(id), IdKind::Slug) if is_id(id) => id.to_string(),
        (Some(id), IdKind::Slug) => {
            return Err(bad(
                id,
                "an id is A-Z, a-z, 0-9, ., _, ~ and -, at most 80, not starting with .".into(),
            ))
        }
        (None, IdKind::Integer) => return Ok(next_integer_id(root, coll, known).to_string()),
        (None, IdKind::Slug) => return Ok(free_slug(title, known)),
    };
    // Ids that differ only in case are one item on case-insensitive file systems and buckets.
    if known.iter().any(|k| k.eq_ignore_ascii_case(&id)) {
        return Err(NewError::Taken {
            collection: coll.name.clone(),
            id,
        });
    }
    Ok(id)
}

/// The title as a slug (`untitled` when it has no letter or digit), suffixed `-2`, `-3`, …
/// until it is no id in `known`.
fn free_slug(title: &str, known: &HashSet<String>) -> String {
    let mut s = slug::slugify(title);
    s.truncate(80);
    let base = match s.trim_end_matches('-') {
        "" => "untitled".to_string(),
        b => b.to_string(),
    };
    let mut candidate = base.clone();
    let mut n = 1;
    while known.contains(&candidate) {
        n += 1;
        let suffix = format!("-{n}");
        let mut head = base.clone();
        head.truncate(80 - suffix.len());
        candidate = format!("{}{suffix}", head.trim_end_matches('-'));
    }
    candidate
}

/// Writes a new item of collection `name` under the site at `root` and returns it. Refuses
/// to overwrite a file, and never takes an id in `known` (the ids the ledger keeps of that
/// collection, withdrawn items' included).
pub fn create(
    root: &Path,
    colls: &fencepost_config::collections::Collections,
    name: &str,
    title: Option<&str>,
    id: Option<&str>,
    known: &HashSet<String>,
    now: Instant,
) -> Result<Written, NewError> {
    let coll = colls.get(name).ok_or_else(|| NewError::NoCollection {
        name: name.to_string(),
        known: colls
            .list
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    })?;
    let title = title.unwrap_or("Untitled").to_string();
    let id = new_id(root, coll, id, &title, known)?;
    // A translation kept beside its original is named for its language (`hello.fr.md`).
    let suffix = match coll.beside {
        true => format!(".{}", coll.lang),
        false => String::new(),
    };
    let rel = format!("content/{}/{id}{suffix}.md", coll.dir);
    let path = root.join(&rel);
    let text = item_text(coll, &id, &title, now);
    // What is written must be an item the collection accepts.
    parse_item(&text, Path::new(&rel), coll)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|source| NewError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AlreadyExists => NewError::Exists { path: path.clone() },
            _ => NewError::Io {
                path: path.clone(),
                source,
            },
        })?;
    f.write_all(text.as_bytes())
        .map_err(|source| NewError::Io {
            path: path.clone(),
            source,
        })?;
    Ok(Written {
        path: rel,
        collection: coll.name.clone(),
        id,
    })
}
