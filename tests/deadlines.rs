//! Deadlines (issue 15, items 7, 8 and 11): every read and write waits at most
//! `min(io_timeout, time left)` by the clock, handed-over work ends by its own caller's
//! deadline, and an `operation_timeout` of zero means none. The slow link is a deliberately
//! slow proxy of the test's own (`common::proxy`, dripping replies) in front of a real
//! memcached.
mod common;

use common::proxy::{self, Faults};
use common::{silent_server, unique, Memcached};
use mcpool::{Client, Error};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A proxy to `mc` that forwards replies `bytes` at a time, one piece every `every`.
fn slow_link(mc: &Memcached, bytes: usize, every: Duration) -> proxy::Proxy {
    proxy::start(
        &mc.addr(),
        Faults {
            drip_bytes: bytes,
            drip_every: every,
            ..Faults::default()
        },
    )
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| b'a' + (i % 26) as u8).collect()
}

/// Item 7: a reply dripped in about 20 pieces over about 2 s, each piece well within the 1 s
/// I/O timeout, is read whole under a 5 s operation timeout (it failed after 1.2 s: every
/// read was charged a full I/O timeout); so is a 500 kB value that needs about 1.6 s.
#[test]
fn a_reply_dripped_over_two_seconds_within_the_operation_timeout_succeeds() {
    let mc = Memcached::start(&[]);
    let prefix = unique("drip");
    let direct = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.clone())
        .compression(false)
        .build()
        .unwrap();
    let small = pattern(1_900);
    let large = pattern(500_000);
    direct.set("small", &small, 0).unwrap();
    direct.set("large", &large, 0).unwrap();
    let through = |link: &proxy::Proxy| {
        Client::builder()
            .server(&link.addr)
            .key_prefix(prefix.clone())
            .compression(false)
            .io_timeout(Duration::from_secs(1))
            .operation_timeout(Some(Duration::from_secs(5)))
            .failure_limit(1)
            .build()
            .unwrap()
    };

    // About 1,930 bytes of reply, 100 bytes every 100 ms: 20 pieces, about 2 s.
    let link = slow_link(&mc, 100, Duration::from_millis(100));
    let c = through(&link);
    let start = Instant::now();
    let got = c.get("small");
    let took = start.elapsed();
    assert_eq!(got.unwrap().as_deref(), Some(&small[..]), "after {took:?}");
    assert!(
        took >= Duration::from_millis(1_800),
        "not dripped: {took:?}"
    );
    assert!(took < Duration::from_millis(4_500), "{took:?}");
    let st = &c.server_states()[0];
    assert!(st.alive && st.failures == 0, "{st:?}");

    // 500 kB, 16 KiB every 50 ms: 31 pieces, about 1.6 s.
    let link = slow_link(&mc, 16 * 1024, Duration::from_millis(50));
    let c = through(&link);
    let start = Instant::now();
    let got = c.get("large");
    let took = start.elapsed();
    assert!(
        got.as_ref().is_ok_and(|v| v.as_deref() == Some(&large[..])),
        "after {took:?}: {:?}",
        got.map(|v| v.map(|v| v.len()))
    );
    assert!(
        took >= Duration::from_millis(1_400),
        "not dripped: {took:?}"
    );
    let st = &c.server_states()[0];
    assert!(st.alive && st.failures == 0, "{st:?}");
}

/// Item 7, the other side: the same dripped reply under an operation timeout shorter than
/// it needs ends with a timeout at the operation deadline, not before and not long after.
#[test]
fn a_dripped_reply_longer_than_the_operation_timeout_ends_at_its_deadline() {
    let mc = Memcached::start(&[]);
    let prefix = unique("late");
    let value = pattern(1_900);
    Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.clone())
        .build()
        .unwrap()
        .set("k", &value, 0)
        .unwrap();
    let link = slow_link(&mc, 100, Duration::from_millis(100));
    let c = Client::builder()
        .server(&link.addr)
        .key_prefix(prefix)
        .io_timeout(Duration::from_secs(1))
        .operation_timeout(Some(Duration::from_millis(1_500)))
        .build()
        .unwrap();
    let start = Instant::now();
    let got = c.get("k");
    let took = start.elapsed();
    assert!(matches!(got, Err(Error::IoTimeout { .. })), "{got:?}");
    assert!(
        took >= Duration::from_millis(1_400) && took < Duration::from_millis(2_500),
        "{took:?}"
    );
}

