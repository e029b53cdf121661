//! Modulo distributions: a key's hash modulo a bucket list, where each server appears
//! `weight` times (Cache::Memcached, python-memcached, Whalin) or once (libmemcached).

use super::hash;
use super::parts::KeyHash;

/// A bucket list: bucket `b` holds server `buckets[b]`.
#[derive(Clone, Debug)]
pub(crate) struct Modulo {
    hash: KeyHash,
    buckets: Vec<u32>,
}

impl Modulo {
    /// Buckets from (server index, repeat count) in bucket order (the count is the weight, or
    /// 1 when weights are ignored),
    /// in a list of at most `max` buckets: `Err(total)` (the buckets the counts ask for)
    /// when they ask for more, or when the memory cannot be had.
    pub(crate) fn new(
        hash: KeyHash,
        repeats: impl Iterator<Item = (usize, u32)> + Clone,
        max: usize,
    ) -> Result<Modulo, u64> {
        let total: u64 = repeats.clone().map(|(_, r)| u64::from(r)).sum();
        let mut buckets = Vec::new();
        if total > max as u64 || buckets.try_reserve_exact(total as usize).is_err() {
            return Err(total);
        }
        for (i, r) in repeats {
            buckets.extend(std::iter::repeat(i as u32).take(r as usize));
        }
        Ok(Modulo { hash, buckets })
    }

    /// How many buckets there are (0 means no server can take a key).
    pub(crate) fn len(&self) -> usize {
        self.buckets.len()
    }

    /// The bucket that `prefix + key` hashes to: `|h % n|` (Java's `%` keeps the sign, and
    /// Whalin negates a negative bucket).
    fn bucket(&self, prefix: &[u8], key: &[u8]) -> usize {
        if self.hash == KeyHash::RustDefaultHasher {
            // all 64 bits, unsigned (`hash as usize % n`), of the key as sent
            let h = if prefix.is_empty() {
                hash::rust_default_hasher(key)
            } else {
                hash::rust_default_hasher(&[prefix, key].concat())
            };
            return (h % self.buckets.len() as u64) as usize;
        }
        let n = self.buckets.len() as i64;
        (self.hash.hash_signed(prefix, key) % n).unsigned_abs() as usize
    }

    /// The bucket `key` hashes to.
    pub(crate) fn bucket_of(&self, key: &[u8]) -> usize {
        if self.buckets.len() == 1 {
            return 0;
        }
        self.bucket(b"", key)
    }

    /// The server of bucket `b`.
    pub(crate) fn server_at(&self, b: usize) -> usize {
        self.buckets[b] as usize
    }

    /// The server for `key`.
    pub(crate) fn locate(&self, key: &[u8]) -> usize {
        if self.buckets.len() == 1 {
            return self.buckets[0] as usize;
        }
        self.buckets[self.bucket(b"", key)] as usize
    }

    /// Cache::Memcached's `get_sock` loop: up to 20 tries, adding `crc15("<try>" . key)` to
    /// the hash after each dead server.
    pub(crate) fn rehash_cache_memcached(
        &self,
        key: &[u8],
        alive: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let n = self.buckets.len() as u64;
        let mut hv = hash::crc15(b"", key) as u64;
        let mut buf = [0u8; 20];
        for tries in 1..=20u64 {
            let s = self.buckets[(hv % n) as usize] as usize;
            if alive(s) {
                return Some(s);
            }
            hv += hash::crc15(hash::decimal(tries, &mut buf), key) as u64;
        }
        None
    }

    /// python-memcached's `_get_server` loop: 10 tries; after a dead server the next hash is
    /// the hash of the decimal string `"<previous hash><i>"` (the key no longer enters).
    pub(crate) fn rehash_python_memcached(
        &self,
        key: &[u8],
        alive: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let n = self.buckets.len() as u64;
        let mut sh = hash::crc15(b"", key).max(1) as u64;
        for i in 0..10u64 {
            let s = self.buckets[(sh % n) as usize] as usize;
            if alive(s) {
                return Some(s);
            }
            let mut text = [0u8; 24];
            let mut a = [0u8; 20];
            let mut b = [0u8; 20];
            let (x, y) = (hash::decimal(sh, &mut a), hash::decimal(i, &mut b));
            text[..x.len()].copy_from_slice(x);
            text[x.len()..x.len() + y.len()].copy_from_slice(y);
            sh = hash::crc15(b"", &text[..x.len() + y.len()]).max(1) as u64;
        }
        None
    }

    /// Whalin's `SockIOPool.getSock` failover: after a dead server, hash `"<n>" + key` for
    /// n = 0, 1, 2, ... until a server not yet tried comes up. Java loops without bound;
    /// this gives up after `limit` rehashes.
    pub(crate) fn rehash_whalin(
        &self,
        key: &[u8],
        alive: &dyn Fn(usize) -> bool,
        limit: u64,
    ) -> Option<usize> {
        let mut buf = [0u8; 20];
        for n in 0..limit {
            let s = self.buckets[self.bucket(hash::decimal(n, &mut buf), key)] as usize;
            if alive(s) {
                return Some(s);
            }
        }
        None
    }
}
