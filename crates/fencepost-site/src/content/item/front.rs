//! An item's front matter, read key by key against its collection: each method takes its key
//! out of the table and checks it, so what is left at the end is what no rule claimed.

use super::{default_id, first_day, is_id, last_day, parse_publish_at};
use crate::content::{
    fields, front_matter_table, key_line, show, ContentError, Format, ImageSource,
};
use chrono::NaiveDate;
use fencepost_config::collections::{Collection, IdKind, FRONT_MATTER as KEYS};
use fencepost_core::clock::Instant;
use std::path::Path;

pub(super) struct Front<'a> {
    table: toml::Table,
    /// The front matter's text (errors name the line of a key in it).
    text: &'a str,
    path: &'a Path,
    coll: &'a Collection,
}

impl<'a> Front<'a> {
    pub(super) fn parse(
        text: &'a str,
        format: Format,
        path: &'a Path,
        coll: &'a Collection,
    ) -> Result<Front<'a>, ContentError> {
        let table = front_matter_table(text, format).map_err(|e| ContentError::FrontMatter {
            path: path.into(),
            line: e.line,
            message: e.message,
        })?;
        Ok(Front {
            table,
            text,
            path,
            coll,
        })
    }

    fn invalid(&self, key: &str, why: String) -> ContentError {
        ContentError::Invalid {
            path: self.path.into(),
            line: key_line(self.text, key),
            key: key.to_string(),
            why,
        }
    }

    fn missing(&self, key: &str) -> ContentError {
        self.invalid(key, "is required but missing".into())
    }

    fn not_a(&self, key: &str, what: &str, v: &toml::Value) -> ContentError {
        self.invalid(key, format!("must be {what}, not {}", show(v)))
    }

    /// Anything neither built in, declared, a taxonomy, nor under [extra] is refused, naming
    /// what is allowed.
    pub(super) fn refuse_unknown_keys(&self) -> Result<(), ContentError> {
        let coll = self.coll;
        let Some(unknown) = self.table.keys().find(|k| {
            !KEYS.contains(&k.as_str())
                && k.as_str() != "extra"
                && !coll.fields.contains_key(*k)
                && !coll.taxonomies.contains(*k)
        }) else {
            return Ok(());
        };
        let mut allowed: Vec<&str> = KEYS.to_vec();
        allowed.extend(coll.fields.keys().map(String::as_str));
        allowed.extend(coll.taxonomies.iter().map(String::as_str));
        Err(self.invalid(
            unknown,
            format!(
                "is not a key of collection {}: the keys are {}, and anything else goes under [extra]",
                coll.name,
                allowed.join(", ")
            ),
        ))
    }

    /// `id`: a positive integer, or in a slug collection a slug (by default the file's stem).
    pub(super) fn id(&mut self) -> Result<String, ContentError> {
        match (self.coll.id, self.table.remove("id")) {
            (_, Some(toml::Value::Integer(n))) if n > 0 => Ok(n.to_string()),
            (IdKind::Integer, None) => Err(self.missing("id")),
            (IdKind::Integer, Some(other)) => Err(self.not_a("id", "a positive integer", &other)),
            (IdKind::Slug, Some(toml::Value::String(s))) if is_id(&s) => Ok(s),
            (IdKind::Slug, Some(other)) => Err(self.not_a(
                "id",
                "an id (A-Z, a-z, 0-9, ., _, ~ and -, at most 80, not starting with .) or a positive integer",
                &other,
            )),
            (IdKind::Slug, None) => {
                let s = default_id(self.path, self.coll);
                if !is_id(&s) {
                    return Err(self.invalid(
                        "id",
                        format!("is missing, and the file name {s:?} is no id (A-Z, a-z, 0-9, ., _, ~ and -, at most 80, not starting with .): rename the file or set `id`"),
                    ));
                }
                Ok(s)
            }
        }
    }

    pub(super) fn day(&mut self) -> Result<Option<NaiveDate>, ContentError> {
        let Some(v) = self.table.remove("day") else {
            return Ok(None);
        };
        let d = fields::parse_date(&v).map_err(|why| self.invalid("day", why))?;
        if !(first_day()..=last_day()).contains(&d) {
            let why = format!("{d} is out of range: a day from 0001-01-01 to 9998-12-31");
            return Err(self.invalid("day", why));
        }
        Ok(Some(d))
    }

    pub(super) fn title(&mut self) -> Result<String, ContentError> {
        match self.table.remove("title").ok_or_else(|| self.missing("title"))? {
            toml::Value::String(s)
                if s.chars().any(|c| c.is_control() || crate::content::is_forbidden_char(c)) =>
            {
                Err(self.invalid(
                "title",
                    "holds a control character (a NUL, a tab, a line break…) or a non-character (U+FFFF…); a title is one line of text"
                        .into(),
                ))
            }
            toml::Value::String(s) if !s.trim().is_empty() => Ok(s),
            toml::Value::String(_) => Err(self.invalid("title", "is empty".into())),
            other => Err(self.not_a("title", "a string", &other)),
        }
    }

    pub(super) fn image(&mut self) -> Result<Option<ImageSource>, ContentError> {
        match self.table.remove("image") {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(
                ImageSource::parse(&s).map_err(|why| self.invalid("image", why))?,
            )),
            Some(other) => Err(self.not_a("image", "a string", &other)),
        }
    }

    pub(super) fn flag(&mut self, key: &str, default: bool) -> Result<bool, ContentError> {
        match self.table.remove(key) {
            None => Ok(default),
            Some(toml::Value::Boolean(b)) => Ok(b),
            Some(other) => Err(self.not_a(key, "true or false", &other)),
        }
    }

    /// `publish_at` or `expire_at`.
    pub(super) fn instant(&mut self, key: &str) -> Result<Option<Instant>, ContentError> {
        match self.table.remove(key) {
            None => Ok(None),
            Some(v) => Ok(Some(
                parse_publish_at(&v, self.coll.timezone).map_err(|why| self.invalid(key, why))?,
            )),
        }
    }

    /// When the item is due, by its collection's rule; an expiry at or before it is refused
    /// (the item would never be public).
    pub(super) fn due(
        &self,
        day: Option<NaiveDate>,
        publish_at: Option<Instant>,
        expire_at: Option<Instant>,
    ) -> Result<Instant, ContentError> {
        let due = self.coll.due_at(day, publish_at).map_err(|key| {
            let by = match key {
                "day" => "their day",
                _ => "their publish_at",
            };
            let why = format!(
                "is required: collection {} makes items due by {by}",
                self.coll.name
            );
            self.invalid(key, why)
        })?;
        if let Some(at) = expire_at.filter(|at| *at <= due) {
            return Err(self.invalid(
                "expire_at",
                format!(
                    "{} is at or before the instant the item is due ({}): it would never be public; move expire_at later or remove it",
                    at.rfc3339(),
                    due.rfc3339()
                ),
            ));
        }
        Ok(due)
    }

    /// Its terms per taxonomy, as canonical JSON; `""` when it has none.
    pub(super) fn terms(&mut self) -> Result<String, ContentError> {
        let mut terms = serde_json::Map::new();
        for tax in &self.coll.taxonomies {
            let Some(v) = self.table.remove(tax) else {
                continue;
            };
            let seen = self.terms_of(tax, v)?;
            if !seen.is_empty() {
                terms.insert(tax.clone(), serde_json::Value::from(seen));
            }
        }
        Ok(match terms.is_empty() {
            true => String::new(),
            false => serde_json::Value::Object(terms).to_string(),
        })
    }

    /// One taxonomy's terms, trimmed, duplicates dropped; two spellings of one slug refused.
    fn terms_of(&self, tax: &str, v: toml::Value) -> Result<Vec<String>, ContentError> {
        let toml::Value::Array(list) = v else {
            return Err(self.not_a(tax, "a list of strings (tags = [\"a\", \"b\"])", &v));
        };
        let mut seen: Vec<String> = Vec::new();
        let mut slugs: Vec<String> = Vec::new();
        for v in list {
            let t = match v {
                toml::Value::String(t)
                    if !t.trim().is_empty()
                        && !t
                            .chars()
                            .any(|c| c.is_control() || crate::content::is_forbidden_char(c)) =>
                {
                    t.trim().to_string()
                }
                other => {
                    let why = format!(
                        "each term is a non-empty line of text, not {}",
                        show(&other)
                    );
                    return Err(self.invalid(tax, why));
                }
            };
            let slug = fencepost_config::taxonomies::term_slug(&t);
            if slug.is_empty() {
                let why = format!("the term {t:?} has no letter or digit, so it can have no URL");
                return Err(self.invalid(tax, why));
            }
            if slug.len() > fencepost_config::taxonomies::MAX_TERM_SLUG {
                let why = format!(
                    "the term {t:?} makes a URL slug of {} characters; a term's slug is a folder name in the output and a key in a bucket, so it may have at most {}: shorten the term",
                    slug.len(),
                    fencepost_config::taxonomies::MAX_TERM_SLUG
                );
                return Err(self.invalid(tax, why));
            }
            if let Some(i) = slugs.iter().position(|s| *s == slug) {
                if seen[i] != t {
                    let why = format!(
                        "{:?} and {t:?} have the same URL slug {slug:?}: spell them the same",
                        seen[i]
                    );
                    return Err(self.invalid(tax, why));
                }
                continue;
            }
            slugs.push(slug);
            seen.push(t);
        }
        Ok(seen)
    }

    /// Declared fields and `[extra]`, as canonical JSON (`{}` when there are none).
    pub(super) fn data(&mut self) -> Result<String, ContentError> {
        let mut data = serde_json::Map::new();
        // Why the item was withdrawn, for its notice (`page.withdrawn_reason`).
        match self.table.remove("withdrawn_reason") {
            None => {}
            Some(toml::Value::String(s)) if !s.trim().is_empty() => {
                data.insert("withdrawn_reason".into(), serde_json::Value::String(s));
            }
            Some(other) => {
                return Err(self.not_a("withdrawn_reason", "a non-empty string", &other));
            }
        }
        for (name, spec) in &self.coll.fields {
            match self.table.remove(name) {
                Some(v) => {
                    let value = fields::check(spec, &v).map_err(|why| self.invalid(name, why))?;
                    data.insert(name.clone(), value);
                }
                None if spec.required => return Err(self.missing(name)),
                None => {}
            }
        }
        if !self.coll.fields.contains_key("aliases") {
            if let Some(v) = self.table.remove("aliases") {
                let aliases = self.aliases(v)?;
                if !aliases.is_empty() {
                    data.insert("aliases".into(), serde_json::Value::from(aliases));
                }
            }
        }
        if !self.coll.fields.contains_key("weight") {
            match self.table.remove("weight") {
                None => {}
                Some(toml::Value::Integer(w)) => {
                    data.insert("weight".into(), serde_json::Value::from(w));
                }
                Some(other) => {
                    return Err(self.not_a("weight", "an integer (lighter first)", &other));
                }
            }
        }
        match self.table.remove("extra") {
            None => {}
            Some(t @ toml::Value::Table(_)) => {
                data.insert("extra".into(), fields::extra(&t));
            }
            Some(other) => {
                let what = "a table ([extra] with keys under it)";
                return Err(self.not_a("extra", what, &other));
            }
        }
        Ok(serde_json::Value::Object(data).to_string())
    }

    /// `aliases`: the item's old URLs, each redirected to its own (see
    /// [`crate::content::alias_url`]); duplicates dropped.
    fn aliases(&self, v: toml::Value) -> Result<Vec<String>, ContentError> {
        let toml::Value::Array(list) = v else {
            return Err(self.not_a(
                "aliases",
                "a list of URL paths (aliases = [\"/old/url/\"])",
                &v,
            ));
        };
        let mut out: Vec<String> = Vec::new();
        for v in list {
            let toml::Value::String(s) = &v else {
                return Err(self.not_a("aliases", "a list of URL paths", &v));
            };
            let url = crate::content::alias_url(s).map_err(|why| self.invalid("aliases", why))?;
            if !out.contains(&url) {
                out.push(url);
            }
        }
        Ok(out)
    }
}
