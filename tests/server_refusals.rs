//! Refusals of a live memcached that are not the server failing: `flush_all` disabled
//! (`-F`), said as the refusal it is on every protocol, and a connection refused beyond the
//! server's connection limit (`-c`), which fails the call but never marks the server dead or
//! moves its keys: the server is alive, serving its other clients, who would keep reading the
//! old values there.

mod common;

use common::{unique, Memcached};
use mcpool::error::Class;
use mcpool::{Client, Distribution, Error, FailoverPolicy, Protocol};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

const PROTOCOLS: [Protocol; 3] = [Protocol::Text, Protocol::Meta, Protocol::Binary];

/// `flush_all` of a server started with `-F` is refused as a client error on every protocol:
/// binary's status 0x20 was read as a demand for SASL credentials of a server that has no
/// SASL (tester finding servererrors 2).
#[test]
fn a_disabled_flush_is_a_refusal_on_every_protocol() {
    let mc = Memcached::start(&["-F"]);
    for p in PROTOCOLS {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .build()
            .unwrap();
        c.set("k", b"v", 0).unwrap();
        let e = c.flush_all(None).expect_err("refused");
        assert!(
            matches!(e, Error::Client { .. }) && e.class() == Class::ClientError,
            "{p}: {e:?}"
        );
        assert!(e.to_string().contains("flush_all not allowed"), "{p}: {e}");
        assert!(c.get("k").unwrap().is_some(), "{p}: nothing flushed");
    }
}

/// Opens connections to `addr` until memcached refuses one as beyond its connection limit
/// (at most 64): the ones it kept, each checked with a `version` round trip.
fn fill(addr: &str) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..64 {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"version\r\n").unwrap();
        let mut line = String::new();
        let _ = BufReader::new(&s).read_line(&mut line);
        if line.starts_with("VERSION") {
            held.push(s);
        } else {
            assert!(
                line.contains("Too many open connections") || line.is_empty(),
                "{line:?}"
            );
            return held;
        }
    }
    panic!("memcached -c took 64 connections");
}

/// A call refused by a server at its connection limit fails with an error that says so,
/// and never marks the server dead or moves the key under `rehash`: a `set` used to be
/// reported stored on another server, and the old value read back once the full server
/// "returned" (tester finding connlife 1).
#[test]
fn a_full_server_is_not_marked_dead_nor_its_keys_moved() {
    let full = Memcached::start(&["-c", "16", "-t", "1"]);
    let other = Memcached::start(&[]);
    let prefix = unique("full");
    let c = Client::builder()
        .servers([full.addr(), other.addr()])
        .distribution(Distribution::CacheMemcached)
        .failover(FailoverPolicy::Rehash)
        .failure_limit(1)
        .key_prefix(prefix.clone())
        .build()
        .unwrap();
    // A key that lives on the full server.
    let key = (0..1000)
        .map(|i| format!("k{i}"))
        .find(|k| c.server_for(k).ok() == Some(0))
        .expect("a key on the first server");
    let held = fill(&full.addr());
    for _ in 0..5 {
        let e = c.set(&key, b"new", 0).expect_err("no connection to be had");
        assert!(e.is_connection_limit(), "{e:?}");
        assert!(!e.is_server_failure(), "{e:?}");
    }
    let on_other = Client::builder()
        .server(&other.addr())
        .key_prefix(prefix)
        .build()
        .unwrap();
    assert_eq!(on_other.get(&key).unwrap(), None, "the key did not move");
    drop(held);
    // Slots free: served again at once (never marked dead, nothing to wait for).
    let stored = (0..100).find_map(|_| {
        c.set(&key, b"new", 0).ok().or_else(|| {
            std::thread::sleep(Duration::from_millis(50));
            None
        })
    });
    assert!(stored.is_some(), "stored once the server had room");
    assert_eq!(c.get(&key).unwrap(), Some(b"new".to_vec()));
}

/// The client side's TCP connections to `port` in /proc/net/tcp (and tcp6): each one's
/// timer field (`tr`: 2 is the keepalive timer) and its expiry in jiffies.
fn client_sockets_to(port: u16) -> Vec<(u8, u64)> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local rem st queues tr:when ...; established (01), to the port
            let rem_port = f.get(2).and_then(|r| r.rsplit(':').next());
            if f.get(3) != Some(&"01") || rem_port != Some(&format!("{port:04X}")[..]) {
                continue;
            }
            if let Some((tr, when)) = f.get(5).and_then(|t| t.split_once(':')) {
                found.push((
                    u8::from_str_radix(tr, 16).unwrap_or(0),
                    u64::from_str_radix(when, 16).unwrap_or(0),
                ));
            }
        }
    }
    found
}

