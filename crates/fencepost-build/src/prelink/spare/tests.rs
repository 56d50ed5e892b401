use super::super::Prelinked;
use fencepost_output::manifest::{CacheClass, Entry, Manifest};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// A revision folder in `dir`: `files` (path, contents), its index and its manifest.
fn revision(dir: &Path, files: &[(&str, &str)]) {
    let mut entries = Vec::new();
    for (path, body) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, body).unwrap();
        entries.push(Entry {
            path: path.to_string(),
            sha256: fencepost_core::digest::sha256_hex(body.as_bytes()),
            bytes: body.len() as u64,
            content_type: "text/html; charset=utf-8".into(),
            cache: CacheClass::Content,
            max_age: 0,
            key: String::new(),
            links: Vec::new(),
            location: None,
        });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    let m = Manifest::of_files(entries);
    std::fs::write(
        dir.join(fencepost_output::index::FILE),
        fencepost_output::index::to_bytes(&m),
    )
    .unwrap();
    std::fs::write(dir.join(fencepost_output::manifest::FILE), m.to_bytes()).unwrap();
}

/// Every file under `dir` (path → contents), and every empty folder.
fn tree(dir: &Path) -> (BTreeMap<String, String>, Vec<String>) {
    let (mut files, mut empty) = (BTreeMap::new(), Vec::new());
    for e in walkdir::WalkDir::new(dir).min_depth(1) {
        let e = e.unwrap();
        let rel = e
            .path()
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if e.file_type().is_dir() {
            if std::fs::read_dir(e.path()).unwrap().next().is_none() {
                empty.push(rel);
            }
        } else {
            files.insert(rel, std::fs::read_to_string(e.path()).unwrap());
        }
    }
    (files, empty)
}

/// `prev`'s files, without its own index and manifest: what the staging folder must hold.
fn files_of(prev: &Path) -> BTreeMap<String, String> {
    let mut files = tree(prev).0;
    files.remove(fencepost_output::index::FILE);
    files.remove(fencepost_output::manifest::FILE);
    files
}

fn ino(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().ino()
}

const PREV: &[(&str, &str)] = &[
    ("index.html", "home, two items"),
    ("a/kept.html", "the same"),
    ("a/changed.html", "new words"),
    ("b/new/index.html", "added"),
    ("x/index.html", "x is a folder now"),
    ("y", "y is a file now"),
    ("deep/k/l.html", "deep, the same"),
];

/// Guards: a spare is made into the previous revision's tree by changing only what differs —
/// a file with the same hash stays (its own inode: nothing was linked again), a changed one
/// is the previous revision's, one only the spare had goes with the folders it leaves empty,
/// one only the previous revision has is linked, a file becomes a folder and a folder a file;
/// the spare's own manifest goes; the previous revision is untouched.
#[test]
fn a_spare_becomes_the_previous_revision_changing_only_what_differs() {
    let t = tempfile::tempdir().unwrap();
    let (prev, staging) = (t.path().join("prev"), t.path().join("staging"));
    revision(&prev, PREV);
    revision(
        &staging,
        &[
            ("index.html", "home, one item"),
            ("a/kept.html", "the same"),
            ("a/changed.html", "old words"),
            ("gone/sub/index.html", "withdrawn"),
            ("x", "x was a file"),
            ("y/index.html", "y was a folder"),
            ("deep/k/l.html", "deep, the same"),
        ],
    );
    let kept = ino(&staging.join("a/kept.html"));
    let before = tree(&prev);
    let linked = Prelinked::patch(&prev, &staging).unwrap();
    let (files, empty) = tree(&staging);
    assert_eq!(files, files_of(&prev));
    assert!(empty.is_empty(), "folders left empty: {empty:?}");
    assert!(linked.linked.iter().all(|l| *l), "{:?}", linked.linked);
    assert_eq!(linked.paths.len(), PREV.len());
    assert_eq!(
        ino(&staging.join("a/kept.html")),
        kept,
        "a kept file was linked again"
    );
    assert_ne!(
        ino(&staging.join("a/kept.html")),
        ino(&prev.join("a/kept.html"))
    );
    for changed in [
        "a/changed.html",
        "index.html",
        "b/new/index.html",
        "x/index.html",
        "y",
    ] {
        assert_eq!(
            ino(&staging.join(changed)),
            ino(&prev.join(changed)),
            "{changed}"
        );
    }
    assert_eq!(tree(&prev), before, "the previous revision changed");
}

/// Guards: a spare that does not fit — no index, or one naming a path outside the folder —
/// is emptied and linked afresh: nothing of it (a stray file included) is left, every file is
/// the previous revision's.
#[test]
fn a_spare_that_does_not_fit_is_emptied_and_linked_afresh() {
    let unsafe_index = "fencepost-index 1\n\"../outside\"\t".to_string()
        + &"0".repeat(64)
        + "\t1\tcontent\ttext/html\n";
    for spoil in ["no index", "a path outside"] {
        let t = tempfile::tempdir().unwrap();
        let (prev, staging) = (t.path().join("prev"), t.path().join("staging"));
        revision(&prev, PREV);
        revision(
            &staging,
            &[("a/kept.html", "the same"), ("old.html", "old")],
        );
        std::fs::write(staging.join("stray.html"), "never listed").unwrap();
        let idx = staging.join(fencepost_output::index::FILE);
        match spoil {
            "no index" => std::fs::remove_file(&idx).unwrap(),
            _ => std::fs::write(&idx, &unsafe_index).unwrap(),
        }
        let linked = Prelinked::patch(&prev, &staging).unwrap();
        assert_eq!(tree(&staging).0, files_of(&prev), "{spoil}");
        assert!(linked.linked.iter().all(|l| *l), "{spoil}");
        for (path, _) in PREV {
            assert_eq!(
                ino(&staging.join(path)),
                ino(&prev.join(path)),
                "{spoil}: {path}"
            );
        }
    }
}

/// Guards: something the spare's index does not list, where the previous revision adds a
/// file, is replaced by the link — never left for the build to write through (here it is a
/// hard link to a file outside, which must keep its bytes).
#[test]
fn an_unlisted_file_where_a_new_one_goes_is_replaced_not_written_through() {
    let t = tempfile::tempdir().unwrap();
    let (prev, staging) = (t.path().join("prev"), t.path().join("staging"));
    revision(&prev, PREV);
    revision(&staging, &[("a/kept.html", "the same")]);
    let outside = t.path().join("outside.html");
    std::fs::write(&outside, "someone else's").unwrap();
    std::fs::create_dir_all(staging.join("b/new")).unwrap();
    std::fs::hard_link(&outside, staging.join("b/new/index.html")).unwrap();
    let linked = Prelinked::patch(&prev, &staging).unwrap();
    assert!(linked.linked.iter().all(|l| *l));
    assert_eq!(tree(&staging).0, files_of(&prev));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "someone else's");
    assert_eq!(
        ino(&staging.join("b/new/index.html")),
        ino(&prev.join("b/new/index.html"))
    );
}
