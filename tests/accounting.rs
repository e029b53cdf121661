//! What a call's caller got, its metrics and its per-operation record agree (tester-obs
//! findings 8, 11, 12, 13, 21), against real memcached processes and a deliberately silent
//! fake server (testkit's `silent_server`, named as such).
mod common;

use common::{silent_server, unique, Memcached};
use mcpool::error::Class;
use mcpool::trace::{Op, OpOutcome};
use mcpool::{Client, ClientBuilder, Error, Lease, Protocol, StoreOutcome, ValueFormat};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A record's op, keys, hits, outcome and error, owned.
type Rec = (Op, usize, usize, OpOutcome, Option<String>);
type Log = Arc<Mutex<Vec<Rec>>>;

fn traced(b: ClientBuilder) -> (Client, Log) {
    let log: Log = Arc::default();
    let l = log.clone();
    let c = b
        .on_operation(move |r| {
            let e = r.error.map(|e| e.to_string());
            l.lock().unwrap().push((r.op, r.keys, r.hits, r.outcome, e));
        })
        .build()
        .unwrap();
    (c, log)
}

fn take(log: &Log) -> Vec<Rec> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// Stores `data` under `flags` with a plain `set` on a connection of its own: a value as
/// another client (or a corrupting one) left it.
fn raw_set(addr: &str, key: &str, flags: u32, data: &[u8]) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "set {key} {flags} 0 {}\r\n", data.len()).unwrap();
    s.write_all(data).unwrap();
    s.write_all(b"\r\n").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    assert_eq!(line, "STORED\r\n");
}

/// Tester finding obs #11/#12: a value that did not decompress (or whose flags mean nothing
/// in the value format) failed the call with `Error::Decompress` / `Error::ValueFormat`, yet
/// counted as a hit, `protocol_errors` stayed 0, and the get_multi record said `hit`
/// (hits 2, no error). Now such a key counts in `protocol_errors` (neither hit nor miss),
/// and every record of it says `error` with that error.
#[test]
fn values_that_do_not_decode_are_protocol_errors_not_hits() {
    let mc = Memcached::start(&[]);
    let prefix = unique("dec");
    for protocol in [Protocol::Text, Protocol::Binary, Protocol::Meta] {
        let p = format!("{prefix}{protocol:?}");
        // Flag 2 is Cache::Memcached::Fast's "compressed": garbage there does not inflate.
        raw_set(&mc.addr(), &format!("{p}dz"), 2, b"this is not zlib");
        raw_set(&mc.addr(), &format!("{p}ok"), 0, b"fine");
        let (c, log) = traced(
            Client::builder()
                .server(&mc.addr())
                .protocol(protocol)
                .key_prefix(p.clone())
                .value_format(ValueFormat::CacheMemcachedFast),
        );
        assert!(matches!(c.get("dz"), Err(Error::Decompress(_))));
        assert_eq!(c.get("ok").unwrap().unwrap(), b"fine");
        assert_eq!(c.get("nope").unwrap(), None);
        let recs = take(&log);
        assert_eq!(recs.len(), 3, "{recs:?}");
        assert_eq!(recs[0].2, 0, "{recs:?}");
        assert_eq!(recs[0].3, OpOutcome::Error(Class::ServerError), "{recs:?}");
        let m = &c.metrics()[0];
        assert_eq!(
            (m.hits, m.misses, m.protocol_errors),
            (1, 1, 1),
            "{protocol:?} {m:?}"
        );

        let got = c.get_multi(&["dz", "ok", "nope"]);
        assert!(matches!(got[0], Err(Error::Decompress(_))), "{got:?}");
        assert_eq!(got[1].as_ref().unwrap().as_ref().unwrap().value, b"fine");
        assert!(matches!(got[2], Ok(None)), "{got:?}");
        let recs = take(&log);
        assert_eq!(recs.len(), 1, "{recs:?}");
        let (op, keys, hits, outcome, error) = &recs[0];
        assert_eq!((*op, *keys, *hits), (Op::GetMulti, 3, 1), "{recs:?}");
        assert_eq!(*outcome, OpOutcome::Error(Class::ServerError), "{recs:?}");
        let error = error.as_deref().unwrap_or_default();
        assert!(error.contains("dz"), "{error}");
        let m = &c.metrics()[0];
        assert_eq!(
            (m.hits, m.misses, m.protocol_errors),
            (2, 2, 2),
            "{protocol:?} {m:?}"
        );

        // Flags that mean nothing in the mcpool value format (2 is not one of its bits).
        let (plain, log) = traced(
            Client::builder()
                .server(&mc.addr())
                .protocol(protocol)
                .key_prefix(p.clone()),
        );
        assert!(matches!(plain.get("dz"), Err(Error::ValueFormat(_))));
        let got = plain.get_multi(&["dz", "nope"]);
        assert!(matches!(got[0], Err(Error::ValueFormat(_))), "{got:?}");
        let recs = take(&log);
        assert!(
            recs.iter()
                .all(|r| matches!(r.3, OpOutcome::Error(_)) && r.2 == 0 && r.4.is_some()),
            "{recs:?}"
        );
        let m = &plain.metrics()[0];
        assert_eq!((m.hits, m.misses, m.protocol_errors), (0, 1, 2), "{m:?}");
    }
}

