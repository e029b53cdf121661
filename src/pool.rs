//! The r2d2 side: a pool of connection *slots* per server.
//!
//! A slot may hold a connected socket or nothing. The manager runs in the one background
//! thread shared by every pool of the process (`server::thread_pool`), so it never waits for
//! a server: when r2d2 asks for one of the first `min_idle` slots (so those connections open
//! at start-up, in the background) it only *starts* a non-blocking connect (for a host name
//! not resolved yet, the resolution: the connect starts once it has answered) and returns
//! the slot at once; later jobs of the same thread look, without waiting, whether the connect is done and then make
//! it a connection (plain TCP or a unix socket: one that exchanges nothing before its first
//! request). A caller that checks out a slot still connecting completes that connect (a TLS
//! handshake, SASL) in its own thread, within its own connect timeout; a slot without a
//! socket is connected by that caller the same way. So a server whose connects hang (a
//! dropped SYN) holds up only its own callers, never the slots of other servers and clients
//! or a `fork()` (its hook waits for the thread); a down server costs each caller one fast
//! connect error instead of r2d2's retry loop until the pool timeout; and a broken socket is
//! dropped from its slot without r2d2 having to replace the slot. Only the first `min_idle`
//! slots alive start a connect: r2d2 makes the others for callers that wait, more than there
//! are such callers, and each caller connects the slot it gets; a caller handed an empty
//! slot while a connected one is idle takes the connected one (`server::prefer_connected`),
//! so T callers at once open at most T connections beyond the `min_idle` kept.

use crate::conn::{Conn, ConnOptions, Deadline, Socket};
use crate::dialect::Dialect;
use crate::health::Health;
use crate::metrics::Counters;
use scheduled_thread_pool::ScheduledThreadPool;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

thread_local! {
    /// The checkout under way on this thread: its operation's deadline, which bounds the
    /// alive check (`test_on_check_out`) r2d2 makes of each slot it hands over, and whether
    /// such a check failed. A failed check was bounded by a whole I/O timeout and left a
    /// slot empty: one call looked at every idle connection in turn, each stale one costing
    /// an I/O timeout, past its operation_timeout (tester finding connlife 2: 4.1 s with a
    /// 1 s deadline, 13 s with the defaults, after a NAT forgot the pool's flows).
    static CHECKOUT: std::cell::Cell<(Deadline, bool)> =
        const { std::cell::Cell::new((Deadline::None, false)) };
}

/// A checkout with `deadline` begins on this thread (see [`CHECKOUT`]).
pub(crate) fn checkout_begins(deadline: Deadline) {
    CHECKOUT.set((deadline, false));
}

/// This thread's checkout is over: the deadline no longer applies to checks.
pub(crate) fn checkout_ends() {
    CHECKOUT.set((Deadline::None, false));
}

/// Whether an alive check of this thread's checkout under way failed.
pub(crate) fn alive_check_failed() -> bool {
    CHECKOUT.get().1
}

/// A pooled connection's place in its server's `pool_open` and `pool_idle` gauges, held by
/// the connection ([`Conn`]) from the moment it is connected until it is dropped: the gauges
/// count connections actually open, not r2d2's slots (a slot may hold none: a server that
/// refuses every connect has slots but no connection). Idle: in the pool, not checked out.
/// A connection of another fork generation (opened before a fork) does not count in the
/// child, which starts its gauges from 0 with its own pool.
pub(crate) struct OpenGauge {
    counters: Arc<Counters>,
    generation: u64,
    idle: bool,
}

impl OpenGauge {
    /// Counts a connection just opened: into the pool (`idle`) or for a caller.
    pub(crate) fn new(counters: &Arc<Counters>, idle: bool) -> OpenGauge {
        counters.pool_open.fetch_add(1, Relaxed);
        if idle {
            counters.pool_idle.fetch_add(1, Relaxed);
        }
        OpenGauge {
            counters: counters.clone(),
            generation: crate::fork::generation(),
            idle,
        }
    }

