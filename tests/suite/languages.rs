//! Multilingual sites (issue 83, docs/languages.md): each translation is an item of its own,
//! published exactly once at its own instant, revealed by no file, header or bucket object
//! before it, and linked by `hreflang` exactly while it is public.
use crate::common::*;
use std::path::Path;

/// Three instants: the original at `NOW`'s day, French at `FR`, German at `DE`.
const FR: &str = "2026-12-01T12:00:00Z";
const DE: &str = "2026-12-02T08:30:00Z";

/// The posts starter in English, French (files beside their originals) and German (Hugo's
/// content folder, `content/de/`).
fn site() -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    let mut c = fencepost();
    c.args(["init", "--starter", "posts", "--now", NOW])
        .arg(dir.path());
    assert!(c.status().unwrap().success());
    let s = TestSite { dir };
    std::fs::remove_dir_all(s.path("content/posts")).unwrap();
    let config = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &format!(
            "{config}\n[languages.en]\nname = \"English\"\n\n[languages.fr]\nname = \"Français\"\ntitle = \"Le site\"\n\n[languages.de]\nname = \"Deutsch\"\ndir = \"de\"\n"
        ),
    );
    s.write(
        "content/posts/advisory.md",
        "+++\nday = 2026-11-30\ntitle = \"Patch now\"\ntags = [\"security\"]\n+++\n\nThe advisory, in English.\n",
    );
    s.write(
        "content/posts/advisory.fr.md",
        &format!("+++\npublish_at = \"{FR}\"\ntitle = \"Mettez à jour Quiscalefrance\"\ntags = [\"sécurité\"]\n+++\n\nL'avis, en français: quiscalefrance.\n"),
    );
    s.write(
        "content/de/posts/advisory.md",
        &format!("+++\npublish_at = \"{DE}\"\ntitle = \"Jetzt Zugspitzwort patchen\"\n+++\n\nDie Meldung: zugspitzwort.\n"),
    );
    s
}

const FR_SECRETS: &[&str] = &[
    "uiscalefr", // the word, and its French stem in an index ("quiscalefr")
    "/fr/posts/2026/12/advisory",
    "sécurité",
    "curit&#xe9;",
];
const DE_SECRETS: &[&str] = &["ugspitzw", "/de/posts/2026/12/advisory"];

fn sorted(v: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = (v.as_array().unwrap().iter())
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// `n` publishers racing at `now`, each its own OS process; the items they published.
fn race(s: &TestSite, now: &str, n: usize) -> Vec<String> {
    let children: Vec<_> = (0..n).map(|_| s.spawn_publish(now, &[], &[])).collect();
    let mut published = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        published.extend(
            (v["published"].as_array().unwrap().iter()).map(|p| p.as_str().unwrap().to_string()),
        );
    }
    published.sort();
    published
}

/// Every file of the public output and of the bucket deployed from it.
fn everything(s: &TestSite, now: &str) -> Vec<(String, Vec<u8>)> {
    s.json(&["build", "--now", now]);
    let target = format!("file://{}", s.path(".bucket").display());
    s.cmd(&["deploy", "--to", &target, "--now", now])
        .assert()
        .success();
    let mut files = files_under(&s.path("public"));
    files.extend(files_under(&s.path(".bucket")));
    files
}

