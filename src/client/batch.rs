//! Batches of single-key commands (stores of every kind, deletes): per server, every request written in one
//! go (closed by a barrier where the dialect has one), then every reply read. One
//! outcome per item, in the caller's order.

use super::observe::{self, Held, Side, Unreached};
use super::place::FAILOVER_TRIES;
use super::{Client, Topology};
use crate::conn::SetWait;
use crate::dialect::{batch_tags, Outcome, Request};
use crate::error::Error;
use crate::error::Result;
use crate::item::StoreOutcome;
use crate::key::Keys;
use crate::proto::ascii::StoreCommand;
use crate::set_item::SetItem;
use crate::trace::{Op, OpOutcome};
use std::borrow::Cow;

/// A store prepared for the wire: key, encoded data, flags.
type WireItem<'a> = (Cow<'a, [u8]>, Cow<'a, [u8]>, u32);

impl Client {
    /// Stores many items, pipelined per server (every store answered; on binary closed by
    /// a barrier). One outcome per item, in
    /// order; a store the server refuses (`SERVER_ERROR`, e.g. a value too large for an item:
    /// [`Error::TooLargeForServer`]) fails alone, the others get their own replies.
    pub fn set_multi<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &[(K, V)],
        ttl: u32,
    ) -> Vec<Result<StoreOutcome>> {
        self.store_prepared(&self.prepare_items(items, ttl), ttl)
    }

    /// Stores many items, pipelined per server as [`Client::set_multi`] (one round trip per
    /// server), each with its own flags, expiry and compression decision. One outcome per
    /// item, in order; an item refused before any I/O (bad key, too large) fails alone.
    pub fn set_multi_items(&self, items: &[SetItem<'_>]) -> Vec<Result<StoreOutcome>> {
        self.store_multi_items(StoreCommand::Set, items)
    }

    /// Any store command over many items, pipelined per server as [`Client::set_multi`] (one
    /// round trip per server): `add`,
    /// `replace`, `append`, `prepend` (never compressed; the expiry and [`SetItem::flags`]
    /// ignored, as memcached keeps the stored item's),
    /// or `cas` (each item compared with its own [`SetItem::cas`]; the number inside
    /// `StoreCommand::Cas` is not used; an item whose CAS is 0 fails alone with
    /// `Error::InvalidArgument`, as [`Client::cas`]). Outcomes as the single commands answer them
    /// (`NotStored`, `Exists`, `NotFound`), one per item, in order; an item refused before
    /// any I/O (bad key, too large) fails alone.
    pub fn store_multi_items(
        &self,
        cmd: StoreCommand,
        items: &[SetItem<'_>],
    ) -> Vec<Result<StoreOutcome>> {
        let cmd_of = |it: &SetItem<'_>| match cmd {
            StoreCommand::Cas(_) => StoreCommand::Cas(it.cas),
            c => c,
        };
        let mut prepared: Vec<Result<(WireItem, u32, StoreCommand)>> = items
            .iter()
            .map(|it| {
                let wire = self.wire_key(it.key)?;
                let (data, flags) = match it.kind {
                    None => self.encode_value_as(cmd, it.key, it.value, it.flags, it.compress)?,
                    Some(kind) => self.encode_kind(cmd, it.key, kind, it.value, it.compress)?,
                };
                // after the value's own refusals, as the single store checks it (an item
                // with two faults gets the same one: tester finding retest19 5)
                crate::dialect::check_cas(cmd_of(it))?;
                // the time last, as the single store checks it (tester finding retest38 3)
                crate::ttl::check("ttl", it.ttl)?;
                Ok(((wire, data, flags), it.ttl, cmd_of(it)))
            })
            .collect();
        if cmd == StoreCommand::Set {
            self.delete_refused_sets(items.iter().map(|it| it.key), &mut prepared);
        }
        let like = store_request(cmd, b"", b"", 0, 0, false);
        self.batch(
            &BatchKind {
                op: Op::store_multi(cmd),
                redo_moved: cmd == StoreCommand::Set,
                fails_open: cmd.fails_open(),
                ..STORES
            },
            &prepared,
            |item| &item.0 .0,
            &like,
            |((k, d, f), ttl, c)| store_request(*c, k, d, *f, *ttl, false),
        )
        .into_iter()
        .map(|r| r.and_then(Outcome::stored))
        .collect()
    }

    /// Stores many items without waiting for each reply (`noreply` on text; on meta and
    /// binary, and under the `proxy-pool` distribution, it is [`Client::set_multi`]), then one
    /// barrier round trip per server to learn that every command was read. Fastest for bulk loads; returns the first failure, if
    /// any (on text, memcached does not report a `noreply` store it refuses, e.g. a value
    /// too large for an item). An item refused before sending (a bad key, a value over
    /// `max_value_size`) fails alone on every protocol, and so do the keys of a server
    /// marked dead (their error is the call's unless `fail_open`): the others are stored.
    pub fn set_multi_noreply<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &[(K, V)],
        ttl: u32,
    ) -> Result<()> {
        let dialect = &self.inner.dialect;
        if dialect.batches_tagged() || self.inner.proxy_pool {
            // Meta and binary answer every store of a batch (docs/protocols.md: a quiet
            // one's success could not be told from a reply skipped). Through a proxy the barrier
            // proves nothing of the stores (it goes to one backend, the stores to theirs,
            // and one on a dead backend is dropped unanswered): every store is answered
            // (tester finding noreply 2).
            return self
                .set_multi(items, ttl)
                .into_iter()
                .find_map(Result::err)
                .map_or(Ok(()), Err);
        }
        let start = self.call_start();
        let prepared = self.prepare_items(items, ttl);
        let mut first_err = None;
        let t = &*self.topology();
        // An item refused before sending (a bad key, a value too large) fails alone, as in
        // `set_multi` on every protocol: the others are sent (tester finding batches 4: on
        // text one refused item kept the whole batch from being sent, on meta and binary
        // not), and the first refusal is the call's error unless an earlier item failed.
        let refused = prepared.iter().filter(|r| r.is_err()).count();
        if let Some(e) = prepared.iter().find_map(|r| r.as_ref().err()) {
            if let Some(start) = start {
                let outcome = OpOutcome::Error(e.class());
                self.record(
                    t,
                    start,
                    Op::SetMultiNoreply,
                    refused,
                    0,
                    None,
                    outcome,
                    Some(e),
                );
            }
            first_err = Some(e.clone());
        }
        let (groups, unplaced) = self.group(t, &prepared, |item| &item.0);
        let mut unreached = Unreached::default();
        if let Some((_, _, e)) = unplaced.first() {
            // The keys of a dead server are not stored (a record per dead server with its
            // keys); the live servers' keys are sent, as `set_multi` sends them on every
            // protocol (tester finding retest15 2: on text nothing was sent). Without
            // fail_open the dead server's error is the call's, unless an item failed first.
            let opens = self.opens(e);
            if !opens {
                first_err.get_or_insert_with(|| e.clone());
            }
            for (_, home, e) in &unplaced {
                if opens {
                    self.count_open(t, Some(*home), e, Side::Write, 1);
                }
                if start.is_some() {
                    unreached.add(Some(*home), e);
                }
            }
        }
        // Each group with the servers its items have tried: the items of a server that could
        // not be reached go on to their next server as groups of their own
        // (`Client::fails_over`).
        let mut work: std::collections::VecDeque<(usize, Vec<usize>, usize)> =
            groups.into_iter().map(|(idx, m)| (idx, m, 1)).collect();
        // The server each item was sent to, and whether a server left the placement during
        // the call: as in `batch`, an item a server ejected meanwhile moved is sent once more
        // where the next read looks (tester finding noreply 1).
        let mut sent_to: Vec<Option<usize>> = vec![None; prepared.len()];
        let mut placement_changed = false;
        let mut redone = false;
        loop {
            while let Some((idx, members, tries)) = work.pop_front() {
                let mut deadline = self.deadline();
                let mut n = members.len();
                let res = match self.acquire(t, idx, deadline) {
                    Err(e)
                        if tries < FAILOVER_TRIES && self.fails_over(t, idx, &e, &mut deadline) =>
                    {
                        placement_changed = true;
                        let (placed, unplaced) =
                            self.group_some(t, &prepared, members, |item| &item.0);
                        self.count_failover(t, idx, n - unplaced.len());
                        work.extend(placed.into_iter().map(|(j, m)| (j, m, tries + 1)));
                        if unplaced.is_empty() {
                            continue;
                        }
                        n = unplaced.len();
                        Err(e)
                    }
                    Err(e) => Err(e),
                    // Text only (tagged dialects returned above): `noreply` stores, then `version`.
                    Ok(mut pooled) => {
                        for &i in &members {
                            sent_to[i] = Some(idx);
                        }
                        let res = pooled.with_conn(|conn| {
                            let tag = conn.take_tags(1);
                            let buf = conn.begin();
                            for (k, d, f) in
                                members.iter().filter_map(|&i| prepared[i].as_ref().ok())
                            {
                                let req = set_request(k, d, *f, ttl, true);
                                dialect.encode(buf, &req, tag);
                            }
                            let last = buf.len();
                            dialect.encode_barrier(buf, tag);
                            conn.send_batch(last)?;
                            dialect.read_barrier(conn, tag).map_err(barrier_refused)?;
                            conn.finish_read_whole()
                        });
                        self.release(t, idx, pooled, &res);
                        res
                    }
                };
                let res = self.finish(
                    t,
                    start,
                    Op::SetMultiNoreply,
                    n,
                    Some(idx),
                    res,
                    Side::Write,
                    || (),
                    // memcached answers nothing to a noreply store: sent, not known stored
                    // (tester finding observability 4: hits said every item was stored)
                    |_| (OpOutcome::Ok, 0),
                );
                if let Err(e) = res {
                    first_err.get_or_insert(e);
                }
            }
            if redone || !placement_changed {
                break;
            }
            redone = true;
            let moved = self.moved_since_sent(t, &prepared, &sent_to, |_| true, |item| &item.0);
            work.extend(moved.into_iter().map(|(j, m)| (j, m, FAILOVER_TRIES)));
            if work.is_empty() {
                break;
            }
        }
        self.record_unreached(t, start, Op::SetMultiNoreply, unreached);
        first_err.map_or(Ok(()), Err)
    }

    /// Deletes many keys, pipelined per server: for each, true if it existed.
    pub fn delete_multi<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<bool>> {
        self.delete_keys(keys)
    }

    /// [`Client::delete_multi`] over any [`Keys`] (a key that is refused fails alone).
    pub fn delete_keys<K: Keys + ?Sized>(&self, keys: &K) -> Vec<Result<bool>> {
        let prepared: Vec<Result<Cow<[u8]>>> = (0..keys.count())
            .map(|i| keys.key(i).and_then(|k| self.wire_key(k)))
            .collect();
        let like = Request::Delete {
            version: None,
            key: b"",
            quiet: false,
        };
        self.batch(
            &DELETES,
            &prepared,
            |k| k,
            &like,
            |k| Request::Delete {
                key: k,
                quiet: false,
                version: None,
            },
        )
        .into_iter()
        .map(|r| r.and_then(Outcome::existed))
        .collect()
    }

    /// Sets each key's expiry (`(key, ttl)` pairs), pipelined per server (one round trip
    /// per server): for each, true if it existed.
    pub fn touch_multi<K: AsRef<[u8]>>(&self, items: &[(K, u32)]) -> Vec<Result<bool>> {
        let prepared: Vec<Result<(Cow<[u8]>, u32)>> = items
            .iter()
            .map(|(k, ttl)| {
                let wire = self.wire_key(k.as_ref())?;
                Ok((wire, crate::ttl::check("ttl", *ttl)?))
            })
            .collect();
        let like = Request::Touch { key: b"", ttl: 0 };
        self.batch(
            &TOUCHES,
            &prepared,
            |(k, _)| k,
            &like,
            |(k, ttl)| Request::Touch { key: k, ttl: *ttl },
        )
        .into_iter()
        .map(|r| r.and_then(Outcome::existed))
        .collect()
    }

    /// Adds (`incr`) or subtracts each `(key, delta)`, pipelined per server (one round trip
    /// per server): for each the new value, or `None` when the key is missing, as
    /// [`Client::incr`] / [`Client::decr`].
    pub fn arith_multi<K: AsRef<[u8]>>(
        &self,
        incr: bool,
        items: &[(K, u64)],
    ) -> Vec<Result<Option<u64>>> {
        let prepared: Vec<Result<(Cow<[u8]>, u64)>> = items
            .iter()
            .map(|(k, delta)| Ok((self.wire_key(k.as_ref())?, *delta)))
            .collect();
        let like = Request::Arith {
            version: None,
            incr,
            key: b"",
            delta: 0,
            init: None,
        };
        self.batch(
            if incr { &INCRS } else { &DECRS },
            &prepared,
            |(k, _)| k,
            &like,
            |(k, delta)| Request::Arith {
                version: None,
                incr,
                key: k,
                delta: *delta,
                init: None,
            },
        )
        .into_iter()
        .map(|r| r.and_then(Outcome::counter))
        .collect()
    }

    /// Pipelined sets of prepared items (see `batch`).
    fn store_prepared(&self, prepared: &[Result<WireItem>], ttl: u32) -> Vec<Result<StoreOutcome>> {
        let like = set_request(b"", b"", 0, ttl, false);
        self.batch(
            &STORES,
            prepared,
            |item| &item.0,
            &like,
            |(k, d, f)| set_request(k, d, *f, ttl, false),
        )
        .into_iter()
        .map(|r| r.and_then(Outcome::stored))
        .collect()
    }

    /// A set prepared for the wire: key checked and prefixed, value compressed if due.
    fn prepare_item<'a>(&self, key: &'a [u8], value: &'a [u8], flags: u32) -> Result<WireItem<'a>> {
        let wire = self.wire_key(key)?;
        let (data, flags) = self.encode_value(StoreCommand::Set, key, value, flags)?;
        Ok((wire, data, flags))
    }

    /// Items to set with `ttl`, each prepared (see `prepare_item`); with a `ttl` memcached
    /// could not honour (`crate::ttl`) every item whose key is valid fails with that error.
    fn prepare_items<'a, K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &'a [(K, V)],
        ttl: u32,
    ) -> Vec<Result<WireItem<'a>>> {
        if let Err(e) = crate::ttl::check("ttl", ttl) {
            let keys: Vec<&[u8]> = items.iter().map(|(k, _)| k.as_ref()).collect();
            return self
                .refused_for_ttl(StoreCommand::Set, &keys, e)
                .into_iter()
                .map(Err)
                .collect();
        }
        items
            .iter()
            .map(|(k, v)| self.prepare_item(k.as_ref(), v.as_ref(), 0))
            .collect()
    }

    /// [`Client::store_ttl_checked`] for a batch of stores by `cmd` whose keys share one
    /// signed time `seconds` (a binding's `set_multi` given its caller's time): `Ok` with the
    /// `u32` the stores take (no I/O), or one error per key: the time's refusal (the number
    /// named as given), or the key's own when it could not be sent; for a `set` every valid
    /// key deleted in one batch, each message saying so and whether the batch's other keys
    /// so refused went too, as [`Client::set_multi`]'s do (tester finding retest40 2: a
    /// binding checking the time key by key said nothing of the others).
    pub fn store_ttl_checked_multi<K: AsRef<[u8]>>(
        &self,
        cmd: StoreCommand,
        keys: &[K],
        seconds: i64,
    ) -> std::result::Result<u32, Vec<Error>> {
        crate::ttl::checked_from_signed("ttl", seconds).map_err(|e| {
            let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
            self.refused_for_ttl(cmd, &keys, e)
        })
    }

    /// Each key's error in a batch of stores by `cmd` refused for its one ttl (`e`): the
    /// key's own when it cannot be sent, else `e`; for a `set` the valid keys deleted, as a
    /// set so refused deletes its key, in one batch for all (`delete_refused_sets`).
    fn refused_for_ttl(&self, cmd: StoreCommand, keys: &[&[u8]], e: Error) -> Vec<Error> {
        let mut refused: Vec<Result<()>> = keys
            .iter()
            .map(|k| {
                self.wire_key(k)?;
                Err(e.clone())
            })
            .collect();
        if cmd == StoreCommand::Set {
            self.delete_refused_sets(keys.iter().copied(), &mut refused);
        }
        refused
            .into_iter()
            .map(|r| r.err().unwrap_or_else(|| e.clone()))
            .collect()
    }

    /// The sets among `prepared` (one per key of `keys`) refused for their ttl, each key
    /// deleted as a set so refused deletes it, all in one batch, and each error saying so
    /// and whether the batch's other keys so refused went too (tester note retest38: a
    /// batch's first message, which C and the CLI report, named one key deleted).
    fn delete_refused_sets<'k, T>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
        prepared: &mut [Result<T>],
    ) {
        let refused: Vec<(usize, &[u8])> = keys
            .zip(prepared.iter())
            .enumerate()
            .filter(|(_, (_, p))| matches!(p, Err(Error::InvalidArgument { what: "ttl", .. })))
            .map(|(i, (k, _))| (i, k))
            .collect();
        if refused.is_empty() {
            return;
        }
        let ks: Vec<&[u8]> = refused.iter().map(|&(_, k)| k).collect();
        let results = self.delete_multi(&ks);
        let done = results.iter().filter(|r| r.is_ok()).count();
        let n = refused.len();
        for (&(i, _), d) in refused.iter().zip(results) {
            let others = (n > 1).then(|| (done.saturating_sub(usize::from(d.is_ok())), n - 1));
            if let Err(e) = &prepared[i] {
                prepared[i] = Err(super::commands::set_refused_and_deleted(e, d, others));
            }
        }
    }

    /// The items sent (`sent_to`: the server each went to) and `done` whose server the
    /// placement no longer picks (a server left it during the call), grouped by the server it
    /// picks now: what a batch sends once more where the next read looks.
    fn moved_since_sent<P>(
        &self,
        t: &Topology,
        prepared: &[Result<P>],
        sent_to: &[Option<usize>],
        done: impl Fn(usize) -> bool,
        key_of: impl Fn(&P) -> &[u8],
    ) -> Vec<(usize, Vec<usize>)> {
        let sent = (0..prepared.len()).filter(|&i| sent_to[i].is_some() && done(i));
        let (placed, _) = self.group_some(t, prepared, sent, key_of);
        placed
            .into_iter()
            .filter_map(|(j, m)| {
                let m: Vec<usize> = m.into_iter().filter(|&i| sent_to[i] != Some(j)).collect();
                (!m.is_empty()).then_some((j, m))
            })
            .collect()
    }

    /// A pipelined batch of single-key requests like `like`: per server, every request
    /// (`request(item)`) written in one go (closed by a barrier where the dialect has one),
    /// then every reply read: each request is answered (docs/protocols.md).
    fn batch<'p, P: 'p>(
        &self,
        kind: &BatchKind,
        prepared: &'p [Result<P>],
        key_of: impl Fn(&P) -> &[u8],
        like: &Request<'_>,
        request: impl for<'r> Fn(&'r P) -> Request<'r>,
    ) -> Vec<Result<Outcome>> {
        let dialect = &self.inner.dialect;
        let start = self.call_start();
        let tagged = dialect.batches_tagged();
        let mut results: Vec<Option<Result<Outcome>>> = prepared
            .iter()
            .map(|r| r.as_ref().err().map(|e| Err(e.clone())))
            .collect();
        let t = &*self.topology();
        let opens = |e: &Error| kind.fails_open && self.opens(e);
        // fail_open: a server's error as each of its items' answer.
        let open = |results: &mut [Option<Result<Outcome>>], i: usize, e: &Error| {
            results[i] = Some(if opens(e) {
                Ok((kind.opened)())
            } else {
                Err(e.clone())
            });
        };
        let (groups, unplaced) = self.group(t, prepared, &key_of);
        // The keys with no server, per server their placement named (for the records).
        let mut unreached = Unreached::default();
        // The servers' records, handed over once every connection is back in its pool.
        let mut held = Held::default();
        for (i, home, e) in unplaced {
            if opens(&e) {
                self.count_open(t, Some(home), &e, Side::Write, 1);
            }
            if start.is_some() {
                unreached.add(Some(home), &e);
            }
            open(&mut results, i, &e);
        }
        if start.is_some() {
            for e in prepared.iter().filter_map(|p| p.as_ref().err()) {
                unreached.add(None, e);
            }
        }
        // A server's part that failed: fail-open applied, recorded.
        let fail_part = |results: &mut [Option<Result<Outcome>>],
                         held: &mut Held,
                         idx: usize,
                         members: &[usize],
                         e: &Error| {
            let opened = opens(e);
            if opened {
                self.count_open(t, Some(idx), e, Side::Write, members.len());
            }
            for &i in members {
                open(results, i, e);
            }
            if let Some(st) = start {
                let o = if opened {
                    OpOutcome::FailedOpen(e.class())
                } else {
                    OpOutcome::Error(e.class())
                };
                self.hold(held, st, kind.op, members.len(), 0, Some(idx), o, Some(e));
            }
        };
        let deadline = self.shared_deadline();
        let mut groups = groups;
        // The server each item was sent to, and whether a server left the placement (its
        // items moved on) during the call.
        let mut sent_to: Vec<Option<usize>> = vec![None; prepared.len()];
        let mut placement_changed = false;
        let mut redone = false;
        // The error of each server whose part failed in this call: a later round (items moved
        // on from another server, or done once more) gives it that error rather than wait for
        // it again, so a hung server costs the call one I/O timeout and counts one failure
        // (tester finding partial 1: a second wait, and a second failure that marked it dead).
        // (a list that allocates only when a server fails: this is every batch's path)
        let mut failed: Vec<(usize, Error)> = Vec::new();
        loop {
            // Each round tries one more server for the items whose server could not be reached
            // (`Client::fails_over`); the first round is the whole call.
            for round in 1..=FAILOVER_TRIES {
                let mut sent = Vec::with_capacity(groups.len());
                let mut moved = Vec::new();
                // The writes, then the reads, of the servers share one I/O timeout (`SetWait`).
                let mut writes = SetWait::default();
                // Connections are taken in the one order of every call (`Topology::acquire_order`).
                groups.sort_unstable_by_key(|(idx, _)| t.acquire_key(*idx));
                for (idx, members) in groups {
                    if let Some((_, e)) = failed.iter().find(|(j, _)| *j == idx) {
                        fail_part(&mut results, &mut held, idx, &members, e);
                        continue;
                    }
                    let res = match self.acquire_group(t, idx, deadline) {
                        Err(e) => {
                            // Nothing was sent: the items may go on to their next server.
                            if round < FAILOVER_TRIES
                                && self.fails_over(t, idx, &e, &mut { deadline })
                            {
                                moved.push((idx, members, e));
                                continue;
                            }
                            Err(e)
                        }
                        Ok((idx, mut pooled)) => {
                            // A cas among them: the binary dialect asks first whether the
                            // server keeps CAS uniques (`Dialect::require_cas`).
                            let cas = members.iter().any(|&i| {
                                prepared[i].as_ref().is_ok_and(|it| request(it).is_cas())
                            });
                            let res = pooled.with_conn(|conn| {
                                if cas {
                                    dialect.require_cas(conn)?;
                                }
                                conn.in_set(&mut writes, |conn| {
                                    let n = members.len();
                                    let tag = conn.take_tags(batch_tags(n));
                                    let buf = conn.begin();
                                    let mut last = 0;
                                    for (k, &i) in members.iter().enumerate() {
                                        if let Ok(item) = &prepared[i] {
                                            let req = request(item);
                                            last = buf.len();
                                            dialect.encode(buf, &req, tag.wrapping_add(k as u32));
                                        }
                                    }
                                    if tagged {
                                        let end = buf.len();
                                        dialect.encode_barrier(buf, tag.wrapping_add(n as u32));
                                        // Meta's barrier is the last request itself (empty here).
                                        if buf.len() > end {
                                            last = end;
                                        }
                                    }
                                    conn.send_batch(last).map(|()| tag)
                                })
                            });
                            match res {
                                Ok(tag) => Ok((idx, pooled, tag)),
                                Err(e) => {
                                    self.release(t, idx, pooled, &Err::<(), _>(e.clone()));
                                    Err(e)
                                }
                            }
                        }
                    };
                    match res {
                        Ok((idx, pooled, tag)) => {
                            for &i in &members {
                                sent_to[i] = Some(idx);
                            }
                            sent.push((idx, pooled, members, tag))
                        }
                        Err(e) => {
                            fail_part(&mut results, &mut held, idx, &members, &e);
                            failed.push((idx, e));
                        }
                    }
                }
                let mut reads = SetWait::default();
                // Read in the list's order (every connection is held by now): the order they
                // were taken in is only there to keep calls from waiting on each other.
                sent.sort_unstable_by_key(|(idx, ..)| *idx);
                for (idx, mut pooled, members, tag) in sent {
                    let res = pooled.with_conn(|conn| {
                        conn.in_set(&mut reads, |conn| {
                            dialect
                                .read_batch(conn, like, tag, members.len(), &mut |k, r| {
                                    results[members[k]] = Some(r);
                                })
                                .and_then(|()| conn.finish_read_whole())
                        })
                    });
                    // The outcomes read stand, unless the error that ended the reading puts them
                    // in doubt (`Dialect::error_voids_earlier_replies`: bytes past the last reply
                    // of a text batch, a reply sent twice, shift every later one onto the wrong
                    // item): then every item gets the error.
                    if res
                        .as_ref()
                        .is_err_and(|e| dialect.error_voids_earlier_replies(e))
                    {
                        for &i in &members {
                            results[i] = None;
                        }
                    }
                    // The items the server answered with an error of their own (a
                    // SERVER_ERROR: a value too large for it) count as a single store's reply
                    // counts, and the server's record is the first such error, as a multi-key
                    // read's undecodable value is (tester finding topology 1: the record said
                    // not_stored or miss, and no counter moved).
                    let mut refused: Option<Error> = None;
                    for &i in &members {
                        if let Some(Err(e)) = &results[i] {
                            t.servers[idx].count_refused(e);
                            refused.get_or_insert_with(|| e.clone());
                        }
                    }
                    let mut opened = 0;
                    if let Err(e) = &res {
                        // The items whose own reply was not read get the error; an item
                        // answered with an error of its own (a SERVER_ERROR) keeps it.
                        for &i in &members {
                            if results[i].is_none() {
                                opened += usize::from(opens(e));
                                open(&mut results, i, e);
                            }
                        }
                        if opened > 0 {
                            self.count_open(t, Some(idx), e, Side::Write, opened);
                        }
                        failed.push((idx, e.clone()));
                    }
                    self.release(t, idx, pooled, &res);
                    if let Some(st) = start {
                        let hits = members
                            .iter()
                            .filter(|&&i| matches!(&results[i], Some(Ok(o)) if (kind.positive)(o)))
                            .count();
                        let n = members.len();
                        let (o, e) = match (&res, &refused) {
                            (Ok(_), Some(bad)) => (OpOutcome::Error(bad.class()), Some(bad)),
                            (Ok(_), None) => ((kind.summary)(n, hits), None),
                            (Err(e), _) if opened > 0 => {
                                (OpOutcome::FailedOpen(e.class()), Some(e))
                            }
                            (Err(e), _) => (OpOutcome::Error(e.class()), Some(e)),
                        };
                        self.hold(&mut held, st, kind.op, n, hits, Some(idx), o, e);
                    }
                }
                if moved.is_empty() {
                    break;
                }
                placement_changed = true;
                // The items of each unreachable server, to the servers the policy now picks.
                let mut by_server: Vec<Vec<usize>> = vec![Vec::new(); t.servers.len()];
                for (idx, members, e) in moved {
                    let count = members.len();
                    let (placed, unplaced) = self.group_some(t, prepared, members, &key_of);
                    self.count_failover(t, idx, count - unplaced.len());
                    for (j, m) in placed {
                        by_server[j].extend(m);
                    }
                    if !unplaced.is_empty() {
                        let stay: Vec<usize> = unplaced.into_iter().map(|(i, _, _)| i).collect();
                        fail_part(&mut results, &mut held, idx, &stay, &e);
                    }
                }
                groups = by_server
                    .into_iter()
                    .enumerate()
                    .filter(|(_, m)| !m.is_empty())
                    .collect();
            }
            // Under `eject` the table without a server that died during the call moves keys of
            // live servers too (most of them for a modulo profile): an item set or deleted on
            // its server before the move would be read, from the next call on, where the key
            // lives now, which holds an older copy or none (tester finding noreply 1). Such items
            // are done once more there, in one more round; the others (add, cas, incr, touch...)
            // are answered by the server they reached (docs/failover.md).
            if redone || !placement_changed || !kind.redo_moved {
                break;
            }
            redone = true;
            let done = |i: usize| matches!(results[i], Some(Ok(_)));
            groups = self.moved_since_sent(t, prepared, &sent_to, done, &key_of);
            if groups.is_empty() {
                break;
            }
            for (_, m) in &groups {
                for &i in m {
                    results[i] = None;
                }
            }
        }
        self.report(t, held);
        self.record_unreached(t, start, kind.op, unreached);
        results
            .into_iter()
            .zip(prepared)
            .map(|(r, item)| match (r, item) {
                (Some(r), _) => r,
                (None, Ok(item)) => {
                    let e = self.dead_error(t, key_of(item));
                    if opens(&e) {
                        self.count_open(t, None, &e, Side::Write, 1);
                        Ok((kind.opened)())
                    } else {
                        Err(e)
                    }
                }
                (None, Err(e)) => Err(e.clone()),
            })
            .collect()
    }
}

