//! The read engine. Every read (`get`, `gets`, `gat`, `get_multi`, callbacks, the C ABI's
//! reads into the caller's memory) is [`Client::read`]: keys in through one [`Keys`], each
//! value out through one [`Sink`] (inflated first when it was stored compressed, see
//! `sink::deliver`), then each key's result. A key read on its own ([`Keys::single`]) takes
//! the single-key route (one exchange, and a plain read may be handed over while it waits
//! for a connection); any other keys take the multi-key route: grouped per server, every
//! server's request written before any reply is read, in the thread's reused working memory
//! (`multi_get`), so nothing is allocated per key.

use super::observe::{self, Held, Side, Unreached};
use super::place::FAILOVER_TRIES;
use super::{Client, Topology};
use crate::conn::SetWait;
use crate::dialect::{batch_tags, Request, WireKeys};
use crate::error::Error;
use crate::error::Result;
use crate::gate::Offer;
use crate::item::{Form, Item};
use crate::key::{Keys, Single};
use crate::multi_get::{self, Selection, AS_GIVEN, HIT, MISS, NOWHERE};
use crate::route::proxy_pool::{Reached, Resend};
use crate::server::Checkout;
use crate::sink::{self, Each, Items, OneItem, Sink};
use crate::trace::{Op, OpOutcome};

