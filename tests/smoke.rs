mod common;
use common::Memcached;
use mcpool::{Client, StoreOutcome};

#[test]
fn set_get_roundtrip() {
    let mc = Memcached::start(&[]);
    let c = Client::new([mc.addr()]).unwrap();
    assert_eq!(c.set("a", b"hello", 0).unwrap(), StoreOutcome::Stored);
    assert_eq!(c.get("a").unwrap().as_deref(), Some(&b"hello"[..]));
    assert_eq!(c.get("missing").unwrap(), None);
}
