//! The house rules `CONTRIBUTING.md` states that Cargo cannot check, checked so they hold: no
//! file in `src/`, `crates/` or `tests/` over 600 lines, no function over 80 (from `fn` to its closing brace), so every
//! driver and every test reads as a list of named steps. Files are parsed with `syn`, so strings, comments and macros cannot
//! fool the count.

use std::path::{Path, PathBuf};
use syn::visit::Visit;

mod floors;

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The Rust files of the binary's package (`src/`) and of every crate (`crates/*/src/`).
fn sources() -> Vec<(String, String)> {
    let mut files = read_under("src");
    files.extend(read_under("crates"));
    assert!(files.len() > 150, "src/ and crates/ hold the house's files");
    files
}

/// Every Rust file under `dir` (relative to the crate): its path and text.
fn read_under(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join(dir), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The functions of `files` over [`MAX_FN_LINES`], and how many functions there are.
fn long_functions(files: Vec<(String, String)>) -> (Vec<String>, usize) {
    let mut long = Vec::new();
    let mut counted = 0;
    for (path, text) in files {
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut fns = Functions { found: Vec::new() };
        fns.visit_file(&file);
        counted += fns.found.len();
        for (name, line, n) in fns.found {
            if n > MAX_FN_LINES {
                long.push(format!("{path}:{line} {name}: {n} lines"));
            }
        }
    }
    (long, counted)
}

/// Every function with a body, and how many lines it spans.
struct Functions {
    found: Vec<(String, usize, usize)>,
}

impl Functions {
    fn add(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        let start = fn_token.span.start().line;
        let end = block.brace_token.span.close().start().line;
        self.found.push((name.to_string(), start, end + 1 - start));
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.add(&f.sig.ident, &f.sig.fn_token, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.add(&f.sig.ident, &f.sig.fn_token, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.add(&f.sig.ident, &f.sig.fn_token, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

#[test]
fn no_file_in_src_is_over_600_lines() {
    let long: Vec<String> = sources()
        .into_iter()
        .map(|(path, text)| (path, text.lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(path, n)| format!("{path}: {n} lines"))
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines (split them by concern, `foo.rs` + `foo/`):\n{}",
        long.join("\n")
    );
}

/// Issue 53: the tests keep the house's file rule too (a topic to a file, `foo.rs` + `foo/`).
#[test]
fn no_file_in_tests_is_over_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("tests"), &mut files);
    assert!(files.len() > 50, "tests/ holds the suite's files");
    let mut long: Vec<String> = files
        .iter()
        .map(|p| (p, std::fs::read_to_string(p).unwrap().lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(p, n)| format!("{}: {n} lines", p.strip_prefix(root).unwrap().display()))
        .collect();
    long.sort();
    assert!(
        long.is_empty(),
        "test files over {MAX_FILE_LINES} lines (split them by topic, `foo.rs` + `foo/`):\n{}",
        long.join("\n")
    );
}

#[test]
fn no_function_in_src_is_over_80_lines() {
    let (long, counted) = long_functions(sources());
    // The count works: the crate has about a thousand functions.
    assert!(counted > 500, "only {counted} functions found in src/");
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (make them a list of named steps):\n{}",
        long.join("\n")
    );
}

/// Issue 53: a test reads as the steps it checks, as a driver does (helpers named for what
/// each step shows), so the tests keep the function rule too.
#[test]
fn no_function_in_tests_is_over_80_lines() {
    let (long, counted) = long_functions(read_under("tests/suite"));
    assert!(
        counted > 500,
        "only {counted} functions found in tests/suite/"
    );
    assert!(
        long.is_empty(),
        "test functions over {MAX_FN_LINES} lines (name each step a helper shows):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_count_sees_a_long_function() {
    let body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let text = format!("impl S {{\n    fn long() {{\n{body}    }}\n}}\n");
    let mut fns = Functions { found: Vec::new() };
    fns.visit_file(&syn::parse_file(&text).unwrap());
    assert_eq!(fns.found, vec![("long".to_string(), 2, MAX_FN_LINES + 2)]);
}

/// SQL reads that stay, each because no API may show what it checks: the naive guard's own
/// writes (the contrast fencepost's guard is tested against), a ledger with a schema from the
/// future (which fencepost refuses to open) — on a bucket ledger, the newest image in its log —
/// and a shared ledger's stat columns, which stay empty.
/// (`ledger/d1.rs` and contract.rs's D1 arms read D1's own log tables — `fp_head`, `fp_log`,
/// `fp_site_state`, `fp_staged` — the store a D1 ledger is kept in, as the bucket tests list
/// a bucket's objects: not the ledger's tables.)
const SQL_READS_ALLOWED: &[(&str, usize)] = &[
    ("ledger/contract/engines.rs", 1),
    ("ledger/contract/integrity.rs", 6),
    ("ledger/contract/leases.rs", 2),
    ("ledger/d1.rs", 7),
];

#[test]
fn tests_observe_the_ledger_through_its_api_not_sql() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut found = Vec::new();
    for path in files {
        let name = path.strip_prefix(&dir).unwrap().display().to_string();
        if name == "house.rs" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // A read: a statement that begins with SELECT (a tampering UPDATE may hold one).
        let reads = text.matches("\"SELECT ").count();
        let allowed = SQL_READS_ALLOWED
            .iter()
            .find(|(f, _)| *f == name)
            .map_or(0, |(_, n)| *n);
        if reads > allowed {
            found.push(format!("{name}: {reads} SQL reads ({allowed} allowed)"));
        }
    }
    assert!(
        found.is_empty(),
        "observe the ledger through tests/suite/common/observe.rs (the Ledger API) or --json:\n{}",
        found.join("\n")
    );
}

/// Every regression opens with one line saying what it guards, so the file reads as a list of
/// promises kept (`tests/suite/README.md`).
#[test]
fn every_regression_says_what_it_guards_in_one_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/suite");
    let mut paths = vec![root.join("regression.rs")];
    let mut topics: Vec<_> = std::fs::read_dir(root.join("regression"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    topics.sort();
    paths.extend(topics);
    let mut silent = Vec::new();
    let mut tests = 0;
    let items = paths.iter().flat_map(|p| {
        syn::parse_file(&std::fs::read_to_string(p).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .items
    });
    for item in &items.collect::<Vec<_>>() {
        let syn::Item::Fn(f) = item else { continue };
        if !f.attrs.iter().any(|a| a.path().is_ident("test")) {
            continue;
        }
        tests += 1;
        let first_doc = f.attrs.iter().find_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        });
        if !first_doc.is_some_and(|d| d.trim().starts_with("Guards: ")) {
            silent.push(f.sig.ident.to_string());
        }
    }
    assert!(tests >= 20, "only {tests} tests read in {paths:?}");
    assert!(
        silent.is_empty(),
        "these regressions do not open with `/// Guards: …` (one line, what they guard): {silent:?}"
    );
}
