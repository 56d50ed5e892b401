//! `fencepost serve`: an origin that follows `public/current` with revision-keyed cache
//! headers, or (`--watch`) an editor's live preview that rebuilds in memory on every save and
//! reloads open pages over Server-Sent Events.

pub mod answer;
pub mod beneath;
pub mod bucket;
pub mod http;
mod limits;
pub mod origin;
pub mod paths;
pub mod preview;
pub mod previews;
mod workers;

use fencepost_core::clock::Clock;
use fencepost_site::Site;
use http::{App, Local};
pub use origin::Root;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source} (is another server using it? choose another with --bind)")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{url} {why}: an origin serves the public, and a ledger's log and snapshots name every embargoed item, its instant and its image sources, so fencepost serves no ledger's prefix. Serve the site's deploy target (deploy.to), and keep the ledger in a prefix — better, a bucket — no origin or public bucket policy reaches")]
    LedgerPrefix { url: String, why: String },
    #[error("cannot watch the site for changes: {0}")]
    Watch(notify::Error),
    #[error(transparent)]
    Bucket(#[from] fencepost_bucket::BucketError),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub bind: SocketAddr,
    /// Serve the bucket at this URL (what `fencepost deploy` writes) instead of public/.
    pub from: Option<String>,
}

async fn shutdown_signal(app: Arc<App>) {
    match fencepost_core::os::StopSignals::new() {
        Ok(mut stop) => stop.recv().await,
        // No handlers (never seen): Ctrl-C still stops it.
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
    tracing::info!("shutting down");
    // Open live-reload streams would otherwise keep the graceful shutdown waiting.
    if let Some(events) = app.root.events() {
        let _ = events.send("shutdown");
    }
}

/// Serves `public/current`, or the bucket `opts.from` names, until SIGINT or SIGTERM. `ready`
/// is called with the bound address before the first request is accepted.
pub fn run(
    site: Site,
    clock: Clock,
    opts: Options,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let root = origin(&site, clock, opts.from.as_deref())?;
    run_root(site, clock, root, opts.bind, ready)
}

/// What an origin serves without a preview: `public/current`, or the bucket at `from`.
pub fn origin(site: &Site, clock: Clock, from: Option<&str>) -> Result<Root, ServeError> {
    let timeout = std::time::Duration::from_millis(site.config.serve.bucket_timeout_ms);
    let Some(url) = from else {
        let previews = previews::local(site, timeout);
        return Ok(Arc::new(
            Local::new(site.public_dir()).with_previews(previews),
        ));
    };
    let remote = fencepost_bucket::remote::Remote::open(url)?;
    refuse_ledger_prefix(site, &remote)?;
    let previews = previews::of(fencepost_bucket::remote::Remote::open(url)?, timeout);
    let c = &site.config.serve;
    Ok(Arc::new(
        bucket::BucketOrigin::new(
            remote,
            clock,
            bucket::Settings {
                pointer_ttl_ms: c.pointer_ttl_ms,
                pointer_hot_ms: c.pointer_hot_ms,
                blob_cache_bytes: c.blob_cache_bytes,
                bucket_timeout_ms: c.bucket_timeout_ms,
            },
        )
        .with_previews(previews),
    ))
}

/// No origin serves a ledger: refused when `remote` overlaps the site's own bucket ledger,
/// or when its prefix holds a ledger's log.
fn refuse_ledger_prefix(
    site: &Site,
    remote: &fencepost_bucket::remote::Remote,
) -> Result<(), ServeError> {
    if let Ok(fencepost_ledger::Location::Bucket { url, .. }) = site.ledger_location() {
        if fencepost_core::store::names::overlaps(&remote.url, &url) {
            return Err(ServeError::LedgerPrefix {
                url: remote.url.clone(),
                why: format!(
                    "holds or lies inside this site's ledger ({})",
                    fencepost_core::store::names::shown(&url)
                ),
            });
        }
    }
    if runtime(&mut tokio::runtime::Builder::new_current_thread())?
        .block_on(remote.holds_ledger())?
    {
        return Err(ServeError::LedgerPrefix {
            url: remote.url.clone(),
            why: "is a fencepost ledger's prefix (its log/ is there)".into(),
        });
    }
    Ok(())
}

/// A runtime from `builder`, with I/O and timers.
fn runtime(builder: &mut tokio::runtime::Builder) -> Result<tokio::runtime::Runtime, ServeError> {
    builder
        .enable_all()
        .build()
        .map_err(|source| ServeError::Io {
            path: PathBuf::from("tokio runtime"),
            source,
        })
}

/// Serves `root` (an origin, or the preview `preview::run` makes) at `bind` until SIGINT or
/// SIGTERM.
pub fn run_root(
    site: Site,
    clock: Clock,
    root: Root,
    bind: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    // Accepting and the signals only: connections are served on the workers (`workers.rs`).
    let rt = runtime(&mut tokio::runtime::Builder::new_current_thread())?;
    rt.block_on(serve_until(site, clock, root, bind, ready, |app| {
        Box::pin(shutdown_signal(app))
    }))
}

/// Serves `root` until the future `shutdown` makes (given the app, so a preview can close its
/// live-reload streams) resolves, then lets open responses finish (see `accept_loop`).
/// `fencepost run --serve` runs this beside its cycles.
pub async fn serve_until(
    site: Site,
    clock: Clock,
    root: Root,
    bind: SocketAddr,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl FnOnce(Arc<App>) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
) -> Result<(), ServeError> {
    let app = Arc::new(App {
        root,
        clock,
        base_path: site.config.base_path(),
    });
    let listener = bind_deep(bind).map_err(|source| ServeError::Bind { addr: bind, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr: bind, source })?;
    ready(addr);
    let limits = site.config.serve.clone();
    let workers = workers::Workers::start().map_err(|source| ServeError::Io {
        path: PathBuf::from("the serving threads"),
        source,
    })?;
    let router = http::router(app.clone());
    accept_loop(listener, router, &workers, &limits, shutdown(app)).await;
    Ok(())
}

/// Binds `addr` with a listen queue 4,096 deep (or as deep as the kernel allows), not tokio's
/// 1,024: under a flood of reconnecting clients a full queue makes the kernel drop a real
/// client's SYN, which TCP retries only after 1, 2, 4 s. (It did not remove the one slow
/// request `scripts/bench slow-clients` still measures during an attack's opening burst.)
fn bind_deep(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = match addr {
        std::net::SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        std::net::SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    // As `TcpListener::bind` does on Unix: a restarted server binds at once.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(4096)
}

/// Accepts connections until `shutdown` resolves, then lets open responses finish for at most
/// `serve.shutdown_deadline_secs`. Every connection must send its request head within
/// `serve.header_timeout_secs` (hyper's header-read timer, which also runs while a keep-alive
/// connection idles), and at most `serve.max_connections` are served at once: a client that
/// trickles a request, or thousands of them, cannot pin the server open or crowd others out
/// for longer than that timeout. At capacity, every address has a fair share of the slots
/// and a connection over it, or one stalled for `serve.stall_secs` whatever its address,
/// gives way to a new one within it (see `serve/limits.rs`), so
/// connections that trickle their heads (slowloris) or read slowly cannot keep real clients
/// waiting. A response whose
/// writes make no progress for `serve.write_timeout_secs` (a client that asked for a large
/// file and stopped reading) is cut off and its slot given back.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    workers: &workers::Workers,
    limits: &fencepost_config::ServeConfig,
    shutdown: impl std::future::Future<Output = ()>,
) {
    use hyper_util::rt::TokioTimer;
    use std::time::Duration;
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(limits.header_timeout_secs));
    tokio::pin!(shutdown);
    let open = Arc::new(limits::OpenConnections::default());
    let stall = Duration::from_secs(limits.stall_secs);
    let served = Served {
        workers,
        router: &router,
        http1: &http1,
        graceful: &graceful,
        open: &open,
        write_timeout: Duration::from_secs(limits.write_timeout_secs),
        min_send_rate: limits.min_send_bytes_per_sec,
    };
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => match r {
                // IPv6 peers counted by /64 (see limits.rs).
                Ok((stream, peer)) => (stream, limits::peer_group(peer.ip())),
                Err(e) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // One address holds at most its share: one more is closed at once.
        if !open.admit(peer, limits.max_connections_per_ip) {
            tracing::debug!(peer = %peer, "refused: this address holds serve.max_connections_per_ip");
            drop(stream);
            continue;
        }
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) if open.over_share(peer, limits.max_connections) => {
                // At capacity, from an address over its share: closed at once, and the
                // accept queue keeps moving (see limits.rs).
                open.release(peer);
                drop(stream);
                continue;
            }
            Err(_) => {
                // At capacity: a connection gives way (limits.rs says which).
                let room = make_room(&open, &slots, limits.max_connections, stall);
                tokio::select! {
                    p = room => p,
                    _ = &mut shutdown => break,
                }
            }
        };
        served.connection(stream, peer, permit);
    }
    drop(listener);
    let deadline = Duration::from_secs(limits.shutdown_deadline_secs);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(deadline) => {
            tracing::warn!(
                secs = limits.shutdown_deadline_secs,
                "connections still open at the shutdown deadline; closing them"
            );
        }
    }
}

