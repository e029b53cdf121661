//! Key placement: which server of the list a key lives on.
//!
//! Pure functions of (profile, server list, key): no I/O, no clock. Each profile is named
//! after the client it agrees with key for key; `docs/placement.md` says which library
//! version each was checked against and what decides placement.
//!
//! The key given to [`Router::locate`] is the key exactly as hashed: the wire key after
//! sanitizing, with the namespace prefix only when [`Distribution::hashes_namespace`] says
//! the imitated client hashes it.

pub mod hash;
mod java_name;
mod ketama;
mod modulo;
pub mod parts;
pub mod proxy_pool;
mod rendezvous;
pub mod setting;

use crate::address::{ServerAddr, ServerSpec};
use crate::error::{Error, Result};
use ketama::Continuum;
use modulo::Modulo;
use parts::{Collision, KeyHash, Layout, Md5Count, Naming, Parts, Points, ServerOrder};
use rendezvous::Rendezvous;
pub use setting::{Client, Setting};
use std::fmt;
use std::str::FromStr;
use std::sync::{Arc, RwLock};

/// A placement: a named profile (a preset of [`Parts`], named after the client library it
/// agrees with), or a [`Setting`] written in a client's own words
/// (`"libmemcached:hash=md5,distribution=modula"`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Distribution {
    /// Perl Cache::Memcached (and Cache::Memcached::Fast with `ketama_points => 0`):
    /// `(crc32(key) >> 16) & 0x7fff` modulo a bucket list holding each server `weight` times.
    CacheMemcached,
    /// python-memcached: the same 15-bit CRC and buckets, but a hash of 0 becomes 1.
    PythonMemcached,
    /// Cache::Memcached::Fast with `ketama_points > 0`: a CRC32 continuum seeded from host
    /// and port (a unix socket: its path and no port), `round(points × weight)` points per
    /// server.
    CmfKetama {
        /// Cache::Memcached::Fast's `ketama_points` (points per unit of weight).
        points: u32,
    },
    /// libmemcached / pylibmc default: sign-extending one-at-a-time hash `% n`, no weights.
    LibmemcachedModula,
    /// libmemcached `MEMCACHED_BEHAVIOR_KETAMA` / pylibmc `ketama`: 100 one-at-a-time points
    /// per server named `host-i` (port 11211) or `host:port-i` (a unix socket `path:0-i`);
    /// weights ignored.
    LibmemcachedKetama,
    /// libmemcached `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED` / pylibmc `ketama_weighted`,
    /// twemproxy `ketama` + `md5` without server names: MD5, 4 points per digest, 160 points at
    /// equal weight, counts computed in 32-bit float; names as in `LibmemcachedKetama` (for
    /// twemproxy only with TCP servers: it names a unix socket `path:`, see `TwemproxyKetama`).
    LibmemcachedKetamaWeighted,
    /// libmemcached `MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY`: points named
    /// `/host:port-i`.
    LibmemcachedKetamaSpy,
    /// spymemcached `KetamaConnectionFactory`: MD5 ×4, 160 points, `ip:port-i`.
    SpymemcachedKetama,
    /// twemproxy `distribution: ketama`, `hash: md5`, with server names used in the points.
    TwemproxyKetama,
    /// Whalin `CONSISTENT_HASH`: `floor(40·n·w/W)` MD5 digests of `"host:port-j"`, ×4 points.
    WhalinConsistent,
    /// Whalin `NATIVE_HASH`: Java `String.hashCode` modulo a weighted bucket list.
    WhalinNative,
    /// Whalin `OLD_COMPAT_HASH`: `h*33 + c` in a Java long, modulo weighted buckets.
    WhalinOldCompat,
    /// Whalin `NEW_COMPAT_HASH`: the 15-bit CRC modulo weighted buckets.
    WhalinNewCompat,
    /// pymemcache `HashClient`: rendezvous hashing with murmur3_32 of `"host:port-key"`.
    PymemcacheRendezvous,
    /// The Rust `memcache` crate (0.x, `default_hash_function`): `std`'s `DefaultHasher` of
    /// the key, all 64 bits modulo the server count; no weights.
    RustMemcache,
    /// Not a placement: every key goes to the first healthy server of the list, for fleets
    /// of interchangeable proxies (mcrouter, twemproxy, memcached's proxy); see [`proxy_pool`].
    /// Not in [`Distribution::NAMES`] / [`Distribution::all`], which list placement profiles.
    ProxyPool,
    /// A client setting in that client's words (`pylibmc:ketama=1,hash=md5`), parsed by
    /// `FromStr` (see `docs/placement.md` for every accepted word).
    Setting(Box<Setting>),
}

/// What to do when a key's server is dead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FailoverPolicy {
    /// The key gets an error; no two clients ever disagree about where a key lives.
    #[default]
    FailFast,
    /// The profile's client's own rule picks another server for a dead server's key
    /// (Cache::Memcached, python-memcached, Whalin, spymemcached `Redistribute`); keys of
    /// live servers stay. Profiles whose client has none behave as `Eject`.
    Rehash,
    /// While any server is dead, every key is placed as if the dead servers were not in
    /// the list (libmemcached `REMOVE_FAILED_SERVERS`, twemproxy `auto_eject_hosts`);
    /// except under libmemcached's modula, where libmemcached's ejection moves no key
    /// ([`Distribution::failover_moves_keys`]).
    Eject,
}

/// spymemcached `KetamaNodeLocator.getSequence`: `new KetamaIterator(k, 7, ...)`.
const SPYMEMCACHED_KETAMA_TRIES: u64 = 7;

/// Cache::Memcached::Fast's usual `ketama_points` (its documentation's example value).
pub const DEFAULT_CMF_KETAMA_POINTS: u32 = 150;

