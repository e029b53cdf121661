//! The one error type of the crate.
//!
//! A miss is not an error (`Option::None`), nor is a store that did not happen
//! (`StoreOutcome`). Everything here means "the operation could not be carried out".

use std::fmt;
use std::io;

/// Why an operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The key was refused before any byte was sent (empty, too long, whitespace or control bytes).
    InvalidKey {
        /// The offending key as messages show it ([`crate::key::quoted`]): quoted and
        /// escaped, a byte that is not UTF-8 written `\xNN`.
        key: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The value is larger than the configured item size limit (`max_value_size`): checked
    /// on the value as sent, after compression (a compressible value larger than the limit
    /// is stored when it compresses below it). The value is not sent; a `set` refused so deletes the key, as memcached's
    /// own refusal does ([`Error::TooLargeForServer`]).
    ValueTooLarge {
        /// The value's size.
        len: usize,
        /// The configured limit (`Config::max_value_size`).
        limit: usize,
        /// `Some(max_decompressed_size)` when the value was refused as given, before any
        /// compressing, for being longer than both limits (a longer one could not be read
        /// back compressed, nor sent as it is); `None` when it was too long as it was to be
        /// sent, compressed or not.
        max_decompressed: Option<usize>,
        /// For a `set`: `Some(true)` when the client deleted the key, as memcached's own
        /// refusal does (no older value is left to read), `Some(false)` when that delete
        /// failed (the older value may remain); `None` for the other stores, which leave the
        /// key alone (tester finding cli3 3: the message did not say the old value was gone).
        key_deleted: Option<bool>,
    },
    /// The server refused the value as too large for an item: `SERVER_ERROR object too large
    /// for cache` (text, meta) or status 0x0003 "Value too large" (binary). A value under
    /// `Config::max_value_size` can still be: memcached's limit (`-I`, 1 MiB by default) is
    /// on the whole item, key and item header included. The same error as
    /// [`Error::ValueTooLarge`] (same class, C status `MCPOOL_VALUE_TOO_LARGE`; see
    /// [`Error::is_value_too_large`]); the request was answered, so a batch goes on with its
    /// other items. memcached also removes the key's old value on a plain `set` (not on the
    /// other store commands).
    TooLargeForServer {
        /// `host:port` of the server.
        server: String,
        /// The server's text.
        message: String,
    },
    /// An argument other than the key or the value was refused before any byte was sent:
    /// for example an expiry above [`crate::ttl::MAX_TTL`] (2^31 − 1), which memcached
    /// would read as negative and expire at once (see [`crate::ttl`]).
    InvalidArgument {
        /// Which argument (`"ttl"`, `"vivify_ttl"`, `"stale_ttl"`, `"delay"`, ...).
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The configuration is unusable (no servers, a malformed address, a bad option value).
    Config(String),
    /// The key's server is marked dead (failover policy `fail-fast`) and not yet due for a retry.
    ServerDead {
        /// `host:port` of the server.
        server: String,
        /// The error that marked it dead (empty when not known), so that the calls it then
        /// refuses still say why (a wrong CA file, a refused connection, ...).
        cause: String,
    },
    /// No connection could be checked out of the server's pool within the pool timeout, or
    /// within what was left of the operation's deadline when that came first.
    PoolTimeout {
        /// `host:port` of the server.
        server: String,
        /// True when the operation's deadline (`operation_timeout`), nearer than the pool
        /// timeout, is what ended the wait: a longer `pool_timeout` would not help.
        operation_timeout: bool,
    },
    /// Connecting to the server did not finish within the connect timeout, or within what
    /// was left of the operation's deadline when that came first.
    ConnectTimeout {
        /// `host:port` of the server.
        server: String,
        /// True when the operation's deadline (`operation_timeout`), nearer than the
        /// connect timeout, is what ended the connect (or left no time to start it).
        operation_timeout: bool,
        /// True when the time ran out resolving the server's name (the resolver hook's or
        /// the system's answer did not come), before any connect was tried: the message says
        /// so, which points at DNS or service discovery rather than the network or memcached
        /// (tester finding cteam2 2).
        resolving: bool,
    },
    /// A read or write did not finish within the I/O timeout, or within what was left of the
    /// operation's deadline. The connection was dropped.
    IoTimeout {
        /// `host:port` of the server.
        server: String,
        /// True when the operation's deadline (`operation_timeout`) ended the wait, not the
        /// I/O timeout: the message says so, since a longer `io_timeout` would not help
        /// (tester finding limits 1).
        operation_timeout: bool,
        /// True when some of the call's request had been written when the wait ran out (a
        /// reply that did not come): whether the server applied it is unknown, and the
        /// message says so (tester finding cas2 1: a `cas` that timed out so had been
        /// applied, and a retry applied it twice). False when nothing of it was sent, and
        /// for calls that change nothing (reads without a touch, `stats`, `version`), whose
        /// outcome does not matter.
        sent: bool,
    },
    /// A signal interrupted a read or write and the process's interrupt check
    /// ([`crate::set_interrupt_check`]) asked to end the call (a Python `KeyboardInterrupt`).
    /// The connection was dropped; the server is not blamed.
    Interrupted {
        /// True when some of the call's request had been written when the call was ended:
        /// whether the server applied it is unknown ([`Error::outcome_unknown`]), and the
        /// message says so, as a timeout's after sending (tester finding interrupts 1: an
        /// interrupted `incr` the server applied said its outcome was known). False when
        /// nothing of it was sent, and for calls that change nothing.
        sent: bool,
    },
    /// The client was closed ([`crate::Client::close`]): a call waiting for a connection, or
    /// made after the close, ends with this before anything is sent; a call already talking
    /// to a server finishes (or times out) as before. The server is not blamed.
    Closed,
    /// The process forked while this call was under way (a callback of the call, such as an
    /// event or allocation callback, called `fork()`), and this is the child: the call's
    /// connections are the parent's, and the child neither reads nor writes them (the
    /// parent's call goes on with them). The keys not yet answered fail with this; the
    /// server is not blamed. The child's next calls open connections of its own.
    Forked,
    /// Any other socket error (refused, reset, closed mid-reply; memcached's `ERROR Too many
    /// open connections` beyond its connection limit is a refused connection). The
    /// connection was dropped. Also no socket for lack of file descriptors in this process
    /// ([`Error::is_local_fd_exhaustion`]), which is not the server's failure.
    Io {
        /// `host:port` of the server.
        server: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The server answered `SERVER_ERROR <message>`.
    Server {
        /// `host:port` of the server.
        server: String,
        /// The server's text.
        message: String,
    },
    /// The server answered `CLIENT_ERROR <message>` (for example incr on a non-number),
    /// or a plain `ERROR`.
    Client {
        /// `host:port` of the server.
        server: String,
        /// The server's text.
        message: String,
    },
    /// The server sent something that is not a valid reply to what was asked. The connection was dropped.
    Protocol {
        /// `host:port` of the server.
        server: String,
        /// What was wrong.
        detail: String,
    },
    /// SASL authentication was refused, or TLS failed on a misconfiguration (a certificate
    /// either side refused, a server that does not speak TLS: the message begins `TLS`).
    /// Never failed open, and no server is marked dead for it.
    Auth {
        /// `host:port` of the server.
        server: String,
        /// The server's text.
        message: String,
    },
    /// The operation needs a protocol other than the configured one (e.g. leases need meta).
    Unsupported(String),
    /// A value marked compressed could not be decompressed (corrupt, or larger than the cap).
    Decompress(String),
    /// A value's flags mean nothing in the configured value format, or mark a kind this
    /// reader cannot deliver (a serialized object with deserialization off, an integer whose
    /// body is not one), or a value cannot be stored in the format (a kind it lacks). The
    /// message names the key, the flags and the format.
    ValueFormat(String),
}

/// What kind of outcome a result is, for the bindings' exception classes (docs/errors.md has
/// the map per language). The C ABI's `mcpool_status_class` reads the same classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Class {
    /// Success.
    Ok,
    /// A miss: the key does not exist.
    Miss,
    /// A store that did not happen (add of an existing key, a CAS conflict, ...).
    NotStored,
    /// The caller's input was refused (bad key, bad argument, value too large), or the
    /// server said the request was wrong (`CLIENT_ERROR`, e.g. incr of a non-number).
    ClientError,
    /// The server failed or answered something unusable (`SERVER_ERROR`, a protocol
    /// violation, a value that cannot be decoded).
    ServerError,
    /// A timeout: pool wait, connect, or a read or write.
    Timeout,
    /// The server cannot be reached: refused, reset, marked dead, authentication (SASL) or TLS
    /// refused.
    Connection,
    /// The configuration is unusable, or asks for something this build or protocol lacks.
    Configuration,
    /// A bug in mcpool, or an error this version cannot name.
    Internal,
}

impl Class {
    /// True for the classes that `fail_open` turns into a miss or a "not stored": a timeout,
    /// a server that cannot be reached. Every other class stays an error (see
    /// [`Error::fails_open`], the one decision the client and the C ABI use).
    pub fn fails_open(self) -> bool {
        matches!(self, Class::Timeout | Class::Connection)
    }

    /// The class's name: `"ok"`, `"miss"`, `"not_stored"`, `"client_error"`,
    /// `"server_error"`, `"timeout"`, `"connection"`, `"configuration"`, `"internal"`.
    pub fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Miss => "miss",
            Class::NotStored => "not_stored",
            Class::ClientError => "client_error",
            Class::ServerError => "server_error",
            Class::Timeout => "timeout",
            Class::Connection => "connection",
            Class::Configuration => "configuration",
            Class::Internal => "internal",
        }
    }
}

