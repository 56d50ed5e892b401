//! Habits sites bring from Hugo and Zola: their own `robots.txt`, relative links checked, aliases
//! that redirect while their item is public.
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

/// `aliases`: each old URL is a redirect page in the revision only while its item is public
/// (none before its instant, gone with it when withdrawn); an alias that anything else has —
/// the item's own URL, a site page, another item's page or alias — is an invalid file, named
/// with its `aliases` line and the URL, and holds back only its own item.
#[test]
fn aliases_redirect_while_their_item_is_public_and_taken_ones_are_named_at_publish() {
    let s = TestSite::new();
    s.item_with(
        1,
        "2026-11-01",
        "aliases = [\"/old/one\", \"/one.html\"]\n",
        "One.",
    );
    s.item_with(
        2,
        "2026-12-20",
        "aliases = [\"/old/two/\"]\n",
        "Two, embargoed.",
    );
    s.publish(NOW);
    s.build(&[]);
    let page = s.current_file("old/one/index.html");
    assert!(page.contains("url=http"), "{page}");
    assert!(page.contains("/answers/1/"), "{page}");
    assert!(s.current_dir().join("one.html").is_file());
    let embargoed = s.current_dir().join("old/two/index.html");
    assert!(!embargoed.exists(), "an embargoed item's alias is nowhere");
    let manifest =
        std::fs::read_to_string(s.current_dir().join(".fencepost/manifest.json")).unwrap();
    assert!(!manifest.contains("/old/two/"), "{manifest}");
    assert!(
        manifest.contains("\"location\":\"/answers/1/\""),
        "{manifest}"
    );

    // Taken aliases: each file is named, the others go ahead.
    for (id, alias) in [
        (3, "/answers/3/"),   // its own URL
        (4, "/atom.xml"),     // not a page
        (5, "/sitemap.html"), // fine
        (6, "/answers/1/"),   // another item's page
        (7, "/old/one/"),     // another item's alias
    ] {
        s.item_with(
            id,
            "2026-11-02",
            &format!("aliases = [\"{alias}\"]\n"),
            "Body.",
        );
    }
    let r = publish_held(&s, NOW);
    assert_eq!(ids(&r, "published"), vec![5], "{r}");
    let invalid = r["invalid"].as_array().unwrap();
    let of = |file: &str| -> serde_json::Value {
        invalid
            .iter()
            .find(|i| i["file"] == file)
            .unwrap_or_else(|| panic!("{file}: {r}"))
            .clone()
    };
    for (id, words) in [
        (3, "this item's own URL"),
        (4, "not a page"),
        (6, "the URL of item answers/1"),
        (7, "an alias of item answers/1"),
    ] {
        let i = of(&format!("content/answers/{id}.md"));
        assert_eq!(i["key"], "aliases", "{i}");
        assert_eq!(i["line"], 6, "{i}");
        assert!(i["error"].as_str().unwrap().contains(words), "{i}");
    }

    // Withdrawn: its aliases go with it.
    for id in [3, 4, 6, 7] {
        std::fs::remove_file(s.path(&format!("content/answers/{id}.md"))).unwrap();
    }
    let one = std::fs::read_to_string(s.path("content/answers/1.md")).unwrap();
    s.write(
        "content/answers/1.md",
        &one.replacen("+++\n", "+++\nwithdrawn = true\n", 1),
    );
    s.json(&["publish", "--build", "--now", NOW]);
    assert!(!s.current_dir().join("old/one/index.html").exists());
    assert!(!s.current_dir().join("one.html").exists());
}

/// An item page wins over an alias: a new item at a published alias's URL is published, and
/// the build leaves that alias out, naming it, while the item's other aliases stay.
#[test]
fn a_new_item_at_an_aliases_url_wins_and_the_build_names_the_alias_it_left_out() {
    let s = TestSite::new();
    s.item_with(
        1,
        "2026-11-01",
        "aliases = [\"/answers/9/\", \"/old/1/\"]\n",
        "One.",
    );
    s.json(&["publish", "--build", "--now", NOW]);
    assert!(s.current_file("answers/9/index.html").contains("url=http"));
    s.item(9, "2026-11-02");
    // Item 1's file, if read again (it was written within the stat cache's racy window), is
    // named for the alias item 9 now has (exit 1); either way item 9 goes ahead.
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ids(&r, "published"), vec![9], "{r}");
    let left_out = r["build"]["left_out"].to_string();
    assert!(
        left_out.contains("an alias of the page /answers/1/")
            && left_out.contains("answers/9/index.html"),
        "{r}"
    );
    assert!(s.current_file("answers/9/index.html").contains("Item 9"));
    assert!(s.current_file("old/1/index.html").contains("url=http"));
}
