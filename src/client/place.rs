//! Placement: which server a key goes to, with the failover policy for a dead server and,
//! in `proxy-pool` mode, the first healthy proxy (trying the next one once when the first
//! fails before anything was answered).

use super::{Client, Topology};
use crate::conn::Deadline;
use crate::error::{Error, Result};
use crate::route::proxy_pool::{self, Reached, Resend};
use crate::route::FailoverPolicy;
use std::time::{Duration, Instant};

/// Entries grouped by server `(server, entry indices)`, and the entries with no server to go
/// to `(entry, the server its placement named, error)` (see [`Client::home`]).
pub(super) type Grouping = (Vec<(usize, Vec<usize>)>, Vec<(usize, usize, Error)>);

/// The most servers one call tries for a key under `rehash` / `eject` failover when the
/// servers before could not be reached (see [`Client::fails_over`]). python-memcached's
/// `_get_server` tries 10 buckets, Cache::Memcached's `get_sock` 20, Whalin's `getSock` every
/// server once; each failed try here has marked a server dead, so a fleet runs out of live
/// servers before a key runs out of tries unless it is larger than this.
pub(super) const FAILOVER_TRIES: usize = 10;

impl Client {
    /// Which server (index into the configured list) `key` lives on; no I/O, ignores health.
    pub fn server_for(&self, key: impl AsRef<[u8]>) -> Result<usize> {
        let wire = self.wire_key(key.as_ref())?;
        Ok(self.topology().router.locate(self.hash_input(&wire)))
    }

