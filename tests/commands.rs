//! Every command of the client against a real memcached, with its edge cases.
mod common;

use common::{unique, Memcached};
use mcpool::{Client, Error, Protocol, StoreCommand, StoreOutcome};
use std::sync::OnceLock;
use std::time::Duration;

/// One memcached for this test binary (tests use unique key prefixes, so they run in parallel).
fn server() -> &'static Memcached {
    static MC: OnceLock<Memcached> = OnceLock::new();
    MC.get_or_init(|| Memcached::start_shared(&["-I", "2m", "-m", "128"]))
}

/// The same suite runs once per wire protocol.
const PROTOCOLS: [Protocol; 3] = [Protocol::Text, Protocol::Meta, Protocol::Binary];

fn client_for(prefix: &str, protocol: Protocol) -> Client {
    Client::builder()
        .server(&server().addr())
        .key_prefix(unique(&format!("{prefix}-{protocol}")))
        .max_value_size(2 << 20)
        .protocol(protocol)
        .build()
        .unwrap()
}

/// Runs `test` with a fresh client (own key prefix) for each protocol.
fn each_protocol(prefix: &str, test: impl Fn(&Client)) {
    for p in PROTOCOLS {
        eprintln!("protocol {p}");
        test(&client_for(prefix, p));
    }
}

#[test]
fn get_set_and_miss() {
    each_protocol("get", |c| {
        assert_eq!(c.get("k").unwrap(), None);
        assert_eq!(c.set("k", b"v1", 0).unwrap(), StoreOutcome::Stored);
        assert_eq!(c.get("k").unwrap().unwrap(), b"v1");
        let item = c.get_item("k").unwrap().unwrap();
        assert_eq!((item.flags, item.cas), (0, None));
    });
}

/// `get_or_stored` hands out a value the format cannot deliver as memcached holds it (its
/// body not inflated, its flags as stored), from the same read, where `get_item` fails; a
/// value the format reads comes as `get_item` delivers it; a miss is `None`.
#[test]
fn get_or_stored_hands_out_what_the_format_cannot_deliver() {
    use mcpool::{Form, ValueFormat};
    for p in PROTOCOLS {
        let prefix = unique(&format!("or-stored-{p}"));
        let build = |f: ValueFormat| {
            Client::builder()
                .server(&server().addr())
                .key_prefix(prefix.as_str())
                .protocol(p)
                .value_format(f)
                .build()
                .unwrap()
        };
        let raw = build(ValueFormat::Libmemcached);
        let ours = build(ValueFormat::Pylibmc);
        // flags pylibmc never writes (spymemcached's Date), and a zlib flag on a body that
        // does not inflate
        raw.store(StoreCommand::Set, "date", b"\x01\x02", 1 << 10, 0)
            .unwrap();
        raw.store(StoreCommand::Set, "badzip", b"not zlib", 1 << 3, 0)
            .unwrap();
        ours.set("plain", b"text", 0).unwrap();
        assert!(
            matches!(ours.get_item("date"), Err(Error::ValueFormat(_))),
            "{p}"
        );
        assert!(
            matches!(ours.get_item("badzip"), Err(Error::Decompress(_))),
            "{p}"
        );
        let (item, form) = ours.get_or_stored("date").unwrap().unwrap();
        assert_eq!(
            (&item.value[..], item.flags, form),
            (&b"\x01\x02"[..], 1 << 10, Form::AsStored),
            "{p}"
        );
        let (item, form) = ours.get_or_stored("badzip").unwrap().unwrap();
        assert_eq!(
            (&item.value[..], item.flags, form),
            (&b"not zlib"[..], 1 << 3, Form::AsStored),
            "{p}"
        );
        let (item, form) = ours.get_or_stored("plain").unwrap().unwrap();
        assert_eq!(
            (&item.value[..], form),
            (&b"text"[..], Form::Delivered),
            "{p}"
        );
        assert!(ours.get_or_stored("absent").unwrap().is_none(), "{p}");
        // the errors of the other reads are unchanged
        let many = ours.get_multi(&["date", "plain"]);
        assert!(matches!(many[0], Err(Error::ValueFormat(_))), "{p}");
        assert!(matches!(many[1], Ok(Some(_))), "{p}");
    }
}

