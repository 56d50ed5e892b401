//! `fencepost init DIR [--starter answers|advisories|posts]`: a new site with a config,
//! templates, a stylesheet and one sample item that is due already, so the site publishes,
//! builds and serves as it comes. `answers` (the default) is the demo site's own scaffold;
//! `advisories` and `posts` are the starters under `starters/`, embedded at compile time.

pub mod ci;

use fencepost_config::CONFIG_FILE;
use fencepost_core::clock::Instant;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{path} already exists: {dir} is already a fencepost site (nothing was changed)")]
    Exists { path: PathBuf, dir: PathBuf },
    #[error("init --ci {url}: a ledger in a bucket needs an object store's URL (s3://bucket/prefix, gs://bucket/prefix, az://container/prefix or file:///folder), without credentials (they come from the environment). Nothing was written")]
    Ci { url: String },
    #[error("init --base-url {url}: a base URL is the site's public address, absolute http(s) with a host (https://example.org/ or https://user.github.io/project/). Nothing was written")]
    BaseUrl { url: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The kinds of site `init` can start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Starter {
    /// A daily game's answers, published after each day ends (the demo).
    #[default]
    Answers,
    /// Security advisories: slug ids, each public at its own `publish_at`.
    Advisories,
    /// A blog or newsletter: slug ids from file names, due at the start of their day.
    Posts,
}

impl std::str::FromStr for Starter {
    type Err = String;
    fn from_str(s: &str) -> Result<Starter, String> {
        match s {
            "answers" => Ok(Starter::Answers),
            "advisories" => Ok(Starter::Advisories),
            "posts" => Ok(Starter::Posts),
            other => Err(format!(
                "{other:?} is not a starter: answers, advisories or posts"
            )),
        }
    }
}

const STYLE: (&str, &str) = (
    "static/style.css",
    include_str!("../../../static/style.css"),
);
const GITIGNORE: (&str, &str) = (".gitignore", ".fencepost/\npublic/\n");

/// What the advisories and posts starters share: the base layout, lists, plain pages, 404,
/// taxonomy pages, withdrawn notices, the stylesheet, `.gitignore`.
pub const STARTER_COMMON: &[(&str, &str)] = &[
    (
        "templates/base.html",
        include_str!("../../../starters/common/templates/base.html"),
    ),
    (
        "templates/list.html",
        include_str!("../../../starters/common/templates/list.html"),
    ),
    (
        "templates/page.html",
        include_str!("../../../starters/common/templates/page.html"),
    ),
    (
        "templates/404.html",
        include_str!("../../../starters/common/templates/404.html"),
    ),
    (
        "templates/term.html",
        include_str!("../../../starters/common/templates/term.html"),
    ),
    (
        "templates/terms.html",
        include_str!("../../../starters/common/templates/terms.html"),
    ),
    (
        "templates/withdrawn.html",
        include_str!("../../../starters/common/templates/withdrawn.html"),
    ),
    STYLE,
    GITIGNORE,
];

const ADVISORIES: &[(&str, &str)] = &[
    ("templates/index.html", include_str!("../../../starters/advisories/templates/index.html")),
    ("templates/advisory.html", include_str!("../../../starters/advisories/templates/advisory.html")),
    ("content/about.md", "+++\ntitle = \"About\"\n+++\n\nSecurity advisories for this project. Each one is published at its coordinated\ndisclosure time, to the second, and never before: until then nothing of it is in the\nbuilt site or the bucket.\n\nReport a vulnerability to security@example.org.\n"),
];

pub const POSTS: &[(&str, &str)] = &[
    ("templates/index.html", include_str!("../../../starters/posts/templates/index.html")),
    ("templates/post.html", include_str!("../../../starters/posts/templates/post.html")),
    ("content/about.md", "+++\ntitle = \"About\"\n+++\n\nA post goes out at the start of its day, once, however many machines run\n`fencepost publish`.\n"),
];

const FILES: &[(&str, &str)] = &[
    (
        "templates/base.html",
        include_str!("../../../templates/base.html"),
    ),
    (
        "templates/answer.html",
        include_str!("../../../templates/answer.html"),
    ),
    (
        "templates/index.html",
        include_str!("../../../templates/index.html"),
    ),
    (
        "templates/404.html",
        include_str!("../../../templates/404.html"),
    ),
    (
        "templates/list.html",
        include_str!("../../../templates/list.html"),
    ),
    (
        "templates/page.html",
        include_str!("../../../templates/page.html"),
    ),
    (
        "content/about.md",
        include_str!("../../../content/about.md"),
    ),
    (
        "static/style.css",
        include_str!("../../../static/style.css"),
    ),
    (".gitignore", ".fencepost/\npublic/\n"),
];

fn config_text(title: &str) -> String {
    format!(
        "# fencepost site configuration; every key is optional (see the README).\n\
         title = {title:?}\n\
         base_url = \"http://localhost:8080/\"\n\n\
         [publish]\n\
         # Minutes after the end of an item's day (00:00 UTC) before its answer is published.\n\
         grace_minutes = 10\n\
         lease_secs = 180\n\n\
         [ledger]\n\
         path = \".fencepost/ledger.sqlite\"\n"
    )
}

/// The answers starter's sample, played the day before `now`.
fn sample_item(now: Instant) -> String {
    let yesterday = now
        .to_datetime()
        .date_naive()
        .pred_opt()
        .unwrap_or_default();
    include_str!("../../../starters/answers/sample.md")
        .replace("{yesterday}", &yesterday.to_string())
}

fn sample_advisory(now: Instant) -> String {
    // Due an hour ago: it publishes on the first run.
    let at = Instant(now.0 - 3_600_000 - now.0.rem_euclid(1000)).rfc3339();
    format!(
        "+++\ntitle = \"Path traversal in the upload handler\"\npublish_at = {at}\ncve = \"CVE-2026-00001\"\nseverity = \"high\"\naffected = [\"1.0.0\", \"1.0.1\"]\ncvss = \"7.5\"\n\n[extra]\ncredit = \"A. Researcher\"\n+++\n\nA crafted file name could write outside the upload folder.\n\n**Fix:** upgrade to 1.0.2.\n"
    )
}

fn sample_post(now: Instant) -> String {
    let today = now.to_datetime().date_naive();
    format!(
        "+++\nday = {today}\ntitle = \"Hello, world\"\nsummary = \"Why this newsletter exists.\"\ntags = [\"meta\"]\n+++\n\nThe first post. Write the next one in `content/posts/`, with a `day`: it goes out at\nthe start of that day.\n\n<!-- more -->\n\n## What goes in a post\n\nText before the `<!-- more -->` line is the post's summary in lists and feeds. Code\nblocks with a language are highlighted:\n\n```rust\nfn main() {{\n    println!(\"hello\");\n}}\n```\n"
    )
}

/// Writes a new site into `dir` and returns the files written.
pub fn scaffold(dir: &Path, now: Instant) -> Result<Vec<PathBuf>, InitError> {
    scaffold_starter(dir, now, Starter::Answers)
}

/// Writes a new site of kind `starter` into `dir` and returns the files written.
pub fn scaffold_starter(
    dir: &Path,
    now: Instant,
    starter: Starter,
) -> Result<Vec<PathBuf>, InitError> {
    let setup = Setup {
        starter,
        ..Setup::default()
    };
    scaffold_with(dir, now, &setup)
}

/// What `init` makes besides the starter's files.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub starter: Starter,
    /// An object store's URL: the site's ledger lives in that bucket beside its output, and a
    /// CI workflow publishes, builds and deploys it (see [`ci`]).
    pub ci: Option<String>,
    /// The site's public address (`base_url`); `http://localhost:8080/` when not given.
    pub base_url: Option<String>,
}

