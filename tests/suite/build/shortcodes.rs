//! A site's own shortcodes (issue 79.4): `templates/shortcodes/*.html` and `*.md`, called as
//! Zola calls them, rendered with the body at publish (the ledger stores what they showed).
//! The adversary is a shortcode's author (a theme): it reaches what a page template may, no
//! more — no credential, no other page — and a failing one costs only the items calling it.
use super::*;

const NOTE: &str = "<aside class=\"note note-{{ kind }}\" data-nth=\"{{ nth }}\">{{ body | markdown | safe }}</aside>\n";
const VIDEO: &str = "<iframe src=\"https://www.youtube-nocookie.com/embed/{{ id }}\" title=\"{{ title }}\"></iframe>";
const SIGN: &str = "*Signed, {{ who }}* ({{ config.title }})";
const SECRET: &str = "PRIVATE+KEY+example.org+00000000+c2VjcmV0";

fn post(s: &TestSite, name: &str, body: &str) {
    s.write(
        &format!("content/posts/{name}.md"),
        &format!("+++\ntitle = \"{name}\"\npublish_at = 2026-11-20T00:00:00Z\n+++\n\n{body}\n"),
    );
}

#[test]
fn a_sites_shortcodes_render_as_zola_renders_them_and_a_failing_one_costs_only_its_items() {
    let s = fixture("features");
    s.write("templates/shortcodes/note.html", NOTE);
    s.write("templates/shortcodes/video.html", VIDEO);
    s.write("templates/shortcodes/sign.md", SIGN);
    s.write(
        "templates/shortcodes/thumb.html",
        "{{ resize_image(path=p, width=10) }}",
    );
    s.write(
        "templates/shortcodes/leak.html",
        &format!("{{{{ get_env(name=\"{}\") }}}}", "FENCEPOST_TLOG_KEY"),
    );
    post(&s, "calls", "Intro.\n\n{% note(kind=\"tip\") %}\nSave **often**.\n{% end %}\n\n{{ video(id=\"abc\", title=\"<b>x</b>\") }}\n\n{{ sign(who=\"Ann\") }}\n\nWrite one: `{{/* video(id=\"x\") */}}`; {{ page.title }} stays text.\n");
    s.write(
        "content/about.md",
        "+++\ntitle = \"About\"\n+++\n{{ sign(who=\"Bo\") }}\n",
    );
    post(&s, "thumbed", "{{ thumb(p=\"a.png\") }}");
    post(&s, "leaky", "{{ leak() }}");
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .env("FENCEPOST_TLOG_KEY", SECRET)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(HELD),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    only_callers_failed(&r);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(SECRET));

    let html = s.current_file("posts/calls/index.html");
    assert!(html.contains("<aside class=\"note note-tip\" data-nth=\"1\"><p>Save <strong>often</strong>.</p>\n</aside>"), "{html}");
    assert!(
        !html.contains("<p><aside"),
        "an HTML shortcode alone replaces its paragraph: {html}"
    );
    assert!(
        html.contains("embed/abc\" title=\"&lt;b&gt;x&lt;"),
        "arguments autoescaped: {html}"
    );
    assert!(
        html.contains("<em>Signed, Ann</em>"),
        "a Markdown shortcode is Markdown: {html}"
    );
    assert!(
        html.contains("{{ video(id=&quot;x&quot;) }}") || html.contains("{{ video(id=\"x\") }}"),
        "{html}"
    );
    assert!(html.contains("{{ page.title }} stays text"), "{html}");
    assert!(s
        .current_file("about/index.html")
        .contains("<em>Signed, Bo</em>"));
    for f in ["thumbed", "leaky"] {
        std::fs::remove_file(s.path(&format!("content/posts/{f}.md"))).unwrap();
    }
    // The ledger stores what the shortcodes showed: a changed template reaches the published
    // page with `publish --rerender`, not behind the ledger's back.
    s.write("templates/shortcodes/sign.md", "*By {{ who }}*");
    s.json(&["publish", "--build", "--now", NOW]);
    assert!(s
        .current_file("posts/calls/index.html")
        .contains("Signed, Ann"));
    s.json(&["publish", "--build", "--rerender", "--now", NOW]);
    assert!(s
        .current_file("posts/calls/index.html")
        .contains("<em>By Ann</em>"));
}

/// The items calling a failing shortcode failed, named with its template; the others went out.
fn only_callers_failed(r: &Value) {
    let published = r["published"].to_string();
    assert!(published.contains("posts/calls"), "{r}");
    let failed = r["failed"].to_string();
    for (item, why) in [
        ("thumbed", "templates/shortcodes/thumb.html"),
        ("leaky", "templates/shortcodes/leak.html"),
    ] {
        assert!(!published.contains(item), "{item}: {r}");
        assert!(failed.contains(item) && failed.contains(why), "{item}: {r}");
    }
}

/// A 3×2 PNG's signature and header: all `get_image_metadata` reads.
const PNG_3X2: &[u8] = &[
    0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, b'I', b'H', b'D', b'R', 0, 0, 0,
    3, 0, 0, 0, 2, 8, 6, 0, 0, 0, 0, 0, 0, 0,
];

/// The adversary is a shortcode's author reaching past its page: `get_image_metadata` in a
/// shortcode sees its own page's files (which go public with it) and `static/`, never another
/// page's — an embargoed one's image is as if absent, and stays so in the published page.
#[test]
fn a_shortcode_reads_its_own_pages_images_never_another_pages() {
    let s = fixture("features");
    s.write(
        "templates/shortcodes/size.html",
        "{% set m = get_image_metadata(path=p, allow_missing=true) %}<b>{% if m %}{{ m.width }}{% else %}none{% endif %}</b>",
    );
    for (name, at) in [
        ("trip", "2026-11-20T00:00:00Z"),
        ("launch", "2026-12-10T00:00:00Z"),
    ] {
        s.write(
            &format!("content/posts/{name}/index.md"),
            &format!("+++\ntitle = \"{name}\"\npublish_at = {at}\n+++\n\nOwn {{{{ size(p=\"posts/{name}/a.png\") }}}} other {{{{ size(p=\"posts/launch/a.png\") }}}}\n"),
        );
        std::fs::write(s.path(&format!("content/posts/{name}/a.png")), PNG_3X2).unwrap();
    }
    s.json(&["publish", "--build", "--now", NOW]);
    let trip = s.current_file("posts/trip/index.html");
    assert!(trip.contains("Own <b>3</b> other <b>none</b>"), "{trip}");
}
