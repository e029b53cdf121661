//! One request type, spoken in three dialects.
//!
//! A [`Request`] says what to ask a server (get, store, delete, …) without saying how; a
//! dialect ([`Text`], [`Meta`], [`Binary`], behind the [`Dialect`] the client picks once,
//! when it is built) encodes it with the sans-IO codecs of `proto/` and reads its reply
//! into an [`Outcome`], handing each value found to a hit callback while it is still in the
//! connection's read buffer. Every request carries a tag (`Conn::take_tags`) that its reply
//! must carry where the protocol allows it (meta `O`, binary opaque; text replies name their
//! key), so a stray or crossed reply is a protocol error, never a value handed to a caller.
//!
//! A new command is one [`Request`] variant, an encode arm and a read arm in each of
//! `text.rs`, `meta.rs` and `binary.rs` (the compiler lists the ones missing), and the
//! client method that builds the request and reads its outcome.

mod binary;
mod meta;
mod text;

pub(crate) use binary::Binary;
pub(crate) use meta::{LeaseReply, Meta};
pub(crate) use text::Text;

use crate::conn::{Conn, ConnOptions};
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::StoreCommand;
use crate::proto::Protocol;
use std::sync::Arc;
use std::time::Duration;

/// The wire keys of one request, by index: a slice of keys, or one server's share of a
/// multi-get's keys (`multi_get::Selection`) without a vector of them.
pub(crate) trait WireKeys {
    /// How many keys.
    fn count(&self) -> usize;
    /// Key `i` (`i < count()`), as sent.
    fn key(&self, i: usize) -> &[u8];
}

impl WireKeys for [&[u8]] {
    fn count(&self) -> usize {
        self.len()
    }
    fn key(&self, i: usize) -> &[u8] {
        self[i]
    }
}

/// Receives each value a read finds, while it is in the read buffer: (index of the key in
/// the request, data as received, flags as stored, CAS unique when asked for). The read
/// engine (`read.rs`) turns these into calls of the caller's [`crate::sink::Sink`].
pub(crate) type Hit<'h> = dyn FnMut(usize, &[u8], u32, Option<u64>) + 'h;

/// What to ask a server: every command the client sends, protocol-neutral. Keys are wire
/// keys (prefixed, sanitized, checked); values are as stored (compressed if due).
pub(crate) enum Request<'a, K: ?Sized = [&'a [u8]]> {
    /// A read of one key (`get`/`gets`, `gat`/`gats` with `touch`); a hit goes to the hit
    /// callback at index 0. Also one request of a pipeline of independent reads (work
    /// handed over while callers wait, see `gate`).
    Get {
        /// The wire key.
        key: &'a [u8],
        /// Ask for the CAS unique.
        cas: bool,
        /// Set the expiry to this many seconds while reading (get-and-touch).
        touch: Option<u32>,
    },
    /// A read of many keys on one server, pipelined (one round trip): one server's share
    /// of a multi-get. Takes `batch_tags(keys.count())` tags.
    GetMulti {
        /// The wire keys.
        keys: &'a K,
        /// Ask for the CAS uniques.
        cas: bool,
        /// Get-and-touch with this expiry.
        touch: Option<u32>,
    },
    /// A store command.
    Store {
        /// Which one (set, add, replace, append, prepend, cas).
        cmd: StoreCommand,
        /// The wire key.
        key: &'a [u8],
        /// The flags word, as stored.
        flags: u32,
        /// Expiry.
        ttl: u32,
        /// The value, as stored.
        data: &'a [u8],
        /// No reply on success (text `noreply`, meta `q`, binary SETQ…): for batches.
        quiet: bool,
        /// The CAS version the item gets (meta `E`, memcached 1.6.27+), instead of the
        /// server's next one.
        version: Option<u64>,
    },
    /// Remove a key.
    Delete {
        /// The wire key.
        key: &'a [u8],
        /// No reply on success (batches).
        quiet: bool,
        /// Meta `E`: the CAS version a tombstone left behind gets (with `I`), see `Store`.
        version: Option<u64>,
    },
    /// Set a key's expiry.
    Touch {
        /// The wire key.
        key: &'a [u8],
        /// The new expiry.
        ttl: u32,
    },
    /// incr/decr.
    Arith {
        /// Increment (else decrement).
        incr: bool,
        /// The wire key.
        key: &'a [u8],
        /// By how much.
        delta: u64,
        /// `(initial value, ttl)`: create a missing counter (meta and binary only; see
        /// [`Dialect::arith_creates`]).
        init: Option<(u64, u32)>,
        /// Meta `E`: the CAS version the counter gets (see `Store`).
        version: Option<u64>,
    },
    /// flush_all, now or after `delay` seconds.
    Flush {
        /// Seconds before the flush takes effect.
        delay: Option<u32>,
    },
    /// The server's version string (also the alive check).
    Version,
    /// Statistics, general or of a group.
    Stats {
        /// `items`, `slabs`, … or `None` for the general ones.
        group: Option<&'a str>,
    },
    /// A no-op round trip: meta `mn`, binary NOOP; the text protocol has none, so its
    /// no-op is `version`, whose answer is dropped.
    Noop,
    /// A stampede-protected read (meta only; see `Client::get_lease`).
    Lease {
        /// The wire key.
        key: &'a [u8],
        /// How long a placeholder created on a miss lives.
        vivify_ttl: u32,
        /// Elect a recomputer when the item expires within this many seconds.
        recache: Option<u32>,
    },
    /// An item's metadata without its value (meta only): `mg <key> h l t c s f`.
    Info {
        /// The wire key.
        key: &'a [u8],
    },
    /// Mark a key stale instead of deleting it (meta only).
    Invalidate {
        /// The wire key.
        key: &'a [u8],
        /// How long the stale value is served.
        stale_ttl: u32,
    },
}

