//! Collections: the site's content model as data. Each `[collections.<name>]` table names a
//! folder under `content/`, the URLs its items and list pages get, the templates that render
//! them, how ids are written, when an item is due, and the typed fields its front matter may
//! carry. A site without `[collections]` has one collection, [`Collections::default_for`]:
//! the answers of a daily game, exactly as fencepost built them before collections existed.
//!
//! Everything here is checked when the config loads, with errors naming the key and the way
//! out, so a build never starts from a content model that cannot be right.

mod checks;
mod kinds;
mod lists;
mod translated;
mod zones;
use zones::{parse_due_time, parse_tz, timing, warn_fixed_zone};
mod urls;

pub use super::languages::{Language, Languages};
use super::names::{check_url, is_name};
pub use super::names::{FRONT_MATTER, TEMPLATE_ONLY, YIELDING};
use super::{Config, ConfigError};
use checks::{check_apart, check_field};
use chrono::{NaiveDate, NaiveTime, TimeZone};
use fencepost_core::clock::Instant;
use fencepost_core::item::Naming;
pub use kinds::{DueRule, IdKind, OnWithdraw};
pub use lists::{Pagination, SortBy};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One `[collections.<name>]` table as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectionConfig {
    /// Folder under `content/`; default: the collection's name.
    pub dir: Option<String>,
    /// Item URLs: `{id}`, `{year}`, `{month}`, `{day}`; must start and end with `/`.
    pub url: Option<String>,
    /// Item template; default `<name>.html`.
    pub template: Option<String>,
    /// List pages at `list_url` and `list_url + "page/N/"`; `""`: no list pages.
    pub list_url: Option<String>,
    pub list_template: Option<String>,
    /// The list's title, given to templates.
    pub title: Option<String>,
    /// The title of numbered list pages (`{number}` is replaced); default: `title`.
    pub page_title: Option<String>,
    pub id: Option<IdKind>,
    pub due: Option<DueRule>,
    pub grace_minutes: Option<u32>,
    pub timezone: Option<String>,
    /// `"HH:MM"`: see `publish.due_time`.
    pub due_time: Option<String>,
    /// An Atom feed at `list_url + "atom.xml"`, and entries in the site-wide `atom.xml`.
    pub feed: Option<bool>,
    pub page_size: Option<usize>,
    #[serde(default)]
    pub fields: BTreeMap<String, FieldSpec>,
    /// Taxonomies (`[taxonomies.<name>]`) its items may carry terms of.
    #[serde(default)]
    pub taxonomies: Vec<String>,
    /// What a withdrawn item's URL keeps: nothing (`remove`, the default) or a notice page.
    pub on_withdraw: Option<OnWithdraw>,
    /// The notice page's template; default `withdrawn.html`.
    pub withdrawn_template: Option<String>,
    /// `date` (default) or `weight`: see [`SortBy`].
    pub sort_by: Option<SortBy>,
    /// `oldest_first` (default) or `newest_first`: see [`Pagination`].
    pub pagination: Option<Pagination>,
    /// A Markdown file in its folder shown on its list URL (`_index.md`): see [`lists`].
    pub list_text: Option<String>,
    /// Log a blind commitment to each item before its instant (needs `[transparency] log`).
    pub commit_before_reveal: Option<bool>,
    /// Where the collection stands among its siblings in a site's navigation (a section's
    /// `weight` in Hugo and Zola): lightest first, then by folder. Default 0.
    pub weight: Option<i64>,
}

/// A typed front-matter key.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    #[serde(rename = "type")]
    pub kind: FieldType,
    #[serde(default)]
    pub required: bool,
    /// The values a string (or each string of a list) may take.
    pub one_of: Option<Vec<String>>,
    /// Decimals: exactly this many digits after the point (fewer are padded with zeros).
    pub scale: Option<u32>,
    /// Decimals: a prefix the value may carry and that is dropped (a currency sign: `"$"`).
    pub prefix: Option<String>,
    /// Integers and decimals: the smallest value allowed.
    pub min: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    String,
    Integer,
    /// Exact text, like `"4.99"`: never a float.
    Decimal,
    Bool,
    Date,
    Datetime,
    Url,
    /// A list of strings.
    List,
}