/// How memcached's "value too large" reply begins (`SERVER_ERROR object too large for
/// cache`; the binary dialect words its status 0x0003 the same way).
pub(crate) const SERVER_TOO_LARGE: &str = "object too large for cache";

/// The I/O error's text for memcached's refusal of a connection beyond its limit (`-c`: it
/// answers `ERROR Too many open connections` and closes): the one text that tells it apart.
pub(crate) const CONNECTION_LIMIT_MESSAGE: &str = "connection refused: the server is at its \
     connection limit (memcached -c) and answered \"ERROR Too many open connections\"";

/// Whether `e` is memcached's refusal of a connection beyond its limit (by its text, which a
/// cloned error keeps).
fn connection_limit(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::ConnectionRefused
        && e.get_ref()
            .is_some_and(|inner| inner.to_string() == CONNECTION_LIMIT_MESSAGE)
}

/// What an I/O error says when it is a lack of file descriptors on this side (`EMFILE`: this
/// process is at its limit, `RLIMIT_NOFILE`; `ENFILE`: the whole system is), not anything the
/// server did; `None` for every other error.
fn fd_exhaustion(e: &io::Error) -> Option<&'static str> {
    match e.raw_os_error() {
        Some(libc::EMFILE) => Some("this process has too many open files (EMFILE)"),
        Some(libc::ENFILE) => Some("the system has too many open files (ENFILE)"),
        _ => None,
    }
}

