use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Lease length in seconds (default: publish.lease_secs in the config, 180).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=fencepost_config::MAX_LEASE_SECS))]
    lease_secs: Option<u64>,
    /// Then build the new revision (as `fencepost build`); the JSON gains a "build" key.
    #[arg(long)]
    build: bool,
    /// With --build: fail on broken internal links.
    #[arg(long, requires = "build")]
    strict: bool,
    /// Re-arm item ID (parked after publish.max_attempts failures), and its image, before the
    /// run: `collection/id`, or a bare id on a site with one collection. Repeatable.
    #[arg(long, value_name = "ID")]
    retry: Vec<String>,
    /// Re-render every published item (after a change to [markdown]): an item whose page
    /// comes out different is updated, the rest stay as they are.
    #[arg(long)]
    rerender: bool,
    /// Withdraw every public item of collection NAME if this run finds them all gone (its
    /// folder emptied, or the collection removed from fencepost.toml) — refused without it,
    /// as a typo looks just the same. Repeatable.
    #[arg(long, value_name = "NAME")]
    allow_withdraw_collection: Vec<String>,
    /// Withdraw the public items whose files are gone even when they are more than
    /// publish.mass_withdrawal_items and publish.mass_withdrawal_share of the site (refused
    /// without it: a wrong checkout looks just the same).
    #[arg(long)]
    allow_mass_withdrawal: bool,
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let opts = options(&site, &args)?;
    // The page rows the last build saved, and the live revision's manifest, are read while
    // this run publishes.
    let warm = (args.build)
        .then(|| fencepost_build::Warm::read_ahead(&site.state_dir(), &site.public_dir()));
    let r = fencepost_publish::run(&site, &ctx.clock, &opts)?;
    if args.build && !r.skipped_locked.is_empty() {
        // Another publisher holds some due items: build after its commit, not before.
        let wait = site.config.deploy.wait_secs();
        fencepost_publish::wait_for_items(&site, &ctx.clock, &r.skipped_ids, wait)?;
    }
    // A build that fails after a publish that committed: the publish report is still shown
    // (and returned in `--json`, with the build's error under "build_error"), so what went
    // public is never silent; the exit status is non-zero.
    let (built, build_error) = if args.build {
        let o = fencepost_build::Options {
            strict: args.strict,
            ..Default::default()
        };
        match super::build::with_bar(&site, ctx, &o, warm) {
            Ok(b) => (Some(b), None),
            Err(e) => (None, Some(anyhow::Error::from(e))),
        }
    } else {
        (None, None)
    };
    #[derive(serde::Serialize)]
    struct Out<'a> {
        #[serde(flatten)]
        publish: &'a fencepost_publish::Report,
        #[serde(skip_serializing_if = "Option::is_none")]
        build: Option<&'a fencepost_build::Report>,
        #[serde(skip_serializing_if = "Option::is_none")]
        build_error: Option<serde_json::Value>,
    }
    let out = Out {
        publish: &r,
        build: built.as_ref(),
        build_error: build_error
            .as_ref()
            .map(|e| super::errors::to_json(e)["error"].clone()),
    };
    ctx.emit(&out, || {
        let mut out = human(&r);
        if let Some(b) = &built {
            out += &super::build::human(b);
            out += &format!(
                "  look at it: fencepost serve, or open {}/public/current/index.html\n",
                site.root.display()
            );
        }
        if let Some(e) = &build_error {
            out += &format!(
                "  BUILD FAILED: {} (what is listed above is recorded in the ledger; fix the cause and run `fencepost build`)\n",
                super::errors::message(e)
            );
        }
        out
    })?;
    if let Some(e) = &build_error {
        eprintln!("error: {}", super::errors::message(e));
        return Ok(ExitCode::FAILURE);
    }
    let build_held = built
        .as_ref()
        .is_some_and(|b| super::build::exit(b) != ExitCode::SUCCESS);
    Ok(status(&r, build_held))
}

