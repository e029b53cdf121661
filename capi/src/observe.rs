//! Observing a client: per-server metrics (a snapshot handle read one counter at a time, so
//! counters can be added without breaking compiled programs) and the state-change event
//! callback.

use super::client::mcpool_client;
use super::config::mcpool_config;
use super::landing::{landingpad, landingpad_void, Failure};
use super::ptr;
use super::status::mcpool_class;
use super::status::mcpool_status::{self, MCPOOL_OK};
use super::values::{out_of_range, Text};
use mcpool::metrics::Event;
use mcpool::trace::{OpOutcome, OpRecord};
use mcpool::Protocol;
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// One per-server counter or gauge, read with `mcpool_metrics_get`. The numbers are part of
/// the ABI: new metrics get new numbers, none is ever renumbered or reused, so a program
/// compiled against an older header keeps working. `mcpool_metric_name` names each one.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mcpool_metric {
    /// Request/reply exchanges (a multi-key call counts once per server it touches).
    MCPOOL_METRIC_OPERATIONS = 0,
    /// Keys found by retrievals.
    MCPOOL_METRIC_HITS = 1,
    /// Keys not found by retrievals.
    MCPOOL_METRIC_MISSES = 2,
    /// Connections opened.
    MCPOOL_METRIC_CONNECTS = 3,
    /// Connect attempts that failed (refused, unreachable, timed out).
    MCPOOL_METRIC_CONNECT_ERRORS = 4,
    /// Connects, reads or writes that timed out.
    MCPOOL_METRIC_TIMEOUTS = 5,
    /// Other socket errors (reset, closed mid-reply).
    MCPOOL_METRIC_IO_ERRORS = 6,
    /// `SERVER_ERROR`, `CLIENT_ERROR`, `ERROR` replies and authentication failures.
    MCPOOL_METRIC_SERVER_ERRORS = 7,
    /// Replies that broke the protocol (and values that did not inflate).
    MCPOOL_METRIC_PROTOCOL_ERRORS = 8,
    /// Checkouts that found no idle connection and had to wait.
    MCPOOL_METRIC_POOL_WAITS = 9,
    /// Total time spent in those waits, in nanoseconds.
    MCPOOL_METRIC_POOL_WAIT_NS = 10,
    /// Checkouts that gave up after the pool timeout.
    MCPOOL_METRIC_POOL_TIMEOUTS = 11,
    /// Times the server was marked dead.
    MCPOOL_METRIC_EJECTIONS = 12,
    /// Times it came back after being marked dead.
    MCPOOL_METRIC_RETURNS = 13,
    /// Gauge: pooled connections open (connected: checked out or idle; a pool slot without
    /// a connection is not counted) when the snapshot was taken.
    MCPOOL_METRIC_POOL_OPEN = 14,
    /// Gauge: pooled connections idle when the snapshot was taken.
    MCPOOL_METRIC_POOL_IDLE = 15,
    /// Counter: single-key reads and small sets that waited for a connection and were served
    /// on another caller's connection instead (see docs/handover.md).
    MCPOOL_METRIC_HANDED_OVER = 16,
    /// Counter: returns cleaned with `flush_all` before serving (`on_server_return`).
    MCPOOL_METRIC_RETURNS_FLUSHED = 17,
    /// Counter: keys written elsewhere while the server was away, deleted on its return
    /// (`on_server_return = delete-written`).
    MCPOOL_METRIC_STALE_DELETED = 18,
    /// Counter: returns whose written-while-away keys overflowed `written_while_away_max`
    /// (flushed instead).
    MCPOOL_METRIC_AWAY_OVERFLOWS = 19,
    /// Counter: keys whose read failed (timeout, unreachable server) and that `fail_open`
    /// answered as misses (not counted in `MCPOOL_METRIC_MISSES`).
    MCPOOL_METRIC_FAIL_OPEN_MISSES = 20,
    /// Counter: writes that failed (timeout, unreachable server) and that `fail_open`
    /// answered as not stored / not found.
    MCPOOL_METRIC_FAIL_OPEN_NOT_STORED = 21,
    /// Counter: keys that a call moved on to another server, within the call, after this
    /// server could not be reached and was marked dead (`rehash` / `eject` failover).
    MCPOOL_METRIC_FAILOVERS = 22,
    /// Counter: returns whose `on_server_return` clean-up the server refused (memcached
    /// `-F` refuses `flush_all`): it stays dead until its next retry, its keys served
    /// elsewhere (under failover no call shows that error).
    MCPOOL_METRIC_CLEANUPS_REFUSED = 23,
}

