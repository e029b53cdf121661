//! Expiries memcached cannot honour (above 2^31 - 1: text and meta read them as negative, so
//! the item expires at once while the server answers success) are refused with
//! `Error::InvalidArgument` before anything is sent, on every protocol and every call that
//! takes one; 2^31 - 1 itself stores and reads back.
mod common;

use common::{unique, Memcached};
use mcpool::sink::Callbacks;
use mcpool::ttl::MAX_TTL;
use mcpool::{Client, Error, Protocol, SetItem, StoreCommand, StoreOutcome, Value};

const BAD: [u32; 2] = [1 << 31, u32::MAX];
const PROTOCOLS: [Protocol; 3] = [Protocol::Text, Protocol::Meta, Protocol::Binary];

fn client(mc: &Memcached, protocol: Protocol) -> Client {
    Client::builder()
        .server(&mc.addr())
        .protocol(protocol)
        .key_prefix(unique("ttl"))
        .build()
        .unwrap()
}

/// The server's counters of commands received: unchanged means nothing was sent.
fn sent(c: &Client) -> Vec<(String, String)> {
    let (_, stats) = c.stats(None).into_iter().next().unwrap();
    let mut counted: Vec<_> = stats
        .unwrap()
        .into_iter()
        .filter(|(k, _)| {
            k.starts_with("cmd_")
                || k.ends_with("_hits")
                || k.ends_with("_misses")
                || k == "total_items"
        })
        .collect();
    counted.sort();
    counted
}

#[track_caller]
fn refused<T: std::fmt::Debug>(r: mcpool::Result<T>, what: &str) {
    match r {
        Err(Error::InvalidArgument { what: w, reason }) => {
            assert_eq!(w, what, "{reason}");
            assert_eq!(
                Error::InvalidArgument { what: w, reason }.class(),
                mcpool::error::Class::ClientError
            );
        }
        other => panic!("expected InvalidArgument({what}), got {other:?}"),
    }
}

/// get-and-touch of many keys through the read engine: each key's result.
fn gat_multi(c: &Client, keys: &[&str], ttl: u32) -> Vec<mcpool::Result<bool>> {
    let mut results = Vec::new();
    c.read(
        keys,
        false,
        Some(ttl),
        &mut Callbacks(|_, _: &[u8], _, _| Ok(()), |_, r| results.push(r)),
    );
    results
}

#[test]
fn the_largest_ttl_memcached_honours_stores_and_reads_back() {
    let mc = Memcached::start(&[]);
    for p in PROTOCOLS {
        let c = client(&mc, p);
        assert_eq!(
            c.set("k", b"v", MAX_TTL).unwrap(),
            StoreOutcome::Stored,
            "{p}"
        );
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"v"[..]), "{p}");
        assert!(c.touch("k", MAX_TTL).unwrap(), "{p}");
        assert_eq!(
            c.gat("k", MAX_TTL).unwrap().as_deref(),
            Some(&b"v"[..]),
            "{p}"
        );
        assert_eq!(gat_multi(&c, &["k", "none"], MAX_TTL).len(), 2);
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"v"[..]), "{p}");
        assert_eq!(c.incr_or_init("n", 1, 5, MAX_TTL).unwrap(), 5, "{p}");
        assert_eq!(c.get("n").unwrap().as_deref(), Some(&b"5"[..]), "{p}");
        let items = [SetItem::new(b"m", b"mv", MAX_TTL)];
        assert!(matches!(
            c.set_multi_items(&items)[0],
            Ok(StoreOutcome::Stored)
        ));
        assert_eq!(c.get("m").unwrap().as_deref(), Some(&b"mv"[..]), "{p}");
        c.flush_all(Some(MAX_TTL)).unwrap();
        // A flush scheduled for January 2038 leaves the items there now.
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"v"[..]), "{p}");
        if p == Protocol::Meta {
            // A lease's times are durations: 30 days at most (tester finding ttl 3).
            let month = mcpool::ttl::RELATIVE_MAX;
            assert!(c.invalidate("k", month).unwrap());
            assert!(c.get_lease("k", month, Some(month)).is_ok());
            assert!(c.get_lease("fresh", month, None).is_ok());
            refused(c.invalidate("k", month + 1), "stale_ttl");
            refused(c.get_lease("k", month + 1, None), "vivify_ttl");
            refused(c.get_lease("k", 10, Some(month + 1)), "recache_below");
        }
        c.flush_all(None).unwrap();
    }
}

