//! A Zola site read into a [`Plan`]: `config.toml` (title, base URL, `[[taxonomies]]`),
//! `content/` (sections as collections — Zola's `/section/slug/` URLs, `path` overrides kept
//! as aliases — dated root pages as the root blog's posts, other root pages and one-segment
//! `path`s as plain pages, page bundles with their files), `static/`. The
//! walk and the writing are Hugo's (`hugo.rs`); what differs is read here.

use super::hugo;
use super::plan::{Dialect, ImportError, Plan};
use super::source::Config;
use fencepost_site::content::{front_matter_table, Format};
use std::collections::BTreeMap;
use std::path::Path;

/// Reads the Zola site at `src`.
pub fn plan(src: &Path, now: fencepost_core::clock::Instant) -> Result<Plan, ImportError> {
    let path = src.join("config.toml");
    if !path.is_file() {
        return Err(ImportError::NoConfig {
            path: src.to_path_buf(),
            what: "Zola",
            expected: "config.toml with base_url",
        });
    }
    let text = super::plan::read_config_file(src, "config.toml")?;
    let table = front_matter_table(&text, Format::Toml).map_err(|e| ImportError::Source {
        path: path.clone(),
        line: Some(e.line.saturating_sub(1).max(1)),
        why: e.message,
    })?;
    let taxonomies = table
        .get("taxonomies")
        .and_then(|t| t.as_array())
        .map(|list| {
            list.iter()
                .filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut plan = Plan::default();
    for (key, why) in [
        ("theme", "themes are Zola (Tera) templates written for Zola's variables: the starter templates were written instead"),
    ] {
        if table.contains_key(key) {
            plan.report.skip("config.toml", None, key, why);
        }
    }
    let slugify_paths = table
        .get("slugify")
        .and_then(|s| s.get("paths"))
        .and_then(|p| p.as_str())
        .is_none_or(|p| p == "on");
    let languages = super::languages::Languages::read(&table, Dialect::Zola, "config.toml")?;
    let config = Config {
        file: "config.toml".to_string(),
        slugify_paths,
        path_to_lower: slugify_paths,
        table,
        taxonomies,
        permalinks: BTreeMap::new(),
        dialect: Dialect::Zola,
        content_dir: "content".to_string(),
        root_posts: String::new(),
        keep_templates: false,
        page_templates: BTreeMap::new(),
        shortcodes: Default::default(),
        languages,
    };
    hugo::plan_with(src, config, plan, now)
}
