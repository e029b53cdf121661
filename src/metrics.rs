//! Per-server counters and state-change events.
//!
//! Counters are relaxed atomics bumped on the paths that already touch the server; reading
//! them takes a snapshot ([`ServerMetrics`]).

use crate::error::Error;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// A snapshot of one server's counters since the client was built.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerMetrics {
    /// `host:port`.
    pub server: String,
    /// Request/reply exchanges (a multi-key call counts once per server it touches).
    pub operations: u64,
    /// Keys found by retrievals, their values delivered (a value that did not decode is a
    /// protocol error instead: what its caller got).
    pub hits: u64,
    /// Keys not found by retrievals.
    pub misses: u64,
    /// Connections opened.
    pub connects: u64,
    /// Connect attempts that failed (refused, unreachable, timed out).
    pub connect_errors: u64,
    /// Reads or writes that timed out (the connection was dropped), and handed-over reads
    /// and sets whose caller's deadline passed while they were being served.
    pub timeouts: u64,
    /// Other socket errors (reset, closed mid-reply).
    pub io_errors: u64,
    /// `SERVER_ERROR`, `CLIENT_ERROR`, `ERROR` replies and authentication failures.
    pub server_errors: u64,
    /// Replies that broke the protocol (the connection was dropped), and values that did not
    /// decode (not inflated, or flags the value format does not know: the key's result was
    /// `Error::Decompress` / `Error::ValueFormat`).
    pub protocol_errors: u64,
    /// Checkouts that found no idle connection and had to wait: in line for a busy
    /// connection, or for the pool to make a slot for a new one (counted once per checkout).
    pub pool_waits: u64,
    /// Total time spent in those waits (not the connects that followed).
    pub pool_wait_time: Duration,
    /// Checkouts that gave up after the pool timeout.
    pub pool_timeouts: u64,
    /// Times the server was marked dead.
    pub ejections: u64,
    /// Times it came back after being marked dead.
    pub returns: u64,
    /// Single-key reads and small sets that waited for a connection and were served on
    /// another caller's connection, pipelined with other waiting work (docs/handover.md).
    pub handed_over: u64,
    /// Returns cleaned with `flush_all` before serving (`on_server_return`: `flush`, or
    /// `delete-written` past `written_while_away_max`).
    pub returns_flushed: u64,
    /// Keys written elsewhere while the server was away, deleted from it on its return
    /// (`on_server_return = delete-written`).
    pub stale_deleted: u64,
    /// Returns whose written-while-away keys overflowed `written_while_away_max` (flushed
    /// instead).
    pub away_overflows: u64,
    /// Keys whose read failed with a timeout or an unreachable server and that `fail_open`
    /// answered as misses (not counted in `misses`).
    pub fail_open_misses: u64,
    /// Writes (stores, deletes, touches, incr/decr; per key) that failed with a timeout or an
    /// unreachable server and that `fail_open` answered as not stored / false / `None`.
    pub fail_open_not_stored: u64,
    /// Keys that a call moved on to another server, within the call, after this server
    /// could not be reached and was marked dead (`rehash` / `eject` failover,
    /// docs/failover.md).
    pub failovers: u64,
    /// Returns whose `on_server_return` clean-up the server refused (memcached `-F` refuses
    /// `flush_all`; a `SERVER_ERROR`; a reply that is no answer): each keeps it dead until
    /// its next retry, its keys served elsewhere (tester findings retest30 3, retest31 7:
    /// under failover nothing else showed why it never came back).
    pub cleanups_refused: u64,
}

/// One server's report: its counters, its pool's `(open, idle)` connections and its health,
/// taken together from one server list ([`crate::Client::server_reports`]). A server is an
/// address: the entries of a repeated address are one server here (docs/metrics.md).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerReport {
    /// The counters (summed over a repeated address's entries).
    pub metrics: ServerMetrics,
    /// Pooled connections `(open, idle)` (summed likewise).
    pub pool: (u32, u32),
    /// Health (merged: see [`crate::ServerState`]).
    pub state: crate::ServerState,
}

/// Whether a metric only grows (a counter) or is a level at the snapshot (a gauge).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Grows from 0 since the client was built.
    Counter,
    /// A level when the snapshot was taken.
    Gauge,
}

/// One per-server metric: its name (as the C ABI's `mcpool_metric_name`, the CLI and the
/// Prometheus exporter say it), its kind and one line of help.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    /// e.g. `"hits"`, `"pool_wait_ns"`.
    pub name: &'static str,
    /// Counter or gauge.
    pub kind: MetricKind,
    /// One line, for exporters.
    pub help: &'static str,
}

const fn counter(name: &'static str, help: &'static str) -> Metric {
    Metric {
        name,
        kind: MetricKind::Counter,
        help,
    }
}

