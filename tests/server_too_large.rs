//! A value just under memcached's 1 MiB item limit passes the client's own `max_value_size`
//! check, but key and item header push the item over: memcached answers `SERVER_ERROR object
//! too large for cache` (text, meta; it swallows the data and goes on) or binary status 0x0003.
//! That reply is the client's "value too large" error (`Error::TooLargeForServer`,
//! `is_value_too_large`, class client_error), the server's message kept; in a batch it answers
//! its own store alone and the other items get their own replies. memcached also removes the
//! old value of the key on a plain `set` (not on `add`/`replace`/...).
//!
//! The fakes at the end are deliberately broken servers (not memcached): a `SERVER_ERROR`
//! and then a closed connection, a `CLIENT_ERROR` mid-batch, a meta reply that skips a
//! request. An item whose own reply was not read is never reported stored.

mod common;

use common::fake::{fake, Then};
use common::fake_client;
use common::{unique, Memcached};
use mcpool::error::Class;
use mcpool::{Client, Error, Protocol, SetItem, StoreCommand, StoreOutcome};
use std::io::Write;
use std::sync::OnceLock;
use std::time::Duration;

/// memcached with its default item size limit (1 MiB).
fn server() -> &'static Memcached {
    static MC: OnceLock<Memcached> = OnceLock::new();
    MC.get_or_init(|| Memcached::start_shared(&["-m", "64"]))
}

const PROTOCOLS: [Protocol; 3] = [Protocol::Text, Protocol::Meta, Protocol::Binary];

/// Under the client's default limit (1 MiB), over memcached's once key and header are added.
const NEAR_MIB: usize = 1_048_540;

fn client(prefix: &str, p: Protocol) -> Client {
    Client::builder()
        .server(&server().addr())
        .key_prefix(unique(&format!("{prefix}-{p}")))
        .protocol(p)
        .build()
        .unwrap()
}

fn big() -> Vec<u8> {
    // Not compressible below the limit (compression may be on by default in a build).
    common::noise(NEAR_MIB)
}

/// The server's too-large reply as the client's too-large error, the message kept.
fn assert_server_too_large(e: &Error, what: &str) {
    assert!(
        matches!(e, Error::TooLargeForServer { .. }),
        "{what}: {e:?}"
    );
    assert!(e.is_value_too_large(), "{what}");
    assert_eq!(e.class(), Class::ClientError, "{what}");
    assert!(!e.fails_open(), "{what}");
    assert!(
        e.to_string().contains("object too large for cache"),
        "{what}: {e}"
    );
}

#[test]
fn a_near_mib_value_mid_batch_fails_alone_on_every_protocol() {
    let big = big();
    for p in PROTOCOLS {
        let c = client("batch", p);
        assert_eq!(c.set("k", b"old", 0).unwrap(), StoreOutcome::Stored);
        let items: Vec<(&str, &[u8])> = vec![("a", b"1"), ("k", &big), ("j", b"ok"), ("z", b"zz")];
        let r = c.set_multi(&items, 0);
        assert_eq!(r.len(), 4, "{p}");
        assert_eq!(r[0].as_ref().unwrap(), &StoreOutcome::Stored, "{p}: a");
        assert_server_too_large(r[1].as_ref().unwrap_err(), &format!("{p}: k"));
        assert_eq!(r[2].as_ref().unwrap(), &StoreOutcome::Stored, "{p}: j");
        assert_eq!(r[3].as_ref().unwrap(), &StoreOutcome::Stored, "{p}: z");
        assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"1"[..]), "{p}");
        assert_eq!(c.get("j").unwrap().as_deref(), Some(&b"ok"[..]), "{p}");
        assert_eq!(c.get("z").unwrap().as_deref(), Some(&b"zz"[..]), "{p}");
        // memcached unlinks the old item when a set cannot be stored.
        assert_eq!(c.get("k").unwrap(), None, "{p}: the old value of k");

        // The same through set_multi_items (the C ABI's and the bindings' batch path).
        let r = c.set_multi_items(&[
            SetItem::new(b"b1", b"x", 0),
            SetItem::new(b"b2", &big, 0),
            SetItem::new(b"b3", b"y", 0),
        ]);
        assert_eq!(r[0].as_ref().unwrap(), &StoreOutcome::Stored, "{p}");
        assert_server_too_large(r[1].as_ref().unwrap_err(), &format!("{p}: b2"));
        assert_eq!(r[2].as_ref().unwrap(), &StoreOutcome::Stored, "{p}");
        assert_eq!(c.get("b3").unwrap().as_deref(), Some(&b"y"[..]), "{p}");
    }
}

