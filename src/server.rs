//! One server of the fleet: its connection pool, its health and its counters.
//!
//! The pool is rebuilt, empty, in a child process after `fork()`: the child must not use the
//! parent's sockets, and r2d2's worker threads and the slots other threads had checked out
//! did not survive the fork.

use crate::address::ServerSpec;
use crate::conn::{Conn, ConnOptions, Deadline};
use crate::dialect::{Dialect, Found, Outcome, Pipeline, Request};
use crate::error::{Error, Result};
use crate::fork;
use crate::gate::{Admission, Answer, Batch, Gate, GateRef, Job, Offer, Permit};
use crate::health::{Claim, Health, Try};
use crate::metrics::{Counters, Event, EventHandler};
use crate::pool::{Manager, Slot};
use crate::proto::ascii::StoreCommand;
use crate::resolve::Resolve;
use scheduled_thread_pool::{OnPoolDropBehavior, ScheduledThreadPool};
use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A checked-out slot that holds a connected socket, and the gate permit that admitted it.
/// Fields drop in order: the connection goes back to r2d2 before the permit passes on, so
/// the next permit holder finds it idle.
pub(crate) struct Pooled<'g> {
    slot: r2d2::PooledConnection<Manager>,
    _permit: Permit<'g>,
    /// The connection's byte counts when it was checked out (for the operation records).
    io_start: (u64, u64),
    /// When it was checked out ([`crate::conn::coarse_ms`], read once for the age check),
    /// when the pool closes idle or old connections (`idle_timeout`, `max_lifetime`): the
    /// connection goes back idle since then. Idle time counts from the checkout, not the
    /// give-back: longer by the operation's duration (within the coarse clock's tick for
    /// most), so a connection is dropped at worst that much early, and no second clock
    /// reading is paid per operation.
    checked_out_ms: Option<u64>,
    /// The server's health epoch when it was checked out: a success of an exchange that
    /// began before the server was marked dead is not its return (`Health::record_success`).
    epoch: u64,
    /// This caller's try of a dead server whose retry is due (`Health::claim`), given up
    /// when the connection goes back, after the exchange's outcome is recorded (declared
    /// last: dropped after the slot and the permit).
    _retry: Option<Claim<'g>>,
}

impl Pooled<'_> {
    /// Bytes written and read on the connection since it was checked out.
    pub(crate) fn io_since_checkout(&self) -> (u64, u64) {
        self.slot.conn.as_deref().map_or((0, 0), |c| {
            let (w, r) = c.io_bytes();
            (w - self.io_start.0, r - self.io_start.1)
        })
    }

    /// Runs `f` on the connection that `Server::checkout` put in the slot.
    pub(crate) fn with_conn<T>(&mut self, f: impl FnOnce(&mut Conn) -> Result<T>) -> Result<T> {
        match self.slot.conn.as_deref_mut() {
            Some(conn) => f(conn),
            None => Err(Error::Config(
                "internal: checked-out slot without a connection".into(),
            )),
        }
    }
}

/// `idle_timeout` and `max_lifetime` in milliseconds, `None` for no limit (unset or zero; a
/// limit under a millisecond is one).
fn age_limits_ms(settings: &PoolSettings) -> (Option<u64>, Option<u64>) {
    let ms = |d: Option<Duration>| {
        d.filter(|d| !d.is_zero())
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1))
    };
    (ms(settings.idle_timeout), ms(settings.max_lifetime))
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        // Back to the pool (before the slot is): idle in the gauges, and idle since now.
        if let Some(c) = self.slot.conn.as_deref_mut() {
            if let Some(g) = c.gauge.as_mut() {
                g.set_idle(true);
            }
            if let Some(at) = self.checked_out_ms {
                c.went_idle(at);
            }
        }
    }
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Slot;
    fn deref(&self) -> &Slot {
        &self.slot
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Slot {
        &mut self.slot
    }
}
type Pool = r2d2::Pool<Manager>;

/// A checked-out connection, or (for work handed over while waiting) its answer.
pub(crate) enum Checkout<'g> {
    /// Do the exchange on this connection.
    Conn(Pooled<'g>),
    /// A permit holder did the work: a read's value, flags and CAS unique (or a miss), or a
    /// set's outcome.
    Served(Result<Answer>),
}

/// What a server's pool and health need of the client's configuration.
#[derive(Clone)]
pub(crate) struct PoolSettings {
    /// Connections per server, at most.
    pub max_size: u32,
    /// Connections kept open while idle.
    pub min_idle: u32,
    /// How long a caller waits for a free connection.
    pub pool_timeout: Duration,
    /// Idle connections are closed after this long (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// Connections are closed after this long (`None`: never).
    pub max_lifetime: Option<Duration>,
    /// A `version` round trip before each checkout.
    pub test_on_check_out: bool,
    /// Consecutive failures that mark a server dead.
    pub failure_limit: u32,
    /// `failure_limit` counts the failures within this window (`None`: consecutive ones).
    pub failure_window: Option<Duration>,
    /// Whether an I/O timeout counts as a failure (`io_timeout_marks_dead`).
    pub io_timeout_marks_dead: bool,
    /// How long a dead server rests before it is tried again (first time).
    pub retry_timeout: Duration,
    /// The longest rest, as it backs off.
    pub retry_timeout_max: Duration,
    /// `(eject_after, rest)`: a server marked dead that many times in a row (out of the ring)
    /// rests this long instead ([`crate::ClientBuilder::ejected_rest`]); `None`: the back-off.
    pub ejected_rest: Option<(u32, Duration)>,
    /// Told when a server goes down or comes back.
    pub events: Option<EventHandler>,
    /// The clean-up of a returning server (`on_server_return`, `written_while_away_max`);
    /// `None` with `keep` or with `fail-fast` failover.
    pub on_return: Option<crate::stale::ReturnPolicy>,
}

