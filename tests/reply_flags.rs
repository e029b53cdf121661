//! A reply that carries an item must carry the flags (and the CAS) its request asked for,
//! within range. Meta and binary replies without them, or with client flags wider than 32
//! bits, are protocol errors on every read (and the connection is dropped), never a value
//! read under flags 0 (or their low 32 bits) or with a made-up CAS: under flags 0 a
//! compressed body would come back as the value. The text protocol refuses the same (a
//! `VALUE` line without its flags or CAS). The servers here are deliberately broken fakes
//! (not memcached) that answer with the value's right bytes and opaque but such flags.

mod common;

use common::fake::{binary_fake, binary_response, fake, Then};
use common::fake_client;
use flate2::{write::ZlibEncoder, Compression};
use mcpool::{Client, Error, Lease, Protocol, Value};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The value as the application stored it.
const ORIGINAL: &str = "hello world hello world hello world hello world hello world";

/// The flags mcpool's own value format writes for that text compressed with zlib (mark bit
/// 24, codec 1 in bits 20..=21, kind 1 (text) in bits 16..=19).
const FLAGS: u32 = 0x0111_0000;

/// The body stored under `FLAGS`: `ORIGINAL` compressed.
fn body() -> Vec<u8> {
    let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
    z.write_all(ORIGINAL.as_bytes()).unwrap();
    z.finish().unwrap()
}

/// Every read of one key's value, as (name, whether its request asks for the CAS, what it
/// returned: the value's text, or for `meta_info` its flags and CAS).
fn reads(c: &Client, p: Protocol) -> Vec<(&'static str, bool, mcpool::Result<Option<String>>)> {
    let text = |v: Vec<u8>| String::from_utf8_lossy(&v).into_owned();
    let item =
        |r: mcpool::Result<Option<mcpool::Item>>| r.map(|i| i.map(|i| text(i.value.to_vec())));
    let first = |mut r: Vec<mcpool::Result<Option<mcpool::Item>>>| item(r.remove(0));
    let all = |r: Vec<mcpool::Result<Option<mcpool::Item>>>| {
        r.into_iter()
            .map(item)
            .collect::<mcpool::Result<Vec<_>>>()
            .map(|v| v.into_iter().flatten().next())
    };
    let mut out = vec![
        ("get", false, c.get("k").map(|v| v.map(text))),
        ("get_item", false, item(c.get_item("k"))),
        ("gets", true, item(c.gets("k"))),
        ("gat", false, c.gat("k", 60).map(|v| v.map(text))),
        ("gats", true, item(c.gats("k", 60))),
        ("get_multi of one key", false, first(c.get_multi(&["k"]))),
        (
            "get_multi of three keys",
            false,
            all(c.get_multi(&["k1", "k2", "k3"])),
        ),
        (
            "gets_multi of three keys",
            true,
            all(c.gets_multi(&["k1", "k2", "k3"])),
        ),
        ("get_multi_each", false, {
            let mut got = None;
            let r = c.get_multi_each(&["k1", "k2"], |_, v, _| got = Some(text(v.to_vec())));
            r.into_iter()
                .collect::<mcpool::Result<Vec<bool>>>()
                .map(|_| got)
        }),
        (
            "get_value",
            false,
            c.get_value("k").map(|v| {
                v.map(|v| match v {
                    Value::Text(s) => s,
                    other => format!("{other:?}"),
                })
            }),
        ),
    ];
    if p == Protocol::Meta {
        out.push((
            "get_lease",
            true,
            c.get_lease("k", 30, None).map(|l| match l {
                Lease::Hit(i) => Some(text(i.value.to_vec())),
                other => Some(format!("{other:?}")),
            }),
        ));
        out.push((
            "meta_info",
            true,
            c.meta_info("k")
                .map(|i| i.map(|i| format!("flags {} cas {}", i.flags, i.cas))),
        ));
    }
    out
}

/// What each read returns from a well-formed reply.
fn own(name: &str) -> String {
    match name {
        "meta_info" => format!("flags {FLAGS} cas 7"),
        _ => ORIGINAL.to_owned(),
    }
}

/// The meta fake's malformation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Meta {
    WellFormed,
    /// `VA <n> O<tag>`: no `f`, though every retrieval asks for it.
    NoFlags,
    /// `f4294967296`: 33 bits, 0 in its low 32.
    WideFlags,
    /// No `c`, though the request asked for it (gets, gats, leases, meta_info).
    NoCas,
}

