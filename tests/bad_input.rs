//! Bad input and unreachable or dying servers: each a clear error, never a panic, and no
//! bytes sent for a refused key.
mod common;

use common::Memcached;
use mcpool::{Client, Error};
use std::io::ErrorKind;
use std::net::TcpListener;
use std::time::{Duration, Instant};

#[test]
fn refused_keys_send_nothing() {
    // A listener nobody accepts on: any connect attempt would queue a connection.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let c = Client::builder().server(&addr).min_idle(0).build().unwrap();
    let long = "k".repeat(251);
    for key in ["", long.as_str(), "a b", "a\nb", "a\0b", "a\rb", "tab\tkey"] {
        match c.get(key) {
            Err(Error::InvalidKey { reason, .. }) => assert!(!reason.is_empty()),
            other => panic!("{key:?}: expected InvalidKey, got {other:?}"),
        }
        assert!(matches!(c.set(key, b"v", 0), Err(Error::InvalidKey { .. })));
        assert!(matches!(c.delete(key), Err(Error::InvalidKey { .. })));
        assert!(matches!(c.incr(key, 1), Err(Error::InvalidKey { .. })));
        assert!(matches!(c.touch(key, 1), Err(Error::InvalidKey { .. })));
    }
    let _ = c.get_multi(&["x y", ""]);
    let _ = c.set_multi(&[("x y", "v")], 0);
    let _ = c.delete_multi(&[""]);
    assert_eq!(
        listener.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock),
        "a refused key opened a connection"
    );
    let err = c.get("bad key").unwrap_err().to_string();
    assert!(err.contains("bad key") && err.contains("space"), "{err}");
}

#[test]
fn sanitizing_escapes_instead_of_refusing() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .sanitize_keys(true)
        .build()
        .unwrap();
    c.set("a b\nc", b"v", 0).unwrap();
    assert_eq!(c.get("a b\nc").unwrap().unwrap(), b"v");
    let plain = Client::new([mc.addr()]).unwrap();
    assert_eq!(plain.get("a+b%0Ac").unwrap().unwrap(), b"v");
}

