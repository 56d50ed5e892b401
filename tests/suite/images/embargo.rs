//! Never early, and never hostage: an embargoed post's photo is resized into no public
//! revision, manifest or bucket before its instant — whoever names it — and a bad file holds
//! only the pages that show it.
use super::*;

const LATER: &str = "2026-12-05T00:00:00Z";

/// Guards: issue 81 (point 4). The adversary is a template's author who knows the embargoed
/// post's bundle: the about page calls `resize_image` on its photo, and the 404 page names,
/// by hand, a version an editor's `build --preview` made of it (so the cache holds it). Before
/// the instant: no public revision, manifest entry or deployed object has the photo or any
/// version of it; the about page is held (its call answers as for a missing file, naming
/// nothing more), the hand-written name is a broken link. A photo shared with a public post
/// is public through that post only. At the instant the post goes public with its versions
/// (and the about page's call finds the photo).
#[test]
fn an_embargoed_posts_photo_is_in_no_public_revision_whoever_names_it() {
    let s = site("widths = [160]\nformats = [\"webp\"]");
    put(&s, "content/posts/trip/harbour.jpg", &photo(400, 300, 7));
    put(&s, "static/shared.jpg", &photo(300, 200, 8));
    bundle_post(
        &s,
        "trip",
        LATER,
        "![harbour](harbour.jpg) ![shared](/shared.jpg)",
    );
    bundle_post(&s, "open", "2026-11-20T00:00:00Z", "![shared](/shared.jpg)");
    // An editor's preview makes the embargoed versions (into the shared cache).
    let preview = s.json(&["build", "--preview", "--now", NOW]);
    let previewed = processed(Path::new(preview["path"].as_str().unwrap()));
    let secret: Vec<(&String, &Vec<u8>)> = (previewed.iter())
        .filter(|(n, _)| n.starts_with("harbour."))
        .collect();
    assert_eq!(secret.len(), 1, "{preview}");
    let by_hand = secret[0].0;
    s.write(
        "templates/404.html",
        &format!("<img src=\"/processed_images/{by_hand}\">"),
    );
    s.write("templates/page.html", "{% extends \"base.html\" %}{% block content %}{% set i = resize_image(path=\"content/posts/trip/harbour.jpg\", width=50, op=\"fit_width\") %}<img src=\"{{ i.url | safe }}\">{% endblock content %}");
    let target = format!("file://{}", s.path(".bucket").display());
    let (code, v) = publish_build(&s, NOW);
    assert_eq!(code, Some(HELD), "{v}");
    let held = v["build"]["held_pages"].as_array().unwrap();
    assert_eq!(held.len(), 1, "the about page alone: {v}");
    let why = held[0]["why"].as_str().unwrap();
    assert!(why.contains("cannot find file"), "{why}");
    assert!(
        (v["build"]["broken_links"].as_array().unwrap().iter())
            .any(|b| b["link"].as_str().unwrap().contains(by_hand.as_str())),
        "{v}"
    );
    s.cmd(&["deploy", "--to", &target, "--now", NOW])
        .assert()
        .success();
    let original = std::fs::read(s.path("content/posts/trip/harbour.jpg")).unwrap();
    let mut public = files_under(&s.path("public"));
    public.extend(files_under(&s.path(".bucket")));
    for (path, bytes) in &public {
        assert!(!path.contains("harbour"), "{path}");
        assert!(bytes != &original && bytes != secret[0].1, "{path}");
    }
    assert!(
        !processed(&s.current_dir()).is_empty(),
        "the shared photo's version is public, through the open post"
    );
    // At the instant the post and its versions go public.
    // At the instant the post and its versions go public — and the about page's call, which
    // finds the photo now that it is public, renders.
    let (code, v) = publish_build(&s, LATER);
    assert_eq!(code, Some(0), "{v}");
    assert!(s
        .current_file("about/index.html")
        .contains("/processed_images/harbour."));
    let page = s.current_file("posts/trip/index.html");
    assert!(
        page.contains(&format!("/processed_images/{by_hand} 160w")),
        "{page}"
    );
    assert_eq!(&processed(&s.current_dir())[by_hand], secret[0].1);
}

/// A PNG whose header says 50,000 × 50,000 pixels, in a few dozen bytes.
fn bomb() -> Vec<u8> {
    fn crc(bytes: &[u8]) -> u32 {
        let mut c = 0xffff_ffffu32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    let chunk = |kind: &[u8], data: &[u8]| {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        let body = [kind, data].concat();
        c.extend(&body);
        c.extend(crc(&body).to_be_bytes());
        c
    };
    let mut ihdr = 50_000u32.to_be_bytes().to_vec();
    ihdr.extend(50_000u32.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    png.extend(chunk(b"IDAT", &[0x78, 0x9c, 0x63, 0, 0, 0, 1, 0, 1]));
    png.extend(chunk(b"IEND", &[]));
    png
}

/// Guards: issue 81 (point 4): a decompression bomb (50,000 × 50,000 in a few dozen bytes)
/// is refused from its header by the pixel budget — named, with the way out — and a
/// truncated JPEG is named with why; each holds only the post that shows it, and a third
/// post with a good photo publishes with its versions. The build stays small: the bomb is
/// never allocated.
#[test]
fn a_bomb_or_a_broken_image_holds_only_the_posts_that_show_it() {
    let s = site("widths = [100]");
    put(&s, "content/posts/bomb/big.png", &bomb());
    let mut broken = photo(400, 300, 3);
    broken.truncate(broken.len() / 3);
    put(&s, "content/posts/broken/cut.jpg", &broken);
    put(&s, "content/posts/fine/ok.jpg", &photo(400, 300, 4));
    bundle_post(&s, "bomb", "2026-11-20T00:00:00Z", "![b](big.png)");
    bundle_post(&s, "broken", "2026-11-20T00:00:00Z", "![c](cut.jpg)");
    bundle_post(&s, "fine", "2026-11-20T00:00:00Z", "![o](ok.jpg)");
    let (code, v) = publish_build(&s, NOW);
    assert_eq!(code, Some(HELD), "{v}");
    let held = v["build"]["held_pages"].as_array().unwrap();
    let why = |slug: &str| -> String {
        let h = held
            .iter()
            .find(|h| h["path"] == format!("posts/{slug}/index.html"));
        h.unwrap_or_else(|| panic!("{slug} held: {v}"))["why"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        why("bomb").contains("50000 × 50000") && why("bomb").contains("max_pixels"),
        "{v}"
    );
    assert!(why("broken").contains("cut.jpg"), "{v}");
    assert_eq!(held.len(), 2, "{v}");
    let fine = s.current_file("posts/fine/index.html");
    assert!(
        fine.contains("width=\"400\" height=\"300\"") && fine.contains(" 100w"),
        "{fine}"
    );
}
