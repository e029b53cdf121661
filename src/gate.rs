//! A fair admission gate in front of a server's pool: at most `max_size` callers hold a
//! permit, and a released permit goes straight to the caller that has waited longest.
//!
//! Why: r2d2 lets a thread that has just returned a connection take it straight back
//! ("barging") before the thread it woke gets the lock, so under load some callers wait for
//! tens of milliseconds while others are served at once. With the gate, a caller that holds a
//! permit always finds a connection (or room for one) in r2d2 without waiting, and permits are
//! handed over first come, first served.
//!
//! Handing work over: a caller that finds no free permit and only wants one key read may
//! queue the read itself ([`GetJob`]). A permit holder that has finished its own exchange
//! takes the reads at the head of the line ([`Gate::take_jobs`]), writes them to its
//! connection in one go, reads the replies in order and wakes each caller with its answer:
//! a waiting reader is woken once, with its value, instead of once for a permit and again
//! for its reply, and many reads share one write and one read on each side. See
//! docs/handover.md.
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// Work a caller waiting for a permit hands to the gate: a single-key read, or a plain `set`
/// of a small value. Both may be sent again after a failure without changing their meaning
/// to the caller, which is why nothing else is handed over.
pub(crate) enum Job {
    /// `get` (or `gets` with `cas`) of one wire key.
    Get {
        /// The key as sent.
        wire: Vec<u8>,
        /// Ask for the CAS unique.
        cas: bool,
    },
    /// `set` of one wire key to `data` (already compressed as the caller's config says).
    Set {
        /// The key as sent.
        wire: Vec<u8>,
        /// The bytes to store.
        data: Vec<u8>,
        /// The item's flags.
        flags: u32,
        /// Expiry.
        ttl: u32,
    },
}

impl Job {
    fn size(&self) -> usize {
        match self {
            Job::Get { wire, .. } => wire.len(),
            Job::Set { wire, data, .. } => wire.len() + data.len(),
        }
    }
}

/// What a caller offers while it waits, borrowed: copied into a [`Job`] only if it has to
/// wait.
#[derive(Clone, Copy)]
pub(crate) enum Offer<'a> {
    /// A read of `(wire key, cas)`.
    Get(&'a [u8], bool),
    /// A `set` of `(wire key, data, flags, ttl)`.
    Set(&'a [u8], &'a [u8], u32, u32),
}

impl Offer<'_> {
    fn to_job(self) -> Job {
        match self {
            Offer::Get(wire, cas) => Job::Get {
                wire: wire.to_vec(),
                cas,
            },
            Offer::Set(wire, data, flags, ttl) => Job::Set {
                wire: wire.to_vec(),
                data: data.to_vec(),
                flags,
                ttl,
            },
        }
    }
}

/// What a served read found: the value, its flags and CAS unique, or nothing.
pub(crate) type Found = Option<(Vec<u8>, u32, Option<u64>)>;

/// The answer to a served job.
#[derive(Debug)]
pub(crate) enum Answer {
    /// A read's result.
    Found(Found),
    /// A set's outcome.
    Stored(StoreOutcome),
}

impl Answer {
    /// The answer to a read; an error naming `server` if it answers a set instead (a bug).
    pub(crate) fn into_found(self, server: &str) -> Result<Found> {
        match self {
            Answer::Found(found) => Ok(found),
            Answer::Stored(_) => Err(mismatch(server, "a read answered as a store")),
        }
    }

    /// The answer to a set; an error naming `server` if it answers a read instead (a bug).
    pub(crate) fn into_stored(self, server: &str) -> Result<StoreOutcome> {
        match self {
            Answer::Stored(outcome) => Ok(outcome),
            Answer::Found(_) => Err(mismatch(server, "a store answered as a read")),
        }
    }
}

fn mismatch(server: &str, what: &str) -> Error {
    Error::Protocol {
        server: server.to_owned(),
        detail: format!("internal: {what}"),
    }
}

