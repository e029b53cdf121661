//! Typed values in a batch store (`SetItem::typed`, the C ABI's
//! `mcpool_client_store_multi_kind`): every item stored exactly as the single typed store
//! (`store_kind_as`) stores it, in every value format, on a real memcached: the same wire
//! bytes and flags (seen through a raw `libmemcached` client), the same refusals, each
//! item's alone (a Java String under `spymemcached`, a Python bool under
//! `python-memcached`, Perl's integers: they went item by item before).
mod common;

use common::{unique, Memcached};
use mcpool::set_item::{Compress, SetItem};
use mcpool::{Client, Kind, Lang, StoreCommand, ValueFormat};

fn client(mc: &Memcached, f: ValueFormat, prefix: &str) -> Client {
    let mut b = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix)
        .value_format(f)
        .compression_threshold(1000);
    for lang in Lang::ALL {
        b = b.serialized(lang, true);
    }
    b.build().unwrap()
}

fn cases() -> Vec<(Kind, Vec<u8>)> {
    vec![
        (Kind::Bytes, b"by\xfftes".to_vec()),
        (Kind::Text, "tëxt".into()),
        (Kind::Text, b"not \xff utf-8".to_vec()),
        (Kind::Text, "long text ".repeat(500).into_bytes()),
        (Kind::Int, b"-42".to_vec()),
        (Kind::Int, b"9223372036854775808".to_vec()),
        (Kind::Int, b"123456789012345678901234567890".to_vec()),
        (Kind::Int, b"4x".to_vec()),
        (Kind::Bool, b"1".to_vec()),
        (Kind::Bool, b"0".to_vec()),
        (Kind::Bool, b"2".to_vec()),
        (Kind::Serialized(Lang::Python), b"\x80\x05K*.".to_vec()),
        (Kind::Serialized(Lang::Java), b"\xac\xed\x00\x05".to_vec()),
    ]
}

#[test]
fn a_typed_batch_stores_each_item_as_the_single_typed_store() {
    let mc = Memcached::start(&[]);
    let prefix = unique("tb");
    let raw = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.as_str())
        .value_format(ValueFormat::Libmemcached)
        .build()
        .unwrap();
    let mut compared = 0;
    for (f, format) in ValueFormat::ALL.into_iter().enumerate() {
        let c = client(&mc, format, &prefix);
        let cases = cases();
        let keys: Vec<String> = (0..cases.len()).map(|i| format!("b{f}_{i}")).collect();
        let items: Vec<SetItem> = cases
            .iter()
            .zip(&keys)
            .map(|((kind, body), k)| SetItem::typed(k, *kind, body, 0))
            .collect();
        let batch = c.store_multi_items(StoreCommand::Set, &items);
        for (i, ((kind, body), got)) in cases.iter().zip(batch).enumerate() {
            let single_key = format!("s{f}_{i}");
            let single = c.store_kind_as(
                StoreCommand::Set,
                &single_key,
                *kind,
                body,
                0,
                Compress::Auto,
            );
            let what = format!("{format} {kind} {:?}", String::from_utf8_lossy(body));
            match (&single, &got) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{what}");
                    let s = raw.get_item(&single_key).unwrap().expect("stored");
                    let b = raw.get_item(&keys[i]).unwrap().expect("stored");
                    assert_eq!((s.flags, &s.value[..]), (b.flags, &b.value[..]), "{what}");
                    compared += 1;
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a.class(), b.class(), "{what}: {a} / {b}");
                    assert_eq!(a.to_string(), b.to_string(), "{what}");
                    assert!(raw.get_item(&keys[i]).unwrap().is_none(), "{what}: unsent");
                }
                _ => panic!("{what}: single {single:?}, batch {got:?}"),
            }
        }
    }
    assert!(compared >= 50, "{compared} stored items compared");
}

#[test]
fn a_typed_batch_compares_cas_and_refuses_append_item_by_item() {
    let mc = Memcached::start(&[]);
    let prefix = unique("tbc");
    let c = client(&mc, ValueFormat::Pylibmc, &prefix);
    c.set("a", b"x", 0).unwrap();
    c.set("b", b"x", 0).unwrap();
    let cas_a = c.gets("a").unwrap().unwrap().cas.unwrap();
    let mut items = vec![
        SetItem::typed("a", Kind::Int, b"7", 0),
        SetItem::typed("b", Kind::Int, b"8", 0),
    ];
    items[0].cas = cas_a;
    items[1].cas = cas_a ^ 0xffff;
    let got = c.store_multi_items(StoreCommand::Cas(0), &items);
    assert_eq!(got[0].as_ref().unwrap(), &mcpool::StoreOutcome::Stored);
    assert_eq!(got[1].as_ref().unwrap(), &mcpool::StoreOutcome::Exists);
    assert_eq!(c.get_value("a").unwrap(), Some(mcpool::Value::Int(7)));
    // an item with two faults (CAS 0 and data not of its kind) gets the single store's
    // error (tester finding retest19 5: the batch named the CAS)
    let bad = [SetItem::typed("c", Kind::Int, b"4x", 0)];
    let single = c
        .store_kind_as(
            StoreCommand::Cas(0),
            "c",
            Kind::Int,
            b"4x",
            0,
            Compress::Auto,
        )
        .unwrap_err();
    let batch = c
        .store_multi_items(StoreCommand::Cas(0), &bad)
        .remove(0)
        .unwrap_err();
    assert_eq!(batch.to_string(), single.to_string());
    let got = c.store_multi_items(StoreCommand::Append, &items);
    for r in got {
        assert!(matches!(r, Err(mcpool::Error::Unsupported(_))), "{r:?}");
    }
    assert_eq!(c.get_value("a").unwrap(), Some(mcpool::Value::Int(7)));
}

#[test]
fn set_multi_values_reads_back_each_value() {
    let mc = Memcached::start(&[]);
    let prefix = unique("tbv");
    for format in [
        ValueFormat::Mcpool,
        ValueFormat::Pylibmc,
        ValueFormat::Spymemcached,
    ] {
        let c = client(&mc, format, &prefix);
        let items = vec![
            ("t", mcpool::Value::Text("tëxt".into())),
            ("i", mcpool::Value::Int(-7)),
            ("b", mcpool::Value::Bool(true)),
            ("y", mcpool::Value::Bytes(vec![0, 255])),
        ];
        for (r, (k, v)) in c.set_multi_values(&items, 0).into_iter().zip(&items) {
            match r {
                // read back as the single set_value's value reads back (pylibmc's bool is
                // its int)
                Ok(_) => {
                    let single = format!("s{k}");
                    c.set_value(&single, v, 0).unwrap();
                    let want = c.get_value(&single).unwrap();
                    assert!(want.is_some(), "{format} {k}");
                    assert_eq!(c.get_value(k).unwrap(), want, "{format} {k}");
                }
                // a kind the format lacks fails alone, as set_value
                Err(e) => assert_eq!(
                    e.to_string(),
                    c.set_value(k, v, 0).unwrap_err().to_string(),
                    "{format} {k}"
                ),
            }
        }
    }
}
