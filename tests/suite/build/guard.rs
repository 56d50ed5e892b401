//! What a template may reach, and how far it may go (issue 78.1, 78.3). The adversary is a
//! template's author (a theme, a contributor) on a CI runner whose environment holds the
//! log's signing key and the clouds' credentials, and whose build must finish.
use super::*;

const SECRET: &str = "PRIVATE+KEY+example.org+00000000+c2VjcmV0";

/// The site with `answer.html` replaced by `template`, one item published and built with
/// `env`; the build's (exit code, JSON).
fn built_with(template: &str, extra_toml: &str, env: &[(&str, &str)]) -> (TestSite, i32, Value) {
    let s = site_with(1);
    if !extra_toml.is_empty() {
        let toml = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
        s.write("fencepost.toml", &format!("{toml}\n{extra_toml}\n"));
    }
    s.write("templates/answer.html", template);
    s.publish(NOW);
    let out = s
        .cmd(&["build", "--json", "--now", NOW])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (s, out.status.code().unwrap_or(-1), v)
}

/// Whether any file the site's output holds contains `needle`.
fn anywhere(s: &TestSite, needle: &str) -> Option<String> {
    walkdir::WalkDir::new(s.path("public"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .find(|e| String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).contains(needle))
        .map(|e| e.path().display().to_string())
}

/// `get_env` reads nothing by default and never a credential: a template asking for the log's
/// signing key holds its page (named), and the key is in no file; with a default it gets the
/// default; `[security] getenv` lets it read what the site allows — never a credential, even
/// with `".*"`.
#[test]
fn no_template_reads_the_runners_secrets() {
    let env = [("FENCEPOST_TLOG_SKEY", SECRET), ("SITE_BRANCH", "main")];
    let (s, code, v) = built_with("{{ get_env(name=\"FENCEPOST_TLOG_SKEY\") }}", "", &env);
    assert_eq!(code, HELD, "{v}");
    assert!(
        v["held_pages"][0]["why"]
            .as_str()
            .unwrap()
            .contains("never readable"),
        "{v}"
    );
    assert_eq!(anywhere(&s, SECRET), None);
    let tpl = "{{ get_env(name=\"FENCEPOST_TLOG_SKEY\", default=\"none\") }}|{{ get_env(name=\"SITE_BRANCH\", default=\"?\") }}";
    let (s, code, v) = built_with(tpl, "", &env);
    assert_eq!(code, 0, "{v}");
    assert_eq!(s.current_file("answers/1/index.html"), "none|?");
    let (s, code, v) = built_with(tpl, "[security]\ngetenv = [\".*\"]", &env);
    assert_eq!(code, 0, "{v}");
    assert_eq!(s.current_file("answers/1/index.html"), "none|main");
    assert_eq!(anywhere(&s, SECRET), None);
}

/// A macro that calls itself, a `range` of 400 million and a page of gigabytes each hold only
/// their page, naming the template and the limit; the process finishes (it used to abort with
/// SIGABRT and no report) and everything else is built.
#[test]
fn a_template_cannot_stop_the_build_process() {
    let recursive = "{% macro r(n) %}{{ self::r(n=n+1) }}{% endmacro r %}{{ self::r(n=0) }}";
    let huge_range = "{% for i in range(end=400000000) %}{{ i }}{% endfor %}";
    let huge_page = "{% for i in range(end=100000) %}{% for j in range(end=100000) %}xxxxxxxxxx{% endfor %}{% endfor %}";
    for (template, limit) in [
        (recursive, "nest deeper than 64 frames"),
        (huge_range, "build.max_range"),
        (huge_page, "build.max_page_bytes"),
    ] {
        let (s, code, v) = built_with(template, "", &[]);
        assert_eq!(code, HELD, "{limit}: {v}");
        let held = &v["held_pages"][0];
        assert_eq!(held["template"], "templates/answer.html", "{v}");
        assert!(
            held["why"].as_str().unwrap().contains(limit),
            "{limit}: {v}"
        );
        assert!(
            s.current_file("index.html").contains("/answers/1/"),
            "the rest is built"
        );
    }
}

/// Issue 80: the preview key opens every preview; a theme's template asking for it (with
/// `getenv = [".*"]`) gets its default, and the key is in no file.
#[test]
fn no_template_reads_the_preview_key() {
    let tpl = "{{ get_env(name=\"FENCEPOST_PREVIEW_KEY\", default=\"none\") }}";
    let env = [("FENCEPOST_PREVIEW_KEY", PREVIEW_KEY)];
    let (s, code, v) = built_with(tpl, "[security]\ngetenv = [\".*\"]", &env);
    assert_eq!(code, 0, "{v}");
    assert_eq!(s.current_file("answers/1/index.html"), "none");
    assert_eq!(anywhere(&s, PREVIEW_KEY), None);
}