/// The one rule for a `cas` store's CAS unique: 0 is refused with
/// [`Error::InvalidArgument`] before anything is sent. memcached never gives an item CAS 0,
/// so on text and meta a `cas` with 0 can only fail (`NotFound` or `Exists`), but the binary
/// protocol reads CAS 0 as "no CAS" and stores unconditionally: the same call would mean
/// two things. Other store commands carry no CAS and pass.
pub(crate) fn check_cas(cmd: StoreCommand) -> Result<()> {
    match cmd {
        StoreCommand::Cas(0) => Err(Error::InvalidArgument {
            what: "cas",
            reason: "0 is no CAS unique (memcached never gives an item CAS 0; the binary \
                     protocol would read it as \"no CAS\" and store unconditionally): pass \
                     the CAS from gets"
                .into(),
        }),
        _ => Ok(()),
    }
}

impl<K: WireKeys + ?Sized> Request<'_, K> {
    /// How many tags (see `Conn::take_tags`) the request takes: one, or for a multi-key
    /// read one per key and one for the barrier that closes it (binary NOOP). A single-key
    /// read reserves that barrier's tag too (its binary form is a plain GET without one).
    pub(crate) fn tags(&self) -> usize {
        match self {
            Request::Get { .. } => batch_tags(1),
            Request::GetMulti { keys, .. } => batch_tags(keys.count()),
            _ => 1,
        }
    }

    /// The command's name, for messages.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Request::Get { cas, touch, .. } | Request::GetMulti { cas, touch, .. } => {
                match (touch.is_some(), *cas) {
                    (false, false) => "get",
                    (false, true) => "gets",
                    (true, false) => "gat",
                    (true, true) => "gats",
                }
            }
            Request::Store { cmd, .. } => cmd.name(),
            Request::Delete { .. } => "delete",
            Request::Touch { .. } => "touch",
            Request::Arith { incr: true, .. } => "incr",
            Request::Arith { incr: false, .. } => "decr",
            Request::Flush { .. } => "flush_all",
            Request::Version => "version",
            Request::Stats { .. } => "stats",
            Request::Noop => "noop",
            Request::Lease { .. } => "get_lease",
            Request::Invalidate { .. } => "invalidate",
            Request::Info { .. } => "meta_info",
        }
    }

    /// Every expiry the request carries (a TTL, get-and-touch's, a lease's placeholder and
    /// recache times, a stale time, flush_all's delay) checked by the one rule,
    /// [`crate::ttl::check`], and a store's CAS unique by [`check_cas`]: the request is
    /// refused before it is sent when memcached could not honour one of them.
    pub(crate) fn check_arguments(&self) -> Result<()> {
        use crate::ttl::{check, check_opt};
        if let Request::Store { cmd, .. } = self {
            check_cas(*cmd)?;
        }
        match self {
            Request::Get { touch, .. } | Request::GetMulti { touch, .. } => {
                check_opt("ttl", *touch)?;
            }
            Request::Store { ttl, .. } | Request::Touch { ttl, .. } => {
                check("ttl", *ttl)?;
            }
            Request::Arith {
                init: Some((_, ttl)),
                ..
            } => {
                check("ttl", *ttl)?;
            }
            Request::Flush { delay } => {
                check_opt("delay", *delay)?;
            }
            Request::Lease {
                vivify_ttl,
                recache,
                ..
            } => {
                check("vivify_ttl", *vivify_ttl)?;
                check_opt("recache_below", *recache)?;
            }
            Request::Invalidate { stale_ttl, .. } => {
                check("stale_ttl", *stale_ttl)?;
            }
            Request::Arith { init: None, .. }
            | Request::Delete { .. }
            | Request::Version
            | Request::Stats { .. }
            | Request::Noop
            | Request::Info { .. } => {}
        }
        Ok(())
    }

    /// True for the requests that change nothing (reads without a touch, `version`,
    /// `stats`, `noop`, meta `info`): when their reply is lost, whether they were applied
    /// does not matter, and their errors do not say it is unknown ([`Error::of_a_read`]).
    pub(crate) fn changes_nothing(&self) -> bool {
        matches!(
            self,
            Request::Get { touch: None, .. }
                | Request::GetMulti { touch: None, .. }
                | Request::Version
                | Request::Stats { .. }
                | Request::Noop
                | Request::Info { .. }
        )
    }

    /// True for the requests a text proxy may not support, and answer by closing the
    /// connection before any reply (twemproxy 0.5: `gat`/`gats`, `stats`, `flush_all`):
    /// under `proxy-pool` such a close is that call's `Error::Unsupported`, no failure of the
    /// proxy (tester finding proxy 3: four `gat`s marked every proxy dead). The commands
    /// every memcached proxy carries (get, gets, the stores, delete, incr/decr, touch) still
    /// count it as a failure: a proxy that reads them and closes is broken, and is marked
    /// dead (tester finding proxy2 1).
    pub(crate) fn proxy_may_refuse(&self) -> bool {
        matches!(
            self,
            Request::Get { touch: Some(_), .. }
                | Request::GetMulti { touch: Some(_), .. }
                | Request::Stats { .. }
                | Request::Flush { .. }
        )
    }

    /// `e` as this request's error: for a request that changes nothing, without what it
    /// says of an unknown outcome (tester finding retest33 3).
    pub(crate) fn its_error(&self, e: Error) -> Error {
        if self.changes_nothing() {
            e.of_a_read()
        } else {
            e
        }
    }

    /// True for a `cas` store (the binary dialect asks the server first: `require_cas`).
    pub(crate) fn is_cas(&self) -> bool {
        matches!(
            self,
            Request::Store {
                cmd: StoreCommand::Cas(_),
                ..
            }
        )
    }

    /// True for the requests that change an item (stores, delete, incr/decr, touch,
    /// invalidate): those that `on_server_return = delete-written` remembers when they go
    /// elsewhere.
    pub(crate) fn is_write(&self) -> bool {
        matches!(
            self,
            Request::Store { .. }
                | Request::Delete { .. }
                | Request::Arith { .. }
                | Request::Touch { .. }
                | Request::Invalidate { .. }
        )
    }

    /// The explicit CAS version the request carries (meta `E`), if any.
    pub(crate) fn version(&self) -> Option<u64> {
        match *self {
            Request::Store { version, .. }
            | Request::Delete { version, .. }
            | Request::Arith { version, .. } => version,
            _ => None,
        }
    }
}

