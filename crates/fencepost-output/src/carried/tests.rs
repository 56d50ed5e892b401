use super::*;
use crate::id::RevisionId;
use crate::manifest::{AuditAnchor, Entry};

fn entry(path: &str, key: &str, cache: CacheClass) -> Entry {
    Entry {
        path: path.into(),
        sha256: format!("{:064}", path.len()),
        bytes: path.len() as u64,
        content_type: crate::manifest::content_type(path).into(),
        cache,
        max_age: cache.max_age(),
        key: key.into(),
        links: if path.ends_with(".html") {
            vec!["/".into(), format!("/{path}")]
        } else {
            Vec::new()
        },
        location: path.starts_with("old").then(|| "/new/\"q\"/".to_string()),
    }
}

/// Paths that need escaping in JSON, paths that sort differently as bytes and as folders,
/// non-ASCII, a redirect with a location.
fn previous() -> Manifest {
    let mut files: Vec<Entry> = [
        "a-b/index.html",
        "a/b/index.html",
        "images/ab.png",
        "old/index.html",
        "q\"uote\\d/index.html",
        "tab\there.txt",
        "é/index.html",
    ]
    .iter()
    .map(|p| entry(p, &format!("k-{p}"), CacheClass::Content))
    .collect();
    files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Manifest {
        id: RevisionId::new(7, "fp"),
        ledger_id: Some("L".into()),
        audit_tip: Some(AuditAnchor {
            seq: 7,
            hash: Some("h".into()),
        }),
        preview: false,
        broken_links: vec![("a/b/index.html".into(), "/nowhere/".into())],
        files,
    }
}

/// The next revision's manifest of `files` over `c` (read from `prev`), and the owned
/// manifest of `owned` it must write.
fn assembled<'c>(
    prev: &Manifest,
    c: &'c Carried,
    files: Vec<File>,
    owned: Vec<Entry>,
    raw_ok: bool,
) -> (Assembled<'c>, Manifest) {
    let head = Manifest {
        id: RevisionId::new(8, "fp"),
        files: Vec::new(),
        ..prev.clone()
    };
    let want = Manifest {
        files: owned,
        ..head.clone()
    };
    let a = Assembled {
        head,
        files,
        prev: Some(c),
        raw_ok,
    };
    (a, want)
}

fn json(l: &impl Listing) -> Vec<u8> {
    let mut out = Vec::new();
    l.to_json().write_to(&mut out).unwrap();
    out
}

#[test]
fn a_carried_manifest_reads_what_the_owned_parse_reads() {
    let m = previous();
    let c = Carried::from_bytes(m.to_bytes()).unwrap();
    assert!(c.is_sorted());
    assert_eq!(c.len(), m.files.len());
    assert_eq!(c.head().id, m.id);
    assert_eq!(c.head().broken_links, m.broken_links);
    for (i, e) in m.files.iter().enumerate() {
        assert_eq!((c.path(i), c.key(i)), (&*e.path, &*e.key));
        assert_eq!(c.cache(i), e.cache);
        assert_eq!(&c.entry(i), e);
        assert_eq!(c.links(i), e.links);
        assert_eq!(c.find(&e.path), Some(i));
    }
    assert_eq!(c.find("a/index.html"), None);
    let all: Vec<Entry> = (0..c.len()).map(|i| c.entry(i)).collect();
    assert_eq!(all, m.files);
}

/// The manifest and index written from kept entries are byte for byte those of the owned
/// manifest with the same entries — copied raw (same build), serialised again (another
/// build's manifest, or a changed cache class), new entries among them.
#[test]
fn an_assembled_manifest_writes_the_bytes_the_owned_one_writes() {
    let prev = previous();
    let c = Carried::from_bytes(prev.to_bytes()).unwrap();
    for raw_ok in [true, false] {
        let mut files = Vec::new();
        let mut owned = Vec::new();
        for (i, e) in prev.files.iter().enumerate() {
            match i {
                1 => {
                    let fresh = entry(&e.path, "changed", CacheClass::Content);
                    files.push(File::New(fresh.clone()));
                    owned.push(fresh);
                }
                2 => {
                    files.push(File::Kept {
                        index: i,
                        cache: CacheClass::Immutable,
                    });
                    let mut e = e.clone();
                    e.cache = CacheClass::Immutable;
                    e.max_age = e.cache.max_age();
                    owned.push(e);
                }
                _ => {
                    files.push(File::Kept {
                        index: i,
                        cache: e.cache,
                    });
                    owned.push(e.clone());
                }
            }
        }
        let (a, want) = assembled(&prev, &c, files, owned, raw_ok);
        assert_eq!(json(&a), json(&want), "raw_ok {raw_ok}");
        let mut streamed = Vec::new();
        a.stream_json(&mut streamed).unwrap();
        assert_eq!(streamed, json(&want), "streamed, raw_ok {raw_ok}");
        let mut idx = Vec::new();
        index::write_lines(&a.index_lines(), &mut idx).unwrap();
        assert_eq!(idx, index::to_bytes(&want));
        let paths: Vec<&str> = a.files.iter().map(|f| f.path(a.prev)).collect();
        let want_paths: Vec<&str> = want.files.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, want_paths);
        assert_eq!(a.into_manifest(), want);
    }
}