    /// The connection goes back to the pool (`true`) or out to a caller (`false`).
    pub(crate) fn set_idle(&mut self, idle: bool) {
        if self.idle == idle {
            return;
        }
        self.idle = idle;
        if self.generation == crate::fork::generation() {
            if idle {
                self.counters.pool_idle.fetch_add(1, Relaxed);
            } else {
                self.counters.pool_idle.fetch_sub(1, Relaxed);
            }
        }
    }
}

impl Drop for OpenGauge {
    fn drop(&mut self) {
        if self.generation == crate::fork::generation() {
            self.counters.pool_open.fetch_sub(1, Relaxed);
            if self.idle {
                self.counters.pool_idle.fetch_sub(1, Relaxed);
            }
        }
    }
}

/// A server's `(open, idle)` connections for its gauges (0 in a forked child until its own
/// pool opens one).
pub(crate) fn open_idle(counters: &Counters) -> (u32, u32) {
    if counters.pool_generation.load(Relaxed) != crate::fork::generation() {
        return (0, 0);
    }
    let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    (
        clamp(counters.pool_open.load(Relaxed)),
        clamp(counters.pool_idle.load(Relaxed)),
    )
}

/// A pooled slot: a connection, or room for one.
pub struct Slot {
    /// The socket, when connected. Boxed so that r2d2 moves a pointer, not the buffers'
    /// bookkeeping, on every checkout and return.
    pub(crate) conn: Option<Box<Conn>>,
    /// The connect the background thread started for this slot, until a caller takes it
    /// (shared with the background job that completes it).
    pub(crate) warm: Option<Arc<Mutex<Warm>>>,
    /// Its place in its pool's count of slots ([`Manager::slots`]), given back when r2d2
    /// drops the slot.
    _counted: SlotCount,
}

/// One slot counted in its pool's [`Manager::slots`] until dropped.
struct SlotCount(Arc<std::sync::atomic::AtomicU32>);

impl Drop for SlotCount {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

impl Slot {
    /// The background connect's state, taken out of the slot: the caller that checked the
    /// slot out completes it.
    pub(crate) fn take_warm(&mut self) -> Warm {
        match self.warm.take() {
            Some(w) => std::mem::replace(
                &mut *w.lock().unwrap_or_else(|p| p.into_inner()),
                Warm::Gone,
            ),
            None => Warm::Gone,
        }
    }
}

/// A connect the background thread started (see the module doc).
pub(crate) enum Warm {
    /// Waiting since `since` for the first answer of the server's name (resolved on a
    /// thread of its own, see `resolve`), to start a connect then.
    Resolving { since: Instant },
    /// Under way since `since` (a non-blocking TCP connect).
    Connecting {
        stream: std::net::TcpStream,
        peer: std::net::SocketAddr,
        since: Instant,
    },
    /// Connected; the handshake (TLS, SASL) is the caller's.
    Connected(Socket),
    /// A connection, counted open and idle in the gauges.
    Open(Box<Conn>),
    /// Nothing: not started, failed, given up at the connect timeout, or taken.
    Gone,
}

impl Warm {
    /// Resolving or connecting: the background thread looks again later.
    fn under_way(&self) -> bool {
        matches!(self, Warm::Resolving { .. } | Warm::Connecting { .. })
    }
}

/// The first look at a connect still under way, and the longest pause between looks.
const FIRST_LOOK: Duration = Duration::from_millis(1);
const LONGEST_PAUSE: Duration = Duration::from_millis(100);

/// r2d2 manager for one server.
#[derive(Clone)]
pub(crate) struct Manager {
    pub addr: Arc<crate::resolve::Resolve>,
    pub label: Arc<str>,
    pub opts: ConnOptions,
    pub dialect: Dialect,
    pub health: Arc<Health>,
    pub counters: Arc<Counters>,
    /// The background thread of the pool this manager serves (set when the pool is made):
    /// it looks again at connects still under way.
    pub threads: Option<Weak<ScheduledThreadPool>>,
    /// How many slots start a connect in the background: the pool's `min_idle`, the slots
    /// it keeps idle. The others are made for callers that wait for one, and r2d2 makes more
    /// of them than there are such callers (it asks for another each time a waiting caller
    /// wakes to find the slot taken): each started a connection nobody asked for, 7 to 16
    /// open for 3 threads (tester finding statscli 2), up to `max_size` with `min_idle` > 0
    /// (retest22 2). Their caller connects the slot it gets instead.
    pub warm_slots: u32,
    /// The slots of the pool this manager serves, alive now (each made by `connect`, given
    /// back when r2d2 drops it): a new slot within the first `warm_slots` starts a connect.
    /// Each pool counts its own (`server::make_pool`: a forked child's pool from 0).
    pub slots: Arc<std::sync::atomic::AtomicU32>,
}

/// The manager never fails, so its error type is never built.
#[derive(Debug)]
pub(crate) enum Never {}

impl std::fmt::Display for Never {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {}
    }
}

