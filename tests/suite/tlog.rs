//! The transparency log through the binary: keys, and (as it grows) the log a build writes,
//! every origin serves and readers' software checks.

use crate::common::*;
use serde_json::Value;

mod hostile;
mod promise;
mod site;

/// `tlog keygen ORIGIN` prints a signing key in Go's note text and the matching verifier key:
/// a checkpoint signed with the one opens with the other, and with no other key; each run
/// makes a new pair; an origin that cannot name a key is refused.
#[test]
fn keygen_prints_a_key_pair_whose_verifier_opens_what_its_signer_signs() {
    let keygen = |origin: &str| -> Value {
        let out = fencepost()
            .args(["tlog", "keygen", "--json", origin])
            .output()
            .unwrap();
        assert_success(&out);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let keys = keygen("example.org/advisories");
    let skey = keys["skey"].as_str().unwrap();
    let vkey = keys["vkey"].as_str().unwrap();
    assert!(
        skey.starts_with("PRIVATE+KEY+example.org/advisories+"),
        "{keys}"
    );
    assert!(vkey.starts_with("example.org/advisories+"), "{keys}");
    // The key id is the same in both texts.
    assert_eq!(skey.split('+').nth(3), vkey.split('+').nth(1));

    let signer = fencepost_tlog::note::LogSigner::from_skey(skey).unwrap();
    let root = fencepost_tlog::Hash([1; 32]);
    let signed = signer.sign_checkpoint(3, root);
    let checkpoint = fencepost_tlog::note::open_checkpoint(&signed, vkey).unwrap();
    assert_eq!(checkpoint.origin(), "example.org/advisories");
    let other = keygen("example.org/advisories");
    assert_ne!(other["skey"], keys["skey"]);
    assert!(
        fencepost_tlog::note::open_checkpoint(&signed, other["vkey"].as_str().unwrap()).is_err()
    );

    let out = fencepost()
        .args(["tlog", "keygen", "--json", "two words"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot name a log"),
        "{err}"
    );
}

/// The outside checkers, built or found once: Go's sumdb code (Debian's golang-go and
/// golang-golang-x-mod-dev, which `scripts/test` installs) compiled from
/// `tests/tlog/sumdb_check.go`, and tlog-scales (PyPI) in the test venv.
mod checkers {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output};
    use std::sync::OnceLock;

    fn repo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    /// `sumdb_check`, compiled in GOPATH mode against Debian's x/mod (no network).
    pub fn go() -> &'static Path {
        static BUILT: OnceLock<PathBuf> = OnceLock::new();
        BUILT.get_or_init(|| {
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tlog-go");
            std::fs::create_dir_all(&dir).unwrap();
            let bin = dir.join("sumdb_check");
            let out = Command::new("go")
                .arg("build")
                .arg("-o")
                .arg(&bin)
                .arg(repo().join("tests/tlog/sumdb_check.go"))
                .env("GO111MODULE", "off")
                .env("GOPATH", "/usr/share/gocode")
                .env("GOCACHE", dir.join("cache"))
                .env("GOFLAGS", "")
                .output()
                .expect("go (Debian's golang-go; scripts/test installs it) builds the Go checker");
            assert!(
                out.status.success(),
                "go build sumdb_check: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            bin
        })
    }

    pub fn run_go(dir: &Path, vkey: &str, olds: &[PathBuf]) -> Output {
        Command::new(go())
            .arg(dir)
            .arg(vkey)
            .args(olds)
            .output()
            .unwrap()
    }

    /// tlog-scales' reading of the log at `location` (a folder or URL).
    pub fn run_tlog_scales(location: &str, vkey: &str, olds: &[PathBuf]) -> Output {
        let python = std::env::var("FENCEPOST_PYTHON").expect(
            "FENCEPOST_PYTHON: the test venv's python, with tlog-scales (scripts/test sets it)",
        );
        Command::new(python)
            .arg(repo().join("scripts/tlog-scales-check.py"))
            .arg(location)
            .arg(vkey)
            .args(olds)
            .output()
            .unwrap()
    }
}

/// The log's formats as written by `fencepost_tlog` — tiles, bundles, signed checkpoints —
/// grown in three steps (1, 273 and 600 entries: full and partial tiles on two levels) are read
/// and checked by two verifiers fencepost did not write, Go's sumdb/tlog and tlog-scales: every
/// entry comes back proven in the tree, each older checkpoint is consistent with the newest,
/// and one flipped bit in a tile fails both.
#[test]
fn a_log_fencepost_writes_is_checked_by_go_and_by_tlog_scales() {
    use fencepost_tlog::note;
    let keys = note::generate("example.org/log").unwrap();
    let signer = note::LogSigner::from_skey(&keys.skey).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let entries: Vec<String> = (0..600)
        .map(|i| format!("fencepost/test/v1\nindex {i}\n"))
        .collect();
    let olds = write_log(&log, &signer, &entries, &[1, 273, 600]);
    let olds: Vec<std::path::PathBuf> = olds[..2]
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let saved = dir.path().join(format!("checkpoint.{i}"));
            std::fs::write(&saved, c).unwrap();
            saved
        })
        .collect();
    let written: Vec<String> = entries.iter().map(|e| base64_of(e.as_bytes())).collect();

    let go = checkers::run_go(&log, &keys.vkey, &olds);
    assert_success(&go);
    let text = String::from_utf8(go.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("ok 600"));
    assert_eq!(lines.map(str::to_string).collect::<Vec<_>>(), written);

    let py = checkers::run_tlog_scales(log.to_str().unwrap(), &keys.vkey, &olds);
    assert_success(&py);
    let read: Value = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(read["size"], 600);
    assert_eq!(read["origin"], "example.org/log");
    assert_eq!(read["entries"], serde_json::json!(written));

    // One bit of a full level-0 tile flipped: both refuse the log.
    let tile = log.join("tile/0/000");
    let mut bytes = std::fs::read(&tile).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&tile, bytes).unwrap();
    assert!(!checkers::run_go(&log, &keys.vkey, &[]).status.success());
    assert!(
        !checkers::run_tlog_scales(log.to_str().unwrap(), &keys.vkey, &[])
            .status
            .success()
    );
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Writes the log of `entries` into `log` as a build would publish it, grown to each of
/// `sizes` in turn (tiles and bundles added, the checkpoint replaced); returns each size's
/// signed checkpoint.
fn write_log<E: AsRef<[u8]>>(
    log: &std::path::Path,
    signer: &fencepost_tlog::note::LogSigner,
    entries: &[E],
    sizes: &[usize],
) -> Vec<Vec<u8>> {
    use fencepost_tlog::tiles;
    let write = |path: &str, bytes: &[u8]| {
        let p = log.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    };
    let mut tree = tiles::Tree::new();
    let mut checkpoints = Vec::new();
    for &size in sizes {
        let old = tree.size();
        for e in &entries[old as usize..size] {
            tree.append(e.as_ref()).unwrap();
        }
        for (path, bytes) in tree.tiles_since(old) {
            write(&path, &bytes);
        }
        for (path, bytes) in tiles::bundles_since(&entries[..size], old) {
            write(&path, &bytes);
        }
        let checkpoint = signer.sign_checkpoint(tree.size(), tree.root());
        write("checkpoint", &checkpoint);
        checkpoints.push(checkpoint);
    }
    checkpoints
}

