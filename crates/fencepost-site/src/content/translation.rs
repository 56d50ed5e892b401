//! Translations' files (docs/languages.md): where a translation's original is, and what it
//! takes from it.
//!
//! A translation without an instant of its own (no `publish_at`, no `day`) goes public at its
//! original's: it inherits them, read from the original's front matter. So a translation is
//! listed with its original's stat folded into its own — an edit that moves the original's
//! instant re-reads the translation too (as a bundle's resources are folded into its
//! `index.md`). A translation whose original is missing or unreadable, and that gives no
//! instant, is a broken file of its own: it holds only itself.

use super::split_front_matter;
use fencepost_config::collections::{Collection, Collections};
use fencepost_core::clock::Instant;
use fencepost_core::item::FileStat;
use std::path::Path;

/// What a translation takes from its original when its front matter gives no instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Inherited {
    pub day: Option<chrono::NaiveDate>,
    pub publish_at: Option<Instant>,
}

/// The site-relative path of the original of translation file `rel` of `coll`
/// (`content/posts/hello.fr.md` → `content/posts/hello.md`; with a language folder,
/// `content/fr/posts/hello.md` → `content/posts/hello.md`). None for an original.
pub fn original_path(collections: &Collections, coll: &Collection, rel: &str) -> Option<String> {
    let orig = collections.get(coll.original.as_deref()?)?;
    match coll.beside {
        true => {
            let (dir, name) = rel.rsplit_once('/')?;
            let (_, original) = collections.languages.of_file_name(name)?;
            Some(format!("{dir}/{original}"))
        }
        false => {
            let under = rel.strip_prefix(&format!("content/{}/", coll.dir))?;
            Some(format!("content/{}/{under}", orig.dir))
        }
    }
}

/// The instant keys of the original's front matter (`day`, `publish_at`), as the
/// translation's collection reads them; none when the original is missing or unreadable.
pub fn inherited(root: &Path, original: &str, coll: &Collection) -> Inherited {
    let Ok(text) = std::fs::read_to_string(root.join(original)) else {
        return Inherited::default();
    };
    let Some(table) = split_front_matter(&text)
        .ok()
        .and_then(|s| super::front_matter_table(s.front_matter?, s.format).ok())
    else {
        return Inherited::default();
    };
    let publish_at = (table.get("publish_at"))
        .and_then(|v| super::fields::parse_instant_local(v, coll.timezone).ok());
    let day = (table.get("day")).and_then(|v| super::fields::parse_date(v).ok());
    Inherited { day, publish_at }
}

/// `stat` with the original's folded in (its size added, the later change kept), so an edit
/// of the original re-reads the translation.
pub fn with_original(root: &Path, original: &str, stat: FileStat) -> FileStat {
    match std::fs::metadata(root.join(original)) {
        Ok(m) => {
            let o = FileStat::of(&m);
            FileStat {
                size: stat.size + o.size,
                changed_ns: stat.changed_ns.max(o.changed_ns),
                ino: stat.ino,
            }
        }
        Err(_) => stat,
    }
}
