//! `fencepost preview deploy|link|rm` and `gc` against a folder bucket (issue 80; the four
//! origins' table is `origins/previews.rs`). The adversaries here: the operator's own
//! pipeline (a preview must decide nothing — no ledger entry, no public object, no pointer
//! move), a runner killed mid-upload, a reader given no key, and time (a preview ends).

use super::*;
use serde_json::Value;

const BEFORE: &str = "2026-12-01T00:00:00Z";
const LAUNCH: &str = "2026-12-02T09:00:00Z";

/// The features site published and built before `posts/secret`'s instant, deployed to a
/// folder bucket, with a draft, a post due after the secret one, and an unpublished edit.
fn site_with_changes() -> (TestSite, String) {
    let s = fixture("features");
    s.publish(BEFORE);
    s.json(&["build"]);
    let bucket = format!("file://{}", s.path("bucket").display());
    s.json(&["deploy", "--to", &bucket, "--now", BEFORE]);
    s.write(
        "content/posts/later.md",
        "+++\ntitle = \"Later news\"\npublish_at = 2026-12-09T09:00:00Z\n+++\n\nNot yet.\n",
    );
    s.write(
        "content/posts/wip.md",
        "+++\ntitle = \"Work in progress\"\npublish_at = 2026-12-01T12:00:00Z\ndraft = true\n+++\n\nA draft.\n",
    );
    let hello = std::fs::read_to_string(s.path("content/posts/hello.md")).unwrap();
    s.write(
        "content/posts/hello.md",
        &format!("{hello}\nAn edit not yet published.\n"),
    );
    (s, bucket)
}

/// The paths of the preview `preview deploy` built last.
fn preview_paths(s: &TestSite) -> Vec<String> {
    let m: Value = serde_json::from_slice(
        &std::fs::read(s.path(".fencepost/preview-deploy/.fencepost/manifest.json")).unwrap(),
    )
    .unwrap();
    (m["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// Every file of the bucket outside `previews/`, with its bytes.
fn public_area(bucket: &str) -> BTreeMap<String, Vec<u8>> {
    let root = Path::new(bucket.strip_prefix("file://").unwrap());
    walkdir::WalkDir::new(root)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (rel, std::fs::read(e.path()).unwrap())
        })
        .filter(|(rel, _)| !rel.starts_with("previews/") && !rel.ends_with(".lock"))
        .collect()
}

#[test]
fn a_preview_shows_the_site_as_of_its_instant_and_decides_nothing() {
    let (s, bucket) = site_with_changes();
    let status = s.status();
    let log = s.json(&["log"]);
    let public = public_area(&bucket);
    let deploy = |extra: &[&str]| {
        let args = [
            &[
                "preview", "deploy", "pr-1", "--to", &bucket, "--now", BEFORE,
            ][..],
            extra,
        ]
        .concat();
        s.json(&args)
    };
    let d = deploy(&["--as-of", LAUNCH]);
    let paths = preview_paths(&s);
    assert!(
        paths.contains(&"posts/secret/index.html".to_string()),
        "{paths:?}"
    );
    for absent in ["posts/later/index.html", "posts/wip/index.html"] {
        assert!(
            !paths.contains(&absent.to_string()),
            "{absent} shown as of {LAUNCH}"
        );
    }
    let hello = std::fs::read_to_string(s.path(".fencepost/preview-deploy/posts/hello/index.html"))
        .unwrap();
    assert!(hello.contains("An edit not yet published."), "{hello}");
    only_what_differs_went_up(&s, &d);
    deploy(&[]);
    assert!(
        preview_paths(&s).contains(&"posts/later/index.html".to_string()),
        "every scheduled item"
    );
    assert!(!preview_paths(&s).contains(&"posts/wip/index.html".to_string()));
    deploy(&["--drafts"]);
    assert!(
        preview_paths(&s).contains(&"posts/wip/index.html".to_string()),
        "--drafts"
    );
    // `--as-of next`: the next instant an item is due (the draft due before it does not count).
    let v = s.json(&[
        "preview", "deploy", "pr-2", "--to", &bucket, "--as-of", "next", "--now", BEFORE,
    ]);
    assert_eq!(v["files"], d["files"], "{v}");
    // Nothing decided: the ledger, its audit log and the public area are as they were.
    assert_eq!(s.status(), status);
    assert_eq!(s.json(&["log"]), log);
    assert!(
        public_area(&bucket) == public,
        "a preview deploy changed the public area"
    );
    // And the public deploy after it leaves the previews alone.
    s.publish(LAUNCH);
    s.json(&["build"]);
    s.json(&["deploy", "--to", &bucket, "--now", LAUNCH]);
    let listed = s.json(&["preview", "list", "--to", &bucket, "--now", LAUNCH]);
    assert_eq!(listed["previews"].as_array().unwrap().len(), 2, "{listed}");
}

/// Only what differs from the public revision went up: the changed pages, their lists and
/// feeds, the shards naming them, the root and the pointer.
fn only_what_differs_went_up(s: &TestSite, d: &Value) {
    assert!(d["reused_public"].as_u64().unwrap() > 10, "{d}");
    let own = |rel: &str| {
        let bytes = std::fs::read(s.path(&format!(".fencepost/preview-deploy/{rel}"))).unwrap();
        let sha = fencepost_core::digest::sha256_hex(&bytes);
        s.path(&format!("bucket/previews/pr-1/objects/{sha}"))
            .exists()
    };
    for unchanged in [
        "about/index.html",
        "advisories/adv-1/index.html",
        "style.css",
    ] {
        assert!(!own(unchanged), "{unchanged} uploaded again");
    }
    for changed in [
        "posts/secret/index.html",
        "posts/hello/index.html",
        "index.html",
    ] {
        assert!(own(changed), "{changed} not in the preview's own objects");
    }
}

#[test]
fn without_a_key_no_preview_is_made_or_served() {
    let (s, bucket) = site_with_changes();
    let out = s
        .cmd(&["preview", "deploy", "pr-1", "--to", &bucket, "--json"])
        .env_remove("FENCEPOST_PREVIEW_KEY")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("FENCEPOST_PREVIEW_KEY") && msg.contains("preview keygen"),
        "{msg}"
    );
    assert!(!s.path("bucket/previews").exists(), "nothing written");
    // Made with the key, served by an origin without it: the site's 404.
    s.json(&[
        "preview", "deploy", "pr-1", "--as-of", LAUNCH, "--now", BEFORE,
    ]);
    let target = s.preview_target("pr-1");
    // An empty key is no key.
    let srv = s.serve_env(&[], &[("FENCEPOST_PREVIEW_KEY".into(), String::new())]);
    assert_eq!(srv.get(&target).status, 404);
    let keyed = s.serve(&[]);
    assert_eq!(keyed.get(&target).status, 303);
}

