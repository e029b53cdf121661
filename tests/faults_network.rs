//! Faults between client and a real memcached: a slow, jittery network and connections reset
//! in the middle of a value, through a deliberately unreliable proxy of the test's own; and
//! `tc netem` in a network namespace of the test's own where the kernel offers it. Every value
//! carries a checksum of its own key, so a crossed reply is caught.
mod common;

use common::proxy::{self, Faults};
use common::{unique, Memcached};
use mcpool::Client;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A value that names its key and a checksum of it, padded to `len` bytes.
fn value_for(key: &str, len: usize) -> Vec<u8> {
    let mut v = format!("{key}:{:08x}:", crc32fast::hash(key.as_bytes())).into_bytes();
    while v.len() < len {
        v.push(b'a' + (v.len() % 26) as u8);
    }
    v
}

/// True when `value` is the one `value_for(key, _)` makes.
fn belongs_to(key: &str, value: &[u8]) -> bool {
    value.starts_with(format!("{key}:{:08x}:", crc32fast::hash(key.as_bytes())).as_bytes())
}

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
                        0 => c.set(&key, &value_for(&key, len), 0).map(|_| vec![]),
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
                                    Ok(v) => vals.push(v.map(|i| i.value).filter(|_| false)),
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

#[test]
fn netem_in_a_namespace_where_the_kernel_offers_it() {
    // Needs root, `ip` and the netem queueing discipline; the proxy tests above cover the
    // same faults everywhere.
    let ns = format!("mcpool-{}", std::process::id());
    let ip = |args: &[&str]| std::process::Command::new("ip").args(args).output();
    match ip(&["netns", "add", &ns]) {
        Ok(o) if o.status.success() => {}
        _ => {
            eprintln!("SKIP: cannot create a network namespace here (needs root and iproute2)");
            return;
        }
    }
    let _ = ip(&["netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
    let netem = ip(&[
        "netns", "exec", &ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "20ms",
        "5ms", "loss", "1%",
    ]);
    let supported = matches!(&netem, Ok(o) if o.status.success());
    if !supported {
        let why = netem
            .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
            .unwrap_or_else(|e| e.to_string());
        let _ = ip(&["netns", "del", &ns]);
        eprintln!("SKIP: tc netem unavailable in this kernel ({why}); the proxy tests cover slow networks");
        return;
    }
    // Run memcached and a checked load inside the namespace, via the CLI.
    let port = "11311";
    let mut mc = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            "memcached",
            "-u",
            "root",
            "-l",
            "127.0.0.1",
            "-p",
            port,
            "-U",
            "0",
        ])
        .spawn()
        .unwrap();
    let bin = env!("CARGO_BIN_EXE_mcpool");
    let server = format!("127.0.0.1:{port}");
    let mut ok = 0;
    for i in 0..30 {
        let key = format!("netem{i}");
        let v = String::from_utf8(value_for(&key, 50)).unwrap();
        let set = ip(&[
            "netns",
            "exec",
            &ns,
            bin,
            "--servers",
            &server,
            "--io-timeout-ms",
            "2000",
            "set",
            &key,
            &v,
        ]);
        let get = ip(&[
            "netns",
            "exec",
            &ns,
            bin,
            "--servers",
            &server,
            "--io-timeout-ms",
            "2000",
            "get",
            &key,
        ]);
        if let (Ok(s), Ok(g)) = (set, get) {
            if s.status.success() && g.status.success() {
                assert!(
                    belongs_to(&key, g.stdout.trim_ascii_end()),
                    "crossed value under netem"
                );
                ok += 1;
            }
        }
    }
    let _ = mc.kill();
    let _ = mc.wait();
    let _ = ip(&["netns", "del", &ns]);
    assert!(
        ok > 20,
        "most operations succeed over a lossy link: {ok}/30"
    );
}