/// Every metric in numeric order (numbers are dense from 0).
const METRICS: [(mcpool_metric, &str); 24] = {
    use mcpool_metric::*;
    [
        (MCPOOL_METRIC_OPERATIONS, "operations\0"),
        (MCPOOL_METRIC_HITS, "hits\0"),
        (MCPOOL_METRIC_MISSES, "misses\0"),
        (MCPOOL_METRIC_CONNECTS, "connects\0"),
        (MCPOOL_METRIC_CONNECT_ERRORS, "connect_errors\0"),
        (MCPOOL_METRIC_TIMEOUTS, "timeouts\0"),
        (MCPOOL_METRIC_IO_ERRORS, "io_errors\0"),
        (MCPOOL_METRIC_SERVER_ERRORS, "server_errors\0"),
        (MCPOOL_METRIC_PROTOCOL_ERRORS, "protocol_errors\0"),
        (MCPOOL_METRIC_POOL_WAITS, "pool_waits\0"),
        (MCPOOL_METRIC_POOL_WAIT_NS, "pool_wait_ns\0"),
        (MCPOOL_METRIC_POOL_TIMEOUTS, "pool_timeouts\0"),
        (MCPOOL_METRIC_EJECTIONS, "ejections\0"),
        (MCPOOL_METRIC_RETURNS, "returns\0"),
        (MCPOOL_METRIC_POOL_OPEN, "pool_open\0"),
        (MCPOOL_METRIC_POOL_IDLE, "pool_idle\0"),
        (MCPOOL_METRIC_HANDED_OVER, "handed_over\0"),
        (MCPOOL_METRIC_RETURNS_FLUSHED, "returns_flushed\0"),
        (MCPOOL_METRIC_STALE_DELETED, "stale_deleted\0"),
        (MCPOOL_METRIC_AWAY_OVERFLOWS, "away_overflows\0"),
        (MCPOOL_METRIC_FAIL_OPEN_MISSES, "fail_open_misses\0"),
        (MCPOOL_METRIC_FAIL_OPEN_NOT_STORED, "fail_open_not_stored\0"),
        (MCPOOL_METRIC_FAILOVERS, "failovers\0"),
        (MCPOOL_METRIC_CLEANUPS_REFUSED, "cleanups_refused\0"),
    ]
};

/// One server's values, indexed by metric number, and its health.
struct ServerSnapshot {
    label: Text,
    values: [u64; METRICS.len()],
    /// Alive, consecutive failures, milliseconds until retried (0 when not dead).
    state: (bool, u32, u64),
}

/// A snapshot of every server's metrics and health, taken by `mcpool_client_metrics`:
/// counters since the client was built, gauges and health at the moment of the snapshot.
/// One entry per server address (an address listed more than once is one server: counters
/// and pool gauges summed, health merged; docs/metrics.md). Read with `mcpool_metrics_len`,
/// `mcpool_metrics_label`, `mcpool_metrics_get` and `mcpool_metrics_state`; freed with
/// `mcpool_metrics_free`. Immutable, so it may be read from any thread.
/// It owns its memory and refers to no client: it stays valid after `mcpool_client_free` of
/// the client that made it, until its own `_free`.
pub struct mcpool_metrics {
    servers: Vec<ServerSnapshot>,
    /// The Prometheus text of the snapshot, made on first ask.
    prometheus: std::sync::OnceLock<Text>,
}

/// How many metrics this library knows: their numbers are `0 .. mcpool_metric_count()`.
/// A program compiled against an older header may see a larger count; `mcpool_metric_name`
/// names the new ones.
#[no_mangle]
pub extern "C" fn mcpool_metric_count() -> usize {
    METRICS.len()
}

/// The name of metric number `metric` (e.g. `"hits"`, `"pool_wait_ns"`), a static
/// NUL-terminated string; NULL for a number this library does not know. Never free it.
#[no_mangle]
pub extern "C" fn mcpool_metric_name(metric: u32) -> *const c_char {
    METRICS
        .get(metric as usize)
        .map_or(std::ptr::null(), |(_, name)| name.as_ptr().cast())
}