#[test]
fn add_of_a_near_mib_value_fails_alone_and_the_old_value_is_as_memcached_leaves_it() {
    let big = big();
    for p in PROTOCOLS {
        let c = client("add", p);
        c.set("k", b"old", 0).unwrap();
        let r = c.store_multi_items(
            StoreCommand::Add,
            &[SetItem::new(b"k", &big, 0), SetItem::new(b"n", b"new", 0)],
        );
        assert_server_too_large(r[0].as_ref().unwrap_err(), &format!("{p}: add k"));
        assert_eq!(r[1].as_ref().unwrap(), &StoreOutcome::Stored, "{p}: add n");
        // memcached (1.6.18) unlinks the old item on text and binary only for `set`, on
        // meta for every mode of `ms`.
        let kept = if p == Protocol::Meta {
            None
        } else {
            Some(&b"old"[..])
        };
        assert_eq!(c.get("k").unwrap().as_deref(), kept, "{p}");
        c.set("k", b"old", 0).unwrap();
        assert_server_too_large(&c.add("k", &big, 0).unwrap_err(), &format!("{p}: add"));
        assert_eq!(c.get("k").unwrap().as_deref(), kept, "{p}");
    }
}

#[test]
fn a_single_set_of_a_near_mib_value_is_value_too_large_and_the_connection_goes_on() {
    let big = big();
    for p in PROTOCOLS {
        let c = Client::builder()
            .server(&server().addr())
            .key_prefix(unique(&format!("single-{p}")))
            .protocol(p)
            .compression(false)
            .max_size(1)
            .build()
            .unwrap();
        c.set("k", b"old", 0).unwrap();
        let opened = c.metrics()[0].connects;
        let e = c.set("k", &big, 0).unwrap_err();
        assert_server_too_large(&e, &format!("{p}: set"));
        assert_eq!(c.get("k").unwrap(), None, "{p}: the old value is gone");
        c.set("k", b"new", 0).unwrap();
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"new"[..]), "{p}");
        if p != Protocol::Binary {
            // Answered and read whole: the connection is kept (binary's always was).
            assert_eq!(c.metrics()[0].connects, opened, "{p}: no new connection");
        }
    }
}

