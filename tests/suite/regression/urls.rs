//! Regressions of URLs and placement: a URL the site keeps, another collection's, a plain page
//! that does not read, a term too long for a file name, aliases onto generated URLs.
use super::*;

/// Guards: an item cannot take a URL the site already serves.
///
/// Issue 34.1: an item whose URL is a list page, a taxonomy index, a plain page or another
/// collection's item is an invalid file at publish (file, line, key, URL); every other item
/// publishes and the build that follows succeeds.
#[test]
fn an_item_whose_url_the_site_keeps_is_held_at_publish() {
    let s = fixture("features");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("url = \"/posts/{id}/\"", "url = \"/{id}/\""),
    );
    for id in ["tags", "about", "posts", "fine"] {
        post(&s, id, "");
    }
    s.write(
        "content/posts/advisories.md",
        "+++\nid = \"advisories\"\ntitle = \"T\"\npublish_at = 2026-11-20T09:00:00Z\n+++\nx\n",
    );
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, HELD, "{r}");
    let invalid = r["invalid"].as_array().unwrap();
    let by_file = |f: &str| {
        invalid
            .iter()
            .find(|i| i["file"] == f)
            .unwrap_or_else(|| panic!("{f} not invalid: {r}"))
            .clone()
    };
    assert_eq!(by_file("content/posts/tags.md")["url"], "/tags/");
    assert!(by_file("content/posts/tags.md")["error"]
        .as_str()
        .unwrap()
        .contains("the index of taxonomy tags"));
    assert!(by_file("content/posts/about.md")["error"]
        .as_str()
        .unwrap()
        .contains("plain page content/about.md"));
    assert!(by_file("content/posts/posts.md")["error"]
        .as_str()
        .unwrap()
        .contains("list page of collection posts"));
    let adv = by_file("content/posts/advisories.md");
    assert_eq!(
        (adv["key"].clone(), adv["line"].clone()),
        ("id".into(), 2.into()),
        "{adv}"
    );
    let published = names(&r, "published");
    assert!(published.contains(&"posts/fine".to_string()), "{r}");
    assert!(
        !published
            .iter()
            .any(|p| p == "posts/tags" || p == "posts/about"),
        "{r}"
    );
    // The human form names the file, the key and the URL too.
    let human = s.cmd(&["publish", "--now", BEFORE]).output().unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("content/posts/tags.md") && text.contains("/tags/"),
        "{text}"
    );
    // The build that follows places everything that was published.
    let b = s.json(&["build", "--now", BEFORE]);
    assert_eq!(b["left_out"], serde_json::json!([]), "{b}");
    assert!(s.current_file("fine/index.html").contains("Post fine"));
    assert!(!s.current_file("tags/index.html").contains("Post tags"));
}

/// Guards: two collections' URL patterns never hand one URL to two items.
///
/// Issue 34.1: two collections whose URL patterns meet (`/n/{id}/` against `/n/x{id}/`):
/// the item that comes second is held, the first stays.
#[test]
fn an_item_never_takes_another_collections_url() {
    let s = TestSite::new();
    s.write(
        "fencepost.toml",
        "title = \"T\"\nbase_url = \"http://localhost/\"\n[ledger]\npath = \".fencepost/ledger.sqlite\"\n\
         [collections.a]\nurl = \"/n/{id}/\"\nid = \"slug\"\ndue = \"publish_at\"\nlist_url = \"\"\ntemplate = \"page.html\"\n\
         [collections.b]\nurl = \"/n/x{id}/\"\nid = \"slug\"\ndue = \"publish_at\"\nlist_url = \"\"\ntemplate = \"page.html\"\n",
    );
    let item = |c: &str, id: &str| {
        s.write(
            &format!("content/{c}/{id}.md"),
            &format!("+++\ntitle = \"{c} {id}\"\npublish_at = 2026-11-20T09:00:00Z\n+++\nx\n"),
        );
    };
    item("a", "xy");
    let r = s.publish(BEFORE);
    assert_eq!(names(&r, "published"), ["a/xy"]);
    item("b", "y");
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, HELD, "{r}");
    assert_eq!(r["invalid"][0]["url"], "/n/xy/", "{r}");
    assert!(
        r["invalid"][0]["error"]
            .as_str()
            .unwrap()
            .contains("item a/xy"),
        "{r}"
    );
    let b = s.json(&["build", "--now", BEFORE]);
    assert_eq!(b["left_out"], serde_json::json!([]), "{b}");
    assert!(s.current_file("n/xy/index.html").contains("a xy"));
}

