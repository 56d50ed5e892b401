//! Loading the site's tera templates (autoescape on for `.html`) with errors that name the
//! file and line.

pub mod files;
mod trans;

use fencepost_site::guard;
pub(crate) use fencepost_site::guard::readable_values;

use super::report::BuildError;
use fencepost_config::collections::Collections;
use std::collections::BTreeMap;
use std::path::Path;

/// Templates every site must have, besides its collections' (see
/// [`Collections::templates`]).
pub const SITE: &[&str] = &["index.html", "page.html", "404.html"];

/// Every template the site needs, sorted.
pub fn required(collections: &Collections) -> Vec<String> {
    let mut out = collections.templates();
    out.extend(SITE.iter().map(|s| s.to_string()));
    out.sort();
    out.dedup();
    out
}

/// `asset_url(path="style.css")`: the content-hashed URL of a static file.
struct AssetUrl(std::collections::BTreeMap<String, String>);

impl tera::Function for AssetUrl {
    fn call(
        &self,
        args: &std::collections::HashMap<String, tera::Value>,
    ) -> tera::Result<tera::Value> {
        let path = args
            .get("path")
            .and_then(|v| v.as_str())
            .ok_or_else(|| tera::Error::msg("asset_url needs path=\"file under static/\""))?;
        let key = path.trim_start_matches('/');
        match self.0.get(key) {
            Some(url) => Ok(tera::Value::String(url.clone())),
            None => Err(tera::Error::msg(format!(
                "asset_url: there is no static/{key}"
            ))),
        }
    }

    fn is_safe(&self) -> bool {
        true
    }
}

/// Autoescaping: the bytes `tera::escape_html` makes (`&`, `<`, `>`, `"`, `'` and `/` as
/// entities), each run of plain text between them copied whole. Tera's own pushes the text a
/// character at a time; every value an HTML page prints passes through here (~1% of a cold
/// build's CPU at 10,000 items). The six are ASCII, so every cut falls between characters.
fn escape_html(input: &str) -> String {
    let mut out = String::with_capacity(input.len() + input.len() / 8);
    fencepost_core::text::escape_into(&mut out, input, |b| match b {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&#x27;"),
        b'/' => Some("&#x2F;"),
        _ => None,
    });
    out
}

pub struct Templates {
    pub tera: tera::Tera,
    /// The most bytes a templated file may come to (`build.max_page_bytes`).
    pub max_page_bytes: u64,
    /// Templates that do not load — one that does not parse, and every template that
    /// extends or imports one that does not load — each with why. A page rendered with one
    /// is held (see `HeldPage`); the others load and render as usual.
    pub broken: BTreeMap<String, String>,
    /// This build's images (`resize_image`, Markdown images; see `images.rs`).
    pub(crate) images: std::sync::Arc<crate::images::Session>,
}

pub use fencepost_site::guard::chain;

