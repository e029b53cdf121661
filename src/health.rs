//! Per-server health: consecutive failures, and "dead until" with a doubling back-off.
//! Waiting for a pooled connection is never a failure; only connect errors, socket errors
//! and timeouts are.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

fn now_ms() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1
}

/// Health of one server, shared by the client and the pool manager.
#[derive(Debug)]
pub struct Health {
    failures: AtomicU32,
    dead_until: AtomicU64,
    limit: u32,
    retry: Duration,
    retry_max: Duration,
}

/// A snapshot of one server's health, for callers and the CLI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerState {
    /// `host:port`.
    pub server: String,
    /// False while the server is marked dead and not yet due for a retry.
    pub alive: bool,
    /// Consecutive failures so far.
    pub failures: u32,
    /// How long until the next retry, while dead.
    pub retry_in: Option<Duration>,
}

impl Health {
    pub(crate) fn new(limit: u32, retry: Duration, retry_max: Duration) -> Health {
        Health {
            failures: AtomicU32::new(0),
            dead_until: AtomicU64::new(0),
            limit: limit.max(1),
            retry,
            retry_max,
        }
    }

    /// Consecutive failures that mark the server dead.
    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// No failure since the last success.
    pub fn is_healthy(&self) -> bool {
        self.failures.load(Ordering::Relaxed) == 0
    }

    /// May a request go to this server now? True when alive, or dead but due for a retry.
    pub fn may_try(&self) -> bool {
        let until = self.dead_until.load(Ordering::Relaxed);
        until == 0 || now_ms() >= until
    }

    /// Records a connect error, socket error or timeout. Returns `(failures, back-off)` when
    /// this failure marks the server dead (first time, or again after a failed retry).
    pub(crate) fn record_failure(&self) -> Option<(u32, Duration)> {
        let n = self
            .failures
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        if n < self.limit {
            return None;
        }
        let doublings = (n - self.limit).min(16);
        let wait = self
            .retry
            .saturating_mul(1 << doublings)
            .min(self.retry_max);
        self.dead_until
            .store(now_ms() + wait.as_millis() as u64, Ordering::Relaxed);
        Some((n, wait))
    }

    /// Records a successful exchange (cheap when already healthy: one load). Returns true
    /// when the server had been marked dead and is now back.
    pub(crate) fn record_success(&self) -> bool {
        if self.failures.load(Ordering::Relaxed) == 0 {
            return false;
        }
        self.failures.store(0, Ordering::Relaxed);
        self.dead_until.swap(0, Ordering::Relaxed) != 0
    }

    pub(crate) fn snapshot(&self, server: &str) -> ServerState {
        let until = self.dead_until.load(Ordering::Relaxed);
        let now = now_ms();
        ServerState {
            server: server.to_owned(),
            alive: until == 0 || now >= until,
            failures: self.failures.load(Ordering::Relaxed),
            retry_in: (until > now).then(|| Duration::from_millis(until - now)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_after_limit_then_alive_on_success() {
        let h = Health::new(2, Duration::from_secs(60), Duration::from_secs(600));
        assert!(h.may_try());
        h.record_failure();
        assert!(h.may_try(), "one failure of two");
        h.record_failure();
        assert!(!h.may_try());
        let s = h.snapshot("x");
        assert!(!s.alive && s.failures == 2 && s.retry_in.is_some());
        h.record_success();
        assert!(h.may_try() && h.is_healthy());
    }

    #[test]
    fn retry_comes_due() {
        let h = Health::new(1, Duration::from_millis(1), Duration::from_millis(1));
        h.record_failure();
        let start = Instant::now();
        while !h.may_try() {
            assert!(start.elapsed() < Duration::from_secs(5));
            std::thread::yield_now();
        }
    }
}
