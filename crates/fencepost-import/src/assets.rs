//! A section's assets: files of `content/` that belong to no page bundle — an image beside a
//! section's `_index.md` (`content/blog/diagram.png`), a folder of images in a section
//! (`content/docs/img/flow.svg`). Hugo (a branch bundle's resources) and Zola (a section's
//! assets) publish them at their path under `content/`; they are copied to `static/` at that
//! same path, so the URL holds. They belonged to no item and were public whatever the
//! pages' dates: `static/` keeps that. A file `static/` already has at that path is left as
//! the source's `static/` has it (the generators' own rule: static wins), and reported.
//!
//! A folder with an `index.md` is a page bundle, whose files go with its page
//! ([`super::page`]); a headless bundle's are not imported.

use super::plan::{files_under, Dialect, ImportError, Plan};
use super::source::Config;
use std::collections::BTreeSet;
use std::path::Path;

/// Copies every file of the content folder `dir` that is no page's and no bundle's.
pub(super) fn copy_loose(src: &Path, dir: &str, plan: &mut Plan) -> Result<(), ImportError> {
    let files = files_under(src, dir, plan);
    let bundles: BTreeSet<String> = files
        .iter()
        .filter_map(|(rel, _)| match rel.as_str() {
            "index.md" => Some(String::new()),
            r => r.strip_suffix("/index.md").map(|f| format!("{f}/")),
        })
        .collect();
    let statics: BTreeSet<String> = plan
        .files
        .iter()
        .filter_map(|(f, _)| f.strip_prefix("static/").map(str::to_string))
        .collect();
    for (rel, path) in files {
        if rel.ends_with(".md") || bundles.iter().any(|b| rel.starts_with(b.as_str())) {
            continue;
        }
        if statics.contains(&rel) {
            plan.report.skip(&format!("{dir}/{rel}"), None, "section asset", &format!("static/{rel} has the same path: the static file is kept, as Hugo and Zola keep it"));
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|source| ImportError::Read { path, source })?;
        plan.put(&format!("static/{rel}"), bytes);
        plan.report.section_assets += 1;
    }
    Ok(())
}

/// `static/` (and a Zola site's `sass/` when it compiles it) copied as they are; each
/// generator's own folders that have no counterpart here, reported.
pub(super) fn copy_site_files(
    src: &Path,
    config: &Config,
    plan: &mut Plan,
) -> Result<(), ImportError> {
    let mut zolas_versions = 0;
    for (rel, path) in files_under(src, "static", plan) {
        // Zola's `resize_image` output (its cache, often committed): fencepost makes its own
        // versions under its own names (docs/images.md), so these would be dead weight.
        if config.dialect == Dialect::Zola && rel.starts_with("processed_images/") {
            zolas_versions += 1;
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|source| ImportError::Read { path, source })?;
        plan.put(&format!("static/{rel}"), bytes);
        plan.report.static_files += 1;
    }
    if zolas_versions > 0 {
        plan.report.not_converted.push(super::plan::Unconverted {
            file: "static/processed_images/".into(),
            line: None,
            what: format!("{zolas_versions} files of Zola's resize_image output"),
            why: "Zola's image cache: fencepost makes each version again, once, under its own name (docs/images.md)".into(),
        });
    }
    copy_loose(src, &config.content_dir, plan)?;
    if config.dialect == Dialect::Hugo {
        hugo_assets(src, plan)?;
    }
    let sass = super::site_config::compiles_sass(config);
    // A Zola site's `data/` is what its templates `load_data` (build/templates/files.rs).
    let mut kept: Vec<&str> = Vec::new();
    if sass {
        kept.push("sass");
    }
    // Both generators' `i18n/` is what `trans` reads (Hugo's `i18n/<code>.toml`, docs/languages.md).
    kept.push("i18n");
    if config.dialect == Dialect::Zola {
        kept.push("data");
    }
    for dir in kept {
        for (rel, path) in files_under(src, dir, plan) {
            let bytes =
                std::fs::read(&path).map_err(|source| ImportError::Read { path, source })?;
            plan.put(&format!("{dir}/{rel}"), bytes);
        }
    }
    let own: &[&str] = match config.dialect {
        Dialect::Zola => &["templates", "themes", "sass"],
        Dialect::Hugo => &["layouts", "themes", "data", "archetypes"],
    };
    for dir in own
        .iter()
        .filter(|d| !(config.keep_templates && ["templates", "themes"].contains(d)))
        .filter(|d| !(sass && **d == "sass"))
    {
        if src.join(dir).is_dir() && !files_under(src, dir, plan).is_empty() {
            plan.report.skip(&format!("{dir}/"), None, dir, match *dir {
                "layouts" | "themes" if config.dialect == Dialect::Hugo => "Go templates cannot be ported: the starter templates (templates/) were written instead; port what you need by hand",
                "templates" | "themes" => "Zola's templates are written for Zola's variables: the starter templates (templates/) were written instead; port what you need by hand",
                _ => "the generator's own folder: fencepost has no counterpart",
            });
        }
    }
    Ok(())
}

/// Hugo's `assets/`: a template publishes an asset at its path when it uses it
/// (`resources.Get "x.cast"` … `.RelPermalink` is `/x.cast`), so each is copied to `static/`
/// at that path (the source's own `static/` file wins). What a Hugo pipe would have turned
/// into another file — Sass (`resources.ToCSS`), TypeScript and JavaScript bundles
/// (`js.Build`) — is not copied as it is, and is reported with the way to compile it.
fn hugo_assets(src: &Path, plan: &mut Plan) -> Result<(), ImportError> {
    let statics: BTreeSet<String> = (plan.files.iter())
        .filter_map(|(f, _)| f.strip_prefix("static/").map(str::to_string))
        .collect();
    for (rel, path) in files_under(src, "assets", plan) {
        let file = format!("assets/{rel}");
        let ext = rel
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let why = match ext.as_str() {
            "scss" | "sass" => Some(format!("Hugo compiled it with resources.ToCSS: put it in sass/ (partials named _x.scss) and set [build] compile_sass = true, which compiles sass/{rel} to /{}.css; or compile it yourself (`grass {file} static/{}.css`)", rel.trim_end_matches(&format!(".{ext}")), rel.trim_end_matches(&format!(".{ext}")))),
            "ts" | "tsx" | "jsx" => Some("Hugo bundled it with js.Build: bundle it yourself (esbuild) into static/".to_string()),
            _ if statics.contains(&rel) => Some(format!("static/{rel} has the same path: the static file is kept")),
            _ => None,
        };
        if let Some(why) = why {
            plan.report.skip(&file, None, "asset", &why);
            continue;
        }
        let bytes = std::fs::read(&path).map_err(|source| ImportError::Read { path, source })?;
        plan.put(&format!("static/{rel}"), bytes);
        plan.report.section_assets += 1;
    }
    Ok(())
}
