//! The house rules `CONTRIBUTING.md` states, checked so they hold: no file in `src/` or
//! `tests/` over 600 lines, no function over 80 (from `fn` to its closing brace), so every
//! driver and every test reads as a list of named steps. Files are parsed with `syn`, so strings, comments and macros cannot
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
    let files = read_under("src");
    assert!(files.len() > 50, "src/ holds the crate's files");
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

/// Who may import whom. The rooms of `src/` (its top-level modules) stand on floors, in the
/// order data flows down: a room imports only rooms on floors below its own, never one beside
/// or above it. This table is the layout's one statement (CONTRIBUTING.md points here);
/// `farm-studio look` draws the same picture.
const FLOORS: &[(&str, &[&str])] = &[
    // What everything stands on: instants, digests, item names, what differs between
    // operating systems, object stores, the transparency log's formats, and the crate root's
    // macros (`fail_point!`, `args!`, `drop_later`).
    (
        "foundation",
        &["clock", "digest", "item", "os", "store", "tlog", "lib"],
    ),
    // The two records: the ledger (what was decided) and `public/` (what was built).
    ("records", &["ledger", "output"]),
    // How a site is configured; a bucket's layout and pointer (finished revisions remote).
    ("settings and buckets", &["config", "bucket"]),
    // The site as a whole, its content and its Markdown.
    ("the site", &["site", "content", "markdown"]),
    // What the steps stand on: images, results, starters, and a deploy target (its name,
    // owner, lease, objects and receipts) that deploy, rollback and gc share; the one file
    // watcher the preview and the loop share.
    (
        "what the steps stand on",
        &["images", "results", "init", "targets", "watch"],
    ),
    // The origins, over `public/current` or a bucket: they stand on finished output only,
    // never on a step of the build.
    ("the origins", &["serve"]),
    // The data flow's steps: publish → build → deploy, and import beside them.
    ("the steps", &["publish", "build", "deploy", "import"]),
    // On finished revisions: rollback and gc, beside deploy on the target.
    ("finished revisions", &["history"]),
    // The editor's preview: the build rendering into memory, an origin serving it.
    ("the editor's preview", &["preview"]),
    ("the loop", &["run"]),
    ("the command line", &["cli", "main"]),
];

fn floor_of(room: &str) -> Option<usize> {
    FLOORS.iter().position(|(_, rooms)| rooms.contains(&room))
}

/// The rooms a file imports: `crate::ROOM` (`fencepost::ROOM` in the binary's files) in `use`
/// trees and paths, and `super::…` that climbs out of the file's room.
struct Imports {
    root: &'static str,
    /// The file's module path (`["build", "plan", "beside"]`).
    module: Vec<String>,
    found: Vec<(String, usize)>,
}

impl Imports {
    fn room_after(&self, segments: &[String], line: usize) -> Option<(String, usize)> {
        let first = segments.first()?;
        if first == self.root {
            return segments.get(1).map(|r| (r.clone(), line));
        }
        let climbs = segments.iter().take_while(|s| *s == "super").count();
        if climbs == 0 || climbs < self.module.len() {
            return None; // Within the file's own room.
        }
        segments.get(climbs).map(|r| (r.clone(), line))
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        let line = |i: &syn::Ident| i.span().start().line;
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                if let Some(found) = self.room_after(prefix, line(&p.ident)) {
                    self.found.push(found);
                } else {
                    self.use_tree(prefix, &p.tree);
                }
                prefix.pop();
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                if let Some(found) = self.room_after(prefix, line(&n.ident)) {
                    self.found.push(found);
                }
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                if let Some(found) = self.room_after(prefix, line(&r.ident)) {
                    self.found.push(found);
                }
                prefix.pop();
            }
            syn::UseTree::Glob(_) => {}
        }
    }
}

impl<'ast> Visit<'ast> for Imports {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        if let Some(found) = self.room_after(&segments, line) {
            self.found.push(found);
        }
        syn::visit::visit_path(self, p);
    }
}

