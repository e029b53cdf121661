//! Fork detection: a counter that the child side of every `fork()` increments, so a
//! connection opened before a fork is recognised (one atomic load) and never used by the child.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once, TryLockError};

static GENERATION: AtomicU64 = AtomicU64::new(0);
static REGISTER: Once = Once::new();

extern "C" fn in_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The current fork generation (0 in the original process). Registers the fork hook on first use.
#[allow(unsafe_code)] // pthread_atfork
pub fn generation() -> u64 {
    REGISTER.call_once(|| {
        // SAFETY: `in_child` is an `extern "C"` function that only touches an atomic, which is
        // async-signal-safe as a fork handler must be; the other two handlers are absent.
        unsafe {
            libc::pthread_atfork(None, None, Some(in_child));
        }
    });
    GENERATION.load(Ordering::Relaxed)
}

/// Every connection's socket, with the generation that opened it: a forked child closes
/// those it inherited ([`close_inherited`]), which it never uses.
static OPEN: Mutex<Vec<(RawFd, u64)>> = Mutex::new(Vec::new());

/// The registry, locked. In a process made by `fork()` (generation above 0) its lock may
/// have been held at the fork by a thread of the parent, which is not here to release it:
/// there the lock is tried for a while (a thread of this process holds it only briefly),
/// then given up (`None`): a child's background thread stuck here never made the
/// connection its callers waited for, and every call of the child timed out in line.
fn registry(current: u64) -> Option<std::sync::MutexGuard<'static, Vec<(RawFd, u64)>>> {
    if current == 0 {
        return Some(OPEN.lock().unwrap_or_else(|p| p.into_inner()));
    }
    for _ in 0..1000 {
        match OPEN.try_lock() {
            Ok(g) => return Some(g),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
    None
}

/// Records a connection's socket, opened in this generation (unless the registry is out of
/// reach in a forked child, [`registry`]: then a later child of this process does not close
/// it early, and this process closes it as usual).
pub(crate) fn opened(fd: RawFd) {
    let generation = generation();
    if let Some(mut open) = registry(generation) {
        open.push((fd, generation));
    }
}

/// Whether the connection of generation `generation` whose socket is `fd` may close it as
/// it is dropped: yes, unless a forked child already closed it ([`close_inherited`]; the
/// number may be another socket's by now). Forgets the socket.
pub(crate) fn closing(fd: RawFd, generation: u64) -> bool {
    let current = self::generation();
    // Out of reach in a forked child (see `registry`: held at the fork by a thread of the
    // parent): then nothing was swept, the socket is still this connection's.
    let Some(mut open) = registry(current) else {
        return true;
    };
    match open.iter().position(|&e| e == (fd, generation)) {
        Some(i) => {
            open.swap_remove(i);
            true
        }
        None => generation == current,
    }
}

/// In a forked child: closes the sockets of every connection opened before the fork (never
/// used here: a connection of an older generation is never reused, see `Conn`), without
/// sending anything on them, so they do not outlive the parent's use of them at the server.
/// close(2) of an inherited descriptor leaves the parent's socket open. Their connections,
/// in the parent's pools, no longer close them ([`closing`]). Skipped when the registry's
/// lock was held at the fork by a thread that is not in the child.
#[allow(unsafe_code)] // close(2)
pub(crate) fn close_inherited() {
    let current = generation();
    let mut open = match OPEN.try_lock() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return,
    };
    open.retain(|&(fd, generation)| {
        if generation == current {
            return true;
        }
        // SAFETY: `fd` is a socket this process inherited open and no object uses or closes
        // any longer (`closing` answers false for it from now on).
        unsafe {
            libc::close(fd);
        }
        false
    });
}