/// In line, waiting.
const WAITING: u8 = 0;
/// Given a permit: do the work yourself.
const GRANTED: u8 = 1;
/// A permit holder is serving this caller's job.
const TAKEN: u8 = 2;
/// The job's result is ready.
const DONE: u8 = 3;
/// The job was not answered (its holder's connection failed first): try again.
const RETRY: u8 = 4;
/// The caller's deadline passed while its job was being served: it has left with a timeout,
/// and the answer, if one comes, is dropped.
const ABANDONED: u8 = 5;
/// Not a waiter's state: what [`GateRef::wait_for`] returns when the interrupt check asked
/// to end the call (the caller has left the line, given up its job, or passed on the permit
/// it was granted meanwhile).
const INTERRUPTED: u8 = 6;
/// The gate was closed ([`Gate::close`]) while the caller was in line: it leaves without a
/// permit, its job (if any) never sent.
const CLOSED: u8 = 7;

struct Waiter {
    thread: Thread,
    state: AtomicU8,
    job: Option<Job>,
    result: Mutex<Option<Result<Answer>>>,
}

impl Waiter {
    fn new(job: Option<Job>) -> Arc<Waiter> {
        Arc::new(Waiter {
            thread: std::thread::current(),
            state: AtomicU8::new(WAITING),
            job,
            result: Mutex::new(None),
        })
    }

    /// Moves a taken job to `state` and wakes its caller, unless the caller has given up
    /// on it (then nothing changes).
    fn answer(&self, state: u8) {
        if self
            .state
            .compare_exchange(TAKEN, state, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.thread.unpark();
        }
    }
}

struct State {
    free: u32,
    queue: VecDeque<Arc<Waiter>>,
    /// Closed ([`Gate::close`]): nobody is admitted any more.
    closed: bool,
}

/// The gate of one server's pool.
pub(crate) struct Gate {
    state: Mutex<State>,
    /// Callers in line with work to hand over: read without the lock, so a holder with
    /// nothing to serve pays one load.
    jobs: AtomicUsize,
}

/// A gate borrowed from its server, or shared (the gate of a pool rebuilt after a fork).
pub(crate) enum GateRef<'g> {
    /// The server's own gate.
    Borrowed(&'g Gate),
    /// A gate that lives in the server's per-process state.
    Shared(Arc<Gate>),
}

impl std::ops::Deref for GateRef<'_> {
    type Target = Gate;
    fn deref(&self) -> &Gate {
        match self {
            GateRef::Borrowed(g) => g,
            GateRef::Shared(g) => g,
        }
    }
}

/// A held permit; dropping it passes it on (to the oldest waiter, or back to the gate).
pub(crate) struct Permit<'g> {
    gate: GateRef<'g>,
}

impl Permit<'_> {
    /// The gate this permit came from.
    pub(crate) fn gate(&self) -> &Gate {
        &self.gate
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.gate.release();
    }
}

/// How a caller that offered its read got through the gate.
pub(crate) enum Admission<'g> {
    /// A permit (and how long it waited, `None` when one was free at once): do the read.
    Permit(Permit<'g>, Option<Duration>),
    /// A permit holder did the read: its result, and how long it took.
    Served(Result<Answer>, Duration),
    /// The caller's deadline passed while a permit holder was serving its job: it gave up
    /// on the answer after waiting this long (a timeout; a set may or may not have been
    /// stored).
    Abandoned(Duration),
    /// The interrupt check (`crate::set_interrupt_check`) asked to end the call while it
    /// waited, after this long: it holds no permit and waits for no answer (a set it handed
    /// over may or may not be stored).
    Interrupted(Duration),
    /// The gate is closed ([`Gate::close`]: the client was closed), at once or after waiting
    /// this long in line: nothing was sent.
    Closed(Duration),
}

/// Jobs taken from the head of the line, for a permit holder to serve. Every job gets its
/// result through [`Batch::complete`], or [`Batch::fail`] / [`Batch::retry`] when the
/// connection fails; reads still unanswered when the batch is dropped are told to try
/// again, sets get an error (they may have reached the server). A caller whose deadline
/// passes meanwhile has left (`ABANDONED`): its answer is dropped.
pub(crate) struct Batch {
    jobs: Vec<Arc<Waiter>>,
    answered: usize,
}