/// Item 8: `threads` callers on one connection through a slow link, reading and setting
/// values that are handed over to whichever caller holds the connection. With an operation
/// timeout of 2 s, every call returns within 2 s and a margin (it took 4.4 s with 8 threads
/// and 15.3 s with 21: handed-over work had no deadline, and the caller serving it was held
/// until it was done), and every value read is one its own caller wrote.
fn handed_over_calls_end_by_their_own_deadline(threads: usize) {
    const BOUND: Duration = Duration::from_millis(3_500);
    const RUN: Duration = Duration::from_secs(5);
    let mc = Memcached::start(&[]);
    let prefix = unique("handover");
    let value = |t: usize, i: usize| {
        let mut v = format!("t{t}:{i}:").into_bytes();
        v.resize(12 * 1024, b'a' + (t % 26) as u8);
        v
    };
    let direct = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.clone())
        .build()
        .unwrap();
    for t in 0..threads {
        direct.set(format!("k{t}"), value(t, 0), 0).unwrap();
    }
    // 50 kB/s: a 12 KiB reply takes about 240 ms.
    let link = slow_link(&mc, 2_000, Duration::from_millis(40));
    let c = Client::builder()
        .server(&link.addr)
        .key_prefix(prefix)
        .compression(false)
        .max_size(1)
        .io_timeout(Duration::from_secs(1))
        .operation_timeout(Some(Duration::from_secs(2)))
        .failure_limit(1_000_000)
        .build()
        .unwrap();
    let (ok, timeouts) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let slowest = Arc::new(Mutex::new(Duration::ZERO));
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let (c, ok, timeouts, slowest) =
                (c.clone(), ok.clone(), timeouts.clone(), slowest.clone());
            std::thread::spawn(move || {
                let key = format!("k{t}");
                let mut written: HashSet<Vec<u8>> = HashSet::from([value(t, 0)]);
                for i in 1..1_000 {
                    if started.elapsed() > RUN {
                        break;
                    }
                    let start = Instant::now();
                    let outcome = if i % 2 == 0 {
                        let v = value(t, i);
                        // A set that times out may or may not have been stored.
                        written.insert(v.clone());
                        c.set(&key, &v, 0).map(|_| ())
                    } else {
                        c.get(&key).map(|got| match got {
                            Some(v) => assert!(
                                written.contains(&v),
                                "thread {t} read a value it never wrote: {:?}",
                                String::from_utf8_lossy(&v[..v.len().min(24)])
                            ),
                            None => panic!("thread {t}: its key is missing"),
                        })
                    };
                    let took = start.elapsed();
                    {
                        let mut s = slowest.lock().unwrap();
                        *s = (*s).max(took);
                    }
                    assert!(
                        took < BOUND,
                        "thread {t}: a call took {took:?}: {outcome:?}"
                    );
                    match outcome {
                        Ok(()) => ok.fetch_add(1, Ordering::Relaxed),
                        // (a connection closed by an earlier timeout is opened again by the
                        // next call, whose own deadline may end that connect too)
                        Err(
                            Error::IoTimeout { .. }
                            | Error::PoolTimeout { .. }
                            | Error::ConnectTimeout {
                                operation_timeout: true,
                                ..
                            },
                        ) => timeouts.fetch_add(1, Ordering::Relaxed),
                        Err(e) => panic!("thread {t}: {e}"),
                    };
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let m = &c.metrics()[0];
    eprintln!(
        "{threads} threads: {} ok, {} timeouts, slowest call {:?}, handed over {}",
        ok.load(Ordering::Relaxed),
        timeouts.load(Ordering::Relaxed),
        slowest.lock().unwrap(),
        m.handed_over
    );
    assert!(ok.load(Ordering::Relaxed) > 0, "nothing succeeded");
    assert!(m.handed_over > 0, "nothing was handed over: {m:?}");
    let (open, idle) = c.pool_states()[0];
    assert_eq!(open, idle, "every connection returned");
}

#[test]
fn handed_over_calls_end_by_their_own_deadline_with_8_threads() {
    handed_over_calls_end_by_their_own_deadline(8);
}

#[test]
fn handed_over_calls_end_by_their_own_deadline_with_21_threads() {
    handed_over_calls_end_by_their_own_deadline(21);
}

/// Item 11: an operation timeout of zero made every call fail; it means no operation
/// deadline (only the I/O, connect and pool timeouts apply), from the builder and from a
/// `Config` built by hand.
#[test]
fn an_operation_timeout_of_zero_means_no_operation_deadline() {
    let mc = Memcached::start(&[]);
    let builder = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("zero"))
        .operation_timeout(Some(Duration::ZERO));
    assert_eq!(builder.config().operation_timeout, None);
    let mut by_hand = builder.config().clone();
    by_hand.operation_timeout = Some(Duration::ZERO);
    for c in [
        builder.build().unwrap(),
        Client::from_config(by_hand).unwrap(),
    ] {
        c.set("a", b"1", 0).unwrap();
        assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"1"[..]));
        let stored = c.set_multi(&[("b", b"2"), ("c", b"3")], 0);
        assert!(stored.iter().all(|r| r.is_ok()), "{stored:?}");
        let got = c.get_multi(&["a", "b", "c", "d"]);
        let got: Vec<_> = got
            .into_iter()
            .map(|r| r.unwrap().map(|i| i.value.into_vec()))
            .collect();
        assert_eq!(
            got,
            [
                Some(b"1".to_vec()),
                Some(b"2".to_vec()),
                Some(b"3".to_vec()),
                None
            ]
        );
        assert_eq!(c.incr("n", 1).ok(), Some(None));
    }
}