/// A key of the same name as the test logs', which is not theirs.
fn other_key() -> fencepost_tlog::note::KeyPair {
    fencepost_tlog::note::generate("example.org/advisories").unwrap()
}

/// A site's log as a build will publish it: a revision, the commitment to an embargoed
/// advisory, its reveal, an update with the updated JSON served. `tlog verify` checks it over
/// HTTP end to end, proves it extends a checkpoint saved before, and fails, by name, on a JSON
/// edited without a change entry, a tile changed, a log rewritten under the same key, another
/// key; `tlog prove` proves the committed text.
const ADVISORY: &[u8] =
    br#"{"collection":"advisories","id":"fp-1","title":"Path traversal","body":"Fixed in 1.0.2."}"#;
const UPDATED: &[u8] = br#"{"collection":"advisories","id":"fp-1","title":"Path traversal","body":"Fixed in 1.0.2 and 0.9.8."}"#;

/// The entries of the advisory's log: a revision, the commitment to `ADVISORY`, its reveal
/// and its update to `UPDATED`.
fn advisory_log(salt: [u8; 32]) -> Vec<String> {
    use fencepost_tlog::entry::{commitment, ChangeKind, Entry};
    let (json, updated) = (ADVISORY, UPDATED);
    let hex = |c: char| c.to_string().repeat(64);
    [
        Entry::Revision {
            ledger: "L1".into(),
            revision: 1,
            build: "1".into(),
            manifest: hex('a'),
            audit: hex('b'),
        },
        Entry::Commit {
            commit: commitment(&salt, json),
        },
        Entry::Reveal {
            item: "advisories/fp-1".into(),
            commit: 1,
            salt,
        },
        Entry::Change {
            item: "advisories/fp-1".into(),
            change: ChangeKind::Update,
            digest: fencepost_core::digest::sha256_hex(updated),
        },
    ]
    .iter()
    .map(Entry::to_text)
    .collect()
}

