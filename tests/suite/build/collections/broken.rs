//! A broken file holds back only its own item: each named with its line and key, the rest
//! published and built, the held items' pages as they were until the files are fixed.
use super::*;

fn invalid_of(r: &Value) -> Vec<(String, Option<i64>, Option<String>)> {
    r["invalid"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["file"].as_str().unwrap().to_string(),
                i["line"].as_i64(),
                i["key"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// New files broken in three ways (a required key missing, an unknown key, another file's
/// id), a good new item due, and a file outside every collection.
fn new_files_break_in_other_ways(s: &TestSite) {
    s.write(
        "content/words/5.md",
        "+++\nid = 5\nday = 2026-11-20\ntitle = \"P5\"\n+++\n",
    ); // `word` is required
    s.write(
        "content/words/6.md",
        "+++\nid = 6\nday = 2026-11-20\ntitle = \"P6\"\nword = \"X\"\ncolour = \"red\"\n+++\n",
    ); // an unknown key
    s.write(
        "content/words/7.md",
        "+++\nid = 3\nday = 2026-11-20\ntitle = \"P7\"\nword = \"Y\"\n+++\n",
    ); // id 3 is words/3.md's
    s.write(
        "content/words/8.md",
        "+++\nid = 8\nday = 2026-11-30\ntitle = \"P8\"\nword = \"GOOD\"\n+++\n",
    );
    s.write("content/stray/x.md", "+++\ntitle = \"x\"\n+++\n");
}

/// Each broken file named with its line and key, and why.
fn each_broken_file_is_named(r: &Value) {
    let mut invalid = invalid_of(r);
    invalid.sort();
    assert_eq!(
        invalid,
        vec![
            ("content/words/1.md".into(), Some(6), Some("letters".into())),
            ("content/words/3.md".into(), None, Some("id".into())),
            ("content/words/5.md".into(), None, Some("word".into())),
            ("content/words/6.md".into(), Some(6), Some("colour".into())),
            ("content/words/7.md".into(), None, Some("id".into())),
        ],
        "{r}"
    );
    let all = r["invalid"].to_string();
    assert!(all.contains("must be an integer"), "{all}");
    assert!(all.contains("the keys are id, day, title"), "{all}");
    assert!(
        all.contains("duplicate item id 3 in collection words"),
        "{all}"
    );
}

#[test]
fn a_broken_file_holds_back_only_its_own_item() {
    let s = fixture("word_puzzle");
    s.publish(NOW);
    build_at(&s, NOW, &[]);
    let before = s.current_file("words/1/index.html");
    // A published item's file breaks (a field of the wrong type); new files break in other
    // ways; a good new item is due too.
    let w1 = s.path("content/words/1.md");
    let text = std::fs::read_to_string(&w1).unwrap();
    std::fs::write(&w1, text.replace("letters = 5", "letters = \"five\"")).unwrap();
    new_files_break_in_other_ways(&s);
    let r = publish_held(&s, "2026-12-02T00:00:00Z");
    each_broken_file_is_named(&r);
    // Everything else went out: the good new item, and puzzle 4 (due since 05:00Z).
    let mut published: Vec<String> = r["published"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    published.sort();
    assert_eq!(published, vec!["words/4", "words/8"]);
    assert!(r["withdrawn"].as_array().unwrap().is_empty(), "{r}");
    assert!(r["updated"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(r["unclaimed"], serde_json::json!(["content/stray/x.md"]));
    // Nothing was written for the broken ones.
    let held = s
        .items()
        .into_iter()
        .filter(|i| ["5", "6", "7"].contains(&&*i.name.id));
    assert_eq!(held.count(), 0);
    // `publish --build` still builds what went out, and exits 1.
    let out = s
        .cmd(&[
            "publish",
            "--build",
            "--json",
            "--now",
            "2026-12-02T00:00:00Z",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(HELD));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["build"]["revision"].as_i64().unwrap() >= 5, "{v}");
    assert!(s.current_file("words/8/index.html").contains("GOOD"));
    // The held items' pages are as they were.
    assert_eq!(s.current_file("words/1/index.html"), before);
    assert!(s.current_file("words/3/index.html").contains("QUIRK"));
    // Fixed, they go ahead.
    std::fs::write(&w1, text).unwrap();
    std::fs::remove_file(s.path("content/words/7.md")).unwrap();
    std::fs::remove_file(s.path("content/words/6.md")).unwrap();
    std::fs::remove_file(s.path("content/words/5.md")).unwrap();
    let r = s.publish("2026-12-02T00:00:00Z");
    assert!(r["invalid"].as_array().unwrap().is_empty(), "{r}");
}
