//! The client: the handle users hold, built from a configuration. What it does is split by
//! concept: `commands` (the single-key and whole-server commands), `read` (the read engine:
//! every get, one key or many, into a sink), `batch` (stores and deletes pipelined per
//! server), `place` (key → server, failover, proxy-pool) and `exchange` (a checked-out
//! connection, one request through the dialect, the connection given back), and `typed`
//! (the typed-value calls: the value format on top of the byte-level ones). Keys are
//! prepared by `key::KeyRules`, values delivered by `sink`.

mod batch;
mod commands;
mod exchange;
mod meta_ext;
pub(crate) mod observe;
mod place;
mod read;
pub(crate) mod topology;
mod typed;

pub(crate) use topology::Topology;

use crate::config::{ClientBuilder, Config};
use crate::conn::ConnOptions;
use crate::dialect::Dialect;
use crate::error::{Error, Result};
use crate::health::ServerState;
use crate::key::KeyRules;
use crate::metrics::{Counters, ServerMetrics, ServerReport};
use crate::route::{Distribution, Router};
use crate::server::PoolSettings;
use arc_swap::ArcSwap;
use std::borrow::Cow;
use std::sync::Arc;

/// A thread-safe, pooled memcached client. Cheap to clone (clones share the pools).
///
/// ```no_run
/// let client = mcpool::Client::builder()
///     .server("127.0.0.1:11211")
///     .max_size(8)
///     .build()?;
/// client.set("greeting", b"hello", 0)?;
/// assert_eq!(client.get("greeting")?.as_deref(), Some(&b"hello"[..]));
/// # Ok::<(), mcpool::Error>(())
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    /// The servers and their placement ring: one immutable snapshot, replaced whole. Each
    /// call loads it once at its start and uses it throughout (server indexes mean
    /// something only within one snapshot), so a call in flight finishes on its ring.
    topology: ArcSwap<Topology>,
    /// What a new server is built with (`Client::set_servers`), and the lock that makes
    /// changes of the server list one at a time.
    building: std::sync::Mutex<topology::Building>,
    /// The dialect of the configured protocol.
    dialect: Dialect,
    /// Prefix, sanitizing and the protocol's key checks.
    keys: KeyRules,
    /// Bytes of the wire key that placement skips: the prefix, for the profiles whose client
    /// hashes keys without their namespace.
    hash_skip: usize,
    /// `proxy-pool`: every key to the first healthy proxy, failing over to the next
    /// (`route::proxy_pool`); sanitizing then keeps `/` (routing prefixes).
    proxy_pool: bool,
    /// Calls of the `on_operation` handler that panicked (caught: see
    /// [`Client::operation_handler_panics`]).
    handler_panics: std::sync::atomic::AtomicU64,
    /// The configured compression switched off (`[0]`) and on (`[1]`), made once, for
    /// [`Client::set_compression`]: a store reads one of the three, never builds one.
    compression_switched: [crate::value::Compression; 2],
    /// [`Client::set_compression`]'s switch: 0 as configured, 1 off, 2 on.
    compression_switch: std::sync::atomic::AtomicU8,
}

/// One result per server, labelled `host:port`.
pub type PerServer<T> = Vec<(String, Result<T>)>;

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("servers", &self.server_labels())
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Builds the client. Does not wait for any server: connections open in the background
    /// (`min_idle`) or on first use.
    pub fn build(self) -> Result<Client> {
        Client::from_config(self.into_config()?)
    }
}

