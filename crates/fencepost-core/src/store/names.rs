//! How a target is named: one canonical name per bucket (what every rule keyed by a target
//! uses), and URLs shown without their credentials.

/// One bucket, one name: the target `url` names, spelt one way, so every rule keyed by a
/// target — its lease, the one pending operation, gc's protection, probe memory, what the
/// ledger records as deployed — sees one target whatever spelling a command was given.
/// `s3a://` is `s3://`; empty path segments and a trailing slash go (`s3://x/www/` is
/// `s3://x/www`, `file:///b/` is `file:///b`); a query or fragment is no part of it.
/// The endpoint is no part of it: see [`target_key`], which the ledger keys targets by.
pub fn canonical(url: &str) -> String {
    let Ok(u) = url::Url::parse(url) else {
        return url.to_string();
    };
    let scheme = match u.scheme() {
        "s3a" => "s3",
        other => other,
    };
    let path: Vec<&str> = u.path().split('/').filter(|s| !s.is_empty()).collect();
    let host = u.host_str().unwrap_or_default();
    let path = path.join("/");
    match (scheme, path.is_empty()) {
        ("file", true) => "file:///".to_string(),
        ("file", false) => format!("file:///{path}"),
        (_, true) => format!("{scheme}://{host}"),
        (_, false) => format!("{scheme}://{host}/{path}"),
    }
}

/// Whether the stores `a` and `b` name overlap: the same bucket, and one's prefix is the
/// other's or lies inside it (by whole path segments: `s3://x/www` holds `s3://x/www/ledger`,
/// not `s3://x/www2`) — under every spelling of either. The adversary is a spelling: what
/// this guards (a deploy or an origin never over a ledger) must not be walked around by
/// writing the same place another way. So paths are compared percent-decoded (`%73ite` is
/// `site`), and two `file://` folders as the file system resolves them: symbolic links
/// followed (the longest part that exists), and a folder the same file as an ancestor of
/// the other's — by device and inode, so a case-folding file system (`Site` is `site` on
/// macOS and Windows) or a bind mount is caught too.
pub fn overlaps(a: &str, b: &str) -> bool {
    if let (Some(pa), Some(pb)) = (file_path(a), file_path(b)) {
        return folder_inside(&pa, &pb) || folder_inside(&pb, &pa);
    }
    let (a, b) = (decoded(&canonical(a)), decoded(&canonical(b)));
    let inside = |outer: &str, inner: &str| {
        inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with('/') || outer.ends_with('/'))
    };
    inside(&a, &b) || inside(&b, &a)
}

/// `url` percent-decoded (where it decodes to UTF-8).
fn decoded(url: &str) -> String {
    percent_encoding::percent_decode_str(url)
        .decode_utf8()
        .map_or_else(|_| url.to_string(), |s| s.into_owned())
}

/// The folder a `file://` URL names, as the store opens it (percent-decoded).
fn file_path(url: &str) -> Option<std::path::PathBuf> {
    let u = url::Url::parse(url).ok()?;
    (u.scheme() == "file").then(|| u.to_file_path().ok())?
}

