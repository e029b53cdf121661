//! The client: keys → server → pooled connection → exchange, with values encoded on the way.

use crate::config::{ClientBuilder, Config};
use crate::conn::{Conn, ConnOptions, Deadline};
use crate::error::{Error, Result};
use crate::gate::Offer;
use crate::health::ServerState;
use crate::item::{Item, Lease, StoreOutcome};
use crate::key;
use crate::metrics::ServerMetrics;
use crate::multi_get;
use crate::ops;
use crate::proto::ascii::StoreCommand;
use crate::proto::Protocol;
use crate::route::proxy_pool::{self, Reached, Resend};
use crate::route::{Distribution, Router};
use crate::server::{Checkout, Pooled, Server};
use crate::set_item::{Compress, SetItem};

/// A `set` whose value (as sent) is at most this long may be handed over to another caller's
/// connection while it waits for one (docs/handover.md); larger ones wait for a connection.
const HANDED_OVER_SET_BYTES: usize = 16 * 1024;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Entries grouped by server `(server, entry indices)`, and the entries with no server.
type Grouping = (Vec<(usize, Vec<usize>)>, Vec<(usize, Error)>);

/// Handles one hit of a retrieval while it is in the read buffer: (index of the key in the
/// caller's list, value as received, flags, CAS).
type HitHandler<'h> = dyn FnMut(usize, &[u8], u32, Option<u64>) -> Result<()> + 'h;

