//! What one client may hold of a server facing the open internet, so slow clients cannot
//! starve real ones:
//!
//! - **Per address.** At most `serve.max_connections_per_ip` connections from one peer
//!   address; one more is closed at once (the client may retry). Slow clients that reconnect
//!   from one address hold that many slots, never all of them.
//! - **At capacity, a fair share each.** Every slot taken, the slots are shared evenly among
//!   the addresses connected. A new connection from an address over its share is closed at
//!   once, so the accept queue keeps moving: before, the loop waited for a slot with the
//!   kernel's queue full of reconnecting attackers, and a real client's connection attempts
//!   were dropped until its third retransmission, 7 s on. A new connection from an address
//!   within its share takes the slot of the oldest connection not in the middle of answering a
//!   request (one still sending its first head a second after it connected, one trickling a
//!   later head, one idling between requests) of the address holding the most, else of any address; failing that, the
//!   connection whose response has made no progress for `serve.stall_secs` (its client
//!   holds every write back: a reader that asked for a large file and stopped reading) gives
//!   way, whatever its address, the longest stalled first; failing that, the oldest
//!   connection of an address over its share gives way, answering or not. A connection that
//!   is answering and moving keeps its slot otherwise. With one address (a proxy in front)
//!   it is as before: the oldest idle connection gives way. While no connection can give
//!   way, the new one waits, and the choice is made again every 100 ms.
//!
//!   The stall rule is what holds against many addresses: 150 slow readers, each from an
//!   address of its own, each within its share (one slot), used to keep real clients waiting
//!   until the send-rate window cut them (28–30 s); now each gives way once it has sat
//!   stalled for `serve.stall_secs`. Rejected: evicting by age or at random (a real client
//!   downloading a large file at a fair pace would lose its download to an attacker), and a
//!   lower `max_connections_per_ip` (it does nothing against one connection per address).
//! - **Addresses are grouped.** An IPv6 peer counts under its /64 (one subscriber's prefix
//!   holds 2^64 addresses, so per-address shares would mean nothing), and an IPv4-mapped
//!   IPv6 address under its IPv4 address.
//! - **A minimum send rate.** While a client holds a response back (the socket will not take
//!   more), it must take at least `serve.min_send_bytes_per_sec` over each 10 s window, or
//!   the connection is cut: a reader that takes a byte now and then no longer keeps its slot
//!   for ever (the write timeout only caught readers that took nothing at all).
//!
//! Heads are bounded by hyper's header-read timer (`serve.header_timeout_secs`).

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The window over which a held-back response's send rate is measured.
pub(super) const RATE_WINDOW: Duration = Duration::from_secs(10);

/// The address a peer is counted under for `max_connections_per_ip` and the shares: an IPv6
/// address by its /64, an IPv4-mapped IPv6 address as its IPv4 address, an IPv4 address as
/// itself.
pub(super) fn peer_group(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(
                u128::from(v6) & !((1u128 << 64) - 1),
            )),
        },
    }
}

/// Since when a connection's writes have been held back by its client (no byte taken since);
/// shared by the connection's stream ([`MinRate`]) and its entry in [`OpenConnections`].
#[derive(Default)]
pub(super) struct Held(AtomicU64);

/// The instant `Held` counts from.
fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

impl Held {
    /// A write was held back: the stall starts now, unless it started already.
    fn held(&self) {
        // Stored as milliseconds since the epoch plus one: 0 means "not held".
        let now = epoch().elapsed().as_millis() as u64 + 1;
        let _ = self
            .0
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// A write went out: no stall.
    fn moved(&self) {
        self.0.store(0, Ordering::Relaxed);
    }

    /// How long the writes have been held back without a byte taken, if they are.
    pub(super) fn stalled_for(&self) -> Option<Duration> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            since => Some(
                epoch()
                    .elapsed()
                    .saturating_sub(Duration::from_millis(since - 1)),
            ),
        }
    }
}

/// The connections being served, oldest first, with how many each holds per address.
#[derive(Default)]
pub(super) struct OpenConnections {
    next: std::sync::atomic::AtomicU64,
    list: Mutex<VecDeque<OpenConnection>>,
    per_ip: Mutex<HashMap<IpAddr, usize>>,
}

struct OpenConnection {
    id: u64,
    ip: IpAddr,
    answering: Arc<AtomicUsize>,
    held: Arc<Held>,
    /// When it was accepted: a connection younger than [`IDLE_GRACE`] is not idle yet.
    since: Instant,
    abort: tokio::task::AbortHandle,
}