/// The most entries a placement table may hold: a modulo profile's bucket list (each server
/// `weight` times) or a continuum's points (`cmf-ketama`: `points × weight` per server).
/// Weights or points that need more are a configuration error. The clients imitated have no
/// bound of their own (Cache::Memcached, python-memcached and Whalin repeat a server `weight`
/// times, Cache::Memcached::Fast makes `points × weight` points), so a weight of 2^32-1
/// (what Java's -1 becomes) meant gigabytes; 2^22 (4,194,304) is thousands of servers at
/// ordinary weights. The libmemcached, spymemcached, twemproxy and Whalin-consistent
/// continuums hold about 160 points per server whatever the weights.
pub const MAX_TABLE_ENTRIES: usize = 1 << 22;

impl Distribution {
    /// Every profile name, for help text and error messages.
    pub const NAMES: &'static [&'static str] = &[
        "cache-memcached",
        "python-memcached",
        "cmf-ketama",
        "libmemcached-modula",
        "libmemcached-ketama",
        "libmemcached-ketama-weighted",
        "libmemcached-ketama-spy",
        "spymemcached-ketama",
        "twemproxy-ketama",
        "whalin-consistent",
        "whalin-native",
        "whalin-old-compat",
        "whalin-new-compat",
        "pymemcache-rendezvous",
        "rust-memcache",
    ];

    /// The profile's name, as accepted by `FromStr` and the CLI.
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::CacheMemcached => "cache-memcached",
            Distribution::PythonMemcached => "python-memcached",
            Distribution::CmfKetama { .. } => "cmf-ketama",
            Distribution::LibmemcachedModula => "libmemcached-modula",
            Distribution::LibmemcachedKetama => "libmemcached-ketama",
            Distribution::LibmemcachedKetamaWeighted => "libmemcached-ketama-weighted",
            Distribution::LibmemcachedKetamaSpy => "libmemcached-ketama-spy",
            Distribution::SpymemcachedKetama => "spymemcached-ketama",
            Distribution::TwemproxyKetama => "twemproxy-ketama",
            Distribution::WhalinConsistent => "whalin-consistent",
            Distribution::WhalinNative => "whalin-native",
            Distribution::WhalinOldCompat => "whalin-old-compat",
            Distribution::WhalinNewCompat => "whalin-new-compat",
            Distribution::PymemcacheRendezvous => "pymemcache-rendezvous",
            Distribution::RustMemcache => "rust-memcache",
            Distribution::ProxyPool => proxy_pool::NAME,
            Distribution::Setting(s) => s.client().name(),
        }
    }

    /// Whether servers may be named (`host:port:name`, nutcracker's `host:port:weight
    /// name`) under this profile: twemproxy's placements, which hash the names, and
    /// proxy-pool, which takes a nutcracker list as it is. Under any other a name changes
    /// nothing, and [`Router::new`] refuses it as the mistyped weight it likely is.
    pub fn reads_server_names(&self) -> bool {
        match self {
            Distribution::TwemproxyKetama | Distribution::ProxyPool => true,
            Distribution::Setting(s) => s.client() == setting::Client::Twemproxy,
            _ => false,
        }
    }

    /// What decides placement: the key hash and the layout. A profile is a fixed preset; a
    /// [`Setting`] resolves to whatever its client's configuration amounts to.
    pub fn parts(&self) -> Parts {
        let continuum = |points, naming, collision| Layout::Continuum {
            points,
            naming,
            collision,
        };
        let (hash, layout) = match self {
            Distribution::CacheMemcached => (KeyHash::Crc15, Layout::Modulo { weighted: true }),
            Distribution::PythonMemcached => {
                (KeyHash::Crc15OrOne, Layout::Modulo { weighted: true })
            }
            Distribution::CmfKetama { points } => (
                KeyHash::Crc32,
                continuum(
                    Points::Cmf { points: *points },
                    Naming::HostPort,
                    Collision::FirstWins,
                ),
            ),
            Distribution::LibmemcachedModula => {
                (KeyHash::OneAtATime, Layout::Modulo { weighted: false })
            }
            Distribution::LibmemcachedKetama => (
                KeyHash::OneAtATime,
                continuum(
                    Points::PerName {
                        count: 100,
                        hash: KeyHash::OneAtATime,
                    },
                    Naming::Libmemcached,
                    Collision::FirstWins,
                ),
            ),
            Distribution::LibmemcachedKetamaWeighted => (
                KeyHash::Md5,
                continuum(
                    Points::Md5(Md5Count::Float),
                    Naming::Libmemcached,
                    Collision::FirstWins,
                ),
            ),
            Distribution::LibmemcachedKetamaSpy => (
                KeyHash::OneAtATime,
                continuum(
                    Points::PerName {
                        count: 100,
                        hash: KeyHash::OneAtATime,
                    },
                    Naming::LibmemcachedSpy,
                    Collision::FirstWins,
                ),
            ),
            Distribution::SpymemcachedKetama => (
                KeyHash::Md5,
                continuum(
                    Points::Md5(Md5Count::EqualOrFloat),
                    Naming::JavaSocketAddress,
                    Collision::LastWins,
                ),
            ),
            Distribution::TwemproxyKetama => (
                KeyHash::Md5,
                continuum(
                    Points::Md5(Md5Count::Float),
                    Naming::ServerName,
                    Collision::FirstWins,
                ),
            ),
            Distribution::WhalinConsistent => (
                KeyHash::Md5,
                continuum(
                    Points::Md5(Md5Count::Whalin),
                    Naming::HostPort,
                    Collision::LastWins,
                ),
            ),
            Distribution::WhalinNative => (KeyHash::JavaString, Layout::Modulo { weighted: true }),
            Distribution::WhalinOldCompat => {
                (KeyHash::OldCompat, Layout::Modulo { weighted: true })
            }
            Distribution::WhalinNewCompat => (KeyHash::Crc15, Layout::Modulo { weighted: true }),
            Distribution::PymemcacheRendezvous => (KeyHash::Murmur3, Layout::Rendezvous),
            Distribution::RustMemcache => (
                KeyHash::RustDefaultHasher,
                Layout::Modulo { weighted: false },
            ),
            // The hash is never used: every key goes to the first (healthy) proxy.
            Distribution::ProxyPool => (KeyHash::Crc15, Layout::First),
            Distribution::Setting(s) => return s.parts(),
        };
        Parts {
            hash,
            layout,
            order: ServerOrder::AsGiven,
        }
    }

    /// Every profile, `cmf-ketama` with [`DEFAULT_CMF_KETAMA_POINTS`].
    pub fn all() -> Vec<Distribution> {
        Self::NAMES
            .iter()
            .map(|n| n.parse().expect("known name"))
            .collect()
    }

    /// `cmf-ketama` with `points` points per server, checked as `cmf-ketama:N` is (1 to
    /// [`MAX_TABLE_ENTRIES`]); a configuration error naming the cause for a count out of
    /// that range, or for a profile that has no points count (only `cmf-ketama` has one).
    /// `whence` names where the count was written, for the message (`--ketama-points`).
    pub fn checked_ketama_points(self, points: u32, whence: &str) -> Result<Distribution> {
        match self {
            Distribution::CmfKetama { .. } => Ok(Distribution::CmfKetama {
                points: check_ketama_points(points, whence)?,
            }),
            other => Err(Error::Config(format!(
                "{whence}: ketama points apply only to the cmf-ketama distribution, not {other}"
            ))),
        }
    }

    /// Parses a profile name (as [`FromStr`]) with a points count given beside it (a CLI's
    /// `--ketama-points`, named by `whence`), checked by [`Distribution::checked_ketama_points`].
    /// A count written in the name as well (`cmf-ketama:40`) must be the same one: a different
    /// one is a configuration error naming both, never one of them silently picked (the rule
    /// of a weight given in an address and in a weights list).
    pub fn with_points_beside(s: &str, points: Option<u32>, whence: &str) -> Result<Distribution> {
        let dist: Distribution = s.parse()?;
        let Some(points) = points else {
            return Ok(dist);
        };
        if let (Some(_), Distribution::CmfKetama { points: named }) =
            (s.strip_prefix("cmf-ketama:"), &dist)
        {
            if *named != points {
                return Err(Error::Config(format!(
                    "two ketama points counts: {named} in {s:?} and {points} in {whence}; \
                     give one (or the same in both)"
                )));
            }
        }
        dist.checked_ketama_points(points, whence)
    }

    /// Sets `ketama_points` on `cmf-ketama`; other profiles are returned unchanged. Unchecked:
    /// [`Distribution::checked_ketama_points`] refuses a count no continuum can hold.
    pub fn with_ketama_points(self, points: u32) -> Distribution {
        match self {
            Distribution::CmfKetama { .. } => Distribution::CmfKetama { points },
            other => other,
        }
    }

    /// Whether the client it imitates URL-encodes keys by default (the Whalin profiles).
    pub fn sanitizes_keys_by_default(&self) -> bool {
        matches!(
            self,
            Distribution::WhalinConsistent
                | Distribution::WhalinNative
                | Distribution::WhalinOldCompat
                | Distribution::WhalinNewCompat
        )
    }

    /// Whether the imitated client hashes the key with its namespace (key prefix) in front.
    /// `false`: Cache::Memcached and ::Fast (`namespace`), libmemcached/pylibmc (namespace,
    /// unless `MEMCACHED_BEHAVIOR_HASH_WITH_NAMESPACE`), pymemcache (`key_prefix`) hash the
    /// bare key, so the caller must pass the key without the prefix to [`Router::locate`].
    /// `true`: the client has no namespace of its own or hashes what it sends
    /// (python-memcached's `key_prefix`, twemproxy, spymemcached, Whalin).
    pub fn hashes_namespace(&self) -> bool {
        if let Distribution::Setting(s) = self {
            return matches!(s.client(), Client::Twemproxy | Client::Spymemcached);
        }
        !matches!(
            self,
            Distribution::CacheMemcached
                | Distribution::CmfKetama { .. }
                | Distribution::LibmemcachedModula
                | Distribution::LibmemcachedKetama
                | Distribution::LibmemcachedKetamaWeighted
                | Distribution::LibmemcachedKetamaSpy
                | Distribution::PymemcacheRendezvous
        )
    }

    /// Whether server weights change placement under this profile.
    pub fn uses_weights(&self) -> bool {
        self.parts().uses_weights()
    }

    /// Whether `eject` (and `rehash` where it acts as `eject`) moves a dead server's keys to
    /// the live servers under this profile. Not under libmemcached's modula distribution
    /// (`libmemcached-modula`, a `libmemcached:`/`pylibmc:` setting that ends on modula):
    /// libmemcached 1.1.4's `AUTO_EJECT_HOSTS`/`REMOVE_FAILED_SERVERS` rebuild only a
    /// continuum (`run_distribution` does nothing for `MEMCACHED_DISTRIBUTION_MODULA`), so
    /// a dead server's keys fail there (`SERVER_MARKED_DEAD`) and are never written
    /// elsewhere; mcpool does the same (the key fails, as with `fail-fast`), so that both
    /// agree on where every key lives.
    pub fn failover_moves_keys(&self) -> bool {
        match self {
            Distribution::LibmemcachedModula => false,
            Distribution::Setting(s) => {
                !(matches!(s.client(), Client::Libmemcached | Client::Pylibmc)
                    && matches!(s.parts().layout, Layout::Modulo { .. }))
            }
            _ => true,
        }
    }

    /// Whether the profile's client has a failover rule of its own for dead servers
    /// (Cache::Memcached, python-memcached, Whalin, spymemcached). Others treat `Rehash` as
    /// `Eject`.
    pub fn has_legacy_rehash(&self) -> bool {
        self.rehash_rule().is_some()
    }

    /// The imitated client's own rule for a key whose server is dead (`FailoverPolicy::Rehash`).
    fn rehash_rule(&self) -> Option<RehashRule> {
        Some(match self {
            Distribution::CacheMemcached => RehashRule::CacheMemcached,
            Distribution::PythonMemcached => RehashRule::PythonMemcached,
            Distribution::WhalinConsistent
            | Distribution::WhalinNative
            | Distribution::WhalinOldCompat
            | Distribution::WhalinNewCompat => RehashRule::Whalin,
            Distribution::SpymemcachedKetama => RehashRule::Spymemcached,
            Distribution::Setting(s) if s.client() == Client::Spymemcached => {
                RehashRule::Spymemcached
            }
            _ => return None,
        })
    }
}

