//! Large pipelined batches against a real memcached: the client reads replies while it is
//! still writing the batch, so a batch larger than both sockets' buffers completes instead
//! of stalling until the I/O timeout (memcached stops reading a client that does not read
//! its replies). Every protocol, every multi-key operation.
mod common;

use common::{unique, Memcached};
use mcpool::sink::Callbacks;
use mcpool::{Client, Protocol, StoreOutcome};
use std::time::{Duration, Instant};

/// Well above the sockets' buffers on every protocol (400k sets are ~12 MB of requests on
/// meta; 200k binary GETKQs ~6 MB of requests and as much of replies).
const SETS: usize = 400_000;
const GETS: usize = 200_000;
/// Generous: a debug build of 400k sets on a loaded 2-core machine took 4.9 s (CI with other
/// builds running); a stall waits a whole I/O timeout and counts a timeout (`healthy`).
const IO_TIMEOUT: Duration = Duration::from_secs(12);

fn client(mc: &Memcached, protocol: Protocol) -> Client {
    Client::builder()
        .server(&mc.addr())
        .protocol(protocol)
        .key_prefix(unique("b"))
        .io_timeout(IO_TIMEOUT)
        .operation_timeout(Some(Duration::from_secs(60)))
        .build()
        .unwrap()
}

/// Runs `f`, failing when it took as long as an I/O timeout: a healthy local memcached
/// does any of these batches in well under a second; a stalled one takes a whole timeout.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    let took = started.elapsed();
    assert!(took < IO_TIMEOUT, "{what} took {took:?} (a stall)");
    out
}

fn healthy(c: &Client, p: Protocol) {
    let st = &c.server_states()[0];
    assert!(st.alive && st.failures == 0, "{p}: {st:?}");
    let m = &c.metrics()[0];
    assert_eq!((m.timeouts, m.io_errors), (0, 0), "{p}: {m:?}");
}

#[test]
fn large_set_and_get_multi_complete_on_every_protocol() {
    // Room for every item: 400k small items need about 60 MB with memcached's overhead.
    let mc = Memcached::start(&["-m", "512"]);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = client(&mc, p);
        let items: Vec<(String, String)> = (0..SETS)
            .map(|i| (format!("k{i}"), format!("v{i}")))
            .collect();
        let stored = timed(&format!("{p} set_multi"), || c.set_multi(&items, 0));
        assert_eq!(stored.len(), SETS);
        for (i, r) in stored.iter().enumerate() {
            assert!(matches!(r, Ok(StoreOutcome::Stored)), "{p} item {i}: {r:?}");
        }
        // Half hits (the first GETS/2 keys), half misses, interleaved.
        let keys: Vec<String> = (0..GETS)
            .map(|i| {
                if i % 2 == 0 {
                    format!("k{}", i / 2)
                } else {
                    format!("absent{i}")
                }
            })
            .collect();
        let got = timed(&format!("{p} get_multi"), || c.get_multi(&keys));
        assert_eq!(got.len(), GETS);
        for (i, r) in got.iter().enumerate() {
            let r = r.as_ref().unwrap_or_else(|e| panic!("{p} key {i}: {e}"));
            if i % 2 == 0 {
                let v = format!("v{}", i / 2);
                assert_eq!(
                    r.as_ref().map(|it| &it.value[..]),
                    Some(v.as_bytes()),
                    "{p} key {i}"
                );
            } else {
                assert!(r.is_none(), "{p} key {i}");
            }
        }
        // All hits: as many value bytes back as requests out.
        let all: Vec<&str> = items[..GETS].iter().map(|(k, _)| k.as_str()).collect();
        let got = timed(&format!("{p} get_multi hits"), || c.get_multi(&all));
        for (i, r) in got.iter().enumerate() {
            let v = format!("v{i}");
            let r = r.as_ref().unwrap_or_else(|e| panic!("{p} key {i}: {e}"));
            assert_eq!(
                r.as_ref().map(|it| &it.value[..]),
                Some(v.as_bytes()),
                "{p} key {i}"
            );
        }
        healthy(&c, p);
    }
}

