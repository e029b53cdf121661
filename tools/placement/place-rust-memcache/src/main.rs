//! Prints placement fixture cases (tests/fixtures/placement/cases.txt's format) for the Rust
//! `memcache` crate 0.21: each key's server index as that crate picks it,
//! `(client.hash_function)(key) as usize % servers` (its `get_connection`), with the
//! `hash_function` a `Client` is built with (its `default_hash_function`).
//!
//! Usage: place-rust-memcache KEYS_FILE MEMCACHED_ADDR  (one reachable memcached: the crate
//! connects when a client is built; the placement needs no more servers than that one).
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let keys = std::fs::read_to_string(&args[1]).expect("keys file");
    let client = memcache::Client::connect(format!("memcache://{}", args[2])).expect("connect");
    let hash = client.hash_function;
    let mut out = std::io::stdout().lock();
    for n in [1usize, 2, 3, 5, 10] {
        let servers: Vec<String> = (1..=n)
            .map(|i| format!("127.77.{n}.{i}:{}", 11211 + if i % 2 == 0 { 88 + i } else { 0 }))
            .collect();
        let expect: String = keys
            .lines()
            .filter(|k| !k.is_empty())
            .map(|k| char::from_digit((hash(k) as usize % n) as u32, 36).unwrap())
            .collect();
        writeln!(out, "case rust-memcache").unwrap();
        writeln!(out, "library Rust memcache 0.21.0").unwrap();
        writeln!(out, "servers {}", servers.join(" ")).unwrap();
        writeln!(out, "expect {expect}").unwrap();
        writeln!(out, "end").unwrap();
    }
}