/// One server: pool, health, counters.
pub(crate) struct Server {
    /// `host:port` (or the socket path).
    pub label: Arc<str>,
    /// Health shared with the pool manager.
    pub health: Arc<Health>,
    /// Counters shared with the pool manager.
    pub counters: Arc<Counters>,
    addr: Arc<Resolve>,
    opts: ConnOptions,
    dialect: Dialect,
    settings: PoolSettings,
    /// `idle_timeout` and `max_lifetime` in milliseconds (`None`: no limit), for the check
    /// at each checkout: converted once here, not per checkout.
    age_limits: (Option<u64>, Option<u64>),
    manager: Manager,
    generation: u64,
    /// Made at first use in the process that built the client (see [`Server::pool`]).
    pool: OnceLock<Pool>,
    gate: Gate,
    /// Set by [`Server::close`]: no new connection is opened.
    closed: std::sync::atomic::AtomicBool,
    child: Mutex<Option<(u64, Pool, Arc<Gate>)>>,
    /// What a returning server needs before it serves (see `stale`).
    pub away: Option<crate::stale::AwayGuard>,
}

/// The background thread r2d2 keeps its pools with: one per process, shared by every server
/// of every client, started by the first call that needs a pool (not when a client is built)
/// and ended when the last pool using it is dropped. A forked child starts its own (the
/// parent's thread did not survive the fork) and never touches the parent's record, not even
/// one a thread of the parent held locked at the fork.
///
/// r2d2 never cancels a pool's reaper job (it runs, doing nothing, after its pool is
/// dropped), so one thread takes at most [`POOLS_PER_THREAD`] pools: a process that keeps
/// building clients beside a long-lived one then gets a fresh thread (the old one ends when
/// its last pool is dropped) instead of an ever longer job list. A thread whose last pool is
/// dropped ends at once, its leftover jobs discarded (by default the thread pool would wait,
/// parked, up to 30 s for the next reaper run: a thread no fork could account for).
pub(crate) fn thread_pool() -> Arc<ScheduledThreadPool> {
    let shared = threads::shared();
    let mut state = shared.state.lock().unwrap_or_else(|p| p.into_inner());
    if state.given < POOLS_PER_THREAD {
        if let Some(threads) = state.current.upgrade() {
            state.given += 1;
            return threads;
        }
    }
    let threads = Arc::new(crate::quiet_threads::spawn_quiet(|| {
        ScheduledThreadPool::builder()
            .num_threads(1)
            .thread_name_pattern("mcpool-{}")
            .on_drop_behavior(OnPoolDropBehavior::DiscardPendingScheduled)
            .build()
    }));
    state.current = Arc::downgrade(&threads);
    state.given = 1;
    state.all.retain(|w| w.strong_count() > 0);
    state.all.push(Arc::downgrade(&threads));
    state.running += 1;
    drop(state);
    threads::count_until_exit(&threads, shared);
    threads::hook_fork();
    threads
}

/// The most pools one background thread is given (see [`thread_pool`]).
pub(crate) const POOLS_PER_THREAD: usize = 256;

/// The process's background threads, and what keeps them out of the way of `fork()`.
///
/// A thread that is waiting for work when another forks sits, in the child, in the queue
/// of parking_lot's global table (r2d2 and the thread pool wait on parking_lot's condvars)
/// although it no longer exists; glibc gives its stack, and so its thread-local parking
/// record, to the child's next new thread, whose first wait then links the same record
/// twice and spins or deadlocks. So before a fork every background thread is parked on a
/// standard-library condvar instead (a job that waits for the fork to be over; the standard
/// library's futex keeps no global queue), and released in the parent after it.
mod threads {
    use crate::fork;
    use arc_swap::ArcSwapOption;
    use scheduled_thread_pool::ScheduledThreadPool;
    use std::sync::{Arc, Condvar, Mutex, MutexGuard, Once, Weak};
    use std::time::{Duration, Instant};

    /// The process's threads, for one fork generation.
    pub(super) struct Shared {
        generation: u64,
        pub(super) state: Mutex<State>,
        /// Signalled when one of this generation's threads ends (`State::running`).
        ended: Condvar,
    }

    pub(super) struct State {
        /// The thread new pools are given, and how many it was given.
        pub current: Weak<ScheduledThreadPool>,
        pub given: usize,
        /// Every thread made in this generation that may still run.
        pub all: Vec<Weak<ScheduledThreadPool>>,
        /// How many of this generation's threads have not ended yet, those whose last pool
        /// is gone included (counted down by [`ExitGuard`]).
        pub running: usize,
    }

    static CURRENT: ArcSwapOption<Shared> = ArcSwapOption::const_empty();

    /// This generation's record (made on first use in the process or the child).
    pub(super) fn shared() -> Arc<Shared> {
        let generation = fork::generation();
        let mine =
            |s: &Option<Arc<Shared>>| s.as_ref().filter(|s| s.generation == generation).cloned();
        if let Some(s) = mine(&CURRENT.load_full()) {
            return s;
        }
        let fresh = Arc::new(Shared {
            generation,
            state: Mutex::new(State {
                current: Weak::new(),
                given: 0,
                all: Vec::new(),
                running: 0,
            }),
            ended: Condvar::new(),
        });
        // Another thread of this process may have stored one meanwhile: keep that one.
        let before = CURRENT.rcu(|cur| mine(cur).or_else(|| Some(fresh.clone())));
        mine(&before).unwrap_or(fresh)
    }

    /// Counts one of `shared`'s threads down when it ends: held by the thread's first job
    /// (which moves it into the thread's thread-local storage) or, when the pool was dropped
    /// before that job ran, by the discarded job, dropped as the thread ends.
    struct ExitGuard(Arc<Shared>);

    impl Drop for ExitGuard {
        fn drop(&mut self) {
            let mut state = self.0.state.lock().unwrap_or_else(|p| p.into_inner());
            state.running = state.running.saturating_sub(1);
            drop(state);
            self.0.ended.notify_all();
        }
    }

    std::thread_local! {
        static EXIT_GUARD: std::cell::RefCell<Option<ExitGuard>> = const { std::cell::RefCell::new(None) };
    }

    /// Counts `threads`' one thread down in `shared` (its `running` already counted it) when
    /// the thread ends: by then it has left every wait of the thread pool.
    pub(super) fn count_until_exit(threads: &ScheduledThreadPool, shared: Arc<Shared>) {
        let guard = ExitGuard(shared);
        threads.execute(move || {
            let _ = EXIT_GUARD.try_with(|g| *g.borrow_mut() = Some(guard));
        });
    }

    /// Each background thread, while a fork is under way, waits in a job on this.
    struct Hold {
        /// (threads parked in the hold, released)
        state: Mutex<(usize, bool)>,
        changed: Condvar,
    }