impl std::error::Error for Never {}

impl Manager {
    /// One step of a background connect, without waiting: a name that has resolved gets its
    /// connect started (one still resolving past the connect timeout: nothing); a connect
    /// under way that is done becomes a connection (or, with a handshake to do, a socket for the caller); one past
    /// the connect timeout, or failed, nothing.
    fn advance(&self, warm: Warm, epoch: u64) -> Warm {
        let warm = match warm {
            Warm::Resolving { since } => match self.addr.addrs_answered() {
                Ok(addrs) => nonblocking::start_tcp(&addrs).unwrap_or(Warm::Gone),
                Err(e)
                    if e.kind() == std::io::ErrorKind::WouldBlock
                        && since.elapsed() < self.opts.connect_timeout =>
                {
                    Warm::Resolving { since }
                }
                Err(_) => Warm::Gone,
            },
            other => other,
        };
        let warm = match warm {
            Warm::Connecting {
                stream,
                peer,
                since,
            } => match nonblocking::connected(&stream, Duration::ZERO) {
                Ok(true) => Warm::Connected(Socket::Tcp(stream, peer)),
                Ok(false) if since.elapsed() < self.opts.connect_timeout => Warm::Connecting {
                    stream,
                    peer,
                    since,
                },
                _ => Warm::Gone,
            },
            other => other,
        };
        match warm {
            Warm::Connected(socket) if !self.dialect.handshakes(&self.opts) => {
                match self.dialect.establish(
                    socket,
                    &self.addr,
                    &self.label,
                    &self.opts,
                    crate::conn::Deadline::None,
                ) {
                    Ok(mut c) => {
                        c.set_epoch(epoch);
                        c.set_mark(self.health.disconnects());
                        // Into the pool's idle list.
                        c.gauge = Some(OpenGauge::new(&self.counters, true));
                        Counters::bump(&self.counters.connects);
                        Warm::Open(Box::new(c))
                    }
                    Err(_) => Warm::Gone,
                }
            }
            other => other,
        }
    }

