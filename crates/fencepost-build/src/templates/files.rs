//! The functions and filters Zola gives its templates beyond Tera's own, for every site's
//! templates (a Zola theme's run as they are; fencepost's own may use them too):
//! `load_data`, `get_hash` (and its older name `get_file_hash`), and the filters
//! `base64_encode`, `base64_decode`, `regex_replace` and `num_format`.
//!
//! **What they may reach.** `load_data`, `get_hash` and `get_image_metadata` read files of
//! the site's `data/` and `static/` folders — a path naming one from the site's root
//! (`data/authors.json`), else looked up under `static/`, then `data/`, as Zola looks a path
//! up in its folders — and of `content/` only the bundle files of the revision's public
//! pages, while they have the bytes the ledger recorded (a page's own images, which Zola
//! themes read for their size): never an item's text, never an embargoed page's file or one
//! edited since it was published (each is as if it were not there), never a file outside
//! those once links are resolved (a theme's author reaching for `../.tlog-skey`,
//! `/home/runner/.aws/credentials`), never a URL (a build fetches nothing:
//! `load_data(url=…)` is refused). At most [`MAX_DATA_BYTES`] a file. A page
//! whose call is refused is held, named, alone. The files the templates can read are in the
//! render fingerprint whenever a template calls one of these (`fingerprint::compute`), so a
//! change to a data file re-renders what may show it.
//!
//! `get_image_metadata(path, allow_missing=false)` reads an image the same way and answers
//! `width`, `height`, `format` and `mime` as Zola does (`imagesize` reads the header: PNG,
//! JPEG, GIF, WebP, AVIF, BMP, …; an SVG's `width`/`height`, else its `viewBox`).
//! `trans(key, lang)` answers from each language's strings (`trans.rs`). Zola's
//! `resize_image` is `images.rs`'.

use base64::Engine;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The largest file `load_data` or `get_hash` reads.
pub const MAX_DATA_BYTES: u64 = 16 << 20;

/// The folders they read from (a path not naming one is looked up in `i18n/`, `static/`,
/// then `data/`): `i18n/` holds a Zola theme's strings (Tabi's `i18n/en.toml`).
pub const FOLDERS: [&str; 3] = ["data", "static", "i18n"];

/// The function names that read the site's files (what `fingerprint::compute` looks for).
pub const READERS: [&str; 5] = [
    "load_data(",
    "get_hash(",
    "get_file_hash(",
    "get_image_metadata(",
    "resize_image(",
];

type Args = HashMap<String, Value>;

fn err(msg: String) -> tera::Error {
    tera::Error::msg(msg)
}

fn arg<'a>(a: &'a Args, name: &str) -> Option<&'a str> {
    a.get(name).and_then(Value::as_str)
}

/// Registers them on `tera`, reading under the site at `root`.
pub(crate) fn register(
    tera: &mut tera::Tera,
    root: &Path,
    strings: super::trans::Strings,
    public: PublicContent,
) {
    let mut files = SiteFiles::new(root, public);
    files.lang_prefixes = strings.prefixes();
    let f = files.clone();
    tera.register_function("load_data", move |a: &Args| load_data(&f, a));
    let f = files.clone();
    tera.register_function("get_hash", move |a: &Args| get_hash(&f, a, "get_hash"));
    let f = files.clone();
    tera.register_function("get_file_hash", move |a: &Args| {
        get_hash(&f, a, "get_file_hash")
    });
    let f = files.clone();
    tera.register_function("get_image_metadata", move |a: &Args| {
        get_image_metadata(&f, a)
    });
    tera.register_function("trans", move |a: &Args| strings.trans(a));
    tera.register_filter("base64_encode", |v: &Value, _: &Args| {
        let s = v
            .as_str()
            .ok_or_else(|| err("base64_encode: a string is needed".into()))?;
        Ok(json!(base64::engine::general_purpose::STANDARD.encode(s)))
    });
    tera.register_filter("base64_decode", |v: &Value, _: &Args| {
        let s = v
            .as_str()
            .ok_or_else(|| err("base64_decode: a string is needed".into()))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(s.trim())
            .map_err(|e| err(format!("base64_decode: {e}")))?;
        Ok(json!(String::from_utf8_lossy(&bytes)))
    });
    tera.register_filter("regex_replace", regex_replace);
    tera.register_filter("num_format", num_format);
}

/// `regex_replace(pattern, rep)`: every match replaced (`$1` for a group), as Zola does.
fn regex_replace(v: &Value, a: &Args) -> tera::Result<Value> {
    let s = v
        .as_str()
        .ok_or_else(|| err("regex_replace: a string is needed".into()))?;
    let (Some(pattern), Some(rep)) = (arg(a, "pattern"), arg(a, "rep")) else {
        return Err(err("regex_replace needs pattern=\"…\" and rep=\"…\"".into()));
    };
    let re = regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| err(format!("regex_replace: {e}")))?;
    Ok(json!(re.replace_all(s, rep)))
}

