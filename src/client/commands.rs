//! The commands about one key (stores, delete, counters, touch, leases) and about whole
//! servers (flush_all, version, stats): each builds its [`Request`] and reads its
//! [`Outcome`](crate::dialect::Outcome).

use super::observe::{self, Side, Start};
use super::{Client, PerServer, Topology};
use crate::dialect::Request;
use crate::error::{Error, Result};
use crate::gate::Offer;
use crate::item::{Item, Lease, StoreOutcome};
use crate::proto::ascii::StoreCommand;
use crate::proto::Protocol;
use crate::route::proxy_pool::{Reached, Resend};
use crate::server::Checkout;
use crate::set_item::Compress;
use crate::trace::{Op, OpOutcome};
use std::borrow::Cow;

/// A `set` whose value (as sent) is at most this long may be handed over to another caller's
/// connection while it waits for one (docs/handover.md); larger ones wait for a connection.
const HANDED_OVER_SET_BYTES: usize = 16 * 1024;

impl Client {
    // ----- storage -----

    /// Stores `value` under `key` unconditionally. `ttl` in seconds (0 = no expiry; above 30
    /// days it is a unix time, as memcached reads it), at most [`crate::ttl::MAX_TTL`]: a
    /// larger one is [`Error::InvalidArgument`] and nothing is sent, as for every expiry of
    /// every call (see [`crate::ttl`]); a set so refused deletes the key, as one refused as
    /// too large does.
    ///
    /// Errors: a bad key or TTL, a value over `max_value_size` ([`Error::ValueTooLarge`]:
    /// nothing sent, and the key deleted, as memcached's own refusal does), the server's
    /// refusal ([`Error::Server`], [`Error::TooLargeForServer`]), an unreachable server or a
    /// timeout (with `fail_open`: [`StoreOutcome::NotStored`]). A timeout after the request
    /// was sent says so ([`Error::IoTimeout`]'s `sent`): the value may have been stored.
    ///
    /// ```no_run
    /// # fn main() -> mcpool::Result<()> {
    /// let client = mcpool::Client::new(["127.0.0.1:11211"])?;
    /// client.set("greeting", "hello", 3600)?; // any bytes: &str, String, Vec<u8>, &[u8]...
    /// # Ok(())
    /// # }
    /// ```
    pub fn set(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        self.store(StoreCommand::Set, key, value, 0, ttl)
    }

    /// Stores only if `key` does not exist (`NotStored` otherwise).
    pub fn add(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        self.store(StoreCommand::Add, key, value, 0, ttl)
    }

    /// Stores only if `key` exists (`NotStored` otherwise).
    pub fn replace(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        self.store(StoreCommand::Replace, key, value, 0, ttl)
    }

