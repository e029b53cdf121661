//! A nutcracker pool with `hash_tag` (tester finding migrate 2): `twemproxy:...,hash_tag={}`
//! places every key on the backend real nutcracker 0.5.0 stores it on, tagged keys (the part
//! between `{` and `}` hashed) and untagged ones alike.

use mcpool::{Client, Protocol};
use mcpool_testkit::nutcracker::Nutcracker;
use mcpool_testkit::{unique, Memcached};

#[test]
fn keys_are_where_nutcracker_with_a_hash_tag_puts_them() {
    let backends: Vec<Memcached> = (0..4).map(|_| Memcached::start(&[])).collect();
    let ports: Vec<u16> = backends.iter().map(|m| m.port).collect();
    let nut = Nutcracker::start_pool(&ports, "md5", "  hash_tag: \"{}\"\n");
    let tag = unique("tag");
    let keys: Vec<String> = (0..300)
        .map(|i| match i % 4 {
            0 => format!("{tag}-{i}"),
            1 => format!("user:{{{}}}:{tag}:{i}", i % 7),
            2 => format!("{{}}{tag}{i}"), // empty tag: the whole key
            _ => format!("{tag}{{{i}x{{y}}z"), // from the first { to the next }
        })
        .collect();
    let via = Client::builder()
        .server(&nut.addr())
        .protocol(Protocol::Text)
        .build()
        .unwrap();
    for k in &keys {
        via.set(k, k.as_bytes(), 0).unwrap();
    }
    // The backends named as in nutcracker's YAML (`127.0.0.1:PORT:1 nodeI`).
    let named: Vec<String> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| format!("127.0.0.1:{p}:1 node{i}"))
        .collect();
    let direct = Client::builder()
        .servers(named.iter().map(String::as_str))
        .distribution(
            "twemproxy:hash=md5,distribution=ketama,hash_tag={}"
                .parse()
                .unwrap(),
        )
        .build()
        .unwrap();
    let got = direct.get_multi(&keys);
    let found = got
        .iter()
        .zip(&keys)
        .filter(|(r, k)| matches!(r, Ok(Some(item)) if item.value == k.as_bytes()))
        .count();
    assert_eq!(found, keys.len(), "keys found where nutcracker stored them");
    // Without the tag the tagged keys are elsewhere: the test can tell.
    let untagged = Client::builder()
        .servers(named.iter().map(String::as_str))
        .distribution("twemproxy:hash=md5,distribution=ketama".parse().unwrap())
        .build()
        .unwrap();
    let found = untagged
        .get_multi(&keys)
        .iter()
        .filter(|r| matches!(r, Ok(Some(_))))
        .count();
    assert!(found < keys.len() * 9 / 10, "{found} of {}", keys.len());
}

#[test]
fn a_hash_tag_is_two_bytes() {
    // (`«»`: two characters of four bytes, refused as nutcracker reads it, by bytes; `é` is
    // two bytes: tester finding retest40 7)
    for bad in ["{", "{}}", "", "«»"] {
        let e = format!("twemproxy:hash=md5,hash_tag={bad}")
            .parse::<mcpool::Distribution>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not two bytes"), "{bad}: {e}");
    }
    // a `;` in the tag: the message is about the tag (tester finding retest36 3: it
    // explained pylibmc's set_behaviors groups)
    for bad in [
        "hash_tag=a;",
        "hash_tag=;;",
        "hash_tag=,;",
        "HASH_TAG=a;",
        "hash-tag=a;",
        // ... and a `,` in it (tester finding retest37b 4: "\"}\" is not WORD=VALUE")
        "hash_tag={,}",
        "hash_tag=,}",
        "hash_tag={,",
    ] {
        let e = format!("twemproxy:hash=fnv1a_64,distribution=ketama,{bad}")
            .parse::<mcpool::Distribution>()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("hash_tag with `;`") && !e.contains("pylibmc") && !e.contains("WORD=VALUE"),
            "{bad}: {e}"
        );
    }
    // a `;` before the tag is not the tag's
    let e = "twemproxy:hash=md5;distribution=ketama,hash_tag={}"
        .parse::<mcpool::Distribution>()
        .unwrap_err()
        .to_string();
    assert!(!e.contains("hash_tag with"), "{e}");
    // ... nor one after a whole tag (retest37b 4: the tag {} was blamed for a `;` typed for `,`)
    let e = "twemproxy:hash=md5,hash_tag={};distribution=ketama"
        .parse::<mcpool::Distribution>()
        .unwrap_err()
        .to_string();
    assert!(
        !e.contains("hash_tag with") && e.contains("one list"),
        "{e}"
    );
    let d: mcpool::Distribution = "twemproxy:hash=md5,hash_tag=::".parse().unwrap();
    assert_eq!(d.to_string(), "twemproxy:hash=md5,hash_tag=::");
}