impl Templates {
    /// Compiles the templates read into `sources` ((name under templates/, text)), with the
    /// function `asset_url(path=...)` answering from `assets` (path under static/ → hashed URL).
    /// A template that does not parse is set aside with its error, and so is every template
    /// that extends or imports it ([`Templates::broken`]): only the pages that use them are
    /// held. A required template that is missing fails the whole build.
    pub fn load(
        root: &Path,
        sources: &[(String, String)],
        assets: &std::collections::BTreeMap<String, String>,
        collections: &Collections,
        (config, public): (&fencepost_config::Config, files::PublicContent),
        image_cache: std::path::PathBuf,
    ) -> Result<Templates, BuildError> {
        let dir = root.join("templates");
        let required = required(collections);
        for name in &required {
            if !sources.iter().any(|(n, _)| n == name) {
                return Err(BuildError::MissingTemplate {
                    name: name.clone(),
                    dir: dir.clone(),
                    required: required.join(", "),
                });
            }
        }
        let broken = broken_of(sources);
        let mut tera = tera::Tera::default();
        let loading = (sources.iter())
            .filter(|(n, _)| !broken.contains_key(n))
            .map(|(n, t)| (n.as_str(), t.as_str()));
        tera.add_raw_templates(loading).map_err(|e| {
            let message = chain(&e);
            // Tera names the template in its message ("Failed to parse 'x.html'").
            let named = sources
                .iter()
                .map(|(n, _)| n)
                .find(|n| message.contains(&format!("'{n}'")));
            BuildError::Template {
                path: named.map_or(dir.clone(), |n| dir.join(n)),
                message,
            }
        })?;
        tera.autoescape_on(vec![".html", ".htm", ".xml"]);
        tera.set_escape_fn(escape_html);
        tera.register_function("asset_url", AssetUrl(assets.clone()));
        let images = crate::images::Session::new(image_cache, &config.images);
        let strings = trans::Strings::load(root, config, &collections.languages);
        files::register(&mut tera, root, strings, public);
        let session = images.clone();
        tera.register_function(
            "resize_image",
            move |a: &std::collections::HashMap<String, tera::Value>| session.resize_image(a),
        );
        // Zola's `markdown` filter, with the site's settings (shortcodes have it too).
        let markdown = fencepost_site::shortcodes::MarkdownFilter(config.markdown);
        tera.register_filter("markdown", markdown);
        guard::secure(&mut tera, &config.security, &config.build);
        Ok(Templates {
            tera,
            broken,
            images,
            max_page_bytes: config.build.max_page_bytes,
        })
    }

    pub fn render(
        &self,
        name: &str,
        ctx: &tera::Context,
        output: &str,
    ) -> Result<String, BuildError> {
        self.render_in(&self.tera, name, ctx, output)
    }

    /// [`Templates::render`] with `tera`, these templates with more functions (Zola's): a
    /// template that does not load answers with why, not as one tera cannot find.
    pub fn render_in(
        &self,
        tera: &tera::Tera,
        name: &str,
        ctx: &tera::Context,
        output: &str,
    ) -> Result<String, BuildError> {
        if let Some(why) = self.broken.get(name) {
            return Err(BuildError::Render {
                template: format!("templates/{name}"),
                output: output.to_string(),
                message: why.clone(),
            });
        }
        render_with(tera, name, ctx, output, self.max_page_bytes)
    }
}

/// The templates of `sources` that cannot load, with why: each that does not parse, then —
/// until none is added — each that extends or imports macros from one that cannot load or
/// that is not there at all. A missing `include` is found when a page renders (tera resolves
/// it then), and holds that page.
pub(crate) fn broken_of(sources: &[(String, String)]) -> BTreeMap<String, String> {
    let mut broken = BTreeMap::new();
    let mut parsed = Vec::new();
    for (name, text) in sources {
        match tera::Template::new(name, None, text) {
            Ok(t) => parsed.push(t),
            Err(e) => {
                broken.insert(name.clone(), format!("templates/{name}: {}", chain(&e)));
            }
        }
    }
    loop {
        let before = broken.len();
        for t in &parsed {
            if broken.contains_key(&t.name) {
                continue;
            }
            let needs = (t.parent.iter())
                .map(|p| ("extends", p))
                .chain(t.imported_macro_files.iter().map(|(f, _)| ("imports", f)));
            for (how, other) in needs {
                let why = match broken.get(other) {
                    Some(why) => format!("it {how} {other}, which does not load: {why}"),
                    None if !sources.iter().any(|(n, _)| n == other) => {
                        format!("it {how} {other}, which is not in templates/")
                    }
                    None => continue,
                };
                broken.insert(t.name.clone(), format!("templates/{}: {why}", t.name));
                break;
            }
        }
        if broken.len() == before {
            return broken;
        }
    }
}