/// Takes a snapshot of every server's metrics and health (no I/O), one entry per server
/// address (see `mcpool_metrics`), and writes it to `*out_metrics`.
///
/// Ownership: the caller owns `*out_metrics` and frees it with `mcpool_metrics_free`; the
/// snapshot stays valid after `mcpool_client_free` (it owns its memory).
///
/// # Safety
/// `client` is NULL or live; `out_metrics` is NULL or valid for a write of one pointer.
#[no_mangle]
pub unsafe extern "C" fn mcpool_client_metrics(
    client: *const mcpool_client,
    out_metrics: *mut *mut mcpool_metrics,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `client` is live.
        let c = unsafe { ptr::handle(client, "client") }?;
        ptr::out(out_metrics, "metrics")?;
        // One server list for all (set_servers may run at the same time).
        let servers = c
            .client
            .server_reports()
            .iter()
            .map(|r| ServerSnapshot {
                label: Text::new(&r.metrics.server),
                values: r.metrics.values(r.pool),
                state: (
                    r.state.alive,
                    r.state.failures,
                    r.state
                        .retry_in
                        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                ),
            })
            .collect();
        let m = Box::into_raw(Box::new(mcpool_metrics {
            servers,
            prometheus: std::sync::OnceLock::new(),
        }));
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_metrics, m) };
        Ok(MCPOOL_OK)
    })
}

/// How many servers the snapshot covers (configuration order); 0 for NULL.
///
/// # Safety
/// `metrics` is NULL or a live snapshot.
#[no_mangle]
pub unsafe extern "C" fn mcpool_metrics_len(metrics: *const mcpool_metrics) -> usize {
    // SAFETY: the caller promises a non-NULL `metrics` is live.
    unsafe { metrics.as_ref() }.map_or(0, |m| m.servers.len())
}

/// # Safety
/// `metrics` is NULL or live.
unsafe fn snapshot<'a>(
    metrics: *const mcpool_metrics,
    server: usize,
) -> Result<&'a ServerSnapshot, Failure> {
    // SAFETY: the caller promises a non-NULL `metrics` is live.
    let m = unsafe { ptr::handle(metrics, "metrics") }?;
    m.servers
        .get(server)
        .ok_or_else(|| out_of_range("server", server, m.servers.len()))
}

/// Server number `server`'s `host:port` label: NUL-terminated, `*out_len` bytes without the
/// NUL, pointing into `metrics` (valid until it is freed). `MCPOOL_OUT_OF_RANGE` past the end.
///
/// # Safety
/// `metrics` is NULL or live; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_metrics_label(
    metrics: *const mcpool_metrics,
    server: usize,
    out_label: *mut *const c_char,
    out_len: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let s = unsafe { snapshot(metrics, server) }?;
        // SAFETY: forwarded from the caller's promise.
        unsafe { s.label.write_to(out_label, "label", out_len) }?;
        Ok(MCPOOL_OK)
    })
}

/// The whole snapshot in the Prometheus text exposition format (version 0.0.4): one series
/// per metric and server, `mcpool_<metric>_total{server="host:port"}` for counters,
/// `mcpool_<metric>` for gauges, the pool wait time in seconds (docs/metrics.md). Writes a
/// NUL-terminated text of `*out_len` bytes (without the NUL) that points into `metrics`,
/// valid until it is freed; made on the first call, the same text after.
///
/// # Safety
/// `metrics` is NULL or live; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_metrics_prometheus(
    metrics: *const mcpool_metrics,
    out_text: *mut *const c_char,
    out_len: *mut usize,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises a non-NULL `metrics` is live.
        let m = unsafe { ptr::handle(metrics, "metrics") }?;
        let text = m.prometheus.get_or_init(|| {
            let rows: Vec<(&str, [u64; METRICS.len()])> = m
                .servers
                .iter()
                .map(|s| (s.label.as_str(), s.values))
                .collect();
            Text::new(&mcpool::prometheus::render_values(&rows))
        });
        // SAFETY: forwarded from the caller's promise.
        unsafe { text.write_to(out_text, "text", out_len) }?;
        Ok(MCPOOL_OK)
    })
}

