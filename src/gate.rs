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
use crate::error::Result;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// A single-key read handed to the gate by a caller waiting for a permit.
pub(crate) struct GetJob {
    /// The key as sent.
    pub wire: Vec<u8>,
    /// Ask for the CAS unique.
    pub cas: bool,
}

/// What a served read found: the value, its flags and CAS unique, or nothing.
pub(crate) type Found = Option<(Vec<u8>, u32, Option<u64>)>;

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

struct Waiter {
    thread: Thread,
    state: AtomicU8,
    job: Option<GetJob>,
    result: Mutex<Option<Result<Found>>>,
}

impl Waiter {
    fn new(job: Option<GetJob>) -> Arc<Waiter> {
        Arc::new(Waiter {
            thread: std::thread::current(),
            state: AtomicU8::new(WAITING),
            job,
            result: Mutex::new(None),
        })
    }

    /// Moves to `state` and wakes the waiting thread.
    fn wake(&self, state: u8) {
        self.state.store(state, Ordering::Release);
        self.thread.unpark();
    }
}

struct State {
    free: u32,
    queue: VecDeque<Arc<Waiter>>,
}

/// The gate of one server's pool.
pub(crate) struct Gate {
    state: Mutex<State>,
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
    Served(Result<Found>, Duration),
}

