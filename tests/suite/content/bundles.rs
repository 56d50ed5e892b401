//! A page bundle's whole tree (issue 79.3): the files of its sub-folders (`img/`,
//! `social_cards/`) are published beside its page as Hugo and Zola publish them, behind the
//! page's embargo and updated with it; a hidden folder and a sub-folder that is a page of its
//! own are not the bundle's.
use crate::common::*;

const SVG: &str = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"2\" height=\"2\"/>\n";

#[test]
fn a_bundles_sub_folders_go_beside_its_page_and_only_when_it_is_public() {
    let s = fixture("features");
    for (name, at) in [
        ("trip", "2026-11-20T00:00:00Z"),
        ("launch", "2026-12-10T00:00:00Z"),
    ] {
        let d = format!("content/posts/{name}");
        s.write(
            &format!("{d}/index.md"),
            &format!("+++\ntitle = \"{name}\"\npublish_at = {at}\n+++\n\n![a](img/a.svg) ![card](social_cards/en/card.svg)\n"),
        );
        s.write(&format!("{d}/img/a.svg"), SVG);
        s.write(&format!("{d}/social_cards/en/card.svg"), SVG);
        s.write(&format!("{d}/.git/config"), "secret\n");
    }
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(r["build"]["broken_links"], serde_json::json!([]), "{r}");
    assert_eq!(s.current_file("posts/trip/img/a.svg"), SVG);
    assert_eq!(s.current_file("posts/trip/social_cards/en/card.svg"), SVG);
    let current = s.current_dir();
    assert!(!current.join("posts/trip/.git").exists());
    assert!(!current.join("posts/launch").exists(), "embargoed: nowhere");
    let srv = s.serve(&[]);
    assert_eq!(srv.get("/posts/trip/social_cards/en/card.svg").status, 200);
    assert_eq!(srv.get("/posts/launch/img/a.svg").status, 404);
    drop(srv);

    // An edit deep in the tree is an update of its item, and ships with it.
    s.write("content/posts/trip/social_cards/en/card.svg", "<svg/>\n");
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert!(r["updated"].to_string().contains("trip"), "{r}");
    assert_eq!(
        s.current_file("posts/trip/social_cards/en/card.svg"),
        "<svg/>\n"
    );
    // A file added to a sub-folder is noticed too (the stat cache covers the tree).
    s.write("content/posts/trip/img/b.svg", SVG);
    let r = s.json(&["publish", "--build", "--now", NOW]);
    assert!(r["updated"].to_string().contains("trip"), "{r}");
    assert_eq!(s.current_file("posts/trip/img/b.svg"), SVG);

    s.json(&["publish", "--build", "--now", "2026-12-10T00:00:00Z"]);
    assert_eq!(s.current_file("posts/launch/social_cards/en/card.svg"), SVG);
}
