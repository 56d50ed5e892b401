//! Computed once: the cache outlives `public/`, and one new photo encodes its versions only.
use super::*;

/// Guards: issue 81 (point 3): three photos at three widths in WebP encode nine versions;
/// `rm -rf public` and a build encode none (all nine from the cache, the pages the same
/// bytes); a publish of one more photo's post encodes its three alone — its neighbours,
/// rendered again, find theirs — and a page kept from the previous revision keeps its
/// versions (the revision's record), none lost, none extra.
#[test]
fn the_cache_outlives_public_and_a_new_photo_encodes_only_its_versions() {
    let s = site("widths = [160, 320, 480]\nformats = [\"webp\"]");
    for i in 1..=3 {
        put(
            &s,
            &format!("content/posts/p{i}/photo.jpg"),
            &photo(640, 480, i),
        );
        bundle_post(
            &s,
            &format!("p{i}"),
            &format!("2026-11-1{i}T00:00:00Z"),
            "![p](photo.jpg)",
        );
    }
    let (code, v) = publish_build(&s, NOW);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["build"]["images_encoded"], 9, "{v}");
    let pages = tree(&s.current_dir());
    std::fs::remove_dir_all(s.path("public")).unwrap();
    let cold = s.json(&["build", "--now", NOW]);
    assert_eq!(
        (
            cold["images_encoded"].as_u64(),
            cold["images_cached"].as_u64()
        ),
        (Some(0), Some(9)),
        "{cold}"
    );
    assert_eq!(
        tree(&s.current_dir()),
        pages,
        "the same revision, byte for byte"
    );
    put(&s, "content/posts/p4/photo.jpg", &photo(640, 480, 4));
    bundle_post(&s, "p4", "2026-11-14T00:00:00Z", "![p](photo.jpg)");
    let (code, v) = publish_build(&s, NOW);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["build"]["images_encoded"], 3, "{v}");
    let now = processed(&s.current_dir());
    assert_eq!(now.len(), 12, "{:?}", now.keys());
    // Every version a page shows is in the revision, and nothing else is.
    let mut shown = std::collections::BTreeSet::new();
    for i in 1..=4 {
        let page = s.current_file(&format!("posts/p{i}/index.html"));
        for part in page.split("/processed_images/").skip(1) {
            shown.insert(part.split(' ').next().unwrap().to_string());
        }
    }
    assert_eq!(shown, now.keys().cloned().collect());
}

/// Guards: issue 81 (point 3), the editor's side: watch mode serves a page's versions from
/// the same cache, and a save that changes the page's text encodes nothing again (the
/// cache's files stay as they were).
#[test]
fn watch_mode_serves_the_versions_and_a_save_encodes_nothing_again() {
    let s = site("widths = [160]\nformats = [\"webp\"]");
    put(&s, "content/posts/p1/photo.jpg", &photo(400, 300, 11));
    bundle_post(&s, "p1", "2026-11-11T00:00:00Z", "First. ![p](photo.jpg)");
    let srv = s.serve(&["--watch"]);
    let page = srv.get("/posts/p1/").text();
    let url = page
        .split("srcset=\"")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap_or_else(|| panic!("{page}"))
        .to_string();
    let image = srv.get(&url);
    assert_eq!(image.status, 200, "{url}");
    let cache = s.path(".fencepost/images/processed");
    // Each file with its modification time: one encoded again is written anew (the same
    // bytes: a version is deterministic), so its bytes alone would not tell.
    let files = || -> Vec<(String, std::time::SystemTime)> {
        (files_under(&cache).into_iter())
            .map(|(p, _)| {
                let t = std::fs::metadata(cache.join(&p))
                    .unwrap()
                    .modified()
                    .unwrap();
                (p, t)
            })
            .collect()
    };
    let before = files();
    assert_eq!(before.len(), 1);
    bundle_post(&s, "p1", "2026-11-11T00:00:00Z", "Edited. ![p](photo.jpg)");
    wait_for("the save to show", || {
        srv.get("/posts/p1/").text().contains("Edited.")
    });
    assert!(srv.get("/posts/p1/").text().contains(&url));
    assert_eq!(files(), before, "nothing encoded again");
}

/// Guards: issue 81 (point 3): a version is a blob of the bucket named by its bytes,
/// uploaded by the deploy of the revision that first shows it and never again — the next
/// revision's deploy (another post published) leaves it as it was.
#[test]
fn a_version_is_uploaded_once() {
    let s = site("widths = [160, 320]\nformats = [\"webp\"]");
    put(&s, "content/posts/p1/photo.jpg", &photo(640, 480, 21));
    bundle_post(&s, "p1", "2026-11-11T00:00:00Z", "![p](photo.jpg)");
    let target = format!("file://{}", s.path(".bucket").display());
    assert_eq!(publish_build(&s, NOW).0, Some(0));
    s.cmd(&["deploy", "--to", &target, "--now", NOW])
        .assert()
        .success();
    let m = manifest(&s.current_dir());
    let versions: Vec<String> = (m["files"].as_array().unwrap().iter())
        .filter(|f| f["path"].as_str().unwrap().starts_with("processed_images/"))
        .map(|f| f["sha256"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(versions.len(), 2, "{m}");
    let blob = |sha: &str| s.path(&format!(".bucket/objects/{sha}"));
    let when = |sha: &str| std::fs::metadata(blob(sha)).unwrap().modified().unwrap();
    let first: Vec<_> = versions.iter().map(|v| when(v)).collect();
    bundle_post(&s, "p2", "2026-11-12T00:00:00Z", "Words only.");
    assert_eq!(publish_build(&s, NOW).0, Some(0));
    let again = s.json(&["deploy", "--to", &target, "--now", NOW]);
    assert!(again["blobs_uploaded"].as_u64().unwrap() > 0, "{again}");
    let after: Vec<_> = versions.iter().map(|v| when(v)).collect();
    assert_eq!(first, after, "no version uploaded again: {again}");
}

/// Guards: a static image replaced by one of other dimensions re-renders the pages that show
/// it (their `width` and `height` follow), and a template's `resize_image` of it makes the
/// new version: the static images are part of every page's render key.
#[test]
fn a_static_image_replaced_re_renders_the_pages_that_show_it() {
    let s = site("");
    put(&s, "static/hero.jpg", &photo(300, 200, 1));
    bundle_post(&s, "p1", "2026-11-11T00:00:00Z", "![h](/hero.jpg)");
    assert_eq!(publish_build(&s, NOW).0, Some(0));
    let page = s.current_file("posts/p1/index.html");
    assert!(page.contains("width=\"300\" height=\"200\""), "{page}");
    put(&s, "static/hero.jpg", &photo(240, 180, 2));
    let b = s.json(&["build", "--now", NOW]);
    let page = s.current_file("posts/p1/index.html");
    assert!(page.contains("width=\"240\" height=\"180\""), "{b}\n{page}");
}
