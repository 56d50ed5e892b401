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
//! `extra`) and `page` (`title`, `extra`, and for a bundle `colocated_path` and `assets`:
//! [`page_view`]). Arguments are autoescaped in `.html` shortcodes.
//! Only names with a template are shortcodes; a site without `templates/shortcodes/` reads
//! every body as before (escapes included).
//!
//! **What a shortcode may reach** (the adversary: a theme's author, on a runner holding
//! credentials): the rules of page templates ([`crate::guard`]: `get_env` only as allowed,
//! `range` bounded, a depth limit, a bounded output), plus `get_url(path)` (the site's URL of
//! a path), the filter `markdown(inline=false)` and `get_image_metadata(path)` over the
//! page's own bundle files (with the bytes this publish records for them: they go public
//! with it) and `static/`. Nothing else: no other page's file, no page, no network. A shortcode that fails — a syntax error, a function it lacks, a limit — fails
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
        tera.register_function("get_url", GetUrl);
        tera.register_function("get_image_metadata", ImageMetadata(root.to_path_buf()));
        tera.register_filter("markdown", MarkdownFilter(config.markdown));
        let (mut kinds, mut broken) = (BTreeMap::new(), BTreeMap::new());
        for (stem, kind, text) in files {
            let file = template_name(&stem, kind);
            if let Err(e) = tera.add_raw_template(&file, &text) {
                broken.insert(stem.clone(), crate::guard::chain(&e));
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
        // The page's own files, for `get_image_metadata`, while its body renders (on this
        // thread: renders run in parallel, one page a thread at a time).
        let mut page = page.clone();
        let own = match &mut page {
            Value::Object(m) => m.remove(RESOURCES),
            _ => None,
        };
        let own: HashMap<String, String> = own
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        PAGE_FILES.with(|f| *f.borrow_mut() = own);
        let out = self.expand_with(md, &page);
        PAGE_FILES.with(|f| f.borrow_mut().clear());
        out
    }

    fn expand_with(&self, md: &str, page: &Value) -> Result<Expanded, ShortcodeError> {
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
            Err(e) => Err(err(crate::guard::chain(&e))),
        }
    }
}

/// The functions Zola gives templates that a shortcode here does not have: it renders with
/// its page at publish, before any build, so it reaches no other page, image or data file.
pub const NOT_IN_SHORTCODES: &[&str] = &[
    "resize_image",
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
        return Some(crate::guard::chain(&e));
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
        .find(|c| &c[1] != "page" || !PAGE_FIELDS.contains(&&c[2]))
        .map(|c| format!("{}.{}", &c[1], &c[2]));
    field.map(|f| {
        format!(
            "it reads `{f}`: a shortcode here sees its page's {} only",
            PAGE_FIELDS.join(", ")
        )
    })
}

/// What a shortcode sees of its page ([`page_view`]).
pub const PAGE_FIELDS: &[&str] = &["title", "extra", "colocated_path", "assets"];

/// The key of [`page_view`] that carries the page's own files to [`Shortcodes::expand`] (not
/// shown to templates).
const RESOURCES: &str = "__fencepost_resources";

thread_local! {
    /// The page being rendered's own bundle files (path under `content/` → sha256).
    static PAGE_FILES: std::cell::RefCell<HashMap<String, String>> = Default::default();
}

/// What a shortcode sees of its page: `title`, `extra`, and for a bundle `colocated_path`
/// (its folder under `content/`, `blog/a/`) and `assets` (its files' paths), as Zola's page
/// has them. `data` is the item's data (canonical JSON).
pub fn page_view(title: &str, data: &str) -> Value {
    let parsed: Value = serde_json::from_str(data).unwrap_or_default();
    let resources = crate::content::bundle::recorded(data);
    let rel = |p: &str| p.strip_prefix("content/").map(str::to_string);
    let folder = resources.first().and_then(|r| {
        rel(&r.path)?
            .strip_suffix(r.name.as_str())
            .map(str::to_string)
    });
    let own: HashMap<String, String> = resources
        .iter()
        .filter_map(|r| Some((rel(&r.path)?, r.sha256.clone())))
        .collect();
    let assets: Vec<&String> = own.keys().collect();
    serde_json::json!({
        "title": title,
        "extra": parsed.get("extra").cloned().unwrap_or_else(|| serde_json::json!({})),
        "colocated_path": folder,
        "assets": assets,
        RESOURCES: own,
    })
}

