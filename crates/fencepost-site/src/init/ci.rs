//! `fencepost init --ci s3://bucket/prefix`: a site whose ledger lives in the bucket beside
//! its output, so a stateless CI runner needs nothing but object storage, and the GitHub
//! Actions workflow that publishes, builds and deploys it on a schedule.

use super::InitError;

/// Where the ledger and the site go under the `--ci` URL.
pub fn locations(url: &str) -> (String, String) {
    let base = url.trim_end_matches('/');
    (format!("{base}/ledger"), format!("{base}/www"))
}

/// Checks `url` names an object store a bucket ledger can live in.
pub fn check(url: &str) -> Result<(), InitError> {
    let ok = ["s3://", "gs://", "az://", "file:///"]
        .iter()
        .any(|s| url.starts_with(s) && url.len() > s.len());
    if ok && !url.contains('@') {
        return Ok(());
    }
    Err(InitError::Ci {
        url: fencepost_core::store::names::shown(url),
    })
}

/// `config` (a starter's fencepost.toml) with the ledger and the deploy target under `url`.
pub fn configure(config: &str, url: &str) -> String {
    let (ledger, site) = locations(url);
    let with_ledger = config.replacen(
        "[ledger]\n",
        &format!(
            "[ledger]\n# The whole ledger lives in the bucket (a log of immutable entries); a runner keeps\n# only a cache under .fencepost/, so any number of fresh CI runners may race safely.\nurl = {ledger:?}\n"
        ),
        1,
    );
    // The SQLite path a starter names would only mislead: ledger.url wins over it.
    let without_path: String = with_ledger
        .lines()
        .filter(|l| !l.starts_with("path = \".fencepost/"))
        .map(|l| format!("{l}\n"))
        .collect();
    format!("{without_path}\n[deploy]\nto = {site:?}\n")
}

/// The workflow file: no database service, `concurrency` left free (racing runs are safe).
/// It installs this very release of fencepost (its version and repository, as Cargo.toml
/// names them) and caches the binary by version and the ledger's cache by run.
pub fn workflow(url: &str) -> (String, String) {
    let (_, site) = locations(url);
    let text = include_str!("../../../../starters/ci/publish.yml")
        .replace("{site}", &site)
        .replace("{version}", env!("CARGO_PKG_VERSION"))
        .replace("{repository}", env!("CARGO_PKG_REPOSITORY"));
    (".github/workflows/publish.yml".into(), text)
}

/// The pull-request workflow: a preview of each pull request as of the next scheduled
/// instant, its link in the run's summary; a fork's only built (docs/previews.md).
pub fn preview_workflow(url: &str) -> (String, String) {
    let (_, site) = locations(url);
    let text = include_str!("../../../../starters/ci/preview.yml")
        .replace("{site}", &site)
        .replace("{version}", env!("CARGO_PKG_VERSION"))
        .replace("{repository}", env!("CARGO_PKG_REPOSITORY"));
    (".github/workflows/preview.yml".into(), text)
}
