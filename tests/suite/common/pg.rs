//! A throw-away PostgreSQL cluster for the test process, and sites whose ledger lives there.
#![allow(dead_code)]

use super::*;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// A throw-away PostgreSQL cluster for this test process: initdb into a temporary folder,
/// `postgres` on 127.0.0.1 at a free port, stopped when the process ends (the server gets
/// SIGINT, a fast shutdown, from the kernel when the thread that started it exits, and that
/// thread lives as long as the process). Each test gets a database of its own.
///
/// The binaries come from `FENCEPOST_PG_BIN`, or Debian's `/usr/lib/postgresql/<version>/bin`
/// (`scripts/test` installs them). A test that needs PostgreSQL fails, never skips, without it.
pub struct Pg {
    pub port: u16,
    pub dir: PathBuf,
}

static PG: std::sync::OnceLock<Pg> = std::sync::OnceLock::new();

pub fn pg() -> &'static Pg {
    PG.get_or_init(Pg::start)
}

fn pg_bin_dir() -> PathBuf {
    if let Ok(d) = std::env::var("FENCEPOST_PG_BIN") {
        return PathBuf::from(d);
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("postgres").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).unwrap_or_else(|| {
        panic!("PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/postgres (run scripts/test, which installs it, or set FENCEPOST_PG_BIN)")
    })
}

/// uid and gid of the `postgres` user, when running as root (PostgreSQL refuses root).
fn pg_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new("postgres").unwrap();
    // SAFETY: getpwnam is given a valid C string; the result is read at once.
    let pw = unsafe { libc::getpwnam(name.as_ptr()) };
    assert!(
        !pw.is_null(),
        "running as root and there is no `postgres` user to run the test cluster as (install Debian's postgresql package: scripts/test does)"
    );
    // SAFETY: checked non-null above.
    Some(unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
}

fn as_pg_user(c: &mut std::process::Command, user: Option<(u32, u32)>, die_with_parent: bool) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(move || {
            if let Some((uid, gid)) = user {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // Set after the uid change, which would clear it.
            if die_with_parent {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGINT);
            }
            Ok(())
        });
    }
}

impl Pg {
    fn start() -> Pg {
        let bin = pg_bin_dir();
        let user = pg_user();
        let base = std::env::temp_dir();
        remove_dead_clusters(&base);
        let dir = base.join(format!("fencepost-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).unwrap();
        }
        let (data, tls) = init_cluster(&bin, &dir, user);
        // A port found free is handed to the server, which binds it a moment later: another
        // process may take it between the two. The server then exits at once, and is started
        // again on another port (five tries), rather than failing every PostgreSQL test.
        let mut tries = 0;
        let pg = loop {
            tries += 1;
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            spawn_postgres(&bin, &data, &dir, &tls, port, user);
            let pg = Pg {
                port,
                dir: dir.clone(),
            };
            match pg.wait_until_up() {
                Ok(()) => break pg,
                Err(log) if tries < 5 => eprintln!("PostgreSQL lost port {port}:\n{log}"),
                Err(log) => panic!("PostgreSQL lost its port five times over:\n{log}"),
            }
        };
        let mut c = ::postgres::Client::connect(&pg.url("postgres"), ::postgres::NoTls).unwrap();
        c.batch_execute("CREATE ROLE tlsonly LOGIN SUPERUSER")
            .unwrap();
        pg
    }

    /// Waits (at most a minute) until the server takes connections; `Err` with its log when
    /// it could not listen on its port (taken by another process meanwhile).
    fn wait_until_up(&self) -> Result<(), String> {
        let pg = self;
        let log = || std::fs::read_to_string(pg.dir.join("server.log")).unwrap_or_default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match ::postgres::Client::connect(&pg.url("postgres"), ::postgres::NoTls) {
                Ok(_) => return Ok(()),
                Err(_) if log().contains("could not create any TCP/IP sockets") => {
                    return Err(log())
                }
                Err(e) if std::time::Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => panic!("the test PostgreSQL did not come up: {e}\n{}", log()),
            }
        }
    }

    /// The CA that signed the test server's certificate (for `sslrootcert`).
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.join("tls").join("ca.crt")
    }

    pub fn url(&self, db: &str) -> String {
        format!("postgres://fencepost@127.0.0.1:{}/{db}", self.port)
    }

    /// A new, empty database; returns its URL.
    pub fn database(&self) -> String {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let mut c = ::postgres::Client::connect(&self.url("postgres"), ::postgres::NoTls).unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        self.url(&name)
    }

    pub fn client(url: &str) -> ::postgres::Client {
        ::postgres::Client::connect(url, ::postgres::NoTls).unwrap()
    }
}

