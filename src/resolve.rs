//! Name resolution of a server's host, bounded in time (docs/topology.md).
//!
//! `getaddrinfo` (what `to_socket_addrs` calls) has no timeout of its own: a stalled DNS
//! server would hold a caller past its `connect_timeout` and its operation deadline. So a
//! host name is resolved on a helper thread, and the caller waits for the answer at most the
//! time its connect may take. At most one resolution per server is in flight: a caller that
//! arrives while one runs waits for that one, so a stalled resolver holds one thread per
//! server, never one per caller.
//!
//! Connections the pool opens in the background (`min_idle`, on r2d2's one thread that
//! serves every server of the client) never wait for a resolver: they use the last answer,
//! or, when there is none yet (at build), start a resolution and look again later, without
//! waiting, for at most the connect timeout; the slot of a name that has not answered by
//! then stays empty (the caller that takes it connects, waiting as above).
//!
//! IP literals and unix socket paths never go through a resolver. A host name goes through
//! the user's resolver ([`ClientBuilder::resolver`](crate::ClientBuilder::resolver)) when one
//! is set, the system's otherwise.
//!
//! `resolve_interval` 0 (the default) resolves at every new connection, as before. Above 0,
//! the addresses are kept and re-resolved in the background once they are older than the
//! interval (triggered by the next connect or the next connection given back, which keep
//! using the addresses they have meanwhile); a connection to an address the last answer no
//! longer lists is closed when it is next given back, so the pool follows the name.
//!
//! A name is one server, whatever number of addresses it resolves to: the connections of its
//! pool all go to one address at a time (the pinned one, the address the last connect
//! reached), tried first while the answer lists it. When a connect reaches another address
//! (the pinned one left the answer or refused), that one is pinned and every connection to
//! the others is closed when next checked out or given back. Otherwise a name with several
//! addresses (round-robin DNS, a name that moved while its old address still runs) would
//! split one server's keys over two memcached, and a read could miss a write made a moment
//! before, or read an older value (tester finding fleet 1).

use crate::address::ServerAddr;
use crate::fork;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

/// The function of a [`Resolver`].
pub type ResolveFn = dyn Fn(&str, u16) -> io::Result<Vec<SocketAddr>> + Send + Sync;

/// A resolver: the addresses of `host` (as written in the server list) and `port`.
#[derive(Clone)]
pub struct Resolver(pub Arc<ResolveFn>);

impl fmt::Debug for Resolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Resolver")
    }
}

/// What the resolver of one server knows.
#[derive(Default)]
struct State {
    /// The last answer, and when it arrived.
    addrs: Option<(Arc<Vec<SocketAddr>>, Instant)>,
    /// The last failure (kind and message), when the last resolution failed.
    error: Option<(io::ErrorKind, String)>,
    /// Completed resolutions so far.
    done: u64,
    /// A resolution in flight, started in this fork generation.
    in_flight: Option<u64>,
    /// The address the connections go to (the last one a connect reached).
    pinned: Option<SocketAddr>,
}

/// One server's address and its resolution.
pub(crate) struct Resolve {
    addr: ServerAddr,
    /// The literal address, for an IP literal (no resolver involved).
    literal: Option<SocketAddr>,
    resolver: Option<Resolver>,
    interval: Duration,
    state: Mutex<State>,
    answered: Condvar,
    /// How many times the pinned address changed: a connection opened under another count
    /// goes to an address no longer pinned.
    pins: AtomicU64,
    /// Some connection to this address has read a reply: a reset before any reply is then
    /// no TLS-only server's answer to a plain client (the hint is left out). Shared with
    /// each connection ([`Resolve::replied`]), which sets it at its first reply.
    replied: Arc<AtomicBool>,
    /// The fork generation it was made in: in a forked child the state's lock may have
    /// been held at the fork by a thread of the parent, which is not here to release it
    /// ([`Resolve::lock`]).
    made_in: u64,
}

impl fmt::Debug for Resolve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Resolve({})", self.addr)
    }
}

impl Resolve {
    pub(crate) fn new(addr: ServerAddr, resolver: Option<Resolver>, interval: Duration) -> Self {
        let literal = match &addr {
            ServerAddr::Tcp { host, port } => host
                .parse::<IpAddr>()
                .ok()
                .map(|ip| SocketAddr::new(ip, *port)),
            ServerAddr::Unix(_) => None,
        };
        Resolve {
            addr,
            literal,
            resolver,
            interval,
            state: Mutex::new(State::default()),
            answered: Condvar::new(),
            pins: AtomicU64::new(0),
            replied: Arc::new(AtomicBool::new(false)),
            made_in: fork::generation(),
        }
    }

    /// Whether some connection to this address has read a reply, for each connection to
    /// share (and set at its first reply).
    pub(crate) fn replied(&self) -> &Arc<AtomicBool> {
        &self.replied
    }

    /// The server's address as configured.
    pub(crate) fn addr(&self) -> &ServerAddr {
        &self.addr
    }

