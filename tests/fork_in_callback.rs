//! A callback that forks during a call (an event hook, a multi-get's per-value callback, the
//! C ABI's allocation callback): the child does not go on with the parent's exchange on the
//! parent's sockets. Its keys not yet answered fail with `Error::Forked` (never a miss), the
//! parent's call gets every value, and no server is blamed in either process (tester finding
//! fork 1: the child read the parent's replies, keys went missing without an error and
//! healthy servers were marked dead). Its own test binary: one thread forks.
mod common;

use common::*;
use mcpool::{Client, Error, Protocol};
use std::time::Duration;

fn fork_during_a_multi_get(protocol: Protocol) {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .protocol(protocol)
        .key_prefix(unique("forkcb"))
        .failure_limit(1)
        .build()
        .unwrap();
    let keys: Vec<String> = (0..300).map(|i| format!("k{i}")).collect();
    for k in &keys {
        c.set(k, value_for(k, 2000), 0).unwrap();
    }
    let mut child = None;
    let mut wrong = 0;
    // 600 KB of replies: the first value arrives long before the last is read.
    let results = c.get_multi_each(&keys, |i, v, _| {
        if !belongs_to(&keys[i], v) {
            wrong += 1;
        }
        if child.is_none() {
            // SAFETY: the child goes on with this call, then only uses the client and leaves
            // with _exit, never returning into the test harness.
            child = Some(unsafe { libc::fork() });
        }
    });
    let pid = child.expect("a hit");
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let forked = results
            .iter()
            .filter(|r| matches!(r, Err(Error::Forked)))
            .count();
        let hits = results.iter().filter(|r| matches!(r, Ok(true))).count();
        let ok = wrong == 0
            && forked > 0
            && hits + forked == keys.len()
            // The child's next calls use connections of its own, and the server is not
            // blamed for the call's end.
            && c.get_multi(&keys).iter().zip(&keys).all(|(r, k)| {
                matches!(r, Ok(Some(item)) if belongs_to(k, &item.value))
            })
            && c.metrics()[0].ejections == 0;
        if !ok {
            eprintln!("child: wrong {wrong}, forked {forked}, hits {hits}, {results:?}");
        }
        // SAFETY: ends the child without running the parent's destructors or test harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    // The parent's call read every value on its own socket.
    assert_eq!(wrong, 0);
    assert!(
        results.iter().all(|r| matches!(r, Ok(true))),
        "{protocol:?}: {results:?}"
    );
    assert_eq!(
        wait_for_child(pid, Duration::from_secs(30)),
        0,
        "{protocol:?}: the child"
    );
    // The connection is still clean for the parent: nothing of it was read by the child.
    let again = c.get_multi(&keys);
    assert!(again
        .iter()
        .zip(&keys)
        .all(|(r, k)| matches!(r, Ok(Some(item)) if belongs_to(k, &item.value))));
    let m = &c.metrics()[0];
    assert_eq!((m.ejections, m.timeouts, m.io_errors), (0, 0, 0), "{m:?}");
}

#[test]
fn a_fork_inside_a_multi_get_callback_leaves_the_parents_exchange_to_the_parent() {
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        fork_during_a_multi_get(protocol);
    }
}