/// Tester finding obs #21: `get_lease` moved neither `hits` nor `misses`; its value was
/// decoded after its record was made (a value that did not decode: a `hit` record for a
/// call that failed). Now a lease read counts as the record says (a value for the caller:
/// hit; a win without one, or a placeholder: miss) and a value that does not decode is a
/// protocol error with an `error` record.
#[test]
fn lease_reads_count_hits_and_misses() {
    let mc = Memcached::start(&[]);
    let prefix = unique("lease");
    let (c, log) = traced(
        Client::builder()
            .server(&mc.addr())
            .protocol(Protocol::Meta)
            .key_prefix(prefix.clone())
            .value_format(ValueFormat::CacheMemcachedFast),
    );
    // A miss: this caller wins the recompute.
    assert!(matches!(
        c.get_lease("k", 30, None).unwrap(),
        Lease::Recompute { stale: None }
    ));
    assert_eq!(c.set("k", b"v", 0).unwrap(), StoreOutcome::Stored);
    match c.get_lease("k", 30, None).unwrap() {
        Lease::Hit(item) => assert_eq!(item.value, b"v"),
        other => panic!("{other:?}"),
    }
    raw_set(&mc.addr(), &format!("{prefix}dz"), 2, b"this is not zlib");
    assert!(matches!(
        c.get_lease("dz", 30, None),
        Err(Error::Decompress(_))
    ));
    let m = &c.metrics()[0];
    assert_eq!((m.hits, m.misses, m.protocol_errors), (1, 1, 1), "{m:?}");
    let recs: Vec<_> = take(&log)
        .into_iter()
        .filter(|r| r.0 == Op::Lease)
        .map(|r| (r.2, r.3))
        .collect();
    assert_eq!(
        recs,
        [
            (0, OpOutcome::Miss),
            (1, OpOutcome::Hit),
            (0, OpOutcome::Error(Class::ServerError))
        ]
    );
}

/// Tester finding obs #21: with `fail_open`, a `get_lease` whose server did not answer was
/// counted in `fail_open_not_stored` (a failed write) instead of `fail_open_misses`.
#[test]
fn a_lease_read_that_fails_open_is_a_miss() {
    let silent = silent_server();
    let (c, log) = traced(
        Client::builder()
            .server(&silent)
            .protocol(Protocol::Meta)
            .min_idle(0)
            .io_timeout(Duration::from_millis(200))
            .failure_limit(1000)
            .fail_open(true),
    );
    assert!(matches!(
        c.get_lease("k", 10, Some(5)).unwrap(),
        Lease::Recompute { stale: None }
    ));
    let m = &c.metrics()[0];
    assert_eq!(
        (m.fail_open_misses, m.fail_open_not_stored),
        (1, 0),
        "{m:?}"
    );
    let recs = take(&log);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0].0, Op::Lease);
    assert_eq!(recs[0].3, OpOutcome::FailedOpen(Class::Timeout), "{recs:?}");
}

/// Tester finding obs #13: `idle_timeout` and `max_lifetime` were enforced only by r2d2's
/// reaper, every 30 s: a connection idle (or old) 6 to 12 times the limit was reused. Now a
/// checkout does not take one past either limit. The waits are the limits themselves (the
/// behaviour under test), not synchronisation.
#[test]
fn connections_past_idle_timeout_or_max_lifetime_are_not_reused() {
    let mc = Memcached::start(&[]);
    let connections = |c: &Client| c.metrics()[0].connects;
    // idle_timeout 100 ms: used again at once, the connection is kept; after 300 ms idle, not.
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("idle"))
        .idle_timeout(Some(Duration::from_millis(100)))
        .build()
        .unwrap();
    c.get("k").unwrap();
    c.get("k").unwrap();
    assert_eq!(connections(&c), 1);
    std::thread::sleep(Duration::from_millis(300));
    c.get("k").unwrap();
    assert_eq!(
        connections(&c),
        2,
        "a connection idle 3x idle_timeout was reused"
    );
    assert_eq!(c.pool_states()[0].0, 1, "the old one is closed");

    // max_lifetime 250 ms, used every 100 ms: never idle long, but replaced once too old.
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("life"))
        .idle_timeout(None)
        .max_lifetime(Some(Duration::from_millis(250)))
        .build()
        .unwrap();
    c.get("k").unwrap();
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(100));
        c.get("k").unwrap();
    }
    assert!(
        connections(&c) >= 2,
        "a connection 500 ms old (max_lifetime 250 ms) was reused: {:?}",
        c.metrics()[0]
    );

    // Without limits the one connection serves every call.
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("keep"))
        .idle_timeout(None)
        .build()
        .unwrap();
    c.get("k").unwrap();
    std::thread::sleep(Duration::from_millis(150));
    c.get("k").unwrap();
    assert_eq!(connections(&c), 1);
}