/// At capacity: has a connection give way (see `serve/limits.rs` for which) and waits for its
/// slot; while none can give way, the choice is made again every 100 ms (a connection may
/// stall meanwhile).
async fn make_room(
    open: &limits::OpenConnections,
    slots: &Arc<tokio::sync::Semaphore>,
    capacity: usize,
    stall: std::time::Duration,
) -> tokio::sync::OwnedSemaphorePermit {
    loop {
        open.evict_one(capacity, stall);
        tokio::select! {
            p = slots.clone().acquire_owned() => return p.expect("the semaphore is never closed"),
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => {}
        }
    }
}

/// What every connection is served with.
struct Served<'a> {
    /// The threads connections are served on (`workers.rs`).
    workers: &'a workers::Workers,
    router: &'a axum::Router,
    http1: &'a hyper::server::conn::http1::Builder,
    graceful: &'a hyper_util::server::graceful::GracefulShutdown,
    open: &'a Arc<limits::OpenConnections>,
    /// A response that cannot make progress (a reader that stopped reading) gives its slot
    /// back after this long (`serve.write_timeout_secs`).
    write_timeout: std::time::Duration,
    /// `serve.min_send_bytes_per_sec` (see `limits.rs`).
    min_send_rate: u64,
}

impl Served<'_> {
    /// Serves one accepted connection on a task of its own, on one of the serving threads for
    /// its whole life, holding `permit` (and its place in `peer`'s share) until it ends.
    fn connection(
        &self,
        stream: tokio::net::TcpStream,
        peer: std::net::IpAddr,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) {
        let _ = stream.set_nodelay(true);
        // Taken off this runtime's reactor: the worker registers it with its own.
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "accepted connection lost before it was served");
                self.open.release(peer);
                return;
            }
        };
        let held = Arc::new(limits::Held::default());
        let answering = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let conn = Connection {
            router: self.router.clone(),
            http1: self.http1.clone(),
            watcher: self.graceful.watcher(),
            write_timeout: self.write_timeout,
            min_send_rate: self.min_send_rate,
            held: held.clone(),
            answering: answering.clone(),
        };
        let id = self.open.next_id();
        let open = self.open.clone();
        // The task starts once it is listed, so its removal always follows its addition.
        let (listed, is_listed) = tokio::sync::oneshot::channel::<()>();
        // The address's share is given back however the task ends (aborted at capacity too).
        let share = ShareBack(self.open.clone(), peer);
        let task = self.workers.spawn(move || async move {
            let _share = share;
            let _ = is_listed.await;
            conn.serve(stream).await;
            open.remove(id);
            drop(permit);
        });
        self.open
            .add(id, peer, answering, held, task.abort_handle());
        let _ = listed.send(());
    }
}