    /// Appends to an existing value (`NotStored` if missing, or if the item would grow past
    /// the server's item size limit). Never compressed. memcached adds the bytes to the
    /// stored ones as they are: onto a value stored compressed (at least
    /// `compression_threshold` bytes, compression on) the result no longer inflates, and its
    /// reads fail with [`Error::Decompress`] (never a wrong value); store a value that will
    /// grow with [`Compress::Never`] ([`Client::store_as`]).
    pub fn append(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<StoreOutcome> {
        self.store(StoreCommand::Append, key, value, 0, 0)
    }

    /// Prepends to an existing value (`NotStored` if missing, or if the item would grow past
    /// the server's item size limit). Never compressed; onto a value stored compressed, as
    /// for [`Client::append`].
    pub fn prepend(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<StoreOutcome> {
        self.store(StoreCommand::Prepend, key, value, 0, 0)
    }

    /// Stores only if the item's CAS unique is still `cas` (from [`Client::gets`]):
    /// `Exists` if it changed, `NotFound` if it is gone. A `cas` of 0 is
    /// [`Error::InvalidArgument`] and nothing is sent, on every protocol and every cas path
    /// (`store`, `store_value`, `store_multi_items`, `store_with_version`): no item has CAS 0,
    /// and the binary protocol would read it as "no CAS" and store unconditionally. Never
    /// failed open: a `cas` whose reply was lost may have been applied, and its error says
    /// so; read back before retrying. A CAS unique belongs to the server process that gave
    /// it: after a failover, a `set_servers` that moved the key or a restart, `gets` again
    /// (docs/failover.md). See [`Client::gets`] for a retry loop.
    pub fn cas(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
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
        value: impl AsRef<[u8]>,
        flags: u32,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        let encoded = self.encode_value(cmd, key.as_ref(), value.as_ref(), flags);
        self.store_encoded(cmd, key.as_ref(), encoded, ttl)
    }

    /// A call refused before any I/O (a bad key or value): recorded, never failed open.
    pub(super) fn refused<T>(&self, op: Op, keys: usize, e: Error) -> Result<T> {
        if let Some(start) = self.call_start() {
            let t = &*self.topology();
            self.record(
                t,
                start,
                op,
                keys,
                0,
                None,
                OpOutcome::Error(e.class()),
                Some(&e),
            );
        }
        Err(e)
    }

    /// [`Client::store`] with a per-call compression decision (never for append/prepend).
    pub fn store_as(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        flags: u32,
        ttl: u32,
        compress: Compress,
    ) -> Result<StoreOutcome> {
        let encoded = self.encode_value_as(cmd, key.as_ref(), value.as_ref(), flags, compress);
        self.store_encoded(cmd, key.as_ref(), encoded, ttl)
    }

    /// A store of a value in its wire form, as `encoded` (`crate::value`'s transcoder) gave
    /// it: a value it refused (too large, a kind the format lacks...) is refused here, before
    /// any I/O, recorded with no server as every store path's refusal is (tester finding
    /// observability 3: the typed paths returned the error unrecorded).
    pub(crate) fn store_encoded(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        encoded: Result<(Cow<'_, [u8]>, u32)>,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        match encoded {
            Ok((data, flags)) => {
                self.store_in(cmd, key, &data, flags, ttl, self.inner.config.fail_open)
            }
            Err(e) => self.refused(store_op(cmd), 1, e),
        }
    }

    /// [`Client::store_encoded`], failing open only when `open`.
    fn store_in(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        data: &[u8],
        flags: u32,
        ttl: u32,
        open: bool,
    ) -> Result<StoreOutcome> {
        let start = self.call_start();
        let t = &*self.topology();
        let mut at = None;
        let r = self.wire_key(key).and_then(|wire| {
            let req = Request::Store {
                cmd,
                key: &wire,
                flags,
                ttl,
                data,
                quiet: false,
                version: None,
            };
            // Nothing is sent (nor handed over) for a TTL memcached could not honour.
            req.check_arguments()
                .map_err(|e| self.ttl_refused(cmd, key, e))?;
            // No store is sent again once sent (proxy-pool): a copy held up in a stalled
            // proxy may land after the resent one and after later writes (tester finding
            // fleet 2).
            self.on_key_server(
                t,
                &wire,
                Resend::IfUnsent,
                true,
                self.deadline(),
                |t, idx, deadline| {
                    at = Some(idx);
                    let pooled = if cmd == StoreCommand::Set && data.len() <= HANDED_OVER_SET_BYTES
                    {
                        // A plain set of a small value may be handed to a permit holder while
                        // waiting.
                        let offer = Offer::Set(&wire, data, flags, ttl);
                        match self.acquire_or_offer(t, idx, deadline, offer) {
                            Ok(Checkout::Conn(pooled)) => pooled,
                            Ok(Checkout::Served(answer)) => {
                                let label = &t.servers[idx].label;
                                return (answer.and_then(|a| a.into_stored(label)), Reached::Sent);
                            }
                            Err(e) => return (Err(e), Reached::NotSent),
                        }
                    } else {
                        match self.acquire(t, idx, deadline) {
                            Ok(pooled) => pooled,
                            Err(e) => return (Err(e), Reached::NotSent),
                        }
                    };
                    let stored = self
                        .exchange_on(t, idx, pooled, &req, &mut super::exchange::no_hits())
                        .and_then(|o| o.stored());
                    (stored, Reached::Sent)
                },
            )
        });
        self.finish_store(t, start, cmd, at, r, open)
    }

    /// The end of a single store by `cmd` on server `at`: [`Client::finish`], failing open
    /// only when `open` (the client's `fail_open`, never for a `cas`: see
    /// [`StoreCommand::fails_open`]); an error not failed open is recorded as it is.
    pub(super) fn finish_store(
        &self,
        t: &Topology,
        start: observe::Start,
        cmd: StoreCommand,
        at: Option<usize>,
        r: Result<StoreOutcome>,
        open: bool,
    ) -> Result<StoreOutcome> {
        let r = match r {
            Err(e) if !(open && cmd.fails_open()) && self.opens(&e) => {
                // Not failed open here (a cas, incr_or_init's own add): an error as it is.
                if let Some(s) = start {
                    self.record(
                        t,
                        s,
                        store_op(cmd),
                        1,
                        0,
                        at,
                        OpOutcome::Error(e.class()),
                        Some(&e),
                    );
                }
                return Err(e);
            }
            r => r,
        };
        self.finish(
            t,
            start,
            store_op(cmd),
            1,
            at,
            r,
            Side::Write,
            || StoreOutcome::NotStored,
            observe::stored,
        )
    }

    /// One key's command through [`Client::exchange_key`], ended by [`Client::finish`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn one_key<T>(
        &self,
        op: Op,
        key: &[u8],
        resend: Resend,
        req: impl FnOnce(&[u8]) -> Request<'_>,
        answer: impl FnOnce(crate::dialect::Outcome) -> Result<T>,
        open: Option<fn() -> T>,
        outcome: impl FnOnce(&T) -> (OpOutcome, usize),
    ) -> Result<T> {
        self.one_key_as(op, Side::Write, key, resend, req, answer, open, outcome)
    }

    /// [`Client::one_key`] for a read (`side`: what a failure that fails open counts as).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn one_key_as<T>(
        &self,
        op: Op,
        side: Side,
        key: &[u8],
        resend: Resend,
        req: impl FnOnce(&[u8]) -> Request<'_>,
        answer: impl FnOnce(crate::dialect::Outcome) -> Result<T>,
        open: Option<fn() -> T>,
        outcome: impl FnOnce(&T) -> (OpOutcome, usize),
    ) -> Result<T> {
        let start = self.call_start();
        let t = &*self.topology();
        let mut at = None;
        let r = self.wire_key(key).and_then(|wire| {
            let req = req(&wire);
            self.exchange_key(t, &wire, resend, &req, &mut at)
                .and_then(answer)
        });
        match open {
            Some(missed) => self.finish(t, start, op, 1, at, r, side, missed, outcome),
            None => {
                // Never failed open (incr_or_init's parts): recorded as they are.
                if let Some(s) = start {
                    let (o, hits, e) = match &r {
                        Ok(v) => {
                            let (o, h) = outcome(v);
                            (o, h, None)
                        }
                        Err(e) => (OpOutcome::Error(e.class()), 0, Some(e)),
                    };
                    self.record(t, s, op, 1, hits, at, o, e);
                }
                r
            }
        }
    }