    /// The hold of the fork under way in this process.
    static HOLD: Mutex<Option<Arc<Hold>>> = Mutex::new(None);

    /// How long a fork waits for a busy background thread (one connecting) to come to the
    /// hold; past it, the fork goes ahead.
    const HOLD_WAIT: Duration = Duration::from_secs(2);

    pub(super) fn hook_fork() {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            #[allow(unsafe_code)]
            // SAFETY: both handlers are `extern "C"` functions that catch every panic; the
            // prepare handler runs in the forking thread before the fork, the parent handler
            // after it (normal context, like the code around `fork()`).
            unsafe {
                libc::pthread_atfork(Some(before_fork), Some(after_fork_parent), None);
            }
        });
    }

    extern "C" fn before_fork() {
        let _ = std::panic::catch_unwind(park_for_fork);
    }

    extern "C" fn after_fork_parent() {
        let _ = std::panic::catch_unwind(release_after_fork);
    }

    /// Parks every background thread of this process in a hold, and waits for those whose
    /// last pool is gone to end (both bounded by [`HOLD_WAIT`]): a thread left waiting in the
    /// thread pool would be in parking_lot's queue in the child (see the module doc).
    fn park_for_fork() {
        let generation = fork::generation();
        let Some(shared) = CURRENT.load_full().filter(|s| s.generation == generation) else {
            return;
        };
        let live: Vec<Arc<ScheduledThreadPool>> = {
            let mut state = shared.state.lock().unwrap_or_else(|p| p.into_inner());
            state.all.retain(|w| w.strong_count() > 0);
            state.all.iter().filter_map(Weak::upgrade).collect()
        };
        let end = Instant::now() + HOLD_WAIT;
        if !live.is_empty() {
            hold_threads(&live, end);
        }
        // The threads of dropped pools end at once (they have nothing left to run): wait
        // until only the held ones are left.
        let state = shared.state.lock().unwrap_or_else(|p| p.into_inner());
        drop(wait_while(&shared.ended, state, end, |s| {
            s.running > live.len()
        }));
        // The pools are dropped here, in the parent, with the hold still on: a pool whose
        // last reference this was ends its thread only after the release.
        drop(live);
    }

    /// Puts a job that waits in the hold on each of `live`'s threads and waits (until `end`)
    /// for all of them to be in it.
    fn hold_threads(live: &[Arc<ScheduledThreadPool>], end: Instant) {
        let hold = Arc::new(Hold {
            state: Mutex::new((0, false)),
            changed: Condvar::new(),
        });
        *HOLD.lock().unwrap_or_else(|p| p.into_inner()) = Some(hold.clone());
        for threads in live {
            let h = hold.clone();
            threads.execute(move || {
                let mut s = h.state.lock().unwrap_or_else(|p| p.into_inner());
                s.0 += 1;
                h.changed.notify_all();
                let end = Instant::now() + HOLD_WAIT * 2;
                drop(wait_while(&h.changed, s, end, |s| !s.1));
            });
        }
        let s = hold.state.lock().unwrap_or_else(|p| p.into_inner());
        drop(wait_while(&hold.changed, s, end, |s| s.0 < live.len()));
    }

    /// Waits on `cv` while `busy` holds, until `end` at the latest (a poisoned lock is
    /// taken as it is); returns the guard.
    fn wait_while<'a, T>(
        cv: &Condvar,
        guard: MutexGuard<'a, T>,
        end: Instant,
        busy: impl FnMut(&mut T) -> bool,
    ) -> MutexGuard<'a, T> {
        cv.wait_timeout_while(guard, end.saturating_duration_since(Instant::now()), busy)
            .unwrap_or_else(|p| p.into_inner())
            .0
    }

    /// Lets the parent's background threads go back to work.
    fn release_after_fork() {
        if let Some(hold) = HOLD.lock().unwrap_or_else(|p| p.into_inner()).take() {
            hold.state.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
            hold.changed.notify_all();
        }
    }
}

/// The longest wait handed to r2d2 or added to the clock: a century. `Duration::MAX`, Rust's
/// "no limit", is a valid setting; `Instant + Duration` panics past the clock's range, and
/// r2d2 adds its waits to `Instant::now()`.
pub(crate) fn addable(d: Duration) -> Duration {
    d.min(Duration::from_secs(100 * 365 * 86_400))
}

/// An empty slot (no connection, no connect under way) is traded for an idle one holding a
/// connection when the pool has one: r2d2 hands out the slot returned last, which may be an
/// empty one it made for a caller that waited, while a connected one sits under it; taking
/// the empty one would open a new connection beside an idle one (tester finding statscli
/// 2). The empty slots taken on the way go back to the pool. At most `max_size` looks, none
/// when the slot has a connection, and no more after an alive check failed (`test_on_check_out`).
fn prefer_connected(
    pool: &Pool,
    slot: r2d2::PooledConnection<Manager>,
    max_size: u32,
) -> r2d2::PooledConnection<Manager> {
    // After a failed alive check no other idle connection is looked at (each would be
    // checked in turn: those opened with it are likely as stale): a new one is opened.
    if slot.conn.is_some() || slot.warm.is_some() || crate::pool::alive_check_failed() {
        return slot;
    }
    let mut empty = Vec::new();
    for _ in 0..max_size {
        match pool.try_get() {
            Some(other) if other.conn.is_some() => {
                empty.push(slot);
                return other;
            }
            Some(other) => {
                empty.push(other);
                // (its alive check failed: see `crate::pool::alive_check_failed`)
                if crate::pool::alive_check_failed() {
                    break;
                }
            }
            None => break,
        }
    }
    slot
}

fn make_pool(s: &PoolSettings, manager: Manager, threads: Arc<ScheduledThreadPool>) -> Pool {
    let manager = Manager {
        threads: Some(Arc::downgrade(&threads)),
        slots: Default::default(),
        ..manager
    };
    Pool::builder()
        .max_size(s.max_size)
        .min_idle(Some(s.min_idle))
        .connection_timeout(addable(s.pool_timeout))
        .idle_timeout(s.idle_timeout.filter(|d| !d.is_zero()).map(addable))
        .max_lifetime(s.max_lifetime.filter(|d| !d.is_zero()).map(addable))
        .test_on_check_out(s.test_on_check_out)
        .thread_pool(threads)
        .build_unchecked(manager)
}

