//! The end of every exchange, in one place: fail-open (the `fail_open` option turns an error
//! that [`Error::fails_open`] allows into a miss or a "not stored", counted per server), and
//! the per-operation record handed to the `on_operation` handler ([`crate::trace`]).
//!
//! Without a handler the only cost is the `Option<Instant>` a call starts with (one branch);
//! the bytes of an exchange are taken when its connection is given back (`Client::release`)
//! and only then.

use super::{Client, Topology};
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::trace::{Op, OpOutcome, OpRecord};
use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    /// The bytes of the last exchange this thread gave back, while a handler is installed.
    static LAST_IO: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
    /// Whether this thread is inside an `on_operation` handler: the records of the calls the
    /// handler makes are not handed to a handler again (each would call it once more,
    /// without end: tester finding observe 4 overflowed the stack).
    static IN_HANDLER: Cell<bool> = const { Cell::new(false) };
    /// The time this thread's current call spent in `on_event` handlers (see [`aside`]),
    /// while a handler is installed: not the call's, so not in its record's duration.
    static ASIDE: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Runs an `on_event` handler (`f`) inside a call, keeping what the call's record will say:
/// the bytes of its last exchange (a call the handler makes gives back its own, and starts by
/// zeroing them: the record said `sent=0 received=0`, tester finding java2 1) and its
/// duration, from which the handler's time is taken out.
pub(crate) fn aside<R>(f: impl FnOnce() -> R) -> R {
    let io = LAST_IO.with(Cell::get);
    let before = ASIDE.with(Cell::get);
    let started = Instant::now();
    let r = f();
    LAST_IO.with(|c| c.set(io));
    ASIDE.with(|c| c.set(before + started.elapsed()));
    r
}

/// A call's duration so far: the time since `start` but that spent in `on_event` handlers.
fn call_time(start: Instant) -> Duration {
    start.elapsed().saturating_sub(ASIDE.with(Cell::get))
}

/// Whether a failed exchange was a read (it fails open as a miss) or a write (as "not
/// stored").
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Read,
    Write,
}

/// When a traced call started: `Some` only while a handler is installed.
pub(super) type Start = Option<Instant>;

impl Client {
    /// The start of a call: the clock read only when a handler is installed.
    #[inline]
    pub(super) fn call_start(&self) -> Start {
        match &self.inner.config.operations {
            None => None,
            Some(_) => {
                LAST_IO.with(|c| c.set((0, 0)));
                ASIDE.with(|c| c.set(Duration::ZERO));
                Some(Instant::now())
            }
        }
    }

    /// Called as a connection is given back: keeps its bytes for the record (traced only).
    #[inline]
    pub(super) fn note_io(&self, io: impl FnOnce() -> (u64, u64)) {
        if self.inner.config.operations.is_some() {
            LAST_IO.with(|c| c.set(io()));
        }
    }

    /// True when `fail_open` turns `e` into a miss or a "not stored" (the one decision is
    /// [`Error::fails_open`]).
    #[inline]
    pub(super) fn opens(&self, e: &Error) -> bool {
        self.inner.config.fail_open && e.fails_open()
    }