/// What a request's reply said.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The request was answered and carries nothing more: a read (its values went to the
    /// hit callback), flush_all, a no-op.
    Done,
    /// A store command's outcome.
    Stored(StoreOutcome),
    /// Delete, touch, invalidate: whether the key existed.
    Existed(bool),
    /// incr/decr: the new value, or `None` if the key is missing.
    Counter(Option<u64>),
    /// The version string.
    Version(String),
    /// `(name, value)` statistics.
    Stats(Vec<(String, String)>),
    /// What a lease read found.
    Lease(LeaseReply),
    /// An item's metadata, or `None` for a miss.
    Info(Option<crate::item::ItemInfo>),
}

impl Outcome {
    fn mismatch(self, want: &str) -> Error {
        Error::Protocol {
            server: String::new(),
            detail: format!("internal: {want} expected, the dialect read {self:?}"),
        }
    }

    /// A store's outcome.
    pub(crate) fn stored(self) -> Result<StoreOutcome> {
        match self {
            Outcome::Stored(s) => Ok(s),
            o => Err(o.mismatch("a store outcome")),
        }
    }

    /// Whether the key existed (delete, touch, invalidate).
    pub(crate) fn existed(self) -> Result<bool> {
        match self {
            Outcome::Existed(b) => Ok(b),
            o => Err(o.mismatch("found or not")),
        }
    }

    /// A counter's new value.
    pub(crate) fn counter(self) -> Result<Option<u64>> {
        match self {
            Outcome::Counter(n) => Ok(n),
            o => Err(o.mismatch("a counter")),
        }
    }

    /// A version string.
    pub(crate) fn version(self) -> Result<String> {
        match self {
            Outcome::Version(v) => Ok(v),
            o => Err(o.mismatch("a version")),
        }
    }

    /// Statistics.
    pub(crate) fn stats(self) -> Result<Vec<(String, String)>> {
        match self {
            Outcome::Stats(s) => Ok(s),
            o => Err(o.mismatch("statistics")),
        }
    }

