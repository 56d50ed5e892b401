//! A site's own shortcodes, as Zola has them: `templates/shortcodes/NAME.html` or `NAME.md`,
//! called from a body as `{{ NAME(key=literal, …) }}` or as a block,
//! `{% NAME(key=literal, …) %}body{% end %}` ([`grammar`]). Themes ship admonitions, light and
//! dark images, image togglers, mermaid diagrams this way; `import zola` keeps them.
//!
//! **When they render: with the body, at publish.** The ledger stores each page's HTML, so a
//! shortcode's output is part of what was published and what the audit log and the public
//! log commit to — never computed afresh by a later build from templates that may have
//! changed since. A change to a shortcode template reaches published pages with `publish
//! --rerender`, as a change to `[markdown]` does; new and edited items render with the
//! templates of their run. (Rejected: rendering at build time from placeholders in the
//! stored HTML — the ledger would no longer say what a page showed.)
//!
//! **As Zola renders them.** An `.md` shortcode's output is Markdown, put in the body before
//! the body is rendered; an `.html` one's is HTML, put in after (a placeholder stands in for
//! it while the Markdown is rendered; alone in its paragraph it replaces the paragraph), so
//! Markdown never mangles it and `[markdown] unsafe_html` does not apply to it: a shortcode is
//! a template of the site's, like its page templates. Its arguments are in its context, with
//! `nth` (its count in the body, from 1), `body` for a block, `config` (`base_url`, `title`,
//! `extra`) and `page` (`title`, `extra`). Arguments are autoescaped in `.html` shortcodes.
//! Only names with a template are shortcodes; a site without `templates/shortcodes/` reads
//! every body as before (escapes included).
//!
//! **What a shortcode may reach** (the adversary: a theme's author, on a runner holding
//! credentials): the rules of page templates ([`crate::guard`]: `get_env` only as allowed,
//! `range` bounded, a depth limit, a bounded output), plus `get_url(path)` (the site's URL of
//! a path) and the filter `markdown(inline=false)`. Nothing else: no file, no page, no
//! network. A shortcode that fails — a syntax error, a function it lacks, a limit — fails
//! the items whose bodies call it (named with the template and why); the others publish.

pub mod grammar;

use crate::markdown::{self, Rendered};
use fencepost_config::{Config, MarkdownConfig};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Where a site's shortcode templates are.
pub const DIR: &str = "templates/shortcodes";

/// A shortcode that could not render, naming its template.
#[derive(Debug, thiserror::Error)]
#[error("{template}: {why}")]
pub struct ShortcodeError {
    /// `templates/shortcodes/NAME.html`
    pub template: String,
    pub why: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Html,
    Md,
}

/// The site's shortcodes, loaded once per run.
pub struct Shortcodes {
    tera: tera::Tera,
    kinds: BTreeMap<String, Kind>,
    /// Templates that did not compile, and why.
    broken: BTreeMap<String, String>,
    config: Value,
    max_bytes: u64,
}

/// A body with its shortcodes expanded: Markdown, and the HTML each placeholder stands for.
pub struct Expanded {
    pub markdown: String,
    pub html: Vec<(String, String)>,
}

impl Shortcodes {
    /// The site's shortcodes (`None`: it has none, and bodies are read as before).
    pub fn load(root: &Path, config: &Config) -> Option<Shortcodes> {
        let dir = root.join(DIR);
        let mut files: Vec<(String, Kind, String)> = Vec::new();
        for e in std::fs::read_dir(&dir).ok()?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let kind = match name.rsplit_once('.') {
                Some((_, "html")) => Kind::Html,
                Some((_, "md")) => Kind::Md,
                _ => continue,
            };
            let stem = name.rsplit_once('.').map(|(s, _)| s.to_string())?;
            if e.file_type().is_ok_and(|t| t.is_file()) {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                files.push((stem, kind, text));
            }
        }
        if files.is_empty() {
            return None;
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let mut tera = tera::Tera::default();
        tera.autoescape_on(vec![".html"]);
        crate::guard::secure(&mut tera, &config.security, &config.build);
        tera.register_function("get_url", GetUrl(config.base_url.clone()));
        tera.register_filter("markdown", MarkdownFilter(config.markdown));
        let (mut kinds, mut broken) = (BTreeMap::new(), BTreeMap::new());
        for (stem, kind, text) in files {
            let file = template_name(&stem, kind);
            if let Err(e) = tera.add_raw_template(&file, &text) {
                broken.insert(stem.clone(), chain(&e));
            }
            kinds.entry(stem).or_insert(kind);
        }
        let config_view = serde_json::json!({
            "base_url": config.base_url,
            "title": config.title,
            "extra": config.extra,
        });
        Some(Shortcodes {
            tera,
            kinds,
            broken,
            config: config_view,
            max_bytes: config.build.max_page_bytes,
        })
    }