/// A client's own rule for a key whose server is dead (see [`Distribution::rehash_rule`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RehashRule {
    /// Cache::Memcached 1.30 `get_sock`: `hv += crc15("<try>" . key)`, 20 tries.
    CacheMemcached,
    /// python-memcached `_get_server`: rehash `"<hash><i>"`, 10 tries.
    PythonMemcached,
    /// Whalin `SockIOPool.getSock`: hash `"<n>" + key`.
    Whalin,
    /// spymemcached 2.12.3 `FailureMode.Redistribute` (its default):
    /// `MemcachedConnection.addOperation` takes the primary when it is active, else the
    /// first active node of the locator's `getSequence(key)`: `ArrayModNodeLocator` the
    /// nodes after the primary, wrapping; `KetamaNodeLocator` a `KetamaIterator` of 7 tries,
    /// each adding `hash("<try>" + key)` to the hash (see [`Router::spymemcached_sequence`]).
    Spymemcached,
}

impl fmt::Display for Distribution {
    /// The profile name, or a setting's normalized text (both parse back to it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Setting(s) => f.write_str(s.text()),
            _ => f.write_str(self.name()),
        }
    }
}

/// The range of `cmf-ketama`'s points per server, 1 to [`MAX_TABLE_ENTRIES`]: the one check
/// of `cmf-ketama:N` and [`Distribution::checked_ketama_points`]; `whence` is where the count
/// was written.
fn check_ketama_points(points: u32, whence: &str) -> Result<u32> {
    if points == 0 {
        return Err(Error::Config(format!(
            "ketama points 0 in {whence} place no server (points per server are 1-\
             {MAX_TABLE_ENTRIES}, and points x the sum of the weights at most \
             {MAX_TABLE_ENTRIES}): Cache::Memcached::Fast's ketama_points 0 is its modulo \
             placement, the cache-memcached distribution"
        )));
    }
    if points as usize > MAX_TABLE_ENTRIES {
        return Err(Error::Config(format!(
            "ketama points {points} in {whence}: at most {MAX_TABLE_ENTRIES} \
             (the most points a continuum may hold; points x the sum of the weights must \
             fit in it too)"
        )));
    }
    Ok(points)
}