/// Shorthand for `Result<T, mcpool::Error>`.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether this is [`Error::InvalidKey`] naming `key` as it names a refused key (quoted
    /// as [`crate::key::quoted`], or by its length when it is over 250 bytes): a message
    /// that names the caller's key then names it once (tester finding keys2 5).
    pub fn names_key(&self, key: &[u8]) -> bool {
        let Error::InvalidKey { key: named, .. } = self else {
            return false;
        };
        named.starts_with(&crate::key::refused_named(key))
    }

    /// The `host:port` of the server involved, when one was.
    pub fn server(&self) -> Option<&str> {
        match self {
            Error::ServerDead { server, .. }
            | Error::PoolTimeout { server, .. }
            | Error::ConnectTimeout { server, .. }
            | Error::IoTimeout { server, .. }
            | Error::Io { server, .. }
            | Error::Server { server, .. }
            | Error::TooLargeForServer { server, .. }
            | Error::Client { server, .. }
            | Error::Protocol { server, .. }
            | Error::Auth { server, .. } => Some(server),
            _ => None,
        }
    }

    /// The error's [`Class`].
    pub fn class(&self) -> Class {
        match self {
            Error::InvalidKey { .. }
            | Error::InvalidArgument { .. }
            | Error::ValueTooLarge { .. }
            | Error::TooLargeForServer { .. }
            | Error::Client { .. }
            | Error::Interrupted { .. }
            | Error::Closed
            | Error::Forked => Class::ClientError,
            Error::Config(_) | Error::Unsupported(_) => Class::Configuration,
            Error::ServerDead { .. } | Error::Io { .. } | Error::Auth { .. } => Class::Connection,
            Error::PoolTimeout { .. } | Error::ConnectTimeout { .. } | Error::IoTimeout { .. } => {
                Class::Timeout
            }
            Error::Server { .. }
            | Error::Protocol { .. }
            | Error::Decompress(_)
            | Error::ValueFormat(_) => Class::ServerError,
        }
    }

    /// True for the errors that the `fail_open` option turns into a miss (reads) or a
    /// "not stored" (writes): the classes of [`Class::fails_open`] (timeouts, refused or
    /// reset connections, a server marked dead), except a refused authentication, which
    /// is a misconfiguration rather than an outage. Protocol violations, values that do not
    /// decode, `SERVER_ERROR`/`CLIENT_ERROR` answers, refused keys, values and arguments, and
    /// configuration errors are never hidden.
    pub fn fails_open(&self) -> bool {
        !matches!(self, Error::Auth { .. }) && self.class().fails_open()
    }

    /// The error for a server's `SERVER_ERROR <message>` reply (binary: an error status, as
    /// text): the one place that reads the message. `object too large for cache` is the
    /// server's "value too large" ([`Error::TooLargeForServer`]); anything else is
    /// [`Error::Server`].
    pub(crate) fn server_reply(server: String, message: String) -> Error {
        if message.starts_with(SERVER_TOO_LARGE) {
            Error::TooLargeForServer { server, message }
        } else {
            Error::Server { server, message }
        }
    }

    /// True for a value too large: refused by the client ([`Error::ValueTooLarge`], before
    /// anything was sent) or by the server ([`Error::TooLargeForServer`]).
    pub fn is_value_too_large(&self) -> bool {
        matches!(
            self,
            Error::ValueTooLarge { .. } | Error::TooLargeForServer { .. }
        )
    }

    /// True for the error of a reply that answered its request and left the stream in step
    /// (a `SERVER_ERROR` line, read whole; memcached swallows a refused store's data and
    /// answers the next request): a pipeline reads the next request's reply next. A
    /// `CLIENT_ERROR` or `ERROR` is not one (memcached may read the rest of a bad request
    /// as another command, answering twice), nor is a broken connection.
    pub(crate) fn answered_in_step(&self) -> bool {
        matches!(self, Error::Server { .. } | Error::TooLargeForServer { .. })
    }

    /// True for memcached's one-line `CLIENT_ERROR` answer to a well-formed `incr`/`decr`
    /// (text) or `ma` (meta) it refuses (memcached's proto_text.c: a value that is not a
    /// number, a delta that is not one): the request was read whole and answered once, so
    /// the stream is in step. Only for an arithmetic request (see `dialect::answered_alone`):
    /// the same words after another request would mean the stream is not.
    pub(crate) fn is_arith_refusal(&self) -> bool {
        const REFUSALS: [&str; 2] = [
            "cannot increment or decrement non-numeric value",
            "invalid numeric delta argument",
        ];
        matches!(self, Error::Client { message, .. } if REFUSALS.contains(&message.as_str()))
    }

    /// True for errors that say the server may be unwell (counted towards marking it dead,
    /// and what moves a key to another server under failover `rehash`/`eject`). Not this
    /// process running out of file descriptors ([`Error::is_local_fd_exhaustion`]): the
    /// server was never asked. Nor memcached's refusal of a connection beyond its limit
    /// (`-c`, `ERROR Too many open connections`): the server is alive and serving its other
    /// connections (this client's too, most often: the refused one was the pool growing),
    /// and moving its keys elsewhere would leave other clients reading the old values there
    /// (tester finding connlife 1: under `rehash` a `set` reported stored went to another
    /// server, and the old value was read back once the full server "returned").
    pub fn is_server_failure(&self) -> bool {
        match self {
            Error::ConnectTimeout { .. } | Error::IoTimeout { .. } => true,
            Error::Io { source, .. } => {
                fd_exhaustion(source).is_none() && !connection_limit(source)
            }
            _ => false,
        }
    }

    /// True for memcached's refusal of a connection beyond its limit (`-c`): an
    /// [`Error::Io`] (class `Connection`) that fails the call but never counts towards the
    /// server's `failure_limit`, marks it dead or moves its keys (failover).
    pub fn is_connection_limit(&self) -> bool {
        matches!(self, Error::Io { source, .. } if connection_limit(source))
    }

    /// True when no socket could be opened because this process (`EMFILE`) or the whole
    /// system (`ENFILE`) has no file descriptor left: the client's own resource error, an
    /// [`Error::Io`] (class `Connection`) that fails the call but never counts towards the
    /// server's `failure_limit`, marks it dead or moves its keys (failover).
    pub fn is_local_fd_exhaustion(&self) -> bool {
        matches!(self, Error::Io { source, .. } if fd_exhaustion(source).is_some())
    }
}