/// `tlog verify --json <url> --vkey <vkey> <extra>`.
fn verify(url: &str, vkey: &str, extra: &[&str]) -> std::process::Output {
    fencepost()
        .args(["tlog", "verify", "--json", url, "--vkey", vkey])
        .args(extra)
        .output()
        .unwrap()
}

/// A site's log as a build will publish it: a revision, the commitment to an embargoed
/// advisory, its reveal, an update with the updated JSON served. `tlog verify` checks it over
/// HTTP end to end, proves it extends a checkpoint saved before, and fails, by name, on a JSON
/// edited without a change entry, a tile changed, a log rewritten under the same key, another
/// key; `tlog prove` proves the committed text.
#[test]
fn tlog_verify_checks_a_published_log_end_to_end_and_names_what_does_not_hold() {
    use fencepost_tlog::note;
    let keys = note::generate("example.org/advisories").unwrap();
    let signer = note::LogSigner::from_skey(&keys.skey).unwrap();
    let site = tempfile::tempdir().unwrap();
    let wk = site.path().join(".well-known/fencepost");
    let entries = advisory_log([42u8; 32]);
    let checkpoints = write_log(&wk.join("log"), &signer, &entries, &[2, 4]);
    std::fs::create_dir_all(wk.join("items/advisories")).unwrap();
    // Updated after its reveal, with a change entry: the JSON served now is the update.
    std::fs::write(wk.join("items/advisories/fp-1.json"), UPDATED).unwrap();
    let saved = site.path().join("saved-checkpoint");
    std::fs::write(&saved, &checkpoints[0]).unwrap();

    let (mut server, port) = file_server(site.path(), None);
    let url = format!("http://127.0.0.1:{port}/");
    let out = verify(&url, &keys.vkey, &["--since", saved.to_str().unwrap()]);
    assert_success(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["size"], 4, "{report}");
    assert_eq!(
        report["entries"],
        serde_json::json!({"revision": 1, "commit": 1, "reveal": 1, "change": 1})
    );
    assert_eq!(report["revealed"], serde_json::json!(["advisories/fp-1"]));
    assert_eq!(report["changes"], serde_json::json!({"advisories/fp-1": 1}));
    assert_eq!(report["consistent_with"], 2);
    // The same from the folder.
    assert_success(&verify(site.path().to_str().unwrap(), &keys.vkey, &[]));
    the_proof_of_a_commitment_checks_offline(&url, &keys.vkey);
    what_does_not_hold_is_named(&url, &keys, site.path(), &entries);
    let _ = server.kill();
    let _ = server.wait();
}

/// A proof of the advisory's commitment, checked offline with the key and its JSON.
fn the_proof_of_a_commitment_checks_offline(url: &str, vkey: &str) {
    let json = ADVISORY;
    let prove = |item: &str| {
        fencepost()
            .args(["tlog", "prove", url, item, "--vkey", vkey])
            .output()
            .unwrap()
    };
    let out = prove("advisories/fp-1");
    assert_success(&out);
    let text = out.stdout.clone();
    assert!(
        text.starts_with(b"c2sp.org/tlog-proof@v1\nextra "),
        "{}",
        String::from_utf8_lossy(&text)
    );
    let proof = fencepost_tlog::proof::Proof::parse(&text).unwrap();
    assert_eq!(proof.index, 1);
    let (item, checkpoint) = proof.check_item(vkey, json).unwrap();
    assert_eq!((item.as_str(), checkpoint.size()), ("advisories/fp-1", 4));
    assert!(proof.check_item(vkey, b"{}").is_err());
    assert!(proof.check_item(&other_key().vkey, json).is_err());
    assert!(!prove("advisories/fp-2").status.success());
}

