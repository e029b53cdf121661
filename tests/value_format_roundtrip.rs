//! The byte API's round trip in every value format, on a real memcached: what a read
//! (`get_item`) delivers, a body in its ABI form (an integer as decimal text, a boolean as
//! `0`/`1`) with the flags, stored back unchanged under those flags (`store`,
//! `set_multi_items`, `store_multi_items`) is the same value: the same wire bytes and flags
//! (seen through a raw `libmemcached` client), read back the same. Where the format writes a
//! kind in another form than its ABI form (Whalin's and spymemcached's binary integers,
//! Whalin's byte boolean) the store converts the ABI body by the typed store's rule, or
//! refuses it with `Error::ValueFormat`; it never stores the ABI bytes as the wire body
//! (spymemcached read "12" under SPECIAL_INT as the integer 12594).
mod common;

use common::{unique, Memcached};
use mcpool::set_item::{Compress, SetItem};
use mcpool::{Client, Error, Kind, Lang, Protocol, StoreCommand, Value, ValueFormat};

const MARK: u32 = 1 << 24;

fn client(mc: &Memcached, f: ValueFormat, prefix: &str) -> Client {
    let mut b = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix)
        .value_format(f);
    for lang in Lang::ALL {
        b = b.serialized(lang, true);
    }
    b.build().unwrap()
}