    /// Counts `keys` keys that failed open on server `idx` (or the error's server).
    #[cold]
    pub(super) fn count_open(
        &self,
        t: &Topology,
        idx: Option<usize>,
        e: &Error,
        side: Side,
        keys: usize,
    ) {
        let server = idx.or_else(|| {
            let label = e.server()?;
            t.servers.iter().position(|s| &*s.label == label)
        });
        if let Some(s) = server.and_then(|i| t.servers.get(i)) {
            let c = match side {
                Side::Read => &s.counters.fail_open_misses,
                Side::Write => &s.counters.fail_open_not_stored,
            };
            c.fetch_add(keys as u64, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The end of a single-key call (or of one server's part): `r` with fail-open applied
    /// (`missed` is the answer it gives instead of the error), counted, and recorded when
    /// traced (`outcome` says how a success ended and how many keys it counts as hits).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn finish<T>(
        &self,
        t: &Topology,
        start: Start,
        op: Op,
        keys: usize,
        idx: Option<usize>,
        r: Result<T>,
        side: Side,
        missed: impl FnOnce() -> T,
        outcome: impl FnOnce(&T) -> (OpOutcome, usize),
    ) -> Result<T> {
        match r {
            Ok(v) => {
                if let Some(s) = start {
                    let (o, hits) = outcome(&v);
                    self.record(t, s, op, keys, hits, idx, o, None);
                }
                Ok(v)
            }
            Err(e) if self.opens(&e) => {
                self.count_open(t, idx, &e, side, keys);
                if let Some(s) = start {
                    let o = OpOutcome::FailedOpen(e.class());
                    self.record(t, s, op, keys, 0, idx, o, Some(&e));
                }
                Ok(missed())
            }
            Err(e) => {
                if let Some(s) = start {
                    self.record(
                        t,
                        s,
                        op,
                        keys,
                        0,
                        idx,
                        OpOutcome::Error(e.class()),
                        Some(&e),
                    );
                }
                Err(e)
            }
        }
    }

    /// Hands one record to the handler: server `idx` (or the error's server, or none), the
    /// bytes of the last exchange given back on this thread.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn record(
        &self,
        t: &Topology,
        start: Instant,
        op: Op,
        keys: usize,
        hits: usize,
        idx: Option<usize>,
        outcome: OpOutcome,
        error: Option<&Error>,
    ) {
        let server = server_of(t, idx, error);
        self.record_on(start, op, keys, hits, server, outcome, error);
    }

    /// Hands one record to the handler: the `server` given (none: the keys reached no
    /// server), the bytes of the last exchange given back on this thread.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn record_on(
        &self,
        start: Instant,
        op: Op,
        keys: usize,
        hits: usize,
        server: Option<&str>,
        outcome: OpOutcome,
        error: Option<&Error>,
    ) {
        if self.inner.config.operations.is_none() {
            return;
        }
        let duration = call_time(start);
        let io = LAST_IO.with(|c| c.replace((0, 0)));
        self.emit(op, keys, hits, server, outcome, error, duration, None, io);
    }

    /// Keeps one record of a call that holds other connections still (see [`Held`]): its
    /// duration and the bytes of the last exchange given back on this thread are taken now,
    /// as [`Client::record`] takes them; the handler gets it from [`Client::report`].
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn hold(
        &self,
        held: &mut Held,
        start: Instant,
        op: Op,
        keys: usize,
        hits: usize,
        idx: Option<usize>,
        outcome: OpOutcome,
        error: Option<&Error>,
    ) {
        held.0.push(HeldRecord {
            op,
            keys,
            hits,
            idx,
            outcome,
            error: error.cloned(),
            duration: call_time(start),
            ended: Instant::now(),
            io: LAST_IO.with(|c| c.replace((0, 0))),
        });
    }

    /// Hands the held records to the handler, in the order they were kept: called once every
    /// connection of the call is back in its pool.
    #[inline]
    pub(super) fn report(&self, t: &Topology, held: Held) {
        if !held.0.is_empty() {
            self.report_held(t, held);
        }
    }

    #[inline(never)]
    fn report_held(&self, t: &Topology, held: Held) {
        for h in held.0 {
            let e = h.error.as_ref();
            let server = server_of(t, h.idx, e);
            let ended = Some(h.ended);
            self.emit(
                h.op, h.keys, h.hits, server, h.outcome, e, h.duration, ended, h.io,
            );
        }
    }

    /// Calls the handler with one record.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        op: Op,
        keys: usize,
        hits: usize,
        server: Option<&str>,
        outcome: OpOutcome,
        error: Option<&Error>,
        duration: Duration,
        ended: Option<Instant>,
        (bytes_sent, bytes_received): (u64, u64),
    ) {
        let Some(handler) = &self.inner.config.operations else {
            return;
        };
        if IN_HANDLER.with(Cell::get) {
            return;
        }
        let rec = OpRecord {
            op,
            keys,
            hits,
            server,
            protocol: self.protocol(),
            duration,
            ended_ago: ended.map_or(Duration::ZERO, |t| t.elapsed()),
            outcome,
            error,
            bytes_sent,
            bytes_received,
        };
        // A handler that panics does not unwind into the caller, whose call is done (a set
        // stored, a value read): the panic is caught and counted, as the bindings count what
        // theirs raise; the panic hook has already reported it (stderr by default).
        IN_HANDLER.with(|c| c.set(true));
        let called = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (handler.0)(&rec)));
        IN_HANDLER.with(|c| c.set(false));
        if called.is_err() {
            self.inner
                .handler_panics
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// How many calls of the [`on_operation`](crate::ClientBuilder::on_operation) handler
    /// panicked since the client was built. Such a panic is caught: it never reaches the
    /// caller of the operation (whose call has already done its work, a `set` stored), the
    /// panic hook reports it (by default a message on stderr), and it is counted here
    /// (docs/tracing.md). The Python, Perl and Java bindings report and count what their
    /// handlers raise the same way.
    pub fn operation_handler_panics(&self) -> u64 {
        self.inner
            .handler_panics
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The records of a call that holds several connections at once (a multi-key call writes to
/// every server before it reads any reply), kept until every connection of the call is back
/// in its pool and then handed over by [`Client::report`]: a handler that issues commands of
/// its own (docs/tracing.md) then finds the pools as a single-key call leaves them, never one
/// of its servers' connections still held by the call (with `max_size` 1 its command waited
/// the whole `pool_timeout` and failed). Without a handler nothing is ever kept: the vector
/// stays empty and never allocates.
#[derive(Default)]
pub(super) struct Held(Vec<HeldRecord>);

/// One held record: what [`Client::record`] hands over, its duration and bytes taken when it
/// was kept.
struct HeldRecord {
    op: Op,
    keys: usize,
    hits: usize,
    idx: Option<usize>,
    outcome: OpOutcome,
    error: Option<Error>,
    duration: Duration,
    /// When the exchange ended (the record reaches the handler later: `ended_ago`).
    ended: Instant,
    io: (u64, u64),
}

/// The keys of a multi-key call that reached no server, kept for their records: one part
/// per server their placement named (dead, or no proxy alive: [`Client::home`]) with that
/// server's keys, and one part without a server for the keys refused before placement (a
/// bad key or value) or, when a call refuses them all, sent nowhere. Every key is counted;
/// the first error of each part is kept. Parts are few (at most one per server, plus one),
/// so a lookup is a short scan.
#[derive(Default)]
pub(super) struct Unreached {
    parts: Vec<(Option<usize>, usize, Error)>,
}

impl Unreached {
    /// Adds one key of `server` (`None`: no server) that failed with `e`.
    pub(super) fn add(&mut self, server: Option<usize>, e: &Error) {
        self.add_many(server, 1, e);
    }

    /// Adds `keys` keys of `server` that failed with `e`.
    pub(super) fn add_many(&mut self, server: Option<usize>, keys: usize, e: &Error) {
        if keys == 0 {
            return;
        }
        match self.parts.iter_mut().find(|p| p.0 == server) {
            Some(p) => p.1 += keys,
            None => self.parts.push((server, keys, e.clone())),
        }
    }
}

impl Client {
    /// The records of the keys that reached no server (traced calls only): one per part of
    /// `u`, a failed-open one when `fail_open` turned its error into the answer.
    #[cold]
    pub(super) fn record_unreached(&self, t: &Topology, start: Start, op: Op, u: Unreached) {
        let Some(start) = start else {
            return;
        };
        for (server, keys, e) in u.parts {
            let o = if self.opens(&e) {
                OpOutcome::FailedOpen(e.class())
            } else {
                OpOutcome::Error(e.class())
            };
            let label = server.and_then(|i| t.servers.get(i)).map(|s| &*s.label);
            self.record_on(start, op, keys, 0, label, o, Some(&e));
        }
    }
}

/// The outcome of a store.
pub(super) fn stored(s: &StoreOutcome) -> (OpOutcome, usize) {
    if *s == StoreOutcome::Stored {
        (OpOutcome::Stored, 1)
    } else {
        (OpOutcome::NotStored, 0)
    }
}

/// The outcome of a read or of delete/touch (found or not).
pub(super) fn found(hit: &bool) -> (OpOutcome, usize) {
    if *hit {
        (OpOutcome::Hit, 1)
    } else {
        (OpOutcome::Miss, 0)
    }
}

/// The outcome of a multi-key part with `hits` of `keys` positive: reads and deletes hit
/// when any key did, stores are stored when every key was.
pub(super) fn multi(side: Side, keys: usize, hits: usize) -> OpOutcome {
    match side {
        Side::Read if hits > 0 => OpOutcome::Hit,
        Side::Read => OpOutcome::Miss,
        Side::Write if hits == keys => OpOutcome::Stored,
        Side::Write => OpOutcome::NotStored,
    }
}

/// A record's server: server `idx`'s label, or the error's server when the keys reached no
/// server of the topology (none when neither names one).
fn server_of<'a>(t: &'a Topology, idx: Option<usize>, error: Option<&'a Error>) -> Option<&'a str> {
    match idx.and_then(|i| t.servers.get(i)) {
        Some(s) => Some(&*s.label),
        None => error.and_then(Error::server).filter(|s| !s.is_empty()),
    }
}
