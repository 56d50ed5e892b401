//! Command-line types (clap) and one small `run` per subcommand in `cli/`.
//! Every command prints a human form, or with `--json` one JSON object, on stdout; logs go
//! to stderr.

mod build;
mod deploy;
pub(crate) mod errors;
mod gc;
mod import;
mod init;
mod ledger;
mod log;
mod new;
mod preview;
mod publish;
mod results;
mod rollback;
mod run;
mod serve;
mod status;
mod tlog;
mod verify;

use anyhow::Context;
use clap::{Parser, Subcommand};
use fencepost_core::clock::{Clock, Instant};
use fencepost_site::Site;
use std::path::PathBuf;
use std::process::ExitCode;

/// The exit status of a command that did its work but held something back: a file that does
/// not validate (`publish`'s `invalid`), a page whose template failed (`build`'s `held`), a
/// page left out, a checkout another host disagrees with. Everything else went out (and was
/// built); distinct from failure (1) so a CI job deploys what is due and still goes red at
/// its end (the workflow `init --ci` writes does so). docs/commands.md, "Exit status".
pub(crate) const EXIT_HELD: u8 = 3;

#[derive(Debug, Parser)]
#[command(
    name = "fencepost",
    version = env!("FENCEPOST_VERSION"),
    about = "Revision-stamped static sites with exactly-once publishing"
)]
pub(crate) struct Cli {
    /// The site's root folder (holds fencepost.toml).
    #[arg(long, global = true, default_value = ".", value_name = "DIR")]
    site: PathBuf,
    /// The instant used for every time decision (embargoes, leases), e.g. 2026-12-01T00:10:00Z.
    #[arg(long, global = true, value_name = "RFC3339", value_parser = parse_now)]
    now: Option<Instant>,
    /// Let a `--now` ahead of the real clock stand on a ledger with a clock of its own (the
    /// database does not re-check due instants by its clock): for test harnesses that
    /// simulate the calendar. FENCEPOST_ALLOW_FUTURE_NOW=1 does the same.
    #[arg(long, global = true, env = "FENCEPOST_ALLOW_FUTURE_NOW", value_parser = clap::builder::BoolishValueParser::new())]
    allow_future_now: bool,
    /// Print one JSON object on stdout instead of the human form.
    #[arg(long, global = true)]
    json: bool,
    /// More log output on stderr (-v info, -vv debug). FENCEPOST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create a new site in DIR (config, templates, a sample item).
    Init(init::Args),
    /// Write a new fencepost site at DST from a Hugo or Zola site at SRC, with a report of
    /// what was converted and what was not.
    Import(import::Args),
    /// Write a new item file of COLLECTION with its required keys filled in; prints its path.
    New(new::Args),
    /// Record every due item in the ledger exactly once.
    Publish(publish::Args),
    /// Render the ledger's publication revision into public/revisions/R-B and move the pointer.
    Build(build::Args),
    /// Ship a finished revision to object storage (resumable; the pointer moves last, by
    /// compare-and-set).
    Deploy(deploy::Args),
    /// Point public/current (or, with --to, a bucket's pointer) back at a revision it holds.
    Rollback(rollback::Args),
    /// Remove old revisions (never the live one), locally or, with --to, in a bucket.
    Gc(gc::Args),
    /// Serve public/current (origin), a deployed bucket (--from), or a live preview for
    /// editors (--watch).
    Serve(serve::Args),
    /// Publish, build and (with --deploy) deploy at the instant of every scheduled change,
    /// and on every change to the site; optionally serve and expose metrics. Runs until
    /// SIGINT/SIGTERM.
    Run(run::Args),
    /// Summarise the ledger: revision, items by state, live leases, audit tip.
    Status,
    /// The audit trail, newest first: seq, time, action, item, revision, hash.
    Log(log::Args),
    /// Recompute the audit chain; non-zero exit naming the first broken entry. With --to,
    /// check a bucket's live root instead (every shard and blob present and whole).
    Verify(verify::Args),
    /// Ledger administration: `ledger copy --to postgres://…` moves a SQLite ledger into a
    /// shared PostgreSQL database.
    Ledger {
        #[command(subcommand)]
        command: ledger::Command,
    },
    /// The transparency log: `tlog keygen ORIGIN` makes its signing and verifier keys.
    Tlog {
        #[command(subcommand)]
        command: tlog::Command,
    },
    /// Previews a reviewer opens with a signed, expiring link and nobody else ever sees:
    /// `preview deploy pr-7 --to URL`, `preview link pr-7 --ttl 24h` (docs/previews.md).
    Preview {
        #[command(subcommand)]
        command: preview::Command,
    },
    /// Players' results.
    Results {
        #[command(subcommand)]
        command: results::Command,
    },
    /// Print shell completions for SHELL (bash, zsh, fish, elvish, powershell) on stdout:
    /// `fencepost completions bash > ~/.local/share/bash-completion/completions/fencepost`.
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
}

