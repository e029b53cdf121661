//! Batches of single-key commands (sets, deletes): per server, every request written in one
//! go (quiet and closed by a barrier where the dialect allows), then every reply read. One
//! outcome per item, in the caller's order.

use super::Client;
use crate::dialect::{batch_tags, Outcome, Request};
use crate::error::Result;
use crate::item::StoreOutcome;
use crate::key::Keys;
use crate::proto::ascii::StoreCommand;
use crate::set_item::SetItem;
use std::borrow::Cow;

/// A store prepared for the wire: key, encoded data, flags.
type WireItem<'a> = (Cow<'a, [u8]>, Cow<'a, [u8]>, u32);

impl Client {
    /// Stores many items, pipelined per server (quiet requests closed by a barrier on meta and
    /// binary). One outcome per item, in order.
    pub fn set_multi<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &[(K, V)],
        ttl: u32,
    ) -> Vec<Result<StoreOutcome>> {
        self.store_prepared(&self.prepare_items(items), ttl)
    }

    /// Stores many items, pipelined per server as [`Client::set_multi`] (one round trip per
    /// server), each with its own flags, expiry and compression decision. One outcome per
    /// item, in order; an item refused before any I/O (bad key, too large) fails alone.
    pub fn set_multi_items(&self, items: &[SetItem<'_>]) -> Vec<Result<StoreOutcome>> {
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
        let like = set_request(b"", b"", 0, 0, false);
        self.batch(
            &prepared,
            |item| &item.0 .0,
            &like,
            |((k, d, f), ttl), quiet| set_request(k, d, *f, *ttl, quiet),
        )
        .into_iter()
        .map(|r| r.and_then(Outcome::stored))
        .collect()
    }

    /// Stores many items without waiting for each reply (`noreply` on text, quiet requests on
    /// meta and binary), then one barrier round trip per server to learn that every command
    /// was read. Fastest for bulk loads; returns the first failure, if any.
    pub fn set_multi_noreply<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &[(K, V)],
        ttl: u32,
    ) -> Result<()> {
        let dialect = &self.inner.dialect;
        if dialect.batches_quietly() {
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
        let t = &*self.topology();
        let (groups, unplaced) = self.group(t, &prepared, |item| &item.0);
        if let Some((_, e)) = unplaced.into_iter().next() {
            return Err(e);
        }
        for (idx, members) in groups {
            // Text only (quiet dialects returned above): `noreply` stores, then `version`.
            let res = self
                .acquire(t, idx, self.deadline())
                .and_then(|mut pooled| {
                    let res = pooled.with_conn(|conn| {
                        let tag = conn.take_tags(1);
                        let buf = conn.begin();
                        for (k, d, f) in members.iter().filter_map(|&i| prepared[i].as_ref().ok()) {
                            let req = set_request(k, d, *f, ttl, true);
                            dialect.encode(buf, &req, tag);
                        }
                        dialect.encode_barrier(buf, tag);
                        conn.send()?;
                        dialect.read_barrier(conn, tag)?;
                        conn.finish();
                        Ok(())
                    });
                    self.release(t, idx, pooled, &res);
                    res
                });
            if let Err(e) = res {
                first_err.get_or_insert(e);
            }
        }
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
            key: b"",
            quiet: false,
        };
        self.batch(
            &prepared,
            |k| k,
            &like,
            |k, quiet| Request::Delete { key: k, quiet },
        )
        .into_iter()
        .map(|r| r.and_then(Outcome::existed))
        .collect()
    }

    /// Pipelined sets of prepared items (see `batch`).
    fn store_prepared(&self, prepared: &[Result<WireItem>], ttl: u32) -> Vec<Result<StoreOutcome>> {
        let like = set_request(b"", b"", 0, ttl, false);
        self.batch(
            prepared,
            |item| &item.0,
            &like,
            |(k, d, f), quiet| set_request(k, d, *f, ttl, quiet),
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

    fn prepare_items<'a, K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        items: &'a [(K, V)],
    ) -> Vec<Result<WireItem<'a>>> {
        items
            .iter()
            .map(|(k, v)| self.prepare_item(k.as_ref(), v.as_ref(), 0))
            .collect()
    }

    /// A pipelined batch of single-key requests like `like`: per server, every request
    /// (`request(item, quiet)`) written in one go (quiet, closed by a barrier, where the
    /// dialect allows), then every reply read.
    fn batch<'p, P: 'p>(
        &self,
        prepared: &'p [Result<P>],
        key_of: impl Fn(&P) -> &[u8],
        like: &Request<'_>,
        request: impl for<'r> Fn(&'r P, bool) -> Request<'r>,
    ) -> Vec<Result<Outcome>> {
        let dialect = &self.inner.dialect;
        let quiet = dialect.batches_quietly();
        let mut results: Vec<Option<Result<Outcome>>> = prepared
            .iter()
            .map(|r| r.as_ref().err().map(|e| Err(e.clone())))
            .collect();
        let t = &*self.topology();
        let (groups, unplaced) = self.group(t, prepared, &key_of);
        for (i, e) in unplaced {
            results[i] = Some(Err(e));
        }
        let deadline = self.shared_deadline();
        let mut sent = Vec::with_capacity(groups.len());
        for (idx, members) in groups {
            let res = self
                .acquire_group(t, idx, deadline)
                .and_then(|(idx, mut pooled)| {
                    let res = pooled.with_conn(|conn| {
                        let n = members.len();
                        let tag = conn.take_tags(batch_tags(n));
                        let buf = conn.begin();
                        for (k, &i) in members.iter().enumerate() {
                            if let Ok(item) = &prepared[i] {
                                let req = request(item, dialect.quiet_in_batch(k, n));
                                dialect.encode(buf, &req, tag.wrapping_add(k as u32));
                            }
                        }
                        if quiet {
                            dialect.encode_barrier(buf, tag.wrapping_add(n as u32));
                        }
                        conn.send().map(|()| tag)
                    });
                    match res {
                        Ok(tag) => Ok((idx, pooled, tag)),
                        Err(e) => {
                            self.release(t, idx, pooled, &Err::<(), _>(e.clone()));
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
                dialect
                    .read_batch(conn, like, tag, members.len(), &mut |k, r| {
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
            self.release(t, idx, pooled, &res);
        }
        results
            .into_iter()
            .zip(prepared)
            .map(|(r, item)| match (r, item) {
                (Some(r), _) => r,
                (None, Ok(item)) => Err(self.dead_error(t, key_of(item))),
                (None, Err(e)) => Err(e.clone()),
            })
            .collect()
    }
}

/// A plain `set` of a prepared item.
fn set_request<'r>(
    key: &'r [u8],
    data: &'r [u8],
    flags: u32,
    ttl: u32,
    quiet: bool,
) -> Request<'r> {
    Request::Store {
        cmd: StoreCommand::Set,
        key,
        flags,
        ttl,
        data,
        quiet,
    }
}