/// Every import across rooms in `files` (path, text) that the floors forbid, as a message
/// naming the file, the line, the import and the way to go.
fn back_imports(files: &[(String, String)]) -> Vec<String> {
    let rooms: Vec<&str> = FLOORS.iter().flat_map(|(_, r)| r.iter().copied()).collect();
    let mut wrong = Vec::new();
    for (path, text) in files {
        let rel = path.trim_start_matches("src/").trim_end_matches(".rs");
        let module: Vec<String> = rel.split('/').map(str::to_string).collect();
        let room = module[0].clone();
        let root = if room == "cli" || room == "main" {
            "fencepost"
        } else {
            "crate"
        };
        let Some(floor) = floor_of(&room) else {
            wrong.push(format!(
                "{path}: room `{room}` is on no floor: add it to FLOORS in tests/suite/house.rs"
            ));
            continue;
        };
        let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut imports = Imports {
            root,
            module,
            found: Vec::new(),
        };
        imports.visit_file(&file);
        for (target, line) in imports.found {
            // Not a room: an item of the crate root (`crate::fail_point!`, `crate::args!`).
            let target = if rooms.contains(&target.as_str()) {
                target
            } else {
                "lib".into()
            };
            if target == room {
                continue;
            }
            let to = floor_of(&target).expect("every room is on a floor");
            if to < floor {
                continue;
            }
            let below: Vec<&str> = FLOORS[..floor]
                .iter()
                .flat_map(|(_, r)| r.iter().copied())
                .collect();
            // The way out: the thing moves down, or a caller on a floor above both passes it.
            let above = FLOORS
                .get(to.max(floor) + 1)
                .map_or("the command line", |f| f.0);
            wrong.push(format!(
                "{path}:{line} imports `{target}` ({}), but `{room}` stands on \"{}\" and may import only rooms below it ({}). Move what it needs from `{target}` below `{room}`, or have a caller on \"{above}\" or higher hand it in.",
                FLOORS[to].0,
                FLOORS[floor].0,
                below.join(", "),
            ));
        }
    }
    wrong
}

#[test]
fn every_import_between_rooms_points_down_the_floors() {
    let files = sources();
    let wrong = back_imports(&files);
    assert!(
        wrong.is_empty(),
        "imports against the floors:\n{}",
        wrong.join("\n")
    );
    // The check sees imports at all: the build's driver stands on the site and output.
    let build: Vec<_> = files
        .iter()
        .filter(|(p, _)| p == "src/build.rs")
        .cloned()
        .collect();
    let mut imports = Imports {
        root: "crate",
        module: vec!["build".into()],
        found: Vec::new(),
    };
    imports.visit_file(&syn::parse_file(&build[0].1).unwrap());
    let rooms: Vec<&str> = imports.found.iter().map(|(r, _)| r.as_str()).collect();
    assert!(
        rooms.contains(&"site") && rooms.contains(&"output"),
        "{rooms:?}"
    );
}

#[test]
fn a_planted_back_import_is_named_with_its_file_line_and_the_way_out() {
    // The ledger reaching up into the build, in a use tree, a path, and a `super::` climb.
    let planted = [
        (
            "src/ledger/x.rs".to_string(),
            "use crate::{clock::Instant, build::Report};\n".to_string(),
        ),
        (
            "src/output/y.rs".to_string(),
            "fn f() { let _ = crate::serve::run; }\n".to_string(),
        ),
        (
            "src/bucket/z.rs".to_string(),
            "use super::super::deploy::Plan;\n".to_string(),
        ),
        (
            "src/build/w.rs".to_string(),
            "use super::plan::Job;\nuse crate::ledger::Ledger;\n".to_string(),
        ),
    ];
    let wrong = back_imports(&planted);
    assert_eq!(wrong.len(), 3, "{wrong:#?}");
    assert!(
        wrong[0].starts_with(
            "src/ledger/x.rs:1 imports `build` (the steps), but `ledger` stands on \"records\""
        ),
        "{}",
        wrong[0]
    );
    assert!(
        wrong[0]
            .contains("may import only rooms below it (clock, digest, item, os, store, tlog, lib)"),
        "{}",
        wrong[0]
    );
    assert!(
        wrong[1].starts_with("src/output/y.rs:1 imports `serve`"),
        "{}",
        wrong[1]
    );
    assert!(
        wrong[2].starts_with("src/bucket/z.rs:1 imports `deploy`"),
        "{}",
        wrong[2]
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
