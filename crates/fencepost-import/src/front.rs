//! What Hugo and Zola front matter share, turned into fencepost's: instants, ids, aliases,
//! the item file's text.

use toml::value::{Datetime, Time};

/// An instant as fencepost's `publish_at` takes it: a TOML date-time, or a string that reads
/// as one (`"2019-03-10"`, `"2019-03-10T08:00:00+01:00"`). A date alone is its midnight, in
/// the collection's zone (a date-time without offset).
pub(super) fn instant(v: &toml::Value) -> Option<Datetime> {
    let mut d = match v {
        toml::Value::Datetime(d) => *d,
        toml::Value::String(s) => {
            let s = s.trim();
            s.parse::<Datetime>()
                .ok()
                .or_else(|| s.replacen(' ', "T", 1).parse().ok())?
        }
        _ => return None,
    };
    d.date?;
    if d.time.is_none() {
        d.time = Some(Time {
            hour: 0,
            minute: 0,
            second: 0,
            nanosecond: 0,
        });
        d.offset = None;
    }
    Some(d)
}

/// The (year, month, day) an instant is written with, for URL patterns.
pub(super) fn ymd(d: &Datetime) -> (String, String, String) {
    let date = d.date.expect("instants have a date");
    (
        format!("{:04}", date.year),
        format!("{:02}", date.month),
        format!("{:02}", date.day),
    )
}

/// A fencepost id from a slug or file name: kept when it is one (in lower case, unless the
/// generator kept the case in its URLs: `keep_case`), else made one.
pub(super) fn id_of(s: &str, keep_case: bool) -> String {
    if fencepost_site::content::item::is_id(s) && (keep_case || s == s.to_lowercase()) {
        s.to_string()
    } else {
        slug::slugify(s)
    }
}

/// A site URL path: leading and trailing `/` (unless it names a `.html` file).
pub(super) fn url_path(s: &str) -> String {
    let s = s.trim();
    let mut p = if s.starts_with('/') {
        s.to_string()
    } else {
        format!("/{s}")
    };
    if !p.ends_with('/') && !p.ends_with(".html") {
        p.push('/');
    }
    p
}

/// An alias as the source wrote it, resolved (a relative one against `base`, the folder of
/// the page's section) and checked; `None` for one fencepost cannot keep.
pub(super) fn alias(a: &str, base: &str) -> Result<String, String> {
    let a = a.trim();
    let full = if a.starts_with('/') || a.starts_with("http") {
        a.to_string()
    } else {
        format!("{base}{a}")
    };
    if full.starts_with("http") {
        return Err(format!("{a:?} is a full URL, not a path of the site"));
    }
    fencepost_site::content::alias_url(&url_path(&full))
}

/// An item file: its front matter (TOML, keys in order) and its body.
pub(super) fn item_text(front: &toml::Table, body: &str) -> String {
    let fm = toml::to_string(front).unwrap_or_default();
    format!("+++\n{fm}+++\n\n{}\n", body.trim_matches('\n'))
}

/// A value for `[extra]`: TOML has no null, so nothing is lost but what a YAML null was.
pub(super) fn keep(extra: &mut toml::Table, key: &str, v: toml::Value) {
    extra.insert(key.to_string(), v);
}

/// A page's title: its own, else its body's first heading (`# Install`), else its file name
/// title-cased (`getting-started` → `Getting Started`), as Hugo shows an untitled page —
/// never the lower-case stem.
pub(super) fn title_of(table: &toml::Table, body: &str, stem: &str) -> String {
    if let Some(t) = table.get("title").and_then(|v| v.as_str()) {
        return t.to_string();
    }
    let mut fenced = false;
    for line in body.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            fenced = !fenced;
        }
        if let Some(h) = t.strip_prefix("# ").filter(|_| !fenced) {
            let h = h.trim().trim_end_matches('#').trim();
            if !h.is_empty() {
                return h.to_string();
            }
        }
    }
    stem.split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}
