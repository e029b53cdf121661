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
use crate::proto::{Codec, Protocol, Status};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A reply of a few hundred values fits in one read.
const INITIAL_BUF: usize = 64 * 1024;
const KEEP_BUF: usize = 256 * 1024;

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

/// Socket settings for new connections.
#[derive(Clone, Debug)]
pub(crate) struct ConnOptions {
    pub connect_timeout: Duration,
    pub io_timeout: Duration,
    pub nodelay: bool,
    pub max_value: usize,
    pub protocol: Protocol,
    pub sasl: Option<(String, String)>,
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

/// A protocol error at `bytes` (the unparsed input), quoting the first 80 of them.
pub(crate) fn protocol_error_at(server: &str, bytes: &[u8], what: &str) -> Error {
    let head = &bytes[..bytes.len().min(80)];
    Error::Protocol {
        server: server.to_string(),
        detail: format!("{what}: {:?}", String::from_utf8_lossy(head)),
    }
}

enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    #[cfg(feature = "tls")]
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.read(buf),
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

    /// One write system call (TLS: the whole buffer, encrypted and flushed).
    fn write_some(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            #[cfg(feature = "tls")]
            Stream::Tls(s) => s.write_all(buf).and_then(|_| s.flush()).map(|_| buf.len()),
        }
    }
}

/// A connection. See the module documentation for the clean/dirty rule.
pub struct Conn {
    stream: Stream,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    clean: bool,
    generation: u64,
    server: Arc<str>,
    max_value: usize,
    io_timeout: Duration,
    deadline: Deadline,
    shortened: bool,
    cut: bool,
    epoch: u64,
}

impl Conn {
    /// Connects to `addr` within `timeout` (the connect timeout, or less if the operation's
    /// deadline is nearer).
    pub(crate) fn connect(
        addr: &ServerAddr,
        label: &Arc<str>,
        opts: &ConnOptions,
        timeout: Duration,
    ) -> Result<Conn> {
        let io_err = |source: io::Error| {
            if matches!(
                source.kind(),
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
            ) {
                Error::ConnectTimeout {
                    server: label.to_string(),
                }
            } else {
                Error::Io {
                    server: label.to_string(),
                    source,
                }
            }
        };
        let stream = match addr {
            ServerAddr::Tcp { host, port } => {
                let mut last = io::Error::new(io::ErrorKind::NotFound, "host name did not resolve");
                let mut found = None;
                for sa in (host.as_str(), *port).to_socket_addrs().map_err(io_err)? {
                    match TcpStream::connect_timeout(&sa, timeout) {
                        Ok(s) => {
                            found = Some(s);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                let s = found.ok_or_else(|| io_err(last))?;
                s.set_nodelay(opts.nodelay).map_err(io_err)?;
                s.set_read_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                s.set_write_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                #[cfg(feature = "tls")]
                if let Some((config, options)) = &opts.tls {
                    let name = crate::tls::server_name(options, host)?;
                    let tls = rustls::ClientConnection::new(config.clone(), name)
                        .map_err(|e| Error::Config(format!("TLS: {e}")))?;
                    let mut stream = rustls::StreamOwned::new(tls, s);
                    while stream.conn.is_handshaking() {
                        stream
                            .conn
                            .complete_io(&mut stream.sock)
                            .map_err(|e| Error::Io {
                                server: label.to_string(),
                                source: io::Error::new(e.kind(), format!("TLS handshake: {e}")),
                            })?;
                    }
                    return Conn::finish_connect(Stream::Tls(Box::new(stream)), label, opts);
                }
                Stream::Tcp(s)
            }
            ServerAddr::Unix(path) => {
                let s = UnixStream::connect(path).map_err(io_err)?;
                s.set_read_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                s.set_write_timeout(Some(opts.io_timeout)).map_err(io_err)?;
                Stream::Unix(s)
            }
        };
        Conn::finish_connect(stream, label, opts)
    }

    fn finish_connect(stream: Stream, label: &Arc<str>, opts: &ConnOptions) -> Result<Conn> {
        let mut conn = Conn {
            stream,
            rbuf: vec![0; INITIAL_BUF],
            rstart: 0,
            rend: 0,
            wbuf: Vec::with_capacity(INITIAL_BUF),
            clean: true,
            generation: fork::generation(),
            server: label.clone(),
            max_value: opts.max_value,
            io_timeout: opts.io_timeout,
            deadline: Deadline::None,
            shortened: false,
            cut: false,
            epoch: 0,
        };
        if let (Protocol::Binary, Some((user, password))) = (opts.protocol, &opts.sasl) {
            crate::ops::binary::sasl_plain(&mut conn, user, password)?;
        }
        Ok(conn)
    }

    /// True when the connection may carry another exchange: the last one completed, and it
    /// was opened in this process (not inherited across `fork`).
    pub fn is_reusable(&self) -> bool {
        self.clean && self.generation == fork::generation()
    }

    /// Starts an exchange: marks the connection dirty and returns the emptied write buffer.
    pub(crate) fn begin(&mut self) -> &mut Vec<u8> {
        self.clean = false;
        self.wbuf.clear();
        &mut self.wbuf
    }

    /// Sets the deadline of the operation this connection now serves.
    pub(crate) fn set_deadline(&mut self, deadline: Deadline) {
        self.deadline = deadline;
        self.cut = false;
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
        self.stream
            .set_timeouts(timeout)
            .map_err(|e| self.io_error(e))?;
        self.shortened = timeout < self.io_timeout;
        self.cut = self.shortened;
        Ok(())
    }

    /// Sends the whole write buffer: one `write` unless the kernel takes less.
    pub(crate) fn send(&mut self) -> Result<()> {
        let mut sent = 0;
        while sent < self.wbuf.len() {
            self.arm()?;
            match self.stream.write_some(&self.wbuf[sent..]) {
                Ok(0) => {
                    return Err(self.io_error(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the socket took no bytes",
                    )))
                }
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_error(e)),
            }
        }
        Ok(())
    }

    /// Ends an exchange. The connection becomes clean only if the reply was consumed exactly.
    pub(crate) fn finish(&mut self) {
        if self.rstart == self.rend {
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
                Err(e) => return Err(self.protocol_error(&e.to_string())),
            }
        }
    }

