//! The hash functions the legacy clients use, each exactly as that client computes it.
//!
//! Functions that a client's rehash applies to `"<n>" + key` take a `prefix` and the key
//! separately, so nothing is allocated to concatenate them.

use md5::{Digest, Md5};

/// Standard CRC-32 (zlib, Perl `String::CRC32`, Java `CRC32`, Python `binascii.crc32`).
pub fn crc32(key: &[u8]) -> u32 {
    crc32fast::hash(key)
}

/// CRC-32 of `prefix` followed by `key`.
pub fn crc32_concat(prefix: &[u8], key: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(prefix);
    h.update(key);
    h.finalize()
}

/// CRC-32 continued from a previous CRC value (zlib's `crc32(crc, buf, len)`), as
/// Cache::Memcached::Fast builds its ketama points.
pub fn crc32_continue(crc: u32, bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(crc);
    h.update(bytes);
    h.finalize()
}

/// The 15-bit CRC of Cache::Memcached, python-memcached and Whalin's `NEW_COMPAT_HASH`:
/// `(crc32 >> 16) & 0x7fff` over `prefix` then `key`.
pub fn crc15(prefix: &[u8], key: &[u8]) -> u32 {
    (crc32_concat(prefix, key) >> 16) & 0x7fff
}

/// Bob Jenkins' one-at-a-time hash as libmemcached computes it: every byte goes through a
/// (signed on x86-64) `char`, so bytes >= 0x80 are sign-extended to `0xffffff80..` first.
pub fn one_at_a_time(key: &[u8]) -> u32 {
    let mut value: u32 = 0;
    for &b in key {
        value = value.wrapping_add(b as i8 as i32 as u32);
        value = value.wrapping_add(value << 10);
        value ^= value >> 6;
    }
    value = value.wrapping_add(value << 3);
    value ^= value >> 11;
    value.wrapping_add(value << 15)
}

/// The MD5 digest of `prefix` followed by `key`.
pub fn md5_concat(prefix: &[u8], key: &[u8]) -> [u8; 16] {
    let mut h = Md5::new();
    h.update(prefix);
    h.update(key);
    h.finalize().into()
}

/// The `n`-th (0..4) little-endian 32-bit word of an MD5 digest: the ketama point value
/// (`(d[3+4n] << 24) | (d[2+4n] << 16) | (d[1+4n] << 8) | d[4n]`).
pub fn md5_word(digest: &[u8; 16], n: usize) -> u32 {
    u32::from_le_bytes([
        digest[4 * n],
        digest[4 * n + 1],
        digest[4 * n + 2],
        digest[4 * n + 3],
    ])
}

/// The key hash of the MD5 ketama clients (libmemcached `MEMCACHED_HASH_MD5`, spymemcached
/// `KETAMA_HASH`, twemproxy `md5`, Whalin `CONSISTENT_HASH`): word 0 of MD5(prefix + key).
pub fn md5_hash(prefix: &[u8], key: &[u8]) -> u32 {
    md5_word(&md5_concat(prefix, key), 0)
}

/// Calls `f` with each UTF-16 code unit of `key` read as UTF-8, as Java sees the `String`
/// the key came from (malformed UTF-8 becomes U+FFFD, as Java's decoder does).
pub fn for_each_utf16(key: &[u8], f: impl FnMut(u16)) {
    match std::str::from_utf8(key) {
        Ok(s) => s.encode_utf16().for_each(f),
        Err(_) => String::from_utf8_lossy(key).encode_utf16().for_each(f),
    }
}

/// Java's `String.hashCode()` of `prefix + key` (`h = 31*h + c` over UTF-16 code units,
/// wrapping in a signed 32-bit `int`). Whalin's `NATIVE_HASH`.
pub fn java_string_hash(prefix: &[u8], key: &[u8]) -> i32 {
    let mut h: i32 = 0;
    let mut step = |c: u16| h = h.wrapping_mul(31).wrapping_add(c as i32);
    prefix.iter().for_each(|&b| step(b as u16));
    for_each_utf16(key, step);
    h
}

/// Whalin's `OLD_COMPAT_HASH` of `prefix + key`: `h = h*33 + c` over UTF-16 code units in
/// a wrapping signed 64-bit Java `long`.
pub fn whalin_old_compat_hash(prefix: &[u8], key: &[u8]) -> i64 {
    let mut h: i64 = 0;
    let mut step = |c: u16| h = h.wrapping_mul(33).wrapping_add(c as i64);
    prefix.iter().for_each(|&b| step(b as u16));
    for_each_utf16(key, step);
    h
}

