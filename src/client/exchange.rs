//! Exchanges: a connection of a server checked out (or, for work that may be handed over,
//! the answer a permit holder got for it), one request through the client's dialect, and
//! the connection given back with the result accounted for.

use super::{Client, Topology};
use crate::conn::Deadline;
use crate::dialect::{Hit, Outcome, Request};
use crate::error::Result;
use crate::gate::Offer;
use crate::route::proxy_pool::{self, Reached, Resend};
use crate::server::{Checkout, Pooled};

/// A hit callback for requests that find no values.
pub(super) fn no_hits() -> impl FnMut(usize, &[u8], u32, Option<u64>) {
    |_, _, _, _| {}
}

impl Client {
    /// One request about one key (see [`Client::on_key_server`]); the server it went to in
    /// `at`.
    pub(super) fn exchange_key(
        &self,
        t: &Topology,
        wire: &[u8],
        resend: Resend,
        req: &Request<'_>,
        at: &mut Option<usize>,
    ) -> Result<Outcome> {
        // Nothing is sent for a request memcached could not honour (`crate::ttl`).
        req.check_arguments()?;
        self.on_key_server(
            t,
            wire,
            resend,
            req.is_write(),
            self.deadline(),
            |t, idx, deadline| {
                *at = Some(idx);
                match self.acquire(t, idx, deadline) {
                    Err(e) => (Err(e), Reached::NotSent),
                    Ok(pooled) => (
                        self.exchange_on(t, idx, pooled, req, &mut no_hits()),
                        Reached::Sent,
                    ),
                }
            },
        )
    }

    /// One request to server `idx`.
    pub(super) fn exchange(&self, t: &Topology, idx: usize, req: &Request<'_>) -> Result<Outcome> {
        req.check_arguments()?;
        let pooled = self.acquire(t, idx, self.deadline())?;
        self.exchange_on(t, idx, pooled, req, &mut no_hits())
    }

    /// One request on a connection of server `idx` already checked out (values found to
    /// `hit`); the connection is given back.
    pub(super) fn exchange_on(
        &self,
        t: &Topology,
        idx: usize,
        mut pooled: Pooled,
        req: &Request<'_>,
        hit: &mut Hit<'_>,
    ) -> Result<Outcome> {
        let dialect = &self.inner.dialect;
        let result = pooled
            .with_conn(|conn| dialect.exchange(conn, req, hit))
            .map_err(|e| self.proxy_refusal(t, idx, req, e));
        self.release(t, idx, pooled, &result);
        result.map_err(|e| req.its_error(e))
    }

    /// `e` of `req` on server `idx`, before it is counted: under `proxy-pool`, a connection
    /// closed before any reply to a command a proxy may not support
    /// (`Request::proxy_may_refuse`) is [`crate::Error::Unsupported`], saying so, and no
    /// failure of the proxy (tester finding proxy 3). The connection is dropped all the same.
    #[cold]
    #[inline(never)]
    pub(super) fn proxy_refusal(
        &self,
        t: &Topology,
        idx: usize,
        req: &Request<'_, impl crate::dialect::WireKeys + ?Sized>,
        e: crate::Error,
    ) -> crate::Error {
        if !(self.inner.proxy_pool && req.proxy_may_refuse() && e.is_closed_before_reply()) {
            return e;
        }
        crate::Error::Unsupported(format!(
            "the proxy {} closed the connection before any reply: a proxy does so with a \
             command it does not support (twemproxy: gat, gats, stats, flush_all); not \
             counted as a failure of the proxy",
            t.servers[idx].label
        ))
    }

    /// [`Client::acquire`] for a multi-key call's group on server `idx`: in `proxy-pool`
    /// mode, when no connection could be made (nothing was sent), the next healthy proxy.
    /// Returns the server the connection is to.
    pub(super) fn acquire_group<'t>(
        &self,
        t: &'t Topology,
        idx: usize,
        deadline: Deadline,
    ) -> Result<(usize, Pooled<'t>)> {
        match self.acquire(t, idx, deadline) {
            Err(e)
                if self.inner.proxy_pool
                    && proxy_pool::may_resend(Resend::IfUnsent, Reached::NotSent, &e) =>
            {
                match self.next_proxy(t, idx, deadline) {
                    Some((next, deadline)) => self.acquire(t, next, deadline).map(|p| (next, p)),
                    None => Err(e),
                }
            }
            r => r.map(|p| (idx, p)),
        }
    }

    /// Checks out a slot of server `idx` holding a usable connection.
    pub(super) fn acquire<'t>(
        &self,
        t: &'t Topology,
        idx: usize,
        deadline: Deadline,
    ) -> Result<Pooled<'t>> {
        t.servers[idx].checkout(self.inner.config.pool_timeout, deadline)
    }

    /// As [`Client::acquire`] for a single-server operation that may be handed over while
    /// it waits (see `gate`): a connection, or the work's answer.
    pub(super) fn acquire_or_offer<'t>(
        &self,
        t: &'t Topology,
        idx: usize,
        deadline: Deadline,
        offer: Offer<'_>,
    ) -> Result<Checkout<'t>> {
        let pool_timeout = self.inner.config.pool_timeout;
        t.servers[idx].checkout_or_offer(pool_timeout, deadline, offer)
    }

    /// The deadline of a single-server operation starting now (one clock reading).
    pub(super) fn deadline(&self) -> Deadline {
        Deadline::after(self.inner.config.operation_timeout)
    }

    /// The deadline shared by every server of a multi-server operation starting now.
    pub(super) fn shared_deadline(&self) -> Deadline {
        self.deadline()
    }

    /// Accounts for an exchange's result and drops a connection that is not clean.
    pub(super) fn release<T>(&self, t: &Topology, idx: usize, pooled: Pooled, result: &Result<T>) {
        self.note_io(|| pooled.io_since_checkout());
        t.servers[idx].release(pooled, result);
    }
}
