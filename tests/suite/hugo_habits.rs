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