/// A listening address as people write it: `PORT` (on 127.0.0.1), `HOST:PORT` with an IP
/// (`0.0.0.0:8080`, `[::1]:8080`), or a name that resolves (`localhost:8080`; its IPv4
/// address first).
pub(crate) fn parse_bind(s: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{SocketAddr, ToSocketAddrs};
    let s = s.trim();
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Ok(addr) = s.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let bad =
        || format!("{s}: expected PORT, HOST:PORT or localhost:PORT (e.g. 8080, 0.0.0.0:8080)");
    if !s.contains(':') {
        return Err(bad());
    }
    let addrs: Vec<SocketAddr> = s.to_socket_addrs().map_err(|_| bad())?.collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(bad)
}

fn parse_now(s: &str) -> Result<Instant, String> {
    let t = Instant::parse_rfc3339(s)
        .map_err(|e| format!("{e}: expected RFC 3339, e.g. 2026-12-01T00:10:00Z"))?;
    // Instant 0 means "released" to a lease, so time before 1970 would make released leases
    // look live; nothing fencepost schedules lies there.
    if t.0 < 0 {
        return Err("must not be before 1970-01-01T00:00:00Z".into());
    }
    Ok(t)
}

/// Refuses `memory://` targets: an in-process store (for the library's tests) keeps nothing
/// after the command exits, so deploying, collecting or serving there would only pretend.
pub(crate) fn real_target(url: &str) -> anyhow::Result<String> {
    anyhow::ensure!(
        !url.trim_start().to_ascii_lowercase().starts_with("memory:"),
        "{url}: memory:// is an in-process store for tests; nothing there outlives this command. Use s3://, gs://, az:// or file://"
    );
    Ok(url.to_string())
}

/// Shared by every subcommand.
pub(crate) struct Ctx {
    pub site_dir: PathBuf,
    pub clock: Clock,
    pub json: bool,
    /// `--allow-future-now` (or FENCEPOST_ALLOW_FUTURE_NOW=1): a simulated calendar.
    pub allow_future_now: bool,
}

impl Ctx {
    pub(crate) fn site(&self) -> anyhow::Result<Site> {
        Ok(Site::open(&self.site_dir)?)
    }

    /// Prints `value` as JSON, or the human form.
    pub(crate) fn emit<T: serde::Serialize>(
        &self,
        value: &T,
        human: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        if self.json {
            say(&serde_json::to_string(value).context("serialising the result")?);
        } else {
            let text = human();
            if !text.is_empty() {
                say(text.trim_end());
            }
        }
        Ok(())
    }
}

/// Writes one line to stdout and flushes it. A reader that went away (`fencepost … | head`)
/// ends the command quietly with status 0: the work is done; only who wanted to read about it
/// left. (Rust's `println!` would panic, exit 101.)
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let written = writeln!(out, "{line}").and_then(|_| out.flush());
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

pub(crate) fn run() -> anyhow::Result<ExitCode> {
    let cli = Cli::try_parse().unwrap_or_else(|e| usage_error(e));
    // A server's access log is its main output on stderr.
    let serving = matches!(cli.command, Command::Serve(_));
    init_logging(cli.verbose.max(u8::from(serving)));
    if let Command::Completions { shell } = cli.command {
        return Ok(completions(shell));
    }
    let uses_ledger = !matches!(
        cli.command,
        Command::Init(_)
            | Command::Import(_)
            | Command::New(_)
            | Command::Ledger { .. }
            | Command::Tlog { .. }
            | Command::Preview { .. }
    );
    // `run` measures the database clock again at every cycle and `serve` decides nothing by
    // the clock: for them a database away at start is no reason to stop.
    let soft = matches!(cli.command, Command::Run(_) | Command::Serve(_));
    if !soft {
        crate::keep_freed_memory();
    }
    // Commands that only show what was decided decide nothing by the clock: on a bucket
    // ledger they need not write a probe to read the store's.
    let decides = !matches!(
        cli.command,
        Command::Status | Command::Log(_) | Command::Verify(_)
    );
    let writes_ledger = matches!(
        cli.command,
        Command::Publish(_)
            | Command::Run(_)
            | Command::Deploy(_)
            | Command::Rollback(_)
            | Command::Gc(_)
            | Command::Results { .. }
            | Command::Ledger { .. }
    );
    if let Some(t) = cli.now.filter(|_| writes_ledger && !cli.allow_future_now) {
        refuse_future_now(t)?;
    }
    let clock = match cli.now {
        Some(t) if cli.allow_future_now => Clock::Simulated(t),
        Some(t) => Clock::Fixed(t),
        None if uses_ledger => match database_clock(&cli.site, decides) {
            Ok(c) => c,
            Err(_) if soft => Clock::System,
            Err(e) => return Err(e),
        },
        None => Clock::System,
    };
    let ctx = Ctx {
        site_dir: cli.site,
        clock,
        json: cli.json,
        allow_future_now: cli.allow_future_now,
    };
    match cli.command {
        Command::Init(args) => init::run(&ctx, args),
        Command::Import(args) => import::run(&ctx, args),
        Command::New(args) => new::run(&ctx, args),
        Command::Publish(args) => publish::run(&ctx, args),
        Command::Build(args) => build::run(&ctx, args),
        Command::Deploy(args) => deploy::run(&ctx, args),
        Command::Rollback(args) => rollback::run(&ctx, args),
        Command::Gc(args) => gc::run(&ctx, args),
        Command::Serve(args) => serve::run(&ctx, args),
        Command::Run(args) => run::run(&ctx, args),
        Command::Status => status::run(&ctx),
        Command::Log(args) => log::run(&ctx, args),
        Command::Verify(args) => verify::run(&ctx, args),
        Command::Ledger { command } => ledger::run(&ctx, command),
        Command::Results { command } => results::run(&ctx, command),
        Command::Preview { command } => preview::run(&ctx, command),
        Command::Tlog { command } => tlog::run(&ctx, command),
        Command::Completions { .. } => unreachable!("answered before anything else"),
    }
}

