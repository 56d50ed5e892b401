//! The soak that found issue 7's worst faults, kept: publishers, a builder, `gc`, `rollback`
//! and an editor run as separate OS processes against one site while a reader checks every
//! file of the live revision against its manifest and every answer page for its body.
//!
//! The suite runs it for `FENCEPOST_SOAK_SECS` seconds (default 8); `scripts/soak MINUTES`
//! runs it for longer on a release build.
use crate::common::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant as Wall};

fn soak_secs() -> u64 {
    std::env::var("FENCEPOST_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8)
}

/// A small deterministic generator (no extra dependency; the seed is printed on failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn body(id: i64, edit: u64) -> String {
    format!("Answer body for item {id}. Edit {edit}.")
}

fn run(site: &Path, args: &[&str]) -> std::process::Output {
    fencepost()
        .arg("--site")
        .arg(site)
        .args(args)
        .output()
        .unwrap()
}

/// What one look at the live revision found wrong, if anything.
fn check_live(public: &Path) -> Result<(), String> {
    use sha2::Digest;
    let link = public.join("current");
    let Ok(target) = std::fs::read_link(&link) else {
        return Ok(()); // nothing built yet
    };
    let dir = public.join(&target);
    let manifest = match std::fs::read(dir.join(".fencepost/manifest.json")) {
        Ok(m) => m,
        Err(_) => {
            // Gone since we read the pointer (a swap, then gc)? Only a pointer that still
            // names it is dangling.
            return match std::fs::read_link(&link) {
                Ok(t) if t == target && !dir.exists() => Err(format!(
                    "public/current names {}, which does not exist",
                    target.display()
                )),
                _ => Ok(()),
            };
        }
    };
    let m: serde_json::Value =
        serde_json::from_slice(&manifest).map_err(|e| format!("{}: {e}", target.display()))?;
    for f in m["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        let bytes = match std::fs::read(dir.join(path)) {
            Ok(b) => b,
            Err(_) if !dir.exists() => return Ok(()), // collected after it stopped being live
            Err(e) => return Err(format!("{}/{path}: {e}", target.display())),
        };
        let sha = hex::encode(sha2::Sha256::digest(&bytes));
        if sha != f["sha256"].as_str().unwrap() {
            return Err(format!(
                "{}/{path} does not hash to its manifest entry",
                target.display()
            ));
        }
        if let Some(id) = path
            .strip_prefix("answers/")
            .and_then(|p| p.strip_suffix("/index.html"))
            .and_then(|p| p.parse::<i64>().ok())
        {
            let needle = format!("Answer body for item {id}.");
            if !String::from_utf8_lossy(&bytes).contains(&needle) {
                return Err(format!(
                    "{}/{path} is live without its body",
                    target.display()
                ));
            }
        }
    }
    Ok(())
}

/// What the soak's threads share.
#[derive(Clone)]
struct Soak {
    root: PathBuf,
    stop: Arc<AtomicBool>,
    failures: Arc<Mutex<Vec<String>>>,
    checks: Arc<AtomicUsize>,
    rounds: Arc<AtomicUsize>,
}

impl Soak {
    fn going(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    fn fail(&self, what: String) {
        self.failures.lock().unwrap().push(what);
    }
}

/// The editor: adds items, edits bodies, withdraws and restores.
fn editor(soak: Soak, seed: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut rng = Rng(seed);
        let mut next_id = 21;
        let mut edit = 0;
        while soak.going() {
            edit += 1;
            let id = 1 + rng.below(next_id as u64 - 1) as i64;
            let extra = match rng.below(6) {
                0 => "withdrawn = true\n",
                _ => "",
            };
            let (id, extra) = if rng.below(4) == 0 {
                next_id += 1;
                (next_id - 1, "")
            } else {
                (id, extra)
            };
            let text = format!(
                "+++\nid = {id}\nday = 2026-11-01\ntitle = \"Item {id}\"\nprice = 4.99\n{extra}+++\n\n{}\n",
                body(id, edit)
            );
            let path = soak.root.join(format!("content/answers/{id}.md"));
            let tmp = soak.root.join(format!("content/answers/.{id}.md.tmp"));
            std::fs::write(&tmp, text).unwrap();
            std::fs::rename(&tmp, &path).unwrap(); // an editor's save-by-rename
            std::thread::sleep(Duration::from_millis(60 + rng.below(80)));
        }
    })
}