    /// Hands `step` the unread bytes, reading more from the socket each time it asks, until
    /// it is done: for a reply made of many units (a multi-get's values), which `step` parses
    /// in one loop over what has arrived instead of one call per unit. `step` also gets the
    /// server's `host:port` (for its errors) and the largest value accepted. It is first
    /// called once some bytes have arrived: a reply is never empty.
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

    /// A protocol error naming the offending bytes (the connection stays dirty).
    pub(crate) fn protocol_error(&self, what: &str) -> Error {
        protocol_error_at(&self.server, &self.rbuf[self.rstart..self.rend], what)
    }

    /// Reads more bytes. `hint` is the total length of the reply being parsed, when known.
    fn fill(&mut self, hint: Option<usize>) -> Result<()> {
        let pending = self.rend - self.rstart;
        if self.rstart > 0 && (pending == 0 || self.rbuf.len() - self.rend < 4096) {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rstart = 0;
            self.rend = pending;
        }
        let want = hint.unwrap_or(0).max(self.rend + 4096);
        let need = self.rstart + want;
        if need > self.rbuf.len() {
            let grown = need.max(self.rbuf.len() * 2);
            self.rbuf.resize(grown, 0);
        }
        self.arm()?;
        let res = self.stream.read(&mut self.rbuf[self.rend..]);
        match res {
            Ok(0) => Err(Error::Io {
                server: self.server.to_string(),
                source: io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "server closed the connection mid-reply",
                ),
            }),
            Ok(n) => {
                self.rend += n;
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(self.io_error(e)),
        }
    }

    fn io_error(&self, e: io::Error) -> Error {
        if matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ) {
            Error::IoTimeout {
                server: self.server.to_string(),
            }
        } else {
            Error::Io {
                server: self.server.to_string(),
                source: e,
            }
        }
    }
}
