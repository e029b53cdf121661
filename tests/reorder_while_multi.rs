//! Reordering the server list (`set_servers` [A, B] then [B, A]) while other threads run
//! multi-key calls over both servers with full pools: a call on the old list held A's
//! connection while waiting for B's, one on the new list held B's while waiting for A's, and
//! every such call waited `pool_timeout` and failed (tester finding csafe 1: 8 threads, 38
//! calls in 5 s instead of 1,600). Every call now takes its connections in one order, the
//! servers' own, whatever their place in the list (`Topology::acquire_order`).
mod common;

use common::Memcached;
use mcpool::Client;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn reordering_the_servers_never_leaves_multi_key_calls_waiting_on_each_other() {
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let (a, b) = (a.addr(), b.addr());
    let client = Arc::new(
        Client::builder()
            .server(&a)
            .server(&b)
            .max_size(2)
            .min_idle(0)
            .pool_timeout(Duration::from_secs(3))
            .build()
            .unwrap(),
    );
    let keys: Vec<String> = (0..8).map(|i| format!("reorder-{i}")).collect();
    let items: Vec<(String, String)> = keys.iter().map(|k| (k.clone(), format!("v-{k}"))).collect();
    assert!(client.set_multi(&items, 0).iter().all(|r| r.is_ok()));
    let servers_used: std::collections::HashSet<_> =
        keys.iter().map(|k| client.server_for(k).unwrap()).collect();
    assert_eq!(servers_used.len(), 2, "the keys span both servers");
    let done = Arc::new(AtomicBool::new(false));
    let failures = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (client, keys, failures) = (client.clone(), keys.clone(), failures.clone());
            std::thread::spawn(move || {
                for round in 0..150 {
                    // reads and batch writes both hold both servers' connections at once
                    let bad = if round % 2 == 0 {
                        client
                            .get_multi(&keys)
                            .iter()
                            .filter(|r| r.is_err())
                            .count()
                    } else {
                        let items: Vec<(&str, &str)> =
                            keys.iter().map(|k| (k.as_str(), "w")).collect();
                        client
                            .set_multi(&items, 0)
                            .iter()
                            .filter(|r| r.is_err())
                            .count()
                    };
                    failures.fetch_add(bad, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let swapper = {
        let (client, done) = (client.clone(), done.clone());
        std::thread::spawn(move || {
            for i in 0..100_000 {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                let list = if i % 2 == 0 { [&b, &a] } else { [&a, &b] };
                client.set_servers(list).unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    for t in threads {
        t.join().unwrap();
    }
    done.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(
        failures.load(Ordering::Relaxed),
        0,
        "keys failed (pool timeouts)"
    );
}