/// Metric number `metric` (an `mcpool_metric`) of server number `server`, written to
/// `*out_value`. `MCPOOL_OUT_OF_RANGE` for a server past the end or a metric number this
/// library does not know (`mcpool_metric_count`).
///
/// Takes the number rather than the enum so any value from C is accepted.
///
/// # Safety
/// `metrics` is NULL or live; `out_value` is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_metrics_get(
    metrics: *const mcpool_metrics,
    server: usize,
    metric: u32,
    out_value: *mut u64,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let s = unsafe { snapshot(metrics, server) }?;
        ptr::out(out_value, "value")?;
        let v = *s
            .values
            .get(metric as usize)
            .ok_or_else(|| out_of_range("metric", metric as usize, METRICS.len()))?;
        // SAFETY: checked non-NULL; the caller promises it is writable.
        unsafe { ptr::write(out_value, v) };
        Ok(MCPOOL_OK)
    })
}

/// Server number `server`'s health in the snapshot: whether calls may go to it, its
/// consecutive failures, and while it is marked dead the milliseconds until it is retried (0
/// otherwise); for an address listed more than once, its entries' states merged (alive only
/// while every entry is, the most failures, the longest wait; docs/metrics.md).
/// `MCPOOL_OUT_OF_RANGE` past the end.
///
/// # Safety
/// `metrics` is NULL or live; each output is NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_metrics_state(
    metrics: *const mcpool_metrics,
    server: usize,
    out_alive: *mut bool,
    out_failures: *mut u32,
    out_retry_in_ms: *mut u64,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: forwarded from the caller's promise.
        let s = unsafe { snapshot(metrics, server) }?;
        ptr::out(out_alive, "alive")?;
        ptr::out(out_failures, "failures")?;
        ptr::out(out_retry_in_ms, "retry_in_ms")?;
        let (alive, failures, retry) = s.state;
        // SAFETY: all outputs were checked non-NULL; the caller promises they are writable.
        unsafe {
            ptr::write(out_alive, alive);
            ptr::write(out_failures, failures);
            ptr::write(out_retry_in_ms, retry);
        }
        Ok(MCPOOL_OK)
    })
}

/// Frees a metrics snapshot. NULL is ignored.
///
/// # Safety
/// `metrics` is NULL or a snapshot not yet freed; neither it nor any label read from it may
/// be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn mcpool_metrics_free(metrics: *mut mcpool_metrics) {
    landingpad_void(|| {
        if !metrics.is_null() {
            // SAFETY: made by `Box::into_raw` in `mcpool_client_metrics`, freed once.
            drop(unsafe { Box::from_raw(metrics) });
        }
    })
}

// ----- events -----

/// What happened to a server (`mcpool_event_kind` returns it). Stable numbers, never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mcpool_event_type {
    /// The server was marked dead after `mcpool_event_failures` consecutive failures; it is
    /// retried after `mcpool_event_retry_in_ms`.
    MCPOOL_EVENT_SERVER_DOWN = 0,
    /// The server answered again after being marked dead.
    MCPOOL_EVENT_SERVER_UP = 1,
    /// An event this version of the header has no name for (from a newer core).
    MCPOOL_EVENT_OTHER = 99,
}

/// A server state change, passed to the event callback and valid only during that call.
/// Read with `mcpool_event_kind`, `mcpool_event_server`, `mcpool_event_failures`,
/// `mcpool_event_retry_in_ms` (opaque, so fields can be added).
pub struct mcpool_event {
    kind: mcpool_event_type,
    server: Text,
    failures: u32,
    retry_in_ms: u64,
}

impl mcpool_event {
    fn new(e: &Event) -> mcpool_event {
        use mcpool_event_type::*;
        let ms = |d: &std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        match e {
            Event::ServerDown {
                server,
                failures,
                retry_in,
            } => mcpool_event {
                kind: MCPOOL_EVENT_SERVER_DOWN,
                server: Text::new(server),
                failures: *failures,
                retry_in_ms: ms(retry_in),
            },
            Event::ServerUp { server } => mcpool_event {
                kind: MCPOOL_EVENT_SERVER_UP,
                server: Text::new(server),
                failures: 0,
                retry_in_ms: 0,
            },
            #[allow(unreachable_patterns)]
            _ => mcpool_event {
                kind: MCPOOL_EVENT_OTHER,
                server: Text::new(""),
                failures: 0,
                retry_in_ms: 0,
            },
        }
    }
}

