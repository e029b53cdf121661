//! What only some protocols do: binary keys (meta base64, binary), leases and stale-while-
//! revalidate (meta), SASL (binary), and opaque checks that catch crossed replies from a
//! deliberately broken fake server.
mod common;

use common::{unique, Memcached};
use mcpool::{Client, Error, Lease, Protocol, StoreOutcome};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn client(mc: &Memcached, protocol: Protocol) -> Client {
    Client::builder()
        .server(&mc.addr())
        .protocol(protocol)
        .key_prefix(unique("p"))
        .build()
        .unwrap()
}

#[test]
fn binary_keys_on_meta_and_binary() {
    let mc = Memcached::start(&[]);
    for p in [Protocol::Meta, Protocol::Binary] {
        let c = client(&mc, p);
        // Meta sends such keys base64-encoded, and memcached limits the encoded form to 250
        // bytes: 187 raw bytes at most (the prefix included).
        let mut long = vec![b' '; if p == Protocol::Meta { 150 } else { 200 }];
        long.extend_from_slice(&[0, 1, 255, b'\r', b'\n']);
        for key in [
            &b"with space"[..],
            b"new\nline",
            "ключ 🔑".as_bytes(),
            b"\0\x01\xff",
            &long,
        ] {
            assert_eq!(c.set(key, key, 0).unwrap(), StoreOutcome::Stored, "{p}");
            assert_eq!(c.get(key).unwrap().as_deref(), Some(key), "{p} {key:?}");
        }
        let keys: Vec<&[u8]> = vec![b"with space", b"missing key", b"new\nline"];
        let got = c.get_multi(&keys);
        assert_eq!(
            got[0].as_ref().unwrap().as_ref().unwrap().value,
            b"with space"
        );
        assert!(got[1].as_ref().unwrap().is_none());
        assert_eq!(
            got[2].as_ref().unwrap().as_ref().unwrap().value,
            b"new\nline"
        );
        assert!(matches!(
            c.get(vec![b'k'; 251]),
            Err(Error::InvalidKey { .. })
        ));
        if p == Protocol::Meta {
            assert!(matches!(
                c.get(vec![b' '; 188]),
                Err(Error::InvalidKey { .. })
            ));
        }
        // An empty key is the prefix itself; without a prefix it is refused.
        assert!(matches!(c.get(b""), Ok(None)));
        let bare = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .build()
            .unwrap();
        assert!(matches!(bare.get(b""), Err(Error::InvalidKey { .. })));
    }
    // The text protocol refuses the same keys before sending.
    let t = client(&mc, Protocol::Text);
    assert!(matches!(t.get("with space"), Err(Error::InvalidKey { .. })));
}

/// Keys with a space, a line end or a control byte that a binary-protocol client stored
/// (spymemcached, pylibmc binary) read back in a meta multi-get, beside plain keys and misses,
/// and through every multi-key read: memcached names such an item raw when asked for its key
/// (`k`; in base64 only for an item stored with `b`), which broke the reply line, and every
/// key of the batch failed as a crossed reply (tester finding javaspy 1).
#[test]
fn keys_a_binary_client_stored_read_back_in_a_meta_multi_get() {
    let mc = Memcached::start(&[]);
    let prefix = unique("bk");
    let on = |p: Protocol| {
        Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .key_prefix(prefix.clone())
            .build()
            .unwrap()
    };
    let (binary, meta) = (on(Protocol::Binary), on(Protocol::Meta));
    let odd: [&[u8]; 5] = [
        b"c d",
        b"a\r\nb",
        b"new\nline",
        "\u{fc}n\u{ef} c\u{f6}d\u{e9}".as_bytes(),
        b"x VA 2 f0 O1 kc\r\nzz",
    ];
    for k in odd {
        assert_eq!(binary.set(k, k, 0).unwrap(), StoreOutcome::Stored);
    }
    for k in [&b"c"[..], b"k1", b"k4"] {
        assert_eq!(binary.set(k, k, 0).unwrap(), StoreOutcome::Stored);
    }
    let mut keys: Vec<&[u8]> = vec![b"c", b"missing", b"k1"];
    keys.extend(odd);
    keys.push(b"k4");
    keys.push(b"missing too");
    for c in [&meta, &binary] {
        let got = c.get_multi(&keys);
        for (k, r) in keys.iter().zip(&got) {
            let r = r.as_ref().unwrap_or_else(|e| panic!("{k:?}: {e}"));
            let want = (!k.starts_with(b"missing")).then_some(*k);
            assert_eq!(r.as_ref().map(|i| &i.value[..]), want, "{k:?}");
        }
        let with_cas = c.gets_multi(&keys);
        assert!(with_cas.iter().all(|r| r.is_ok()), "{with_cas:?}");
    }
    // and what meta stored (with `b`) reads back alike
    for k in odd {
        assert!(meta.delete(k).unwrap());
        assert_eq!(meta.set(k, k, 0).unwrap(), StoreOutcome::Stored);
    }
    let got = meta.get_multi(&keys);
    assert!(got.iter().all(|r| r.is_ok()), "{got:?}");
}