/// How long a new connection has to send its first head before it counts as idle at
/// capacity. Without it, under a churn of reconnecting attackers, a real client's connection
/// was taken before its head arrived (reset); a round trip is well under this.
const IDLE_GRACE: Duration = Duration::from_secs(1);

impl OpenConnections {
    pub(super) fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts one more connection from `ip`, unless it holds `cap` already.
    pub(super) fn admit(&self, ip: IpAddr, cap: usize) -> bool {
        let mut per_ip = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        let n = per_ip.entry(ip).or_default();
        if *n >= cap {
            return false;
        }
        *n += 1;
        true
    }

    /// Gives back a connection `admit` counted.
    pub(super) fn release(&self, ip: IpAddr) {
        let mut per_ip = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = per_ip.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                per_ip.remove(&ip);
            }
        }
    }

    pub(super) fn add(
        &self,
        id: u64,
        ip: IpAddr,
        answering: Arc<AtomicUsize>,
        held: Arc<Held>,
        abort: tokio::task::AbortHandle,
    ) {
        self.list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(OpenConnection {
                id,
                ip,
                answering,
                held,
                since: Instant::now(),
                abort,
            });
    }

    pub(super) fn remove(&self, id: u64) {
        self.list
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|c| c.id != id);
    }

    /// At capacity, whether a new connection from `ip` (counted already) is to be closed at
    /// once: its address holds more than an even share of `capacity` among the addresses
    /// connected now, and there is another address.
    pub(super) fn over_share(&self, ip: IpAddr, capacity: usize) -> bool {
        let per_ip = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        let share = capacity / per_ip.len().max(1);
        per_ip.len() > 1 && per_ip.get(&ip).copied().unwrap_or(0) > share.max(1)
    }

    /// Ends one connection to make room for a new one (its slot is given back when its task
    /// is dropped): see the module's comment for which. Returns whether one was ended.
    pub(super) fn evict_one(&self, capacity: usize, stall: Duration) -> bool {
        let heaviest = {
            let per_ip = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
            let share = capacity / per_ip.len().max(1);
            per_ip
                .iter()
                .max_by_key(|(_, n)| **n)
                .filter(|(_, n)| **n > share.max(1))
                .map(|(ip, _)| *ip)
        };
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let idle = |c: &OpenConnection| {
            c.answering.load(Ordering::Relaxed) == 0 && c.since.elapsed() >= IDLE_GRACE
        };
        let stalled = |c: &OpenConnection| c.held.stalled_for().filter(|d| *d >= stall);
        let found = heaviest
            .and_then(|h| list.iter().position(|c| c.ip == h && idle(c)))
            .or_else(|| list.iter().position(idle))
            .or_else(|| {
                let longest = list
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| Some((i, stalled(c)?)));
                longest.max_by_key(|(_, d)| *d).map(|(i, _)| i)
            })
            .or_else(|| heaviest.and_then(|h| list.iter().position(|c| c.ip == h)));
        let Some(i) = found else {
            return false;
        };
        let c = list.remove(i).expect("found above");
        tracing::debug!(connection = c.id, peer = %c.ip, "at capacity: a connection gives way");
        c.abort.abort();
        true
    }
}

/// Counts a request as being answered from when it arrives until its response body is done
/// (or dropped): such a connection keeps its slot at capacity.
pub(super) struct Answering(Arc<AtomicUsize>);