/// What an error says of a request that was sent when its reply never came (an
/// [`Error::IoTimeout`] with `sent`, a [`ConnectionClosed`] with `outcome_unknown`).
const SENT_UNKNOWN: &str = " (the request was sent: whether it was applied is unknown)";

/// The cause inside the [`Error::Io`] of a connection the server closed (or reset) while a
/// request sent on it waited for its reply: typed, so that the rules that depend on it (a
/// proxy's refusal, a read's outcome) ask its fields rather than its message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionClosed {
    /// No byte of the reply had come: what twemproxy answers a command it does not support
    /// (see `Request::proxy_may_refuse`). False: closed mid-reply, or reset.
    pub(crate) before_reply: bool,
    /// The message says that the request was sent and whether it was applied is unknown
    /// (false for a call that changes nothing: [`Error::of_a_read`]).
    pub(crate) outcome_unknown: bool,
    /// A reset (`ECONNRESET`, `EPIPE`, `ECONNABORTED`): the system's error number, shown as
    /// the system words it; `None`: an orderly close (end of stream).
    pub(crate) reset: Option<i32>,
    /// The message adds the hint for a plain client against a TLS-only memcached (a reset
    /// before any reply, from an address that never replied).
    pub(crate) tls_hint: bool,
}

impl ConnectionClosed {
    /// An orderly close (end of stream) after a request was sent.
    pub(crate) fn closed(before_reply: bool) -> ConnectionClosed {
        ConnectionClosed {
            before_reply,
            outcome_unknown: true,
            reset: None,
            tls_hint: false,
        }
    }

