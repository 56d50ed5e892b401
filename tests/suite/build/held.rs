//! A page whose template fails for it alone is held, never the revision: its previous version
//! stays live (unless it names a page the public no longer has) or it is left out, named in
//! the report, in `status` and in every cycle of `run`; everything else goes live at its
//! instant. And every starter renders every shape of item its docs allow.
use super::*;

/// A template that does not parse holds only the pages that use it, each named with the file
/// and line: their previous versions stay live, a new item's page is left out, everything else
/// is built and the pointer moves; the build exits with the held status. A render-time error
/// (an unknown variable) holds each page it fails for the same way. A missing required
/// template still fails the whole build: nothing swapped, nothing left behind.
#[test]
fn template_errors_hold_only_their_pages_named_with_file_and_line() {
    let s = site_with(2);
    s.publish(NOW);
    s.build(&[]);
    let first = s.current_file("answers/1/index.html");
    s.item(3, "2026-11-03");
    s.publish(NOW);
    let revisions = || {
        std::fs::read_dir(s.path("public/revisions"))
            .unwrap()
            .count()
    };
    s.write("templates/answer.html", "{% extends \"base.html\" %}\n{% block content %}\n<h1>{{ page.title </h1>\n{% endblock content %}\n");
    let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
    assert_eq!(out.status.code(), Some(HELD));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("templates/answer.html") && stderr.contains("3:"),
        "{stderr}"
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let held: Vec<(&str, bool)> = (r["held_pages"].as_array().unwrap().iter())
        .map(|h| {
            (
                h["path"].as_str().unwrap(),
                h["previous_kept"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        held,
        [
            ("answers/1/index.html", true),
            ("answers/2/index.html", true),
            ("answers/3/index.html", false)
        ],
        "{r}"
    );
    assert!(
        r["held_pages"][0]["why"].as_str().unwrap().contains("3:"),
        "{r}"
    );
    assert!(
        r["revision"].as_i64().unwrap() >= 2,
        "the pointer moved: {r}"
    );
    assert_eq!(s.current_file("answers/1/index.html"), first);
    assert!(!s.current_dir().join("answers/3/index.html").exists());
    assert!(
        s.current_file("index.html").contains("/answers/3/"),
        "the rest is built"
    );
    // A render-time error (unknown variable) names the template and the output.
    s.write("templates/answer.html", "{{ page.nope }}");
    s.cmd(&["build", "--now", NOW])
        .assert()
        .code(HELD)
        .stdout(contains("templates/answer.html"))
        .stdout(contains("answers/1/index.html"));
    assert_eq!(s.current_file("answers/1/index.html"), first);
    let n = revisions();
    let before = s.current_dir();
    std::fs::remove_file(s.path("templates/answer.html")).unwrap();
    s.cmd(&["build", "--now", NOW])
        .assert()
        .failure()
        .code(1)
        .stderr(contains("missing template"))
        .stderr(contains("answer.html"));
    assert_eq!(s.current_dir(), before);
    assert_eq!(revisions(), n, "no new directory, no temporary left behind");
}

/// A held page's previous version is kept only while every page it links to is still
/// public: after a withdrawal, the neighbours whose old pages name the withdrawn item are left
/// out (named, with the link), never shown with it again. Fixing the template brings every
/// page back.
#[test]
fn a_held_pages_previous_version_never_names_a_withdrawn_item() {
    let s = site_with(3);
    s.publish(NOW);
    s.build(&[]);
    assert!(s
        .current_file("answers/1/index.html")
        .contains("/answers/2/"));
    let template = std::fs::read_to_string(s.path("templates/answer.html")).unwrap();
    std::fs::remove_file(s.path("content/answers/2.md")).unwrap();
    s.write("templates/answer.html", "{{ page.nope }}");
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(HELD));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["withdrawn"], serde_json::json!([2]), "{r}");
    let held = r["build"]["held_pages"].as_array().unwrap();
    assert_eq!(held.len(), 2, "{r}");
    for h in held {
        assert_eq!(h["previous_kept"], false, "{r}");
        let why = h["why"].as_str().unwrap();
        assert!(
            why.contains("/answers/2/") && why.contains("does not have"),
            "{r}"
        );
    }
    for page in ["answers/1/index.html", "answers/3/index.html"] {
        assert!(!s.current_dir().join(page).exists(), "{page}");
    }
    for (path, bytes) in tree(&s.current_dir()) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            path.starts_with(".fencepost/") || !text.contains("/answers/2/"),
            "{path} names the withdrawn item"
        );
    }
    s.write("templates/answer.html", &template);
    let r = s.json(&["build", "--now", NOW]);
    assert!(r["held_pages"].as_array().unwrap().is_empty(), "{r}");
    assert!(s
        .current_file("answers/1/index.html")
        .contains("/answers/3/"));
}