/// Called on every server state change, on the thread whose call changed it (inside that
/// mcpool call). Keep it short and non-blocking; it may read the client's state
/// (`mcpool_client_server_state`, `mcpool_client_metrics`) but must not free the client.
/// `event` is valid only during the call.
/// It must return normally: a C++ exception or a `longjmp` out of it is undefined behaviour,
/// which may abort the process or leak memory and leave a connection checked out; catch
/// everything inside it.
pub type mcpool_event_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, event: *const mcpool_event)>;

/// The C callback and its userdata, moved into the core's event handler.
struct CCallback {
    cb: unsafe extern "C" fn(*mut c_void, *const mcpool_event),
    userdata: *mut c_void,
}

// SAFETY: `mcpool_config_set_event_callback` documents that the callback may run on any
// thread that uses the client, so the caller promises `userdata` may be used from any thread
// (and concurrently); mcpool itself never dereferences it.
unsafe impl Send for CCallback {}
// SAFETY: as for `Send`: shared use of the pointer is the caller's documented promise.
unsafe impl Sync for CCallback {}

impl CCallback {
    fn call(&self, e: &Event) {
        // Nothing here may unwind into the core's code that emitted the event: a panic while
        // building the event (a bug) is swallowed, and C cannot unwind (documented).
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let ev = mcpool_event::new(e);
            // SAFETY: the caller of `mcpool_config_set_event_callback` promised a valid
            // function that does not unwind; `ev` lives for the whole call.
            unsafe { (self.cb)(self.userdata, &ev) };
        }));
    }
}

/// Sets (or, with `callback` NULL, removes) the function called on every server state change:
/// marked dead after the failure limit (`MCPOOL_EVENT_SERVER_DOWN`), answering again
/// (`MCPOOL_EVENT_SERVER_UP`). `userdata` is passed back untouched; the callback may run on
/// any thread that uses a client built from this configuration, possibly on several at once,
/// so `userdata` must be safe to use that way, and must stay valid until every such client
/// is freed. Clients built before this call keep the callback they had.
///
/// # Safety
/// `config` is NULL or a live configuration no other thread is using; `callback` is NULL or
/// a valid function as described on `mcpool_event_callback`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_event_callback(
    config: *mut mcpool_config,
    callback: mcpool_event_callback,
    userdata: *mut c_void,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        let cfg = unsafe { ptr::handle_mut(config, "config") }?;
        cfg.builder = match callback {
            Some(cb) => {
                let c = CCallback { cb, userdata };
                cfg.builder.clone().on_event(move |e| c.call(e))
            }
            // The builder cannot unset a handler; a no-op one is the same.
            None => cfg.builder.clone().on_event(|_| {}),
        };
        Ok(MCPOOL_OK)
    })
}

/// The event's kind; `MCPOOL_EVENT_OTHER` for a NULL event.
///
/// # Safety
/// `event` is NULL or the event passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_event_kind(event: *const mcpool_event) -> mcpool_event_type {
    // SAFETY: the caller promises a non-NULL `event` is live.
    unsafe { event.as_ref() }.map_or(mcpool_event_type::MCPOOL_EVENT_OTHER, |e| e.kind)
}

/// The server's `host:port` label (NUL-terminated; its length without the NUL written to
/// `*out_len` when `out_len` is not NULL). Valid only during the callback. `""` for NULL.
///
/// # Safety
/// `event` is NULL or the event passed to the running callback; `out_len` is NULL or valid
/// for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_event_server(
    event: *const mcpool_event,
    out_len: *mut usize,
) -> *const c_char {
    // SAFETY: the caller promises a non-NULL `event` is live.
    let (p, len) =
        unsafe { event.as_ref() }.map_or((c"".as_ptr(), 0), |e| (e.server.ptr(), e.server.len()));
    // SAFETY: the caller promises a non-NULL `out_len` is writable.
    unsafe { ptr::write(out_len, len) };
    p
}

/// For `MCPOOL_EVENT_SERVER_DOWN`: the consecutive failures so far (0 otherwise or for NULL).
///
/// # Safety
/// `event` is NULL or the event passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_event_failures(event: *const mcpool_event) -> u32 {
    // SAFETY: the caller promises a non-NULL `event` is live.
    unsafe { event.as_ref() }.map_or(0, |e| e.failures)
}

/// For `MCPOOL_EVENT_SERVER_DOWN`: milliseconds until the server is tried again (0 otherwise
/// or for NULL).
///
/// # Safety
/// `event` is NULL or the event passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_event_retry_in_ms(event: *const mcpool_event) -> u64 {
    // SAFETY: the caller promises a non-NULL `event` is live.
    unsafe { event.as_ref() }.map_or(0, |e| e.retry_in_ms)
}

