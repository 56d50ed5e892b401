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