    /// This close as the [`Error::Io`] of a call to `server`.
    pub(crate) fn into_error(self, server: String) -> Error {
        let kind = self.reset.map_or(io::ErrorKind::UnexpectedEof, |code| {
            io::Error::from_raw_os_error(code).kind()
        });
        Error::Io {
            server,
            source: io::Error::new(kind, self),
        }
    }

    /// The close an I/O error carries, if it is one.
    fn of(source: &io::Error) -> Option<ConnectionClosed> {
        source
            .get_ref()?
            .downcast_ref::<ConnectionClosed>()
            .copied()
    }
}

impl fmt::Display for ConnectionClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reset {
            Some(code) => write!(f, "{}", io::Error::from_raw_os_error(code))?,
            None if self.before_reply => {
                f.write_str("server closed the connection before its reply")?
            }
            None => f.write_str("server closed the connection mid-reply")?,
        }
        if self.tls_hint {
            write!(
                f,
                " (before any reply: if the server speaks TLS, memcached -Z, {})",
                crate::conn::TURN_TLS_ON
            )?;
        }
        if self.outcome_unknown {
            f.write_str(SENT_UNKNOWN)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConnectionClosed {}

impl Error {
    /// True for a connection the server closed before any byte of the reply to a request
    /// sent on it ([`ConnectionClosed::before_reply`]): what twemproxy answers a command it
    /// does not support (see `Request::proxy_may_refuse`).
    pub(crate) fn is_closed_before_reply(&self) -> bool {
        matches!(self, Error::Io { source, .. }
            if ConnectionClosed::of(source).is_some_and(|c| c.before_reply))
    }

    /// True when the call's request was written (at least in part) and its reply never came
    /// whole: a timeout or an interrupt after sending ([`Error::IoTimeout`]'s and
    /// [`Error::Interrupted`]'s `sent`), or the server closing
    /// or resetting the connection after it ([`Error::Io`]). A call that changes data may or
    /// may not have been applied (its message says "the request was sent: whether it was
    /// applied is unknown"): read back before repeating it. False for an error before
    /// anything was sent, and for a call that changes nothing (a read, `stats`, `version`),
    /// where it does not matter (docs/errors.md).
    pub fn outcome_unknown(&self) -> bool {
        match self {
            Error::IoTimeout { sent, .. } | Error::Interrupted { sent } => *sent,
            Error::Io { source, .. } => {
                ConnectionClosed::of(source).is_some_and(|c| c.outcome_unknown)
            }
            _ => false,
        }
    }

    /// This error as the cause of a server's marking dead, which the calls it then refuses
    /// quote ([`Error::ServerDead`]): without what it said of its own request (sent, outcome
    /// unknown), which is not theirs: they sent nothing (tester finding java2 4).
    pub(crate) fn as_cause(&self) -> String {
        self.outcome_unsaid()
            .map_or_else(|| self.to_string(), |e| e.to_string())
    }

    /// This error as a call that changes nothing saw it (a read without a touch, `stats`,
    /// `version`): without what it says of a request that was sent and whose outcome is
    /// unknown, since applying such a request changes nothing (tester finding retest33 3: a
    /// timed-out `get` said "whether it was applied is unknown").
    pub(crate) fn of_a_read(self) -> Error {
        self.outcome_unsaid().unwrap_or(self)
    }

    /// The same error without what it says of a request that was sent and whose outcome is
    /// unknown ([`Error::IoTimeout`]'s `sent`, a [`ConnectionClosed`]'s `outcome_unknown`);
    /// `None` for an error that says nothing of it.
    fn outcome_unsaid(&self) -> Option<Error> {
        match self {
            Error::IoTimeout {
                server,
                operation_timeout,
                sent: true,
            } => Some(Error::IoTimeout {
                server: server.clone(),
                operation_timeout: *operation_timeout,
                sent: false,
            }),
            Error::Interrupted { sent: true } => Some(Error::Interrupted { sent: false }),
            Error::Io { server, source } => ConnectionClosed::of(source)
                .filter(|c| c.outcome_unknown)
                .map(|closed| {
                    ConnectionClosed {
                        outcome_unknown: false,
                        ..closed
                    }
                    .into_error(server.clone())
                }),
            _ => None,
        }
    }
}

/// What a `set` refused as too large did to its key, as a message's end
/// ([`Error::ValueTooLarge`]'s `key_deleted`).
struct KeyDeleted(Option<bool>);

impl fmt::Display for KeyDeleted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => Ok(()),
            Some(true) => f.write_str(
                "; the key was deleted, as memcached deletes it when it refuses a set \
                 (no older value is left)",
            ),
            Some(false) => f.write_str(
                "; deleting the key, as memcached does when it refuses a set, failed: its \
                 older value may remain",
            ),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidKey { key, reason } => write!(f, "invalid key {key}: {reason}"),
            Error::ValueTooLarge {
                len,
                limit,
                max_decompressed: None,
                key_deleted,
            } => write!(
                f,
                "value of {len} bytes exceeds the item size limit of {limit} bytes \
                 (the client's max_value_size; a server started with a larger -I takes \
                 more when max_value_size is raised){}",
                KeyDeleted(*key_deleted)
            ),
            // Which option to raise: the one that lets it through (tester finding
            // bigvalues 4: a compressible value refused by max_decompressed_size named only
            // max_value_size, which does not help).
            Error::ValueTooLarge {
                len,
                limit,
                max_decompressed: Some(inflated),
                key_deleted,
            } => write!(
                f,
                "value of {len} bytes is longer than max_decompressed_size ({inflated} \
                 bytes), the most this client compresses (it could not read a longer one \
                 back), and than the item size limit of {limit} bytes (max_value_size): \
                 raise max_decompressed_size to store it compressed{}",
                KeyDeleted(*key_deleted)
            ),
            Error::TooLargeForServer { server, message } => {
                write!(f, "value too large for {server}: {message}")
            }
            Error::InvalidArgument { what, reason } => write!(f, "invalid {what}: {reason}"),
            Error::Config(msg) => write!(f, "configuration error: {msg}"),
            Error::ServerDead { server, cause } if cause.is_empty() => {
                write!(f, "server {server} is marked dead; retry later")
            }
            Error::ServerDead { server, cause } => {
                write!(
                    f,
                    "server {server} is marked dead; retry later (marked after: {cause})"
                )
            }
            Error::PoolTimeout {
                server,
                operation_timeout: false,
            } => {
                write!(f, "pool timeout: no free connection to {server}")
            }
            // (tester finding timeouts 2: the deadline's end read as the pool timeout's)
            Error::PoolTimeout {
                server,
                operation_timeout: true,
            } => write!(
                f,
                "operation timeout while waiting for a free connection to {server} (the \
                 call's operation_timeout ran out before pool_timeout: a longer pool_timeout \
                 would not help)"
            ),
            Error::ConnectTimeout {
                server,
                operation_timeout,
                resolving,
            } => {
                if *operation_timeout {
                    write!(
                        f,
                        "operation timeout while connecting to {server} (operation_timeout \
                         ended the connect before connect_timeout"
                    )?;
                } else {
                    write!(f, "connect timeout to {server}")?;
                }
                match (*operation_timeout, *resolving) {
                    (_, true) => f.write_str(if *operation_timeout { "; " } else { " (" })?,
                    (true, false) => return f.write_str(")"),
                    (false, false) => return Ok(()),
                }
                f.write_str("its name did not resolve in time: the resolver or DNS did not answer)")
            }
            Error::IoTimeout {
                server,
                operation_timeout,
                sent,
            } => {
                write!(f, "I/O timeout talking to {server}")?;
                if *operation_timeout {
                    f.write_str(
                        " (the call's operation_timeout ran out: a longer io_timeout would \
                         not help)",
                    )?;
                }
                if *sent {
                    f.write_str(SENT_UNKNOWN)?;
                }
                Ok(())
            }
            Error::Interrupted { sent } => {
                write!(f, "interrupted: the interrupt check asked to end the call")?;
                if *sent {
                    f.write_str(SENT_UNKNOWN)?;
                }
                Ok(())
            }
            Error::Closed => write!(
                f,
                "the client is closed: nothing was sent (close() was called on it)"
            ),
            Error::Forked => write!(
                f,
                "the process forked during this call (a callback called fork()): the child \
                 does not use the parent's connections, and this key was not answered here"
            ),
            Error::Io { server, source } => match fd_exhaustion(source) {
                Some(which) => write!(
                    f,
                    "cannot open a socket to {server}: {which} ({source}); the server was not \
                     asked and is not blamed"
                ),
                None => write!(f, "I/O error talking to {server}: {source}"),
            },
            // The reply quoted, naming who answered: "server error from X: Connection
            // refused" read as a refused connect to X, where a proxy X answered for its
            // backend (tester finding proxy 4).
            // (a binary protocol reply is a status, quoted as such: no SERVER_ERROR line
            // was sent; tester finding retest35 4)
            Error::Server { server, message } if message.starts_with("status 0x") => {
                write!(f, "{server} answered {message}")
            }
            Error::Server { server, message } => {
                write!(f, "{server} answered SERVER_ERROR {message}")
            }
            Error::Client { server, message } => {
                write!(f, "client error from {server}: {message}")
            }
            Error::Protocol { server, detail } => {
                write!(f, "protocol error from {server}: {detail}")
            }
            // A TLS failure (`conn::tls_refused`: its message starts with the stage, "TLS
            // ...") is a refused connection, not a refused login.
            Error::Auth { server, message } if message.starts_with("TLS") => {
                write!(f, "TLS refused with {server}: {message}")
            }
            Error::Auth { server, message } => {
                write!(f, "authentication refused by {server}: {message}")
            }
            Error::Unsupported(msg) => write!(f, "unsupported: {msg}"),
            Error::Decompress(msg) => write!(f, "cannot decompress value: {msg}"),
            Error::ValueFormat(msg) => write!(f, "value format: {msg}"),
        }
    }
}