/// Broken files, an item whose shortcode cannot render (the site's to fix: a failed image
/// fetch, which the next run may get, keeps the status it always had), a page the build left
/// out or held, or a checkout that disagrees with another host's: everything else went out
/// (and was built), but CI goes red — by the held status, so a workflow deploys what went
/// out before it fails.
fn status(r: &fencepost_publish::Report, build_held: bool) -> ExitCode {
    let shortcode_failed =
        (r.failed.iter()).any(|f| f.error.starts_with(fencepost_site::shortcodes::DIR));
    match r.invalid.is_empty() && !shortcode_failed && !build_held && r.disagreed.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(super::EXIT_HELD),
    }
}

/// The run's options from the command line (`--retry` names parsed).
fn options(site: &fencepost_site::Site, args: &Args) -> anyhow::Result<fencepost_publish::Options> {
    let mut retry = Vec::new();
    for r in &args.retry {
        let name = fencepost_core::item::ItemName::parse(r, site.collections.only());
        retry.push(name.ok_or_else(|| {
            anyhow::anyhow!(
                "--retry {r:?}: name an item as collection/id (`fencepost status` lists parked items)"
            )
        })?);
    }
    Ok(fencepost_publish::Options {
        lease_secs: args.lease_secs.unwrap_or(site.config.publish.lease_secs),
        retry,
        owner: None,
        rerender: args.rerender,
        allow_withdraw_collection: args.allow_withdraw_collection.clone(),
        allow_mass_withdrawal: args.allow_mass_withdrawal,
    })
}

/// The run in human form: the revision, each list that is not empty, what was held back.
fn human(r: &fencepost_publish::Report) -> String {
    let ids = |v: &[fencepost_core::item::Shown]| {
        v.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out = String::new();
    for w in &r.warnings {
        out += &format!("warning: {w}\n");
    }
    out += &format!("publication revision {}\n", r.revision);
    for (label, list) in [
        ("published", &r.published),
        ("updated", &r.updated),
        ("withdrawn", &r.withdrawn),
        ("of them expired", &r.expired),
        ("skipped (held by another run)", &r.skipped_locked),
        ("lease lost (nothing written)", &r.lease_lost),
        ("conflict (nothing written)", &r.conflict),
        (
            "not due by the ledger's clock (nothing written)",
            &r.not_due,
        ),
        ("re-armed", &r.retried),
        ("parked (fencepost status; --retry ID re-arms)", &r.parked),
    ] {
        if !list.is_empty() {
            out += &format!("  {label}: {} [{}]\n", list.len(), ids(list));
        }
    }
    out += &format!("  unchanged: {}\n", r.unchanged);
    if r.embargoed > 0 {
        let next = r.next_embargo_at.map(|t| t.rfc3339()).unwrap_or_default();
        out += &format!("  embargoed: {} (next at {next})\n", r.embargoed);
        if let Some(at) = r.next_embargo_at {
            // A second after the instant: the site as the public will see it then.
            let after = fencepost_core::clock::Instant(at.0 + 1000).rfc3339();
            out += &format!(
                "  see it as it will be then (nothing public is written): fencepost build --preview --now {after}\n"
            );
        }
    }
    for i in &r.invalid {
        out += &format!(
            "  INVALID: {} (held as it is; everything else went ahead)\n",
            i.error
        );
    }
    for f in &r.unclaimed {
        out += &format!(
            "  warning: {f} belongs to no collection and is not a plain page (content/<name>.md): not published\n"
        );
    }
    for f in &r.failed {
        out += &format!(
            "  failed: item {}: {} (retried next run, parked after publish.max_attempts)\n",
            f.id, f.error
        );
    }
    if !r.drafts.is_empty() {
        let ids: Vec<String> = r.drafts.iter().map(|d| d.id.to_string()).collect();
        out += &format!(
            "  drafts (draft = true: not published): {} [{}]\n",
            ids.len(),
            ids.join(", ")
        );
    }
    for d in &r.disagreed {
        out += &format!("  DISAGREE: item {}: {}\n", d.id, d.disagreement.describe());
    }
    out
}