/// Fields the JSON holds unescaped are read in place, not copied.
#[test]
fn unescaped_fields_are_borrowed_from_the_file() {
    let c = Carried::from_bytes(previous().to_bytes()).unwrap();
    let i = c.find("a/b/index.html").unwrap();
    assert!(matches!(c.rows[i].path, Text::At(_)));
    assert!(matches!(c.rows[i].key, Text::At(_)));
    let q = c.find("q\"uote\\d/index.html").unwrap();
    assert!(matches!(c.rows[q].path, Text::Own(_)));
}

/// A manifest out of path order (not one fencepost writes) is still looked up right.
#[test]
fn an_unsorted_manifest_is_searched_in_full() {
    let mut m = previous();
    m.files.reverse();
    let c = Carried::from_bytes(m.to_bytes()).unwrap();
    assert!(!c.is_sorted());
    for (i, e) in m.files.iter().enumerate() {
        assert_eq!(c.find(&e.path), Some(i));
    }
}

/// An entry the owned parse refuses (no `max_age`, links that are not strings) is refused
/// by the lazy read too, not found broken later while a build uses it.
#[test]
fn what_the_owned_parse_refuses_the_lazy_read_refuses() {
    let good = String::from_utf8(previous().to_bytes()).unwrap();
    assert!(Carried::from_bytes(good.clone().into_bytes()).is_ok());
    for bad in [
        good.replacen("\"max_age\":0,", "", 1),
        good.replacen("\"links\":[\"/\"", "\"links\":[7", 1),
    ] {
        assert_ne!(bad, good);
        assert!(serde_json::from_str::<Manifest>(&bad).is_err());
        assert!(Carried::from_bytes(bad.into_bytes()).is_err());
    }
}

/// Guards: the one-pass read finds each entry's bytes exactly where fencepost's own compact
/// JSON has them, and anything written otherwise is read entry by entry to the same rows.
#[test]
fn compact_spaced_and_reordered_manifests_read_the_same_entries() {
    let mut m = previous();
    // Unescaped paths only: the one-pass read's case (an escaped path is the other's).
    m.files.retain(|e| !e.path.contains(['"', '\\', '\t']));
    let compact = m.to_bytes();
    let spaced = serde_json::to_vec_pretty(&m).unwrap();
    let reordered = String::from_utf8(compact.clone())
        .unwrap()
        .replacen("{\"path\":\"a/b/index.html\",", "{", 1)
        .replacen(
            "\"links\":[\"/\",\"/a/b/index.html\"]",
            "\"links\":[\"/\",\"/a/b/index.html\"],\"path\":\"a/b/index.html\"",
            1,
        )
        .into_bytes();
    assert_ne!(reordered, compact);
    for (name, bytes, one_pass) in [
        ("compact", compact, true),
        ("spaced", spaced, false),
        ("reordered", reordered, false),
    ] {
        let text = std::str::from_utf8(&bytes).unwrap();
        let (_, files) = serde_json::from_str::<ManifestIn<RowIn<'_>>>(text)
            .unwrap()
            .split();
        let base = text.as_ptr() as usize;
        let at = |s: &str| (s.as_ptr() as usize - base)..(s.as_ptr() as usize - base + s.len());
        assert_eq!(
            compact_entries(text, &files, at).is_some(),
            one_pass,
            "{name}"
        );
        let c = Carried::from_bytes(bytes.clone()).unwrap();
        assert_eq!(c.len(), m.files.len(), "{name}");
        for (i, e) in m.files.iter().enumerate() {
            assert_eq!(
                &serde_json::from_str::<Entry>(c.raw(i)).unwrap(),
                e,
                "{name} {i}"
            );
            assert_eq!((c.path(i), c.key(i)), (&*e.path, &*e.key), "{name}");
            assert_eq!(c.links(i), e.links, "{name}");
        }
    }
}

/// Guards: a manifest written as it is made (runs of kept entries copied from the previous
/// file) is byte for byte the one made whole, whichever entries are kept, removed or new.
#[test]
fn a_streamed_manifest_is_the_one_made_whole() {
    let mut prev = previous();
    prev.files.retain(|e| !e.path.contains(['"', '\\', '\t']));
    prev.files
        .extend((0..6).map(|i| entry(&format!("z/{i}.html"), "k", CacheClass::Content)));
    let c = Carried::from_bytes(prev.to_bytes()).unwrap();
    let n = prev.files.len();
    // Each of: every entry kept; the first, a middle and the last removed; new ones between.
    let plans: Vec<Vec<Option<usize>>> = vec![
        (0..n).map(Some).collect(),
        (1..n).map(Some).collect(),
        (0..n).filter(|&i| i != 4).map(Some).collect(),
        (0..n - 1).map(Some).collect(),
        vec![
            None,
            Some(0),
            Some(1),
            None,
            Some(3),
            None,
            Some(n - 1),
            None,
        ],
        vec![None, None],
        vec![],
    ];
    for plan in plans {
        let mut files = Vec::new();
        let mut owned = Vec::new();
        for (k, p) in plan.iter().enumerate() {
            match p {
                Some(i) => {
                    let e = &prev.files[*i];
                    files.push(File::Kept {
                        index: *i,
                        cache: e.cache,
                    });
                    owned.push(e.clone());
                }
                None => {
                    let e = entry(&format!("n/{k}.html"), "new", CacheClass::Content);
                    files.push(File::New(e.clone()));
                    owned.push(e);
                }
            }
        }
        let (a, want) = assembled(&prev, &c, files, owned, true);
        let mut streamed = Vec::new();
        a.stream_json(&mut streamed).unwrap();
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(json(&want)).unwrap(),
            "{plan:?}"
        );
    }
}