impl Batch {
    /// Nothing to serve.
    pub(crate) fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The jobs, in the order their replies must be read.
    #[cfg(test)]
    pub(crate) fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.iter().filter_map(|w| w.job.as_ref())
    }

    /// Job `i`, in the order their replies must be read.
    pub(crate) fn job(&self, i: usize) -> Option<&Job> {
        self.jobs.get(i).and_then(|w| w.job.as_ref())
    }

    /// How many jobs the batch holds.
    pub(crate) fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Hands the next unanswered job its result and wakes its caller.
    pub(crate) fn complete(&mut self, result: Result<Answer>) {
        if let Some(w) = self.jobs.get(self.answered) {
            if w.state.load(Ordering::Acquire) == TAKEN {
                *w.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
                w.answer(DONE);
            }
            self.answered += 1;
        }
    }

    /// The connection failed with `e` while the next job was being answered: that job gets
    /// `e`; the reads after it go back in line, the sets after it get `e` too (they were
    /// written, so whether they were stored is unknown).
    pub(crate) fn fail(mut self, e: Error) {
        self.complete(Err(e.clone()));
        self.retry(e);
    }

    /// The connection failed with `e` (the holder's deadline cut it short) before the next
    /// job was answered: the unanswered reads go back in line, the unanswered sets get `e`.
    pub(crate) fn retry(mut self, e: Error) {
        while let Some(w) = self.jobs.get(self.answered) {
            if matches!(w.job, Some(Job::Set { .. })) {
                self.complete(Err(e.clone()));
            } else {
                w.answer(RETRY);
                self.answered += 1;
            }
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // Only after a panic in the holder: reads retry, sets fail.
        for w in &self.jobs[self.answered..] {
            if matches!(w.job, Some(Job::Set { .. })) {
                *w.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(Err(Error::Protocol {
                    server: String::new(),
                    detail: "the connection serving this set failed".into(),
                }));
                w.answer(DONE);
            } else {
                w.answer(RETRY);
            }
        }
    }
}

