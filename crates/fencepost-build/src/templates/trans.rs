//! `trans(key=…, lang=…)`: a template's strings in each language (docs/languages.md).
//!
//! A language's strings come from `[languages.<code>.translations]` (Zola's place), then
//! `i18n/<code>.toml` (Hugo's: `key = "…"` or `[key] other = "…"`); the default language's
//! from the top-level `[translations]` too. A key a language lacks falls back to the default
//! language's string, as Hugo does (Zola stops the build): a page in a language whose strings
//! are not all translated yet shows the default's rather than being held. A key no language
//! has is an error naming it.

use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Every language's strings.
#[derive(Debug, Clone, Default)]
pub(crate) struct Strings {
    default: String,
    by_lang: HashMap<String, BTreeMap<String, String>>,
    /// The other languages' URL prefixes, without slashes (`ca`).
    prefixes: Vec<String>,
}

impl Strings {
    pub(crate) fn load(
        root: &Path,
        config: &fencepost_config::Config,
        langs: &fencepost_config::collections::Languages,
    ) -> Strings {
        let default = langs.default_code().to_string();
        let mut by_lang: HashMap<String, BTreeMap<String, String>> = HashMap::new();
        for l in &langs.list {
            let mut strings = i18n_file(root, &l.code);
            strings.extend(l.translations.clone());
            if l.code == default {
                strings.extend(config.translations.clone());
            }
            by_lang.insert(l.code.clone(), strings);
        }
        let prefixes = (langs.others().iter())
            .map(|l| l.url_prefix.trim_matches('/').to_string())
            .collect();
        Strings {
            default,
            by_lang,
            prefixes,
        }
    }

    /// The other languages' URL prefixes, without slashes.
    pub(crate) fn prefixes(&self) -> Vec<String> {
        self.prefixes.clone()
    }

    /// `trans(key=…, lang=…)`.
    pub(crate) fn trans(&self, a: &HashMap<String, Value>) -> tera::Result<Value> {
        let arg = |k: &str| a.get(k).and_then(|v| v.as_str());
        let key = arg("key").ok_or_else(|| tera::Error::msg("trans needs key=\"…\""))?;
        let lang = arg("lang")
            .filter(|l| !l.is_empty())
            .unwrap_or(&self.default);
        let Some(own) = self.by_lang.get(lang) else {
            let known: Vec<&str> = self.by_lang.keys().map(String::as_str).collect();
            return Err(tera::Error::msg(format!(
                "trans: {lang:?} is not a language of this site ({}): add [languages.{lang}] to fencepost.toml",
                known.join(", ")
            )));
        };
        let fallback = self.by_lang.get(&self.default);
        (own.get(key).or_else(|| fallback.and_then(|f| f.get(key))))
            .map(|v| json!(v))
            .ok_or_else(|| {
                tera::Error::msg(format!(
                    "trans: {key:?} is in no language's strings: add it to [translations] of fencepost.toml (or i18n/{}.toml)",
                    self.default
                ))
            })
    }
}

/// `i18n/<code>.toml` as Hugo writes it: `key = "…"`, or `[key]` with `other` (or `one`).
fn i18n_file(root: &Path, code: &str) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(root.join("i18n").join(format!("{code}.toml"))) else {
        return BTreeMap::new();
    };
    let Ok(table) = text.parse::<toml::Table>() else {
        tracing::warn!("i18n/{code}.toml is not TOML: its strings are not used");
        return BTreeMap::new();
    };
    let mut out = BTreeMap::new();
    for (k, v) in table {
        let s = match &v {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Table(t) => (t.get("other").or_else(|| t.get("one")))
                .and_then(|v| v.as_str())
                .map(str::to_string),
            _ => None,
        };
        if let Some(s) = s {
            out.insert(k, s);
        }
    }
    out
}
