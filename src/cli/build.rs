use super::Ctx;
use fencepost_build::{self as build, Report};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Render the content tree as it is now (embargoed items too, with a PREVIEW banner)
    /// into .fencepost/preview/ (outside public/); the pointer is not touched.
    #[arg(long)]
    pub preview: bool,
    /// Fail on broken internal links (they are always reported).
    #[arg(long)]
    pub strict: bool,
    /// Render every file; reuse nothing from the previous revision.
    #[arg(long)]
    pub full: bool,
}

impl Args {
    pub(super) fn options(&self) -> build::Options {
        build::Options {
            preview: self.preview,
            strict: self.strict,
            full: self.full,
            as_of: None,
        }
    }
}

pub(super) fn human(r: &Report) -> String {
    let mut out = if r.already_built {
        format!("revision {} was already built: nothing rendered\n", r.id)
    } else {
        format!(
            "built revision {}{}: {} files, {} rendered, {} reused\n",
            r.id,
            if r.preview { " (preview)" } else { "" },
            r.files,
            r.rendered,
            r.reused
        )
    };
    out += &format!("  output: {}\n", r.path);
    use fencepost_output::pointer::PointerOutcome;
    out += &match r.pointer {
        PointerOutcome::Moved => "  public/current now points to it\n".to_string(),
        PointerOutcome::Unchanged => "  public/current already pointed to it\n".to_string(),
        PointerOutcome::KeptHigher => {
            "  public/current names a higher revision and was left alone\n".to_string()
        }
        PointerOutcome::Held => "  public/current is held by a rollback until a higher revision is published (fencepost rollback moves it explicitly)\n".to_string(),
        PointerOutcome::None => "  preview: not pointed to by public/current, never deployed\n".to_string(),
    };
    if let Some(t) = r.next_change_at {
        out += &format!(
            "  next embargo ends at {t}: nothing goes live by itself — run `fencepost publish --build` after then (or keep `fencepost run` going, which does it at the instant)\n"
        );
    }
    for b in &r.broken_links {
        out += &format!("  broken link: {} -> {}\n", b.page, b.link);
    }
    for h in &r.held_pages {
        let kept = match h.previous_kept {
            true => "its previous version stays live",
            false => "left out: it answers 404 until fixed",
        };
        let template = h.template.as_deref().unwrap_or("its template");
        out += &format!(
            "  HELD: {} ({}, {template}): {kept}; everything else is built and live. {}\n",
            h.path, h.what, h.why
        );
    }
    for l in &r.left_out {
        let at = l
            .path
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        out += &format!(
            "  LEFT OUT: {}{at}: {} (everything else is built and live)\n",
            l.what, l.why
        );
    }
    out
}

/// Runs a build with a progress bar on a terminal.
pub(super) fn with_bar(
    site: &fencepost_site::Site,
    ctx: &Ctx,
    opts: &build::Options,
    warm: Option<build::Warm>,
) -> Result<Report, build::BuildError> {
    use std::io::IsTerminal;
    let bar = if std::io::stderr().is_terminal() && !ctx.json {
        indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} building {pos}/{len} files {wide_bar} {eta}",
            )
            .expect("valid progress template"),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    let progress = |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let r = match warm {
        Some(mut warm) => build::run_warm(site, &ctx.clock, opts, &progress, &mut warm),
        None => build::run_with_progress(site, &ctx.clock, opts, &progress),
    };
    bar.finish_and_clear();
    r
}

pub(super) fn run(ctx: &Ctx, args: Args) -> anyhow::Result<ExitCode> {
    let site = ctx.site()?;
    let r = with_bar(&site, ctx, &args.options(), None)?;
    ctx.emit(&r, || {
        let mut s = human(&r);
        if !r.preview {
            s += &format!(
                "  look at it: fencepost serve (or any static server with root {}/public/current)\n",
                site.root.display()
            );
        }
        s
    })?;
    // A page left out or held: the rest of the site is live, but CI goes red.
    Ok(exit(&r))
}

/// The exit status of a build that put its revision in place: success, or the held status
/// when a page was left out or held.
pub(super) fn exit(r: &Report) -> ExitCode {
    match r.left_out.is_empty() && r.held_pages.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(super::EXIT_HELD),
    }
}
