//! Issue 79.1: a Zola theme's templates are kept whatever they call. Zola's `load_data`,
//! `get_hash`, filters and (issue 81) `resize_image` run; a call that fails for a page costs
//! only the pages of the template that calls it. The adversary is the theme's author: `load_data` reads `data/` and
//! `static/` only — never `content/` (items before their instant), never outside the site.
use super::*;

fn zola_site() -> tempfile::TempDir {
    let home = "{% set people = load_data(path=\"data/people.json\") %}\
        <ul>{% for p in people.list %}<li>{{ p.name }}</li>{% endfor %}</ul>\
        <p id=\"n\">{{ 1234567 | num_format }}</p>\
        <p id=\"b\">{{ \"fence\" | base64_encode }}|{{ \"ZmVuY2U=\" | base64_decode }}</p>\
        <p id=\"r\">{{ \"a-b-c\" | regex_replace(pattern=\"-\", rep=\"+\") }}</p>\
        <p id=\"h\">{{ get_hash(literal=\"x\", sha_type=256, base64=false) }}</p>\
        <p id=\"c\">{% set c = load_data(path=\"table.csv\") %}{{ c.records | length }}</p>\
        <p id=\"bib\">{% set b = load_data(path=\"data/refs.bib\") %}{{ b.bibliographies.0.citation_key }}: {{ b.bibliographies.0.tags.title }}</p>";
    source(&[
        (
            "config.toml",
            "base_url = \"https://zola.example.org\"\ntitle = \"Z\"\n",
        ),
        ("content/_index.md", "+++\nsort_by = \"date\"\n+++\n"),
        (
            "content/blog/_index.md",
            "+++\ntitle = \"Blog\"\nsort_by = \"date\"\n+++\n",
        ),
        (
            "content/blog/a.md",
            "+++\ntitle = \"A\"\ndate = 2026-11-20\n+++\nA.\n",
        ),
        (
            "content/gallery/_index.md",
            "+++\ntitle = \"Gallery\"\nsort_by = \"date\"\npage_template = \"photo.html\"\n+++\n",
        ),
        (
            "content/gallery/p.md",
            "+++\ntitle = \"P\"\ndate = 2026-11-21\n+++\nP.\n",
        ),
        (
            "data/people.json",
            "{\"list\": [{\"name\": \"Ada\"}, {\"name\": \"Grace\"}]}",
        ),
        ("static/table.csv", "a,b\n1,2\n3,4\n"),
        // Zola's resize_image cache, committed as sites often do.
        ("static/processed_images/x.0123456789abcdef.jpg", "zola's version"),
        (
            "data/refs.bib",
            "@article{knuth84,\n  Title = {Literate Programming},\n  author = {Donald E. Knuth},\n  year = {1984}\n}\n",
        ),
        ("templates/index.html", home),
        ("templates/section.html", "{{ section.title }}"),
        (
            "templates/page.html",
            "<h1>{{ page.title }}</h1>{{ page.content | safe }}",
        ),
        (
            "templates/photo.html",
            "{% set i = resize_image(path=\"x.jpg\", width=10, height=10) %}{{ i.url }}",
        ),
        (
            "templates/leak.html",
            "{{ load_data(path=\"content/blog/a.md\") }}",
        ),
    ])
}

#[test]
fn a_zola_themes_templates_are_kept_and_zolas_functions_run() {
    let src = zola_site();
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert!(
        !not_converted(&r).iter().any(|u| u.2 == "resize_image"),
        "resize_image runs (issue 81): {r}"
    );
    // Zola's own versions stay behind, reported: fencepost makes its own.
    assert!(
        (not_converted(&r).iter()).any(|u| u.0 == "static/processed_images/"
            && u.2.starts_with("1 files of Zola's resize_image output")),
        "{r}"
    );
    assert!(!dst.join("static/processed_images").exists());
    assert!(
        dst.join("templates/index.html").is_file(),
        "the theme's templates are kept"
    );
    let s = site_at(&dst);
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(HELD), "{p}");
    let held = p["build"]["held_pages"].as_array().unwrap();
    assert_eq!(held.len(), 1, "only the page of photo.html: {p}");
    // It runs: x.jpg is no file of the site, and that holds only its page.
    let why = held[0]["why"].as_str().unwrap();
    assert!(why.contains("resize_image") && why.contains("x.jpg"), "{p}");
    let home = s.current_file("index.html");
    for want in [
        "<li>Ada</li><li>Grace</li>",
        "<p id=\"n\">1,234,567</p>",
        "<p id=\"b\">ZmVuY2U=|fence</p>",
        "<p id=\"r\">a+b+c</p>",
        "<p id=\"h\">2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881</p>",
        "<p id=\"c\">2</p>",
        "<p id=\"bib\">knuth84: Literate Programming</p>",
    ] {
        assert!(home.contains(want), "{want} in {home}");
    }
    assert!(s.current_file("blog/a/index.html").contains("<h1>A</h1>"));
    // A data file changed: the pages that may show it are rendered again.
    s.write("data/people.json", "{\"list\": [{\"name\": \"Edsger\"}]}");
    let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
    assert_eq!(out.status.code(), Some(HELD));
    assert!(s.current_file("index.html").contains("<li>Edsger</li>"));
}

