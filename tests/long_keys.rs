//! Issue 21 item 3: `long_keys = hash` stores a key over 250 bytes under Dalli's truncated
//! form (lib/dalli/key_manager.rb: the first 212 bytes, or 213 with a namespace, then
//! `:md5:` and the hex MD5 of the whole namespaced key), on every protocol; the stored name
//! is checked with a raw text `get` against a digest computed independently (Python's
//! hashlib.md5 of the same key). Refusal stays the default.
mod common;

use common::Memcached;
use mcpool::{Client, Error, Protocol};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;

/// The 400-byte key of these tests.
fn long_key() -> String {
    format!("long:{}", "x".repeat(395))
}

/// A raw text `get` of `key`: the value, if the server holds it under exactly that name.
fn raw_get(addr: &str, key: &str) -> Option<Vec<u8>> {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "get {key}\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    if line == "END\r\n" {
        return None;
    }
    let len: usize = line.trim_end().rsplit(' ').next().unwrap().parse().unwrap();
    let mut v = vec![0; len + 2];
    std::io::Read::read_exact(&mut r, &mut v).unwrap();
    v.truncate(len);
    Some(v)
}

#[test]
fn item3_long_key_hashes_to_dalli_form_on_every_protocol() {
    let mc = Memcached::start(&[]);
    let key = long_key();
    // md5("long:" + "x" * 395) and md5("ns:long:" + "x" * 395), from Python's hashlib.
    let plain = format!("{}:md5:6df9f0d43155645549849dfdf06578e6", &key[..212]);
    let spaced = format!("ns:{}:md5:cbe2eb3b8594afba91b713abc4b4be57", &key[..210]);
    assert_eq!((plain.len(), spaced.len()), (249, 250));
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        for (prefix, stored_as) in [("", &plain), ("ns:", &spaced)] {
            let c = Client::builder()
                .server(&mc.addr())
                .protocol(protocol)
                .key_prefix(prefix)
                .set("long_keys", "hash")
                .unwrap()
                .build()
                .unwrap();
            let value = format!("{protocol} {prefix}");
            c.set(&key, value.as_bytes(), 0).unwrap();
            assert_eq!(
                c.get(&key).unwrap().as_deref(),
                Some(value.as_bytes()),
                "{protocol}"
            );
            assert_eq!(&*c.wire_key(key.as_bytes()).unwrap(), stored_as.as_bytes());
            assert_eq!(
                raw_get(&mc.addr(), stored_as).as_deref(),
                Some(value.as_bytes()),
                "{protocol} {prefix:?}: stored under Dalli's name"
            );
            // Multi-key reads and deletes go through the same rule.
            let got = c.get_multi(&[key.as_str(), "short"]);
            let first = got[0].as_ref().unwrap().as_ref().map(|i| i.value.clone());
            assert_eq!(first.as_deref(), Some(value.as_bytes()), "{protocol}");
            assert!(c.delete(&key).unwrap());
            assert_eq!(raw_get(&mc.addr(), stored_as), None);
        }
    }
}

#[test]
fn item3_refusal_stays_the_default() {
    let mc = Memcached::start(&[]);
    let c = Client::new([mc.addr()]).unwrap();
    assert_eq!(c.max_key_len(), 250);
    assert!(matches!(
        c.set(long_key(), b"v", 0),
        Err(Error::InvalidKey { .. })
    ));
    let err = Client::builder()
        .server(&mc.addr())
        .set("long_keys", "truncate")
        .unwrap_err();
    assert!(err.to_string().contains("long_keys"), "{err}");
}

/// A raw text `set` of `key`, as Dalli would send it.
fn raw_set(addr: &str, key: &str, value: &str) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "set {key} 0 0 {}\r\n{value}\r\n", value.len()).unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    assert_eq!(line, "STORED\r\n", "{key}");
}