impl Server {
    /// One server. Its pool (with the process's background thread, [`thread_pool`]) is made
    /// now when it keeps idle connections (`min_idle` > 0, opened now in the background),
    /// else by the first call that needs it: building such a client starts no thread and
    /// opens no connection.
    pub(crate) fn new(
        spec: &ServerSpec,
        settings: &PoolSettings,
        opts: &ConnOptions,
        dialect: &Dialect,
    ) -> Server {
        // `host:port` as written (a port's leading zero kept: fed back to `set_servers`, a
        // label places keys where its server's did)
        let label: Arc<str> = spec.to_string().into();
        let health = Arc::new(
            Health::with_window(
                settings.failure_limit,
                settings.failure_window,
                settings.retry_timeout,
                settings.retry_timeout_max,
            )
            .with_ejected_rest(settings.ejected_rest),
        );
        let counters = Arc::new(Counters::default());
        counters
            .pool_generation
            .store(fork::generation(), std::sync::atomic::Ordering::Relaxed);
        let addr = Arc::new(Resolve::new(
            spec.addr.clone(),
            opts.resolver.clone(),
            opts.resolve_interval,
        ));
        let manager = Manager {
            addr: addr.clone(),
            label: label.clone(),
            opts: opts.clone(),
            dialect: dialect.clone(),
            health: health.clone(),
            counters: counters.clone(),
            threads: None,
            warm_slots: settings.min_idle,
            slots: Default::default(),
        };
        let pool = OnceLock::new();
        if settings.min_idle > 0 {
            let _ = pool.set(make_pool(settings, manager.clone(), thread_pool()));
        }
        Server {
            pool,
            label,
            health,
            counters,
            addr,
            opts: opts.clone(),
            dialect: dialect.clone(),
            settings: settings.clone(),
            age_limits: age_limits_ms(settings),
            manager,
            generation: fork::generation(),
            gate: Gate::new(settings.max_size),
            closed: std::sync::atomic::AtomicBool::new(false),
            child: Mutex::new(None),
            away: settings
                .on_return
                .as_ref()
                .map(crate::stale::ReturnPolicy::guard),
        }
    }

    fn make_pool(&self, threads: Arc<ScheduledThreadPool>) -> Pool {
        make_pool(&self.settings, self.manager.clone(), threads)
    }

    /// This server's address and what its name resolved to.
    pub(crate) fn resolve(&self) -> &Arc<Resolve> {
        &self.addr
    }

    /// The addresses this server's name resolved to (none when it cannot be resolved),
    /// resolving the name first when it never was (up to `timeout`): what `set_servers`
    /// compares a server added back under another spelling with.
    pub(crate) fn resolved_addrs(&self, timeout: Duration) -> Vec<std::net::SocketAddr> {
        self.addr
            .addrs(timeout)
            .map(|a| a.to_vec())
            .unwrap_or_default()
    }

    /// A server `set_servers` adds under a failover that ejects, tried before the new list
    /// is used (a connect, with the TLS handshake and SASL when configured, within
    /// `connect_timeout`, then a `version` round trip within `io_timeout`; the connection is
    /// then closed): one that cannot be reached or does not answer (a stopped memcached
    /// whose kernel still accepts connections: tester finding retest31 1) joins marked dead
    /// and out of the ring ([`Health::mark_unreachable`]), as it would be after the calls
    /// that found it down. Not with a `failure_limit` of `u32::MAX` (Cache::Memcached::Fast's
    /// `max_failures => 0`, "never"): such a server is never marked dead. Joining alive, it
    /// would place keys by the table with it until the first call to it failed, then by the
    /// table without it: under a modulo profile a key of a live server written meanwhile
    /// moved back to where the list before the change had put it, and read its older copy
    /// there (tester finding topology2 1). Returns the event to report once the new list is
    /// in place.
    pub(crate) fn probe_added(&self, eject_after: u32) -> Option<Event> {
        if self.settings.failure_limit == u32::MAX {
            return None;
        }
        let e = self.unanswered()?;
        if let Some(away) = &self.away {
            away.marking();
        }
        let marked = self.health.mark_unreachable(eject_after);
        self.health.set_cause(&e);
        if let Some(away) = &self.away {
            away.server_down();
        }
        Counters::bump(&self.counters.ejections);
        Some(Event::ServerDown {
            server: self.label.to_string(),
            failures: marked.failures,
            retry_in: marked.retry_in,
        })
    }

    /// An unproven server ([`Server::probe_added`]'s, marked dead before it ever answered)
    /// whose retry is due, when no try of it is under way: tried on a thread of its own
    /// (`mcpool-probe`), so that the call that noticed it keeps its own time (tester finding
    /// retest33 1: a call to a healthy server waited the try's `io_timeout`, overran its
    /// `operation_timeout` and blamed, even marked dead, its healthy server). Its `ServerUp`
    /// event is reported from that thread. No thread to be had: tried at the next retry.
    pub(crate) fn retry_unproven_in_background(server: &Arc<Server>) {
        if !server.health.begin_probe() {
            return;
        }
        let s = server.clone();
        let spawned = std::thread::Builder::new()
            .name("mcpool-probe".into())
            .spawn(move || {
                let event = s.retry_unproven();
                s.emit(event);
            });
        if spawned.is_err() {
            server.health.end_probe(false);
        }
    }

    /// [`Server::retry_unproven_in_background`]'s try: a connect and a `version`, as at its
    /// addition. Answering, it is alive and in the ring again (its `on_server_return`
    /// clean-up runs at its first checkout, as for any return); not, it rests again, the
    /// back-off doubled. Returns the event to report (`ServerUp`).
    fn retry_unproven(&self) -> Option<Event> {
        match self.unanswered() {
            None => {
                self.health.end_probe(true);
                Counters::bump(&self.counters.returns);
                Some(Event::ServerUp {
                    server: self.label.to_string(),
                })
            }
            Some(e) => {
                // Out of the ring it stays: no placement changes, so the copies other
                // servers hold for others stay theirs (its return clean-up stays due).
                self.health.end_probe(false);
                self.health.set_cause(&e);
                None
            }
        }
    }