/// A store prepared for the wire: key, encoded data, flags.
type WireItem<'a> = (Cow<'a, [u8]>, Cow<'a, [u8]>, u32);

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
    servers: Vec<Server>,
    router: Router,
    sanitize: bool,
    protocol: Protocol,
    /// Bytes of the wire key that placement skips: the prefix, for the profiles whose client
    /// hashes keys without their namespace.
    hash_skip: usize,
    /// `proxy-pool`: every key to the first healthy proxy, failing over to the next
    /// (`route::proxy_pool`); sanitizing then keeps `/` (routing prefixes).
    proxy_pool: bool,
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
    pub fn from_config(config: Config) -> Result<Client> {
        if config.servers.is_empty() {
            return Err(Error::Config("no servers given".into()));
        }
        config.check_limits()?;
        let router = Router::new(&config.distribution, &config.servers)?;
        let opts = ConnOptions {
            connect_timeout: config.connect_timeout,
            io_timeout: config.io_timeout,
            nodelay: config.nodelay,
            // No value memcached sends is longer than its largest item.
            max_value: config
                .max_value_size
                .max(config.compression.max_decompressed)
                .min(crate::config::MAX_ITEM_SIZE),
            protocol: config.protocol,
            sasl: config.sasl.clone(),
            #[cfg(feature = "tls")]
            tls: match &config.tls {
                Some(o) => Some((crate::tls::build(o)?, o.clone())),
                None => None,
            },
        };
        #[cfg(not(feature = "tls"))]
        if config.tls.is_some() {
            return Err(crate::tls::unavailable());
        }
        let servers = Server::all(&config, &opts);
        let sanitize = config
            .sanitize_keys
            .unwrap_or_else(|| config.distribution.sanitizes_keys_by_default());
        Ok(Client {
            inner: Arc::new(Inner {
                protocol: config.protocol,
                hash_skip: if config.distribution.hashes_namespace() {
                    0
                } else {
                    config.key_prefix.len()
                },
                proxy_pool: config.distribution == Distribution::ProxyPool,
                config,
                servers,
                router,
                sanitize,
            }),
        })
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The servers' `host:port` labels, in configuration order.
    pub fn server_labels(&self) -> Vec<String> {
        self.inner
            .servers
            .iter()
            .map(|s| s.label.to_string())
            .collect()
    }

    /// Health of each server (alive, failures, time to the next retry).
    pub fn server_states(&self) -> Vec<ServerState> {
        self.inner
            .servers
            .iter()
            .map(|s| s.health.snapshot(&s.label))
            .collect()
    }

    /// Each server's counters (operations, hits, misses, errors by kind, pool waits, …).
    pub fn metrics(&self) -> Vec<ServerMetrics> {
        self.inner
            .servers
            .iter()
            .map(|s| s.counters.snapshot(&s.label))
            .collect()
    }

    /// Connections per server: `(open, idle)`, in configuration order. An open connection is
    /// a pooled slot (checked out or idle); `idle == open` means none is in use.
    pub fn pool_states(&self) -> Vec<(u32, u32)> {
        self.inner
            .servers
            .iter()
            .map(|s| {
                let st = s.pool().0.state();
                (st.connections, st.idle_connections)
            })
            .collect()
    }

    /// Checks a wire key against the protocol's rules.
    fn validate_wire(&self, wire: &[u8]) -> Result<()> {
        match self.inner.protocol {
            Protocol::Text => key::validate(wire),
            // Meta sends such keys base64-encoded, binary as they are.
            Protocol::Meta => key::validate_meta(wire),
            Protocol::Binary => key::validate_length(wire),
        }
    }

    /// [`Client::wire_key`] without an allocation: `Ok(None)` when the key goes on the wire
    /// as given, `Ok(Some((start, len)))` when it was written (prefixed, sanitized) at the
    /// end of `arena`. On an error `arena` is left as it was.
    fn wire_key_into(&self, key: &[u8], arena: &mut Vec<u8>) -> Result<Option<(u32, u32)>> {
        let prefix = &self.inner.config.key_prefix;
        if key.is_empty() || (prefix.is_empty() && !self.inner.sanitize) {
            // Empty keys are refused even when a prefix would make them non-empty.
            return self.validate_wire(key).map(|()| None);
        }
        let start = arena.len();
        arena.extend_from_slice(prefix);
        if self.inner.sanitize {
            arena.extend_from_slice(&self.sanitized(key));
        } else {
            arena.extend_from_slice(key);
        }
        if let Err(e) = self.validate_wire(&arena[start..]) {
            arena.truncate(start);
            return Err(e);
        }
        Ok(Some((start as u32, (arena.len() - start) as u32)))
    }

    /// The key as the server stores it: sanitized if configured, prefixed, validated (on the
    /// text protocol: no spaces or control bytes; on meta and binary any bytes, 1 to 250).
    pub fn wire_key<'a>(&self, key: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        if key.is_empty() {
            // Refused even when a prefix would make the wire key non-empty: always a bug.
            return key::validate(key).map(|_| Cow::Borrowed(key));
        }
        let key = if self.inner.sanitize {
            self.sanitized(key)
        } else {
            Cow::Borrowed(key)
        };
        let prefix = &self.inner.config.key_prefix;
        let wire = if prefix.is_empty() {
            key
        } else {
            let mut k = Vec::with_capacity(prefix.len() + key.len());
            k.extend_from_slice(prefix);
            k.extend_from_slice(&key);
            Cow::Owned(k)
        };
        self.validate_wire(&wire)?;
        Ok(wire)
    }

    /// The key URL-encoded as Whalin does; in proxy-pool mode `/` is kept, so that the
    /// proxy's routing prefix (mcrouter `/region/cluster/`, memcached proxy `route/`) survives.
    fn sanitized<'k>(&self, key: &'k [u8]) -> Cow<'k, [u8]> {
        if self.inner.proxy_pool {
            key::url_encode_keeping_slash(key)
        } else {
            key::url_encode(key)
        }
    }

    /// Which server (index into the configured list) `key` lives on; no I/O, ignores health.
    pub fn server_for(&self, key: impl AsRef<[u8]>) -> Result<usize> {
        let wire = self.wire_key(key.as_ref())?;
        Ok(self.inner.router.locate(self.hash_input(&wire)))
    }

    /// The part of a wire key that placement hashes (see `Distribution::hashes_namespace`).
    fn hash_input<'w>(&self, wire: &'w [u8]) -> &'w [u8] {
        &wire[self.inner.hash_skip..]
    }

    // ----- retrieval -----

    /// The value of `key`, or `None` on a miss.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        Ok(self
            .retrieve_one(key.as_ref(), false, None)?
            .map(|i| i.value))
    }

    /// The value of `key` with its flags (no CAS), or `None` on a miss.
    pub fn get_item(&self, key: impl AsRef<[u8]>) -> Result<Option<Item>> {
        self.retrieve_one(key.as_ref(), false, None)
    }

    /// The value of `key` with its flags and CAS unique (for [`Client::cas`]).
    pub fn gets(&self, key: impl AsRef<[u8]>) -> Result<Option<Item>> {
        self.retrieve_one(key.as_ref(), true, None)
    }

    /// Get-and-touch: the value of `key`, setting its expiry to `ttl` seconds.
    pub fn gat(&self, key: impl AsRef<[u8]>, ttl: u32) -> Result<Option<Vec<u8>>> {
        Ok(self
            .retrieve_one(key.as_ref(), false, Some(ttl))?
            .map(|i| i.value))
    }

    /// Get-and-touch with flags and CAS unique.
    pub fn gats(&self, key: impl AsRef<[u8]>, ttl: u32) -> Result<Option<Item>> {
        self.retrieve_one(key.as_ref(), true, Some(ttl))
    }

    /// Many keys at once: one round trip per server, every server's request written before
    /// any reply is read. One result per key, in the caller's order; a key whose server
    /// failed gets that error, the others are unaffected.
    pub fn get_multi<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<Option<Item>>> {
        self.retrieve_many(keys, false, None)
    }

    /// Many keys at once without an allocation per value: `f(index, value, flags)` receives
    /// each hit as a slice borrowed from the connection's buffer (inflated first when it was
    /// stored compressed), in reply order. One result per key, in the caller's order: true for
    /// a hit, false for a miss, or that key's error. The fastest way to read many values.
    pub fn get_multi_each<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        mut f: impl FnMut(usize, &[u8], u32),
    ) -> Vec<Result<bool>> {
        self.get_multi_with(keys, false, &mut |i, value, flags, _| f(i, value, flags))
    }

    /// Like [`Client::get_multi`], with CAS uniques.
    pub fn gets_multi<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<Option<Item>>> {
        self.retrieve_many(keys, true, None)
    }

    // ----- storage -----

    /// Stores `value` under `key` unconditionally. `ttl` in seconds (0 = no expiry; above 30
    /// days it is a unix time, as memcached reads it).
    pub fn set(&self, key: impl AsRef<[u8]>, value: &[u8], ttl: u32) -> Result<StoreOutcome> {
        self.store(StoreCommand::Set, key, value, 0, ttl)
    }

    /// Stores only if `key` does not exist (`NotStored` otherwise).
    pub fn add(&self, key: impl AsRef<[u8]>, value: &[u8], ttl: u32) -> Result<StoreOutcome> {
        self.store(StoreCommand::Add, key, value, 0, ttl)
    }

    /// Stores only if `key` exists (`NotStored` otherwise).
    pub fn replace(&self, key: impl AsRef<[u8]>, value: &[u8], ttl: u32) -> Result<StoreOutcome> {
        self.store(StoreCommand::Replace, key, value, 0, ttl)
    }

    /// Appends to an existing value (`NotStored` if missing). Never compressed.
    pub fn append(&self, key: impl AsRef<[u8]>, value: &[u8]) -> Result<StoreOutcome> {
        self.store(StoreCommand::Append, key, value, 0, 0)
    }

    /// Prepends to an existing value (`NotStored` if missing). Never compressed.
    pub fn prepend(&self, key: impl AsRef<[u8]>, value: &[u8]) -> Result<StoreOutcome> {
        self.store(StoreCommand::Prepend, key, value, 0, 0)
    }

    /// Stores only if the item's CAS unique is still `cas` (from [`Client::gets`]):
    /// `Exists` if it changed, `NotFound` if it is gone.
    pub fn cas(
        &self,
        key: impl AsRef<[u8]>,
        value: &[u8],
        ttl: u32,
        cas: u64,
    ) -> Result<StoreOutcome> {
        self.store(StoreCommand::Cas(cas), key, value, 0, ttl)
    }

    /// Any store command with explicit flags: the general form of `set`, `add`, … .
    /// The value is compressed per the configuration (never for append/prepend).
    pub fn store(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        value: &[u8],
        flags: u32,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        let (data, flags) = self.encode_value(cmd, key.as_ref(), value, flags)?;
        self.store_encoded(cmd, key.as_ref(), &data, flags, ttl)
    }

    /// A store of a value already in its wire form (`crate::value`'s transcoder did it).
    pub(crate) fn store_encoded(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        data: &[u8],
        flags: u32,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        let p = self.inner.protocol;
        let wire = self.wire_key(key)?;
        // A plain set done twice stores the same value and answers the same (proxy-pool).
        let resend = match cmd {
            StoreCommand::Set => Resend::Always,
            _ => Resend::IfUnsent,
        };
        self.on_key_server(&wire, resend, self.deadline(), |idx, deadline| {
            let pooled = if cmd == StoreCommand::Set && data.len() <= HANDED_OVER_SET_BYTES {
                // A plain set of a small value may be handed to a permit holder while waiting.
                let offer = Offer::Set(&wire, data, flags, ttl);
                match self.acquire_or_offer(idx, deadline, offer) {
                    Ok(Checkout::Conn(pooled)) => pooled,
                    Ok(Checkout::Served(answer)) => {
                        let label = &self.inner.servers[idx].label;
                        return (answer.and_then(|a| a.into_stored(label)), Reached::Sent);
                    }
                    Err(e) => return (Err(e), Reached::NotSent),
                }
            } else {
                match self.acquire(idx, deadline) {
                    Ok(pooled) => pooled,
                    Err(e) => return (Err(e), Reached::NotSent),
                }
            };
            let stored = self.exchange_on(
                idx,
                pooled,
                1,
                |buf, tag| ops::encode_store(p, buf, cmd, &wire, flags, ttl, data, tag, false),
                |conn, tag| ops::recv_store(p, conn, cmd, tag),
            );
            (stored, Reached::Sent)
        })
    }

    /// Stores many items, pipelined per server (quiet requests closed by a barrier on meta and
    /// binary). One outcome per item, in order.
    pub fn set_multi<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &[(K, V)],
        ttl: u32,
    ) -> Vec<Result<StoreOutcome>> {
        self.store_prepared(&self.prepare_items(items), ttl)
    }

    /// Pipelined sets of prepared items (see `batch`).
    fn store_prepared(&self, prepared: &[Result<WireItem>], ttl: u32) -> Vec<Result<StoreOutcome>> {
        let p = self.inner.protocol;
        self.batch(
            prepared,
            |item| &item.0,
            |buf, (k, d, f), tag, quiet| {
                ops::encode_store(p, buf, StoreCommand::Set, k, *f, ttl, d, tag, quiet)
            },
            |conn, tag, n, out| ops::recv_store_batch(p, conn, tag, n, out),
        )
    }

    /// A set prepared for the wire: key checked and prefixed, value compressed if due.
    fn prepare_item<'a>(&self, key: &'a [u8], value: &'a [u8], flags: u32) -> Result<WireItem<'a>> {
        let wire = self.wire_key(key)?;
        let (data, flags) = self.encode_value(StoreCommand::Set, key, value, flags)?;
        Ok((wire, data, flags))
    }

    /// Stores many items without waiting for each reply (`noreply` on text, quiet requests on
    /// meta and binary), then one barrier round trip per server to learn that every command
    /// was read. Fastest for bulk loads; returns the first failure, if any.
    pub fn set_multi_noreply<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &[(K, V)],
        ttl: u32,
    ) -> Result<()> {
        let p = self.inner.protocol;
        if ops::batches_quietly(p) {
            // Quiet requests already skip the successful replies.
            return self
                .set_multi(items, ttl)
                .into_iter()
                .find_map(Result::err)
                .map_or(Ok(()), Err);
        }
        let prepared = self.prepare_items(items);
        if let Some(e) = prepared.iter().find_map(|r| r.as_ref().err()) {
            return Err(e.clone());
        }
        let mut first_err = None;
        let (groups, unplaced) = self.group(&prepared, |item| &item.0);
        if let Some((_, e)) = unplaced.into_iter().next() {
            return Err(e);
        }
        for (idx, members) in groups {
            // Text only (quiet protocols returned above): `noreply` stores, then `version`.
            let res = self.exchange(
                idx,
                |buf, tag| {
                    for (k, d, f) in members.iter().filter_map(|&i| prepared[i].as_ref().ok()) {
                        ops::encode_store(p, buf, StoreCommand::Set, k, *f, ttl, d, tag, true);
                    }
                    ops::encode_barrier(p, buf, tag);
                },
                |conn, tag| ops::recv_barrier(p, conn, tag),
            );
            if let Err(e) = res {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    fn prepare_items<'a, K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &'a [(K, V)],
    ) -> Vec<Result<WireItem<'a>>> {
        items
            .iter()
            .map(|(k, v)| self.prepare_item(k.as_ref(), v.as_ref(), 0))
            .collect()
    }

    // ----- deletion, arithmetic, touch -----

    /// Deletes `key`: true if it existed.
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        let p = self.inner.protocol;
        let wire = self.wire_key(key.as_ref())?;
        self.exchange_key(
            &wire,
            Resend::IfUnsent,
            |buf, tag| ops::encode_delete(p, buf, &wire, tag, false),
            |conn, tag| ops::recv_delete(p, conn, tag),
        )
    }

    /// Deletes many keys, pipelined per server: for each, true if it existed.
    pub fn delete_multi<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<bool>> {
        let p = self.inner.protocol;
        let prepared: Vec<Result<Cow<[u8]>>> =
            keys.iter().map(|k| self.wire_key(k.as_ref())).collect();
        self.batch(
            &prepared,
            |k| k,
            |buf, k, tag, quiet| ops::encode_delete(p, buf, k, tag, quiet),
            |conn, tag, n, out| ops::recv_delete_batch(p, conn, tag, n, out),
        )
    }

    /// Adds `delta` to a decimal value: the new value (wrapping at 2^64, as memcached does),
    /// or `None` if `key` is missing. A non-numeric value is a `Client` error.
    pub fn incr(&self, key: impl AsRef<[u8]>, delta: u64) -> Result<Option<u64>> {
        self.arith(true, key.as_ref(), delta)
    }

    /// Subtracts `delta` (memcached stops at 0): the new value, or `None` if missing.
    pub fn decr(&self, key: impl AsRef<[u8]>, delta: u64) -> Result<Option<u64>> {
        self.arith(false, key.as_ref(), delta)
    }

    /// Increments, or creates the counter with `initial` if missing (SockIOPool's `addOrIncr`).
    pub fn incr_or_init(
        &self,
        key: impl AsRef<[u8]>,
        delta: u64,
        initial: u64,
        ttl: u32,
    ) -> Result<u64> {
        self.arith_or_init(true, key.as_ref(), delta, initial, ttl)
    }

    /// Decrements, or creates the counter with `initial` if missing (`addOrDecr`).
    pub fn decr_or_init(
        &self,
        key: impl AsRef<[u8]>,
        delta: u64,
        initial: u64,
        ttl: u32,
    ) -> Result<u64> {
        self.arith_or_init(false, key.as_ref(), delta, initial, ttl)
    }

    /// Sets a new expiry on `key`: true if it exists.
    pub fn touch(&self, key: impl AsRef<[u8]>, ttl: u32) -> Result<bool> {
        let p = self.inner.protocol;
        let wire = self.wire_key(key.as_ref())?;
        self.exchange_key(
            &wire,
            Resend::Always,
            |buf, tag| ops::encode_touch(p, buf, &wire, ttl, tag),
            |conn, tag| ops::recv_touch(p, conn, tag),
        )
    }

    // ----- stampede protection (meta protocol) -----

    /// A read that protects against stampedes: on a miss (or when the value expires within
    /// `recache_below` seconds, or was invalidated), exactly one caller gets
    /// [`Lease::Recompute`] and the others [`Lease::Wait`] (with the stale value when there is
    /// one). A miss creates a placeholder for `vivify_ttl` seconds, so the election holds
    /// that long. The winner stores the new value with an ordinary `set`. Meta protocol only.
    pub fn get_lease(
        &self,
        key: impl AsRef<[u8]>,
        vivify_ttl: u32,
        recache_below: Option<u32>,
    ) -> Result<Lease> {
        self.require_meta("get_lease")?;
        let wire = self.wire_key(key.as_ref())?;
        let r = self.exchange_key(
            &wire,
            Resend::IfUnsent,
            |buf, tag| ops::meta::encode_lease(buf, &wire, vivify_ttl.max(1), recache_below, tag),
            ops::meta::recv_lease,
        )?;
        let value = r
            .value
            .map(|(v, f, c)| self.decode(&wire, v, f, Some(c)))
            .transpose()?;
        Ok(if r.win {
            Lease::Recompute { stale: value }
        } else if r.other_winner {
            Lease::Wait { stale: value }
        } else {
            match value {
                Some(item) if !r.stale => Lease::Hit(item),
                stale => Lease::Wait { stale },
            }
        })
    }

    /// Marks `key` stale instead of deleting it: readers through [`Client::get_lease`] keep
    /// getting the old value (flagged stale) for `stale_ttl` seconds while exactly one of them
    /// recomputes it. True if the key existed. Meta protocol only.
    pub fn invalidate(&self, key: impl AsRef<[u8]>, stale_ttl: u32) -> Result<bool> {
        self.require_meta("invalidate")?;
        let wire = self.wire_key(key.as_ref())?;
        self.exchange_key(
            &wire,
            Resend::IfUnsent,
            |buf, tag| ops::meta::encode_invalidate(buf, &wire, stale_ttl, tag),
            ops::meta::recv_delete,
        )
    }

    fn require_meta(&self, what: &str) -> Result<()> {
        match self.inner.protocol {
            Protocol::Meta => Ok(()),
            p => Err(Error::Unsupported(format!(
                "{what} needs the meta protocol (this client speaks {p})"
            ))),
        }
    }

    /// The wire protocol this client speaks.
    pub fn protocol(&self) -> Protocol {
        self.inner.protocol
    }

    // ----- whole-server commands -----

    /// Invalidates every item on every server, now or after `delay` seconds. Tries every
    /// server; returns the first failure.
    pub fn flush_all(&self, delay: Option<u32>) -> Result<()> {
        let p = self.inner.protocol;
        let mut first_err = None;
        for idx in 0..self.inner.servers.len() {
            if let Err(e) = self.exchange(
                idx,
                |buf, tag| ops::encode_flush(p, buf, delay, tag),
                |conn, tag| ops::recv_flush(p, conn, tag),
            ) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Each server's version string.
    pub fn version(&self) -> PerServer<String> {
        let p = self.inner.protocol;
        self.per_server(|idx| {
            self.exchange(
                idx,
                |buf, tag| ops::encode_version(p, buf, tag),
                |conn, tag| ops::recv_version(p, conn, tag),
            )
        })
    }

    /// Each server's statistics: general (`None`) or a group such as `items`, `slabs`,
    /// `sizes`, `settings`.
    pub fn stats(&self, group: Option<&str>) -> PerServer<Vec<(String, String)>> {
        if let Some(g) = group {
            if g.is_empty() || g.bytes().any(|b| b <= b' ' || b == 0x7f) {
                let e = || Error::Config(format!("bad stats group {g:?}"));
                return self.per_server(|_| Err(e()));
            }
        }
        let p = self.inner.protocol;
        self.per_server(|idx| {
            self.exchange(
                idx,
                |buf, tag| ops::encode_stats(p, buf, group, tag),
                |conn, tag| ops::recv_stats(p, conn, tag),
            )
        })
    }

    // ----- internals -----

    fn per_server<T>(&self, f: impl Fn(usize) -> Result<T>) -> PerServer<T> {
        self.inner
            .servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.label.to_string(), f(i)))
            .collect()
    }

    /// The value format, options and compression of this client, applied to one value.
    pub(crate) fn values(&self) -> crate::value::Transcoder<'_> {
        let c = &self.inner.config;
        crate::value::Transcoder::new(c.values, &c.compression)
    }

    fn encode_value<'v>(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        value: &'v [u8],
        flags: u32,
    ) -> Result<(Cow<'v, [u8]>, u32)> {
        self.encode_value_as(cmd, key, value, flags, Compress::Auto)
    }

    /// [`Client::encode_value`] with a per-call compression decision.
    fn encode_value_as<'v>(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        value: &'v [u8],
        flags: u32,
        compress: Compress,
    ) -> Result<(Cow<'v, [u8]>, u32)> {
        // The value as given is checked first: one over the limit is refused before any
        // work is spent compressing it (even if it would compress below the limit).
        let limit = self.inner.config.max_value_size;
        if value.len() > limit {
            return Err(Error::ValueTooLarge {
                len: value.len(),
                limit,
            });
        }
        let (data, flags) = match (cmd, compress) {
            (StoreCommand::Append | StoreCommand::Prepend, _) => (Cow::Borrowed(value), flags),
            (_, Compress::Auto) => self.values().encode_flagged(key, value, flags)?,
            (_, decided) => {
                // The same transcoder with the compression rule this call asked for.
                let c = &self.inner.config;
                let always = decided == Compress::Always;
                let rule = crate::value::Compression {
                    enabled: always,
                    threshold: if always { 0 } else { c.compression.threshold },
                    ..c.compression.clone()
                };
                crate::value::Transcoder::new(c.values, &rule).encode_flagged(key, value, flags)?
            }
        };
        if data.len() > limit {
            return Err(Error::ValueTooLarge {
                len: data.len(),
                limit,
            });
        }
        Ok((data, flags))
    }

    fn decode(&self, key: &[u8], value: Vec<u8>, flags: u32, cas: Option<u64>) -> Result<Item> {
        let (value, flags) = self.values().decode_owned(key, value, flags)?;
        Ok(Item { value, flags, cas })
    }

    fn arith(&self, incr: bool, key: &[u8], delta: u64) -> Result<Option<u64>> {
        self.arith_with(incr, key, delta, None)
    }

    fn arith_with(
        &self,
        incr: bool,
        key: &[u8],
        delta: u64,
        init: Option<(u64, u32)>,
    ) -> Result<Option<u64>> {
        let p = self.inner.protocol;
        let wire = self.wire_key(key)?;
        self.exchange_key(
            &wire,
            Resend::IfUnsent,
            |buf, tag| ops::encode_arith(p, buf, incr, &wire, delta, init, tag),
            |conn, tag| ops::recv_arith(p, conn, incr, tag),
        )
    }

    fn arith_or_init(
        &self,
        incr: bool,
        key: &[u8],
        delta: u64,
        initial: u64,
        ttl: u32,
    ) -> Result<u64> {
        let vanished = || Error::Protocol {
            server: String::new(),
            detail: "counter missing right after it was created".into(),
        };
        if ops::arith_creates(self.inner.protocol) {
            // One round trip: the server creates the counter with `initial` if missing.
            return self
                .arith_with(incr, key, delta, Some((initial, ttl)))?
                .ok_or_else(vanished);
        }
        if let Some(n) = self.arith(incr, key, delta)? {
            return Ok(n);
        }
        let init = initial.to_string();
        match self.store(StoreCommand::Add, key, init.as_bytes(), 0, ttl)? {
            StoreOutcome::Stored => Ok(initial),
            // Someone else created it in between: count on theirs.
            _ => self.arith(incr, key, delta)?.ok_or_else(vanished),
        }
    }

    /// The server for a wire key, applying the failover policy when its server is dead.
    #[inline]
    fn pick(&self, wire: &[u8]) -> Result<usize> {
        let inner = &*self.inner;
        if inner.proxy_pool {
            return self.proxy();
        }
        // One server: every key lives there (no hashing), or nowhere while it is dead.
        let i = if inner.servers.len() == 1 {
            0
        } else {
            inner.router.locate(self.hash_input(wire))
        };
        if inner.servers[i].health.may_try() {
            return Ok(i);
        }
        self.pick_alive(wire, i)
    }

    /// [`Client::pick`] when the key's server `i` is dead: the failover policy decides.
    #[cold]
    fn pick_alive(&self, wire: &[u8], i: usize) -> Result<usize> {
        let inner = &*self.inner;
        inner
            .router
            .locate_alive(self.hash_input(wire), inner.config.failover, &|j| {
                inner.servers[j].health.may_try()
            })
            .ok_or_else(|| Error::ServerDead {
                server: inner.servers[i].label.to_string(),
            })
    }

    /// `proxy-pool`: the first proxy whose health allows a request (every key goes there).
    fn proxy(&self) -> Result<usize> {
        let servers = &self.inner.servers;
        proxy_pool::first_alive(servers.len(), &|i| servers[i].health.may_try()).ok_or_else(|| {
            Error::ServerDead {
                server: servers[0].label.to_string(),
            }
        })
    }

    /// `proxy-pool`: after a failure on proxy `failed`, the next one to try (the first other
    /// healthy proxy) and the deadline brought up to date, while time is left.
    fn next_proxy(&self, failed: usize, deadline: Deadline) -> Option<(usize, Deadline)> {
        let mut deadline = deadline;
        if deadline.left_at(Instant::now()) == Some(Duration::ZERO) {
            return None;
        }
        let servers = &self.inner.servers;
        let next = proxy_pool::first_alive(servers.len(), &|i| {
            i != failed && servers[i].health.may_try()
        })?;
        Some((next, deadline))
    }

    /// Runs `attempt` (which says how far it got) on the key's server; in `proxy-pool` mode a
    /// failure that `resend` allows (see `route::proxy_pool`) is tried once more on the next
    /// healthy proxy, within the same deadline.
    fn on_key_server<T>(
        &self,
        wire: &[u8],
        resend: Resend,
        deadline: Deadline,
        mut attempt: impl FnMut(usize, Deadline) -> (Result<T>, Reached),
    ) -> Result<T> {
        let idx = self.pick(wire)?;
        match attempt(idx, deadline) {
            (Err(e), reached)
                if self.inner.proxy_pool && proxy_pool::may_resend(resend, reached, &e) =>
            {
                match self.next_proxy(idx, deadline) {
                    Some((next, deadline)) => attempt(next, deadline).0,
                    None => Err(e),
                }
            }
            (r, _) => r,
        }
    }

    /// One exchange about one key (see [`Client::on_key_server`]).
    fn exchange_key<T>(
        &self,
        wire: &[u8],
        resend: Resend,
        encode: impl Fn(&mut Vec<u8>, u32),
        mut recv: impl FnMut(&mut Conn, u32) -> Result<T>,
    ) -> Result<T> {
        self.on_key_server(wire, resend, self.deadline(), |idx, deadline| {
            match self.acquire(idx, deadline) {
                Err(e) => (Err(e), Reached::NotSent),
                Ok(pooled) => (
                    self.exchange_on(idx, pooled, 1, &encode, &mut recv),
                    Reached::Sent,
                ),
            }
        })
    }

    /// [`Client::acquire`] for a multi-key call's group on server `idx`: in `proxy-pool`
    /// mode, when no connection could be made (nothing was sent), the next healthy proxy.
    /// Returns the server the connection is to.
    fn acquire_group(&self, idx: usize, deadline: Deadline) -> Result<(usize, Pooled<'_>)> {
        match self.acquire(idx, deadline) {
            Err(e)
                if self.inner.proxy_pool
                    && proxy_pool::may_resend(Resend::IfUnsent, Reached::NotSent, &e) =>
            {
                match self.next_proxy(idx, deadline) {
                    Some((next, deadline)) => self.acquire(next, deadline).map(|p| (next, p)),
                    None => Err(e),
                }
            }
            r => r.map(|p| (idx, p)),
        }
    }

    /// Checks out a slot of server `idx` holding a usable connection.
    fn acquire(&self, idx: usize, deadline: Deadline) -> Result<Pooled<'_>> {
        self.inner.servers[idx].checkout(self.inner.config.pool_timeout, deadline)
    }

    /// As [`Client::acquire`] for a single-server operation that may be handed over while
    /// it waits (see `gate`): a connection, or the work's answer.
    fn acquire_or_offer(
        &self,
        idx: usize,
        deadline: Deadline,
        offer: Offer<'_>,
    ) -> Result<Checkout<'_>> {
        let pool_timeout = self.inner.config.pool_timeout;
        self.inner.servers[idx].checkout_or_offer(pool_timeout, deadline, offer)
    }

    /// The deadline of a single-server operation starting now (one clock reading).
    fn deadline(&self) -> Deadline {
        Deadline::after(self.inner.config.operation_timeout)
    }

    /// The deadline shared by every server of a multi-server operation starting now.
    fn shared_deadline(&self) -> Deadline {
        self.deadline()
    }

    /// Accounts for an exchange's result and drops a connection that is not clean.
    fn release<T>(&self, idx: usize, pooled: Pooled, result: &Result<T>) {
        self.inner.servers[idx].release(pooled, result);
    }

    /// One request/reply exchange with server `idx`: `encode` writes the request tagged with
    /// the tag it is given, `recv` reads the reply that must carry it.
    fn exchange<T>(
        &self,
        idx: usize,
        encode: impl FnOnce(&mut Vec<u8>, u32),
        recv: impl FnOnce(&mut Conn, u32) -> Result<T>,
    ) -> Result<T> {
        let pooled = self.acquire(idx, self.deadline())?;
        self.exchange_on(idx, pooled, 1, encode, recv)
    }

    /// One request/reply exchange on a connection of server `idx` already checked out,
    /// taking `tags` tags (see `Conn::take_tags`) from the first one given to `encode` and
    /// `recv`.
    fn exchange_on<T>(
        &self,
        idx: usize,
        mut pooled: Pooled,
        tags: usize,
        encode: impl FnOnce(&mut Vec<u8>, u32),
        recv: impl FnOnce(&mut Conn, u32) -> Result<T>,
    ) -> Result<T> {
        let result = pooled.with_conn(|conn| {
            let tag = conn.take_tags(tags);
            encode(conn.begin(), tag);
            conn.send()
                .and_then(|_| recv(conn, tag))
                .inspect(|_| conn.finish())
        });
        self.release(idx, pooled, &result);
        result
    }

    fn retrieve_one(&self, key: &[u8], cas: bool, touch: Option<u32>) -> Result<Option<Item>> {
        let mut item = None;
        self.retrieve_one_with(key, cas, touch, &mut |_, data, flags, c| {
            item = Some(self.decode(key, data.to_vec(), flags, c)?);
            Ok(())
        })?;
        Ok(item)
    }

    fn retrieve_many<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        cas: bool,
        touch: Option<u32>,
    ) -> Vec<Result<Option<Item>>> {
        let mut items: Vec<Option<Item>> = (0..keys.len()).map(|_| None).collect();
        let found = self.retrieve_each(keys, cas, touch, &mut |k, data, flags, c| {
            items[k] = Some(self.decode(keys[k].as_ref(), data.to_vec(), flags, c)?);
            Ok(())
        });
        found
            .into_iter()
            .zip(items)
            .map(|(f, item)| f.map(|hit| if hit { item } else { None }))
            .collect()
    }

    /// The single-key retrieval engine: one exchange, each hit handed to `on_hit` while it is
    /// still in the read buffer. True on a hit.
    fn retrieve_one_with(
        &self,
        key: &[u8],
        cas: bool,
        touch: Option<u32>,
        on_hit: &mut HitHandler<'_>,
    ) -> Result<bool> {
        let p = self.inner.protocol;
        let wire = self.wire_key(key)?;
        let keys = [&*wire];
        // Reads are resent to the next proxy (proxy-pool) while no value reached `on_hit`.
        self.on_key_server(&wire, Resend::Always, self.deadline(), |idx, deadline| {
            let server = &self.inner.servers[idx];
            let pooled = if touch.is_none() {
                // A plain read may be handed to a permit holder while waiting for a connection.
                match self.acquire_or_offer(idx, deadline, Offer::Get(&wire, cas)) {
                    Ok(Checkout::Conn(pooled)) => pooled,
                    Ok(Checkout::Served(answer)) => {
                        let found = answer.and_then(|a| a.into_found(&server.label));
                        return match found {
                            Ok(Some((data, flags, c))) => {
                                (on_hit(0, &data, flags, c).map(|()| true), Reached::Answered)
                            }
                            Ok(None) => (Ok(false), Reached::Answered),
                            Err(e) => (Err(e), Reached::Sent),
                        };
                    }
                    Err(e) => return (Err(e), Reached::NotSent),
                }
            } else {
                match self.acquire(idx, deadline) {
                    Ok(pooled) => pooled,
                    Err(e) => return (Err(e), Reached::NotSent),
                }
            };
            let mut handled = Ok(());
            let mut delivered = false;
            let hit = self.exchange_on(
                idx,
                pooled,
                ops::batch_tags(1),
                |buf, tag| ops::encode_retrieval(p, buf, cas, touch, &keys[..], tag),
                |conn, tag| {
                    let mut hit = false;
                    let touched = touch.is_some();
                    ops::recv_retrieval(
                        p,
                        conn,
                        cas,
                        touched,
                        &keys[..],
                        tag,
                        &mut |_, d, f, c| {
                            hit = true;
                            delivered = true;
                            handled = on_hit(0, d, f, c);
                        },
                    )?;
                    Ok(hit)
                },
            );
            let reached = if delivered {
                Reached::Answered
            } else {
                Reached::Sent
            };
            match hit {
                Ok(hit) => {
                    server.lookups(1, usize::from(hit));
                    (handled.map(|()| hit), reached)
                }
                Err(e) => (Err(e), reached),
            }
        })
    }

    /// The multi-key retrieval engine over a slice of keys: one result per key (see
    /// [`Client::retrieve_by_index`]).
    fn retrieve_each<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        cas: bool,
        touch: Option<u32>,
        on_hit: &mut HitHandler<'_>,
    ) -> Vec<Result<bool>> {
        self.retrieve_by_index(keys.len(), &|i| keys[i].as_ref(), cas, touch, on_hit, |s| {
            (0..keys.len()).map(|i| s.result(i)).collect()
        })
    }

    /// The multi-key retrieval engine: keys grouped per server, every server's request
    /// written before any reply is read, each hit handed to `on_hit` (with the key's index in
    /// the caller's list) while it is still in the read buffer. Then `finish` reads each
    /// key's result (`Scratch::result`): true for a hit, false for a miss, or the key's
    /// error (its own, its server's, or `on_hit`'s). Keys are read through `key_at`; the
    /// working memory is the thread's, reused (see `multi_get`), so nothing is allocated per
    /// key.
    pub(crate) fn retrieve_by_index<'k, F, T, H>(
        &self,
        n: usize,
        key_at: &F,
        cas: bool,
        touch: Option<u32>,
        on_hit: &mut H,
        finish: impl FnOnce(&multi_get::Scratch) -> T,
    ) -> T
    where
        F: Fn(usize) -> &'k [u8],
        H: FnMut(usize, &[u8], u32, Option<u64>) -> Result<()> + ?Sized,
    {
        multi_get::with_scratch(|s| {
            self.retrieve_in(s, n, key_at, cas, touch, on_hit);
            finish(s)
        })
    }

    /// The body of [`Client::retrieve_by_index`]: leaves each key's outcome in `s.state`.
    /// Generic in `on_hit` so that the C ABI's handler is inlined (the other callers share
    /// one instance, through `dyn`).
    fn retrieve_in<'k, F, H>(
        &self,
        s: &mut multi_get::Scratch,
        n: usize,
        key_at: &F,
        cas: bool,
        touch: Option<u32>,
        on_hit: &mut H,
    ) where
        F: Fn(usize) -> &'k [u8],
        H: FnMut(usize, &[u8], u32, Option<u64>) -> Result<()> + ?Sized,
    {
        use multi_get::{Selection, AS_GIVEN, HIT, NOWHERE};
        let p = self.inner.protocol;
        let servers = self.inner.servers.len();
        // Wire keys and servers; a key that fails here has its error and no server.
        s.state.resize(n, multi_get::MISS);
        // proxy-pool: one proxy for the whole call, so every key goes in one request.
        let proxy = self.inner.proxy_pool.then(|| self.proxy());
        for i in 0..n {
            let key = key_at(i);
            let placed = self.wire_key_into(key, &mut s.arena).and_then(|w| {
                let wire = match w {
                    None => key,
                    Some((start, len)) => &s.arena[start as usize..(start + len) as usize],
                };
                match &proxy {
                    Some(chosen) => chosen.clone(),
                    None => self.pick(wire),
                }
                .map(|idx| (w, idx))
            });
            match placed {
                Ok((w, idx)) => {
                    s.wire.push(w.unwrap_or((AS_GIVEN, 0)));
                    s.server.push(idx as u32);
                }
                Err(e) => {
                    s.wire.push((AS_GIVEN, 0));
                    s.server.push(NOWHERE);
                    s.fail([i], e);
                }
            }
        }
        s.group_by_server(servers);
        // Phase 1: write every server's request.
        let deadline = self.shared_deadline();
        let mut sent = Vec::new();
        for idx in 0..servers {
            let range = s.starts[idx] as usize..s.starts[idx + 1] as usize;
            if range.is_empty() {
                continue;
            }
            let sel = Selection {
                members: &s.order[range.clone()],
                arena: &s.arena,
                wire: &s.wire,
                key_at,
            };
            let failed = match self.acquire_group(idx, deadline) {
                Ok((idx, mut pooled)) => {
                    let res = pooled.with_conn(|conn| {
                        let tag = conn.take_tags(ops::batch_tags(range.len()));
                        ops::encode_retrieval(p, conn.begin(), cas, touch, &sel, tag);
                        conn.send().map(|()| tag)
                    });
                    match res {
                        Ok(tag) => {
                            sent.push((idx, pooled, range.clone(), tag));
                            None
                        }
                        Err(e) => {
                            self.release(idx, pooled, &Err::<(), _>(e.clone()));
                            Some(e)
                        }
                    }
                }
                Err(e) => Some(e),
            };
            if let Some(e) = failed {
                let members: Vec<usize> = s.order[range].iter().map(|&k| k as usize).collect();
                s.fail(members, e);
            }
        }
        // Phase 2: read each server's replies, handing each hit over as it is parsed.
        for (idx, mut pooled, range, tag) in sent {
            let mut hits = 0usize;
            let multi_get::Scratch {
                arena,
                wire,
                state,
                order,
                errors,
                ..
            } = &mut *s;
            let members = &order[range];
            let sel = Selection {
                members,
                arena,
                wire,
                key_at,
            };
            let res = pooled.with_conn(|conn| {
                let touched = touch.is_some();
                ops::recv_retrieval(
                    p,
                    conn,
                    cas,
                    touched,
                    &sel,
                    tag,
                    &mut |i, data, flags, c| {
                        hits += 1;
                        let k = members[i] as usize;
                        match on_hit(k, data, flags, c) {
                            Ok(()) => state[k] = HIT,
                            Err(e) => multi_get::fail_into(state, errors, [k], e),
                        }
                    },
                )
                .inspect(|_| conn.finish())
            });
            match &res {
                Ok(()) => self.inner.servers[idx].lookups(members.len(), hits),
                Err(e) => {
                    let keys = members.iter().map(|&k| k as usize);
                    multi_get::fail_into(state, errors, keys, e.clone());
                }
            }
            self.release(idx, pooled, &res);
        }
    }

    /// Groups valid prepared entries by server: `(server, indices into prepared)`, and the
    /// entries that have no server to go to (dead, fail-fast) with their error.
    fn group<P>(&self, prepared: &[Result<P>], key_of: impl Fn(&P) -> &[u8]) -> Grouping {
        let n = self.inner.servers.len();
        let mut by_server: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut unplaced = Vec::new();
        // proxy-pool: one proxy for the whole call.
        let proxy = self.inner.proxy_pool.then(|| self.proxy());
        for (i, p) in prepared.iter().enumerate() {
            if let Ok(p) = p {
                let placed = match &proxy {
                    Some(chosen) => chosen.clone(),
                    None => self.pick(key_of(p)),
                };
                match placed {
                    Ok(idx) => by_server[idx].push(i),
                    Err(e) => unplaced.push((i, e)),
                }
            }
        }
        let groups = by_server
            .into_iter()
            .enumerate()
            .filter(|(_, m)| !m.is_empty())
            .collect();
        (groups, unplaced)
    }

    /// A pipelined batch of single-key commands: per server, every command written in one go
    /// (quiet, closed by a barrier, where the protocol allows), then every reply read.
    fn batch<P, T>(
        &self,
        prepared: &[Result<P>],
        key_of: impl Fn(&P) -> &[u8],
        encode: impl Fn(&mut Vec<u8>, &P, u32, bool),
        recv: impl Fn(&mut Conn, u32, usize, &mut dyn FnMut(usize, Result<T>)) -> Result<()>,
    ) -> Vec<Result<T>> {
        let p = self.inner.protocol;
        let quiet = ops::batches_quietly(p);
        let mut results: Vec<Option<Result<T>>> = prepared
            .iter()
            .map(|r| r.as_ref().err().map(|e| Err(e.clone())))
            .collect();
        let (groups, unplaced) = self.group(prepared, &key_of);
        for (i, e) in unplaced {
            results[i] = Some(Err(e));
        }
        let deadline = self.shared_deadline();
        let mut sent = Vec::with_capacity(groups.len());
        for (idx, members) in groups {
            let res = self
                .acquire_group(idx, deadline)
                .and_then(|(idx, mut pooled)| {
                    let res = pooled.with_conn(|conn| {
                        let n = members.len();
                        let tag = conn.take_tags(ops::batch_tags(n));
                        let buf = conn.begin();
                        for (k, &i) in members.iter().enumerate() {
                            if let Ok(item) = &prepared[i] {
                                let quiet = ops::quiet_in_batch(p, k, n);
                                encode(buf, item, tag.wrapping_add(k as u32), quiet);
                            }
                        }
                        if quiet {
                            ops::encode_barrier(p, buf, tag.wrapping_add(n as u32));
                        }
                        conn.send().map(|()| tag)
                    });
                    match res {
                        Ok(tag) => Ok((idx, pooled, tag)),
                        Err(e) => {
                            self.release(idx, pooled, &Err::<(), _>(e.clone()));
                            Err(e)
                        }
                    }
                });
            match res {
                Ok((idx, pooled, tag)) => sent.push((idx, pooled, members, tag)),
                Err(e) => {
                    for &i in &members {
                        results[i] = Some(Err(e.clone()));
                    }
                }
            }
        }
        for (idx, mut pooled, members, tag) in sent {
            let res = pooled.with_conn(|conn| {
                recv(conn, tag, members.len(), &mut |k, r| {
                    results[members[k]] = Some(r);
                })
                .inspect(|_| conn.finish())
            });
            if let Err(e) = &res {
                for &i in &members {
                    if !matches!(results[i], Some(Ok(_))) {
                        results[i] = Some(Err(e.clone()));
                    }
                }
            }
            self.release(idx, pooled, &res);
        }
        results
            .into_iter()
            .zip(prepared)
            .map(|(r, item)| match (r, item) {
                (Some(r), _) => r,
                (None, Ok(item)) => Err(self.dead_error(key_of(item))),
                (None, Err(e)) => Err(e.clone()),
            })
            .collect()
    }

    fn dead_error(&self, wire: &[u8]) -> Error {
        match self.pick(wire) {
            Err(e) => e,
            Ok(i) => Error::ServerDead {
                server: self.inner.servers[i].label.to_string(),
            },
        }
    }
}