    /// Looks again, after `pause`, at the connect under way in `warm` (unless its slot is
    /// gone or a caller took it), doubling the pause up to [`LONGEST_PAUSE`].
    fn look_later(&self, warm: Weak<Mutex<Warm>>, epoch: u64, pause: Duration) {
        let Some(threads) = self.threads.as_ref().and_then(Weak::upgrade) else {
            return;
        };
        let manager = self.clone();
        threads.execute_after(pause, move || {
            let Some(w) = warm.upgrade() else {
                return;
            };
            let mut state = w.lock().unwrap_or_else(|p| p.into_inner());
            if !state.under_way() {
                return;
            }
            let now = std::mem::replace(&mut *state, Warm::Gone);
            *state = manager.advance(now, epoch);
            if state.under_way() {
                drop(state);
                manager.look_later(warm, epoch, (pause * 2).min(LONGEST_PAUSE));
            }
        });
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Slot;
    type Error = Never;

    fn connect(&self) -> Result<Slot, Never> {
        let alive = self.slots.fetch_add(1, Relaxed) + 1;
        let mut slot = Slot {
            conn: None,
            warm: None,
            _counted: SlotCount(self.slots.clone()),
        };
        if alive > self.warm_slots || !self.health.is_healthy() {
            return Ok(slot);
        }
        let epoch = self.health.epoch();
        let started = nonblocking::start(&self.addr).unwrap_or(Warm::Gone);
        match self.advance(started, epoch) {
            Warm::Gone => {}
            Warm::Open(conn) => slot.conn = Some(conn),
            warm => {
                let connecting = warm.under_way();
                let shared = Arc::new(Mutex::new(warm));
                if connecting {
                    self.look_later(Arc::downgrade(&shared), epoch, FIRST_LOOK);
                }
                slot.warm = Some(shared);
            }
        }
        Ok(slot)
    }

    fn is_valid(&self, slot: &mut Slot) -> Result<(), Never> {
        if let Some(conn) = slot.conn.as_mut() {
            // Bounded by the I/O timeout and the deadline of the checkout it is part of.
            let (deadline, _) = CHECKOUT.get();
            conn.set_deadline(deadline);
            if !conn.is_reusable() || self.dialect.alive_check(conn).is_err() {
                slot.conn = None;
                CHECKOUT.set((deadline, true));
            }
        }
        Ok(())
    }

    fn has_broken(&self, slot: &mut Slot) -> bool {
        // Normally already emptied by the client; this catches every other path.
        if slot.conn.as_ref().is_some_and(|c| !c.is_reusable()) {
            slot.conn = None;
        }
        false
    }
}

/// Connects that never wait: started by the background thread, completed by it (a look
/// that does not wait) or by a caller (a wait bounded by its connect timeout).
pub(crate) mod nonblocking {
    use super::Warm;
    use crate::address::ServerAddr;
    use crate::conn::Socket;
    use crate::resolve::Resolve;
    use std::io;
    use std::net::{SocketAddr, TcpStream};
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::os::unix::net::UnixStream;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Starts a connect to the server's first known address (a host name not resolved yet
    /// starts resolving in the background, see `resolve`, and its connect starts once it
    /// has: `Resolving`). A unix socket connects at once or not at all (its listen queue
    /// full: "would block").
    pub(crate) fn start(target: &Arc<Resolve>) -> io::Result<Warm> {
        match target.addr() {
            ServerAddr::Tcp { .. } => match target.addrs_known() {
                Ok(addrs) => start_tcp(&addrs),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Warm::Resolving {
                    since: Instant::now(),
                }),
                Err(e) => Err(e),
            },
            ServerAddr::Unix(path) => unix(path).map(|s| Warm::Connected(Socket::Unix(s))),
        }
    }

    /// Starts a TCP connect to the first of `addrs`.
    pub(crate) fn start_tcp(addrs: &[SocketAddr]) -> io::Result<Warm> {
        let peer = *addrs
            .first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
        let stream = tcp(&peer)?;
        Ok(Warm::Connecting {
            stream,
            peer,
            since: Instant::now(),
        })
    }

    /// A TCP socket (non-blocking) whose connect to `sa` is under way or done.
    #[allow(unsafe_code)] // socket(2), connect(2)
    fn tcp(sa: &SocketAddr) -> io::Result<TcpStream> {
        let domain = match sa {
            SocketAddr::V4(_) => libc::AF_INET,
            SocketAddr::V6(_) => libc::AF_INET6,
        };
        let fd = {
            // SAFETY: plain system call; the descriptor is ours, owned by the stream below.
            unsafe {
                libc::socket(
                    domain,
                    libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                    0,
                )
            }
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a socket just opened and owned by nobody else.
        let stream = unsafe { TcpStream::from_raw_fd(fd) };
        let rc = match sa {
            SocketAddr::V4(a) => {
                let sin = libc::sockaddr_in {
                    sin_family: libc::AF_INET as libc::sa_family_t,
                    sin_port: a.port().to_be(),
                    sin_addr: libc::in_addr {
                        s_addr: u32::from(*a.ip()).to_be(),
                    },
                    sin_zero: [0; 8],
                };
                // SAFETY: `sin` is a valid sockaddr_in of the given length during the call.
                unsafe {
                    libc::connect(
                        fd,
                        (&sin as *const libc::sockaddr_in).cast(),
                        std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
                    )
                }
            }
            SocketAddr::V6(a) => {
                let sin6 = libc::sockaddr_in6 {
                    sin6_family: libc::AF_INET6 as libc::sa_family_t,
                    sin6_port: a.port().to_be(),
                    sin6_flowinfo: a.flowinfo(),
                    sin6_addr: libc::in6_addr {
                        s6_addr: a.ip().octets(),
                    },
                    sin6_scope_id: a.scope_id(),
                };
                // SAFETY: `sin6` is a valid sockaddr_in6 of the given length during the call.
                unsafe {
                    libc::connect(
                        fd,
                        (&sin6 as *const libc::sockaddr_in6).cast(),
                        std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
                    )
                }
            }
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINPROGRESS) {
                return Err(e);
            }
        }
        Ok(stream)
    }