impl Gate {
    /// A gate with `permits` permits.
    pub(crate) fn new(permits: u32) -> Gate {
        Gate {
            state: Mutex::new(State {
                free: permits,
                queue: VecDeque::new(),
                closed: false,
            }),
            jobs: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a permit at once if one is free and nobody is waiting (`Ok(true)`); `Ok(false)`
    /// when the gate is closed; otherwise joins the end of the line (`Err(ticket)`),
    /// offering `job` to the permit holders.
    fn try_now(&self, job: impl FnOnce() -> Option<Job>) -> std::result::Result<bool, Arc<Waiter>> {
        let mut st = self.lock();
        if st.closed {
            return Ok(false);
        }
        if st.free > 0 && st.queue.is_empty() {
            st.free -= 1;
            return Ok(true);
        }
        let w = Waiter::new(job());
        if w.job.is_some() {
            self.jobs.fetch_add(1, Ordering::Relaxed);
        }
        st.queue.push_back(w.clone());
        Err(w)
    }

    /// Closes the gate (the client was closed): every caller in line leaves at once with
    /// [`Admission::Closed`] (a job it offered is never sent), and nobody is admitted from
    /// now on. Permits held finish their exchanges; work a holder has already taken is
    /// answered as before.
    pub(crate) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        let waiting: Vec<Arc<Waiter>> = st.queue.drain(..).collect();
        for w in &waiting {
            self.left_line(w);
            w.state.store(CLOSED, Ordering::Release);
        }
        drop(st);
        for w in waiting {
            w.thread.unpark();
        }
    }

    /// Accounts for `w` leaving the line (under the lock).
    fn left_line(&self, w: &Waiter) {
        if w.job.is_some() {
            self.jobs.fetch_sub(1, Ordering::Relaxed);
        }
    }

    fn release(&self) {
        let mut st = self.lock();
        match st.queue.pop_front() {
            Some(w) => {
                self.left_line(&w);
                // The state changes under the lock, so a waiter that gives up at the same
                // moment sees it and keeps the permit.
                w.state.store(GRANTED, Ordering::Release);
                drop(st);
                w.thread.unpark();
            }
            None => st.free += 1,
        }
    }

    /// True when some caller in line has work to hand over (a hint: read without the lock).
    #[inline]
    pub(crate) fn has_jobs(&self) -> bool {
        self.jobs.load(Ordering::Relaxed) > 0
    }

    /// Takes the jobs waiting at the head of the line (at most `max`, and at most `bytes`
    /// of keys and values), for a permit holder to serve; stops at the first caller that
    /// waits for a permit instead.
    pub(crate) fn take_jobs(&self, max: usize, bytes: usize) -> Batch {
        let mut jobs = Vec::new();
        if self.jobs.load(Ordering::Relaxed) == 0 {
            // Work that joins the line just now is not lost: the permit this holder passes
            // on goes to the head of the line, which then does its own work.
            return Batch { jobs, answered: 0 };
        }
        let mut st = self.lock();
        let mut size = 0;
        while jobs.len() < max && size < bytes {
            match st.queue.front() {
                Some(w) if w.job.is_some() => {}
                _ => break,
            }
            if let Some(w) = st.queue.pop_front() {
                self.left_line(&w);
                size += w.job.as_ref().map_or(0, Job::size);
                w.state.store(TAKEN, Ordering::Release);
                jobs.push(w);
            }
        }
        drop(st);
        Batch { jobs, answered: 0 }
    }
}

impl<'g> GateRef<'g> {
    /// A permit, waiting at most `wait` in line: the permit and how long it waited (`None`
    /// when one was free at once, without reading the clock), or `Err(waited)` after `wait`.
    #[cfg(test)]
    pub(crate) fn acquire(
        self,
        wait: Duration,
    ) -> std::result::Result<(Permit<'g>, Option<Duration>), Duration> {
        match self.admit(wait, None, None)? {
            Admission::Permit(p, waited) => Ok((p, waited)),
            // Without a read offered there is nothing to serve.
            Admission::Served(_, waited)
            | Admission::Abandoned(waited)
            | Admission::Interrupted(waited)
            | Admission::Closed(waited) => Err(waited),
        }
    }

    /// As [`GateRef::acquire`], but a caller that has to wait offers its work (`offer`) to
    /// the permit holders: the answer is a permit or the work's result. The wait in line
    /// ends at `wait` or at the operation's `deadline`, whichever comes first; work a holder
    /// has taken is waited for until answered or until `deadline` (without one, the serving
    /// connection's I/O timeouts bound it), when the caller gives up on it
    /// ([`Admission::Abandoned`]). A read its holder could not answer goes back in line.
    pub(crate) fn admit(
        self,
        wait: Duration,
        deadline: Option<Instant>,
        offer: Option<Offer<'_>>,
    ) -> std::result::Result<Admission<'g>, Duration> {
        let job = || offer.map(Offer::to_job);
        match self.try_now(job) {
            Ok(true) => Ok(Admission::Permit(Permit { gate: self }, None)),
            Ok(false) => Ok(Admission::Closed(Duration::ZERO)),
            Err(w) => self.admit_after_waiting(w, wait, deadline, offer),
        }
    }