/// Every per-server metric, in the C ABI's numbering (`mcpool_metric`): the one list that the
/// C ABI, the CLI and the Prometheus exporter name metrics from. [`ServerMetrics::values`]
/// gives a snapshot's values in this order.
pub const METRICS: [Metric; 24] = [
    counter(
        "operations",
        "Request/reply exchanges (a multi-key call counts once per server it touches).",
    ),
    counter("hits", "Keys found by retrievals."),
    counter("misses", "Keys not found by retrievals."),
    counter("connects", "Connections opened."),
    counter(
        "connect_errors",
        "Connect attempts that failed (refused, unreachable, timed out).",
    ),
    counter("timeouts", "Connects, reads or writes that timed out."),
    counter(
        "io_errors",
        "Other socket errors (reset, closed mid-reply).",
    ),
    counter(
        "server_errors",
        "SERVER_ERROR, CLIENT_ERROR, ERROR replies and authentication failures.",
    ),
    counter(
        "protocol_errors",
        "Replies that broke the protocol, and values that did not decode.",
    ),
    counter(
        "pool_waits",
        "Checkouts that found no idle connection and had to wait.",
    ),
    counter(
        "pool_wait_ns",
        "Total time spent in those waits, in nanoseconds.",
    ),
    counter(
        "pool_timeouts",
        "Checkouts that gave up after the pool timeout.",
    ),
    counter("ejections", "Times the server was marked dead."),
    counter("returns", "Times it came back after being marked dead."),
    Metric {
        name: "pool_open",
        kind: MetricKind::Gauge,
        help: "Pooled connections open (connected; checked out or idle).",
    },
    Metric {
        name: "pool_idle",
        kind: MetricKind::Gauge,
        help: "Pooled connections idle.",
    },
    counter(
        "handed_over",
        "Reads and small sets served on another caller's connection while waiting for one.",
    ),
    // keys-meta: stale data after a return (on_server_return).
    counter(
        "returns_flushed",
        "Returns cleaned with flush_all before serving (on_server_return).",
    ),
    counter(
        "stale_deleted",
        "Keys written elsewhere while the server was away, deleted on its return.",
    ),
    counter(
        "away_overflows",
        "Returns whose written-while-away keys overflowed written_while_away_max (flushed).",
    ),
    // fail-open (the `fail_open` option)
    counter(
        "fail_open_misses",
        "Keys whose read failed (timeout, unreachable server) and fail_open answered as misses.",
    ),
    counter(
        "fail_open_not_stored",
        "Writes that failed (timeout, unreachable server) and fail_open answered as not stored.",
    ),
    // failover within a call (rehash / eject)
    counter(
        "failovers",
        "Keys a call moved on to another server after this one could not be reached.",
    ),
    counter(
        "cleanups_refused",
        "Returns whose on_server_return clean-up the server refused (it stays dead).",
    ),
];

impl ServerMetrics {
    /// This snapshot's values in the order of [`METRICS`], with the pool's `(open, idle)`
    /// connections (from `Client::pool_states`) as the two gauges.
    pub fn values(&self, (open, idle): (u32, u32)) -> [u64; METRICS.len()] {
        let wait_ns = u64::try_from(self.pool_wait_time.as_nanos()).unwrap_or(u64::MAX);
        [
            self.operations,
            self.hits,
            self.misses,
            self.connects,
            self.connect_errors,
            self.timeouts,
            self.io_errors,
            self.server_errors,
            self.protocol_errors,
            self.pool_waits,
            wait_ns,
            self.pool_timeouts,
            self.ejections,
            self.returns,
            open.into(),
            idle.into(),
            self.handed_over,
            self.returns_flushed,
            self.stale_deleted,
            self.away_overflows,
            self.fail_open_misses,
            self.fail_open_not_stored,
            self.failovers,
            self.cleanups_refused,
        ]
    }
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub operations: AtomicU64,
    pub hits: AtomicU64,
    pub misses: AtomicU64,
    pub connects: AtomicU64,
    pub connect_errors: AtomicU64,
    pub timeouts: AtomicU64,
    pub io_errors: AtomicU64,
    pub server_errors: AtomicU64,
    pub protocol_errors: AtomicU64,
    pub pool_waits: AtomicU64,
    pub pool_wait_nanos: AtomicU64,
    pub pool_timeouts: AtomicU64,
    pub ejections: AtomicU64,
    pub returns: AtomicU64,
    pub handed_over: AtomicU64,
    pub returns_flushed: AtomicU64,
    pub stale_deleted: AtomicU64,
    pub away_overflows: AtomicU64,
    pub fail_open_misses: AtomicU64,
    pub fail_open_not_stored: AtomicU64,
    pub failovers: AtomicU64,
    pub cleanups_refused: AtomicU64,
    /// The `pool_open` and `pool_idle` gauges: connections actually open (a pooled slot
    /// without one is not counted), kept by [`crate::pool::OpenGauge`].
    pub pool_open: AtomicU64,
    pub pool_idle: AtomicU64,
    /// The fork generation the gauges count for (a child starts again from 0).
    pub pool_generation: AtomicU64,
}