/// [`scaffold_starter`] as `setup` says.
pub fn scaffold_with(dir: &Path, now: Instant, setup: &Setup) -> Result<Vec<PathBuf>, InitError> {
    let (starter, ci) = (setup.starter, setup.ci.as_deref());
    if let Some(url) = ci {
        ci::check(url)?;
    }
    let base_url = setup
        .base_url
        .as_deref()
        .map(checked_base_url)
        .transpose()?;
    let config = dir.join(CONFIG_FILE);
    if config.exists() {
        return Err(InitError::Exists {
            path: config,
            dir: dir.to_path_buf(),
        });
    }
    let title = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "fencepost site".into());
    let (fixed, sample, config) = match starter {
        Starter::Answers => (
            &[][..],
            ("content/answers/1.md", sample_item(now)),
            config_text(&title),
        ),
        Starter::Advisories => (
            ADVISORIES,
            ("content/advisories/fp-2026-001.md", sample_advisory(now)),
            include_str!("../../../starters/advisories/fencepost.toml")
                .replace("{title}", &format!("{title:?}")),
        ),
        Starter::Posts => (
            POSTS,
            ("content/posts/hello-world.md", sample_post(now)),
            include_str!("../../../starters/posts/fencepost.toml")
                .replace("{title}", &format!("{title:?}")),
        ),
    };
    // The answers starter is the demo site's own files; the others share the common ones.
    let shared = match starter {
        Starter::Answers => FILES,
        _ => STARTER_COMMON,
    };
    let mut files: Vec<(String, String)> = shared
        .iter()
        .chain(fixed)
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    files.push((sample.0.into(), sample.1));
    if starter != Starter::Answers {
        // The stylesheet of highlighted code blocks (`hl-` classes), light and dark.
        files.push((
            "static/highlight.css".into(),
            crate::markdown::highlight_css(),
        ));
    }
    let config = match ci {
        Some(url) => {
            files.push(ci::workflow(url));
            files.push(ci::preview_workflow(url));
            ci::configure(&config, url)
        }
        None => config,
    };
    let config = match &base_url {
        Some(url) => config.replacen(
            &format!("base_url = {LOCAL_BASE_URL:?}"),
            &format!("base_url = {url:?}"),
            1,
        ),
        None => config,
    };
    let config = with_site_id(&config, &crate::new_site_id());
    // The config goes last: a half-written scaffold is not yet a site, and init can run again.
    files.push((CONFIG_FILE.into(), config));
    write_new(dir, files)
}