#[test]
fn ttls_memcached_cannot_honour_are_refused_before_anything_is_sent() {
    let mc = Memcached::start(&[]);
    for p in PROTOCOLS {
        let c = client(&mc, p);
        assert_eq!(c.set("k", b"old", 0).unwrap(), StoreOutcome::Stored);
        let cas = c.gets("k").unwrap().unwrap().cas.unwrap();
        for bad in BAD {
            let before = sent(&c);
            refused(c.add("fresh", b"new", bad), "ttl");
            refused(c.replace("k", b"new", bad), "ttl");
            refused(c.cas("k", b"new", bad, cas), "ttl");
            refused(c.touch("k", bad), "ttl");
            refused(c.gat("k", bad), "ttl");
            refused(c.gats("k", bad), "ttl");
            for r in gat_multi(&c, &["k", "fresh"], bad) {
                refused(r, "ttl");
            }
            refused(c.incr_or_init("n", 1, 5, bad), "ttl");
            refused(c.decr_or_init("n", 1, 5, bad), "ttl");
            for cmd in [StoreCommand::Add, StoreCommand::Cas(0)] {
                let items = [SetItem {
                    cas,
                    ..SetItem::new(b"k", b"new", bad)
                }];
                refused(c.store_multi_items(cmd, &items).remove(0), "ttl");
            }
            refused(c.touch_multi(&[("k", bad)]).remove(0), "ttl");
            refused(c.flush_all(Some(bad)), "delay");
            if p == Protocol::Meta {
                refused(c.get_lease("fresh", bad, None), "vivify_ttl");
                refused(c.get_lease("k", 10, Some(bad)), "recache_below");
                refused(c.invalidate("k", bad), "stale_ttl");
            }
            assert_eq!(sent(&c), before, "{p} {bad}: something was sent");
            // The old value is intact and nothing was created.
            assert_eq!(
                c.get("k").unwrap().as_deref(),
                Some(&b"old"[..]),
                "{p} {bad}"
            );
            assert_eq!(c.get("fresh").unwrap(), None, "{p} {bad}");
            assert_eq!(c.get("n").unwrap(), None, "{p} {bad}");
        }
        // In a batch, the refused item fails alone.
        let r = c.touch_multi(&[("k", u32::MAX), ("other", 100)]);
        refused(r[0].clone(), "ttl");
        assert!(matches!(r[1], Ok(false)), "{p} {:?}", r[1]);
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"old"[..]), "{p}");
        let items = [
            SetItem::new(b"k", b"new", 1 << 31),
            SetItem::new(b"other", b"stored", 0),
        ];
        let r = c.set_multi_items(&items);
        refused(r[0].clone(), "ttl");
        assert!(matches!(r[1], Ok(StoreOutcome::Stored)), "{p} {:?}", r[1]);
        assert_eq!(c.get("k").unwrap(), None, "{p}: the refused set deleted it");
        assert_eq!(c.get("other").unwrap().as_deref(), Some(&b"stored"[..]));
    }
}

