//! The seeds' cron scenario: two `publish --build && deploy` pipelines at once, round after
//! round, against S3 through a proxy that counts every upload — each item, image and object
//! exactly once.
use super::*;

/// An image server with `/1.png` … `/6.png`; its base URL and how often it was asked.
fn six_images() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let png = |n: u8| {
        let mut b = b"\x89PNG\r\n\x1a\n".to_vec();
        b.push(n);
        b
    };
    image_server(
        (1..=6u8)
            .map(|i| {
                let path: &'static str = Box::leak(format!("/{i}.png").into_boxed_str());
                (path, 200, png(i))
            })
            .collect(),
    )
}

/// One cron pipeline, `publish --build && deploy --to s3://cron/www` at `now`, on a thread;
/// its publish and deploy JSON.
fn cron_pipeline(
    root: std::path::PathBuf,
    env: Vec<(String, String)>,
    now: String,
) -> std::thread::JoinHandle<(serde_json::Value, serde_json::Value)> {
    std::thread::spawn(move || {
        let run = |args: &[&str]| {
            let mut c = fencepost();
            c.arg("--site")
                .arg(&root)
                .args(args)
                .args(["--json", "--now", &now]);
            for (k, v) in &env {
                c.env(k, v);
            }
            let out = c.output().unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
        };
        let p = run(&["publish", "--build"]);
        let d = run(&["deploy", "--to", "s3://cron/www"]);
        (p, d)
    })
}

#[test]
fn two_cron_pipelines_publish_build_and_deploy_each_thing_once() {
    let moto = Moto::start();
    moto.bucket("cron");
    let proxy = Proxy::start(&moto.endpoint, false);
    let (base, hits) = six_images();
    let s = TestSite::new();
    for i in 1..=6 {
        s.item_with(
            i,
            &format!("2026-11-0{i}"),
            &format!("image = \"{base}/{i}.png\"\n"),
            &format!("Answer body for item {i}."),
        );
    }
    s.publish("2026-11-01T00:00:00Z");
    let pipeline =
        |now: String| cron_pipeline(s.root().to_path_buf(), Moto::env(&proxy.endpoint), now);
    let mut published = Vec::new();
    for round in 1..=4 {
        let now = format!("2026-12-0{round}T00:00:00Z");
        let (a, b) = (pipeline(now.clone()), pipeline(now));
        for (p, _) in [a.join().unwrap(), b.join().unwrap()] {
            published.extend(ids(&p, "published"));
        }
    }
    published.sort();
    assert_eq!(published, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(s.revision(), 6);
    assert_eq!(hits.load(Ordering::SeqCst), 6, "each image fetched once");
    // The bucket serves revision 6; every object was uploaded exactly once.
    let puts = proxy.puts();
    let mut per_key: BTreeMap<String, usize> = BTreeMap::new();
    for p in puts
        .iter()
        .filter(|p| !p.contains("fencepost-probe") && !p.ends_with("/current"))
    {
        *per_key.entry(p.clone()).or_default() += 1;
    }
    assert!(per_key.values().all(|n| *n == 1), "{per_key:#?}");
    // Two more pipelines at once: nothing to publish, nothing to upload.
    let before = proxy.puts().len();
    let (a, b) = (
        pipeline("2026-12-09T00:00:00Z".into()),
        pipeline("2026-12-09T00:00:00Z".into()),
    );
    for (p, d) in [a.join().unwrap(), b.join().unwrap()] {
        assert!(ids(&p, "published").is_empty());
        assert_eq!(d["blobs_uploaded"], 0, "{d}");
    }
    assert_eq!(
        proxy.puts().len(),
        before,
        "the last two runs upload nothing"
    );
    let settings = Moto::settings(&moto.endpoint);
    let settings: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let remote = Remote::open_with("s3://cron/www", &settings).unwrap();
    let (live, _) = rt().block_on(remote.read_pointer()).unwrap().unwrap();
    assert_eq!(live.id.revision, 6);
    s.cmd(&["verify"]).assert().success();
}
