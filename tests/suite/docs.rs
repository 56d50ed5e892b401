//! Docs that cannot rot (issue 24): every subcommand and flag `--help` shows, every
//! `fencepost.toml` key the config accepts (asked of the binary itself: the keys its parser
//! lists when it refuses an unknown one) and every fail point in `src/` and `crates/` appear in `docs/`;
//! every relative link in the README, CONTRIBUTING, BENCHMARKS and `docs/` resolves.

use crate::common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file of the documentation: README, CONTRIBUTING, BENCHMARKS, docs/*.md.
fn doc_files() -> Vec<PathBuf> {
    let mut files = vec![
        repo().join("README.md"),
        repo().join("CONTRIBUTING.md"),
        repo().join("BENCHMARKS.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The text of `docs/` (the reference: what a reader looks things up in).
fn docs_text() -> String {
    doc_files()
        .iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("docs")))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

fn help(args: &[&str]) -> String {
    let out = fencepost().args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists (its "Commands:" section, without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags a help text lists.
fn flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Options:"))
        .filter_map(|l| {
            let at = l.find("--")?;
            let flag: String = l[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (flag.len() > 2 && l[..at].trim().trim_end_matches(',').len() <= 2).then_some(flag)
        })
        .filter(|f| f != "--help" && f != "--version")
        .collect()
}

#[test]
fn every_subcommand_and_flag_the_help_shows_is_in_the_docs() {
    let docs = docs_text();
    let mut missing = Vec::new();
    let top = help(&[]);
    for f in flags(&top) {
        if !docs.contains(&f) {
            missing.push(format!("fencepost {f}"));
        }
    }
    for sub in subcommands(&top) {
        if !docs.contains(&format!("fencepost {sub}")) {
            missing.push(format!("the subcommand fencepost {sub}"));
        }
        let h = help(&[sub.as_str()]);
        let nested = subcommands(&h);
        let mut texts = vec![(vec![sub.clone()], h)];
        for n in nested {
            if !docs.contains(&format!("fencepost {sub} {n}")) {
                missing.push(format!("the subcommand fencepost {sub} {n}"));
            }
            texts.push((
                vec![sub.clone(), n.clone()],
                help(&[sub.as_str(), n.as_str()]),
            ));
        }
        for (path, text) in texts {
            for f in flags(&text) {
                if !docs.contains(&f) {
                    missing.push(format!("fencepost {} {f}", path.join(" ")));
                }
            }
        }
    }
    assert!(missing.is_empty(), "not in docs/: {missing:#?}");
}

/// The keys the config parser lists when a table of `fencepost.toml` holds an unknown key.
fn accepted_keys(s: &TestSite, toml: &str) -> Vec<String> {
    s.write("fencepost.toml", toml);
    let out = s.cmd(&["status"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let Some(list) = err.split("expected one of ").nth(1) else {
        return Vec::new();
    };
    list.lines()
        .next()
        .unwrap()
        .split(", ")
        .map(|k| k.trim().trim_matches('`').to_string())
        .collect()
}

#[test]
fn every_config_key_the_parser_accepts_is_in_the_docs() {
    let s = TestSite::new();
    let base = std::fs::read_to_string(s.path("fencepost.toml")).unwrap();
    let top = accepted_keys(&s, &format!("zz_unknown = 1\n{base}"));
    assert!(top.contains(&"title".to_string()), "{top:?}");
    let mut keys: Vec<String> = top.clone();
    for table in &top {
        let inner = accepted_keys(&s, &format!("{base}\n[{table}]\nzz_unknown = 1\n"));
        keys.extend(inner.into_iter().map(|k| format!("{table}.{k}")));
    }
    let collection = accepted_keys(&s, &format!("{base}\n[collections.x]\nzz_unknown = 1\n"));
    assert!(collection.contains(&"url".to_string()), "{collection:?}");
    keys.extend(collection.iter().map(|k| format!("collections.<name>.{k}")));
    let field = accepted_keys(
        &s,
        &format!("{base}\n[collections.x]\nurl = \"/x/{{id}}/\"\n[collections.x.fields]\nf = {{ type = \"string\", zz_unknown = 1 }}\n"),
    );
    assert!(field.contains(&"type".to_string()), "{field:?}");
    keys.extend(
        field
            .iter()
            .map(|k| format!("collections.<name>.fields.<field>.{k}")),
    );
    let taxonomy = accepted_keys(&s, &format!("{base}\n[taxonomies.x]\nzz_unknown = 1\n"));
    assert!(taxonomy.contains(&"url".to_string()), "{taxonomy:?}");
    keys.extend(taxonomy.iter().map(|k| format!("taxonomies.<name>.{k}")));
    let docs = docs_text();
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| {
            let leaf = k.rsplit('.').next().unwrap();
            // Named in code style (`serve.pointer_ttl_ms`, `pointer_ttl_ms`), set in an
            // example (`list_url = …`, `{ type = … }`), or a table's header (`[markdown]`).
            !docs.contains(&format!("`{k}`"))
                && !docs.contains(&format!("`{leaf}`"))
                && !docs.contains(&format!("`{leaf} ="))
                && !docs.contains(&format!(".{leaf}`"))
                && !docs.contains(&format!("\n{leaf} ="))
                && !docs.contains(&format!(" {leaf} ="))
                && !docs.contains(&format!("[{k}]"))
                && !docs.contains(&format!("[{k}."))
                && !docs.contains(&format!("`{k}."))
                && !docs.contains(&format!(".{leaf}]"))
        })
        .collect();
    assert!(keys.len() > 60, "only {} keys found: {keys:?}", keys.len());
    assert!(missing.is_empty(), "config keys not in docs/: {missing:#?}");
}

/// Every `fail_point!("name")` in `src/` and `crates/`.
fn fail_points() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![repo().join("src"), repo().join("crates")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for part in text.split("fail_point!(\"").skip(1) {
                    if let Some(end) = part.find('"') {
                        names.insert(part[..end].to_string());
                    }
                }
            }
        }
    }
    names
}

#[test]
fn every_fail_point_is_in_the_docs() {
    let names = fail_points();
    assert!(names.len() > 20, "{names:?}");
    let docs = std::fs::read_to_string(repo().join("docs/failpoints.md")).unwrap();
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !docs.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "fail points not in docs/failpoints.md: {missing:?}"
    );
}

/// `[label](target)` links in Markdown outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.starts_with('#') {
                continue;
            }
            let path = target.split('#').next().unwrap();
            let resolved: PathBuf = file.parent().unwrap_or(Path::new(".")).join(path);
            checked += 1;
            if !resolved.exists() {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(checked >= 10, "only {checked} relative links");
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}

/// The fenced ```yaml blocks of a Markdown text, in order.
/// The workflow `file` that `init --ci s3://bucket/site` writes.
fn init_ci_workflow(file: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let out = fencepost()
        .args(["init", "--json", "--ci", "s3://bucket/site"])
        .arg(&site)
        .output()
        .unwrap();
    assert_success(&out);
    std::fs::read_to_string(site.join(".github/workflows").join(file)).unwrap()
}

fn yaml_blocks(text: &str) -> Vec<String> {
    text.split("```yaml\n")
        .skip(1)
        .map(|b| b.split("\n```").next().unwrap().to_string() + "\n")
        .collect()
}

/// docs/production.md's workflows are the ones `init --ci` writes: the bucket one exactly
/// (for `s3://bucket/site`), the PostgreSQL one with the same install and binary cache; one
/// source, so the docs cannot teach a workflow that no longer runs.
#[test]
fn the_production_workflows_are_the_ones_init_ci_writes() {
    let written = init_ci_workflow("publish.yml");
    let blocks = yaml_blocks(&std::fs::read_to_string(repo().join("docs/production.md")).unwrap());
    let bucket = blocks
        .iter()
        .find(|b| b.contains("restore the ledger's cache"))
        .expect("docs/production.md shows the workflow init --ci writes");
    assert_eq!(
        bucket, &written,
        "docs/production.md's bucket workflow is not init --ci's"
    );

    let load = |t: &str| yaml_rust2::YamlLoader::load_from_str(t).unwrap().remove(0);
    let ours = load(&written);
    let pg = blocks
        .iter()
        .find(|b| b.contains("FENCEPOST_LEDGER"))
        .expect("docs/production.md shows a PostgreSQL workflow");
    let theirs = load(pg);
    assert_eq!(theirs["env"], ours["env"], "FENCEPOST_VERSION differs");
    let steps = |y: &yaml_rust2::Yaml| y["jobs"]["publish"]["steps"].as_vec().unwrap().clone();
    assert_eq!(
        theirs["jobs"]["publish"]["if"], ours["jobs"]["publish"]["if"],
        "the default branch's condition differs"
    );
    let (ours, theirs) = (steps(&ours), steps(&theirs));
    // All but the ledger's cache (a PostgreSQL ledger keeps none) and the publishing step.
    let shared: Vec<_> = (ours.iter())
        .filter(|s| !s["name"].as_str().unwrap_or_default().contains("ledger"))
        .cloned()
        .collect();
    assert_eq!(theirs[..theirs.len() - 1], shared[..shared.len() - 1]);
    // The publishing step of both deploys after a publish that held something back.
    let run = |steps: &[yaml_rust2::Yaml]| {
        let last = steps.iter().rev().find(|s| s["run"].as_str().is_some());
        last.unwrap()["run"].as_str().unwrap().to_string()
    };
    for text in [run(&ours), run(&theirs)] {
        assert!(
            text.contains("-ne 3") && text.contains("fencepost deploy --json"),
            "{text}"
        );
    }
}

/// The repository's address is Cargo.toml's `repository`, and nothing a user reads or runs
/// names another one or a placeholder (`OWNER`).
#[test]
fn the_repository_address_is_cargo_tomls_everywhere() {
    let repository = env!("CARGO_PKG_REPOSITORY");
    assert!(!repository.is_empty(), "Cargo.toml names no repository");
    let mut files = doc_files();
    for dir in ["starters", "scripts", ".github"] {
        files.extend(
            walkdir::WalkDir::new(repo().join(dir))
                .into_iter()
                .flatten()
                .filter(|e| e.file_type().is_file())
                .map(|e| e.into_path()),
        );
    }
    let mut wrong = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (at, _) in text.match_indices("github.com/") {
            let url: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || "/._-".contains(*c))
                .collect();
            let path: Vec<&str> = url.split('/').collect();
            if path.len() > 2 && (path[2] == "fencepost" || path[1] == "OWNER") {
                let named = format!("https://{}", path[..3].join("/"));
                if named != repository {
                    wrong.push(format!("{}: {url}", f.display()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "not {repository}: {wrong:#?}");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains(&format!(
        "{repository}/releases/latest/download/fencepost-installer.sh"
    )));
}

/// docs/previews.md shows the pull-request workflow `init --ci` writes, exactly (for
/// `s3://bucket/site`): one source, so the docs cannot teach a workflow that no longer runs.
#[test]
fn the_preview_workflow_in_the_docs_is_the_one_init_ci_writes() {
    let written = init_ci_workflow("preview.yml");
    let blocks = yaml_blocks(&std::fs::read_to_string(repo().join("docs/previews.md")).unwrap());
    assert!(
        blocks.contains(&written),
        "docs/previews.md's workflow is not the one init --ci writes"
    );
}
