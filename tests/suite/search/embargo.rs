//! Never early: the embargoed post's words, title and URL are in no index file of any public
//! revision or bucket before its instant, Pagefind's search finds it from the revision that
//! publishes it, and not after it is withdrawn.
use super::*;

const LATER: &str = "2026-12-09T00:00:00Z";

/// Guards: issue 82 (point 3). The adversary reads every file of `public/` and of the
/// deployed bucket (index chunks and fragments unpacked) and queries Pagefind's own search
/// for the embargoed post's unique word; an editor's `build --preview` has meanwhile indexed
/// the post (its own index, in its own folder). Before the instant: no file holds the word,
/// the title or the URL, and the query finds nothing; at the instant the query finds the
/// post; once the post is withdrawn, the revision that withdraws it finds nothing again.
#[test]
fn an_embargoed_post_is_in_no_index_before_its_instant() {
    let s = site();
    s.item_with(2, "2026-12-07", "", "The zephyrquux recipe, at last.");
    s.write(
        "content/answers/2.md",
        &std::fs::read_to_string(s.path("content/answers/2.md"))
            .unwrap()
            .replace("title = \"Item 2\"", "title = \"Glimmerfold soup\""),
    );
    let preview = s.json(&["build", "--preview", "--now", NOW]);
    let preview_dir = Path::new(preview["path"].as_str().unwrap()).to_path_buf();
    let previewed = readable_files(&preview_dir.join("pagefind"));
    assert!(
        previewed
            .iter()
            .any(|(_, b)| String::from_utf8_lossy(b).contains("zephyrquux")),
        "the preview's own index has the post"
    );
    let v = publish_build(&s, NOW);
    assert!(v["build"]["revision"].as_i64().is_some(), "{v}");
    let broken = &v["build"]["broken_links"];
    assert_eq!(
        broken,
        &serde_json::json!([]),
        "the search box's links resolve: {v}"
    );
    let target = format!("file://{}", s.path(".bucket").display());
    s.cmd(&["deploy", "--to", &target, "--now", NOW])
        .assert()
        .success();
    let mut public = readable_files(&s.path("public"));
    public.extend(readable_files(&s.path(".bucket")));
    assert!(
        public.iter().any(|(n, _)| n.contains("pf_fragment")),
        "the index was deployed"
    );
    assert_nothing_reveals(
        "public and bucket",
        &public,
        &["zephyrquux", "Glimmerfold", "answers/2/"],
    );
    let server = s.serve(&[]);
    assert_eq!(query(&server, "zephyrquux"), Vec::<String>::new());
    assert_eq!(query(&server, "lanterns"), ["/answers/1/"]);
    let zolas = s.path("public/current/search_index.en.js");
    assert_eq!(elasticlunr(&zolas, "zephyrquux"), Vec::<String>::new());
    assert_eq!(elasticlunr(&zolas, "lanterns").len(), 1);
    publish_build(&s, LATER);
    assert_eq!(query(&server, "zephyrquux"), ["/answers/2/"]);
    let found = elasticlunr(&zolas, "zephyrquux");
    assert!(
        found.len() == 1 && found[0].ends_with("/answers/2/"),
        "Zola's index too: {found:?}"
    );
    assert_eq!(
        query(&server, "glimmerfold"),
        ["/answers/2/"],
        "the title is indexed; lists are not (the starter marks an item's article)"
    );
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    let v = publish_build(&s, LATER);
    assert_eq!(
        query(&server, "zephyrquux"),
        Vec::<String>::new(),
        "withdrawn: {v}"
    );
    let current = readable_files(&s.current_dir());
    assert_nothing_reveals("the withdrawing revision", &current, &["zephyrquux"]);
}
