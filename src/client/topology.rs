//! The topology: the servers of the client and the placement ring over them, as one
//! immutable snapshot. The client holds the current one in a cell that is cheap to load;
//! every call loads it once at its start and keeps it to its end, so a server index (which
//! means something only within one snapshot) never meets another snapshot's list.

use super::Client;
use crate::address::{ServerAddr, ServerSpec};
use crate::error::{Error, Result};
use crate::resolve::Resolve;
use crate::route::Router;
use crate::server::Server;
use std::collections::HashMap;
use std::sync::Arc;

/// The servers (in configuration order) and the ring that places keys on them.
pub(crate) struct Topology {
    /// Shared between snapshots: a server still present after a change keeps its object
    /// (its pool, connections, health and counters).
    pub servers: Vec<Arc<Server>>,
    /// Key → index into `servers`.
    pub router: Router,
    /// The indices of `servers` in the one order every call that holds connections to
    /// several servers at once takes them in (a multi-key read or batch): by the servers'
    /// objects, which a server keeps across `set_servers`, not by their place in the list.
    /// Calls on the list before a reordering and calls on the list after it would otherwise
    /// each hold one server's connection while waiting for the other's (with the pool full,
    /// every such call waited `pool_timeout` and failed; tester finding csafe 1).
    pub acquire_order: Vec<usize>,
}

impl Topology {
    /// The servers and their router, with [`Topology::acquire_order`] made.
    pub(crate) fn new(servers: Vec<Arc<Server>>, router: Router) -> Topology {
        let mut acquire_order: Vec<usize> = (0..servers.len()).collect();
        acquire_order.sort_unstable_by_key(|&i| Arc::as_ptr(&servers[i]) as usize);
        Topology {
            servers,
            router,
            acquire_order,
        }
    }

    /// Server `idx`'s place in [`Topology::acquire_order`], as a key to sort by.
    pub(crate) fn acquire_key(&self, idx: usize) -> usize {
        Arc::as_ptr(&self.servers[idx]) as usize
    }
}

/// What the client builds a new server with.
pub(crate) struct Building {
    pub settings: crate::server::PoolSettings,
    pub opts: crate::conn::ConnOptions,
    /// The addresses of servers dropped by `set_servers` while away (marked dead, their
    /// `on_server_return` clean-up not yet run), with where they were: one added back,
    /// under the same spelling or another one for the same place, is returning (see
    /// `stale`).
    pub departed_away: HashMap<ServerAddr, Place>,
    /// [`Client::close`] ran: the server list no longer changes.
    pub closed: bool,
}

/// Where a server is, beyond its spelling: the socket addresses its name resolved to, or its
/// unix socket's path made canonical. Two spellings of one memcached (`localhost:11211`,
/// `127.0.0.1:11211`) share a place.
#[derive(Debug, Default)]
pub(crate) struct Place {
    net: Vec<std::net::SocketAddr>,
    path: Option<std::path::PathBuf>,
}

impl Place {
    /// Where `server` (at `addr`) is, as known now or after a resolution of up to `timeout`
    /// when `resolve` (never waiting otherwise).
    fn of(server: &Server, addr: &ServerAddr, resolve: Option<std::time::Duration>) -> Place {
        match (addr, resolve) {
            (ServerAddr::Tcp { .. }, Some(timeout)) => Place {
                net: server.resolved_addrs(timeout),
                path: None,
            },
            _ => Place::known(server.resolve()),
        }
    }

    /// Where the entry whose address is `r` is, as known now (never resolving).
    fn known(r: &Resolve) -> Place {
        match r.addr() {
            ServerAddr::Unix(path) => Place {
                net: Vec::new(),
                path: std::fs::canonicalize(path).ok(),
            },
            ServerAddr::Tcp { .. } => Place {
                net: r.addrs_answered().map(|a| a.to_vec()).unwrap_or_default(),
                path: None,
            },
        }
    }

    /// True when both are known and share an address (an IPv4-mapped IPv6 address is its
    /// IPv4 one: `[::ffff:127.0.0.1]` is `127.0.0.1`).
    fn meets(&self, other: &Place) -> bool {
        let plain = |a: &std::net::SocketAddr| (a.ip().to_canonical(), a.port());
        self.net
            .iter()
            .any(|a| other.net.iter().any(|b| plain(a) == plain(b)))
            || self
                .path
                .as_ref()
                .is_some_and(|p| other.path.as_ref() == Some(p))
    }
}

