//! What reading a revision's `manifest.json` and writing its entries again cost, the way
//! builds do it today (every entry parsed into an owned `Entry`, serialised again) against a
//! lazy reading (each entry kept as its raw JSON, its path and key borrowed from it, unchanged
//! entries copied as bytes) — the measurement behind BENCHMARKS.md's "2026-12-05, late
//! morning". One thread, the binary's allocator; medians over the rounds after the first.
//!
//! `cargo run --release -p fencepost-output --example manifest_read -- DIR [ROUNDS]`, DIR a
//! revision folder (`public/current`).

use fencepost_output::manifest::Manifest;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Deserialize)]
struct Lazy<'a> {
    #[serde(borrow)]
    files: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Keyed<'a> {
    #[serde(borrow)]
    path: Cow<'a, str>,
    #[serde(borrow)]
    key: Cow<'a, str>,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed())
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().expect("usage: manifest_read DIR [ROUNDS]");
    let rounds: usize = args
        .next()
        .map_or(5, |r| r.parse().expect("ROUNDS is a number"));
    let path = std::path::Path::new(&dir).join(fencepost_output::manifest::FILE);
    let names = ["read", "parse", "write", "drop", "raw", "keyed", "copy"];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for round in 0..=rounds {
        let (bytes, read) = timed(|| std::fs::read(&path).expect("manifest.json reads"));
        let (m, parse) = timed(|| serde_json::from_slice::<Manifest>(&bytes).expect("parses"));
        let (owned, write) = timed(|| {
            let mut out = Vec::with_capacity(bytes.len());
            for e in &m.files {
                serde_json::to_writer(&mut out, e).expect("serialises");
                out.push(b',');
            }
            out
        });
        let files = m.files.len();
        let (_, drop) = timed(|| std::mem::drop(m));
        let (lazy, raw) = timed(|| serde_json::from_slice::<Lazy>(&bytes).expect("parses"));
        let (sum, keyed) = timed(|| {
            let mut sum = 0;
            for r in &lazy.files {
                let k: Keyed = serde_json::from_str(r.get()).expect("has a path and a key");
                sum += k.path.len() + k.key.len();
            }
            sum
        });
        let (copied, copy) = timed(|| {
            let mut out = Vec::with_capacity(bytes.len());
            for r in &lazy.files {
                out.extend_from_slice(r.get().as_bytes());
                out.push(b',');
            }
            out
        });
        assert_eq!(
            owned, copied,
            "the copy is byte for byte what serialising gives"
        );
        assert!(sum > 0 && lazy.files.len() == files);
        if round > 0 {
            for (t, d) in times
                .iter_mut()
                .zip([read, parse, write, drop, raw, keyed, copy])
            {
                t.push(d);
            }
        }
    }
    let ms: Vec<f64> = times.into_iter().map(median).collect();
    for (n, t) in names.iter().zip(&ms) {
        println!("{n:>6}: {t:7.1} ms");
    }
    println!(
        "owned parse + write + drop {:.1} ms; lazy raw + keyed + copy {:.1} ms",
        ms[1] + ms[2] + ms[3],
        ms[4] + ms[5] + ms[6]
    );
}