/// A store takes its value as any `AsRef<[u8]>` (a `&str`, a `String`, a `Vec<u8>`, an
/// array), as it takes its key, and stores exactly those bytes.
#[test]
fn stores_take_any_byte_value() {
    each_protocol("value-types", |c| {
        assert_eq!(c.set("s", "text", 0).unwrap(), StoreOutcome::Stored);
        assert_eq!(
            c.append("s", String::from("+more")).unwrap(),
            StoreOutcome::Stored
        );
        assert_eq!(c.prepend("s", vec![b'<']).unwrap(), StoreOutcome::Stored);
        assert_eq!(c.get("s").unwrap().as_deref(), Some(&b"<text+more"[..]));
        assert_eq!(c.add("a", [0u8, 1, 2], 0).unwrap(), StoreOutcome::Stored);
        assert_eq!(
            c.replace("a", &b"xyz"[..], 0).unwrap(),
            StoreOutcome::Stored
        );
        let item = c.gets("a").unwrap().unwrap();
        assert_eq!(&item.value[..], b"xyz");
        let cas = item.cas.unwrap();
        assert_eq!(
            c.cas("a", String::from("new"), 0, cas).unwrap(),
            StoreOutcome::Stored
        );
        assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"new"[..]));
    });
}

#[test]
fn flags_pass_through() {
    // The mcpool value format: application flags are 16 bits, returned as given; flags that
    // would collide with the layout's own bits are refused before anything is sent.
    each_protocol("flags", |c| {
        c.store(StoreCommand::Set, "k", b"v", 0xbeef, 0).unwrap();
        assert_eq!(c.get_item("k").unwrap().unwrap().flags, 0xbeef);
        assert!(matches!(
            c.store(StoreCommand::Set, "k", b"v", 0xdead_beef, 0),
            Err(Error::ValueFormat(_))
        ));
        // Tester finding: flags above 65535 whose bits 16..=19 name a kind (0x12345,
        // 0x10000) were stored as that kind's (0x1012345: UTF-8 text) and read back so.
        // Every one is refused now, on every store path, and nothing is written.
        c.store(StoreCommand::Set, "k", b"ab", 0xffff, 0).unwrap();
        for wide in [0x1_0000u32, 0x1_2345, 0x7_0000, 0xf_ffff, 0xffff_ffff] {
            match c.store(StoreCommand::Set, "k", b"ab", wide, 0) {
                Err(Error::ValueFormat(m)) => assert!(m.contains("16 bits"), "{wide:#x}: {m}"),
                other => panic!("{wide:#x}: {other:?}"),
            }
            let mut it = mcpool::SetItem::new(b"k", b"ab", 0);
            it.flags = wide;
            assert!(
                matches!(&c.set_multi_items(&[it])[0], Err(Error::ValueFormat(_))),
                "{wide:#x}"
            );
        }
        assert_eq!(c.get_item("k").unwrap().unwrap().flags, 0xffff);
        // A kind's own flags (mcpool's mark set) are taken as they are, never rewritten.
        let text = c.kind_flags(mcpool::Kind::Text).unwrap();
        assert!(text > 0xffff);
        c.store(StoreCommand::Set, "k", b"ab", text, 0).unwrap();
        assert_eq!(c.get_item("k").unwrap().unwrap().flags, text);
    });
    // The libmemcached format: every flag is the caller's, all 32 bits.
    for p in PROTOCOLS {
        let c = Client::builder()
            .server(&server().addr())
            .key_prefix(unique(&format!("rawflags-{p}")))
            .protocol(p)
            .value_format(mcpool::ValueFormat::Libmemcached)
            .build()
            .unwrap();
        c.store(StoreCommand::Set, "k", b"v", 0xdead_beef, 0)
            .unwrap();
        assert_eq!(c.get_item("k").unwrap().unwrap().flags, 0xdead_beef);
    }
}