    /// The rest of [`GateRef::admit`] once the caller is in line.
    #[inline(never)]
    fn admit_after_waiting(
        self,
        mut w: Arc<Waiter>,
        wait: Duration,
        deadline: Option<Instant>,
        offer: Option<Offer<'_>>,
    ) -> std::result::Result<Admission<'g>, Duration> {
        let start = Instant::now();
        let in_line_until = match (start.checked_add(wait), deadline) {
            (Some(t), Some(d)) => Some(t.min(d)),
            (t, d) => t.or(d),
        };
        loop {
            match self.wait_for(&w, in_line_until, deadline) {
                Some(GRANTED) => {
                    return Ok(Admission::Permit(
                        Permit { gate: self },
                        Some(start.elapsed()),
                    ))
                }
                Some(DONE) => {
                    let r = w.result.lock().unwrap_or_else(|p| p.into_inner()).take();
                    let r = r.unwrap_or_else(|| {
                        Err(Error::Protocol {
                            server: String::new(),
                            detail: "internal: served without an answer".into(),
                        })
                    });
                    return Ok(Admission::Served(r, start.elapsed()));
                }
                Some(ABANDONED) => return Ok(Admission::Abandoned(start.elapsed())),
                Some(INTERRUPTED) => return Ok(Admission::Interrupted(start.elapsed())),
                Some(CLOSED) => return Ok(Admission::Closed(start.elapsed())),
                Some(_) => {
                    // RETRY: back in line, at the end.
                    match self.try_now(|| offer.map(Offer::to_job)) {
                        Ok(true) => {
                            return Ok(Admission::Permit(
                                Permit { gate: self },
                                Some(start.elapsed()),
                            ))
                        }
                        Ok(false) => return Ok(Admission::Closed(start.elapsed())),
                        Err(again) => w = again,
                    }
                }
                None => return Err(start.elapsed()),
            }
        }
    }

    /// Waits until `w` leaves `WAITING` (and, once taken, until it is answered): its new
    /// state; `None` when `in_line_until` passed while it was still in line (it left the
    /// line); `ABANDONED` when `deadline` passed while its job was being served;
    /// `INTERRUPTED` when the interrupt check asked to end the call. A signal does not
    /// interrupt a parked thread, so while an interrupt check is set the wait wakes every
    /// `conn::INTERRUPT_POLL` to call it (without one, it sleeps until woken or out of time).
    fn wait_for(
        &self,
        w: &Arc<Waiter>,
        in_line_until: Option<Instant>,
        deadline: Option<Instant>,
    ) -> Option<u8> {
        let poll = crate::conn::interrupt_poll();
        let mut parked = false;
        loop {
            let state = w.state.load(Ordering::Acquire);
            if !matches!(state, WAITING | TAKEN) {
                return Some(state);
            }
            if parked && poll.is_some() && crate::conn::interrupt_requested() {
                return Some(self.leave_interrupted(w));
            }
            parked = true;
            if state == TAKEN {
                let Some(deadline) = deadline else {
                    park_at_most(None, poll);
                    continue;
                };
                let now = Instant::now();
                if now < deadline {
                    park_at_most(Some(deadline - now), poll);
                } else if w
                    .state
                    .compare_exchange(TAKEN, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return Some(ABANDONED);
                }
                continue;
            }
            let Some(until) = in_line_until else {
                park_at_most(None, poll);
                continue;
            };
            let now = Instant::now();
            if now >= until {
                let mut st = self.lock();
                // Granted or taken between the check and the lock: go on with it.
                if w.state.load(Ordering::Acquire) != WAITING {
                    continue;
                }
                st.queue.retain(|q| !Arc::ptr_eq(q, w));
                self.left_line(w);
                return None;
            }
            park_at_most(Some(until - now), poll);
        }
    }

    /// The interrupt check asked to end the call waiting as `w`: out of the line, or its
    /// job given up (its answer, if one comes, dropped), or the permit granted meanwhile
    /// passed on to the next in line. The check has already told the binding (Python: the
    /// handler's exception is pending), so the call ends whatever happened meanwhile.
    #[cold]
    fn leave_interrupted(&self, w: &Arc<Waiter>) -> u8 {
        let mut st = self.lock();
        match w.state.load(Ordering::Acquire) {
            WAITING => {
                st.queue.retain(|q| !Arc::ptr_eq(q, w));
                self.left_line(w);
            }
            GRANTED => {
                drop(st);
                self.release();
            }
            _ => {
                drop(st);
                // Taken: given up (a holder answering at this moment finds it abandoned).
                // Already answered (done, retry): the answer is dropped.
                let _ =
                    w.state
                        .compare_exchange(TAKEN, ABANDONED, Ordering::AcqRel, Ordering::Acquire);
            }
        }
        INTERRUPTED
    }
}

