//! The body of a Hugo shortcode fencepost cannot render, kept as a block of its own: never
//! run into the paragraph around it (a mermaid diagram used to become a line of prose).
//! - a diagram or formula (`mermaid`, `plantuml`, `graphviz`, `katex`, `math`, `chart`): a
//!   fenced code block with that language — what a client-side renderer (mermaid.js, KaTeX)
//!   looks for, and readable as it is;
//! - a notice (`notice`, `hint`, `alert`, `callout`, `admonition`, `note`, `tip`,
//!   `warning`, …): a GitHub alert (`> [!TIP]`), which `[markdown] github_alerts` renders
//!   as one (the import turns it on for Hugo sites);
//! - one with a link (`button href="…"`, a card's `link`): its body as that link's text;
//! - anything else (`details`, `tabs`, `columns`, …): its title, if it has one, in bold,
//!   then its body, set apart by blank lines.

const DIAGRAMS: &[&str] = &["mermaid", "plantuml", "graphviz", "katex", "math", "chart"];

const NOTICES: &[&str] = &[
    "notice",
    "hint",
    "alert",
    "callout",
    "admonition",
    "note",
    "tip",
    "info",
    "warning",
    "caution",
    "important",
    "danger",
    "error",
    "success",
];

/// The block for shortcode `name`'s body `inner`, and what it was kept as (for the report).
pub(super) fn block(
    name: &str,
    positional: &[String],
    named: &[(String, String)],
    inner: &str,
) -> (String, &'static str) {
    let body = inner.trim_matches('\n');
    let arg = |k: &str| named.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    if DIAGRAMS.contains(&name) {
        let fence = match body.contains("```") {
            true => "~~~~",
            false => "```",
        };
        return (
            format!("\n\n{fence}{name}\n{body}\n{fence}\n\n"),
            "a code block",
        );
    }
    if NOTICES.contains(&name) {
        let kind = [
            arg("type"),
            arg("context"),
            positional.first().map(String::as_str),
        ]
        .into_iter()
        .flatten()
        .chain([name])
        .find_map(alert_kind)
        .unwrap_or("NOTE");
        let mut out = format!("\n\n> [!{kind}]\n");
        if let Some(t) = arg("title") {
            out.push_str(&format!("> **{t}**\n>\n"));
        }
        for l in body.lines() {
            out.push_str(&format!("> {l}\n").replace("> \n", ">\n"));
        }
        return (out + "\n", "a GitHub alert");
    }
    // A button or a card that links somewhere: its body is the link's text.
    if let Some(href) = arg("href").or(arg("link")).or(arg("url")) {
        let text = body.replace('\n', " ");
        return (format!("[{}]({href})", text.trim()), "a link");
    }
    let title = arg("title")
        .or(arg("summary"))
        .or(arg("name"))
        .or(positional.first().map(String::as_str));
    let head = title.map(|t| format!("**{t}**\n\n")).unwrap_or_default();
    (format!("\n\n{head}{body}\n\n"), "a block of its own")
}

/// GitHub's alert for a notice's kind, as themes name them.
fn alert_kind(k: &str) -> Option<&'static str> {
    Some(match k.to_ascii_lowercase().as_str() {
        "note" | "info" | "notice" | "primary" | "secondary" => "NOTE",
        "tip" | "hint" | "success" => "TIP",
        "important" => "IMPORTANT",
        "warning" | "warn" => "WARNING",
        "caution" | "danger" | "error" => "CAUTION",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagram_is_a_code_block_a_notice_an_alert_the_rest_a_block() {
        let (b, _) = block("mermaid", &[], &[], "\ngraph TD;\n  A-->B;\n");
        assert_eq!(b, "\n\n```mermaid\ngraph TD;\n  A-->B;\n```\n\n");
        let (b, _) = block("notice", &["warning".into()], &[], "Careful.\n\nReally.");
        assert_eq!(b, "\n\n> [!WARNING]\n> Careful.\n>\n> Really.\n\n");
        let (b, _) = block("hint", &[], &[("title".into(), "Hi".into())], "x");
        assert_eq!(b, "\n\n> [!TIP]\n> **Hi**\n>\n> x\n\n");
        let (b, _) = block("button", &[], &[("href".into(), "/docs/".into())], "Go");
        assert_eq!(b, "[Go](/docs/)");
        let (b, _) = block("details", &[], &[("title".into(), "More".into())], "x");
        assert_eq!(b, "\n\n**More**\n\nx\n\n");
    }
}
