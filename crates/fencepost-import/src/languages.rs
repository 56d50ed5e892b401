//! A source site's languages (docs/languages.md): Zola's `default_language` and
//! `[languages.<code>]`, Hugo's `defaultContentLanguage` and `[languages.<code>]` with their
//! `contentDir`s. Every language's pages are imported: a translation (`page.es.md`, or a
//! page of a language's own content folder) is written beside its original as
//! `<id>.<code>.md`, so the new site publishes it as an item of its own, at its old URL
//! (`/es/blog/page/`); `fencepost.toml` gets the languages' names, titles, descriptions and
//! strings. Hugo's `i18n/` strings are copied with the site's files.

use super::plan::{Dialect, ImportError, Plan};

/// One language besides the default.
pub(super) struct Language {
    pub(super) code: String,
    /// Hugo's `contentDir` for it (source-relative): its pages, without a suffix.
    pub(super) dir: Option<String>,
    /// Its `[languages.<code>]` table.
    pub(super) table: toml::Table,
}

/// The source's languages.
#[derive(Default)]
pub(super) struct Languages {
    pub(super) default: String,
    pub(super) others: Vec<Language>,
}

impl Languages {
    /// Reads them from the source's configuration (`config_file`, for errors).
    pub(super) fn read(
        table: &toml::Table,
        dialect: Dialect,
        config_file: &str,
    ) -> Result<Languages, ImportError> {
        let key = match dialect {
            Dialect::Zola => "default_language",
            Dialect::Hugo => "defaultContentLanguage",
        };
        let default = (table.get(key).and_then(|v| v.as_str()))
            .unwrap_or("en")
            .to_ascii_lowercase();
        let mut others = Vec::new();
        for (code, t) in (table.get("languages").and_then(|v| v.as_table()))
            .into_iter()
            .flatten()
        {
            let code = code.to_ascii_lowercase();
            let Some(t) = t.as_table().filter(|_| code != default) else {
                continue;
            };
            let dir = match (dialect, t.get("contentDir").and_then(|v| v.as_str())) {
                (Dialect::Hugo, Some(d)) => Some(super::plan::inside_source(
                    config_file,
                    &format!("languages.{code}.contentDir"),
                    d,
                )?),
                _ => None,
            };
            others.push(Language {
                code,
                dir,
                table: t.clone(),
            });
        }
        Ok(Languages { default, others })
    }

    /// The language a file name is a translation in (`page.es.md`, `_index.es.md`), with
    /// its original's name.
    pub(super) fn of_name(&self, name: &str) -> Option<(&str, String)> {
        let stem = name.strip_suffix(".md")?;
        let (base, code) = stem.rsplit_once('.')?;
        let lang = self.others.iter().find(|l| l.code == code)?;
        (!base.is_empty()).then(|| (lang.code.as_str(), format!("{base}.md")))
    }

    /// The content folders to read, each with its language (`None`: the default's).
    pub(super) fn folders<'a>(&'a self, default_dir: &'a str) -> Vec<(&'a str, Option<&'a str>)> {
        let mut out = vec![(default_dir, None)];
        for l in &self.others {
            if let Some(d) = l.dir.as_deref().filter(|d| *d != default_dir) {
                out.push((d, Some(l.code.as_str())));
            }
        }
        out
    }

    /// `default_language` for the top of `fencepost.toml` (nothing for a site of one
    /// language in English).
    pub(super) fn top_keys(&self) -> String {
        match self.others.is_empty() && self.default == "en" {
            true => String::new(),
            false => format!(
                "default_language = {}\n",
                toml::Value::from(self.default.as_str())
            ),
        }
    }

    /// The `[languages.<code>]` tables of `fencepost.toml`.
    pub(super) fn tables(&self, dialect: Dialect) -> String {
        let mut out = String::new();
        for l in &self.others {
            let get = |k: &str| l.table.get(k).and_then(|v| v.as_str());
            let mut t = toml::Table::new();
            let name = get("languageName").or(get("label"));
            let description =
                get("description").or_else(|| l.table.get("params")?.get("description")?.as_str());
            for (k, v) in [
                ("name", name),
                ("title", get("title")),
                ("description", description),
            ] {
                if let Some(v) = v {
                    t.insert(k.into(), toml::Value::from(v));
                }
            }
            if let Some(w) = l.table.get("weight").and_then(|v| v.as_integer()) {
                t.insert("weight".into(), toml::Value::Integer(w));
            }
            let feeds = l
                .table
                .get("generate_feeds")
                .or(l.table.get("generate_feed"));
            if dialect == Dialect::Zola && feeds.and_then(|v| v.as_bool()) == Some(false) {
                t.insert("feed".into(), toml::Value::Boolean(false));
            }
            if let Some(toml::Value::Table(s)) = l.table.get("translations") {
                let strings: toml::Table = (s.iter().filter(|(_, v)| v.is_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                t.insert("translations".into(), toml::Value::Table(strings));
            }
            let mut doc = toml::Table::new();
            let mut langs = toml::Table::new();
            langs.insert(l.code.clone(), toml::Value::Table(t));
            doc.insert("languages".into(), toml::Value::Table(langs));
            out.push_str(&format!("\n{}", toml::to_string(&doc).unwrap_or_default()));
        }
        out
    }

    /// The URL prefix of language `code`'s pages (`/es`), as Zola and Hugo give it.
    pub(super) fn prefix(code: Option<&str>) -> String {
        code.map_or(String::new(), |c| format!("/{c}"))
    }
}

/// Counts a page of language `lang` in the report.
pub(super) fn count(plan: &mut Plan, lang: Option<&str>, default: &str) {
    *plan
        .report
        .languages
        .entry(lang.unwrap_or(default).to_string())
        .or_default() += 1;
}
