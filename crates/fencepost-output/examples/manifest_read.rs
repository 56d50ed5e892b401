//! What reading a revision's `manifest.json` and writing its entries again cost: owned (every
//! entry parsed into an `Entry` and serialised again, as builds did before `carried.rs`)
//! against lazy (`Carried::from_bytes`, then every entry kept and the manifest written from
//! its bytes by `Assembled`) — the measurement behind BENCHMARKS.md's "2026-12-05, late
//! morning". The binary's allocator; medians over the rounds after the first.
//!
//! `cargo run --release -p fencepost-output --example manifest_read -- DIR [ROUNDS]`, DIR a
//! revision folder (`public/current`).

use fencepost_output::carried::{Assembled, Carried, File};
use fencepost_output::manifest::Manifest;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed())
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

/// The JSON of the files only (the chunks joined as `manifest.json` joins them).
fn files_json(json: fencepost_output::manifest::Json) -> Vec<u8> {
    let mut out = Vec::new();
    json.write_to(&mut out).expect("a Vec takes every write");
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: manifest_read DIR [ROUNDS]");
    let rounds: usize = args
        .next()
        .map_or(5, |r| r.parse().expect("ROUNDS is a number"));
    let path = std::path::Path::new(&dir).join(fencepost_output::manifest::FILE);
    let names = ["read", "parse", "write", "drop", "lazy read", "copy write"];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for round in 0..=rounds {
        let (bytes, read) = timed(|| std::fs::read(&path).expect("manifest.json reads"));
        let (m, parse) = timed(|| serde_json::from_slice::<Manifest>(&bytes).expect("parses"));
        // One thread, as the lazy side below (a build splits both into chunks on its pool).
        let (owned, write) = timed(|| {
            let mut out = Vec::with_capacity(bytes.len());
            for e in &m.files {
                serde_json::to_writer(&mut out, e).expect("serialises");
                out.push(b',');
            }
            out
        });
        let caches: Vec<_> = m.files.iter().map(|e| e.cache).collect();
        let (_, drop) = timed(|| std::mem::drop(m));
        let mine = bytes.clone();
        let (carried, lazy) = timed(|| Carried::from_bytes(mine).expect("parses"));
        let files = (caches.iter().enumerate())
            .map(|(index, &cache)| File::Kept { index, cache })
            .collect();
        let a = Assembled {
            head: carried.head().clone(),
            files,
            prev: Some(&carried),
            raw_ok: true,
        };
        let (copied, copy) = timed(|| files_json(a.to_json()));
        assert_eq!(
            copied, bytes,
            "the copy is byte for byte the file it was read from"
        );
        assert!(!owned.is_empty());
        if round > 0 {
            for (t, d) in times.iter_mut().zip([read, parse, write, drop, lazy, copy]) {
                t.push(d);
            }
        }
    }
    let ms: Vec<f64> = times.into_iter().map(median).collect();
    for (n, t) in names.iter().zip(&ms) {
        println!("{n:>10}: {t:7.1} ms");
    }
    println!(
        "owned parse + write + drop {:.1} ms; lazy read + copy write {:.1} ms",
        ms[1] + ms[2] + ms[3],
        ms[4] + ms[5]
    );
}
