//! mcpool bench peer: the Rust `memcache` crate (protocol: ../../PROTOCOL.md).
//! usage: mcpool-bench-rust-memcache HOST:PORT binary|ascii
//! Configuration: its defaults (TCP_NODELAY on; r2d2 pool that checks each connection on
//! checkout), `with_max_pool_size(POOL)` for threads, one client shared by every thread; it has
//! no compression and cannot set flags, so bulk values are zlib'd here (flate2 at
//! `Compression::default()`, level 6, what a user of the crate would write) and inflated on every
//! read.
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use std::io::{BufRead, Read, Write};
use std::sync::{Arc, Barrier};
use std::time::Instant;

fn value(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + ((i * 7 + i / 13) % 26) as u8).collect()
}

/// The value of PROTOCOL.md by kind: `letters`, or `digits` ("0 1 2 3 ...", cut at n).
fn value_of(n: usize, kind: Option<&str>) -> Result<Vec<u8>, String> {
    match kind {
        Some("letters") => Ok(value(n)),
        Some("digits") => {
            let mut v = Vec::with_capacity(n + 12);
            let mut i = 0u64;
            while v.len() < n {
                let _ = write!(v, "{i} ");
                i += 1;
            }
            v.truncate(n);
            Ok(v)
        }
        other => Err(format!("err unknown value kind {}", other.unwrap_or("(none)"))),
    }
}

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % n.max(1)
    }
}

fn client(url: &str, pool: u32) -> memcache::Client {
    memcache::Client::builder()
        .add_server(url)
        .and_then(|b| b.with_max_pool_size(pool.max(1)).build())
        .expect("memcache client")
}

fn set(c: &memcache::Client, k: &str, v: &[u8], compress: bool) -> bool {
    if compress && v.len() >= 30 * 1024 {
        let mut e = ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        let _ = e.write_all(v);
        let packed = e.finish().unwrap_or_default();
        // The crate cannot set flags: bulk values are all compressed, and inflated on read.
        c.set(k, packed.as_slice(), 0).is_ok()
    } else {
        c.set(k, v, 0).is_ok()
    }
}

fn inflate_ok(data: &[u8], compressed: bool) -> bool {
    if !compressed {
        return true;
    }
    let mut out = Vec::new();
    ZlibDecoder::new(data).read_to_end(&mut out).is_ok()
}

fn pct(s: &[u64], q: f64) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let i = ((q / 100.0 * s.len() as f64 - 1e-9).ceil() as usize).clamp(1, s.len()) - 1;
    s[i] as f64 / 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = format!(
        "memcache://{}?protocol={}",
        args[1],
        args.get(2).map(String::as_str).unwrap_or("binary")
    );
    let c = client(&url, 1);
    println!("ready rust memcache crate 0.21 ({})", url);
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        let n = |i: usize| w.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        let out = match w[0] {
            "quit" => break,
            "seq" => {
                let (op, count, size, prefix, slice) = (w[1], n(2), n(3) as usize, w[4], n(5));
                let v = value(size);
                let keys: Vec<String> = (0..count).map(|i| format!("{prefix}{i}")).collect();
                let (mut errors, mut slices) = (0u64, vec![]);
                let t0 = Instant::now();
                let mut mark = t0;
                for (i, k) in keys.iter().enumerate() {
                    let ok = match op {
                        "set" => c.set(k, v.as_slice(), 0).is_ok(),
                        "add" => c.add(k, v.as_slice(), 0).is_ok(),
                        "replace" => c.replace(k, v.as_slice(), 0).is_ok(),
                        "get" => matches!(c.get::<Vec<u8>>(k), Ok(Some(_))),
                        _ => matches!(c.delete(k), Ok(true)),
                    };
                    if !ok {
                        errors += 1;
                    }
                    if slice > 0 && (i as u64 + 1) % slice == 0 {
                        let t = Instant::now();
                        slices.push((t - mark).as_nanos().to_string());
                        mark = t;
                    }
                }
                let mut o = format!("ok ns={} errors={errors}", t0.elapsed().as_nanos());
                if !slices.is_empty() {
                    o += &format!(" slices={}", slices.join(","));
                }
                o
            }
            "mget" => {
                let (k, calls, prefix) = (n(1), n(2), w[3]);
                let keys: Vec<String> = (0..k).map(|i| format!("{prefix}{i}")).collect();
                let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
                let mut errors = 0;
                let t0 = Instant::now();
                for _ in 0..calls {
                    match c.gets::<Vec<u8>>(&refs) {
                        Ok(m) if m.len() as u64 == k => {}
                        _ => errors += 1,
                    }
                }
                format!("ok ns={} errors={errors}", t0.elapsed().as_nanos())
            }
            "fill" => 'fill: {
                let v = match value_of(n(2) as usize, w.get(5).copied()) {
                    Ok(v) => v,
                    Err(e) => break 'fill e,
                };
                let (ks, comp, prefix) = (n(1), n(3) == 1, w[4]);
                let mut errors = 0;
                let t0 = Instant::now();
                for i in 0..ks {
                    if !set(&c, &format!("{prefix}{i}"), &v, comp) {
                        errors += 1;
                    }
                }
                format!("ok ns={} errors={errors}", t0.elapsed().as_nanos())
            }
            "mix" => mix(&url, &w),
            other => format!("err unknown command {other}"),
        };
        println!("{out}");
        let _ = std::io::stdout().flush();
    }
}

