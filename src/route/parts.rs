//! Placement as separate parts: a key hash × a distribution (modulo over buckets, a
//! continuum with its point count, point names and collision rule, or rendezvous) × how
//! weights count. Every profile ([`super::Distribution`]) is a named preset of these parts,
//! and every client setting (`"libmemcached:hash=md5,distribution=modula"`) resolves, in the
//! client's own order of configuration, to one.

use super::hash::{self, Fnv};
pub use super::ketama::Collision;

/// The hash applied to a key (and, for [`Points::PerName`], to each point name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyHash {
    /// `(crc32 >> 16) & 0x7fff` (Cache::Memcached, libmemcached `crc`, twemproxy `crc32`,
    /// spymemcached `CRC_HASH`, Whalin `NEW_COMPAT_HASH`).
    Crc15,
    /// The same, but 0 becomes 1 (python-memcached's `or 1`).
    Crc15OrOne,
    /// The full CRC-32 (Cache::Memcached::Fast, twemproxy `crc32a`).
    Crc32,
    /// One-at-a-time over sign-extended bytes (libmemcached default, twemproxy
    /// `one_at_a_time`).
    OneAtATime,
    /// Word 0 (little-endian) of the MD5 digest.
    Md5,
    /// FNV over bytes read through a signed `char` (libmemcached, twemproxy).
    Fnv(Fnv),
    /// FNV over UTF-16 code units (spymemcached `FNV*_HASH`).
    JavaFnv(Fnv),
    /// SuperFastHash (twemproxy `hsieh`).
    Hsieh,
    /// MurmurHash2, seed `0xdeadbeef * len` (libmemcached and twemproxy `murmur`).
    Murmur,
    /// lookup3 `hashlittle`, initval 13 (libmemcached and twemproxy `jenkins`).
    Jenkins,
    /// Java `String.hashCode` as a signed int: Whalin takes `abs(h % n)`.
    JavaString,
    /// Java `String.hashCode` as an unsigned 32-bit value (spymemcached `NATIVE_HASH`).
    JavaStringUnsigned,
    /// `h*33 + c` in a Java long (Whalin `OLD_COMPAT_HASH`).
    OldCompat,
    /// murmur3_32 of `"host:port-" + key` (pymemcache; only with [`Layout::Rendezvous`]).
    Murmur3,
    /// Rust's `std` `DefaultHasher` over the key as a `str` (its bytes, then `0xff`), all 64
    /// bits taken modulo the server count (the `memcache` crate's `default_hash_function`;
    /// only with [`Layout::Modulo`]).
    RustDefaultHasher,
}

impl KeyHash {
    /// The hash of `prefix + key` as a signed 64-bit value (modulo takes `|h % n|` of it).
    pub(crate) fn hash_signed(self, prefix: &[u8], key: &[u8]) -> i64 {
        match self {
            KeyHash::Crc15 => hash::crc15(prefix, key) as i64,
            KeyHash::Crc15OrOne => hash::crc15(prefix, key).max(1) as i64,
            KeyHash::JavaString => hash::java_string_hash(prefix, key) as i64,
            KeyHash::OldCompat => hash::whalin_old_compat_hash(prefix, key),
            other => {
                debug_assert!(prefix.is_empty());
                other.hash(key) as i64
            }
        }
    }

    /// The 32-bit hash of `key` (what a continuum is searched with).
    pub fn hash(self, key: &[u8]) -> u32 {
        match self {
            KeyHash::Crc15 => hash::crc15(b"", key),
            KeyHash::Crc15OrOne => hash::crc15(b"", key).max(1),
            KeyHash::Crc32 => hash::crc32(key),
            KeyHash::OneAtATime => hash::one_at_a_time(key),
            KeyHash::Md5 => hash::md5_hash(b"", key),
            KeyHash::Fnv(f) => f.c_bytes(key),
            KeyHash::JavaFnv(f) => f.java_chars(key),
            KeyHash::Hsieh => hash::hsieh(key),
            KeyHash::Murmur => hash::murmur2(key),
            KeyHash::Jenkins => hash::jenkins(key),
            KeyHash::JavaString => hash::java_string_hash(b"", key) as u32,
            KeyHash::JavaStringUnsigned => hash::java_string_hash(b"", key) as u32,
            KeyHash::OldCompat => hash::whalin_old_compat_hash(b"", key) as u32,
            KeyHash::Murmur3 => hash::murmur3_32(key, 0),
            KeyHash::RustDefaultHasher => hash::rust_default_hasher(key) as u32,
        }
    }
}