/// Removes the clusters of test processes that died without cleaning up.
fn remove_dead_clusters(base: &Path) {
    for e in std::fs::read_dir(base).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix("fencepost-pg-") {
            if pid
                .parse::<i32>()
                // SAFETY: kill with signal 0 only checks whether the process exists.
                .is_ok_and(|p| unsafe { libc::kill(p, 0) } != 0)
            {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}

/// A new cluster in `dir` (initdb, the test TLS files, the `tlsonly` rule): its data folder
/// and TLS folder.
fn init_cluster(bin: &Path, dir: &Path, user: Option<(u32, u32)>) -> (PathBuf, PathBuf) {
    let data = dir.join("data");
    let mut init = std::process::Command::new(bin.join("initdb"));
    init.arg("-D")
        .arg(&data)
        .args([
            "-A",
            "trust",
            "-U",
            "fencepost",
            "-E",
            "UTF8",
            "--no-sync",
            "--locale=C",
        ])
        .stdout(Stdio::null());
    as_pg_user(&mut init, user, false);
    let out = init.output().expect("run initdb");
    assert!(
        out.status.success(),
        "initdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tls = test_tls(dir, user);
    // The role `tlsonly` may connect over TLS only: a test can tell TLS was used.
    let hba = data.join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).unwrap();
    std::fs::write(
        &hba,
        format!("hostnossl all tlsonly 127.0.0.1/32 reject\n{rules}"),
    )
    .unwrap();
    (data, tls)
}

/// Starts postgres on `port` from a thread that outlives every test (its exit signals the
/// server).
fn spawn_postgres(
    bin: &Path,
    data: &Path,
    dir: &Path,
    tls: &Path,
    port: u16,
    user: Option<(u32, u32)>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let (bin2, data2, dir2, tls) = (
        bin.to_path_buf(),
        data.to_path_buf(),
        dir.to_path_buf(),
        tls.to_path_buf(),
    );
    std::thread::spawn(move || {
        let mut c = std::process::Command::new(bin2.join("postgres"));
        c.arg("-D")
            .arg(&data2)
            .args(["-p", &port.to_string(), "-k"])
            .arg(&dir2)
            .args([
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=300",
                "-c",
                "shared_buffers=64MB",
                "-c",
                "ssl=on",
            ])
            .arg("-c")
            .arg(format!(
                "ssl_cert_file={}",
                tls.join("server.crt").display()
            ))
            .arg("-c")
            .arg(format!("ssl_key_file={}", tls.join("server.key").display()))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir2.join("server.log")).unwrap());
        as_pg_user(&mut c, user, true);
        let child = c.spawn();
        let ok = child.is_ok();
        tx.send(child.map(|_| ()).map_err(|e| e.to_string()))
            .unwrap();
        if ok {
            // This thread must outlive every test: its exit signals the server.
            loop {
                std::thread::park();
            }
        }
    });
    rx.recv().unwrap().expect("start postgres");
}

/// A throw-away CA (`ca.crt`) and a certificate for 127.0.0.1 signed by it (`server.crt`,
/// `server.key`), made with openssl, for a test server's TLS (PostgreSQL's, the release
/// server's); `user` owns the key (PostgreSQL refuses one it cannot own). Returns the folder.
pub fn test_tls(dir: &Path, user: Option<(u32, u32)>) -> PathBuf {
    let tls = dir.join("tls");
    std::fs::create_dir_all(&tls).unwrap();
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(&tls)
            .output()
            .expect("openssl (scripts/test installs it) makes the test server's certificate");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec![
        "req",
        "-x509",
        "-days",
        "2",
        "-subj",
        "/CN=fencepost test CA",
    ];
    ca.extend(ec);
    ca.extend(["-keyout", "ca.key", "-out", "ca.crt"]);
    openssl(&ca);
    let mut csr = vec!["req", "-subj", "/CN=127.0.0.1"];
    csr.extend(ec);
    csr.extend(["-keyout", "server.key", "-out", "server.csr"]);
    openssl(&csr);
    std::fs::write(
        tls.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.crt",
    ]);
    use std::os::unix::fs::PermissionsExt;
    for f in ["server.key", "server.crt"] {
        let p = tls.join(f);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(&p, Some(uid), Some(gid)).unwrap();
        }
    }
    if let Some((uid, gid)) = user {
        std::os::unix::fs::chown(&tls, Some(uid), Some(gid)).unwrap();
    }
    tls
}

/// Which ledger a conformance test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    /// A ledger kept in object storage: a log in a `file://` folder (the same engine as on
    /// S3; the racing and crash tests run it against moto).
    Bucket,
    /// A ledger kept in Cloudflare D1: the log engine through the proxy Worker, in workerd
    /// under miniflare with a local D1 (`edge/cloudflare/d1-dev.mjs`), one per site.
    D1,
}

