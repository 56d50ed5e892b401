//! What a template may reach, and how far it may go. The adversary is a template's author — a
//! theme `import zola` copied, a contributor's pull request — rendering on a CI runner whose
//! environment holds the log's signing key, the D1 token, cloud credentials and database
//! passwords, and whose build must finish whatever a template does.
//!
//! Every function a template can call, and what it reaches (docs/content.md, "What a
//! template may call", keeps the same list):
//! - `get_env(name, default)`: only variables `[security] getenv` allows (none by default,
//!   as Hugo's `security.funcs.getenv`), never a credential's ([`never_readable`]); a name not
//!   allowed gives `default` when one is given, else fails the page (held, named).
//! - `range(start, end, step_by)`: at most `build.max_range` numbers.
//! - `now()`, `get_random()`, `throw()`: tera's own; they read the clock, a random number, and
//!   nothing else.
//! - `asset_url(path)`: a URL of a file under `static/`; Zola mode's `get_url`, `get_page`,
//!   `get_section`, `get_taxonomy`, `get_taxonomy_url`: the public pages of the revision being
//!   built, nothing else.
//! - `load_data`, `get_hash`, `get_file_hash` (Zola's): files of `data/` and `static/` only,
//!   never `content/` or a URL (`templates/files.rs`). Nothing reads a file outside the site's
//!   templates, `data/` and `static/`, a URL, or the network.
//!
//! How far: `build.max_template_depth` frames (macro calls, includes, for loops; a macro that
//! calls itself used to overflow the stack and abort the process), and `build.max_page_bytes`
//! of output per file ([`Bounded`]). Each failure holds the page it happens in, naming the
//! template and the limit.

use fencepost_config::{never_readable, BuildConfig, SecurityConfig};
use std::collections::HashMap;
use std::sync::Arc;
use tera::{Function, Value};

/// Puts `tera` under the site's rules: the frame limit, `get_env` and `range` bounded.
pub fn secure(tera: &mut tera::Tera, security: &SecurityConfig, build: &BuildConfig) {
    tera.max_depth = build.max_template_depth;
    let allow: Vec<regex::Regex> = (security.getenv.iter())
        .filter_map(|p| regex::Regex::new(p).ok())
        .collect();
    tera.register_function("get_env", GetEnv(Arc::new(allow)));
    tera.register_function("range", Range(build.max_range));
}

/// A tera error with its causes, in one line: tera puts the useful part (line, column, what
/// was expected) in the sources. Page templates and shortcodes report with it.
pub fn chain(e: &tera::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        src = s.source();
    }
    msg
}

/// Whether `get_env` may read `name` under `allow`.
fn readable(allow: &[regex::Regex], name: &str) -> bool {
    !never_readable(name) && allow.iter().any(|r| r.is_match(name))
}

/// The values of the variables templates may read: part of the render fingerprint, so a
/// change of one re-renders what may show it.
pub fn readable_values(security: &SecurityConfig) -> Vec<(String, String)> {
    let allow: Vec<regex::Regex> = (security.getenv.iter())
        .filter_map(|p| regex::Regex::new(p).ok())
        .collect();
    if allow.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| readable(&allow, k))
        .collect();
    out.sort();
    out
}

struct GetEnv(Arc<Vec<regex::Regex>>);

impl Function for GetEnv {
    fn call(&self, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let name = args
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| tera::Error::msg("get_env needs name=\"VARIABLE\""))?;
        if readable(&self.0, name) {
            if let Ok(v) = std::env::var(name) {
                return Ok(Value::String(v));
            }
        } else if let Some(default) = args.get("default") {
            tracing::debug!(
                variable = name,
                "get_env: not readable by templates; its default given"
            );
            return Ok(default.clone());
        } else {
            let why = match never_readable(name) {
                true => "a credential's name, never readable by templates",
                false => "not allowed by [security] getenv in fencepost.toml (none is, by default)",
            };
            return Err(tera::Error::msg(format!("get_env(name={name:?}): {why}")));
        }
        match args.get("default") {
            Some(default) => Ok(default.clone()),
            None => Err(tera::Error::msg(format!(
                "get_env(name={name:?}): the variable is not set"
            ))),
        }
    }
}

/// tera's `range`, at most `max` numbers long.
struct Range(usize);

impl Function for Range {
    fn call(&self, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let int = |k: &str, default: i64| -> tera::Result<i64> {
            match args.get(k) {
                None => Ok(default),
                Some(v) => v
                    .as_i64()
                    .ok_or_else(|| tera::Error::msg(format!("range: {k} must be an integer"))),
            }
        };
        let end = match args.get("end") {
            Some(_) => int("end", 0)?,
            None => return Err(tera::Error::msg("range needs end=N")),
        };
        let (start, step) = (int("start", 0)?, int("step_by", 1)?);
        if step <= 0 {
            return Err(tera::Error::msg("range: step_by must be at least 1"));
        }
        let len = if end > start {
            ((end - start - 1) / step + 1) as u64
        } else {
            0
        };
        if len > self.0 as u64 {
            return Err(tera::Error::msg(format!(
                "range of {len} numbers: more than build.max_range ({}) allows",
                self.0
            )));
        }
        let nums: Vec<Value> = (0..len as i64)
            .map(|i| Value::from(start + i * step))
            .collect();
        Ok(Value::Array(nums))
    }

    fn is_safe(&self) -> bool {
        true
    }
}

/// A page's output, refused past `max` bytes: tera stops at the write that crosses it.
pub struct Bounded {
    pub bytes: Vec<u8>,
    max: u64,
    /// Whether the limit stopped the render.
    pub over: bool,
}

impl Bounded {
    pub fn new(max: u64) -> Bounded {
        Bounded {
            bytes: Vec::with_capacity(2048),
            max,
            over: false,
        }
    }
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if (self.bytes.len() + buf.len()) as u64 > self.max {
            self.over = true;
            return Err(std::io::Error::other("the page's output limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_never_readable_whatever_the_patterns_say() {
        let all = vec![regex::Regex::new(".*").unwrap()];
        for name in [
            "FENCEPOST_TLOG_SKEY",
            "FENCEPOST_D1_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "GITHUB_TOKEN",
            "MY_API_KEY",
            "deploy_password",
        ] {
            assert!(!readable(&all, name), "{name}");
        }
        assert!(readable(&all, "SITE_BRANCH"));
        assert!(!readable(&[], "SITE_BRANCH"), "nothing by default");
    }

    #[test]
    fn range_is_tera_s_within_the_bound() {
        let r = Range(5);
        let call = |pairs: &[(&str, i64)]| {
            let args: HashMap<String, Value> = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), Value::from(*v)))
                .collect();
            r.call(&args)
        };
        assert_eq!(call(&[("end", 3)]).unwrap(), serde_json::json!([0, 1, 2]));
        assert_eq!(
            call(&[("start", 2), ("end", 9), ("step_by", 3)]).unwrap(),
            serde_json::json!([2, 5, 8])
        );
        assert_eq!(
            call(&[("start", 5), ("end", 1)]).unwrap(),
            serde_json::json!([])
        );
        assert!(call(&[("end", 6)]).is_err());
        assert!(call(&[("end", 400_000_000)]).is_err());
    }
}