/// `num_format(locale="en")`: a number with the locale's digit grouping (`1,234,567`).
fn num_format(v: &Value, a: &Args) -> tera::Result<Value> {
    use num_format::{Locale, ToFormattedString};
    let n = v
        .as_i64()
        .ok_or_else(|| err("num_format: an integer is needed".into()))?;
    let name = arg(a, "locale").unwrap_or("en");
    let locale =
        Locale::from_name(name).map_err(|_| err(format!("num_format: no locale {name:?}")))?;
    Ok(json!(n.to_formatted_string(&locale)))
}

/// The files of public pages' bundles, by path under `content/` (`blog/a/img/x.png`), with
/// the sha256 the ledger recorded for each: what the functions may read of `content/`.
pub(crate) type PublicContent = std::sync::Arc<HashMap<String, String>>;

/// The bundle files of `pages` (the public pages of the revision being built), as
/// [`PublicContent`].
pub(crate) fn public_content(pages: &[crate::page::PageInput]) -> PublicContent {
    let mut out = HashMap::new();
    for p in pages
        .iter()
        .filter(|p| p.view.data.contains("\"resources\""))
    {
        for r in fencepost_site::content::bundle::recorded(&p.view.data) {
            if let Some(rel) = r.path.strip_prefix("content/") {
                out.insert(rel.to_string(), r.sha256);
            }
        }
    }
    std::sync::Arc::new(out)
}

/// Where the functions may read: `data/` and `static/`, resolved, and of `content/` the
/// bundle files of public pages with the bytes the ledger recorded.
#[derive(Clone)]
struct SiteFiles {
    folders: Vec<PathBuf>,
    content: PathBuf,
    public: PublicContent,
    /// The URL prefixes of the languages besides the default (`ca`), without slashes.
    lang_prefixes: Vec<String>,
}

impl SiteFiles {
    fn new(root: &Path, public: PublicContent) -> SiteFiles {
        // One entry per folder of FOLDERS, in order (a missing folder is a path nothing is in).
        let folders = FOLDERS
            .iter()
            .map(|d| std::fs::canonicalize(root.join(d)).unwrap_or_else(|_| root.join(d)))
            .collect();
        SiteFiles {
            folders,
            content: root.join("content"),
            public,
            lang_prefixes: Vec::new(),
        }
    }

    /// A public bundle file's bytes (`rel` under `content/`), only while the file has the
    /// bytes the ledger recorded: an embargoed item's file, or one edited since it was
    /// published, is as if it were not there — nothing tells them apart.
    fn public_file(&self, rel: &str) -> Option<Vec<u8>> {
        use sha2::Digest;
        let sha = self.public.get(rel)?;
        let bytes = std::fs::read(self.content.join(rel)).ok()?;
        (hex::encode(sha2::Sha256::digest(&bytes)) == *sha).then_some(bytes)
    }

    /// The bytes of `path`, looked up as Zola looks it up, within the two folders: from the
    /// site's root when it names one of them (`data/authors.json`, `static/x.txt`), else under
    /// `static/`, then `data/`. `None` when none has it; an error for a path that would leave
    /// them or a file too big.
    fn read(&self, f: &str, path: &str) -> tera::Result<Option<Vec<u8>>> {
        let rel = path.trim_start_matches('/');
        if rel.split('/').any(|c| c == "..") || rel.starts_with("@/") {
            return Err(err(format!(
                "{f}: {path:?} leaves data/, static/ and the public pages' files"
            )));
        }
        if let Some(inner) = rel.strip_prefix("content/") {
            return Ok(self.public_file(inner));
        }
        let mut candidates = Vec::new();
        for (name, folder) in FOLDERS.iter().zip(&self.folders) {
            if let Some(inner) = rel.strip_prefix(&format!("{name}/")) {
                candidates.push((folder, folder.join(inner)));
            }
        }
        candidates.extend(self.folders.iter().rev().map(|d| (d, d.join(rel))));
        for (folder, candidate) in candidates {
            let Ok(real) = std::fs::canonicalize(candidate) else {
                continue;
            };
            if !real.starts_with(folder) {
                return Err(err(format!(
                    "{f}: {path:?} leads outside data/ and static/"
                )));
            }
            let meta = std::fs::metadata(&real).map_err(|e| err(format!("{f}: {path}: {e}")))?;
            if !meta.is_file() {
                continue;
            }
            if meta.len() > MAX_DATA_BYTES {
                return Err(err(format!(
                    "{f}: {path} is {} bytes, more than a template reads ({MAX_DATA_BYTES})",
                    meta.len()
                )));
            }
            return std::fs::read(&real)
                .map(Some)
                .map_err(|e| err(format!("{f}: {path}: {e}")));
        }
        // Zola looks a path up under content/ too (a page's own images): a public one.
        Ok(self.public_file(rel))
    }
}

