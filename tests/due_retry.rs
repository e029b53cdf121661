//! A dead server's due retry is one call's try (tester finding proxy2 2), and that try
//! changes no placement (tester findings failover3 1 and 2: while it was under way the server
//! left the table again, so a read went to a holder's older copy, and a write went elsewhere
//! without its return cleaning it). Three real memcached; the one that dies is stopped with
//! SIGSTOP, so that it keeps its data as a server that was only unreachable does.
mod common;

use common::{unique, wait_until, Memcached};
use mcpool::route::FailoverPolicy;
use mcpool::stale::OnServerReturn;
use mcpool::{Client, Error};
use std::time::Duration;

/// A client of `servers` marking a server dead at its first failure (a 400 ms I/O timeout),
/// due for a retry `retry` later.
fn client(
    servers: &[&Memcached],
    prefix: &str,
    failover: FailoverPolicy,
    policy: OnServerReturn,
    retry: Duration,
) -> Client {
    Client::builder()
        .servers(servers.iter().map(|m| m.addr()))
        .key_prefix(prefix)
        .failover(failover)
        .on_server_return(policy)
        .failure_limit(1)
        .connect_timeout(Duration::from_millis(400))
        .io_timeout(Duration::from_millis(400))
        .retry_timeout(retry)
        .retry_timeout_max(retry.max(Duration::from_millis(1)))
        .build()
        .unwrap()
}

/// The value of `key` on `mc` itself (with the prefix), bypassing placement.
fn raw_get(mc: &Memcached, prefix: &str, key: &str) -> Option<Vec<u8>> {
    let direct = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix)
        .build()
        .unwrap();
    direct.get(key).unwrap()
}

/// Keys whose server is `idx`.
fn keys_on(c: &Client, idx: usize, n: usize) -> Vec<String> {
    (0..10_000)
        .map(|i| format!("k{i}"))
        .filter(|k| c.server_for(k).unwrap() == idx)
        .take(n)
        .collect()
}

/// Starts a get of `key` on another thread (the due retry's try of the stalled server B,
/// index 1) and returns once that try is under way: its connection to B is open and it
/// waits for the reply it will not get.
fn try_under_way(
    c: &Client,
    key: &str,
) -> std::thread::JoinHandle<mcpool::Result<Option<Vec<u8>>>> {
    let connects = c.metrics()[1].connects;
    let (c2, key) = (c.clone(), key.to_owned());
    let t = std::thread::spawn(move || c2.get(&key));
    wait_until("the try's connection open", Duration::from_secs(10), || {
        c.metrics()[1].connects > connects
    });
    t
}

/// failover3 1: under `eject` (the default modulo placement), a key K of C that the table
/// without B puts on A gets v1 there during B's outage; once B's retry is due B is back in
/// the table and `K = v2` goes to C. While another call's try of B is under way, a read of
/// K must not go back to A's v1.
#[test]
fn a_try_under_way_changes_no_placement_under_eject() {
    let (a, b, cc) = (
        Memcached::start(&[]),
        Memcached::start(&[]),
        Memcached::start(&[]),
    );
    let prefix = unique("due1");
    let c = client(
        &[&a, &b, &cc],
        &prefix,
        FailoverPolicy::Eject,
        OnServerReturn::Flush,
        Duration::from_secs(1),
    );
    let kb = keys_on(&c, 1, 2);
    let candidates = keys_on(&c, 2, 200);
    b.freeze();
    assert!(c.get(&kb[0]).is_err(), "the stall marks B dead");
    // A key of C that the table without B puts on A.
    let k = candidates
        .iter()
        .find(|k| c.set(k, b"v1", 0).unwrap().is_stored() && raw_get(&a, &prefix, k).is_some())
        .expect("a key of C placed on A while B is dead")
        .clone();
    wait_until("B's retry due", Duration::from_secs(10), || {
        c.server_states()[1].alive
    });
    assert!(c.set(&k, b"v2", 0).unwrap().is_stored());
    assert_eq!(
        raw_get(&cc, &prefix, &k).as_deref(),
        Some(&b"v2"[..]),
        "on C"
    );
    let t = try_under_way(&c, &kb[1]);
    let read = c.get(&k).unwrap();
    assert_eq!(
        read.as_deref(),
        Some(&b"v2"[..]),
        "the last value written, never A's older one"
    );
    // (the try's own outcome: its clean-up or its read timed out, and a read not sent went
    // on to the server the table without B picks)
    let _ = t.join().unwrap();
    b.thaw();
}

/// failover3 2: under `rehash` with `delete-written` and `retry_timeout` 0, a write of a key
/// of B while another call's try of B is under way must not be acknowledged somewhere that
/// B's return does not clean: it fails at once (B is dead to every call but the try's), and
/// after B is back a read gives the last acknowledged value.
#[test]
fn a_write_during_a_try_fails_at_once_and_nothing_older_comes_back() {
    let (a, b, cc) = (
        Memcached::start(&[]),
        Memcached::start(&[]),
        Memcached::start(&[]),
    );
    let prefix = unique("due2");
    for failover in [FailoverPolicy::Rehash, FailoverPolicy::Eject] {
        let c = client(
            &[&a, &b, &cc],
            &prefix,
            failover,
            OnServerReturn::DeleteWritten,
            Duration::ZERO,
        );
        let kb = keys_on(&c, 1, 3);
        assert!(c.set(&kb[0], b"v1", 0).unwrap().is_stored());
        b.freeze();
        assert!(c.get(&kb[1]).is_err(), "the stall marks B dead");
        let t = try_under_way(&c, &kb[2]);
        let during = c.set(&kb[0], b"v2", 0);
        assert!(
            matches!(during, Err(Error::ServerDead { .. })),
            "{failover:?}: a write placed on B while its try is under way fails at once: \
             {during:?}"
        );
        let _ = t.join().unwrap();
        b.thaw();
        wait_until("B used again", Duration::from_secs(10), || {
            c.get(&kb[1]).is_ok()
        });
        assert_eq!(
            c.get(&kb[0]).unwrap().as_deref(),
            Some(&b"v1"[..]),
            "{failover:?}: the last acknowledged value"
        );
        assert!(c.delete(&kb[0]).is_ok());
    }
}