#[cfg(feature = "failpoints")]
#[test]
fn a_preview_deploy_killed_before_its_pointer_is_finished_by_the_next_run() {
    let (s, bucket) = site_with_changes();
    let public = public_area(&bucket);
    let args = [
        "preview", "deploy", "pr-1", "--to", &bucket, "--as-of", LAUNCH, "--now", BEFORE, "--json",
    ];
    let out = s.with_failpoints(&args, "preview.before_pointer=return");
    assert_eq!(out.status.code(), Some(137));
    let pointer = s.path("bucket/previews/pr-1/preview.json");
    assert!(!pointer.exists(), "the pointer goes last");
    let list = s.json(&["preview", "list", "--to", &bucket]);
    assert_eq!(
        list["previews"],
        serde_json::json!([]),
        "a half-made preview is not listed"
    );
    let again = s.json(&args[..args.len() - 1]);
    assert!(pointer.exists());
    assert_eq!(
        again["uploaded_objects"], 1,
        "only the pointer was left: {again}"
    );
    assert!(public_area(&bucket) == public);
}

#[test]
fn gc_ends_previews_past_their_days_and_keeps_what_the_others_read() {
    let (s, bucket) = site_with_changes();
    s.json(&[
        "preview", "deploy", "pr-1", "--to", &bucket, "--as-of", LAUNCH, "--now", BEFORE,
    ]);
    s.json(&[
        "preview", "deploy", "pr-1", "--as-of", LAUNCH, "--now", BEFORE,
    ]);
    let p: Value = serde_json::from_slice(
        &std::fs::read(s.path("bucket/previews/pr-1/preview.json")).unwrap(),
    )
    .unwrap();
    // The public revision moves on; gc keeps one: the public objects pr-1 reads stay.
    s.publish(LAUNCH);
    s.json(&["build"]);
    s.json(&["deploy", "--to", &bucket, "--now", LAUNCH]);
    let gc = s.json(&["gc", "--to", &bucket, "--keep", "1", "--grace-secs", "0"]);
    assert!(gc["removed_manifests"].as_u64().unwrap() >= 1, "{gc}");
    assert_eq!(gc["removed_previews"], serde_json::json!([]), "{gc}");
    let root: Value = serde_json::from_slice(
        &std::fs::read(s.path(&format!(
            "bucket/previews/pr-1/manifests/{}.json",
            p["manifest"].as_str().unwrap()
        )))
        .unwrap(),
    )
    .unwrap();
    let own: Vec<&str> = p["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    for (_, shard) in root["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x[0].clone(), x[1].as_str().unwrap().to_string()))
    {
        let in_own = s.path(&format!(
            "bucket/previews/pr-1/manifests/shards/{shard}.json"
        ));
        let path = if in_own.exists() {
            in_own
        } else {
            s.path(&format!("bucket/manifests/shards/{shard}.json"))
        };
        let entries: Vec<Value> = serde_json::from_slice(
            &std::fs::read(&path).unwrap_or_else(|_| panic!("shard {shard} collected")),
        )
        .unwrap();
        for e in entries {
            let sha = e["sha256"].as_str().unwrap();
            let at = if own.contains(&sha) {
                format!("bucket/previews/pr-1/objects/{sha}")
            } else {
                format!("bucket/objects/{sha}")
            };
            assert!(
                s.path(&at).exists(),
                "{} of the preview was collected",
                e["path"]
            );
        }
    }
    // Past preview.keep_days (14): gone, there and locally.
    let later = "2026-12-16T00:00:01Z";
    let gc = s.json(&["gc", "--to", &bucket, "--keep", "1", "--now", later]);
    assert_eq!(gc["removed_previews"], serde_json::json!(["pr-1"]), "{gc}");
    assert!(!s.path("bucket/previews/pr-1/preview.json").exists());
    let gc = s.json(&["gc", "--keep", "1", "--now", later]);
    assert_eq!(gc["removed_previews"], serde_json::json!(["pr-1"]), "{gc}");
    assert_eq!(
        s.json(&["preview", "list"])["previews"],
        serde_json::json!([])
    );
}

/// A `--to` naming another site's bucket (a co-tenant's, a copied workflow's): refused,
/// nothing written beside that site's pages.
#[test]
fn a_preview_of_one_site_is_refused_in_another_sites_bucket() {
    let (s, bucket) = site_with_changes();
    let other = fixture("features");
    other.publish(BEFORE);
    let out = other
        .cmd(&[
            "preview", "deploy", "pr-1", "--to", &bucket, "--now", BEFORE, "--json",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("belongs to ledger"), "{msg}");
    assert!(!s.path("bucket/previews").exists(), "nothing written");
}