/// No error has a `source()`: each message already says what its cause said (an
/// [`Error::Io`] the operating system's text, which its `source` field holds), so a
/// reporter that walks the chain (anyhow's `{:#}`, tracing, eyre) would print it twice
/// (tester finding rust2 2).
impl std::error::Error for Error {}

impl Clone for Error {
    /// Clones the error; an I/O source is rebuilt from its kind and message.
    fn clone(&self) -> Self {
        match self {
            Error::InvalidKey { key, reason } => Error::InvalidKey {
                key: key.clone(),
                reason,
            },
            Error::ValueTooLarge {
                len,
                limit,
                max_decompressed,
                key_deleted,
            } => Error::ValueTooLarge {
                len: *len,
                limit: *limit,
                max_decompressed: *max_decompressed,
                key_deleted: *key_deleted,
            },
            Error::TooLargeForServer { server, message } => Error::TooLargeForServer {
                server: server.clone(),
                message: message.clone(),
            },
            Error::InvalidArgument { what, reason } => Error::InvalidArgument {
                what,
                reason: reason.clone(),
            },
            Error::Interrupted { sent } => Error::Interrupted { sent: *sent },
            Error::Closed => Error::Closed,
            Error::Forked => Error::Forked,
            Error::Config(m) => Error::Config(m.clone()),
            Error::ServerDead { server, cause } => Error::ServerDead {
                server: server.clone(),
                cause: cause.clone(),
            },
            Error::PoolTimeout {
                server,
                operation_timeout,
            } => Error::PoolTimeout {
                server: server.clone(),
                operation_timeout: *operation_timeout,
            },
            Error::ConnectTimeout {
                server,
                operation_timeout,
                resolving,
            } => Error::ConnectTimeout {
                server: server.clone(),
                operation_timeout: *operation_timeout,
                resolving: *resolving,
            },
            Error::IoTimeout {
                server,
                operation_timeout,
                sent,
            } => Error::IoTimeout {
                server: server.clone(),
                operation_timeout: *operation_timeout,
                sent: *sent,
            },
            Error::Io { server, source } => Error::Io {
                server: server.clone(),
                // The operating system's code is kept (it says, e.g., `EMFILE`).
                source: match (source.raw_os_error(), ConnectionClosed::of(source)) {
                    (_, Some(closed)) => io::Error::new(source.kind(), closed),
                    (Some(code), None) if source.get_ref().is_none() => {
                        io::Error::from_raw_os_error(code)
                    }
                    _ => io::Error::new(source.kind(), source.to_string()),
                },
            },
            Error::Server { server, message } => Error::Server {
                server: server.clone(),
                message: message.clone(),
            },
            Error::Client { server, message } => Error::Client {
                server: server.clone(),
                message: message.clone(),
            },
            Error::Protocol { server, detail } => Error::Protocol {
                server: server.clone(),
                detail: detail.clone(),
            },
            Error::Auth { server, message } => Error::Auth {
                server: server.clone(),
                message: message.clone(),
            },
            Error::Unsupported(m) => Error::Unsupported(m.clone()),
            Error::Decompress(m) => Error::Decompress(m.clone()),
            Error::ValueFormat(m) => Error::ValueFormat(m.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConnectionClosed, Error};
    use std::error::Error as _;

    fn closed(before_reply: bool) -> Error {
        ConnectionClosed::closed(before_reply).into_error("127.0.0.1:1".into())
    }

    /// A close is recognised by its type, not its text: through a clone, a read's form and
    /// a server's message that merely quotes the words.
    #[test]
    fn a_closed_connection_is_known_by_its_fields() {
        let before = closed(true);
        assert_eq!(
            before.to_string(),
            "I/O error talking to 127.0.0.1:1: server closed the connection before its reply \
             (the request was sent: whether it was applied is unknown)"
        );
        assert!(before.is_closed_before_reply() && before.clone().is_closed_before_reply());
        assert!(!closed(false).is_closed_before_reply());
        assert!(closed(false).to_string().contains("mid-reply"));
        let read = before.clone().of_a_read();
        assert!(read.is_closed_before_reply());
        assert!(!read.to_string().contains("unknown"), "{read}");
        assert!(!before.as_cause().contains("unknown") && before.as_cause().contains("before"));
        assert!(closed(false)
            .clone()
            .of_a_read()
            .to_string()
            .ends_with("mid-reply"));
        let quoted = Error::Io {
            server: "127.0.0.1:1".into(),
            source: std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "server closed the connection before its reply",
            ),
        };
        assert!(!quoted.is_closed_before_reply());
        let timeout = Error::IoTimeout {
            server: "s".into(),
            operation_timeout: false,
            sent: true,
        };
        assert!(timeout.to_string().contains("unknown") && !timeout.as_cause().contains("unknown"));
    }

    /// Tester finding rust2 2: anyhow's `{:#}` printed "Connection refused (os error 111)"
    /// twice, once from the message and once from `source()`.
    #[test]
    fn an_io_error_says_its_cause_once() {
        let e = Error::Io {
            server: "127.0.0.1:1".into(),
            source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused),
        };
        assert!(e.source().is_none());
        let text = e.to_string();
        assert!(
            text.contains("127.0.0.1:1") && text.contains("refused"),
            "{text}"
        );
    }
}
