//! `[build] compile_sass = true`: a site's `sass/` compiled into its revision as Zola compiles
//! it. The adversary is a theme's author: a stylesheet that reaches for the runner's files, or
//! one that never ends — each costs only itself, named, and reads nothing outside `sass/`.
use super::*;

const SECRET: &str = "runner-secret-7f3a";

/// The site with `compile_sass`, `files` written, published and built at `NOW`: the build's
/// (exit code, JSON).
fn built(s: &TestSite, extra: &str) -> (i32, Value) {
    let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    if !toml.contains("compile_sass") {
        s.write(
            "fencepost.toml",
            &format!("{toml}\n[build]\ncompile_sass = true\n{extra}"),
        );
    }
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v)
}

fn left_out(v: &Value, what: &str) -> String {
    (v["build"]["left_out"].as_array().unwrap().iter())
        .find(|l| l["what"] == what)
        .unwrap_or_else(|| panic!("{what} not left out: {v}"))["why"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Every entry compiles to its CSS path (partials are not entries); one with a syntax error,
/// one that imports a file outside `sass/`, and one whose path a static file has are each
/// left out, named with the compiler's file and line or the reason — the rest goes live
/// (exit 3). No byte of the file outside `sass/` reaches the revision. A change to a partial
/// makes a new build whose pages are reused: only the stylesheet changes.
#[test]
fn sass_compiles_as_zolas_and_a_stylesheet_costs_only_itself() {
    let s = site_with(1);
    s.write("secret.scss", &format!("a {{ content: \"{SECRET}\"; }}"));
    s.write("sass/_vars.scss", "$accent: #ff0000;\n");
    s.write(
        "sass/css/site.scss",
        "@use \"../vars\";\nbody { a { color: vars.$accent; } }\n",
    );
    s.write("sass/broken.scss", "body {\n  color: red\n  a { }\n");
    s.write("sass/steal.scss", "@import \"../secret\";\n");
    s.write("sass/clash.scss", "p { margin: 0; }\n");
    s.write("static/clash.css", "/* the static one */\n");
    let (code, v) = built(&s, "");
    assert_eq!(code, HELD, "{v}");
    assert_eq!(s.current_file("css/site.css"), "body a{color:red}");
    let broken = left_out(&v, "sass/broken.scss");
    assert!(
        broken.contains("broken.scss") && broken.contains('3'),
        "{broken}"
    );
    assert!(!left_out(&v, "sass/steal.scss").contains(SECRET));
    assert!(left_out(&v, "sass/clash.scss").contains("static/clash.css"));
    assert_eq!(s.current_file("clash.css"), "/* the static one */\n");
    for f in walkdir::WalkDir::new(s.path("public"))
        .into_iter()
        .flatten()
    {
        if f.file_type().is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(f.path()).unwrap()).into_owned();
            assert!(
                !text.contains(SECRET),
                "{} holds the secret",
                f.path().display()
            );
        }
    }
    let before = v["build"]["build"].clone();
    s.write("sass/_vars.scss", "$accent: #00ff00;\n");
    let out = s.cmd(&["build", "--json", "--now", NOW]).output().unwrap();
    let b: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(b["build"], before, "a style change is a new build: {b}");
    assert_eq!(s.current_file("css/site.css"), "body a{color:lime}");
    assert_eq!(s.current_file("answers/1/index.html").is_empty(), false);
    assert!(
        b["reused"].as_u64().unwrap() > b["rendered"].as_u64().unwrap(),
        "{b}"
    );
}

/// A stylesheet that never ends is given up at `build.sass_timeout_secs`, left out by name;
/// the build finishes and the rest goes live.
#[test]
fn a_stylesheet_that_never_ends_is_given_up() {
    let s = site_with(1);
    s.write(
        "sass/forever.scss",
        "$i: 0;\n@while $i >= 0 { $i: $i + 1; }\n",
    );
    s.write("sass/fine.scss", "a { b: c; }\n");
    let (code, v) = built(&s, "sass_timeout_secs = 2\n");
    assert_eq!(code, HELD, "{v}");
    assert!(left_out(&v, "sass/forever.scss").contains("build.sass_timeout_secs"));
    assert_eq!(s.current_file("fine.css"), "a{b:c}");
    assert!(s.current_file("index.html").contains("/answers/1/"));
}
