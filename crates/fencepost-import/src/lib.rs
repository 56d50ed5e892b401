//! `fencepost import hugo|zola SRC DST`: a new fencepost site at DST from a Hugo or Zola
//! site at SRC — its config, its sections as collections (URLs as its permalinks said, an
//! alias wherever the new URL differs), its taxonomies, its content with front matter
//! converted key by key, its page bundles, `static/`, and starter templates (Go and Zola
//! templates cannot be ported) — with a report of what was converted and what was not, each
//! with its file and line.
//!
//! The driver is a list of steps: read the source into a [`Plan`] (every file DST will hold,
//! in memory), then write the plan into a fresh folder beside DST and rename it into place,
//! so an import that fails leaves nothing half-written. DST must be absent or empty.

mod assets;
mod collect;
mod dialect;
mod docs_starter;
mod front;
pub mod hugo;
mod languages;
mod page;
mod place;
mod plan;
mod section;
mod settings;
mod shortcode_blocks;
mod shortcodes;
mod site_config;
mod source;
mod write;
pub mod zola;
mod zola_body;
mod zola_templates;

use std::path::Path;

pub use plan::{Dialect, ImportError, Plan, Report, Unconverted};

/// Imports the site at `src` into a new site at `dst`.
pub fn import(
    from: Dialect,
    src: &Path,
    dst: &Path,
    now: fencepost_core::clock::Instant,
) -> Result<Report, ImportError> {
    write::refuse_non_empty(dst)?;
    let mut plan = match from {
        Dialect::Hugo => hugo::plan(src, now)?,
        Dialect::Zola => zola::plan(src, now)?,
    };
    write::starter_files(&mut plan);
    refuse_what_the_site_refuses(&plan, src, dst)?;
    plan.report.from = Some(from);
    plan.report.source = src.to_path_buf();
    plan.report.site = dst.to_path_buf();
    write::all(dst, &plan.files)?;
    Ok(plan.report)
}

/// The config the plan holds, loaded as every command of the new site will load it: an
/// import never writes a site that refuses its own configuration (two of its URLs on one
/// path, a bad pattern). The error names the key, as `publish` would.
fn refuse_what_the_site_refuses(plan: &Plan, src: &Path, dst: &Path) -> Result<(), ImportError> {
    let Some((_, text)) = plan.files.iter().find(|(p, _)| p == "fencepost.toml") else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(text);
    let Err(e) = fencepost_config::Config::parse(&text, &dst.join("fencepost.toml")) else {
        return Ok(());
    };
    let why = e.to_string();
    let hint = match why.contains("at the same path") {
        true => "a section and a taxonomy (or two sections) answer at one URL: rename one",
        false => "the setting behind the key named",
    };
    Err(ImportError::Refused {
        source_dir: src.to_path_buf(),
        why,
        hint: hint.into(),
    })
}
