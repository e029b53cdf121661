//! Placement: which server a key goes to, with the failover policy for a dead server and,
//! in `proxy-pool` mode, the first healthy proxy (trying the next one once when the first
//! fails before anything was answered).

use super::{Client, Topology};
use crate::conn::Deadline;
use crate::error::{Error, Result};
use crate::route::proxy_pool::{self, Reached, Resend};
use std::time::{Duration, Instant};

/// Entries grouped by server `(server, entry indices)`, and the entries with no server.
pub(super) type Grouping = (Vec<(usize, Vec<usize>)>, Vec<(usize, Error)>);

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
        // One server: every key lives there (no hashing), or nowhere while it is dead.
        let i = if t.servers.len() == 1 {
            0
        } else {
            t.router.locate(self.hash_input(wire))
        };
        if t.servers[i].health.may_try() {
            return Ok(i);
        }
        let j = self.pick_alive(t, wire, i)?;
        if write && j != i {
            if let Some(away) = &t.servers[i].away {
                away.written_elsewhere(wire);
            }
        }
        Ok(j)
    }

    /// [`Client::pick`] when the key's server `i` is dead: the failover policy decides.
    #[cold]
    fn pick_alive(&self, t: &Topology, wire: &[u8], i: usize) -> Result<usize> {
        t.router
            .locate_alive(self.hash_input(wire), self.inner.config.failover, &|j| {
                t.servers[j].health.may_try()
            })
            .ok_or_else(|| Error::ServerDead {
                server: t.servers[i].label.to_string(),
            })
    }

    /// `proxy-pool`: the first proxy whose health allows a request (every key goes there).
    pub(super) fn proxy(&self, t: &Topology) -> Result<usize> {
        let servers = &t.servers;
        proxy_pool::first_alive(servers.len(), &|i| servers[i].health.may_try()).ok_or_else(|| {
            Error::ServerDead {
                server: servers[0].label.to_string(),
            }
        })
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
            i != failed && servers[i].health.may_try()
        })?;
        Some((next, deadline))
    }

    /// Runs `attempt` (which says how far it got) on the key's server; in `proxy-pool` mode a
    /// failure that `resend` allows (see `route::proxy_pool`) is tried once more on the next
    /// healthy proxy, within the same deadline.
    pub(super) fn on_key_server<'t, T>(
        &self,
        t: &'t Topology,
        wire: &[u8],
        resend: Resend,
        write: bool,
        deadline: Deadline,
        mut attempt: impl FnMut(&'t Topology, usize, Deadline) -> (Result<T>, Reached),
    ) -> Result<T> {
        let idx = self.pick_for(t, wire, write)?;
        match attempt(t, idx, deadline) {
            (Err(e), reached)
                if self.inner.proxy_pool && proxy_pool::may_resend(resend, reached, &e) =>
            {
                match self.next_proxy(t, idx, deadline) {
                    Some((next, deadline)) => attempt(t, next, deadline).0,
                    None => Err(e),
                }
            }
            (r, _) => r,
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
        let n = t.servers.len();
        let mut by_server: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut unplaced = Vec::new();
        // proxy-pool: one proxy for the whole call.
        let proxy = self.inner.proxy_pool.then(|| self.proxy(t));
        for (i, p) in prepared.iter().enumerate() {
            if let Ok(p) = p {
                let placed = match &proxy {
                    Some(chosen) => chosen.clone(),
                    // Grouped calls are writes (set_multi, delete_multi).
                    None => self.pick_write(t, key_of(p)),
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

    /// The error of a key whose server could not be reached.
    pub(super) fn dead_error(&self, t: &Topology, wire: &[u8]) -> Error {
        match self.pick(t, wire) {
            Err(e) => e,
            Ok(i) => Error::ServerDead {
                server: t.servers[i].label.to_string(),
            },
        }
    }
}
