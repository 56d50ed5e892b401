//! `resize_image` as Zola documents it, and the same bytes on every machine.
use super::*;

/// Zola's image-processing page: a 300 × 380 source, and what each example makes.
const ZOLA_EXAMPLES: &[(&str, &str, (u32, u32))] = &[
    ("scale", "width=150, height=150, op=\"scale\"", (150, 150)),
    (
        "fit_width",
        "width=100, height=0, op=\"fit_width\"",
        (100, 126),
    ),
    (
        "fit_height",
        "width=0, height=150, op=\"fit_height\"",
        (118, 150),
    ),
    ("fit_big", "width=5000, height=5000, op=\"fit\"", (300, 380)),
    ("fit", "width=150, height=150, op=\"fit\"", (118, 150)),
    ("fill", "width=150, height=150, op=\"fill\"", (150, 150)),
    ("default_fill", "width=150, height=150", (150, 150)),
];

/// The first `data-url` attribute's value in `html`.
fn data_url(html: &str) -> &str {
    let after = html.split("data-url=\"").nth(1).unwrap();
    after.split('"').next().unwrap()
}

/// Guards: issue 81 (point 1): each of Zola's documented examples, called from a template
/// through `publish --build`, answers the size Zola documents, and the file it names in the
/// revision is that size, in the format asked for (`auto` of a PNG: PNG) — with the original
/// size beside it.
#[test]
fn zolas_documented_examples_come_out_at_zolas_sizes() {
    let s = site("");
    put(&s, "static/zola.png", &png(300, 380));
    let mut t = String::from("{% extends \"base.html\" %}{% block content %}");
    for (name, args, _) in ZOLA_EXAMPLES {
        t.push_str(&format!(
            "{{% set i = resize_image(path=\"zola.png\", {args}) %}}<img src=\"{{{{ i.url | safe }}}}\"><i id=\"{name}\" data-url=\"{{{{ i.url | safe }}}}\">{{{{ i.width }}}}x{{{{ i.height }}}} of {{{{ i.orig_width }}}}x{{{{ i.orig_height }}}}</i>\n"
        ));
    }
    t.push_str("{% set w = resize_image(path=\"static/zola.png\", width=60, op=\"fit_width\", format=\"webp\", quality=70) %}<img src=\"{{ w.url | safe }}\"><i id=\"webp\" data-url=\"{{ w.url | safe }}\">{{ w.width }}x{{ w.height }}</i>{% endblock content %}");
    s.write("templates/page.html", &t);
    let (code, v) = publish_build(&s, NOW);
    assert_eq!(code, Some(0), "{v}");
    let html = s.current_file("about/index.html");
    let dir = s.current_dir();
    for (name, _, (w, h)) in ZOLA_EXAMPLES {
        let start = html.find(&format!("id=\"{name}\"")).expect(name);
        let tag = &html[start..html[start..].find("</i>").unwrap() + start];
        assert!(
            tag.ends_with(&format!(">{w}x{h} of 300x380")),
            "{name}: {tag}"
        );
        let url = data_url(tag);
        assert!(
            url.starts_with("/processed_images/zola.") && url.ends_with(".png"),
            "{url}"
        );
        let file = dir.join(url.trim_start_matches('/'));
        assert_eq!(image::image_dimensions(&file).unwrap(), (*w, *h), "{name}");
    }
    let start = html.find("id=\"webp\"").unwrap();
    let url = data_url(&html[start..]);
    let bytes = std::fs::read(dir.join(url.trim_start_matches('/'))).unwrap();
    assert_eq!(
        image::guess_format(&bytes).unwrap(),
        image::ImageFormat::WebP
    );
    assert!(
        html[start..].starts_with("id=\"webp\"") && html.contains(">60x76</i>"),
        "{html}"
    );
    // The manifest lists them, immutable, and the record names the page that shows them.
    let m = manifest(&dir);
    let listed = m["files"].as_array().unwrap().iter();
    let images: Vec<&Value> = listed
        .filter(|f| f["path"].as_str().unwrap().starts_with("processed_images/"))
        .collect();
    assert_eq!(images.len(), 7, "six distinct PNG versions and a WebP: {m}");
    assert!(images.iter().all(|f| f["max_age"] == 31_536_000), "{m}");
}

/// Guards: issue 81 (done-when): a version is byte-identical across two runs and two
/// machines' builds — two copies of one site in other folders, each built cold, then one
/// built again with its cache and output gone — in every format (JPEG, PNG, lossy and
/// lossless WebP, AVIF), and named alike.
#[test]
fn a_version_is_the_same_bytes_on_every_run_and_machine() {
    let s = site("widths = [120, 200]\nformats = [\"avif\", \"webp\"]\navif_speed = 10");
    put(&s, "static/p.jpg", &photo(320, 240, 1));
    put(&s, "static/t.png", &png(90, 60));
    let mut t = String::from("{% extends \"base.html\" %}{% block content %}");
    for (i, args) in [
        "path=\"p.jpg\", width=100, height=100",
        "path=\"p.jpg\", width=90, op=\"fit_width\", format=\"webp\"",
        "path=\"p.jpg\", width=90, op=\"fit_width\", format=\"webp\", quality=60",
        "path=\"t.png\", width=40, height=40, op=\"fit\"",
        "path=\"t.png\", width=40, height=40, format=\"avif\", speed=10",
    ]
    .iter()
    .enumerate()
    {
        t.push_str(&format!(
            "{{% set i = resize_image({args}) %}}<img id=\"r{i}\" src=\"{{{{ i.url | safe }}}}\">"
        ));
    }
    t.push_str("{{ page.body_html | safe }}{% endblock content %}");
    s.write("templates/page.html", &t);
    s.write(
        "content/about.md",
        "+++\ntitle = \"About\"\n+++\n\n![a photo](/p.jpg)\n",
    );
    let other = s.checkout();
    let (a, b) = (publish_build(&s, NOW), publish_build(&other, NOW));
    assert_eq!((a.0, b.0), (Some(0), Some(0)), "{} {}", a.1, b.1);
    let first = processed(&s.current_dir());
    assert_eq!(first.len(), 5 + 4, "five calls, two widths in two formats");
    assert_eq!(first, processed(&other.current_dir()));
    std::fs::remove_dir_all(s.path(".fencepost/images/processed")).unwrap();
    std::fs::remove_dir_all(s.path("public")).unwrap();
    let again = s.json(&["build", "--now", NOW]);
    assert_eq!(again["images_encoded"], 9, "{again}");
    assert_eq!(first, processed(&s.current_dir()));
    let kinds: std::collections::BTreeSet<_> = (first.values())
        .map(|b| format!("{:?}", image::guess_format(b).ok()))
        .collect();
    assert_eq!(kinds.len(), 4, "JPEG, PNG, WebP and AVIF: {kinds:?}");
}
