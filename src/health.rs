//! Per-server health: consecutive failures, and "dead until" with a back-off that doubles
//! per failed retry. Waiting for a pooled connection is never a failure; only connect errors,
//! socket errors and timeouts are.
//!
//! Failures are counted per *epoch*: the epoch moves on each time the server is marked dead.
//! Every exchange carries the epoch its connection was opened in (a connect, the epoch it
//! started in), and a failure from an earlier epoch is not counted: the requests that were in
//! flight together when the server stalled fail together, but they are one incident, already
//! counted when it was marked dead; and a connection left idle from before the marking
//! (before a restart, say) that fails on reuse is not a failed retry of the restarted server.
//! After the back-off, the first failure of the new epoch (a failed retry) marks the server
//! dead again with twice the back-off; the retries that fail with it count once.
//!
//! With a failure window (`failure_window`, Cache::Memcached::Fast's `max_failures` in
//! `failure_timeout`), the limit counts the failures within the window instead, from the
//! first of them: a success in between does not reset that count. The count starts again
//! after a window with fewer, and after a rest (a failed retry is then the first failure of
//! a new window, as Cache::Memcached::Fast counts). The consecutive count is still kept, for
//! the server's state.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
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
    /// With a failure window: the failures counted in the current one, and when it ends
    /// (`now_ms` time; 0 before the first failure).
    window_failures: AtomicU32,
    window_end: AtomicU64,
    /// Times marked dead since the last success: 1 after the first marking, one more per
    /// failed retry. The back-off is `retry * 2^(marks - 1)`, capped.
    marks: AtomicU32,
    dead_until: AtomicU64,
    /// Moves on each time the server is marked dead (see the module documentation).
    epoch: AtomicU64,
    /// Moves on at each `disconnect_all`: a connection stamped with an earlier count is
    /// closed instead of reused (`Conn::mark`). Not the server's health: nothing else changes.
    disconnects: AtomicU64,
    limit: u32,
    /// The failure window in ms (0: the limit counts consecutive failures).
    window: u64,
    retry: Duration,
    retry_max: Duration,
    /// `(after, rest)`: from the `after`-th marking in a row, the rest is `rest`
    /// ([`Health::with_ejected_rest`]).
    ejected_rest: Option<(u32, Duration)>,
    /// Marked dead before it ever answered ([`Health::mark_unreachable`]): out of the ring
    /// until a try of its own finds it answering ([`Health::end_probe`]), not merely until
    /// its retry is due (tester finding retest32 1).
    unproven: AtomicBool,
    /// A try of the server is under way (one caller at a time): an unproven server's try of
    /// its own ([`Health::begin_probe`]), or the call that took a dead server's due retry
    /// ([`Health::claim`]). The process's fork generation it began in, plus one (0: none).
    /// A child forked during a try (whose thread did not survive the fork) takes it over at
    /// its next retry instead of waiting for it for ever.
    trying: AtomicU64,
    /// The error of the failure that last marked the server dead, for the "marked dead"
    /// error of the calls it then refuses (a lock taken only when marking and refusing).
    cause: std::sync::Mutex<String>,
}

/// A failure that marked the server dead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Marked {
    /// Consecutive failures so far.
    pub failures: u32,
    /// The back-off before the next retry.
    pub retry_in: Duration,
    /// True the first time since the server was last healthy (not after a failed retry).
    pub first: bool,
}

/// What [`Health::claim`] found.
#[derive(Debug)]
pub(crate) enum Try<'h> {
    /// Alive: send.
    Alive,
    /// Dead and due for a retry, and this caller is the one to try it: send, record the
    /// exchange, then drop the claim.
    Retry(Claim<'h>),
    /// Marked dead and resting, or another caller's try under way: send nothing.
    Resting,
}

/// The one try under way of a dead server whose retry is due ([`Health::claim`]); dropped,
/// the next caller may try it (once the exchange's outcome is recorded, the server is alive
/// again or resting).
#[derive(Debug)]
pub(crate) struct Claim<'h>(&'h Health);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.trying.store(0, Ordering::Release);
    }
}

