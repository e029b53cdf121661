//! Value formats against the real clients they copy, both directions, on a real memcached:
//! pylibmc, python-memcached, pymemcache (`python3 -c`), Cache::Memcached::Fast and
//! Cache::Memcached (`perl -e`), libmemcached's memccp/memccat. Each peer writes bytes, UTF-8
//! text, an integer, a 100 KB compressible text (compressed where the peer compresses) and an
//! object; mcpool reads them with the matching preset, and the reverse. Every cell equal, or
//! the documented error (an object with deserialization off).
mod common;

use common::{unique, Memcached};
use mcpool::{Client, Error, Lang, Value, ValueFormat};
use std::path::Path;
use std::process::Command;

const PYTHON: &str = "/usr/bin/python3";
const TEXT: &str = "tëxt ✓ ünïcode";

fn big() -> String {
    "the quick brown fox jumps over the lazy dog, ".repeat(2300)
}

fn need(path: &str, install: &str) {
    assert!(
        Path::new(path).exists(),
        "MISSING {path}: the value interop test cannot run; install it: {install}"
    );
}

/// Runs a program, returns its stdout; fails the test with its stderr.
fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run peer");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn client(mc: &Memcached, f: ValueFormat, prefix: &str) -> Client {
    Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix)
        .value_format(f)
        .compression_threshold(1000)
        .build()
        .unwrap()
}

/// What a peer prints for each value: `type:hex-or-decimal`.
fn describe(v: &Value) -> String {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    match v {
        Value::Bytes(b) => format!("bytes:{}", hex(b)),
        Value::Text(s) => format!("str:{}", hex(s.as_bytes())),
        Value::Int(i) => format!("int:{i}"),
        Value::Bool(b) => format!("bool:{b}"),
        Value::Serialized { lang, bytes } => format!("{lang:?}:{}", bytes.len()),
    }
}

fn values() -> Vec<(&'static str, Value)> {
    vec![
        ("b", Value::Bytes(b"\x00\x01bytes\xff".to_vec())),
        ("e", Value::Bytes(Vec::new())),
        ("t", Value::Text(TEXT.into())),
        ("i", Value::Int(-42)),
        ("l", Value::Int(1 << 40)),
        ("z", Value::Text(big())),
    ]
}

/// Python: writes with `setter`, reads with `getter`, each client made by `make`.
fn python_peer(name: &str, format: ValueFormat, make: &str, set_big: &str, compresses: bool) {
    python_peer_with(name, format, make, set_big, compresses, true)
}

fn python_peer_with(
    name: &str,
    format: ValueFormat,
    make: &str,
    set_big: &str,
    compresses: bool,
    inflates: bool,
) {
    need(
        PYTHON,
        "apt-get install python3 python3-pylibmc python3-memcache python3-pymemcache",
    );
    let mc = Memcached::start(&[]);
    let prefix = unique(name);
    let c = client(&mc, format, &prefix);
    let port = mc.port;
    // The peer writes.
    let script = format!(
        "import sys\n{make}\np='{prefix}'\n\
         c.set(p+'b', b'\\x00\\x01bytes\\xff'); c.set(p+'e', b''); c.set(p+'t', {TEXT:?})\n\
         c.set(p+'i', -42); c.set(p+'l', 1 << 40)\n\
         big = 'the quick brown fox jumps over the lazy dog, ' * 2300\n{set_big}\n\
         c.set(p+'o', [1, 2, 'three'])\n\
         c.get(p+'o')  # a round trip: sets sent noreply (pymemcache's default) are done\n"
    );
    run(Command::new(PYTHON)
        .arg("-c")
        .arg(&script)
        .env("PORT", port.to_string()));
    for (k, v) in values() {
        assert_eq!(
            c.get_value(k).unwrap().as_ref(),
            Some(&v),
            "{name} wrote {k}"
        );
    }
    if compresses {
        // Stored compressed by the peer (flag 8), inflated here.
        let raw = Client::builder()
            .server(&mc.addr())
            .key_prefix(prefix.as_str())
            .value_format(ValueFormat::Libmemcached)
            .build()
            .unwrap();
        let item = raw.get_item("z").unwrap().unwrap();
        assert!(
            item.flags & 8 != 0 && item.value.len() < 10_000,
            "{name} compressed z"
        );
    }
    // An object: an error while pickles are off, the pickle when they are on.
    match c.get_value("o") {
        Err(Error::ValueFormat(m)) => assert!(m.contains("pickle") && m.contains("off"), "{m}"),
        r => panic!("{name}: a pickle read with pickles off: {r:?}"),
    }
    let on = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.as_str())
        .value_format(format)
        .serialized(Lang::Python, true)
        .build()
        .unwrap();
    assert!(matches!(
        on.get_value("o").unwrap(),
        Some(Value::Serialized {
            lang: Lang::Python,
            ..
        })
    ));
    // mcpool writes, the peer reads.
    let prefix2 = unique(name);
    let c2 = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix2.as_str())
        .value_format(format)
        .compression_threshold(1000)
        .compression(inflates)
        .build()
        .unwrap();
    for (k, v) in values() {
        c2.set_value(k, &v, 0).unwrap();
    }
    let script = format!(
        "import sys\n{make}\np='{prefix2}'\n\
         for k in 'betilz':\n\
         \x20   v = c.get(p+k)\n\
         \x20   if isinstance(v, bytes): print(k, 'bytes:' + v.hex())\n\
         \x20   elif isinstance(v, str): print(k, 'str:' + v.encode().hex())\n\
         \x20   elif isinstance(v, int): print(k, 'int:%d' % v)\n\
         \x20   else: print(k, repr(v))\n"
    );
    let out = run(Command::new(PYTHON)
        .arg("-c")
        .arg(&script)
        .env("PORT", port.to_string()));
    let want: String = values()
        .iter()
        .map(|(k, v)| format!("{k} {}\n", describe(v)))
        .collect();
    assert_eq!(out, want, "{name} read what mcpool wrote");
}