// ----- per-operation records -----

/// How an exchange ended (`mcpool_op_outcome`). Stable numbers, never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mcpool_op_outcome {
    /// A retrieval found its key (a multi-key record: at least one, `mcpool_op_hits` says how
    /// many); delete, touch, incr/decr, invalidate found theirs.
    MCPOOL_OP_HIT = 0,
    /// A retrieval found none of its keys; delete/touch/incr/decr of a missing key.
    MCPOOL_OP_MISS = 1,
    /// A store happened (a multi-key record: every one).
    MCPOOL_OP_STORED = 2,
    /// A store did not happen (add of an existing key, a CAS conflict; a multi-key record:
    /// at least one did not).
    MCPOOL_OP_NOT_STORED = 3,
    /// A command without hit or miss answered (flush_all, version, noop, stats, noreply sets).
    MCPOOL_OP_OK = 4,
    /// The exchange failed; the call returned the error (`mcpool_op_error_class`).
    MCPOOL_OP_ERROR = 5,
    /// The exchange failed with a timeout or an unreachable server and `fail_open` answered
    /// a miss / not stored instead (`mcpool_op_error_class` says which class).
    MCPOOL_OP_FAILED_OPEN = 6,
    /// An outcome this version of the header has no name for (from a newer core).
    MCPOOL_OP_OTHER = 99,
}

/// One exchange with one server, passed to the operation callback and valid only during that
/// call (docs/tracing.md: a multi-key call gives one record per server). Read with
/// `mcpool_op_name`, `mcpool_op_keys`, `mcpool_op_hits`, `mcpool_op_server`,
/// `mcpool_op_protocol`, `mcpool_op_duration_ns`, `mcpool_op_outcome_of`,
/// `mcpool_op_error_class`, `mcpool_op_error_message`, `mcpool_op_bytes_sent`,
/// `mcpool_op_bytes_received` (opaque, so fields can be added).
pub struct mcpool_op_record {
    op: &'static str,
    keys: usize,
    hits: usize,
    server: Option<Text>,
    protocol: &'static str,
    duration_ns: u64,
    ended_ago_ns: u64,
    outcome: mcpool_op_outcome,
    class: mcpool_class,
    error: Option<Text>,
    bytes_sent: u64,
    bytes_received: u64,
}

impl mcpool_op_record {
    fn new(r: &OpRecord<'_>) -> mcpool_op_record {
        use mcpool_op_outcome::*;
        let outcome = match r.outcome {
            OpOutcome::Hit => MCPOOL_OP_HIT,
            OpOutcome::Miss => MCPOOL_OP_MISS,
            OpOutcome::Stored => MCPOOL_OP_STORED,
            OpOutcome::NotStored => MCPOOL_OP_NOT_STORED,
            OpOutcome::Ok => MCPOOL_OP_OK,
            OpOutcome::Error(_) => MCPOOL_OP_ERROR,
            OpOutcome::FailedOpen(_) => MCPOOL_OP_FAILED_OPEN,
            #[allow(unreachable_patterns)]
            _ => MCPOOL_OP_OTHER,
        };
        mcpool_op_record {
            op: r.op.name_nul(),
            keys: r.keys,
            hits: r.hits,
            server: r.server.map(Text::new),
            protocol: match r.protocol {
                Protocol::Text => "text\0",
                Protocol::Meta => "meta\0",
                Protocol::Binary => "binary\0",
            },
            duration_ns: u64::try_from(r.duration.as_nanos()).unwrap_or(u64::MAX),
            ended_ago_ns: u64::try_from(r.ended_ago.as_nanos()).unwrap_or(u64::MAX),
            outcome,
            class: r
                .outcome
                .error_class()
                .map_or(mcpool_class::MCPOOL_CLASS_OK, mcpool_class::from_class),
            error: r.error.map(|e| Text::new(&e.to_string())),
            bytes_sent: r.bytes_sent,
            bytes_received: r.bytes_received,
        }
    }
}

