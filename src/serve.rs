//! `fencepost serve`: an origin that follows `public/current` with revision-keyed cache
//! headers, or (`--watch`) an editor's live preview that rebuilds in memory on every save and
//! reloads open pages over Server-Sent Events.

pub mod http;
pub mod paths;
pub mod watch;

use crate::build::public_dir;
use crate::clock::Clock;
use crate::site::Site;
use http::{App, Origin, Root};
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
    #[error("cannot watch the site for changes: {0}")]
    Watch(notify::Error),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub bind: SocketAddr,
    pub watch: bool,
}

async fn shutdown_signal(app: Arc<App>) {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
    // Open live-reload streams would otherwise keep the graceful shutdown waiting.
    if let Root::Preview(p) = &app.root {
        let _ = p.events.send("shutdown");
    }
}

/// Serves until SIGINT or SIGTERM. `ready` is called with the bound address before the first
/// request is accepted.
pub fn run(
    site: Site,
    clock: Clock,
    opts: Options,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|source| ServeError::Io {
            path: PathBuf::from("tokio runtime"),
            source,
        })?;
    rt.block_on(async move {
        let (root, _watch) = if opts.watch {
            let (preview, watch) = watch::start(site.clone(), clock)?;
            (Root::Preview(preview), Some(watch))
        } else {
            (Root::Origin(Origin::new(public_dir(&site))), None)
        };
        let app = Arc::new(App { root, clock });
        let listener = tokio::net::TcpListener::bind(opts.bind)
            .await
            .map_err(|source| ServeError::Bind {
                addr: opts.bind,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServeError::Bind {
            addr: opts.bind,
            source,
        })?;
        ready(addr);
        axum::serve(listener, http::router(app.clone()))
            .with_graceful_shutdown(shutdown_signal(app))
            .await
            .map_err(|source| ServeError::Io {
                path: PathBuf::from(addr.to_string()),
                source,
            })
    })
}
