//! One connection to one server: a socket, a read buffer, a write buffer and timeouts.
//!
//! A connection is *clean* only between complete exchanges. `begin` marks it dirty; only
//! `finish`, after every byte of the reply was consumed and nothing more arrived, marks it
//! clean again. Any error, timeout, early return or panic in between leaves it dirty, and a
//! dirty connection is closed instead of being returned to the pool: a half-read socket
//! would hand the previous caller's reply to the next caller.

use crate::address::ServerAddr;
use crate::error::{Error, Result};
use crate::fork;
use crate::proto::{Codec, Status};
use crate::resolve::Resolve;
use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// A reply of a few hundred values fits in one read.
const INITIAL_BUF: usize = 64 * 1024;
const KEEP_BUF: usize = 256 * 1024;
/// How far beyond the bytes already buffered the read buffer may grow in one step (or twice
/// the buffered bytes, when more): a reply header announcing a huge value costs memory only
/// as the value's bytes arrive, never the announced length up front.
const GROW_STEP: usize = 4 << 20;

/// How long the operation a connection serves may still take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deadline {
    /// Only the per-read/write I/O timeout applies.
    None,
    /// Until `at`. `left` is at most the time still left: what was left at the last reading
    /// of the clock, less what every socket call since may have taken (a full I/O timeout
    /// each). While `left` covers the next call no clock is read; once it runs low the clock
    /// is read and `left` set afresh. A fast exchange reads the clock once, at the start of
    /// the operation.
    At {
        /// The operation's deadline.
        at: Instant,
        /// A lower bound of the time left before `at`.
        left: Duration,
    },
}

impl Deadline {
    /// The deadline of an operation starting now and allowed `timeout` (one clock reading;
    /// none without a timeout, for a zero one, which means none, or for one too large to be
    /// an instant).
    pub(crate) fn after(timeout: Option<Duration>) -> Deadline {
        match timeout {
            None => Deadline::None,
            Some(left) if left.is_zero() => Deadline::None,
            Some(left) => match Instant::now().checked_add(left) {
                Some(at) => Deadline::At { at, left },
                None => Deadline::None,
            },
        }
    }

    /// The instant it passes, if any.
    pub(crate) fn instant(self) -> Option<Instant> {
        match self {
            Deadline::None => None,
            Deadline::At { at, .. } => Some(at),
        }
    }

    /// Counts `d` as spent (it may have taken that long), without reading the clock.
    pub(crate) fn charge(&mut self, d: Duration) {
        if let Deadline::At { left, .. } = self {
            *left = left.saturating_sub(d);
        }
    }

    /// The time left at `now` (and `left` brought up to date); `None` without a deadline.
    pub(crate) fn left_at(&mut self, now: Instant) -> Option<Duration> {
        match self {
            Deadline::None => None,
            Deadline::At { at, left } => {
                *left = at.saturating_duration_since(now);
                Some(*left)
            }
        }
    }

    /// `d`, shortened to what is left before the deadline (reads the clock when there is one).
    pub(crate) fn limit(&mut self, d: Duration) -> Duration {
        self.left_at(Instant::now()).map_or(d, |left| d.min(left))
    }
}

/// The waits of one multi-server call (a multi-get, a batch of stores, deletes, ...),
/// which share one I/O timeout: every server's request is written before any reply is read,
/// so once one server's wait has timed out the others have been waiting as long. A later
/// server's wait then gets only what is left of the I/O timeout since the call last made
/// progress (bytes written on any of its connections, or bytes read, as of when they
/// arrived: a reply received while another server's wait was timing out is read, and
/// leaves the next wait no more time, see [`Conn::progress_in_quiet_set`]). So the call's
/// servers time out together, one I/O timeout after the last progress, as
/// Cache::Memcached::Fast's "per server set" timeout does, not one I/O timeout per silent
/// server in turn. Nothing of this costs anything until a wait times out.
#[derive(Debug, Default)]
pub(crate) struct SetWait {
    quiet_since: Option<Instant>,
    interrupted: bool,
}

/// The process's interrupt check, if any (read only after an interruption).
static INTERRUPT_CHECK: RwLock<Option<fn() -> bool>> = RwLock::new(None);

/// Sets (or, with `None`, removes) the process-wide interrupt check: a function called when
/// a socket read, write or connect is interrupted by a signal (`EINTR`), before it is tried
/// again, and every 50 ms while a call waits where a signal does not
/// interrupt it: in line for a pooled connection, or for the read another caller serves for
/// it. When it returns true the operation ends with [`Error::Interrupted`] (its connection is
/// closed, as after any error: a late reply can never reach the next call) and so does the
/// rest of a multi-server call. A language binding uses it to let a signal handler that
/// raised (Python's `KeyboardInterrupt`) end a call at once; it is never called on the
/// common path (a free connection, a reply in time), only from the thread of a call that
/// was interrupted or is waiting, so it must be cheap when nothing is pending.
pub fn set_interrupt_check(check: Option<fn() -> bool>) {
    *INTERRUPT_CHECK.write().unwrap_or_else(|e| e.into_inner()) = check;
}

/// Whether the interrupt check, if one is set, asks to end the call.
pub(crate) fn interrupt_requested() -> bool {
    let check = *INTERRUPT_CHECK.read().unwrap_or_else(|e| e.into_inner());
    check.is_some_and(|f| f())
}

/// How long a wait that no signal interrupts (a thread parked on a futex: a caller in line
/// for a pooled connection, or waiting for the read another caller serves for it) sleeps at
/// a time while an interrupt check is set, before it calls the check. A signal lands in such
/// a wait unseen (the futex wait is resumed), so the wait looks for one this often: a
/// Ctrl-C ends it within this time, as it ends a socket wait at once.
pub(crate) const INTERRUPT_POLL: Duration = Duration::from_millis(50);

/// The longest a futex wait of `d` may sleep before it asks the interrupt check
/// ([`INTERRUPT_POLL`]); `None` (sleep the whole wait) when no check is set, as in Rust, C,
/// Perl and Java.
pub(crate) fn interrupt_poll() -> Option<Duration> {
    INTERRUPT_CHECK
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .is_some()
        .then_some(INTERRUPT_POLL)
}

/// Socket settings for new connections.
#[derive(Clone, Debug)]
pub(crate) struct ConnOptions {
    pub connect_timeout: Duration,
    pub io_timeout: Duration,
    /// The most an operation's waits leave uncounted for the time its interrupt checks take
    /// (a binding's signal handlers: `Conn::resume`): the I/O timeout and the pool timeout,
    /// so a handler that waits `pool_timeout` for this very call's connection is the
    /// caller's time, while handlers that keep running cannot stretch a wait without end.
    pub handler_allowance: Duration,
    pub nodelay: bool,
    /// SO_KEEPALIVE, with the probes' idle time and interval (zero: the system's); `None`:
    /// off.
    pub keepalive: Option<Duration>,
    pub max_value: usize,
    /// The user's resolver for host names (`None`: the system's).
    pub resolver: Option<crate::resolve::Resolver>,
    /// How often a host name is re-resolved (zero: at every new connection).
    pub resolve_interval: Duration,
    #[cfg(feature = "tls")]
    pub tls: Option<(crate::tls::TlsConfig, crate::tls::TlsOptions)>,
}

/// What one [`Conn::scan`] step did with the unread bytes.
pub(crate) enum Scan<T> {
    /// It used this many bytes (whole reply units) and needs more; the hint is the length,
    /// from the first unused byte, of the unit it is waiting for, when known.
    More(usize, Option<usize>),
    /// It used this many bytes and is finished.
    Done(usize, T),
}

/// What memcached writes, in place of any reply and whatever the protocol, on a connection
/// it accepted beyond its connection limit (`-c`), before it closes it.
const CONNECTION_LIMIT_REPLY: &[u8] = b"ERROR Too many open connections\r\n";

/// A protocol error at `bytes` (the unparsed input), quoted by [`crate::proto::shown_reply`]; but
/// memcached's refusal of a connection beyond its limit ([`CONNECTION_LIMIT_REPLY`]) is a
/// refused connection ([`Error::Io`]: class `Connection`, a miss under `fail_open`), not
/// counted against the server, which is alive ([`Error::is_server_failure`]). The one place that reads
/// it, for every dialect: text and meta would take it for an unknown reply, binary for a
/// packet without its magic byte.
pub(crate) fn protocol_error_at(server: &str, bytes: &[u8], what: &str) -> Error {
    let quoted = format!("{what}: {}", crate::proto::shown_reply(bytes));
    protocol_error_saying(server, bytes, quoted)
}

/// What a client that does not speak TLS to a server that does is told to do: a build
/// without the `tls` feature says it has none (tester finding packaging 2: it said "turn
/// TLS on", which that build cannot).
pub(crate) const TURN_TLS_ON: &str = if cfg!(feature = "tls") {
    "turn TLS on"
} else {
    "turn TLS on, which this build of mcpool has not: README, \"TLS in every package\""
};