#[test]
fn empty_binary_and_large_values() {
    each_protocol("values", |c| {
        c.set("empty", b"", 0).unwrap();
        assert_eq!(c.get("empty").unwrap().unwrap(), b"");
        let binary = b"a\r\nEND\r\nVALUE x 0 1\r\n\0\xff".to_vec();
        c.set("bin", &binary, 0).unwrap();
        assert_eq!(c.get("bin").unwrap().unwrap(), binary);
        // 1 MiB of incompressible bytes (so it is sent as is).
        let mut x = 88172645463325252u64;
        let big: Vec<u8> = (0..1 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        assert_eq!(c.set("big", &big, 0).unwrap(), StoreOutcome::Stored);
        assert_eq!(c.get("big").unwrap().unwrap(), big);
    });
}

#[test]
fn add_replace_append_prepend() {
    each_protocol("arap", |c| {
        assert_eq!(c.replace("k", b"x", 0).unwrap(), StoreOutcome::NotStored);
        assert_eq!(c.append("k", b"x").unwrap(), StoreOutcome::NotStored);
        assert_eq!(c.prepend("k", b"x").unwrap(), StoreOutcome::NotStored);
        assert_eq!(c.add("k", b"mid", 0).unwrap(), StoreOutcome::Stored);
        assert_eq!(c.add("k", b"again", 0).unwrap(), StoreOutcome::NotStored);
        assert_eq!(c.append("k", b">").unwrap(), StoreOutcome::Stored);
        assert_eq!(c.prepend("k", b"<").unwrap(), StoreOutcome::Stored);
        assert_eq!(c.get("k").unwrap().unwrap(), b"<mid>");
        assert_eq!(c.replace("k", b"new", 0).unwrap(), StoreOutcome::Stored);
        assert_eq!(c.get("k").unwrap().unwrap(), b"new");
    });
}

#[test]
fn cas_conflict_and_missing() {
    each_protocol("cas", |c| {
        c.set("k", b"a", 0).unwrap();
        let item = c.gets("k").unwrap().unwrap();
        let unique = item.cas.expect("gets returns a cas");
        assert_eq!(c.cas("k", b"b", 0, unique).unwrap(), StoreOutcome::Stored);
        assert_eq!(c.cas("k", b"c", 0, unique).unwrap(), StoreOutcome::Exists);
        assert_eq!(c.get("k").unwrap().unwrap(), b"b");
        c.delete("k").unwrap();
        assert_eq!(c.cas("k", b"d", 0, unique).unwrap(), StoreOutcome::NotFound);
    });
}

#[test]
fn delete() {
    each_protocol("del", |c| {
        assert!(!c.delete("k").unwrap());
        c.set("k", b"v", 0).unwrap();
        assert!(c.delete("k").unwrap());
        assert_eq!(c.get("k").unwrap(), None);
    });
}

#[test]
fn incr_decr_edges() {
    each_protocol("arith", |c| {
        assert_eq!(c.incr("n", 1).unwrap(), None);
        c.set("n", b"10", 0).unwrap();
        assert_eq!(c.incr("n", 5).unwrap(), Some(15));
        assert_eq!(c.decr("n", 100).unwrap(), Some(0), "decr stops at zero");
        c.set("max", u64::MAX.to_string().as_bytes(), 0).unwrap();
        assert_eq!(c.incr("max", 2).unwrap(), Some(1), "incr wraps at 2^64");
        c.set("text", b"abc", 0).unwrap();
        match c.incr("text", 1) {
            Err(Error::Client { message, .. }) => {
                assert!(message.contains("non-numeric"), "{message}")
            }
            other => panic!("expected a client error, got {other:?}"),
        }
        // The connection that saw the error was dropped; the next call works.
        assert_eq!(c.incr("n", 1).unwrap(), Some(1));
    });
}

#[test]
fn incr_or_init() {
    each_protocol("addorincr", |c| {
        assert_eq!(c.incr_or_init("n", 1, 100, 0).unwrap(), 100);
        assert_eq!(c.incr_or_init("n", 1, 100, 0).unwrap(), 101);
        assert_eq!(c.decr_or_init("m", 1, 7, 0).unwrap(), 7);
        assert_eq!(c.decr_or_init("m", 2, 7, 0).unwrap(), 5);
    });
}

/// Tester finding (jcc 01): over text the counter `incr_or_init` creates was stored through
/// the value format with flags 0 (spymemcached's bytes 0x800, Whalin's 4096), while binary
/// and meta servers create it with flags 0; real spymemcached's incr(key, by, default) stores
/// flags 0 (a String to it). A counter is decimal text with raw flags 0 on every protocol and
/// in every format, and never compressed (compression on, threshold 1 here).
#[test]
fn counters_are_decimal_text_with_flags_0_in_every_format() {
    for format in mcpool::ValueFormat::ALL {
        for p in PROTOCOLS {
            let prefix = unique(&format!("ctr-{}-{p}", format.name()));
            let b = Client::builder()
                .server(&server().addr())
                .key_prefix(prefix.clone())
                .protocol(p)
                .value_format(format);
            let c = if format == mcpool::ValueFormat::Libmemcached {
                b.build().unwrap()
            } else {
                b.compression(true)
                    .compression_threshold(1)
                    .build()
                    .unwrap()
            };
            // The raw item: a reader that takes flags as they are.
            let raw = Client::builder()
                .server(&server().addr())
                .key_prefix(prefix)
                .value_format(mcpool::ValueFormat::Libmemcached)
                .build()
                .unwrap();
            let at = format!("{} over {p}", format.name());
            assert_eq!(c.incr_or_init("n", 1, 10, 0).unwrap(), 10, "{at}");
            let item = raw.get_item("n").unwrap().unwrap();
            assert_eq!((&item.value[..], item.flags), (&b"10"[..], 0), "{at}");
            assert_eq!(c.incr_or_init("n", 5, 10, 0).unwrap(), 15, "{at}");
            assert_eq!(c.decr_or_init("m", 1, 7, 0).unwrap(), 7, "{at}");
            let item = raw.get_item("m").unwrap().unwrap();
            assert_eq!((&item.value[..], item.flags), (&b"7"[..], 0), "{at}");
            // set_counter (Whalin's storeCounter): the same form, and incr counts on it
            assert_eq!(
                c.set_counter("s", 40, 0).unwrap(),
                StoreOutcome::Stored,
                "{at}"
            );
            let item = raw.get_item("s").unwrap().unwrap();
            assert_eq!((&item.value[..], item.flags), (&b"40"[..], 0), "{at}");
            assert_eq!(c.incr("s", 2).unwrap(), Some(42), "{at}");
            // unsigned 64-bit, as memcached's counters: 2^64-1 is stored, and incr wraps
            // to 0 as memcached does (set_counter took an i64 and refused it)
            c.set_counter("max", u64::MAX, 0).unwrap();
            let item = raw.get_item("max").unwrap().unwrap();
            assert_eq!(
                (&item.value[..], item.flags),
                (&b"18446744073709551615"[..], 0),
                "{at}"
            );
            assert_eq!(c.incr("max", 1).unwrap(), Some(0), "{at}");
        }
    }
}

#[test]
fn touch_gat_gats_and_expiry() {
    each_protocol("touch", |c| {
        assert!(!c.touch("k", 10).unwrap());
        assert_eq!(c.gat("k", 10).unwrap(), None);
        c.set("k", b"v", 1).unwrap();
        assert!(c.touch("k", 100).unwrap());
        assert_eq!(c.gat("k", 100).unwrap().unwrap(), b"v");
        let item = c.gats("k", 100).unwrap().unwrap();
        assert!(item.cas.is_some());
        // Expiry: a 1-second item disappears (memcached's clock ticks per second: wait up to 4 s).
        c.set("short", b"v", 1).unwrap();
        common::wait_until("expiry", Duration::from_secs(5), || {
            c.get("short").unwrap().is_none()
        });
        assert_eq!(
            c.get("k").unwrap().unwrap(),
            b"v",
            "touched item outlived its first ttl"
        );
    });
}

#[test]
fn multi_commands_keep_caller_order() {
    each_protocol("multi", |c| {
        let keys: Vec<String> = (0..250).map(|i| format!("k{i}")).collect();
        let items: Vec<(String, Vec<u8>)> = keys
            .iter()
            .filter(|k| !k.ends_with('7'))
            .map(|k| (k.clone(), k.as_bytes().repeat(3)))
            .collect();
        assert!(c
            .set_multi(&items, 0)
            .into_iter()
            .all(|r| r.unwrap() == StoreOutcome::Stored));
        let mut asked = keys.clone();
        asked.push("k1".into()); // a duplicate
        let got = c.get_multi(&asked);
        assert_eq!(got.len(), asked.len());
        for (k, r) in asked.iter().zip(&got) {
            let r = r.as_ref().unwrap();
            if k.ends_with('7') {
                assert!(r.is_none(), "{k}");
            } else {
                assert_eq!(r.as_ref().unwrap().value, k.as_bytes().repeat(3), "{k}");
            }
        }
        let with_cas = c.gets_multi(&["k1", "k2"]);
        assert!(with_cas
            .iter()
            .all(|r| r.as_ref().unwrap().as_ref().unwrap().cas.is_some()));
        let deleted = c.delete_multi(&["k1", "k7", "k2"]);
        let deleted: Vec<bool> = deleted.into_iter().map(Result::unwrap).collect();
        assert_eq!(deleted, [true, false, true]);
        // One bad key fails alone.
        let too_long = "k".repeat(251); // invalid on every protocol ("" is the prefix itself)
        let mixed = c.get_multi(&["k3", too_long.as_str(), "k4"]);
        assert!(mixed[0].as_ref().unwrap().is_some());
        assert!(matches!(mixed[1], Err(Error::InvalidKey { .. })));
        assert!(mixed[2].as_ref().unwrap().is_some());
    });
}

#[test]
fn a_multi_get_longer_than_one_request_line() {
    // 1,500 keys of ~70 bytes: more than one 64 KiB `get` line on the text protocol.
    each_protocol("long", |c| {
        let keys: Vec<String> = (0..1500).map(|i| format!("{i:0>64}")).collect();
        let items: Vec<(String, String)> = keys
            .iter()
            .step_by(3)
            .map(|k| (k.clone(), k[60..].to_string()))
            .collect();
        c.set_multi_noreply(&items, 0).unwrap();
        for (i, r) in c.get_multi(&keys).into_iter().enumerate() {
            let got = r.unwrap();
            if i % 3 == 0 {
                assert_eq!(got.unwrap().value, &keys[i].as_bytes()[60..], "{i}");
            } else {
                assert!(got.is_none(), "{i}");
            }
        }
    });
}

#[test]
fn small_values_of_a_multi_get_share_one_buffer_that_outlives_the_results() {
    use mcpool::value_bytes::SHARED_MAX;
    each_protocol("shared", |c| {
        let sizes = [0, 1, 40, SHARED_MAX, SHARED_MAX + 1, 40_000];
        let value = |n: usize| (0..n).map(|i| (i * 7 % 251) as u8).collect::<Vec<u8>>();
        for n in sizes {
            c.set(format!("v{n}"), value(n), 0).unwrap();
        }
        let mut keys: Vec<String> = sizes.iter().map(|n| format!("v{n}")).collect();
        keys.insert(2, "missing".into());
        keys.insert(4, "k".repeat(251)); // an invalid key: its own error, nothing else
        let got = c.get_multi(&keys);
        assert!(got[2].as_ref().unwrap().is_none());
        assert!(matches!(got[4], Err(Error::InvalidKey { .. })));
        let mut kept = None;
        for (k, r) in keys.iter().zip(&got) {
            let Some(n) = k.strip_prefix('v').map(|n| n.parse::<usize>().unwrap()) else {
                continue;
            };
            let item = r.as_ref().unwrap().as_ref().unwrap();
            assert_eq!(item.value, value(n), "{k}");
            assert_eq!(item.value.is_shared(), n <= SHARED_MAX, "{k}");
            if n == 40 {
                kept = Some(item.value.clone());
            }
        }
        // A value kept past its results keeps its bytes; into_vec copies a shared one out.
        drop(got);
        let kept = kept.unwrap();
        assert_eq!(kept, value(40));
        assert_eq!(kept.into_vec(), value(40));
        // gets_multi shares too, and keeps each key's flags and CAS.
        let with_cas = c.gets_multi(&["v1", "v40"]);
        for (r, n) in with_cas.iter().zip([1, 40]) {
            let item = r.as_ref().unwrap().as_ref().unwrap();
            assert_eq!(item.value, value(n));
            assert!(item.value.is_shared() && item.cas.is_some());
        }
    });
}

#[test]
fn get_multi_each_agrees_with_get_multi() {
    each_protocol("each", |c| {
        let big = b"compressible ".repeat(5000);
        c.set("small", b"s", 0).unwrap();
        c.set("big", &big, 0).unwrap();
        let too_long = "k".repeat(251); // invalid on every protocol ("" is the prefix itself)
        let keys = ["small", "missing", "big", too_long.as_str(), "small"];
        let mut seen: Vec<(usize, Vec<u8>)> = Vec::new();
        let found = c.get_multi_each(&keys, |i, v, flags| {
            assert_eq!(flags, 0);
            seen.push((i, v.to_vec()));
        });
        assert_eq!(found[0].as_ref().ok(), Some(&true));
        assert_eq!(found[1].as_ref().ok(), Some(&false));
        assert_eq!(found[2].as_ref().ok(), Some(&true));
        assert!(matches!(found[3], Err(Error::InvalidKey { .. })));
        assert_eq!(found[4].as_ref().ok(), Some(&true));
        seen.sort();
        assert_eq!(
            seen,
            vec![(0, b"s".to_vec()), (2, big.clone()), (4, b"s".to_vec())]
        );
        let items = c.get_multi(&keys);
        assert_eq!(items[2].as_ref().unwrap().as_ref().unwrap().value, big);
    });
}

#[test]
fn noreply_bulk_set() {
    each_protocol("noreply", |c| {
        let items: Vec<(String, String)> = (0..500)
            .map(|i| (format!("n{i}"), format!("v{i}")))
            .collect();
        c.set_multi_noreply(&items, 0).unwrap();
        let keys: Vec<&String> = items.iter().map(|(k, _)| k).collect();
        for ((_, v), r) in items.iter().zip(c.get_multi(&keys)) {
            assert_eq!(r.unwrap().unwrap().value, v.as_bytes());
        }
    });
}

/// Tester finding batches 4: one item refused before sending (a value over
/// `max_value_size`, a key with a space) kept a text `set_multi_noreply` from sending any
/// item, where meta and binary stored the others; now it fails alone on every protocol, and
/// the call returns its error.
#[test]
fn noreply_bulk_set_with_a_refused_item_stores_the_others() {
    each_protocol("noreply-bad", |c| {
        // incompressible (a compressible value is stored when it compresses below the limit)
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let big: Vec<u8> = (0..(2 << 20) + 1)
            .map(|_| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (seed >> 56) as u8
            })
            .collect();
        let mut items: Vec<(Vec<u8>, Vec<u8>)> = (0..50)
            .map(|i| (format!("n{i}").into_bytes(), format!("v{i}").into_bytes()))
            .collect();
        items.insert(10, (b"big".to_vec(), big));
        items.insert(30, (b"bad key".to_vec(), b"v".to_vec()));
        let e = c.set_multi_noreply(&items, 0).unwrap_err();
        assert!(matches!(e, Error::ValueTooLarge { .. }), "{e}");
        for (k, v) in items.iter().filter(|(k, _)| k != b"big" && k != b"bad key") {
            assert_eq!(c.get(k).unwrap().as_deref(), Some(&v[..]), "{k:?}");
        }
        assert_eq!(c.get(b"big").unwrap(), None);
    });
}