    /// The part of a wire key that placement hashes (see `Distribution::hashes_namespace`).
    fn hash_input<'w>(&self, wire: &'w [u8]) -> &'w [u8] {
        &wire[self.inner.hash_skip..]
    }

    /// The server for a wire key, applying the failover policy when its server is dead.
    #[inline]
    pub(super) fn pick(&self, t: &Topology, wire: &[u8]) -> Result<usize> {
        self.pick_for(t, wire, false)
    }

    /// [`Client::pick`] for a write (set, add, replace, append, prepend, cas, delete,
    /// incr/decr, touch): one that goes elsewhere because the key's server is dead is
    /// remembered by that server for its return (`on_server_return = delete-written`).
    #[inline]
    pub(super) fn pick_write(&self, t: &Topology, wire: &[u8]) -> Result<usize> {
        self.pick_for(t, wire, true)
    }

    #[inline]
    fn pick_for(&self, t: &Topology, wire: &[u8], write: bool) -> Result<usize> {
        if self.inner.proxy_pool {
            return self.proxy(t);
        }
        let i = self.home(t, wire);
        // Under eject, while any server is marked dead every key is placed by the table
        // without the dead servers (`Router::ejects`), not only the dead servers' keys.
        let ejecting = || {
            t.router.ejects(self.inner.config.failover)
                && t.servers.iter().any(|s| s.health.is_marked())
        };
        if t.servers[i].health.may_try() && !ejecting() {
            return Ok(i);
        }
        let j = self.pick_alive(t, wire, i)?;
        if write && j != i {
            if let Some(away) = &t.servers[i].away {
                if t.servers[i].health.may_try() {
                    // Alive, but the table without the dead servers put the key elsewhere.
                    away.moved_off(wire);
                } else {
                    away.written_elsewhere(wire);
                }
            }
            if let Some(away) = &t.servers[j].away {
                away.hosted(wire);
            }
        }
        Ok(j)
    }

    /// The server a wire key belongs to by placement alone (health ignored), which a failed
    /// placement names ([`Error::ServerDead`]): its own server, or in `proxy-pool` mode the
    /// first proxy. One server: every key lives there (no hashing), or nowhere while it is
    /// dead.
    pub(super) fn home(&self, t: &Topology, wire: &[u8]) -> usize {
        if self.inner.proxy_pool || t.servers.len() == 1 {
            0
        } else {
            t.router.locate(self.hash_input(wire))
        }
    }

    /// [`Client::pick`] when the key's server `i` is dead, or any server is under `eject`:
    /// the failover policy decides.
    #[cold]
    fn pick_alive(&self, t: &Topology, wire: &[u8], i: usize) -> Result<usize> {
        let dead = |j: usize| t.servers[j].dead_error();
        // A server that joined dead and never answered is tried by a try of its own once
        // its retry is due (a call's retry would put it back in the ring first), on a
        // thread of its own: never in this call's time (tester finding retest33 1).
        for s in t.servers.iter().filter(|s| s.health.is_unproven()) {
            crate::server::Server::retry_unproven_in_background(s);
        }
        // A dead server not yet ejected stays in the ring, and a key placed on it fails
        // (libmemcached's server in timeout, `eject_after`).
        let after = self.eject_after(t);
        match t
            .router
            .locate_alive(self.hash_input(wire), self.inner.config.failover, &|j| {
                !t.servers[j].health.is_ejected(after)
            }) {
            Some(j) if t.servers[j].health.may_try() => Ok(j),
            Some(j) => Err(dead(j)),
            None => Err(dead(i)),
        }
    }

    /// The times in a row a dead server must have been marked dead before it leaves the
    /// ring: `eject_after` under a failover that ejects, else 1 (a dead server is out).
    fn eject_after(&self, t: &Topology) -> u32 {
        if t.router.ejects(self.inner.config.failover) {
            self.inner.config.eject_after
        } else {
            1
        }
    }

    /// `proxy-pool`: the first proxy whose health allows a request (every key goes there).
    pub(super) fn proxy(&self, t: &Topology) -> Result<usize> {
        let servers = &t.servers;
        proxy_pool::first_alive(servers.len(), &|i| servers[i].health.may_try_now())
            .ok_or_else(|| servers[0].dead_error())
    }

    /// `proxy-pool`: after a failure on proxy `failed`, the next one to try (the first other
    /// healthy proxy) and the deadline brought up to date, while time is left.
    pub(super) fn next_proxy(
        &self,
        t: &Topology,
        failed: usize,
        deadline: Deadline,
    ) -> Option<(usize, Deadline)> {
        let mut deadline = deadline;
        if deadline.left_at(Instant::now()) == Some(Duration::ZERO) {
            return None;
        }
        let servers = &t.servers;
        let next = proxy_pool::first_alive(servers.len(), &|i| {
            i != failed && servers[i].health.may_try_now()
        })?;
        Some((next, deadline))
    }

    /// Whether a call whose request to server `idx` failed with `e` before any of it was
    /// sent (no connection could be had: connect refused or timed out, TLS or SASL handshake
    /// failed, the returning server's clean-up failed) goes on, within the same call, to the
    /// server the failover policy now picks for the key: only under `rehash` or `eject`
    /// (not `proxy-pool`, which has its own next-proxy rule), only for a server failure
    /// that left the server dead (this failure reached `failure_limit`, or it was marked
    /// dead meanwhile) and, under an ejecting failover, ejected (`eject_after`), and only
    /// while the deadline (brought up to date) has time left.
    /// python-memcached, Cache::Memcached and Whalin's SockIOPool do the same when a
    /// connect fails. A request that may have been sent is never sent again.
    #[cold]
    pub(super) fn fails_over(
        &self,
        t: &Topology,
        idx: usize,
        e: &Error,
        deadline: &mut Deadline,
    ) -> bool {
        !self.inner.proxy_pool
            && self.inner.config.failover != FailoverPolicy::FailFast
            // (or found dead when its connection was to be had: nothing sent, see
            // `Server::checkout`)
            && (e.is_server_failure() || matches!(e, Error::ServerDead { .. }))
            && t.servers[idx].health.is_ejected(self.eject_after(t))
            && deadline.left_at(Instant::now()) != Some(Duration::ZERO)
    }

    /// Counts `keys` keys moved off server `idx` within a call (metric `failovers`).
    #[cold]
    pub(super) fn count_failover(&self, t: &Topology, idx: usize, keys: usize) {
        if let Some(s) = t.servers.get(idx) {
            let c = &s.counters.failovers;
            c.fetch_add(keys as u64, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Runs `attempt` (which says how far it got) on the key's server. When the server could
    /// not be reached and that left it dead, the key goes on to the server the failover
    /// policy now picks, at most [`FAILOVER_TRIES`] servers in all (see
    /// [`Client::fails_over`]). In `proxy-pool` mode a failure that `resend` allows (see
    /// `route::proxy_pool`) is tried once more on the next healthy proxy, within the same
    /// deadline.
    pub(super) fn on_key_server<'t, T>(
        &self,
        t: &'t Topology,
        wire: &[u8],
        resend: Resend,
        write: bool,
        mut deadline: Deadline,
        mut attempt: impl FnMut(&'t Topology, usize, Deadline) -> (Result<T>, Reached),
    ) -> Result<T> {
        let mut idx = self.pick_for(t, wire, write)?;
        let mut tries = 1;
        loop {
            return match attempt(t, idx, deadline) {
                (Err(e), reached)
                    if self.inner.proxy_pool && proxy_pool::may_resend(resend, reached, &e) =>
                {
                    match self.next_proxy(t, idx, deadline) {
                        Some((next, deadline)) => attempt(t, next, deadline).0,
                        None => Err(e),
                    }
                }
                (Err(e), Reached::NotSent)
                    if tries < FAILOVER_TRIES && self.fails_over(t, idx, &e, &mut deadline) =>
                {
                    match self.pick_for(t, wire, write) {
                        Ok(next) if next != idx => {
                            self.count_failover(t, idx, 1);
                            idx = next;
                            tries += 1;
                            continue;
                        }
                        _ => Err(e),
                    }
                }
                (r, _) => r,
            };
        }
    }

    /// Groups valid prepared entries by server: `(server, indices into prepared)`, and the
    /// entries that have no server to go to (dead, fail-fast) with their error.
    pub(super) fn group<P>(
        &self,
        t: &Topology,
        prepared: &[Result<P>],
        key_of: impl Fn(&P) -> &[u8],
    ) -> Grouping {
        self.group_some(t, prepared, 0..prepared.len(), key_of)
    }

    /// [`Client::group`] of the entries `which` only (the ones a call moves on after their
    /// server could not be reached, see [`Client::fails_over`]).
    pub(super) fn group_some<P>(
        &self,
        t: &Topology,
        prepared: &[Result<P>],
        which: impl IntoIterator<Item = usize>,
        key_of: impl Fn(&P) -> &[u8],
    ) -> Grouping {
        let n = t.servers.len();
        let mut by_server: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut unplaced = Vec::new();
        // proxy-pool: one proxy for the whole call.
        let proxy = self.inner.proxy_pool.then(|| self.proxy(t));
        for i in which {
            if let Some(Ok(p)) = prepared.get(i) {
                let placed = match &proxy {
                    Some(chosen) => chosen.clone(),
                    // Grouped calls are writes (set_multi, delete_multi).
                    None => self.pick_write(t, key_of(p)),
                };
                match placed {
                    Ok(idx) => by_server[idx].push(i),
                    Err(e) => unplaced.push((i, self.home(t, key_of(p)), e)),
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

    /// The error of a key whose server could not be reached.
    pub(super) fn dead_error(&self, t: &Topology, wire: &[u8]) -> Error {
        match self.pick(t, wire) {
            Err(e) => e,
            Ok(i) => t.servers[i].dead_error(),
        }
    }
}