    /// Expands every call of a shortcode the site has in `md`; `page` is the page's view
    /// (`title`, `extra`).
    pub fn expand(&self, md: &str, page: &Value) -> Result<Expanded, ShortcodeError> {
        let tag = uuid::Uuid::new_v4().simple().to_string();
        let mut out = Expanded {
            markdown: String::with_capacity(md.len()),
            html: Vec::new(),
        };
        let mut nth: HashMap<String, usize> = HashMap::new();
        let mut i = 0;
        while i < md.len() {
            let rest = &md[i..];
            let Some(at) = rest.find('{') else {
                out.markdown.push_str(rest);
                break;
            };
            out.markdown.push_str(&rest[..at]);
            i += at;
            let rest = &md[i..];
            if let Some((text, used)) = grammar::escape(rest) {
                out.markdown.push_str(&text);
                i += used;
                continue;
            }
            let Some(call) = grammar::call(rest).filter(|c| self.kinds.contains_key(&c.name))
            else {
                out.markdown.push('{');
                i += 1;
                continue;
            };
            i += call.len;
            let body = match call.block {
                true => {
                    let (body, used) = block_body(&md[i..]);
                    i += used;
                    Some(body)
                }
                false => None,
            };
            let n = nth.entry(call.name.clone()).or_insert(0);
            *n += 1;
            let text = self.render(&call, body, *n, page)?;
            match self.kinds[&call.name] {
                Kind::Md => out.markdown.push_str(&text),
                Kind::Html => {
                    let ph = format!("fpshortcode{tag}x{}", out.html.len());
                    out.markdown.push_str(&ph);
                    out.html.push((ph, text));
                }
            }
        }
        Ok(out)
    }

    fn render(
        &self,
        call: &grammar::Call,
        body: Option<&str>,
        nth: usize,
        page: &Value,
    ) -> Result<String, ShortcodeError> {
        let kind = self.kinds[&call.name];
        let template = template_name(&call.name, kind);
        let err = |why: String| ShortcodeError {
            template: format!("{DIR}/{template}"),
            why,
        };
        if let Some(why) = self.broken.get(&call.name) {
            return Err(err(why.clone()));
        }
        let mut ctx = tera::Context::new();
        for (k, v) in &call.args {
            ctx.insert(k, v);
        }
        ctx.insert("nth", &nth);
        if let Some(b) = body {
            ctx.insert("body", b);
        }
        ctx.insert("config", &self.config);
        ctx.insert("page", page);
        let mut out = crate::guard::Bounded::new(self.max_bytes);
        match self.tera.render_to(&template, &ctx, &mut out) {
            Ok(()) => String::from_utf8(out.bytes).map_err(|e| err(e.to_string())),
            Err(_) if out.over => Err(err(format!(
                "its output comes to more than build.max_page_bytes ({} bytes)",
                self.max_bytes
            ))),
            Err(e) => Err(err(chain(&e))),
        }
    }
}

/// The functions Zola gives templates that a shortcode here does not have: it renders with
/// its page at publish, before any build, so it reaches no other page, image or data file.
pub const NOT_IN_SHORTCODES: &[&str] = &[
    "resize_image",
    "get_image_metadata",
    "get_page",
    "get_section",
    "get_taxonomy",
    "get_taxonomy_url",
    "get_taxonomy_term",
    "load_data",
    "get_hash",
    "get_file_hash",
    "trans",
];