/// Every row of every format's table: its flags and a wire body a writer of the format
/// writes under them (the read-only rows included: pylibmc's 2, Whalin's Integer, Short and
/// Byte markers, spymemcached's SPECIAL_BYTE…).
fn rows() -> Vec<(ValueFormat, u32, Vec<u8>)> {
    use ValueFormat::*;
    let mut v: Vec<(ValueFormat, u32, Vec<u8>)> = vec![
        (Mcpool, 0, b"by\xfftes".to_vec()),
        (Mcpool, MARK | 7, b"app flags".to_vec()),
        (Mcpool, MARK | 1 << 16, "tëxt".into()),
        (Mcpool, MARK | 2 << 16, b"-42".to_vec()),
        (Mcpool, MARK | 3 << 16, b"1".to_vec()),
        (Mcpool, MARK | 4 << 16, b"\x80\x05K*.".to_vec()),
        (Mcpool, MARK | 5 << 16, b"\x05\x0b\x03".to_vec()),
        (Mcpool, MARK | 6 << 16, b"\xac\xed\x00\x05".to_vec()),
        (Pylibmc, 0, b"\xff".to_vec()),
        (Pylibmc, 16, "tëxt".into()),
        (Pylibmc, 4, b"-42".to_vec()),
        (Pylibmc, 4, b"1208925819614629174706176".to_vec()),
        (Pylibmc, 2, b"1".to_vec()),
        (Pylibmc, 1, b"\x80\x05K*.".to_vec()),
        (CacheMemcachedFast, 0, b"\xff".to_vec()),
        (CacheMemcachedFast, 4, "tëxt".into()),
        (CacheMemcachedFast, 1, b"\x05\x0b\x03".to_vec()),
        (CacheMemcached, 4, "tëxt".into()),
        (Whalin, 4096, b"\x00\xff".to_vec()),
        (Whalin, 0, b"no marker".to_vec()),
        (Whalin, 32, "tëxt".into()),
        (Whalin, 64, "buffer".into()),
        (Whalin, 2048, "builder".into()),
        (Whalin, 16384, 12345678i64.to_be_bytes().to_vec()),
        (Whalin, 16384, i64::MIN.to_be_bytes().to_vec()),
        (Whalin, 4, (-7i32).to_be_bytes().to_vec()),
        (Whalin, 4, i32::MAX.to_be_bytes().to_vec()),
        (Whalin, 256, (-32768i32).to_be_bytes().to_vec()),
        (Whalin, 1, vec![0x80]),
        (Whalin, 8192, vec![1]),
        (Whalin, 8192, vec![0]),
        (Whalin, 8, b"\xac\xed\x00\x05".to_vec()),
        (Spymemcached, 0x800, b"\x00\xff".to_vec()),
        (Spymemcached, 0, "tëxt".into()),
        (Spymemcached, 0x200, vec![12]),
        (Spymemcached, 0x200, vec![]),
        (Spymemcached, 0x200, vec![0xff, 0xff, 0xff, 0xf9]),
        (Spymemcached, 0x200, vec![0x80, 0, 0, 0]),
        (Spymemcached, 0x300, vec![1, 0, 0, 0, 0, 0]),
        (Spymemcached, 0x300, vec![0xff; 8]),
        (
            Spymemcached,
            0x300,
            vec![0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
        ),
        (Spymemcached, 0x500, vec![0xfd]),
        (Spymemcached, 0x100, b"1".to_vec()),
        (Spymemcached, 0x100, b"0".to_vec()),
        (Spymemcached, 1, b"\xac\xed\x00\x05".to_vec()),
        (Libmemcached, 0xdead_beef, b"anything".to_vec()),
    ];
    for f in [PythonMemcached, Pymemcache] {
        v.extend([
            (f, 0, b"\xff".to_vec()),
            (f, 16, "tëxt".into()),
            (f, 2, b"-42".to_vec()),
            (f, 4, b"7".to_vec()),
            (f, 1, b"\x80\x05K*.".to_vec()),
        ]);
    }
    v
}

/// The flags a store with these (delivered) flags writes, when not the same: flags 0 is the
/// byte API's "bytes", written as the format's bytes kind (docs/value-format.md: so
/// spymemcached's String, flags 0, stored back through the byte API is its UTF-8 bytes, a
/// byte[] to spymemcached; `store_value` keeps it a String).
fn written_flags(f: ValueFormat, flags: u32) -> u32 {
    match (f, flags) {
        (ValueFormat::Whalin, 0) => 4096,
        (ValueFormat::Spymemcached, 0) => 0x800,
        _ => flags,
    }
}

/// One way of storing a body under explicit flags through the byte API.
type Store = fn(&Client, &str, &[u8], u32) -> mcpool::Result<()>;

fn paths() -> [(&'static str, Store); 3] {
    [
        ("store", |c, k, v, f| {
            c.store(StoreCommand::Set, k, v, f, 0).map(drop)
        }),
        ("set_multi_items", |c, k, v, f| {
            let it = SetItem {
                flags: f,
                ..SetItem::new(k.as_bytes(), v, 0)
            };
            c.set_multi_items(&[it]).remove(0).map(drop)
        }),
        ("store_multi_items_add", |c, k, v, f| {
            let it = SetItem {
                flags: f,
                ..SetItem::new(k.as_bytes(), v, 0)
            };
            c.store_multi_items(StoreCommand::Add, &[it])
                .remove(0)
                .map(drop)
        }),
    ]
}

#[test]
fn every_row_of_every_format_survives_get_then_store_with_the_same_flags() {
    let mc = Memcached::start(&[]);
    let prefix = unique("rt");
    let raw = client(&mc, ValueFormat::Libmemcached, &prefix);
    for (n, (f, flags, wire)) in rows().into_iter().enumerate() {
        let c = client(&mc, f, &prefix);
        let k = format!("r{n}");
        raw.store(StoreCommand::Set, &k, &wire, flags, 0).unwrap();
        let got = c.get_item(&k).unwrap().unwrap();
        let kind = c.value_kind(got.flags).unwrap();
        for (name, store) in paths() {
            let k2 = format!("{k}-{name}");
            store(&c, &k2, &got.value, got.flags)
                .unwrap_or_else(|e| panic!("{f} flags {flags} {name}: {e}"));
            let back = raw.get_item(&k2).unwrap().unwrap();
            assert_eq!(
                (&back.value[..], back.flags),
                (&wire[..], written_flags(f, flags)),
                "{f} flags {flags} {name}: the wire value stored back"
            );
            let again = c.get_item(&k2).unwrap().unwrap();
            let want = match (f, flags) {
                (ValueFormat::Spymemcached, 0) => Kind::Bytes,
                _ => kind,
            };
            assert_eq!(
                (&again.value[..], c.value_kind(again.flags).unwrap()),
                (&got.value[..], want),
                "{f} flags {flags} {name}: read back"
            );
        }
    }
}

#[test]
fn every_typed_value_survives_get_then_store_with_the_same_flags() {
    let mc = Memcached::start(&[]);
    let prefix = unique("rtv");
    let mut values = vec![
        Value::Bytes(b"\x00\xffbytes".to_vec()),
        Value::Bytes(Vec::new()),
        Value::Bool(true),
        Value::Bool(false),
        Value::Serialized {
            lang: Lang::Python,
            bytes: b"\x80\x05K*.".to_vec(),
        },
        Value::Serialized {
            lang: Lang::Perl,
            bytes: b"\x05\x0b\x03".to_vec(),
        },
        Value::Serialized {
            lang: Lang::Java,
            bytes: b"\xac\xed\x00\x05".to_vec(),
        },
    ];
    for i in [
        0,
        1,
        -1,
        12,
        -7,
        127,
        -128,
        128,
        32767,
        -32769,
        12345678,
        i64::from(i32::MAX),
        i64::from(i32::MIN),
        i64::from(i32::MAX) + 1,
        i64::from(i32::MIN) - 1,
        i64::MAX,
        i64::MIN,
    ] {
        values.push(Value::Int(i));
    }
    for f in ValueFormat::ALL {
        let c = client(&mc, f, &prefix);
        for (n, v) in values.iter().enumerate() {
            let k = format!("{f}-{n}");
            match c.set_value(&k, v, 0) {
                Ok(_) => {}
                Err(Error::Unsupported(_)) => {
                    assert!(!f.has_kind(v.kind()), "{f} {v:?}");
                    continue;
                }
                Err(e) => panic!("{f} {v:?}: {e}"),
            }
            let got = c.get_item(&k).unwrap().unwrap();
            // What the typed store reads back: the value itself, but for pylibmc's bool,
            // which pylibmc (and so the format) reads back as the int 1/0,
            let want = c.get_value(&k).unwrap();
            // and python-memcached's and pymemcache's, which the core hands out as the pickle
            // (the Python binding unpickles it).
            match (f, v) {
                (ValueFormat::Pylibmc, Value::Bool(b)) => {
                    assert_eq!(want, Some(Value::Int(i64::from(*b))), "{f} {v:?}")
                }
                (ValueFormat::PythonMemcached | ValueFormat::Pymemcache, Value::Bool(_)) => {
                    assert!(
                        matches!(
                            want,
                            Some(Value::Serialized {
                                lang: Lang::Python,
                                ..
                            })
                        ),
                        "{f} {v:?}: {want:?}"
                    )
                }
                _ => assert_eq!(want.as_ref(), Some(v), "{f} {v:?}"),
            }
            for (name, store) in paths() {
                let k2 = format!("{k}-{name}");
                store(&c, &k2, &got.value, got.flags)
                    .unwrap_or_else(|e| panic!("{f} {v:?} {name}: {e}"));
                assert_eq!(
                    c.get_value(&k2).unwrap(),
                    want,
                    "{f} {v:?} {name}: get, then store under the same flags"
                );
            }
        }
    }
}

#[test]
fn a_body_the_flags_cannot_hold_is_refused_never_stored_as_the_wire_body() {
    let mc = Memcached::start(&[]);
    let prefix = unique("rtbad");
    for (f, flags, body, why) in [
        (ValueFormat::Spymemcached, 0x200, &b"x"[..], "decimal text"),
        (
            ValueFormat::Spymemcached,
            0x200,
            b"\x00\x0c",
            "decimal text",
        ),
        (ValueFormat::Spymemcached, 0x200, b"2147483648", "outside"),
        (ValueFormat::Spymemcached, 0x500, b"128", "outside"),
        // memcached's counter range above i64: the caller's argument, as for store_value
        (
            ValueFormat::Spymemcached,
            0x300,
            b"9223372036854775808",
            "above 2**63-1",
        ),
        (ValueFormat::Spymemcached, 0x300, b" 1", "decimal text"),
        (
            ValueFormat::Whalin,
            16384,
            b"\0\0\0\0\0\0\0\x05",
            "decimal text",
        ),
        (ValueFormat::Whalin, 4, b"2147483648", "outside"),
        (ValueFormat::Whalin, 256, b"32768", "outside"),
        (ValueFormat::Whalin, 1, b"-129", "outside"),
        (ValueFormat::Whalin, 8192, b"\x01", "\"0\" or \"1\""),
        (ValueFormat::Whalin, 8192, b"true", "\"0\" or \"1\""),
    ] {
        let c = client(&mc, f, &prefix);
        for (name, store) in paths() {
            let k = format!("bad-{f}-{flags}-{name}");
            match store(&c, &k, body, flags) {
                Err(Error::ValueFormat(m)) => {
                    assert!(m.contains(why) && m.contains(&k), "{f} {flags} {name}: {m}")
                }
                Err(Error::InvalidArgument { reason, .. }) if why == "above 2**63-1" => {
                    assert!(reason.contains(why), "{f} {flags} {name}: {reason}")
                }
                r => panic!("{f} {flags} {body:?} {name}: {r:?}"),
            }
            assert!(c.get_item(&k).unwrap().is_none(), "nothing stored");
        }
        // store_with_version encodes by the same rule before anything is sent (the
        // installed memcached predates `E`: a body that passes would be Unsupported there).
        let m = Client::builder()
            .server(&mc.addr())
            .key_prefix(prefix.as_str())
            .value_format(f)
            .protocol(Protocol::Meta)
            .build()
            .unwrap();
        match m.store_with_version(StoreCommand::Set, "v", body, flags, 0, 5) {
            Err(Error::ValueFormat(_)) => {}
            Err(Error::InvalidArgument { .. }) if why == "above 2**63-1" => {}
            r => panic!("store_with_version {f} {flags} {body:?}: {r:?}"),
        }
    }
}

#[test]
fn kind_flags_are_the_flags_a_byte_store_of_the_abi_body_takes() {
    let mc = Memcached::start(&[]);
    let prefix = unique("kf");
    let raw = client(&mc, ValueFormat::Libmemcached, &prefix);
    for f in ValueFormat::ALL {
        let c = client(&mc, f, &prefix);
        for (kind, abi, value) in [
            (
                Kind::Int,
                &b"-9223372036854775808"[..],
                Value::Int(i64::MIN),
            ),
            (Kind::Int, b"12", Value::Int(12)),
            (Kind::Bool, b"1", Value::Bool(true)),
            (Kind::Text, "tëxt".as_bytes(), Value::Text("tëxt".into())),
        ] {
            let flags = match c.kind_flags(kind) {
                Ok(flags) => flags,
                Err(Error::Unsupported(m)) => {
                    // No such kind; written with flags 0 (spymemcached's String), which the
                    // byte API takes as bytes; or flags by the value (spymemcached's
                    // SPECIAL_INT up to 32 bits, else SPECIAL_LONG); or a bool pickled under
                    // the pickle flags (python-memcached, pymemcache).
                    let pickled_bool = kind == Kind::Bool
                        && matches!(f, ValueFormat::PythonMemcached | ValueFormat::Pymemcache);
                    assert!(
                        !f.has_kind(kind) || f == ValueFormat::Spymemcached || pickled_bool,
                        "{f} {kind}: {m}"
                    );
                    assert!(
                        kind != Kind::Bool || !f.has_kind(kind) || pickled_bool,
                        "{f}: {m}"
                    );
                    continue;
                }
                Err(e) => panic!("{f} {kind}: {e}"),
            };
            // The same wire value as the typed store's.
            let k = format!("{f}-{kind}-{}", abi.len());
            c.store(StoreCommand::Set, &k, abi, flags, 0).unwrap();
            c.set_value(format!("{k}-typed"), &value, 0).unwrap();
            let (a, b) = (
                raw.get_item(&k).unwrap().unwrap(),
                raw.get_item(format!("{k}-typed")).unwrap().unwrap(),
            );
            assert_eq!((a.value, a.flags), (b.value, b.flags), "{f} {kind}");
            // Read back as the typed store's value reads back (pylibmc's bool: the int).
            assert_eq!(
                c.get_value(&k).unwrap(),
                c.get_value(format!("{k}-typed")).unwrap(),
                "{f} {kind}"
            );
            if !(f == ValueFormat::Pylibmc && kind == Kind::Bool) {
                assert_eq!(c.get_value(&k).unwrap(), Some(value), "{f} {kind}");
            }
        }
    }
    // An integer above i64::MAX: the decimal layouts store its digits; the binary ones refuse
    // it as an argument, before anything is sent.
    let s = client(&mc, ValueFormat::Spymemcached, &prefix);
    assert_eq!(
        s.kind_flags(Kind::Int).unwrap(),
        0x300,
        "every int is a Long"
    );
    assert_eq!(s.kind_flags(Kind::Bool).unwrap(), 0x100);
    assert_eq!(
        client(&mc, ValueFormat::Whalin, &prefix)
            .kind_flags(Kind::Int)
            .unwrap(),
        16384,
        "MARKER_LONG"
    );
    assert_eq!(
        client(&mc, ValueFormat::Whalin, &prefix)
            .kind_flags(Kind::Bool)
            .unwrap(),
        8192
    );
    assert!(matches!(
        s.store_unsigned_as(StoreCommand::Set, "u", 1 << 63, 0, Compress::Auto),
        Err(Error::InvalidArgument { .. })
    ));
    // An integer of any size as its text (store_int_text_as, the ABI's store_kind INT): its
    // digits under the int flags in the decimal layouts, as pylibmc and python-memcached
    // store a Python int beyond 64 bits; refused in the 64-bit binary ones, nothing sent.
    for (f, flags) in [
        (ValueFormat::Pylibmc, 4),
        (ValueFormat::PythonMemcached, 2),
        (ValueFormat::Pymemcache, 2),
        (ValueFormat::Mcpool, 0x0102_0000),
    ] {
        let c = client(&mc, f, &prefix);
        let raw = client(&mc, ValueFormat::Libmemcached, &prefix);
        for digits in [
            "-42",
            "18446744073709551615",
            "1000000000000000000000000000000",
            "-1208925819614629174706176",
        ] {
            c.store_int_text_as(
                StoreCommand::Set,
                "big",
                digits.as_bytes(),
                0,
                Compress::Auto,
            )
            .unwrap();
            let item = raw.get_item("big").unwrap().unwrap();
            assert_eq!(
                (item.value.as_slice(), item.flags),
                (digits.as_bytes(), flags),
                "{f}"
            );
            let got = c.get_item("big").unwrap().unwrap();
            assert_eq!(got.value.as_slice(), digits.as_bytes(), "{f}");
        }
    }
    for f in [ValueFormat::Whalin, ValueFormat::Spymemcached] {
        let c = client(&mc, f, &prefix);
        c.delete("bigw").unwrap();
        let e = c
            .store_int_text_as(
                StoreCommand::Set,
                "bigw",
                b"1000000000000000000000000000000",
                0,
                Compress::Auto,
            )
            .unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { .. }) && e.to_string().contains("beyond 64 bits"),
            "{e}"
        );
        assert!(c.get_item("bigw").unwrap().is_none());
    }
    assert!(matches!(
        client(&mc, ValueFormat::Pylibmc, &prefix).store_int_text_as(
            StoreCommand::Set,
            "x",
            b"12x",
            0,
            Compress::Auto
        ),
        Err(Error::InvalidArgument { .. })
    ));
}