/// A value over the client's own limit is refused before it is sent (`Error::ValueTooLarge`),
/// and a `set` refused so deletes the key as memcached's own refusal does: whichever side
/// refuses, no older value is left to read. Single `set`, typed `store_value`, `set_multi`
/// (with a stored neighbour) and `set_multi_noreply`; `add` leaves the key alone, as
/// memcached does. Before, the old value survived a refusal by the client.
#[test]
fn a_set_the_client_refuses_as_too_large_leaves_no_old_value() {
    let huge = vec![0x5au8; 2 << 20];
    for p in PROTOCOLS {
        let c = Client::builder()
            .server(&server().addr())
            .key_prefix(unique(&format!("refused-{p}")))
            .protocol(p)
            .compression(false)
            .build()
            .unwrap();
        let too_large = |e: &Error| matches!(e, Error::ValueTooLarge { .. });
        c.set("k", b"old", 0).unwrap();
        assert!(too_large(&c.set("k", &huge, 0).unwrap_err()), "{p}");
        assert_eq!(c.get("k").unwrap(), None, "{p}: set");
        c.set("k", b"old", 0).unwrap();
        let typed = c.store_value_as(
            StoreCommand::Set,
            "k",
            &mcpool::Value::Bytes(huge.clone()),
            0,
            mcpool::Compress::Never,
        );
        assert!(too_large(&typed.unwrap_err()), "{p}");
        assert_eq!(c.get("k").unwrap(), None, "{p}: store_value_as");
        c.set("k", b"old", 0).unwrap();
        let r = c.set_multi(&[("k", &huge[..]), ("n", &b"new"[..])], 0);
        assert!(too_large(r[0].as_ref().unwrap_err()), "{p}");
        assert_eq!(r[1].as_ref().unwrap(), &StoreOutcome::Stored, "{p}");
        assert_eq!(c.get("k").unwrap(), None, "{p}: set_multi");
        assert_eq!(c.get("n").unwrap().as_deref(), Some(&b"new"[..]), "{p}");
        c.set("k", b"old", 0).unwrap();
        assert!(c.set_multi_noreply(&[("k", &huge[..])], 0).is_err(), "{p}");
        assert_eq!(c.get("k").unwrap(), None, "{p}: set_multi_noreply");
        c.set("k", b"old", 0).unwrap();
        assert!(too_large(&c.add("k", &huge, 0).unwrap_err()), "{p}");
        assert_eq!(
            c.get("k").unwrap().as_deref(),
            Some(&b"old"[..]),
            "{p}: add"
        );
    }
}

