//! Sass compiled as Zola compiles it (`[build] compile_sass = true`): every `sass/**/*.scss`
//! and `*.sass` whose name does not start with `_` becomes the CSS file at the same path
//! (`sass/css/site.scss` → `/css/site.css`), compressed, beside the static files — in the
//! revision's fingerprint like them (a style change makes a new build of the revision and
//! re-renders only what links the file by `asset_url`), and hashable by `asset_url` too.
//!
//! **The adversary is a theme's author** (a theme is third-party code a site imports): a
//! stylesheet that reaches for the runner's files, or one that never ends. Sass reads only
//! under `sass/` — every `@use`, `@import` and `@forward` goes through a file system that
//! refuses a path outside it once links are resolved (`/home/runner/.aws/credentials`,
//! `../../fencepost.toml`), so nothing of the machine reaches a public stylesheet. A compile
//! that takes longer than `build.sass_timeout_secs` (30) is given up: the stylesheet is left
//! out, named, and the build goes on. A stylesheet that fails (a syntax error, an import
//! refused) is left out of the revision with the compiler's message — file, line, column —
//! and only it: every other file goes live (exit status 3, as for a held page). Results are
//! kept per source digest for the life of the process, so `fencepost run` compiles a
//! stylesheet again only when `sass/` changed (and a stuck compile is one thread, once).
//!
//! **Chosen**: `grass`, a pure-Rust Sass compiler that follows dart-sass (Zola's own choice;
//! both syntaxes). **Rejected**: calling `sass`/`dart-sass` (a Node or Dart runtime on every
//! runner), `rsass` (less complete). **Not bounded**: the memory one compile may take; a
//! stylesheet built to exhaust it stops the process as it would stop Zola's.

use super::page::{CopyInput, CopySource};
use super::report::LeftOut;
use fencepost_site::Site;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The folder Sass sources live in, under the site's root.
pub const DIR: &str = "sass";

/// One stylesheet's outcome: its CSS, or why there is none.
type Outcome = Result<Arc<Vec<u8>>, String>;

/// Outcomes by (entry path, digest of every file under `sass/`), for the process's life.
fn cache() -> &'static Mutex<HashMap<(String, String), Outcome>> {
    static CACHE: OnceLock<Mutex<HashMap<(String, String), Outcome>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The site's compiled stylesheets as static files, and those left out with why. Nothing
/// when `compile_sass` is off or there is no `sass/`. A compiled file whose path a file of
/// `static/` already has is left out (the static file is the one served), named.
pub fn compile(site: &Site, statics: &[CopyInput]) -> (Vec<CopyInput>, Vec<LeftOut>) {
    let dir = site.root.join(DIR);
    if !site.config.build.compile_sass || !dir.is_dir() {
        return (Vec::new(), Vec::new());
    }
    let files = match sources(&dir) {
        Ok(f) => f,
        Err(why) => return (Vec::new(), vec![left_out(DIR.into(), None, why)]),
    };
    let digest = digest_of(&files);
    let timeout = Duration::from_secs(site.config.build.sass_timeout_secs);
    let mut out = Vec::new();
    let mut left = Vec::new();
    for (rel, _) in files.iter().filter(|(rel, _)| is_entry(rel)) {
        let css = css_path(rel);
        let what = format!("{DIR}/{rel}");
        if statics.iter().any(|s| s.path == css) {
            let why = format!("static/{css} is at the path this stylesheet compiles to: the static file is served; rename one of them");
            left.push(left_out(what, Some(css), why));
            continue;
        }
        match compiled(&dir, rel, &digest, timeout) {
            Ok(bytes) => out.push(CopyInput {
                path: css,
                sha256: fencepost_core::digest::sha256_hex(&bytes),
                source: CopySource::Bytes(bytes),
                immutable_url: false,
            }),
            Err(why) => {
                tracing::error!(stylesheet = %what, why = %why, "left out of this revision");
                left.push(left_out(what, Some(css), why));
            }
        }
    }
    (out, left)
}

fn left_out(what: String, path: Option<String>, why: String) -> LeftOut {
    LeftOut { what, path, why }
}

/// Every file under `dir` as (path relative to it, bytes), sorted.
fn sources(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e.map_err(|e| e.to_string())?;
        if !e.file_type().is_file() {
            continue;
        }
        let rel = e.path().strip_prefix(dir).map_err(|e| e.to_string())?;
        let rel = rel
            .to_str()
            .ok_or("a file name that is not UTF-8")?
            .to_string();
        let bytes = std::fs::read(e.path()).map_err(|e| format!("{}: {e}", e.to_string()))?;
        out.push((rel.replace('\\', "/"), bytes));
    }
    Ok(out)
}