#[test]
fn unicode_keys_and_prefix_on_every_command() {
    each_protocol("uni", |c| {
        let key = "ключ-鍵-🔑";
        c.set(key, b"v", 0).unwrap();
        assert_eq!(c.get(key).unwrap().unwrap(), b"v");
        // The prefix is on the wire: a client without it does not see the key.
        let bare = Client::new([server().addr()]).unwrap();
        assert_eq!(bare.get(key).unwrap(), None);
        let wire = c.wire_key(key.as_bytes()).unwrap().into_owned();
        assert_eq!(bare.get(&wire).unwrap().unwrap(), b"v");
        bare.set(&wire, b"7", 0).unwrap();
        assert_eq!(c.incr(key, 1).unwrap(), Some(8));
        assert!(c.touch(key, 0).unwrap());
        assert!(c.delete(key).unwrap());
        assert_eq!(bare.get(&wire).unwrap(), None);
    });
}

#[test]
fn version_stats_flush() {
    // Own server: flush_all must not disturb the other tests.
    for protocol in PROTOCOLS {
        version_stats_flush_with(protocol);
    }
}

/// `flush_all_each` says which servers were flushed: with one of two down, the live one is
/// `Ok` (and flushed), the dead one its error; `flush_all` reduces that to the failure.
#[test]
fn flush_all_each_reports_every_server() {
    let mc = Memcached::start(&[]);
    let dead = format!("127.0.0.1:{}", common::free_port());
    let c = Client::builder()
        .server(&mc.addr())
        .server(&dead)
        .connect_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let live = Client::builder().server(&mc.addr()).build().unwrap();
    live.set("k", b"v", 0).unwrap();
    let r = c.flush_all_each(None);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].0, mc.addr());
    assert!(r[0].1.is_ok(), "{:?}", r[0].1);
    assert_eq!(r[1].0, dead);
    assert!(r[1].1.is_err());
    assert_eq!(live.get("k").unwrap(), None, "the live server was flushed");
    assert!(c.flush_all(None).is_err(), "flush_all: the first failure");
}