/// One collection, every default filled in and checked.
#[derive(Debug, Clone)]
pub struct Collection {
    pub name: String,
    /// Under `content/`, `/`-separated, no leading or trailing `/`.
    pub dir: String,
    pub url: String,
    pub template: String,
    /// `None`: no list pages (and no collection feed).
    pub list_url: Option<String>,
    pub list_template: String,
    pub title: String,
    pub page_title: String,
    pub id: IdKind,
    pub due: DueRule,
    pub grace_minutes: u32,
    pub timezone: chrono_tz::Tz,
    /// Items with a `day` are due at this wall-clock time instead of midnight + grace.
    pub due_time: Option<NaiveTime>,
    pub feed: bool,
    /// Whether the collection has its own `list_url + "atom.xml"` (the default collection of
    /// a site without `[collections]` has only the site-wide feed, as before).
    pub own_feed: bool,
    pub page_size: usize,
    pub fields: BTreeMap<String, FieldSpec>,
    /// Names of taxonomies (of [`Collections::taxonomies`]) its items carry terms of.
    pub taxonomies: Vec<String>,
    pub on_withdraw: OnWithdraw,
    pub withdrawn_template: String,
    pub sort_by: SortBy,
    pub pagination: Pagination,
    /// The file under its folder that holds its list page's text (not an item).
    pub list_text: Option<String>,
    /// Its items are committed to in the transparency log before their instant.
    pub commit_before_reveal: bool,
    /// Its place among its siblings in navigation: lightest first (see `weight`).
    pub weight: i64,
    /// The language of its items (the site's default language for the collections written
    /// in `[collections]`).
    pub lang: String,
    /// A collection of translations (`posts.fr`): the collection it translates.
    pub original: Option<String>,
    /// Its translations are files beside the originals named `*.<lang>.md` (else, for a
    /// collection of translations, the files of its own `dir`).
    pub beside: bool,
}

/// The site's collections, sorted by name.
#[derive(Debug, Clone)]
pub struct Collections {
    pub list: Vec<Collection>,
    pub naming: Naming,
    /// The site's taxonomies, sorted by name.
    pub taxonomies: Vec<super::taxonomies::Taxonomy>,
    /// The site's languages (one, the default, unless `[languages]` names others).
    pub languages: Languages,
}

impl Collections {
    /// The one collection of a site without `[collections]`: today's game answers. This is
    /// the one place that knows about that site's field.
    pub fn default_for(config: &Config, timezone: chrono_tz::Tz) -> Collection {
        Collection {
            name: "answers".into(),
            dir: "answers".into(),
            url: "/answers/{id}/".into(),
            template: "answer.html".into(),
            list_url: Some("/answers/".into()),
            list_template: "list.html".into(),
            title: "All answers".into(),
            page_title: "Answers, page {number}".into(),
            id: IdKind::Integer,
            due: DueRule::EndOfDay,
            grace_minutes: config.publish.grace_minutes,
            timezone,
            due_time: None,
            feed: true,
            own_feed: false,
            page_size: config.build.page_size,
            fields: BTreeMap::from([(
                "price".to_string(),
                FieldSpec {
                    kind: FieldType::Decimal,
                    required: true,
                    one_of: None,
                    scale: Some(2),
                    prefix: Some("$".into()),
                    min: Some(0.0),
                },
            )]),
            taxonomies: Vec::new(),
            on_withdraw: OnWithdraw::Remove,
            withdrawn_template: "withdrawn.html".into(),
            sort_by: SortBy::Date,
            weight: 0,
            pagination: Pagination::OldestFirst,
            list_text: None,
            commit_before_reveal: false,
            lang: String::new(),
            original: None,
            beside: false,
        }
    }

