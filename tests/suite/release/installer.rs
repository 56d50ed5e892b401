//! The installer a release ships: it installs the archive for its target after checking its
//! checksum, and writes nothing but the binary it names.

use super::*;

/// The installer, as the release renders it, downloads the archive for its target over HTTPS,
/// checks it against its checksum, installs the binary into the folder it is given (and adds
/// it to a GitHub Actions job's PATH); a tampered archive installs nothing.
#[test]
fn the_installer_installs_a_release_archive_and_refuses_a_tampered_one() {
    let release = LocalRelease::new();
    let installer = release.assets().join("fencepost-installer.sh");
    let text = std::fs::read_to_string(&installer).unwrap();
    assert!(!text.contains("@VERSION@") && !text.contains("@REPOSITORY@"));
    assert!(text.contains(&env!("CARGO_PKG_REPOSITORY")));
    let sums = std::fs::read_to_string(release.assets().join("SHA256SUMS")).unwrap();
    assert!(
        sums.contains(&format!("fencepost-{LOCAL_TARGET}.tar.gz")),
        "{sums}"
    );
    assert!(sums.contains("fencepost-installer.sh"), "{sums}");

    let install = |prefix: &Path| {
        let home = tempfile::tempdir().unwrap();
        let github_path = home.path().join("github_path");
        let out = Command::new("sh")
            .arg(&installer)
            .arg("--to")
            .arg(prefix.join("bin"))
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", home.path())
            .env("GITHUB_PATH", &github_path)
            .envs(release.env())
            .output()
            .unwrap();
        let added = std::fs::read_to_string(&github_path).unwrap_or_default();
        (out, added)
    };
    let prefix = tempfile::tempdir().unwrap();
    let (out, added) = install(prefix.path());
    assert_success(&out);
    let installed = prefix.path().join("bin/fencepost");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    assert_version(&String::from_utf8_lossy(&version.stdout));
    assert_eq!(
        added.trim(),
        prefix.path().join("bin").display().to_string()
    );

    // One byte changed on the server: refused, and nothing is installed.
    let archive = release
        .assets()
        .join(format!("fencepost-{LOCAL_TARGET}.tar.gz"));
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&archive, bytes).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let (out, _) = install(elsewhere.path());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not match its checksum") && err.contains("nothing was installed"),
        "{err}"
    );
    assert!(!elsewhere.path().join("bin/fencepost").exists());
}

/// Guards: issue 78.8. The installer writes only the binary it names. With `--to DIR`
/// where `DIR/fencepost` is a folder it fails naming it (it used to move the binary into the
/// folder and print "installed  to …", exit 0); a `.fencepost.new` planted in a shared
/// `--to` as a link to another file leaves that file as it was (the copy used to go through
/// the link), and the binary is installed.
#[test]
fn the_installer_writes_only_what_it_says() {
    let release = LocalRelease::new();
    let installer = release.assets().join("fencepost-installer.sh");
    let install = |to: &Path| {
        let home = tempfile::tempdir().unwrap();
        Command::new("sh")
            .arg(&installer)
            .arg("--to")
            .arg(to)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", home.path())
            .envs(release.env())
            .output()
            .unwrap()
    };
    let shared = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(shared.path().join("fencepost/keep")).unwrap();
    let out = install(shared.path());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is a folder") && !err.contains("fencepost-installer: installed"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(shared.path().join("fencepost"))
        .unwrap()
        .collect();
    assert_eq!(left.len(), 1, "the folder holds what it held");
    std::fs::remove_dir_all(shared.path().join("fencepost")).unwrap();
    let victim = shared.path().join("victim.txt");
    std::fs::write(&victim, "someone else's file").unwrap();
    std::os::unix::fs::symlink(&victim, shared.path().join(".fencepost.new")).unwrap();
    let out = install(shared.path());
    assert_success(&out);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "someone else's file"
    );
    let version = Command::new(shared.path().join("fencepost"))
        .arg("--version")
        .output()
        .unwrap();
    assert_version(&String::from_utf8_lossy(&version.stdout));
    let names: Vec<String> = std::fs::read_dir(shared.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "only the binary was added: {names:?}");
}