/// What a batch is: its operation, the answer of an item that failed open, which answers
/// count as hits, and a server's part's outcome from its item and hit counts.
struct BatchKind {
    op: Op,
    /// Whether an item done on a server that the placement no longer picks for it by the
    /// end of the call (a server ejected meanwhile moved it) is done again on its new
    /// server: the commands whose repetition is their own outcome (set, delete).
    redo_moved: bool,
    /// Whether `fail_open` applies (not to `cas`, see [`StoreCommand::fails_open`]).
    fails_open: bool,
    opened: fn() -> Outcome,
    positive: fn(&Outcome) -> bool,
    summary: fn(usize, usize) -> OpOutcome,
}

const STORES: BatchKind = BatchKind {
    op: Op::SetMulti,
    redo_moved: true,
    fails_open: true,
    opened: || Outcome::Stored(StoreOutcome::NotStored),
    positive: |o| matches!(o, Outcome::Stored(StoreOutcome::Stored)),
    summary: |n, hits| observe::multi(Side::Write, n, hits),
};

static DELETES: BatchKind = BatchKind {
    op: Op::DeleteMulti,
    redo_moved: true,
    fails_open: true,
    opened: || Outcome::Existed(false),
    positive: |o| matches!(o, Outcome::Existed(true)),
    summary: |n, hits| observe::multi(Side::Read, n, hits),
};