/// Tester finding obs #8: a panicking `on_operation` handler unwound out of the caller's
/// `set` after the value was stored. Now the panic is caught and counted
/// (`Client::operation_handler_panics`); the call returns its result.
#[test]
fn a_panicking_operation_handler_does_not_reach_the_caller() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("panic"))
        .on_operation(|r| {
            if r.op == Op::Set {
                panic!("handler panics on set (test)");
            }
        })
        .build()
        .unwrap();
    for _ in 0..3 {
        assert_eq!(c.set("k", b"v", 0).unwrap(), StoreOutcome::Stored);
    }
    assert_eq!(c.get("k").unwrap().unwrap(), b"v");
    assert_eq!(c.operation_handler_panics(), 3);
    let m = &c.metrics()[0];
    assert_eq!(m.connects, 1, "the connection is reused: {m:?}");
}

/// An `on_event` handler that panics (a server marked dead) does not reach the caller either:
/// the call returns its own error, and the next one its own.
#[test]
fn a_panicking_event_handler_does_not_reach_the_caller() {
    let dead = common::refusing_port();
    let events = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = events.clone();
    let c = Client::builder()
        .server(&dead.addr())
        .failure_limit(1)
        .on_event(move |_| {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            panic!("event handler panics (test)");
        })
        .build()
        .unwrap();
    assert!(
        c.get("k").is_err(),
        "the connect fails: an error, not a panic"
    );
    assert!(c.get("k").is_err(), "dead now: an error again");
    assert!(
        events.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "the handler ran"
    );
}

/// Tester finding topology 1: a batch item answered with an error of its own (memcached's
/// `SERVER_ERROR object too large for cache` for a set, `CLIENT_ERROR` for an incr of a value
/// that is no number) failed that item, yet the batch's record said `not_stored` / `miss`
/// with no error and `server_errors` stayed where it was, where a single call's record says
/// `error` and counts it. Now the server's record is `error` with the first such item's
/// error, and each such item counts in `server_errors`, on every protocol.
#[test]
fn a_batch_item_answered_with_an_error_of_its_own_is_recorded_and_counted() {
    let mc = Memcached::start(&["-m", "64"]);
    let prefix = unique("itemerr");
    let big = common::noise(1_048_540); // under the client's limit, over memcached's
    for protocol in [Protocol::Text, Protocol::Binary, Protocol::Meta] {
        let (c, log) = traced(
            Client::builder()
                .server(&mc.addr())
                .protocol(protocol)
                .key_prefix(format!("{prefix}{protocol:?}"))
                .compression(false),
        );
        let before = c.metrics()[0].server_errors;
        let r = c.set_multi(&[("a", &b"1"[..]), ("k", &big), ("j", &big)], 0);
        assert!(
            r[0].is_ok() && r[1].is_err() && r[2].is_err(),
            "{protocol:?} {r:?}"
        );
        let recs = take(&log);
        assert_eq!(recs.len(), 1, "{protocol:?} {recs:?}");
        assert_eq!(recs[0].0, Op::SetMulti, "{recs:?}");
        assert_eq!(
            recs[0].3,
            OpOutcome::Error(Class::ClientError),
            "{protocol:?} {recs:?}"
        );
        assert_eq!(
            recs[0].4.as_deref(),
            Some(r[1].as_ref().unwrap_err().to_string().as_str()),
            "{protocol:?}: the first such item's error"
        );
        assert_eq!(c.metrics()[0].server_errors, before + 2, "{protocol:?}");

        assert!(c.set("text", b"not a number", 0).unwrap().is_stored());
        assert!(c.set("n", b"5", 0).unwrap().is_stored());
        take(&log);
        let before = c.metrics()[0].server_errors;
        let r = c.arith_multi(true, &[("n", 1), ("text", 1)]);
        assert_eq!(r[0].as_ref().ok(), Some(&Some(6)), "{protocol:?} {r:?}");
        assert!(r[1].is_err(), "{protocol:?} {r:?}");
        let recs = take(&log);
        assert_eq!(recs.len(), 1, "{protocol:?} {recs:?}");
        assert!(
            matches!(recs[0].3, OpOutcome::Error(_)),
            "{protocol:?} {recs:?}"
        );
        assert_eq!(c.metrics()[0].server_errors, before + 1, "{protocol:?}");
        // A batch whose items were all answered as usual stays as it was.
        let r = c.set_multi(&[("a", &b"1"[..]), ("b", &b"2"[..])], 0);
        assert!(r.iter().all(|r| r.is_ok()));
        assert_eq!(take(&log)[0].3, OpOutcome::Stored, "{protocol:?}");
    }
}
