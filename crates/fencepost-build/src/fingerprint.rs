//! The build fingerprint B: a short hash of everything a build reads besides the ledger —
//! templates, static files, plain pages, the config and the fencepost version. Output for
//! publication revision R goes to `revisions/<R>-<B>/`, so a template change with no new
//! publication still gets a new directory (and new cache keys).

use super::report::BuildError;
use fencepost_site::Site;
use sha2::{Digest, Sha256};
use std::path::Path;

/// Bumped when the output layout changes in a way the version number would not show.
const LAYOUT: &str = "fencepost-layout-1";

/// Which hidden entries a listing keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    /// Skip every name starting with `.` (templates).
    Skip,
    /// Keep dotfiles and dot-folders such as `.well-known/` (static files), but never
    /// version-control folders or editor temporary files.
    Keep,
}

/// Files of `dir` (recursively), as sorted site-relative paths. A name that is not UTF-8 or
/// holds a backslash is refused with its own path: it cannot be given a URL faithfully.
pub fn list_files(root: &Path, dir: &str, hidden: Hidden) -> Result<Vec<String>, BuildError> {
    let base = root.join(dir);
    if !base.exists() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let walk = walkdir::WalkDir::new(&base)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    let keep = |e: &walkdir::DirEntry| {
        let name = e.file_name().to_string_lossy();
        match hidden {
            Hidden::Skip => !name.starts_with('.'),
            Hidden::Keep => {
                !fencepost_site::content::is_editor_temp(&name)
                    && ![".git", ".hg", ".svn", ".DS_Store"].contains(&name.as_ref())
            }
        }
    };
    for entry in walk.filter_entry(keep) {
        let entry = entry.map_err(|e| {
            let (path, source) = fencepost_site::content::walk_error(e, &base);
            BuildError::Io { path, source }
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name();
        let bad = |why: &str| BuildError::Input {
            path: entry.path().to_path_buf(),
            why: format!("{why}; rename it"),
        };
        match name.to_str() {
            None => return Err(bad("the file name is not valid UTF-8")),
            Some(n) if n.contains('\\') => {
                return Err(bad(
                    "the file name contains a backslash, which no URL can name",
                ))
            }
            Some(_) => {}
        }
        if entry
            .path()
            .strip_prefix(root)
            .is_ok_and(|r| r.to_str().is_none())
        {
            return Err(bad("a folder on its path is not valid UTF-8"));
        }
        out.push(fencepost_site::content::relative(root, entry.path()));
    }
    Ok(out)
}

/// Plain pages: `content/*.md` (not the answers folder).
pub fn plain_page_files(root: &Path) -> Result<Vec<String>, BuildError> {
    let dir = root.join("content");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| BuildError::Io {
            path: dir.clone(),
            source,
        })?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md")
            && !name.starts_with('.')
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            out.push(format!("content/{name}"));
        }
    }
    out.sort();
    Ok(out)
}

/// The site's own files a build reads besides the ledger and `static/`, each read once: the
/// fingerprint and the render both use these very texts, so a file saved during a build can
/// never make the directory name describe other bytes than the ones rendered.
pub struct SiteFiles {
    /// (name under templates/, text)
    pub templates: Vec<(String, String)>,
    /// (site-relative path, text) of the plain pages `content/*.md`
    pub plain: Vec<(String, String)>,
    /// (site-relative path, text) of the collections' list texts (`list_text`) that exist.
    pub list_texts: Vec<(String, String)>,
    /// (site-relative path, SHA-256) of every file under `data/` and `i18n/`: what `load_data` may read
    /// besides `static/` (`templates/files.rs`).
    pub data: Vec<(String, String)>,
}