    /// A connect and a `version` round trip on a connection of their own (closed after),
    /// within `connect_timeout` and `io_timeout`: the server's failure, counted, or `None`
    /// when it answered (or failed otherwise: a refused SASL password, which its calls say).
    fn unanswered(&self) -> Option<Error> {
        let timeout = self.opts.connect_timeout;
        let answered = self
            .dialect
            .connect(
                &self.addr,
                &self.label,
                &self.opts,
                timeout,
                Deadline::after(Some(timeout)),
                false,
            )
            .and_then(|mut conn| {
                conn.set_deadline(Deadline::after(Some(self.opts.io_timeout)));
                self.dialect.alive_check(&mut conn)
            });
        let e = match answered {
            Err(e) if e.is_server_failure() => e,
            _ => return None,
        };
        // (a refused connect counts as a connect error, a timeout as a timeout)
        if matches!(e, Error::Io { .. }) {
            Counters::bump(&self.counters.connect_errors);
        } else {
            self.counters.error(&e);
        }
        Some(e)
    }

    /// `disconnect_all` for this server: the idle connections are closed now, those in use
    /// when their call gives them back, so the next call opens a new one. The server's
    /// health (marked dead or not, its failures) and metrics stay as they are. A pool not
    /// made yet (no call used the server) is left unmade.
    pub(crate) fn disconnect(&self) {
        self.health.disconnect();
        let pool = if fork::generation() == self.generation {
            match self.pool.get() {
                Some(p) => Cow::Borrowed(p),
                None => return,
            }
        } else {
            self.pool().0
        };
        // The idle slots, taken without waiting (at most the pool's size) and given back
        // empty: their sockets close now. A caller that finds none free meanwhile waits for
        // its slot as while r2d2 makes one (`checkout_or_hand_over`), not longer.
        let mut emptied = Vec::new();
        while emptied.len() < self.settings.max_size as usize {
            match pool.try_get() {
                Some(mut slot) => {
                    slot.conn = None;
                    emptied.push(slot);
                }
                None => break,
            }
        }
    }

    /// The error of a call placed on this server while it is marked dead and not due:
    /// [`Error::ServerDead`] with its cause, or [`Error::Closed`] once its client is closed
    /// (every call after `close` ends so, a dead server's too: tester finding cteam3 2).
    pub(crate) fn dead_error(&self) -> Error {
        if self.closed.load(std::sync::atomic::Ordering::Acquire) {
            return Error::Closed;
        }
        Error::ServerDead {
            server: self.label.to_string(),
            cause: self.health.cause(),
        }
    }