/// A `set` refused for its expiry stores nothing and deletes the key, on every set path, as
/// one refused as too large does: the clients it replaces send such a set, which memcached
/// stores already expired (or for the wrapped time), so none leaves the older value to be
/// read (tester finding ttl 1: mcpool raised and `get` then returned the old value).
/// Other stores leave the key alone.
#[test]
fn a_set_refused_for_its_ttl_deletes_the_key_on_every_set_path() {
    let mc = Memcached::start(&[]);
    for p in PROTOCOLS {
        let c = client(&mc, p);
        let sets = |c: &Client| {
            let (_, stats) = c.stats(None).into_iter().next().unwrap();
            stats
                .unwrap()
                .into_iter()
                .find(|(k, _)| k == "cmd_set")
                .unwrap()
                .1
        };
        type SetPath = Box<dyn Fn(&Client, u32) -> Vec<mcpool::Result<()>>>;
        let mut paths: Vec<(&str, SetPath)> = vec![
            (
                "set",
                Box::new(|c, t| vec![c.set("k", b"new", t).map(drop)]),
            ),
            (
                "store",
                Box::new(|c, t| vec![c.store(StoreCommand::Set, "k", b"new", 3, t).map(drop)]),
            ),
            (
                "set_value",
                Box::new(|c, t| {
                    vec![c
                        .set_value("k", &Value::Bytes(b"new".to_vec()), t)
                        .map(drop)]
                }),
            ),
            (
                "set_multi",
                Box::new(|c, t| {
                    c.set_multi(&[("k", "new")], t)
                        .into_iter()
                        .map(|r| r.map(drop))
                        .collect()
                }),
            ),
            (
                "set_multi_noreply",
                Box::new(|c, t| vec![c.set_multi_noreply(&[("k", "new")], t)]),
            ),
            (
                "store_multi_items",
                Box::new(|c, t| {
                    c.store_multi_items(StoreCommand::Set, &[SetItem::new(b"k", b"new", t)])
                        .into_iter()
                        .map(|r| r.map(drop))
                        .collect()
                }),
            ),
        ];
        if p == Protocol::Meta {
            paths.push((
                "store_with_version",
                Box::new(|c, t| {
                    vec![c
                        .store_with_version(StoreCommand::Set, "k", b"new", 0, t, 7)
                        .map(drop)]
                }),
            ));
        }
        for (name, path) in &paths {
            for bad in BAD {
                assert_eq!(c.set("k", b"old", 0).unwrap(), StoreOutcome::Stored);
                let before = sets(&c);
                for r in path(&c, bad) {
                    let e = r.expect_err(name);
                    assert!(
                        e.to_string().contains("the key was deleted"),
                        "{p} {name}: {e}"
                    );
                    refused(Err::<(), _>(e), "ttl");
                }
                assert_eq!(sets(&c), before, "{p} {name} {bad}: a set was sent");
                assert_eq!(
                    c.get("k").unwrap(),
                    None,
                    "{p} {name} {bad}: the old value stayed"
                );
            }
        }
        // A batch refused for its one ttl: each key's message says the batch's other keys
        // went too (tester note retest38: C and the CLI report the first key's message)
        for k in ["a", "b", "c"] {
            assert_eq!(c.set(k, b"old", 0).unwrap(), StoreOutcome::Stored);
        }
        let items = [("a", &b"1"[..]), ("b", b"2"), ("c", b"3")];
        for r in c.set_multi(&items, u32::MAX) {
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains("the key was deleted")
                    && e.contains(
                        "and so were the 2 other keys of this batch refused for their ttl"
                    ),
                "{p}: {e}"
            );
        }
        for k in ["a", "b", "c"] {
            assert_eq!(c.get(k).unwrap(), None, "{p} {k}");
        }
        // ... the multi-item stores too (C's set_multi), the time checked last
        let many = [
            SetItem::new(b"a", b"1", u32::MAX),
            SetItem::new(b"b", b"2", u32::MAX),
        ];
        for r in c.store_multi_items(StoreCommand::Set, &many) {
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains("and so was the other key of this batch refused for its ttl"),
                "{p}: {e}"
            );
        }
        let e = c
            .set_multi_noreply(&items[..2], u32::MAX)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("and so was the other key of this batch refused for its ttl"),
            "{p}: {e}"
        );
        // Through the binding's entry: a signed time, named as given.
        assert_eq!(c.set("k", b"old", 0).unwrap(), StoreOutcome::Stored);
        let e = c
            .store_ttl_checked(StoreCommand::Set, b"k", 1 << 40)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("1099511627776") && e.contains("the key was deleted"),
            "{e}"
        );
        assert_eq!(c.get("k").unwrap(), None, "{p}");
        assert_eq!(c.set("k", b"old", 0).unwrap(), StoreOutcome::Stored);
        refused(
            c.store_ttl_checked(StoreCommand::Replace, b"k", 1 << 40),
            "ttl",
        );
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"old"[..]), "{p}");
        assert_eq!(
            c.store_ttl_checked(StoreCommand::Set, b"k", -1).unwrap(),
            mcpool::ttl::EXPIRED_AT_ONCE
        );
        assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"old"[..]), "{p}");
    }
}

#[test]
fn a_refused_ttl_is_never_failed_open_and_the_message_says_why() {
    let mc = Memcached::start(&[]);
    let c = Client::builder()
        .server(&mc.addr())
        .fail_open(true)
        .key_prefix(unique("ttl"))
        .build()
        .unwrap();
    let e = c.set("k", b"v", u32::MAX).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("4294967295") && msg.contains("2147483647"),
        "{msg}"
    );
    assert!(msg.contains("-1"), "{msg}");
}

/// A plain set of a small value waiting for a connection may be handed over to another
/// caller's (src/gate.rs, docs/handover.md): a refused TTL never gets that far. 16 threads on
/// one connection, each setting its own key with a good TTL, then with a refused one, then
/// reading it back: the refused set is an error at once and the good value stays.
#[test]
fn a_refused_ttl_is_never_handed_over() {
    let mc = Memcached::start(&[]);
    for p in PROTOCOLS {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .max_size(1)
            .min_idle(0)
            .pool_timeout(std::time::Duration::from_secs(30))
            .key_prefix(unique("ttl-gate"))
            .build()
            .unwrap();
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    let key = format!("t{t}");
                    for i in 0..100 {
                        let good = format!("good {i}");
                        assert_eq!(
                            c.set(&key, good.as_bytes(), 0).unwrap(),
                            StoreOutcome::Stored
                        );
                        refused(c.set(&key, b"bad", BAD[i % 2]), "ttl");
                        // (the refused set deleted it: ttl 1)
                        assert_eq!(c.get(&key).unwrap(), None);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(
            c.metrics()[0].handed_over > 0,
            "{p}: nothing was handed over"
        );
    }
}