/// The FNV variants of libmemcached, twemproxy and spymemcached, as each computes them: the
/// 64-bit ones are truncated to 32 bits at the end, and since the low 32 bits of a product
/// depend only on the low 32 bits of its factors, they are the 32-bit recurrence with the
/// 64-bit constants truncated (libmemcached and twemproxy compute `fnv1a_64` that way
/// outright).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)]
pub enum Fnv {
    /// `h = h * prime; h ^= c`, 64-bit constants.
    Fnv1_64,
    /// `h ^= c; h = h * prime`, 64-bit constants.
    Fnv1a_64,
    /// `h = h * prime; h ^= c`, 32-bit constants.
    Fnv1_32,
    /// `h ^= c; h = h * prime`, 32-bit constants.
    Fnv1a_32,
}

impl Fnv {
    fn constants(self) -> (u32, u32, bool) {
        const INIT64: u32 = 0xcbf2_9ce4_8422_2325_u64 as u32;
        const PRIME64: u32 = 0x0100_0000_01b3_u64 as u32;
        const INIT32: u32 = 2_166_136_261;
        const PRIME32: u32 = 16_777_619;
        match self {
            Fnv::Fnv1_64 => (INIT64, PRIME64, false),
            Fnv::Fnv1a_64 => (INIT64, PRIME64, true),
            Fnv::Fnv1_32 => (INIT32, PRIME32, false),
            Fnv::Fnv1a_32 => (INIT32, PRIME32, true),
        }
    }

    fn run(self, units: impl Iterator<Item = u32>) -> u32 {
        let (mut h, prime, xor_first) = self.constants();
        for c in units {
            if xor_first {
                h ^= c;
                h = h.wrapping_mul(prime);
            } else {
                h = h.wrapping_mul(prime);
                h ^= c;
            }
        }
        h
    }

    /// libmemcached / twemproxy: over the bytes read through a (signed on x86-64) `char`,
    /// so bytes >= 0x80 are sign-extended.
    pub fn c_bytes(self, key: &[u8]) -> u32 {
        self.run(key.iter().map(|&b| b as i8 as i32 as u32))
    }

    /// spymemcached `DefaultHashAlgorithm`: over the UTF-16 code units (`k.charAt(i)`).
    pub fn java_chars(self, key: &[u8]) -> u32 {
        let mut units = Vec::new();
        for_each_utf16(key, |c| units.push(c as u32));
        self.run(units.into_iter())
    }
}

/// Paul Hsieh's SuperFastHash as twemproxy computes it (the third tail byte through a
/// signed `char`).
pub fn hsieh(key: &[u8]) -> u32 {
    if key.is_empty() {
        return 0;
    }
    let get16 = |d: &[u8]| (d[1] as u32) << 8 | d[0] as u32;
    let mut hash: u32 = 0;
    let rem = key.len() & 3;
    let mut chunks = key.chunks_exact(4);
    for c in &mut chunks {
        hash = hash.wrapping_add(get16(&c[0..2]));
        let tmp = (get16(&c[2..4]) << 11) ^ hash;
        hash = (hash << 16) ^ tmp;
        hash = hash.wrapping_add(hash >> 11);
    }
    let t = chunks.remainder();
    match rem {
        3 => {
            hash = hash.wrapping_add(get16(&t[0..2]));
            hash ^= hash << 16;
            hash ^= (t[2] as i8 as i32 as u32) << 18;
            hash = hash.wrapping_add(hash >> 11);
        }
        2 => {
            hash = hash.wrapping_add(get16(&t[0..2]));
            hash ^= hash << 11;
            hash = hash.wrapping_add(hash >> 17);
        }
        1 => {
            hash = hash.wrapping_add(t[0] as u32);
            hash ^= hash << 10;
            hash = hash.wrapping_add(hash >> 1);
        }
        _ => {}
    }
    hash ^= hash << 3;
    hash = hash.wrapping_add(hash >> 5);
    hash ^= hash << 4;
    hash = hash.wrapping_add(hash >> 17);
    hash ^= hash << 25;
    hash.wrapping_add(hash >> 6)
}