    /// Closes the server for its client ([`crate::Client::close`]): callers in line and
    /// later ones get [`Error::Closed`] from the gate, no new connection is opened, and the
    /// idle connections close now (those in use when their call gives them back, as
    /// [`Server::disconnect`]).
    pub(crate) fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.gate.close();
        if let Some((_, _, gate)) = &*self.child.lock().unwrap_or_else(|p| p.into_inner()) {
            gate.close();
        }
        self.disconnect();
    }

    /// This process's pool and gate: the original ones, or fresh ones after a fork.
    pub(crate) fn pool(&self) -> (Cow<'_, Pool>, GateRef<'_>) {
        let generation = fork::generation();
        if generation == self.generation {
            let pool = self.pool.get_or_init(|| self.make_pool(thread_pool()));
            return (Cow::Borrowed(pool), GateRef::Borrowed(&self.gate));
        }
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        match &*child {
            Some((g, pool, gate)) if *g == generation => {
                (Cow::Owned(pool.clone()), GateRef::Shared(gate.clone()))
            }
            _ => {
                // The parent's sockets, never used here, are closed (without a byte sent).
                fork::close_inherited();
                // The child's metrics count its own calls and connections, from 0 (see
                // `OpenGauge`; unless a metrics read in the child did it first).
                self.counters.restart_if_forked(generation);
                let pool = self.make_pool(thread_pool());
                let gate = Arc::new(Gate::new(self.settings.max_size));
                // A client closed before the fork stays closed in the child.
                if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                    gate.close();
                }
                *child = Some((generation, pool.clone(), gate.clone()));
                (Cow::Owned(pool), GateRef::Shared(gate))
            }
        }
    }

    /// Checks out a slot and makes sure it holds a usable connection, waiting at most
    /// `wait` for a free slot; `deadline` bounds the wait, the connect and every read and
    /// write of the exchange that follows. The fast path (an idle connection) reads no clock.
    pub(crate) fn checkout(&self, wait: Duration, deadline: Deadline) -> Result<Pooled<'_>> {
        match self.checkout_or_hand_over(wait, deadline, None)? {
            Checkout::Conn(pooled) => Ok(pooled),
            // Nothing was handed over.
            Checkout::Served(_) => Err(self.pool_timeout(Duration::ZERO, false)),
        }
    }

    /// As [`Server::checkout`] for work that may be handed over (a single-key read, a small
    /// `set`): when the caller has to wait, `offer` goes to the permit holders (see `gate`),
    /// and the answer may come back instead of a connection.
    pub(crate) fn checkout_or_offer(
        &self,
        wait: Duration,
        deadline: Deadline,
        offer: Offer<'_>,
    ) -> Result<Checkout<'_>> {
        self.checkout_or_hand_over(wait, deadline, Some(offer))
    }

    /// The error of a wait for a connection that ended after `waited`, by the operation's
    /// deadline when `operation_timeout` (it was nearer than the pool timeout), counted.
    #[inline]
    fn pool_timeout(&self, waited: Duration, operation_timeout: bool) -> Error {
        self.count_wait(waited);
        let e = Error::PoolTimeout {
            server: self.label.to_string(),
            operation_timeout,
        };
        self.counters.error(&e);
        e
    }

    fn count_wait(&self, waited: Duration) {
        Counters::bump(&self.counters.pool_waits);
        self.counters.pool_wait_nanos.fetch_add(
            waited.as_nanos() as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    fn checkout_or_hand_over(
        &self,
        wait: Duration,
        mut deadline: Deadline,
        offer: Option<Offer<'_>>,
    ) -> Result<Checkout<'_>> {
        let (pool, gate) = self.pool();
        // First come, first served: a permit guarantees a connection (or room for one). The
        // wait in line ends at the pool timeout or the operation's deadline, whichever is
        // first; work handed over ends at the deadline (see `gate`).
        let admitted = gate
            .admit(wait, deadline.instant(), offer)
            // (a wait shorter than the pool timeout was ended by the deadline)
            .map_err(|w| self.pool_timeout(w, w < wait))?;
        let (permit, mut waited) = match admitted {
            Admission::Permit(permit, waited) => (permit, waited),
            Admission::Served(found, waited) => {
                self.count_wait(waited);
                return Ok(Checkout::Served(found));
            }
            Admission::Abandoned(waited) => {
                self.count_wait(waited);
                // The caller's deadline passed while its work was served (perhaps sent
                // already by the permit holder serving it: whether it was applied is unknown).
                let e = Error::IoTimeout {
                    server: self.label.to_string(),
                    operation_timeout: true,
                    sent: true,
                };
                self.counters.error(&e);
                return Err(e);
            }
            Admission::Interrupted(waited) => {
                self.count_wait(waited);
                return Err(Error::Interrupted { sent: false });
            }
            Admission::Closed(waited) => {
                if !waited.is_zero() {
                    self.count_wait(waited);
                }
                return Err(Error::Closed);
            }
        };
        if let Some(waited) = waited {
            deadline.charge(waited);
        }
        // Marked dead while this call waited in line (or since it picked the server), its
        // retry not yet due: nothing is sent, and the call fails as one that found it dead
        // (its keys move on under rehash/eject). Sent, its success would bring the server
        // back unseen by `on_server_return`'s clean-up, and its read could return a value
        // that a write routed elsewhere meanwhile replaced (tester finding timeouts 1).
        // A dead server whose retry is due is tried by one call at a time (`Health::claim`):
        // the others find it resting, as above.
        let retry = match self.health.claim() {
            Try::Alive => None,
            Try::Retry(claim) => Some(claim),
            Try::Resting => return Err(self.dead_error()),
        };
        crate::pool::checkout_begins(deadline);
        let slot = match pool.try_get() {
            Some(s) => s,
            // Only while r2d2 is still making the slot this permit stands for (its
            // background thread never waits for a server, see `pool`): a wait like the one
            // in line, counted with it.
            None => {
                let since = Instant::now();
                let limit = deadline.limit(wait);
                let got = pool.get_timeout(addable(limit).max(Duration::from_millis(100)));
                let slot_wait = since.elapsed();
                deadline.charge(slot_wait);
                let total = waited.unwrap_or_default() + slot_wait;
                waited = Some(total);
                got.map_err(|_| {
                    crate::pool::checkout_ends();
                    self.pool_timeout(total, limit < wait)
                })?
            }
        };
        let slot = prefer_connected(&pool, slot, self.settings.max_size);
        let alive_check_failed = crate::pool::alive_check_failed();
        crate::pool::checkout_ends();
        // One count per checkout that waited, in line and for its slot together.
        if let Some(waited) = waited {
            self.count_wait(waited);
        }
        let (idle, lifetime) = self.age_limits;
        let checked_out_ms = (idle.is_some() || lifetime.is_some()).then(crate::conn::coarse_ms);
        let mut pooled = Pooled {
            slot,
            _permit: permit,
            io_start: (0, 0),
            checked_out_ms,
            epoch: self.health.epoch(),
            _retry: retry,
        };
        // A connection the background thread opened for this slot; a connect it started
        // is completed below, by this caller.
        let mut started = crate::pool::Warm::Gone;
        if pooled.slot.conn.is_none() {
            match pooled.slot.take_warm() {
                crate::pool::Warm::Open(c) => pooled.slot.conn = Some(c),
                other => started = other,
            }
        }
        if let Some(g) = pooled
            .slot
            .conn
            .as_deref_mut()
            .and_then(|c| c.gauge.as_mut())
        {
            g.set_idle(false);
        }
        let slot: &mut Slot = &mut pooled;
        // A pooled connection with bytes waiting (a stray reply) or closed by the server is
        // dropped here, never reused: one non-blocking peek. So is one to an address the
        // server's name no longer resolves to (`resolve_interval`), one opened before a
        // `disconnect_all`, and one idle longer than `idle_timeout` or older than
        // `max_lifetime` (one coarse clock reading: the pool's own reaper only runs every
        // 30 s).
        let mark = self.health.disconnects();
        let fresh = |c: &Conn| {
            c.mark() == mark && !checked_out_ms.is_some_and(|now| c.expired(now, idle, lifetime))
        };
        if !slot.conn.as_mut().is_some_and(|c| {
            fresh(c) && c.is_reusable_idle() && self.addr.still_current(c.peer(), c.pins())
        }) {
            slot.conn = None;
            // A permit granted just before the client was closed opens no connection.
            if self.closed.load(std::sync::atomic::Ordering::Acquire) {
                return Err(Error::Closed);
            }
            let epoch = self.health.epoch();
            let timeout = deadline.limit(self.opts.connect_timeout);
            if timeout.is_zero() {
                // Out of time before trying: not the server's fault. When an idle
                // connection's alive check (`test_on_check_out`) took the time, the call
                // timed out talking to the server, not connecting (tester finding
                // retest26 5: "while connecting" sent the user looking at connects).
                let server = self.label.to_string();
                let e = if alive_check_failed {
                    Error::IoTimeout {
                        server,
                        operation_timeout: true,
                        sent: false,
                    }
                } else {
                    Error::ConnectTimeout {
                        server,
                        operation_timeout: true,
                        resolving: false,
                    }
                };
                self.counters.error(&e);
                return Err(e);
            }
            let mut connected = self.complete_connect(started, timeout, deadline);
            if timeout < self.opts.connect_timeout {
                // The operation's deadline set the connect's time: the error names it.
                if let Err(Error::ConnectTimeout {
                    operation_timeout, ..
                }) = &mut connected
                {
                    *operation_timeout = true;
                }
            }
            if self.dialect.handshakes(&self.opts) {
                // The handshake and SASL took what they took, within the deadline.
                deadline.left_at(Instant::now());
            } else {
                deadline.charge(timeout);
            }
            match connected {
                Ok(mut c) => {
                    Counters::bump(&self.counters.connects);
                    c.set_epoch(epoch);
                    c.set_mark(self.health.disconnects());
                    c.gauge = Some(crate::pool::OpenGauge::new(&self.counters, false));
                    slot.conn = Some(Box::new(c));
                }
                Err(e) => {
                    // A refused or unreachable connect counts once, as a connect error (not
                    // also as an `io_errors` socket error); a connect timeout counts in
                    // `connect_errors` and `timeouts` (`Counters::error`).
                    let refused = matches!(e, Error::Io { .. });
                    if refused {
                        Counters::bump(&self.counters.connect_errors);
                    }
                    let event = self.failed_counted(&e, epoch, !refused);
                    // The callback may issue commands: slot and permit go back first.
                    drop(pooled);
                    self.emit(event);
                    return Err(e);
                }
            }
        }
        if let Some(conn) = pooled.slot.conn.as_deref_mut() {
            conn.set_deadline(deadline);
            pooled.io_start = conn.io_bytes();
        }
        if let Some(away) = self.away.as_ref().filter(|a| a.is_pending()) {
            // A returning server serves nothing before its clean-up (see `stale`).
            let epoch = pooled.conn.as_ref().map_or(0, |c| c.epoch());
            // (waiting for another caller's clean-up as for a reply: within the deadline)
            let wait = deadline.limit(self.opts.io_timeout);
            let cut = wait < self.opts.io_timeout;
            let checked = pooled.epoch;
            let still_current = || self.health.epoch() == checked;
            let cleaned = pooled.with_conn(|conn| {
                away.clean(
                    conn,
                    &self.dialect,
                    &self.counters,
                    (wait, cut),
                    &still_current,
                )
            });
            if let Err(e) = cleaned {
                pooled.conn = None;
                let event = self.failed(&e, epoch);
                drop(pooled);
                self.emit(event);
                return Err(e);
            }
        }
        Ok(Checkout::Conn(pooled))
    }

    /// A new connection within `timeout`: the connect the background thread `started` for
    /// the slot completed (waiting for it, the TLS handshake, SASL), or one of the caller's
    /// own (also when the one started failed: the caller tries every address). The TLS
    /// handshake and SASL keep to the operation's `deadline`, as its exchanges do.
    fn complete_connect(
        &self,
        started: crate::pool::Warm,
        timeout: Duration,
        deadline: crate::conn::Deadline,
    ) -> Result<Conn> {
        use crate::pool::{nonblocking, Warm};
        let since = Instant::now();
        let socket = match started {
            Warm::Connecting { stream, peer, .. } => {
                match nonblocking::connected(&stream, timeout) {
                    Ok(true) => Some(crate::conn::Socket::Tcp(stream, peer)),
                    Ok(false) => {
                        return Err(Error::ConnectTimeout {
                            server: self.label.to_string(),
                            operation_timeout: false,
                            resolving: false,
                        })
                    }
                    // The interrupt check ended the wait: so the call.
                    Err(e) => match crate::conn::connect_error(&self.label, e) {
                        e @ Error::Interrupted { .. } => return Err(e),
                        _ => None,
                    },
                }
            }
            Warm::Connected(socket) => Some(socket),
            Warm::Resolving { .. } | Warm::Open(_) | Warm::Gone => None,
        };
        match socket {
            Some(socket) => {
                self.dialect
                    .establish(socket, &self.addr, &self.label, &self.opts, deadline)
            }
            None => self.dialect.connect(
                &self.addr,
                &self.label,
                &self.opts,
                timeout.saturating_sub(since.elapsed()),
                deadline,
                false,
            ),
        }
    }

    /// Accounts for an exchange's result, serves waiting work (docs/handover.md), drops a
    /// connection that is not clean and gives the slot and the permit back; then reports a
    /// change of the server's state, so that the event callback may issue commands of its
    /// own (with a single connection, it would otherwise wait for the one its caller holds).
    pub(crate) fn release<T>(&self, mut pooled: Pooled, result: &Result<T>) {
        Counters::bump(&self.counters.operations);
        let event = match result {
            Ok(_) => {
                if self.health.record_success(pooled.epoch) {
                    Counters::bump(&self.counters.returns);
                    Some(Event::ServerUp {
                        server: self.label.to_string(),
                    })
                } else {
                    None
                }
            }
            Err(e) => self.failed(
                e,
                pooled
                    .conn
                    .as_ref()
                    .map_or_else(|| self.health.epoch(), |c| c.epoch()),
            ),
        };
        let mut later = None;
        if pooled._permit.gate().has_jobs() && pooled.conn.as_ref().is_some_and(|c| c.is_reusable())
        {
            later = self.serve_waiting(&mut pooled);
        }
        // Not clean, to an address the server's name no longer resolves to, or opened before
        // a `disconnect_all`: closed.
        let mark = self.health.disconnects();
        if !pooled.conn.as_ref().is_some_and(|c| {
            c.mark() == mark && c.is_reusable() && self.addr.still_current(c.peer(), c.pins())
        }) {
            pooled.conn = None;
        }
        drop(pooled);
        self.emit(event);
        self.emit(later);
    }

    /// Serves the work waiting at the head of the gate's line on this (clean) connection:
    /// each batch written in one go, the replies read in order, each caller woken with its
    /// answer. At most `SERVE_ROUNDS` batches, and all of it within the holder's own
    /// deadline: its caller has its result and must not be kept past the time it allowed
    /// (each waiting caller ends by its own deadline too, see `gate`). A round starts only
    /// while time is left; when the deadline cuts a round short, the connection is dropped,
    /// its reads go back in line and its sets get the timeout, and the server is not blamed
    /// (it did not keep silent for an I/O timeout). Returns the event of a server failure.
    #[inline(never)]
    fn serve_waiting(&self, pooled: &mut Pooled) -> Option<Event> {
        use std::sync::atomic::Ordering::Relaxed;
        const SERVE_ROUNDS: usize = 4;
        // memcached answers at most `-R` requests (default 20) of a connection per event-loop
        // turn; a batch that fits is answered in one turn (with 64, meta fell to half).
        const BATCH_JOBS: usize = 20;
        const BATCH_BYTES: usize = 64 * 1024;
        for _ in 0..SERVE_ROUNDS {
            let mut deadline = pooled.conn.as_ref()?.deadline();
            if deadline.left_at(Instant::now()) == Some(Duration::ZERO) {
                return None;
            }
            let mut batch = pooled._permit.gate().take_jobs(BATCH_JOBS, BATCH_BYTES);
            if batch.is_empty() {
                return None;
            }
            let n = batch.len();
            let mut work = Serving {
                batch: &mut batch,
                refused: Vec::new(),
            };
            let served = pooled.with_conn(|conn| {
                conn.set_deadline(deadline);
                self.dialect.pipeline(conn, &mut work)
            });
            // A handed-over read's hit or miss is counted by its caller, once it has the value
            // decoded (`Server::lookups`): what the caller got, not what the server sent.
            // Stores the server refused (their callers got the error), counted as a store's
            // own exchange counts them.
            for e in &work.refused {
                self.counters.error(e);
            }
            self.counters.operations.fetch_add(n as u64, Relaxed);
            self.counters.handed_over.fetch_add(n as u64, Relaxed);
            if let Err(e) = served {
                let (cut, epoch) = pooled
                    .conn
                    .as_ref()
                    .map_or((false, self.health.epoch()), |c| (c.cut_short(), c.epoch()));
                if matches!(e, Error::Interrupted { .. }) {
                    // The holder's caller was interrupted, not the callers it serves: their
                    // reads go back in line; their sets were written, and whether they were
                    // stored is unknown, as when a connection closes under them (tester
                    // finding lifecycle 3: they ended with `Interrupted`).
                    batch.retry(Error::Io {
                        server: self.label.to_string(),
                        source: std::io::Error::new(
                            std::io::ErrorKind::ConnectionAborted,
                            "the connection carrying this set was closed before its reply \
                             (the call serving it was interrupted): whether it was stored \
                             is unknown",
                        ),
                    });
                    return None;
                }
                if cut && matches!(e, Error::IoTimeout { .. }) {
                    // The holder's deadline, not the server: reads try again.
                    self.counters.error(&e);
                    batch.retry(e);
                    return None;
                }
                let event = self.failed(&e, epoch);
                batch.fail(e);
                return event;
            }
        }
        None
    }

    /// Counts a batch item the server answered with an error of its own (a SERVER_ERROR),
    /// as a single call's reply counts it.
    pub(crate) fn count_refused(&self, e: &Error) {
        self.counters.error(e);
    }

    /// Counts the outcome of a retrieval as its caller got it: of `asked` keys, `found` came
    /// with a value, of which `undecoded` did not decode (the caller got
    /// `Error::Decompress` / `Error::ValueFormat`): those count in `protocol_errors`, as
    /// neither hits nor misses; the others are hits, and the keys not found misses. The one
    /// place a read's keys are counted (docs/metrics.md).
    pub(crate) fn lookups(&self, asked: usize, found: usize, undecoded: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        let c = &self.counters;
        c.hits
            .fetch_add(found.saturating_sub(undecoded) as u64, Relaxed);
        c.misses
            .fetch_add(asked.saturating_sub(found) as u64, Relaxed);
        if undecoded > 0 {
            c.protocol_errors.fetch_add(undecoded as u64, Relaxed);
        }
    }

    /// Counts an error of an exchange of health epoch `epoch` (its connection's; for a
    /// connect, the one it started in); a server failure may mark the server dead. Returns
    /// the event to report once the caller has given back its slot and permit.
    fn failed(&self, e: &Error, epoch: u64) -> Option<Event> {
        self.failed_counted(e, epoch, true)
    }

    /// [`Server::failed`], counting `e` by kind only when `count` (a refused connect is
    /// counted by its caller, as a connect error).
    fn failed_counted(&self, e: &Error, epoch: u64, count: bool) -> Option<Event> {
        if count {
            self.counters.error(e);
        }
        if !e.is_server_failure()
            || (!self.settings.io_timeout_marks_dead && matches!(e, Error::IoTimeout { .. }))
        {
            return None;
        }
        let marked = self.health.record_failure_then(epoch, || {
            if let Some(away) = &self.away {
                away.marking();
            }
        })?;
        self.health.set_cause(e);
        // Every marking, a failed retry's too (see `stale`): what is written elsewhere from
        // now on is remembered, and copies held for others are deleted.
        if let Some(away) = &self.away {
            away.server_down();
        }
        if !marked.first {
            return None;
        }
        Counters::bump(&self.counters.ejections);
        Some(Event::ServerDown {
            server: self.label.to_string(),
            failures: marked.failures,
            retry_in: marked.retry_in,
        })
    }

    /// Hands `event` to the `on_event` handler. A handler that panics does not unwind into
    /// the call that changed the server's state (its result stands): the panic is caught,
    /// after the panic hook reported it, as the `on_operation` handler's is.
    pub(crate) fn emit(&self, event: Option<Event>) {
        if let (Some(handler), Some(event)) = (&self.settings.events, event) {
            // (its time and its own calls are not the triggering call's, in that call's record)
            crate::client::observe::aside(|| {
                let _ =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (handler.0)(&event)));
            });
        }
    }
}