impl FromStr for Distribution {
    type Err = Error;
    /// Parses a profile name; `cmf-ketama` gets [`DEFAULT_CMF_KETAMA_POINTS`] unless written
    /// `cmf-ketama:N` (or change it with [`Distribution::with_ketama_points`]).
    fn from_str(s: &str) -> Result<Distribution> {
        if let Some((client, body)) = s.split_once(':') {
            if let Some(c) = Client::from_name(&client.trim().to_ascii_lowercase()) {
                return Ok(Distribution::Setting(Box::new(setting::parse(c, body)?)));
            }
        }
        // A profile's name in any case, `_` for `-` (every named word's rule).
        let lowered = s.trim().to_ascii_lowercase().replace('_', "-");
        if let Some(n) = lowered.strip_prefix("cmf-ketama:") {
            let points: u32 = n.parse().map_err(|_| {
                Error::Config(format!("bad ketama points {n:?} in {s:?} (a whole number)"))
            })?;
            let points = check_ketama_points(points, &format!("{s:?}"))?;
            return Ok(Distribution::CmfKetama { points });
        }
        Ok(match lowered.as_str() {
            "cache-memcached" => Distribution::CacheMemcached,
            "python-memcached" => Distribution::PythonMemcached,
            "cmf-ketama" => Distribution::CmfKetama {
                points: DEFAULT_CMF_KETAMA_POINTS,
            },
            "libmemcached-modula" => Distribution::LibmemcachedModula,
            "libmemcached-ketama" => Distribution::LibmemcachedKetama,
            "libmemcached-ketama-weighted" => Distribution::LibmemcachedKetamaWeighted,
            "libmemcached-ketama-spy" => Distribution::LibmemcachedKetamaSpy,
            "spymemcached-ketama" => Distribution::SpymemcachedKetama,
            "twemproxy-ketama" => Distribution::TwemproxyKetama,
            "whalin-consistent" => Distribution::WhalinConsistent,
            "whalin-native" => Distribution::WhalinNative,
            "whalin-old-compat" => Distribution::WhalinOldCompat,
            "whalin-new-compat" => Distribution::WhalinNewCompat,
            "pymemcache-rendezvous" => Distribution::PymemcacheRendezvous,
            "rust-memcache" => Distribution::RustMemcache,
            proxy_pool::NAME => Distribution::ProxyPool,
            _ => {
                return Err(Error::Config(format!(
                    "unknown distribution {s:?} (a profile, one of: {}; {} for a pool of \
                     proxies; or a client's own setting, CLIENT:WORD=VALUE,... with CLIENT one of {}, see \
                     docs/placement.md)",
                    Distribution::NAMES.join(", "),
                    proxy_pool::NAME,
                    Client::NAMES.join(", ")
                )))
            }
        })
    }
}

