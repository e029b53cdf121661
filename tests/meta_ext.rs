//! Issue 21 item 6, meta protocol completeness: item metadata (`mg h l t c s f`) against a
//! real memcached; explicit CAS versions (`E`) refused with the server's version by the
//! installed memcached (older than 1.6.27) and sent as `E<n>` to a deliberately fake server
//! that reports 1.6.27; memcached 1.6.6's `OK` in place of `HD` accepted from a fake server
//! reporting 1.6.6 and refused as a protocol violation from one reporting a newer version.
mod common;

use common::fake::{fake, Then};
use common::{unique, wait_until, Memcached};
use mcpool::{Client, Error, Protocol, StoreCommand, StoreOutcome};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn meta(addr: &str) -> Client {
    Client::builder()
        .server(addr)
        .protocol(Protocol::Meta)
        .failure_limit(100)
        .io_timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// The opaque token (`O…`) of a meta request line.
fn opaque(line: &str) -> String {
    line.split_whitespace()
        .find(|t| t.starts_with('O'))
        .unwrap_or("")
        .to_owned()
}

/// A deliberately fake meta server that reports `version` and answers every `ms`, `md` and
/// `ma` with `success` (`HD` or `OK`) plus the request's opaque (`ma` with `VA 1 … 7`);
/// every request line is recorded.
fn fake_meta(version: &'static str, success: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let (addr, _) = fake(16, move |_, line, w| {
        let line = String::from_utf8_lossy(line).trim_end().to_owned();
        let reply = match line.split_whitespace().next() {
            Some("version") => format!("VERSION {version}\r\n"),
            Some("ms") | Some("md") => format!("{success} {}\r\n", opaque(&line)),
            Some("ma") => format!("VA 1 {}\r\n7\r\n", opaque(&line)),
            _ => String::new(), // a data block
        };
        log.lock().unwrap().push(line);
        if w.write_all(reply.as_bytes()).is_err() {
            return Then::Close;
        }
        Then::Continue
    });
    (addr, seen)
}

#[test]
fn item6_meta_info_reads_hit_before_last_access_ttl_without_the_value() {
    let mc = Memcached::start(&[]);
    let c = meta(&mc.addr());
    let k = unique("info");
    assert_eq!(
        c.set(&k, b"twelve bytes", 100).unwrap(),
        StoreOutcome::Stored
    );
    let cas = c.gets(&k).unwrap().unwrap().cas.unwrap();
    let first = c.meta_info(&k).unwrap().expect("the item is there");
    // The gets above read it.
    assert!(first.hit_before, "{first:?}");
    let ttl = first.ttl.expect("a TTL of 100 s");
    assert!(
        ttl <= Duration::from_secs(100) && ttl >= Duration::from_secs(90),
        "{ttl:?}"
    );
    assert_eq!((first.cas, first.size), (cas, 12), "{first:?}");
    assert!(first.last_access <= Duration::from_secs(5));
    // A fresh item, never read: hit_before false; no TTL: None (t-1).
    let fresh = unique("fresh");
    c.set(&fresh, b"v", 0).unwrap();
    let info = c.meta_info(&fresh).unwrap().unwrap();
    assert!(!info.hit_before, "{info:?}");
    assert_eq!(info.ttl, None);
    assert_eq!(info.size, 1);
    // A metadata read is not an access: the item stays never-read, and its last access
    // grows while nobody reads it (memcached's clock ticks per second).
    wait_until("last access to grow", Duration::from_secs(10), || {
        c.meta_info(&fresh).unwrap().unwrap().last_access >= Duration::from_secs(2)
    });
    assert!(!c.meta_info(&fresh).unwrap().unwrap().hit_before);
    c.get(&fresh).unwrap();
    // (memcached moves the access time at most once a minute, so only `h` shows the read.)
    assert!(c.meta_info(&fresh).unwrap().unwrap().hit_before);
    assert_eq!(c.meta_info(unique("missing")).unwrap(), None);
    let text = Client::new([mc.addr()]).unwrap();
    assert!(matches!(text.meta_info(&k), Err(Error::Unsupported(_))));
}

