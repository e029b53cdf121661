//! Load loops shared by the in-process contestants: timed sequential loops with slices, and
//! the multi-threaded mix with latency percentiles.

use super::stats::percentile_sorted;
use super::work::Reply;
use std::time::Instant;

/// A small, fast per-thread random number generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    /// Seeded from the thread index.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) % n.max(1)
    }
}

/// Runs `op(i)` for `i` in `0..n`, timing the whole and every `slice` operations.
/// `op` returns false for a failed operation.
pub fn seq(n: u64, slice: u64, mut op: impl FnMut(u64) -> bool) -> Reply {
    let slice = slice.max(1);
    let mut errors = 0;
    let mut slices = Vec::with_capacity((n / slice + 1) as usize);
    let start = Instant::now();
    let mut mark = start;
    for i in 0..n {
        if !op(i) {
            errors += 1;
        }
        if (i + 1) % slice == 0 {
            let now = Instant::now();
            slices.push((now - mark).as_nanos() as u64);
            mark = now;
        }
    }
    Reply {
        ns: start.elapsed().as_nanos() as u64,
        errors,
        slices,
        ..Reply::default()
    }
}

/// What one mixed operation was.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum MixOp {
    /// A get (or multi-get).
    Get,
    /// A set.
    Set,
}

/// Runs `threads` threads of `ops` operations each. `make(t)` builds a thread's state
/// (e.g. its connection) before the clock starts; `op(state, rng, kind)` does one
/// operation and returns false on failure. Chooses a get with probability `get_pct`%.
pub fn mix<S, M, F>(threads: u32, ops: u64, get_pct: u32, make: M, op: F) -> Result<Reply, String>
where
    M: Fn(u32) -> Result<S, String> + Sync,
    F: Fn(&mut S, &mut Rng, MixOp) -> bool + Sync,
{
    struct Out {
        start: Instant,
        end: Instant,
        lat: Vec<u32>,
        get_ns: u64,
        gets: u64,
        set_ns: u64,
        sets: u64,
        errors: u64,
    }
    let barrier = std::sync::Barrier::new(threads as usize + 1);
    let (outs, ns) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (barrier, make, op) = (&barrier, &make, &op);
                std::thread::Builder::new()
                    .stack_size(256 * 1024)
                    .spawn_scoped(s, move || -> Result<Out, String> {
                        let state = make(t);
                        barrier.wait();
                        let mut state = state?;
                        let mut rng = Rng::new(u64::from(t) + 1);
                        let mut o = Out {
                            start: Instant::now(),
                            end: Instant::now(),
                            lat: Vec::with_capacity(ops as usize),
                            get_ns: 0,
                            gets: 0,
                            set_ns: 0,
                            sets: 0,
                            errors: 0,
                        };
                        for _ in 0..ops {
                            let kind = if rng.below(100) < u64::from(get_pct) {
                                MixOp::Get
                            } else {
                                MixOp::Set
                            };
                            let t0 = Instant::now();
                            let ok = op(&mut state, &mut rng, kind);
                            let d = t0.elapsed().as_nanos() as u64;
                            o.lat.push(d.min(u64::from(u32::MAX)) as u32);
                            if kind == MixOp::Get {
                                o.get_ns += d;
                                o.gets += 1;
                            } else {
                                o.set_ns += d;
                                o.sets += 1;
                            }
                            if !ok {
                                o.errors += 1;
                            }
                        }
                        o.end = Instant::now();
                        Ok(o)
                    })
                    .expect("spawn bench thread")
            })
            .collect();
        // The wall time runs from the first worker's start to the last one's end (the main
        // thread may be scheduled late on a busy CPU, so its own clock could miss the start).
        let before = Instant::now();
        barrier.wait();
        let outs: Vec<Result<Out, String>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("thread panicked".into())))
            .collect();
        let first = outs
            .iter()
            .filter_map(|o| o.as_ref().ok().map(|o| o.start))
            .min()
            .unwrap_or(before);
        let last = outs
            .iter()
            .filter_map(|o| o.as_ref().ok().map(|o| o.end))
            .max()
            .unwrap_or(first);
        (outs, (last - first).as_nanos() as u64)
    });
    let mut lat = Vec::with_capacity((u64::from(threads) * ops) as usize);
    let (mut get_ns, mut gets, mut set_ns, mut sets, mut errors) = (0, 0, 0, 0, 0);
    for o in outs {
        let o = o?;
        lat.extend_from_slice(&o.lat);
        get_ns += o.get_ns;
        gets += o.gets;
        set_ns += o.set_ns;
        sets += o.sets;
        errors += o.errors;
    }
    lat.sort_unstable();
    let p = |q: f64| percentile_sorted(&lat, q) / 1000.0;
    Ok(Reply {
        ns,
        errors,
        slices: vec![],
        lat_us: Some([p(50.0), p(99.0), p(99.9)]),
        get_us: (gets > 0).then(|| get_ns as f64 / gets as f64 / 1000.0),
        set_us: (sets > 0).then(|| set_ns as f64 / sets as f64 / 1000.0),
    })
}