/// `flush_server` flushes one server (Whalin's `flushAll(String[] servers)`): the other keeps
/// its items; an index past the list is refused before anything is sent.
#[test]
fn flush_server_flushes_only_that_server() {
    for protocol in PROTOCOLS {
        let a = Memcached::start(&[]);
        let b = Memcached::start(&[]);
        let c = Client::builder()
            .server(&a.addr())
            .server(&b.addr())
            .protocol(protocol)
            .build()
            .unwrap();
        let on_a = Client::new([a.addr()]).unwrap();
        let on_b = Client::new([b.addr()]).unwrap();
        on_a.set("k", b"a", 0).unwrap();
        on_b.set("k", b"b", 0).unwrap();
        c.flush_server(1, None).unwrap();
        assert_eq!(
            on_a.get("k").unwrap().as_deref(),
            Some(&b"a"[..]),
            "{protocol:?}"
        );
        assert_eq!(on_b.get("k").unwrap(), None, "{protocol:?}");
        let e = c.flush_server(2, None).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{e:?}");
        assert!(e.to_string().contains("past the 2 servers"), "{e}");
        c.flush_server(0, None).unwrap();
        assert_eq!(on_a.get("k").unwrap(), None, "{protocol:?}");
    }
}

/// Tester finding (commands F3): an unknown stats group was a client error (`ERROR`) on text
/// and meta but a server error (status 0x01) on binary, and so was `conns`, a group memcached
/// has on text only. One kind now on every protocol: `Error::Client`, CLIENT_ERROR class,
/// with one message naming the group; the connection stays usable.
#[test]
fn unknown_stats_group_is_one_error_kind_on_every_protocol() {
    let mc = Memcached::start(&[]);
    for protocol in PROTOCOLS {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(protocol)
            .build()
            .unwrap();
        let mut groups = vec!["bogus"];
        if protocol == Protocol::Binary {
            groups.push("conns");
        }
        for g in groups {
            let e = c.stats(Some(g)).remove(0).1.unwrap_err();
            assert!(matches!(e, Error::Client { .. }), "{protocol:?} {g}: {e:?}");
            assert_eq!(
                e.class(),
                mcpool::error::Class::ClientError,
                "{protocol:?} {g}"
            );
            let want = format!("stats group \"{g}\": the server has no such statistics");
            assert!(e.to_string().contains(&want), "{protocol:?}: {e}");
        }
        assert!(
            c.stats(Some("settings")).remove(0).1.is_ok(),
            "{protocol:?}"
        );
    }
}

