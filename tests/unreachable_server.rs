//! One server whose connects hang (a blackholed fake server: a dropped SYN) holds up only its
//! own callers: calls to a live memcached, of the same client or of another one in the
//! process, succeed at once while a connect to the blackholed server is under way anywhere
//! (a call to it, or `min_idle` keeping idle connections to it); `min_idle` still opens the
//! live server's connections without any call; a `fork()` does not wait for that connect.
//! (Tester findings 04 and 06 of the s4c round.)
mod common;

use common::{blackholed_port, unique, wait_until, BlackholedPort, Memcached};
use mcpool::Client;
use std::time::{Duration, Instant};

/// Generous, and well under the 2 s pool timeout the calls would have hit.
const PROMPT: Duration = Duration::from_millis(700);
const POOL_TIMEOUT: Duration = Duration::from_secs(2);

/// A client of the blackholed server that keeps connecting to it in the background.
fn keeps_connecting(black: &BlackholedPort) -> Client {
    Client::builder()
        .server(&black.addr())
        .min_idle(2)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

/// Sets `key` on `c` and says how long it took; the set must succeed.
fn timed_set(c: &Client, key: &str) -> Duration {
    let t = Instant::now();
    c.set(key, b"v", 0)
        .unwrap_or_else(|e| panic!("set {key} after {:?}: {e}", t.elapsed()));
    t.elapsed()
}

#[test]
fn a_client_of_a_live_server_is_not_held_up_by_another_clients_blackholed_one() {
    let black = blackholed_port();
    let mc = Memcached::start(&[]);
    let _other = keeps_connecting(&black);
    // Two clients of the live server (min_idle 0: their first call needs a new slot).
    for n in 0..2 {
        let c = Client::builder()
            .server(&mc.addr())
            .key_prefix(unique("live"))
            .pool_timeout(POOL_TIMEOUT)
            .build()
            .unwrap();
        for i in 0..3 {
            let took = timed_set(&c, &format!("k{i}"));
            assert!(took < PROMPT, "client {n}, set {i}: {took:?}");
        }
    }
}

#[test]
fn keys_of_the_live_server_are_served_while_another_thread_calls_the_blackholed_one() {
    let black = blackholed_port();
    let mc = Memcached::start(&[]);
    // Both servers in one client, with idle connections kept (the whalin and spymemcached
    // presets keep 1).
    let c = Client::builder()
        .servers([black.addr(), mc.addr()])
        .key_prefix(unique("two"))
        .min_idle(1)
        .connect_timeout(Duration::from_secs(3))
        .pool_timeout(POOL_TIMEOUT)
        .build()
        .unwrap();
    let on = |server: usize| {
        (0..1000)
            .map(|i| format!("k{i}"))
            .filter(|k| c.server_for(k).unwrap() == server)
            .take(3)
            .collect::<Vec<_>>()
    };
    let (dead_keys, live_keys) = (on(0), on(1));
    assert_eq!((dead_keys.len(), live_keys.len()), (3, 3));
    let caller = {
        let (c, k) = (c.clone(), dead_keys[0].clone());
        std::thread::spawn(move || {
            let t = Instant::now();
            let r = c.get(&k);
            (r.is_err(), t.elapsed())
        })
    };
    for k in &live_keys {
        let took = timed_set(&c, k);
        assert!(took < PROMPT, "set {k} on the live server: {took:?}");
    }
    let (failed, took) = caller.join().unwrap();
    assert!(failed, "the blackholed server's key failed");
    assert!(
        took < Duration::from_secs(3) + PROMPT,
        "within its connect timeout: {took:?}"
    );
}

#[test]
fn min_idle_opens_the_live_servers_connections_without_a_call() {
    let black = blackholed_port();
    let mc = Memcached::start(&[]);
    let _other = keeps_connecting(&black);
    let c = Client::builder()
        .servers([black.addr(), mc.addr()])
        .min_idle(2)
        .max_size(4)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    wait_until(
        "two idle connections to the live server",
        Duration::from_secs(10),
        || c.pool_states()[1] == (2, 2),
    );
    assert_eq!(c.pool_states()[0], (0, 0), "none to the blackholed one");
    assert_eq!(c.metrics()[1].connects, 2);
}

#[test]
fn fork_does_not_wait_for_a_connect_to_the_blackholed_server() {
    let black = blackholed_port();
    let mc = Memcached::start(&[]);
    // A call, so that the background thread surely exists.
    let c = Client::builder().server(&mc.addr()).build().unwrap();
    c.set(unique("f"), b"v", 0).unwrap();
    // Its connects are queued on that thread before the fork's hold.
    let _other = keeps_connecting(&black);
    let t = Instant::now();
    // SAFETY: the child leaves at once with _exit, touching nothing of the parent's.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(0) };
    }
    let took = t.elapsed();
    assert_eq!(common::wait_for_child(pid, Duration::from_secs(30)), 0);
    assert!(took < Duration::from_secs(1), "fork took {took:?}");
}
