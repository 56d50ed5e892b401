use super::*;

fn rp(raw: &str) -> RequestPath {
    paths::parse(raw).unwrap()
}

#[test]
fn a_preview_path_names_one_preview_and_a_path_in_it() {
    let (name, inner) = split(&rp("/.preview/pr-7/posts/a/")).unwrap();
    assert_eq!(
        (name.as_str(), inner.rel.as_str(), inner.trailing_slash),
        ("pr-7", "posts/a", true)
    );
    let (_, root) = split(&rp("/.preview/pr-7")).unwrap();
    assert_eq!((root.rel.as_str(), root.trailing_slash), ("", false));
    assert!(split(&rp("/.preview/PR/")).is_none());
    assert!(split(&rp("/posts/")).is_none());
}

#[test]
fn the_token_is_taken_out_of_the_query_and_nothing_else() {
    assert_eq!(
        token_param("a=1&fp_preview=t.1.m&b=2").as_deref(),
        Some("t.1.m")
    );
    assert_eq!(token_param("fp_previewx=1"), None);
    assert_eq!(without_token("a=1&fp_preview=t&b=2"), "a=1&b=2");
    assert_eq!(without_token("fp_preview=t"), "");
}
