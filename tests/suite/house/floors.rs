//! The floors: the crates depend only on crates below them, and the rooms of a crate that
//! holds several import only rooms below their own (`FLOORS`, `ROOMS`).

use super::read_under;
use std::path::Path;
use syn::visit::Visit;

/// Who may stand on whom. The floors of the house are crates (`crates/fencepost-<room>`, and
/// this package, the binary and the loop, on top): a crate depends only on crates of floors
/// below its own, never on one beside or above it. Cargo forbids circles; this table forbids
/// the rest (a step depending on another step, the origins on a step). It is the layout's
/// one statement (CONTRIBUTING.md's map points here); `farm-studio look` draws the same.
const FLOORS: &[(&str, &[&str])] = &[
    // What everything stands on: instants, digests, item names, the operating system, object
    // stores and fail points (core); the transparency log's formats (tlog).
    ("foundation", &["core", "tlog"]),
    // The two records: the ledger (what was decided) and `public/` (what was built).
    ("records", &["ledger", "output"]),
    // How a site is configured; a bucket's layout and pointer (finished revisions remote).
    ("settings and buckets", &["config", "bucket"]),
    // The site as a whole: its content, Markdown, images, results and starters; and the
    // pixels of its images (resized, encoded, cached: `images`); its search index (`search`).
    ("the site", &["site", "images", "search"]),
    // The origins, over `public/current` or a bucket: they stand on finished output only,
    // never on a step of the build.
    ("the origins", &["serve"]),
    // The data flow's steps: publish → build, and import beside them.
    ("the steps", &["publish", "build", "import"]),
    // A finished revision to its targets: deploy, and rollback and gc beside it.
    ("finished revisions", &["deploy"]),
    // The loop, the editor's preview and the command line (this package).
    ("the binary", &["fencepost"]),
];

/// Inside a crate that holds more than one room, the rooms stand on floors of their own,
/// by the same rule (Cargo cannot see between the modules of one crate). The crate's main
/// room (its `lib.rs` and what is not a room module) is named after the crate; `lib` in core
/// and the binary's package is the crate root's own items (`fail_point!`, `drop_later`).
const ROOMS: &[(&str, &[(&str, &[&str])])] = &[
    (
        "core",
        &[
            ("lib", &["lib"]),
            ("what differs", &["clock", "digest", "item", "os", "store"]),
        ],
    ),
    (
        "site",
        &[
            (
                "the site",
                &["site", "content", "markdown", "guard", "image_size"],
            ),
            // A body with the site's shortcodes: Markdown and the templates' guard below it.
            ("shortcodes", &["shortcodes"]),
            ("what the steps stand on", &["images", "results", "init"]),
        ],
    ),
    (
        "deploy",
        &[
            ("a target", &["targets"]),
            ("deploy", &["deploy"]),
            ("finished revisions", &["history"]),
        ],
    ),
    (
        "fencepost",
        &[
            ("lib", &["lib"]),
            ("the watcher", &["watch"]),
            ("the editor's preview", &["preview"]),
            ("the loop", &["run"]),
        ],
    ),
];

fn floor_of(table: &[(&str, &[&str])], room: &str) -> Option<usize> {
    table.iter().position(|(_, rooms)| rooms.contains(&room))
}

