//! The source site's own settings that fencepost has a counterpart for, as
//! `fencepost.toml`'s `[markdown]`; the ones it has none for, reported by name.
//!
//! - Raw HTML: Hugo omits it unless `markup.goldmark.renderer.unsafe = true`; Zola always
//!   passes it through. Either way the imported site renders it as the source did
//!   (`markdown.unsafe_html`).
//! - GitHub's alerts (`> [!NOTE]`): Hugo renders them (its blockquote render hook), Zola with
//!   `markdown.github_alerts = true`; the imported site does as its source
//!   (`markdown.github_alerts`).
//! - Emoji shortcodes (`:smile:`; Hugo's `enableEmoji`, Zola's `markdown.render_emoji`),
//!   math and a table of contents in the
//!   templates: fencepost has no counterpart, so each is reported, never silently dropped.

use super::plan::{Dialect, Plan};
use super::source::Config;

/// A Zola site's highlighting settings, and what becomes of them: class-styled code gets its
/// stylesheet at the URL Zola 0.22 wrote it (`/giallo.css`), holding fencepost's classes.
fn zola_highlighting(config: &Config, plan: &mut Plan) -> Option<(&'static str, &'static str)> {
    let markdown = config.table.get("markdown")?.as_table()?;
    let highlighting = markdown.get("highlighting").and_then(|v| v.as_table());
    let classes = highlighting
        .and_then(|h| h.get("style"))
        .and_then(|v| v.as_str())
        == Some("class");
    if classes {
        if !plan.files.iter().any(|(f, _)| f == "static/giallo.css") {
            plan.put(
                "static/giallo.css",
                fencepost_site::markdown::highlight_css(),
            );
        }
        return Some(("markdown highlighting theme", "code is highlighted as CSS classes (hl-…, not giallo's): static/giallo.css, at the URL Zola wrote its stylesheet, holds fencepost's to restyle; a theme's own rules for giallo's classes no longer apply"));
    }
    (highlighting.is_some() || markdown.contains_key("highlight_theme")).then_some((
        "markdown highlighting theme",
        "code is highlighted as CSS classes; static/highlight.css is the stylesheet to restyle",
    ))
}

/// Goldmark's definition lists and heading attributes (`{#id .class}`), on in a Hugo site
/// unless it turned them off.
fn goldmark_extras(config: &Config) -> String {
    let off = |path: &[&str], key: &str| {
        path.iter()
            .try_fold(&config.table, |t, k| t.get(*k).and_then(|v| v.as_table()))
            .and_then(|t| t.get(key))
            .and_then(|v| v.as_bool())
            == Some(false)
    };
    let mut out = String::new();
    if config.dialect != Dialect::Hugo {
        return out;
    }
    if !off(&["markup", "goldmark", "extensions"], "definitionList") {
        out.push_str("# The source rendered definition lists (Term, then `: definition`): so does this site.\ndefinition_lists = true\n");
    }
    if !off(&["markup", "goldmark", "parser", "attribute"], "title") {
        out.push_str("# The source read heading attributes ({#id .class}): so does this site.\nheading_attributes = true\n");
    }
    out
}

/// `[markdown]` for the imported site (empty when the defaults already render as the source
/// did), and a report line for each setting with no counterpart.
pub(super) fn markdown(config: &Config, plan: &mut Plan) -> String {
    let config_file = config.file.as_str();
    let t = &config.table;
    let at = |path: &[&str]| {
        path.iter()
            .try_fold(t, |t, k| t.get(*k).and_then(|v| v.as_table()))
            .is_some()
    };
    let value = |path: &[&str], key: &str| {
        path.iter()
            .try_fold(t, |t, k| t.get(*k).and_then(|v| v.as_table()))
            .and_then(|t| t.get(key))
            .cloned()
    };
    let yes = |v: Option<toml::Value>| v.and_then(|v| v.as_bool()) == Some(true);
    let unsafe_html = match config.dialect {
        Dialect::Zola => true,
        Dialect::Hugo => yes(value(&["markup", "goldmark", "renderer"], "unsafe")),
    };
    let alerts = match config.dialect {
        Dialect::Zola => yes(value(&["markdown"], "github_alerts")),
        Dialect::Hugo => true,
    };
    let mut lost = Vec::new();
    if config.dialect == Dialect::Zola {
        if yes(value(&["markdown"], "render_emoji")) {
            lost.push(("markdown.render_emoji", "fencepost renders no emoji shortcodes: `:smile:` stays as written; type the emoji itself"));
        }
        if yes(value(&[], "build_search_index")) && yes(value(&["search"], "include_date")) {
            lost.push((
                "search.include_date",
                "Zola's index is made without dates (docs/search.md)",
            ));
        }
        if let Some(line) = zola_highlighting(config, plan) {
            lost.push(line);
        }
        let keys = [
            "external_links_class",
            "external_links_target_blank",
            "external_links_no_follow",
            "smart_punctuation",
        ];
        if keys.iter().any(|k| value(&["markdown"], k).is_some()) {
            lost.push(("markdown", "external link classes and smart punctuation have no counterpart in fencepost's [markdown]: links and punctuation are rendered as written"));
        }
    } else {
        if yes(value(&[], "enableEmoji")) {
            lost.push(("enableEmoji", "fencepost renders no emoji shortcodes: `:smile:` stays as written; type the emoji itself"));
        }
        if at(&["markup", "tableOfContents"]) && plan.report.starter != "docs" {
            lost.push(("markup.tableOfContents", "fencepost's templates get no table of contents: headings have ids (markdown.heading_ids) to link by hand"));
        }
        if value(&["markup", "goldmark", "extensions"], "passthrough").is_some()
            || yes(value(&["params"], "math"))
        {
            lost.push((
                "math",
                "fencepost renders no math: load a renderer (KaTeX, MathJax) from the templates",
            ));
        }
    }
    for (what, why) in lost {
        plan.report.skip(config_file, None, what, why);
    }
    let mut out = String::new();
    if unsafe_html {
        out.push_str("# The source rendered HTML written in Markdown: so does this site (trusted authors only).\nunsafe_html = true\n");
    }
    if alerts {
        out.push_str("# The source rendered GitHub's alerts (> [!NOTE]) as alerts: so does this site.\ngithub_alerts = true\n");
    }
    out.push_str(&goldmark_extras(config));
    match out.is_empty() {
        true => out,
        false => format!("\n[markdown]\n{out}"),
    }
}