#[test]
fn oversized_value_is_refused_before_sending() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .compression(false)
        .max_value_size(1000)
        .build()
        .unwrap();
    c.set("k", "old", 0).unwrap();
    // An `add` refused leaves the key alone, and its message says nothing of it.
    match c.add("k", [b'x'; 1001], 0) {
        Err(
            e @ Error::ValueTooLarge {
                key_deleted: None, ..
            },
        ) => assert!(!e.to_string().contains("deleted"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"old"[..]));
    // A `set` refused deletes it, as memcached's own refusal does, and says so (tester
    // finding cli3 3: the message left the reader thinking the old value was still there).
    match c.set("k", [b'x'; 1001], 0) {
        Err(
            e @ Error::ValueTooLarge {
                len: 1001,
                limit: 1000,
                max_decompressed: None,
                key_deleted: Some(true),
            },
        ) => assert!(e.to_string().contains("the key was deleted"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.get("k").unwrap(), None);
    // When that delete fails, the message says the older value may remain.
    let down = common::refusing_port();
    let unreachable = Client::builder()
        .server(&down.addr())
        .compression(false)
        .max_value_size(1000)
        .build()
        .unwrap();
    match unreachable.set("k", [b'x'; 1001], 0) {
        Err(
            e @ Error::ValueTooLarge {
                key_deleted: Some(false),
                ..
            },
        ) => assert!(e.to_string().contains("older value may remain"), "{e}"),
        other => panic!("{other:?}"),
    }
    // Above the server's own limit (1 MiB by default): the server's "too large", the same
    // error (`is_value_too_large`), its message carried.
    let big = Client::builder()
        .server(&mc.addr())
        .compression(false)
        .max_value_size(4 << 20)
        .build()
        .unwrap();
    match big.set("k", vec![b'x'; 2 << 20], 0) {
        Err(e @ Error::TooLargeForServer { .. }) => {
            assert!(e.is_value_too_large());
            assert!(e.to_string().contains("too large"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        big.get("k").unwrap(),
        None,
        "connection still usable after the error"
    );
}

#[test]
fn unreachable_server_is_a_fast_clear_error() {
    let port = common::free_port(); // nothing listens there
    let c = Client::builder()
        .server(&format!("127.0.0.1:{port}"))
        .failure_limit(2)
        .build()
        .unwrap();
    let start = Instant::now();
    match c.get("k") {
        Err(Error::Io { source, .. }) => assert_eq!(source.kind(), ErrorKind::ConnectionRefused),
        other => panic!("{other:?}"),
    }
    assert!(c.set("k", b"v", 0).is_err());
    // After two failures the server is marked dead and calls fail without trying.
    assert!(matches!(c.get("k"), Err(Error::ServerDead { .. })));
    assert!(!c.server_states()[0].alive);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert!(c.config().servers.len() == 1);
}

#[test]
fn server_killed_mid_test() {
    let mut mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .retry_timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    mc.kill();
    for _ in 0..5 {
        let r = c.get("k");
        assert!(r.is_err(), "{r:?}");
    }
    // A new server on the same port: the client recovers once the retry is due.
    let mc2 = Memcached::start_on(mc.port, &[]);
    common::wait_until("recovery", Duration::from_secs(10), || {
        c.set("k", b"w", 0).is_ok()
    });
    assert_eq!(c.get("k").unwrap().unwrap(), b"w");
    drop(mc2);
}

#[test]
fn bad_configuration_is_refused() {
    assert!(matches!(
        Client::new(Vec::<String>::new()),
        Err(Error::Config(_))
    ));
    assert!(matches!(Client::new(["host:port"]), Err(Error::Config(_))));
    assert!(Client::builder()
        .server("127.0.0.1:1")
        .max_size(0)
        .build()
        .is_err());
    assert!(Client::builder()
        .server("127.0.0.1:1")
        .min_idle(5)
        .max_size(2)
        .build()
        .is_err());
    assert!(Client::builder()
        .server("127.0.0.1:1")
        .compression_ratio(1.5)
        .build()
        .is_err());
    assert!(Client::builder()
        .server_weighted("127.0.0.1:1", 0)
        .build()
        .is_err());
}

#[test]
fn an_empty_key_under_a_prefix_is_the_prefix_itself() {
    // As Cache::Memcached::Fast's namespace makes it (CHI's drivers always use one): the wire
    // key "ns:" is valid; without a prefix an empty key stays refused (above).
    let mc = Memcached::start(&[]);
    let ns = common::unique("ns");
    for protocol in ["text", "meta", "binary"] {
        let c = Client::builder()
            .server(&mc.addr())
            .set("protocol", protocol)
            .unwrap()
            .key_prefix(ns.clone())
            .build()
            .unwrap();
        c.set("", protocol.as_bytes(), 0).unwrap();
        assert_eq!(c.get("").unwrap().as_deref(), Some(protocol.as_bytes()));
        let got = c.get_multi(&["", "other"]);
        assert_eq!(
            got[0].as_ref().unwrap().as_ref().unwrap().value,
            protocol.as_bytes()
        );
        let plain = Client::builder().server(&mc.addr()).build().unwrap();
        assert_eq!(
            plain.get(&ns).unwrap().as_deref(),
            Some(protocol.as_bytes())
        );
        assert!(c.delete("").unwrap());
    }
}

/// One message for an over-long key whatever the path: the key's length (not the key, which
/// may be long) and the long_keys hint, whether the caller's key or the prefixed wire key is
/// over the limit (then with what the prefix added), on every protocol.
#[test]
fn an_over_long_key_has_one_message_on_every_path() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    for protocol in ["text", "meta", "binary"] {
        let plain = Client::builder()
            .server(&addr)
            .min_idle(0)
            .set("protocol", protocol)
            .unwrap()
            .build()
            .unwrap();
        let prefixed = Client::builder()
            .server(&addr)
            .min_idle(0)
            .set("protocol", protocol)
            .unwrap()
            .key_prefix(b"p:")
            .build()
            .unwrap();
        let long = "k".repeat(251);
        let almost = "k".repeat(249);
        // the prefixed key's length and what the prefix added (tester finding retest45 5)
        for (c, key, named) in [
            (&plain, &long, "\"<251 bytes>\""),
            (
                &prefixed,
                &almost,
                "\"<251 bytes: 249 bytes + 2 of the key_prefix>\"",
            ),
        ] {
            let err = c.set(key.as_str(), b"v", 0).unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(err, Error::InvalidKey { .. }),
                "{protocol}: {text}"
            );
            assert!(
                text.contains(named) && text.contains("long_keys"),
                "{protocol}: {text}"
            );
            assert!(
                !text.contains(&almost),
                "{protocol}: the key echoed: {text}"
            );
        }
    }
}