/// Gives each server of the list (with a clean-up guard) the list's addresses and its own
/// place in it, for its return to ask whether another entry is the same memcached
/// ([`Siblings::shared_now`]).
pub(crate) fn mark_shared(servers: &[Arc<Server>]) {
    let list: Arc<[Arc<Resolve>]> = servers.iter().map(|s| s.resolve().clone()).collect();
    for (index, server) in servers.iter().enumerate() {
        if let Some(away) = &server.away {
            away.set_siblings(Siblings {
                list: list.clone(),
                index,
            });
        }
    }
}

/// The addresses of the client's list, and one entry's place in it.
#[derive(Debug)]
pub(crate) struct Siblings {
    list: Arc<[Arc<Resolve>]>,
    index: usize,
}

impl Siblings {
    /// Whether another entry of the list is this entry's memcached, as known now: spelled
    /// the same, or known at a shared place (names as their connections resolved them;
    /// never resolving here). Its return then flushes under `delete-written`: the keys
    /// written elsewhere while the other entry was away are that entry's list, not this
    /// one's (tester finding retest41a 1). Asked at the return, not when the list is built,
    /// when names are not resolved yet (tester finding retest42 1: `localhost:B` and
    /// `127.0.0.1:B` in one list, each entry's return left the other's keys older).
    pub(crate) fn shared_now(&self) -> bool {
        let me = &self.list[self.index];
        let mine = Place::known(me);
        self.list.iter().enumerate().any(|(j, other)| {
            j != self.index && (other.addr() == me.addr() || Place::known(other).meets(&mine))
        })
    }
}

impl Building {
    pub(crate) fn server(&self, spec: &ServerSpec, dialect: &crate::dialect::Dialect) -> Server {
        Server::new(spec, &self.settings, &self.opts, dialect)
    }