/// Called after every exchange with a server, and once for the keys of a call refused before
/// any server was asked (a bad key or value: `mcpool_op_server` is ""), on the thread that
/// made the call, inside that mcpool call, once its connection is back in the pool (so it may issue commands of its
/// own; those give no records: a call made inside a callback reaches no callback, so a
/// callback that calls the client never recurses). Keep it short and non-blocking: the call returns when it does. It must not free the
/// client. `record` is valid only during the call.
/// It must return normally: a C++ exception or a `longjmp` out of it is undefined behaviour,
/// which may abort the process or leak memory and leave a connection checked out; catch
/// everything inside it.
pub type mcpool_op_callback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, record: *const mcpool_op_record)>;

/// The C operation callback and its userdata, moved into the core's handler.
struct COpCallback {
    cb: unsafe extern "C" fn(*mut c_void, *const mcpool_op_record),
    userdata: *mut c_void,
}

// SAFETY: `mcpool_config_set_operation_callback` documents that the callback runs on any
// thread that uses the client, possibly several at once, so the caller promises `userdata`
// may be used that way; mcpool never dereferences it.
unsafe impl Send for COpCallback {}
// SAFETY: as for `Send`.
unsafe impl Sync for COpCallback {}

impl COpCallback {
    fn call(&self, r: &OpRecord<'_>) {
        // A panic while building the record (a bug) is swallowed; C cannot unwind.
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let rec = mcpool_op_record::new(r);
            // SAFETY: the caller of `mcpool_config_set_operation_callback` promised a valid
            // function that does not unwind; `rec` lives for the whole call.
            unsafe { (self.cb)(self.userdata, &rec) };
        }));
    }
}

/// Sets (or, with `callback` NULL, removes) the function called after every exchange with a
/// server, and for keys refused before any server was asked (docs/tracing.md): operation, key count, server, protocol, duration, outcome,
/// bytes. It runs on the thread that made the call, after the exchange; `userdata` is passed
/// back untouched and must be safe to use from every thread that uses a client built from
/// this configuration (possibly several at once), and stay valid until every such client is
/// freed. Clients built before this call keep the callback they had. Without a callback a
/// call pays one branch.
///
/// # Safety
/// `config` is NULL or a live configuration no other thread is using; `callback` is NULL or
/// a valid function as described on `mcpool_op_callback`.
#[no_mangle]
pub unsafe extern "C" fn mcpool_config_set_operation_callback(
    config: *mut mcpool_config,
    callback: mcpool_op_callback,
    userdata: *mut c_void,
) -> mcpool_status {
    landingpad(|| {
        // SAFETY: the caller promises `config` is NULL or live and unshared.
        let cfg = unsafe { ptr::handle_mut(config, "config") }?;
        cfg.builder = match callback {
            Some(cb) => {
                let c = COpCallback { cb, userdata };
                cfg.builder.clone().on_operation(move |r| c.call(r))
            }
            None => cfg.builder.clone().no_operation_handler(),
        };
        Ok(MCPOOL_OK)
    })
}

/// # Safety
/// `record` is NULL or the record passed to the running callback.
unsafe fn op<'a>(record: *const mcpool_op_record) -> Option<&'a mcpool_op_record> {
    // SAFETY: the caller promises a non-NULL `record` is live.
    unsafe { record.as_ref() }
}

/// Writes `text`'s length to a non-NULL `out_len` and returns its pointer (`""` for none).
///
/// # Safety
/// `out_len` is NULL or valid for one write.
unsafe fn text_out(text: Option<(*const c_char, usize)>, out_len: *mut usize) -> *const c_char {
    let (p, len) = text.unwrap_or((c"".as_ptr(), 0));
    // SAFETY: the caller promises a non-NULL `out_len` is writable.
    unsafe { ptr::write(out_len, len) };
    p
}

/// The operation's name: `"get"`, `"get_multi"`, `"set"`, `"delete"`, `"incr"`, … (static,
/// NUL-terminated; its length without the NUL to `*out_len` when not NULL). `""` for NULL.
///
/// # Safety
/// `record` is NULL or the record passed to the running callback; `out_len` is NULL or valid
/// for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_name(
    record: *const mcpool_op_record,
    out_len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded from the caller's promises.
    unsafe {
        text_out(
            op(record).map(|r| (r.op.as_ptr().cast(), r.op.len() - 1)),
            out_len,
        )
    }
}

/// Keys in this exchange (0 for whole-server commands and for NULL).
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_keys(record: *const mcpool_op_record) -> usize {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(0, |r| r.keys)
}