impl FromStr for FailoverPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<FailoverPolicy> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "fail-fast" => Ok(FailoverPolicy::FailFast),
            "rehash" => Ok(FailoverPolicy::Rehash),
            "eject" => Ok(FailoverPolicy::Eject),
            _ => Err(Error::Config(format!(
                "unknown failover policy {s:?} (fail-fast, rehash, eject)"
            ))),
        }
    }
}

/// How Whalin's failover gives up: Java rehashes `"<n>" + key` without bound.
const WHALIN_REHASH_LIMIT: u64 = 10_000;

/// How many ejected tables (one per distinct dead set) a router keeps.
const EJECT_CACHE: usize = 8;

/// A built lookup structure.
#[derive(Clone, Debug)]
enum Table {
    Modulo(Modulo),
    Ketama {
        continuum: Continuum,
        key_hash: KeyHash,
    },
    Rendezvous(Rendezvous),
    /// `proxy-pool`: every key on the first server.
    First,
}

/// libmemcached's name for a server on the continuum: `host` for port 11211, else
/// `host:port`. A unix socket is `path:0`: libmemcached keeps port 0 for a socket
/// (`memcached_server_add_unix_socket`, pylibmc's `/path`, `--SOCKET=`), and only port
/// 11211 is left out of the name (`update_continuum` in `libmemcached/hosts.cc`).
fn libmemcached_name(addr: &ServerAddr) -> String {
    match addr {
        ServerAddr::Tcp { host, port: 11211 } => host.clone(),
        ServerAddr::Tcp { host, port } => format!("{host}:{port}"),
        ServerAddr::Unix(p) => format!("{}:0", p.display()),
    }
}

/// twemproxy's name for a server without a configured name: `conf_add_server` (`nc_conf.c`)
/// names it by its address text, `host:port` with the port as written (`027611` stays
/// `027611`), or `host` alone when the port is 11211 (compared as a number, as libmemcached
/// leaves it out); a socket (`/path:weight`) has no port text, so the name is the path and
/// the colon.
fn twemproxy_name(s: &ServerSpec) -> String {
    match &s.addr {
        ServerAddr::Unix(p) => format!("{}:", p.display()),
        ServerAddr::Tcp { host, port: 11211 } => host.clone(),
        ServerAddr::Tcp { host, .. } => format!("{host}:{}", s.port_as_written()),
    }
}

/// The host and port texts Cache::Memcached::Fast hashes (`host "\0" port`): it splits the
/// address as written at its last `:` (`Fast.xs`), so the port is its text (`027431`), and
/// a unix socket (`/path`, no colon) is the path and an empty port.
fn cmf_host_port(s: &ServerSpec) -> (String, String) {
    (s.addr.host(), s.port_as_written())
}

/// `host:port`, the port always written (IPv6 literals without brackets, as the Java and
/// Python clients print them).
fn host_port(addr: &ServerAddr) -> String {
    match addr {
        ServerAddr::Tcp { host, port } => format!("{host}:{port}"),
        ServerAddr::Unix(p) => p.display().to_string(),
    }
}

/// The names the continuum's points of each server are made from, under `d`'s naming (empty
/// for a layout without a continuum). Made once per server list: the spymemcached naming
/// resolves host names, which a table built again for the live servers (`eject`) must not.
fn point_names(d: &Distribution, servers: &[ServerSpec]) -> Vec<String> {
    match d.parts().layout {
        Layout::Continuum { naming, .. } => servers.iter().map(|s| point_name(naming, s)).collect(),
        _ => Vec::new(),
    }
}

/// The name a server's points are made from.
fn point_name(naming: Naming, s: &ServerSpec) -> String {
    match naming {
        Naming::Libmemcached => libmemcached_name(&s.addr),
        Naming::LibmemcachedSpy => format!("/{}:{}", s.addr.host(), s.addr.port()),
        // Whalin's `servers[i] + "-" + j`: the address as written, a port's leading zero too
        Naming::HostPort => match &s.addr {
            ServerAddr::Tcp { host, .. } => format!("{host}:{}", s.port_as_written()),
            unix => host_port(unix),
        },
        Naming::JavaSocketAddress => match &s.addr {
            ServerAddr::Tcp { host, port } => java_name::java_socket_address(host, *port),
            ServerAddr::Unix(p) => p.display().to_string(),
        },
        Naming::ServerName => match &s.name {
            Some(name) => name.clone(),
            None => twemproxy_name(s),
        },
    }
}

/// The configuration error for a table that would hold `total` entries.
fn too_large(d: &Distribution, total: u64, what: &str) -> Error {
    Error::Config(format!(
        "{d}: the server weights{what} make a placement table of {total} entries; at most \
         {MAX_TABLE_ENTRIES} are allowed (lower the weights{what})"
    ))
}