/// A compressible value longer than `max_decompressed_size` is refused as given, naming that
/// option, the one whose raising stores it compressed (tester finding bigvalues 4: the
/// message named only max_value_size, which does not help); once it is raised, the value is
/// stored compressed and read back. One too long to send that compression could not shrink
/// enough names max_value_size, as before.
#[test]
fn a_value_refused_before_compressing_names_max_decompressed_size() {
    let digits: Vec<u8> = b"0123456789".repeat(300_000); // 3 MB, compresses to a few KB
    let build = |inflated: usize| {
        Client::builder()
            .server(&server().addr())
            .key_prefix(unique("inflated"))
            .max_decompressed_size(inflated)
            .build()
            .unwrap()
    };
    let c = build(2 << 20);
    let e = c.set("k", &digits, 0).unwrap_err();
    assert!(
        matches!(e, Error::ValueTooLarge { len: 3_000_000, limit, max_decompressed: Some(i), .. }
            if limit == 1 << 20 && i == 2 << 20),
        "{e:?}"
    );
    let shown = e.to_string();
    assert!(
        shown.contains("max_decompressed_size (2097152 bytes)"),
        "{shown}"
    );
    assert!(shown.contains("raise max_decompressed_size"), "{shown}");
    let c = build(4 << 20);
    c.set("k", &digits, 0).unwrap();
    assert_eq!(c.get("k").unwrap().as_deref(), Some(&digits[..]));
    // incompressible noise over 1 MiB: compression does not get it under the limit
    let mut x = 2_463_534_242u32;
    let noise: Vec<u8> = (0..(1 << 20) + 100)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let e = c.set("n", &noise, 0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ValueTooLarge {
                max_decompressed: None,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("max_value_size"), "{e}");
}

/// Ends the fake's side of a connection: no more replies (FIN), the client's remaining
/// requests still read (a close with unread bytes would reset the connection and could
/// discard replies already sent).
fn hang_up(w: &mut std::net::TcpStream) -> Then {
    let _ = w.shutdown(std::net::Shutdown::Write);
    Then::Continue
}

/// A fake text server answering the `n`-th store (counting from 0) with `replies[n]`; a store
/// past the script closes the connection.
fn text_fake(replies: &'static [&'static str]) -> String {
    let (addr, _) = fake(4, move |_, line, w| {
        let l = String::from_utf8_lossy(line);
        if l.starts_with("version") {
            let _ = w.write_all(b"VERSION 1.6.18\r\n");
            return Then::Continue;
        }
        if !l.starts_with("set ") {
            return Then::Continue; // a data line
        }
        // The number of the store on this connection: count them in the fake's own state.
        thread_local!(static N: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
        let n = N.with(|c| {
            let n = c.get();
            c.set(n + 1);
            n
        });
        match replies.get(n) {
            Some(r) => {
                let _ = w.write_all(r.as_bytes());
                Then::Continue
            }
            None => hang_up(w),
        }
    });
    addr
}

fn items() -> Vec<(&'static str, &'static [u8])> {
    vec![("a", b"1"), ("b", b"2"), ("c", b"3"), ("d", b"4")]
}

#[test]
fn text_a_server_error_then_a_closed_connection_fails_only_the_unanswered() {
    let addr = text_fake(&[
        "STORED\r\n",
        "SERVER_ERROR out of memory storing object\r\n",
    ]);
    let r = fake_client(&addr, Protocol::Text).set_multi(&items(), 0);
    assert_eq!(r[0].as_ref().unwrap(), &StoreOutcome::Stored);
    assert!(
        matches!(r[1], Err(Error::Server { ref message, .. }) if message.contains("out of memory")),
        "{:?}",
        r[1]
    );
    for (i, x) in r.iter().enumerate().skip(2) {
        assert!(
            matches!(x, Err(Error::Io { .. })),
            "item {i}: no reply read, so not stored: {x:?}"
        );
    }
}

#[test]
fn text_a_client_error_mid_batch_fails_the_rest() {
    // memcached may read the rest of a bad request as another command (answering twice):
    // after a CLIENT_ERROR the stream cannot be trusted.
    let addr = text_fake(&[
        "STORED\r\n",
        "CLIENT_ERROR bad data chunk\r\n",
        "STORED\r\n",
        "STORED\r\n",
    ]);
    let r = fake_client(&addr, Protocol::Text).set_multi(&items(), 0);
    assert_eq!(r[0].as_ref().unwrap(), &StoreOutcome::Stored);
    for (i, x) in r.iter().enumerate().skip(1) {
        assert!(matches!(x, Err(Error::Client { .. })), "item {i}: {x:?}");
    }
}

/// A fake meta server: the `n`-th `ms` of a connection gets `reply(n, its O token)`, or the
/// connection is closed when `reply` gives `None`.
fn meta_fake(reply: fn(usize, &str) -> Option<String>) -> String {
    let (addr, _) = fake(4, move |_, line, w| {
        let l = String::from_utf8_lossy(line);
        if l.starts_with("version") {
            let _ = w.write_all(b"VERSION 1.6.18\r\n");
            return Then::Continue;
        }
        if !l.starts_with("ms ") {
            return Then::Continue;
        }
        assert!(
            !l.split_whitespace().any(|t| t == "q"),
            "a store of a meta batch is sent quiet: {l}"
        );
        let o = l
            .split_whitespace()
            .find(|t| t.starts_with('O'))
            .unwrap_or("")
            .to_owned();
        thread_local!(static N: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
        let n = N.with(|c| {
            let n = c.get();
            c.set(n + 1);
            n
        });
        match reply(n, &o) {
            Some(r) => {
                let _ = w.write_all(r.as_bytes());
                Then::Continue
            }
            None => hang_up(w),
        }
    });
    addr
}

#[test]
fn meta_a_server_error_answers_the_next_unanswered_store() {
    let addr = meta_fake(|n, o| {
        Some(match n {
            1 => "SERVER_ERROR object too large for cache\r\n".into(),
            _ => format!("HD {o}\r\n"),
        })
    });
    let r = fake_client(&addr, Protocol::Meta).set_multi(&items(), 0);
    assert_eq!(r[0].as_ref().unwrap(), &StoreOutcome::Stored);
    assert_server_too_large(r[1].as_ref().unwrap_err(), "b");
    assert_eq!(r[2].as_ref().unwrap(), &StoreOutcome::Stored);
    assert_eq!(r[3].as_ref().unwrap(), &StoreOutcome::Stored);
}

#[test]
fn meta_a_server_error_then_a_closed_connection_fails_only_the_unanswered() {
    let addr = meta_fake(|n, o| match n {
        0 => Some(format!("HD {o}\r\n")),
        1 => Some("SERVER_ERROR out of memory storing object\r\n".into()),
        _ => None,
    });
    let r = fake_client(&addr, Protocol::Meta).set_multi(&items(), 0);
    assert_eq!(r[0].as_ref().unwrap(), &StoreOutcome::Stored);
    assert!(matches!(r[1], Err(Error::Server { .. })), "{:?}", r[1]);
    for (i, x) in r.iter().enumerate().skip(2) {
        assert!(
            matches!(x, Err(Error::Io { .. })),
            "item {i}: no reply read, so not stored: {x:?}"
        );
    }
}

#[test]
fn meta_a_reply_that_skips_a_store_is_a_protocol_error_not_stored() {
    // The reply to the second store never comes; the third's does: the second's outcome was
    // not read, so it is not "stored".
    let addr = meta_fake(|n, o| match n {
        1 => Some(String::new()),
        _ => Some(format!("HD {o}\r\n")),
    });
    let r = fake_client(&addr, Protocol::Meta).set_multi(&items(), 0);
    assert_eq!(r[0].as_ref().unwrap(), &StoreOutcome::Stored);
    for (i, x) in r.iter().enumerate().skip(1) {
        assert!(matches!(x, Err(Error::Protocol { .. })), "item {i}: {x:?}");
    }
}

/// Sets handed over to the caller holding the one connection (docs/handover.md) are pipelined
/// with other callers' work: a store the server refuses as too large fails alone there too,
/// the sets and reads after it in the pipeline get their own replies. Only small sets are
/// handed over, so this server's item limit is 2 KiB and the refused value 4,000 bytes.
#[test]
fn handed_over_sets_around_a_refused_one_get_their_own_replies() {
    let mc = Memcached::start(&["-m", "64", "-I", "2k", "-o", "slab_chunk_max=1024"]);
    let big = std::sync::Arc::new(common::noise(4000));
    for p in PROTOCOLS {
        let c = Client::builder()
            .server(&mc.addr())
            .key_prefix(unique(&format!("handover-{p}")))
            .protocol(p)
            .compression(false)
            .max_size(1)
            .min_idle(0)
            .pool_timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let threads: Vec<_> = (0..8u32)
            .map(|t| {
                let (c, big) = (c.clone(), big.clone());
                std::thread::spawn(move || {
                    for i in 0..12u32 {
                        let key = format!("s{t}-{i}");
                        let value = format!("v{t}-{i}");
                        if i % 3 == 0 {
                            let e = c.set(format!("b{t}"), big.as_slice(), 0).unwrap_err();
                            assert!(e.is_value_too_large(), "{p}: {e:?}");
                        }
                        assert_eq!(
                            c.set(&key, value.as_bytes(), 0).unwrap(),
                            StoreOutcome::Stored,
                            "{p}: {key}"
                        );
                        assert_eq!(
                            c.get(&key).unwrap().as_deref(),
                            Some(value.as_bytes()),
                            "{p}: {key}"
                        );
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let m = &c.metrics()[0];
        assert_eq!(m.server_errors, 4 * 8, "{p}: the refused sets, counted");
        assert_eq!(m.connects, 1, "{p}: one connection, kept throughout");
        eprintln!("{p}: {} calls handed over", m.handed_over);
    }
}
