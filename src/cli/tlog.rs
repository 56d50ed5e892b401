use super::Ctx;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Print a new Ed25519 key pair for the transparency log ORIGIN (its name in checkpoints,
    /// a schema-less URL such as example.org/log): the signing key (a secret) and the verifier
    /// key readers check the log's checkpoints with.
    Keygen {
        /// The log's origin, which names its key.
        #[arg(value_name = "ORIGIN")]
        origin: String,
    },
}

pub(super) fn run(ctx: &Ctx, cmd: Command) -> anyhow::Result<ExitCode> {
    let Command::Keygen { origin } = cmd;
    let keys = fencepost::tlog::note::generate(&origin)?;
    let out = serde_json::json!({ "skey": keys.skey, "vkey": keys.vkey });
    ctx.emit(&out, || {
        format!(
            "signing key (a secret: keep it out of the repository and out of logs):\n{}\nverifier key (public: readers check the log's checkpoints with it):\n{}",
            keys.skey, keys.vkey
        )
    })?;
    Ok(ExitCode::SUCCESS)
}