impl Table {
    /// The table for `servers`; `names` are their [`point_names`] (used by a continuum).
    fn build(d: &Distribution, servers: &[ServerSpec], names: &[String]) -> Result<Table> {
        let total: u64 = servers.iter().map(|s| s.weight as u64).sum();
        let n = servers.len();
        let parts = d.parts();
        // Server indices in the client's own order.
        let mut order: Vec<usize> = (0..n).collect();
        if parts.order == ServerOrder::TwemproxyName {
            let names: Vec<String> = servers
                .iter()
                .map(|s| point_name(Naming::ServerName, s))
                .collect();
            order.sort_by(|&a, &b| {
                (names[a].len(), names[a].as_bytes()).cmp(&(names[b].len(), names[b].as_bytes()))
            });
        } else if parts.order == ServerOrder::LibmemcachedSorted {
            order.sort_by(|&a, &b| {
                let key = |s: &ServerSpec| (s.addr.host().into_bytes(), s.addr.port());
                key(&servers[a]).cmp(&key(&servers[b]))
            });
        }
        let table = match parts.layout {
            Layout::Modulo { weighted } => {
                let repeats = order.iter().map(|&i| {
                    let s = &servers[i];
                    (i, if weighted { s.weight } else { 1 })
                });
                Modulo::new(parts.hash, repeats, MAX_TABLE_ENTRIES)
                    .map(Table::Modulo)
                    .map_err(|total| too_large(d, total, ""))?
            }
            Layout::First => Table::First,
            Layout::Rendezvous => Table::Rendezvous(Rendezvous::new(
                servers.iter().map(|s| host_port(&s.addr)).collect(),
            )),
            Layout::Continuum {
                points, collision, ..
            } => {
                let points = match points {
                    Points::LibmemcachedWeightedIfAnyAboveOne { hash } => {
                        if servers.iter().any(|s| s.weight > 1) {
                            Points::Md5(Md5Count::Float)
                        } else {
                            Points::PerName { count: 100, hash }
                        }
                    }
                    p => p,
                };
                let equal = servers.iter().all(|s| s.weight == servers[0].weight);
                let counts: Vec<u64> = servers
                    .iter()
                    .map(|s| match points {
                        Points::PerName { count, .. } => count as u64,
                        Points::Md5(Md5Count::Fixed(c)) => c as u64,
                        Points::Md5(Md5Count::EqualOrFloat) if equal => 160,
                        Points::Md5(Md5Count::Float | Md5Count::EqualOrFloat) => {
                            ketama::weighted_points(s.weight, total, n).into()
                        }
                        Points::Md5(Md5Count::Whalin) => {
                            let factor = ((40 * n as u64 * s.weight as u64) as f64 / total as f64)
                                .floor() as u64;
                            factor * 4
                        }
                        // `(int)(points × weight + 0.5)`, computed where it cannot overflow.
                        Points::Cmf { points } => (points as f64 * s.weight as f64 + 0.5) as u64,
                        Points::LibmemcachedWeightedIfAnyAboveOne { .. } => 0,
                    })
                    .collect();
                // Room for every point of the continuum, checked before any is made.
                let sum: u64 = counts.iter().sum();
                let mut pts = Vec::new();
                let what = if matches!(points, Points::Cmf { .. }) {
                    " and ketama points"
                } else {
                    ""
                };
                if sum > MAX_TABLE_ENTRIES as u64 || pts.try_reserve_exact(sum as usize).is_err() {
                    return Err(too_large(d, sum, what));
                }
                for &i in &order {
                    let (s, count) = (&servers[i], counts[i]);
                    let i = i as u32;
                    match points {
                        Points::Cmf { .. } => {
                            let (host, port) = cmf_host_port(s);
                            ketama::add_cmf_points(
                                &mut pts,
                                i,
                                host.as_bytes(),
                                port.as_bytes(),
                                count as u32,
                            );
                        }
                        Points::PerName { hash, .. } => {
                            let name = &names[i as usize];
                            ketama::add_single_points(
                                &mut pts,
                                i,
                                name.as_bytes(),
                                count as u32,
                                hash,
                            );
                        }
                        _ => {
                            let name = &names[i as usize];
                            ketama::add_md5_points(&mut pts, i, name.as_bytes(), count as u32);
                        }
                    }
                }
                Table::Ketama {
                    continuum: Continuum::build(pts, collision),
                    key_hash: parts.hash,
                }
            }
        };
        let empty = match &table {
            Table::Modulo(m) => m.len() == 0,
            Table::Ketama { continuum, .. } => continuum.len() == 0,
            Table::Rendezvous(_) | Table::First => false,
        };
        if empty {
            return Err(Error::Config(format!(
                "{d}: the server weights leave no server to place keys on"
            )));
        }
        Ok(table)
    }

    fn locate(&self, key: &[u8]) -> usize {
        match self {
            Table::Modulo(m) => m.locate(key),
            Table::Ketama {
                continuum,
                key_hash,
            } => continuum.find(key_hash.hash(key)),
            Table::Rendezvous(r) => r.locate_among(key, &|_| true).unwrap_or(0),
            Table::First => 0,
        }
    }
}

/// A table for the alive subset of the servers, and the map back to full-list indices.
#[derive(Debug)]
struct Ejected {
    alive: Vec<u64>,
    table: Table,
    index: Vec<usize>,
}

/// A built placement table for one server list. `Send + Sync`; lookups take `&self`.
#[derive(Debug)]
pub struct Router {
    distribution: Distribution,
    /// twemproxy's `hash_tag` of a `twemproxy:` setting: keys are placed by their tagged
    /// part ([`setting::hashed_part`]). Kept from `distribution` when the router is built,
    /// so that placing a key tests one `Option`, not the distribution's variant and its box.
    hash_tag: Option<[u8; 2]>,
    servers: Vec<ServerSpec>,
    /// Each server's [`point_names`], made once: the tables of live subsets reuse them.
    names: Vec<String>,
    table: Table,
    ejected: RwLock<Vec<Arc<Ejected>>>,
}

impl Clone for Router {
    fn clone(&self) -> Router {
        Router {
            distribution: self.distribution.clone(),
            hash_tag: self.hash_tag,
            servers: self.servers.clone(),
            names: self.names.clone(),
            table: self.table.clone(),
            ejected: RwLock::new(Vec::new()),
        }
    }
}