#[test]
fn item6_explicit_cas_version_is_refused_by_the_installed_memcached_with_its_version() {
    let mc = Memcached::start(&[]);
    let c = meta(&mc.addr());
    let version = c.version().into_iter().next().unwrap().1.unwrap();
    let k = unique("e");
    match c.store_with_version(StoreCommand::Set, &k, b"v", 0, 0, 12345) {
        Err(Error::Unsupported(m)) => {
            assert!(m.contains(&version) && m.contains("1.6.27"), "{m}")
        }
        other => panic!("memcached {version} has no E: {other:?}"),
    }
    assert_eq!(c.get(&k).unwrap(), None, "nothing was stored");
    assert!(matches!(
        c.delete_with_version(&k, 1),
        Err(Error::Unsupported(_))
    ));
    // The connection is still good for ordinary calls.
    assert_eq!(c.set(&k, b"v", 0).unwrap(), StoreOutcome::Stored);
    let text = Client::new([mc.addr()]).unwrap();
    // named for the store it is (tester finding metafeat 6: "store_with_version")
    match text.store_with_version(StoreCommand::Set, &k, b"v", 0, 0, 1) {
        Err(Error::Unsupported(m)) => assert!(m.starts_with("set_with_version needs"), "{m}"),
        other => panic!("{other:?}"),
    }
    // version 0, which memcached never gives an item, is refused before anything is sent,
    // as a cas of 0 is (tester finding metafeat 4: stored, the item's CAS read as none)
    for r in [
        c.store_with_version(StoreCommand::Set, &k, b"v", 0, 0, 0)
            .map(|_| ()),
        c.delete_with_version(&k, 0).map(|_| ()),
        c.arith_with_version(true, &k, 1, 0).map(|_| ()),
    ] {
        match r {
            Err(Error::InvalidArgument {
                what: "version", ..
            }) => {}
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn item6_explicit_cas_version_goes_on_the_wire_as_e() {
    let (addr, seen) = fake_meta("1.6.27", "HD");
    let c = meta(&addr);
    assert_eq!(
        c.store_with_version(StoreCommand::Set, "k", b"hello", 0, 0, 12345)
            .unwrap(),
        StoreOutcome::Stored
    );
    assert!(c.delete_with_version("k", 777).unwrap());
    assert_eq!(c.arith_with_version(true, "n", 1, 99).unwrap(), Some(7));
    let seen = seen.lock().unwrap().clone();
    let ms: Vec<_> = seen.iter().filter(|l| l.starts_with("ms ")).collect();
    let md: Vec<_> = seen.iter().filter(|l| l.starts_with("md ")).collect();
    let ma: Vec<_> = seen.iter().filter(|l| l.starts_with("ma ")).collect();
    assert!(
        ms.len() == 1 && ms[0].split(' ').any(|t| t == "E12345"),
        "{seen:?}"
    );
    assert!(
        md.len() == 1 && md[0].split(' ').any(|t| t == "E777"),
        "{seen:?}"
    );
    assert!(
        ma.len() == 1 && ma[0].split(' ').any(|t| t == "E99"),
        "{seen:?}"
    );
    // The version was asked once, on the connection, before the first E.
    assert_eq!(
        seen.iter().filter(|l| *l == "version").count(),
        1,
        "{seen:?}"
    );
    assert_eq!(seen[0], "version");
}

#[test]
fn item6_ok_for_hd_is_accepted_from_memcached_1_6_6() {
    let (addr, seen) = fake_meta("1.6.6", "OK");
    let c = meta(&addr);
    assert_eq!(c.set("a", b"1", 0).unwrap(), StoreOutcome::Stored);
    assert_eq!(c.set("b", b"2", 0).unwrap(), StoreOutcome::Stored);
    assert!(c.delete("a").unwrap());
    let all = c.set_multi(&[("x", "1"), ("y", "2"), ("z", "3")], 0);
    assert!(
        all.iter().all(|r| matches!(r, Ok(StoreOutcome::Stored))),
        "{all:?}"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen.iter().filter(|l| *l == "version").count(),
        1,
        "the version is asked once per connection: {seen:?}"
    );
}

#[test]
fn item6_ok_for_hd_from_a_newer_server_is_a_protocol_violation() {
    let (addr, _) = fake_meta("1.6.18", "OK");
    let c = meta(&addr);
    for _ in 0..2 {
        match c.set("a", b"1", 0) {
            Err(Error::Protocol { detail, .. }) => {
                assert!(
                    detail.contains("OK") && detail.contains("1.6.18"),
                    "{detail}"
                )
            }
            other => panic!("OK from 1.6.18 must be refused: {other:?}"),
        }
    }
    let all = c.set_multi(&[("x", "1"), ("y", "2")], 0);
    assert!(
        all.iter().all(|r| matches!(r, Err(Error::Protocol { .. }))),
        "{all:?}"
    );
    // HD from the same kind of server is fine.
    let (addr, _) = fake_meta("1.6.18", "HD");
    assert_eq!(meta(&addr).set("a", b"1", 0).unwrap(), StoreOutcome::Stored);
}

/// Tester finding: after `get_lease` answered `Recompute` on a miss, the placeholder
/// memcached made (`mg N<ttl>`: an empty item it flags `Z` to every later `mg`) was read by
/// this client's plain reads as a stored empty value. It is a miss for every plain read;
/// a value really stored empty, and an invalidated (stale, `X`) one, are still values.
#[test]
fn lease_placeholder_is_a_miss_for_plain_reads() {
    let mc = Memcached::start(&[]);
    let c = meta(&mc.addr());
    let k = format!("{}lease", unique("ph"));
    assert!(matches!(
        c.get_lease(&k, 30, None).unwrap(),
        mcpool::Lease::Recompute { stale: None }
    ));
    assert_eq!(c.get(&k).unwrap(), None, "get");
    assert!(c.gets(&k).unwrap().is_none(), "gets");
    assert!(c.gat(&k, 30).unwrap().is_none(), "gat");
    assert!(c.get_multi(&[k.as_str()])[0].as_ref().unwrap().is_none());
    assert!(c.gets_multi(&[k.as_str()])[0].as_ref().unwrap().is_none());
    assert!(c.meta_info(&k).unwrap().is_none(), "meta_info");
    // Still an item to the server: add is refused while the placeholder lives; the
    // winner's set replaces it.
    assert_eq!(c.add(&k, b"x", 0).unwrap(), StoreOutcome::NotStored);
    assert_eq!(c.set(&k, b"computed", 0).unwrap(), StoreOutcome::Stored);
    assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"computed"[..]));

    // A value stored empty is a value; so is an invalidated (stale) empty one.
    let e = format!("{}empty", unique("ph"));
    c.set(&e, b"", 0).unwrap();
    assert_eq!(c.get(&e).unwrap().as_deref(), Some(&b""[..]));
    assert!(c.meta_info(&e).unwrap().is_some());
    assert!(c.invalidate(&e, 30).unwrap());
    assert_eq!(c.get(&e).unwrap().as_deref(), Some(&b""[..]), "stale (X W)");
    assert_eq!(c.get(&e).unwrap().as_deref(), Some(&b""[..]), "stale (Z X)");
}

/// Tester finding (commands F2): after `invalidate`, a plain read took the recompute token
/// (memcached gives it to the first `mg` of a stale item, whatever its flags), so every
/// `get_lease` answered `Wait` until `stale_ttl` ran out and nobody recomputed. A read that
/// returns no CAS (`get`, `get_multi`, `gat`) hands the token back: the first lease after
/// it is still told to recompute, and the plain reads still see the old value. A CAS read
/// keeps the token (its CAS must stay usable); that stays as documented.
#[test]
fn plain_reads_leave_the_recompute_token_to_get_lease() {
    let mc = Memcached::start(&[]);
    let c = meta(&mc.addr());
    type Read = fn(&Client, &str);
    let reads: [(&str, Read); 4] = [
        ("get", |c, k| {
            assert_eq!(c.get(k).unwrap().as_deref(), Some(&b"old"[..]))
        }),
        ("get_multi", |c, k| {
            let r = c.get_multi(&[k, "absent-key"]);
            assert_eq!(
                r[0].as_ref().unwrap().as_ref().unwrap().value.as_ref(),
                b"old"
            );
        }),
        ("gat", |c, k| assert!(c.gat(k, 100).unwrap().is_some())),
        ("get twice", |c, k| {
            assert!(c.get(k).unwrap().is_some());
            assert!(c.get(k).unwrap().is_some());
        }),
    ];
    for (name, read) in reads {
        let k = format!("{}tok", unique("lt"));
        c.set(&k, b"old", 0).unwrap();
        assert!(c.invalidate(&k, 30).unwrap());
        read(&c, &k);
        match c.get_lease(&k, 30, None).unwrap() {
            mcpool::Lease::Recompute { stale: Some(s) } => {
                assert_eq!(s.value.as_ref(), b"old", "{name}")
            }
            other => panic!("{name}: the lease after it: {other:?}"),
        }
        // The election held: the next lease waits, and a plain read still sees the value.
        assert!(
            matches!(
                c.get_lease(&k, 30, None).unwrap(),
                mcpool::Lease::Wait { stale: Some(_) }
            ),
            "{name}"
        );
        read(&c, &k);
        assert!(matches!(
            c.get_lease(&k, 30, None).unwrap(),
            mcpool::Lease::Wait { .. }
        ));
    }
    // A value stored between the read and the hand-back is not marked stale again: the
    // hand-back is conditional on the CAS the read saw (checked here by storing first).
    let k = format!("{}fresh", unique("lt"));
    c.set(&k, b"old", 0).unwrap();
    c.invalidate(&k, 30).unwrap();
    c.get(&k).unwrap();
    c.set(&k, b"new", 0).unwrap();
    assert!(matches!(
        c.get_lease(&k, 30, None).unwrap(),
        mcpool::Lease::Hit(i) if i.value.as_ref() == b"new"
    ));
}