/// One connection's HTTP/1 service, made on the worker that serves it.
struct Connection {
    router: axum::Router,
    http1: hyper::server::conn::http1::Builder,
    watcher: hyper_util::server::graceful::Watcher,
    write_timeout: std::time::Duration,
    min_send_rate: u64,
    held: Arc<limits::Held>,
    answering: Arc<std::sync::atomic::AtomicUsize>,
}

impl Connection {
    async fn serve(self, stream: std::net::TcpStream) {
        use hyper_util::rt::TokioIo;
        let stream = match tokio::net::TcpStream::from_std(stream) {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "cannot serve an accepted connection");
                return;
            }
        };
        let stream = limits::MinRate::new(stream, self.min_send_rate, self.held);
        let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
        stream.set_write_timeout(Some(self.write_timeout));
        let service = {
            use hyper::service::Service as _;
            let inner = hyper_util::service::TowerToHyperService::new(self.router);
            let answering = self.answering;
            hyper::service::service_fn(move |req| {
                let guard = limits::Answering::start(&answering);
                let call = inner.call(req);
                async move {
                    let resp = call.await?;
                    Ok::<_, std::convert::Infallible>(
                        resp.map(|b| axum::body::Body::new(limits::Guarded::new(b, guard))),
                    )
                }
            })
        };
        let conn = self
            .http1
            .serve_connection(TokioIo::new(Box::pin(stream)), service);
        if let Err(e) = self.watcher.watch(conn).await {
            tracing::debug!(error = %e, "connection ended with an error");
        }
    }
}

/// Gives back a connection's place in its address's share when dropped.
struct ShareBack(Arc<limits::OpenConnections>, std::net::IpAddr);

impl Drop for ShareBack {
    fn drop(&mut self) {
        self.0.release(self.1);
    }
}