/// A snapshot of one server's health, for callers and the CLI. A server is an address: for
/// an address listed more than once (each entry has its own pool and health), the entries'
/// states merged (docs/metrics.md): alive only while every entry is, the most consecutive
/// failures, and the longest wait until retried, so that `alive` comes back once
/// `retry_in` has passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerState {
    /// `host:port`.
    pub server: String,
    /// False while the server is marked dead and not yet due for a retry, and while a
    /// server that joined dead (added by `set_servers` under an ejecting failover while it
    /// did not answer) has not yet been found answering by a try of its own: whether calls
    /// may go to it now. True once its retry is due, also while one call's try of it is
    /// under way, during which the other calls placed on it fail at once (nothing sent).
    pub alive: bool,
    /// Consecutive failures so far.
    pub failures: u32,
    /// How long until the next retry, while dead.
    pub retry_in: Option<Duration>,
}

impl ServerState {
    /// Merges the state of another entry of the same address into this one (see the type).
    pub(crate) fn merge(&mut self, other: ServerState) {
        self.alive &= other.alive;
        self.failures = self.failures.max(other.failures);
        self.retry_in = self.retry_in.max(other.retry_in);
    }
}

impl Health {
    /// A health whose limit counts consecutive failures (the tests' shorthand).
    #[cfg(test)]
    pub(crate) fn new(limit: u32, retry: Duration, retry_max: Duration) -> Health {
        Health::with_window(limit, None, retry, retry_max)
    }

    /// A health whose limit counts the failures within `window` of the first of them (a
    /// success in between not resetting the count), or consecutive ones (`None` or zero).
    pub(crate) fn with_window(
        limit: u32,
        window: Option<Duration>,
        retry: Duration,
        retry_max: Duration,
    ) -> Health {
        Health {
            failures: AtomicU32::new(0),
            window_failures: AtomicU32::new(0),
            window_end: AtomicU64::new(0),
            marks: AtomicU32::new(0),
            dead_until: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
            disconnects: AtomicU64::new(0),
            limit: limit.max(1),
            window: window.map_or(0, |w| u64::try_from(w.as_millis()).unwrap_or(u64::MAX)),
            retry,
            retry_max,
            ejected_rest: None,
            unproven: AtomicBool::new(false),
            trying: AtomicU64::new(0),
            cause: std::sync::Mutex::new(String::new()),
        }
    }

    /// The tests' clock jump: the rest ends now, the retry is due (as `may_try` would see
    /// once the back-off has passed).
    #[cfg(test)]
    pub(crate) fn come_due(&self) {
        if self.dead_until.load(Ordering::Relaxed) != 0 {
            self.dead_until.store(1, Ordering::Relaxed);
        }
    }

    /// Records `e` as the cause of the server being marked dead.
    pub(crate) fn set_cause(&self, e: &crate::Error) {
        *self.cause.lock().unwrap_or_else(|p| p.into_inner()) = e.as_cause();
    }