    /// A lease read's reply.
    pub(crate) fn lease(self) -> Result<LeaseReply> {
        match self {
            Outcome::Lease(l) => Ok(l),
            o => Err(o.mismatch("a lease reply")),
        }
    }

    /// An item's metadata (or a miss).
    pub(crate) fn info(self) -> Result<Option<crate::item::ItemInfo>> {
        match self {
            Outcome::Info(i) => Ok(i),
            o => Err(o.mismatch("item metadata")),
        }
    }

    /// Nothing but an answer.
    pub(crate) fn done(self) -> Result<()> {
        match self {
            Outcome::Done => Ok(()),
            o => Err(o.mismatch("an answer")),
        }
    }
}

/// What a dialect does: encode a request, read its reply, and the rules of its batches.
/// Implemented by [`Text`], [`Meta`] and [`Binary`].
pub(crate) trait Speak {
    /// Appends `req`, tagged from `tag` on (it takes `req.tags()` tags).
    fn encode<K: WireKeys + ?Sized>(&self, buf: &mut Vec<u8>, req: &Request<'_, K>, tag: u32);

    /// Reads the reply to `req` (encoded with the same `tag`), values to `hit`.
    fn read<K: WireKeys + ?Sized>(
        &self,
        conn: &mut Conn,
        req: &Request<'_, K>,
        tag: u32,
        hit: &mut Hit<'_>,
    ) -> Result<Outcome>;

    /// Whether a batch's replies carry their requests' tags, checked in order and closed by
    /// a barrier or the last request's reply (meta, binary: `collect_answers`), rather than
    /// text's untagged replies, read one by one.
    fn batches_tagged(&self) -> bool;

    /// Appends the barrier that closes a batch whose last tag is `tag`.
    fn encode_barrier(&self, buf: &mut Vec<u8>, tag: u32);

    /// Reads the reply to the barrier alone (a batch whose requests were all quiet and
    /// succeeded, or text `noreply` stores).
    fn read_barrier(&self, conn: &mut Conn, tag: u32) -> Result<()>;

    /// Reads the outcomes of a batch of `n` requests like `like` (stores or deletes)
    /// tagged from `tag` on, each to `out(i, outcome)`. An error returned ends the batch:
    /// the requests without an outcome then are the ones whose replies were not read.
    fn read_batch(
        &self,
        conn: &mut Conn,
        like: &Request<'_>,
        tag: u32,
        n: usize,
        out: &mut dyn FnMut(usize, Result<Outcome>),
    ) -> Result<()>;

    /// Whether incr/decr can create a missing counter in the same request.
    fn arith_creates(&self) -> bool;

    /// What a new connection does before its first request (binary: SASL).
    fn on_connect(&self, _conn: &mut Conn) -> Result<()> {
        Ok(())
    }
}

/// The dialect a client speaks, chosen once when it is built.
#[derive(Clone, Debug)]
pub(crate) enum Dialect {
    /// The text protocol.
    Text(Text),
    /// The meta protocol.
    Meta(Meta),
    /// The binary protocol.
    Binary(Binary),
}

/// Runs `$e` with `$d` bound to the dialect's implementation.
macro_rules! speak {
    ($self:expr, $d:ident => $e:expr) => {
        match $self {
            Dialect::Text($d) => $e,
            Dialect::Meta($d) => $e,
            Dialect::Binary($d) => $e,
        }
    };
}

impl Dialect {
    /// The dialect of `protocol`; `sasl` = (user, password) authenticates binary
    /// connections (ignored by the others, as before).
    pub(crate) fn new(protocol: Protocol, sasl: Option<(String, String)>) -> Dialect {
        match protocol {
            Protocol::Text => Dialect::Text(Text),
            Protocol::Meta => Dialect::Meta(Meta),
            Protocol::Binary => Dialect::Binary(Binary::new(sasl)),
        }
    }

    /// The protocol it speaks.
    pub(crate) fn protocol(&self) -> Protocol {
        match self {
            Dialect::Text(_) => Protocol::Text,
            Dialect::Meta(_) => Protocol::Meta,
            Dialect::Binary(_) => Protocol::Binary,
        }
    }

    /// See [`Speak::encode`].
    #[inline]
    pub(crate) fn encode<K: WireKeys + ?Sized>(
        &self,
        buf: &mut Vec<u8>,
        req: &Request<'_, K>,
        tag: u32,
    ) {
        // Every path checks its expiries before it encodes (nothing is sent for a refused
        // call); this catches one that does not, in the tests.
        debug_assert!(
            req.check_arguments().is_ok(),
            "unchecked expiry reached the wire"
        );
        speak!(self, d => d.encode(buf, req, tag))
    }

    /// See [`Speak::read`].
    #[inline]
    pub(crate) fn read<K: WireKeys + ?Sized>(
        &self,
        conn: &mut Conn,
        req: &Request<'_, K>,
        tag: u32,
        hit: &mut Hit<'_>,
    ) -> Result<Outcome> {
        speak!(self, d => d.read(conn, req, tag, hit))
    }