/// Why a shortcode template (`text`, of kind `file`'s extension) cannot render here, if it
/// cannot: a syntax error, a function of [`NOT_IN_SHORTCODES`], or a field of its page
/// other than `title` and `extra` (`page.colocated_path`, `section.…`). `import zola` keeps
/// the ones that can, and converts or reports the calls of the others.
pub fn cannot_render(file: &str, text: &str) -> Option<String> {
    let mut tera = tera::Tera::default();
    if let Err(e) = tera.add_raw_template(file, text) {
        return Some(chain(&e));
    }
    if let Some(f) = NOT_IN_SHORTCODES
        .iter()
        .find(|f| text.contains(&format!("{f}(")))
    {
        return Some(format!("it calls `{f}`, which shortcodes here do not have"));
    }
    let fields = regex::Regex::new(r"\b(page|section)\.([A-Za-z_]+)").expect("a valid pattern");
    let field = fields
        .captures_iter(text)
        .find(|c| &c[1] != "page" || !["title", "extra"].contains(&&c[2]))
        .map(|c| format!("{}.{}", &c[1], &c[2]));
    field.map(|f| format!("it reads `{f}`: a shortcode here sees its page's title and extra only"))
}

/// Renders an item body with the site's settings and its shortcodes (none: as
/// [`markdown::render`]); `page` is what a shortcode sees of its page (`title`, `extra`).
pub fn render(
    md: &str,
    opts: &MarkdownConfig,
    shortcodes: Option<&Shortcodes>,
    page: &Value,
) -> Result<Rendered, ShortcodeError> {
    let Some(sc) = shortcodes else {
        return Ok(markdown::render(md, opts));
    };
    let expanded = sc.expand(md, page)?;
    let r = markdown::render(&expanded.markdown, opts);
    let fill = |h: &str| fill(h, &expanded.html);
    Ok(Rendered {
        body_html: fill(&r.body_html),
        summary_html: r.summary_html.as_deref().map(fill),
    })
}

/// Puts each placeholder's HTML in the rendered `html`: a placeholder alone in its
/// paragraph replaces the paragraph (as Zola does), any other is replaced where it is.
pub fn fill(html: &str, pieces: &[(String, String)]) -> String {
    let mut out = html.to_string();
    for (ph, piece) in pieces {
        let para = format!("<p>{ph}</p>");
        out = match out.contains(&para) {
            true => out.replacen(&para, piece, 1),
            false => out.replacen(ph.as_str(), piece, 1),
        };
    }
    out
}

fn template_name(stem: &str, kind: Kind) -> String {
    match kind {
        Kind::Html => format!("{stem}.html"),
        Kind::Md => format!("{stem}.md"),
    }
}

/// A block's body up to its `{% end %}` (all the rest when it has none), and how far past
/// the end tag to go.
fn block_body(s: &str) -> (&str, usize) {
    let mut from = 0;
    while let Some(at) = s[from..].find("{%") {
        let start = from + at;
        if let Some(used) = grammar::block_end(&s[start..]) {
            let body = s[..start].strip_prefix('\n').unwrap_or(&s[..start]);
            return (body, start + used);
        }
        from = start + 2;
    }
    (s, s.len())
}

/// A tera error with its causes, as one line.
fn chain(e: &tera::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// `get_url(path)`: the site's URL of `path`.
struct GetUrl(String);

impl tera::Function for GetUrl {
    fn call(&self, args: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
        let path = args
            .get("path")
            .and_then(|v| v.as_str())
            .ok_or("get_url needs path=\"…\"")?;
        if path.starts_with("@/") {
            return Err("get_url(path=\"@/…\") names a page: shortcodes render when their page is published, and reach no other page; link it with [text](/its/url/)".into());
        }
        let base = self.0.trim_end_matches('/');
        Ok(tera::Value::String(format!(
            "{base}/{}",
            path.trim_start_matches('/')
        )))
    }

    fn is_safe(&self) -> bool {
        false
    }
}

/// The filter `markdown(inline=false)`: Markdown rendered with the site's settings (Zola's;
/// page templates have it too).
pub struct MarkdownFilter(pub MarkdownConfig);

impl tera::Filter for MarkdownFilter {
    fn filter(
        &self,
        value: &tera::Value,
        args: &HashMap<String, tera::Value>,
    ) -> tera::Result<tera::Value> {
        let text = value.as_str().ok_or("markdown filters a string")?;
        let html = markdown::to_html(text, &self.0);
        let inline = args.get("inline").and_then(|v| v.as_bool()) == Some(true);
        let html = match inline {
            true => html
                .trim()
                .strip_prefix("<p>")
                .and_then(|h| h.strip_suffix("</p>"))
                .map(str::to_string)
                .unwrap_or(html),
            false => html,
        };
        Ok(tera::Value::String(html))
    }

    fn is_safe(&self) -> bool {
        true
    }
}