/// A stylesheet Zola compiles: `.scss` or `.sass`, its name not starting with `_` (a partial).
fn is_entry(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    !name.starts_with('_') && (name.ends_with(".scss") || name.ends_with(".sass"))
}

/// `css/site.scss` → `css/site.css`.
fn css_path(rel: &str) -> String {
    let stem = rel.rsplit_once('.').map_or(rel, |(s, _)| s);
    format!("{stem}.css")
}

fn digest_of(files: &[(String, Vec<u8>)]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (rel, bytes) in files {
        h.update(rel.as_bytes());
        h.update([0]);
        h.update(fencepost_core::digest::sha256_hex(bytes).as_bytes());
    }
    hex::encode(h.finalize())
}

/// `rel`'s CSS, from the cache or compiled on a thread of its own within `timeout`.
fn compiled(dir: &Path, rel: &str, digest: &str, timeout: Duration) -> Outcome {
    let key = (rel.to_string(), digest.to_string());
    if let Some(done) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return done;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (root, entry) = (dir.to_path_buf(), dir.join(rel));
    std::thread::Builder::new()
        .name("sass".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(run_grass(&root, &entry));
        })
        .map_err(|e| e.to_string())?;
    let done = match rx.recv_timeout(timeout) {
        Ok(r) => r,
        Err(_) => Err(format!(
            "the compile took more than {} s (build.sass_timeout_secs): given up",
            timeout.as_secs()
        )),
    };
    if let Ok(mut c) = cache().lock() {
        c.insert(key, done.clone());
    }
    done
}

fn run_grass(root: &Path, entry: &Path) -> Outcome {
    let fs = Confined::new(root);
    let options = grass::Options::default()
        .fs(&fs)
        .style(grass::OutputStyle::Compressed)
        .load_path(root)
        .quiet(true);
    let path = entry.to_str().ok_or("a path that is not UTF-8")?;
    grass::from_path(path, &options)
        .map(|css| Arc::new(css.into_bytes()))
        .map_err(|e| e.to_string())
}

/// The file system Sass sees: `sass/` and nothing else, links resolved before the check.
#[derive(Debug)]
struct Confined {
    root: PathBuf,
}

impl Confined {
    fn new(root: &Path) -> Confined {
        Confined {
            root: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
        }
    }

    /// `path` resolved, when it lies under the root.
    fn inside(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path)
            .ok()
            .filter(|p| p.starts_with(&self.root))
    }
}

impl grass::Fs for Confined {
    fn is_dir(&self, path: &Path) -> bool {
        self.inside(path).is_some_and(|p| p.is_dir())
    }

    fn is_file(&self, path: &Path) -> bool {
        self.inside(path).is_some_and(|p| p.is_file())
    }

    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        match self.inside(path) {
            Some(p) => std::fs::read(p),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is outside sass/: a stylesheet reads only the site's sass/ folder",
                    path.display()
                ),
            )),
        }
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_and_their_css_paths_are_zolas() {
        assert!(is_entry("site.scss") && is_entry("css/a.sass"));
        assert!(!is_entry("_vars.scss") && !is_entry("css/_mixins.scss") && !is_entry("a.css"));
        assert_eq!(css_path("css/site.scss"), "css/site.css");
        assert_eq!(css_path("a.b.sass"), "a.b.css");
    }

    #[test]
    fn a_stylesheet_reads_nothing_outside_sass() {
        let tmp = tempfile::tempdir().unwrap();
        let sass = tmp.path().join("sass");
        std::fs::create_dir_all(&sass).unwrap();
        std::fs::write(tmp.path().join("secret.scss"), "a { content: \"SECRET\"; }").unwrap();
        std::fs::write(sass.join("_ok.scss"), "$c: red;").unwrap();
        std::fs::write(sass.join("good.scss"), "@use \"ok\"; b { color: ok.$c; }").unwrap();
        std::fs::write(sass.join("bad.scss"), "@import \"../secret\";").unwrap();
        let good = run_grass(&sass, &sass.join("good.scss")).unwrap();
        assert_eq!(String::from_utf8_lossy(&good), "b{color:red}");
        let bad = run_grass(&sass, &sass.join("bad.scss")).unwrap_err();
        assert!(!bad.contains("SECRET"), "{bad}");
    }
}