/// `fencepost completions SHELL`: the shell's completion script on stdout.
fn completions(shell: clap_complete::Shell) -> ExitCode {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "fencepost", &mut script);
    say(String::from_utf8_lossy(&script).trim_end());
    ExitCode::SUCCESS
}

/// How far ahead of this machine's clock a `--now` may be on a command that writes the
/// ledger without `--allow-future-now`: clocks disagree by seconds, never by this.
const FUTURE_NOW_SLACK_MS: i64 = 60_000;

/// A `--now` more than a minute ahead of the real clock, on a command that writes the ledger,
/// is refused before anything is opened: it would record publications (and deploys) that
/// have not happened, and a plain `deploy` after it would serve them early.
fn refuse_future_now(t: Instant) -> anyhow::Result<()> {
    let real = chrono::Utc::now().timestamp_millis();
    let ahead_ms = t.0.saturating_sub(real);
    if ahead_ms <= FUTURE_NOW_SLACK_MS {
        return Ok(());
    }
    anyhow::bail!(
        "--now {t} is {} ahead of this machine's clock: a command that writes the ledger would record publications that have not happened, and the next plain deploy would serve them early. To see the site as it will be then, run `fencepost build --preview --now {t}` (it writes nothing public); a test harness that simulates the calendar passes --allow-future-now (or sets FENCEPOST_ALLOW_FUTURE_NOW=1). Nothing was written",
        fencepost_core::clock::human_ms(ahead_ms)
    )
}

/// A command line clap refuses: its message and usage on stderr and its exit status (2), as
/// clap does; with `--json`, one JSON object on stdout as well, like every other failure.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind::*;
    let shows_help = matches!(
        e.kind(),
        DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
    );
    if !shows_help && std::env::args().skip(1).any(|a| a == "--json") {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        let message = first.strip_prefix("error: ").unwrap_or(first);
        say(&serde_json::json!({ "error": { "message": message, "kind": "usage" } }).to_string());
    }
    e.exit()
}

/// Without `--now`, a shared ledger's clock is the database's (PostgreSQL) or the store's (a
/// bucket): hosts with skewed clocks then agree on due instants, lease expiry and audit times.
/// (A SQLite ledger's clock is this host's.) A shared ledger whose clock cannot be read is an
/// error, never a fall-back to this host's clock: a host 30 s fast would publish 30 s early;
/// a host off the store's clock by more than `ledger.clock_tolerance_ms` decides nothing. If
/// the site cannot be opened, the command itself says why.
fn database_clock(site_dir: &std::path::Path, decides: bool) -> anyhow::Result<Clock> {
    let Ok(site) = Site::open(site_dir) else {
        return Ok(Clock::System);
    };
    let costly = site
        .ledger_location()
        .is_ok_and(|l| l.clock_costs_a_write());
    if costly && !decides {
        return Ok(Clock::System);
    }
    site.decision_clock().map_err(|e| match e {
        fencepost_ledger::LedgerError::ClockSkew { .. }
        | fencepost_ledger::LedgerError::NoBucket { .. } => anyhow::Error::new(e),
        e => anyhow::anyhow!(
            "cannot read the shared ledger's clock ({e}): on a shared ledger every instant is the database's or the store's, never this host's; nothing was done. Try again when it answers"
        ),
    })
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("FENCEPOST_LOG").unwrap_or_else(|_| {
            tracing_subscriber::EnvFilter::new(format!("fencepost={default},warn"))
        });
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}