static TOUCHES: BatchKind = BatchKind {
    op: Op::TouchMulti,
    redo_moved: false,
    fails_open: true,
    opened: || Outcome::Existed(false),
    positive: |o| matches!(o, Outcome::Existed(true)),
    summary: |n, hits| observe::multi(Side::Read, n, hits),
};

static INCRS: BatchKind = BatchKind {
    redo_moved: false,
    op: Op::IncrMulti,
    fails_open: true,
    opened: || Outcome::Counter(None),
    positive: |o| matches!(o, Outcome::Counter(Some(_))),
    summary: |n, hits| observe::multi(Side::Read, n, hits),
};

static DECRS: BatchKind = BatchKind {
    redo_moved: false,
    op: Op::DecrMulti,
    fails_open: true,
    opened: || Outcome::Counter(None),
    positive: |o| matches!(o, Outcome::Counter(Some(_))),
    summary: |n, hits| observe::multi(Side::Read, n, hits),
};

/// A plain `set` of a prepared item.
fn set_request<'r>(
    key: &'r [u8],
    data: &'r [u8],
    flags: u32,
    ttl: u32,
    quiet: bool,
) -> Request<'r> {
    store_request(StoreCommand::Set, key, data, flags, ttl, quiet)
}

/// A store command of a prepared item.
fn store_request<'r>(
    cmd: StoreCommand,
    key: &'r [u8],
    data: &'r [u8],
    flags: u32,
    ttl: u32,
    quiet: bool,
) -> Request<'r> {
    Request::Store {
        version: None,
        cmd,
        key,
        flags,
        ttl,
        data,
        quiet,
    }
}

/// The error of a `SERVER_ERROR` answering the barrier (`version`) that closes a text
/// `noreply` batch: memcached never answers `version` so, a proxy in front of a dead backend
/// does (nutcracker: tester finding noreply 2), and the stores' outcome is then unknown.
fn barrier_refused(e: Error) -> Error {
    match e {
        Error::Server { server, message } => Error::Server {
            server,
            message: format!(
                "{message} (the answer to the `version` that closes a noreply batch: whether \
                 the stores were done is unknown; through a proxy use distribution \
                 proxy-pool, which waits for each store's reply, or set_multi)"
            ),
        },
        // `ERROR` or `CLIENT_ERROR` before the barrier's answer: a store of the batch was
        // refused (memcached answers a malformed store even under noreply), not the
        // `version` (tester finding hostile3 5: "the server did not understand version").
        Error::Client { server, message } => {
            let said = if message.starts_with("ERROR (") {
                "ERROR"
            } else {
                message.as_str()
            };
            Error::Client {
                message: format!(
                    "{said} (read in a noreply batch where the `version` that closes it was \
                     answered: a store of the batch was refused, and whether the others were \
                     done is unknown)"
                ),
                server,
            }
        }
        e => e,
    }
}