#[test]
fn pylibmc_both_directions() {
    python_peer(
        "pylibmc",
        ValueFormat::Pylibmc,
        "import os, pylibmc; c = pylibmc.Client(['127.0.0.1:' + os.environ['PORT']])",
        "c.set(p+'z', big, min_compress_len=1000)",
        true,
    );
}

#[test]
fn python_memcached_both_directions() {
    python_peer(
        "pymc",
        ValueFormat::PythonMemcached,
        "import os, memcache; c = memcache.Client(['127.0.0.1:' + os.environ['PORT']])",
        "c.set(p+'z', big, min_compress_len=1000)",
        true,
    );
}

#[test]
fn pymemcache_both_directions() {
    // The packaged pymemcache (3.x) has no compressing serde (4.x's CompressedSerde uses the
    // same zlib bit 8): its big text is stored plain, and mcpool writes plain for it to read.
    python_peer_with(
        "pymemcache",
        ValueFormat::Pymemcache,
        "import os\nfrom pymemcache.client.base import Client\nfrom pymemcache import serde\n\
         class C(Client):\n\
         \x20   def get(self, k):\n\
         \x20       v = Client.get(self, k)\n\
         \x20       return v\n\
         c = C(('127.0.0.1', int(os.environ['PORT'])), serde=serde.pickle_serde)",
        "c.set(p+'z', big)",
        false,
        false,
    );
}