/// Another key, a log rewritten under the same key, a JSON edited without a change entry, a
/// tile changed: each fails `tlog verify`, by name.
fn what_does_not_hold_is_named(
    url: &str,
    keys: &fencepost_tlog::note::KeyPair,
    site: &std::path::Path,
    entries: &[String],
) {
    let signer = fencepost_tlog::note::LogSigner::from_skey(&keys.skey).unwrap();
    let wk = site.join(".well-known/fencepost");
    let (json, updated) = (ADVISORY, UPDATED);
    let failing = |extra: &[&str], want: &str| {
        let out = verify(url, &keys.vkey, extra);
        assert!(!out.status.success(), "{want}");
        let err: Value = serde_json::from_slice(&out.stdout).unwrap();
        let message = err["error"]["message"].as_str().unwrap().to_string();
        assert!(message.contains(want), "{message}");
    };
    // Another key.
    let other = other_key();
    let out = verify(url, &other.vkey, &[]);
    assert!(!out.status.success());
    // A log rewritten under the same key: not an extension of the saved checkpoint.
    let forked = tempfile::tempdir().unwrap();
    let mut rewritten = entries.to_vec();
    rewritten[0] = rewritten[0].replace("revision 1", "revision 9");
    let fork = write_log(forked.path(), &signer, &rewritten, &[2]);
    let fork_file = site.join("fork-checkpoint");
    std::fs::write(&fork_file, &fork[0]).unwrap();
    failing(
        &["--since", fork_file.to_str().unwrap()],
        "it was rewritten",
    );
    // The advisory's JSON edited again, without a change entry; or put back to the text
    // committed before the update (the log says it was updated since).
    let item = wk.join("items/advisories/fp-1.json");
    std::fs::write(
        &item,
        br#"{"collection":"advisories","id":"fp-1","title":"Nothing to see"}"#,
    )
    .unwrap();
    failing(&[], "advisories/fp-1");
    std::fs::write(&item, json).unwrap();
    failing(&[], "changed without an entry in the log");
    std::fs::write(&item, updated).unwrap();
    // A tile changed.
    let tile = wk.join("log/tile/0/000.p/4");
    let mut bytes = std::fs::read(&tile).unwrap();
    bytes[0] ^= 1;
    std::fs::write(&tile, bytes).unwrap();
    failing(&[], "Merkle");
}

/// The log of a daily answer committed to as `first`, revealed, then updated to `second`.
fn answer_log(salt: &[u8; 32], first: &[u8], second: &[u8]) -> Vec<String> {
    use fencepost_tlog::entry::{commitment, ChangeKind, Entry};
    [
        Entry::Commit {
            commit: commitment(salt, first),
        },
        Entry::Reveal {
            item: "answers/41".into(),
            commit: 0,
            salt: *salt,
        },
        Entry::Change {
            item: "answers/41".into(),
            change: ChangeKind::Update,
            digest: fencepost_core::digest::sha256_hex(second),
        },
    ]
    .iter()
    .map(Entry::to_text)
    .collect()
}