    // ----- deletion, arithmetic, touch -----

    /// Deletes `key`: true if it existed. Errors as [`Client::get`]'s (with `fail_open`,
    /// false).
    ///
    /// ```no_run
    /// # fn main() -> mcpool::Result<()> {
    /// let client = mcpool::Client::new(["127.0.0.1:11211"])?;
    /// if !client.delete("session:42")? {
    ///     println!("it was not there");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.one_key(
            Op::Delete,
            key.as_ref(),
            Resend::IfUnsent,
            |key| Request::Delete {
                key,
                quiet: false,
                version: None,
            },
            |o| o.existed(),
            Some(|| false),
            observe::found,
        )
    }

    /// Adds `delta` to a decimal value: the new value (wrapping at 2^64, as memcached does),
    /// or `None` if `key` is missing. A non-numeric value is a `Client` error.
    /// [`Client::incr_or_init`] creates a missing counter.
    ///
    /// ```no_run
    /// # fn main() -> mcpool::Result<()> {
    /// let client = mcpool::Client::new(["127.0.0.1:11211"])?;
    /// client.set_counter("hits", 0, 0)?;
    /// assert_eq!(client.incr("hits", 5)?, Some(5));
    /// # Ok(())
    /// # }
    /// ```
    pub fn incr(&self, key: impl AsRef<[u8]>, delta: u64) -> Result<Option<u64>> {
        self.arith(true, key.as_ref(), delta, None, true)
    }

    /// Subtracts `delta` (memcached stops at 0): the new value, or `None` if missing.
    pub fn decr(&self, key: impl AsRef<[u8]>, delta: u64) -> Result<Option<u64>> {
        self.arith(false, key.as_ref(), delta, None, true)
    }

    /// Stores `value` as a counter for `incr`/`decr`: memcached's decimal text with raw
    /// flags 0, whatever the value format, never compressed (Whalin's `storeCounter(key,
    /// long)`; the same form `incr_or_init` creates). Unsigned 64-bit, as memcached's
    /// counters: 0 to 2^64 − 1 (`incr` then wraps to 0, as memcached does); a negative
    /// number, which no `incr` or `decr` could count on, cannot be given. `Stored`, or an
    /// error.
    pub fn set_counter(&self, key: impl AsRef<[u8]>, value: u64, ttl: u32) -> Result<StoreOutcome> {
        let open = self.inner.config.fail_open;
        self.store_counter(
            StoreCommand::Set,
            key.as_ref(),
            &value.to_string(),
            ttl,
            open,
        )
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
        self.one_key(
            Op::Touch,
            key.as_ref(),
            Resend::IfUnsent,
            |key| Request::Touch { key, ttl },
            |o| o.existed(),
            Some(|| false),
            observe::found,
        )
    }

    // ----- stampede protection (meta protocol) -----

    /// A read that protects against stampedes: on a miss (or when the value expires within
    /// `recache_below` seconds, or was invalidated), exactly one caller gets
    /// [`Lease::Recompute`] and the others [`Lease::Wait`] (with the stale value when there is
    /// one). A miss creates a placeholder for `vivify_ttl` seconds, so the election holds
    /// that long. The winner stores the new value with an ordinary `set`. Meta protocol only.
    ///
    /// The placeholder is an empty item the server flags (memcached answers every `mg` of it
    /// `Z`): this client's plain reads (`get`, `gets`, `get_multi`, get-and-touch,
    /// `meta_info`, and every binding's `get`/`exists` built on them) take it for a miss.
    /// It is still an item to the server: `add` is `NotStored` until the winner's `set` (or
    /// `vivify_ttl`) replaces it, while `set` and `cas` (with the placeholder's CAS) store over
    /// it; `append`/`prepend` store onto its empty value (the key then holds only the
    /// appended bytes, and the next lease is a hit), `incr`/`decr` fail (a client error: an
    /// empty value is no number; `incr_or_init` too), `touch` and `delete` find it (true).
    /// Readers that cannot see the flag (text and binary protocol clients) take it for an
    /// empty value.
    ///
    /// A lease that wins the recompute of an existing item (`recache_below`, or an
    /// invalidated item) returns its current value as the stale one, empty or not. memcached
    /// flags any item whose token a lease with `recache_below` took as it flags a placeholder,
    /// so one that is also empty with flags 0 (bytes under most value formats) answers
    /// exactly as one: it is then taken for a placeholder (a miss; no stale value), the safe
    /// side, until it is replaced. An empty value with flags (an empty string) is told apart.
    /// docs/protocols.md, "Leases", has the whole rule.
    pub fn get_lease(
        &self,
        key: impl AsRef<[u8]>,
        vivify_ttl: u32,
        recache_below: Option<u32>,
    ) -> Result<Lease> {
        self.require_meta("get_lease")?;
        let key = key.as_ref();
        let start = self.call_start();
        let t = &*self.topology();
        let mut at = None;
        let r = self.wire_key(key).and_then(|wire| {
            let req = Request::Lease {
                key: &wire,
                vivify_ttl: vivify_ttl.max(1),
                recache: recache_below,
            };
            let r = self
                .exchange_key(t, &wire, Resend::IfUnsent, &req, &mut at)?
                .lease()?;
            // A value for this caller (a hit; a winner's stale value is a miss: it
            // recomputes), decoded; counted as the caller gets it (`Server::lookups`).
            let hit = r.value.is_some() && !r.win;
            let value = r
                .value
                .map(|(v, f, c)| self.decode(key, v, f, Some(c)))
                .transpose();
            if let Some(server) = at.and_then(|i| t.servers.get(i)) {
                let undecoded = usize::from(value.is_err());
                server.lookups(1, usize::from(hit) | undecoded, undecoded);
            }
            let value = value?;
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
        });
        // Failed open, a lease read is a miss (counted with the reads): this caller
        // recomputes (from the source).
        self.finish(
            t,
            start,
            Op::Lease,
            1,
            at,
            r,
            Side::Read,
            || Lease::Recompute { stale: None },
            |l| match l {
                Lease::Hit(_) | Lease::Wait { stale: Some(_) } => (OpOutcome::Hit, 1),
                _ => (OpOutcome::Miss, 0),
            },
        )
    }

    /// Marks `key` stale instead of deleting it: readers through [`Client::get_lease`] keep
    /// getting the old value (flagged stale) for `stale_ttl` seconds while exactly one of them
    /// recomputes it. True if the key existed. Meta protocol only.
    ///
    /// Plain reads still return the stale value, unmarked. memcached gives the recompute
    /// token to the first read of the stale item, whatever it asks: a read that returns no
    /// CAS (`get`, `get_multi`, `gat`) hands it back (`mg <key> c`, then `md <key> I C<cas>`:
    /// two more round trips, only then), so the next `get_lease` still wins. A read that returns a CAS
    /// (`gets`, `gats`, `gets_multi`, [`Client::meta_info`]) keeps it, since handing it back
    /// changes the CAS it returned: `get_lease` callers are then told `Wait` until the item
    /// is stored again or `stale_ttl` runs out. docs/protocols.md, "Plain reads of an
    /// invalidated item".
    pub fn invalidate(&self, key: impl AsRef<[u8]>, stale_ttl: u32) -> Result<bool> {
        self.require_meta("invalidate")?;
        self.one_key(
            Op::Invalidate,
            key.as_ref(),
            Resend::IfUnsent,
            |key| Request::Invalidate { key, stale_ttl },
            |o| o.existed(),
            Some(|| false),
            observe::found,
        )
    }

    pub(super) fn require_meta(&self, what: impl std::fmt::Display) -> Result<()> {
        match self.protocol() {
            Protocol::Meta => Ok(()),
            p => Err(Error::Unsupported(format!(
                "{what} needs the meta protocol (this client speaks {p})"
            ))),
        }
    }

    // ----- whole-server commands -----

    /// Invalidates every item on every server, now or after `delay` seconds. Tries every
    /// server; returns the first failure ([`Client::flush_all_each`] says which flushed). A
    /// `delay` above [`crate::ttl::MAX_TTL`] is [`Error::InvalidArgument`] before any server
    /// is asked.
    pub fn flush_all(&self, delay: Option<u32>) -> Result<()> {
        let flush: Request<'_> = Request::Flush { delay };
        if let Err(e) = flush.check_arguments() {
            // Refused once for every server, before any is asked.
            return self.refused(Op::FlushAll, 0, e);
        }
        self.flush_all_each(delay)
            .into_iter()
            .find_map(|(_, r)| r.err())
            .map_or(Ok(()), Err)
    }

    /// Invalidates every item on every server, now or after `delay` seconds: each server's
    /// outcome, in configuration order, so a caller can tell the servers that were flushed
    /// from those that failed (Cache::Memcached::Fast's `flush_all` hash). A `delay` above
    /// [`crate::ttl::MAX_TTL`] is every server's [`Error::InvalidArgument`], none asked.
    pub fn flush_all_each(&self, delay: Option<u32>) -> PerServer<()> {
        let flush = Request::Flush { delay };
        let refused = flush.check_arguments().err();
        self.per_server(Op::FlushAll, |t, idx| {
            if let Some(Error::InvalidArgument { what, reason }) = &refused {
                return Err(Error::InvalidArgument {
                    what,
                    reason: reason.clone(),
                });
            }
            self.exchange(t, idx, &flush)?.done()
        })
    }

    /// Invalidates every item on one server, its index in the configuration order (as
    /// [`Client::server_for`] answers and the metrics list them), now or after `delay`
    /// seconds: Whalin's `flushAll(String[] servers)`. An index past the list, or a `delay`
    /// above [`crate::ttl::MAX_TTL`], is [`Error::InvalidArgument`] before anything is sent.
    pub fn flush_server(&self, index: usize, delay: Option<u32>) -> Result<()> {
        let flush = Request::Flush { delay };
        if let Err(e) = flush.check_arguments() {
            return self.refused(Op::FlushAll, 0, e);
        }
        let start = self.call_start();
        let t = &*self.topology();
        if index >= t.servers.len() {
            let e = Error::InvalidArgument {
                what: "server index",
                reason: format!("{index} is past the {} servers", t.servers.len()),
            };
            return self.refused(Op::FlushAll, 0, e);
        }
        let r = self.exchange(t, index, &flush).and_then(|o| o.done());
        self.whole_server(t, start, Op::FlushAll, index, &r);
        r
    }

    /// Each server's version string.
    pub fn version(&self) -> PerServer<String> {
        self.per_server(Op::Version, |t, idx| {
            self.exchange(t, idx, &Request::Version)?.version()
        })
    }

    /// A no-op round trip to each server: meta `mn`, binary NOOP, and on the text protocol,
    /// which has no no-op, `version` (its answer dropped). `Ok(())` once the server answered.
    pub fn noop(&self) -> PerServer<()> {
        self.per_server(Op::Noop, |t, idx| {
            self.exchange(t, idx, &Request::Noop)?.done()
        })
    }

    /// Each server's statistics: general (`None`) or a group such as `items`, `slabs`,
    /// `sizes`, `settings`: one word. An empty group, or one with white space or a control
    /// byte, is [`Error::InvalidArgument`] for every server, nothing sent (memcached's
    /// multi-word stats commands, `detail dump` and `cachedump`, answer in other forms).
    pub fn stats(&self, group: Option<&str>) -> PerServer<Vec<(String, String)>> {
        if let Some(g) = group {
            if g.is_empty() || g.bytes().any(|b| b <= b' ' || b == 0x7f) {
                let e = || Error::InvalidArgument {
                    what: "stats group",
                    reason: format!(
                        "{g:?}: one word, no white space or control byte (memcached's \
                         multi-word stats commands, detail and cachedump, answer in forms \
                         not read here)"
                    ),
                };
                return self.per_server(Op::Stats, |_, _| Err(e()));
            }
        }
        self.per_server(Op::Stats, |t, idx| {
            self.exchange(t, idx, &Request::Stats { group })?.stats()
        })
    }

    fn per_server<T>(&self, op: Op, f: impl Fn(&Topology, usize) -> Result<T>) -> PerServer<T> {
        let start = self.call_start();
        let t = &*self.topology();
        t.servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let r = f(t, i);
                self.whole_server(t, start, op, i, &r);
                (s.label.to_string(), r)
            })
            .collect()
    }

    /// The record of one server's part of a whole-server command (never failed open).
    fn whole_server<T>(&self, t: &Topology, start: Start, op: Op, idx: usize, r: &Result<T>) {
        if let Some(st) = start {
            let (o, e) = match r {
                Ok(_) => (OpOutcome::Ok, None),
                Err(e) => (OpOutcome::Error(e.class()), Some(e)),
            };
            self.record(t, st, op, 0, 0, Some(idx), o, e);
        }
    }

    // ----- values and counters -----

    /// The value as stored for `cmd`: checked against the size limit, compressed if due.
    pub(super) fn encode_value<'v>(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        value: &'v [u8],
        flags: u32,
    ) -> Result<(Cow<'v, [u8]>, u32)> {
        self.encode_value_as(cmd, key, value, flags, Compress::Auto)
    }

    /// The client's compression rule with a per-call decision applied; a per-call level the
    /// codec does not take is `Error::InvalidArgument`.
    pub(super) fn compression_for(&self, decided: Compress) -> Result<crate::value::Compression> {
        let c = self.compression();
        let (enabled, threshold, above, level) = match decided {
            Compress::Auto => (c.enabled, c.threshold, c.above, c.level),
            Compress::Never => (Some(false), c.threshold, c.above, c.level),
            Compress::Always => (Some(true), 0, false, c.level),
            Compress::AlwaysAt(l) => (Some(true), 0, false, Some(l)),
            Compress::Threshold(t) => (Some(true), t, c.above, c.level),
        };
        let rule = crate::value::Compression {
            enabled,
            threshold,
            above,
            level,
            ..c.clone()
        };
        if let Compress::AlwaysAt(_) = decided {
            self.inner
                .config
                .values
                .check(&rule)
                .map_err(|e| Error::InvalidArgument {
                    what: "compression level",
                    reason: match e {
                        Error::Config(m) => m,
                        other => other.to_string(),
                    },
                })?;
        }
        Ok(rule)
    }

    /// Whether a value of `len` bytes reaches a caller's compression `threshold`, compared as
    /// the client compares its own (`compression_compare`: at least, or above): the one
    /// comparison a binding's per-call threshold (pylibmc's and python-memcached's
    /// `min_compress_len`) is decided by.
    pub fn compression_due(&self, len: usize, threshold: usize) -> bool {
        let c = &self.inner.config.compression;
        crate::value::Compression {
            threshold,
            above: c.above,
            ..c.clone()
        }
        .due(len)
    }

    /// The limit a value to store must fit once encoded (`max_value_size`: the bytes sent,
    /// after compression). A value of `given` bytes larger than it and than
    /// `max_decompressed_size` is refused here, before any work is spent compressing it: it
    /// could not be read back even if it compressed below the limit.
    pub(super) fn check_given_size(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        given: usize,
    ) -> Result<usize> {
        let limit = self.inner.config.max_value_size;
        self.check_value_len(cmd, key, given)?;
        Ok(limit)
    }

    /// Refuses a value of `len` bytes to store by `cmd` under `key` that is longer than
    /// [`Client::max_value_input_len`] before any of it is read: [`Error::ValueTooLarge`]
    /// naming the option to raise, and a `set` refused so deletes the key (its own round
    /// trip), as every refused set does. The check of every store path; the C ABI makes it
    /// before it reads a caller's bytes (tester finding bigvalues 1: it refused them itself,
    /// and the old value stayed to be read).
    pub fn check_value_len(&self, cmd: StoreCommand, key: &[u8], len: usize) -> Result<()> {
        if len <= self.max_value_input_len() {
            return Ok(());
        }
        let c = &self.inner.config;
        let limit = c.max_value_size;
        let inflated = c.compression.max_decompressed;
        Err(match self.too_large(cmd, key, len, limit) {
            // longer than max_value_size alone when that is the larger: nothing to compress
            Error::ValueTooLarge {
                len,
                limit,
                key_deleted,
                ..
            } if inflated >= limit => Error::ValueTooLarge {
                len,
                limit,
                max_decompressed: Some(inflated),
                key_deleted,
            },
            e => e,
        })
    }

    /// The error of a value of `len` bytes (once encoded) to store by `cmd` under `key`,
    /// above `limit`: [`Error::ValueTooLarge`], the value not sent. A `set` refused so also
    /// deletes `key` (its own round trip, its outcome ignored): memcached deletes the key
    /// when it refuses a set as too large itself, so whichever side refuses, no older value
    /// survives to be read as if the set had not been asked (pylibmc's and Django's own
    /// backends leave none; Django's cache_db sessions rely on it). Other stores leave the
    /// key alone, as memcached does.
    #[cold]
    #[inline(never)]
    pub(super) fn too_large(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        len: usize,
        limit: usize,
    ) -> Error {
        let key_deleted = matches!(cmd, StoreCommand::Set).then(|| self.delete(key).is_ok());
        Error::ValueTooLarge {
            len,
            limit,
            max_decompressed: None,
            key_deleted,
        }
    }

    /// The error of a store by `cmd` of `key` refused for its expiry (`e`: a `ttl`
    /// memcached cannot honour, [`crate::ttl::check`]), nothing sent. A `set` so refused also
    /// deletes `key` (its own round trip), as one refused as too large does
    /// ([`Client::too_large`]): the clients it replaces send such a set, which memcached
    /// stores already expired (or for the wrapped time), so no older value survives to be
    /// read as if the set had not been asked (tester finding ttl 1). Other stores, and other
    /// errors, are returned as they are.
    #[cold]
    #[inline(never)]
    pub(crate) fn ttl_refused(&self, cmd: StoreCommand, key: &[u8], e: Error) -> Error {
        match e {
            Error::InvalidArgument { what: "ttl", .. } if cmd == StoreCommand::Set => {
                set_refused_and_deleted(&e, self.delete(key), None)
            }
            e => e,
        }
    }

    /// A binding's signed expiry for a store by `cmd` of `key` as the `u32` the stores take,
    /// by [`crate::ttl::checked_from_signed`] (a negative one expired at once; the error naming
    /// the number as given): one refused for a `set` deletes the key as the store itself
    /// would, so a binding that checks its caller's time before the
    /// call leaves what the call would.
    pub fn store_ttl_checked(&self, cmd: StoreCommand, key: &[u8], seconds: i64) -> Result<u32> {
        crate::ttl::checked_from_signed("ttl", seconds).map_err(|e| self.ttl_refused(cmd, key, e))
    }

    /// [`Client::encode_value`] with a per-call compression decision.
    pub(super) fn encode_value_as<'v>(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        value: &'v [u8],
        flags: u32,
        compress: Compress,
    ) -> Result<(Cow<'v, [u8]>, u32)> {
        let limit = self.check_given_size(cmd, key, value.len())?;
        let (data, flags) = match (cmd, compress) {
            (StoreCommand::Append | StoreCommand::Prepend, _) => (Cow::Borrowed(value), flags),
            (_, Compress::Auto) => self.values().encode_flagged(key, value, flags)?,
            (_, decided) => {
                let rule = self.compression_for(decided)?;
                let c = &self.inner.config;
                crate::value::Transcoder::new(c.values, &rule).encode_flagged(key, value, flags)?
            }
        };
        if data.len() > limit {
            return Err(self.too_large(cmd, key, data.len(), limit));
        }
        Ok((data, flags))
    }

    fn decode(&self, key: &[u8], value: Vec<u8>, flags: u32, cas: Option<u64>) -> Result<Item> {
        let (value, flags) = self.values().decode_owned(key, value, flags)?;
        Ok(Item {
            value: value.into(),
            flags,
            cas,
        })
    }

    fn arith(
        &self,
        incr: bool,
        key: &[u8],
        delta: u64,
        init: Option<(u64, u32)>,
        open: bool,
    ) -> Result<Option<u64>> {
        let missed: Option<fn() -> Option<u64>> = if open { Some(|| None) } else { None };
        self.one_key(
            if incr { Op::Incr } else { Op::Decr },
            key,
            Resend::IfUnsent,
            |key| Request::Arith {
                incr,
                key,
                delta,
                init,
                version: None,
            },
            |o| o.counter(),
            missed,
            // With `init` (incr_or_init on meta and binary) the server counts on the counter
            // or creates it, and its reply does not say which: `ok`, never `hit` (tester
            // finding observability 2: a counter created was recorded as found).
            move |n| match (n, init) {
                (Some(_), Some(_)) => (OpOutcome::Ok, 0),
                (Some(_), None) => (OpOutcome::Hit, 1),
                (None, _) => (OpOutcome::Miss, 0),
            },
        )
    }

    /// The one form of a counter: memcached's decimal text with raw flags 0, whatever the
    /// value format (not the format's bytes flags, e.g. spymemcached's 0x800 or Whalin's
    /// 4096), never compressed: what binary and meta servers create for `incr_or_init`, what
    /// spymemcached's incr(key, by, default) and Whalin's addOrIncr and storeCounter store.
    fn store_counter(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        digits: &str,
        ttl: u32,
        open: bool,
    ) -> Result<StoreOutcome> {
        self.store_in(cmd, key, digits.as_bytes(), 0, ttl, open)
    }

    fn arith_or_init(
        &self,
        incr: bool,
        key: &[u8],
        delta: u64,
        initial: u64,
        ttl: u32,
    ) -> Result<u64> {
        if let Err(e) = crate::ttl::check("ttl", ttl) {
            // Before the first part is sent (on text, an incr that would not be undone).
            let op = if incr { Op::Incr } else { Op::Decr };
            return self.refused(op, 1, e);
        }
        // (named by the key's server: tester finding retest24 4, "protocol error from :")
        let vanished = || Error::Protocol {
            server: self
                .server_for(key)
                .ok()
                .and_then(|i| self.topology().servers.get(i).map(|s| s.label.to_string()))
                .unwrap_or_default(),
            detail: "counter missing right after it was created".into(),
        };
        if self.inner.dialect.arith_creates() {
            // One round trip: the server creates the counter with `initial` if missing. A
            // binary server whose add lost the race to another client's counts nothing and
            // says so (no counter): counted again, on theirs (as below), a few times at most.
            for _ in 0..3 {
                if let Some(n) = self.arith(incr, key, delta, Some((initial, ttl)), false)? {
                    return Ok(n);
                }
            }
            return Err(vanished());
        }
        // No miss to answer: these parts never fail open (their errors are the call's).
        if let Some(n) = self.arith(incr, key, delta, None, false)? {
            return Ok(n);
        }
        match self.store_counter(StoreCommand::Add, key, &initial.to_string(), ttl, false)? {
            StoreOutcome::Stored => Ok(initial),
            // Someone else created it in between: count on theirs.
            _ => self
                .arith(incr, key, delta, None, false)?
                .ok_or_else(vanished),
        }
    }
}