    /// Whether a protocol error in a batch of stores or deletes leaves the outcomes read
    /// before it in doubt: on text, whose replies carry no tag, a reply sent twice shifts
    /// every later one onto the wrong request, unseen until the stream ends out of step
    /// (tester finding protocols 2); on meta and binary every request of a batch is answered
    /// (`collect_answers`) and each reply read carried the next pending tag, so those
    /// stand.
    pub(crate) fn error_voids_earlier_replies(&self, e: &Error) -> bool {
        matches!(self, Dialect::Text(_)) && matches!(e, Error::Protocol { .. })
    }

    /// Whether an error in a pipeline of handed-over requests ([`Dialect::pipeline`]) leaves
    /// the answers read before it in doubt: a protocol error or a timeout does, on every
    /// protocol. A binary reply whose body length the server gave one short or long was
    /// read by that length, tag and all in order, and handed out cut short or with the next
    /// reply's first byte; only the reply after it failed (the misframing), or waited for a
    /// byte that never came (tester finding hostile2 2). Text and meta end a value with
    /// `\r\n`, which catches it at the value itself.
    fn error_voids_pipeline(e: &Error) -> bool {
        matches!(e, Error::Protocol { .. } | Error::IoTimeout { .. })
    }

    /// See [`Speak::batches_tagged`].
    pub(crate) fn batches_tagged(&self) -> bool {
        speak!(self, d => d.batches_tagged())
    }

    /// See [`Speak::encode_barrier`].
    pub(crate) fn encode_barrier(&self, buf: &mut Vec<u8>, tag: u32) {
        speak!(self, d => d.encode_barrier(buf, tag))
    }

    /// See [`Speak::read_barrier`].
    pub(crate) fn read_barrier(&self, conn: &mut Conn, tag: u32) -> Result<()> {
        speak!(self, d => d.read_barrier(conn, tag))
    }

    /// See [`Speak::read_batch`].
    pub(crate) fn read_batch(
        &self,
        conn: &mut Conn,
        like: &Request<'_>,
        tag: u32,
        n: usize,
        out: &mut dyn FnMut(usize, Result<Outcome>),
    ) -> Result<()> {
        speak!(self, d => d.read_batch(conn, like, tag, n, out))
    }

    /// See [`Speak::arith_creates`].
    pub(crate) fn arith_creates(&self) -> bool {
        speak!(self, d => d.arith_creates())
    }

    /// See [`Speak::on_connect`].
    pub(crate) fn on_connect(&self, conn: &mut Conn) -> Result<()> {
        speak!(self, d => d.on_connect(conn))
    }

    /// Connects to `addr` (see `Conn::connect`) and runs the dialect's on-connect step.
    pub(crate) fn connect(
        &self,
        addr: &Arc<crate::resolve::Resolve>,
        label: &Arc<str>,
        opts: &ConnOptions,
        timeout: Duration,
        deadline: crate::conn::Deadline,
        background: bool,
    ) -> Result<Conn> {
        let mut conn = Conn::connect(addr, label, opts, timeout, deadline, background)?;
        self.on_connect(&mut conn)?;
        Ok(conn)
    }

    /// The connection over a socket already connected (see `Conn::over`), with the
    /// dialect's on-connect step: the end of a connect the pool started without blocking.
    /// The handshake and the on-connect step keep to the operation's `deadline`.
    pub(crate) fn establish(
        &self,
        socket: crate::conn::Socket,
        addr: &crate::resolve::Resolve,
        label: &Arc<str>,
        opts: &ConnOptions,
        deadline: crate::conn::Deadline,
    ) -> Result<Conn> {
        let mut conn = Conn::over(socket, addr, label, opts, deadline)?;
        self.on_connect(&mut conn)?;
        Ok(conn)
    }

    /// Whether a new connection exchanges anything with the server before its first
    /// request (a TLS handshake, binary SASL): the pool's background thread, which must
    /// never wait for a server, leaves that to the caller (see `pool`).
    pub(crate) fn handshakes(&self, opts: &ConnOptions) -> bool {
        #[cfg(feature = "tls")]
        if opts.tls.is_some() {
            return true;
        }
        #[cfg(not(feature = "tls"))]
        let _ = opts;
        matches!(self, Dialect::Binary(b) if b.authenticates())
    }

