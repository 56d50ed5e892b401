//! The pull-request workflow `init --ci` writes (issue 80): run on the Actions runner
//! simulator against moto. The adversary is a fork's pull request: it runs without secrets
//! and must deploy nothing; a preview's link goes to the run's summary, never a comment.

use super::*;

/// An embargoed advisory, due in 2030: what a reviewer previews.
const EMBARGOED: &str = "+++\ntitle = \"Heap overflow in the parser\"\npublish_at = 2030-01-01T00:00:00Z\ncve = \"CVE-2030-0001\"\nseverity = \"high\"\n+++\n\nFixed in 2.0.\n";

#[test]
fn a_pull_request_gets_a_preview_link_and_a_fork_deploys_nothing() {
    let release = LocalRelease::new();
    let moto = Moto::start();
    moto.bucket("site");
    let dir = tempfile::tempdir().unwrap();
    let site = site_from_init_ci(dir.path());
    let publish = std::fs::read_to_string(site.join(".github/workflows/publish.yml")).unwrap();
    let preview = std::fs::read_to_string(site.join(".github/workflows/preview.yml")).unwrap();
    let published_at = format!("{}/releases/download/", env!("CARGO_PKG_REPOSITORY"));
    let mut runner = runner_for(&release, &moto, published_at);
    let first = runner.run(&publish, "publish", &site, 1);
    assert!(first.failed.is_none(), "{first:#?}");
    std::fs::write(site.join("content/advisories/fp-2030-001.md"), EMBARGOED).unwrap();
    git_in(&site, &["add", "-A"]);
    git_in(&site, &["commit", "-q", "-m", "an embargoed advisory"]);
    runner.event_name = "pull_request".into();
    runner.ref_name = "7/merge".into();
    runner.pr_number = 7;
    runner
        .secrets
        .insert("FENCEPOST_PREVIEW_KEY".into(), PREVIEW_KEY.into());
    let run = runner.run(&preview, "preview", &site, 2);
    assert!(run.failed.is_none(), "{run:#?}");
    let link = run
        .summary
        .split(['(', ')'])
        .find(|p| p.starts_with("https://advisories.example.org/.preview/pr-7/?fp_preview="))
        .unwrap_or_else(|| panic!("no link in the summary: {}", run.summary));
    let target = link.strip_prefix("https://advisories.example.org").unwrap();
    let env = Moto::env(&moto.endpoint);
    let served = TestSite::new().serve_env(&["--from", "s3://site/ci/www"], &env);
    assert_eq!(served.get("/advisories/fp-2030-001/").status, 404);
    let cookie = open_preview(&served.addr, target);
    let page = http(
        &served.addr,
        "GET",
        "/.preview/pr-7/advisories/fp-2030-001/",
        &[("Cookie", &cookie)],
    );
    assert_eq!(page.status, 200);
    assert!(page.text().contains("Heap overflow in the parser"));
    // A fork's pull request: no secrets, a build, nothing deployed.
    runner.secrets.clear();
    runner.pr_number = 8;
    runner.head_repository = "someone/fork".into();
    let fork = runner.run(&preview, "preview", &site, 3);
    assert!(fork.failed.is_none(), "{fork:#?}");
    assert!(
        fork.skipped
            .contains(&"deploy the preview and write its link".to_string()),
        "{fork:#?}"
    );
    assert!(fork.summary.contains("from a fork"), "{}", fork.summary);
    let out = fencepost()
        .arg("--site")
        .arg(&site)
        .args(["preview", "list", "--to", "s3://site/ci/www", "--json"])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert_success(&out);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = (list["previews"].as_array().unwrap().iter())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pr-7"], "{list}");
}
