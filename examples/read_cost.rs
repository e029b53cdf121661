//! Deterministic per-call costs of the read paths, for docs/performance.md: allocations and
//! bytes allocated (a counting allocator), minor page faults (getrusage) and, under
//! `valgrind --tool=callgrind --toggle-collect='*read_cost::calls*'`, instructions, for
//! `N` calls of one read shape against one server:
//!
//! `[THREADS=t] [POOL=n] [PROTO=meta|binary] cargo run --release --example read_cost -- HOST:PORT MODE KEYS N [small|bulk|letters]`
//!
//! MODE: `plain` (`get_multi`, owned values), `each` (`get_multi_each`, borrowed values),
//! `get` (`get`, one key per call, KEYS ignored), `set` (`set_multi` of the KEYS keys with
//! the value, each call). `small`: 40-byte values (the bench's
//! multiget scenario); `bulk`: seed 001's value (30,800 bytes of "0 1 2 3 ..." text, about
//! 2.15:1 under zlib's default level), stored compressed; `letters`: the bench's other bulk
//! value (30,800 letters, about 160:1), stored compressed.
use mcpool::Client;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator, counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(l.size() as u64, Relaxed);
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(n as u64, Relaxed);
        // SAFETY: forwarded.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn minflt() -> i64 {
    // SAFETY: getrusage writes one struct.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u.ru_minflt
    }
}

/// Seed 001's value: "0 1 2 3 ..." cut at 30,800 bytes.
fn seed001() -> Vec<u8> {
    let mut v = Vec::new();
    let mut i = 0u32;
    while v.len() < 30_800 {
        v.extend_from_slice(format!("{i} ").as_bytes());
        i += 1;
    }
    v.truncate(30_800);
    v
}

#[inline(never)]
fn calls(c: &Client, mode: &str, keys: &[String], items: &[(String, Vec<u8>)], n: usize) -> usize {
    let mut found = 0usize;
    for i in 0..n {
        match mode {
            "plain" => {
                found += c
                    .get_multi(keys)
                    .iter()
                    .filter(|r| matches!(r, Ok(Some(_))))
                    .count()
            }
            "each" => {
                c.get_multi_each(keys, |_, v, _| found += usize::from(!v.is_empty()));
            }
            "set" => found += c.set_multi(items, 0).iter().filter(|r| r.is_ok()).count(),
            _ => found += usize::from(c.get(&keys[i % keys.len()]).expect("get").is_some()),
        }
    }
    found
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let addr = a.get(1).map_or("127.0.0.1:11211", String::as_str);
    let mode = a.get(2).map_or("plain", String::as_str);
    let k: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(100);
    let n: usize = a.get(4).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let shape = a.get(5).map_or("small", String::as_str);
    // POOL=n: at most n connections (the bench's bulk runs 20 for 1 to 50 threads).
    let mut b = Client::builder().server(addr);
    if let Some(n) = std::env::var("POOL").ok().and_then(|s| s.parse().ok()) {
        b = b.max_size(n);
    }
    // PROTO=meta|binary: the protocol (text by default, as the bench).
    if let Ok(p) = std::env::var("PROTO") {
        b = b.set("protocol", &p).expect("protocol");
    }
    let c = b.build().expect("client");
    let value = match shape {
        "bulk" => seed001(),
        // The bench's other bulk value: 30,800 letters, about 160:1 under zlib level 6.
        "letters" => (0..30_800usize)
            .map(|i| b'a' + ((i * 7 + i / 13) % 26) as u8)
            .collect(),
        _ => vec![b'v'; 40],
    };
    let keys: Vec<String> = (0..k.max(1))
        .map(|i| format!("rc{}:{i}", &shape[..1]))
        .collect();
    for key in &keys {
        c.set(key, &value, 0).expect("set");
    }
    // `set`: these items, stored with one `set_multi` a call.
    let items: Vec<(String, Vec<u8>)> = keys.iter().map(|k| (k.clone(), value.clone())).collect();
    // THREADS=t: t threads share the client, each making N calls (glibc gives each its own
    // arena, which returns freed memory to the system differently from the main one).
    let threads: usize = std::env::var("THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    // Each thread warms up (connections, its scratch, its heap arena), then all measure.
    let warm = std::sync::Barrier::new(threads + 1);
    let go = std::sync::Barrier::new(threads + 1);
    let (found, (a0, b0, f0), (a1, b1, f1)) = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    calls(&c, mode, &keys, &items, 20);
                    warm.wait();
                    go.wait();
                    calls(&c, mode, &keys, &items, n)
                })
            })
            .collect();
        warm.wait();
        let before = (ALLOCS.load(Relaxed), BYTES.load(Relaxed), minflt());
        go.wait();
        let found: usize = hs.into_iter().map(|h| h.join().unwrap()).sum();
        let after = (ALLOCS.load(Relaxed), BYTES.load(Relaxed), minflt());
        (found, before, after)
    });
    let n = n * threads;
    let per = |x: f64| x / n as f64;
    println!(
        "mode={mode} keys={k} calls={n} value={} found={found} allocs/call={:.1} bytes/call={:.0} minflt/call={:.2}",
        shape,
        per((a1 - a0) as f64),
        per((b1 - b0) as f64),
        per((f1 - f0) as f64)
    );
}
