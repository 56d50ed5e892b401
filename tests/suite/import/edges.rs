//! What import refuses and repairs: nothing read outside its source, a non-UTF-8 page, a dot
//! URL, `index.html` aliases, blank lines, links and escapes, folded tags.
use super::*;

/// Issue 47.1: import never reads outside its source. A symlinked `static/`, a symlinked file
/// and a symlinked bundle folder that lead out of SRC (a cloned repository can carry them)
/// are not followed — each reported with its reason — and after `publish --build` nothing of
/// the importer's disk is in the live revision; a `contentDir` that is absolute or leaves SRC
/// is refused, writing nothing. A link to a file inside SRC is read as that file.
#[test]
fn import_never_reads_outside_its_source() {
    let secrets = tempfile::tempdir().unwrap();
    std::fs::write(secrets.path().join("id_rsa"), "PRIVATE KEY").unwrap();
    std::fs::write(secrets.path().join("secret.txt"), "SECRET").unwrap();
    std::fs::create_dir_all(secrets.path().join("bundle")).unwrap();
    std::fs::write(
        secrets.path().join("bundle/index.md"),
        "---\ntitle: Stolen\ndate: 2026-01-01\n---\nx\n",
    )
    .unwrap();
    std::fs::write(secrets.path().join("bundle/key.pem"), "PEM").unwrap();
    let src = source(&[
        (
            "hugo.toml",
            "baseURL = \"https://example.org/\"\ntitle = \"T\"\n",
        ),
        (
            "content/posts/a.md",
            "---\ntitle: A\ndate: 2026-01-01\n---\nBody.\n",
        ),
        ("assets/real.css", "body{}"),
    ]);
    let link = |to: &Path, at: &str| {
        let p = src.path().join(at);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(to, p).unwrap();
    };
    link(secrets.path(), "static");
    link(
        &secrets.path().join("secret.txt"),
        "content/posts/secret.md",
    );
    link(&secrets.path().join("bundle"), "content/posts/stolen");
    link(&src.path().join("content/posts/a.md"), "content/posts/b.md");
    let work = tempfile::tempdir().unwrap();
    let dst = work.path().join("site");
    let r = import(work.path(), "hugo", src.path(), &dst);
    let reported: Vec<String> = not_converted(&r)
        .into_iter()
        .filter(|(_, _, what)| what == "symbolic link")
        .map(|(f, _, _)| f)
        .collect();
    for f in ["static/", "content/posts/secret.md", "content/posts/stolen"] {
        assert!(reported.iter().any(|r| r == f), "{f} not reported: {r}");
    }
    let s = site_at(&dst);
    s.json(&["publish", "--build", "--now", NOW]);
    for (path, bytes) in files_under(&s.current_dir())
        .into_iter()
        .chain(files_under(s.root()))
    {
        let text = String::from_utf8_lossy(&bytes);
        for secret in ["PRIVATE KEY", "SECRET", "PEM", "Stolen"] {
            assert!(!text.contains(secret), "{path} holds {secret}");
        }
    }
    // The link inside SRC is the file it names: b is A's text.
    assert!(s.path("content/posts/b.md").exists(), "{r}");
    // A contentDir outside SRC: refused, nothing written.
    for dir in ["../outside", "/etc"] {
        let src = source(&[(
            "hugo.toml",
            &format!("baseURL = \"https://example.org/\"\ncontentDir = \"{dir}\"\n"),
        )]);
        let dst = work.path().join("refused");
        let out = fencepost()
            .args(["import", "hugo"])
            .arg(src.path())
            .arg(&dst)
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("leads out of the source site"), "{err}");
        assert!(!dst.exists(), "nothing written");
    }
}