impl Client {
    /// The value of `key`, or `None` on a miss.
    ///
    /// Errors: a key memcached cannot take ([`Error::InvalidKey`], nothing sent); its server
    /// unreachable or timing out ([`Error::Io`], [`Error::ConnectTimeout`],
    /// [`Error::IoTimeout`], [`Error::ServerDead`] while it is marked dead; with `fail_open`
    /// a miss instead); a value the value format cannot decode ([`Error::ValueFormat`],
    /// [`Error::Decompress`]: [`Client::get_or_stored`] hands out its bytes). Never another
    /// key's value.
    ///
    /// ```no_run
    /// # fn main() -> mcpool::Result<()> {
    /// let client = mcpool::Client::new(["127.0.0.1:11211"])?;
    /// match client.get("user:1")? {
    ///     Some(value) => println!("{}", String::from_utf8_lossy(&value)),
    ///     None => println!("a miss"),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        Ok(self.get_item(key)?.map(|i| i.value.into_vec()))
    }

    /// The value of `key` with its flags (no CAS), or `None` on a miss.
    pub fn get_item(&self, key: impl AsRef<[u8]>) -> Result<Option<Item>> {
        self.read_item(key.as_ref(), false, None)
    }

    /// The value of `key` with its flags, as [`Client::get_item`] delivers it, or, when the
    /// value format cannot deliver it (the errors `get_item` gives: flags that mean nothing
    /// in the format such as another client's types, a body those flags cannot hold, a
    /// compressed body that does not inflate), as memcached holds it: its body as stored
    /// (not inflated) and its flags as stored (compression bits included), with
    /// [`Form::AsStored`]. One read, placed and failed over as `get_item`'s; `None` on a miss.
    /// For tools and bindings that hand out any value's bytes (Java's `getBytes`).
    pub fn get_or_stored(&self, key: impl AsRef<[u8]>) -> Result<Option<(Item, Form)>> {
        let mut sink = OrStored {
            item: OneItem(Ok(None)),
            form: Form::Delivered,
        };
        self.read(&Single(key.as_ref()), false, None, &mut sink);
        Ok(sink.item.0?.map(|item| (item, sink.form)))
    }

    /// The value of `key` with its flags and CAS unique (for [`Client::cas`]); errors as
    /// [`Client::get`]'s.
    ///
    /// ```no_run
    /// # fn main() -> mcpool::Result<()> {
    /// use mcpool::StoreOutcome;
    /// let client = mcpool::Client::new(["127.0.0.1:11211"])?;
    /// // An optimistic update, retried a bounded number of times.
    /// for _ in 0..10 {
    ///     let Some(item) = client.gets("counter")? else {
    ///         client.add("counter", "1", 0)?;
    ///         break;
    ///     };
    ///     let n: u64 = String::from_utf8_lossy(&item.value).parse().unwrap_or(0);
    ///     match client.cas("counter", (n + 1).to_string(), 0, item.cas.unwrap_or(1))? {
    ///         StoreOutcome::Stored => break,
    ///         _ => continue, // changed or gone since `gets`: read again
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn gets(&self, key: impl AsRef<[u8]>) -> Result<Option<Item>> {
        self.read_item(key.as_ref(), true, None)
    }

    /// Get-and-touch: the value of `key`, setting its expiry to `ttl` seconds.
    pub fn gat(&self, key: impl AsRef<[u8]>, ttl: u32) -> Result<Option<Vec<u8>>> {
        Ok(self
            .read_item(key.as_ref(), false, Some(ttl))?
            .map(|i| i.value.into_vec()))
    }

    /// Get-and-touch with flags and CAS unique.
    pub fn gats(&self, key: impl AsRef<[u8]>, ttl: u32) -> Result<Option<Item>> {
        self.read_item(key.as_ref(), true, Some(ttl))
    }

    /// Many keys at once: one round trip per server, every server's request written before
    /// any reply is read. One result per key, in the caller's order; a key whose server
    /// failed gets that error, the others are unaffected.
    ///
    /// ```no_run
    /// # fn main() -> mcpool::Result<()> {
    /// let client = mcpool::Client::new(["127.0.0.1:11211", "127.0.0.1:11212"])?;
    /// let keys = ["user:1", "user:2"];
    /// for (key, result) in keys.iter().zip(client.get_multi(&keys)) {
    ///     match result {
    ///         Ok(Some(item)) => println!("{key}: {} bytes", item.value.len()),
    ///         Ok(None) => println!("{key}: a miss"),
    ///         Err(e) => println!("{key}: {e}"), // its server's error; the others stand
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn get_multi<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<Option<Item>>> {
        let mut items = Items::new(keys.len());
        self.read(keys, false, None, &mut items);
        items.finish()
    }

    /// Many keys at once without an allocation per value: `f(index, value, flags)` receives
    /// each hit as a slice borrowed from the connection's buffer (inflated first when it was
    /// stored compressed), in reply order. One result per key, in the caller's order: true for
    /// a hit, false for a miss, or that key's error. The fastest way to read many values.
    ///
    /// `f` runs while the call holds its server's pooled connection: a call on this client
    /// from inside `f` that needs a connection to that server waits for one (`pool_timeout`)
    /// and fails with `Error::PoolTimeout` when the pool has no other (`max_size(1)`). Keep
    /// what `f` needs and call the client after, or use [`Client::get_multi`], whose values
    /// are the caller's once it returns (tester finding callbacks 4). A panic in `f` reaches
    /// the caller, and the connection's next calls read their own replies.
    ///
    /// Count a value only once its key's result is `Ok(true)`: `f` is called as each value is
    /// read, and a server's exchange can still fail after it (on the text protocol, bytes read
    /// past its last reply: a duplicated reply that arrived with the real one, whose stale
    /// copy was read first); that key's result is then the error, and the value `f` saw is not
    /// its value. [`Client::get_multi`] never hands such a value out (docs/protocols.md).
    pub fn get_multi_each<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        mut f: impl FnMut(usize, &[u8], u32),
    ) -> Vec<Result<bool>> {
        let mut each = Each {
            f: |i: usize, value: &[u8], flags: u32, _| f(i, value, flags),
            results: Vec::with_capacity(keys.len()),
        };
        self.read(keys, false, None, &mut each);
        each.results
    }

    /// Like [`Client::get_multi`], with CAS uniques.
    pub fn gets_multi<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<Option<Item>>> {
        let mut items = Items::new(keys.len());
        self.read(keys, true, None, &mut items);
        items.finish()
    }

    /// A read of one key into an item.
    fn read_item(&self, key: &[u8], cas: bool, touch: Option<u32>) -> Result<Option<Item>> {
        let mut item = OneItem(Ok(None));
        self.read(&Single(key), cas, touch, &mut item);
        item.0
    }

    /// The read engine: reads `keys` (with CAS uniques when `cas`; get-and-touch with
    /// expiry `touch`), handing each value found to `sink` while it is in the read buffer
    /// (inflated first when stored compressed), then each key's result, in key order. Every
    /// other read of the client is this one with a sink of its own.
    pub fn read<K, S>(&self, keys: &K, cas: bool, touch: Option<u32>, sink: &mut S)
    where
        K: Keys + ?Sized,
        S: Sink + ?Sized,
    {
        if let Err(e) = crate::ttl::check_opt("ttl", touch) {
            // get-and-touch with an expiry memcached could not honour: nothing is sent.
            let n = keys.count();
            let op = Op::read(keys.single().is_some(), cas, true);
            let _ = self.refused::<()>(op, n, e.clone());
            (0..n).for_each(|i| sink.result(i, Err(e.clone())));
            return;
        }
        // A multi-key call of one key takes the single-key route too (one exchange, and a
        // plain read may be handed over): the same request and reply checks, a third fewer
        // instructions than the batch route's bookkeeping. Its records still say multi.
        let single = keys.single();
        let one = match single {
            Some(key) => Some(key),
            None if keys.count() == 1 => keys.key(0).ok(),
            None => None,
        };
        if let Some(key) = one {
            let start = self.call_start();
            let t = &*self.topology();
            let mut at = None;
            let found = self.read_one(t, key, cas, touch, &mut Dyn(sink), &mut at);
            let op = Op::read(single.is_some(), cas, touch.is_some());
            let found = self.finish(
                t,
                start,
                op,
                1,
                at,
                found,
                Side::Read,
                || false,
                observe::found,
            );
            sink.result(0, found);
            return;
        }
        multi_get::with_scratch(|s| {
            self.read_many(s, keys, cas, touch, sink);
            (0..keys.count()).for_each(|i| sink.result(i, s.result(i)));
        })
    }

    /// The single-key route: one exchange; true on a hit. The server asked in `at`.
    fn read_one(
        &self,
        t: &Topology,
        key: &[u8],
        cas: bool,
        touch: Option<u32>,
        sink: &mut dyn Sink,
        at: &mut Option<usize>,
    ) -> Result<bool> {
        let wire = self.wire_key(key)?;
        let req = Request::Get {
            key: &wire,
            cas,
            touch,
        };
        // Reads are resent to the next proxy (proxy-pool) while no value reached the sink; a
        // read that touches, only when it was not sent (a touch held up in a stalled proxy
        // may land after later ones).
        self.on_key_server(
            t,
            &wire,
            if touch.is_some() {
                Resend::IfUnsent
            } else {
                Resend::Always
            },
            false,
            self.deadline(),
            |t, idx, deadline| {
                *at = Some(idx);
                let server = &t.servers[idx];
                let pooled = if touch.is_none() {
                    // A plain read may be handed to a permit holder while waiting for a connection.
                    match self.acquire_or_offer(t, idx, deadline, Offer::Get(&wire, cas)) {
                        Ok(Checkout::Conn(pooled)) => pooled,
                        Ok(Checkout::Served(answer)) => {
                            let found = answer.and_then(|a| a.into_found(&server.label));
                            return match found {
                                Ok(Some((data, flags, c))) => {
                                    let handled = self.deliver(sink, key, 0, &data, flags, c);
                                    server.lookups(1, 1, usize::from(handled.is_err()));
                                    (handled.map(|()| true), Reached::Answered)
                                }
                                Ok(None) => {
                                    server.lookups(1, 0, 0);
                                    (Ok(false), Reached::Answered)
                                }
                                Err(e) => (Err(req.its_error(e)), Reached::Sent),
                            };
                        }
                        // Abandoned work handed over may have been sent: a read, no matter.
                        Err(e) => return (Err(req.its_error(e)), Reached::NotSent),
                    }
                } else {
                    match self.acquire(t, idx, deadline) {
                        Ok(pooled) => pooled,
                        Err(e) => return (Err(e), Reached::NotSent),
                    }
                };
                let mut handled = Ok(());
                let mut hit = false;
                let read = self.exchange_on(t, idx, pooled, &req, &mut |_, d, f, c| {
                    hit = true;
                    handled = self.deliver(sink, key, 0, d, f, c);
                });
                let reached = if hit {
                    Reached::Answered
                } else {
                    Reached::Sent
                };
                match read {
                    Ok(_) => {
                        server.lookups(1, usize::from(hit), usize::from(handled.is_err()));
                        (handled.map(|()| hit), reached)
                    }
                    Err(e) => (Err(e), reached),
                }
            },
        )
    }

    /// The multi-key route: leaves each key's outcome in `s.state` (see `multi_get`).
    /// Generic in the sink so that the C ABI's is inlined.
    fn read_many<K, S>(
        &self,
        s: &mut multi_get::Scratch,
        keys: &K,
        cas: bool,
        touch: Option<u32>,
        sink: &mut S,
    ) where
        K: Keys + ?Sized,
        S: Sink + ?Sized,
    {
        let dialect = &self.inner.dialect;
        let start = self.call_start();
        let op = Op::read(false, cas, touch.is_some());
        let t = &*self.topology();
        let servers = t.servers.len();
        let n = keys.count();
        // Keys with no server, per server their placement named (for the records).
        let mut unreached = Unreached::default();
        // The servers' records, handed over once every connection is back in its pool.
        let mut held = Held::default();
        // Wire keys and servers; a key that fails here has its error and no server.
        s.state.resize(n, multi_get::MISS);
        // proxy-pool: one proxy for the whole call, so every key goes in one request.
        let proxy = self.inner.proxy_pool.then(|| self.proxy(t));
        for i in 0..n {
            // Err: refused before placement; Ok(Err): no server to go to (the one named).
            let placed = keys.key(i).and_then(|key| {
                let w = self.inner.keys.wire_key_into(key, &mut s.arena)?;
                let wire = match w {
                    None => key,
                    Some((start, len)) => &s.arena[start as usize..(start + len) as usize],
                };
                let at = match &proxy {
                    Some(chosen) => chosen.clone(),
                    None => self.pick(t, wire),
                };
                Ok((w, at.map_err(|e| (self.home(t, wire), e))))
            });
            let (home, e) = match placed {
                Ok((w, Ok(idx))) => {
                    s.wire.push(w.unwrap_or((AS_GIVEN, 0)));
                    s.server.push(idx as u32);
                    continue;
                }
                Ok((_, Err((home, e)))) => (Some(home), e),
                Err(e) => (None, e),
            };
            s.wire.push((AS_GIVEN, 0));
            s.server.push(NOWHERE);
            let opened = self.opens(&e);
            if opened {
                // fail_open: the key stays a miss.
                self.count_open(t, home, &e, Side::Read, 1);
            }
            if start.is_some() {
                unreached.add(home, &e);
            }
            if !opened {
                s.fail([i], e);
            }
        }
        // A server's part that failed: fail-open applied (its keys stay misses), recorded.
        let fail_part = |s: &mut multi_get::Scratch,
                         held: &mut Held,
                         idx: usize,
                         members: Vec<usize>,
                         e: Error| {
            let opened = self.opens(&e);
            if opened {
                self.count_open(t, Some(idx), &e, Side::Read, members.len());
            }
            if let Some(st) = start {
                let o = if opened {
                    OpOutcome::FailedOpen(e.class())
                } else {
                    OpOutcome::Error(e.class())
                };
                self.hold(held, st, op, members.len(), 0, Some(idx), o, Some(&e));
            }
            if !opened {
                s.fail(members, e);
            }
        };
        let deadline = self.shared_deadline();
        // The error of each server whose part failed in this call: a later round (keys moved
        // on from a server that could not be reached) gives that server's keys its error
        // rather than wait for it again, so a hung server costs the call one I/O timeout and
        // counts one failure (tester finding partial 1: a second wait, and a second failure
        // that marked it dead). A list that allocates only when a server fails.
        let mut failed_in_call: Vec<(usize, Error)> = Vec::new();
        // Each round tries one more server for the keys whose server could not be reached
        // (`Client::fails_over`); the first round is the whole call.
        for round in 1..=FAILOVER_TRIES {
            s.group_by_server(servers);
            let mut moved: Vec<(usize, Vec<u32>, Error)> = Vec::new();
            // Phase 1: write every server's request. The writes, then the reads, of the
            // servers share one I/O timeout (`SetWait`).
            let mut writes = SetWait::default();
            let mut sent = Vec::new();
            // Connections are taken in the one order of every call (`Topology::acquire_order`).
            for &idx in &t.acquire_order {
                let range = s.starts[idx] as usize..s.starts[idx + 1] as usize;
                if range.is_empty() {
                    continue;
                }
                let sel = Selection {
                    members: &s.order[range.clone()],
                    arena: &s.arena,
                    wire: &s.wire,
                    keys,
                };
                if let Some((_, e)) = failed_in_call.iter().find(|(j, _)| *j == idx) {
                    let members = s.order[range].iter().map(|&k| k as usize);
                    fail_part(s, &mut held, idx, members.collect(), e.clone());
                    continue;
                }
                let req = Request::GetMulti {
                    keys: &sel,
                    cas,
                    touch,
                };
                let failed = match self.acquire_group(t, idx, deadline) {
                    Ok((idx, mut pooled)) => {
                        let res = pooled.with_conn(|conn| {
                            conn.in_set(&mut writes, |conn| {
                                let tag = conn.take_tags(batch_tags(range.len()));
                                dialect.encode(conn.begin(), &req, tag);
                                conn.send().map(|()| tag)
                            })
                        });
                        let res = res.map_err(|e| req.its_error(e));
                        match res {
                            Ok(tag) => {
                                sent.push((idx, pooled, range.clone(), tag));
                                None
                            }
                            Err(e) => {
                                self.release(t, idx, pooled, &Err::<(), _>(e.clone()));
                                Some(e)
                            }
                        }
                    }
                    // Nothing was sent: the keys may go on to their next server.
                    Err(e)
                        if round < FAILOVER_TRIES
                            && self.fails_over(t, idx, &e, &mut { deadline }) =>
                    {
                        moved.push((idx, s.order[range].to_vec(), e));
                        continue;
                    }
                    Err(e) => Some(e),
                };
                if let Some(e) = failed {
                    failed_in_call.push((idx, e.clone()));
                    let members = s.order[range].iter().map(|&k| k as usize);
                    fail_part(s, &mut held, idx, members.collect(), e);
                }
            }
            // Phase 2: read each server's replies, handing each hit over as it is parsed.
            let mut reads = SetWait::default();
            // Read in the list's order (every connection is held by now): the order they
            // were taken in is only there to keep calls from waiting on each other.
            sent.sort_unstable_by_key(|(idx, ..)| *idx);
            for (idx, mut pooled, range, tag) in sent {
                // Values the server sent, and those of them that did not decode (each such
                // key's result is its error, so the part's record is too: the first one).
                let mut found = 0usize;
                let mut undecoded = 0usize;
                let mut first_bad: Option<Error> = None;
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
                    keys,
                };
                let req = Request::GetMulti {
                    keys: &sel,
                    cas,
                    touch,
                };
                let res = pooled.with_conn(|conn| {
                    conn.in_set(&mut reads, |conn| {
                        dialect
                            .read(conn, &req, tag, &mut |i, data, flags, c| {
                                found += 1;
                                let k = members[i] as usize;
                                let key = keys.key(k).unwrap_or(&[]);
                                match self.deliver(sink, key, k, data, flags, c) {
                                    Ok(()) => state[k] = HIT,
                                    Err(e) => {
                                        undecoded += 1;
                                        if start.is_some() && first_bad.is_none() {
                                            first_bad = Some(e.clone());
                                        }
                                        multi_get::fail_into(state, errors, [k], e)
                                    }
                                }
                            })
                            .and_then(|_| dialect.finish(conn))
                    })
                });
                let res = res.map_err(|e| req.its_error(self.proxy_refusal(t, idx, &req, e)));
                let mut opened = false;
                match &res {
                    Ok(_) => t.servers[idx].lookups(members.len(), found, undecoded),
                    Err(e) if self.opens(e) => {
                        // fail_open: the values delivered before the failure stay the
                        // caller's, counted as hits (tester finding observe 1: they were
                        // counted nowhere); the keys not found yet answer as misses.
                        opened = true;
                        t.servers[idx].lookups(found, found, undecoded);
                        let missed = members
                            .iter()
                            .filter(|&&k| state[k as usize] == MISS)
                            .count();
                        self.count_open(t, Some(idx), e, Side::Read, missed);
                    }
                    Err(e) => {
                        let keys = members.iter().map(|&k| k as usize);
                        multi_get::fail_into(state, errors, keys, e.clone());
                    }
                }
                if let Err(e) = &res {
                    failed_in_call.push((idx, e.clone()));
                }
                let asked = members.len();
                self.release(t, idx, pooled, &res);
                if let Some(st) = start {
                    // Hits: the values the caller got (none when the error fails every key).
                    let hits = if res.is_err() && !opened {
                        0
                    } else {
                        found - undecoded
                    };
                    let (o, e) = match (&res, &first_bad) {
                        (Ok(_), Some(bad)) => (OpOutcome::Error(bad.class()), Some(bad)),
                        (Ok(_), None) => (observe::multi(Side::Read, asked, hits), None),
                        (Err(e), _) if opened => (OpOutcome::FailedOpen(e.class()), Some(e)),
                        (Err(e), _) => (OpOutcome::Error(e.class()), Some(e)),
                    };
                    self.hold(&mut held, st, op, asked, hits, Some(idx), o, e);
                }
            }
            if moved.is_empty() {
                break;
            }
            // The next round: only the moved keys, each to the server the policy now picks.
            s.server.iter_mut().for_each(|j| *j = NOWHERE);
            s.order.clear();
            s.starts.clear();
            s.cursor.clear();
            for (idx, members, e) in moved {
                let mut stay = Vec::new();
                for &k in &members {
                    let one = [k];
                    let sel = Selection {
                        members: &one,
                        arena: &s.arena,
                        wire: &s.wire,
                        keys,
                    };
                    match self.pick(t, sel.key(0)) {
                        Ok(j) => s.server[k as usize] = j as u32,
                        Err(_) => stay.push(k as usize),
                    }
                }
                self.count_failover(t, idx, members.len() - stay.len());
                if !stay.is_empty() {
                    fail_part(s, &mut held, idx, stay, e);
                }
            }
        }
        self.report(t, held);
        self.record_unreached(t, start, op, unreached);
    }

    /// Hands one value of key `index` (`key`, the caller's) to `sink`, decoded by the
    /// client's value format (see `sink::deliver`).
    #[inline]
    fn deliver<S: Sink + ?Sized>(
        &self,
        sink: &mut S,
        key: &[u8],
        index: usize,
        data: &[u8],
        flags: u32,
        cas: Option<u64>,
    ) -> Result<()> {
        sink::deliver(sink, &self.values(), key, index, data, flags, cas)
    }
}

