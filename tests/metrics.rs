//! Per-server metrics and state-change events.
mod common;

use common::{unique, wait_until, Memcached};
use mcpool::{Client, Event};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// `events_when_a_server_dies_and_returns` restarts its memcached on the port it had; while
/// it is down another test of this file could be given that free port and then lose its
/// server to the restart. The tests of this file run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn counters_follow_the_traffic() {
    let _serial = one_at_a_time();
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("m"))
        .build()
        .unwrap();
    c.set("a", b"1", 0).unwrap();
    c.set("b", b"2", 0).unwrap();
    assert!(c.get("a").unwrap().is_some());
    assert!(c.get("zz").unwrap().is_none());
    let _ = c.get_multi(&["a", "b", "x", "y"]);
    let _ = c.incr("a", 1);
    let _ = c.incr("not-a-number-key", 1);
    c.set("t", b"text", 0).unwrap();
    assert!(c.incr("t", 1).is_err());
    let m = &c.metrics()[0];
    assert_eq!(m.server, mc.addr());
    assert_eq!(m.hits, 1 + 2, "{m:?}");
    assert_eq!(m.misses, 1 + 2, "{m:?}");
    assert_eq!(m.operations, 9, "{m:?}");
    assert_eq!(m.server_errors, 1, "{m:?}");
    assert!(m.connects >= 1, "{m:?}");
    assert_eq!((m.timeouts, m.io_errors, m.protocol_errors), (0, 0, 0));
}

#[test]
fn pool_waits_are_counted() {
    let _serial = one_at_a_time();
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .max_size(1)
        .key_prefix(unique("w"))
        .build()
        .unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    c.set(format!("{t}-{i}"), b"v", 0).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let m = &c.metrics()[0];
    assert!(
        m.pool_waits > 0,
        "8 threads on one connection must wait: {m:?}"
    );
    assert!(m.pool_wait_time > Duration::ZERO);
    assert_eq!(m.pool_timeouts, 0);
}

/// Tester finding (s4c 06): a checkout that waited for the pool to make its slot (for a new
/// connection) was left out of `pool_waits` and `pool_wait_time` (and one that gave up
/// counted no time): only waits in line for a busy connection were counted. A fresh client's
/// first call waits for its pool's first slot; every wait of a checkout counts, once, with
/// its time.
#[test]
fn a_wait_for_a_new_connections_slot_is_counted_with_its_time() {
    let _serial = one_at_a_time();
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("n"))
        .build()
        .unwrap();
    let t = std::time::Instant::now();
    c.set("a", b"1", 0).unwrap();
    let took = t.elapsed();
    let m = &c.metrics()[0];
    assert_eq!((m.pool_waits, m.pool_timeouts), (1, 0), "{m:?}");
    assert!(
        m.pool_wait_time > Duration::ZERO && m.pool_wait_time <= took,
        "{m:?} (the call took {took:?})"
    );
    // The next call finds the connection idle: no wait.
    c.set("b", b"2", 0).unwrap();
    assert_eq!(c.metrics()[0].pool_waits, 1);
}

#[test]
fn events_when_a_server_dies_and_returns() {
    let _serial = one_at_a_time();
    let mut mc = Memcached::start(&[]);
    let port = mc.port;
    let events: Arc<Mutex<Vec<Event>>> = Arc::default();
    let sink = events.clone();
    let c = Client::builder()
        .server(&mc.addr())
        .failure_limit(2)
        .retry_timeout(Duration::from_millis(50))
        .retry_timeout_max(Duration::from_millis(50))
        .on_event(move |e| sink.lock().unwrap().push(e.clone()))
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    mc.kill();
    for _ in 0..10 {
        if !c.server_states()[0].alive {
            break;
        }
        let _ = c.get("k");
    }
    assert!(!c.server_states()[0].alive, "two failures mark it dead");
    let _mc2 = Memcached::start_on(port, &[]);
    wait_until("the server to come back", Duration::from_secs(10), || {
        c.get("k").is_ok()
    });
    let events = events.lock().unwrap().clone();
    let server = format!("127.0.0.1:{port}");
    assert!(
        matches!(&events[..], [Event::ServerDown { server: s1, failures: 2, .. }, .., Event::ServerUp { server: s2 }] if *s1 == server && *s2 == server),
        "{events:?}"
    );
    let m = &c.metrics()[0];
    assert_eq!((m.ejections, m.returns), (1, 1), "{m:?}");
    assert!(m.connect_errors >= 1 || m.io_errors >= 1, "{m:?}");
}