    /// The error that last marked the server dead ("" before any).
    pub(crate) fn cause(&self) -> String {
        self.cause.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The `disconnect_all` count: stamp it on a connection when opening it (`Conn::set_mark`);
    /// a connection with another one is not reused.
    pub(crate) fn disconnects(&self) -> u64 {
        self.disconnects.load(Ordering::Acquire)
    }

    /// `disconnect_all`: every connection opened before now is closed instead of reused.
    pub(crate) fn disconnect(&self) {
        self.disconnects.fetch_add(1, Ordering::AcqRel);
    }

    /// The current epoch: stamp it on a connection when opening it.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// No failure since the last success.
    pub fn is_healthy(&self) -> bool {
        self.failures.load(Ordering::Relaxed) == 0
    }

    /// Marked dead and not yet answering again (dead, or due for a retry that has not
    /// succeeded yet). One relaxed load, no clock: a cheap test that no server is dead.
    pub(crate) fn is_marked(&self) -> bool {
        self.dead_until.load(Ordering::Relaxed) != 0
    }

    /// Out of the ring under an ejecting failover ([`crate::ClientBuilder::eject_after`]):
    /// not to be tried now ([`Health::may_try`]), and marked dead at least `after` times in
    /// a row (its marking, then each failed retry). With `after` 1, exactly `!may_try()`.
    #[inline]
    pub(crate) fn is_ejected(&self, after: u32) -> bool {
        self.unproven.load(Ordering::Relaxed)
            || (!self.may_try() && (after <= 1 || self.marks.load(Ordering::Relaxed) >= after))
    }

    /// Marked dead before it ever answered, and not yet found answering (see `unproven`).
    #[inline]
    pub(crate) fn is_unproven(&self) -> bool {
        self.unproven.load(Ordering::Relaxed)
    }

    /// True when this caller is to try the unproven server now: its retry is due and no
    /// other caller is trying it. [`Health::end_probe`] ends the try.
    pub(crate) fn begin_probe(&self) -> bool {
        self.is_unproven() && self.may_try() && self.take_try()
    }

    /// Takes the one try under way for this caller: false when another caller of this
    /// process (this fork generation) holds it.
    fn take_try(&self) -> bool {
        let mine = crate::fork::generation().wrapping_add(1);
        let now = self.trying.load(Ordering::Acquire);
        now != mine
            && self
                .trying
                .compare_exchange(now, mine, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }

    /// May this caller send to the server now, and is it the one try of a dead server whose
    /// retry is due? One caller at a time tries it (tester finding proxy2 2: when the retry
    /// came due every call placed on the server tried it, and against a stalled server or
    /// proxy each waited its `io_timeout`): while that try is under way every other caller
    /// placed on the server finds it resting and sends nothing (its call fails as one that
    /// found the server dead, at once), and the try ends when the returned [`Try::Retry`]
    /// is dropped, after its exchange has been recorded (a success brings the server back,
    /// a failure rests it again). Placement does not change for the try
    /// ([`Health::may_try`]): only a marking or a return changes it, and the clean-up of the
    /// copies written elsewhere follows those (tester finding failover3 1, 2: a server
    /// leaving the table for the time of a try sent reads to older copies, and writes to
    /// other servers that its return did not clean). Alive: one load, no clock.
    pub(crate) fn claim(&self) -> Try<'_> {
        let until = self.dead_until.load(Ordering::Relaxed);
        if until == 0 {
            return Try::Alive;
        }
        if now_ms() < until || !self.take_try() {
            return Try::Resting;
        }
        let claim = Claim(self);
        // Another caller's try may have ended between the two readings: rested again
        // (its failure) or back (its success).
        match self.dead_until.load(Ordering::Relaxed) {
            0 => Try::Alive,
            until if now_ms() < until => Try::Resting,
            _ => Try::Retry(claim),
        }
    }

    /// The end of a try [`Health::begin_probe`] began: answered, the server is alive (in
    /// the ring again); not, it rests again, the back-off doubled as for a failed retry.
    pub(crate) fn end_probe(&self, answered: bool) {
        if answered {
            self.failures.store(0, Ordering::Relaxed);
            self.marks.store(0, Ordering::Relaxed);
            self.unproven.store(false, Ordering::Release);
            self.dead_until.store(0, Ordering::Relaxed);
        } else {
            self.epoch.fetch_add(1, Ordering::AcqRel);
            let marks = self.marks.fetch_add(1, Ordering::Relaxed).saturating_add(1);
            self.rest(self.back_off(marks));
        }
        self.trying.store(0, Ordering::Release);
    }

    /// Rests the server for `wait` from now (not to be tried before): the end of the rest,
    /// `now_ms` time. A wait past u64 milliseconds (`Duration::MAX`) is as long as the clock
    /// goes.
    fn rest(&self, wait: Duration) -> u64 {
        let until = now_ms().saturating_add(u64::try_from(wait.as_millis()).unwrap_or(u64::MAX));
        self.dead_until.store(until, Ordering::Relaxed);
        until
    }

    /// This health with `ejected_rest`: `(after, rest)`, the rest of a server marked dead
    /// `after` times in a row or more (out of the ring: `ClientBuilder::ejected_rest`).
    pub(crate) fn with_ejected_rest(mut self, ejected_rest: Option<(u32, Duration)>) -> Health {
        self.ejected_rest = ejected_rest;
        self
    }

    /// The rest after the `marks`-th marking in a row: `retry` doubled per marking after
    /// the first, at most `retry_max`; from the marking that ejects it, `ejected_rest` when
    /// set.
    fn back_off(&self, marks: u32) -> Duration {
        if let Some((after, rest)) = self.ejected_rest {
            if marks >= after {
                return rest;
            }
        }
        let doublings = marks.saturating_sub(1).min(16);
        self.retry
            .saturating_mul(1 << doublings)
            .min(self.retry_max)
    }

    /// [`Health::may_try`], and no other caller's try of its due retry under way
    /// ([`Health::claim`]): `proxy-pool`'s choice of a proxy, where a call sent to the next
    /// proxy instead changes no placement (the proxies front the same servers), so the calls
    /// that come while one call tries a due proxy go on to the next at once.
    pub(crate) fn may_try_now(&self) -> bool {
        self.may_try() && !self.tried_by_another()
    }

    /// Whether another caller of this process is trying the server now (see `trying`).
    fn tried_by_another(&self) -> bool {
        let now = self.trying.load(Ordering::Acquire);
        now != 0 && now == crate::fork::generation().wrapping_add(1)
    }

    /// May a request go to this server now? True when alive, or dead but due for a retry.
    /// Placement reads this: a due server is back in the table (under `eject`) whether or
    /// not another caller is trying it now, so that a try under way changes no placement
    /// (tester finding failover3 1: a server leaving the table again for the time of a try
    /// sent a read to a holder's older copy); `Health::claim` decides who sends to it.
    pub fn may_try(&self) -> bool {
        let until = self.dead_until.load(Ordering::Relaxed);
        until == 0 || now_ms() >= until
    }

    /// [`Health::record_failure_then`] with nothing to do before a marking (the tests').
    #[cfg(test)]
    pub(crate) fn record_failure(&self, epoch: u64) -> Option<Marked> {
        self.record_failure_then(epoch, || {})
    }

    /// Records a connect error, socket error or timeout of an exchange of `epoch` (its
    /// connection's, or for a connect the one it started in). A failure from an earlier
    /// epoch is not counted. Returns what happened when this failure marks the server dead
    /// (the first time, or again after a failed retry), having called `before_marking`
    /// before the marking is seen by any call (placement changes with it).
    pub(crate) fn record_failure_then(
        &self,
        epoch: u64,
        before_marking: impl FnOnce(),
    ) -> Option<Marked> {
        if epoch != self.epoch.load(Ordering::Acquire) {
            return None;
        }
        let n = self
            .failures
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        // While the server rests (marked dead, its retry not yet due), a failure in the new
        // epoch is a call that raced with the marking (it passed `may_try` just before it,
        // and took the epoch just after): the same incident, not a failed retry.
        let until = self.dead_until.load(Ordering::Relaxed);
        if until != 0 && now_ms() < until {
            return None;
        }
        let counted = if self.window == 0 {
            n
        } else {
            self.count_in_window()
        };
        if counted < self.limit {
            return None;
        }
        // Once per epoch: the failures that come with this one belong to the same incident.
        if self
            .epoch
            .compare_exchange(epoch, epoch + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return None;
        }
        before_marking();
        let marks = self.marks.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        let wait = self.back_off(marks);
        let until = self.rest(wait);
        if self.window != 0 {
            // counted again from the first failure after the rest
            self.window_end.store(until, Ordering::Release);
        }
        Some(Marked {
            failures: n,
            retry_in: wait,
            first: marks == 1,
        })
    }

    /// Marks a server that never served dead at once, as if its failure limit and `after`
    /// markings in a row had been reached (out of the ring under an ejecting failover): a
    /// server `set_servers` adds that cannot be reached (see `Server::probe_added`). It is
    /// tried again after `retry_timeout` by a try of its own (`Server::retry_unproven`), and
    /// stays out of the ring until one finds it answering: a call's retry would put it back
    /// first, and the keys written by the table with it meanwhile went back, when it failed
    /// again, to where the list before the change had left older copies (tester finding
    /// retest32 1).
    pub(crate) fn mark_unreachable(&self, after: u32) -> Marked {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.unproven.store(true, Ordering::Release);
        self.failures.store(self.limit, Ordering::Relaxed);
        self.marks.store(after.max(1), Ordering::Relaxed);
        let wait = self.retry.min(self.retry_max);
        let until = self.rest(wait);
        if self.window != 0 {
            self.window_end.store(until, Ordering::Release);
        }
        Marked {
            failures: self.limit,
            retry_in: wait,
            first: true,
        }
    }

    /// One more failure in the failure window, which starts at this failure when the last
    /// one has ended (or a rest has): the failures counted in it.
    fn count_in_window(&self) -> u32 {
        let now = now_ms();
        let end = self.window_end.load(Ordering::Acquire);
        if now >= end
            && self
                .window_end
                .compare_exchange(
                    end,
                    now.saturating_add(self.window),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
        {
            self.window_failures.store(0, Ordering::Relaxed);
        }
        self.window_failures
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1)
    }

    /// Records a successful exchange that began in `epoch` (cheap when already healthy: one
    /// load). Returns true when the server had been marked dead and is now back. An exchange
    /// that began before the last marking (answered just before the server failed, read
    /// after) says nothing of the server now: not counted.
    pub(crate) fn record_success(&self, epoch: u64) -> bool {
        if self.failures.load(Ordering::Relaxed) == 0 || epoch != self.epoch.load(Ordering::Acquire)
        {
            return false;
        }
        self.failures.store(0, Ordering::Relaxed);
        self.marks.store(0, Ordering::Relaxed);
        self.dead_until.swap(0, Ordering::Relaxed) != 0
    }

    pub(crate) fn snapshot(&self, server: &str) -> ServerState {
        let until = self.dead_until.load(Ordering::Relaxed);
        let now = now_ms();
        ServerState {
            server: server.to_owned(),
            // A server that joined dead stays out of the ring until a try finds it
            // answering, its retry due or not (tester finding retest34 2: "alive" while no
            // call went to it).
            alive: (until == 0 || now >= until) && !self.is_unproven(),
            failures: self.failures.load(Ordering::Relaxed),
            retry_in: (until > now).then(|| Duration::from_millis(until - now)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn dead_after_limit_then_alive_on_success() {
        let h = Health::new(2, Duration::from_secs(60), Duration::from_secs(600));
        assert!(h.may_try());
        h.record_failure(h.epoch());
        assert!(h.may_try(), "one failure of two");
        h.record_failure(h.epoch());
        assert!(!h.may_try());
        let s = h.snapshot("x");
        assert!(!s.alive && s.failures == 2 && s.retry_in.is_some());
        h.record_success(h.epoch());
        assert!(h.may_try() && h.is_healthy());
    }

    /// A server marked dead before it ever answered stays out of the ring when its retry is
    /// due, until a try of its own finds it answering; one caller tries at a time (tester
    /// finding retest32 1: back in the ring unanswered, other callers' writes went by the
    /// table with it).
    #[test]
    fn an_unproven_server_stays_out_until_a_try_finds_it_answering() {
        let h = Health::new(1, Duration::from_millis(50), Duration::from_secs(1));
        h.mark_unreachable(1);
        assert!(h.is_ejected(1) && !h.may_try());
        h.come_due();
        assert!(h.may_try(), "due");
        assert!(h.is_ejected(1), "due, but out of the ring");
        assert!(!h.snapshot("x").alive, "due, but no call goes to it");
        assert!(h.begin_probe(), "this caller tries it");
        assert!(!h.snapshot("x").alive, "while its try runs");
        assert!(!h.begin_probe(), "one try at a time");
        h.end_probe(false);
        assert!(h.is_ejected(1) && !h.may_try(), "rests again");
        h.come_due();
        assert!(h.begin_probe());
        h.end_probe(true);
        assert!(!h.is_ejected(1) && h.may_try() && h.is_healthy(), "back");
        assert!(!h.is_unproven() && !h.begin_probe());
        assert!(h.snapshot("x").alive, "back: alive");
    }

    /// A dead server whose retry is due is tried by one caller at a time: the others find
    /// it resting until that try's outcome is recorded and its claim dropped (tester
    /// finding proxy2 2: every caller tried it, each waiting its timeout against a stalled
    /// server).
    #[test]
    fn a_due_retry_is_one_callers_try() {
        let h = Health::new(1, Duration::from_millis(50), Duration::from_secs(1));
        assert!(matches!(h.claim(), Try::Alive));
        h.record_failure(h.epoch());
        assert!(matches!(h.claim(), Try::Resting), "resting");
        h.come_due();
        assert!(h.may_try() && h.snapshot("x").alive, "due");
        let Try::Retry(claim) = h.claim() else {
            panic!("the first caller tries it")
        };
        assert!(matches!(h.claim(), Try::Resting), "one try at a time");
        // Placement does not change for the try (tester finding failover3 1).
        assert!(h.may_try() && !h.is_ejected(1), "still due, in the table");
        // The try fails: rests again, then the claim goes.
        assert!(
            h.record_failure(h.epoch()).is_some(),
            "a failed retry marks it again"
        );
        drop(claim);
        assert!(matches!(h.claim(), Try::Resting), "rests again");
        h.come_due();
        let Try::Retry(claim) = h.claim() else {
            panic!("the next due retry")
        };
        // A claim given up without an outcome (nothing sent): the next caller tries.
        drop(claim);
        let Try::Retry(claim) = h.claim() else {
            panic!("given up: the next caller tries it")
        };
        assert!(h.record_success(h.epoch()), "it answers: back");
        assert!(
            matches!(h.claim(), Try::Alive),
            "alive while the claim is still held"
        );
        drop(claim);
        assert!(h.may_try() && h.is_healthy() && h.snapshot("x").alive);
    }

    /// A due retry under way in a process that forked is not the child's to wait for: its
    /// thread did not survive the fork (the claim is of another fork generation).
    #[test]
    fn a_retry_taken_before_a_fork_is_not_the_childs() {
        let h = Health::new(1, Duration::from_millis(50), Duration::from_secs(1));
        h.record_failure(h.epoch());
        h.come_due();
        // As a child sees a claim its parent took: of the generation before its own.
        h.trying.store(crate::fork::generation(), Ordering::Release);
        assert!(
            matches!(h.claim(), Try::Retry(_)),
            "another generation's try is no try here"
        );
    }

    /// From the marking that ejects a server, its rest is `ejected_rest`, not the back-off
    /// (pymemcache's dead_timeout: tester finding frameworks2 1); before it, the back-off.
    #[test]
    fn an_ejected_server_rests_its_ejected_rest() {
        let h = Health::new(1, Duration::from_secs(1), Duration::from_secs(1))
            .with_ejected_rest(Some((3, Duration::from_secs(60))));
        assert_eq!(h.back_off(1), Duration::from_secs(1));
        assert_eq!(h.back_off(2), Duration::from_secs(1));
        assert_eq!(h.back_off(3), Duration::from_secs(60));
        assert_eq!(h.back_off(9), Duration::from_secs(60));
        let plain = Health::new(1, Duration::from_secs(1), Duration::from_secs(30));
        assert_eq!(plain.back_off(3), Duration::from_secs(4));
        // the third marking in a row leaves it out for the ejected rest
        for _ in 0..3 {
            h.come_due();
            h.record_failure(h.epoch());
        }
        let left = h.snapshot("x").retry_in.unwrap();
        assert!(left > Duration::from_secs(50), "{left:?}");
    }

    #[test]
    fn retry_comes_due() {
        let h = Health::new(1, Duration::from_millis(1), Duration::from_millis(1));
        h.record_failure(h.epoch());
        let start = Instant::now();
        while !h.may_try() {
            assert!(start.elapsed() < Duration::from_secs(5));
            std::thread::yield_now();
        }
    }

    const MS: Duration = Duration::from_millis(1);

    /// The hook of a marking runs once, when the failure marks the server, before any call
    /// can see it marked (placement changes with the marking: the clean-up's count of
    /// placement changes must move first, tester finding retest28 1).
    #[test]
    fn the_hook_of_a_marking_runs_before_the_marking_is_seen() {
        let h = Health::new(2, Duration::from_secs(60), Duration::from_secs(600));
        let calls = std::cell::Cell::new(0);
        let hook = || {
            assert!(!h.is_marked() && h.may_try(), "not yet seen marked");
            calls.set(calls.get() + 1);
        };
        assert!(
            h.record_failure_then(h.epoch(), hook).is_none(),
            "one failure of two"
        );
        assert_eq!(calls.get(), 0);
        assert!(h.record_failure_then(h.epoch(), hook).is_some());
        assert_eq!(calls.get(), 1);
        assert!(h.is_marked() && !h.may_try());
        // resting: a failure that raced with the marking is the same incident, no hook
        assert!(h.record_failure_then(h.epoch(), hook).is_none());
        assert_eq!(calls.get(), 1);
    }

    #[test]
    fn a_success_of_an_exchange_begun_before_the_marking_is_not_a_return() {
        let h = Health::new(1, Duration::from_secs(60), Duration::from_secs(600));
        let began = h.epoch();
        assert!(h.record_failure(h.epoch()).is_some());
        assert!(!h.record_success(began), "begun before the marking");
        assert!(!h.may_try(), "still resting");
        h.come_due();
        assert!(h.record_success(h.epoch()), "the retry's exchange: back");
        assert!(h.is_healthy());
    }

    #[test]
    fn a_failure_that_raced_with_the_marking_does_not_double_the_back_off() {
        let h = Health::new(1, Duration::from_secs(60), Duration::from_secs(600));
        let e0 = h.epoch();
        let m = h.record_failure(e0).expect("marked");
        assert_eq!(m.retry_in, Duration::from_secs(60));
        // a call that passed may_try before the marking and took the epoch after it
        assert_eq!(h.record_failure(h.epoch()), None);
        assert_eq!(h.record_failure(h.epoch()), None);
        let s = h.snapshot("x");
        assert!(s.retry_in.unwrap() <= Duration::from_secs(60), "{s:?}");
        assert_eq!(s.failures, 3, "still counted as consecutive failures");
    }

    /// Issue 15 item 9: the back-off grew with the callers in flight (29.5 s with 16).
    #[test]
    fn failures_in_flight_together_count_once() {
        let h = Arc::new(Health::new(2, 1000 * MS, 30_000 * MS));
        let epoch = h.epoch();
        let marked: Vec<Marked> = (0..16)
            .map(|_| {
                let h = h.clone();
                std::thread::spawn(move || h.record_failure(epoch))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .filter_map(|t| t.join().unwrap())
            .collect();
        assert_eq!(marked.len(), 1, "{marked:?}");
        assert_eq!(marked[0].retry_in, 1000 * MS);
        assert!(marked[0].first);
        let retry_in = h.snapshot("x").retry_in.unwrap();
        assert!(retry_in <= 1000 * MS, "{retry_in:?}");
        // Late failures of the same requests change nothing.
        assert_eq!(h.record_failure(epoch), None);
        assert!(h.snapshot("x").retry_in.unwrap() <= 1000 * MS);
    }

    #[test]
    fn the_back_off_doubles_per_failed_retry_up_to_the_cap() {
        let h = Health::new(2, 100 * MS, 1000 * MS);
        let first = h.epoch();
        assert_eq!(h.record_failure(first), None, "one failure of two");
        let m = h.record_failure(first).unwrap();
        assert_eq!((m.failures, m.retry_in, m.first), (2, 100 * MS, true));
        for want in [200, 400, 800, 1000, 1000] {
            // Each retry's requests fail together: the first marks it dead again.
            h.come_due();
            let retry = h.epoch();
            let m = h.record_failure(retry).unwrap();
            assert_eq!((m.retry_in, m.first), (want * MS, false));
            assert_eq!(h.record_failure(retry), None);
        }
        assert!(h.record_success(h.epoch()), "back");
        assert!(h.may_try() && h.is_healthy());
        let again = h.epoch();
        h.record_failure(again);
        let m = h.record_failure(again).unwrap();
        assert_eq!(
            (m.retry_in, m.first),
            (100 * MS, true),
            "reset by the success"
        );
    }

    /// Cache::Memcached::Fast's max_failures in failure_timeout: a success between two
    /// failures does not reset the count; failures a window apart do not add up.
    #[test]
    fn a_window_counts_failures_a_success_does_not_reset() {
        let h = Health::with_window(2, Some(60_000 * MS), 60_000 * MS, 60_000 * MS);
        assert_eq!(h.record_failure(h.epoch()), None, "one failure of two");
        h.record_success(h.epoch());
        assert!(
            h.may_try() && h.is_healthy(),
            "the consecutive count is reset"
        );
        let m = h
            .record_failure(h.epoch())
            .expect("the second in the window marks it dead");
        assert_eq!((m.failures, m.first), (1, true), "{m:?}");
        assert!(!h.may_try());

        // consecutive counting (no window): the success in between resets it
        let c = Health::with_window(2, None, 60_000 * MS, 60_000 * MS);
        assert_eq!(c.record_failure(c.epoch()), None);
        c.record_success(c.epoch());
        assert_eq!(
            c.record_failure(c.epoch()),
            None,
            "one consecutive failure of two"
        );

        // a window that has ended: the count starts again
        let w = Health::with_window(2, Some(MS), 60_000 * MS, 60_000 * MS);
        assert_eq!(w.record_failure(w.epoch()), None);
        let start = Instant::now();
        while now_ms() < w.window_end.load(Ordering::Acquire) {
            assert!(start.elapsed() < Duration::from_secs(5));
            std::thread::yield_now();
        }
        assert_eq!(
            w.record_failure(w.epoch()),
            None,
            "the first of a new window"
        );
        assert!(w.may_try());
    }

    /// After the rest, a failed retry is the first failure of a new window (not a mark at
    /// once, as with consecutive counting).
    #[test]
    fn a_window_counts_again_after_the_rest() {
        let h = Health::with_window(2, Some(60_000 * MS), MS, MS);
        h.record_failure(h.epoch());
        assert!(h.record_failure(h.epoch()).is_some());
        let start = Instant::now();
        while !h.may_try() {
            assert!(start.elapsed() < Duration::from_secs(5));
            std::thread::yield_now();
        }
        assert_eq!(
            h.record_failure(h.epoch()),
            None,
            "one failure of two in a new window"
        );
        assert!(h.record_failure(h.epoch()).is_some(), "two: dead again");
    }

    #[test]
    fn a_connection_from_before_the_marking_is_not_a_failed_retry() {
        let h = Health::new(1, 100 * MS, 1000 * MS);
        let before = h.epoch();
        assert!(h.record_failure(before).is_some());
        // An idle connection opened before the server was marked dead (before its restart)
        // fails on reuse during the retry: not counted.
        assert_eq!(h.record_failure(before), None);
        assert_eq!(h.snapshot("x").failures, 1);
        assert!(h.snapshot("x").retry_in.unwrap() <= 100 * MS);
        // A connection of the retry itself fails: that is a failed retry.
        h.come_due();
        let m = h.record_failure(h.epoch()).unwrap();
        assert_eq!((m.failures, m.retry_in), (2, 200 * MS));
    }
}
