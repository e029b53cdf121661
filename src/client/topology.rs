//! The topology: the servers of the client and the placement ring over them, as one
//! immutable snapshot. The client holds the current one in a cell that is cheap to load;
//! every call loads it once at its start and keeps it to its end, so a server index (which
//! means something only within one snapshot) never meets another snapshot's list.

use super::Client;
use crate::address::{ServerAddr, ServerSpec};
use crate::error::{Error, Result};
use crate::route::Router;
use crate::server::Server;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The servers (in configuration order) and the ring that places keys on them.
pub(crate) struct Topology {
    /// Shared between snapshots: a server still present after a change keeps its object
    /// (its pool, connections, health and counters).
    pub servers: Vec<Arc<Server>>,
    /// Key → index into `servers`.
    pub router: Router,
}

/// What the client builds a new server with.
pub(crate) struct Building {
    pub settings: crate::server::PoolSettings,
    pub opts: crate::conn::ConnOptions,
    /// The addresses of servers dropped by `set_servers` while away (marked dead, their
    /// `on_server_return` clean-up not yet run): one added back is returning (see `stale`).
    pub departed_away: HashSet<ServerAddr>,
}

impl Building {
    pub(crate) fn server(&self, spec: &ServerSpec, dialect: &crate::dialect::Dialect) -> Server {
        Server::new(spec, &self.settings, &self.opts, dialect)
    }
}

impl Client {
    /// Closes the client's connections, as Cache::Memcached::Fast's and python-memcached's
    /// `disconnect_all`: idle ones now, those in use when their call gives them back; the
    /// next call to a server opens a new one. Nothing else changes: the servers' health (a
    /// server marked dead stays so until its retry), their metrics and the server list. No
    /// I/O (with `test_on_check_out` on, the pool checks each idle connection it hands over:
    /// one `version` round trip each); may be called from any thread while other threads use
    /// the client.
    pub fn disconnect_all(&self) {
        for server in self.topology().servers.iter() {
            server.disconnect();
        }
    }

    /// Replaces the server list (weight 1 each), as [`ClientBuilder::servers`] takes it:
    /// `host:port`, `[v6]:port` or a unix socket path. See [`Client::set_server_specs`].
    ///
    /// [`ClientBuilder::servers`]: crate::ClientBuilder::servers
    #[doc(alias = "setServers")]
    pub fn set_servers<S: AsRef<str>>(&self, servers: impl IntoIterator<Item = S>) -> Result<()> {
        self.set_servers_weighted(servers.into_iter().map(|s| (s, 1)))
    }

    /// Replaces the server list with `(address, weight)` pairs, as
    /// [`ClientBuilder::server_weighted`] takes them. See [`Client::set_server_specs`].
    ///
    /// [`ClientBuilder::server_weighted`]: crate::ClientBuilder::server_weighted
    #[doc(alias = "setWeights")]
    pub fn set_servers_weighted<S: AsRef<str>>(
        &self,
        servers: impl IntoIterator<Item = (S, u32)>,
    ) -> Result<()> {
        let specs = servers
            .into_iter()
            .map(|(s, weight)| {
                let s = s.as_ref();
                ServerSpec::parse_with_weight(s, weight).map_err(|e| match e {
                    Error::Config(m) => Error::Config(format!("set_servers: {m}")),
                    e => e,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.set_server_specs(specs)
    }

    /// Replaces the server list at run time, atomically: the placement ring is rebuilt for
    /// the new list by the client's distribution (and failover policy), and swapped in whole.
    /// A call already running finishes on the list it started with; calls that start after
    /// this returns use the new one. A server still present (same address) keeps its pool,
    /// its open connections, its health and its counters; a removed server's connections
    /// close once the last call using it has given them back. A bad list (empty, a weight of
    /// 0, or one the distribution refuses) is an [`Error::Config`] naming the entry, and the
    /// current list stays. [`Client::config`] keeps the list the client was built with;
    /// [`Client::server_labels`] shows the current one. Changes are applied one at a time.
    ///
    /// With `on_server_return` other than `keep` (and failover other than `fail-fast`), a
    /// server dropped while marked dead and not yet cleaned is remembered by its address:
    /// added back later, it is a returning server and is flushed before it serves (its copies
    /// of the keys written meanwhile are old; which keys were written while it was out of
    /// the list is not known, so `delete-written` flushes too). A server dropped while
    /// healthy comes back as it is.
    pub fn set_server_specs(&self, specs: Vec<ServerSpec>) -> Result<()> {
        if specs.is_empty() {
            return Err(Error::Config("set_servers: no servers given".into()));
        }
        if let Some(s) = specs.iter().find(|s| s.weight == 0) {
            return Err(Error::Config(format!(
                "set_servers: server {}: weight must be at least 1",
                s.addr
            )));
        }
        let router = Router::new(&self.inner.config.distribution, &specs).map_err(|e| match e {
            Error::Config(m) => Error::Config(format!("set_servers: {m}")),
            e => e,
        })?;
        let mut building = self
            .inner
            .building
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let old = self.topology();
        // Servers kept: by address, each old object used once.
        let mut kept: HashMap<&ServerAddr, Vec<&Arc<Server>>> = HashMap::new();
        for (spec, server) in old.router.servers().iter().zip(&old.servers).rev() {
            kept.entry(&spec.addr).or_default().push(server);
        }
        let servers: Vec<Arc<Server>> = specs
            .iter()
            .map(|spec| match kept.get_mut(&spec.addr).and_then(Vec::pop) {
                Some(server) => server.clone(),
                None => {
                    let server = building.server(spec, &self.inner.dialect);
                    if building.departed_away.contains(&spec.addr) {
                        if let Some(away) = &server.away {
                            away.left_while_away();
                        }
                    }
                    Arc::new(server)
                }
            })
            .collect();
        // The servers dropped now while away are remembered; the ones back are forgotten.
        for (spec, list) in &kept {
            if list
                .iter()
                .any(|s| s.away.as_ref().is_some_and(|a| a.is_away()))
            {
                building.departed_away.insert((*spec).clone());
            }
        }
        drop(kept);
        for spec in &specs {
            building.departed_away.remove(&spec.addr);
        }
        self.inner
            .topology
            .store(Arc::new(Topology { servers, router }));
        drop(old);
        Ok(())
    }
}