    /// Whether the new `server` at `addr` is one dropped while away coming back: the same
    /// spelling, or (only when some server was dropped so) another one for the same place,
    /// its name resolved now for the comparison (up to `connect_timeout`). The match is
    /// forgotten: it is returning once.
    fn returning(&mut self, server: &Server, addr: &ServerAddr, kept_away: &[Place]) -> bool {
        if self.departed_away.remove(addr).is_some() {
            return true;
        }
        if self.departed_away.is_empty() && kept_away.is_empty() {
            return false;
        }
        let here = Place::of(server, addr, Some(self.opts.connect_timeout));
        // Another entry for a server of the list that is away (`[A, B, A]` while A is
        // dead): the same memcached, with the same old copies.
        if kept_away.iter().any(|p| p.meets(&here)) {
            return true;
        }
        let same = self
            .departed_away
            .iter()
            .find(|(_, there)| there.meets(&here))
            .map(|(a, _)| a.clone());
        same.is_some_and(|a| self.departed_away.remove(&a).is_some())
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

    /// Closes the client, for an application shutting down while other threads may still
    /// be using it: calls waiting for a pooled connection end at once with
    /// [`Error::Closed`], as does every call made afterwards (before anything is sent); no
    /// new connection is opened; the idle connections close now, those in use when their
    /// call gives them back (a call already talking to a server finishes, or times out, as
    /// before). [`Client::set_servers`] is refused from now on. Idempotent; the memory goes
    /// with the last clone of the client, as before. No I/O.
    pub fn close(&self) {
        let mut building = self
            .inner
            .building
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        building.closed = true;
        for server in self.topology().servers.iter() {
            server.close();
        }
    }

    /// True once [`Client::close`] ran on this client (or a clone of it).
    pub fn is_closed(&self) -> bool {
        self.inner
            .building
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .closed
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
    /// this returns use the new one. A server still present (same address, its port written
    /// the same way: `027431` and `27431` are two names, see [`ServerSpec::port_text`]) keeps its pool,
    /// its open connections, its health and its counters; a removed server's connections
    /// close once the last call using it has given them back. A bad list (empty, a weight of
    /// 0, or one the distribution refuses) is an [`Error::Config`] naming the entry, and the
    /// current list stays. [`Client::config`] keeps the list the client was built with;
    /// [`Client::server_labels`] shows the current one. Changes are applied one at a time.
    ///
    /// With `on_server_return` other than `keep` (and failover other than `fail-fast`), a
    /// server dropped while marked dead and not yet cleaned is remembered by its address:
    /// added back later, under that spelling or another one for the same place (a name that
    /// resolves to one of its addresses, resolved then; the same unix socket path), it is a
    /// returning server and is flushed before it serves (its copies
    /// of the keys written meanwhile are old; which keys were written while it was out of
    /// the list is not known, so `delete-written` flushes too). A server dropped while
    /// healthy comes back as it is.
    ///
    /// Under a failover that ejects (`eject`, and `rehash` where it ejects), each server
    /// added is tried first (a connect within `connect_timeout` and a `version` round trip
    /// within `io_timeout`, up to 16 at once): one that cannot be reached or does not answer
    /// joins marked dead and out of the ring (an `on_event` `ServerDown`), so that no key of
    /// a live server moves for it (docs/topology.md). This call may then take about
    /// `connect_timeout` + `io_timeout`.
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
        if building.closed {
            return Err(Error::Closed);
        }
        let old = self.topology();
        // Servers kept: by address and the port as written (a port respelt, `027431` for
        // `27431`, is another name on some rings and another label: a new object, whose label
        // says what places its keys), each old object used once.
        let mut kept: HashMap<(&ServerAddr, &Option<String>), Vec<&Arc<Server>>> = HashMap::new();
        for (spec, server) in old.router.servers().iter().zip(&old.servers).rev() {
            kept.entry((&spec.addr, &spec.port_text))
                .or_default()
                .push(server);
        }
        let found: Vec<Option<Arc<Server>>> = specs
            .iter()
            .map(|spec| {
                kept.get_mut(&(&spec.addr, &spec.port_text))
                    .and_then(Vec::pop)
                    .cloned()
            })
            .collect();
        // The servers dropped now while away are remembered (before the new ones are made:
        // one may be the same place under another spelling); the ones back are forgotten.
        for ((addr, _), list) in &kept {
            if let Some(server) = list
                .iter()
                .find(|s| s.away.as_ref().is_some_and(|a| a.is_away()))
            {
                let place = Place::of(server, addr, None);
                building.departed_away.insert((*addr).clone(), place);
            }
        }
        // Where the servers kept and away are: a new entry for one of them is returning.
        let kept_away: Vec<Place> = specs
            .iter()
            .zip(&found)
            .filter_map(|(spec, f)| f.as_ref().map(|s| (spec, s)))
            .filter(|(_, s)| s.away.as_ref().is_some_and(|a| a.is_away()))
            .map(|(spec, s)| Place::of(s, &spec.addr, None))
            .collect();
        let mut added: Vec<Arc<Server>> = Vec::new();
        let servers: Vec<Arc<Server>> = specs
            .iter()
            .zip(found)
            .map(|(spec, found)| match found {
                Some(server) => server,
                None => {
                    let server = building.server(spec, &self.inner.dialect);
                    if building.returning(&server, &spec.addr, &kept_away) {
                        if let Some(away) = &server.away {
                            away.left_while_away();
                        }
                    }
                    let server = Arc::new(server);
                    added.push(server.clone());
                    server
                }
            })
            .collect();
        drop(kept);
        for spec in &specs {
            building.departed_away.remove(&spec.addr);
        }
        mark_shared(&servers);
        let events = if router.ejects(self.inner.config.failover) {
            probe_added(&added, self.inner.config.eject_after)
        } else {
            Vec::new()
        };
        self.inner
            .topology
            .store(Arc::new(Topology::new(servers, router)));
        drop(old);
        // The handler may call the client (`set_servers` too): the lock goes first.
        drop(building);
        for (server, event) in added.iter().zip(events) {
            server.emit(event);
        }
        Ok(())
    }
}

/// Tries each server `set_servers` adds under a failover that ejects, up to
/// [`PROBES_AT_ONCE`] at the same time (`set_servers` takes at most about one
/// `connect_timeout` + `io_timeout` per that many added servers): one that cannot be
/// reached or does not answer joins marked dead and out of the ring (see
/// `Server::probe_added`). The events to report, in the order of `added`.
fn probe_added(added: &[Arc<Server>], eject_after: u32) -> Vec<Option<crate::metrics::Event>> {
    if let [one] = added {
        return vec![one.probe_added(eject_after)];
    }
    let mut events = Vec::with_capacity(added.len());
    for group in added.chunks(PROBES_AT_ONCE) {
        std::thread::scope(|scope| {
            let probes: Vec<_> = group
                .iter()
                .map(|s| {
                    std::thread::Builder::new()
                        .name("mcpool-probe".into())
                        .spawn_scoped(scope, move || s.probe_added(eject_after))
                        .map_err(|_| s)
                })
                .collect();
            for probe in probes {
                events.push(match probe {
                    // (a probe that panicked reports nothing: the server joins as it is)
                    Ok(thread) => thread.join().ok().flatten(),
                    // no thread to be had: tried here
                    Err(s) => s.probe_added(eject_after),
                });
            }
        });
    }
    events
}

/// The most servers added by one `set_servers` that are tried at the same time.
const PROBES_AT_ONCE: usize = 16;