/// Issue 47.10: one page that is not UTF-8 is reported and the rest imported (it used to abort
/// the import); `url: ".."` or `"."` makes no hidden `content/.md` (reported; the page keeps
/// its section's URL); an alias spelt `…/index.html` is the page it names, so one onto the
/// page itself is dropped and one onto the home page reported — the site's own publish then
/// holds nothing.
#[test]
fn import_reports_a_non_utf8_page_a_dot_url_and_index_html_aliases_and_publishes_clean() {
    let src = source(&[
        ("hugo.toml", "baseURL = \"https://example.org/\"\ntitle = \"T\"\n"),
        ("content/posts/a.md", "---\ntitle: A\ndate: 2026-01-01\naliases: [\"/posts/a/index.html\", \"/old/a/index.html\", \"/index.html\"]\n---\nBody.\n"),
        ("content/posts/dots.md", "---\ntitle: Dots\nurl: \"..\"\n---\nDots.\n"),
        ("content/posts/dot.md", "---\ntitle: Dot\nurl: \".\"\n---\nDot.\n"),
    ]);
    std::fs::write(
        src.path().join("content/posts/latin1.md"),
        b"---\ntitle: Caf\xe9\ndate: 2026-01-01\n---\nCaf\xe9.\n",
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let dst = work.path().join("site");
    let r = import(work.path(), "hugo", src.path(), &dst);
    let nc = not_converted(&r);
    assert!(
        nc.iter()
            .any(|(f, l, w)| f == "content/posts/latin1.md" && *l == Some(2) && w == "page"),
        "{r}"
    );
    for f in ["content/posts/dots.md", "content/posts/dot.md"] {
        assert!(nc.iter().any(|(g, _, w)| g == f && w == "url"), "{f}: {r}");
    }
    assert!(
        nc.iter()
            .any(|(f, _, w)| f == "content/posts/a.md" && w == "alias"),
        "the home page alias: {r}"
    );
    assert!(!dst.join("content/.md").exists());
    let a = std::fs::read_to_string(dst.join("content/posts/a.md")).unwrap();
    assert!(
        a.contains("\"/old/a/\"") && !a.contains("index.html"),
        "{a}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    assert_eq!(p["held"], serde_json::json!([]), "{p}");
    assert!(s.current_file("old/a/index.html").contains("/posts/a/"));
}

/// Guards: issue 48 (points 1, 3, 4) — a Zola site as Zola reads it: front matter after blank
/// lines (Zola's own docs write it so), `@/` internal links resolved to the new URLs (a
/// section's `_index.md` to its list), only `{{ name(key=literal) }}` taken for a shortcode
/// (`{{ get_url(path=asset) }}` is text), a link written out in a code sample no broken link, the `{{/* … */}}` escape
/// shown as Zola shows it, a taxonomy named `theme-tags` accepted by publish; and Hugo tags
/// `HTML` and `html` folded into one term as Hugo does, and no alias written twice or onto
/// another page. Each site's own `publish` accepts it whole.
#[test]
fn a_zola_site_with_blank_lines_links_and_escapes_and_a_hugo_site_with_folded_tags_publish_whole() {
    a_zola_site_with_blank_lines_links_and_escapes_publishes_whole();
    a_hugo_site_with_folded_tags_publishes_whole();
}

fn a_zola_site_with_blank_lines_links_and_escapes_publishes_whole() {
    let src = source(&[
        ("config.toml", "base_url = \"https://zola.example.org\"\ntitle = \"Docs\"\ntaxonomies = [{ name = \"theme-tags\" }]\n"),
        ("content/docs/_index.md", "\n+++\ntitle = \"Docs\"\n+++\n"),
        ("content/docs/install.md", "\n\n+++\ntitle = \"Install\"\ndate = 2026-01-05\n[taxonomies]\ntheme-tags = [\"setup\"]\n+++\nSee [usage](@/docs/usage.md#flags) and [all docs](@/docs/_index.md).\n\nUse `{{ page.title }}` or {{ get_url(path=asset) }} in templates.\n\n```\n<a href=\"{{ page.permalink }}\">x</a>\n```\n\n{{/* youtube(id=\"shown\") */}}\n"),
        ("content/docs/usage.md", "+++\ntitle = \"Usage\"\ndate = 2026-01-06\n+++\nBack to [install](@/docs/install.md) or [nowhere](@/docs/gone.md).\n"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert_eq!(r["items"], 2, "{r}");
    let nc = not_converted(&r);
    assert!(
        nc.contains(&(
            "content/docs/usage.md".into(),
            Some(5),
            "link @/docs/gone.md".into()
        )),
        "{r}"
    );
    assert!(
        !nc.iter()
            .any(|(_, _, what)| what.contains("shortcode") || what.contains("front matter")),
        "nothing here is a shortcode or bad front matter: {r}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 2, "{p}");
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    // A link written out in a code sample is no broken link.
    assert!(!p.to_string().contains("permalink"), "{p}");
    let srv = s.serve(&[]);
    let page = srv.get("/docs/install/").text();
    assert!(
        page.contains("<h1>Install</h1>") || page.contains(">Install<"),
        "{page}"
    );
    assert!(
        !page.contains("+++") && !page.contains("title ="),
        "no raw front matter: {page}"
    );
    assert!(page.contains("href=\"/docs/usage/#flags\""), "{page}");
    assert!(page.contains("href=\"/docs/\""), "{page}");
    assert!(!page.contains("@/"), "{page}");
    assert!(page.contains("{{ get_url(path=asset) }}"), "{page}");
    assert!(
        page.contains("&lt;a href=\"{{ page.permalink }}\"&gt;")
            || page.contains("&lt;a href=&quot;{{ page.permalink }}&quot;&gt;"),
        "{page}"
    );
    assert!(
        page.contains("{{ youtube(id=&quot;shown&quot;) }}")
            || page.contains("{{ youtube(id=\"shown\") }}"),
        "{page}"
    );
    assert_eq!(srv.get("/theme-tags/setup/").status, 200);
    assert!(srv
        .get("/docs/usage/")
        .text()
        .contains("href=\"/docs/install/\""));
}

/// Hugo folds tag case: `HTML` and `html` are one term, spelt as the first page did.
fn a_hugo_site_with_folded_tags_publishes_whole() {
    let src = source(&[
        (
            "hugo.toml",
            "baseURL = \"https://hugo.example.org/\"\ntitle = \"Posts\"\nenableEmoji = true\n[markup.goldmark.renderer]\nunsafe = true\n",
        ),
        (
            "content/posts/a.md",
            "---\ntitle: A\ndate: 2026-01-05\ntags: [HTML, css]\n---\nA.\n\n<div class=\"raw\">raw</div>\n",
        ),
        (
            "content/posts/b.md",
            "---\ntitle: B\ndate: 2026-01-06\ntags: [html, Html, CSS]\n---\nB.\n",
        ),
        // Two pages claim one alias, and one claims another page's URL.
        (
            "content/posts/c.md",
            "---\ntitle: C\ndate: 2026-01-07\naliases: [/old/]\n---\nC.\n",
        ),
        (
            "content/posts/d.md",
            "---\ntitle: D\ndate: 2026-01-08\naliases: [/old/, /posts/a/]\n---\nD.\n",
        ),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", src.path(), &dst);
    assert_eq!(r["terms_folded"], 3, "{r}");
    let nc = not_converted(&r);
    assert_eq!(
        nc.iter()
            .filter(|(f, _, w)| f == "content/posts/d.md" && w == "alias")
            .count(),
        2,
        "{r}"
    );
    let b = std::fs::read_to_string(dst.join("content/posts/b.md")).unwrap();
    assert!(b.contains("tags = [\"HTML\", \"css\"]"), "{b}");
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 4, "{p}");
    assert_eq!(p["invalid"], serde_json::json!([]), "{p}");
    let srv = s.serve(&[]);
    let old = srv.get("/old/");
    assert_eq!(old.status, 301);
    assert_eq!(old.header("location"), Some("/posts/c/"));
    // Hugo's `unsafe = true` kept: raw HTML renders as it did; `enableEmoji` reported.
    assert!(srv
        .get("/posts/a/")
        .text()
        .contains("<div class=\"raw\">raw</div>"));
    assert!(
        not_converted(&r)
            .iter()
            .any(|(f, _, w)| f == "hugo.toml" && w == "enableEmoji"),
        "{r}"
    );
}

/// Guards: issue 79.4 (GitHub alerts). A Hugo page's `> [!WARNING]` renders as an alert
/// (Hugo renders them), not as a blockquote showing `[!WARNING]`; a Zola site gets them only
/// with its own `markdown.github_alerts = true`.
#[test]
fn github_alerts_render_as_the_source_rendered_them() {
    let page = "---\ntitle: Care\ndate: 2026-01-05\n---\n> [!WARNING]\n> Back up first.\n";
    let src = source(&[
        (
            "hugo.toml",
            "baseURL = \"https://example.org/\"\ntitle = \"T\"\n",
        ),
        ("content/posts/care.md", page),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    import(tmp.path(), "hugo", src.path(), &dst);
    let s = site_at(&dst);
    s.json(&["publish", "--build", "--now", NOW]);
    let html = s.current_file("posts/care/index.html");
    assert!(
        html.contains("markdown-alert-warning") && !html.contains("[!WARNING]"),
        "{html}"
    );

    for (setting, alert) in [("", false), ("[markdown]\ngithub_alerts = true\n", true)] {
        let src = source(&[
            (
                "config.toml",
                &format!("base_url = \"https://example.org\"\ntitle = \"Z\"\n{setting}"),
            ),
            (
                "content/blog/_index.md",
                "+++\ntitle = \"Blog\"\nsort_by = \"date\"\n+++\n",
            ),
            (
                "content/blog/care.md",
                "+++\ntitle = \"Care\"\ndate = 2026-01-05\n+++\n> [!TIP]\n> Save often.\n",
            ),
        ]);
        let tmp = tempfile::tempdir().unwrap();
        let dst = tmp.path().join("site");
        import(tmp.path(), "zola", src.path(), &dst);
        let s = site_at(&dst);
        s.json(&["publish", "--build", "--now", NOW]);
        let html = s.current_file("blog/care/index.html");
        assert_eq!(
            html.contains("markdown-alert-tip"),
            alert,
            "{setting}: {html}"
        );
    }
}
