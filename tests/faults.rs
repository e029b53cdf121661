//! The fault-injection suite: under any fault a caller gets its own value, a miss, or a clear
//! error — never another key's value, never a hang past its deadline, never a panic.
mod common;

use common::fake::{fake, get_key, value_reply, Then};
use common::{unique, Memcached};
use mcpool::{Client, Error};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn client(addr: &str) -> Client {
    // The fakes send arbitrary flags: read them raw (bytes only, flags uninterpreted).
    Client::builder()
        .server(addr)
        .value_format(mcpool::ValueFormat::Libmemcached)
        .min_idle(0)
        .failure_limit(1000)
        .io_timeout(Duration::from_millis(500))
        .operation_timeout(Some(Duration::from_secs(2)))
        .build()
        .unwrap()
}

/// A call's result must be an error (the fake never sends a correct reply).
fn expect_error(what: &str, r: mcpool::Result<Option<Vec<u8>>>) -> Error {
    match r {
        Err(e) => e,
        Ok(v) => panic!("{what}: expected an error, got {v:?}"),
    }
}

#[test]
fn a_reply_for_another_key_is_refused() {
    let (addr, _) = fake(8, |_, line, w| {
        let _ = w.write_all(&value_reply(&format!("{}-other", get_key(line)), b"theirs"));
        Then::Continue
    });
    let c = client(&addr);
    let e = expect_error("crossed", c.get("mine"));
    assert!(matches!(e, Error::Protocol { .. }), "{e}");
    assert!(e.to_string().contains("not asked for"), "{e}");
    for r in c.get_multi(&["a", "b"]) {
        assert!(matches!(r, Err(Error::Protocol { .. })), "{r:?}");
    }
}

#[test]
fn truncated_and_short_replies_are_errors() {
    let cases: Vec<&'static [u8]> = vec![
        b"VALUE mine 0 5",              // truncated header, then close
        b"VALUE mine 0 10\r\nshort",    // fewer bytes than announced, then close
        b"VALUE mine 0 5\r\nabcde",     // no terminator, then close
        b"VALUE mine 0 5\r\nabcde\r\n", // no END, then close
    ];
    for reply in cases {
        let (addr, _) = fake(4, move |_, _, w| {
            let _ = w.write_all(reply);
            Then::Close
        });
        let e = expect_error(&String::from_utf8_lossy(reply), client(&addr).get("mine"));
        assert!(matches!(e, Error::Io { .. }), "{e}");
    }
}

/// The error says whether the server closed before its reply or in the middle of it
/// (tester finding tlssasl 2: "mid-reply" for a server that sent no byte of it).
#[test]
fn a_close_before_the_reply_is_not_called_mid_reply() {
    for (reply, want) in [
        (&b""[..], "closed the connection before its reply"),
        (b"VALUE mine 0 5\r\nab", "closed the connection mid-reply"),
    ] {
        let (addr, _) = fake(4, move |_, _, w| {
            let _ = w.write_all(reply);
            Then::Close
        });
        let c = client(&addr);
        let e = expect_error("closed", c.get("mine"));
        assert!(e.to_string().contains(want), "{e}");
        // The same on a connection that answered before (its bytes are not this reply's).
        let (addr, _) = fake(4, move |_, line, w| {
            if line.starts_with(b"version") {
                let _ = w.write_all(b"VERSION 1.6.0\r\n");
                return Then::Continue;
            }
            let _ = w.write_all(reply);
            Then::Close
        });
        let c = client(&addr);
        c.noop().into_iter().for_each(|(_, r)| r.unwrap());
        let e = expect_error("closed after an answer", c.get("mine"));
        assert!(e.to_string().contains(want), "{e}");
    }
}

#[test]
fn closing_at_every_byte_offset_never_yields_a_value() {
    let full = value_reply("mine", b"the right value");
    for cut in 0..full.len() {
        let prefix = full[..cut].to_vec();
        let (addr, _) = fake(2, move |_, _, w| {
            let _ = w.write_all(&prefix);
            Then::Close
        });
        let r = client(&addr).get("mine");
        assert!(r.is_err(), "cut at {cut}: {r:?}");
    }
}