#[test]
fn large_arith_touch_and_delete_multi_complete_on_every_protocol() {
    let mc = Memcached::start(&["-m", "512"]);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = client(&mc, p);
        let items: Vec<(String, String)> = (0..SETS)
            .map(|i| (format!("n{i}"), "0".to_string()))
            .collect();
        assert!(timed(&format!("{p} set_multi"), || c.set_multi(&items, 0))
            .iter()
            .all(|r| matches!(r, Ok(StoreOutcome::Stored))));
        // Not idempotent: each counter must be incremented exactly once, and say so.
        let incr: Vec<(&str, u64)> = items.iter().map(|(k, _)| (k.as_str(), 1)).collect();
        let counted = timed(&format!("{p} incr_multi"), || c.arith_multi(true, &incr));
        for (i, r) in counted.iter().enumerate() {
            assert_eq!(r.as_ref().ok(), Some(&Some(1)), "{p} item {i}: {r:?}");
        }
        let touch: Vec<(&str, u32)> = items.iter().map(|(k, _)| (k.as_str(), 3600)).collect();
        let touched = timed(&format!("{p} touch_multi"), || c.touch_multi(&touch));
        assert!(touched.iter().all(|r| matches!(r, Ok(true))), "{p}");
        let keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
        let deleted = timed(&format!("{p} delete_multi"), || c.delete_multi(&keys));
        assert!(deleted.iter().all(|r| matches!(r, Ok(true))), "{p}");
        // Spot checks on the server's side.
        for i in [0, SETS / 2, SETS - 1] {
            assert_eq!(c.get(keys[i]).unwrap(), None, "{p} {i}");
        }
        healthy(&c, p);
    }
}

/// get-and-touch of many keys: memcached reads a line longer than 1,024 bytes only for `get`
/// and `gets`, and resets the connection for any other (tester finding limits 1: 1,100 keys
/// in one text `gat` line reset it, and the healthy server was marked dead). On every
/// protocol, `gat` and `gats` of short and of 250-byte keys, hits and misses interleaved,
/// answer every key with its own value, and the server stays healthy.
#[test]
fn gat_of_many_keys_answers_every_key_on_every_protocol() {
    let mc = Memcached::start(&[]);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .build()
            .unwrap();
        // 1,100 keys of 15 bytes were one 17,609-byte line; 250 bytes is the longest key
        for key_len in [24, 250] {
            let tag = unique("g");
            let width = key_len - tag.len();
            let key = |i: usize| format!("{tag}{i:0width$}");
            let items: Vec<(String, String)> =
                (0..2_000).map(|i| (key(i), format!("v{i}"))).collect();
            assert!(c
                .set_multi(&items, 0)
                .iter()
                .all(|r| matches!(r, Ok(StoreOutcome::Stored))));
            // hits at even places, misses at odd ones
            let keys: Vec<String> = (0..3_000)
                .map(|i| {
                    if i % 2 == 0 {
                        key(i / 2)
                    } else {
                        key(10_000 + i)
                    }
                })
                .collect();
            for cas in [false, true] {
                let mut got: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
                let mut errors = Vec::new();
                c.read(
                    &keys[..],
                    cas,
                    Some(3600),
                    &mut Callbacks(
                        |i, v: &[u8], _, _| {
                            got[i] = Some(v.to_vec());
                            Ok(())
                        },
                        |i, r| {
                            if let Err(e) = r {
                                errors.push((i, e))
                            }
                        },
                    ),
                );
                let what = format!(
                    "{p} gat (cas {cas}) of {} keys of {key_len} bytes",
                    keys.len()
                );
                assert!(
                    errors.is_empty(),
                    "{what}: {:?}",
                    &errors[..errors.len().min(3)]
                );
                for (i, v) in got.iter().enumerate() {
                    let want = (i % 2 == 0).then(|| format!("v{}", i / 2).into_bytes());
                    assert_eq!(v, &want, "{what}: key {i}");
                }
            }
            healthy(&c, p);
        }
    }
}