fn mix(url: &str, w: &[&str]) -> String {
    let n = |i: usize| w.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    let (threads, ops, keyspace, getpct, mget, pool, comp) =
        (n(1), n(2), n(4), n(5), n(6), n(7) as u32, n(8) == 1);
    let v = match value_of(n(3) as usize, w.get(10).copied()) {
        Ok(v) => Arc::new(v),
        Err(e) => return e,
    };
    let prefix = w[9].to_string();
    let c = Arc::new(client(url, pool));
    let barrier = Arc::new(Barrier::new(threads as usize + 1));
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (c, v, b, prefix) = (c.clone(), v.clone(), barrier.clone(), prefix.clone());
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || {
                    let mut rng = Rng((t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
                    let mut lat = Vec::with_capacity(ops as usize);
                    let mut sums = [0u64; 5];
                    b.wait();
                    let started = Instant::now();
                    for _ in 0..ops {
                        let get = rng.below(100) < getpct;
                        let first = rng.below(keyspace);
                        let t0 = Instant::now();
                        let ok = if get && mget > 1 {
                            let keys: Vec<String> =
                                (0..mget).map(|j| format!("{prefix}{}", (first + j) % keyspace)).collect();
                            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
                            match c.gets::<Vec<u8>>(&refs) {
                                Ok(m) => m.len() as u64 == mget && m.values().all(|d| inflate_ok(d, comp)),
                                Err(_) => false,
                            }
                        } else if get {
                            matches!(c.get::<Vec<u8>>(&format!("{prefix}{first}")), Ok(Some(_)))
                        } else {
                            set(&c, &format!("{prefix}{first}"), &v, comp)
                        };
                        let d = t0.elapsed().as_nanos() as u64;
                        lat.push(d);
                        if get {
                            sums[0] += d;
                            sums[1] += 1;
                        } else {
                            sums[2] += d;
                            sums[3] += 1;
                        }
                        if !ok {
                            sums[4] += 1;
                        }
                    }
                    (lat, sums, started, Instant::now())
                })
                .expect("spawn")
        })
        .collect();
    barrier.wait();
    let results: Vec<_> = hs.into_iter().map(|h| h.join().expect("thread")).collect();
    // From the first worker's start to the last one's end: this thread may run long after the
    // barrier opens.
    let first = results.iter().map(|r| r.2).min();
    let last = results.iter().map(|r| r.3).max();
    let ns = match (first, last) {
        (Some(f), Some(l)) => l.duration_since(f).as_nanos(),
        _ => 0,
    };
    let mut all = vec![];
    let mut tot = [0u64; 5];
    for (lat, s, _, _) in results {
        all.extend(lat);
        for i in 0..5 {
            tot[i] += s[i];
        }
    }
    all.sort_unstable();
    let mut o = format!(
        "ok ns={ns} errors={} lat={:.1},{:.1},{:.1}",
        tot[4],
        pct(&all, 50.0),
        pct(&all, 99.0),
        pct(&all, 99.9)
    );
    if tot[1] > 0 {
        o += &format!(" get_us={:.2}", tot[0] as f64 / 1000.0 / tot[1] as f64);
    }
    if tot[3] > 0 {
        o += &format!(" set_us={:.2}", tot[2] as f64 / 1000.0 / tot[3] as f64);
    }
    o
}