/// `libmemcached-ketama` and `libmemcached-ketama-spy` are libmemcached's unweighted
/// continuums: its servers added before `KETAMA` (or the distribution) is set. libmemcached
/// counts a weight above 1 when the servers are added after it (as pylibmc does, and a C
/// program that sets the behavior first), so under these profiles a weight above 1 would
/// place keys elsewhere than one of the two clients the name stands for: refused, naming
/// the settings that say which one is meant.
/// `pymemcache-rendezvous` and `rust-memcache` stand for clients that take no weights at
/// all: a weight above 1 there would be dropped unseen, so it is refused too (tester finding
/// retest31 6).
fn unweighted_profile_check(d: &Distribution, servers: &[ServerSpec]) -> Result<()> {
    let behavior = match d {
        Distribution::LibmemcachedKetama => "ketama=1",
        Distribution::LibmemcachedKetamaSpy => "distribution=consistent_ketama_spy",
        Distribution::PymemcacheRendezvous | Distribution::RustMemcache => {
            return match servers.iter().find(|s| s.weight > 1) {
                None => Ok(()),
                Some(s) => Err(Error::Config(format!(
                    "server {}: weight {} with distribution {d}, whose client takes no \
                     weights (every server counts once): give every server weight 1, or \
                     place keys by a weighted profile",
                    s.addr, s.weight
                ))),
            };
        }
        _ => return Ok(()),
    };
    match servers.iter().find(|s| s.weight > 1) {
        None => Ok(()),
        Some(s) => Err(Error::Config(format!(
            "server {}: weight {} with distribution {d}, libmemcached's unweighted continuum, \
             which ignores weights; libmemcached and pylibmc count them when the servers are \
             added after the behavior is set. Say which placement is meant: \
             \"pylibmc:{behavior}\" (pylibmc's behaviors, or libmemcached with the behavior \
             set before the servers: weights count) or \"libmemcached:{behavior}\" \
             (libmemcached with the servers added first: weights ignored), or give every \
             server weight 1",
            s.addr, s.weight
        ))),
    }
}

/// A server name (`host:port:name`, nutcracker's `host:port:weight name`) only twemproxy's
/// placements read (and proxy-pool, which places by order, takes a nutcracker list as it
/// is); under any other it would change nothing, so one there is most likely a mistyped
/// weight (`host:port:2x`, which pylibmc refuses): the server would get weight 1 and keys
/// would move (tester finding addresses 2). Refused, naming the entry.
fn server_name_check(d: &Distribution, servers: &[ServerSpec]) -> Result<()> {
    match servers.iter().find(|s| s.name.is_some()) {
        Some(s) if !d.reads_server_names() => Err(Error::Config(format!(
            "server {}: {:?} is read as a server name, which only twemproxy's placements use \
             ({d} does not): a weight is digits only (host:port:2); drop the name, or place \
             keys by twemproxy-ketama",
            s.addr,
            s.name.as_deref().unwrap_or_default()
        ))),
        _ => Ok(()),
    }
}

impl Router {
    /// Builds the table for `servers` under `distribution`.
    pub fn new(distribution: &Distribution, servers: &[ServerSpec]) -> Result<Router> {
        if servers.is_empty() {
            return Err(Error::Config("no servers".into()));
        }
        if servers.len() > u32::MAX as usize / 2 {
            return Err(Error::Config("too many servers".into()));
        }
        unweighted_profile_check(distribution, servers)?;
        server_name_check(distribution, servers)?;
        let names = point_names(distribution, servers);
        Ok(Router {
            distribution: distribution.clone(),
            hash_tag: match distribution {
                Distribution::Setting(s) => s.hash_tag(),
                _ => None,
            },
            servers: servers.to_vec(),
            table: Table::build(distribution, servers, &names)?,
            names,
            ejected: RwLock::new(Vec::new()),
        })
    }

    /// The profile this router places keys by.
    pub fn distribution(&self) -> &Distribution {
        &self.distribution
    }

    /// The server list, in the order indices refer to.
    pub fn servers(&self) -> &[ServerSpec] {
        &self.servers
    }

    /// How many servers the table places keys on.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// True when there are no servers (never, for a built router).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The index (into the server list) of the server `key` lives on.
    pub fn locate(&self, key: &[u8]) -> usize {
        self.table.locate(self.hashed_part(key))
    }

