//! The new site on disk: written whole into a folder beside DST, then renamed into place.

use super::plan::{ImportError, Plan};
use std::path::Path;

/// DST must be absent or an empty folder: an import never mixes into an existing site.
pub(super) fn refuse_non_empty(dst: &Path) -> Result<(), ImportError> {
    match std::fs::read_dir(dst).map(|mut e| e.next().is_some()) {
        Ok(true) => Err(ImportError::NotEmpty {
            path: dst.to_path_buf(),
        }),
        Ok(false) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ImportError::Read {
            path: dst.to_path_buf(),
            source,
        }),
    }
}

/// The posts starter's templates and stylesheet (the source's own templates cannot be
/// ported), where the plan has no file of that name; and the `.gitignore`.
pub(super) fn starter_files(plan: &mut Plan) {
    // A Zola site's own templates were kept: no starter template goes beside them.
    let kept = plan.files.iter().any(|(p, b)| {
        p == "fencepost.toml" && String::from_utf8_lossy(b).contains("templates = \"zola\"")
    });
    if kept {
        if plan.report.starter.is_empty() {
            plan.report.starter = "kept".into();
        }
        if !plan.files.iter().any(|(p, _)| p == ".gitignore") {
            plan.put(".gitignore", ".fencepost/\npublic/\n");
        }
        return;
    }
    plan.report.starter = "posts".into();
    plan.put(
        "templates/index.html",
        include_str!("../../../starters/import/templates/index.html"),
    );
    // An item page that needs no declared field (`description` is under [extra]).
    plan.put(
        "templates/post.html",
        include_str!("../../../starters/import/templates/post.html"),
    );
    // The starter's header links `/about/`: only where the import wrote an about page.
    let has_about = plan
        .files
        .iter()
        .any(|(p, _)| p == "content/about.md" || p.starts_with("static/about/index.htm"));
    for (rel, text) in fencepost_site::init::STARTER_COMMON
        .iter()
        .chain(fencepost_site::init::POSTS)
    {
        let starter_page = rel.starts_with("content/");
        if !starter_page && !plan.files.iter().any(|(p, _)| p == rel) {
            let text = match (*rel == "templates/base.html", has_about) {
                (true, false) => text.replace(r#" · <a href="/about/">About</a>"#, ""),
                _ => text.to_string(),
            };
            plan.put(rel, text.as_bytes());
        }
    }
    // The stylesheet of highlighted code blocks the starter's base template links.
    if !plan.files.iter().any(|(p, _)| p == "static/highlight.css") {
        plan.put(
            "static/highlight.css",
            fencepost_site::markdown::highlight_css(),
        );
    }
}

/// Writes every file into a fresh folder beside `dst`, then renames it to `dst`.
pub(super) fn all(dst: &Path, files: &[(String, Vec<u8>)]) -> Result<(), ImportError> {
    let parent = match dst.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = dst.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = parent.join(format!(
        ".{}.import-{}",
        name.unwrap_or_default(),
        uuid::Uuid::new_v4().simple()
    ));
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ImportError::Write { path, source }
    };
    let written = (|| {
        for (rel, bytes) in files {
            let to = tmp.join(rel);
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir).map_err(err(dir))?;
            }
            std::fs::write(&to, bytes).map_err(err(&to))?;
        }
        if dst.exists() {
            // Empty (checked before): a folder the user made for the site.
            std::fs::remove_dir(dst).map_err(err(dst))?;
        }
        std::fs::rename(&tmp, dst).map_err(err(dst))
    })();
    if written.is_err() {
        std::fs::remove_dir_all(&tmp).ok();
    }
    written
}