fn perl_peer(module: &str, format: ValueFormat, utf8: bool) {
    need(
        "/usr/bin/perl",
        "apt-get install libcache-memcached-perl libcache-memcached-fast-perl",
    );
    let mc = Memcached::start(&[]);
    let prefix = unique("perl");
    let port = mc.port;
    let opts = if utf8 { "utf8 => 1," } else { "" };
    let make = format!(
        "use {module}; use Storable; binmode STDOUT; my $c = {module}->new({{servers => \
         [\"127.0.0.1:$ENV{{PORT}}\"], compress_threshold => 1000, {opts}}});"
    );
    // Perl writes: bytes, text (a character string: F_UTF8 with utf8 => 1), a big text
    // (gzip, bit 2), a reference (Storable, bit 1).
    let script = format!(
        "{make} my $p = '{prefix}'; $c->set($p.'b', \"\\x00\\x01bytes\\xff\"); $c->set($p.'e', '');\
         my $t = \"t\\x{{eb}}xt \\x{{2713}} \\x{{fc}}n\\x{{ef}}code\"; utf8::encode($t) unless {u}; $c->set($p.'t', $t);\
         my $big = 'the quick brown fox jumps over the lazy dog, ' x 2300; $c->set($p.'z', $big);\
         $c->set($p.'o', [1, 2]); print \"ok\\n\";",
        u = u8::from(utf8)
    );
    run(Command::new("perl")
        .arg("-e")
        .arg(&script)
        .env("PORT", port.to_string()));
    let c = client(&mc, format, &prefix);
    let text = if utf8 {
        Value::Text(TEXT.into())
    } else {
        Value::Bytes(TEXT.as_bytes().to_vec())
    };
    assert_eq!(
        c.get_value("b").unwrap(),
        Some(Value::Bytes(b"\x00\x01bytes\xff".to_vec()))
    );
    assert_eq!(c.get_value("e").unwrap(), Some(Value::Bytes(Vec::new())));
    assert_eq!(c.get_value("t").unwrap(), Some(text.clone()));
    assert_eq!(
        c.get_value("z").unwrap(),
        Some(Value::Bytes(big().into_bytes()))
    );
    match c.get_value("o") {
        Err(Error::ValueFormat(m)) => assert!(m.contains("Storable") && m.contains("off"), "{m}"),
        r => panic!("{module}: Storable read with it off: {r:?}"),
    }
    // mcpool writes; Perl reads (compressed big text inflated by the peer).
    let prefix2 = unique("perl2");
    let c2 = client(&mc, format, &prefix2);
    c2.set_value("b", &Value::Bytes(b"\x00\x01bytes\xff".to_vec()), 0)
        .unwrap();
    c2.set_value("t", &text, 0).unwrap();
    c2.set_value("z", &Value::Text(big()), 0).unwrap();
    assert!(matches!(
        c2.set_value("i", &Value::Int(1), 0),
        Err(Error::Unsupported(_))
    ));
    let script = format!(
        "{make} my $p = '{prefix2}'; for my $k (qw(b t z)) {{ my $v = $c->get($p.$k); \
         utf8::encode($v) if utf8::is_utf8($v); print $k, ' ', (utf8::is_utf8($c->get($p.$k)) ? 'str' : 'bytes'), ':', unpack('H*', $v), \"\\n\" }}"
    );
    let out = run(Command::new("perl")
        .arg("-e")
        .arg(&script)
        .env("PORT", port.to_string()));
    let kind = if utf8 { "str" } else { "bytes" };
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let want = format!(
        "b bytes:{}\nt {kind}:{}\nz {}:{}\n",
        hex(b"\x00\x01bytes\xff"),
        hex(TEXT.as_bytes()),
        // Perl's utf8::decode leaves pure ASCII without its UTF-8 flag: it is text either way.
        "bytes",
        hex(big().as_bytes())
    );
    // (Compared as lines' lengths and hashes first: the big line is 200 KB of hex.)
    assert!(
        out == want,
        "{module} read what mcpool wrote: {:?}",
        out.lines()
            .map(|l| &l[..l.len().min(80)])
            .collect::<Vec<_>>()
    );
}

#[test]
fn cache_memcached_fast_both_directions() {
    perl_peer(
        "Cache::Memcached::Fast",
        ValueFormat::CacheMemcachedFast,
        true,
    );
}

#[test]
fn cache_memcached_both_directions() {
    perl_peer("Cache::Memcached", ValueFormat::CacheMemcached, false);
}

#[test]
fn libmemcached_tools_both_directions() {
    need("/usr/bin/memccp", "apt-get install libmemcached-tools");
    let mc = Memcached::start(&[]);
    let dir = std::env::temp_dir().join(unique("memccp"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("k1");
    std::fs::write(&file, b"\x00bytes from memccp\n").unwrap();
    let servers = format!("--servers=127.0.0.1:{}", mc.port);
    run(Command::new("memccp").arg(&servers).arg(&file));
    let c = client(&mc, ValueFormat::Libmemcached, "");
    assert_eq!(
        c.get_value("k1").unwrap(),
        Some(Value::Bytes(b"\x00bytes from memccp\n".to_vec()))
    );
    c.set_value("k2", &Value::Bytes(b"from mcpool".to_vec()), 0)
        .unwrap();
    // memccat ends each value with a newline of its own.
    let out = run(Command::new("memccat").arg(&servers).arg("k2"));
    assert_eq!(out, "from mcpool\n");
    // Bytes only: nothing else can be stored, nothing is compressed.
    assert!(matches!(
        c.set_value("k3", &Value::Int(1), 0),
        Err(Error::Unsupported(_))
    ));
    c.set_value("k4", &Value::Bytes(big().into_bytes()), 0)
        .unwrap();
    let out = run(Command::new("memccat").arg(&servers).arg("k4"));
    assert_eq!(out, big() + "\n");
    let _ = std::fs::remove_dir_all(dir);
}

/// Java's `String.length()` and `String.hashCode()`, as the spymemcached peer prints them.
fn java_str(s: &str) -> String {
    let units: Vec<u16> = s.encode_utf16().collect();
    let h = units
        .iter()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(*u)));
    format!("str:{}:{h}", units.len())
}