/// Tester finding: the SASL exchange of a new connection ignored `operation_timeout`: with a
/// 1 s deadline and a 10 s I/O timeout, a server that never answers the SASL request kept
/// the call 10 s (a plain connect ended at the deadline). It is now bounded by the deadline,
/// and is a timeout.
#[test]
fn the_sasl_exchange_keeps_to_the_operation_deadline() {
    let addr = silent_server();
    let c = Client::builder()
        .server(&addr)
        .protocol(mcpool::Protocol::Binary)
        .sasl_plain("alice", "secret")
        .min_idle(0)
        .io_timeout(Duration::from_secs(10))
        .operation_timeout(Some(Duration::from_secs(1)))
        .build()
        .unwrap();
    let t = Instant::now();
    let got = c.get("k");
    let took = t.elapsed();
    assert!(matches!(got, Err(Error::IoTimeout { .. })), "{got:?}");
    assert!(
        took < Duration::from_secs(5),
        "took {took:?}, past the 1 s deadline"
    );
}

/// `io_timeout_marks_dead=false` (the pylibmc and libmemcached presets: libmemcached never
/// disables a server for a read timeout): a deliberately silent fake server is asked again
/// by every call, each an I/O timeout, never `ServerDead`; by default the timeout counts and,
/// with `failure_limit` 1, the next call finds the server marked dead.
#[test]
fn an_io_timeout_marks_no_server_dead_when_told_not_to() {
    let addr = silent_server();
    let c = Client::builder()
        .server(&addr)
        .min_idle(0)
        .io_timeout(Duration::from_millis(200))
        .failure_limit(1)
        .io_timeout_marks_dead(false)
        .build()
        .unwrap();
    for i in 0..3 {
        let got = c.get(unique("k"));
        assert!(
            matches!(got, Err(Error::IoTimeout { .. })),
            "call {i}: {got:?}"
        );
    }
    let addr = silent_server();
    let d = Client::builder()
        .server(&addr)
        .min_idle(0)
        .io_timeout(Duration::from_millis(200))
        .failure_limit(1)
        .build()
        .unwrap();
    let got = d.get(unique("k"));
    assert!(matches!(got, Err(Error::IoTimeout { .. })), "{got:?}");
    let got = d.get(unique("k"));
    assert!(matches!(got, Err(Error::ServerDead { .. })), "{got:?}");
}