/// Parks the thread for at most `d` (`None`: until unparked), and no longer than `poll`.
fn park_at_most(d: Option<Duration>, poll: Option<Duration>) {
    match (d, poll) {
        (None, None) => std::thread::park(),
        (Some(d), None) | (None, Some(d)) => std::thread::park_timeout(d),
        (Some(d), Some(p)) => std::thread::park_timeout(d.min(p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn closing_sends_the_line_away_and_admits_nobody() {
        let gate = Arc::new(Gate::new(1));
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        let waiters: Vec<_> = (0..3)
            .map(|i| {
                let g = gate.clone();
                std::thread::spawn(move || {
                    let offer = (i == 0).then_some(Offer::Get(b"k", false));
                    match GateRef::Borrowed(&g).admit(Duration::from_secs(60), None, offer) {
                        Ok(Admission::Closed(_)) => "closed",
                        Ok(Admission::Permit(..)) => "permit",
                        Ok(Admission::Served(..)) => "served",
                        _ => "other",
                    }
                })
            })
            .collect();
        let until = Instant::now() + Duration::from_secs(30);
        while gate.lock().queue.len() < 3 {
            assert!(Instant::now() < until, "the waiters never got in line");
            std::thread::yield_now();
        }
        gate.close();
        for w in waiters {
            assert_eq!(w.join().unwrap(), "closed");
        }
        assert!(!gate.has_jobs(), "the offered job left with its caller");
        // The permit held finishes; nobody is admitted after it either.
        drop(held);
        assert!(matches!(
            GateRef::Borrowed(&gate).admit(Duration::from_secs(1), None, None),
            Ok(Admission::Closed(_))
        ));
    }

    #[test]
    fn never_more_holders_than_permits_and_nobody_starves() {
        let gate = Arc::new(Gate::new(3));
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (gate, inside, most) = (gate.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..500 {
                        let (permit, _) = GateRef::Borrowed(&gate)
                            .acquire(Duration::from_secs(30))
                            .expect("permit");
                        let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(n, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        drop(permit);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert_eq!(gate.lock().free, 3, "every permit came back");
    }

    #[test]
    fn a_waiter_times_out_and_leaves_the_line() {
        let gate = Gate::new(1);
        let held = GateRef::Borrowed(&gate)
            .acquire(Duration::from_millis(1))
            .unwrap();
        assert!(GateRef::Borrowed(&gate)
            .acquire(Duration::from_millis(20))
            .is_err());
        assert!(gate.lock().queue.is_empty());
        drop(held);
        assert!(matches!(
            GateRef::Borrowed(&gate).acquire(Duration::ZERO),
            Ok((_, None))
        ));
    }

    fn key(j: &Job) -> &[u8] {
        match j {
            Job::Get { wire, .. } | Job::Set { wire, .. } => wire,
        }
    }

    #[test]
    fn waiting_work_is_served_in_order_up_to_a_permit_waiter() {
        let gate = Arc::new(Gate::new(1));
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        let spawn = |key: &'static str, what: u8| {
            let want = gate.lock().queue.len() + 1;
            let g = gate.clone();
            let t = std::thread::spawn(move || {
                let k = key.as_bytes();
                let offer = match what {
                    b'g' => Some(Offer::Get(k, false)),
                    b's' => Some(Offer::Set(k, b"data", 3, 0)),
                    _ => None,
                };
                match GateRef::Borrowed(&g).admit(Duration::from_secs(30), None, offer) {
                    Ok(Admission::Served(answer, _)) => format!("served {:?}", answer.unwrap()),
                    Ok(Admission::Permit(p, _)) => {
                        drop(p);
                        "permit".to_string()
                    }
                    Ok(Admission::Abandoned(_)) | Err(_) => "timeout".to_string(),
                    Ok(Admission::Interrupted(_)) => "interrupted".to_string(),
                    Ok(Admission::Closed(_)) => "closed".to_string(),
                }
            });
            // Each joins the line before the next starts.
            let deadline = Instant::now() + Duration::from_secs(30);
            while gate.lock().queue.len() < want {
                assert!(Instant::now() < deadline, "waiter never queued");
                std::thread::yield_now();
            }
            t
        };
        let a = spawn("a", b'g');
        let b = spawn("b", b's');
        let c = spawn("c", b'-');
        let d = spawn("d", b'g');
        let mut batch = gate.take_jobs(64, 1 << 20);
        let keys: Vec<&[u8]> = batch.jobs().map(key).collect();
        assert_eq!(
            keys,
            [&b"a"[..], b"b"],
            "stops at the caller waiting for a permit"
        );
        assert!(matches!(
            batch.jobs().nth(1),
            Some(Job::Set { data, flags: 3, ttl: 0, .. }) if data == b"data"
        ));
        batch.complete(Ok(Answer::Found(Some((b"A".to_vec(), 5, None)))));
        batch.complete(Ok(Answer::Stored(StoreOutcome::Stored)));
        assert!(
            gate.take_jobs(64, 1 << 20).is_empty(),
            "c is first in line now"
        );
        assert_eq!(a.join().unwrap(), "served Found(Some(([65], 5, None)))");
        assert_eq!(b.join().unwrap(), "served Stored(Stored)");
        drop(held); // goes to c, who hands it to d on return, who returns it
        assert_eq!(c.join().unwrap(), "permit");
        assert_eq!(d.join().unwrap(), "permit");
        assert_eq!(gate.lock().free, 1);
    }

    #[test]
    fn after_a_failure_reads_go_back_in_line_and_sets_fail() {
        let gate = Arc::new(Gate::new(1));
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        // Offers work from a new thread once the line has `before` callers in it; returns
        // when the offer is in line.
        let offer = |offer: Offer<'static>, before: usize| {
            let g = gate.clone();
            let t = std::thread::spawn(move || {
                match GateRef::Borrowed(&g).admit(Duration::from_secs(30), None, Some(offer)) {
                    Ok(Admission::Served(answer, _)) => answer.map(|a| format!("{a:?}")),
                    Ok(Admission::Permit(..)) => panic!("expected to be served, got a permit"),
                    Ok(Admission::Abandoned(w)) => {
                        panic!("expected to be served, gave up after {w:?}")
                    }
                    Ok(Admission::Interrupted(w)) => {
                        panic!("expected to be served, interrupted after {w:?}")
                    }
                    Ok(Admission::Closed(w)) => {
                        panic!("expected to be served, closed after {w:?}")
                    }
                    Err(w) => panic!("expected to be served, timed out after {w:?}"),
                }
            });
            let deadline = Instant::now() + Duration::from_secs(30);
            while gate.lock().queue.len() <= before {
                assert!(Instant::now() < deadline, "never in line");
                std::thread::yield_now();
            }
            t
        };
        let k1 = offer(Offer::Get(b"k1", true), 0);
        let first = gate.take_jobs(64, 1 << 20); // its holder will panic before answering
        assert_eq!(first.len(), 1);
        let k2 = offer(Offer::Get(b"k2", false), 0);
        let k3 = offer(Offer::Set(b"k3", b"v", 0, 0), 1);
        let k4 = offer(Offer::Get(b"k4", false), 2);
        let second = gate.take_jobs(64, 1 << 20);
        assert_eq!(second.len(), 3);
        // The connection fails while k2's reply is read: k2 gets the error; k3 was written,
        // so it fails too; k4 goes back in line.
        second.fail(Error::IoTimeout {
            server: "s".into(),
            operation_timeout: false,
            sent: false,
        });
        let timed_out = |r: Result<String>| matches!(r, Err(Error::IoTimeout { .. }));
        assert!(timed_out(k2.join().unwrap()));
        assert!(timed_out(k3.join().unwrap()));
        drop(first); // k1 goes back in line too
        let deadline = Instant::now() + Duration::from_secs(30);
        while gate.lock().queue.len() < 2 {
            assert!(Instant::now() < deadline, "reads never came back");
            std::thread::yield_now();
        }
        let mut again = gate.take_jobs(64, 1 << 20);
        let mut keys: Vec<(Vec<u8>, bool)> = again
            .jobs()
            .map(|j| match j {
                Job::Get { wire, cas } => (wire.clone(), *cas),
                Job::Set { .. } => panic!("a set must not come back"),
            })
            .collect();
        let order: Vec<Vec<u8>> = keys.iter().map(|(k, _)| k.clone()).collect();
        keys.sort();
        assert_eq!(keys, [(b"k1".to_vec(), true), (b"k4".to_vec(), false)]);
        for k in order {
            again.complete(Ok(Answer::Found(Some((k, 0, None)))));
        }
        assert_eq!(
            k1.join().unwrap().unwrap(),
            "Found(Some(([107, 49], 0, None)))"
        );
        assert_eq!(
            k4.join().unwrap().unwrap(),
            "Found(Some(([107, 52], 0, None)))"
        );
        drop(held);
        assert_eq!(gate.lock().free, 1);
    }

    #[test]
    fn a_waiting_read_times_out_and_leaves_the_line() {
        let gate = Gate::new(1);
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        assert!(GateRef::Borrowed(&gate)
            .admit(
                Duration::from_millis(20),
                None,
                Some(Offer::Get(b"k", false))
            )
            .is_err());
        assert!(gate.lock().queue.is_empty());
        assert!(gate.take_jobs(64, 1 << 20).is_empty());
        assert_eq!(gate.jobs.load(Ordering::Relaxed), 0);
        drop(held);
        assert_eq!(gate.lock().free, 1);
    }

    /// Issue 15 item 8: a caller whose job is being served leaves at its own deadline; the
    /// holder's answer, when it comes, is dropped.
    #[test]
    fn a_served_caller_leaves_at_its_deadline_and_its_answer_is_dropped() {
        let gate = Arc::new(Gate::new(1));
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        let g = gate.clone();
        let waiter = std::thread::spawn(move || {
            let start = Instant::now();
            let deadline = start + Duration::from_millis(100);
            let r = GateRef::Borrowed(&g).admit(
                Duration::from_secs(30),
                Some(deadline),
                Some(Offer::Get(b"k", false)),
            );
            let outcome = match r {
                Ok(Admission::Abandoned(_)) => "abandoned",
                Ok(Admission::Served(..)) => "served",
                Ok(Admission::Permit(..)) => "permit",
                Ok(Admission::Interrupted(_)) => "interrupted",
                Ok(Admission::Closed(_)) => "closed",
                Err(_) => "timed out in line",
            };
            (outcome, start.elapsed())
        });
        let until = Instant::now() + Duration::from_secs(30);
        while gate.lock().queue.is_empty() {
            assert!(Instant::now() < until, "never in line");
            std::thread::yield_now();
        }
        let mut batch = gate.take_jobs(64, 1 << 20);
        assert_eq!(batch.len(), 1);
        // The holder is slow: the caller's deadline passes first.
        let (outcome, took) = waiter.join().unwrap();
        assert_eq!(outcome, "abandoned");
        assert!(
            took >= Duration::from_millis(90) && took < Duration::from_secs(5),
            "{took:?}"
        );
        batch.complete(Ok(Answer::Found(None)));
        drop(batch);
        assert_eq!(gate.jobs.load(Ordering::Relaxed), 0);
        drop(held);
        assert_eq!(gate.lock().free, 1);
    }

    #[test]
    fn a_caller_in_line_leaves_at_its_deadline_before_the_pool_timeout() {
        let gate = Gate::new(1);
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        let start = Instant::now();
        let r = GateRef::Borrowed(&gate).admit(
            Duration::from_secs(30),
            Some(start + Duration::from_millis(50)),
            Some(Offer::Get(b"k", false)),
        );
        assert!(r.is_err());
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(gate.lock().queue.is_empty());
        drop(held);
    }
}