/// Each crate of the workspace and the `fencepost-*` crates its manifest depends on.
fn crate_dependencies() -> Vec<(String, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut manifests = vec![("fencepost".to_string(), root.join("Cargo.toml"))];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let name = name.trim_start_matches("fencepost-").to_string();
        manifests.push((name, dir.join("Cargo.toml")));
    }
    manifests.sort();
    manifests
        .into_iter()
        .map(|(name, path)| {
            let text = std::fs::read_to_string(&path).unwrap();
            let manifest: toml::Table = toml::from_str(&text).unwrap();
            let deps = manifest
                .get("dependencies")
                .and_then(|d| d.as_table())
                .map(|d| {
                    d.keys()
                        .filter_map(|k| k.strip_prefix("fencepost-"))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            (name, deps)
        })
        .collect()
}

/// Every dependency between crates the floors forbid, as a message naming the crate, the
/// dependency and the way to go.
fn back_dependencies(crates: &[(String, Vec<String>)]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (name, deps) in crates {
        let Some(floor) = floor_of(FLOORS, name) else {
            wrong.push(format!(
                "crate `{name}` is on no floor: add it to FLOORS in tests/suite/house.rs"
            ));
            continue;
        };
        for dep in deps {
            let to = floor_of(FLOORS, dep).unwrap_or(usize::MAX);
            if to < floor {
                continue;
            }
            let above = FLOORS.get(to.max(floor) + 1).map_or("the binary", |f| f.0);
            wrong.push(format!(
                "crates/fencepost-{name}/Cargo.toml depends on `fencepost-{dep}`, but `{name}` stands on \"{}\" and may depend only on crates below it. Move what it needs from `{dep}` below `{name}`, or have a crate on \"{above}\" or higher hand it in.",
                FLOORS[floor].0,
            ));
        }
    }
    wrong
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let crates = crate_dependencies();
    assert!(crates.len() >= 10, "{crates:?}");
    let wrong = back_dependencies(&crates);
    assert!(
        wrong.is_empty(),
        "dependencies against the floors:\n{}",
        wrong.join("\n")
    );
    // The check sees dependencies at all: the build stands on the site and output.
    let build = &crates.iter().find(|(n, _)| n == "build").unwrap().1;
    assert!(build.contains(&"site".into()) && build.contains(&"output".into()));
}

#[test]
fn a_planted_dependency_up_the_floors_is_named_with_the_way_out() {
    let planted = vec![
        (
            "serve".to_string(),
            vec!["core".to_string(), "build".to_string()],
        ),
        ("build".to_string(), vec!["publish".to_string()]),
        ("viewer".to_string(), vec![]),
    ];
    let wrong = back_dependencies(&planted);
    assert_eq!(wrong.len(), 3, "{wrong:#?}");
    assert!(
        wrong[0].starts_with("crates/fencepost-serve/Cargo.toml depends on `fencepost-build`, but `serve` stands on \"the origins\""),
        "{}",
        wrong[0]
    );
    assert!(wrong[1].contains("`fencepost-publish`"), "{}", wrong[1]);
    assert!(
        wrong[2].contains("crate `viewer` is on no floor"),
        "{}",
        wrong[2]
    );
}

/// The rooms a file imports: `crate::ROOM` in `use` trees and paths, and `super::…` that
/// climbs out of the file's room.
struct Imports {
    /// The file's module path inside its crate (`["plan", "beside"]`).
    module: Vec<String>,
    found: Vec<(String, usize)>,
}

impl Imports {
    fn room_after(&self, segments: &[String], line: usize) -> Option<(String, usize)> {
        let first = segments.first()?;
        if first == "crate" {
            return segments.get(1).map(|r| (r.clone(), line));
        }
        let climbs = segments.iter().take_while(|s| *s == "super").count();
        if climbs == 0 || climbs < self.module.len() {
            return None; // Within the file's own room.
        }
        segments.get(climbs).map(|r| (r.clone(), line))
    }

    fn name(&mut self, prefix: &mut Vec<String>, ident: &syn::Ident) -> Option<()> {
        prefix.push(ident.to_string());
        let found = self.room_after(prefix, ident.span().start().line);
        prefix.pop();
        self.found.push(found?);
        Some(())
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                if self.name(prefix, &p.ident).is_none() {
                    prefix.push(p.ident.to_string());
                    self.use_tree(prefix, &p.tree);
                    prefix.pop();
                }
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
            syn::UseTree::Name(n) => {
                self.name(prefix, &n.ident);
            }
            syn::UseTree::Rename(r) => {
                self.name(prefix, &r.ident);
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

/// The room of a file of crate `krate` (its path under the crate's `src/`, no `.rs`): the
/// module it is in when that module is one of the crate's rooms, else the main room.
fn room_of(krate: &str, rooms: &[&str], module: &[String]) -> String {
    let first = module[0].as_str();
    match first {
        "lib" if rooms.contains(&krate) => krate.to_string(),
        _ if rooms.contains(&first) => first.to_string(),
        _ if rooms.contains(&krate) => krate.to_string(),
        _ => "lib".to_string(),
    }
}

/// Every import between the rooms of one crate that its floors forbid, as a message naming
/// the file, the line, the import and the way to go. `files` are (path, text) with paths
/// `<crate dir>/src/…`.
fn back_imports(krate: &str, files: &[(String, String)]) -> Vec<String> {
    let floors = ROOMS.iter().find(|(k, _)| *k == krate).unwrap().1;
    let rooms: Vec<&str> = floors.iter().flat_map(|(_, r)| r.iter().copied()).collect();
    let mut wrong = Vec::new();
    for (path, text) in files {
        let rel = path.split_once("src/").unwrap().1.trim_end_matches(".rs");
        let module: Vec<String> = rel.split('/').map(str::to_string).collect();
        if module[0] == "cli" || module[0] == "main" {
            continue; // The binary's own modules: the top of the house.
        }
        let room = room_of(krate, &rooms, &module);
        let floor = floor_of(floors, &room).expect("every room is on a floor");
        let file = syn::parse_file(text).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut imports = Imports {
            module,
            found: Vec::new(),
        };
        imports.visit_file(&file);
        for (target, line) in imports.found {
            let target = room_of(krate, &rooms, &[target]);
            let to = floor_of(floors, &target).expect("every room is on a floor");
            if target == room || to < floor {
                continue;
            }
            let below: Vec<&str> = floors[..floor]
                .iter()
                .flat_map(|(_, r)| r.iter().copied())
                .collect();
            wrong.push(format!(
                "{path}:{line} imports `{target}` ({}), but `{room}` stands on \"{}\" of `{krate}` and may import only rooms below it ({}). Move what it needs from `{target}` below `{room}`, or have a caller above both hand it in.",
                floors[to].0,
                floors[floor].0,
                below.join(", "),
            ));
        }
    }
    wrong
}

/// The Rust files of crate `krate` (this package's `src/` for `fencepost`).
fn crate_sources(krate: &str) -> Vec<(String, String)> {
    match krate {
        "fencepost" => read_under("src"),
        _ => read_under(&format!("crates/fencepost-{krate}/src")),
    }
}

#[test]
fn every_import_between_rooms_of_a_crate_points_down_its_floors() {
    for (krate, _) in ROOMS {
        let wrong = back_imports(krate, &crate_sources(krate));
        assert!(
            wrong.is_empty(),
            "imports against the floors of {krate}:\n{}",
            wrong.join("\n")
        );
    }
    // The check sees imports at all: the results stand on the site.
    let site = crate_sources("site");
    let (_, results) = site
        .iter()
        .find(|(p, _)| p.ends_with("src/results.rs"))
        .unwrap();
    let mut imports = Imports {
        module: vec!["results".into()],
        found: Vec::new(),
    };
    imports.visit_file(&syn::parse_file(results).unwrap());
    assert!(
        imports.found.iter().any(|(r, _)| r == "Site"),
        "{:?}",
        imports.found
    );
}

#[test]
fn a_planted_back_import_is_named_with_its_file_line_and_the_way_out() {
    // The content reaching up into the images, in a use tree, a path, and a `super::` climb.
    let planted = [
        (
            "crates/fencepost-site/src/content/x.rs".to_string(),
            "use crate::images::Image;\nuse super::fields::Field;\n".to_string(),
        ),
        (
            "crates/fencepost-site/src/markdown.rs".to_string(),
            "fn f() { let _ = crate::init::run; }\n".to_string(),
        ),
        (
            "crates/fencepost-site/src/content/y.rs".to_string(),
            "use super::super::results::Insert;\nuse super::scan::Scan;\n".to_string(),
        ),
    ];
    let wrong = back_imports("site", &planted);
    assert_eq!(wrong.len(), 3, "{wrong:#?}");
    assert!(
        wrong[0].starts_with(
            "crates/fencepost-site/src/content/x.rs:1 imports `images` (what the steps stand on), but `content` stands on \"the site\" of `site`"
        ),
        "{}",
        wrong[0]
    );
    assert!(
        wrong[1].starts_with("crates/fencepost-site/src/markdown.rs:1 imports `init`"),
        "{}",
        wrong[1]
    );
    assert!(
        wrong[2].starts_with("crates/fencepost-site/src/content/y.rs:1 imports `results`"),
        "{}",
        wrong[2]
    );
}