/// Tester finding options 1: spymemcached bounds an operation by its 2.5 s operation timeout
/// alone, and reads a reply 1.5 s late (measured with spymemcached 2.12.3); the preset left
/// mcpool's 1 s I/O timeout in place, which ended the wait first. Now the preset reads it too,
/// and still ends at 2.5 s.
#[test]
fn the_spymemcached_preset_waits_for_a_late_reply_as_spymemcached_does() {
    let mc = Memcached::start(&[]);
    let k = unique("spy-late");
    Client::new([mc.addr()])
        .unwrap()
        .set(&k, b"hello", 0)
        .unwrap();
    let preset = |addr: &str| {
        Client::builder()
            .set("preset", "spymemcached")
            .unwrap()
            .server(addr)
            .build()
            .unwrap()
    };
    // The value format of the preset reads a plain value stored with flags 0 as bytes.
    let late = slow_link(&mc, 1 << 20, Duration::from_millis(1500));
    let c = preset(&late.addr);
    assert_eq!(
        c.get(&k).unwrap().as_deref(),
        Some(&b"hello"[..]),
        "1.5 s late"
    );
    let later = slow_link(&mc, 1 << 20, Duration::from_millis(4000));
    let c = preset(&later.addr);
    let started = Instant::now();
    let e = c.get(&k).unwrap_err();
    assert!(matches!(e, Error::IoTimeout { .. }), "{e}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(2000) && took < Duration::from_millis(3900),
        "ends at the 2.5 s operation timeout: {took:?}"
    );
    assert!(c.server_states()[0].alive, "a timeout takes no node out");
}

/// Rust's "no limit", `Duration::MAX`, for every duration setter at once (and through the
/// option names): the client works and never panics on a deadline past the clock's range
/// (`pool_timeout` with `operation_timeout` panicked adding them to an `Instant`).
#[test]
fn duration_max_for_every_timeout_works_and_never_panics() {
    let mc = Memcached::start(&[]);
    let k = unique("durmax");
    let c = Client::builder()
        .server(&mc.addr())
        .pool_timeout(Duration::MAX)
        .operation_timeout(Some(Duration::MAX))
        .io_timeout(Duration::MAX)
        .connect_timeout(Duration::MAX)
        .idle_timeout(Some(Duration::MAX))
        .max_lifetime(Some(Duration::MAX))
        .build()
        .unwrap();
    c.set(&k, b"v", 0).unwrap();
    assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"v"[..]));
    let m = c.get_multi(&[k.as_str(), "nothing"]);
    assert!(m[0].as_ref().unwrap().is_some() && m[1].as_ref().unwrap().is_none());
}

/// A retry wait past the clock's range (`retry_timeout(Duration::MAX)`): a refused server is
/// still marked dead (and not retried within the test), where the wait's end wrapped around
/// (release: never marked dead; debug: an overflow panic).
#[test]
fn a_retry_timeout_past_the_clock_still_marks_a_refused_server_dead() {
    let addr = format!("127.0.0.1:{}", common::free_port());
    for retry in [Duration::MAX, Duration::from_millis(u64::MAX)] {
        let c = Client::builder()
            .server(&addr)
            .failure_limit(2)
            .retry_timeout_max(retry)
            .retry_timeout(retry)
            .build()
            .unwrap();
        for _ in 0..4 {
            assert!(c.get("k").is_err());
        }
        let s = &c.server_states()[0];
        assert!(!s.alive && s.retry_in.is_some(), "{s:?}");
        assert!(
            matches!(c.get("k"), Err(Error::ServerDead { .. })),
            "{:?}",
            c.get("k")
        );
    }
}

