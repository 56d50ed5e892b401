//! The floor for one revision after one publish, for `scripts/bench build`: the time to
//! create the same tree of hard links alone, as fast as this machine allows — one thread makes
//! the folders, parents first, while the other cores link the files whose folders exist
//! already (then that thread links too), each relative to an open directory (`mkdirat`,
//! `linkat`), the file list already in hand. Only that is timed, not the walk of the source.
//! (Folders one depth at a time on every core, then the links, is ~20% slower here: makes in
//! one crowded folder take turns on its lock, so a second thread mostly spins.)
//!
//!     rustc -O -o linktree scripts/linktree.rs
//!     linktree SRC DST        prints {"files": N, "folders": M, "seconds": S}
//!
//! Plain `std` and the C library only, so the bench builds it with `rustc` alone.

use std::collections::HashMap;
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
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
    // Each file with how many folders (made in `dirs` order) must exist before it.
    let position: HashMap<&Path, usize> = dirs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.as_path(), i + 1))
        .collect();
    let mut order: Vec<(usize, CString)> = files
        .iter()
        .map(|f| {
            let need = f
                .parent()
                .and_then(|p| position.get(p))
                .copied()
                .unwrap_or(0);
            (need, c(f))
        })
        .collect();
    order.sort_by_key(|(need, _)| *need);
    let dirs: Vec<CString> = dirs.iter().map(|d| c(d)).collect();
    let cores = thread::available_parallelism().map_or(2, |n| n.get());
    let started = std::time::Instant::now();
    fs::create_dir(&dst).expect("destination can be made");
    let (from, to) = (dir_fd(&src), dir_fd(&dst));
    let (made, next) = (AtomicUsize::new(0), AtomicUsize::new(0));
    const CHUNK: usize = 256;
    let link_all = || loop {
        let start = next.fetch_add(CHUNK, Ordering::Relaxed);
        if start >= order.len() {
            break;
        }
        let part = &order[start..(start + CHUNK).min(order.len())];
        let need = part.last().map_or(0, |(n, _)| *n);
        while made.load(Ordering::Acquire) < need {
            thread::yield_now();
        }
        for (_, f) in part {
            // SAFETY: valid descriptors and NUL-terminated relative paths.
            assert_eq!(unsafe { linkat(from, f.as_ptr(), to, f.as_ptr(), 0) }, 0);
        }
    };
    thread::scope(|s| {
        s.spawn(|| {
            for (i, d) in dirs.iter().enumerate() {
                // SAFETY: valid descriptor and NUL-terminated relative path.
                assert_eq!(unsafe { mkdirat(to, d.as_ptr(), 0o777) }, 0);
                if i % 64 == 63 {
                    made.store(i + 1, Ordering::Release);
                }
            }
            made.store(dirs.len(), Ordering::Release);
            link_all();
        });
        for _ in 1..cores {
            s.spawn(link_all);
        }
    });
    println!(
        "{{\"files\": {}, \"folders\": {}, \"seconds\": {:.4}}}",
        files.len(),
        dirs.len(),
        started.elapsed().as_secs_f64()
    );
}