#[test]
fn server_errors_and_garbage() {
    let (addr, _) = fake(4, |_, _, w| {
        let _ = w.write_all(b"SERVER_ERROR out of memory storing object\r\n");
        Then::Continue
    });
    match client(&addr).get("k") {
        Err(Error::Server { message, .. }) => assert!(message.contains("out of memory")),
        other => panic!("{other:?}"),
    }
    // in place of a multi-get's reply (a proxy failing the whole batch for one backend): each
    // key's error says the reply to all of them ended so, not as the key's own failure
    // (tester finding twemproxy 3); a value read before it fails too, with the request
    let (addr, _) = fake(4, |_, _, w| {
        let _ = w.write_all(b"VALUE a 0 1\r\n1\r\nSERVER_ERROR Connection timed out\r\n");
        Then::Continue
    });
    for r in client(&addr).get_multi(&["a", "b", "c"]) {
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains(
                "SERVER_ERROR Connection timed out (it ended the reply to a get of 3 keys: each \
                 of them failed with it)"
            ),
            "{e}"
        );
    }
    let (addr, _) = fake(4, |_, _, w| {
        let _ = w.write_all(b"\x00\xff\x13garbage\r\n");
        Then::Continue
    });
    let e = expect_error("garbage", client(&addr).get("k"));
    assert!(matches!(e, Error::Protocol { .. }), "{e}");
    let (addr, _) = fake(4, |_, _, w| {
        let _ = w.write_all(b"VALUE k 0 99999999999\r\n");
        Then::Continue
    });
    let e = expect_error("huge length", client(&addr).get("k"));
    assert!(e.to_string().contains("above the limit"), "{e}");
    // the client's limit, named with the option that raises it (tester finding bigvalues 3)
    assert!(e.to_string().contains("raise max_value_size"), "{e}");
}