/// Keys found (retrievals), stored (stores) or that existed (delete, touch, incr/decr).
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_hits(record: *const mcpool_op_record) -> usize {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(0, |r| r.hits)
}

/// The server's `host:port` label (NUL-terminated, valid during the callback; length to
/// `*out_len` when not NULL; for keys of a server marked dead, that server); `""` for keys
/// refused before placement (a bad key or value) and for NULL.
///
/// # Safety
/// `record` is NULL or the record passed to the running callback; `out_len` is NULL or valid
/// for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_server(
    record: *const mcpool_op_record,
    out_len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded from the caller's promises.
    unsafe {
        text_out(
            op(record).and_then(|r| r.server.as_ref().map(|t| (t.ptr(), t.len()))),
            out_len,
        )
    }
}

/// The wire protocol: `"text"`, `"meta"` or `"binary"` (static); `""` for NULL.
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_protocol(record: *const mcpool_op_record) -> *const c_char {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(c"".as_ptr(), |r| r.protocol.as_ptr().cast())
}

/// Nanoseconds from the start of the call to the end of this exchange (0 for NULL).
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_duration_ns(record: *const mcpool_op_record) -> u64 {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(0, |r| r.duration_ns)
}

/// Nanoseconds between the end of this exchange and this call of the callback (0 for NULL):
/// 0, unless the call kept the record until its other servers had answered (a call over
/// several servers). The exchange ran from `now - ended_ago - duration` to `now - ended_ago`.
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_ended_ago_ns(record: *const mcpool_op_record) -> u64 {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(0, |r| r.ended_ago_ns)
}

/// How the exchange ended; `MCPOOL_OP_OTHER` for NULL.
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_outcome_of(
    record: *const mcpool_op_record,
) -> mcpool_op_outcome {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(mcpool_op_outcome::MCPOOL_OP_OTHER, |r| r.outcome)
}

/// For `MCPOOL_OP_ERROR` and `MCPOOL_OP_FAILED_OPEN`: the error's class (as
/// `mcpool_status_class` gives it); `MCPOOL_CLASS_OK` otherwise and for NULL.
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_error_class(record: *const mcpool_op_record) -> mcpool_class {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(mcpool_class::MCPOOL_CLASS_OK, |r| r.class)
}

/// For `MCPOOL_OP_ERROR` and `MCPOOL_OP_FAILED_OPEN`: the error's message (NUL-terminated,
/// valid during the callback; length to `*out_len` when not NULL); `""` otherwise.
///
/// # Safety
/// `record` is NULL or the record passed to the running callback; `out_len` is NULL or valid
/// for one write.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_error_message(
    record: *const mcpool_op_record,
    out_len: *mut usize,
) -> *const c_char {
    // SAFETY: forwarded from the caller's promises.
    unsafe {
        text_out(
            op(record).and_then(|r| r.error.as_ref().map(|t| (t.ptr(), t.len()))),
            out_len,
        )
    }
}

/// Bytes written to the server for this exchange (0 when it was served on another caller's
/// connection, and for NULL).
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_bytes_sent(record: *const mcpool_op_record) -> u64 {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(0, |r| r.bytes_sent)
}

/// Bytes read from the server for this exchange (as for `mcpool_op_bytes_sent`).
///
/// # Safety
/// `record` is NULL or the record passed to the running callback.
#[no_mangle]
pub unsafe extern "C" fn mcpool_op_bytes_received(record: *const mcpool_op_record) -> u64 {
    // SAFETY: forwarded from the caller's promise.
    unsafe { op(record) }.map_or(0, |r| r.bytes_received)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_numbers_are_dense_and_named() {
        for (i, (m, name)) in METRICS.iter().enumerate() {
            assert_eq!(*m as usize, i);
            assert!(name.ends_with('\0') && name.len() > 1);
        }
        assert!(mcpool_metric_name(METRICS.len() as u32).is_null());
        assert_eq!(mcpool_metric_count(), METRICS.len());
    }

    #[test]
    fn the_c_names_are_the_cores_names_in_the_same_order() {
        assert_eq!(METRICS.len(), mcpool::metrics::METRICS.len());
        for (i, ((number, name), core)) in METRICS.iter().zip(&mcpool::metrics::METRICS).enumerate()
        {
            assert_eq!(*number as usize, i);
            assert_eq!(name.trim_end_matches('\0'), core.name);
        }
    }
}