    /// The part of `key` placement hashes: all of it, or under twemproxy's `hash_tag` its
    /// tagged part.
    #[inline]
    fn hashed_part<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        match self.hash_tag {
            Some(tag) => setting::hashed_part(key, tag),
            None => key,
        }
    }

    /// Whether under `policy` a dead server can change where the keys of live servers go:
    /// `eject` (and `rehash` for a profile whose client has no failover rule of its own)
    /// places every key by the table built without the dead servers, as libmemcached's
    /// `REMOVE_FAILED_SERVERS` and twemproxy's `auto_eject_hosts` do. While any server is
    /// dead, every key must then be placed by [`Router::locate_alive`], not only the keys
    /// of the dead servers.
    pub fn ejects(&self, policy: FailoverPolicy) -> bool {
        self.distribution != Distribution::ProxyPool
            && self.distribution.failover_moves_keys()
            && match policy {
                FailoverPolicy::FailFast => false,
                FailoverPolicy::Rehash => !self.distribution.has_legacy_rehash(),
                FailoverPolicy::Eject => true,
            }
    }

    /// Like `locate`, but applies `policy` when `alive` says a server is dead (under
    /// [`Router::ejects`], any server, not only the key's).
    /// `None` means the key has no server to go to (fail-fast, or no live server found).
    pub fn locate_alive(
        &self,
        key: &[u8],
        policy: FailoverPolicy,
        alive: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        if self.distribution == Distribution::ProxyPool {
            return proxy_pool::first_alive(self.len(), alive);
        }
        let key = self.hashed_part(key);
        match policy {
            FailoverPolicy::Rehash | FailoverPolicy::Eject
                if !self.distribution.failover_moves_keys() =>
            {
                let i = self.table.locate(key);
                alive(i).then_some(i)
            }
            FailoverPolicy::FailFast => {
                let i = self.table.locate(key);
                alive(i).then_some(i)
            }
            FailoverPolicy::Rehash if self.distribution.has_legacy_rehash() => {
                let i = self.table.locate(key);
                if alive(i) {
                    return Some(i);
                }
                if !(0..self.len()).any(alive) {
                    return None;
                }
                self.legacy_rehash(key, alive)
            }
            FailoverPolicy::Rehash | FailoverPolicy::Eject => self.locate_ejected(key, alive),
        }
    }

    fn legacy_rehash(&self, key: &[u8], alive: &dyn Fn(usize) -> bool) -> Option<usize> {
        let rule = self.distribution.rehash_rule();
        match (rule, &self.table) {
            (Some(RehashRule::CacheMemcached), Table::Modulo(m)) => {
                m.rehash_cache_memcached(key, alive)
            }
            (Some(RehashRule::PythonMemcached), Table::Modulo(m)) => {
                m.rehash_python_memcached(key, alive)
            }
            (Some(RehashRule::Whalin), Table::Modulo(m)) => {
                m.rehash_whalin(key, alive, WHALIN_REHASH_LIMIT)
            }
            (Some(RehashRule::Whalin), Table::Ketama { continuum, .. }) => {
                let mut buf = [0u8; 20];
                (0..WHALIN_REHASH_LIMIT)
                    .map(|n| continuum.find(hash::md5_hash(hash::decimal(n, &mut buf), key)))
                    .find(|&s| alive(s))
            }
            (Some(RehashRule::Spymemcached), _) => {
                let mut found = None;
                self.spymemcached_sequence(key, &mut |s| {
                    let ok = alive(s);
                    if ok {
                        found = Some(s);
                    }
                    !ok
                });
                found
            }
            _ => self.locate_ejected(key, alive),
        }
    }

    /// spymemcached's `NodeLocator.getSequence(key)`: calls `next` with each server of the
    /// sequence in order while it returns true. `ArrayModNodeLocator`: the servers after the
    /// primary, wrapping, the primary last left out. `KetamaNodeLocator`: `KetamaIterator`
    /// with 7 tries: the node of the hash (the primary first), then of the hash plus
    /// `hash("<n>" + key)` for n = 0, 1, ..., 5, added in 32 bits.
    fn spymemcached_sequence(&self, key: &[u8], next: &mut dyn FnMut(usize) -> bool) {
        match &self.table {
            Table::Modulo(m) => {
                let n = m.len();
                let start = m.bucket_of(key);
                for step in 1..n {
                    if !next(m.server_at((start + step) % n)) {
                        return;
                    }
                }
            }
            Table::Ketama {
                continuum,
                key_hash,
            } => {
                let mut h = key_hash.hash(key);
                let mut text = Vec::with_capacity(key.len() + 1);
                let mut buf = [0u8; 20];
                for tries in 0..SPYMEMCACHED_KETAMA_TRIES {
                    if !next(continuum.find(h)) {
                        return;
                    }
                    text.clear();
                    text.extend_from_slice(hash::decimal(tries, &mut buf));
                    text.extend_from_slice(key);
                    h = h.wrapping_add(key_hash.hash(&text));
                }
            }
            Table::Rendezvous(_) | Table::First => {}
        }
    }

    /// Placement as if the dead servers were not configured. Tables are cached per dead set.
    fn locate_ejected(&self, key: &[u8], alive: &dyn Fn(usize) -> bool) -> Option<usize> {
        let n = self.len();
        // The live set as a bit mask, on the stack for up to 256 servers.
        let mut small = [0u64; 4];
        let mut large = Vec::new();
        let mask: &mut [u64] = if n <= 256 {
            &mut small[..n.div_ceil(64)]
        } else {
            large.resize(n.div_ceil(64), 0);
            &mut large
        };
        let mut live = 0;
        for i in 0..n {
            if alive(i) {
                mask[i / 64] |= 1 << (i % 64);
                live += 1;
            }
        }
        if live == n {
            return Some(self.locate(key));
        }
        if live == 0 {
            return None;
        }
        let cached = {
            let cache = self.ejected.read().unwrap_or_else(|e| e.into_inner());
            cache.iter().find(|e| e.alive[..] == *mask).cloned()
        };
        let ejected = match cached {
            Some(e) => e,
            None => {
                let index: Vec<usize> = (0..n)
                    .filter(|&i| mask[i / 64] >> (i % 64) & 1 == 1)
                    .collect();
                let subset: Vec<ServerSpec> =
                    index.iter().map(|&i| self.servers[i].clone()).collect();
                // (no names without a continuum)
                let names: Vec<String> = index
                    .iter()
                    .filter_map(|&i| self.names.get(i).cloned())
                    .collect();
                let table = Table::build(&self.distribution, &subset, &names).ok()?;
                let e = Arc::new(Ejected {
                    alive: mask.to_vec(),
                    table,
                    index,
                });
                let mut cache = self.ejected.write().unwrap_or_else(|e| e.into_inner());
                if cache.len() >= EJECT_CACHE {
                    cache.remove(0);
                }
                cache.push(e.clone());
                e
            }
        };
        Some(ejected.index[ejected.table.locate(key)])
    }
}

#[cfg(test)]
mod tests;
