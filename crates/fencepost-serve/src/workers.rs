//! The threads connections are served on: one single-threaded tokio runtime per core, and each
//! accepted connection handed to one of them (in turn) for its whole life, as nginx hands a
//! connection to one worker process.
//!
//! Chosen over tokio's multi-threaded scheduler, which the origin used before: there a
//! connection's task moves between threads (work stealing) and its socket is woken by
//! whichever thread polls the reactor, so a keep-alive connection's every request paid
//! cross-thread wake-ups and the scheduler's shared queues — `perf` of the origin under `wrk`
//! had the kernel's wake-ups and context switches as its largest item (~11%). Pinned, a
//! connection's socket, timers and task live on one thread: its reactor wakes the task on the
//! thread that polls it. Measured on `scripts/bench serve` (BENCHMARKS.md, "Serving").
//!
//! Rejected: `SO_REUSEPORT` with a listener per thread (the kernel spreads connections by a
//! hash of their addresses, so one thread can get most of them; the accept loop's limits
//! would be split; no such option on Windows), and a `LocalSet` per thread (the same thing
//! with more ceremony). The accept loop stays on the caller's runtime, so the connection
//! limits (`limits.rs`) keep one view of every connection; what they share across threads is
//! behind locks and atomics, and a connection is aborted from any thread by its handle.
//!
//! A connection must be built on its worker (`spawn` takes a closure run there): a socket
//! registers with the reactor of the runtime it is made in, and a timer with its clock.

use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::runtime::Handle;

/// The serving threads; stopped (each runtime dropped with whatever it still runs) when
/// dropped.
pub(crate) struct Workers {
    handles: Vec<Handle>,
    next: AtomicUsize,
    stops: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl Workers {
    /// One worker per core the process may use (at least one).
    pub(crate) fn start() -> std::io::Result<Workers> {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        Workers::start_n(n)
    }

    pub(crate) fn start_n(n: usize) -> std::io::Result<Workers> {
        let mut workers = Workers {
            handles: Vec::with_capacity(n),
            next: AtomicUsize::new(0),
            stops: Vec::with_capacity(n),
        };
        for i in 0..n.max(1) {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            workers.handles.push(rt.handle().clone());
            workers.stops.push(stop);
            std::thread::Builder::new()
                .name(format!("fencepost-serve-{i}"))
                .spawn(move || {
                    let _ = rt.block_on(stopped);
                })?;
        }
        Ok(workers)
    }

    /// Runs the future `make` returns on the next worker in turn; `make` itself runs there
    /// too, so what it builds (sockets, timers) belongs to that worker's runtime.
    pub(crate) fn spawn<F, Fut>(&self, make: F) -> tokio::task::JoinHandle<Fut::Output>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future + Send + 'static,
        Fut::Output: Send + 'static,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.handles.len();
        self.handles[i].spawn(async move { make().await })
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        for stop in self.stops.drain(..) {
            let _ = stop.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards: connections go to the workers in turn, each served on its own single-threaded
    /// runtime (not the caller's, and not one thread for all).
    #[test]
    fn connections_go_to_each_worker_in_turn_on_its_own_thread() {
        let workers = Workers::start_n(2).unwrap();
        let seen: Vec<_> = (0..4)
            .map(|_| {
                workers.spawn(|| async {
                    let flavor = Handle::current().runtime_flavor();
                    (std::thread::current().name().map(String::from), flavor)
                })
            })
            .collect();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let seen: Vec<_> = seen.into_iter().map(|t| rt.block_on(t).unwrap()).collect();
        let names: Vec<_> = seen
            .iter()
            .map(|(n, _)| n.as_deref().unwrap_or(""))
            .collect();
        assert_eq!(
            names,
            [
                "fencepost-serve-0",
                "fencepost-serve-1",
                "fencepost-serve-0",
                "fencepost-serve-1"
            ]
        );
        assert!(seen
            .iter()
            .all(|(_, f)| *f == tokio::runtime::RuntimeFlavor::CurrentThread));
    }

    /// Guards: a socket made on a worker is served by that worker's reactor (it has I/O
    /// enabled), and dropping the workers ends their tasks.
    #[test]
    fn a_socket_made_on_a_worker_is_served_there_and_stopping_ends_it() {
        let workers = Workers::start_n(1).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let echo = workers.spawn(move || async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let (s, _) = listener.accept().unwrap();
            s.set_nonblocking(true).unwrap();
            let mut s = tokio::net::TcpStream::from_std(s).unwrap();
            let mut b = [0u8; 4];
            s.read_exact(&mut b).await.unwrap();
            s.write_all(&b).await.unwrap();
            let _ = tx.send(());
            std::future::pending::<()>().await
        });
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        use std::io::{Read, Write};
        c.write_all(b"ping").unwrap();
        let mut b = [0u8; 4];
        c.read_exact(&mut b).unwrap();
        assert_eq!(&b, b"ping");
        rx.recv().unwrap();
        drop(workers);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let ended = rt.block_on(echo);
        assert!(
            ended.unwrap_err().is_cancelled(),
            "the task ends with its worker"
        );
    }
}