/// Tester finding limits 1: a multi-get whose `operation_timeout` ran out on a server that
/// kept sending a little at a time (so its `io_timeout` never fired) failed the keys of the
/// server read after it too, whose reply had come. A reply already received is read now, for
/// a moment past the deadline.
#[test]
fn a_deadline_spent_on_a_trickling_server_still_reads_the_replies_that_came() {
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let slow = slow_link(&a, 1, Duration::from_millis(100));
    let c = Client::builder()
        .server(&slow.addr)
        .server(&b.addr())
        .min_idle(0)
        .io_timeout(Duration::from_secs(1))
        .operation_timeout(Some(Duration::from_millis(600)))
        .failure_limit(100)
        .build()
        .unwrap();
    let (da, db) = (
        Client::new([a.addr()]).unwrap(),
        Client::new([b.addr()]).unwrap(),
    );
    let prefix = unique("trickle");
    let keys: Vec<String> = (0..40).map(|i| format!("{prefix}{i}")).collect();
    let mut on_b = 0;
    for k in &keys {
        let direct = if c.server_for(k).unwrap() == 0 {
            &da
        } else {
            &db
        };
        on_b += usize::from(c.server_for(k).unwrap() == 1);
        direct.set(k, k.as_bytes(), 0).unwrap();
    }
    assert!(on_b > 0 && on_b < keys.len(), "keys on both servers");
    let started = Instant::now();
    let got = c.get_multi(&keys);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    for (k, r) in keys.iter().zip(&got) {
        if c.server_for(k).unwrap() == 1 {
            let v = r
                .as_ref()
                .unwrap_or_else(|e| panic!("{k} on the live server: {e}"));
            assert_eq!(v.as_ref().unwrap().value, k.as_bytes());
        } else {
            // The deadline ended the wait, and the message says so (a longer io_timeout
            // would not help).
            match r {
                Err(
                    e @ Error::IoTimeout {
                        operation_timeout: true,
                        ..
                    },
                ) => assert!(e.to_string().contains("operation_timeout ran out"), "{e}"),
                other => panic!("{k}: {other:?}"),
            }
        }
    }
    // A server silent for its io_timeout, without a deadline: the I/O timeout's own message.
    let silent = silent_server();
    let c = Client::builder()
        .server(&silent)
        .min_idle(0)
        .io_timeout(Duration::from_millis(200))
        .operation_timeout(None)
        .build()
        .unwrap();
    match c.get("k") {
        Err(
            e @ Error::IoTimeout {
                operation_timeout: false,
                ..
            },
        ) => assert!(!e.to_string().contains("operation_timeout"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// A client of `mc` with `test_on_check_out`, a 1 s operation_timeout, `io` as its I/O
/// timeout and `idle` idle connections, opened in the background and awaited.
fn checking_pool(mc: &Memcached, idle: u32, io: Duration) -> Client {
    let c = Client::builder()
        .server(&mc.addr())
        .test_on_check_out(true)
        .max_size(idle)
        .min_idle(idle)
        .io_timeout(io)
        .operation_timeout(Some(Duration::from_secs(1)))
        .failure_limit(1000)
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.pool_states()[0].1 < idle && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(c.pool_states()[0].1, idle, "{:?}", c.pool_states());
    c
}

/// With `test_on_check_out`, one call checks at most one idle connection, within its
/// operation deadline: a stale pool (here a frozen memcached: every alive check times out,
/// as after a NAT forgot the pool's flows) cost one I/O timeout per idle connection, each
/// looked at in turn, 4.1 s for a call with a 1 s operation_timeout (tester finding connlife
/// 2). A generous bound: 3 s, where the old behaviour takes 5 s (ten checks of 500 ms).
#[test]
fn test_on_check_out_keeps_to_the_operation_deadline() {
    let mc = Memcached::start(&[]);
    let c = checking_pool(&mc, 10, Duration::from_millis(500));
    mc.freeze();
    let t = Instant::now();
    let r = c.get("k");
    let took = t.elapsed();
    mc.thaw();
    assert!(r.is_err(), "{r:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}: {r:?}");
}

/// A call whose whole deadline went into a failed alive check (`test_on_check_out`, a frozen
/// server, io_timeout as long as operation_timeout) ends in an I/O timeout talking to the
/// server, not "operation timeout while connecting": no connect was tried (tester finding
/// retest26 5).
#[test]
fn a_deadline_spent_on_an_alive_check_is_an_io_timeout() {
    let mc = Memcached::start(&[]);
    let c = checking_pool(&mc, 2, Duration::from_secs(1));
    mc.freeze();
    let r = c.get("k");
    mc.thaw();
    match r {
        Err(
            e @ Error::IoTimeout {
                operation_timeout: true,
                ..
            },
        ) => assert!(!e.to_string().contains("connecting"), "{e}"),
        other => panic!("{other:?}"),
    }
}