/// Tester finding rust2 1: a store whose body is not what its kind's flags say was refused
/// with the read side's words ("key ... the mcpool value format says int (int), but the body
/// is not a decimal integer"), as if a read had failed; it says it was a store.
#[test]
fn a_store_refused_for_its_body_says_it_was_a_store() {
    let c = Client::builder()
        .server("127.0.0.1:1")
        .value_format(ValueFormat::Mcpool)
        .build()
        .unwrap();
    for kind in [Kind::Int, Kind::Text] {
        let flags = c.kind_flags(kind).unwrap();
        let body: &[u8] = if kind == Kind::Int { b"abc" } else { b"\xff" };
        let e = c.store(StoreCommand::Set, "k", body, flags, 0).unwrap_err();
        assert!(matches!(e, Error::ValueFormat(_)), "{kind:?}: {e:?}");
        assert!(e.to_string().contains("storing key"), "{kind:?}: {e}");
    }
}

/// Tester finding javateam 4: a value Whalin's client wrote as a Character (flags 16, a
/// type mcpool has no kind for) was refused under the `whalin` format with the hint that
/// pylibmc, python-memcached and pymemcache read those flags, and under pylibmc's the
/// Character 'c' is the text "\0\0\0c": another value. A type of the format's own writers
/// without a kind now points to the bytes as stored, never to another format.
#[test]
fn a_type_without_kind_points_to_its_bytes_not_to_another_format() {
    let mc = Memcached::start(&[]);
    let prefix = unique("nokind");
    let raw = client(&mc, ValueFormat::Libmemcached, &prefix);
    let whalin = client(&mc, ValueFormat::Whalin, &prefix);
    assert!(raw
        .store(StoreCommand::Set, "ch", b"\0\0\0c", 16, 0)
        .unwrap()
        .is_stored());
    let e = whalin.get_value("ch").unwrap_err().to_string();
    assert!(
        e.contains("no value format of mcpool reads that type") && e.contains("get_or_stored"),
        "{e}"
    );
    assert!(!e.contains("mean something in"), "{e}");
    // Flags no writer of the format uses (mcpool's text) still name the formats that read
    // them.
    assert!(raw
        .store(StoreCommand::Set, "py", b"x", MARK | 1 << 16, 0)
        .unwrap()
        .is_stored());
    let e = client(&mc, ValueFormat::Whalin, &prefix)
        .get_value("py")
        .unwrap_err()
        .to_string();
    assert!(e.contains("they mean something in"), "{e}");
}