/// A refused connect is one connect error, not also an I/O error (tester finding topology 4:
/// 3 refused gets counted connect_errors 3 and io_errors 3, doubling a sum of the errors).
#[test]
fn a_refused_connect_counts_once_as_a_connect_error() {
    let down = common::refusing_port();
    let c = Client::builder()
        .server(&down.addr())
        .failure_limit(100)
        .build()
        .unwrap();
    for _ in 0..3 {
        assert!(c.get("k").is_err());
    }
    let m = &c.metrics()[0];
    assert_eq!((m.connect_errors, m.io_errors), (3, 0), "{m:?}");
}

/// `curr_connections` of a memcached, read through `probe` (one connection of its own, kept
/// open, so that the count moves only with the client under test).
fn curr_connections(probe: &Client) -> u64 {
    let stats = probe.stats(None).remove(0).1.unwrap();
    stats
        .iter()
        .find(|(k, _)| k == "curr_connections")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap()
}

/// Tester finding (jcc 04): `pool_open`/`pool_idle` counted r2d2's slots, and a slot may hold
/// no connection: against a port that refuses every connect they said 4 open, 4 idle with
/// connects_total 0. They count connections actually open now.
#[test]
fn pool_gauges_count_no_connection_to_a_dead_port() {
    let _serial = one_at_a_time();
    let dead = common::refusing_port();
    let c = Client::builder()
        .server(&dead.addr())
        .max_size(4)
        .min_idle(2)
        .connect_timeout(Duration::from_millis(200))
        .failure_limit(1000)
        .build()
        .unwrap();
    for i in 0..5 {
        assert!(c.set(format!("k{i}"), b"v", 0).is_err());
    }
    let m = &c.metrics()[0];
    assert_eq!(m.connects, 0, "{m:?}");
    assert_eq!(c.pool_states()[0], (0, 0));
    let (metrics, pools) = c.metrics_and_pool_states();
    assert_eq!((metrics.len(), pools[0]), (1, (0, 0)));
    let text = mcpool::prometheus::render(&metrics, &pools);
    assert!(
        text.contains(&format!(
            "mcpool_pool_open{{server=\"{}\"}} 0\n",
            dead.addr()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "mcpool_pool_idle{{server=\"{}\"}} 0\n",
            dead.addr()
        )),
        "{text}"
    );
}

/// Against a live memcached the gauges are the connections it sees from the client (its
/// `curr_connections` less the count without the client), also after one is dropped on an
/// error (its slot goes back empty).
#[test]
fn pool_gauges_match_the_connections_memcached_sees() {
    let _serial = one_at_a_time();
    let mc = Memcached::start(&[]);
    let probe = Client::builder()
        .server(&mc.addr())
        .min_idle(0)
        .max_size(1)
        .build()
        .unwrap();
    let base = curr_connections(&probe);
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("g"))
        .max_size(3)
        .min_idle(3)
        .io_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    wait_until("three idle connections", Duration::from_secs(10), || {
        c.pool_states()[0] == (3, 3)
    });
    wait_until("memcached sees 3 more", Duration::from_secs(10), || {
        curr_connections(&probe) == base + 3
    });
    // A read that times out (the server frozen): the connection that saw the error is
    // dropped, its slot returns empty; r2d2 still has its 3 slots (max_size 3: none added).
    // (Not an incr of a non-number: memcached's one-line CLIENT_ERROR leaves the stream in
    // step, so that connection is kept.)
    c.set("t", b"text", 0).unwrap();
    assert!(matches!(c.incr("t", 1), Err(mcpool::Error::Client { .. })));
    assert_eq!(
        c.pool_states()[0],
        (3, 3),
        "kept after an in-step CLIENT_ERROR"
    );
    mc.freeze();
    let timed_out = c.get("t");
    mc.thaw();
    assert!(
        matches!(timed_out, Err(mcpool::Error::IoTimeout { .. })),
        "{timed_out:?}"
    );
    let (open, idle) = c.pool_states()[0];
    assert_eq!(open, idle, "none checked out");
    wait_until(
        "memcached sees the gauge's count",
        Duration::from_secs(10),
        || curr_connections(&probe) == base + u64::from(c.pool_states()[0].0),
    );
    assert_eq!(c.pool_states()[0], (2, 2), "the dropped one is not counted");
    assert_eq!(c.metrics()[0].connects, 3);
}
