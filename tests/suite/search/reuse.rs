//! Costs what changed: a revision's index links every file the previous one has with the
//! same bytes, and one new post writes only its fragment, the chunks its words are in, the
//! meta file and the entry.
use super::*;
use std::os::unix::fs::MetadataExt;

/// The index's files of revision `dir`, by path under it, with their inode.
fn index_files(dir: &Path) -> Vec<(String, u64)> {
    let root = dir.join("pagefind");
    (walkdir::WalkDir::new(&root).into_iter().flatten())
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, e.metadata().unwrap().ino())
        })
        .collect()
}

/// Guards: issue 82 (point 4). Thirty posts, then one more: every fragment of the thirty and
/// the runtime are the previous revision's files (hard links), the new files are the new
/// post's fragment, the chunks, the meta file and the entry; pages are not read again (the
/// build's log says how many were). The new post is found, the others still are; an edited
/// post is found by its new words only.
#[test]
fn one_new_post_rewrites_only_what_it_changed() {
    let s = site();
    for id in 2..=30 {
        s.item_with(
            id,
            "2026-11-21",
            "",
            &format!("Post number {id} about orchards."),
        );
    }
    publish_build(&s, NOW);
    let first = s.current_dir();
    let before = index_files(&first);
    s.item_with(31, "2026-11-22", "", "A post about tangerines.");
    let out = s
        .cmd(&["publish", "--build", "--now", NOW])
        .env("FENCEPOST_LOG", "info")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let second = s.current_dir();
    assert_ne!(first, second);
    let after = index_files(&second);
    let old: std::collections::HashMap<&String, u64> =
        before.iter().map(|(p, i)| (p, *i)).collect();
    let new: Vec<&String> = (after.iter())
        .filter(|(p, i)| old.get(p) != Some(i))
        .map(|(p, _)| p)
        .collect();
    let fragments = new.iter().filter(|p| p.contains("/fragment/")).count();
    assert!(
        fragments <= 3,
        "the new post's fragment, and the lists' only if indexed: {new:?}"
    );
    assert!(new.len() <= 20, "{new:?}");
    assert!(
        !new.iter()
            .any(|p| p.ends_with(".js") || p.ends_with(".pagefind")),
        "runtime kept: {new:?}"
    );
    assert!(log.contains("search index"), "{log}");
    let server = s.serve(&[]);
    assert_eq!(query(&server, "tangerines"), ["/answers/31/"]);
    assert_eq!(query(&server, "orchards").len(), 29);
    // A post edited: read again, its old words gone, its new ones found; the others stay.
    s.item_with(5, "2026-11-21", "", "Post number 5 about vineyards.");
    publish_build(&s, NOW);
    assert_eq!(query(&server, "vineyards"), ["/answers/5/"]);
    assert_eq!(query(&server, "orchards").len(), 28);
    assert_eq!(query(&server, "tangerines"), ["/answers/31/"]);
}