impl Counters {
    /// In a process forked since these counters were last used (`generation`, the current
    /// fork generation, differs from theirs), starts them again from 0: a child's metrics
    /// count its own calls and connections, as any new process's (tester finding fork 3: its
    /// counters went on from the parent's totals while its gauges started from 0, so summing
    /// the workers of a pre-fork server counted the master's calls once per worker). Returns
    /// whether it did. Every field is named, so that a new one cannot be forgotten here.
    pub(crate) fn restart_if_forked(&self, generation: u64) -> bool {
        let seen = self.pool_generation.load(Relaxed);
        if seen == generation
            || self
                .pool_generation
                .compare_exchange(seen, generation, Relaxed, Relaxed)
                .is_err()
        {
            return false;
        }
        // Destructured without `..`: a field added to `Counters` must be named here.
        macro_rules! zero {
            ($($field:ident),* ; $($kept:ident),*) => {{
                let Counters { $($field,)* $($kept: _,)* } = self;
                $( $field.store(0, Relaxed); )*
            }};
        }
        zero!(
            operations,
            hits,
            misses,
            connects,
            connect_errors,
            timeouts,
            io_errors,
            server_errors,
            protocol_errors,
            pool_waits,
            pool_wait_nanos,
            pool_timeouts,
            ejections,
            returns,
            handed_over,
            returns_flushed,
            stale_deleted,
            away_overflows,
            fail_open_misses,
            fail_open_not_stored,
            failovers,
            cleanups_refused,
            pool_open,
            pool_idle;
            pool_generation
        );
        true
    }

    pub(crate) fn bump(c: &AtomicU64) {
        c.fetch_add(1, Relaxed);
    }

    /// Counts an error by kind.
    pub(crate) fn error(&self, e: &Error) {
        let c = match e {
            Error::ConnectTimeout { .. } => {
                Self::bump(&self.connect_errors);
                &self.timeouts
            }
            Error::IoTimeout { .. } => &self.timeouts,
            Error::Io { .. } => &self.io_errors,
            Error::Server { .. }
            | Error::TooLargeForServer { .. }
            | Error::Client { .. }
            | Error::Auth { .. } => &self.server_errors,
            Error::Protocol { .. } | Error::Decompress(_) => &self.protocol_errors,
            Error::PoolTimeout { .. } => &self.pool_timeouts,
            _ => return,
        };
        Self::bump(c);
    }

    /// The counters of one address: the sum over `all`, its entries in the server list (one,
    /// or more for a repeated address: docs/metrics.md).
    pub(crate) fn sum(all: &[&Counters], server: &str) -> ServerMetrics {
        let g = |c: fn(&Counters) -> &AtomicU64| {
            all.iter()
                .fold(0u64, |n, x| n.saturating_add(c(x).load(Relaxed)))
        };
        ServerMetrics {
            server: server.to_owned(),
            operations: g(|c| &c.operations),
            hits: g(|c| &c.hits),
            misses: g(|c| &c.misses),
            connects: g(|c| &c.connects),
            connect_errors: g(|c| &c.connect_errors),
            timeouts: g(|c| &c.timeouts),
            io_errors: g(|c| &c.io_errors),
            server_errors: g(|c| &c.server_errors),
            protocol_errors: g(|c| &c.protocol_errors),
            pool_waits: g(|c| &c.pool_waits),
            pool_wait_time: Duration::from_nanos(g(|c| &c.pool_wait_nanos)),
            pool_timeouts: g(|c| &c.pool_timeouts),
            ejections: g(|c| &c.ejections),
            returns: g(|c| &c.returns),
            handed_over: g(|c| &c.handed_over),
            returns_flushed: g(|c| &c.returns_flushed),
            stale_deleted: g(|c| &c.stale_deleted),
            away_overflows: g(|c| &c.away_overflows),
            fail_open_misses: g(|c| &c.fail_open_misses),
            fail_open_not_stored: g(|c| &c.fail_open_not_stored),
            failovers: g(|c| &c.failovers),
            cleanups_refused: g(|c| &c.cleanups_refused),
        }
    }
}

/// A change in a server's state, delivered to the callback set with
/// [`crate::ClientBuilder::on_event`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The server was marked dead after `failures` consecutive failures; it will be retried
    /// after `retry_in`. Reported once per outage: a failed retry doubles the back-off
    /// without a new event.
    ServerDown {
        /// `host:port`.
        server: String,
        /// Consecutive failures so far.
        failures: u32,
        /// Back-off before the next attempt.
        retry_in: Duration,
    },
    /// The server answered again after being marked dead.
    ServerUp {
        /// `host:port`.
        server: String,
    },
}

/// The event callback. It runs on the thread whose call changed the state, once that call has
/// given its connection back: it may issue commands of its own, but keep it short (the call
/// that triggered it returns when it does).
#[derive(Clone)]
pub struct EventHandler(pub Arc<dyn Fn(&Event) + Send + Sync>);

impl fmt::Debug for EventHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventHandler")
    }
}