/// `get_hash(path=… | literal=…, sha_type=384, base64=true)`, as Zola computes it.
fn get_hash(files: &SiteFiles, a: &Args, f: &str) -> tera::Result<Value> {
    use sha2::Digest;
    let bytes = match (arg(a, "path"), arg(a, "literal")) {
        (Some(p), None) => files
            .read(f, p)?
            .ok_or_else(|| err(format!("{f}: no file {p:?} in data/ or static/")))?,
        (None, Some(l)) => l.as_bytes().to_vec(),
        _ => return Err(err(format!("{f} needs path=\"…\" or literal=\"…\""))),
    };
    let sha = a.get("sha_type").and_then(Value::as_u64).unwrap_or(384);
    let digest: Vec<u8> = match sha {
        256 => sha2::Sha256::digest(&bytes).to_vec(),
        384 => sha2::Sha384::digest(&bytes).to_vec(),
        512 => sha2::Sha512::digest(&bytes).to_vec(),
        n => return Err(err(format!("{f}: sha_type is 256, 384 or 512, not {n}"))),
    };
    let base64 = a.get("base64").and_then(Value::as_bool).unwrap_or(true);
    Ok(json!(match base64 {
        true => base64::engine::general_purpose::STANDARD.encode(digest),
        false => hex::encode(digest),
    }))
}

/// `load_data(path=… | literal=…, format=…, required=true)`: a data file as Zola reads it.
fn load_data(files: &SiteFiles, a: &Args) -> tera::Result<Value> {
    if a.contains_key("url") {
        return Err(err(
            "load_data(url=…): a build fetches nothing from the network; put the file in data/"
                .into(),
        ));
    }
    let (text, name) = match (arg(a, "path"), arg(a, "literal")) {
        (Some(p), None) => match files.read("load_data", p)? {
            Some(b) => (String::from_utf8_lossy(&b).into_owned(), p.to_string()),
            None if a.get("required").and_then(Value::as_bool) == Some(false) => {
                return Ok(Value::Null)
            }
            None => return Err(err(format!("load_data: no file {p:?} in data/ or static/"))),
        },
        (None, Some(l)) => (l.to_string(), String::new()),
        _ => return Err(err("load_data needs path=\"…\" or literal=\"…\"".into())),
    };
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    let format = arg(a, "format")
        .map(str::to_ascii_lowercase)
        .or(ext)
        .unwrap_or("plain".into());
    parse(&text, &format).map_err(|why| err(format!("load_data {name}: {why}")))
}

/// `text` read as `format`, the way Zola hands each to a template.
fn parse(text: &str, format: &str) -> Result<Value, String> {
    match format {
        "json" => serde_json::from_str(text).map_err(|e| e.to_string()),
        "toml" => toml::from_str::<toml::Value>(text)
            .map_err(|e| e.to_string())
            .and_then(|v| serde_json::to_value(v).map_err(|e| e.to_string())),
        "yaml" | "yml" => match fencepost_site::content::yaml::to_value(text) {
            Ok(v) => serde_json::to_value(v).map_err(|e| e.to_string()),
            Err(e) => Err(format!("line {}: {}", e.line, e.message)),
        },
        "csv" => csv_value(text),
        "bibtex" | "bib" => bibtex_value(text),
        "plain" | "txt" | "md" | "html" | "xml" | "svg" => Ok(json!(text)),
        other => Err(format!(
            "format {other:?} is not read here (json, toml, yaml, csv, bibtex, plain)"
        )),
    }
}

/// A BibTeX file as Zola gives it (`nom-bibtex`, Zola's own reader): `preambles`, `comments`,
/// `variables`, and `bibliographies`, each `{entry_type, citation_key, tags}` (tag names in
/// lower case).
fn bibtex_value(text: &str) -> Result<Value, String> {
    let b = nom_bibtex::Bibtex::parse(text).map_err(|e| format!("{e:?}"))?;
    let strings = |v: &[String]| v.iter().map(|s| json!(s)).collect::<Vec<_>>();
    let variables: serde_json::Map<String, Value> = (b.variables().iter())
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let bibliographies: Vec<Value> = (b.bibliographies().iter())
        .map(|e| {
            let tags: serde_json::Map<String, Value> = (e.tags().iter())
                .map(|(k, v)| (k.to_lowercase(), json!(v)))
                .collect();
            json!({ "entry_type": e.entry_type(), "citation_key": e.citation_key(), "tags": tags })
        })
        .collect();
    Ok(json!({
        "preambles": strings(b.preambles()),
        "comments": strings(b.comments()),
        "variables": variables,
        "bibliographies": bibliographies,
    }))
}