    /// One request and its reply on `conn`: tags taken, the request written and sent, the
    /// reply read (values to `hit`), the connection clean again only if it was read exactly.
    #[inline]
    pub(crate) fn exchange(
        &self,
        conn: &mut Conn,
        req: &Request<'_>,
        hit: &mut Hit<'_>,
    ) -> Result<Outcome> {
        if let (Some(_), Dialect::Meta(_)) = (req.version(), self) {
            meta::require_explicit_versions(conn)?;
        }
        if req.is_cas() {
            self.require_cas(conn)?;
        }
        let tag = conn.take_tags(req.tags());
        self.encode(conn.begin(), req, tag);
        conn.send()?;
        let outcome = match self.read(conn, req, tag, hit) {
            // Answered, and read whole: the connection may serve the next caller.
            Err(e) if in_step(req, &e) => {
                conn.finish();
                return Err(e);
            }
            r => r?,
        };
        self.finish(conn)?;
        if conn.legacy_ok_unchecked {
            meta::settle_legacy_ok(conn)?;
        }
        Ok(outcome)
    }

    /// The end of an exchange whose replies were all read: the connection clean again if
    /// nothing more has arrived (`Conn::finish`). On every protocol, bytes already read past
    /// the last reply are a protocol error: the server sent more than was asked (a
    /// duplicated or late reply), so the reply just read may have been another's (on text,
    /// whose replies carry no tag, an earlier request's; on meta and binary, a copy with the
    /// right tag and another value that came first: tester finding faults 2), and the
    /// exchange's result is not returned. A best-effort guard, at no cost (no system call):
    /// a copy that arrives later than the reply read cannot be seen (the check-out peek
    /// drops the connection then).
    #[inline]
    pub(crate) fn finish(&self, conn: &mut Conn) -> Result<()> {
        conn.check_read_whole()?;
        if !conn.won_tokens.is_empty() {
            meta::return_tokens(conn)?;
        }
        conn.finish();
        Ok(())
    }

    /// Before a `cas` on `conn`: on the binary protocol, the server must keep CAS uniques,
    /// asked once per connection (`stats settings`, `cas_enabled`), or the call fails with
    /// [`Error::Unsupported`] before anything is sent. memcached run with `-C` reads a
    /// binary store's CAS as none and stores unconditionally, answering success: a `cas`
    /// with a CAS from before a restart with `-C` would create a missing key or overwrite
    /// another client's write (tester finding serverflags 1); text and meta answer
    /// `NOT_FOUND`/`EXISTS` there, so they need no question. A server whose settings do not
    /// say (an older memcached, a proxy that refuses the group) is taken as keeping them.
    pub(crate) fn require_cas(&self, conn: &mut Conn) -> Result<()> {
        if !matches!(self, Dialect::Binary(_)) {
            return Ok(());
        }
        let keeps = match conn.keeps_cas {
            Some(k) => k,
            None => {
                let req: Request<'_> = Request::Stats {
                    group: Some("settings"),
                };
                let keeps = match self.exchange(conn, &req, &mut |_, _, _, _| {}) {
                    Ok(o) => o
                        .stats()?
                        .iter()
                        .all(|(k, v)| k != "cas_enabled" || v != "no"),
                    // the server's own refusal of the group (an error reply, read whole: a
                    // proxy, an older server): it does not say
                    Err(Error::Client { .. } | Error::Server { .. }) => true,
                    Err(e) => return Err(e),
                };
                conn.keeps_cas = Some(keeps);
                keeps
            }
        };
        if keeps {
            return Ok(());
        }
        Err(Error::Unsupported(format!(
            "cas on the binary protocol: server {} keeps no CAS (memcached run with -C: its \
             stats settings say cas_enabled no), and would store unconditionally; the cas \
             was not sent (text and meta answer not found or exists there)",
            conn.server()
        )))
    }

    /// One `version` round trip (the alive check).
    pub(crate) fn alive_check(&self, conn: &mut Conn) -> Result<String> {
        self.exchange(conn, &Request::Version, &mut |_, _, _, _| {})?
            .version()
    }