/// The shapes of item a starter's collection allows, as front matter after its required
/// keys: (file stem, lines). In a collection due at `publish_at`, each names one.
fn shapes(timed: bool) -> Vec<(&'static str, String)> {
    let day = |d: &str| match timed {
        true => format!("day = {d}\npublish_at = {d}T08:00:00Z\n"),
        false => format!("day = {d}\n"),
    };
    vec![
        ("day", day("2026-11-02")),
        ("at", "publish_at = 2026-11-03T09:30:00Z\n".into()),
        ("local", "publish_at = 2026-11-04T09:30:00\n".into()),
        (
            "both",
            "day = 2026-11-05\npublish_at = 2026-11-05T12:00:00Z\n".into(),
        ),
        (
            "expires",
            day("2026-11-06") + "expire_at = 2026-11-20T00:00:00Z\n",
        ),
        ("draft", day("2026-11-07") + "draft = true\n"),
        ("later", "publish_at = 2027-01-01T00:00:00Z\n".into()),
        ("full", day("2026-11-08")),
    ]
}

/// A collection of a starter: (starter, folder, integer ids, due at `publish_at`, required
/// keys, optional keys).
type Starter = (
    &'static str,
    &'static str,
    bool,
    bool,
    &'static str,
    &'static str,
);

const STARTERS: [Starter; 3] = [
    ("answers", "answers", true, false, "price = \"4.99\"\n", ""),
    (
        "advisories",
        "advisories",
        false,
        true,
        "cve = \"CVE-2026-0001\"\nseverity = \"high\"\n",
        "affected = [\"1.0\"]\ncvss = \"7.5\"\n[extra]\ncredit = \"Ann\"\n",
    ),
    (
        "posts",
        "posts",
        false,
        false,
        "",
        "summary = \"A summary.\"\ntags = [\"Rust\", \"Web\"]\n[extra]\nnote = \"x\"\n",
    ),
];

/// A site of `starter` holding an item of every shape, and the one `new` writes, made ready.
fn a_site_with_every_shape(
    (starter, folder, integer, timed, required, optional): Starter,
) -> TestSite {
    let dir = tempfile::tempdir().unwrap();
    assert_cmd::Command::from_std(fencepost())
        .args([
            "init",
            "--starter",
            starter,
            "--now",
            "2026-11-01T00:00:00Z",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let s = TestSite { dir };
    for (n, (stem, lines)) in shapes(timed).into_iter().enumerate() {
        let (file, id) = match integer {
            true => (format!("{}", 100 + n), format!("id = {}\n", 100 + n)),
            false => (stem.to_string(), String::new()),
        };
        let extra = if stem == "full" { optional } else { "" };
        let text = format!(
            "+++\n{id}title = \"Shape {stem}\"\n{lines}{required}{extra}+++\n\nBody of {stem}.\n"
        );
        s.write(&format!("content/{folder}/{file}.md"), &text);
    }
    let made = s.json(&[
        "new",
        folder,
        "--title",
        "Written by new",
        "--now",
        "2026-11-25T00:00:00Z",
    ]);
    let path = s.path(made["path"].as_str().unwrap());
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("draft = true\n", "");
    std::fs::write(&path, text).unwrap();
    s
}

/// Runs `args` (`--json`), which must succeed with no page held, left out or linking nowhere.
fn every_page_renders(s: &TestSite, starter: &str, args: &[&str]) -> Value {
    let r = s.json(args);
    // `publish --build` nests the build's report; `build` is it (its "build" is B).
    let b = match r["build"].is_object() {
        true => &r["build"],
        false => &r,
    };
    for key in ["held_pages", "left_out", "broken_links"] {
        assert!(
            b[key].as_array().unwrap().is_empty(),
            "{starter} {key}: {r}"
        );
    }
    r
}

/// Every starter renders every shape of item its docs allow — a `day`, a `publish_at` with
/// and without an offset, both, an expiry, a draft, an embargo, every optional field, and
/// the file `new` writes — with no page held, left out or linking nowhere: published, then
/// updated, then previewed.
#[test]
fn every_starter_renders_every_shape_of_item_it_allows() {
    for starter in STARTERS {
        let (name, folder, integer) = (starter.0, starter.1, starter.2);
        let s = a_site_with_every_shape(starter);
        let r = every_page_renders(
            &s,
            name,
            &["publish", "--build", "--now", "2026-11-30T00:00:00Z"],
        );
        assert!(r["invalid"].as_array().unwrap().is_empty(), "{name}: {r}");
        // 7 shapes are public by now (the draft, the embargo and the expiry are not), and new's.
        let pages = (walkdir::WalkDir::new(s.current_dir()).into_iter().flatten())
            .filter(|e| e.path().to_string_lossy().contains(&format!("/{folder}/")))
            .filter(|e| e.file_name() == "index.html")
            .count();
        assert!(pages >= 7, "{name}: {pages} pages");
        // An update of a public item.
        let at = s.path(&format!(
            "content/{folder}/{}.md",
            if integer { "101" } else { "at" }
        ));
        let text = std::fs::read_to_string(&at).unwrap() + "\nA correction.\n";
        std::fs::write(&at, text).unwrap();
        let r = every_page_renders(
            &s,
            name,
            &["publish", "--build", "--now", "2026-12-01T00:00:00Z"],
        );
        assert_eq!(r["updated"].as_array().unwrap().len(), 1, "{name}: {r}");
        // The preview: the draft and the embargo shown too.
        every_page_renders(
            &s,
            name,
            &["build", "--preview", "--now", "2026-12-01T00:00:00Z"],
        );
    }
}
