//! Soak (opt-in: `cargo test --release --test soak -- --ignored --nocapture`, length from
//! `MCPOOL_SOAK_SECS`, default 600): 100 threads of the `threads` workload (4 gets : 1 set,
//! 64-byte values carrying a checksum of their own key) against 3 memcached servers while one
//! of them is killed and restarted every 30 s. Reports operations, errors by kind, crossed
//! values (must be 0), RSS and open descriptors at start and end.
mod common;

use common::{unique, Memcached};
use mcpool::{Client, Error, FailoverPolicy};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn value_for(key: &str) -> Vec<u8> {
    let mut v = format!("{key}:{:08x}:", crc32fast::hash(key.as_bytes())).into_bytes();
    v.resize(64, b'.');
    v
}

fn status(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn kind(e: &Error) -> &'static str {
    match e {
        Error::ServerDead { .. } => "server dead",
        Error::PoolTimeout { .. } => "pool timeout",
        Error::ConnectTimeout { .. } => "connect timeout",
        Error::IoTimeout { .. } => "I/O timeout",
        Error::Io { .. } => "I/O error",
        Error::Server { .. } | Error::Client { .. } => "server reply error",
        Error::Protocol { .. } => "protocol error",
        _ => "other",
    }
}

#[test]
#[ignore = "soak: minutes long; run explicitly"]
fn soak_with_a_server_killed_every_30_seconds() {
    let secs: u64 = std::env::var("MCPOOL_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let mut servers: Vec<Memcached> = (0..3).map(|_| Memcached::start(&["-t", "1"])).collect();
    let ports: Vec<u16> = servers.iter().map(|m| m.port).collect();
    let client = Client::builder()
        .servers(servers.iter().map(Memcached::addr))
        .max_size(20)
        .failover(FailoverPolicy::FailFast)
        .retry_timeout(Duration::from_millis(500))
        .retry_timeout_max(Duration::from_secs(2))
        .io_timeout(Duration::from_millis(500))
        .operation_timeout(Some(Duration::from_secs(2)))
        .key_prefix(unique("soak"))
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicU64::new(0));
    let crossed = Arc::new(AtomicU64::new(0));
    let slowest_ms = Arc::new(AtomicU64::new(0));
    let errors: Arc<Mutex<BTreeMap<&'static str, u64>>> = Arc::default();
    let (rss0, fds0) = (status("VmRSS:"), fds());
    let start = Instant::now();
    let workers: Vec<_> = (0..100u64)
        .map(|t| {
            let (c, stop, ops, crossed, errors, slowest) = (
                client.clone(),
                stop.clone(),
                ops.clone(),
                crossed.clone(),
                errors.clone(),
                slowest_ms.clone(),
            );
            std::thread::spawn(move || {
                let mut x = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                let mut local_errors: BTreeMap<&'static str, u64> = BTreeMap::new();
                for _ in 0..50_000_000u64 {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Key and operation from independent bits of the random number.
                    let key = format!("k{}", x % 10_000);
                    let began = Instant::now();
                    let r = if (x >> 40) % 5 == 0 {
                        c.set(&key, value_for(&key), 0).map(|_| None)
                    } else {
                        c.get(&key)
                    };
                    slowest.fetch_max(began.elapsed().as_millis() as u64, Ordering::Relaxed);
                    match r {
                        Ok(Some(v)) if v != value_for(&key) => {
                            crossed.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(_) => {}
                        Err(e) => *local_errors.entry(kind(&e)).or_default() += 1,
                    }
                    ops.fetch_add(1, Ordering::Relaxed);
                }
                let mut all = errors.lock().unwrap();
                for (k, n) in local_errors {
                    *all.entry(k).or_default() += n;
                }
            })
        })
        .collect();
    let mut victim = 0;
    let end = start + Duration::from_secs(secs);
    while Instant::now() < end {
        std::thread::sleep(
            Duration::from_secs(30).min(end.saturating_duration_since(Instant::now())),
        );
        if Instant::now() >= end {
            break;
        }
        servers[victim].kill();
        std::thread::sleep(Duration::from_secs(2));
        servers[victim] = Memcached::start_on(ports[victim], &["-t", "1"]);
        eprintln!(
            "{:>4} s: restarted server {victim}; {} ops so far",
            start.elapsed().as_secs(),
            ops.load(Ordering::Relaxed)
        );
        victim = (victim + 1) % servers.len();
    }
    stop.store(true, Ordering::SeqCst);
    for w in workers {
        w.join().expect("worker panicked");
    }
    let (rss1, fds1) = (status("VmRSS:"), fds());
    let total = ops.load(Ordering::Relaxed);
    eprintln!(
        "soak: {secs} s, {total} operations ({:.0}/s), crossed values {}, slowest call {} ms",
        total as f64 / secs as f64,
        crossed.load(Ordering::Relaxed),
        slowest_ms.load(Ordering::Relaxed)
    );
    eprintln!("errors by kind: {:?}", errors.lock().unwrap());
    let hits: u64 = client.metrics().iter().map(|m| m.hits).sum();
    eprintln!("hits {hits} (each one checked against its own key)");
    eprintln!("RSS {rss0} KiB -> {rss1} KiB, descriptors {fds0} -> {fds1}");
    for m in client.metrics() {
        eprintln!("{m:?}");
    }
    assert_eq!(crossed.load(Ordering::Relaxed), 0, "crossed values");
    assert!(
        hits > total / 4,
        "the load must read back values it wrote: {hits} hits"
    );
    assert!(
        slowest_ms.load(Ordering::Relaxed) < 2_500,
        "a call outlived its deadline"
    );
    assert!(
        rss1 < rss0 + 64 * 1024,
        "RSS grew from {rss0} to {rss1} KiB"
    );
}
