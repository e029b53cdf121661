//! The r2d2 side: a pool of connection *slots* per server.
//!
//! A slot may hold a connected socket or nothing. The manager tries to connect when r2d2
//! asks for a slot (so `min_idle` connections open at start-up, in the background), but never
//! fails: a slot without a socket is connected by the caller that checks it out, in its own
//! thread and within its own connect timeout. So a down server costs each caller one fast
//! connect error instead of r2d2's retry loop until the pool timeout, and a broken socket is
//! dropped from its slot without r2d2 having to replace the slot.

use crate::conn::{Conn, ConnOptions, Deadline};
use crate::dialect::Dialect;
use crate::health::Health;
use crate::metrics::Counters;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// A pooled connection's place in its server's `pool_open` and `pool_idle` gauges, held by
/// the connection ([`Conn`]) from the moment it is connected until it is dropped: the gauges
/// count connections actually open, not r2d2's slots (a slot may hold none: a server that
/// refuses every connect has slots but no connection). Idle: in the pool, not checked out.
/// A connection of another fork generation (opened before a fork) does not count in the
/// child, which starts its gauges from 0 with its own pool.
pub(crate) struct OpenGauge {
    counters: Arc<Counters>,
    generation: u64,
    idle: bool,
}

impl OpenGauge {
    /// Counts a connection just opened: into the pool (`idle`) or for a caller.
    pub(crate) fn new(counters: &Arc<Counters>, idle: bool) -> OpenGauge {
        counters.pool_open.fetch_add(1, Relaxed);
        if idle {
            counters.pool_idle.fetch_add(1, Relaxed);
        }
        OpenGauge {
            counters: counters.clone(),
            generation: crate::fork::generation(),
            idle,
        }
    }

    /// The connection goes back to the pool (`true`) or out to a caller (`false`).
    pub(crate) fn set_idle(&mut self, idle: bool) {
        if self.idle == idle {
            return;
        }
        self.idle = idle;
        if self.generation == crate::fork::generation() {
            if idle {
                self.counters.pool_idle.fetch_add(1, Relaxed);
            } else {
                self.counters.pool_idle.fetch_sub(1, Relaxed);
            }
        }
    }
}

impl Drop for OpenGauge {
    fn drop(&mut self) {
        if self.generation == crate::fork::generation() {
            self.counters.pool_open.fetch_sub(1, Relaxed);
            if self.idle {
                self.counters.pool_idle.fetch_sub(1, Relaxed);
            }
        }
    }
}

/// A server's `(open, idle)` connections for its gauges (0 in a forked child until its own
/// pool opens one).
pub(crate) fn open_idle(counters: &Counters) -> (u32, u32) {
    if counters.pool_generation.load(Relaxed) != crate::fork::generation() {
        return (0, 0);
    }
    let clamp = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    (
        clamp(counters.pool_open.load(Relaxed)),
        clamp(counters.pool_idle.load(Relaxed)),
    )
}

/// A pooled slot: a connection, or room for one.
pub struct Slot {
    /// The socket, when connected. Boxed so that r2d2 moves a pointer, not the buffers'
    /// bookkeeping, on every checkout and return.
    pub(crate) conn: Option<Box<Conn>>,
}

/// r2d2 manager for one server.
#[derive(Clone)]
pub(crate) struct Manager {
    pub addr: Arc<crate::resolve::Resolve>,
    pub label: Arc<str>,
    pub opts: ConnOptions,
    pub dialect: Dialect,
    pub health: Arc<Health>,
    pub counters: Arc<Counters>,
}

/// The manager never fails, so its error type is never built.
#[derive(Debug)]
pub(crate) enum Never {}

impl std::fmt::Display for Never {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {}
    }
}

impl std::error::Error for Never {}

impl r2d2::ManageConnection for Manager {
    type Connection = Slot;
    type Error = Never;

    fn connect(&self) -> Result<Slot, Never> {
        let epoch = self.health.epoch();
        let conn = if self.health.is_healthy() {
            self.dialect
                .connect(
                    &self.addr,
                    &self.label,
                    &self.opts,
                    self.opts.connect_timeout,
                    true,
                )
                .ok()
        } else {
            None
        };
        let conn = conn.map(|mut c| {
            c.set_epoch(epoch);
            // Into the pool's idle list.
            c.gauge = Some(OpenGauge::new(&self.counters, true));
            c
        });
        if conn.is_some() {
            Counters::bump(&self.counters.connects);
        }
        Ok(Slot {
            conn: conn.map(Box::new),
        })
    }

    fn is_valid(&self, slot: &mut Slot) -> Result<(), Never> {
        if let Some(conn) = slot.conn.as_mut() {
            // The check is no caller's operation: only the I/O timeout bounds it.
            conn.set_deadline(Deadline::None);
            if !conn.is_reusable() || self.dialect.alive_check(conn).is_err() {
                slot.conn = None;
            }
        }
        Ok(())
    }

    fn has_broken(&self, slot: &mut Slot) -> bool {
        // Normally already emptied by the client; this catches every other path.
        if slot.conn.as_ref().is_some_and(|c| !c.is_reusable()) {
            slot.conn = None;
        }
        false
    }
}
