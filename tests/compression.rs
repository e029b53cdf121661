//! Compression: stored compressed on the wire (checked with a plain socket), read back equal;
//! hand-written gzip and zlib values with the compression flag both decode.
mod common;

use common::{unique, Memcached};
use flate2::write::{GzEncoder, ZlibEncoder};
use mcpool::{Client, CompressionFormat, Error, StoreCommand};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// A plain-socket `get`: (flags, raw bytes) as memcached holds them.
fn raw_get(addr: &str, key: &str) -> Option<(u32, Vec<u8>)> {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "get {key}\r\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    if line == "END\r\n" {
        return None;
    }
    let parts: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(parts[0], "VALUE", "{line}");
    let flags = parts[2].parse().unwrap();
    let len: usize = parts[3].parse().unwrap();
    let mut data = vec![0; len + 2];
    r.read_exact(&mut data).unwrap();
    data.truncate(len);
    Some((flags, data))
}

fn raw_set(addr: &str, key: &str, flags: u32, data: &[u8]) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "set {key} {flags} 0 {}\r\n", data.len()).unwrap();
    s.write_all(data).unwrap();
    s.write_all(b"\r\n").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    assert_eq!(line, "STORED\r\n");
}

fn text(n: usize) -> Vec<u8> {
    (0..n).map(|i| b"the quick brown fox "[i % 20]).collect()
}

#[test]
fn large_values_are_stored_compressed() {
    let mc = Memcached::start(&[]);
    for (format, flag, magic) in [
        (CompressionFormat::Gzip, 2u32, &[0x1f, 0x8b][..]),
        (CompressionFormat::Zlib, 8, &[0x78][..]),
    ] {
        let prefix = unique("cz");
        let c = Client::builder()
            .server(&mc.addr())
            .key_prefix(prefix.clone())
            .compression_format(format)
            .build()
            .unwrap();
        let big = text(100_000);
        c.store(StoreCommand::Set, "big", &big, 1, 0).unwrap();
        let (flags, raw) = raw_get(&mc.addr(), &format!("{prefix}big")).unwrap();
        assert_eq!(flags, 1 | flag, "{format:?}");
        assert!(
            raw.starts_with(magic) && raw.len() < big.len() / 10,
            "{format:?}"
        );
        let item = c.get_item("big").unwrap().unwrap();
        assert_eq!(item.value, big);
        assert_eq!(
            item.flags, 1,
            "the compression bit is not shown to the caller"
        );
        // Below the threshold: stored as is.
        c.set("small", &text(1000), 0).unwrap();
        assert_eq!(
            raw_get(&mc.addr(), &format!("{prefix}small")).unwrap(),
            (0, text(1000))
        );
    }
}

#[test]
fn hand_written_gzip_and_zlib_values_decode() {
    let mc = Memcached::start(&[]);
    let prefix = unique("hand");
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.clone())
        .build()
        .unwrap();
    let plain = text(5000);
    let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&plain).unwrap();
    raw_set(&mc.addr(), &format!("{prefix}gz"), 2, &gz.finish().unwrap());
    let mut zl = ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    zl.write_all(&plain).unwrap();
    raw_set(&mc.addr(), &format!("{prefix}zl"), 2, &zl.finish().unwrap());
    assert_eq!(c.get("gz").unwrap().unwrap(), plain);
    assert_eq!(c.get("zl").unwrap().unwrap(), plain);
    // Flagged compressed but garbage: an error, never garbage.
    raw_set(
        &mc.addr(),
        &format!("{prefix}bad"),
        2,
        b"definitely not deflate",
    );
    assert!(matches!(c.get("bad"), Err(Error::Decompress(_))));
    // And the connection is still fine.
    assert_eq!(c.get("gz").unwrap().unwrap(), plain);
}

#[test]
fn incompressible_values_stay_plain() {
    let mc = Memcached::start(&[]);
    let prefix = unique("noise");
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(prefix.clone())
        .build()
        .unwrap();
    let mut x = 2463534242u32;
    let noise: Vec<u8> = (0..50_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    c.set("n", &noise, 0).unwrap();
    assert_eq!(
        raw_get(&mc.addr(), &format!("{prefix}n")).unwrap(),
        (0, noise.clone())
    );
    assert_eq!(c.get("n").unwrap().unwrap(), noise);
}