/// A template reading `content/` (an item's source, before its instant) or a file outside
/// the site is refused: the page is held, and nothing of the file is in the revision.
#[test]
fn load_data_never_reads_content_or_outside_the_site() {
    let s = TestSite::new();
    s.item_with(1, "2099-01-01", "", "THE-EMBARGOED-ANSWER");
    s.write("secret.txt", "THE-RUNNER-SECRET");
    for (tpl, leak) in [
        (
            "{{ load_data(path=\"content/answers/1.md\", format=\"plain\") }}",
            "THE-EMBARGOED-ANSWER",
        ),
        (
            "{{ load_data(path=\"../secret.txt\") }}",
            "THE-RUNNER-SECRET",
        ),
        ("{{ load_data(path=\"/etc/hostname\") }}", ""),
    ] {
        s.write("templates/index.html", tpl);
        let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
        let b: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(HELD), "{tpl}: {b}");
        let why = b["held_pages"][0]["why"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(why.contains("load_data"), "{tpl}: {b}");
        if !leak.is_empty() {
            for f in walkdir::WalkDir::new(s.path("public"))
                .into_iter()
                .flatten()
            {
                if f.file_type().is_file() {
                    let text =
                        String::from_utf8_lossy(&std::fs::read(f.path()).unwrap()).into_owned();
                    assert!(
                        !text.contains(leak),
                        "{tpl}: {} holds it",
                        f.path().display()
                    );
                }
            }
        }
    }
}

/// A 3×2 PNG: its signature, and an IHDR chunk giving its size (all a header reader needs).
pub(super) const PNG_3X2: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, b'I', b'H', b'D', b'R', 0, 0, 0,
    3, 0, 0, 0, 2, 8, 6, 0, 0, 0, 0, 0, 0, 0,
];

/// `trans` answers from the site's `[translations]` (`import zola` copies Zola's), and
/// `get_image_metadata` reads an image of `static/` — never one of `content/`, where a bundle's
/// image may be embargoed: that page is held, named.
#[test]
fn trans_and_get_image_metadata_answer_as_zola_does() {
    let src = source(&[
        (
            "config.toml",
            "base_url = \"https://zola.example.org\"\ntitle = \"Z\"\n[translations]\nread_more = \"Read more\"\n",
        ),
        ("content/_index.md", "+++\n+++\n"),
        ("content/blog/_index.md", "+++\ntitle = \"Blog\"\nsort_by = \"date\"\n+++\n"),
        ("content/blog/a.md", "+++\ntitle = \"A\"\ndate = 2026-11-20\n+++\nA.\n"),
        ("static/logo.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 40 20\"/>"),
        ("templates/index.html", "<p id=\"t\">{{ trans(key=\"read_more\", lang=\"en\") }}</p>{% set m = get_image_metadata(path=\"pic.png\") %}<p id=\"m\">{{ m.width }}x{{ m.height }} {{ m.format }}</p>{% set s = get_image_metadata(path=\"logo.svg\") %}<p id=\"s\">{{ s.width }}x{{ s.height }}</p>{% set n = get_image_metadata(path=\"none.png\", allow_missing=true) %}<p id=\"n\">{{ n is not object }}</p>"),
        ("templates/section.html", "{{ section.title }}"),
        ("templates/page.html", "{{ page.title }}"),
    ]);
    std::fs::write(src.path().join("static/pic.png"), PNG_3X2).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    import(tmp.path(), "zola", src.path(), &dst);
    let config = std::fs::read_to_string(dst.join("fencepost.toml")).unwrap();
    assert!(config.contains("read_more = \"Read more\""), "{config}");
    let s = site_at(&dst);
    s.json(&["publish", "--build", "--now", NOW]);
    let home = s.current_file("index.html");
    for want in [
        "<p id=\"t\">Read more</p>",
        "<p id=\"m\">3x2 png</p>",
        "<p id=\"s\">40x20</p>",
        "<p id=\"n\">true</p>",
    ] {
        assert!(home.contains(want), "{want} in {home}");
    }
    // A key the site lacks, another language, an image of content/: the page is held, named.
    for (call, why) in [
        ("{{ trans(key=\"nope\") }}", "in no language's strings"),
        (
            "{{ trans(key=\"other\", lang=\"fr\") }}",
            "not a language of this site",
        ),
        (
            "{{ get_image_metadata(path=\"content/x.png\") }}",
            "a public page's files",
        ),
    ] {
        s.write("templates/index.html", call);
        let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
        let b: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(HELD), "{call}: {b}");
        assert!(b["held_pages"].to_string().contains(why), "{call}: {b}");
    }
}