impl TestSite {
    /// A site whose ledger is on `backend` (PostgreSQL: a fresh database in the test cluster,
    /// named by `ledger.url`).
    pub fn on(backend: Backend) -> TestSite {
        let s = TestSite::new();
        match backend {
            Backend::Postgres => s.set_ledger_url(&pg().database()),
            Backend::Bucket => {
                let url = format!("file://{}", s.path(".bucket/ledger").display());
                s.set_ledger_url(&url);
            }
            Backend::D1 => {
                let url = serve_d1_for(s.root());
                s.set_ledger_url(&url);
            }
            Backend::Sqlite => {}
        }
        s
    }

    /// The local replica of a bucket ledger, brought up to the log's newest entry.
    pub fn replica_file(&self) -> std::path::PathBuf {
        self.cmd(&["status"]).assert().success();
        let dir = self.path(".fencepost/ledger-cache");
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "sqlite"))
            .expect("a replica")
    }

    fn replica(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.replica_file()).unwrap()
    }

    pub fn set_ledger_url(&self, url: &str) {
        let cfg = std::fs::read_to_string(self.path("fencepost.toml")).unwrap();
        // One url: a site moved from one ledger to another names only the last.
        let mut in_ledger = false;
        let cfg: String = cfg
            .lines()
            .filter(|l| {
                if l.starts_with('[') {
                    in_ledger = l.trim() == "[ledger]";
                }
                !(in_ledger && l.starts_with("url = \""))
            })
            .map(|l| format!("{l}\n"))
            .collect();
        let cfg = cfg.replace("[ledger]\n", &format!("[ledger]\nurl = \"{url}\"\n"));
        assert!(
            cfg.contains("url = "),
            "fencepost.toml has no [ledger] table"
        );
        std::fs::write(self.path("fencepost.toml"), cfg).unwrap();
    }

    /// Another host's checkout of `other`'s site: its ledger and its site id (a checkout
    /// of the same repository), with files of its own.
    pub fn share_ledger_of(&self, other: &TestSite) {
        self.set_ledger_url(&other.ledger_url().expect("a shared ledger"));
        self.set_site_id(other.site_id().as_deref());
    }

    /// `ledger.site_id` in fencepost.toml, if any.
    pub fn site_id(&self) -> Option<String> {
        let cfg = std::fs::read_to_string(self.path("fencepost.toml")).unwrap_or_default();
        cfg.lines()
            .find_map(|l| l.strip_prefix("site_id = \""))
            .map(|u| u.trim_end_matches('"').to_string())
    }

    /// Sets `ledger.site_id` (`None`: no id, as a site made before ids).
    pub fn set_site_id(&self, id: Option<&str>) {
        let cfg = std::fs::read_to_string(self.path("fencepost.toml")).unwrap();
        let cfg: String = cfg
            .lines()
            .filter(|l| !l.starts_with("site_id = "))
            .map(|l| format!("{l}\n"))
            .collect();
        let cfg = match id {
            Some(id) => cfg.replacen("[ledger]\n", &format!("[ledger]\nsite_id = \"{id}\"\n"), 1),
            None => cfg,
        };
        std::fs::write(self.path("fencepost.toml"), cfg).unwrap();
    }

    /// The `ledger.url` this site uses, if any.
    pub fn ledger_url(&self) -> Option<String> {
        let cfg = std::fs::read_to_string(self.path("fencepost.toml")).unwrap();
        cfg.lines()
            .skip_while(|l| l.trim() != "[ledger]")
            .skip(1)
            .take_while(|l| !l.starts_with('['))
            .find_map(|l| l.strip_prefix("url = \""))
            .map(|u| u.trim_end_matches('"').to_string())
    }

    /// One integer read with SQL, whichever engine holds the ledger: only for what a
    /// tampering test wrote itself, or a promise about the tables no API shows (a shared
    /// ledger's empty stat columns). Everything else is observed through `observe.rs`.
    pub fn query_i64(&self, sql: &str) -> i64 {
        match self.ledger_url() {
            Some(url) if url.starts_with("file://") || url.starts_with("d1+") => {
                self.replica().query_row(sql, [], |r| r.get(0)).unwrap()
            }
            Some(url) => Pg::client(&url).query_one(sql, &[]).unwrap().get(0),
            None => self.ledger().query_row(sql, [], |r| r.get(0)).unwrap(),
        }
    }

    /// Runs a statement on the ledger, whichever engine holds it: a writer that skips
    /// fencepost's rules, for the tests of what fencepost does about one.
    pub fn execute(&self, sql: &str) {
        match self.ledger_url() {
            Some(url) if url.starts_with("file://") || url.starts_with("d1+") => {
                let site = fencepost_site::Site::open(self.root()).unwrap();
                site.open_ledger().unwrap().execute_unchecked(sql).unwrap();
            }
            Some(url) => {
                Pg::client(&url).batch_execute(sql).unwrap();
            }
            None => {
                self.ledger().execute_batch(sql).unwrap();
            }
        }
    }
}

// ---------------------------------------------------------------- fixture sites