/// The `hreflang` alternates of a served page: (language, URL).
fn alternates(html: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = html
        .split("<link rel=\"alternate\" hreflang=\"")
        .skip(1)
        .map(|rest| {
            let (lang, rest) = rest.split_once('"').unwrap();
            let href = rest
                .split("href=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            (lang.to_string(), href.to_string())
        })
        .collect();
    out.sort();
    out
}

/// Guards: issue 83 (Must hold 1). The adversary reads every file of every public revision
/// and of the bucket, and every response header, of a three-language site whose French and
/// German translations are due at their own later instants; five publishers race at each
/// instant. Each translation is published exactly once (the audit log says so), nothing of
/// it — title, word, URL, term — is anywhere before its instant, and the `hreflang` links of
/// every version name exactly the versions public at that revision.
#[test]
fn each_translation_goes_live_once_at_its_own_instant_and_not_before() {
    let s = site();
    assert_eq!(race(&s, NOW, 5), ["posts/advisory"]);
    let files = everything(&s, NOW);
    assert_nothing_reveals("before the French instant", &files, FR_SECRETS);
    assert_nothing_reveals("before the German instant", &files, DE_SECRETS);
    assert!(!s.path("public/current/sitemaps/posts.fr-0.xml").exists());
    let server = s.serve(&[]);
    let en = server.get("/posts/2026/11/advisory/");
    assert_eq!(en.status, 200);
    for (k, v) in &en.headers {
        assert!(!format!("{k}: {v}").contains("uiscale"), "header {k}: {v}");
    }
    assert_eq!(
        alternates(&en.text()),
        [("en".into(), "/posts/2026/11/advisory/".into())]
    );
    assert_eq!(server.get("/fr/posts/2026/12/advisory/").status, 404);

    at_the_french_instant(&s, &server);
    // The German instant.
    assert_eq!(race(&s, DE, 5), ["posts.de/advisory"]);
    everything(&s, DE);
    let all: Vec<(String, String)> = vec![
        ("de".into(), "/de/posts/2026/12/advisory/".into()),
        ("en".into(), "/posts/2026/11/advisory/".into()),
        ("fr".into(), "/fr/posts/2026/12/advisory/".into()),
    ];
    for url in [
        "/posts/2026/11/advisory/",
        "/fr/posts/2026/12/advisory/",
        "/de/posts/2026/12/advisory/",
    ] {
        assert_eq!(alternates(&server.get(url).text()), all, "{url}");
    }
    let mut published: Vec<String> = (s.audit().into_iter())
        .filter(|e| e.action == "publish")
        .map(|e| e.subject)
        .collect();
    published.sort();
    published.dedup();
    assert_eq!(
        s.audited("publish"),
        3,
        "three publications in all: {published:?}"
    );
    assert_eq!(
        published.len(),
        3,
        "of three items, each once: {published:?}"
    );
}

/// At the French instant: five publishers, one publication; the French version public in
/// its own language's pages, feed and terms, linked from the English; German still nowhere.
fn at_the_french_instant(s: &TestSite, server: &Server) {
    assert_eq!(race(s, FR, 5), ["posts.fr/advisory"]);
    let files = everything(s, FR);
    assert_nothing_reveals("before the German instant", &files, DE_SECRETS);
    let fr = server.get("/fr/posts/2026/12/advisory/");
    assert_eq!(fr.status, 200);
    assert!(fr.text().contains("<html lang=\"fr\">"), "{}", fr.text());
    assert!(
        fr.text().contains("Le site"),
        "the language's own site title"
    );
    let both = vec![
        ("en".to_string(), "/posts/2026/11/advisory/".to_string()),
        ("fr".to_string(), "/fr/posts/2026/12/advisory/".to_string()),
    ];
    assert_eq!(
        alternates(&server.get("/posts/2026/11/advisory/").text()),
        both
    );
    assert_eq!(alternates(&fr.text()), both);
    let feed = server.get("/fr/atom.xml").text();
    assert!(
        feed.contains("Quiscalefrance") && !feed.contains("Patch now"),
        "{feed}"
    );
    let tag = server.get(&format!("/fr/tags/{}/", "securite"));
    assert_eq!(tag.status, 200, "the French term has its own pages");
    assert!(!server
        .get("/tags/security/")
        .text()
        .contains("Quiscalefrance"));
}

/// Guards: issue 83 (point 2). A translation that is invalid holds only itself: its
/// original and the other translations go out; and its original's page names no version of
/// it. A translation withdrawn (its file removed) leaves every other page's alternates.
#[test]
fn a_broken_or_withdrawn_translation_holds_only_itself() {
    let s = site();
    s.write(
        "content/posts/advisory.fr.md",
        "+++\ntitle = \"Cassé\"\npublish_at = \"not a date\"\n+++\nx\n",
    );
    let out = s.cmd(&["publish", "--json", "--now", DE]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(HELD),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        sorted(&v["published"]),
        ["posts.de/advisory", "posts/advisory"],
        "{v}"
    );
    s.json(&["build", "--now", DE]);
    let en = std::fs::read_to_string(s.path("public/current/posts/2026/11/advisory/index.html"))
        .unwrap();
    let langs: Vec<String> = alternates(&en).into_iter().map(|(l, _)| l).collect();
    assert_eq!(langs, ["de", "en"]);
    std::fs::remove_file(s.path("content/de/posts/advisory.md")).unwrap();
    std::fs::remove_file(s.path("content/posts/advisory.fr.md")).unwrap();
    let v = s.json(&["publish", "--build", "--now", DE]);
    assert_eq!(
        v["withdrawn"],
        serde_json::json!(["posts.de/advisory"]),
        "{v}"
    );
    let en = std::fs::read_to_string(s.path("public/current/posts/2026/11/advisory/index.html"))
        .unwrap();
    assert_eq!(alternates(&en).len(), 1);
    assert!(!Path::new(&s.path("public/current/de/posts/2026/12/advisory/index.html")).exists());
}

/// Guards: issue 83 (point 1). A translation without an instant of its own goes out at its
/// original's — and moves with it: an edit of the original's day re-reads the translation.
#[test]
fn a_translation_without_an_instant_follows_its_original() {
    let s = site();
    s.write(
        "content/posts/advisory.fr.md",
        "+++\ntitle = \"L'avis\"\n+++\n\nTraduit.\n",
    );
    s.write(
        "content/posts/advisory.md",
        "+++\nday = 2026-12-05\ntitle = \"Patch now\"\n+++\n\nThe advisory.\n",
    );
    let v = s.publish(NOW);
    assert_eq!(v["published"], serde_json::json!([]), "{v}");
    assert_eq!(
        v["embargoed"], 3,
        "the original, its French follower, the German: {v}"
    );
    std::thread::sleep(std::time::Duration::from_millis(2100));
    s.write(
        "content/posts/advisory.md",
        "+++\nday = 2026-11-29\ntitle = \"Patch now\"\n+++\n\nThe advisory.\n",
    );
    let v = s.publish(NOW);
    assert_eq!(
        sorted(&v["published"]),
        ["posts.fr/advisory", "posts/advisory"],
        "{v}"
    );
}

/// Guards: issue 83 (point 4, with issue 82). Search in every language: each page's
/// `<html lang>` puts it in its language's Pagefind index, and the adversary who unpacks every
/// index file of `public/` finds nothing of the French translation before its instant — then
/// finds it in the French index, not the English one.
#[test]
fn each_language_has_its_own_index_and_none_holds_a_translation_early() {
    let s = site();
    let config = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    s.write(
        "fencepost.toml",
        &format!("{config}\n[search]\nenabled = true\n"),
    );
    s.json(&["publish", "--build", "--now", NOW]);
    let before = crate::search::readable_files(&s.path("public"));
    assert!(
        before.iter().any(|(n, _)| n.contains("pf_fragment")),
        "indexed"
    );
    assert_nothing_reveals("the indexes before the French instant", &before, FR_SECRETS);
    s.json(&["publish", "--build", "--now", FR]);
    let entry =
        std::fs::read_to_string(s.path("public/current/pagefind/pagefind-entry.json")).unwrap();
    let entry: serde_json::Value = serde_json::from_str(&entry).unwrap();
    let langs = entry["languages"].as_object().unwrap();
    assert!(
        langs.contains_key("en") && langs.contains_key("fr"),
        "{entry}"
    );
    assert!(
        !langs.contains_key("de"),
        "German is not public yet: {entry}"
    );
    let files = crate::search::readable_files(&s.path("public/current/pagefind"));
    let meta = |lang: &str| {
        let hash = langs[lang]["hash"].as_str().unwrap();
        let name = format!("pagefind.{hash}.pf_meta");
        let (_, bytes) = (files.iter()).find(|(n, _)| n.ends_with(&name)).unwrap();
        String::from_utf8_lossy(bytes).into_owned()
    };
    let (fr, en) = (meta("fr"), meta("en"));
    // The word chunks holding the French word: the French meta names each, the English none.
    let word = |b: &[u8]| String::from_utf8_lossy(b).contains("quiscalefr");
    let chunks: Vec<String> = (files.iter())
        .filter(|(n, b)| n.ends_with(".pf_index") && word(b))
        .map(|(n, _)| {
            n.rsplit('/')
                .next()
                .unwrap()
                .trim_end_matches(".pf_index")
                .to_string()
        })
        .collect();
    assert!(!chunks.is_empty(), "the word is indexed");
    for c in &chunks {
        assert!(
            fr.contains(c.as_str()) && !en.contains(c.as_str()),
            "{c}: in the French index only"
        );
    }
}
