//! Faults between client and a real memcached: a slow, jittery network and connections reset
//! in the middle of a value, through a deliberately unreliable proxy of the test's own; and
//! `tc netem` in a network namespace of the test's own where the kernel offers it. Every value
//! carries a checksum of its own key, so a crossed reply is caught.
mod common;

use common::proxy::{self, Faults};
use common::{belongs_to, unique, value_for, Memcached};
use mcpool::Client;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Tally {
    ok: AtomicUsize,
    errors: AtomicUsize,
    crossed: AtomicUsize,
}

/// 8 threads × `ops` checked operations (set, get, get_multi) through `addr`.
fn hammer(addr: &str, ops: usize, deadline: Duration) -> Arc<Tally> {
    let tally = Arc::new(Tally::default());
    let client = Client::builder()
        .server(addr)
        .max_size(4)
        .io_timeout(Duration::from_millis(500))
        .operation_timeout(Some(Duration::from_secs(2)))
        .failure_limit(1_000_000)
        .key_prefix(unique("net"))
        .build()
        .unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (c, tally) = (client.clone(), tally.clone());
            std::thread::spawn(move || {
                for i in 0..ops {
                    let key = format!("t{t}-k{}", i % 20);
                    let len = [10, 300, 5000][i % 3];
                    let start = Instant::now();
                    let outcome: Result<Vec<Option<Vec<u8>>>, mcpool::Error> = match i % 3 {
                        0 => c.set(&key, value_for(&key, len), 0).map(|_| vec![]),
                        1 => c.get(&key).map(|v| vec![v]),
                        _ => {
                            let keys: Vec<String> = (0..5).map(|j| format!("t{t}-k{j}")).collect();
                            let got = c.get_multi(&keys);
                            let mut vals = vec![];
                            let mut err = None;
                            for (k, r) in keys.iter().zip(got) {
                                match r {
                                    Ok(Some(item)) if !belongs_to(k, &item.value) => {
                                        tally.crossed.fetch_add(1, Ordering::SeqCst);
                                    }
                                    Ok(v) => {
                                        vals.push(v.map(|i| i.value.into_vec()).filter(|_| false))
                                    }
                                    Err(e) => err = Some(e),
                                }
                            }
                            err.map_or(Ok(vals), Err)
                        }
                    };
                    assert!(
                        start.elapsed() < deadline,
                        "a call took {:?}",
                        start.elapsed()
                    );
                    match outcome {
                        Ok(vals) => {
                            for v in vals.into_iter().flatten() {
                                if !belongs_to(&key, &v) {
                                    tally.crossed.fetch_add(1, Ordering::SeqCst);
                                }
                            }
                            tally.ok.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            tally.errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("worker panicked");
    }
    tally
}

#[test]
fn a_slow_jittery_network_never_crosses_values() {
    let mc = Memcached::start(&[]);
    let p = proxy::start(
        &mc.addr(),
        Faults {
            max_delay_us: 3_000,
            reset_one_in: 0,
            ..Faults::default()
        },
    );
    let t = hammer(&p.addr, 150, Duration::from_secs(3));
    assert_eq!(t.crossed.load(Ordering::SeqCst), 0);
    assert_eq!(
        t.errors.load(Ordering::SeqCst),
        0,
        "delays within the timeouts are not errors"
    );
    assert_eq!(t.ok.load(Ordering::SeqCst), 8 * 150);
}

#[test]
fn connections_reset_mid_value_never_cross_values() {
    let mc = Memcached::start(&[]);
    let p = proxy::start(
        &mc.addr(),
        Faults {
            max_delay_us: 200,
            reset_one_in: 2,
            ..Faults::default()
        },
    );
    let t = hammer(&p.addr, 200, Duration::from_secs(3));
    eprintln!(
        "resets {}, ok {}, errors {}, crossed {}",
        p.resets.load(Ordering::SeqCst),
        t.ok.load(Ordering::SeqCst),
        t.errors.load(Ordering::SeqCst),
        t.crossed.load(Ordering::SeqCst)
    );
    assert_eq!(
        t.crossed.load(Ordering::SeqCst),
        0,
        "a reset must never shift replies"
    );
    assert!(
        p.resets.load(Ordering::SeqCst) > 0,
        "the proxy reset connections"
    );
    assert!(t.errors.load(Ordering::SeqCst) > 0 && t.ok.load(Ordering::SeqCst) > 0);
}
