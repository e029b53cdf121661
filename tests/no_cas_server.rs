//! A memcached run with `-C` keeps no CAS uniques. On the binary protocol it reads a store's
//! CAS as none and stores unconditionally, answering success: a `cas` holding a CAS from
//! before a restart with `-C` created a missing key and overwrote another client's write
//! (tester finding serverflags 1). The binary dialect now asks the server once per connection
//! (`stats settings`, `cas_enabled`) and refuses the `cas` before sending it; text and meta
//! answer `NOT_FOUND`/`EXISTS` there on their own.
mod common;

use common::{unique, Memcached};
use mcpool::{Client, Error, Protocol, SetItem, StoreCommand, StoreOutcome};

fn client(mc: &Memcached, protocol: Protocol) -> Client {
    Client::builder()
        .servers([mc.addr()])
        .protocol(protocol)
        .build()
        .unwrap()
}

#[test]
fn binary_cas_against_a_server_without_cas_is_refused_before_it_is_sent() {
    let mc = Memcached::start(&["-C"]);
    let c = client(&mc, Protocol::Binary);
    let other = client(&mc, Protocol::Text);
    let k = unique("nocas");
    // a CAS unique held from before (any number other than 0)
    let e = c.cas(&k, "mine", 0, 12345).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e:?}");
    assert!(e.to_string().contains("keeps no CAS"), "{e}");
    assert!(
        other.get(&k).unwrap().is_none(),
        "the missing key was created"
    );
    // another client's write is not overwritten
    other.set(&k, "theirs", 0).unwrap();
    assert!(matches!(
        c.cas(&k, "mine", 0, 12345),
        Err(Error::Unsupported(_))
    ));
    assert_eq!(other.get(&k).unwrap().as_deref(), Some(&b"theirs"[..]));
    // batches too: every cas item refused, nothing stored
    let (k1, k2) = (format!("{k}-1"), format!("{k}-2"));
    let mut items = vec![SetItem::new(&k1, "a", 0), SetItem::new(&k2, "b", 0)];
    for it in &mut items {
        it.cas = 777;
    }
    let r = c.store_multi_items(StoreCommand::Cas(0), &items);
    assert!(
        r.iter().all(|o| matches!(o, Err(Error::Unsupported(_)))),
        "{r:?}"
    );
    assert!(other.get(&k1).unwrap().is_none() && other.get(&k2).unwrap().is_none());
    // the other commands still work on that server and connection
    assert_eq!(c.set(&k, "plain", 0).unwrap(), StoreOutcome::Stored);
    assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"plain"[..]));
    assert!(
        c.server_states()[0].alive && c.server_states()[0].failures == 0,
        "a refused cas does not count against the server"
    );
}

#[test]
fn text_and_meta_cas_against_a_server_without_cas_answer_as_memcached_does() {
    let mc = Memcached::start(&["-C"]);
    for protocol in [Protocol::Text, Protocol::Meta] {
        let c = client(&mc, protocol);
        let k = unique("nocas-tm");
        assert_eq!(c.cas(&k, "v", 0, 12345).unwrap(), StoreOutcome::NotFound);
        c.set(&k, "theirs", 0).unwrap();
        assert_eq!(c.cas(&k, "v", 0, 12345).unwrap(), StoreOutcome::Exists);
        assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"theirs"[..]));
    }
}

#[test]
fn binary_cas_against_a_server_with_cas_works_as_before() {
    let mc = Memcached::start(&[]);
    let c = client(&mc, Protocol::Binary);
    let k = unique("cas-bin");
    c.set(&k, "v1", 0).unwrap();
    let cas = c.gets(&k).unwrap().unwrap().cas.unwrap();
    assert_eq!(c.cas(&k, "v2", 0, cas).unwrap(), StoreOutcome::Stored);
    assert_eq!(c.cas(&k, "v3", 0, cas).unwrap(), StoreOutcome::Exists);
    assert_eq!(
        c.cas(format!("{k}-gone"), "v", 0, 99).unwrap(),
        StoreOutcome::NotFound
    );
    let items = [SetItem {
        cas: c.gets(&k).unwrap().unwrap().cas.unwrap(),
        ..SetItem::new(&k, "v4", 0)
    }];
    let r = c.store_multi_items(StoreCommand::Cas(0), &items);
    assert!(matches!(r[0], Ok(StoreOutcome::Stored)), "{r:?}");
    assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"v4"[..]));
}