// ----- for the C ABI crate (capi/): reads without an `Item`, stores with per-item flags -----
// Public for capi/, hidden from the Rust API's documentation.

/// Receives each hit of a [`Client::get_with`] / [`Client::get_multi_with`]: (index of the key
/// in the caller's list, value, flags, CAS). The value is borrowed: straight from the
/// connection's read buffer, or, for a compressed value, from the inflated copy.
#[doc(hidden)]
pub type ValueSink<'s> = dyn FnMut(usize, &[u8], u32, Option<u64>) + 's;

impl Client {
    /// `get_item` (or `gets` with `cas`) handing the value to `sink` instead of building an
    /// `Item`: no copy unless the value has to be inflated. True on a hit. On the text
    /// protocol `sink` may have run when a later part of the reply fails the call.
    #[doc(hidden)]
    pub fn get_with(&self, key: &[u8], cas: bool, sink: &mut ValueSink<'_>) -> Result<bool> {
        self.retrieve_one_with(key, cas, None, &mut |k, data, flags, c| {
            self.deliver(key, k, data, flags, c, sink)
        })
    }

    /// `get_multi` (or `gets_multi`) handing each hit to `sink`, as [`Client::get_with`]. One
    /// result per key: true for a hit (delivered), false for a miss, or the key's error.
    #[doc(hidden)]
    pub fn get_multi_with<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        cas: bool,
        sink: &mut ValueSink<'_>,
    ) -> Vec<Result<bool>> {
        self.retrieve_each(keys, cas, None, &mut |k, data, flags, c| {
            self.deliver(keys[k].as_ref(), k, data, flags, c, sink)
        })
    }

    /// [`Client::get_multi_with`] over keys read by index, with each key's result handed to
    /// `on_result` (in key order, after every hit) instead of collected: allocates nothing in
    /// proportion to the keys.
    #[doc(hidden)]
    pub fn get_multi_by_index<'k, F: Fn(usize) -> &'k [u8]>(
        &self,
        n: usize,
        key_at: &F,
        cas: bool,
        sink: &mut impl FnMut(usize, &[u8], u32, Option<u64>),
        mut on_result: impl FnMut(usize, Result<bool>),
    ) {
        self.retrieve_by_index(
            n,
            key_at,
            cas,
            None,
            &mut |k, data, flags, c| self.deliver(key_at(k), k, data, flags, c, sink),
            |s| (0..n).for_each(|i| on_result(i, s.result(i))),
        )
    }

    /// Hands one value to `sink` decoded by the value format (inflated when its flags say
    /// so, integers and booleans in their ABI text), or fails with the key's error.
    fn deliver<S: FnMut(usize, &[u8], u32, Option<u64>) + ?Sized>(
        &self,
        key: &[u8],
        index: usize,
        data: &[u8],
        flags: u32,
        cas: Option<u64>,
        sink: &mut S,
    ) -> Result<()> {
        thread_local! {
            /// Inflated values handed to sinks: one buffer per thread, reused, so a stream of
            /// compressed values costs no allocation (and no heap growth and trim) each.
            static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        SCRATCH.with(|cell| {
            // A sink that reads again on this thread finds the buffer busy: inflate aside.
            let mut fresh = Vec::new();
            let mut guard = cell.try_borrow_mut();
            let buf = match guard.as_deref_mut() {
                Ok(b) => b,
                Err(_) => &mut fresh,
            };
            let (body, delivered, _) = self.values().decode(key, data, flags, buf)?;
            sink(index, &body, delivered, cas);
            drop(body);
            if buf.capacity() > 4 << 20 {
                *buf = Vec::new();
            }
            Ok(())
        })
    }

    /// Stores many items, pipelined per server as [`Client::set_multi`] (one round trip per
    /// server), each with its own flags, expiry and compression decision. One outcome per
    /// item, in order; an item refused before any I/O (bad key, too large) fails alone.
    pub fn set_multi_items(&self, items: &[SetItem<'_>]) -> Vec<Result<StoreOutcome>> {
        let p = self.inner.protocol;
        let prepared: Vec<Result<(WireItem, u32)>> = items
            .iter()
            .map(|it| {
                let wire = self.wire_key(it.key)?;
                let (data, flags) = self.encode_value_as(
                    StoreCommand::Set,
                    it.key,
                    it.value,
                    it.flags,
                    it.compress,
                )?;
                Ok(((wire, data, flags), it.ttl))
            })
            .collect();
        self.batch(
            &prepared,
            |item| &item.0 .0,
            |buf, ((k, d, f), ttl), tag, quiet| {
                ops::encode_store(p, buf, StoreCommand::Set, k, *f, *ttl, d, tag, quiet)
            },
            |conn, tag, n, out| ops::recv_store_batch(p, conn, tag, n, out),
        )
    }
}