    /// Serves a pipeline of independent requests (work handed over while callers wait):
    /// request `i` tagged `tag + i`, all written in one go, then each reply read in order
    /// and handed to the pipeline. A store's `SERVER_ERROR` answers that store alone (see
    /// `Error::answered_in_step`); any other error stops it (the connection is then dirty).
    /// The answers are handed out once every reply is read and nothing more was (as
    /// `Dialect::finish` checks for one exchange), or the error that stopped the reading
    /// leaves them standing (`Dialect::error_voids_pipeline`).
    pub(crate) fn pipeline(&self, conn: &mut Conn, work: &mut dyn Pipeline) -> Result<()> {
        let n = work.len();
        let tag = conn.take_tags(n);
        let buf = conn.begin();
        let mut last = 0;
        for i in 0..n {
            last = buf.len();
            self.encode(buf, &work.request(i), tag.wrapping_add(i as u32));
        }
        conn.send_batch(last)?;
        let mut answers: Vec<(Result<Outcome>, Found)> = Vec::with_capacity(n);
        // False while answers read after an unchecked `OK` wait for the version.
        let mut settled = true;
        let read = (|| {
            for i in 0..n {
                let req = work.request(i);
                let mut found = None;
                let outcome =
                    self.read(conn, &req, tag.wrapping_add(i as u32), &mut |_, d, f, c| {
                        found = Some((d.to_vec(), f, c))
                    });
                let outcome = match outcome {
                    Err(e) if in_step(&req, &e) => Err(e),
                    r => Ok(r?),
                };
                answers.push((outcome, found));
            }
            conn.check_read_whole()?;
            if !conn.won_tokens.is_empty() {
                meta::return_tokens(conn)?;
            }
            conn.finish();
            // Answers read after a meta `OK` whose server's version was not known wait
            // until the version says whether `OK` may stand for `HD` (memcached 1.6.6 and
            // older).
            if conn.legacy_ok_unchecked {
                settled = false;
                meta::settle_legacy_ok(conn)?;
                settled = true;
            }
            Ok(())
        })();
        if !settled || read.as_ref().is_err_and(Self::error_voids_pipeline) {
            return read;
        }
        for (i, (outcome, found)) in answers.into_iter().enumerate() {
            work.answer(i, outcome, found);
        }
        read
    }
}

/// A value a pipelined read found: data, flags, CAS unique.
pub(crate) type Found = Option<(Vec<u8>, u32, Option<u64>)>;

/// Requests served in one pipeline by [`Dialect::pipeline`].
pub(crate) trait Pipeline {
    /// How many requests.
    fn len(&self) -> usize;
    /// Request `i`.
    fn request(&self, i: usize) -> Request<'_>;
    /// The reply to request `i`: its outcome (or the error it answered, see
    /// [`Dialect::pipeline`]), and for a read its value, if found.
    fn answer(&mut self, i: usize, outcome: Result<Outcome>, found: Found);
}

/// True when `e`, the error `req`'s reply was read as, answered `req` alone and left the
/// stream in step, so that in a batch or pipeline the next reply is the next request's:
/// a `SERVER_ERROR` (`Error::answered_in_step`), or, to an `incr`/`decr`, memcached's
/// refusal of a non-numeric value or delta (`Error::is_arith_refusal`, one line to a
/// one-line request). Any other `CLIENT_ERROR` or `ERROR` may have desynchronised the
/// stream. The one rule for every batch reader (text, meta) and the pipeline.
pub(crate) fn answered_alone<K: WireKeys + ?Sized>(req: &Request<'_, K>, e: &Error) -> bool {
    e.answered_in_step() || (matches!(req, Request::Arith { .. }) && e.is_arith_refusal())
}

/// [`answered_alone`], in a pipeline only for requests whose reply is one line, read whole
/// (a store, an `incr`/`decr`).
fn in_step<K: WireKeys + ?Sized>(req: &Request<'_, K>, e: &Error) -> bool {
    matches!(req, Request::Store { .. } | Request::Arith { .. }) && answered_alone(req, e)
}

/// The index, in a batch of `n` requests tagged `tag..tag + n`, of the request a reply
/// carrying opaque `opaque` answers; `None` when no request of the batch carries it.
pub(crate) fn tag_index(opaque: Option<u64>, tag: u32, n: usize) -> Option<usize> {
    let i = opaque?.checked_sub(u64::from(tag))?;
    (i < n as u64).then_some(i as usize)
}

/// How many tags (see `Conn::take_tags`) a batch of `n` requests takes: one each, and one
/// for the barrier that closes it (binary NOOP).
pub(crate) fn batch_tags(n: usize) -> usize {
    n + 1
}