/// MurmurHash2 as libmemcached and twemproxy use it: seed `0xdeadbeef * len`.
pub fn murmur2(key: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let len = key.len() as u32;
    let mut h = 0xdead_beef_u32.wrapping_mul(len) ^ len;
    let mut chunks = key.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let t = chunks.remainder();
    if !t.is_empty() {
        let mut k = [0u8; 4];
        k[..t.len()].copy_from_slice(t);
        h ^= u32::from_le_bytes(k);
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// Bob Jenkins' lookup3 `hashlittle` with initval 13, as libmemcached and twemproxy use it
/// (their word-at-a-time reads give the same value as this byte-wise form on little-endian).
pub fn jenkins(key: &[u8]) -> u32 {
    let init = 0xdead_beef_u32
        .wrapping_add(key.len() as u32)
        .wrapping_add(13);
    let (mut a, mut b, mut c) = (init, init, init);
    let word = |d: &[u8]| {
        let mut w = [0u8; 4];
        w[..d.len()].copy_from_slice(d);
        u32::from_le_bytes(w)
    };
    let mut rest = key;
    while rest.len() > 12 {
        a = a.wrapping_add(word(&rest[0..4]));
        b = b.wrapping_add(word(&rest[4..8]));
        c = c.wrapping_add(word(&rest[8..12]));
        // mix(a, b, c)
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= c.rotate_left(16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= a.rotate_left(19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= b.rotate_left(4);
        b = b.wrapping_add(a);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(&rest[..rest.len().min(4)]));
    if rest.len() > 4 {
        b = b.wrapping_add(word(&rest[4..rest.len().min(8)]));
    }
    if rest.len() > 8 {
        c = c.wrapping_add(word(&rest[8..]));
    }
    // final(a, b, c)
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(14));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(11));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(25));
    c ^= b;
    c = c.wrapping_sub(b.rotate_left(16));
    a ^= c;
    a = a.wrapping_sub(c.rotate_left(4));
    b ^= a;
    b = b.wrapping_sub(a.rotate_left(14));
    c ^= b;
    c.wrapping_sub(b.rotate_left(24))
}

/// What the `memcache` crate's `default_hash_function` computes: `key.hash(&mut
/// DefaultHasher::new())` (SipHash-1-3 with zero keys, over the bytes and a final `0xff`).
/// A key that is not UTF-8 (which that crate cannot send) is hashed the same way, byte for
/// byte.
pub fn rust_default_hasher(key: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match std::str::from_utf8(key) {
        Ok(s) => s.hash(&mut h),
        Err(_) => {
            h.write(key);
            h.write_u8(0xff);
        }
    }
    h.finish()
}

/// MurmurHash3 (x86, 32-bit) over a stream of bytes, written out by hand.
#[derive(Clone, Debug)]
pub struct Murmur3 {
    h1: u32,
    block: u32,
    fill: u32,
    len: u32,
}

impl Murmur3 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;

    /// A hasher with the given seed.
    pub fn new(seed: u32) -> Murmur3 {
        Murmur3 {
            h1: seed,
            block: 0,
            fill: 0,
            len: 0,
        }
    }

    fn mix_k1(k1: u32) -> u32 {
        k1.wrapping_mul(Self::C1)
            .rotate_left(15)
            .wrapping_mul(Self::C2)
    }

    /// Feeds one byte.
    pub fn push(&mut self, b: u8) {
        self.block |= (b as u32) << (8 * self.fill);
        self.fill += 1;
        self.len = self.len.wrapping_add(1);
        if self.fill == 4 {
            self.h1 ^= Self::mix_k1(self.block);
            self.h1 = self
                .h1
                .rotate_left(13)
                .wrapping_mul(5)
                .wrapping_add(0xe654_6b64);
            self.block = 0;
            self.fill = 0;
        }
    }

    /// Finishes the hash.
    pub fn finish(mut self) -> u32 {
        if self.fill > 0 {
            self.h1 ^= Self::mix_k1(self.block);
        }
        let mut h = self.h1 ^ self.len;
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    }
}

/// MurmurHash3 x86 32-bit of `data` with `seed`.
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    let mut m = Murmur3::new(seed);
    data.iter().for_each(|&b| m.push(b));
    m.finish()
}

/// Writes `n` in decimal into `buf`, returning the digits (for `"<n>" + key` rehashes).
pub(crate) fn decimal(n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Reference values from the C implementations.
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32_continue(crc32(b"1234"), b"56789"), 0xcbf4_3926);
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"hello", 0), 0x248b_fa47);
        assert_eq!(murmur3_32(b"Hello, world!", 1234), 0xfaf6_cdb3);
        assert_eq!(java_string_hash(b"", b"hello"), 99_162_322);
        assert_eq!(java_string_hash(b"hel", b"lo"), 99_162_322);
        assert_eq!(
            md5_hash(b"", b""),
            u32::from_le_bytes([0xd4, 0x1d, 0x8c, 0xd9])
        );
        // One-at-a-time: sign extension changes the result for bytes >= 0x80.
        assert_ne!(one_at_a_time(&[0x80]), {
            let mut v: u32 = 0x80;
            v = v.wrapping_add(v << 10);
            v ^= v >> 6;
            v = v.wrapping_add(v << 3);
            v ^= v >> 11;
            v.wrapping_add(v << 15)
        });
        let mut buf = [0u8; 20];
        assert_eq!(decimal(0, &mut buf), b"0");
        assert_eq!(decimal(u64::MAX, &mut buf), b"18446744073709551615");
    }
}
