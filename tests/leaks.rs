//! No file descriptor or memory growth across repeated faults (its own test binary, so no
//! other test's sockets are counted).
mod common;

use common::proxy::{self, Faults};
use common::{unique, wait_until, Memcached};
use mcpool::Client;
use std::time::Duration;

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// One round of faults: resets mid-value through a proxy, a dead port, a killed server.
fn round(mc: &Memcached) {
    let p = proxy::start(
        &mc.addr(),
        Faults {
            max_delay_us: 0,
            reset_one_in: 2,
            ..Faults::default()
        },
    );
    let c = Client::builder()
        .servers([p.addr.clone(), format!("127.0.0.1:{}", common::free_port())])
        .max_size(4)
        .failure_limit(1_000)
        .key_prefix(unique("leak"))
        .build()
        .unwrap();
    let keys: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
    for (i, k) in keys.iter().enumerate() {
        let _ = c.set(k, vec![b'x'; 100 + 50 * i], 0);
        let _ = c.get_multi(&keys[..i + 1]);
    }
}

#[test]
fn repeated_faults_leak_no_descriptors_or_memory() {
    let mc = Memcached::start(&[]);
    round(&mc);
    let fds = open_fds();
    let rss = rss_kib();
    for _ in 0..25 {
        round(&mc);
    }
    // Pool threads and proxy threads wind down after their owners are dropped.
    wait_until("descriptors to return", Duration::from_secs(10), || {
        open_fds() <= fds + 2
    });
    let grown = rss_kib().saturating_sub(rss);
    assert!(grown < 32 * 1024, "RSS grew by {grown} KiB over 25 rounds");
    eprintln!("fds {fds} -> {}, rss {rss} KiB (+{grown} KiB)", open_fds());
}