/// Collects the outcomes of a pipeline of `n` requests tagged `tag..tag + n`, each answered,
/// in order. `next_reply` reads one reply and gives `None` at the closing barrier, or
/// `Some((opaque, outcome))`; a reply without an opaque (`None`: a meta `SERVER_ERROR`
/// line) answers the next unanswered request. With `closed_by_last`, the last request's
/// reply closes the batch (meta, whose barrier `mn` carries no tag). A reply that is not the
/// next pending request's, or a barrier before every request was answered, is a protocol
/// error: a reply that does not belong to its request is never handed to a caller.
///
/// No request of a batch is quiet (on meta and binary alike). A quiet request's success is
/// the absence of its reply, so a reply the server put under the next request's tag made
/// the skipped request a success and gave the next one another's answer, unseen when no
/// reply followed (tester finding hostile2 1: a refused `add` reported stored, a missing key
/// deleted); and memcached answers a meta store it refuses (`SERVER_ERROR`, out of memory)
/// even when quiet, by a line without the request's tag, which names its request only by
/// its place among answered ones.
fn collect_answers<T>(
    conn: &mut Conn,
    tag: u32,
    n: usize,
    closed_by_last: bool,
    mut next_reply: impl FnMut(&mut Conn) -> Result<Option<(Option<u64>, Result<T>)>>,
    out: &mut dyn FnMut(usize, Result<T>),
) -> Result<()> {
    if closed_by_last && n == 0 {
        return Ok(()); // nothing was sent
    }
    let mut next = 0usize;
    while let Some((opaque, outcome)) = next_reply(conn)? {
        let idx = match opaque {
            None if next < n => Some(next),
            _ => tag_index(opaque, tag, n),
        };
        if idx != Some(next) {
            return Err(conn.protocol_error(&format!(
                "reply {}, which is not the next pending request's (O{tag} to O{}): a stray \
                 or crossed reply",
                show_opaque(opaque),
                u64::from(tag) + n as u64 - 1
            )));
        }
        out(next, outcome);
        next += 1;
        if closed_by_last && next == n {
            return Ok(());
        }
    }
    if closed_by_last {
        return Err(conn.protocol_error("a batch closed before the reply to its last request"));
    }
    // The barrier came before a request's reply (a dropped reply, or the barrier sent
    // first): that request was not answered, never a success (tester finding retest23 1).
    if next < n {
        return Err(conn.protocol_error(&format!(
            "the batch's closing reply came before the reply to O{} (O{tag} to O{} were \
             sent): a dropped or misordered reply",
            u64::from(tag) + next as u64,
            u64::from(tag) + n as u64 - 1
        )));
    }
    Ok(())
}

/// True when a reply to a request that asked for the CAS (`gets`, `gats`, leases,
/// `meta_info`) carries none: no CAS at all, or 0. memcached gives every item a CAS other
/// than 0 (its first is 1); one run with `-C` answers 0 on every protocol, which no `cas`
/// can use, so it is refused on all three alike rather than handed back (tester finding
/// faults 3: text and meta handed it back, binary refused it).
#[inline]
pub(crate) fn lacks_cas(cas: Option<u64>) -> bool {
    !matches!(cas, Some(c) if c != 0)
}

/// The error for a reply to `key` without the CAS its request asked for ([`lacks_cas`]).
pub(crate) fn no_cas(server: &str, key: &[u8]) -> Error {
    Error::Protocol {
        server: server.to_owned(),
        detail: format!(
            "value for key {} without the CAS that gets asked for (none, or 0: memcached \
             run with -C keeps no CAS)",
            crate::key::quoted(key)
        ),
    }
}

/// The error for a `stats` group the server does not have (memcached's text and meta
/// `ERROR`, binary status 0x01): one kind and one message on every protocol, the caller's
/// mistake ([`Error::Client`]). `answer` is what the server said.
pub(crate) fn unknown_stats_group(server: &str, group: Option<&str>, answer: &str) -> Error {
    let what = match group {
        Some(g) => format!("stats group {g:?}"),
        None => "stats".to_owned(),
    };
    Error::Client {
        server: server.to_owned(),
        message: format!("{what}: the server has no such statistics (it answered {answer})"),
    }
}

/// The error of a dialect that has no form of `req` (leases and invalidation off meta).
/// A reply's tag as an error names it: `with opaque 7`, or `without an opaque`.
pub(crate) fn show_opaque(opaque: Option<u64>) -> String {
    match opaque {
        Some(o) => format!("with opaque {o}"),
        None => "without an opaque".to_owned(),
    }
}

fn unsupported<K: WireKeys + ?Sized>(req: &Request<'_, K>, dialect: &str) -> Error {
    Error::Unsupported(format!(
        "{} needs the meta protocol (this client speaks {dialect})",
        req.name()
    ))
}

impl std::str::FromStr for Protocol {
    type Err = Error;
    fn from_str(s: &str) -> Result<Protocol> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" | "ascii" => Ok(Protocol::Text),
            "meta" => Ok(Protocol::Meta),
            "binary" => Ok(Protocol::Binary),
            _ => Err(Error::Config(format!(
                "unknown protocol {s:?} (text, meta, binary)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::tag_index;

    #[test]
    fn a_reply_belongs_only_to_a_tag_of_its_batch() {
        assert_eq!(tag_index(Some(10), 10, 3), Some(0));
        assert_eq!(tag_index(Some(12), 10, 3), Some(2));
        assert_eq!(tag_index(Some(13), 10, 3), None, "past the batch");
        assert_eq!(tag_index(Some(9), 10, 3), None, "an earlier exchange's");
        assert_eq!(tag_index(Some(0), 10, 3), None);
        assert_eq!(tag_index(None, 0, 3), None, "no tag at all");
        assert_eq!(tag_index(Some(u64::MAX), u32::MAX, 1), None);
        assert_eq!(tag_index(Some(u64::from(u32::MAX)), u32::MAX, 1), Some(0));
    }
}