#[test]
fn spymemcached_both_directions() {
    let jar = "/usr/share/java/spymemcached.jar";
    need(
        jar,
        "apt-get install libspymemcached-java default-jdk-headless",
    );
    need("/usr/bin/java", "apt-get install default-jdk-headless");
    let peer = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/SpyPeer.java");
    let mc = Memcached::start(&[]);
    let java = |prefix: &str, what: &str| {
        run(Command::new("java")
            .args(["-cp", jar, peer])
            .arg(mc.port.to_string())
            .args([prefix, what]))
    };
    // spymemcached writes (threshold 16384: the 100 KB string is gzip under bit 2).
    let prefix = unique("spy");
    java(&prefix, "write");
    let c = client(&mc, ValueFormat::Spymemcached, &prefix);
    let long_text = big();
    for (k, v) in [
        ("b", Value::Bytes(vec![0, 1, 2, 0xff])),
        ("t", Value::Text("tëxt ✓".into())),
        ("i", Value::Int(-42)),
        ("n", Value::Int(300)),
        ("z0", Value::Int(0)),
        ("l", Value::Int(1 << 40)),
        ("T", Value::Bool(true)),
        ("z", Value::Text(long_text.clone())),
    ] {
        assert_eq!(c.get_value(k).unwrap(), Some(v), "spymemcached wrote {k}");
    }
    match c.get_value("o") {
        Err(Error::ValueFormat(m)) => assert!(m.contains("Java") && m.contains("off"), "{m}"),
        r => panic!("a Java object with serialization off: {r:?}"),
    }
    // mcpool writes, spymemcached reads: every int is a Long, whatever its size.
    let prefix2 = unique("spy2");
    let c2 = client(&mc, ValueFormat::Spymemcached, &prefix2);
    for (k, v) in [
        ("b", Value::Bytes(vec![0, 1, 2, 0xff])),
        ("t", Value::Text("tëxt ✓".into())),
        ("i", Value::Int(-42)),
        ("n", Value::Int(300)),
        ("z0", Value::Int(0)),
        ("l", Value::Int(1 << 40)),
        ("T", Value::Bool(true)),
        ("z", Value::Text(long_text.clone())),
    ] {
        c2.set_value(k, &v, 0).unwrap();
    }
    let out = java(&prefix2, "read");
    let want = format!(
        "b bytes:000102ff\nt {}\ni Long:-42\nn Long:300\nz0 Long:0\nl Long:{}\nT Boolean:true\nz {}\n",
        java_str("tëxt ✓"),
        1i64 << 40,
        java_str(&long_text)
    );
    assert_eq!(out, want, "spymemcached read what mcpool wrote");

    // What spymemcached wrote, read through the byte API (each body in its ABI form: an
    // Integer as decimal text) and stored back unchanged under the flags the read delivered,
    // one key at a time and as one batch: spymemcached reads the same values (an Integer
    // -42 was stored as the bytes "-42", read by spymemcached as 758395442). A String
    // (flags 0) is the exception the byte API documents: flags 0 stores bytes, SPECIAL_BYTEARRAY.
    let keys = ["b", "t", "i", "n", "z0", "l", "T", "z"];
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let want = format!(
        "b bytes:000102ff\nt bytes:{}\ni Integer:-42\nn Integer:300\nz0 Integer:0\nl Long:{}\nT Boolean:true\nz bytes:{}\n",
        hex("tëxt ✓".as_bytes()),
        1i64 << 40,
        hex(long_text.as_bytes())
    );
    let got: Vec<_> = keys
        .iter()
        .map(|k| c.get_item(k).unwrap().expect("spymemcached wrote it"))
        .collect();
    let prefix3 = unique("spy3");
    let c3 = client(&mc, ValueFormat::Spymemcached, &prefix3);
    for (k, item) in keys.iter().zip(&got) {
        c3.store(mcpool::StoreCommand::Set, k, &item.value, item.flags, 0)
            .unwrap();
    }
    assert_eq!(java(&prefix3, "read"), want, "get, then store (same flags)");
    let prefix4 = unique("spy4");
    let c4 = client(&mc, ValueFormat::Spymemcached, &prefix4);
    let items: Vec<_> = keys
        .iter()
        .zip(&got)
        .map(|(k, item)| mcpool::set_item::SetItem {
            flags: item.flags,
            ..mcpool::set_item::SetItem::new(k.as_bytes(), &item.value, 0)
        })
        .collect();
    for r in c4.set_multi_items(&items) {
        r.unwrap();
    }
    assert_eq!(java(&prefix4, "read"), want, "get, then set_multi_items");
}