    /// Resolves and checks `config.collections`.
    pub fn resolve(config: &Config, path: &Path) -> Result<Collections, ConfigError> {
        let bad = |key: String, why: String| ConfigError::Collection {
            path: path.to_path_buf(),
            key,
            why,
        };
        let site_tz = parse_tz(&config.publish.timezone)
            .map_err(|why| bad("publish.timezone".into(), why))?;
        warn_fixed_zone("publish.timezone", &config.publish.timezone);
        let site_due_time = match &config.publish.due_time {
            Some(t) => Some(parse_due_time(t).map_err(|why| bad("publish.due_time".into(), why))?),
            None => None,
        };
        let taxonomies = super::taxonomies::resolve(config, path)?;
        let languages = super::languages::resolve(&config.default_language, &config.languages)
            .map_err(|(key, why)| bad(key, why))?;
        let rss = config.feeds.iter().any(|f| f == "rss");
        let checked = |mut c: Collections| {
            translated::add_translations(&mut c).map_err(|(key, why)| bad(key, why))?;
            match urls::check_generated(&c, rss) {
                Ok(()) => Ok(c),
                Err((key, why)) => Err(bad(key, why)),
            }
        };
        if config.collections.is_empty() {
            let mut only = Collections::default_for(config, site_tz);
            only.due_time = site_due_time;
            let naming = match languages.many() {
                false => Naming::Legacy,
                true => Naming::Qualified,
            };
            return checked(Collections {
                list: vec![only],
                naming,
                taxonomies,
                languages,
            });
        }
        let mut list = Vec::new();
        for (name, c) in &config.collections {
            let mut coll = resolve_one(config, name, c, site_tz, &bad)?;
            if c.due_time.is_none() && coll.due != DueRule::PublishAt {
                coll.due_time = site_due_time;
            }
            for t in &c.taxonomies {
                taxonomies
                    .iter()
                    .position(|x| x.name == *t)
                    .ok_or_else(|| {
                        bad(
                            format!("collections.{name}.taxonomies"),
                            format!("{t:?} is no taxonomy: add a [taxonomies.{t}] table"),
                        )
                    })?;
                if coll.fields.contains_key(t) {
                    return Err(bad(
                        format!("collections.{name}.fields.{t}"),
                        format!(
                            "{t:?} is a taxonomy of this collection: a field cannot share its name"
                        ),
                    ));
                }
                if !coll.taxonomies.contains(t) {
                    coll.taxonomies.push(t.clone());
                }
            }
            list.push(coll);
        }
        check_apart(&list, &bad)?;
        checked(Collections {
            list,
            naming: Naming::Qualified,
            taxonomies,
            languages,
        })
    }

    pub fn get(&self, name: &str) -> Option<&Collection> {
        self.list.iter().find(|c| c.name == name)
    }

    /// The collection a bare id on the command line means: the only one there is.
    pub fn only(&self) -> Option<&str> {
        (self.list.len() == 1).then(|| self.list[0].name.as_str())
    }