/// Guards: a broken plain page never stops the build.
///
/// Issue 34.1: a plain page with an unknown key is named at publish (file, line, key); the
/// items publish; the build leaves only that page out, exits non-zero, and moves the
/// pointer for everything else.
#[test]
fn a_plain_page_that_does_not_read_is_named_and_left_out() {
    let s = fixture("features");
    s.write(
        "content/contact.md",
        "+++\ntitle = \"Contact\"\ntitel = \"x\"\n+++\nHi\n",
    );
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, HELD, "{r}");
    let bad = &r["invalid"][0];
    assert_eq!(
        (bad["file"].clone(), bad["line"].clone()),
        ("content/contact.md".into(), 3.into()),
        "{r}"
    );
    assert!(bad["error"].as_str().unwrap().contains("titel"), "{r}");
    assert!(
        names(&r, "published").contains(&"posts/hello".to_string()),
        "{r}"
    );
    let (code, b) = run_json(&s, &["build", "--now", BEFORE]);
    assert_eq!(code, HELD, "{b}");
    assert_eq!(b["pointer"], "moved", "{b}");
    assert_eq!(b["left_out"][0]["what"], "content/contact.md", "{b}");
    assert!(s
        .current_file("posts/hello/index.html")
        .contains("Hello, fences"));
    assert!(s.current_file("about/index.html").contains("About"));
    assert!(!s.current_dir().join("contact").exists());
}

/// Guards: a term that cannot be a file name never reaches the build.
///
/// Issue 34.1: a term whose slug could not be a file name is refused at read time; the
/// item is held, the others publish.
#[test]
fn a_term_too_long_for_a_file_name_is_refused_when_read() {
    let s = fixture("features");
    let long = "word ".repeat(40);
    post(&s, "long-tag", &format!("tags = [\"{long}\"]\n"));
    let (code, r) = run_json(&s, &["publish", "--now", BEFORE]);
    assert_eq!(code, HELD, "{r}");
    assert_eq!(r["invalid"][0]["file"], "content/posts/long-tag.md", "{r}");
    assert_eq!(r["invalid"][0]["key"], "tags", "{r}");
    assert!(
        r["invalid"][0]["error"]
            .as_str()
            .unwrap()
            .contains("at most 100"),
        "{r}"
    );
    assert!(
        names(&r, "published").contains(&"posts/hello".to_string()),
        "{r}"
    );
    s.json(&["build", "--now", BEFORE]);
}

/// Guards: a collision publish missed never freezes the site.
///
/// Issue 34.1, second line of defence: a collision publish could not see (a plain page
/// added over a public item's URL) never fails the revision: the newcomer is left out,
/// named, the command exits non-zero, and the pointer moves for everything else.
#[test]
fn the_build_leaves_out_what_it_cannot_place_and_moves_the_pointer() {
    let s = fixture("features");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("url = \"/posts/{id}/\"", "url = \"/{id}/\""),
    );
    post(&s, "contact", "");
    s.publish(BEFORE);
    s.json(&["build", "--now", BEFORE]);
    s.write(
        "content/contact.md",
        "+++\ntitle = \"Contact page\"\n+++\nHi\n",
    );
    post(&s, "later", "");
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, HELD, "{r}");
    assert!(
        names(&r, "published").contains(&"posts/later".to_string()),
        "{r}"
    );
    assert_eq!(r["build"]["pointer"], "moved", "{r}");
    let left = &r["build"]["left_out"][0];
    assert_eq!(
        (left["what"].clone(), left["path"].clone()),
        ("content/contact.md".into(), "contact/index.html".into()),
        "{r}"
    );
    assert!(s
        .current_file("contact/index.html")
        .contains("Post contact"));
    assert!(s.current_file("later/index.html").contains("Post later"));
}