    /// The state, or in a forked child `None` when its lock is held: by a thread of the
    /// parent at the fork (never released here: waiting would hang the child for good, as
    /// a child whose every call timed out in line for a connection the background thread,
    /// stuck on this lock, never made), or by another thread of the child. The callers
    /// then resolve on their own thread without the shared answer (or, in the background,
    /// leave the connect to the caller).
    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        if fork::generation() == self.made_in {
            return Some(self.state.lock().unwrap_or_else(|p| p.into_inner()));
        }
        match self.state.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// One lookup of `host` and `port`: the configured resolver's, else the system's. A
    /// resolver that panics answers an error naming it (the next lookup asks it again): its
    /// unwinding ended the helper thread before the answer, so no resolution ever ended and
    /// the server stayed out of reach for good (tester finding callbacks 1).
    fn lookup(&self, host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        match &self.resolver {
            Some(r) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (r.0)(host, port)))
                .unwrap_or_else(|payload| {
                    let what = payload
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| payload.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "no message".into());
                    Err(io::Error::other(format!("the resolver panicked: {what}")))
                }),
            None => (host, port).to_socket_addrs().map(|it| it.collect()),
        }
    }

    /// A resolution on the calling thread, for a forked child that cannot use the shared
    /// state ([`Resolve::lock`]).
    fn resolve_here(&self) -> io::Result<Arc<Vec<SocketAddr>>> {
        let ServerAddr::Tcp { host, port } = &self.addr else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a TCP address",
            ));
        };
        let addrs = self.lookup(host, *port)?;
        if addrs.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "host name did not resolve",
            ));
        }
        Ok(Arc::new(addrs))
    }

    /// "Would block": no answer yet (one in flight, or the state out of reach in a forked
    /// child): the background does not wait, the caller that takes the slot resolves.
    fn not_yet(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("{} is not resolved yet", self.addr.host()),
        )
    }

    /// The addresses to connect to, waiting at most `timeout` for a resolution (or until the
    /// interrupt check asks to end the call: `conn::interrupted_io`).
    pub(crate) fn addrs(self: &Arc<Self>, timeout: Duration) -> io::Result<Arc<Vec<SocketAddr>>> {
        if let Some(sa) = self.literal {
            return Ok(Arc::new(vec![sa]));
        }
        let started = Instant::now();
        let Some(mut st) = self.lock() else {
            return self.resolve_here();
        };
        if !self.interval.is_zero() {
            if let Some((addrs, at)) = &st.addrs {
                let addrs = addrs.clone();
                if at.elapsed() >= self.interval {
                    self.start(&mut st);
                }
                return Ok(addrs);
            }
        }
        // A fresh answer: the one in flight, or a new one.
        let before = st.done;
        self.start(&mut st);
        let poll = crate::conn::interrupt_poll();
        let mut waited = false;
        while st.done == before {
            // A signal does not interrupt the wait: the interrupt check is asked between
            // slices of it (see `conn::INTERRUPT_POLL`).
            if waited && poll.is_some() && crate::conn::interrupt_requested() {
                return Err(crate::conn::interrupted_io());
            }
            waited = true;
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "resolving {} took longer than {timeout:?}",
                        self.addr.host()
                    ),
                ));
            }
            st = self
                .answered
                .wait_timeout(st, poll.map_or(left, |p| left.min(p)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        match (&st.error, &st.addrs) {
            (Some((kind, msg)), _) => Err(io::Error::new(*kind, msg.clone())),
            (None, Some((addrs, _))) => Ok(addrs.clone()),
            (None, None) => Err(io::Error::new(
                io::ErrorKind::NotFound,
                "host name did not resolve",
            )),
        }
    }

    /// The addresses known now, for a connection opened in the background (r2d2's thread,
    /// shared by every server of the client, must never wait for a resolver): the last
    /// answer, or an error (starting a resolution) when there is none yet.
    pub(crate) fn addrs_known(self: &Arc<Self>) -> io::Result<Arc<Vec<SocketAddr>>> {
        if let Some(sa) = self.literal {
            return Ok(Arc::new(vec![sa]));
        }
        let Some(mut st) = self.lock() else {
            return Err(self.not_yet());
        };
        let known = st.addrs.as_ref().map(|(addrs, at)| (addrs.clone(), *at));
        match known {
            Some((addrs, at)) => {
                if !self.interval.is_zero() && at.elapsed() >= self.interval {
                    self.start(&mut st);
                }
                Ok(addrs)
            }
            None => {
                self.start(&mut st);
                Err(self.not_yet())
            }
        }
    }

    /// As [`Resolve::addrs_known`] for a slot waiting for the first answer, never starting a
    /// resolution: the last answer; "would block" while the one in flight runs; its error
    /// when it failed (the slot then stays empty: the caller that takes it resolves again).
    pub(crate) fn addrs_answered(&self) -> io::Result<Arc<Vec<SocketAddr>>> {
        if let Some(sa) = self.literal {
            return Ok(Arc::new(vec![sa]));
        }
        let Some(st) = self.lock() else {
            // (not "would block": the slot's connect is given up, and its caller resolves)
            return Err(io::Error::other(self.not_yet().to_string()));
        };
        if let Some((addrs, _)) = &st.addrs {
            return Ok(addrs.clone());
        }
        if st.in_flight == Some(fork::generation()) {
            return Err(self.not_yet());
        }
        Err(match &st.error {
            Some((kind, msg)) => io::Error::new(*kind, msg.clone()),
            None => io::Error::new(io::ErrorKind::NotFound, "host name did not resolve"),
        })
    }

    /// Records that a connect reached `peer`: pins it (first in the addresses tried from now
    /// on) when it was not. Returns the pin count the connection is opened under (see
    /// [`Resolve::still_current`]).
    pub(crate) fn connected_to(&self, peer: SocketAddr) -> u64 {
        if self.literal.is_some() {
            return 0;
        }
        let Some(mut st) = self.lock() else {
            return self.pins.load(Ordering::Acquire);
        };
        if st.pinned == Some(peer) {
            return self.pins.load(Ordering::Acquire);
        }
        st.pinned = Some(peer);
        if let Some((addrs, _)) = &mut st.addrs {
            *addrs = pinned_first(addrs.to_vec(), Some(peer));
        }
        self.pins.fetch_add(1, Ordering::AcqRel) + 1
    }

    /// False when a connection to `peer` opened under pin count `pins` should close: another
    /// address was pinned since, or (with a `resolve_interval`) the name no longer resolves
    /// to `peer` (starts a due re-resolution).
    pub(crate) fn still_current(self: &Arc<Self>, peer: Option<SocketAddr>, pins: u64) -> bool {
        let Some(peer) = peer else { return true };
        if self.literal.is_some() {
            return true;
        }
        if pins != self.pins.load(Ordering::Acquire) {
            return false;
        }
        if self.interval.is_zero() {
            return true;
        }
        let Some(mut st) = self.lock() else {
            return true;
        };
        let Some((addrs, at)) = &st.addrs else {
            return true;
        };
        let listed = addrs.contains(&peer);
        if at.elapsed() >= self.interval {
            self.start(&mut st);
        }
        listed
    }

    /// Starts a resolution on a helper thread unless one is in flight.
    fn start(self: &Arc<Self>, st: &mut State) {
        let generation = fork::generation();
        // A resolution started before a fork has no thread in this process.
        if st.in_flight == Some(generation) {
            return;
        }
        let ServerAddr::Tcp { host, port } = &self.addr else {
            return;
        };
        let (host, port) = (host.clone(), *port);
        st.in_flight = Some(generation);
        let this = self.clone();
        let spawned = crate::quiet_threads::spawn_quiet(|| {
            std::thread::Builder::new()
                .name("mcpool-resolve".into())
                .spawn(move || {
                    let answer = this.lookup(&host, port);
                    this.answer(answer);
                })
        });
        if let Err(e) = spawned {
            st.in_flight = None;
            st.done += 1;
            st.error = Some((e.kind(), format!("no thread to resolve on: {e}")));
        }
    }

    /// Records a resolution's answer and wakes its waiters. It waits for the state's lock
    /// even in a forked child: [`Resolve::start`] took that lock in this process to start
    /// this thread, so no thread of the parent holds it for good here; only a thread of
    /// this process, which releases it. (Giving up when the lock was busy, as callers do in
    /// a child, lost the answer while the thread that started the lookup still held it: the
    /// lookup stayed in flight for good, and every call of that child waited out its connect
    /// timeout; tester finding prefork 1.)
    fn answer(&self, answer: io::Result<Vec<SocketAddr>>) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.in_flight = None;
        st.done += 1;
        match answer {
            Ok(addrs) if !addrs.is_empty() => {
                let addrs = pinned_first(addrs, st.pinned);
                st.addrs = Some((addrs, Instant::now()));
                st.error = None;
            }
            Ok(_) => {
                st.error = Some((io::ErrorKind::NotFound, "host name did not resolve".into()));
            }
            Err(e) => {
                // A known answer stays in use while re-resolving fails (`resolve_interval`).
                st.error = Some((e.kind(), format!("resolving {}: {e}", self.addr.host())));
                if let Some((_, at)) = &mut st.addrs {
                    if !self.interval.is_zero() {
                        *at = Instant::now();
                        st.error = None;
                    }
                }
            }
        }
        drop(st);
        self.answered.notify_all();
    }
}

/// `addrs` with `pinned` first when it is among them, the others in the order given.
fn pinned_first(mut v: Vec<SocketAddr>, pinned: Option<SocketAddr>) -> Arc<Vec<SocketAddr>> {
    if let Some(i) = pinned.and_then(|p| v.iter().position(|a| *a == p)) {
        v[..=i].rotate_right(1);
    }
    Arc::new(v)
}