impl Answering {
    pub(super) fn start(count: &Arc<AtomicUsize>) -> Answering {
        count.fetch_add(1, Ordering::Relaxed);
        Answering(count.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A response body that holds an [`Answering`] until it is done.
pub(super) struct Guarded<B> {
    inner: B,
    _answering: Answering,
}

impl<B> Guarded<B> {
    pub(super) fn new(inner: B, answering: Answering) -> Guarded<B> {
        Guarded {
            inner,
            _answering: answering,
        }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for Guarded<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A stream whose writes, while its peer holds them back, must move at least `min_rate`
/// bytes a second over each [`RATE_WINDOW`] (see the module's comment).
pub(super) struct MinRate<S> {
    inner: S,
    min_rate: u64,
    /// Whether, and since when, the peer holds writes back (for the stall rule).
    held: Arc<Held>,
    /// Since when writes have been held back, and how much went out since.
    window: Option<(Instant, u64)>,
}

impl<S> MinRate<S> {
    pub(super) fn new(inner: S, min_rate: u64, held: Arc<Held>) -> MinRate<S> {
        MinRate {
            inner,
            min_rate,
            held,
            window: None,
        }
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for MinRate<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for MinRate<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let min_rate = self.min_rate;
        match Pin::new(&mut self.inner).poll_write(cx, buf) {
            Poll::Pending => {
                self.held.held();
                if self.window.is_none() {
                    self.window = Some((Instant::now(), 0));
                }
                Poll::Pending
            }
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.held.moved();
                }
                if let Some((since, sent)) = self.window.as_mut() {
                    *sent += n as u64;
                    if since.elapsed() >= RATE_WINDOW {
                        let needed = min_rate.saturating_mul(since.elapsed().as_secs());
                        if *sent < needed {
                            return Poll::Ready(Err(std::io::Error::new(
                                std::io::ErrorKind::TimedOut,
                                "the client took the response slower than serve.min_send_bytes_per_sec",
                            )));
                        }
                        self.window = None;
                    }
                }
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two attackers hold every slot of four between them, one of them three: a new
    /// connection from either is over its share (closed at once), a third address's is
    /// not, and room is made for it from the heaviest address, answering or not.
    #[test]
    fn at_capacity_every_address_has_a_fair_share() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let open = OpenConnections::default();
        let (a, b, real): (IpAddr, IpAddr, IpAddr) = (
            "10.0.0.1".parse().unwrap(),
            "10.0.0.2".parse().unwrap(),
            "10.0.0.3".parse().unwrap(),
        );
        let mut tasks = Vec::new();
        for ip in [b, a, a, a] {
            assert!(open.admit(ip, 8));
            let task = rt.spawn(std::future::pending::<()>());
            let id = open.next_id();
            // Every connection is answering (slow readers).
            let held = Arc::new(Held::default());
            open.add(
                id,
                ip,
                Arc::new(AtomicUsize::new(1)),
                held,
                task.abort_handle(),
            );
            tasks.push((ip, task));
        }
        assert!(open.admit(a, 8));
        assert!(open.over_share(a, 4), "a holds 4 of 4 with two addresses");
        open.release(a);
        assert!(open.admit(real, 8));
        assert!(!open.over_share(real, 4));
        assert!(
            open.evict_one(4, Duration::from_secs(3)),
            "the heaviest address gives way, answering or not"
        );
        rt.block_on(tokio::task::yield_now());
        let ended: Vec<IpAddr> = tasks
            .iter()
            .filter(|(_, t)| t.is_finished())
            .map(|(ip, _)| *ip)
            .collect();
        assert_eq!(ended, [a]);
    }

    /// Every slot held by one connection per address, each answering (no address over its
    /// share, none idle): a moving one keeps its slot, the one stalled longest gives way once
    /// stalled for the threshold, and before anyone stalls that long no one does.
    #[test]
    fn at_capacity_a_stalled_connection_gives_way_whatever_its_address() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let open = OpenConnections::default();
        let mut tasks = Vec::new();
        let stall = Duration::from_millis(200);
        for k in 1..=4u8 {
            let ip = IpAddr::from([10, 0, 0, k]);
            assert!(open.admit(ip, 8));
            let task = rt.spawn(std::future::pending::<()>());
            let held = Arc::new(Held::default());
            // 10.0.0.2 and .3 stall (.2 first); .1 and .4 move.
            if k == 2 || k == 3 {
                held.held();
            }
            open.add(
                open.next_id(),
                ip,
                Arc::new(AtomicUsize::new(1)),
                held,
                task.abort_handle(),
            );
            tasks.push((ip, task));
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!open.evict_one(4, stall), "no one stalled for 200 ms yet");
        std::thread::sleep(stall);
        assert!(open.evict_one(4, stall));
        rt.block_on(tokio::task::yield_now());
        let ended: Vec<IpAddr> = tasks
            .iter()
            .filter(|(_, t)| t.is_finished())
            .map(|(ip, _)| *ip)
            .collect();
        assert_eq!(ended, [IpAddr::from([10, 0, 0, 2])], "the longest stalled");
    }

    /// IPv6 peers are counted by /64; IPv4-mapped ones as IPv4.
    #[test]
    fn ipv6_peers_are_grouped_by_their_64_prefix() {
        let g = |s: &str| peer_group(s.parse().unwrap()).to_string();
        assert_eq!(g("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::");
        assert_eq!(g("2001:db8:1:2::1"), g("2001:db8:1:2:ffff::9"));
        assert_ne!(g("2001:db8:1:2::1"), g("2001:db8:1:3::1"));
        assert_eq!(g("::ffff:192.0.2.7"), "192.0.2.7");
        assert_eq!(g("192.0.2.7"), "192.0.2.7");
    }
}