/// A publisher that builds after each publish, or a builder (`args`), again and again.
fn publisher(soak: Soak, args: &'static [&'static str]) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while soak.going() {
            let out = run(&soak.root, args);
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                soak.fail(format!("{args:?} failed: {err}"));
            }
            soak.rounds.fetch_add(1, Ordering::Relaxed);
        }
    })
}

/// gc with no grace period (the harshest), and rollbacks to whatever exists.
fn collector(soak: Soak, seed: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut rng = Rng(seed.rotate_left(17) | 1);
        while soak.going() {
            let out = run(&soak.root, &["gc", "--keep", "1", "--grace-secs", "0"]);
            if !out.status.success() {
                soak.fail(format!(
                    "gc failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            let revisions: Vec<String> = std::fs::read_dir(soak.root.join("public/revisions"))
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| !n.starts_with('.'))
                        .collect()
                })
                .unwrap_or_default();
            if !revisions.is_empty() && rng.below(3) == 0 {
                let target = &revisions[rng.below(revisions.len() as u64) as usize];
                // May fail (gc got there first); must never leave a dangling pointer.
                let _ = run(&soak.root, &["rollback", target, "--now", NOW]);
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    })
}

/// The reader: the live revision is whole at every look.
fn reader(soak: Soak) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while soak.going() {
            if let Err(e) = check_live(&soak.root.join("public")) {
                soak.fail(e);
            }
            soak.checks.fetch_add(1, Ordering::Relaxed);
        }
    })
}

#[test]
fn publishers_builders_gc_rollback_and_a_reader_hold_together() {
    let secs = soak_secs();
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("soak: {secs} s, seed {seed}");
    let s = TestSite::new();
    for id in 1..=20 {
        s.item_with(id, "2026-11-01", "", &body(id, 0));
    }
    s.json(&["publish", "--build", "--now", NOW]);
    let soak = Soak {
        root: s.root().to_path_buf(),
        stop: Arc::default(),
        failures: Arc::default(),
        checks: Arc::default(),
        rounds: Arc::default(),
    };
    const PUBLISH: &[&str] = &["publish", "--build", "--now", NOW];
    let threads = [
        editor(soak.clone(), seed),
        publisher(soak.clone(), PUBLISH),
        publisher(soak.clone(), PUBLISH),
        publisher(soak.clone(), &["build", "--now", NOW]),
        collector(soak.clone(), seed),
        reader(soak.clone()),
    ];

    let start = Wall::now();
    while start.elapsed() < Duration::from_secs(secs) && soak.failures.lock().unwrap().is_empty() {
        std::thread::sleep(Duration::from_millis(100));
    }
    soak.stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let failures = soak.failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "seed {seed}: {} failure(s), first: {}",
        failures.len(),
        failures[0]
    );
    // Settle: one more publish and build; the live revision is the ledger's, whole.
    s.json(&["publish", "--build", "--now", NOW]);
    let live = s.json(&["build", "--now", NOW]);
    assert_eq!(live["revision"].as_i64(), Some(s.revision()));
    check_live(&s.path("public")).unwrap();
    s.cmd(&["verify"]).assert().success();
    let (rounds, checks) = (
        soak.rounds.load(Ordering::Relaxed),
        soak.checks.load(Ordering::Relaxed),
    );
    eprintln!("soak: {rounds} rounds of publish/build, {checks} reader checks, no failure");
    assert!(checks > 0 && rounds > 0);
}
