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
use crate::health::Health;
use crate::metrics::{Counters, Event, EventHandler};
use crate::pool::{Manager, Slot};
use crate::proto::ascii::StoreCommand;
use crate::resolve::Resolve;
use scheduled_thread_pool::ScheduledThreadPool;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A checked-out slot that holds a connected socket, and the gate permit that admitted it.
/// Fields drop in order: the connection goes back to r2d2 before the permit passes on, so
/// the next permit holder finds it idle.
pub(crate) struct Pooled<'g> {
    slot: r2d2::PooledConnection<Manager>,
    _permit: Permit<'g>,
}

impl Pooled<'_> {
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
    /// How long a dead server rests before it is tried again (first time).
    pub retry_timeout: Duration,
    /// The longest rest, as it backs off.
    pub retry_timeout_max: Duration,
    /// Told when a server goes down or comes back.
    pub events: Option<EventHandler>,
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
    manager: Manager,
    generation: u64,
    pool: Pool,
    gate: Gate,
    child: Mutex<Option<(u64, Pool, Arc<Gate>)>>,
}

/// The background thread r2d2 keeps its pools with (one per client, shared by its servers).
pub(crate) fn thread_pool() -> Arc<ScheduledThreadPool> {
    Arc::new(
        ScheduledThreadPool::builder()
            .num_threads(1)
            .thread_name_pattern("mcpool-{}")
            .build(),
    )
}

fn make_pool(s: &PoolSettings, manager: Manager, threads: Arc<ScheduledThreadPool>) -> Pool {
    Pool::builder()
        .max_size(s.max_size)
        .min_idle(Some(s.min_idle))
        .connection_timeout(s.pool_timeout)
        .idle_timeout(s.idle_timeout.filter(|d| !d.is_zero()))
        .max_lifetime(s.max_lifetime.filter(|d| !d.is_zero()))
        .test_on_check_out(s.test_on_check_out)
        .thread_pool(threads)
        .build_unchecked(manager)
}