impl SiteFiles {
    pub fn read(site: &Site) -> Result<SiteFiles, BuildError> {
        let read = |rel: String| -> Result<(String, String), BuildError> {
            let path = site.root.join(&rel);
            let bytes = fencepost_site::images::read_regular(
                &path,
                site.config.publish.max_item_bytes,
                "publish.max_item_bytes",
            )
            .map_err(|why| BuildError::Input {
                path: path.clone(),
                why,
            })?;
            let text = String::from_utf8(bytes).map_err(|_| BuildError::Input {
                path,
                why: "is not UTF-8".into(),
            })?;
            Ok((rel, text))
        };
        let templates = list_files(&site.root, "templates", Hidden::Skip)?
            .into_iter()
            .map(|rel| {
                read(rel).map(|(rel, t)| (rel.trim_start_matches("templates/").to_string(), t))
            })
            .collect::<Result<_, _>>()?;
        let plain = plain_page_files(&site.root)?
            .into_iter()
            .map(read)
            .collect::<Result<_, _>>()?;
        let list_texts = site
            .collections
            .list
            .iter()
            .filter_map(|c| Some(format!("content/{}/{}", c.dir, c.list_text.as_ref()?)))
            .filter(|rel| site.root.join(rel).is_file())
            .map(read)
            .collect::<Result<_, _>>()?;
        let mut data = list_files(&site.root, "data", Hidden::Skip)?;
        data.extend(list_files(&site.root, "i18n", Hidden::Skip)?);
        let data = data
            .into_iter()
            .map(|rel| {
                let bytes = std::fs::read(site.root.join(&rel)).unwrap_or_default();
                (rel, fencepost_core::digest::sha256_hex(&bytes))
            })
            .collect();
        Ok(SiteFiles {
            templates,
            plain,
            list_texts,
            data,
        })
    }
}

/// The two fingerprints of a build.
pub struct Fingerprints {
    /// B: everything a build reads besides the ledger (names the revision directory).
    pub whole: String,
    /// What every templated page depends on: templates, the assets they link, config,
    /// version. Part of each page's reuse key, so a change to another static file or a plain
    /// page re-renders only itself.
    pub render: String,
    /// What the generated files (feed, sitemaps, robots.txt) depend on: config and version.
    pub generated: String,
}

/// Static files that templates link by a content-hashed URL (`{{ asset_url(path="x.css") }}`):
/// `static/css/site.css` is also written as `css/site.<16 hex of its sha256>.css`, which every
/// cache may keep for a year, since a new version gets a new name.
#[derive(Debug, Clone, Default)]
pub struct Assets {
    /// path under static/ → the hashed URL (`/css/site.0123456789abcdef.css`)
    pub urls: std::collections::BTreeMap<String, String>,
    /// The hashed copies to write.
    pub copies: Vec<super::page::CopyInput>,
}

/// The hashed name of a static file: its sha256's first 16 hex digits before the extension.
pub fn hashed_path(path: &str, sha256: &str) -> String {
    let (dir, name) = path.rsplit_once('/').map_or(("", path), |(d, n)| (d, n));
    let hashed = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}.{}.{ext}", &sha256[..16]),
        _ => format!("{name}.{}", &sha256[..16]),
    };
    if dir.is_empty() {
        hashed
    } else {
        format!("{dir}/{hashed}")
    }
}

/// Which static files the templates link with `asset_url`: the literal `path` arguments found
/// in their text. A call whose argument is not a string literal could name any file, so then
/// every static file gets its hashed copy. Only these files' hashes enter the render
/// fingerprint: editing a stylesheet the templates link re-renders the pages (their links
/// change), editing any other static file re-renders only that file.
pub fn referenced_assets(
    templates: &[(String, String)],
    statics: &[super::page::CopyInput],
) -> Assets {
    let mut wanted: std::collections::BTreeSet<String> = Default::default();
    let mut all = false;
    for (_, text) in templates {
        for (at, _) in text.match_indices("asset_url(") {
            match literal_path_arg(&text[at + "asset_url(".len()..]) {
                Some(p) => {
                    wanted.insert(p.trim_start_matches('/').to_string());
                }
                None => all = true,
            }
        }
    }
    let mut assets = Assets::default();
    for c in statics {
        if !(all || wanted.contains(&c.path)) {
            continue;
        }
        let hashed = hashed_path(&c.path, &c.sha256);
        assets.urls.insert(c.path.clone(), format!("/{hashed}"));
        assets.copies.push(super::page::CopyInput {
            path: hashed,
            source: c.source.clone(),
            sha256: c.sha256.clone(),
            immutable_url: true,
        });
    }
    assets
}

/// `path="x.css"` or `path='x.css'` at the start of a call's arguments.
fn literal_path_arg(args: &str) -> Option<&str> {
    let rest = args.trim_start().strip_prefix("path")?.trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &rest[1..];
    let end = rest.find(quote)?;
    let after = rest[end + 1..].trim_start();
    (after.starts_with(')') || after.starts_with(',')).then_some(&rest[..end])
}

/// Whether a static file is an image a Markdown `<img>` may be sized from.
fn is_image(path: &str) -> bool {
    let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    ["jpg", "jpeg", "png", "gif", "webp", "avif", "bmp"].contains(&ext.as_str())
}

