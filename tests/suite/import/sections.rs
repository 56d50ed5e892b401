//! Sections as their generator made them (issue 48, points 2, 3 and 8): a section's own text
//! on its list URL, a section without pages kept at its URL, weight order, and list pages
//! numbered from the newest as Hugo and Zola number them.

use super::{import, site_at, source};
use crate::common::*;

const NOW: &str = "2026-12-01T00:00:00Z";

/// Guards: issue 48 (points 2, 3, 8): a Zola site's section text, a section of subsections
/// only, `sort_by = "weight"` and `paginate_by` all answer as Zola made them.
/// A Zola blog of five posts paginated by two, docs ordered by weight, and guides whose
/// section holds only a subsection: (path, text) of each file.
fn zola_sections() -> Vec<(String, String)> {
    let mut files = vec![
        ("config.toml".to_string(), "base_url = \"https://zola.example.org\"\ntitle = \"Docs\"\n".to_string()),
        ("content/blog/_index.md".into(), "+++\ntitle = \"The Blog\"\nsort_by = \"date\"\npaginate_by = 2\n+++\nWelcome to **the blog**.\n".into()),
        ("content/docs/_index.md".into(), "+++\ntitle = \"Docs\"\nsort_by = \"weight\"\n+++\n".into()),
        ("content/guides/_index.md".into(), "+++\ntitle = \"Guides\"\n+++\nEvery guide, [basics first](@/guides/basics/_index.md).\n".into()),
        ("content/guides/basics/_index.md".into(), "+++\ntitle = \"Basics\"\n+++\n".into()),
        ("content/guides/basics/start.md".into(), "+++\ntitle = \"Start\"\n+++\nStart here.\n".into()),
    ];
    for n in 1..=5 {
        files.push((
            format!("content/blog/post-{n}.md"),
            format!("+++\ntitle = \"Post {n}\"\ndate = 2026-0{n}-01\n+++\nPost number {n}.\n"),
        ));
    }
    for (name, weight) in [("setup", 20), ("intro", 10), ("advanced", 30)] {
        files.push((
            format!("content/docs/{name}.md"),
            format!("+++\ntitle = \"{name}\"\nweight = {weight}\n+++\nAbout {name}.\n"),
        ));
    }
    files
}

/// The posts `posts` appear on `page` in that order.
fn order(page: &str, posts: &[u32]) {
    let at: Vec<usize> = posts
        .iter()
        .map(|n| {
            page.find(&format!("/blog/post-{n}/"))
                .unwrap_or_else(|| panic!("post {n} not in {page}"))
        })
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "{posts:?} out of order in {page}"
    );
}

/// The blog's list URL is page 1 (the two newest, and the section's text); page/2/ the next
/// two, page/3/ the oldest; page/1/ redirects to the list URL.
fn the_blog_is_numbered_from_the_newest(srv: &Server) {
    let blog = srv.get("/blog/").text();
    assert!(
        blog.contains("Welcome to <strong>the blog</strong>."),
        "{blog}"
    );
    assert!(blog.contains("<h1>The Blog</h1>"), "{blog}");
    order(&blog, &[5, 4]);
    assert!(!blog.contains("/blog/post-3/"), "{blog}");
    assert!(
        blog.contains("href=\"/blog/page/2/\""),
        "an Older link: {blog}"
    );
    let two = srv.get("/blog/page/2/").text();
    order(&two, &[3, 2]);
    assert!(!two.contains("/blog/post-5/"), "{two}");
    order(&srv.get("/blog/page/3/").text(), &[1]);
    let one = srv.get("/blog/page/1/");
    assert_eq!((one.status, one.header("location")), (301, Some("/blog/")));
}

#[test]
fn a_zola_sites_sections_keep_their_text_their_order_and_their_page_numbers() {
    let files = zola_sections();
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let src = source(&files);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    import(tmp.path(), "zola", src.path(), &dst);
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 9, "{p}");
    assert_eq!(p["build"]["left_out"], serde_json::json!([]), "{p}");
    let srv = s.serve(&[]);
    the_blog_is_numbered_from_the_newest(&srv);
    // Docs read lightest first; each page's next is the heavier one.
    let docs = srv.get("/docs/").text();
    let at = |t: &str| docs.find(t).unwrap_or_else(|| panic!("{t}: {docs}"));
    assert!(
        at("/docs/intro/") < at("/docs/setup/") && at("/docs/setup/") < at("/docs/advanced/"),
        "{docs}"
    );
    let setup = srv.get("/docs/setup/").text();
    assert!(
        setup.contains("rel=\"prev\" href=\"/docs/intro/\"")
            && setup.contains("rel=\"next\" href=\"/docs/advanced/\""),
        "{setup}"
    );
    // A section of subsections only keeps its URL, with its text and its links resolved.
    let guides = srv.get("/guides/");
    assert_eq!(guides.status, 200);
    assert!(
        guides
            .text()
            .contains("<a href=\"/guides/basics/\">basics first</a>"),
        "{}",
        guides.text()
    );
    assert_eq!(srv.get("/guides/basics/start/").status, 200);
}

