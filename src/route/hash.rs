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
