//! The release and the first hour: `scripts/release` (the recipe `.github/workflows/release.yml`
//! runs) plans, packages and renders the installer; the installer installs an archive and
//! refuses one that does not match its checksum; the workflow `init --ci` writes runs as
//! written, twice, against an S3 server, and the bucket serves the site.
//!
//! What cannot run here is said where it matters: the release's targets are musl and macOS
//! builds, and this machine builds only its own (x86_64 glibc), so the archives under test hold
//! the binary the suite tests, named for that target (`FENCEPOST_TARGET`, the installer's
//! documented override).

mod actions;
mod installer;
mod preview_workflow;

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// The repository's root (where `scripts/release` and Cargo.toml are).
fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `scripts/release ARGS` run from `root`'s copy of the recipe.
fn release(root: &Path, args: &[&str]) -> std::process::Output {
    Command::new("bash")
        .arg(root.join("scripts/release"))
        .args(args)
        .output()
        .unwrap()
}

/// The host's own build, the one this machine can make: the archives under test hold it.
const LOCAL_TARGET: &str = "x86_64-unknown-linux-gnu";

/// A release as the workflow publishes it, made here by the same recipe: the suite's binary
/// (debug info stripped) packaged for [`LOCAL_TARGET`], the installer, `SHA256SUMS`, under
/// `releases/download/v<version>/` of a folder an HTTPS server serves.
struct LocalRelease {
    dir: tempfile::TempDir,
    server: Child,
    pub port: u16,
    /// The CA the server's certificate is signed by (`CURL_CA_BUNDLE` for the clients).
    pub ca: PathBuf,
}

impl LocalRelease {
    fn new() -> LocalRelease {
        let dir = tempfile::tempdir().unwrap();
        let assets = dir.path().join(Self::assets_path());
        std::fs::create_dir_all(&assets).unwrap();
        let binary = dir.path().join("fencepost");
        let strip = Command::new("strip")
            .args(["--strip-debug", "-o"])
            .arg(&binary)
            .arg(bin())
            .status()
            .unwrap();
        assert!(strip.success());
        let root = repo_root();
        for args in [
            vec!["package", LOCAL_TARGET, binary.to_str().unwrap()],
            vec!["installer"],
            vec!["checksums"],
        ] {
            let mut args = args;
            args.push(assets.to_str().unwrap());
            let out = release(&root, &args);
            assert_success(&out);
        }
        let tls = test_tls(dir.path(), None);
        let (server, port) = file_server(dir.path(), Some(&tls));
        LocalRelease {
            ca: tls.join("ca.crt"),
            dir,
            server,
            port,
        }
    }

    /// Where a release's files are under the repository's URL (and here, under the server's).
    fn assets_path() -> String {
        format!("releases/download/v{}", env!("CARGO_PKG_VERSION"))
    }

    fn assets(&self) -> PathBuf {
        self.dir.path().join(Self::assets_path())
    }

    /// The release's download URL on the local server.
    fn download_url(&self) -> String {
        format!("https://127.0.0.1:{}/{}", self.port, Self::assets_path())
    }

    /// What every client of the local release needs: the CA, and the build this machine has.
    fn env(&self) -> Vec<(String, String)> {
        vec![
            ("CURL_CA_BUNDLE".into(), self.ca.display().to_string()),
            ("FENCEPOST_TARGET".into(), LOCAL_TARGET.into()),
            ("FENCEPOST_DOWNLOAD_URL".into(), self.download_url()),
        ]
    }
}