/// Work handed over (see `gate`), as requests of one pipeline: a read is a `Get`, a set a
/// `Store`; each reply completes its job.
struct Serving<'b> {
    batch: &'b mut Batch,
    /// The errors that answered single jobs (a store's `SERVER_ERROR`), for the counters.
    refused: Vec<Error>,
}

impl Pipeline for Serving<'_> {
    fn len(&self) -> usize {
        self.batch.len()
    }

    fn request(&self, i: usize) -> Request<'_> {
        match self.batch.job(i) {
            Some(Job::Get { wire, cas }) => Request::Get {
                key: wire,
                cas: *cas,
                touch: None,
            },
            Some(Job::Set {
                wire,
                data,
                flags,
                ttl,
            }) => Request::Store {
                version: None,
                cmd: StoreCommand::Set,
                key: wire,
                flags: *flags,
                ttl: *ttl,
                data,
                quiet: false,
            },
            // Every job of a batch has its work (see `Gate::take_jobs`).
            None => Request::Version,
        }
    }

    fn answer(&mut self, _i: usize, outcome: Result<Outcome>, found: Found) {
        let answer = match outcome {
            Err(e) => {
                self.refused.push(e.clone());
                Err(e)
            }
            Ok(Outcome::Stored(s)) => Ok(Answer::Stored(s)),
            Ok(Outcome::Done) => Ok(Answer::Found(found)),
            Ok(other) => other.done().map(|()| Answer::Found(None)),
        };
        self.batch.complete(answer);
    }
}
