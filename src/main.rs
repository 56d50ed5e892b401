//! The `fencepost` binary: parses the command line and hands over to the library.

mod cli;

use std::process::ExitCode;

/// The render threads' stack: a template's frames (`build.max_template_depth`, at most 500)
/// take ~3 KB each in a release build and ~25 KB in a debug one; 2 MiB (rayon's default)
/// overflowed — aborting the process — below 100 frames in a debug build.
const RENDER_STACK: usize = 16 << 20;

fn main() -> ExitCode {
    #[cfg(feature = "failpoints")]
    let _scenario = fail::FailScenario::setup();
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(RENDER_STACK)
        .build_global();
    match cli::run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", cli::errors::message(&e));
            // With --json the error is on stdout too, as one JSON object, for the CI step that
            // parses it.
            if std::env::args().skip(1).any(|a| a == "--json") {
                cli::say(&cli::errors::to_json(&e).to_string());
            }
            ExitCode::FAILURE
        }
    }
}

/// A build or publish over a large site allocates millions of small strings on several
/// threads at once; glibc's per-thread arenas grow a page range at a time (2,000+ `mprotect`
/// calls in one build at 10,000 items). mimalloc: publish + build after one new item at
/// 10,000 items ~13% faster, the same at 100,000, peak RSS +8%. Built without transparent
/// huge pages (feature `no_thp`): a build's short-lived heap touches each 2 MiB page sparsely,
/// and zeroing whole huge pages was a third of the CPU of a build after one publish at
/// 100,000 items.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay`: its place in `mi_option_e` of the mimalloc the pinned
/// `libmimalloc-sys` 0.1.49 builds (v3, `include/mimalloc.h`; the crate's Rust constants skip
/// it). The deprecated options before it keep their places, so it has not moved since it
/// was named `reset_delay`.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// For a command that ends when its work does (everything but `run` and `serve`): mimalloc
/// never hands freed memory back to the system. It purges (`madvise`) pages freed a while
/// ago, and a one-shot build then faults fresh zeroed pages in for what it allocates next;
/// at exit a hundred purges ran as the process's values were dropped. The process gives all
/// its memory back when it exits anyway. Measured (BENCHMARKS.md, 2026-12-05 afternoon): a
/// one-item `publish --build` 118 → 106 ms at 10,000 items, 822 → 807 ms at 100,000; a cold
/// build at 100,000 2,446 → 2,389 ms; peak RSS +4%. A server keeps purging: its peak would
/// otherwise stay resident for as long as it runs.
pub(crate) fn keep_freed_memory() {
    // SAFETY: sets one of mimalloc's global options, which it reads on each purge.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards: the option set is mimalloc's purge delay (1,000 ms by default), not a neighbour.
    #[test]
    fn the_option_kept_off_is_mimallocs_purge_delay() {
        // SAFETY: reads one of mimalloc's global options.
        let get = || unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        // v3's `options.c`: 1,000 ms; its neighbours default to 1 and 0.
        assert_eq!(get(), 1000, "mimalloc's default purge delay");
        keep_freed_memory();
        assert_eq!(get(), -1);
    }
}
