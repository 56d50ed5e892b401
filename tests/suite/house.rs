//! The house rules `CONTRIBUTING.md` states, checked so they hold: no file in `src/` over
//! 600 lines, no function over 80 (from `fn` to its closing brace), so every driver reads as a
//! list of named steps. Files are parsed with `syn`, so strings, comments and macros cannot
//! fool the count.

use std::path::{Path, PathBuf};
use syn::visit::Visit;

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

fn sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 50, "src/ holds the crate's files");
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
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

#[test]
fn no_function_in_src_is_over_80_lines() {
    let mut long = Vec::new();
    let mut counted = 0;
    for (path, text) in sources() {
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
    // The count works: the crate has about a thousand functions.
    assert!(counted > 500, "only {counted} functions found in src/");
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines (make them a list of named steps):\n{}",
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
const SQL_READS_ALLOWED: &[(&str, usize)] = &[("ledger_contract.rs", 6)];

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