/// Tester findings cuser2 3, cli2 7: a group the client does not send (empty, several words,
/// a control byte) read "configuration error: bad stats group", though the status was an
/// invalid argument: it is `Error::InvalidArgument` (CLIENT_ERROR class), saying why.
#[test]
fn a_stats_group_not_sent_is_an_invalid_argument() {
    let c = Client::builder().server("127.0.0.1:1").build().unwrap();
    for g in ["", "detail dump", "cachedump 1 1", "items\r\nflush_all"] {
        let e = c.stats(Some(g)).remove(0).1.unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{g:?}: {e:?}");
        assert_eq!(e.class(), mcpool::error::Class::ClientError, "{g:?}");
        let text = e.to_string();
        assert!(
            text.contains("one word") && !text.contains("configuration"),
            "{text}"
        );
    }
}

fn version_stats_flush_with(protocol: Protocol) {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .protocol(protocol)
        .build()
        .unwrap();
    let v = c.version();
    assert_eq!(v.len(), 1);
    assert!(v[0].1.as_ref().unwrap().starts_with("1."), "{v:?}");
    for group in [
        None,
        Some("items"),
        Some("slabs"),
        Some("sizes"),
        Some("settings"),
    ] {
        let s = c.stats(group);
        assert!(s[0].1.is_ok(), "{group:?}: {s:?}");
    }
    let general = c.stats(None).remove(0).1.unwrap();
    assert!(general.iter().any(|(k, _)| k == "curr_connections"));
    let settings = c.stats(Some("settings")).remove(0).1.unwrap();
    assert!(settings.iter().any(|(k, _)| k == "item_size_max"));
    assert!(c.stats(Some("bad group")).iter().all(|(_, r)| r.is_err()));
    // `stats reset` answers RESET: no statistics, and the counters start again.
    c.get("k").unwrap();
    let hits = |c: &Client| {
        let s = c.stats(None).remove(0).1.unwrap();
        let v = s.iter().find(|(k, _)| k == "cmd_get").unwrap().1.clone();
        v.parse::<u64>().unwrap()
    };
    assert!(hits(&c) > 0);
    assert_eq!(c.stats(Some("reset")).remove(0).1.unwrap(), vec![]);
    assert_eq!(hits(&c), 0);
    c.set("k", b"v", 0).unwrap();
    c.flush_all(None).unwrap();
    assert_eq!(c.get("k").unwrap(), None);
    c.set("k", b"v", 0).unwrap();
    c.flush_all(Some(100)).unwrap();
    assert_eq!(
        c.get("k").unwrap().unwrap(),
        b"v",
        "delayed flush has not happened yet"
    );
}

