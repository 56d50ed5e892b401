use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Record one game's result: one row per (puzzle, session), a dense slot, a cap per puzzle.
    Add {
        /// The puzzle (item id).
        #[arg(long)]
        puzzle: i64,
        /// The player's session id.
        #[arg(long)]
        session: String,
        #[arg(long, value_enum)]
        outcome: Outcome,
        /// Guesses used, 1 to 100.
        #[arg(long)]
        guesses: i64,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum Outcome {
    Win,
    Loss,
}

pub(super) fn run(ctx: &Ctx, cmd: Command) -> anyhow::Result<ExitCode> {
    let Command::Add {
        puzzle,
        session,
        outcome,
        guesses,
    } = cmd;
    let site = ctx.site()?;
    let outcome = match outcome {
        Outcome::Win => "win",
        Outcome::Loss => "loss",
    };
    let r = fencepost_site::results::add(&site, &ctx.clock, puzzle, &session, outcome, guesses)?;
    ctx.emit(&r, || match (r.inserted, r.slot, r.reason) {
        (true, Some(slot), _) => format!("recorded in slot {slot}"),
        (_, Some(slot), _) => format!("not recorded: session already recorded in slot {slot}"),
        _ => "not recorded: this puzzle has reached results.max_per_puzzle".into(),
    })?;
    Ok(ExitCode::SUCCESS)
}