/// Guards: an alias never takes a URL the build generates, in any spelling.
///
/// Issue 47.4: an alias onto a taxonomy's term page, a list's numbered page, or another
/// item's page spelt with `index.html` or without its slash passed `publish` and was then
/// dropped by every build, which exited 1 for ever. Each is an invalid file, held and named
/// with its `aliases` line at publish; everything else publishes and the build succeeds.
#[test]
fn an_alias_onto_a_generated_url_is_held_at_publish_in_every_spelling() {
    let s = fixture("features");
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 0, "{r}");
    let bad = [
        ("onto-term", "/tags/news/"),
        ("onto-term-file", "/tags/news/index.html"),
        ("onto-page-2", "/posts/page/2"),
        ("onto-hello", "/posts/hello/index.html"),
        ("onto-hello-cased", "/Posts/Hello"),
        ("onto-index", "/Tags/index.html"),
    ];
    for (id, alias) in bad {
        post(&s, id, &format!("aliases = [\"{alias}\"]\n"));
    }
    post(&s, "fine", "aliases = [\"/old/fine/\"]\n");
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, HELD, "{r}");
    assert_eq!(
        names(&r, "published"),
        vec!["posts/fine".to_string()],
        "{r}"
    );
    let invalid = r["invalid"].as_array().unwrap();
    for (id, alias) in bad {
        let f = invalid
            .iter()
            .find(|i| i["file"] == format!("content/posts/{id}.md"))
            .unwrap_or_else(|| panic!("{id} ({alias}) not held: {r}"));
        assert_eq!(f["line"], 4, "its aliases line: {f}");
    }
    assert_eq!(r["build"]["left_out"], serde_json::json!([]), "{r}");
    assert_eq!(r["build"]["pointer"], "moved", "{r}");
    // The next build leaves nothing out either: no alias stands in the way for ever.
    let (code, b) = run_json(&s, &["build", "--now", BEFORE]);
    assert_eq!(code, 0, "{b}");
    assert!(s.current_file("old/fine/index.html").contains("posts/fine"));
}

/// The features site served under `/blog/` (its `base_url` with a path).
fn features_under_blog() -> TestSite {
    let s = fixture("features");
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace(
            "base_url = \"http://localhost:8080/\"",
            "base_url = \"http://localhost:8080/blog/\"",
        ),
    );
    s
}

/// Guards: a site under a path rebases a URL with a multi-byte character near its start.
///
/// Performance round 5 (issue 52): `links::rebase` looked at a URL's first 12 bytes and
/// panicked when the cut fell inside a character; `publish --build` of such a page stopped.
#[test]
fn a_url_with_a_multibyte_character_is_rebased_under_a_base_path() {
    let s = features_under_blog();
    // The template puts the title in a URL: `/abcdefghij` then `é`, whose second byte is
    // the URL's 12th.
    let post = std::fs::read_to_string(s.path("templates/post.html")).unwrap();
    s.write(
        "templates/post.html",
        &post.replacen(
            "<h1>",
            "<a href=\"/abcdefghij{{ page.title }}/\">t</a><h1>",
            1,
        ),
    );
    s.write(
        "content/posts/accent.md",
        "+++\ntitle = \"é\"\npublish_at = 2026-11-20T09:00:00Z\n+++\n\nCafé.\n",
    );
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 0, "{r}");
    let page = std::fs::read_to_string(s.path("public/current/posts/accent/index.html")).unwrap();
    assert!(page.contains("href=\"/blog/abcdefghijé/\""), "{page}");
}

