//! The integration tests' harness: the workspace's test kit (`testkit/`).
#![allow(dead_code, unused_imports)]

pub use mcpool_testkit::*;

/// A client of one fake server (testkit's `fake`): one pooled connection at most, none opened
/// in the background, so every call reuses the previous call's connection unless it was
/// dropped (then it opens a new one); never marked dead; a 3 s I/O timeout.
pub fn fake_client(addr: &str, p: mcpool::Protocol) -> mcpool::Client {
    mcpool::Client::builder()
        .server(addr)
        .protocol(p)
        .min_idle(0)
        .max_size(1)
        .failure_limit(1000)
        .io_timeout(std::time::Duration::from_secs(3))
        .build()
        .unwrap()
}

/// `curr_connections` of one memcached, read with a connection of its own (counted in it).
pub fn curr_connections(mc: &Memcached) -> u64 {
    let probe = mcpool::Client::builder()
        .server(&mc.addr())
        .min_idle(0)
        .max_size(1)
        .build()
        .unwrap();
    let stats = probe.stats(None).remove(0).1.unwrap();
    stats
        .iter()
        .find(|(k, _)| k == "curr_connections")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap()
}

/// `get(key)` on `n` threads at once (a barrier lets them all go together), each thread's
/// result in order: callers that arrive while a server's state is changing.
pub fn gets_at_once(
    c: &mcpool::Client,
    key: &str,
    n: usize,
) -> Vec<mcpool::Result<Option<Vec<u8>>>> {
    let start = std::sync::Arc::new(std::sync::Barrier::new(n));
    let callers: Vec<_> = (0..n)
        .map(|_| {
            let (c, start, key) = (c.clone(), start.clone(), key.to_owned());
            std::thread::spawn(move || {
                start.wait();
                c.get(&key)
            })
        })
        .collect();
    callers.into_iter().map(|t| t.join().unwrap()).collect()
}
