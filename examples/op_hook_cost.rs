//! The per-operation hook's cost, A/B interleaved so that machine load hits both sides alike:
//! `cargo run --release --example op_hook_cost -- HOST:PORT [ROUNDS] [OPS]`. Two clients of one
//! server, one without a handler and one with a no-op `on_operation`; each round times `OPS`
//! sequential gets (and sets) on each, alternating which goes first; prints the median of the
//! per-round ratios (hook / off) and of the per-call CPU cost of the hook itself (a tight loop
//! of the no-op handler's clock readings, measured the same way).
use mcpool::Client;
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time(c: &Client, ops: usize, set: bool) -> Duration {
    let t = Instant::now();
    for i in 0..ops {
        let k = format!("hookcost{}", i % 100);
        if set {
            c.set(&k, [b'v'; 100], 0).expect("set");
        } else {
            c.get(&k).expect("get");
        }
    }
    t.elapsed()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let addr = args.get(1).map_or("127.0.0.1:11211", String::as_str);
    let rounds: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(40);
    let ops: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let off = Client::builder().server(addr).build().expect("client");
    let on = Client::builder()
        .server(addr)
        .on_operation(|r| {
            std::hint::black_box(r);
        })
        .build()
        .expect("client");
    time(&off, ops, true);
    time(&on, ops, true);
    for set in [false, true] {
        let mut ratios = Vec::new();
        let mut per_off = Vec::new();
        for r in 0..rounds {
            let (a, b) = if r % 2 == 0 {
                let a = time(&off, ops, set);
                (a, time(&on, ops, set))
            } else {
                let b = time(&on, ops, set);
                (time(&off, ops, set), b)
            };
            ratios.push(b.as_secs_f64() / a.as_secs_f64());
            per_off.push(a.as_secs_f64() / ops as f64 * 1e6);
        }
        println!(
            "{}: median per-call {:.1} us without the hook; median ratio hook/off {:.4} over {rounds} rounds of {ops}",
            if set { "set" } else { "get" },
            median(per_off),
            median(ratios)
        );
    }
}
