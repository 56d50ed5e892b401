//! Markdown images in a page's body: each `<img>` whose source is an image of the revision
//! (`static/`, the image store, the page's bundle) gets its intrinsic `width` and `height`
//! (the browser keeps its place: no layout shift), and — where `[images] widths` asks —
//! a `srcset` of processed versions, in a `<picture>` with a `<source>` per format of
//! `[images] formats`; the original stays the `src`, the fallback.
//!
//! An `<img>` that says its own `width`, `height` or `srcset` is left as written, and so is one
//! inside a `<picture>` (the author chose). One whose source is not a file of the revision
//! (another site's, an embargoed page's) is left alone and tells nothing about it.

use super::{Failed, Session};
use fencepost_images::{Format, Meta, Operation, Output};
use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// `html`, the body of the page at site URL `page_url` (`/posts/a/`), with its images sized
/// and given their processed versions.
pub(crate) fn in_body<'h>(
    session: &Session,
    html: &'h str,
    page_url: &str,
) -> Result<Cow<'h, str>, Failed> {
    if !html.contains("<img") {
        return Ok(Cow::Borrowed(html));
    }
    use lol_html::{element, html_content::ContentType, rewrite_str, RewriteStrSettings};
    let failed: RefCell<Option<Failed>> = RefCell::new(None);
    let in_picture = Arc::new(AtomicU32::new(0));
    let depth = in_picture.clone();
    let settings = RewriteStrSettings {
        element_content_handlers: vec![
            element!("picture", move |el| {
                depth.fetch_add(1, Ordering::Relaxed);
                let depth = depth.clone();
                if let Some(handlers) = el.end_tag_handlers() {
                    let closed: lol_html::EndTagHandler<'static> = Box::new(move |_| {
                        depth.fetch_sub(1, Ordering::Relaxed);
                        Ok(())
                    });
                    handlers.push(closed);
                }
                Ok(())
            }),
            element!("img[src]", |el| {
                let written = ["width", "height", "srcset"]
                    .iter()
                    .any(|a| el.has_attribute(a));
                if written || in_picture.load(Ordering::Relaxed) > 0 || failed.borrow().is_some() {
                    return Ok(());
                }
                let src = el.get_attribute("src").unwrap_or_default();
                let Some(rel) = revision_path(&src, page_url) else {
                    return Ok(());
                };
                match session.sized(&rel, &src) {
                    Ok(Some(sized)) => {
                        el.set_attribute("width", &sized.width.to_string())?;
                        el.set_attribute("height", &sized.height.to_string())?;
                        if let Some((srcset, sizes)) = &sized.own {
                            el.set_attribute("srcset", srcset)?;
                            el.set_attribute("sizes", sizes)?;
                        }
                        if !sized.sources.is_empty() {
                            el.before(&format!("<picture>{}", sized.sources), ContentType::Html);
                            el.after("</picture>", ContentType::Html);
                        }
                    }
                    Ok(None) => {}
                    Err(f) => *failed.borrow_mut() = Some(f),
                }
                Ok(())
            }),
        ],
        ..RewriteStrSettings::new()
    };
    let out = rewrite_str(html, settings);
    if let Some(f) = failed.into_inner() {
        return Err(f);
    }
    Ok(out.map_or(Cow::Borrowed(html), Cow::Owned))
}

/// The path in the revision an `<img src>` names, as the build reads a page's links
/// (`links::link_of`: query and fragment dropped, relative to the page's folder, `..`
/// stopping at the root), or `None` for another site's or a `data:` URL.
fn revision_path(src: &str, page_url: &str) -> Option<String> {
    let folder = page_url.rsplit_once('/').map_or("/", |(d, _)| d);
    let mut links = Vec::new();
    crate::links::link_of(src, Some(&format!("{folder}/")), "", &mut links);
    let path = links.pop()?.trim_start_matches('/').to_string();
    (!path.is_empty() && !path.ends_with('/')).then_some(path)
}

/// What an `<img>` gets: its size, its own `srcset` and `sizes`, and the `<source>`s of a
/// `<picture>` around it.
pub(super) struct Sized {
    width: u32,
    height: u32,
    own: Option<(String, String)>,
    sources: String,
}

