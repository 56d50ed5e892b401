//! Link-time settings for the `fencepost` binary.
//!
//! On Linux with glibc 2.36 or newer (what loads them), the binary's relative relocations are
//! packed (`-z pack-relative-relocs`, DT_RELR): the time zone database (`chrono-tz`) and the
//! other static tables hold some 75,000 pointers, and unpacked their relocation table alone
//! is ~1.8 MB that every run reads at start — about 2 MB of each process's peak RSS, on a
//! command (`publish` on cron) that otherwise needs little more than that. Packed, the table
//! is a few kilobytes. On an older glibc the flag is left out (the binary would not load).
//!
//! On Linux the debug sections are compressed (`--compress-debug-sections=zlib`): the line
//! tables that let a panic's backtrace name file and line were ~60 MB of a 96 MB binary
//! uncompressed, ~14 MB compressed (a 51 MB binary), and the standard library's symbolizer
//! reads them compressed — a backtrace names file and line as before.

fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let version = text.trim().trim_start_matches("glibc ").to_string();
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (a, b) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (a, b) >= (major, minor)
}

/// `fencepost --version`: the package version and the commit it was built from (the first 12
/// hex digits; "commit unknown" outside a git checkout, e.g. from a source tarball).
fn version() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    let described = if commit.is_empty() {
        "commit unknown".to_string()
    } else {
        commit
    };
    println!(
        "cargo:rustc-env=FENCEPOST_VERSION={} ({described})",
        std::env::var("CARGO_PKG_VERSION").unwrap_or_default()
    );
    // Built again when HEAD moves: a new commit, a checkout.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head}");
        }
        println!("cargo:rerun-if-changed={dir}/packed-refs");
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    version();
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    if native
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && glibc_at_least(2, 36)
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    if var("CARGO_CFG_TARGET_OS") == "linux" {
        println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
    }
}