/// `tlog watch` as a monitor run from cron: the first run saves the checkpoint; a grown log
/// (an update with its change entry) passes and replaces it; an item's JSON changed with no
/// change entry, and a log rewritten under the same key, each exit 1 by name and save
/// nothing, so the next run still compares with the last checkpoint that held.
#[test]
fn tlog_watch_saves_what_held_and_reports_a_change_the_log_does_not_account_for() {
    use fencepost_tlog::note;
    let keys = note::generate("example.org/puzzles").unwrap();
    let signer = note::LogSigner::from_skey(&keys.skey).unwrap();
    let site = tempfile::tempdir().unwrap();
    let wk = site.path().join(".well-known/fencepost");
    let (first, second) = (br#"{"answer":"12.99"}"#, br#"{"answer":"13.49"}"#);
    let entries = answer_log(&[9; 32], first, second);
    let item = wk.join("items/answers/41.json");
    std::fs::create_dir_all(item.parent().unwrap()).unwrap();
    write_log(&wk.join("log"), &signer, &entries, &[2]);
    std::fs::write(&item, first).unwrap();
    let state = site.path().join("monitor");
    let watch = || {
        let out = fencepost()
            .args(["tlog", "watch", "--json", site.path().to_str().unwrap()])
            .args(["--vkey", &keys.vkey, "--state", state.to_str().unwrap()])
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        (out.status.success(), json)
    };
    let (ok, first_look) = watch();
    assert!(ok, "{first_look}");
    assert!(first_look["previous_size"].is_null(), "{first_look}");
    let saved = || std::fs::read(state.join("checkpoint")).unwrap();
    let at_two = saved();

    // The update, logged: it holds, and the saved checkpoint moves on.
    write_log(&wk.join("log"), &signer, &entries, &[3]);
    std::fs::write(&item, second).unwrap();
    let (ok, grown) = watch();
    assert!(ok, "{grown}");
    assert_eq!(
        (grown["previous_size"].as_u64(), grown["size"].as_u64()),
        (Some(2), Some(3))
    );
    let at_three = saved();
    assert_ne!(at_two, at_three);

    // Changed behind the log's back: named, nothing saved.
    std::fs::write(&item, br#"{"answer":"99.99"}"#).unwrap();
    let (ok, changed) = watch();
    assert!(!ok);
    let message = changed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("answers/41") && message.contains("without an entry"),
        "{message}"
    );
    assert_eq!(saved(), at_three);
    std::fs::write(&item, second).unwrap();

    // The log rewritten under the same key, whole and self-consistent (another salt), at
    // the same size: it does not extend the saved checkpoint.
    let rewritten = answer_log(&[1; 32], first, second);
    std::fs::remove_dir_all(wk.join("log")).unwrap();
    write_log(&wk.join("log"), &signer, &rewritten, &[3]);
    let (ok, forked) = watch();
    assert!(!ok);
    let message = forked["error"]["message"].as_str().unwrap();
    assert!(message.contains("it was rewritten"), "{message}");
    assert_eq!(saved(), at_three);
}

/// A witness's cosigner key (c2sp.org/tlog-cosignature, Ed25519): its vkey text and a
/// function that cosigns a checkpoint at a time, as a witness would.
fn witness(name: &str) -> (String, impl Fn(&[u8], u64) -> Vec<u8>) {
    use base64::Engine;
    use ring::signature::KeyPair;
    let b64 = base64::engine::general_purpose::STANDARD;
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = ring::signature::Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
    let pair = ring::signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let key: [u8; 32] = pair.public_key().as_ref().try_into().unwrap();
    let id = fencepost_tlog::witness::key_id(name, &key);
    let mut typed = vec![0x04];
    typed.extend_from_slice(&key);
    let vkey = format!("{name}+{}+{}", hex::encode(id), b64.encode(&typed));
    let name = name.to_string();
    let cosign = move |signed: &[u8], time: u64| {
        let text = std::str::from_utf8(signed).unwrap();
        let body = format!("{}\n", text.split_once("\n\n").unwrap().0);
        let sig = pair.sign(&fencepost_tlog::witness::message(time, body.as_bytes()));
        let mut raw = id.to_vec();
        raw.extend_from_slice(&time.to_be_bytes());
        raw.extend_from_slice(sig.as_ref());
        format!("{text}— {name} {}\n", b64.encode(raw)).into_bytes()
    };
    (vkey, cosign)
}

/// "Fixed before its instant" rests on someone else's observation: `tlog verify --witness`
/// requires a valid cosignature of each witness given and reports its time; tlog-scales'
/// cosignature verifier accepts the same cosignature; a checkpoint without one, or one by
/// another key, is refused by name.
#[test]
fn tlog_verify_checks_a_witness_cosignature_and_reports_its_time() {
    let keys = fencepost_tlog::note::generate("example.org/puzzles").unwrap();
    let signer = fencepost_tlog::note::LogSigner::from_skey(&keys.skey).unwrap();
    let site = tempfile::tempdir().unwrap();
    let wk = site.path().join(".well-known/fencepost");
    let (first, second) = (br#"{"answer":"12.99"}"#, br#"{"answer":"13.49"}"#);
    let entries = answer_log(&[3; 32], first, second);
    let checkpoints = write_log(&wk.join("log"), &signer, &entries[..2], &[2]);
    std::fs::create_dir_all(wk.join("items/answers")).unwrap();
    std::fs::write(wk.join("items/answers/41.json"), first).unwrap();
    let (wvkey, cosign) = witness("witness.example/w1");
    let cosigned = cosign(&checkpoints[0], 1_764_806_400);
    let verify = |witness_key: &str| {
        fencepost()
            .args(["tlog", "verify", "--json", site.path().to_str().unwrap()])
            .args(["--vkey", &keys.vkey, "--witness", witness_key])
            .output()
            .unwrap()
    };
    // Not cosigned yet.
    let out = verify(&wvkey);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("carries no cosignature"));

    std::fs::write(wk.join("log/checkpoint"), &cosigned).unwrap();
    let out = verify(&wvkey);
    assert_success(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["witnessed"],
        serde_json::json!({"witness.example/w1": 1_764_806_400u64})
    );
    let (other, _) = witness("witness.example/w1");
    assert!(!verify(&other).status.success());

    // tlog-scales reads the same cosignature with its own verifier.
    let python =
        std::env::var("FENCEPOST_PYTHON").expect("FENCEPOST_PYTHON (scripts/test sets it)");
    let script = "import sys\nfrom tlog_scales.signing import Vkey\nfrom tlog_scales.tlog import Checkpoint\n\
        cp = Checkpoint.from_text(open(sys.argv[1]).read())\ncp.verify(Vkey.from_string(sys.argv[2]))\nprint('ok')\n";
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(wk.join("log/checkpoint"))
        .arg(&wvkey)
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "ok");
}