/// `statics`: the static files, already read and hashed (see `build::static_copies`).
pub fn compute(
    site: &Site,
    files: &SiteFiles,
    statics: &[super::page::CopyInput],
    assets: &Assets,
) -> Fingerprints {
    let mut h = Sha256::new();
    h.update(LAYOUT);
    h.update(env!("CARGO_PKG_VERSION"));
    h.update(&site.config_hash);
    let generated = hex::encode(h.clone().finalize());
    hash_texts(&mut h, &files.templates);
    // What `get_env` may read shows in pages: a change of it re-renders them.
    hash_texts(
        &mut h,
        &super::templates::readable_values(&site.config.security),
    );
    for (path, url) in &assets.urls {
        h.update(path.len().to_le_bytes());
        h.update(path.as_bytes());
        h.update(url.as_bytes());
    }
    // Templates that read the site's files (`load_data`, `get_hash`) show what those files
    // hold: every file they may read is then part of every page's render key.
    let reads = |t: &String| {
        super::templates::files::READERS
            .iter()
            .any(|f| t.contains(f))
    };
    // A Markdown image of `static/` gets its width, height and versions from the file: a
    // static image changed re-renders the pages (which may show it).
    h.update(b"static-images");
    for c in statics.iter().filter(|c| is_image(&c.path)) {
        h.update(c.path.len().to_le_bytes());
        h.update(c.path.as_bytes());
        h.update(c.sha256.as_bytes());
    }
    if files.templates.iter().any(|(_, t)| reads(t)) {
        h.update(b"reads-files");
        for c in statics {
            h.update(c.path.len().to_le_bytes());
            h.update(c.path.as_bytes());
            h.update(c.sha256.as_bytes());
        }
        hash_texts(&mut h, &files.data);
    }
    let render = hex::encode(h.finalize());
    let mut h = Sha256::new();
    h.update(&render);
    for c in statics {
        h.update(c.path.len().to_le_bytes());
        h.update(c.path.as_bytes());
        h.update(c.sha256.as_bytes());
    }
    hash_texts(&mut h, &files.plain);
    hash_texts(&mut h, &files.list_texts);
    Fingerprints {
        whole: hex::encode(h.finalize())[..10].to_string(),
        render,
        generated,
    }
}

fn hash_texts(h: &mut Sha256, files: &[(String, String)]) {
    for (name, text) in files {
        h.update(name.len().to_le_bytes());
        h.update(name.as_bytes());
        h.update(text.len().to_le_bytes());
        h.update(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{CopyInput, CopySource};
    use std::sync::Arc;

    fn copy(path: &str, sha: &str) -> CopyInput {
        CopyInput {
            path: path.into(),
            source: CopySource::Bytes(Arc::new(Vec::new())),
            sha256: sha.into(),
            immutable_url: false,
        }
    }

    #[test]
    fn hashed_names_keep_the_folder_and_extension() {
        let sha = "0123456789abcdef0123";
        assert_eq!(hashed_path("style.css", sha), "style.0123456789abcdef.css");
        assert_eq!(
            hashed_path("css/site.min.css", sha),
            "css/site.min.0123456789abcdef.css"
        );
        assert_eq!(hashed_path("LICENSE", sha), "LICENSE.0123456789abcdef");
        assert_eq!(hashed_path(".htaccess", sha), ".htaccess.0123456789abcdef");
    }

    #[test]
    fn only_literally_referenced_assets_are_hashed_unless_a_call_is_dynamic() {
        let statics = [
            copy("style.css", &"a".repeat(64)),
            copy("x.js", &"b".repeat(64)),
        ];
        let t = |text: &str| vec![("base.html".to_string(), text.to_string())];
        let a = referenced_assets(
            &t(r#"<link href="{{ asset_url(path="style.css") }}">"#),
            &statics,
        );
        assert_eq!(a.urls.keys().collect::<Vec<_>>(), ["style.css"]);
        assert_eq!(a.copies[0].path, "style.aaaaaaaaaaaaaaaa.css");
        assert!(a.copies[0].immutable_url);
        let a = referenced_assets(&t("{{ asset_url( path = '/x.js' ) }}"), &statics);
        assert_eq!(a.urls.keys().collect::<Vec<_>>(), ["x.js"]);
        let a = referenced_assets(&t("{{ asset_url(path=name) }}"), &statics);
        assert_eq!(a.urls.len(), 2);
        assert!(referenced_assets(&t("no calls"), &statics).urls.is_empty());
    }
}
