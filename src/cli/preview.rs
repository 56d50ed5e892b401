//! `fencepost preview keygen|deploy|link|list|rm` (issue 80; docs/previews.md): a revision as
//! of an instant in a target's private area, and the signed, expiring links that open it.
//! Without `--to`, previews go to the site's own `.fencepost/` (what `serve` over `public/`
//! serves at `/.preview/NAME/`).

use super::Ctx;
use anyhow::Context;
use fencepost_bucket::preview::token::Key;
use fencepost_bucket::preview::{self, URL_PREFIX};
use fencepost_bucket::remote::Remote;
use fencepost_core::clock::Instant;
use fencepost_site::Site;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Print a new preview key: keep it as FENCEPOST_PREVIEW_KEY, a secret of CI and of
    /// every origin (the Worker's too).
    Keygen,
    /// Build the checkout as the site will be at an instant and upload it as preview NAME.
    Deploy(DeployArgs),
    /// Print a link that opens preview NAME (at PATH) until --ttl has passed.
    Link(LinkArgs),
    /// List the target's previews, their as-of instants and ages.
    List(TargetArgs),
    /// Remove preview NAME from the target.
    Rm(RmArgs),
}

#[derive(Debug, clap::Args)]
pub(super) struct TargetArgs {
    /// The deploy target (s3://…, file:///…); default: this site's own previews, which
    /// `fencepost serve` serves.
    #[arg(long, value_name = "URL")]
    to: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(super) struct DeployArgs {
    /// A branch or pull-request name (`pr-7`): a-z, 0-9, '-', '_', '.'.
    name: String,
    #[command(flatten)]
    target: TargetArgs,
    /// Show the site as of this instant (RFC 3339), or `next`: the next instant an item is
    /// due. Default: every scheduled item and update shown.
    #[arg(long, value_name = "INSTANT|next")]
    as_of: Option<String>,
    /// Show drafts too.
    #[arg(long)]
    drafts: bool,
}

#[derive(Debug, clap::Args)]
pub(super) struct LinkArgs {
    name: String,
    /// A page of the preview (`posts/hello/`); default its home.
    path: Option<String>,
    /// How long the link opens the preview: `30m`, `24h`, `7d`.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    ttl: std::time::Duration,
    /// The origin's address the link names; default the site's base_url.
    #[arg(long, value_name = "URL")]
    base: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(super) struct RmArgs {
    name: String,
    #[command(flatten)]
    target: TargetArgs,
}

pub(super) fn run(ctx: &Ctx, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Keygen => keygen(ctx),
        Command::Deploy(a) => deploy(ctx, a),
        Command::Link(a) => link(ctx, a),
        Command::List(a) => list(ctx, a),
        Command::Rm(a) => rm(ctx, a),
    }
}

fn keygen(ctx: &Ctx) -> anyhow::Result<ExitCode> {
    let key = Key::generate().to_hex();
    ctx.emit(&serde_json::json!({ "key": key }), || {
        format!("{key}\n\nKeep it as FENCEPOST_PREVIEW_KEY: a secret of the CI that deploys previews and of every origin that serves them (`wrangler secret put FENCEPOST_PREVIEW_KEY` for the Worker). Anyone holding it can open every preview.")
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The target a preview command works on, opened.
fn open_target(site: &Site, to: Option<&str>) -> anyhow::Result<Remote> {
    let url = match to {
        Some(u) => super::real_target(u)?,
        None => local_target(site)?,
    };
    let remote = Remote::open(&url)?;
    fencepost_deploy::targets::claim::apart_from_ledger(site, &remote)?;
    Ok(remote)
}

/// This site's own previews: a folder target in its state folder.
pub(crate) fn local_target(site: &Site) -> anyhow::Result<String> {
    let state = site.state_dir();
    std::fs::create_dir_all(&state).with_context(|| format!("creating {}", state.display()))?;
    let abs = std::fs::canonicalize(&state)?;
    Ok(format!("file://{}", abs.display()))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

fn deploy(ctx: &Ctx, a: DeployArgs) -> anyhow::Result<ExitCode> {
    preview::check_name(&a.name)?;
    Key::from_env()?;
    let site = ctx.site()?;
    let remote = open_target(&site, a.target.to.as_deref())?;
    let now = ctx.clock.now();
    let at = match a.as_of.as_deref() {
        None => None,
        Some("next") => Some(fencepost_build::next_due_after(&site, now, a.drafts)?.unwrap_or(now)),
        Some(t) => Some(Instant::parse_rfc3339(t).map_err(|e| {
            anyhow::anyhow!("--as-of {t}: {e}: expected RFC 3339 (2026-12-01T00:10:00Z) or `next`")
        })?),
    };
    let opts = fencepost_build::Options {
        preview: true,
        as_of: Some(fencepost_build::AsOf {
            at,
            drafts: a.drafts,
        }),
        ..Default::default()
    };
    let built = fencepost_build::run(&site, &ctx.clock, &opts)?;
    let making = fencepost_deploy::preview::Making {
        name: a.name.clone(),
        as_of: at,
        drafts: a.drafts,
        made_at: now,
        base_url: site.config.base_url.clone(),
    };
    let dir = std::path::PathBuf::from(&built.path);
    let d = runtime()?.block_on(fencepost_deploy::preview::deploy(&remote, &dir, &making))?;
    ctx.emit(&d, || {
        format!(
            "preview {} ({}) deployed to {}: {} files as of {}; uploaded {} object(s), {} bytes; {} read from the public area, {} kept from the last deploy; {} ms\n  open it: fencepost preview link {} --ttl 24h",
            d.name,
            d.revision,
            d.target,
            d.files,
            at.map_or("every scheduled item".to_string(), |t| t.rfc3339()),
            d.uploaded_objects,
            d.uploaded_bytes,
            d.reused_public,
            d.reused_own,
            d.ms,
            d.name
        )
    })?;
    Ok(ExitCode::SUCCESS)
}

fn link(ctx: &Ctx, a: LinkArgs) -> anyhow::Result<ExitCode> {
    preview::check_name(&a.name)?;
    let key = Key::from_env()?;
    let base = match a.base {
        Some(b) => b,
        None => ctx.site()?.config.base_url.clone(),
    };
    let now = ctx.clock.now();
    let expires = now.0 / 1000 + a.ttl.as_secs() as i64;
    let token = key.sign(&a.name, expires);
    let path = a.path.as_deref().unwrap_or("").trim_start_matches('/');
    let url = format!(
        "{}{}{}/{}?{}={}",
        base.trim_end_matches('/'),
        URL_PREFIX,
        a.name,
        path,
        preview::TOKEN_PARAM,
        token
    );
    let expires_at = Instant(expires * 1000);
    let id = token.split('.').next().unwrap_or_default().to_string();
    let out = serde_json::json!({ "url": url, "expires_at": expires_at, "token_id": id });
    ctx.emit(&out, || {
        format!("{url}\n  opens preview {} until {expires_at} (token {id}); anyone holding it can, until then", a.name)
    })?;
    Ok(ExitCode::SUCCESS)
}

fn list(ctx: &Ctx, a: TargetArgs) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let remote = open_target(&site, a.to.as_deref())?;
    let now = ctx.clock.now();
    let previews = runtime()?.block_on(fencepost_deploy::preview::list(&remote, now))?;
    let out = serde_json::json!({ "previews": previews });
    ctx.emit(&out, || {
        let mut s = String::new();
        for p in &previews {
            s += &format!(
                "{}  {}  as of {}  made {} ({} ago){}\n",
                p.name,
                p.revision,
                p.as_of
                    .map_or("every scheduled item".into(), |t| t.rfc3339()),
                p.made_at,
                fencepost_core::clock::human_ms(p.age_secs * 1000),
                if p.drafts { "  drafts" } else { "" }
            );
        }
        if s.is_empty() {
            s = "no previews\n".into();
        }
        s
    })?;
    Ok(ExitCode::SUCCESS)
}

fn rm(ctx: &Ctx, a: RmArgs) -> anyhow::Result<ExitCode> {
    preview::check_name(&a.name)?;
    let site = ctx.site()?;
    let remote = open_target(&site, a.target.to.as_deref())?;
    let removed = runtime()?.block_on(fencepost_deploy::preview::remove(&remote, &a.name))?;
    let out = serde_json::json!({ "name": a.name, "removed_objects": removed });
    ctx.emit(&out, || match removed {
        0 => format!("there is no preview {}", a.name),
        n => format!("removed preview {} ({n} object(s))", a.name),
    })?;
    Ok(ExitCode::SUCCESS)
}