#[test]
fn leases_elect_exactly_one_recomputer() {
    let mc = Memcached::start(&["-t", "4"]);
    let c = client(&mc, Protocol::Meta);
    let start = Arc::new(Barrier::new(64));
    let winners = Arc::new(AtomicUsize::new(0));
    let waiters = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..64)
        .map(|_| {
            let (c, start, winners, waiters) =
                (c.clone(), start.clone(), winners.clone(), waiters.clone());
            std::thread::spawn(move || {
                start.wait();
                match c.get_lease("hot", 30, None).unwrap() {
                    Lease::Recompute { stale: None } => winners.fetch_add(1, Ordering::SeqCst),
                    Lease::Wait { stale: None } => waiters.fetch_add(1, Ordering::SeqCst),
                    other => panic!("unexpected {other:?}"),
                };
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(
        winners.load(Ordering::SeqCst),
        1,
        "exactly one caller recomputes"
    );
    assert_eq!(waiters.load(Ordering::SeqCst), 63);
    // The winner stores the value; everyone then gets a hit.
    c.set("hot", b"computed", 60).unwrap();
    match c.get_lease("hot", 30, None).unwrap() {
        Lease::Hit(item) => assert_eq!(item.value, b"computed"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn invalidate_serves_stale_while_one_recomputes() {
    let mc = Memcached::start(&[]);
    let c = client(&mc, Protocol::Meta);
    c.set("k", b"old", 0).unwrap();
    assert!(c.invalidate("k", 30).unwrap());
    assert!(!c.invalidate("absent", 30).unwrap());
    match c.get_lease("k", 30, None).unwrap() {
        Lease::Recompute { stale: Some(item) } => assert_eq!(item.value, b"old"),
        other => panic!("first reader should win with the stale value: {other:?}"),
    }
    for _ in 0..3 {
        match c.get_lease("k", 30, None).unwrap() {
            Lease::Wait { stale: Some(item) } => assert_eq!(item.value, b"old"),
            other => panic!("later readers wait with the stale value: {other:?}"),
        }
    }
    c.set("k", b"new", 0).unwrap();
    assert!(matches!(c.get_lease("k", 30, None).unwrap(), Lease::Hit(i) if i.value == b"new"));
    // Other protocols say clearly that leases need meta.
    let t = client(&mc, Protocol::Text);
    assert!(matches!(
        t.get_lease("k", 30, None),
        Err(Error::Unsupported(_))
    ));
}

/// A touch of an invalidated item leaves its recompute token to the next `get_lease`, as a
/// plain read does: memcached gives the token to any `mg`, and the touch kept it, so every
/// lease answered "wait" with nobody told to recompute (with `touch(k, 0)`, for ever: tester
/// finding metafeat 1).
#[test]
fn a_touch_of_an_invalidated_item_leaves_the_recompute_to_a_lease() {
    let mc = Memcached::start(&[]);
    let c = client(&mc, Protocol::Meta);
    for ttl in [0, 60] {
        let k = unique("touched");
        c.set(&k, b"old", 0).unwrap();
        assert!(c.invalidate(&k, 30).unwrap());
        assert!(c.touch(&k, ttl).unwrap());
        match c.get_lease(&k, 30, None).unwrap() {
            Lease::Recompute { stale: Some(item) } => assert_eq!(item.value, b"old"),
            other => panic!("touch {ttl}: the next lease recomputes: {other:?}"),
        }
        match c.get_lease(&k, 30, None).unwrap() {
            Lease::Wait { .. } => {}
            other => panic!("touch {ttl}: then the others wait: {other:?}"),
        }
    }
}

/// A meta client and a text client on `mc` under value format `format`, sharing a key prefix.
fn format_clients(mc: &Memcached, format: &str) -> (Client, Client) {
    let prefix = unique("e");
    let make = |p| {
        Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .key_prefix(prefix.as_str())
            .value_format(format.parse().unwrap())
            .build()
            .unwrap()
    };
    (make(Protocol::Meta), make(Protocol::Text))
}

/// Every plain meta read of `k` (get, gets, gat, get_multi, gets_multi, get_value,
/// meta_info): the values found (`meta_info`: the stored size), `None` for each miss.
fn plain_reads(c: &Client, k: &str) -> Vec<(&'static str, Option<Vec<u8>>)> {
    let item = |r: mcpool::Result<Option<mcpool::Item>>| r.unwrap().map(|i| i.value.to_vec());
    vec![
        ("get", c.get(k).unwrap()),
        ("gets", item(c.gets(k))),
        ("gat", c.gat(k, 100).unwrap()),
        ("get_multi", item(c.get_multi(&[k, "other"]).remove(0))),
        ("gets_multi", item(c.gets_multi(&["other", k]).remove(1))),
        (
            "get_value",
            c.get_value(k)
                .unwrap()
                .map(|v| format!("{v:?}").into_bytes()),
        ),
        (
            "meta_info",
            c.meta_info(k)
                .unwrap()
                .map(|i| i.size.to_string().into_bytes()),
        ),
    ]
}

/// The stale value a lease returned, if any (`Hit` fails).
fn lease_stale(l: Lease) -> (bool, Option<Vec<u8>>) {
    match l {
        Lease::Recompute { stale } => (true, stale.map(|i| i.value.to_vec())),
        Lease::Wait { stale } => (false, stale.map(|i| i.value.to_vec())),
        Lease::Hit(i) => panic!("a hit, though a lease is out: {i:?}"),
    }
}

#[test]
fn a_stored_empty_value_stays_a_value_after_a_recache_lease_takes_its_token() {
    // memcached flags any item whose recompute token a lease took `W`, then `Z`, as it flags
    // a placeholder. A placeholder has client flags 0, so an empty value stored with other
    // flags (every format's text kind, Whalin's and spymemcached's bytes) is told apart.
    let mc = Memcached::start(&[]);
    let text = |s: &str| mcpool::Value::Text(s.into());
    let bytes = mcpool::Value::Bytes(Vec::new());
    for (format, value, flags) in [
        ("mcpool", text(""), 0x0101_0000),
        ("pylibmc", text(""), 16),
        ("python-memcached", text(""), 16),
        ("cache-memcached-fast", text(""), 4),
        ("whalin", bytes.clone(), 4096),
        ("spymemcached", bytes.clone(), 0x800),
    ] {
        let (c, t) = format_clients(&mc, format);
        let what = format!("{format} {value:?}");
        assert_eq!(c.set_value("k", &value, 100).unwrap(), StoreOutcome::Stored);
        assert_eq!(c.meta_info("k").unwrap().unwrap().flags, flags, "{what}");
        // The item expires within 200 s: this lease wins the token, with the value.
        let (won, stale) = lease_stale(c.get_lease("k", 30, Some(200)).unwrap());
        assert!(won, "{what}");
        assert_eq!(
            stale.as_deref(),
            Some(&b""[..]),
            "{what}: the current value"
        );
        for (read, got) in plain_reads(&c, "k") {
            let want = match read {
                "get_value" => format!("{value:?}").into_bytes(),
                "meta_info" => b"0".to_vec(),
                _ => Vec::new(),
            };
            assert_eq!(got, Some(want), "{what}: {read} after the lease");
        }
        assert_eq!(t.get_value("k").unwrap(), Some(value.clone()), "{what}");
        let (won, stale) = lease_stale(c.get_lease("k", 30, Some(200)).unwrap());
        assert!(!won && stale.as_deref() == Some(&b""[..]), "{what}");
        assert_eq!(c.add("k", b"x", 0).unwrap(), StoreOutcome::NotStored);
    }

    // Empty bytes under flags 0 (mcpool, pylibmc, ... bytes) answer exactly as a
    // placeholder once their token is taken, and read as a miss then (the safe side,
    // docs/protocols.md). Only the lease that takes the token can tell, when the item was
    // read before it (`h1`): it did not create the item.
    let (c, t) = format_clients(&mc, "mcpool");
    c.set("read-before", b"", 100).unwrap();
    assert_eq!(c.get("read-before").unwrap(), Some(Vec::new()));
    let (won, stale) = lease_stale(c.get_lease("read-before", 30, Some(200)).unwrap());
    assert!(won && stale.as_deref() == Some(&b""[..]), "{stale:?}");
    c.set("never-read", b"", 100).unwrap();
    assert_eq!(
        lease_stale(c.get_lease("never-read", 30, Some(200)).unwrap()),
        (true, None)
    );
    for k in ["read-before", "never-read"] {
        for (read, got) in plain_reads(&c, k) {
            assert_eq!(
                got, None,
                "{k}: {read}: flags 0 and empty, taken for a placeholder"
            );
        }
        assert_eq!(t.get(k).unwrap(), Some(Vec::new()), "{k}: text sees b\"\"");
    }

    // A real placeholder (a lease on a miss) stays a miss on every read.
    for recache in [None, Some(200)] {
        let k = format!("missing-{recache:?}");
        assert_eq!(
            lease_stale(c.get_lease(&k, 30, recache).unwrap()),
            (true, None)
        );
        for (read, got) in plain_reads(&c, &k) {
            assert_eq!(got, None, "placeholder {k}: {read}");
        }
        assert_eq!(
            lease_stale(c.get_lease(&k, 30, recache).unwrap()),
            (false, None)
        );
        assert_eq!(c.add(&k, b"x", 0).unwrap(), StoreOutcome::NotStored);
    }
}

/// A deliberately broken fake server: answers each request line with `reply(line)`.
fn fake_server(reply: fn(&[u8]) -> Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(8) {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                let mut w = stream.try_clone().unwrap();
                let mut r = BufReader::new(stream);
                for _ in 0..50 {
                    let mut line = Vec::new();
                    if r.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if w.write_all(&reply(&line)).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn meta_reply_with_the_wrong_opaque_is_refused() {
    // Answers every mg with a value under opaque 5, whatever was asked.
    let addr = fake_server(|_| b"VA 5 f0 O5\r\nwrong\r\n".to_vec());
    let c = Client::builder()
        .server(&addr)
        .protocol(Protocol::Meta)
        .failure_limit(100)
        .build()
        .unwrap();
    for _ in 0..3 {
        match c.get("mine") {
            Err(Error::Protocol { detail, .. }) => assert!(detail.contains("opaque"), "{detail}"),
            other => panic!("a crossed reply must be refused, got {other:?}"),
        }
    }
    let many = c.get_multi(&["a", "b"]);
    assert!(
        many.iter()
            .all(|r| matches!(r, Err(Error::Protocol { .. }))),
        "{many:?}"
    );
}

#[test]
fn unknown_replies_are_clear_errors() {
    // memcached 1.6.6-era meta codes and plain garbage.
    let addr = fake_server(|_| b"OK\r\n".to_vec());
    let c = Client::builder()
        .server(&addr)
        .protocol(Protocol::Meta)
        .failure_limit(100)
        .build()
        .unwrap();
    let e = c.get("k").unwrap_err().to_string();
    assert!(e.contains("Ok") || e.contains("OK"), "{e}");
    let addr = fake_server(|_| b"ZZ top\r\n".to_vec());
    let c = Client::builder()
        .server(&addr)
        .protocol(Protocol::Meta)
        .failure_limit(100)
        .build()
        .unwrap();
    let e = c.get("k").unwrap_err().to_string();
    assert!(e.contains("unknown reply") && e.contains("ZZ top"), "{e}");
}

#[test]
fn binary_response_with_the_wrong_opaque_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let mut header = [0u8; 24];
        if s.read_exact(&mut header).is_err() {
            return;
        }
        let body = u32::from_be_bytes(header[8..12].try_into().unwrap()) as usize;
        let mut rest = vec![0u8; body];
        let _ = s.read_exact(&mut rest);
        // A GET response with opaque 99 (the request had 0) and value "wrong".
        let mut resp = vec![0x81, 0x00, 0, 0, 4, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 99];
        resp.extend_from_slice(&[0; 8]);
        resp.extend_from_slice(&[0, 0, 0, 0]);
        resp.extend_from_slice(b"wrong");
        let _ = s.write_all(&resp);
        std::thread::sleep(Duration::from_millis(200));
    });
    let c = Client::builder()
        .server(&addr)
        .protocol(Protocol::Binary)
        .min_idle(0)
        .max_size(1)
        .build()
        .unwrap();
    match c.get("mine") {
        Err(Error::Protocol { detail, .. }) => assert!(detail.contains("opaque"), "{detail}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sasl_plain_on_the_binary_protocol() {
    let Some(mc) = Memcached::start_sasl("alice", "s3cret") else {
        return;
    };
    let good = Client::builder()
        .server(&mc.addr())
        .protocol(Protocol::Binary)
        .sasl_plain("alice", "s3cret")
        .build()
        .unwrap();
    good.set("k", b"secret value", 0).unwrap();
    assert_eq!(good.get("k").unwrap().unwrap(), b"secret value");
    let bad = Client::builder()
        .server(&mc.addr())
        .protocol(Protocol::Binary)
        .sasl_plain("alice", "wrong")
        .build()
        .unwrap();
    assert!(
        matches!(bad.get("k"), Err(Error::Auth { .. })),
        "{:?}",
        bad.get("k")
    );
    let anonymous = Client::builder()
        .server(&mc.addr())
        .protocol(Protocol::Binary)
        .build()
        .unwrap();
    // Tester finding: memcached's status 0x20 to an unauthenticated connection was a client
    // error (as if the key were bad); it is the authentication error, with a hint.
    match anonymous.get("k") {
        Err(Error::Auth { message, .. }) => assert!(message.contains("sasl_username"), "{message}"),
        other => panic!("expected an authentication error, got {other:?}"),
    }
    assert!(matches!(
        anonymous.set("k", b"v", 0),
        Err(Error::Auth { .. })
    ));
    assert!(
        Client::builder()
            .server(&mc.addr())
            .sasl_plain("alice", "s3cret")
            .build()
            .is_err(),
        "SASL on the text protocol is refused at build time"
    );
}

/// Tester finding: `cas(key, value, 0)` over binary was an unconditional set (binary reads
/// CAS 0 as "no CAS"), while text and meta answered not-stored. A CAS unique of 0 is refused
/// by the core before anything is sent, on every protocol and every cas path.
#[test]
fn cas_zero_is_refused_before_anything_is_sent_on_every_protocol() {
    use mcpool::{SetItem, StoreCommand, Value};
    let mc = Memcached::start(&[]);
    let refused = |r: Result<StoreOutcome, Error>, what: &str| match r {
        Err(e @ Error::InvalidArgument { what: "cas", .. }) => {
            assert!(e.to_string().contains("CAS"), "{what}: {e}")
        }
        other => panic!("{what}: {other:?}"),
    };
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = client(&mc, p);
        c.set("k", b"original", 0).unwrap();
        refused(c.cas("k", b"overwritten", 0, 0), "cas");
        refused(c.cas("missing", b"created", 0, 0), "cas of a missing key");
        refused(
            c.store(StoreCommand::Cas(0), "k", b"overwritten", 0, 0),
            "store",
        );
        refused(
            c.store_value(StoreCommand::Cas(0), "k", &Value::Text("x".into()), 0),
            "store_value",
        );
        if p == Protocol::Meta {
            refused(
                c.store_with_version(StoreCommand::Cas(0), "k", b"x", 0, 0, 5),
                "store_with_version",
            );
        }
        let cas = c.gets("k").unwrap().unwrap().cas.unwrap();
        let mut good = SetItem::new(b"k", b"by cas", 0);
        good.cas = cas;
        let zero = SetItem::new(b"missing", b"created", 0); // cas 0
        let out = c.store_multi_items(StoreCommand::Cas(0), &[zero, good]);
        refused(out[0].clone(), "store_multi_items");
        assert_eq!(out[1].as_ref().unwrap(), &StoreOutcome::Stored, "{p}");
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"by cas"[..]), "{p}");
        assert_eq!(c.get("missing").unwrap(), None, "{p}: nothing created");
        // A real CAS still works the same everywhere.
        assert_eq!(
            c.cas("k", b"v", 0, cas).unwrap(),
            StoreOutcome::Exists,
            "{p}"
        );
    }
}

/// The `total_connections` memcached has accepted so far.
fn total_connections(c: &Client) -> u64 {
    let stats = c.stats(None);
    let (_, s) = stats.into_iter().next().unwrap();
    let s = s.unwrap();
    s.iter()
        .find(|(k, _)| k == "total_connections")
        .unwrap()
        .1
        .parse()
        .unwrap()
}

/// memcached answers an `incr`/`decr` of a non-number with one `CLIENT_ERROR` line and goes
/// on: in a batch that is that key's answer, and the keys after it get theirs (text and meta
/// used to fail every later key of the server, one that memcached had incremented included).
/// Every protocol gives the same per-key statuses and new values, the server holds them, and
/// the connection stays in use.
#[test]
fn arith_multi_answers_each_key_after_a_non_numeric_one() {
    let mc = Memcached::start(&[]);
    let mut seen = Vec::new();
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = client(&mc, p);
        c.set("txt", b"abc", 0).unwrap();
        c.set("num", b"10", 0).unwrap();
        let before = total_connections(&c);
        let keys = [
            ("txt", 1u64),
            ("num", 1),
            ("gone", 1),
            ("num", 5),
            ("txt", 2),
        ];
        let describe = |r: Vec<mcpool::Result<Option<u64>>>| -> Vec<String> {
            r.into_iter()
                .map(|r| match r {
                    Ok(v) => format!("{v:?}"),
                    Err(e @ Error::Client { .. }) => format!("client error {:?}", e.class()),
                    Err(e) => format!("other error {e}"),
                })
                .collect()
        };
        let up = describe(c.arith_multi(true, &keys));
        let down = describe(c.arith_multi(false, &[("txt", 1u64), ("num", 3), ("gone", 1)]));
        assert_eq!(
            up,
            [
                "client error ClientError",
                "Some(11)",
                "None",
                "Some(16)",
                "client error ClientError"
            ],
            "{p}"
        );
        assert_eq!(
            down,
            ["client error ClientError", "Some(13)", "None"],
            "{p}"
        );
        assert_eq!(c.get("num").unwrap().as_deref(), Some(&b"13"[..]), "{p}");
        assert_eq!(c.get("txt").unwrap().as_deref(), Some(&b"abc"[..]), "{p}");
        assert_eq!(c.get("gone").unwrap(), None, "{p}");
        // A single incr of a non-number is the same in-step answer.
        assert!(matches!(c.incr("txt", 1), Err(Error::Client { .. })), "{p}");
        assert_eq!(c.incr("num", 1).unwrap(), Some(14), "{p}");
        assert_eq!(
            total_connections(&c),
            before,
            "{p}: the connection was not dropped"
        );
        seen.push((up, down));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}