/// Guards: issue 78.5. Under a base path, a post whose HTML holds a `data:` image in a
/// `srcset`, an unquoted `href`, `&#x2f;` and `&sol;` spellings, a `formaction` and a
/// `ping` is rebased as a browser reads it: the image's base64 intact (it used to become
/// `base64,/blog/9j/…`), every root-relative URL under `/blog/`, a code sample and
/// `//cdn` left alone — and the links then checked (none broken).
#[test]
fn base_url_rewriting_rewrites_only_urls() {
    let s = features_under_blog();
    let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &cfg.replace("unsafe_html = false", "unsafe_html = true"),
    );
    let data = "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ==";
    s.write(
        "content/posts/forms.md",
        &format!(
            "+++\ntitle = \"Forms\"\npublish_at = 2026-11-20T09:00:00Z\n+++\n\n\
             <img alt=\"x\" srcset=\"{data} 1x, /posts/forms/ 2x\">\n\n\
             <p><a href=/posts/hello/>unquoted</a> <a href=\"&#x2f;posts&#x2f;hello/\">hex</a> \
             <a href=\"&sol;posts/hello/\" ping=\"/posts/forms/ https://x.org/p\">named</a> \
             <a href=\"//cdn.example/x.js\">cdn</a></p>\n\n\
             <form><button formaction=\"/posts/hello/\">go</button></form>\n\n\
             ```html\n<a href=\"/in-code/\">\n```\n"
        ),
    );
    let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["build"]["broken_links"], serde_json::json!([]), "{r}");
    let page = s.current_file("posts/forms/index.html");
    for want in [
        format!("srcset=\"{data} 1x, /blog/posts/forms/ 2x\""),
        "href=\"/blog/posts/hello/\">unquoted".into(),
        "href=\"/blog/posts/hello/\">hex".into(),
        "href=\"/blog/posts/hello/\" ping=\"/blog/posts/forms/ https://x.org/p\">named".into(),
        "href=\"//cdn.example/x.js\"".into(),
        "formaction=\"/blog/posts/hello/\"".into(),
    ] {
        assert!(page.contains(&want), "{want} in {page}");
    }
    assert!(page.contains("/in-code/") && !page.contains("/blog/in-code/"));
}

/// Guards: issue 78.7. A collection listing at `/tags/` beside the `tags` taxonomy, whose
/// index is `/tags/` (and one at `/tags/rust/`, where the term `rust` would be), used to
/// pass `publish` — its items recorded — and then fail every build. Refused where it is
/// written: every command names the key and both URLs, and nothing is recorded.
#[test]
fn a_config_whose_urls_collide_is_refused_before_anything_is_recorded() {
    for (list, names) in [
        ("/tags/", "taxonomy tags's index of terms (/tags/)"),
        ("/tags/rust/", "taxonomy tags's term pages (/tags/{term}/)"),
        ("/atom.xml/", "the site's feed"),
    ] {
        let s = fixture("features");
        let cfg = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
        s.write(
            "fencepost.toml",
            &format!("{cfg}\n[collections.notes]\nurl = \"/notes/{{id}}/\"\nlist_url = \"{list}\"\nid = \"slug\"\ndue = \"publish_at\"\n"),
        );
        s.write(
            "content/notes/a.md",
            "+++\ntitle = \"A\"\npublish_at = 2026-11-20T09:00:00Z\n+++\nA.\n",
        );
        let (code, r) = run_json(&s, &["publish", "--build", "--now", BEFORE]);
        assert_eq!(code, 1, "{list}: {r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(r["error"]["key"], "collections.notes.list_url", "{r}");
        assert!(msg.contains(names) && msg.contains(list), "{list}: {msg}");
        assert!(
            !s.path(".fencepost/ledger.sqlite").exists(),
            "nothing recorded"
        );
    }
}

/// Guards: issue 78.7. `import hugo` of a site whose section `tags` lists at `/tags/`,
/// beside its `tags` taxonomy: the config it would write is one its own site refuses, so
/// nothing is written and the error names the key, the URLs and the way out.
#[test]
fn import_never_writes_a_config_its_site_refuses() {
    let src = tempfile::tempdir().unwrap();
    for (rel, text) in [
        (
            "hugo.toml",
            "baseURL = \"https://example.org/\"\ntitle = \"T\"\n[taxonomies]\ntag = \"tags\"\n",
        ),
        (
            "content/tags/first.md",
            "---\ntitle: First\ndate: 2026-01-05\ntags: [a]\n---\nHello.\n",
        ),
        (
            "content/posts/second.md",
            "---\ntitle: Second\ndate: 2026-01-06\n---\nAgain.\n",
        ),
    ] {
        let p = src.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let out = fencepost()
        .args(["import", "hugo", "--json", "--now", BEFORE])
        .arg(src.path())
        .arg(&dst)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(1), "{v}");
    let msg = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("would not load") && msg.contains("/tags/"),
        "{msg}"
    );
    assert!(msg.contains("Nothing was written"), "{msg}");
    assert!(!dst.exists());
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}