impl Drop for LocalRelease {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// `fencepost --version` names the version and the commit it was built from.
fn assert_version(out: &str) {
    let want = format!("fencepost {} (", env!("CARGO_PKG_VERSION"));
    assert!(out.starts_with(&want), "{out}");
    let commit = out.trim().trim_start_matches(&want).trim_end_matches(')');
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(repo_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    match head {
        Some(head) => assert_eq!(commit, head, "{out}"),
        None => assert_eq!(commit, "commit unknown", "{out}"),
    }
}

/// The dry run: the release builds Linux (x86_64 and aarch64, static) and macOS (both chips),
/// names each archive and checksum, and refuses a tag that is not Cargo.toml's version or a
/// workflow that builds other targets than the recipe lists.
/// Windows gets a .zip holding fencepost.exe, as binstall's override expects.
fn windows_gets_a_zip_holding_the_exe(root: &Path) {
    let out = tempfile::tempdir().unwrap();
    let packaged = release(
        root,
        &[
            "package",
            "x86_64-pc-windows-msvc",
            bin().to_str().unwrap(),
            out.path().to_str().unwrap(),
        ],
    );
    assert_success(&packaged);
    let listing = Command::new("python3")
        .args(["-m", "zipfile", "-l"])
        .arg(out.path().join("fencepost-x86_64-pc-windows-msvc.zip"))
        .output()
        .unwrap();
    assert_success(&listing);
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(
        listing.contains("fencepost-x86_64-pc-windows-msvc/fencepost.exe"),
        "{listing}"
    );
    assert!(out
        .path()
        .join("fencepost-x86_64-pc-windows-msvc.zip.sha256")
        .exists());
}

/// A workflow that stopped building one of the targets is caught before anything builds.
fn a_workflow_out_of_step_is_caught(root: &Path) {
    let copy = tempfile::tempdir().unwrap();
    for f in [
        "Cargo.toml",
        "scripts/release",
        "scripts/installer.sh",
        ".github/workflows/release.yml",
    ] {
        let to = copy.path().join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(f), &to).unwrap();
    }
    let workflow = copy.path().join(".github/workflows/release.yml");
    let text = std::fs::read_to_string(&workflow).unwrap();
    let dropped = text.replace(
        "- target: aarch64-unknown-linux-musl",
        "- target: i686-unknown-linux-musl",
    );
    assert_ne!(dropped, text);
    std::fs::write(&workflow, dropped).unwrap();
    let out = release(copy.path(), &["plan"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("i686-unknown-linux-musl") && err.contains("scripts/release lists"),
        "{err}"
    );
}

#[test]
fn the_release_plan_names_every_artifact_and_refuses_a_recipe_out_of_step() {
    let root = repo_root();
    let out = release(&root, &["plan"]);
    assert_success(&out);
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(plan["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(plan["repository"], env!("CARGO_PKG_REPOSITORY"));
    let targets: Vec<&str> = plan["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    for t in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        assert!(targets.contains(&t), "{plan}");
    }
    let windows = &plan["targets"].as_array().unwrap()[4];
    assert_eq!(
        windows["archive"], "fencepost-x86_64-pc-windows-msvc.zip",
        "{plan}"
    );
    windows_gets_a_zip_holding_the_exe(&root);
    assert_eq!(plan["installer"], "fencepost-installer.sh");
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert_success(&release(&root, &["plan", "--tag", &tag]));
    let wrong = release(&root, &["plan", "--tag", "v99.0.0"]);
    assert!(!wrong.status.success());
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("does not name Cargo.toml's version"));

    a_workflow_out_of_step_is_caught(&root);
}

/// `git ARGS` in `dir` as a test author (name and email given), which must succeed.
fn git_in(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert_success(&out);
}

/// `init --ci` into a fresh folder under `dir`, committed to a new git repository: the site.
fn site_from_init_ci(dir: &Path) -> std::path::PathBuf {
    let site = dir.join("site");
    let out = Command::new(bin())
        .args([
            "init",
            "--json",
            "--starter",
            "advisories",
            "--ci",
            "s3://site/ci",
        ])
        .args(["--base-url", "https://advisories.example.org/"])
        .arg(&site)
        .output()
        .unwrap();
    assert_success(&out);
    let init: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(init.get("warnings").is_none(), "{init}");
    let git = |args: &[&str]| git_in(&site, args);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "a new site"]);

    site
}

/// A runner whose download of the release goes to `release`, with moto's address and its
/// credentials as secrets; no fencepost on its PATH.
fn runner_for(release: &LocalRelease, moto: &Moto, published_at: String) -> actions::Runner {
    let mut runner = actions::Runner::new();
    runner.rewrites.push((
        published_at,
        format!("https://127.0.0.1:{}/releases/download/", release.port),
    ));
    for (k, v) in Moto::env(&moto.endpoint) {
        if k == "AWS_ENDPOINT_URL" {
            runner.env.push((k, v));
        } else {
            runner.secrets.insert(k, v);
        }
    }
    runner.env.extend(release.env());
    for dir in ["/usr/local/bin", "/usr/bin", "/bin"] {
        assert!(
            !Path::new(dir).join("fencepost").exists(),
            "a fencepost in {dir} would stand in for the installed one"
        );
    }

    runner
}

/// What step `name` of run `r` printed.
fn ran(r: &actions::RunReport, name: &str) -> String {
    r.ran
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name} did not run: {r:#?}"))
        .1
        .clone()
}

/// `init --ci s3://… --base-url …` writes a workflow that runs as written: its `run:` steps,
/// in a fresh clone on a fresh runner against an S3 server, with the install step pointed at
/// the local release, publish, build and deploy the site; the second run restores the binary
/// and the ledger's cache, installs nothing, publishes nothing again, and the bucket serves
/// the site with its public address.
#[test]
fn the_workflow_init_ci_writes_runs_as_written_twice_and_the_bucket_serves_the_site() {
    let release = LocalRelease::new();
    let moto = Moto::start();
    moto.bucket("site");
    let dir = tempfile::tempdir().unwrap();
    let site = site_from_init_ci(dir.path());
    let workflow = std::fs::read_to_string(site.join(".github/workflows/publish.yml")).unwrap();
    let published_at = format!("{}/releases/download/", env!("CARGO_PKG_REPOSITORY"));
    assert!(workflow.contains(&published_at), "{workflow}");
    let mut runner = runner_for(&release, &moto, published_at);
    let first = runner.run(&workflow, "publish", &site, 1);
    assert_eq!(first.failed, None, "{first:#?}");
    ran(&first, "install fencepost");
    assert_version(&ran(&first, "fencepost --version"));
    let step = ran(&first, "publish, build and deploy what is due");
    let publish: Value = first_json(&step);
    assert_eq!(publish["published"].as_array().unwrap().len(), 1, "{step}");
    let serve =
        || TestSite::new().serve_env(&["--from", "s3://site/ci/www"], &Moto::env(&moto.endpoint));
    {
        let served = serve();
        let home = served.get("/");
        assert_eq!(home.status, 200);
        assert!(
            home.text().contains("Path traversal in the upload handler"),
            "{}",
            home.text()
        );
        let robots = served.get("/robots.txt").text();
        assert!(
            robots.contains("https://advisories.example.org/sitemap.xml"),
            "{robots}"
        );
    }

    let second = runner.run(&workflow, "publish", &site, 2);
    assert!(
        second.skipped.contains(&"install fencepost".to_string()),
        "{second:#?}"
    );
    assert_version(&ran(&second, "fencepost --version"));
    let (_, binary_hit, _) = &second.caches[0];
    assert!(binary_hit, "{second:#?}");
    let (_, ledger_hit, ledger_files) = &second.caches[1];
    assert!(
        !ledger_hit && *ledger_files > 0,
        "the ledger's cache was not restored: {second:#?}"
    );
    let step = ran(&second, "publish, build and deploy what is due");
    let publish: Value = first_json(&step);
    assert!(
        publish["published"].as_array().unwrap().is_empty(),
        "{step}"
    );
    // Nothing changed: the ledger's cache is the one restored, and no entry is added.
    assert!(
        !second
            .saved
            .iter()
            .any(|k| k.starts_with("fencepost-ledger-")),
        "{second:#?}"
    );
    assert_eq!(serve().get("/").status, 200);
}

/// One file that does not validate holds only its own item: the workflow `init --ci` writes
/// still deploys the due advisory (the bucket serves it), then fails the job at its end, the
/// held file named in the step's output; the ledger's cache is saved all the same. A push to
/// a branch that is not the default one runs nothing.
#[test]
fn the_workflow_deploys_what_is_due_while_a_file_is_held_and_then_fails() {
    let release = LocalRelease::new();
    let moto = Moto::start();
    moto.bucket("site");
    let dir = tempfile::tempdir().unwrap();
    let site = site_from_init_ci(dir.path());
    std::fs::write(
        site.join("content/advisories/typo.md"),
        "+++\ntitle = \"A typo\"\npublish_at = 2026-01-01T00:00:00Z\nseverity = \"hgih\"\ncve = \"CVE-2026-0001\"\n+++\n",
    )
    .unwrap();
    let git = |args: &[&str]| git_in(&site, args);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "a typo"]);
    let workflow = std::fs::read_to_string(site.join(".github/workflows/publish.yml")).unwrap();
    let published_at = format!("{}/releases/download/", env!("CARGO_PKG_REPOSITORY"));
    let mut runner = runner_for(&release, &moto, published_at);
    let run = runner.run(&workflow, "publish", &site, 1);
    let step = "publish, build and deploy what is due";
    assert_eq!(run.failed, Some((step.to_string(), 1)), "{run:#?}");
    let out = ran(&run, step);
    let publish = first_json(&out);
    assert_eq!(
        publish["invalid"][0]["file"], "content/advisories/typo.md",
        "{out}"
    );
    assert_eq!(publish["published"].as_array().unwrap().len(), 1, "{out}");
    assert!(
        out.contains("\"outcome\":\"deployed\""),
        "the deploy ran: {out}"
    );
    let served =
        TestSite::new().serve_env(&["--from", "s3://site/ci/www"], &Moto::env(&moto.endpoint));
    let home = served.get("/");
    assert_eq!(home.status, 200);
    assert!(home.text().contains("Path traversal in the upload handler"));
    assert!(
        run.saved.iter().any(|k| k.starts_with("fencepost-ledger-")),
        "the ledger's cache is saved after a held file too: {run:#?}"
    );
    runner.event_name = "push".into();
    runner.ref_name = "feature".into();
    let pushed = runner.run(&workflow, "publish", &site, 2);
    assert!(pushed.job_skipped && pushed.ran.is_empty(), "{pushed:#?}");
}

