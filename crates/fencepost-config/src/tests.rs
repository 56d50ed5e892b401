use super::*;

#[test]
fn empty_file_gives_defaults() {
    let c = Config::parse("", Path::new("x.toml")).unwrap();
    assert_eq!(c.publish.grace_minutes, 10);
    assert_eq!(c.publish.lease_secs, 180);
    assert_eq!(c.results.max_per_puzzle, 50_000);
}

#[test]
fn unknown_key_is_named() {
    let e = Config::parse("[publish]\ngrace_minute = 5\n", Path::new("x.toml")).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("grace_minute"), "{msg}");
    assert!(msg.contains("x.toml"), "{msg}");
}

#[test]
fn unbounded_numbers_are_refused() {
    for (text, key) in [
        (
            "[publish]\nlease_secs = 99999999999\n",
            "publish.lease_secs",
        ),
        (
            "[images]\nfetch_timeout_secs = 0\n",
            "images.fetch_timeout_secs",
        ),
        ("[publish]\nmax_item_bytes = 0\n", "publish.max_item_bytes"),
    ] {
        let e = Config::parse(text, Path::new("x.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{text}: {e}");
    }
}

#[test]
fn zero_lease_is_refused() {
    let e = Config::parse("[publish]\nlease_secs = 0\n", Path::new("x.toml")).unwrap_err();
    assert!(e.to_string().contains("publish.lease_secs"));
}

#[test]
fn only_settings_that_shape_the_output_count() {
    let base = "title = \"a\"\n[ledger]\npath = \"x.sqlite\"\n";
    let moved = "# moved\ntitle = \"a\"\n\n[ledger]\nurl = \"postgres://h/db\"\n";
    assert_eq!(output_hash(base), output_hash(moved));
    assert_ne!(output_hash(base), output_hash("title = \"b\"\n"));
}

#[test]
fn base_url_path_is_the_sites_and_an_odd_base_url_still_loads() {
    let path = |t: &str| Config::parse(t, Path::new("x.toml")).map(|c| c.base_path());
    assert_eq!(path("").unwrap(), "");
    assert_eq!(path("base_url = \"https://e.org\"").unwrap(), "");
    assert_eq!(
        path("base_url = \"https://user.github.io/project/\"").unwrap(),
        "/project"
    );
    assert_eq!(path("base_url = \"https://e.org/a/b\"").unwrap(), "/a/b");
    // What the previous release accepted still loads (with a warning), served at the root.
    for odd in ["e.org", "/", "ftp://e.org/", "https://e.org/?x=1"] {
        assert_eq!(path(&format!("base_url = \"{odd}\"")).unwrap(), "", "{odd}");
    }
}