/// `p` with symbolic links resolved in the longest part of it that exists.
fn resolved(p: &std::path::Path) -> std::path::PathBuf {
    let mut rest = Vec::new();
    let mut at = p;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |acc, c| acc.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// Whether folder `inner` is `outer` or lies inside it: by path once links are resolved, or
/// by identity (an existing ancestor of `inner` that is the same file as `outer`).
fn folder_inside(outer: &std::path::Path, inner: &std::path::Path) -> bool {
    let (outer, inner) = (resolved(outer), resolved(inner));
    if inner.starts_with(&outer) {
        return true;
    }
    let Ok(outer) = same_file::Handle::from_path(&outer) else {
        return false;
    };
    inner
        .ancestors()
        .filter_map(|a| same_file::Handle::from_path(a).ok())
        .any(|h| h == outer)
}

/// What the ledger keys a target by: its [`canonical`] name, and for a store reached at an
/// endpoint of its own (`AWS_ENDPOINT_URL`: MinIO, R2, a test server) that endpoint, without
/// credentials or a trailing slash — `s3://x/www via http://127.0.0.1:9000`. Two stores that
/// share a bucket name behind different endpoints are two targets, with a lease, a pending
/// operation and gc's protection each. A target on AWS's own endpoint keeps its bare name.
/// (Ledgers written before the endpoint was part of the key name such targets without it:
/// `deploy::claim::name_target` hands those rows to the first endpoint that uses them.)
pub fn target_key(url: &str, endpoint: Option<&str>) -> String {
    let name = canonical(url);
    match endpoint.filter(|e| !e.is_empty()) {
        Some(e) => format!("{name} via {}", canonical_endpoint(e)),
        None => name,
    }
}

/// The key an older fencepost gave the same target: the endpoint as it was spelt, credentials
/// dropped, nothing else. Rows keyed by it go to [`target_key`]'s, once (see
/// `targets::claim::name_target`).
pub fn target_key_as_spelt(url: &str, endpoint: Option<&str>) -> String {
    let name = canonical(url);
    let Some(endpoint) = endpoint.filter(|e| !e.is_empty()) else {
        return name;
    };
    let endpoint = match url::Url::parse(endpoint) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => endpoint.to_string(),
    };
    format!("{name} via {}", endpoint.trim_end_matches('/'))
}

/// One endpoint, one name: scheme and host in lower case and the scheme's default port
/// dropped (the `url` crate's own rules), no credentials, query or trailing slash, and every
/// spelling of this machine's loopback — `localhost`, `127.0.0.0/8`, `[::1]` — as `127.0.0.1`:
/// `http://LOCALHOST:9000/` and `http://127.0.0.1:9000` are one server, and the rules keyed by
/// a target (its lease above all) must see one target.
pub fn canonical_endpoint(endpoint: &str) -> String {
    let Ok(mut u) = url::Url::parse(endpoint.trim()) else {
        return endpoint.trim().trim_end_matches('/').to_string();
    };
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    let loopback = match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    if loopback {
        let _ = u.set_host(Some("127.0.0.1"));
    }
    u.to_string().trim_end_matches('/').to_string()
}