/// A Python int beyond 64 bits, as real pylibmc stores it (its long flag 4, the decimal
/// text): a typed read (`Value::Int` is 64-bit) is an error saying so, never a wrong number;
/// the byte API delivers the exact digits, with the int kind (what the C ABI and the bindings
/// whose languages have larger integers read).
#[test]
fn pylibmc_int_beyond_64_bits() {
    need(PYTHON, "apt-get install python3 python3-pylibmc");
    let mc = Memcached::start(&[]);
    let prefix = unique("big-int");
    let script = format!(
        "import os, pylibmc\n\
         c = pylibmc.Client(['127.0.0.1:' + os.environ['PORT']])\n\
         p = '{prefix}'\n\
         c.set(p+'a', 2**80); c.set(p+'b', -2**70); c.set(p+'c', 2**64); c.set(p+'d', 2**63)\n\
         c.set(p+'e', -2**63)\n"
    );
    run(Command::new(PYTHON)
        .arg("-c")
        .arg(&script)
        .env("PORT", mc.port.to_string()));
    let c = client(&mc, ValueFormat::Pylibmc, &prefix);
    for (k, digits) in [
        ("a", "1208925819614629174706176"),
        ("b", "-1180591620717411303424"),
        ("c", "18446744073709551616"),
        ("d", "9223372036854775808"),
    ] {
        match c.get_value(k) {
            Err(Error::ValueFormat(m)) => {
                assert!(
                    m.contains("outside the signed 64-bit range") && m.contains(digits),
                    "{m}"
                )
            }
            r => panic!("{k}: {r:?}"),
        }
        let item = c.get_item(k).unwrap().unwrap();
        assert_eq!(&item.value[..], digits.as_bytes(), "{k}");
        assert_eq!(c.value_kind(item.flags).unwrap(), mcpool::Kind::Int);
    }
    // The most negative 64-bit one still fits.
    assert_eq!(c.get_value("e").unwrap(), Some(Value::Int(i64::MIN)));
}

/// An int in 2**63..2**64-1 (memcached's counter range) written by `store_unsigned_as`: its
/// digits under the format's integer flags, byte for byte what pylibmc and python-memcached
/// write for that Python int, so `incr` counts on and the peers read it back; the formats
/// with Java's signed 64-bit integers refuse it before anything is sent.
#[test]
fn unsigned_counter_range_is_the_peers_digits() {
    use mcpool::set_item::Compress;
    use mcpool::StoreCommand;
    need(
        PYTHON,
        "apt-get install python3 python3-pylibmc python3-memcache",
    );
    let mc = Memcached::start(&[]);
    let prefix = unique("u64");
    for (f, flag, peer) in [
        (ValueFormat::Pylibmc, 4u32, "pylibmc"),
        (ValueFormat::PythonMemcached, 2, "memcache"),
    ] {
        let c = client(&mc, f, &prefix);
        let k = f.name().to_string();
        let v = (1u64 << 63) + 5;
        c.store_unsigned_as(StoreCommand::Set, &k, v, 0, Compress::Auto)
            .unwrap();
        let item = c.get_item(&k).unwrap().unwrap();
        assert_eq!(
            (item.flags, &item.value[..]),
            (flag, v.to_string().as_bytes())
        );
        assert_eq!(c.incr(&k, 1).unwrap(), Some(v + 1), "{f:?}");
        let script = format!(
            "import os, {peer}\n\
             c = {peer}.Client(['127.0.0.1:' + os.environ['PORT']])\n\
             print(repr(c.get('{prefix}{k}')))\n"
        );
        let out = run(Command::new(PYTHON)
            .arg("-c")
            .arg(&script)
            .env("PORT", mc.port.to_string()));
        assert_eq!(out.trim(), (v + 1).to_string(), "{peer}");
        // up to i64::MAX it is the ordinary Value::Int
        c.store_unsigned_as(StoreCommand::Set, &k, 7, 0, Compress::Auto)
            .unwrap();
        assert_eq!(c.get_value(&k).unwrap(), Some(Value::Int(7)));
    }
    for f in [ValueFormat::Whalin, ValueFormat::Spymemcached] {
        let c = client(&mc, f, &prefix);
        match c.store_unsigned_as(StoreCommand::Set, "w", u64::MAX, 0, Compress::Auto) {
            Err(Error::InvalidArgument { what: "value", .. }) => {}
            r => panic!("{f:?}: {r:?}"),
        }
        assert!(c.get_item("w").unwrap().is_none());
    }
}
