//! `fencepost init DIR`: a new site with a config, templates, a stylesheet and one sample
//! item. The templates are the demo site's own, embedded at compile time.

use crate::clock::Instant;
use crate::config::CONFIG_FILE;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{path} already exists: {dir} is already a fencepost site (nothing was changed)")]
    Exists { path: PathBuf, dir: PathBuf },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

const FILES: &[(&str, &str)] = &[
    (
        "templates/base.html",
        include_str!("../templates/base.html"),
    ),
    (
        "templates/answer.html",
        include_str!("../templates/answer.html"),
    ),
    (
        "templates/index.html",
        include_str!("../templates/index.html"),
    ),
    ("templates/404.html", include_str!("../templates/404.html")),
    (
        "templates/list.html",
        include_str!("../templates/list.html"),
    ),
    (
        "templates/page.html",
        include_str!("../templates/page.html"),
    ),
    ("content/about.md", include_str!("../content/about.md")),
    ("static/style.css", include_str!("../static/style.css")),
    (".gitignore", ".fencepost/\npublic/\n"),
];

fn config_text(title: &str) -> String {
    format!(
        "# fencepost site configuration; every key is optional (see the README).\n\
         title = {title:?}\n\
         base_url = \"http://localhost:8080/\"\n\n\
         [publish]\n\
         # Minutes after the end of an item's day (00:00 UTC) before its answer is published.\n\
         grace_minutes = 10\n\
         lease_secs = 180\n\n\
         [ledger]\n\
         path = \".fencepost/ledger.sqlite\"\n"
    )
}

fn sample_item(now: Instant) -> String {
    let yesterday = now
        .to_datetime()
        .date_naive()
        .pred_opt()
        .unwrap_or_default();
    format!(
        "+++\nid = 1\nday = {yesterday}\ntitle = \"Kirkland Signature rotisserie chicken\"\nprice = 4.99\n+++\n\n\
         The answer was **$4.99**, the same price since 2009.\n\n\
         - Three pounds of chicken\n- Cooked in the store\n"
    )
}

/// Writes a new site into `dir` and returns the files written.
pub fn scaffold(dir: &Path, now: Instant) -> Result<Vec<PathBuf>, InitError> {
    let config = dir.join(CONFIG_FILE);
    if config.exists() {
        return Err(InitError::Exists {
            path: config,
            dir: dir.to_path_buf(),
        });
    }
    let title = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fencepost site".into());
    let mut files: Vec<(String, String)> = FILES
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    files.push(("content/answers/1.md".into(), sample_item(now)));
    // The config goes last: a half-written scaffold is not yet a site, and init can run again.
    files.push((CONFIG_FILE.into(), config_text(&title)));
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = dir.join(&rel);
        if path.exists() {
            continue;
        }
        let write = || -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, &text)
        };
        write().map_err(|source| InitError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