/// How many MD5-derived points (4 per digest of `"name-i"`) a server gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Md5Count {
    /// The same number for every server, whatever the weights (spymemcached's
    /// `KetamaConnectionFactory` / `Locator.CONSISTENT`: 160).
    Fixed(u32),
    /// libmemcached `KETAMA_WEIGHTED`, twemproxy: `floorf(pct × 40 × n + 1e-10) × 4` in
    /// 32-bit float (160 at equal weight, 156 for some server counts).
    Float,
    /// spymemcached: 160 when all weights are equal, else [`Md5Count::Float`].
    EqualOrFloat,
    /// Whalin: `floor(40·n·w/W)` digests in double.
    Whalin,
}

/// Which points each server puts on a continuum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Points {
    /// `count` points per server, one per name `"name-i"` hashed with `hash` (libmemcached
    /// unweighted: 100, hashed with the key hash in force when the continuum was last built;
    /// spymemcached with a non-MD5 hash: 160, the key hash). No weights.
    PerName {
        /// Points per server.
        count: u32,
        /// The hash of each point name.
        hash: KeyHash,
    },
    /// 4 points per MD5 digest of `"name-i"`.
    Md5(Md5Count),
    /// libmemcached when the servers are added after the distribution is set to a consistent
    /// one (pylibmc's order): a server added with weight > 1 turns `KETAMA_WEIGHTED` on, so
    /// with any weight above 1 the points are [`Md5Count::Float`], else 100 per name hashed
    /// with `hash` (the key hash in force when the continuum was last built).
    LibmemcachedWeightedIfAnyAboveOne {
        /// The hash of each point name when no weight is above 1.
        hash: KeyHash,
    },
    /// Cache::Memcached::Fast: `round(points × weight)` chained CRC-32 points of
    /// `host "\0" port` (a unix socket: `path "\0"`, no port).
    Cmf {
        /// `ketama_points`.
        points: u32,
    },
}

/// The name a server's points are made from (`"<name>-<i>"`, i from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Naming {
    /// libmemcached: `host` for port 11211, else `host:port`; a unix socket `path:0`.
    Libmemcached,
    /// libmemcached `CONSISTENT_KETAMA_SPY`: `/host:port` (a unix socket `/path:0`).
    LibmemcachedSpy,
    /// `host:port`, the port always written, the host as configured (Whalin); a unix socket
    /// is its path.
    HostPort,
    /// spymemcached: Java's `InetSocketAddress` text (`localhost/127.0.0.1:11211`,
    /// `127.0.0.1:11211`, `[0:0:0:0:0:0:0:1]:11211`; `src/route/java_name.rs`).
    JavaSocketAddress,
    /// twemproxy: the server's name when it has one, else as [`Naming::Libmemcached`] for
    /// TCP and `path:` (the path and a colon) for a unix socket.
    ServerName,
}

/// How keys are spread over the servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `hash % len(buckets)`; each server `weight` times when `weighted`, else once.
    Modulo {
        /// Whether each server fills `weight` buckets.
        weighted: bool,
    },
    /// A continuum: the first point `>=` the key's hash, wrapping.
    Continuum {
        /// The points each server gets.
        points: Points,
        /// What the points are named after.
        naming: Naming,
        /// Which server keeps a point two servers share.
        collision: Collision,
    },
    /// Highest-random-weight (pymemcache).
    Rendezvous,
    /// Every key on the first server (`proxy-pool`: the client picks the first healthy one).
    First,
}

/// The order the client keeps its servers in (the order of modulo buckets, and which server
/// is added first to a continuum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ServerOrder {
    /// As configured.
    #[default]
    AsGiven,
    /// twemproxy sorts a pool's servers by name (shorter names first, then bytewise) when it
    /// checks them for duplicates; the name is the one its ketama uses ([`Naming::ServerName`]).
    TwemproxyName,
    /// libmemcached with `MEMCACHED_BEHAVIOR_SORT_HOSTS` (pylibmc `_sort_hosts`):
    /// `run_distribution` sorts its server list in place by host name (`strcmp`), then port
    /// (`compare_servers` in `hosts.cc`; a unix socket is its path, port 0).
    LibmemcachedSorted,
}

/// A placement: a key hash, a layout, and the order of the servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Parts {
    /// The key hash.
    pub hash: KeyHash,
    /// The distribution over servers.
    pub layout: Layout,
    /// The order the servers are kept in.
    pub order: ServerOrder,
}

impl Parts {
    /// Whether server weights can change placement.
    pub fn uses_weights(&self) -> bool {
        match self.layout {
            Layout::Modulo { weighted } => weighted,
            Layout::Continuum { points, .. } => !matches!(points, Points::PerName { .. }),
            Layout::Rendezvous | Layout::First => false,
        }
    }

    /// Whether it is a consistent (continuum or rendezvous) placement.
    pub fn is_consistent(&self) -> bool {
        !matches!(self.layout, Layout::Modulo { .. })
    }
}