/// The error for `bytes` where a reply belonged, `detail` saying what was wrong: memcached's
/// refusal at its connection limit as that, a TLS record with the hint to turn TLS on.
pub(crate) fn protocol_error_saying(server: &str, bytes: &[u8], detail: String) -> Error {
    if bytes.starts_with(CONNECTION_LIMIT_REPLY) {
        return Error::Io {
            server: server.to_string(),
            source: io::Error::new(
                io::ErrorKind::ConnectionRefused,
                crate::error::CONNECTION_LIMIT_MESSAGE,
            ),
        };
    }
    // A TLS record (an alert or a handshake: type 21 or 22, version 3.x) where a memcached
    // reply belongs: the server speaks TLS and the client does not.
    let hint = match bytes {
        [0x15 | 0x16, 0x03, 0..=4, ..] => {
            format!(" (a TLS record: the server speaks TLS; {TURN_TLS_ON})")
        }
        _ => String::new(),
    };
    Error::Protocol {
        server: server.to_string(),
        detail: format!("{detail}{hint}"),
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    /// TLS: whether rustls holds decrypted bytes not read yet, so that a read takes them
    /// without waiting on the socket (which may stay quiet: they arrived already); never for
    /// plain sockets.
    fn holds_plaintext(&mut self) -> io::Result<bool> {
        match self {
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s
                .conn
                .process_new_packets()
                .map(|st| st.plaintext_bytes_to_read() > 0)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
            _ => Ok(false),
        }
    }

    /// The socket's descriptor (also the one to wait on while a request is only partly
    /// written).
    fn fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.sock.as_raw_fd(),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => tls_read(s, buf),
        }
    }

    fn set_timeouts(&self, t: Duration) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s
                .set_read_timeout(Some(t))
                .and(s.set_write_timeout(Some(t))),
            Stream::Unix(s) => s
                .set_read_timeout(Some(t))
                .and(s.set_write_timeout(Some(t))),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s
                .sock
                .set_read_timeout(Some(t))
                .and(s.sock.set_write_timeout(Some(t))),
        }
    }

    /// True when nothing is waiting to be read and the peer has not closed: for a pooled
    /// connection about to be reused, where any byte would be a stray (duplicated or late)
    /// reply. One non-blocking `recv(MSG_PEEK)`; no clock read.
    fn is_quiet(&mut self) -> bool {
        match self {
            Stream::Tcp(s) => peek_quiet(s.as_raw_fd()),
            Stream::Unix(s) => peek_quiet(s.as_raw_fd()),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => tls_quiet(s),
        }
    }

    /// How long ago the connection last sent or received data, when the kernel says (TCP on
    /// Linux: `TCP_INFO`, millisecond resolution). A wait began no earlier: data received
    /// during a wait ends it, and a request is sent before its reply is waited for.
    /// One system call; only after a wait was interrupted.
    fn quiet_for(&self) -> Option<Duration> {
        self.last_data().map(|(sent, received)| sent.min(received))
    }

    /// How long ago the connection last received data, when the kernel says (as
    /// [`Stream::quiet_for`]): bytes read now may have arrived long before.
    fn received_ago(&self) -> Option<Duration> {
        self.last_data().map(|(_, received)| received)
    }

    /// How long ago data was last sent and received, when the kernel says.
    fn last_data(&self) -> Option<(Duration, Duration)> {
        match self {
            Stream::Tcp(s) => tcp_last_data(s.as_raw_fd()),
            Stream::Unix(_) => None,
            #[cfg(feature = "tls")]
            Stream::Tls(s) => tcp_last_data(s.sock.as_raw_fd()),
        }
    }

    /// One write system call that never waits: what the socket's send buffer takes now
    /// (`WouldBlock` when it takes nothing), so that a request larger than the buffers can
    /// be written while its replies are read (see [`Conn::send`]). TLS: the plaintext rustls
    /// takes (up to its buffer limit, once the records of earlier writes are out), its
    /// records written as far as the socket takes them without waiting (the rest by
    /// [`Stream::flush_now`]).
    fn write_some(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => send_now(s.as_raw_fd(), buf),
            Stream::Unix(s) => send_now(s.as_raw_fd(), buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => {
                use std::io::Write;
                let fd = s.sock.as_raw_fd();
                if !tls_flush(&mut s.conn, fd)? {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                let n = s.conn.writer().write(buf)?;
                tls_flush(&mut s.conn, fd)?;
                if n == 0 && !buf.is_empty() {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
                Ok(n)
            }
        }
    }

    /// TLS: whether records of written plaintext are still to go out (see
    /// [`Stream::write_some`]); never for plain sockets.
    #[inline]
    fn unflushed(&self) -> bool {
        match self {
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.conn.wants_write(),
            _ => false,
        }
    }

    /// TLS: writes queued records as far as the socket takes them without waiting.
    fn flush_now(&mut self) -> io::Result<()> {
        match self {
            #[cfg(feature = "tls")]
            Stream::Tls(s) => tls_flush(&mut s.conn, s.sock.as_raw_fd()).map(drop),
            _ => Ok(()),
        }
    }

    /// Once the socket is readable while a request is only partly written: true when a read
    /// will not wait (always, for a plain socket). TLS: takes in the records that arrived,
    /// without waiting, and says whether they hold plaintext (or the stream ended); rustls'
    /// own read would wait for a whole record, and write its queued records first.
    fn pull_now(&mut self) -> io::Result<bool> {
        match self {
            #[cfg(feature = "tls")]
            Stream::Tls(s) => {
                match s.conn.read_tls(&mut DontWait(s.sock.as_raw_fd())) {
                    Ok(0) => return Ok(true),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                    Err(e) => return Err(e),
                }
                let st = s
                    .conn
                    .process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                Ok(st.plaintext_bytes_to_read() > 0 || st.peer_has_closed())
            }
            _ => Ok(true),
        }
    }
}

/// Writes rustls' queued records to socket `fd` as far as it takes them without waiting:
/// true when none are left.
#[cfg(feature = "tls")]
fn tls_flush(conn: &mut rustls::ClientConnection, fd: RawFd) -> io::Result<bool> {
    /// The socket as a writer that never waits.
    struct SendNow(RawFd);
    impl io::Write for SendNow {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            send_now(self.0, buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    // Bounded: every turn writes bytes (the queue is finite) or returns.
    while conn.wants_write() {
        match conn.write_tls(&mut SendNow(fd)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// A read of plaintext over TLS: what rustls has decrypted, else records read from the
/// socket (waiting as long as its read timeout allows) until some plaintext comes. Unlike
/// rustls' `Stream::read`, it never waits to write queued records first (they go out
/// without waiting, see [`tls_flush`]): a large request's records wait while its replies
/// are read.
#[cfg(feature = "tls")]
fn tls_read(
    s: &mut rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
    buf: &mut [u8],
) -> io::Result<usize> {
    let fd = s.sock.as_raw_fd();
    // Bounded by the peer: each turn reads bytes from the socket (or returns, on end of
    // stream, an error or the read timeout).
    loop {
        match s.conn.reader().read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            r => return r,
        }
        tls_flush(&mut s.conn, fd)?;
        if s.conn.read_tls(&mut s.sock)? == 0 {
            // End of stream: the reader says whether the server closed cleanly.
            return s.conn.reader().read(buf);
        }
        s.conn
            .process_new_packets()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    }
}

/// Flags of a write that never waits and never raises `SIGPIPE` (a closed peer is an error).
#[cfg(any(target_os = "linux", target_os = "android"))]
const SEND_NOW: libc::c_int = libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SEND_NOW: libc::c_int = libc::MSG_DONTWAIT;

/// `send(2)` of `buf` on socket `fd` without waiting: the bytes the send buffer took.
#[allow(unsafe_code)] // send(2)
#[inline]
fn send_now(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `fd` is the open socket of a stream we own for the duration of the call, and
    // `buf` is readable for its length.
    let n = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), SEND_NOW) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Waits up to `timeout` (rounded up to a millisecond) until socket `fd` can be read or
/// written: `(readable, writable)`, both false when the time ran out. An error or a hang-up
/// counts as readable (the read that follows reports it).
#[allow(unsafe_code)] // poll(2)
fn wait_io(fd: RawFd, timeout: Duration) -> io::Result<(bool, bool)> {
    let ms = i32::try_from(timeout.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX);
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN | libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: `pfd` is one valid pollfd during the call.
    if unsafe { libc::poll(&mut pfd, 1, ms) } < 0 {
        return Err(io::Error::last_os_error());
    }
    let r = pfd.revents;
    let readable = r & (libc::POLLIN | libc::POLLERR | libc::POLLHUP) != 0;
    Ok((readable, r & libc::POLLOUT != 0))
}

/// A coarse monotonic clock, in milliseconds: on Linux `CLOCK_MONOTONIC_COARSE`, read from
/// the vDSO (no system call; it ticks every 1 to 4 ms), elsewhere the monotonic clock. For
/// the pool's `idle_timeout` and `max_lifetime` checks, made at every checkout and give-back
/// ([`Conn::expired`]), where a precise clock is not worth its cost.
#[allow(unsafe_code)] // clock_gettime(2)
pub(crate) fn coarse_ms() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC_COARSE;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec during the call.
    if unsafe { libc::clock_gettime(CLOCK, &mut ts) } != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1000)
        .saturating_add(ts.tv_nsec as u64 / 1_000_000)
}

/// [`Stream::last_data`] of TCP socket `fd`: `TCP_INFO`'s times since the last data sent
/// and received.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // getsockopt(2) of TCP_INFO
fn tcp_last_data(fd: RawFd) -> Option<(Duration, Duration)> {
    // SAFETY: tcp_info is plain integers; all zeroes is a valid value.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `fd` is the open socket of a stream we own for the duration of the call;
    // `info` and `len` are writable and `len` is `info`'s size.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    let complete = (len as usize) >= std::mem::size_of::<libc::tcp_info>();
    (r == 0 && complete).then(|| {
        (
            Duration::from_millis(u64::from(info.tcpi_last_data_sent)),
            Duration::from_millis(u64::from(info.tcpi_last_data_recv)),
        )
    })
}

#[cfg(not(target_os = "linux"))]
fn tcp_last_data(_fd: RawFd) -> Option<(Duration, Duration)> {
    None
}

/// Whether no byte is waiting on socket `fd` and the peer has not closed it:
/// `recv(MSG_PEEK | MSG_DONTWAIT)` of one byte says "would block" (healthy); data or end of
/// stream (or any error) means the connection must not carry another exchange.
#[allow(unsafe_code)] // recv(2) with MSG_PEEK
fn peek_quiet(fd: RawFd) -> bool {
    let mut byte = 0u8;
    loop {
        // SAFETY: `fd` is the open socket of a stream we own for the duration of the call,
        // and the buffer is one writable byte; MSG_PEEK leaves the byte in the socket.
        let n = unsafe {
            libc::recv(
                fd,
                (&mut byte as *mut u8).cast(),
                1,
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        if n >= 0 {
            return false;
        }
        match io::Error::last_os_error().kind() {
            io::ErrorKind::WouldBlock => return true,
            io::ErrorKind::Interrupted => {}
            _ => return false,
        }
    }
}

/// Whether socket `fd` holds memcached's refusal of a connection beyond its limit
/// ([`CONNECTION_LIMIT_REPLY`]) unread: one `recv(MSG_PEEK | MSG_DONTWAIT)`, for a write that
/// failed (`EPIPE`, `ECONNRESET`) before any reply was read. memcached writes the refusal and
/// closes; a request larger than the socket's buffers is still being written then, and the
/// write fails while the refusal waits in the receive queue (tester finding connlife 7: a
/// 900 KB `set` said "Broken pipe").
#[allow(unsafe_code)] // recv(2) with MSG_PEEK
fn holds_limit_refusal(fd: RawFd) -> bool {
    let mut buf = [0u8; CONNECTION_LIMIT_REPLY.len()];
    for _ in 0..4 {
        // SAFETY: `fd` is the open socket of a stream we own for the duration of the call,
        // and `buf` is writable for its length; MSG_PEEK leaves the bytes in the socket.
        let n = unsafe {
            libc::recv(
                fd,
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        if n >= 0 {
            return buf[..n as usize] == *CONNECTION_LIMIT_REPLY;
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
    false
}

/// A reader of whatever socket `fd` holds now, never waiting (`MSG_DONTWAIT`).
#[cfg(feature = "tls")]
struct DontWait(RawFd);

#[cfg(feature = "tls")]
#[allow(unsafe_code)] // recv(2) with MSG_DONTWAIT
impl Read for DontWait {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `self.0` is an open socket (see `tls_quiet`); `buf` is writable for its length.
        let n = unsafe {
            libc::recv(
                self.0,
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

/// [`peek_quiet`] for TLS: plaintext that rustls decrypted but nobody read is a stray reply
/// too. TLS records that arrived while the connection was idle (TLS 1.3 session tickets, key
/// updates) are not replies: they are taken in without waiting, and the connection stays
/// usable unless they carried application data or a close.
#[cfg(feature = "tls")]
fn tls_quiet(s: &mut rustls::StreamOwned<rustls::ClientConnection, TcpStream>) -> bool {
    let fd = s.sock.as_raw_fd();
    for _ in 0..4 {
        match s.conn.process_new_packets() {
            Ok(st) if st.plaintext_bytes_to_read() == 0 && !st.peer_has_closed() => {}
            _ => return false,
        }
        if peek_quiet(fd) {
            return true;
        }
        match s.conn.read_tls(&mut DontWait(fd)) {
            Ok(n) if n > 0 => {}
            _ => return false,
        }
    }
    false
}

/// The first request tag of a new connection: spread over the 32-bit range, a different one
/// for each connection of the process (and for a forked child's, whose pid differs).
///
/// Why not 1: meta and binary replies are matched to their requests by tag alone (a single
/// get's reply names no key), so when every connection numbers from 1, a reply that reaches
/// the wrong connection (a pooling proxy that crosses replies, say) carries a tag that
/// connection is waiting for, and another key's value was taken as the caller's (tester
/// finding faults 1). Spread apart, a crossed reply's tag is the other connection's, which
/// no request here carries: a protocol error.
fn first_tag() -> u32 {
    static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // splitmix64's finalizer over (pid, connection number): neighbours land far apart.
    let mut z = (u64::from(std::process::id()) << 32 ^ n).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

/// A block of `n` consecutive tags from counter value `next`: its first tag and the counter
/// after it. A block never wraps: one that would cross 2^32 starts again at 0.
fn tag_block(next: u32, n: usize) -> (u32, u32) {
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    let first = if next.checked_add(n).is_some() {
        next
    } else {
        0
    };
    (first, first + n)
}

/// The hint added to a TLS error: what the option to look at is, where rustls' words alone
/// leave it open (a plain-text memcached's error line read as a TLS record; which side
/// refused whose certificate).
#[cfg(feature = "tls")]
fn tls_hint(e: &rustls::Error) -> &'static str {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    match e {
        E::InvalidMessage(
            rustls::InvalidMessage::InvalidContentType
            | rustls::InvalidMessage::UnknownProtocolVersion
            | rustls::InvalidMessage::MessageTooLarge,
        ) => " (the server does not speak TLS: is it a plain-text memcached? then turn TLS off)",
        E::InvalidCertificate(C::UnknownIssuer | C::BadSignature) => {
            " (the server's certificate is not signed by a CA of tls_ca_file)"
        }
        E::InvalidCertificate(C::NotValidForName | C::NotValidForNameContext { .. }) => {
            " (the server's certificate does not name the address connected to: \
             tls_server_name sets the name to check)"
        }
        // webpki's reason, known by its name only (rustls keeps it as an opaque error)
        E::InvalidCertificate(C::Other(other)) => {
            let reason = format!("{other:?}");
            if reason.contains("CaUsedAsEndEntity") {
                " (the server presents a CA certificate, basicConstraints CA:TRUE, as its own: \
                 give it a certificate that CA signed, and the CA to tls_ca_file)"
            } else if crate::tls::is_v1_certificate(&reason) {
                " (the server's certificate must be X.509 v3 with a subjectAltName; `openssl \
                 x509 -req` makes v1 unless given -extfile)"
            } else {
                ""
            }
        }
        E::AlertReceived(A::CertificateRequired) => {
            " (the server asks for a client certificate: tls_client_cert and tls_client_key)"
        }
        E::AlertReceived(
            A::UnknownCA | A::BadCertificate | A::CertificateUnknown | A::AccessDenied,
        ) => " (the server refused this client's certificate, tls_client_cert: is it signed by a CA the server trusts, ssl_ca_cert?)",
        E::AlertReceived(A::CertificateExpired) => {
            " (the server finds this client's certificate, tls_client_cert, expired)"
        }
        _ => "",
    }
}

/// A TLS failure of `server` that is a misconfiguration, not an outage: a certificate
/// refused by either side, a server that does not speak TLS, any alert or protocol error
/// rustls reports ([`Error::Auth`]: never failed open, as a refused SASL login). `None`
/// for every other I/O error (a reset, a timeout, the peer gone).
#[cfg(feature = "tls")]
fn tls_refusal(server: &str, e: &io::Error) -> Option<Error> {
    let tls = e.get_ref()?.downcast_ref::<rustls::Error>()?;
    Some(tls_refused(server, "TLS", tls))
}

/// [`Error::Auth`] for rustls' error `e` on `server`, in `stage` (`"TLS"`, `"TLS handshake"`),
/// with its hint ([`tls_hint`]).
#[cfg(feature = "tls")]
fn tls_refused(server: &str, stage: &str, e: &rustls::Error) -> Error {
    Error::Auth {
        server: server.to_string(),
        message: format!("{stage}: {e}{}", tls_hint(e)),
    }
}

#[cfg(not(feature = "tls"))]
fn tls_refusal(_server: &str, _e: &io::Error) -> Option<Error> {
    None
}

/// A socket connected to a server, not yet a connection (see [`Conn::over`]).
pub(crate) enum Socket {
    /// TCP, to this address.
    Tcp(TcpStream, SocketAddr),
    /// A unix-domain socket.
    Unix(UnixStream),
}

/// The interrupt check asked to end a connect (see `pool::nonblocking::connected`).
#[derive(Debug)]
struct EndedByCheck;

impl std::fmt::Display for EndedByCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted: the interrupt check asked to end the call")
    }
}

impl std::error::Error for EndedByCheck {}

/// The socket error of a connect the interrupt check ended: [`connect_error`] makes it
/// [`Error::Interrupted`] (and only it: any other `EINTR` is an I/O error).
pub(crate) fn interrupted_io() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, EndedByCheck)
}

/// SO_KEEPALIVE on `s`, with the first probe after `idle` without traffic and the next ones
/// `idle` apart (TCP_KEEPIDLE, TCP_KEEPINTVL, whole seconds rounded up; zero: the system's
/// timers).
#[allow(unsafe_code)] // setsockopt(2)
fn set_keepalive(s: &TcpStream, idle: Duration) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| {
        // SAFETY: `s` owns an open socket for the call's duration, and the option's value is
        // a live c_int whose size is the length given.
        let r = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    if !idle.is_zero() {
        let secs = idle
            .as_secs()
            .saturating_add(u64::from(idle.subsec_nanos() > 0))
            .clamp(1, crate::config::MAX_TCP_KEEPIDLE_SECS) as libc::c_int;
        set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, secs)?;
        set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, secs)?;
    }
    Ok(())
}

/// A connect's socket error: a timeout (or "would block") is [`Error::ConnectTimeout`]; one
/// the interrupt check ended ([`interrupted_io`]) is [`Error::Interrupted`].
pub(crate) fn connect_error(label: &str, source: io::Error) -> Error {
    if source.get_ref().is_some_and(|e| e.is::<EndedByCheck>()) {
        return Error::Interrupted { sent: false };
    }
    if matches!(
        source.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    ) {
        Error::ConnectTimeout {
            server: label.to_string(),
            operation_timeout: false,
            resolving: false,
        }
    } else {
        Error::Io {
            server: label.to_string(),
            source,
        }
    }
}

/// A failed connect to the unix socket `path`, saying what the path is when connect(2)'s
/// own answer misleads: "Connection refused" for a regular file or a directory (looked up
/// only then, so a connect that works costs nothing more).
fn unix_connect_error(path: &std::path::Path, e: io::Error) -> io::Error {
    use std::os::unix::fs::FileTypeExt;
    if e.kind() != io::ErrorKind::ConnectionRefused {
        return e;
    }
    let what = match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_socket() => return e,
        Ok(m) if m.is_dir() => "the path is a directory, not a unix socket",
        Ok(m) if m.is_file() => "the path is a regular file, not a unix socket",
        Ok(_) => "the path is not a unix socket",
        Err(m) if m.kind() == io::ErrorKind::NotFound => "no such file",
        Err(_) => return e,
    };
    io::Error::new(e.kind(), format!("{e} ({what})"))
}

/// A connection. See the module documentation for the clean/dirty rule.
pub struct Conn {
    /// Dropped by `Conn`'s `Drop` unless a forked child already closed its socket.
    stream: std::mem::ManuallyDrop<Stream>,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    /// How much of `wbuf` the socket has taken: less than all of it while a request larger
    /// than the send buffer is being written (the rest goes out as its replies are read,
    /// see [`Conn::send`]).
    wsent: usize,
    /// TLS: where the last request of a batch begins in `wbuf` (0 for a lone request, and
    /// always on a plain socket); it is written in records of its own (see
    /// [`Conn::send_batch`]).
    #[cfg(feature = "tls")]
    wlast: usize,
    clean: bool,
    generation: u64,
    /// The socket's identity as opened (`fork::closing`: a forked child closes the number
    /// only while it still names this socket).
    socket_id: Option<fork::SocketId>,
    server: Arc<str>,
    max_value: usize,
    io_timeout: Duration,
    deadline: Deadline,
    shortened: bool,
    /// The timeout the socket is set to while `shortened` (it has the I/O timeout otherwise).
    armed: Duration,
    cut: bool,
    /// In a multi-server call ([`SetWait`]): the instant since which none of the call's
    /// servers has made progress, once one of its waits has timed out; `None` otherwise, and
    /// always on the common path (no clock is read for it until a wait times out). While it
    /// is set, so is `shortened`, which sends [`Conn::arm`] off its fast path.
    quiet_since: Option<Instant>,
    epoch: u64,
    /// The server's `disconnect_all` count when the connection was opened (`Health::disconnects`).
    mark: u64,
    /// The pin count of its server's name when it was opened (`Resolve::connected_to`).
    pins: u64,
    /// The tag (meta `O`, binary opaque) of the next request: every request on a connection
    /// carries its own, so a reply can only be taken for the request it answers.
    next_tag: u32,
    /// The address connected to (TCP), to retire it when its name no longer lists it.
    peer: Option<SocketAddr>,
    /// The server's version (major, minor, patch) as its `version` reply gave it, once this
    /// connection has asked (the meta dialect asks when it needs to know: explicit CAS
    /// versions, memcached 1.6.6's `OK`).
    server_version: Option<ServerVersion>,
    /// A meta `OK` was taken as `HD` before the version was known: the dialect checks the
    /// version before the outcome is handed out.
    pub(crate) legacy_ok_unchecked: bool,
    /// Whether the server keeps CAS uniques (`stats settings`' `cas_enabled`), once this
    /// connection has asked: the binary dialect asks before its first `cas`
    /// (`Dialect::require_cas`).
    pub(crate) keeps_cas: Option<bool>,
    /// Keys (as sent) of invalidated items whose recompute token a plain meta read took
    /// (`X W`): the dialect hands each back after the exchange (see `meta::return_tokens`).
    pub(crate) won_tokens: Vec<Box<[u8]>>,
    /// The time this operation's waits have not counted because the interrupt check (a
    /// binding's signal handlers) took it (`Conn::resume`): at most `handler_allowance` per
    /// operation, so handlers that run often (a sampling profiler) cannot stretch a wait
    /// for ever (tester finding retest24 1).
    handler_time: Duration,
    /// [`ConnOptions::handler_allowance`].
    handler_allowance: Duration,
    /// Bytes written and read on this connection so far (for the per-operation records).
    sent_bytes: u64,
    recv_bytes: u64,
    /// Whether some connection to this address has read a reply (see `Resolve::replied`):
    /// set at this one's first.
    replied: Arc<AtomicBool>,
    /// `recv_bytes` when the last request was sent: a server that closes the connection
    /// with none read since closed it before its reply, not in the middle of one.
    recv_at_send: u64,
    /// `sent_bytes` when the connection began to serve its current operation
    /// ([`Conn::set_deadline`]): a timeout after more was written is one after the request
    /// was sent ([`Error::IoTimeout`]'s `sent`).
    sent_at_call: u64,
    /// Its place in the pool gauges, for a pooled connection (see `pool::OpenGauge`).
    pub(crate) gauge: Option<crate::pool::OpenGauge>,
    /// When it was connected, and when it last went back to its pool ([`coarse_ms`]), for
    /// `max_lifetime` and `idle_timeout` (see [`Conn::expired`]).
    born_ms: u64,
    idle_since_ms: u64,
}

/// A server's version, from its `version` reply (`1.6.18` → `(1, 6, 18)`; parts that are
/// not numbers count as 0).
pub type ServerVersion = (u32, u32, u32);

/// Reads `1.6.18`, `1.6.21-rc1`, … (anything after the numbers is ignored).
pub fn parse_version(s: &str) -> ServerVersion {
    let mut parts = s.trim().split('.').map(|p| {
        let digits: String = p.chars().take_while(|c| c.is_ascii_digit()).collect();
        digits.parse().unwrap_or(0)
    });
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// How long past its operation's deadline a call still reads what has already arrived (see
/// [`Conn::arm_for_read`]): a bound on the overshoot, for a reply that keeps arriving.
const READ_GRACE: Duration = Duration::from_millis(20);

impl Conn {
    /// Connects to `target`'s address within `timeout` (the connect timeout, or less if the
    /// operation's deadline is nearer): name resolution included (`crate::resolve`). In the
    /// `background` (the pool's own thread) only an address already known is used.
    pub(crate) fn connect(
        target: &Arc<Resolve>,
        label: &Arc<str>,
        opts: &ConnOptions,
        timeout: Duration,
        deadline: Deadline,
        background: bool,
    ) -> Result<Conn> {
        let io_err = |source: io::Error| connect_error(label, source);
        let socket = match target.addr() {
            ServerAddr::Tcp { .. } => {
                let started = Instant::now();
                let addrs = if background {
                    target.addrs_known()
                } else {
                    target.addrs(timeout)
                }
                .map_err(|e| match io_err(e) {
                    // The time ran out before any connect: the message says where.
                    Error::ConnectTimeout {
                        server,
                        operation_timeout,
                        ..
                    } => Error::ConnectTimeout {
                        server,
                        operation_timeout,
                        resolving: true,
                    },
                    e => e,
                })?;
                let mut last = io::Error::new(io::ErrorKind::NotFound, "host name did not resolve");
                let mut found = None;
                for sa in addrs.iter() {
                    // Resolution and every attempt share the one connect timeout.
                    let left = timeout.saturating_sub(started.elapsed());
                    if left.is_zero() {
                        last = io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
                        break;
                    }
                    match crate::pool::nonblocking::connect_tcp(sa, left) {
                        Ok(s) => {
                            found = Some(Socket::Tcp(s, *sa));
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                found.ok_or_else(|| io_err(last))?
            }
            ServerAddr::Unix(path) => Socket::Unix(
                UnixStream::connect(path).map_err(|e| io_err(unix_connect_error(path, e)))?,
            ),
        };
        Conn::over(socket, target, label, opts, deadline)
    }

    /// The connection over `socket`, connected (in blocking mode) to `target`: its socket
    /// options set and, when configured, the TLS handshake done, under the one deadline rule
    /// of every exchange (each socket call gets at most the I/O timeout, and no more than
    /// what is left of `deadline`, see [`Conn::arm`]); the connection keeps `deadline` for
    /// the rest of its opening (SASL). [`Conn::connect`]'s last step, and the one of a
    /// connect the pool started without blocking (see `pool`).
    pub(crate) fn over(
        socket: Socket,
        target: &Resolve,
        label: &Arc<str>,
        opts: &ConnOptions,
        deadline: Deadline,
    ) -> Result<Conn> {
        let io_err = |source: io::Error| connect_error(label, source);
        let pins = match &socket {
            Socket::Tcp(_, sa) => target.connected_to(*sa),
            Socket::Unix(_) => 0,
        };
        let (stream, peer) = match socket {
            Socket::Tcp(s, sa) => {
                s.set_nodelay(opts.nodelay).map_err(io_err)?;
                if let Some(idle) = opts.keepalive {
                    set_keepalive(&s, idle).map_err(io_err)?;
                }
                s.set_read_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                s.set_write_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                #[cfg(feature = "tls")]
                if let (Some((config, options)), ServerAddr::Tcp { host, .. }) =
                    (&opts.tls, target.addr())
                {
                    let name = crate::tls::server_name(options, host)?;
                    let tls = rustls::ClientConnection::new(config.clone(), name)
                        .map_err(|e| Error::Config(format!("TLS: {e}")))?;
                    let stream = rustls::StreamOwned::new(tls, s);
                    let stream = Stream::Tls(Box::new(stream));
                    let mut conn =
                        Conn::finish_connect(stream, label, opts, Some(sa), pins, target);
                    conn.opening(deadline);
                    conn.handshake()?;
                    return Ok(conn);
                }
                (Stream::Tcp(s), Some(sa))
            }
            Socket::Unix(s) => {
                s.set_read_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                s.set_write_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                (Stream::Unix(s), None)
            }
        };
        let mut conn = Conn::finish_connect(stream, label, opts, peer, pins, target);
        conn.opening(deadline);
        Ok(conn)
    }

    /// Sets the deadline of the connection's opening (handshake, SASL): `deadline` with the
    /// time left read afresh, since the connect before it took some.
    fn opening(&mut self, mut deadline: Deadline) {
        if let Deadline::At { .. } = deadline {
            deadline.left_at(Instant::now());
        }
        self.set_deadline(deadline);
    }

    /// The TLS handshake of a new connection, one socket call at a time, each armed like any
    /// other ([`Conn::arm`]): so the operation's deadline bounds the whole handshake, and a
    /// handshake that times out is an [`Error::IoTimeout`], as a read of a reply would be.
    #[cfg(feature = "tls")]
    fn handshake(&mut self) -> Result<()> {
        let mut end = None;
        // A handshake is a few round trips; every step moves bytes, fails or times out.
        for _ in 0..100_000 {
            let Stream::Tls(s) = &mut *self.stream else {
                return Ok(());
            };
            if !s.conn.is_handshaking() && !s.conn.wants_write() {
                return Ok(());
            }
            if end.is_none() {
                self.arm()?;
            }
            let Stream::Tls(s) = &mut *self.stream else {
                return Ok(());
            };
            let step = if s.conn.wants_write() {
                s.conn.write_tls(&mut s.sock).map(|_| None)
            } else {
                match s.conn.read_tls(&mut s.sock) {
                    Ok(0) => Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the connection",
                    )),
                    Ok(n) => {
                        self.recv_bytes += n as u64;
                        Ok(s.conn.process_new_packets().err())
                    }
                    Err(e) => Err(e),
                }
            };
            match step {
                Ok(None) => end = None,
                Ok(Some(tls_error)) => {
                    // Tell the server why (the alert rustls queued), as far as it listens.
                    if let Stream::Tls(s) = &mut *self.stream {
                        let _ = s.conn.write_tls(&mut s.sock);
                    }
                    return Err(tls_refused(&self.server, "TLS handshake", &tls_error));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.resume(&mut end)?,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(self.wait_failed(e, end))
                }
                Err(e) => {
                    return Err(Error::Io {
                        server: self.server.to_string(),
                        source: io::Error::new(e.kind(), format!("TLS handshake: {e}")),
                    })
                }
            }
        }
        Err(self.protocol_error("TLS handshake did not finish"))
    }

    /// The address connected to (TCP only).
    pub(crate) fn peer(&self) -> Option<SocketAddr> {
        self.peer
    }

    /// The pin count of its server's name when it was opened (`Resolve::still_current`).
    pub(crate) fn pins(&self) -> u64 {
        self.pins
    }

    /// The connection over `stream` to `peer`, opened under its name's pin count `pins`.
    fn finish_connect(
        stream: Stream,
        label: &Arc<str>,
        opts: &ConnOptions,
        peer: Option<SocketAddr>,
        pins: u64,
        target: &Resolve,
    ) -> Conn {
        let socket_id = fork::opened(stream.fd());
        Conn {
            stream: std::mem::ManuallyDrop::new(stream),
            rbuf: vec![0; INITIAL_BUF],
            rstart: 0,
            rend: 0,
            wbuf: Vec::with_capacity(INITIAL_BUF),
            wsent: 0,
            #[cfg(feature = "tls")]
            wlast: 0,
            clean: true,
            generation: fork::generation(),
            socket_id,
            server: label.clone(),
            max_value: opts.max_value,
            io_timeout: opts.io_timeout,
            deadline: Deadline::None,
            shortened: false,
            armed: opts.io_timeout,
            cut: false,
            quiet_since: None,
            epoch: 0,
            mark: 0,
            pins,
            next_tag: first_tag(),
            peer,
            server_version: None,
            legacy_ok_unchecked: false,
            keeps_cas: None,
            won_tokens: Vec::new(),
            handler_time: Duration::ZERO,
            handler_allowance: opts.handler_allowance,
            sent_bytes: 0,
            recv_bytes: 0,
            replied: target.replied().clone(),
            recv_at_send: 0,
            sent_at_call: 0,
            gauge: None,
            born_ms: coarse_ms(),
            idle_since_ms: coarse_ms(),
        }
    }

    /// Notes that the connection goes back to its pool now (`now`: [`coarse_ms`]).
    #[inline]
    pub(crate) fn went_idle(&mut self, now: u64) {
        self.idle_since_ms = now;
    }

    /// True when, at `now` ([`coarse_ms`]), the connection has been idle longer than `idle`
    /// or open longer than `lifetime` (milliseconds; `None`: no limit): it must not be
    /// reused. Two comparisons; the coarse clock makes each limit good to a few
    /// milliseconds.
    #[inline]
    pub(crate) fn expired(&self, now: u64, idle: Option<u64>, lifetime: Option<u64>) -> bool {
        idle.is_some_and(|l| now.saturating_sub(self.idle_since_ms) > l)
            || lifetime.is_some_and(|l| now.saturating_sub(self.born_ms) > l)
    }

    /// [`Error::Forked`] when this process is not the one that opened the connection: a
    /// callback of the call forked, and this is the child, which must neither read the
    /// parent's replies nor write on its sockets (tester finding fork 1). One atomic load.
    #[inline]
    fn still_ours(&self) -> Result<()> {
        if self.generation == fork::generation() {
            Ok(())
        } else {
            Err(Error::Forked)
        }
    }

    /// True when the connection may carry another exchange: the last one completed, and it
    /// was opened in this process (not inherited across `fork`).
    pub fn is_reusable(&self) -> bool {
        self.clean && self.generation == fork::generation()
    }

    /// Whether this pooled connection may serve the next exchange: reusable, and nothing
    /// arrived while it sat idle (a duplicated or late reply, or the server closing it).
    /// Costs one non-blocking peek (a system call), no clock read. A connection that fails
    /// it is dropped and another one opened.
    pub(crate) fn is_reusable_idle(&mut self) -> bool {
        self.is_reusable() && self.stream.is_quiet()
    }

    /// The server's label, for messages.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// The server's version, when this connection has asked for it.
    pub(crate) fn server_version(&self) -> Option<ServerVersion> {
        self.server_version
    }

    /// Records the server's version (from a `version` reply on this connection).
    pub(crate) fn set_server_version(&mut self, v: ServerVersion) {
        self.server_version = Some(v);
    }

    /// Reserves `n` consecutive request tags on this connection and returns the first: the
    /// requests of one exchange carry `first..first + n`, and no other exchange on this
    /// connection uses them until the 32-bit counter wraps (a block that would cross the
    /// wrap starts again at 0).
    pub(crate) fn take_tags(&mut self, n: usize) -> u32 {
        let (first, next) = tag_block(self.next_tag, n);
        self.next_tag = next;
        first
    }

    /// Starts an exchange: marks the connection dirty and returns the emptied write buffer.
    pub(crate) fn begin(&mut self) -> &mut Vec<u8> {
        self.clean = false;
        self.wbuf.clear();
        self.wsent = 0;
        #[cfg(feature = "tls")]
        {
            self.wlast = 0;
        }
        &mut self.wbuf
    }

    /// [`Conn::send`] for a batch of requests whose last one begins at `last` in the write
    /// buffer. Over TLS the last request goes out in records of its own: memcached before
    /// 1.6.39 reads a value straight out of OpenSSL, which can leave the requests after it
    /// in OpenSSL's buffer while memcached waits on the quiet socket, so a batch of stores
    /// whose last record began inside a value stalled until the I/O timeout (README, "TLS
    /// in every package"). A record that begins at a request leaves nothing behind: what
    /// comes before it ends at a request, and the last request is read whole or, for a
    /// large value, to its end. Plain sockets ignore `last`.
    pub(crate) fn send_batch(&mut self, last: usize) -> Result<()> {
        #[cfg(feature = "tls")]
        if matches!(*self.stream, Stream::Tls(_)) {
            self.wlast = last;
        }
        #[cfg(not(feature = "tls"))]
        let _ = last;
        self.send()
    }

    /// Where the next write of the request from byte `from` ends: the buffer's end, or over
    /// TLS the start of a batch's last request while bytes before it are left (see
    /// [`Conn::send_batch`]).
    #[inline(always)]
    fn write_end(&self, from: usize) -> usize {
        #[cfg(feature = "tls")]
        if from < self.wlast {
            return self.wlast;
        }
        #[cfg(not(feature = "tls"))]
        let _ = from;
        self.wbuf.len()
    }

    /// Whether some of the current operation's request has been written (an
    /// [`Error::IoTimeout`]'s `sent`).
    fn sent_this_call(&self) -> bool {
        self.sent_bytes > self.sent_at_call
    }

    /// Sets the deadline of the operation this connection now serves.
    pub(crate) fn set_deadline(&mut self, deadline: Deadline) {
        self.deadline = deadline;
        self.sent_at_call = self.sent_bytes;
        self.cut = false;
        self.quiet_since = None;
        self.handler_time = Duration::ZERO;
    }

    /// Runs `f` (reads or writes of this connection) as part of a multi-server call whose
    /// waits share one I/O timeout ([`SetWait`]). After the call was interrupted
    /// ([`Error::Interrupted`]) `f` is not run: the connection fails with that error too.
    #[inline]
    pub(crate) fn in_set<T>(
        &mut self,
        set: &mut SetWait,
        f: impl FnOnce(&mut Conn) -> Result<T>,
    ) -> Result<T> {
        if set.interrupted {
            // another server's wait was interrupted: this one's request may be out too
            return Err(Error::Interrupted {
                sent: self.sent_this_call(),
            });
        }
        if set.quiet_since.is_some() {
            self.quiet_since = set.quiet_since;
            self.shortened = true; // `arm` looks at `quiet_since` only when this is set
        }
        let res = f(self);
        set.quiet_since = self.quiet_since.take();
        set.interrupted = matches!(res, Err(Error::Interrupted { .. }));
        res
    }

    /// The deadline the connection works to, as far as it has been spent.
    pub(crate) fn deadline(&self) -> Deadline {
        self.deadline
    }

    /// True when the last socket call was allowed less than the I/O timeout because the
    /// operation's deadline was nearer, or was not made because it had passed: a timeout
    /// then says the operation ran out of time, not that the server kept silent for an I/O
    /// timeout.
    pub(crate) fn cut_short(&self) -> bool {
        self.cut
    }

    /// The health epoch of the server when this connection was opened (see `Health`).
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Records the health epoch the connection was opened in.
    pub(crate) fn set_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
    }

    /// The server's `disconnect_all` count when the connection was opened.
    pub(crate) fn mark(&self) -> u64 {
        self.mark
    }

    /// Records the server's `disconnect_all` count (`Health::disconnects`) at opening.
    pub(crate) fn set_mark(&mut self, mark: u64) {
        self.mark = mark;
    }

    /// Before each socket read or write: fails when the deadline has passed, and gives the
    /// call at most `min(io_timeout, time left)` by the clock. The clock is read only when
    /// the time known to be left does not cover a full I/O timeout (see [`Deadline::At`]);
    /// the socket's timeout is changed (a system call) only when it has to be shortened, or
    /// restored after that.
    fn arm(&mut self) -> Result<()> {
        let timeout = match &mut self.deadline {
            Deadline::None => self.io_timeout,
            Deadline::At { left, .. } if *left > self.io_timeout => {
                *left -= self.io_timeout;
                self.io_timeout
            }
            Deadline::At { at, left } => {
                let now_left = at.saturating_duration_since(Instant::now());
                if now_left.is_zero() {
                    self.cut = true;
                    return Err(Error::IoTimeout {
                        server: self.server.to_string(),
                        operation_timeout: true,
                        sent: self.sent_this_call(),
                    });
                }
                let t = now_left.min(self.io_timeout);
                *left = now_left - t;
                t
            }
        };
        if timeout == self.io_timeout && !self.shortened {
            return Ok(());
        }
        // `shortened` is set whenever `quiet_since` is: one test on the common path.
        if let Some(since) = self.quiet_since {
            return self.arm_in_quiet_set(timeout, since);
        }
        self.stream
            .set_timeouts(timeout)
            .map_err(|e| self.io_error(e))?;
        self.shortened = timeout < self.io_timeout;
        self.armed = timeout;
        self.cut = self.shortened;
        Ok(())
    }

    /// [`Conn::arm`] before a read: past the operation's deadline, for a short grace
    /// ([`READ_GRACE`]), the read still gets a moment (the socket's smallest timeout), so that a
    /// reply already received is read rather than dropped. A multi-server call whose deadline
    /// ran out on a server that kept sending a little at a time failed the keys of the servers
    /// read after it, whose replies had come (tester finding limits 1). Only reads: nothing is
    /// written past the deadline. The wait that times out then is still the deadline's (`cut`).
    #[inline]
    fn arm_for_read(&mut self) -> Result<()> {
        match self.arm() {
            Ok(()) => Ok(()),
            Err(e) => self.read_past_deadline(e),
        }
    }

    /// [`Conn::arm_for_read`] when [`Conn::arm`] refused: a moment for what has arrived, when
    /// the deadline has just passed and something waits (one non-blocking peek: nothing
    /// waiting is the timeout at once, without the moment's clock tick); `e` otherwise.
    #[cold]
    #[inline(never)]
    fn read_past_deadline(&mut self, e: Error) -> Result<()> {
        let just_passed = matches!(self.deadline, Deadline::At { at, .. }
            if Instant::now().saturating_duration_since(at) < READ_GRACE);
        if !matches!(e, Error::IoTimeout { .. }) || !just_passed || self.stream.is_quiet() {
            return Err(e);
        }
        let t = Duration::from_micros(1);
        self.stream.set_timeouts(t).map_err(|e| self.io_error(e))?;
        self.shortened = true;
        self.armed = t;
        self.cut = true;
        Ok(())
    }

    /// [`Conn::arm`] in a multi-server call that has made no progress since `since` (a wait
    /// of it timed out): the wait gets only what is left of the I/O timeout since then (and
    /// no more than `timeout`, the deadline's share). With nothing left it still gets a
    /// moment (the socket's smallest timeout, a clock tick), so that a reply already
    /// received is read: it counts as progress.
    #[cold]
    #[inline(never)]
    fn arm_in_quiet_set(&mut self, timeout: Duration, since: Instant) -> Result<()> {
        let cut = timeout < self.io_timeout;
        let left = self.io_timeout.saturating_sub(since.elapsed());
        let t = timeout.min(left).max(Duration::from_micros(1));
        self.stream.set_timeouts(t).map_err(|e| self.io_error(e))?;
        self.shortened = t < self.io_timeout;
        self.armed = t;
        self.cut = cut && timeout <= left;
        Ok(())
    }

    /// The timeout the socket is set to now.
    fn armed(&self) -> Duration {
        if self.shortened {
            self.armed
        } else {
            self.io_timeout
        }
    }

    /// A read or write interrupted by a signal (`EINTR`) is tried again, but only for what
    /// is left of its timeout (`end` is `None` until the first interruption fixes it): the
    /// wait is counted from when the connection last sent or received data (TCP on Linux;
    /// elsewhere from the first interruption), so signals arriving more often than the I/O
    /// timeout no longer restart it. Before
    /// each retry the process's interrupt check ([`set_interrupt_check`]) may end the call
    /// ([`Error::Interrupted`]). With no time left, the wait timed out.
    #[cold]
    #[inline(never)]
    fn resume(&mut self, end: &mut Option<Instant>) -> Result<()> {
        let asked = Instant::now();
        if end.is_none() {
            // The first interruption: the wait began when the connection last moved data,
            // if the kernel says (never earlier than its timeout allows), else now.
            let armed = self.armed();
            let waited = self.stream.quiet_for().unwrap_or(Duration::ZERO).min(armed);
            let began = asked.checked_sub(waited).unwrap_or(asked);
            *end = Some(began.checked_add(armed).unwrap_or(asked));
        }
        if interrupt_requested() {
            return Err(Error::Interrupted {
                sent: self.sent_this_call(),
            });
        }
        // The time the check took is the caller's, not the server's: a binding runs its
        // signal handlers there (Python's may wait `pool_timeout` for this very call's
        // connection), so the wait's end and the operation's deadline move by it, and the
        // interrupted call goes on rather than time out and blame the server (tester
        // finding callbacks 2: two such handlers ejected a healthy server). At most an I/O
        // timeout and a pool timeout per operation in all (a handler waiting the pool
        // timeout under the default 1 s I/O timeout: retest25 1), so handlers that keep
        // running (a profiler's, 8 ms of every 10) cannot stretch a wait on a silent server
        // without end (retest24 1).
        let now = Instant::now();
        let room = self.handler_allowance.saturating_sub(self.handler_time);
        let spent = now.saturating_duration_since(asked).min(room);
        self.handler_time += spent;
        let end = *end.insert(end.map_or(now, |e| e.checked_add(spent).unwrap_or(e)));
        if let Deadline::At { at, .. } = &mut self.deadline {
            *at = at.checked_add(spent).unwrap_or(*at);
        }
        let left = end.saturating_duration_since(now);
        if left.is_zero() {
            let timed_out = io::Error::new(io::ErrorKind::TimedOut, "timed out");
            return Err(self.wait_failed(timed_out, Some(end)));
        }
        self.stream
            .set_timeouts(left)
            .map_err(|e| self.io_error(e))?;
        self.shortened = true;
        self.armed = left;
        Ok(())
    }

    /// A read (into the read buffer) that failed with `e`: retried while `e` is an
    /// interruption (see [`Conn::resume`]); otherwise the error, a timeout recorded.
    #[cold]
    #[inline(never)]
    fn read_failed(&mut self, mut e: io::Error) -> Result<usize> {
        let mut end = None;
        while e.kind() == io::ErrorKind::Interrupted {
            self.resume(&mut end)?;
            match self.stream.read(&mut self.rbuf[self.rend..]) {
                Ok(n) => return Ok(n),
                Err(again) => e = again,
            }
        }
        Err(self.wait_failed(e, end))
    }

    /// [`Conn::read_failed`] for a write of the bytes from `sent`.
    #[cold]
    #[inline(never)]
    fn write_failed(&mut self, mut e: io::Error, sent: usize) -> Result<usize> {
        let mut end = None;
        while e.kind() == io::ErrorKind::Interrupted {
            self.resume(&mut end)?;
            let upto = self.write_end(sent);
            match self.stream.write_some(&self.wbuf[sent..upto]) {
                Ok(n) => return Ok(n),
                Err(again) => e = again,
            }
        }
        Err(self.write_error(e, end))
    }

    /// The error of a failed write: memcached's refusal of a connection beyond its limit
    /// when it waits unread on a connection that never had a reply ([`holds_limit_refusal`]),
    /// else as [`Conn::wait_failed`].
    #[cold]
    fn write_error(&mut self, e: io::Error, end: Option<Instant>) -> Error {
        if matches!(
            e.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        ) && self.recv_bytes == 0
            && !self.is_tls()
            && holds_limit_refusal(self.stream.fd())
        {
            return protocol_error_at(&self.server, CONNECTION_LIMIT_REPLY, "reply");
        }
        self.wait_failed(e, end)
    }

    /// The error of a failed read or write. A timeout also records, for a multi-server
    /// call, that its servers have made no progress since this wait began (an I/O timeout
    /// before it ended, or before `end` when interruptions fixed its end).
    #[cold]
    fn wait_failed(&mut self, e: io::Error, end: Option<Instant>) -> Error {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) && self.quiet_since.is_none()
        {
            // Interrupted waits were given their whole timeout up to `end`.
            let (end, waited) = match end {
                Some(end) => (end, self.io_timeout),
                None => (Instant::now(), self.armed()),
            };
            self.quiet_since = Some(end.checked_sub(waited).unwrap_or(end));
            self.shortened = true; // see `arm`
        }
        self.io_error(e)
    }

    /// Sends the write buffer, as far as the socket takes it without waiting: one `write`
    /// for a request that fits in the socket's send buffer (every small one). The rest of
    /// a larger one is written while its replies are read ([`Conn::fill`] waits for the
    /// socket to be readable *or* writable and writes when it can): memcached stops reading
    /// requests while its replies are not read, so a client that wrote a whole large batch
    /// before reading would wait on it until the I/O timeout. Every exchange reads a reply
    /// after its request, and its last reply comes only after its last request was read, so
    /// a request is always written whole by then; [`Conn::finish`] makes sure of it. TLS
    /// does the same with rustls' records ([`tls_flush`], [`tls_read`]).
    pub(crate) fn send(&mut self) -> Result<()> {
        self.still_ours()?;
        self.recv_at_send = self.recv_bytes;
        let mut sent = 0;
        while sent < self.wbuf.len() {
            self.arm()?;
            let upto = self.write_end(sent);
            let n = match self.stream.write_some(&self.wbuf[sent..upto]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => self.write_failed(e, sent)?,
            };
            if n == 0 {
                return Err(self.io_error(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the socket took no bytes",
                )));
            }
            sent += n;
            self.sent_bytes += n as u64;
            self.quiet_since = None;
        }
        self.wsent = sent;
        Ok(())
    }

    /// Writes more of a request the socket did not take whole ([`Conn::send`]) while
    /// waiting for its reply: returns once bytes can be read or the request is written
    /// whole. Each wait is armed as a read's ([`Conn::arm`]: the I/O timeout, or less as the
    /// deadline nears); bytes written count as progress, so a large batch that keeps moving
    /// never times out, and one that does not times out after one I/O timeout.
    #[cold]
    #[inline(never)]
    fn send_rest(&mut self) -> Result<()> {
        let fd = self.stream.fd();
        // TLS: replies decrypted by an earlier wait and not all read yet are read first (the
        // socket may stay quiet meanwhile, and rustls takes no more records while it holds
        // 16 KiB of them).
        if self
            .stream
            .holds_plaintext()
            .map_err(|e| self.io_error(e))?
        {
            return Ok(());
        }
        let mut end = None;
        // Bounded: every turn writes at least a byte, or returns, or is an interrupted wait
        // (retried only while `resume` finds time left).
        while self.wsent < self.wbuf.len() || self.stream.unflushed() {
            let (readable, writable) = match wait_io(fd, self.armed()) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    self.resume(&mut end)?;
                    continue;
                }
                Err(e) => return Err(self.io_error(e)),
            };
            if readable {
                // TLS: bytes in may be only part of a record, or no reply at all (a session
                // ticket): the read waits only once a reply's bytes are there.
                match self.stream.pull_now() {
                    Ok(true) => return Ok(()),
                    Ok(false) => {
                        self.quiet_since = None;
                        end = None;
                        self.arm()?;
                    }
                    Err(e) => return Err(self.io_error(e)),
                }
            } else if !writable {
                let timed_out = io::Error::new(io::ErrorKind::TimedOut, "timed out");
                return Err(self.wait_failed(timed_out, end));
            }
            if !writable {
                continue;
            }
            if self.wsent == self.wbuf.len() {
                // TLS: only records are left.
                self.stream.flush_now().map_err(|e| self.io_error(e))?;
                if !self.stream.unflushed() {
                    end = None;
                    self.arm()?;
                }
                continue;
            }
            let upto = self.write_end(self.wsent);
            match self.stream.write_some(&self.wbuf[self.wsent..upto]) {
                Ok(0) => {
                    return Err(self.io_error(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the socket took no bytes",
                    )))
                }
                Ok(n) => {
                    self.wsent += n;
                    self.sent_bytes += n as u64;
                    self.quiet_since = None;
                    end = None;
                    self.arm()?;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(self.write_error(e, end)),
            }
        }
        Ok(())
    }

    /// Bytes written and read on this connection so far.
    #[inline]
    pub(crate) fn io_bytes(&self) -> (u64, u64) {
        (self.sent_bytes, self.recv_bytes)
    }

    /// Whether all bytes read were parsed, at the end of an exchange whose replies were all
    /// read: bytes past the last reply (a duplicated or late reply) are a protocol error, for
    /// then a reply taken may answer another request.
    pub(crate) fn check_read_whole(&self) -> Result<()> {
        if self.has_unread() {
            return Err(self.protocol_error(
                "bytes after the last reply (a duplicated or late reply, so the reply \
                 read may answer another request)",
            ));
        }
        Ok(())
    }

    /// [`Conn::check_read_whole`], then [`Conn::finish`].
    pub(crate) fn finish_read_whole(&mut self) -> Result<()> {
        self.check_read_whole()?;
        self.finish();
        Ok(())
    }

    /// Ends an exchange. The connection becomes clean only if the reply was consumed exactly.
    pub(crate) fn finish(&mut self) {
        // A request not written whole (an exchange that ended before its last reply) leaves
        // the connection dirty too.
        if self.rstart == self.rend && self.wsent == self.wbuf.len() {
            self.rstart = 0;
            self.rend = 0;
            self.clean = true;
            if self.rbuf.len() > KEEP_BUF {
                self.rbuf.truncate(INITIAL_BUF);
                self.rbuf.shrink_to_fit();
            }
            if self.wbuf.capacity() > KEEP_BUF {
                self.wbuf = Vec::with_capacity(INITIAL_BUF);
            }
        }
    }

    /// Parses the next reply with codec `C`, reading from the socket as needed, and hands it to
    /// `f`. The reply borrows the read buffer only for the duration of `f`.
    /// `f` also gets the server's `host:port`, to name it in errors; its error is returned as is.
    /// Always inlined: a multi-get calls it once a key, and out of line (the inliner's choice
    /// once the reply handler grew) it cost about 70 instructions a key.
    #[inline(always)]
    pub(crate) fn read<C: Codec, T>(
        &mut self,
        f: impl FnOnce(C::Reply<'_>, &str) -> Result<T>,
    ) -> Result<T> {
        loop {
            let step = match C::parse(&self.rbuf[self.rstart..self.rend], self.max_value) {
                Ok(Status::Complete(reply, used)) => {
                    let out = f(reply, &self.server);
                    self.rstart += used;
                    return out;
                }
                Ok(Status::Partial(hint)) => Ok(hint),
                Err(e) => Err(e),
            };
            match step {
                Ok(hint) => self.fill(hint)?,
                Err(e) => return Err(self.parse_error::<C>(e)),
            }
        }
    }

    /// The protocol error for a reply `C` could not parse, in `C`'s words.
    #[cold]
    #[inline(never)]
    fn parse_error<C: Codec>(&self, e: crate::proto::ParseError) -> Error {
        let bytes = &self.rbuf[self.rstart..self.rend];
        match C::describe(e, bytes) {
            (what, true) => self.protocol_error(&what),
            (detail, false) => protocol_error_saying(&self.server, bytes, detail),
        }
    }

    /// Hands `step` the unread bytes, reading more from the socket each time it asks, until
    /// it is done: for a reply made of many units (a multi-get's values), which `step` parses
    /// in one loop over what has arrived instead of one call per unit. `step` also gets the
    /// server's `host:port` (for its errors) and the largest value accepted. It is first
    /// called once some bytes have arrived: a reply is never empty. Always inlined, as
    /// [`Conn::read`]: out of line (the inliner's choice once the text reply loop took the
    /// command's name for its errors) a text get cost about 80 instructions more.
    #[inline(always)]
    pub(crate) fn scan<T>(
        &mut self,
        mut step: impl FnMut(&[u8], &str, usize) -> Result<Scan<T>>,
    ) -> Result<T> {
        if self.rstart == self.rend {
            self.fill(None)?;
        }
        loop {
            match step(
                &self.rbuf[self.rstart..self.rend],
                &self.server,
                self.max_value,
            )? {
                Scan::Done(used, value) => {
                    self.rstart += used;
                    return Ok(value);
                }
                Scan::More(used, hint) => {
                    self.rstart += used;
                    self.fill(hint)?;
                }
            }
        }
    }

    /// Whether bytes read from the socket are still to be parsed (free: no system call).
    pub(crate) fn has_unread(&self) -> bool {
        self.rstart != self.rend
    }

    /// A protocol error naming the offending bytes (the connection stays dirty).
    pub(crate) fn protocol_error(&self, what: &str) -> Error {
        protocol_error_at(&self.server, &self.rbuf[self.rstart..self.rend], what)
    }

    /// Reads more bytes. `hint` is the total length of the reply being parsed, when known.
    fn fill(&mut self, hint: Option<usize>) -> Result<()> {
        self.still_ours()?;
        let pending = self.rend - self.rstart;
        if self.rstart > 0 && (pending == 0 || self.rbuf.len() - self.rend < 4096) {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rstart = 0;
            self.rend = pending;
        }
        // Room for the unit being parsed (`hint` bytes from `rstart`, when known), grown only
        // as its bytes arrive: at most GROW_STEP (or the buffered bytes, if more) beyond
        // them, so a header announcing a huge value cannot make us allocate it up front.
        let full = hint.unwrap_or(0).max(pending + 4096);
        let want = full.min(pending + pending.max(GROW_STEP));
        let need = self.rstart + want;
        if need > self.rbuf.len() {
            let doubled = self.rbuf.len().saturating_mul(2).min(self.rstart + full);
            let grown = need.max(doubled);
            if self
                .rbuf
                .try_reserve_exact(grown - self.rbuf.len())
                .is_err()
            {
                return Err(Error::Protocol {
                    server: self.server.to_string(),
                    detail: format!("cannot allocate a read buffer of {grown} bytes"),
                });
            }
            self.rbuf.resize(grown, 0);
        }
        self.arm_for_read()?;
        if self.wsent < self.wbuf.len() || self.stream.unflushed() {
            // The rest of a large request goes out while its replies come in (see `send`).
            self.send_rest()?;
        }
        let n = match self.stream.read(&mut self.rbuf[self.rend..]) {
            Ok(n) => n,
            Err(e) => self.read_failed(e)?,
        };
        if n == 0 {
            // Before its reply: nothing read since the request, nothing buffered (tester
            // finding tlssasl 2: "mid-reply" for a server that sent no byte of it).
            // The request was sent: whether the server applied it is unknown, and the error
            // says so (tester finding connlife 6: docs/failover.md promises it).
            return Err(crate::error::ConnectionClosed::closed(
                pending == 0 && self.recv_bytes == self.recv_at_send,
            )
            .into_error(self.server.to_string()));
        }
        self.rend += n;
        if self.recv_bytes == 0 {
            self.replied.store(true, Ordering::Relaxed);
        }
        self.recv_bytes += n as u64;
        if self.quiet_since.is_some() {
            self.progress_in_quiet_set();
        }
        Ok(())
    }

    /// Bytes were read in a multi-server call that had made no progress since `quiet_since`
    /// (a wait of it timed out, see [`SetWait`]): they are progress as of when they arrived,
    /// not when they are read. A reply that came in while another server's wait was timing
    /// out gives the next wait no new I/O timeout: the call's waits end one I/O timeout
    /// after its last progress, as one `poll(2)` over all its servers would (Cache::
    /// Memcached::Fast's), however its silent and live servers alternate. The arrival time
    /// is the kernel's (`TCP_INFO`, TCP on Linux); where it is not known, now.
    #[cold]
    #[inline(never)]
    fn progress_in_quiet_set(&mut self) {
        let Some(since) = self.quiet_since else {
            return;
        };
        self.quiet_since = self.stream.received_ago().map(|ago| {
            let now = Instant::now();
            now.checked_sub(ago)
                .map_or(now, |arrived| arrived.max(since))
        });
    }

    fn io_error(&self, e: io::Error) -> Error {
        if let Some(refused) = tls_refusal(&self.server, &e) {
            return refused;
        }
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            Error::IoTimeout {
                server: self.server.to_string(),
                // The wait was cut to what was left of the operation's deadline.
                operation_timeout: self.cut,
                sent: self.sent_this_call(),
            }
        } else if let (
            Some(code),
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted,
        ) = (e.raw_os_error(), e.kind())
        {
            // A reset after the request was written says, as a close does, that whether it
            // was applied is unknown (tester finding rustteam 1: a reset `incr` read as one
            // never sent). Before any reply, from an address that never replied on any
            // connection, it may be a TLS server's (memcached -Z) answer to a plain client;
            // after one, never (tester finding limits 2: a plain memcached resetting an
            // oversized line got the TLS hint).
            crate::error::ConnectionClosed {
                before_reply: false,
                outcome_unknown: self.sent_this_call(),
                reset: Some(code),
                tls_hint: e.kind() == io::ErrorKind::ConnectionReset
                    && self.recv_bytes == 0
                    && !self.is_tls()
                    && !self.replied.load(Ordering::Relaxed),
            }
            .into_error(self.server.to_string())
        } else {
            Error::Io {
                server: self.server.to_string(),
                source: e,
            }
        }
    }

    /// Whether the connection speaks TLS.
    fn is_tls(&self) -> bool {
        #[cfg(feature = "tls")]
        if let Stream::Tls(_) = *self.stream {
            return true;
        }
        false
    }
}

