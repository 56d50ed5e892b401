//! An imported site on every origin (issue 48, "Done when"): Zola's own documentation,
//! imported with its own templates, published, deployed to a folder and to S3 (moto), and
//! served by `serve`, `serve --from file://`, `serve --from s3://` and the edge Worker — every
//! page Zola published at the URL Zola gave it, every section that redirected still
//! redirecting, alike on all four.

use super::{import, site_at};
use crate::common::*;
use std::path::Path;

const NOW: &str = "2026-12-01T00:00:00Z";

/// Guards: issue 48 (points 2, 7): the imported Zola documentation site answers at its old
/// URLs on all four origins, with the same status, `Location` and body.
#[test]
fn zolas_documentation_answers_at_its_old_urls_on_all_four_origins() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/zola-docs");
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    import(tmp.path(), "zola", &fixture, &dst);
    let s = site_at(&dst);
    s.json(&["publish", "--build", "--now", NOW]);
    let folder = tempfile::tempdir().unwrap();
    let to_folder = format!("file://{}", folder.path().display());
    s.json(&["deploy", "--to", &to_folder, "--now", NOW]);
    let moto = Moto::start();
    moto.bucket("site");
    let env = Moto::env(&moto.endpoint);
    s.json_env(&["deploy", "--to", "s3://site/www", "--now", NOW], &env);
    let local = s.serve(&[]);
    let from_folder = s.serve(&["--from", &to_folder]);
    let from_s3 = s.serve_env(&["--from", "s3://site/www"], &env);
    let edge = Edge::start(folder.path(), "", &[]);
    let mut urls = vec!["/".to_string(), "/themes/".into(), "/theme-tags/".into()];
    urls.extend(super::zola_old_urls(&fixture.join("content")));
    let redirects = [
        (
            "/documentation/",
            "/documentation/getting-started/overview/",
        ),
        (
            "/documentation/content/",
            "/documentation/content/overview/",
        ),
        (
            "/documentation/templates/",
            "/documentation/templates/overview/",
        ),
    ];
    for url in &urls {
        let answers = [
            local.get(url),
            from_folder.get(url),
            from_s3.get(url),
            edge.get(url),
        ];
        for (i, a) in answers.iter().enumerate() {
            assert_eq!(a.status, 200, "{url} on origin {i}");
            assert_eq!(
                a.body, answers[0].body,
                "{url}: origin {i} answers other bytes"
            );
        }
    }
    for (from, to) in redirects {
        for (i, a) in [
            local.get(from),
            from_folder.get(from),
            from_s3.get(from),
            edge.get(from),
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(
                (a.status, a.header("location")),
                (301, Some(to)),
                "{from} on origin {i}"
            );
        }
    }
}