/// Reads taken from the head of the line, for a permit holder to serve. Every job gets its
/// result through [`Batch::complete`]; the ones still unanswered when the batch is dropped
/// (the connection failed, or a panic) are told to try again.
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
    pub(crate) fn jobs(&self) -> impl Iterator<Item = &GetJob> {
        self.jobs.iter().filter_map(|w| w.job.as_ref())
    }

    /// The next job to answer.
    pub(crate) fn next(&self) -> Option<&GetJob> {
        self.jobs.get(self.answered).and_then(|w| w.job.as_ref())
    }

    /// How many jobs the batch holds.
    pub(crate) fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Hands the next unanswered job its result and wakes its caller.
    pub(crate) fn complete(&mut self, result: Result<Found>) {
        if let Some(w) = self.jobs.get(self.answered) {
            *w.result.lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
            w.wake(DONE);
            self.answered += 1;
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        for w in &self.jobs[self.answered..] {
            w.wake(RETRY);
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
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a permit at once if one is free and nobody is waiting (`Ok`); otherwise joins
    /// the end of the line (`Err(ticket)`), offering `job` to the permit holders.
    fn try_now(
        &self,
        job: impl FnOnce() -> Option<GetJob>,
    ) -> std::result::Result<(), Arc<Waiter>> {
        let mut st = self.lock();
        if st.free > 0 && st.queue.is_empty() {
            st.free -= 1;
            return Ok(());
        }
        let w = Waiter::new(job());
        st.queue.push_back(w.clone());
        Err(w)
    }

    fn release(&self) {
        let mut st = self.lock();
        match st.queue.pop_front() {
            Some(w) => {
                // The state changes under the lock, so a waiter that gives up at the same
                // moment sees it and keeps the permit.
                w.state.store(GRANTED, Ordering::Release);
                drop(st);
                w.thread.unpark();
            }
            None => st.free += 1,
        }
    }

    /// Takes the reads waiting at the head of the line (at most `max`, and at most `bytes`
    /// of keys), for a permit holder to serve; stops at the first caller that waits for a
    /// permit instead.
    pub(crate) fn take_jobs(&self, max: usize, bytes: usize) -> Batch {
        let mut jobs = Vec::new();
        let mut st = self.lock();
        let mut size = 0;
        while jobs.len() < max && size < bytes {
            match st.queue.front() {
                Some(w) if w.job.is_some() => {}
                _ => break,
            }
            if let Some(w) = st.queue.pop_front() {
                size += w.job.as_ref().map_or(0, |j| j.wire.len());
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
        match self.admit(wait, None)? {
            Admission::Permit(p, waited) => Ok((p, waited)),
            // Without a read offered there is nothing to serve.
            Admission::Served(_, waited) => Err(waited),
        }
    }

    /// As [`GateRef::acquire`], but a caller that has to wait offers its read of `(wire
    /// key, cas)` to the permit holders: the answer is a permit or the read's result. A read
    /// a holder has taken is waited for until answered, whatever `wait` says (the serving
    /// connection's I/O timeouts bound that); one its holder could not answer goes back in
    /// line.
    pub(crate) fn admit(
        self,
        wait: Duration,
        read: Option<(&[u8], bool)>,
    ) -> std::result::Result<Admission<'g>, Duration> {
        let job = || {
            read.map(|(wire, cas)| GetJob {
                wire: wire.to_vec(),
                cas,
            })
        };
        let mut start = None;
        loop {
            let w = match self.try_now(job) {
                Ok(()) => {
                    let waited = start.map(|s: Instant| s.elapsed());
                    return Ok(Admission::Permit(Permit { gate: self }, waited));
                }
                Err(w) => w,
            };
            let start = *start.get_or_insert_with(Instant::now);
            match self.wait_for(&w, start + wait) {
                Some(GRANTED) => {
                    return Ok(Admission::Permit(
                        Permit { gate: self },
                        Some(start.elapsed()),
                    ))
                }
                Some(DONE) => {
                    let r = w.result.lock().unwrap_or_else(|p| p.into_inner()).take();
                    return Ok(Admission::Served(r.unwrap_or(Ok(None)), start.elapsed()));
                }
                Some(_) => continue, // RETRY
                None => return Err(start.elapsed()),
            }
        }
    }

    /// Waits until `w` leaves `WAITING` (and, once taken, until it is answered): its new
    /// state, or `None` when `deadline` passed while it was still in line (it left the line).
    fn wait_for(&self, w: &Arc<Waiter>, deadline: Instant) -> Option<u8> {
        loop {
            match w.state.load(Ordering::Acquire) {
                WAITING => {}
                TAKEN => {
                    std::thread::park();
                    continue;
                }
                s => return Some(s),
            }
            let now = Instant::now();
            if now >= deadline {
                let mut st = self.lock();
                // Granted or taken between the check and the lock: go on with it.
                if w.state.load(Ordering::Acquire) != WAITING {
                    continue;
                }
                st.queue.retain(|q| !Arc::ptr_eq(q, w));
                return None;
            }
            std::thread::park_timeout(deadline - now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

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

    #[test]
    fn waiting_reads_are_served_in_order_up_to_a_permit_waiter() {
        let gate = Arc::new(Gate::new(1));
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        let spawn = |key: &'static str, read: bool| {
            let g = gate.clone();
            let t = std::thread::spawn(move || {
                let r = if read {
                    Some((key.as_bytes(), false))
                } else {
                    None
                };
                match GateRef::Borrowed(&g).admit(Duration::from_secs(30), r) {
                    Ok(Admission::Served(found, _)) => format!("served {:?}", found.unwrap()),
                    Ok(Admission::Permit(p, _)) => {
                        drop(p);
                        "permit".to_string()
                    }
                    Err(_) => "timeout".to_string(),
                }
            });
            // Each joins the line before the next starts.
            let deadline = Instant::now() + Duration::from_secs(30);
            let want = gate.lock().queue.len() + 1;
            while gate.lock().queue.len() < want {
                assert!(Instant::now() < deadline, "waiter never queued");
                std::thread::yield_now();
            }
            t
        };
        let a = spawn("a", true);
        let b = spawn("b", true);
        let c = spawn("c", false);
        let d = spawn("d", true);
        let mut batch = gate.take_jobs(64, 1 << 20);
        let keys: Vec<&[u8]> = batch.jobs().map(|j| &j.wire[..]).collect();
        assert_eq!(
            keys,
            [&b"a"[..], b"b"],
            "stops at the caller waiting for a permit"
        );
        batch.complete(Ok(Some((b"A".to_vec(), 5, None))));
        batch.complete(Ok(None));
        assert!(
            gate.take_jobs(64, 1 << 20).is_empty(),
            "c is first in line now"
        );
        assert_eq!(a.join().unwrap(), "served Some(([65], 5, None))");
        assert_eq!(b.join().unwrap(), "served None");
        drop(held); // goes to c, who hands it to d on return, who returns it
        assert_eq!(c.join().unwrap(), "permit");
        assert_eq!(d.join().unwrap(), "permit");
        assert_eq!(gate.lock().free, 1);
    }

    #[test]
    fn an_unanswered_read_goes_back_in_line() {
        let gate = Arc::new(Gate::new(1));
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        let g = gate.clone();
        let t = std::thread::spawn(move || {
            match GateRef::Borrowed(&g).admit(Duration::from_secs(30), Some((b"k", true))) {
                Ok(Admission::Served(found, _)) => found.map(|f| f.map(|(v, _, c)| (v, c))),
                other => panic!("{}", other.is_ok()),
            }
        });
        let take = || {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let batch = gate.take_jobs(64, 1 << 20);
                if !batch.is_empty() {
                    return batch;
                }
                assert!(Instant::now() < deadline, "read never queued");
                std::thread::yield_now();
            }
        };
        // A holder whose connection fails before answering: the batch is dropped unanswered.
        let first = take();
        assert_eq!(first.len(), 1);
        drop(first);
        // The read is offered again, with the same key and CAS request, and answered.
        let mut second = take();
        let job = second.next().unwrap();
        assert!(job.wire == b"k" && job.cas);
        second.complete(Ok(Some((b"v".to_vec(), 0, Some(7)))));
        assert_eq!(t.join().unwrap().unwrap(), Some((b"v".to_vec(), Some(7))));
        drop(held);
        assert_eq!(gate.lock().free, 1);
    }

    #[test]
    fn a_waiting_read_times_out_and_leaves_the_line() {
        let gate = Gate::new(1);
        let held = GateRef::Borrowed(&gate).acquire(Duration::ZERO).unwrap();
        assert!(GateRef::Borrowed(&gate)
            .admit(Duration::from_millis(20), Some((b"k", false)))
            .is_err());
        assert!(gate.lock().queue.is_empty());
        assert!(gate.take_jobs(64, 1 << 20).is_empty());
        drop(held);
        assert_eq!(gate.lock().free, 1);
    }
}
