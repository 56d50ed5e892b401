//! Every asset where the generator put it (issue 79.3): a bundle's sub-folders, a section's
//! files beside its `_index.md`, a `path = "about"` bundle at `/about/` with its files, a
//! URL's case where Hugo kept it; the report grouped by reason.
use super::*;

const PNG: &str = "not really a png\n";

#[test]
fn a_zola_sites_bundle_folders_and_section_assets_stay_at_their_urls() {
    let src = source(&[
        ("config.toml", "base_url = \"https://example.org\"\ntitle = \"T\"\n"),
        ("content/_index.md", "+++\n+++\n"),
        ("content/blog/_index.md", "+++\ntitle = \"Blog\"\nsort_by = \"date\"\n+++\n![d](diagram.svg)\n"),
        ("content/blog/diagram.svg", SVG),
        ("content/blog/shared/logo.svg", SVG),
        ("content/blog/trip/index.md", "+++\ntitle = \"Trip\"\ndate = 2026-01-02\n+++\n![a](img/a.png) ![c](social_cards/c.png)\n"),
        ("content/blog/trip/img/a.png", PNG),
        ("content/blog/trip/social_cards/c.png", PNG),
        ("content/pages/_index.md", "+++\nrender = false\n+++\n"),
        ("content/pages/about/index.md", "+++\ntitle = \"About\"\npath = \"about\"\n+++\n![me](me.png)\n"),
        ("content/pages/about/me.png", PNG),
        // Dated, in a section Zola never renders: a plain page too, its date kept.
        ("content/pages/privacy/index.md", "+++\ntitle = \"Privacy\"\npath = \"privacy\"\ndate = 2023-10-31\n+++\nPolicy.\n"),
        ("static/blog/shared/logo.svg", "<svg>static wins</svg>\n"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert_eq!(r["bundle_files"], 3, "{r}");
    assert_eq!(r["section_assets"], 1, "{r}");
    assert!(
        not_converted(&r).contains(&(
            "content/blog/shared/logo.svg".into(),
            None,
            "section asset".into()
        )),
        "{r}"
    );
    assert_eq!(
        r["collections"],
        serde_json::json!(["blog"]),
        "no /pages/ list: {r}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["build"]["broken_links"], serde_json::json!([]), "{p}");
    let srv = s.serve(&[]);
    for (url, body) in [
        ("/blog/trip/img/a.png", PNG),
        ("/blog/trip/social_cards/c.png", PNG),
        ("/blog/diagram.svg", SVG),
        ("/blog/shared/logo.svg", "<svg>static wins</svg>\n"),
        ("/about/me.png", PNG),
    ] {
        let got = srv.get(url);
        assert_eq!((got.status, got.text().as_str()), (200, body), "{url}");
    }
    assert_eq!(srv.get("/about/").status, 200);
    assert_eq!(srv.get("/privacy/").status, 200);
    assert_eq!(r["moved"], serde_json::json!([]), "{r}");
    assert_eq!(srv.get("/pages/").status, 404);
}

/// Hugo's `disablePathToLower` keeps a page's case in its URL, and so does the import (an
/// id keeps its case: `/posts/MyTrip/`); without it, Hugo lowered the URL and so does the
/// import. Either way the page is where it was: not moved, no redirect needed.
#[test]
fn a_hugo_urls_case_is_kept_where_hugo_kept_it() {
    for (lower, url) in [(true, "/posts/mytrip/"), (false, "/posts/MyTrip/")] {
        let config = match lower {
            true => "baseURL = \"https://example.org/\"\ntitle = \"T\"\n".to_string(),
            false => {
                "baseURL = \"https://example.org/\"\ntitle = \"T\"\ndisablePathToLower = true\n"
                    .to_string()
            }
        };
        let src = source(&[
            ("hugo.toml", &config),
            (
                "content/posts/MyTrip.md",
                "+++\ntitle = \"Trip\"\ndate = 2026-01-02\n+++\nText.\n",
            ),
        ]);
        let tmp = tempfile::tempdir().unwrap();
        let dst = tmp.path().join("site");
        let r = import(tmp.path(), "hugo", src.path(), &dst);
        assert_eq!(r["moved"], serde_json::json!([]), "{r}");
        let s = site_at(&dst);
        let p = s.json(&["publish", "--build", "--now", NOW]);
        assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
        let srv = s.serve(&[]);
        assert_eq!(srv.get(url).status, 200, "{url}: {r}");
    }
}

/// The human report: one line per reason with its count, a few examples, and where the rest
/// are (a real theme's report was 394 lines, most of them one reason).
#[test]
fn the_human_report_groups_its_lines_by_reason() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/zola-docs");
    let tmp = tempfile::tempdir().unwrap();
    let out = fencepost()
        .current_dir(tmp.path())
        .args(["import", "zola"])
        .arg(&fixture)
        .arg(tmp.path().join("site"))
        .args(["--now", NOW])
        .output()
        .unwrap();
    assert_success(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let reason = "× a section's front matter has no counterpart in a collection";
    assert_eq!(text.matches(reason).count(), 1, "{text}");
    assert!(text.contains(&format!("5 {reason}")), "{text}");
    assert!(
        text.contains("… and 2 more (--json lists every one)"),
        "{text}"
    );
    assert!(text.lines().count() < 40, "{text}");
}