/// A sink of any size behind one that is `Sized`, so it can be passed as `dyn Sink`.
struct Dyn<'s, S: ?Sized>(&'s mut S);

impl<S: Sink + ?Sized> Sink for Dyn<'_, S> {
    #[inline]
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        self.0.value(i, value, flags, cas)
    }
    #[inline]
    fn result(&mut self, i: usize, result: Result<bool>) {
        self.0.result(i, result)
    }
    #[inline]
    fn arena(&mut self) -> Option<&mut Vec<u8>> {
        self.0.arena()
    }
    #[inline]
    fn appended(&mut self, i: usize, start: usize, flags: u32, cas: Option<u64>) -> Result<()> {
        self.0.appended(i, start, flags, cas)
    }
    fn undeliverable(
        &mut self,
        i: usize,
        stored: &[u8],
        stored_flags: u32,
        cas: Option<u64>,
        err: Error,
    ) -> Result<()> {
        self.0.undeliverable(i, stored, stored_flags, cas, err)
    }
}

/// [`Client::get_or_stored`]'s sink: one item, delivered or as stored.
struct OrStored {
    item: OneItem,
    form: Form,
}

impl Sink for OrStored {
    fn value(&mut self, i: usize, value: &[u8], flags: u32, cas: Option<u64>) -> Result<()> {
        self.item.value(i, value, flags, cas)
    }
    fn owns_values(&self) -> bool {
        self.item.owns_values()
    }
    fn value_owned(
        &mut self,
        i: usize,
        value: Vec<u8>,
        flags: u32,
        cas: Option<u64>,
    ) -> Result<()> {
        self.item.value_owned(i, value, flags, cas)
    }
    fn result(&mut self, i: usize, result: Result<bool>) {
        self.item.result(i, result)
    }
    fn undeliverable(
        &mut self,
        i: usize,
        stored: &[u8],
        stored_flags: u32,
        cas: Option<u64>,
        _err: Error,
    ) -> Result<()> {
        self.form = Form::AsStored;
        self.item.value(i, stored, stored_flags, cas)
    }
}