impl Client {
    /// A builder with every default; add servers and options, then `build()`.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::new()
    }

    /// A client for `servers` (`host:port`, `[v6]:port` or unix socket paths) with every default.
    pub fn new<S: AsRef<str>>(servers: impl IntoIterator<Item = S>) -> Result<Client> {
        ClientBuilder::new().servers(servers).build()
    }

    /// Builds a client from a checked configuration.
    pub fn from_config(mut config: Config) -> Result<Client> {
        // Compression left to the value format's default is settled here, the one place
        // every client is built, so a hand-made `Config` compresses as a built one (tester
        // finding rustteam2 1: under pymemcache it compressed, and pymemcache read zlib bytes).
        let format_default = config.values.format.compresses_by_default();
        config.compression.enabled.get_or_insert(format_default);
        if config.servers.is_empty() {
            return Err(Error::Config("no servers given".into()));
        }
        config.check_limits()?;
        let twemproxy = matches!(&config.distribution, Distribution::TwemproxyKetama)
            || matches!(&config.distribution, Distribution::Setting(s)
                if s.client() == crate::route::setting::Client::Twemproxy);
        if twemproxy && config.hash_key_prefix == Some(false) && !config.key_prefix.is_empty() {
            // nutcracker hashes the key it receives, prefix included: such a client could
            // never place a key where nutcracker does (tester finding proxy 6: most keys on
            // another server, accepted without a word).
            return Err(Error::Config(format!(
                "hash_key_prefix=false with the {} placement: twemproxy hashes the whole key \
                 it receives, key_prefix included, so keys would not be placed where \
                 nutcracker places them (leave hash_key_prefix unset or true)",
                config.distribution.name()
            )));
        }
        if config.protocol == crate::proto::Protocol::Text && !config.key_prefix.is_empty() {
            // A prefix the text protocol cannot send would fail every key at its first call:
            // refused here, by the rule every text key is checked by (binary and meta send any
            // byte).
            if let Err(Error::InvalidKey { reason, .. }) = crate::key::validate(&config.key_prefix)
            {
                return Err(Error::Config(format!(
                    "key_prefix {}: {reason}, which the text protocol cannot send \
                     (the binary and meta protocols can)",
                    crate::key::quoted(&config.key_prefix)
                )));
            }
        }
        let router = Router::new(&config.distribution, &config.servers)?;
        let opts = ConnOptions {
            connect_timeout: config.connect_timeout,
            io_timeout: config.io_timeout,
            handler_allowance: config.io_timeout.saturating_add(config.pool_timeout),
            nodelay: config.nodelay,
            keepalive: config
                .tcp_keepalive
                .then_some(config.tcp_keepidle.unwrap_or_default()),
            resolver: config.resolver.clone(),
            resolve_interval: config.resolve_interval,
            // No value memcached sends is longer than its largest item.
            max_value: config
                .max_value_size
                .max(config.compression.max_decompressed)
                .min(crate::config::MAX_ITEM_SIZE),
            #[cfg(feature = "tls")]
            tls: match &config.tls {
                Some(o) => Some((crate::tls::build(o)?, o.clone())),
                None => None,
            },
        };
        #[cfg(not(feature = "tls"))]
        if config.tls.is_some() {
            return Err(crate::tls::not_built());
        }
        let settings = PoolSettings {
            max_size: config.max_size,
            min_idle: config.min_idle,
            pool_timeout: config.pool_timeout,
            idle_timeout: config.idle_timeout,
            max_lifetime: config.max_lifetime,
            test_on_check_out: config.test_on_check_out,
            failure_limit: config.failure_limit,
            failure_window: config.failure_window,
            io_timeout_marks_dead: config.io_timeout_marks_dead,
            retry_timeout: config.retry_timeout,
            retry_timeout_max: config.retry_timeout_max,
            ejected_rest: config
                .ejected_rest
                .filter(|_| router.ejects(config.failover))
                .map(|rest| (config.eject_after, rest)),
            events: config.events.clone(),
            on_return: (config.on_server_return != crate::stale::OnServerReturn::Keep
                && config.failover != crate::route::FailoverPolicy::FailFast)
                .then(|| {
                    crate::stale::ReturnPolicy::new(
                        config.on_server_return,
                        config.written_while_away_max,
                    )
                }),
        };
        let dialect = Dialect::new(config.protocol, config.sasl.clone());
        let building = topology::Building {
            settings,
            opts,
            departed_away: Default::default(),
            closed: false,
        };
        let servers: Vec<Arc<crate::server::Server>> = config
            .servers
            .iter()
            .map(|spec| Arc::new(building.server(spec, &dialect)))
            .collect();
        topology::mark_shared(&servers);
        let proxy_pool = config.distribution == Distribution::ProxyPool;
        let keys = KeyRules {
            prefix: config.key_prefix.clone(),
            sanitize: config
                .sanitize_keys
                .unwrap_or_else(|| config.distribution.sanitizes_keys_by_default()),
            keep_slash: proxy_pool,
            protocol: config.protocol,
            long_keys: config.long_keys,
        };
        Ok(Client {
            inner: Arc::new(Inner {
                dialect,
                keys,
                hash_skip: if config
                    .hash_key_prefix
                    .unwrap_or_else(|| config.distribution.hashes_namespace())
                {
                    0
                } else {
                    config.key_prefix.len()
                },
                proxy_pool,
                handler_panics: Default::default(),
                compression_switched: [false, true].map(|on| crate::value::Compression {
                    enabled: Some(on),
                    ..config.compression.clone()
                }),
                compression_switch: Default::default(),
                config,
                topology: ArcSwap::from_pointee(Topology::new(servers, router)),
                building: std::sync::Mutex::new(building),
            }),
        })
    }

    /// The current servers and ring, loaded once per call (see `Inner::topology`).
    #[inline]
    pub(crate) fn topology(&self) -> arc_swap::Guard<Arc<Topology>> {
        self.inner.topology.load()
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The servers' `host:port` labels, in configuration order.
    pub fn server_labels(&self) -> Vec<String> {
        self.topology()
            .servers
            .iter()
            .map(|s| s.label.to_string())
            .collect()
    }

    /// Health of each server (alive, failures, time to the next retry), one per address in
    /// the order each first appears in the list (a repeated address is one server, its
    /// entries' states merged: see [`ServerState`] and docs/metrics.md).
    pub fn server_states(&self) -> Vec<ServerState> {
        self.server_reports().into_iter().map(|r| r.state).collect()
    }

    /// The health of the server of entry `index` of the configured list (the index
    /// [`Client::server_for`] gives): its address's, as [`Client::server_states`] reports
    /// it (the same for every entry of a repeated address). `None` past the end.
    pub fn server_state(&self, index: usize) -> Option<ServerState> {
        let t = self.topology();
        let label = &t.servers.get(index)?.label;
        let mut states = t.servers.iter().filter(|s| s.label == *label);
        let mut state = states.next()?.health.snapshot(label);
        states.for_each(|s| state.merge(s.health.snapshot(label)));
        Some(state)
    }

    /// Each server's counters (operations, hits, misses, errors by kind, pool waits, …),
    /// one per address in the order each first appears in the list: a repeated address is
    /// one server, its entries' counters summed (docs/metrics.md).
    pub fn metrics(&self) -> Vec<ServerMetrics> {
        self.server_reports()
            .into_iter()
            .map(|r| r.metrics)
            .collect()
    }

    /// [`Client::metrics`] and [`Client::pool_states`] of the same server list (two calls
    /// could see two lists when [`Client::set_servers`] runs in between).
    pub fn metrics_and_pool_states(&self) -> (Vec<ServerMetrics>, Vec<(u32, u32)>) {
        self.server_reports()
            .into_iter()
            .map(|r| (r.metrics, r.pool))
            .unzip()
    }

    /// Connections per server: `(open, idle)`, one per address as [`Client::metrics`]
    /// (a repeated address's pools summed). Open: connections actually connected, checked
    /// out or idle in the pool (a pool slot without one, e.g. to a server that refuses every
    /// connect, is not counted); `idle == open` means none is in use.
    pub fn pool_states(&self) -> Vec<(u32, u32)> {
        self.server_reports().into_iter().map(|r| r.pool).collect()
    }

    /// Every server's counters, pool connections and health from one server list: the one
    /// place that decides what a server is in a report. A server is an address: the entries
    /// of an address listed more than once (the old way to give it a double share, as
    /// Cache::Memcached users do; each entry has its own pool, health and counters) are
    /// reported as one server, labelled with the address, in the order it first appears:
    /// counters and pool connections summed, states merged ([`ServerState`]). So no count
    /// is lost from a report keyed by label, and a Prometheus series is never repeated.
    pub fn server_reports(&self) -> Vec<ServerReport> {
        let t = self.topology();
        // The entries of each address, in the order each address first appears.
        let mut addresses: Vec<(&str, Vec<&crate::server::Server>)> = Vec::new();
        let mut seen: std::collections::HashMap<&str, usize> = Default::default();
        for s in &t.servers {
            let at = *seen.entry(&s.label).or_insert_with(|| {
                addresses.push((&s.label, Vec::with_capacity(1)));
                addresses.len() - 1
            });
            addresses[at].1.push(s);
        }
        addresses
            .into_iter()
            .map(|(label, entries)| {
                // A forked child's metrics start from 0, read before its first call too.
                let generation = crate::fork::generation();
                for s in &entries {
                    s.counters.restart_if_forked(generation);
                }
                let counters: Vec<&Counters> = entries.iter().map(|s| &*s.counters).collect();
                let mut state = entries[0].health.snapshot(label);
                let mut pool = (0u32, 0u32);
                for (i, s) in entries.iter().enumerate() {
                    if i > 0 {
                        state.merge(s.health.snapshot(label));
                    }
                    let (open, idle) = crate::pool::open_idle(&s.counters);
                    pool = (pool.0.saturating_add(open), pool.1.saturating_add(idle));
                }
                ServerReport {
                    metrics: Counters::sum(&counters, label),
                    pool,
                    state,
                }
            })
            .collect()
    }

    /// The longest value a caller may give to store: `max_value_size` counts the bytes sent
    /// (after compression), so a longer value that compresses below it is taken, up to
    /// `max_decompressed_size` (a longer one could not be read back).
    pub fn max_value_input_len(&self) -> usize {
        let c = &self.inner.config;
        c.max_value_size.max(c.compression.max_decompressed)
    }

    /// The longest key a caller may give: 250 bytes, or [`crate::key::MAX_HASHED_KEY_LEN`]
    /// when `long_keys` is `hash`.
    pub fn max_key_len(&self) -> usize {
        self.inner.keys.max_caller_len()
    }

    /// The key as the server stores it: sanitized if configured, prefixed, validated (on the
    /// text protocol: no spaces or control bytes; on meta and binary any bytes, 1 to 250),
    /// hashed to Dalli's form when too long and `long_keys` is `hash`.
    pub fn wire_key<'a>(&self, key: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        self.inner.keys.wire_key(key)
    }

    /// The value format, options and compression of this client, applied to one value.
    pub(crate) fn values(&self) -> crate::value::Transcoder<'_> {
        crate::value::Transcoder::new(self.inner.config.values, self.compression())
    }

    /// The compression rule stores follow now: the configured one, switched on or off by
    /// [`Client::set_compression`].
    #[inline]
    pub(crate) fn compression(&self) -> &crate::value::Compression {
        match self
            .inner
            .compression_switch
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 => &self.inner.config.compression,
            1 => &self.inner.compression_switched[0],
            _ => &self.inner.compression_switched[1],
        }
    }

    /// Switches compression on or off for the stores made from now on, at the configured
    /// threshold, codec and level (Cache::Memcached::Fast's `enable_compress`); the value
    /// format and reads are unchanged (a compressed value is always read). Nothing is
    /// rebuilt: connections, server health and metrics are kept (tester finding perl 2: the
    /// Perl binding rebuilt its client for it, which forgot a dead server and restarted the
    /// counters). [`Client::config`] keeps the configured setting.
    pub fn set_compression(&self, on: bool) {
        self.inner
            .compression_switch
            .store(if on { 2 } else { 1 }, std::sync::atomic::Ordering::Relaxed);
    }

    /// The wire protocol this client speaks.
    pub fn protocol(&self) -> crate::proto::Protocol {
        self.inner.dialect.protocol()
    }
}