/// `text` with the user and password of every URL in it replaced by `***`: a store's error
/// names the URL it failed on, and an endpoint such as `AWS_ENDPOINT_URL=http://key:secret@…`
/// must never reach a log, an error or JSON.
pub fn redact_userinfo(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let (head, tail) = rest.split_at(i + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| {
                c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        match tail[..end].rfind('@') {
            Some(at) => {
                out.push_str("***");
                out.push_str(&tail[at..end]);
            }
            None => out.push_str(&tail[..end]),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

pub fn shown(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if !u.username().is_empty() || u.password().is_some() {
                let _ = u.set_username("");
                let _ = u.set_password(None);
                return u.to_string().replacen("://", "://***@", 1);
            }
            u.to_string()
        }
        Err(_) => match url.split_once(':') {
            Some((scheme, _)) if !scheme.contains('@') => format!("{scheme}:… (not a URL)"),
            _ => "(not a URL)".to_string(),
        },
    }
}

#[cfg(test)]
mod canonical_tests {
    #[test]
    fn one_server_is_one_endpoint_whatever_its_spelling() {
        use super::{canonical_endpoint, target_key};
        for e in [
            "http://127.0.0.1:9000",
            "http://localhost:9000/",
            "HTTP://LocalHost:9000",
            "http://127.0.0.2:9000",
            "http://[::1]:9000",
            "http://key:secret@localhost:9000/",
        ] {
            assert_eq!(canonical_endpoint(e), "http://127.0.0.1:9000", "{e}");
        }
        assert_eq!(
            canonical_endpoint("https://S3.Example.com:443/"),
            "https://s3.example.com"
        );
        assert_eq!(canonical_endpoint("http://minio:80"), "http://minio");
        assert_eq!(
            target_key("s3://x/www/", Some("http://localhost:9000/")),
            target_key("s3://x/www", Some("http://127.0.0.1:9000"))
        );
    }

    #[test]
    fn overlapping_prefixes_are_told_by_whole_segments() {
        use super::overlaps;
        assert!(overlaps("s3://x/www", "s3://x/www/ledger"));
        assert!(overlaps("s3://x/ledger/", "s3a://x/ledger"));
        assert!(overlaps("s3://x", "s3://x/ledger"));
        assert!(overlaps("file:///b/site", "file:///b/site/ledger"));
        assert!(!overlaps("s3://x/www", "s3://x/www2"));
        assert!(!overlaps("s3://x/www", "s3://x/ledger"));
        assert!(!overlaps("s3://x/www", "s3://y/www"));
        assert!(overlaps("s3://x/%77ww", "s3://x/www/ledger"));
        assert!(overlaps("file:///b/%73ite", "file:///b/site/ledger"));
    }

    /// A folder reached through a symbolic link, or under the spelling of another case where
    /// the file system folds it, is the folder.
    #[test]
    fn folders_overlap_as_the_file_system_resolves_them() {
        use super::overlaps;
        let tmp = tempfile::tempdir().unwrap();
        let site = tmp.path().join("site");
        std::fs::create_dir_all(site.join("ledger")).unwrap();
        let link = tmp.path().join("link");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&site, &link).unwrap();
        let url = |p: &std::path::Path| url::Url::from_file_path(p).unwrap().to_string();
        let ledger = url(&site.join("ledger"));
        #[cfg(unix)]
        assert!(overlaps(&url(&link), &ledger));
        #[cfg(unix)]
        assert!(overlaps(&url(&link.join("ledger/x")), &ledger));
        assert!(overlaps(&url(&site.join("ledger/new/deeper")), &ledger));
        assert!(!overlaps(&url(&tmp.path().join("other")), &ledger));
        let upper = tmp.path().join("SITE");
        let folds = upper.exists();
        assert_eq!(overlaps(&url(&upper), &ledger), folds);
    }

    #[test]
    fn one_bucket_has_one_name() {
        use super::canonical;
        for (a, b) in [
            ("s3://x/www", "s3://x/www/"),
            ("s3://x/www", "s3a://x//www/"),
            ("s3://x", "s3://x/"),
            ("file:///b", "file:///b/"),
            ("file:///b/c", "file:///b//c/"),
            ("gs://g/p", "gs://g/p/"),
        ] {
            assert_eq!(canonical(a), canonical(b), "{a} {b}");
            assert_eq!(canonical(a), a);
        }
        assert_ne!(canonical("s3://x/www"), canonical("s3://x/www2"));
        use super::target_key;
        assert_eq!(target_key("s3://x/www/", None), "s3://x/www");
        // Loopback spellings are one (issue 47.9): keys from before go to this one, once.
        assert_eq!(
            target_key("s3a://x/www/", Some("http://K:S@LocalHost:9000/")),
            "s3://x/www via http://127.0.0.1:9000"
        );
        assert_eq!(
            target_key("s3://x/www", Some("http://localhost:9000")),
            target_key("s3://x/www/", Some("http://localhost:9000/"))
        );
        assert_ne!(
            target_key("s3://x/www", Some("http://localhost:9000")),
            target_key("s3://x/www", Some("http://localhost:9001"))
        );
        assert_ne!(canonical("s3://x/www"), canonical("s3://y/www"));
    }
}

#[cfg(test)]
mod redact_tests {
    #[test]
    fn credentials_in_urls_are_redacted() {
        let r = super::redact_userinfo(
            "error sending request for url (http://AKIA:s3cr3t@127.0.0.1:9/b/k?x=1): refused; also https://u@h/p",
        );
        assert!(
            !r.contains("s3cr3t") && !r.contains("AKIA") && !r.contains("u@"),
            "{r}"
        );
        assert!(
            r.contains("http://***@127.0.0.1:9/b/k?x=1") && r.contains("https://***@h/p"),
            "{r}"
        );
        assert_eq!(
            super::redact_userinfo("plain http://h:1/x"),
            "plain http://h:1/x"
        );
    }
}