impl Drop for Conn {
    /// Closes the socket, unless this is a forked child in which its number no longer names
    /// it (see `fork::closing`): the number may be another socket's or file's by now.
    #[allow(unsafe_code)] // ManuallyDrop::drop
    fn drop(&mut self) {
        if fork::closing(self.stream.fd(), self.generation, self.socket_id) {
            // SAFETY: the stream is dropped once, here, and the connection is never used
            // again.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.stream) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tag_block;

    #[test]
    fn connections_start_their_tags_apart() {
        let firsts: std::collections::HashSet<u32> =
            (0..1000).map(|_| super::first_tag()).collect();
        assert_eq!(
            firsts.len(),
            1000,
            "no two of 1,000 connections start alike"
        );
        assert!(!firsts.contains(&1) || firsts.len() == 1000);
    }

    #[test]
    fn tag_blocks_are_consecutive_and_never_wrap_inside() {
        assert_eq!(tag_block(1, 1), (1, 2));
        assert_eq!(tag_block(2, 501), (2, 503));
        // A block that would reach 2^32 starts again at 0; one that ends just below fits.
        assert_eq!(tag_block(u32::MAX - 3, 3), (u32::MAX - 3, u32::MAX));
        assert_eq!(tag_block(u32::MAX - 2, 3), (0, 3));
        assert_eq!(tag_block(u32::MAX, 1), (0, 1));
        let (first, next) = tag_block(u32::MAX - 10, 100);
        assert!(u64::from(first) + 100 == u64::from(next) && first == 0);
    }
}
