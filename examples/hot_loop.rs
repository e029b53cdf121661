//! A fixed amount of client work against one server, for profilers (callgrind, perf, strace):
//! `cargo run --release --example hot_loop -- HOST:PORT [single|multi500|each500|set] [N] [text|meta|binary]`
//! (value size: `VALUE_SIZE`, default 100 bytes).
use mcpool::Client;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let addr = args.get(1).map_or("127.0.0.1:11211", String::as_str);
    let what = args.get(2).map_or("single", String::as_str);
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let protocol = args
        .get(4)
        .map_or(Ok(mcpool::Protocol::Text), |p| p.parse())
        .expect("protocol");
    let c = Client::builder()
        .server(addr)
        .protocol(protocol)
        .build()
        .expect("client");
    let keys: Vec<String> = (0..500).map(|i| format!("hot{i}")).collect();
    let size: usize = std::env::var("VALUE_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let value = vec![b'v'; size];
    for k in &keys {
        c.set(k, &value, 0).expect("set");
    }
    let mut found = 0usize;
    for i in 0..n {
        match what {
            "single" => found += c.get(&keys[i % 500]).expect("get").is_some() as usize,
            "set" => found += c.set(&keys[i % 500], &value, 0).expect("set").is_stored() as usize,
            "each500" => {
                c.get_multi_each(&keys, |_, v, _| found += v.len());
            }
            _ => {
                found += c
                    .get_multi(&keys)
                    .into_iter()
                    .filter(|r| matches!(r, Ok(Some(_))))
                    .count()
            }
        }
    }
    println!("{found}");
}
