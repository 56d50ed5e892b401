//! Images (issue 81, docs/images.md): Zola's `resize_image` at Zola's sizes, Markdown images
//! sized and given their versions, each version made once and the same bytes everywhere —
//! and never early. The adversaries: a theme's author or a template naming an embargoed
//! post's photo (or a version of it by hand), and a file of the site that is a
//! decompression bomb or no image at all.
mod cache;
mod embargo;
mod sizes;

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A photo-like JPEG, `w` × `h`, its pixels seeded by `seed` (each seed another photo).
fn photo(w: u32, h: u32, seed: u32) -> Vec<u8> {
    let mut img = image::RgbImage::new(w, h);
    for (x, y, p) in img.enumerate_pixels_mut() {
        let v = |k: u32| ((x * (3 + k) + y * (5 + seed) + k * 40) % 251) as u8;
        *p = image::Rgb([v(0), v(1), v(2)]);
    }
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&img)
        .unwrap();
    out
}

/// A PNG, `w` × `h`, with some transparency.
fn png(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_fn(w, h, |x, y| {
        image::Rgba([(x % 256) as u8, (y % 256) as u8, 90, ((x + y) % 256) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

fn put(s: &TestSite, rel: &str, bytes: &[u8]) {
    let p = s.path(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// The `features` fixture with `[images]` settings `images` (TOML lines).
fn site(images: &str) -> TestSite {
    let s = fixture("features");
    let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write("fencepost.toml", &format!("{toml}\n[images]\n{images}\n"));
    s
}

/// A post (a page bundle) due at `at`, with `body`.
fn bundle_post(s: &TestSite, slug: &str, at: &str, body: &str) {
    s.write(
        &format!("content/posts/{slug}/index.md"),
        &format!("+++\ntitle = \"{slug}\"\npublish_at = {at}\n+++\n\n{body}\n"),
    );
}

/// `publish --build --json` at `now`, with its exit code.
fn publish_build(s: &TestSite, now: &str) -> (Option<i32>, Value) {
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", now])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

/// The processed images under `dir` (a revision), by name.
fn processed(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let at = dir.join("processed_images");
    let Ok(read) = std::fs::read_dir(&at) else {
        return Default::default();
    };
    read.map(|e| {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        (name, std::fs::read(e.path()).unwrap())
    })
    .collect()
}