/// The first JSON document of a step's output (`publish --json`, then `deploy --json`).
fn first_json(out: &str) -> Value {
    serde_json::Deserializer::from_str(out)
        .into_iter::<Value>()
        .next()
        .unwrap_or_else(|| panic!("no JSON in {out}"))
        .unwrap()
}

/// `init --base-url` writes the public address into every starter's config; one that is not
/// an absolute http(s) URL is refused and nothing is written; `--ci` without it says loudly
/// that `base_url` is still localhost (stderr, and the JSON's `warnings`).
#[test]
fn init_sets_the_base_url_or_warns_that_a_ci_site_still_points_at_localhost() {
    let dir = tempfile::tempdir().unwrap();
    for starter in ["answers", "advisories", "posts"] {
        let site = dir.path().join(starter);
        let out = Command::new(bin())
            .args([
                "init",
                "--starter",
                starter,
                "--base-url",
                "https://example.org/blog",
            ])
            .arg(&site)
            .output()
            .unwrap();
        assert_success(&out);
        let toml = std::fs::read_to_string(site.join("fencepost.toml")).unwrap();
        assert!(
            toml.contains("base_url = \"https://example.org/blog/\""),
            "{toml}"
        );
        assert!(!toml.contains("localhost"), "{toml}");
    }
    let bad = dir.path().join("bad");
    let out = Command::new(bin())
        .args(["init", "--json", "--base-url", "example.org"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("absolute http(s)"));
    assert!(!bad.exists());

    let ci = dir.path().join("ci");
    let out = Command::new(bin())
        .args(["init", "--json", "--ci", "s3://b/site"])
        .arg(&ci)
        .output()
        .unwrap();
    assert_success(&out);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warning = json["warnings"][0].as_str().unwrap();
    assert!(
        warning.contains("base_url is still http://localhost:8080/"),
        "{json}"
    );
    assert!(warning.contains("--base-url"), "{json}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("base_url is still"));
}
