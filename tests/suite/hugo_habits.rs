//! Issue 38: what a site coming from Hugo or Zola brings with it and expects to work.
use crate::common::*;

/// `static/robots.txt` is the site's robots.txt, copied as it is (it used to stop the
/// build: two files at one path); `templates/robots.txt` is rendered with `site`; without
/// either, one is generated. Every origin serves what the revision holds.
#[test]
fn a_sites_own_robots_txt_replaces_the_generated_one() {
    let s = TestSite::new();
    s.item(1, "2026-11-01");
    s.json(&["publish", "--build", "--now", NOW]);
    let generated = s.current_file("robots.txt");
    assert!(generated.contains("Sitemap: "), "{generated}");

    s.write(
        "templates/robots.txt",
        "User-agent: *\nDisallow: /drafts/\nSitemap: {{ site.base_url }}sitemap.xml\n",
    );
    let b = s.build(&[]);
    assert_eq!(b["left_out"], serde_json::json!([]), "{b}");
    let templated = s.current_file("robots.txt");
    assert!(
        templated.starts_with("User-agent: *\nDisallow: /drafts/\nSitemap: http"),
        "{templated}"
    );

    s.write("static/robots.txt", "User-agent: *\nDisallow: /\n");
    s.build(&[]);
    assert_eq!(s.current_file("robots.txt"), "User-agent: *\nDisallow: /\n");
    let srv = s.serve(&[]);
    let r = srv.get("/robots.txt");
    assert_eq!(r.status, 200);
    assert_eq!(r.text(), "User-agent: *\nDisallow: /\n");
}

/// Relative links are link-checked like absolute ones: resolved against their page, as a
/// browser resolves them.
#[test]
fn relative_links_are_checked_like_absolute_ones() {
    let s = TestSite::new();
    s.item_with(
        1,
        "2026-11-01",
        "",
        "[all](../) [home](../../) [cover](cover.svg) [gone](../nowhere/) [mail](mailto:a@b.org) [top](#top)",
    );
    s.json(&["publish", "--now", NOW]);
    let strict = s
        .cmd(&["build", "--strict", "--now", NOW])
        .output()
        .unwrap();
    assert!(
        !strict.status.success(),
        "--strict refuses a broken relative link"
    );
    let r = s.build(&[]);
    let mut broken: Vec<(String, String)> = r["broken_links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["page"].as_str().unwrap().to_string(),
                b["link"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    broken.sort();
    assert_eq!(
        broken,
        [
            (
                "answers/1/index.html".to_string(),
                "/answers/1/cover.svg".to_string()
            ),
            (
                "answers/1/index.html".to_string(),
                "/answers/nowhere/".to_string()
            ),
        ],
        "{r}"
    );
}

/// A YAML front matter (`---`) is read as TOML is: the item publishes and renders the same,
/// and a typo in it is named with the same file, line, key and words as in TOML — and holds
/// back only its own item.
#[test]
fn yaml_front_matter_publishes_and_its_typos_read_as_tomls_do() {
    let s = TestSite::new();
    s.write(
        "content/answers/1.md",
        "---\nid: 1\nday: 2026-11-01\ntitle: \"Yaml: one\"\nprice: 4.99\n---\n\nThe body.\n",
    );
    s.item(2, "2026-11-02");
    let r = s.publish(NOW);
    assert_eq!(ids(&r, "published"), vec![1, 2], "{r}");
    s.build(&[]);
    let page = s.current_file("answers/1/index.html");
    assert!(
        page.contains("Yaml: one") && page.contains("The body."),
        "{page}"
    );

    // The same mistake in each format: an unknown key on line 5, a wrong type on line 4.
    s.write(
        "content/answers/3.md",
        "+++\nid = 3\nday = 2026-11-03\nprice = \"cheap\"\ncolour = 2\n+++\n",
    );
    s.write(
        "content/answers/4.md",
        "---\nid: 4\nday: 2026-11-03\nprice: cheap\ncolour: 2\n---\n",
    );
    s.write(
        "content/answers/5.md",
        "---\nid: 5\nday: 2026-11-03\ntitle: [unclosed\n---\n",
    );
    s.item(6, "2026-11-03");
    let r = publish_failing(&s, "2026-11-05T00:00:00Z");
    assert_eq!(ids(&r, "published"), vec![6], "{r}");
    let invalid = r["invalid"].as_array().unwrap();
    let of = |file: &str| {
        invalid
            .iter()
            .find(|i| i["file"] == file)
            .unwrap_or_else(|| panic!("{file} is not named: {r}"))
            .clone()
    };
    let (toml, yaml) = (of("content/answers/3.md"), of("content/answers/4.md"));
    assert_eq!(yaml["line"], toml["line"], "{r}");
    assert_eq!(yaml["key"], toml["key"], "{r}");
    let words = |v: &serde_json::Value| {
        v["error"]
            .as_str()
            .unwrap()
            .replace("content/answers/3.md", "FILE")
            .replace("content/answers/4.md", "FILE")
            .replace(" 3 ", " N ")
            .replace(" 4 ", " N ")
    };
    assert_eq!(words(&yaml), words(&toml), "{r}");
    let broken = of("content/answers/5.md");
    assert_eq!(broken["line"], 4, "{r}");
}
