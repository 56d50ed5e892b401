//! What runs beside `fencepost run`'s cycles: the signal handler, the origin (`--serve`),
//! the metrics endpoint (`--metrics`), the file watcher, and the shared ledger's listener.

use super::metrics::Metrics;
use super::wake::Waker;
use super::RunError;
use crate::watch::SiteWatch;
use fencepost_core::clock::Clock;
use fencepost_site::Site;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub(super) struct Start<'a> {
    pub site: &'a Site,
    pub clock: Clock,
    pub serve: Option<SocketAddr>,
    pub metrics_addr: Option<SocketAddr>,
    pub metrics: Arc<Metrics>,
    pub waker: Arc<Waker>,
    pub cancel: Arc<AtomicBool>,
    pub deadline: Duration,
    /// Called (at most half a second before the deadline) when the current step is abandoned.
    pub give_back: Box<dyn FnOnce() + Send>,
}

pub(super) struct Side {
    pub serve_addr: Option<SocketAddr>,
    pub metrics_addr: Option<SocketAddr>,
    rt: tokio::runtime::Runtime,
    stop: CancellationToken,
    servers: Vec<tokio::task::JoinHandle<()>>,
    deadline: Duration,
    _watcher: Option<SiteWatch>,
}

pub(super) fn start(s: Start<'_>) -> Result<Side, RunError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|source| RunError::Io {
            what: "starting the server runtime".into(),
            source,
        })?;
    let stop = CancellationToken::new();
    signals(
        &rt,
        s.waker.clone(),
        s.cancel.clone(),
        s.deadline,
        s.give_back,
    )?;
    let mut servers = Vec::new();
    let serve_addr = match s.serve {
        Some(bind) => {
            let (addr, task) = origin(&rt, (s.site, &s.metrics), s.clock, bind, stop.clone())?;
            servers.push(task);
            Some(addr)
        }
        None => None,
    };
    let metrics_addr = match s.metrics_addr {
        Some(bind) => {
            let (addr, task) = metrics(&rt, bind, s.metrics.clone(), stop.clone())?;
            servers.push(task);
            Some(addr)
        }
        None => None,
    };
    let watcher = watch(&s.site.root, s.waker.clone());
    listen(s.site, s.waker.clone());
    Ok(Side {
        serve_addr,
        metrics_addr,
        rt,
        stop,
        servers,
        deadline: s.deadline,
        _watcher: watcher,
    })
}

impl Side {
    /// Stops the servers; open responses get the shutdown deadline.
    pub(super) fn stop(self) {
        self.stop.cancel();
        let servers = self.servers;
        let deadline = self.deadline;
        self.rt.block_on(async move {
            let all = futures_util::future::join_all(servers);
            let _ = tokio::time::timeout(deadline, all).await;
        });
        self.rt.shutdown_background();
    }
}

/// First SIGINT/SIGTERM: stop after the current step (a deploy stops at its next chunk),
/// and exit 0 at `deadline` whatever is still running (abandoned work is resumed by the next
/// run, as after a crash), its leases given back in the deadline's last half second. A second
/// signal exits at once.
fn signals(
    rt: &tokio::runtime::Runtime,
    waker: Arc<Waker>,
    cancel: Arc<AtomicBool>,
    deadline: Duration,
    give_back: Box<dyn FnOnce() + Send>,
) -> Result<(), RunError> {
    let _guard = rt.enter();
    let mut stop = fencepost_core::os::StopSignals::new().map_err(|source| RunError::Io {
        what: "installing the signal handlers".into(),
        source,
    })?;
    rt.spawn(async move {
        stop.recv().await;
        tracing::info!(
            deadline_secs = deadline.as_secs(),
            "shutting down: finishing the current step (a second signal exits at once)"
        );
        cancel.store(true, Ordering::Relaxed);
        waker.stop();
        std::thread::spawn(move || {
            let last = Duration::from_millis(500).min(deadline / 2);
            std::thread::sleep(deadline - last);
            tracing::warn!(
                "shutdown deadline: abandoning the current step (the next run resumes it)"
            );
            // The ledger may be what the step is stuck on: give the leases back if that
            // answers in time, else leave them to expire.
            let (done_tx, done) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                give_back();
                let _ = done_tx.send(());
            });
            let _ = done.recv_timeout(last);
            std::process::exit(0);
        });
        stop.recv().await;
        tracing::warn!("second signal: exiting now");
        std::process::exit(130);
    });
    Ok(())
}