/// Renders template `name` of `tera` into the file `output`, an error naming both.
/// Renders template `name` of `tera` into the file `output`, at most `max` bytes, an error
/// naming both (and the limit, when that stopped it).
fn render_with(
    tera: &tera::Tera,
    name: &str,
    ctx: &tera::Context,
    output: &str,
    max: u64,
) -> Result<String, BuildError> {
    let mut out = guard::Bounded::new(max);
    let err = |message: String| BuildError::Render {
        template: format!("templates/{name}"),
        output: output.to_string(),
        message,
    };
    match tera.render_to(name, ctx, &mut out) {
        Ok(()) => String::from_utf8(out.bytes).map_err(|e| err(e.to_string())),
        Err(_) if out.over => Err(err(format!(
            "the page comes to more than build.max_page_bytes ({max} bytes)"
        ))),
        Err(e) => Err(err(chain(&e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards: autoescaping makes the bytes tera's own escape makes, for every character it
    /// escapes, next to each other, at either end and between multi-byte text.
    #[test]
    fn the_escape_makes_what_teras_makes() {
        let pieces = [
            "&", "<", ">", "\"", "'", "/", "a", "é", "€", "😀", " ", "&amp;", "",
        ];
        let mut inputs = vec![String::new()];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    inputs.push(format!("{a}{b}{c}"));
                }
            }
        }
        inputs.push("<a href=\"/x?a=1&b='2'\">Tom & Jerry — «ok»</a>".repeat(20));
        for input in &inputs {
            assert_eq!(escape_html(input), tera::escape_html(input), "{input:?}");
        }
    }

    /// Guards: the vendored tera (`vendor/tera`, patched to borrow a dotted lookup's names
    /// rather than copy them) still unescapes a name that needs it: a bracketed key holding
    /// `/` (`~1` inside tera), at the root and below it, and `~` (`~0`).
    #[test]
    fn dotted_and_bracketed_lookups_find_their_values() {
        let mut tera = tera::Tera::default();
        let text =
            r#"{{ page.title }}|{{ page["a/b"] }}|{{ page.inner["c/d"] }}|{{ page["e~f"] }}"#;
        tera.add_raw_template("t", text).unwrap();
        let mut c = tera::Context::new();
        let page = serde_json::json!({
            "title": "T", "a/b": "slash", "e~f": "tilde", "inner": {"c/d": "deep"}
        });
        c.insert("page", &page);
        assert_eq!(tera.render("t", &c).unwrap(), "T|slash|deep|tilde");
    }

    /// Guards: a template that does not parse sets aside itself and what extends or imports
    /// it, with the first cause named; the rest load.
    #[test]
    fn a_template_that_does_not_parse_sets_aside_only_what_stands_on_it() {
        let src = |n: &str, t: &str| (n.to_string(), t.to_string());
        let sources = vec![
            src("base.html", "<b>{% block c %}{% endblock c %}</b>"),
            src("broken.html", "{% if %}"),
            src(
                "child.html",
                "{% extends \"broken.html\" %}{% block c %}x{% endblock c %}",
            ),
            src("grandchild.html", "{% extends \"child.html\" %}"),
            src("macros.html", "{% macro m() %}m{% endmacro m %}{{ oops"),
            src("user.html", "{% import \"macros.html\" as x %}{{ x::m() }}"),
            src("orphan.html", "{% extends \"nowhere.html\" %}"),
            src(
                "fine.html",
                "{% extends \"base.html\" %}{% block c %}ok{% endblock c %}",
            ),
        ];
        let broken = broken_of(&sources);
        let names: Vec<&str> = broken.keys().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "broken.html",
                "child.html",
                "grandchild.html",
                "macros.html",
                "orphan.html",
                "user.html"
            ]
        );
        assert!(
            broken["grandchild.html"].contains("extends child.html"),
            "{broken:?}"
        );
        assert!(
            broken["grandchild.html"].contains("templates/broken.html"),
            "{broken:?}"
        );
        assert!(
            broken["orphan.html"].contains("not in templates/"),
            "{broken:?}"
        );
        let mut tera = tera::Tera::default();
        let ok = sources.iter().filter(|(n, _)| !broken.contains_key(n));
        tera.add_raw_templates(ok.map(|(n, t)| (n.as_str(), t.as_str())))
            .unwrap();
        assert_eq!(
            tera.render("fine.html", &tera::Context::new()).unwrap(),
            "<b>ok</b>"
        );
    }
}
