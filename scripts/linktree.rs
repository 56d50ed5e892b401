//! The floor for one revision after one publish, for `scripts/bench build`: the time to
//! create the same tree of hard links alone, as fast as this machine allows — the folders one
//! depth at a time and the links on every core, each relative to an open directory (`mkdirat`,
//! `linkat`), the file list already in hand. Only that is timed, not the walk of the source.
//!
//!     rustc -O -o linktree scripts/linktree.rs
//!     linktree SRC DST        prints {"files": N, "folders": M, "seconds": S}
//!
//! Plain `std` and the C library only, so the bench builds it with `rustc` alone.

use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::thread;

extern "C" {
    fn open(path: *const i8, flags: i32, ...) -> i32;
    fn mkdirat(dirfd: i32, path: *const i8, mode: u32) -> i32;
    fn linkat(olddirfd: i32, old: *const i8, newdirfd: i32, new: *const i8, flags: i32) -> i32;
}
const O_PATH: i32 = 0o10000000;
const O_DIRECTORY: i32 = 0o200000;

fn walk(root: &Path, rel: &Path, dirs: &mut Vec<PathBuf>, files: &mut Vec<PathBuf>) {
    for e in fs::read_dir(root.join(rel)).expect("readable source") {
        let e = e.expect("readable entry");
        let r = rel.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            dirs.push(r.clone());
            walk(root, &r, dirs, files);
        } else {
            files.push(r);
        }
    }
}

fn c(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("no NUL in paths")
}

fn dir_fd(p: &Path) -> i32 {
    // SAFETY: a valid NUL-terminated path; the descriptor lives until the process exits.
    let fd = unsafe { open(c(p).as_ptr(), O_PATH | O_DIRECTORY) };
    assert!(fd >= 0, "cannot open {}", p.display());
    fd
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (src, dst) = (PathBuf::from(&a[1]), PathBuf::from(&a[2]));
    let (mut dirs, mut files) = (Vec::new(), Vec::new());
    walk(&src, Path::new(""), &mut dirs, &mut files);
    dirs.sort_by_key(|d| d.components().count());
    let dirs: Vec<CString> = dirs.iter().map(|d| c(d)).collect();
    let files: Vec<CString> = files.iter().map(|f| c(f)).collect();
    let depth = |d: &CString| d.as_bytes().iter().filter(|&&b| b == b'/').count();
    let cores = thread::available_parallelism().map_or(2, |n| n.get());
    let started = std::time::Instant::now();
    fs::create_dir(&dst).expect("destination can be made");
    let (from, to) = (dir_fd(&src), dir_fd(&dst));
    let mut i = 0;
    while i < dirs.len() {
        let j = i + dirs[i..].iter().take_while(|d| depth(d) == depth(&dirs[i])).count();
        let level = &dirs[i..j];
        thread::scope(|s| {
            for part in level.chunks(level.len().div_ceil(cores).max(1)) {
                s.spawn(move || {
                    for d in part {
                        // SAFETY: valid descriptor and NUL-terminated relative path.
                        assert_eq!(unsafe { mkdirat(to, d.as_ptr(), 0o777) }, 0);
                    }
                });
            }
        });
        i = j;
    }
    thread::scope(|s| {
        for part in files.chunks(files.len().div_ceil(cores).max(1)) {
            s.spawn(move || {
                for f in part {
                    // SAFETY: valid descriptors and NUL-terminated relative paths.
                    assert_eq!(unsafe { linkat(from, f.as_ptr(), to, f.as_ptr(), 0) }, 0);
                }
            });
        }
    });
    println!(
        "{{\"files\": {}, \"folders\": {}, \"seconds\": {:.4}}}",
        files.len(),
        dirs.len(),
        started.elapsed().as_secs_f64()
    );
}