impl Server {
    /// One server; `threads` is the client's background thread ([`thread_pool`]).
    pub(crate) fn new(
        spec: &ServerSpec,
        settings: &PoolSettings,
        opts: &ConnOptions,
        dialect: &Dialect,
        threads: &Arc<ScheduledThreadPool>,
    ) -> Server {
        let label: Arc<str> = spec.addr.to_string().into();
        let health = Arc::new(Health::new(
            settings.failure_limit,
            settings.retry_timeout,
            settings.retry_timeout_max,
        ));
        let counters = Arc::new(Counters::default());
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
        };
        Server {
            pool: make_pool(settings, manager.clone(), threads.clone()),
            label,
            health,
            counters,
            addr,
            opts: opts.clone(),
            dialect: dialect.clone(),
            settings: settings.clone(),
            manager,
            generation: fork::generation(),
            gate: Gate::new(settings.max_size),
            child: Mutex::new(None),
        }
    }

    fn make_pool(&self, threads: Arc<ScheduledThreadPool>) -> Pool {
        make_pool(&self.settings, self.manager.clone(), threads)
    }

    /// This process's pool and gate: the original ones, or fresh ones after a fork.
    pub(crate) fn pool(&self) -> (Cow<'_, Pool>, GateRef<'_>) {
        let generation = fork::generation();
        if generation == self.generation {
            return (Cow::Borrowed(&self.pool), GateRef::Borrowed(&self.gate));
        }
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        match &*child {
            Some((g, pool, gate)) if *g == generation => {
                (Cow::Owned(pool.clone()), GateRef::Shared(gate.clone()))
            }
            _ => {
                let pool = self.make_pool(thread_pool());
                let gate = Arc::new(Gate::new(self.settings.max_size));
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
            Checkout::Served(_) => Err(self.pool_timeout(Duration::ZERO)),
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

    fn pool_timeout(&self, waited: Duration) -> Error {
        self.count_wait(waited);
        let e = Error::PoolTimeout {
            server: self.label.to_string(),
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
            .map_err(|w| self.pool_timeout(w))?;
        let (permit, waited) = match admitted {
            Admission::Permit(permit, waited) => (permit, waited),
            Admission::Served(found, waited) => {
                self.count_wait(waited);
                return Ok(Checkout::Served(found));
            }
            Admission::Abandoned(waited) => {
                self.count_wait(waited);
                let e = Error::IoTimeout {
                    server: self.label.to_string(),
                };
                self.counters.error(&e);
                return Err(e);
            }
        };
        if let Some(waited) = waited {
            self.count_wait(waited);
            deadline.charge(waited);
        }
        let slot = match pool.try_get() {
            Some(s) => s,
            // Only while r2d2 is still opening the slot this permit stands for.
            None => pool
                .get_timeout(deadline.limit(wait).max(Duration::from_millis(100)))
                .map_err(|_| self.pool_timeout(Duration::ZERO))?,
        };
        let mut pooled = Pooled {
            slot,
            _permit: permit,
        };
        let slot: &mut Slot = &mut pooled;
        // A pooled connection with bytes waiting (a stray reply) or closed by the server is
        // dropped here, never reused: one non-blocking peek. So is one to an address the
        // server's name no longer resolves to (`resolve_interval`).
        if !slot
            .conn
            .as_mut()
            .is_some_and(|c| c.is_reusable_idle() && self.addr.still_listed(c.peer()))
        {
            slot.conn = None;
            let epoch = self.health.epoch();
            let timeout = deadline.limit(self.opts.connect_timeout);
            if timeout.is_zero() {
                // Out of time before trying: not the server's fault.
                let e = Error::ConnectTimeout {
                    server: self.label.to_string(),
                };
                self.counters.error(&e);
                return Err(e);
            }
            let connected = self
                .dialect
                .connect(&self.addr, &self.label, &self.opts, timeout);
            deadline.charge(timeout);
            match connected {
                Ok(mut c) => {
                    Counters::bump(&self.counters.connects);
                    c.set_epoch(epoch);
                    slot.conn = Some(Box::new(c));
                }
                Err(e) => {
                    if matches!(e, Error::Io { .. }) {
                        Counters::bump(&self.counters.connect_errors);
                    }
                    let event = self.failed(&e, epoch);
                    // The callback may issue commands: slot and permit go back first.
                    drop(pooled);
                    self.emit(event);
                    return Err(e);
                }
            }
        }
        if let Some(conn) = pooled.conn.as_mut() {
            conn.set_deadline(deadline);
        }
        Ok(Checkout::Conn(pooled))
    }

    /// Accounts for an exchange's result, serves waiting work (docs/handover.md), drops a
    /// connection that is not clean and gives the slot and the permit back; then reports a
    /// change of the server's state, so that the event callback may issue commands of its
    /// own (with a single connection, it would otherwise wait for the one its caller holds).
    pub(crate) fn release<T>(&self, mut pooled: Pooled, result: &Result<T>) {
        Counters::bump(&self.counters.operations);
        let event = match result {
            Ok(_) => {
                if self.health.record_success() {
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
        // Not clean, or to an address the server's name no longer resolves to: closed.
        if !pooled
            .conn
            .as_ref()
            .is_some_and(|c| c.is_reusable() && self.addr.still_listed(c.peer()))
        {
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
                reads: 0,
                hits: 0,
            };
            let served = pooled.with_conn(|conn| {
                conn.set_deadline(deadline);
                self.dialect.pipeline(conn, &mut work)
            });
            let (reads, hits) = (work.reads, work.hits);
            self.counters.operations.fetch_add(n as u64, Relaxed);
            self.counters.handed_over.fetch_add(n as u64, Relaxed);
            self.lookups(reads, hits);
            if let Err(e) = served {
                let (cut, epoch) = pooled
                    .conn
                    .as_ref()
                    .map_or((false, self.health.epoch()), |c| (c.cut_short(), c.epoch()));
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

    /// Counts the outcome of a retrieval: `asked` keys, `found` hits.
    pub(crate) fn lookups(&self, asked: usize, found: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.counters.hits.fetch_add(found as u64, Relaxed);
        self.counters
            .misses
            .fetch_add(asked.saturating_sub(found) as u64, Relaxed);
    }

    /// Counts an error of an exchange of health epoch `epoch` (its connection's; for a
    /// connect, the one it started in); a server failure may mark the server dead. Returns
    /// the event to report once the caller has given back its slot and permit.
    fn failed(&self, e: &Error, epoch: u64) -> Option<Event> {
        self.counters.error(e);
        if !e.is_server_failure() {
            return None;
        }
        let marked = self.health.record_failure(epoch)?;
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

    fn emit(&self, event: Option<Event>) {
        if let (Some(handler), Some(event)) = (&self.settings.events, event) {
            (handler.0)(&event);
        }
    }
}

/// Work handed over (see `gate`), as requests of one pipeline: a read is a `Get`, a set a
/// `Store`; each reply completes its job.
struct Serving<'b> {
    batch: &'b mut Batch,
    reads: usize,
    hits: usize,
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

    fn answer(&mut self, _i: usize, outcome: Outcome, found: Found) {
        let answer = match outcome {
            Outcome::Stored(s) => Ok(Answer::Stored(s)),
            Outcome::Done => {
                self.reads += 1;
                self.hits += usize::from(found.is_some());
                Ok(Answer::Found(found))
            }
            other => other.done().map(|()| Answer::Found(None)),
        };
        self.batch.complete(answer);
    }
}