impl Session {
    /// The image at revision path `rel` (written `src` in the page) sized, its versions
    /// planned (made when the page is done). `None`: no image of the revision, or one whose
    /// header cannot be read while no versions are asked for (it is served as it is).
    fn sized(&self, rel: &str, src: &str) -> Result<Option<Sized>, Failed> {
        let fail = |why: String| Failed {
            source: rel.to_string(),
            why,
        };
        let found = match self.find_in_revision(rel) {
            Ok(f) => f,
            Err(e) if self.config.widths.is_empty() => {
                tracing::warn!(image = rel, error = %e, "a Markdown image left as written");
                None
            }
            Err(e) => return Err(fail(e.to_string())),
        };
        let Some(meta) = found else {
            return Ok(None);
        };
        let mut sized = Sized {
            width: meta.width,
            height: meta.height,
            own: None,
            sources: String::new(),
        };
        let widths = self.widths_for(&meta);
        if widths.is_empty() {
            return Ok(Some(sized));
        }
        let largest = *widths.last().expect("not empty");
        let sizes = (self.config.sizes.clone())
            .unwrap_or_else(|| format!("(max-width: {largest}px) 100vw, {largest}px"));
        let set = |format_name: &str| -> Result<String, Failed> {
            let mut parts = Vec::new();
            for &w in &widths {
                if w == meta.width && format_name == "auto" {
                    parts.push(format!("{src} {w}w"));
                    continue;
                }
                let (out, _) = (self
                    .want(rel, Operation::FitWidth(w), |m| self.format(format_name, m)))
                .map_err(|e| fail(e.to_string()))?
                .ok_or_else(|| fail("it is no longer in the revision".into()))?;
                parts.push(format!("{} {w}w", url(&out)));
            }
            Ok(parts.join(", "))
        };
        if self.config.formats.is_empty() {
            sized.own = Some((set("auto")?, sizes));
            return Ok(Some(sized));
        }
        for f in &self.config.formats {
            let mime = self
                .format(f, &meta)
                .map_err(|e| fail(e.to_string()))?
                .mime();
            sized.sources.push_str(&format!(
                "<source type=\"{mime}\" srcset=\"{}\" sizes=\"{}\">",
                set(f)?,
                sizes
            ));
        }
        Ok(Some(sized))
    }

    /// The widths an image of `meta` is offered at: each of `[images] widths` narrower than
    /// it, and its own width when a wider one is asked for (never enlarged).
    fn widths_for(&self, meta: &Meta) -> Vec<u32> {
        let mut w: Vec<u32> = (self.config.widths.iter())
            .map(|&w| w.min(meta.width))
            .collect();
        w.sort_unstable();
        w.dedup();
        w
    }

    /// Format `name` (`auto`: the source's own kind) at the site's quality and speed.
    fn format(&self, name: &str, meta: &Meta) -> Result<Format, fencepost_images::ImageError> {
        let q = self.config.quality;
        let quality = match name {
            "png" => None,
            _ => Some(q),
        };
        Format::from_args(
            name,
            meta.kind.lossy(),
            quality,
            Some(self.config.avif_speed),
        )
    }
}

/// An output's URL.
fn url(out: &Output) -> String {
    format!("/{}/{}", fencepost_images::OUTPUT_DIR, out.name)
}

#[cfg(test)]
mod tests {
    use super::revision_path;

    /// Guards: an `<img src>` resolves as a browser resolves it against its page; another
    /// site's, a data URL and a path above the root resolve to no file of the revision.
    #[test]
    fn sources_resolve_against_their_page() {
        let r = |s: &str| revision_path(s, "/posts/a/");
        assert_eq!(r("p.jpg").as_deref(), Some("posts/a/p.jpg"));
        assert_eq!(r("./img/p.jpg?x=1").as_deref(), Some("posts/a/img/p.jpg"));
        assert_eq!(r("../b/p.jpg").as_deref(), Some("posts/b/p.jpg"));
        assert_eq!(r("/img/p.jpg#f").as_deref(), Some("img/p.jpg"));
        assert_eq!(r("../../../../etc/p.jpg").as_deref(), Some("etc/p.jpg"));
        assert_eq!(r("https://x.org/p.jpg"), None);
        assert_eq!(r("//x.org/p.jpg"), None);
        assert_eq!(r("data:image/png;base64,AA"), None);
    }
}