/// The origin over `public/current`, exactly `fencepost serve`'s.
fn origin(
    rt: &tokio::runtime::Runtime,
    (site, metrics): (&Site, &Metrics),
    clock: Clock,
    bind: SocketAddr,
    stop: CancellationToken,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), RunError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    let site = site.clone();
    let root = fencepost_serve::origin(&site, clock, None).map_err(RunError::Serve)?;
    if let Some(p) = root.previews() {
        metrics.watch_previews(p.counts.clone());
    }
    let task = rt.spawn(async move {
        let r = fencepost_serve::serve_until(
            site,
            clock,
            root,
            bind,
            move |addr| {
                let _ = tx.send(addr);
            },
            move |_app| Box::pin(async move { stop.cancelled_owned().await }),
        )
        .await;
        if let Err(e) = r {
            let _ = err_tx.send(e);
        }
    });
    match rx.recv() {
        Ok(addr) => Ok((addr, task)),
        Err(_) => Err(match err_rx.recv() {
            Ok(e) => e.into(),
            Err(_) => RunError::Io {
                what: format!("serving on {bind}"),
                source: std::io::Error::other("the server stopped before listening"),
            },
        }),
    }
}

/// `GET /metrics`: Prometheus text.
fn metrics(
    rt: &tokio::runtime::Runtime,
    bind: SocketAddr,
    metrics: Arc<Metrics>,
    stop: CancellationToken,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), RunError> {
    use axum::routing::get;
    let listener = rt
        .block_on(tokio::net::TcpListener::bind(bind))
        .map_err(|source| RunError::MetricsBind { addr: bind, source })?;
    let addr = listener
        .local_addr()
        .map_err(|source| RunError::MetricsBind { addr: bind, source })?;
    let router = axum::Router::new().route(
        "/metrics",
        get(move || {
            let m = metrics.clone();
            async move {
                (
                    [
                        (
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        ),
                        (axum::http::header::CACHE_CONTROL, "no-store"),
                    ],
                    m.text(),
                )
            }
        }),
    );
    let task = rt.spawn(async move {
        let r = axum::serve(listener, router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(e) = r {
            tracing::warn!(error = %e, "metrics server stopped");
        }
    });
    Ok((addr, task))
}

/// Wakes the loop on changes under content/, templates/, static/ and to fencepost.toml: the
/// site's one file watcher ([`crate::watch`], the one `serve --watch` follows). Without a
/// watcher (the system refuses one) the poll still catches every change.
fn watch(root: &Path, waker: Arc<Waker>) -> Option<SiteWatch> {
    match crate::watch::start(root, move |_| waker.files_changed()) {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch the site; changes are seen at the next poll");
            None
        }
    }
}

/// On a shared PostgreSQL ledger: wake the loop at every other host's commit. Reconnects
/// with a back-off; after a reconnect one cycle runs (notifications may have been missed).
fn listen(site: &Site, waker: Arc<Waker>) {
    let Ok(location) = site.ledger_location() else {
        return;
    };
    if !location.notifies_changes() {
        return;
    }
    std::thread::spawn(move || {
        let mut wait = Duration::from_secs(1);
        loop {
            let on_change = || waker.ledger_changed();
            match fencepost_ledger::listen_for_changes(&location, &on_change) {
                Ok(_) => tracing::warn!("the ledger's change channel closed; reconnecting"),
                Err(e) => {
                    tracing::warn!(error = %e, retry_secs = wait.as_secs(), "cannot listen for other hosts' changes; reconnecting")
                }
            }
            std::thread::sleep(wait);
            wait = (wait * 2).min(Duration::from_secs(30));
            waker.ledger_changed();
        }
    });
}