#[test]
fn an_endless_stream_is_cut_off() {
    // A line that never ends: refused after MAX_LINE bytes, not buffered forever.
    let (addr, _) = fake(2, |_, _, w| {
        let chunk = [b'x'; 4096];
        for _ in 0..10_000 {
            if w.write_all(&chunk).is_err() {
                break;
            }
        }
        Then::Close
    });
    let start = Instant::now();
    let e = expect_error("endless", client(&addr).get("k"));
    assert!(e.to_string().contains("too long"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_trickling_reply_ends_at_the_operation_deadline() {
    // Each byte arrives within the I/O timeout, but the whole reply would take 20 s.
    let (addr, _) = fake(2, |_, _, w| {
        let _ = w.write_all(b"VALUE k 0 200\r\n");
        for _ in 0..200 {
            std::thread::sleep(Duration::from_millis(100));
            if w.write_all(b"x").is_err() {
                break;
            }
        }
        Then::Close
    });
    let c = Client::builder()
        .server(&addr)
        .min_idle(0)
        .io_timeout(Duration::from_secs(1))
        .operation_timeout(Some(Duration::from_millis(600)))
        .build()
        .unwrap();
    let start = Instant::now();
    let e = expect_error("trickle", c.get("k"));
    let took = start.elapsed();
    assert!(matches!(e, Error::IoTimeout { .. }), "{e}");
    assert!(
        took >= Duration::from_millis(550) && took < Duration::from_millis(1500),
        "{took:?}"
    );
}

#[test]
fn pool_exhaustion_gives_pool_timeouts_and_returns_every_connection() {
    let mc = Memcached::start(&["-t", "2", "-c", "1024"]);
    // A pool of 4, a 20 ms pool wait, and 300 threads: most calls time out waiting.
    let c = Client::builder()
        .server(&mc.addr())
        .max_size(4)
        .pool_timeout(Duration::from_millis(20))
        .key_prefix(unique("exhaust"))
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    let (ok, pool_timeouts, other) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let start = Instant::now();
    let threads: Vec<_> = (0..300)
        .map(|_| {
            let (c, ok, pt, other) = (c.clone(), ok.clone(), pool_timeouts.clone(), other.clone());
            std::thread::spawn(move || {
                for _ in 0..20 {
                    match c.get("k") {
                        Ok(Some(v)) if v == b"v" => ok.fetch_add(1, Ordering::Relaxed),
                        Err(Error::PoolTimeout { .. }) => pt.fetch_add(1, Ordering::Relaxed),
                        _ => other.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(start.elapsed() < Duration::from_secs(60), "no deadlock");
    assert_eq!(
        other.load(Ordering::Relaxed),
        0,
        "only successes and pool timeouts"
    );
    assert!(ok.load(Ordering::Relaxed) > 0);
    let (open, idle) = c.pool_states()[0];
    assert!(open <= 4);
    assert_eq!(open, idle, "every connection returned");
    assert_eq!(
        c.metrics()[0].pool_timeouts as usize,
        pool_timeouts.load(Ordering::Relaxed)
    );
    // The server is not blamed for pool waits.
    assert!(c.server_states()[0].alive && c.server_states()[0].failures == 0);
}

/// Reads handed over to another caller's connection (32 readers on 2 connections) while
/// that connection breaks mid-batch: the read being answered gets the error, the rest go
/// back in line; every caller ends with its own value or an error, within its deadline.
#[test]
fn handed_over_reads_survive_a_connection_breaking_mid_batch() {
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    let (addr, _) = fake(10_000, move |_, line, w| {
        let key = get_key(line);
        if seen.fetch_add(1, Ordering::SeqCst) % 7 == 6 {
            return Then::Close; // drops every reply still owed on this connection
        }
        let _ = w.write_all(&value_reply(&key, format!("value of {key}").as_bytes()));
        Then::Continue
    });
    let c = Client::builder()
        .server(&addr)
        .max_size(2)
        .min_idle(0)
        .failure_limit(1_000_000)
        .io_timeout(Duration::from_millis(500))
        .pool_timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let (wrong, errors, hits) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
    );
    let start = Instant::now();
    let threads: Vec<_> = (0..32)
        .map(|t| {
            let (c, wrong, errors, hits) = (c.clone(), wrong.clone(), errors.clone(), hits.clone());
            std::thread::spawn(move || {
                for i in 0..50 {
                    let key = format!("t{t}-{i}");
                    match c.get(&key) {
                        Ok(Some(v)) if v == format!("value of {key}").as_bytes() => {
                            hits.fetch_add(1, Ordering::Relaxed);
                        }
                        Ok(other) => {
                            eprintln!("{key}: {other:?}");
                            wrong.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        wrong.load(Ordering::Relaxed),
        0,
        "a caller got another key's value"
    );
    let (hits, errors) = (hits.load(Ordering::Relaxed), errors.load(Ordering::Relaxed));
    assert_eq!(hits + errors, 32 * 50);
    assert!(hits > 0 && errors > 0, "hits {hits}, errors {errors}");
    assert!(c.metrics()[0].handed_over > 0, "no read was handed over");
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_multi_get_reply_written_one_byte_at_a_time_is_read_whole() {
    // Misses (b, d) are absent from the reply, as memcached sends it; e has the largest CAS
    // (20 digits). Every byte is its own write, so the reader sees the reply cut at many
    // places: inside headers, numbers, data and terminators.
    let (addr, _) = fake(4, |_, line, w| {
        assert!(line.starts_with(b"gets a b c d e"), "{line:?}");
        w.set_nodelay(true).unwrap();
        let reply = b"VALUE a 1 2 7\r\nva\r\nVALUE c 8 0 8\r\n\r\n\
                      VALUE e 65536 3 18446744073709551615\r\nv\re\r\nEND\r\n";
        for b in reply {
            if w.write_all(&[*b]).is_err() {
                return Then::Close;
            }
        }
        Then::Continue
    });
    let c = client(&addr);
    let got = c.gets_multi(&["a", "b", "c", "d", "e"]);
    let got: Vec<_> = got
        .into_iter()
        .map(|r| r.unwrap().map(|i| (i.value.into_vec(), i.flags, i.cas)))
        .collect();
    assert_eq!(
        got,
        [
            Some((b"va".to_vec(), 1, Some(7))),
            None,
            Some((vec![], 8, Some(8))),
            None,
            Some((b"v\re".to_vec(), 65536, Some(u64::MAX))),
        ]
    );
}

/// A multi-get reply cut off after some values (the server closes before `END`): every key
/// of that connection's batch gets the error, the ones whose small or large value came
/// included: a value from a reply that did not end is not trusted.
#[test]
fn a_multi_get_cut_after_some_values_gives_every_key_the_error() {
    let large = vec![b'L'; 5000];
    let mut reply = b"VALUE a 0 2\r\nva\r\n".to_vec();
    reply.extend_from_slice(format!("VALUE b 0 {}\r\n", large.len()).as_bytes());
    reply.extend_from_slice(&large);
    reply.extend_from_slice(b"\r\nVALUE c 0 2\r\nvc\r\n");
    let (addr, _) = fake(4, move |_, line, w| {
        assert!(line.starts_with(b"get a b c d"), "{line:?}");
        let _ = w.write_all(&reply);
        Then::Close
    });
    let got = client(&addr).get_multi(&["a", "b", "c", "d"]);
    assert_eq!(got.len(), 4);
    for (key, r) in ["a", "b", "c", "d"].iter().zip(&got) {
        assert!(matches!(r, Err(Error::Io { .. })), "{key}: {r:?}");
    }
}

#[test]
fn a_gets_reply_without_its_cas_field_is_refused() {
    // Answers `get`/`gets` for every key but the first, each hit without a CAS field: right
    // for `get`, a made-up version for `gets` (the general parser sees the hits after a miss,
    // the in-place loop the others).
    let (addr, _) = fake(8, |_, line, w| {
        let line = String::from_utf8_lossy(line);
        let keys: Vec<&str> = line.split_whitespace().skip(1).collect();
        let mut r = Vec::new();
        for k in keys.iter().skip(usize::from(keys.len() > 1)) {
            r.extend_from_slice(format!("VALUE {k} 0 3\r\nabc\r\n").as_bytes());
        }
        r.extend_from_slice(b"END\r\n");
        let _ = w.write_all(&r);
        Then::Continue
    });
    let c = client(&addr);
    assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"abc"[..]));
    let e = c.gets("k").expect_err("gets without a CAS field");
    assert!(matches!(e, Error::Protocol { .. }), "{e}");
    assert!(e.to_string().contains("without the CAS"), "{e}");
    for keys in [&["a", "b"][..], &["a", "b", "c"][..]] {
        let got = c.gets_multi(keys);
        assert!(got.iter().any(|r| r.is_err()), "{got:?}");
        for r in &got {
            assert!(!matches!(r, Ok(Some(_))), "a version made up: {r:?}");
        }
    }
    let plain = c.get_multi(&["a", "b", "c"]);
    assert!(matches!(plain[1], Ok(Some(_))), "{plain:?}");
}

/// Which values a fake sends for the keys of a `get` line, in what order.
type Order = fn(&[String]) -> Vec<String>;

/// Per key of a multi-key read: `Ok(Some(value))`, `Ok(None)` or its error.
type Results = Vec<mcpool::Result<Option<Vec<u8>>>>;

/// A fake that answers each text `get`/`gets` line with the values `order(keys)` lists, in
/// that order, each value its key's own name (with a CAS field for `gets`), then `END`.
fn answering_in(order: Order) -> String {
    let (addr, _) = fake(8, move |_, line, w| {
        let line = String::from_utf8_lossy(line);
        let mut words = line.split_whitespace();
        let cas = words.next() == Some("gets");
        let keys: Vec<String> = words.map(str::to_owned).collect();
        let mut r = Vec::new();
        for (i, k) in order(&keys).iter().enumerate() {
            let c = if cas {
                format!(" {}", 100 + i)
            } else {
                String::new()
            };
            r.extend_from_slice(format!("VALUE {k} 0 {}{c}\r\n{k}\r\n", k.len()).as_bytes());
        }
        r.extend_from_slice(b"END\r\n");
        let _ = w.write_all(&r);
        Then::Continue
    });
    addr
}

/// Every multi-key read path of the Rust API on `keys`: per path, each key's result as
/// `Ok(Some(value))`, `Ok(None)` or the error.
fn every_read_path(c: &Client, keys: &[String]) -> Vec<(&'static str, Results)> {
    let item = |r: mcpool::Result<Option<mcpool::Item>>| r.map(|o| o.map(|i| i.value.to_vec()));
    let plain = c.get_multi(keys).into_iter().map(item).collect();
    let gets = c.gets_multi(keys).into_iter().map(item).collect();
    let mut seen: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
    let each = c.get_multi_each(keys, |i, v, _| {
        assert!(seen[i].is_none(), "key {i} handed over twice");
        seen[i] = Some(v.to_vec());
    });
    let each = each
        .into_iter()
        .zip(seen)
        .map(|(r, v)| r.map(|hit| if hit { v } else { None }))
        .collect();
    vec![
        ("get_multi", plain),
        ("gets_multi", gets),
        ("get_multi_each", each),
    ]
}

/// A text value names its key: a proxy that reassembles a multi-get out of request order
/// (twemproxy does when a key misses) still gives every key its own value, on every read
/// path; a key asked for twice gets both its values.
#[test]
fn values_out_of_request_order_each_reach_their_own_key() {
    let keys: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
    let cases: [(&str, Order); 4] = [
        // Reversed, k4 a miss.
        ("reversed", |k| {
            k.iter().rev().filter(|k| *k != "k4").cloned().collect()
        }),
        // As twemproxy 0.5.0: ... k3 k5 k7 k6 ... (k4 a miss, k7 early), then in order.
        ("one early", |k| {
            let mut v: Vec<String> = k.iter().filter(|k| *k != "k4").cloned().collect();
            let i = v.iter().position(|x| x == "k7").unwrap();
            let k7 = v.remove(i);
            v.insert(4, k7);
            v
        }),
        // Swapped pairs, every one after a skip and a return.
        ("pairs", |k| {
            k.chunks(2)
                .flat_map(|p| p.iter().rev())
                .filter(|k| *k != "k4")
                .cloned()
                .collect()
        }),
        // The last first, then the rest in order.
        ("last first", |k| {
            let mut v: Vec<String> = k.iter().filter(|k| *k != "k4").cloned().collect();
            v.rotate_right(1);
            v
        }),
    ];
    for (what, order) in cases {
        let c = client(&answering_in(order));
        for (path, got) in every_read_path(&c, &keys) {
            for (k, r) in keys.iter().zip(got) {
                let want = (k != "k4").then(|| k.as_bytes().to_vec());
                assert_eq!(r.unwrap(), want, "{what}, {path}: {k}");
            }
        }
    }
    // 3,000 keys answered in reverse: one line, every key its own value.
    let many: Vec<String> = (0..3000).map(|i| format!("m{i}")).collect();
    let c = client(&answering_in(|k| k.iter().rev().cloned().collect()));
    for (path, got) in every_read_path(&c, &many) {
        for (k, r) in many.iter().zip(got) {
            assert_eq!(r.unwrap().as_deref(), Some(k.as_bytes()), "{path}: {k}");
        }
    }
    // A key asked for twice, its two values after the others.
    let twice: Vec<String> = ["a", "b", "a", "c"].iter().map(|s| s.to_string()).collect();
    let c = client(&answering_in(|_| {
        vec!["b".into(), "c".into(), "a".into(), "a".into()]
    }));
    for (path, got) in every_read_path(&c, &twice) {
        for (k, r) in twice.iter().zip(got) {
            assert_eq!(r.unwrap().as_deref(), Some(k.as_bytes()), "{path}: {k}");
        }
    }
}

/// Still refused, in any order: a second value for a key asked for once, a value for a key
/// not asked for. Every key of the request gets the protocol error, none a value.
#[test]
fn a_key_answered_twice_or_not_asked_for_is_refused_in_any_order() {
    let keys: Vec<String> = (0..6).map(|i| format!("k{i}")).collect();
    let cases: [(&str, Order, &str); 6] = [
        (
            "twice in order",
            |k| vec![k[0].clone(), k[1].clone(), k[1].clone()],
            "already answered",
        ),
        (
            "twice, the first again",
            |k| vec![k[0].clone(), k[1].clone(), k[0].clone()],
            "already answered",
        ),
        // After a value out of order (the key index is built).
        (
            "twice out of order",
            |k| vec![k[3].clone(), k[1].clone(), k[1].clone()],
            "already answered",
        ),
        (
            "twice after a skip",
            |k| vec![k[3].clone(), k[3].clone()],
            "already answered",
        ),
        (
            "not asked for",
            |k| vec![k[0].clone(), "zz".into()],
            "not asked for",
        ),
        (
            "not asked for, out of order",
            |k| vec![k[4].clone(), k[2].clone(), "zz".into()],
            "not asked for",
        ),
    ];
    for (what, order, why) in cases {
        let c = client(&answering_in(order));
        for (path, got) in every_read_path(&c, &keys) {
            for (k, r) in keys.iter().zip(got) {
                match r {
                    Err(e @ Error::Protocol { .. }) => {
                        assert!(e.to_string().contains(why), "{what}, {path}: {e}")
                    }
                    other => panic!("{what}, {path}: {k}: {other:?}"),
                }
            }
        }
    }
    // A key asked for twice, answered three times.
    let twice: Vec<String> = ["a", "b", "a"].iter().map(|s| s.to_string()).collect();
    let c = client(&answering_in(|_| {
        vec!["a".into(), "b".into(), "a".into(), "a".into()]
    }));
    for (path, got) in every_read_path(&c, &twice) {
        for r in got {
            assert!(matches!(&r, Err(Error::Protocol { .. })), "{path}: {r:?}");
        }
    }
}