    /// A unix socket connected to `path` (in blocking mode), or the reason it is not: a
    /// full listen queue is "would block", not a wait (a blocking connect would wait).
    #[allow(unsafe_code)] // socket(2), connect(2)
    fn unix(path: &std::path::Path) -> io::Result<UnixStream> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        // SAFETY: an all-zero sockaddr_un is a valid value.
        let mut sun: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        if bytes.len() >= sun.sun_path.len() || bytes.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "unix socket path too long",
            ));
        }
        sun.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, s) in sun.sun_path.iter_mut().zip(bytes) {
            *d = *s as libc::c_char;
        }
        let fd = {
            // SAFETY: plain system call; the descriptor is ours, owned by the stream below.
            unsafe {
                libc::socket(
                    libc::AF_UNIX,
                    libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                    0,
                )
            }
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a socket just opened and owned by nobody else.
        let stream = unsafe { UnixStream::from_raw_fd(fd) };
        // SAFETY: `sun` is a valid sockaddr_un of the given length during the call.
        let rc = unsafe {
            libc::connect(
                fd,
                (&sun as *const libc::sockaddr_un).cast(),
                std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        stream.set_nonblocking(false)?;
        Ok(stream)
    }

    /// A TCP connect to `sa` within `timeout` (the stream in blocking mode), as
    /// `TcpStream::connect_timeout`, but a signal that interrupts the wait is seen (see
    /// [`connected`]). A connect not done in time is `TimedOut`.
    pub(crate) fn connect_tcp(sa: &SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
        let stream = tcp(sa)?;
        if connected(&stream, timeout)? {
            Ok(stream)
        } else {
            Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))
        }
    }

    /// Waits at most `timeout` (zero: only looks) for the connect under way on `stream`:
    /// `true` once connected (the stream then in blocking mode), `false` while under way,
    /// the connect's error if it failed. A wait interrupted by a signal asks the process's
    /// interrupt check (`crate::set_interrupt_check`): `conn::interrupted_io()` when it says
    /// to end the call (see `conn::connect_error`), else the wait goes on for the time left.
    #[allow(unsafe_code)] // poll(2)
    pub(crate) fn connected(stream: &TcpStream, timeout: Duration) -> io::Result<bool> {
        let end = Instant::now() + crate::server::addable(timeout);
        loop {
            let left = end.saturating_duration_since(Instant::now());
            // Rounded up: a wait never ends before its time.
            let ms = i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX);
            let mut pfd = libc::pollfd {
                fd: stream.as_raw_fd(),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: `pfd` is one valid pollfd during the call.
            let n = unsafe { libc::poll(&mut pfd, 1, ms) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    if crate::conn::interrupt_requested() {
                        return Err(crate::conn::interrupted_io());
                    }
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Ok(false);
            }
            if let Some(e) = stream.take_error()? {
                return Err(e);
            }
            if pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    "connect failed",
                ));
            }
            stream.set_nonblocking(false)?;
            return Ok(true);
        }
    }
}