/// The operation a store command is.
pub(super) fn store_op(cmd: StoreCommand) -> Op {
    match cmd {
        StoreCommand::Set => Op::Set,
        StoreCommand::Add => Op::Add,
        StoreCommand::Replace => Op::Replace,
        StoreCommand::Append => Op::Append,
        StoreCommand::Prepend => Op::Prepend,
        StoreCommand::Cas(_) => Op::Cas,
    }
}

/// The error of a set refused for its ttl (`e`, an [`Error::InvalidArgument`]) whose key was
/// then deleted (`deleted`: the delete's outcome), saying both ([`Client::ttl_refused`]).
/// `others`: in a batch refused for its one ttl, how many of its other keys were deleted and
/// how many there are, so that each key's message says the whole batch went (tester note
/// retest38: a batch's first message, which C and the CLI report, named one key deleted).
pub(super) fn set_refused_and_deleted(
    e: &Error,
    deleted: Result<bool>,
    others: Option<(usize, usize)>,
) -> Error {
    let reason = match e {
        Error::InvalidArgument { reason, .. } => reason.as_str(),
        _ => "",
    };
    let rest = match others {
        None | Some((_, 0)) => String::new(),
        Some((1, 1)) => ", and so was the other key of this batch refused for its ttl".to_owned(),
        Some((done, n)) if done == n => {
            format!(", and so were the {n} other keys of this batch refused for their ttl")
        }
        Some((done, n)) => format!(
            ", and {done} of the {n} other keys of this batch refused for their ttl (see theirs)"
        ),
    };
    let done = match deleted {
        Ok(_) => {
            format!("the key was deleted, as memcached deletes it when it refuses a set{rest}")
        }
        Err(d) => format!("deleting the key, as a refused set does, failed too: {d}"),
    };
    Error::InvalidArgument {
        what: "ttl",
        reason: format!("{reason}; nothing was stored and {done}"),
    }
}