/// Tester finding: Dalli cuts a long key at 212 *characters* (Ruby's `key[0, 212]` on a
/// UTF-8 string; lib/dalli/key_manager.rb), mcpool cut at 212 bytes, so a non-ASCII key
/// with one 2-byte character among its first 212 (a 250-byte Dalli key, which memcached
/// takes) was stored under another name. Now mcpool cuts as Dalli does, and refuses the
/// keys Dalli cannot store either (a form over 250 bytes). Dalli's names below follow its
/// source; digests from Python's hashlib.md5 of the UTF-8 key.
#[test]
fn non_ascii_long_keys_take_dallis_character_cut_or_are_refused() {
    let mc = Memcached::start(&[]);
    // "é" + "a" × 260: 261 characters, 262 bytes. Dalli: "é" + "a" × 211, ":md5:", digest.
    let key = format!("é{}", "a".repeat(260));
    let dalli = format!("é{}:md5:5b2bd7d828bf6bf7e81e3f3d7e8f07c1", "a".repeat(211));
    assert_eq!(dalli.len(), 250);
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(protocol)
            .set("long_keys", "hash")
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(&*c.wire_key(key.as_bytes()).unwrap(), dalli.as_bytes());
        // What Dalli stored, mcpool reads; what mcpool stores, Dalli's name holds.
        raw_set(&mc.addr(), &dalli, "dalli");
        assert_eq!(
            c.get(&key).unwrap().as_deref(),
            Some(&b"dalli"[..]),
            "{protocol}"
        );
        c.set(&key, b"mcpool", 0).unwrap();
        assert_eq!(raw_get(&mc.addr(), &dalli).as_deref(), Some(&b"mcpool"[..]));
        assert!(c.delete(&key).unwrap());

        // Keys Dalli cannot store: refused before anything is sent, saying why.
        let refused = |k: &str, why: &str| match c.set(k, b"v", 0) {
            Err(Error::InvalidKey { reason, .. }) => assert!(reason.contains(why), "{reason}"),
            other => panic!("{protocol} {k:?}: {other:?}"),
        };
        // Its truncated form would be 251 bytes: "日" (3 bytes) + "c" × 211 + 37.
        refused(&format!("日{}", "c".repeat(300)), "Dalli's truncated form");
        // 400 bytes in 200 characters: Dalli sends it whole, memcached refuses it.
        refused(&"é".repeat(200), "250 characters or fewer");
        // With a namespace Dalli keeps 213 characters: one 2-byte one makes 251 bytes.
        let ns = Client::builder()
            .server(&mc.addr())
            .protocol(protocol)
            .key_prefix("ns:")
            .set("long_keys", "hash")
            .unwrap()
            .build()
            .unwrap();
        assert!(matches!(
            ns.set(&key, b"v", 0),
            Err(Error::InvalidKey { .. })
        ));
    }
}

/// A client of `servers` over `p` with `long_keys = hash`.
fn hashing_client(servers: &[Memcached], p: Protocol) -> Client {
    Client::builder()
        .servers(servers.iter().map(Memcached::addr))
        .protocol(p)
        .long_keys(mcpool::key::LongKeys::Hash)
        .build()
        .unwrap()
}

/// Tester finding keys 1: a key with a space of 187..=250 bytes went whole on binary and
/// hashed on meta, so two mcpool clients of one fleet that differ only in protocol each
/// missed the other's item (and placed it on another server): one name on both now, on
/// three servers.
#[test]
fn a_long_key_with_a_space_has_one_name_on_meta_and_binary() {
    let servers = [
        Memcached::start(&[]),
        Memcached::start(&[]),
        Memcached::start(&[]),
    ];
    let client = |p: Protocol| hashing_client(&servers, p);
    let (meta, binary) = (client(Protocol::Meta), client(Protocol::Binary));
    for n in [150, 186, 187, 203, 250, 251, 300] {
        let key = format!("x y{}", "y".repeat(n - 3));
        assert_eq!(
            meta.server_for(&key).unwrap(),
            binary.server_for(&key).unwrap(),
            "{n}"
        );
        binary.set(&key, format!("b{n}").as_bytes(), 0).unwrap();
        let got = meta.get(&key).unwrap();
        assert_eq!(got.as_deref(), Some(format!("b{n}").as_bytes()), "{n}");
        meta.set(&key, format!("m{n}").as_bytes(), 0).unwrap();
        let got = binary.get(&key).unwrap();
        assert_eq!(got.as_deref(), Some(format!("m{n}").as_bytes()), "{n}");
    }
}

/// Tester finding keys2 1: a key over 250 bytes whose space (or LF) is past the 212
/// characters Dalli's form keeps was stored by text under Dalli's form (which has no space
/// left) and by meta and binary under mcpool's own 186-byte form: a meta client read its old
/// value after a text client's set and delete. All three use Dalli's form now; a key whose
/// space is within the kept part is still refused by text (its Dalli form has the space).
#[test]
fn a_long_key_with_a_space_past_dallis_cut_has_one_name_on_every_protocol() {
    let servers = [Memcached::start(&[]), Memcached::start(&[])];
    let client = |p: Protocol| hashing_client(&servers, p);
    let all = [
        client(Protocol::Text),
        client(Protocol::Meta),
        client(Protocol::Binary),
    ];
    for sep in [" ", "\n", "\t"] {
        let key = format!("user:{}{sep}{}", "a".repeat(235), "b".repeat(20));
        let home = all[0].server_for(&key).unwrap();
        for (w, writer) in all.iter().enumerate() {
            assert_eq!(writer.server_for(&key).unwrap(), home, "{w} {sep:?}");
            writer.set(&key, format!("v{w}").as_bytes(), 0).unwrap();
            for (r, reader) in all.iter().enumerate() {
                let got = reader.get(&key).unwrap();
                assert_eq!(
                    got,
                    Some(format!("v{w}").into_bytes()),
                    "{w} -> {r} {sep:?}"
                );
            }
        }
        all[0].delete(&key).unwrap();
        for reader in &all {
            assert_eq!(reader.get(&key).unwrap(), None, "{sep:?}");
        }
    }
    // The space within Dalli's kept part: text refuses, meta and binary share their form.
    let key = format!("user: {}", "a".repeat(300));
    assert!(matches!(
        all[0].set(&key, b"t", 0),
        Err(Error::InvalidKey { .. })
    ));
    all[1].set(&key, b"m", 0).unwrap();
    assert_eq!(all[2].get(&key).unwrap(), Some(b"m".to_vec()));
}
