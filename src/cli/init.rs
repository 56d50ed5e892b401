use super::Ctx;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Folder for the new site (created if missing).
    dir: PathBuf,
    /// The kind of site: answers (a daily game's answers, the default), advisories
    /// (security advisories public at their own instant) or posts (a blog or newsletter).
    #[arg(long, value_name = "KIND", default_value = "answers")]
    starter: fencepost_site::init::Starter,
    /// Set the site up for stateless CI: its ledger in the bucket at URL/ledger (no database
    /// server), its output deployed to URL/www, and a GitHub Actions workflow that publishes,
    /// builds and deploys (URL: s3://bucket/prefix, gs://…, az://…, file:///folder).
    #[arg(long, value_name = "URL")]
    ci: Option<String>,
    /// The site's public address, written as `base_url` (feeds, sitemap, robots.txt and
    /// redirect pages name URLs under it). Default: http://localhost:8080/, right for
    /// `serve` only: with --ci, init warns until it is set.
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let setup = fencepost_site::init::Setup {
        starter: args.starter,
        ci: args.ci.clone(),
        base_url: args.base_url.clone(),
    };
    let written = fencepost_site::init::scaffold_with(&args.dir, ctx.clock.now(), &setup)?;
    let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    let private = args.ci.as_deref().map(|url| {
        let (ledger, site) = fencepost_site::init::ci::locations(url);
        format!(
            "the ledger at {ledger} must never be public: its log and snapshots name every embargoed item, its instant and its image sources. Serve only {site} (a CDN or the Worker in front of that prefix; never a public bucket policy or website endpoint over the whole bucket), or move the ledger to a private bucket of its own (ledger.url)"
        )
    });
    let mut out = serde_json::json!({ "site": args.dir, "written": files });
    if let Some(p) = &private {
        out["ledger_private"] = serde_json::json!(p);
    }
    let warning = local_base_url(&args);
    if let Some(w) = &warning {
        tracing::warn!("{w}");
        out["warnings"] = serde_json::json!([w]);
    }
    ctx.emit(
        &out,
        || {
            format!(
                "created a fencepost site in {}\n  {}\nnext: fencepost --site {} publish --build{}",
                args.dir.display(),
                files.join("\n  "),
                args.dir.display(),
                match &args.ci {
                    Some(url) => format!(
                        " && fencepost --site {} deploy (with AWS_* credentials for {url})\nimportant: {}",
                        args.dir.display(),
                        private.as_deref().unwrap_or_default()
                    ),
                    None => String::new(),
                }
            ) + &warning.as_deref().map(|w| format!("\nwarning: {w}")).unwrap_or_default()
        },
    )?;
    Ok(ExitCode::SUCCESS)
}

/// A site set up for deploying (`--ci`) whose `base_url` is still the local one: said loudly,
/// since every feed, the sitemap and robots.txt of the deployed site would point at it.
fn local_base_url(args: &Args) -> Option<String> {
    let base_url = args
        .base_url
        .as_deref()
        .unwrap_or(fencepost_site::init::LOCAL_BASE_URL);
    (args.ci.is_some() && fencepost_config::is_local_url(base_url)).then(|| {
        format!(
            "base_url is still {base_url}: the deployed site's feeds, sitemap and robots.txt would point at this machine. Set base_url in {} to the site's public address (or run init with --base-url https://…); deploy --strict refuses until then",
            args.dir.join(fencepost_config::CONFIG_FILE).display()
        )
    })
}