/// A deliberately broken fake meta server: answers every `mg` with the value (or, for
/// `meta_info`'s `mg ... s`, its metadata) under the request's opaque, with `mode`'s flags.
fn meta_fake(mode: Meta) -> (String, Arc<AtomicUsize>) {
    let body = body();
    fake(64, move |_, line, w| {
        let line = String::from_utf8_lossy(line).into_owned();
        let mut t = line.split_whitespace();
        match t.next() {
            Some("mg") => {}
            Some("version") => {
                let _ = w.write_all(b"VERSION 1.6.18\r\n");
                return Then::Continue;
            }
            _ => return Then::Continue,
        }
        let key = t.next().unwrap_or("");
        let flags: Vec<&str> = t.collect();
        // The key named back when asked (`k`: a multi-get's requests ask).
        let opaque = flags.iter().find(|f| f.starts_with('O')).unwrap();
        let o = match (flags.contains(&"k"), flags.contains(&"b")) {
            (true, true) => format!("b k{key} {opaque}"),
            (true, false) => format!("k{key} {opaque}"),
            _ => opaque.to_string(),
        };
        let f = match mode {
            Meta::NoFlags => String::new(),
            Meta::WideFlags => format!(" f{}", 1u64 << 32),
            _ => format!(" f{FLAGS}"),
        };
        let c = if flags.contains(&"c") && mode != Meta::NoCas {
            " c7"
        } else {
            ""
        };
        let mut out = if flags.contains(&"s") {
            format!("HD h0 l0 t-1{c} s{}{f} {o}\r\n", body.len()).into_bytes()
        } else {
            format!("VA {}{f}{c} {o}\r\n", body.len()).into_bytes()
        };
        if !flags.contains(&"s") {
            out.extend_from_slice(&body);
            out.extend_from_slice(b"\r\n");
        }
        let _ = w.write_all(&out);
        Then::Continue
    })
}

/// Checks every read against a fake whose replies are malformed for the reads that `bad`
/// selects (by whether they ask for the CAS): each of those is a protocol error, every
/// other read returns its own value, and every error dropped its connection.
fn check(
    p: Protocol,
    what: &str,
    addr: &str,
    conns: impl Fn() -> usize,
    bad: impl Fn(bool) -> bool,
) {
    let c = fake_client(addr, p);
    let mut errors = 0;
    for (name, asks_cas, got) in reads(&c, p) {
        if bad(asks_cas) {
            match got {
                Err(Error::Protocol { detail, .. }) => {
                    assert!(
                        detail.contains("asked for") || detail.contains("extras"),
                        "{detail}"
                    );
                    errors += 1;
                }
                other => panic!("{p} {what}: {name} returned {other:?}, not a protocol error"),
            }
        } else {
            assert_eq!(
                got.unwrap_or_else(|e| panic!("{p} {what}: {name}: {e}")),
                Some(own(name)),
                "{p} {what}: {name}"
            );
        }
    }
    // Each error dropped its connection: the next call opened another.
    let _ = c.version();
    assert!(
        conns() > errors,
        "{p} {what}: {errors} errors, {} connections",
        conns()
    );
}

#[test]
fn meta_reply_without_its_flags_or_cas_or_with_wide_flags_is_refused() {
    for (mode, bad) in [
        (Meta::WellFormed, (|_| false) as fn(bool) -> bool),
        (Meta::NoFlags, |_| true),
        (Meta::WideFlags, |_| true),
        (Meta::NoCas, |asks_cas| asks_cas),
    ] {
        let (addr, conns) = meta_fake(mode);
        let what = format!("{mode:?}");
        check(
            Protocol::Meta,
            &what,
            &addr,
            || conns.load(Ordering::SeqCst),
            bad,
        );
    }
}

#[test]
fn binary_get_response_without_its_four_byte_flags_is_refused() {
    const GET: u8 = 0x00;
    const NOOP: u8 = 0x0a;
    const GETKQ: u8 = 0x0d;
    const GAT: u8 = 0x1d;
    const GATKQ: u8 = 0x24;
    let mut flags_and_more = FLAGS.to_be_bytes().to_vec();
    flags_and_more.extend_from_slice(&[0; 4]);
    for extras in [
        FLAGS.to_be_bytes().to_vec(),
        Vec::new(),
        vec![0, 0],
        flags_and_more,
    ] {
        let body = body();
        let seen = Arc::new(AtomicUsize::new(0));
        let count = seen.clone();
        let ex = extras.clone();
        let addr = binary_fake(move |conn, opcode, opaque, key| {
            count.fetch_max(conn + 1, Ordering::SeqCst);
            // An item's CAS (binary_response's is 0, which gets refuses as none).
            let with_cas = |mut r: Vec<u8>| {
                r[16..24].copy_from_slice(&7u64.to_be_bytes());
                r
            };
            match opcode {
                GET | GAT => with_cas(binary_response(opcode, opaque, &ex, b"", &body)),
                GETKQ | GATKQ => with_cas(binary_response(opcode, opaque, &ex, key, &body)),
                NOOP => binary_response(NOOP, opaque, &[], b"", b""),
                // version: an answer without a value
                op => binary_response(op, opaque, &[], b"", b"1.6.18"),
            }
        });
        let what = format!("extras of {} bytes", extras.len());
        let well_formed = extras.len() == 4;
        check(
            Protocol::Binary,
            &what,
            &addr,
            || seen.load(Ordering::SeqCst),
            |_| !well_formed,
        );
    }
}
