//! What can go wrong on a target, for every operation on it (deploy, `rollback --to`,
//! `gc --to`): one error type (named for the first of them: `"kind": "deploy"` in JSON is a
//! contract), and how an operation's run ended.

use fencepost_bucket::remote::Remote;
use fencepost_ledger::LedgerError;
use fencepost_output::OutputError;
use serde::Serialize;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DeployError {
    #[error("{target} would hold the ledger {ledger} (one prefix lies inside the other): a deploy target is served to the public, and a ledger's log and snapshots name every embargoed item, its instant and its image sources. Keep the ledger outside every target (init --ci puts it at URL/ledger beside URL/www) — better, in a bucket of its own that is never public. Nothing was written")]
    LedgerInside { target: String, ledger: String },
    #[error("no deploy target: pass --to URL or set deploy.to in fencepost.toml (s3://bucket/prefix, gs://…, az://…, file:///abs/path)")]
    NoTarget,
    #[error("the ledger records a {action} dated {at}, {ahead} ahead of this machine's clock (made with a --now in the future and --allow-future-now): deploying it now would serve it before its instant. Deploy after then, or pass --allow-future-now if this bucket is a test's. Nothing was uploaded")]
    FutureEntries {
        action: String,
        at: fencepost_core::clock::Instant,
        ahead: String,
    },
    #[error("base_url is {base_url}, a local address: the deployed feeds, sitemap, robots.txt and redirect pages would send readers and crawlers there. Set base_url in fencepost.toml to the site's public URL, build, and deploy again (`deploy --strict` refuses this; without it, it is a warning). Nothing was uploaded")]
    LocalBaseUrl { base_url: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{dir} is preview output: previews are never deployed")]
    Preview { dir: String },
    #[error("{target} serves revision {live}; deploying {wanted} would move it backwards. That is `fencepost rollback {wanted} --to {target}`")]
    Backwards {
        target: String,
        live: String,
        wanted: String,
    },
    #[error("{target} serves {live}, a newer build of the same revision than {wanted}, which was live there before and was replaced: deploying it would move the target backwards (is this checkout's templates/ or fencepost.toml behind?). Update the checkout and rebuild, or `fencepost rollback {wanted} --to {target}` on purpose")]
    Replaced {
        target: String,
        live: String,
        wanted: String,
    },
    #[error("{target} belongs to ledger {theirs}, and this site's ledger is {ours}: its revisions are not this ledger's, so nothing was written there. Deploy from the ledger that owns it (the shared PostgreSQL ledger: ledger.url or FENCEPOST_LEDGER), or take the bucket over with `fencepost deploy --adopt` (audited)")]
    ForeignBucket {
        target: String,
        theirs: String,
        ours: String,
    },
    /// The live revision's transparency log is not a prefix of this revision's.
    #[error("{target}: this revision's transparency log does not extend the one the bucket serves ({why}): readers who saved the live checkpoint would see the log rewritten, so nothing was written. Deploy a revision built from the ledger whose log the bucket holds (a newer build of it), or, for a log started anew on purpose, take the bucket over with `fencepost deploy --adopt` (audited)")]
    ForeignLog { target: String, why: String },
    #[error("{target}: manifest {root} is incomplete, missing {missing}; nothing was moved. `fencepost deploy --repair` re-uploads what the local revision has")]
    Incomplete {
        target: String,
        root: String,
        missing: String,
    },
    #[error("{target}: {what}: another deploy, rollback or gc held the target for {waited_secs} s (deploy.wait_secs); try again when it is done (fencepost status)")]
    Busy {
        target: String,
        what: String,
        waited_secs: u64,
    },
    #[error(
        "deploy --abandon {0}: no parked operation with that id; `fencepost status` lists them"
    )]
    NoSuchParkedToAbandon(String),
    #[error("{dir} was built by ledger {theirs}, and this site's ledger is {ours}: a bucket's pointer names the ledger its root was built by, so nothing was written. Build the revision from this ledger (`fencepost build`), or deploy from the ledger that built it")]
    ForeignRevision {
        dir: String,
        theirs: String,
        ours: String,
    },
    #[error("nothing to deploy: {0}")]
    NothingBuilt(String),
    #[error("interrupted (shutting down): the next deploy resumes the operation")]
    Interrupted,
    #[error("deploy --retry {0}: no parked operation with that id (or another operation on its target is pending); `fencepost status` lists them")]
    NoSuchParked(String),
    #[error(transparent)]
    Bucket(#[from] fencepost_bucket::BucketError),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    #[error(transparent)]
    Output(#[from] OutputError),
}

impl DeployError {
    pub fn store(remote: &Remote, what: &str, message: impl std::fmt::Display) -> DeployError {
        // What the bucket holds is not what the saga expects (a frozen plan that does not
        // match, a root that does not hash to its name): trying again repeats it.
        DeployError::Bucket(fencepost_bucket::BucketError::Store {
            target: remote.url.clone(),
            what: what.to_string(),
            message: fencepost_core::store::names::redact_userinfo(&message.to_string()),
            retryable: false,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Deployed,
    AlreadyDeployed,
    Superseded,
    SkippedLocked,
    /// A rollback holds the target below this revision (`rollback --to`).
    Held,
    Failed,
    /// The wait for another deploy of an older revision ran out: this one is not live.
    NotLive,
    /// A parked operation blocks this revision at the target (`--retry` or `--abandon`).
    Parked,
    /// `--abandon`: the parked operation is closed.
    Abandoned,
    /// `--repair`: what the live root lacked is in the bucket again.
    Repaired,
    /// Stopped on request (`fencepost run` shutting down) between steps; the next deploy
    /// resumes it.
    Interrupted,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Deployed => "deployed",
            Outcome::AlreadyDeployed => "already_deployed",
            Outcome::Superseded => "superseded",
            Outcome::SkippedLocked => "skipped_locked",
            Outcome::Held => "held",
            Outcome::Failed => "failed",
            Outcome::NotLive => "not_live",
            Outcome::Parked => "parked",
            Outcome::Abandoned => "abandoned",
            Outcome::Repaired => "repaired",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// Whether the command exits non-zero: the revision is not live and nobody else is
    /// carrying it out.
    pub fn is_failure(self) -> bool {
        matches!(self, Outcome::Failed | Outcome::NotLive | Outcome::Parked)
    }

    pub fn parse(s: &str) -> Outcome {
        match s {
            "deployed" => Outcome::Deployed,
            "already_deployed" => Outcome::AlreadyDeployed,
            "superseded" => Outcome::Superseded,
            "held" => Outcome::Held,
            "skipped_locked" => Outcome::SkippedLocked,
            "abandoned" => Outcome::Abandoned,
            "repaired" => Outcome::Repaired,
            _ => Outcome::Failed,
        }
    }
}

pub fn runtime() -> Result<tokio::runtime::Runtime, DeployError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| DeployError::Io {
            path: PathBuf::from("tokio runtime"),
            source,
        })
}

pub fn lost_lease(remote: &Remote, what: &str) -> DeployError {
    DeployError::store(
        remote,
        what,
        "this run lost the deploy lease (another run took over); nothing more is written",
    )
}