    /// The templates the collections need, besides the site's own.
    pub fn templates(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.list {
            out.push(c.template.clone());
            if c.list_url.is_some() {
                out.push(c.list_template.clone());
            }
            if c.on_withdraw == OnWithdraw::Notice {
                out.push(c.withdrawn_template.clone());
            }
        }
        for t in &self.taxonomies {
            if self.list.iter().any(|c| c.taxonomies.contains(&t.key)) {
                out.push(t.template.clone());
                if t.index_url.is_some() {
                    out.push(t.index_template.clone());
                }
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

fn resolve_one(
    config: &Config,
    name: &str,
    c: &CollectionConfig,
    site_tz: chrono_tz::Tz,
    bad: &dyn Fn(String, String) -> ConfigError,
) -> Result<Collection, ConfigError> {
    let key = |k: &str| format!("collections.{name}.{k}");
    if !is_name(name) {
        return Err(bad(
            format!("collections.{name}"),
            "a collection name is a lower-case letter, then lower-case letters, digits and _"
                .into(),
        ));
    }
    let dir = collection_dir(name, c).map_err(|why| bad(key("dir"), why))?;
    let url = c.url.clone().unwrap_or_else(|| format!("/{name}/{{id}}/"));
    check_url(&url, true).map_err(|why| bad(key("url"), format!("{url:?} {why}")))?;
    let list_url = list_url(name, c).map_err(|why| bad(key("list_url"), why))?;
    let or = |t: &Option<String>, default: String| t.clone().unwrap_or(default);
    let template = or(&c.template, format!("{name}.html"));
    let list_template = or(&c.list_template, "list.html".into());
    let withdrawn_template = or(&c.withdrawn_template, "withdrawn.html".into());
    check_templates(
        [
            ("template", &template),
            ("list_template", &list_template),
            ("withdrawn_template", &withdrawn_template),
        ],
        &|k, why| bad(key(k), why),
    )?;
    let list_text = lists::list_text(c).map_err(|why| bad(key("list_text"), why))?;
    let title = or(&c.title, name.to_string());
    let page_title = or(&c.page_title, title.clone());
    let grace_minutes = c.grace_minutes.unwrap_or(config.publish.grace_minutes);
    if grace_minutes > super::MAX_GRACE_MINUTES {
        return Err(bad(key("grace_minutes"), "at most 527040 (a year)".into()));
    }
    let (timezone, due, due_time) = timing(name, c, site_tz, bad)?;
    let page_size = c.page_size.unwrap_or(config.build.page_size);
    if page_size == 0 || page_size > 100_000 {
        return Err(bad(key("page_size"), "must be between 1 and 100000".into()));
    }
    for (field, spec) in &c.fields {
        check_field(field, spec)
            .map_err(|why| bad(format!("collections.{name}.fields.{field}"), why))?;
    }
    Ok(Collection {
        name: name.to_string(),
        dir,
        url,
        template,
        list_url,
        list_template,
        title,
        page_title,
        id: c.id.unwrap_or(IdKind::Slug),
        due,
        grace_minutes,
        timezone,
        due_time,
        feed: c.feed.unwrap_or(true),
        own_feed: true,
        page_size,
        fields: c.fields.clone(),
        taxonomies: Vec::new(),
        on_withdraw: c.on_withdraw.unwrap_or_default(),
        withdrawn_template,
        sort_by: c.sort_by.unwrap_or_default(),
        weight: c.weight.unwrap_or(0),
        pagination: c.pagination.unwrap_or_default(),
        list_text,
        commit_before_reveal: c.commit_before_reveal.unwrap_or(false),
        lang: String::new(),
        original: None,
        beside: false,
    })
}

/// Each template names a file under `templates/`.
fn check_templates(
    list: [(&str, &String); 3],
    bad: &dyn Fn(&str, String) -> ConfigError,
) -> Result<(), ConfigError> {
    for (k, t) in list {
        if t.is_empty() || t.starts_with('/') || t.split('/').any(|p| p == ".." || p.is_empty()) {
            return Err(bad(k, format!("{t:?} must name a file under templates/")));
        }
    }
    Ok(())
}

/// The collection's folder under `content/` (default: its name), without `..`, `.` or
/// hidden parts.
fn collection_dir(name: &str, c: &CollectionConfig) -> Result<String, String> {
    let dir = c.dir.clone().unwrap_or_else(|| name.to_string());
    let dir = dir.trim_matches('/').to_string();
    let bad_part =
        |p: &str| p.is_empty() || p == "." || p == ".." || p.starts_with('.') || p.contains('\\');
    if dir.is_empty() || dir.split('/').any(bad_part) {
        return Err(format!(
            "{dir:?} must be a folder under content/, without `..`, `.` or hidden parts"
        ));
    }
    Ok(dir)
}

/// The URL of the collection's list pages (default `/<name>/`; `""`: none). Never `/`, the
/// home page.
fn list_url(name: &str, c: &CollectionConfig) -> Result<Option<String>, String> {
    let list_url = match c.list_url.clone() {
        Some(u) if u.is_empty() => None,
        Some(u) => Some(u),
        None => Some(format!("/{name}/")),
    };
    if let Some(u) = &list_url {
        check_url(u, false).map_err(|why| format!("{u:?} {why}"))?;
        if u == "/" {
            return Err("\"/\" is the home page (index.html): give the list a folder like \"/notes/\", or \"\" for no list pages".into());
        }
    }
    Ok(list_url)
}

impl Collection {
    /// When an item is due: its own `publish_at` when it has one, else the collection's rule
    /// over its `day` in the collection's time zone. `Err`: the rule needs a key the item does
    /// not have (named).
    pub fn due_at(
        &self,
        day: Option<NaiveDate>,
        publish_at: Option<Instant>,
    ) -> Result<Instant, &'static str> {
        if let Some(t) = publish_at {
            return Ok(t);
        }
        let day = match (self.due, day) {
            (DueRule::PublishAt, _) => return Err("publish_at"),
            (_, None) => return Err("day"),
            (_, Some(d)) => d,
        };
        let date = match self.due {
            DueRule::EndOfDay => day.succ_opt().unwrap_or(day),
            _ => day,
        };
        match self.due_time {
            Some(t) => Ok(local_at(self.timezone, date, t)),
            None => {
                Ok(local_midnight(self.timezone, date)
                    .plus_secs(u64::from(self.grace_minutes) * 60))
            }
        }
    }

    /// Whether items of this collection must have a `day`.
    pub fn needs_day(&self) -> bool {
        self.due != DueRule::PublishAt
    }

    /// The URL of an item: the pattern with its placeholders filled in (`{year}`, `{month}`,
    /// `{day}` from `date`).
    pub fn item_url(&self, id: &str, date: Option<NaiveDate>) -> String {
        use chrono::Datelike;
        let mut out = self.url.replace("{id}", id);
        if out.contains('{') {
            let d = date.unwrap_or_default();
            out = out
                .replace("{year}", &format!("{:04}", d.year()))
                .replace("{month}", &format!("{:02}", d.month()))
                .replace("{day}", &format!("{:02}", d.day()));
        }
        out
    }

    /// The date an item's URL and order use: its `day`, or its due instant's date here.
    pub fn date_of(&self, day: Option<NaiveDate>, due: Instant) -> NaiveDate {
        day.unwrap_or_else(|| due.to_datetime().with_timezone(&self.timezone).date_naive())
    }
}

/// The first instant of `date` in `tz`: its midnight, or, where a clock change skips
/// midnight, the first local time that exists after it (never an instant before the day).
/// A day the zone skipped whole (Pacific/Apia, 2011-12-30) begins where the next day does:
/// an item on it is due when that day would have ended, never earlier.
/// The instant the clocks of `tz` show `time` on `date`: the first of two (the hour the
/// clocks go back); in a gap (the hour they skip), as far past the gap's start as `time` is,
/// by the offset before it (02:30 on a day that skips 02:00–03:00 is 03:30).
pub fn local_at(tz: chrono_tz::Tz, date: NaiveDate, time: NaiveTime) -> Instant {
    use chrono::Offset;
    let naive = date.and_time(time);
    if let Some(t) = tz.from_local_datetime(&naive).earliest() {
        return Instant(t.timestamp_millis());
    }
    let before = local_midnight(tz, date);
    let offset = tz
        .offset_from_utc_datetime(&before.to_datetime().naive_utc())
        .fix()
        .local_minus_utc();
    Instant((naive.and_utc().timestamp() - i64::from(offset)) * 1000)
}

pub fn local_midnight(tz: chrono_tz::Tz, date: NaiveDate) -> Instant {
    let mut day = date;
    // Zones have skipped one day at most; two more are a wide margin.
    for _ in 0..3 {
        let mut t = day.and_time(NaiveTime::MIN);
        for _ in 0..(24 * 4) {
            if let Some(dt) = tz.from_local_datetime(&t).earliest() {
                return Instant(dt.timestamp_millis());
            }
            t += chrono::Duration::minutes(15);
        }
        day = day.succ_opt().unwrap_or(day);
    }
    Instant(
        chrono::Utc
            .from_utc_datetime(&day.and_time(NaiveTime::MIN))
            .timestamp_millis(),
    )
}

#[cfg(test)]
mod tests;