/// Guards: issue 48 (points 2, 3): a Hugo section whose pages have weights is ordered by them,
/// as Hugo orders it (weight 0 is none: after the weighted ones); a page whose URL changes is
/// listed under `moved` and redirected from where it was.
#[test]
fn a_hugo_section_with_weights_reads_in_weight_order() {
    let src = source(&[
        (
            "hugo.toml",
            "baseURL = \"https://hugo.example.org/\"\ntitle = \"Hugo\"\n",
        ),
        (
            "content/docs/_index.md",
            "---\ntitle: Documentation\n---\nAll the docs.\n",
        ),
        (
            "content/docs/b.md",
            "---\ntitle: B\nweight: 2\ndate: 2026-01-01\n---\nB.\n",
        ),
        (
            "content/docs/a.md",
            "---\ntitle: A\nweight: 1\ndate: 2026-01-02\n---\nA.\n",
        ),
        (
            "content/docs/z.md",
            "---\ntitle: Z\nweight: 0\ndate: 2026-01-03\nurl: /legacy/z.html\n---\nZ.\n",
        ),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "hugo", src.path(), &dst);
    assert_eq!(
        r["moved"],
        serde_json::json!([{"file": "content/docs/z.md", "from": "/legacy/z.html", "to": "/docs/z/"}]),
        "{r}"
    );
    let s = site_at(&dst);
    let p = s.json(&["publish", "--build", "--now", NOW]);
    assert_eq!(p["published"].as_array().unwrap().len(), 3, "{p}");
    let srv = s.serve(&[]);
    let docs = srv.get("/docs/").text();
    let at = |t: &str| docs.find(t).unwrap_or_else(|| panic!("{t}: {docs}"));
    assert!(
        at("/docs/a/") < at("/docs/b/") && at("/docs/b/") < at("/docs/z/"),
        "{docs}"
    );
    assert!(
        docs.contains("<h1>Documentation</h1>") && docs.contains("All the docs."),
        "{docs}"
    );
    let old = srv.get("/legacy/z.html");
    assert_eq!(
        (old.status, old.header("location")),
        (301, Some("/docs/z/"))
    );
}

/// Guards: issue 48 (point 7): a Zola site keeps its own templates, and whatever they can
/// reach — `get_section`, `get_taxonomy`, `get_url("@/…")`, `page.higher` — is the public set
/// of the revision: before its instant an embargoed post is in no file (its link is empty),
/// and at its instant every page that shows it, the unchanged older post's neighbour link
/// included, is rebuilt.
#[test]
fn a_zola_sites_own_templates_reach_only_what_is_public() {
    let index = "<html><body>{% set blog = get_section(path=\"blog/_index.md\") %}{% for p in blog.pages %}<a class=\"post\" href=\"{{ p.permalink | safe }}\">{{ p.title }}</a>{% endfor %}{% set t = get_taxonomy(kind=\"tags\") %}{% for term in t.items %}<span class=\"term\">{{ term.name }} ({{ term.page_count }})</span>{% endfor %}<a class=\"soon\" href=\"{{ get_url(path='@/blog/secret.md') | safe }}\">soon</a>{{ now() | date(format=\"%Y\") }}</body></html>";
    let page = "<html><body><h1>{{ page.title }}</h1>{{ page.content | safe }}{% if page.higher %}<a class=\"next\" href=\"{{ page.higher.permalink | safe }}\">{{ page.higher.title }}</a>{% endif %}</body></html>";
    let section = "<html><body><h1>{{ section.title }}</h1>{% for p in section.pages %}<a href=\"{{ p.permalink | safe }}\">{{ p.title }}</a>{% endfor %}</body></html>";
    let term = "<html><body>{{ term.name }}{% for p in term.pages %}<a href=\"{{ p.permalink | safe }}\">{{ p.title }}</a>{% endfor %}</body></html>";
    let terms = "<html><body>{% for t in terms %}<a href=\"{{ t.permalink | safe }}\">{{ t.name }}</a>{% endfor %}</body></html>";
    let src = source(&[
        ("config.toml", "base_url = \"https://zola.example.org\"\ntitle = \"Z\"\ntaxonomies = [{ name = \"tags\" }]\n"),
        ("templates/index.html", index),
        ("templates/page.html", page),
        ("templates/section.html", section),
        ("templates/tags/single.html", term),
        ("templates/tags/list.html", terms),
        ("templates/404.html", "<html><body>gone</body></html>"),
        ("content/blog/_index.md", "+++\ntitle = \"Blog\"\n+++\n"),
        ("content/blog/public.md", "+++\ntitle = \"Open post\"\ndate = 2026-01-01\n[taxonomies]\ntags = [\"open\"]\n+++\nHello.\n"),
        ("content/blog/secret.md", "+++\ntitle = \"Secret Zeppelin\"\ndate = 2026-12-02T09:00:00Z\n[taxonomies]\ntags = [\"zeppelin\"]\n+++\nThe airship.\n"),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    assert!(
        !r["not_converted"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["file"].as_str().unwrap().starts_with("templates")),
        "{r}"
    );
    let s = site_at(&dst);
    s.json(&["publish", "--build", "--now", NOW]);
    let before = files_under(&s.current_dir());
    assert_nothing_reveals(
        "the revision before the instant",
        &before,
        &["Zeppelin", "zeppelin", "secret", "airship"],
    );
    let home = s.current_file("index.html");
    assert!(
        home.contains("Open post") && home.contains("open (1)"),
        "{home}"
    );
    assert!(home.contains("<a class=\"soon\" href=\"\">"), "{home}");
    let b = s.json(&["publish", "--build", "--now", "2026-12-02T09:00:00Z"]);
    assert_eq!(b["published"], serde_json::json!(["blog/secret"]), "{b}");
    let home = s.current_file("index.html");
    assert!(
        home.contains("Secret Zeppelin") && home.contains("zeppelin (1)"),
        "{home}"
    );
    assert!(
        home.contains("<a class=\"soon\" href=\"/blog/secret/\">"),
        "{home}"
    );
    let open = s.current_file("blog/public/index.html");
    assert!(
        open.contains("<a class=\"next\" href=\"/blog/secret/\">Secret Zeppelin</a>"),
        "{open}"
    );
    assert!(s
        .current_file("tags/zeppelin/index.html")
        .contains("Secret Zeppelin"));
    assert!(s
        .current_file("blog/index.html")
        .contains("Secret Zeppelin"));
}

/// Guards: issue 48 (point 7), as issues 79.1 and 81 changed it: a Zola template whose call
/// fails for its page (`resize_image` of a file that is not there) keeps the theme's
/// templates — no function of Zola's sends an import to the starters any more (issue 81
/// brought `resize_image`) — and only the page rendered with it is held, the file named (it
/// used to be all or nothing: the starters stood in for every template).
#[test]
fn a_zola_template_that_cannot_run_is_named_and_costs_only_its_pages() {
    let src = source(&[
        (
            "config.toml",
            "base_url = \"https://zola.example.org\"\ntitle = \"Z\"\n",
        ),
        (
            "templates/index.html",
            "<html>\n{% set d = resize_image(path=\"x.jpg\", width=1, height=1) %}{{ d }}\n</html>",
        ),
        (
            "templates/page.html",
            "<html><article>{{ page.content | safe }}</article></html>",
        ),
        ("content/blog/_index.md", "+++\ntitle = \"Blog\"\n+++\n"),
        (
            "content/blog/a.md",
            "+++\ntitle = \"A\"\ndate = 2026-01-01\n+++\nA.\n",
        ),
    ]);
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("site");
    let r = import(tmp.path(), "zola", src.path(), &dst);
    let named = r["not_converted"]
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["file"] == "templates/index.html" && u["what"] == "resize_image");
    assert!(!named, "resize_image runs: {r}");
    let toml = std::fs::read_to_string(dst.join("fencepost.toml")).unwrap();
    assert!(toml.contains("templates = \"zola\""), "{toml}");
    let s = site_at(&dst);
    let out = s
        .cmd(&["publish", "--build", "--json", "--now", NOW])
        .output()
        .unwrap();
    let p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(HELD), "{p}");
    assert_eq!(p["published"], serde_json::json!(["blog/a"]), "{p}");
    assert_eq!(p["build"]["held_pages"][0]["path"], "index.html", "{p}");
    let why = p["build"]["held_pages"][0]["why"].as_str().unwrap();
    assert!(why.contains("resize_image") && why.contains("x.jpg"), "{p}");
    assert!(s.current_file("blog/a/index.html").contains("<article>"));
}