#[test]
fn unix_socket_server() {
    let dir = std::env::temp_dir().join(unique("mcpool-sock"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mc.sock");
    let path_s = path.to_str().unwrap().to_owned();
    let _mc = Memcached::start_unix(&path_s);
    let c = Client::new([path_s.as_str()]).unwrap();
    c.set("k", b"over unix", 0).unwrap();
    assert_eq!(c.get("k").unwrap().unwrap(), b"over unix");
    let _ = std::fs::remove_dir_all(dir);
}

/// A socket path that is not a socket says what it is: connect(2) answers "Connection
/// refused" for a regular file or a directory, which sent users looking for a stopped
/// memcached (measured before: "I/O error talking to /tmp/x/regular: Connection refused
/// (os error 111)", the same for a directory). A missing path already says so.
#[test]
fn a_unix_socket_path_that_is_no_socket_says_what_it_is() {
    let dir = std::env::temp_dir().join(unique("mcpool-notsock"));
    std::fs::create_dir_all(&dir).unwrap();
    // A real memcached on a socket in the same directory: the list's working server.
    let sock = dir.join("mc.sock");
    let _mc = Memcached::start_unix(sock.to_str().unwrap());
    let regular = dir.join("regular");
    std::fs::write(&regular, b"").unwrap();
    let adir = dir.join("adir");
    std::fs::create_dir_all(&adir).unwrap();
    let missing = dir.join("missing");
    let message = |path: &std::path::Path| {
        let c = Client::builder()
            .server(path.to_str().unwrap())
            .min_idle(0)
            .build()
            .unwrap();
        let e = c.set("k", b"v", 0).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e:?}");
        e.to_string()
    };
    let m = message(&regular);
    assert!(
        m.contains("not a unix socket") && m.contains("regular file"),
        "{m}"
    );
    let m = message(&adir);
    assert!(m.contains("is a directory, not a unix socket"), "{m}");
    let m = message(&missing);
    assert!(m.contains("No such file or directory"), "{m}");
    let c = Client::new([sock.to_str().unwrap()]).unwrap();
    c.set("k", b"v", 0).unwrap();
    assert_eq!(c.get("k").unwrap().unwrap(), b"v");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn ipv6_loopback_when_available() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("SKIP: no IPv6 loopback on this machine");
        return;
    }
    let port = common::free_port();
    let mc = Memcached::start_on(port, &["-l", "[::1]"]);
    let c = Client::new([format!("[::1]:{}", mc.port)]).unwrap();
    c.set("k", b"six", 0).unwrap();
    assert_eq!(c.get("k").unwrap().unwrap(), b"six");
}

/// Issue 16 item 4 (the walk-through of adding a command): `noop` is one round trip on each
/// server (meta `mn`, binary NOOP, text `version`), its reply read exactly, so the connection
/// carries the next request; a server that is down answers with its error.
#[test]
fn noop_round_trips_on_every_protocol() {
    each_protocol("noop", |c| {
        c.set("k", b"v", 0).unwrap();
        for _ in 0..3 {
            let r = c.noop();
            assert_eq!(r.len(), 1);
            assert!(r[0].1.is_ok(), "{:?}: {r:?}", c.protocol());
            assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"v"[..]));
        }
    });
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    for protocol in PROTOCOLS {
        let c = Client::builder()
            .server(&down)
            .protocol(protocol)
            .connect_timeout(Duration::from_millis(500))
            .build()
            .unwrap();
        assert!(c.noop()[0].1.is_err(), "{protocol}: nobody listens");
    }
}