/// Renders a body with the site's settings and its shortcodes (none: as
/// [`markdown::render`]); `(title, data)` are its page's, which a shortcode sees through
/// [`page_view`] — made only when the site has shortcodes, so a site without pays nothing.
pub fn render(
    md: &str,
    opts: &MarkdownConfig,
    shortcodes: Option<&Shortcodes>,
    (title, data): (&str, &str),
) -> Result<Rendered, ShortcodeError> {
    let Some(sc) = shortcodes else {
        return Ok(markdown::render(md, opts));
    };
    let expanded = sc.expand(md, &page_view(title, data))?;
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

/// `get_url(path)`: the site's path of `path` (`/blog/a/x.png`), as Zola mode gives it.
struct GetUrl;

impl tera::Function for GetUrl {
    fn call(&self, args: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
        let path = args
            .get("path")
            .and_then(|v| v.as_str())
            .ok_or("get_url needs path=\"…\"")?;
        if path.starts_with("@/") {
            return Err("get_url(path=\"@/…\") names a page: shortcodes render when their page is published, and reach no other page; link it with [text](/its/url/)".into());
        }
        // A site path, as Zola mode's `get_url` gives (the build puts a base URL's path in
        // front, and the link is checked); a full URL stays one.
        match path.starts_with("http://") || path.starts_with("https://") {
            true => Ok(tera::Value::String(path.to_string())),
            false => Ok(tera::Value::String(format!(
                "/{}",
                path.trim_start_matches('/')
            ))),
        }
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

/// `get_image_metadata(path, allow_missing=false)` in a shortcode: an image of the page's own
/// bundle (with the bytes this publish records for it) or of `static/`. Nothing else: an
/// embargoed page's image is never its own page's being published.
struct ImageMetadata(std::path::PathBuf);

impl tera::Function for ImageMetadata {
    fn call(&self, args: &HashMap<String, tera::Value>) -> tera::Result<tera::Value> {
        let path = args
            .get("path")
            .and_then(|v| v.as_str())
            .ok_or("get_image_metadata needs path=\"…\"")?;
        let rel = path.trim_start_matches('/');
        let bytes = match rel.split('/').any(|c| c == ".." || c.starts_with('.')) {
            true => None,
            false => own_file(&self.0, rel).or_else(|| static_file(&self.0, rel)),
        };
        match bytes {
            Some(b) => crate::image_size::metadata(&b, path).map_err(tera::Error::msg),
            None if args.get("allow_missing").and_then(|v| v.as_bool()) == Some(true) => {
                Ok(tera::Value::Null)
            }
            None => Err(format!(
                "get_image_metadata: no image {path:?} of this page's own files or static/"
            )
            .into()),
        }
    }
}

/// A file of the page being rendered, with the bytes its publish records.
fn own_file(root: &Path, rel: &str) -> Option<Vec<u8>> {
    let rel = rel.strip_prefix("content/").unwrap_or(rel);
    let sha = PAGE_FILES.with(|f| f.borrow().get(rel).cloned())?;
    let bytes = std::fs::read(root.join("content").join(rel)).ok()?;
    (fencepost_core::digest::sha256_hex(&bytes) == sha).then_some(bytes)
}

/// A file of `static/`, not through a link out of it.
fn static_file(root: &Path, rel: &str) -> Option<Vec<u8>> {
    let dir = std::fs::canonicalize(root.join("static")).ok()?;
    let real = std::fs::canonicalize(dir.join(rel.strip_prefix("static/").unwrap_or(rel))).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    (real.starts_with(&dir) && meta.is_file() && meta.len() <= 64 << 20)
        .then(|| std::fs::read(&real).ok())
        .flatten()
}