/// The client side's connections to `port` whose keepalive timer runs (`tr` 2), with its
/// expiry in jiffies.
fn keepalive_timers(port: u16) -> Vec<(u8, u64)> {
    client_sockets_to(port)
        .into_iter()
        .filter(|(tr, _)| *tr == 2)
        .collect()
}

/// `tcp_keepalive` (libmemcached's and pylibmc's behaviour) turns SO_KEEPALIVE on, the
/// first probe after `tcp_keepidle`: the kernel's keepalive timer runs on the idle pooled
/// connection; without it no timer runs (tester finding connlife 4: no surface had it).
#[test]
fn tcp_keepalive_arms_the_keepalive_timer() {
    let mc = Memcached::start(&[]);
    let port: u16 = mc.addr().rsplit(':').next().unwrap().parse().unwrap();
    let plain = Client::builder().server(&mc.addr()).build().unwrap();
    plain.set("k", b"v", 0).unwrap();
    let sockets = client_sockets_to(port);
    assert!(!sockets.is_empty(), "the pooled connection is listed");
    assert!(sockets.iter().all(|(tr, _)| *tr != 2), "{sockets:?}");
    drop(plain);
    let c = Client::builder()
        .server(&mc.addr())
        .set("tcp_keepalive", "true")
        .unwrap()
        .set("tcp_keepidle", "30s")
        .unwrap()
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    let armed = keepalive_timers(port);
    assert_eq!(
        armed.len(),
        1,
        "one keepalive timer: {:?}",
        client_sockets_to(port)
    );
    // due within the 30 s idle time (jiffies: at most 1000 a second)
    assert!(armed[0].1 <= 30 * 1000, "{armed:?}");
    drop(c);
    // libmemcached's --TCP-KEEPIDLE is a flag setting the idle time to 1 s (tester finding
    // retest27 6: it changed nothing, the system's two hours stood)
    let c = Client::builder()
        .set(
            "libmemcached_config",
            &format!("--SERVER={} --TCP-KEEPALIVE --TCP-KEEPIDLE", mc.addr()),
        )
        .unwrap()
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    let armed = keepalive_timers(port);
    assert!(
        armed.len() == 1 && armed[0].1 <= 1000,
        "a keepalive timer due within a second: {armed:?}"
    );
}

/// `tcp_keepidle` is whole seconds from 1 s to 32767 s, the kernel's; anything else is
/// refused, saying so, where it was rounded up or capped unsaid, and a bare number (the
/// option table's milliseconds) was 60 ms for a libmemcached user's `60` (tester finding
/// retest27 4).
#[test]
fn tcp_keepidle_is_whole_seconds_in_the_kernels_range() {
    for bad in ["60", "1500ms", "0.5s", "32768s", "40000s"] {
        let e = Client::builder()
            .server("127.0.0.1:1")
            .set("tcp_keepalive", "true")
            .unwrap()
            .set("tcp_keepidle", bad)
            .unwrap()
            .build()
            .expect_err(bad)
            .to_string();
        assert!(
            e.contains("tcp_keepidle") && e.contains("whole seconds from 1s to 32767s"),
            "{bad}: {e}"
        );
    }
    for good in ["1s", "60s", "32767s", "0", "1000ms"] {
        Client::builder()
            .server("127.0.0.1:1")
            .set("tcp_keepidle", good)
            .unwrap()
            .build()
            .unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}

/// Under proxy-pool a proxy at its connection limit is not marked dead, but the call goes on
/// to the next proxy, as after a refused connect: the refused connection's request was never
/// read (tester finding retest26 4: the call failed).
#[test]
fn proxy_pool_goes_on_past_a_full_proxy() {
    let full = Memcached::start(&["-c", "16", "-t", "1"]);
    let next = Memcached::start(&[]);
    let c = Client::builder()
        .servers([full.addr(), next.addr()])
        .distribution(Distribution::ProxyPool)
        .key_prefix(unique("pp-full"))
        .build()
        .unwrap();
    let held = fill(&full.addr());
    for i in 0..3 {
        let key = format!("k{i}");
        c.set(&key, b"v", 0).expect("sent to the next proxy");
        assert_eq!(c.get(&key).unwrap(), Some(b"v".to_vec()));
    }
    assert!(c.server_states()[0].alive, "{:?}", c.server_states());
    drop(held);
}