/// The `base_url` every starter begins with: right for `serve`, wrong once deployed.
pub const LOCAL_BASE_URL: &str = "http://localhost:8080/";

/// `url` if it can be a site's public address, with the trailing slash a base URL has.
fn checked_base_url(url: &str) -> Result<String, InitError> {
    let ok = url::Url::parse(url).is_ok_and(|u| {
        ["http", "https"].contains(&u.scheme())
            && u.host_str().is_some()
            && u.query().is_none()
            && u.fragment().is_none()
    });
    if !ok {
        return Err(InitError::BaseUrl { url: url.into() });
    }
    Ok(format!("{}/", url.trim_end_matches('/')))
}

/// `config` with `ledger.site_id` set: the site's identity in its ledger, the same in every
/// checkout of its repository (see `Site::check_site`).
fn with_site_id(config: &str, id: &str) -> String {
    let line = format!(
        "# This site's identity in its ledger: a ledger refuses every other site's commands.\nsite_id = {id:?}\n"
    );
    match config.find("[ledger]\n") {
        Some(at) => {
            let after = at + "[ledger]\n".len();
            format!("{}{line}{}", &config[..after], &config[after..])
        }
        None => format!("{config}\n[ledger]\n{line}"),
    }
}

/// Writes each file that does not exist yet, in order; returns the paths written.
fn write_new(dir: &Path, files: Vec<(String, String)>) -> Result<Vec<PathBuf>, InitError> {
    let mut written = Vec::new();
    for (rel, text) in files {
        let path = dir.join(&rel);
        if path.exists() {
            continue;
        }
        let write = || -> std::io::Result<()> {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, &text)
        };
        write().map_err(|source| InitError::Write {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}
