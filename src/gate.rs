//! A fair admission gate in front of a server's pool: at most `max_size` callers hold a
//! permit, and a released permit goes straight to the caller that has waited longest.
//!
//! Why: r2d2 lets a thread that has just returned a connection take it straight back
//! ("barging") before the thread it woke gets the lock, so under load some callers wait for
//! tens of milliseconds while others are served at once. With the gate, a caller that holds a
//! permit always finds a connection (or room for one) in r2d2 without waiting, and permits are
//! handed over first come, first served.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::Thread;
use std::time::{Duration, Instant};

struct Waiter {
    thread: Thread,
    granted: AtomicBool,
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

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.gate.release();
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
    /// the end of the line (`Err(ticket)`).
    fn try_now(&self) -> Result<(), Arc<Waiter>> {
        let mut st = self.lock();
        if st.free > 0 && st.queue.is_empty() {
            st.free -= 1;
            return Ok(());
        }
        let w = Arc::new(Waiter {
            thread: std::thread::current(),
            granted: AtomicBool::new(false),
        });
        st.queue.push_back(w.clone());
        Err(w)
    }

    fn release(&self) {
        let mut st = self.lock();
        match st.queue.pop_front() {
            Some(w) => {
                w.granted.store(true, Ordering::Release);
                drop(st);
                w.thread.unpark();
            }
            None => st.free += 1,
        }
    }
}

impl<'g> GateRef<'g> {
    /// A permit, waiting at most `wait` in line: the permit and how long it waited (`None`
    /// when one was free at once, without reading the clock), or `Err(waited)` after `wait`.
    pub(crate) fn acquire(
        self,
        wait: Duration,
    ) -> Result<(Permit<'g>, Option<Duration>), Duration> {
        let w = match self.try_now() {
            Ok(()) => return Ok((Permit { gate: self }, None)),
            Err(w) => w,
        };
        let start = Instant::now();
        let deadline = start + wait;
        loop {
            if w.granted.load(Ordering::Acquire) {
                return Ok((Permit { gate: self }, Some(start.elapsed())));
            }
            let now = Instant::now();
            if now >= deadline {
                let mut st = self.lock();
                // Granted between the check and the lock: keep it.
                if w.granted.load(Ordering::Acquire) {
                    drop(st);
                    return Ok((Permit { gate: self }, Some(start.elapsed())));
                }
                st.queue.retain(|q| !Arc::ptr_eq(q, &w));
                return Err(start.elapsed());
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
}
