//! Key placement: which server of the list a key lives on.
//!
//! Pure functions of (profile, server list, key): no I/O, no clock. Each profile is named
//! after the client it agrees with key for key (see `docs/placement.md`).

use crate::address::ServerSpec;
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// A placement profile: hash function × distribution × server naming, named after the
/// client library it agrees with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Distribution {
    /// Perl Cache::Memcached: `(crc32(key) >> 16) & 0x7fff` modulo a weighted bucket list.
    CacheMemcached,
}

/// What to do when a key's server is dead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FailoverPolicy {
    /// The key gets an error; no two clients ever disagree about where a key lives.
    #[default]
    FailFast,
    /// The profile's own legacy rehash formula picks another server.
    Rehash,
    /// Placement is computed as if dead servers were not in the list.
    Eject,
}

impl Distribution {
    /// The profile's name, as accepted by `FromStr` and the CLI.
    pub fn name(&self) -> &'static str {
        match self {
            Distribution::CacheMemcached => "cache-memcached",
        }
    }

    /// Whether the client it imitates URL-encodes keys by default (the Whalin profiles).
    pub fn sanitizes_keys_by_default(&self) -> bool {
        false
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Distribution {
    type Err = Error;
    fn from_str(s: &str) -> Result<Distribution> {
        match s {
            "cache-memcached" => Ok(Distribution::CacheMemcached),
            _ => Err(Error::Config(format!("unknown distribution {s:?}"))),
        }
    }
}

impl FromStr for FailoverPolicy {
    type Err = Error;
    fn from_str(s: &str) -> Result<FailoverPolicy> {
        match s {
            "fail-fast" => Ok(FailoverPolicy::FailFast),
            "rehash" => Ok(FailoverPolicy::Rehash),
            "eject" => Ok(FailoverPolicy::Eject),
            _ => Err(Error::Config(format!(
                "unknown failover policy {s:?} (fail-fast, rehash, eject)"
            ))),
        }
    }
}

/// A built placement table for one server list.
#[derive(Clone, Debug)]
pub struct Router {
    buckets: Vec<usize>,
    servers: usize,
}

impl Router {
    /// Builds the table for `servers` under `distribution`.
    pub fn new(distribution: &Distribution, servers: &[ServerSpec]) -> Result<Router> {
        if servers.is_empty() {
            return Err(Error::Config("no servers".into()));
        }
        let Distribution::CacheMemcached = distribution;
        let mut buckets = Vec::new();
        for (i, s) in servers.iter().enumerate() {
            for _ in 0..s.weight.max(1) {
                buckets.push(i);
            }
        }
        Ok(Router {
            buckets,
            servers: servers.len(),
        })
    }

    /// How many servers the table places keys on.
    pub fn len(&self) -> usize {
        self.servers
    }

    /// True when there are no servers (never, for a built router).
    pub fn is_empty(&self) -> bool {
        self.servers == 0
    }

    /// The index (into the server list) of the server `key` lives on.
    pub fn locate(&self, key: &[u8]) -> usize {
        if self.servers == 1 {
            return 0;
        }
        let h = (crc32fast::hash(key) >> 16) & 0x7fff;
        self.buckets[h as usize % self.buckets.len()]
    }

    /// Like `locate`, but applies `policy` when `alive` says the key's server is dead.
    /// `None` means the key has no server to go to (fail-fast, or every server dead).
    pub fn locate_alive(
        &self,
        key: &[u8],
        policy: FailoverPolicy,
        alive: &dyn Fn(usize) -> bool,
    ) -> Option<usize> {
        let i = self.locate(key);
        if alive(i) {
            return Some(i);
        }
        match policy {
            FailoverPolicy::FailFast => None,
            FailoverPolicy::Rehash | FailoverPolicy::Eject => {
                (0..self.servers).map(|d| (i + d) % self.servers).find(|&j| alive(j))
            }
        }
    }
}