/// The adversary is a template's author reading a page's images before its instant: of
/// `content/`, `get_image_metadata` and `load_data` see only the bundle files of public pages,
/// as the ledger recorded them. An embargoed bundle's image — or a public one edited since it
/// was published — is as if it were not there, until its page goes out.
#[test]
fn content_files_are_read_only_as_public_pages_published_them() {
    let s = fixture("features");
    for (name, at) in [
        ("trip", "2026-11-20T00:00:00Z"),
        ("launch", "2026-12-10T00:00:00Z"),
    ] {
        s.write(
            &format!("content/posts/{name}/index.md"),
            &format!("+++\ntitle = \"{name}\"\npublish_at = {at}\n+++\n\n![a](a.png)\n"),
        );
        std::fs::write(s.path(&format!("content/posts/{name}/a.png")), PNG_3X2).unwrap();
    }
    let probe = |name: &str| {
        format!("{{% set m = get_image_metadata(path=\"posts/{name}/a.png\", allow_missing=true) %}}<p id=\"{name}\">{{% if m %}}{{{{ m.width }}}}{{% else %}}none{{% endif %}}</p>")
    };
    let index = std::fs::read_to_string(s.path("templates/index.html")).unwrap();
    let index = index.replacen(
        "{% block content %}",
        &format!("{{% block content %}}{}{}", probe("trip"), probe("launch")),
        1,
    );
    s.write("templates/index.html", &index);
    s.json(&["publish", "--build", "--now", NOW]);
    let home = s.current_file("index.html");
    assert!(home.contains("<p id=\"trip\">3</p>"), "{home}");
    assert!(
        home.contains("<p id=\"launch\">none</p>"),
        "embargoed: {home}"
    );
    // Edited since it was published: not what the ledger recorded, so not read.
    std::fs::write(s.path("content/posts/trip/a.png"), b"not a png").unwrap();
    std::fs::remove_dir_all(s.path("public")).unwrap();
    let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
    assert_eq!(out.status.code(), Some(HELD), "the bundle file is left out");
    assert!(s
        .current_file("index.html")
        .contains("<p id=\"trip\">none</p>"));
    std::fs::write(s.path("content/posts/trip/a.png"), PNG_3X2).unwrap();
    s.json(&["publish", "--build", "--now", "2026-12-10T00:00:00Z"]);
    assert!(s
        .current_file("index.html")
        .contains("<p id=\"launch\">3</p>"));
}

/// Zola's documented gallery (its image-processing page), as a page template over
/// `page.assets`.
const GALLERY: &str = "<h1>{{ page.title }}</h1>{% for asset in page.assets -%}{%- if asset is matching(\"[.](jpg|png)$\") -%}{% set image = resize_image(path=asset, width=240, height=180) %}<a href=\"{{ get_url(path=asset) }}\"><img src=\"{{ image.url }}\" /></a>{%- endif %}{%- endfor %}";

/// Guards: issue 81 (point 1): a Zola theme's gallery — Zola's documented template over a
/// page bundle's `page.assets` — runs `resize_image` in Zola mode after `import zola`, on its
/// own templates: each photo of the bundle at Zola's default `fill`, 240 × 180, a JPEG's as
/// JPEG and a PNG's as PNG, each file in the revision at that size.
#[test]
fn a_zola_gallery_resizes_its_pages_photos_in_zola_mode() {
    let src = source(&[
        (
            "config.toml",
            "base_url = \"https://zola.example.org\"\ntitle = \"Z\"\n",
        ),
        ("content/_index.md", "+++\nsort_by = \"date\"\n+++\n"),
        (
            "content/trips/_index.md",
            "+++\ntitle = \"Trips\"\nsort_by = \"date\"\n+++\n",
        ),
        (
            "content/trips/sea/index.md",
            "+++\ntitle = \"Sea\"\ndate = 2026-11-20\n+++\nThe sea.\n",
        ),
        ("templates/index.html", "home"),
        ("templates/section.html", "{{ section.title }}"),
        ("templates/page.html", GALLERY),
    ]);
    let bundle = src.path().join("content/trips/sea");
    image::RgbImage::from_fn(640, 480, |x, y| image::Rgb([x as u8, y as u8, 80]))
        .save(bundle.join("a.jpg"))
        .unwrap();
    image::RgbImage::from_fn(300, 380, |x, y| image::Rgb([y as u8, x as u8, 30]))
        .save(bundle.join("b.png"))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert_eq!(r["starter"], "kept", "{r}");
    let s = site_at(&dst);
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    let p: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{p}");
    let page = s.current_file("trips/sea/index.html");
    let urls: Vec<String> = (page.split("<img src=\"").skip(1))
        .map(|r| r.split('"').next().unwrap().replace("&#x2F;", "/"))
        .collect();
    assert_eq!(urls.len(), 2, "{page}");
    let mut kinds = Vec::new();
    for url in &urls {
        assert!(url.starts_with("/processed_images/"), "{url}");
        let file = s.current_dir().join(url.trim_start_matches('/'));
        assert_eq!(image::image_dimensions(&file).unwrap(), (240, 180), "{url}");
        kinds.push(url.rsplit('.').next().unwrap().to_string());
    }
    kinds.sort();
    assert_eq!(kinds, ["jpg", "png"]);
}