/// A CSV file as Zola gives it: `{"headers": [...], "records": [[...], ...]}`.
fn csv_value(text: &str) -> Result<Value, String> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let headers: Vec<String> = r
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let mut records = Vec::new();
    for row in r.records() {
        let row = row.map_err(|e| e.to_string())?;
        records.push(row.iter().map(str::to_string).collect::<Vec<_>>());
    }
    Ok(json!({ "headers": headers, "records": records }))
}

/// `get_image_metadata(path=…, allow_missing=false)`: an image's size and format.
fn get_image_metadata(files: &SiteFiles, a: &Args) -> tera::Result<Value> {
    let f = "get_image_metadata";
    let path = arg(a, "path").ok_or_else(|| err(format!("{f} needs path=\"…\"")))?;
    // A path under another language's prefix (`ca/blog/card.jpg`) is the file its page's
    // original has (Zola writes a section's files into every language's folder).
    let bare = path.trim_start_matches('/');
    let unprefixed = (files.lang_prefixes.iter())
        .find_map(|p| bare.strip_prefix(p.as_str())?.strip_prefix('/'))
        .map(|rest| rest.trim_start_matches('/'));
    let found = match files.read(f, path)? {
        Some(b) => Some(b),
        None => match unprefixed {
            Some(rest) => files.read(f, rest)?,
            None => None,
        },
    };
    let Some(bytes) = found else {
        return match a.get("allow_missing").and_then(Value::as_bool) == Some(true) {
            true => Ok(Value::Null),
            false => Err(err(format!(
                "{f}: no image {path:?} in static/, data/ or a public page's files"
            ))),
        };
    };
    fencepost_site::image_size::metadata(&bytes, path).map_err(|e| err(format!("{f}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_files_read_as_zola_reads_them() {
        assert_eq!(parse("{\"a\": 1}", "json").unwrap(), json!({"a": 1}));
        assert_eq!(parse("a = 1", "toml").unwrap(), json!({"a": 1}));
        assert_eq!(parse("- x\n- y\n", "yaml").unwrap(), json!(["x", "y"]));
        assert_eq!(
            parse("name,n\nA,1\nB,2\n", "csv").unwrap(),
            json!({"headers": ["name", "n"], "records": [["A", "1"], ["B", "2"]]})
        );
        let bib = parse("@book{k1,\n  Title = {T},\n}\n", "bibtex").unwrap();
        assert_eq!(bib["bibliographies"][0]["citation_key"], "k1");
        assert_eq!(bib["bibliographies"][0]["tags"]["title"], "T");
        assert!(parse("x", "xlsx").is_err());
    }

    #[test]
    fn nothing_outside_data_and_static_is_read() {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["data", "static", "content"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        std::fs::write(tmp.path().join("data/a.json"), "{}").unwrap();
        std::fs::write(tmp.path().join("content/secret.md"), "secret").unwrap();
        std::fs::write(tmp.path().join(".tlog-skey"), "PRIVATE").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join(".tlog-skey"), tmp.path().join("data/k"))
            .unwrap();
        let f = SiteFiles::new(tmp.path(), Default::default());
        assert!(f.read("t", "a.json").unwrap().is_some());
        assert!(f.read("t", "data/a.json").unwrap().is_some());
        // Of content/, only a public page's bundle file, with the bytes the ledger recorded.
        assert!(f.read("t", "content/secret.md").unwrap().is_none());
        let sha = fencepost_core::digest::sha256_hex(b"secret");
        let public: PublicContent =
            std::sync::Arc::new(HashMap::from([("secret.md".to_string(), sha)]));
        let p = SiteFiles::new(tmp.path(), public);
        assert_eq!(
            p.read("t", "content/secret.md").unwrap().as_deref(),
            Some(&b"secret"[..])
        );
        std::fs::write(tmp.path().join("content/secret.md"), "edited").unwrap();
        assert!(p.read("t", "content/secret.md").unwrap().is_none());
        assert!(f.read("t", "../content/secret.md").is_err());
        assert!(f.read("t", "@/secret.md").is_err());
        assert!(f.read("t", "../.tlog-skey").is_err());
        #[cfg(unix)]
        assert!(f.read("t", "k").is_err());
    }
}
