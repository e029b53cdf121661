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

/// What a socket is beyond its number: its device and inode (fstat(2)). A forked child may
/// close an inherited number and reuse it for a socket or file of its own (a daemon's
/// `closerange(3, ...)`): the number then names something else, which only the identity tells
/// (tester finding fork 1: a child's own client was switched onto an inherited server's socket).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SocketId {
    dev: u64,
    ino: u64,
}

/// The identity of what `fd` names now, `None` when it names nothing.
#[allow(unsafe_code)] // fstat(2)
fn identity(fd: RawFd) -> Option<SocketId> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a whole `stat` to the pointer on success; any number is a valid
    // argument (a closed one is EBADF).
    if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: fstat succeeded, so it filled the struct.
    let st = unsafe { st.assume_init() };
    #[allow(clippy::unnecessary_cast)] // dev_t and ino_t are not u64 on every target
    Some(SocketId {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
    })
}

/// Every connection's socket, with the generation that opened it and its identity: a forked
/// child closes those it inherited ([`close_inherited`]), which it never uses.
static OPEN: Mutex<Vec<(RawFd, u64, Option<SocketId>)>> = Mutex::new(Vec::new());

type Open = std::sync::MutexGuard<'static, Vec<(RawFd, u64, Option<SocketId>)>>;

/// The registry, locked. In a process made by `fork()` (generation above 0) its lock may
/// have been held at the fork by a thread of the parent, which is not here to release it:
/// there the lock is tried for a while (a thread of this process holds it only briefly),
/// then given up (`None`): a child's background thread stuck here never made the
/// connection its callers waited for, and every call of the child timed out in line.
fn registry(current: u64) -> Option<Open> {
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
/// it early, and this process closes it as usual). Returns its identity, which the
/// connection keeps for [`closing`].
pub(crate) fn opened(fd: RawFd) -> Option<SocketId> {
    let generation = generation();
    let id = identity(fd);
    if let Some(mut open) = registry(generation) {
        open.push((fd, generation, id));
    }
    id
}

/// Whether the connection of generation `generation` whose socket is `fd` (identity `id`)
/// may close it as it is dropped: only while the number still names that socket, never a
/// number that a forked child (or [`close_inherited`]) closed and reused, nor one the
/// program closed behind the client's back and reused for a file of its own (tester finding
/// retest8 1: a child's log file was closed and its number taken by a new socket, so the
/// program's next log line went to memcached). One fstat(2) per connection closed, never per
/// call. A socket whose identity could not be read at its opening is closed in the process
/// that opened it. Forgets the socket.
pub(crate) fn closing(fd: RawFd, generation: u64, id: Option<SocketId>) -> bool {
    let current = self::generation();
    // Out of reach in a forked child (see `registry`): the identity alone decides.
    if let Some(mut open) = registry(current) {
        if let Some(i) = open
            .iter()
            .position(|&(f, g, _)| (f, g) == (fd, generation))
        {
            open.swap_remove(i);
        }
    }
    match id {
        Some(id) => identity(fd) == Some(id),
        None => generation == current,
    }
}

/// In a forked child: closes the sockets of every connection opened before the fork (never
/// used here: a connection of an older generation is never reused, see `Conn`), without
/// sending anything on them, so they do not outlive the parent's use of them at the server.
/// close(2) of an inherited descriptor leaves the parent's socket open. A number that no
/// longer names its socket (the child closed it, and maybe reused it) is left alone. Their
/// connections, in the parent's pools, no longer close them ([`closing`]). Skipped when the
/// registry's lock was held at the fork by a thread that is not in the child.
#[allow(unsafe_code)] // close(2)
pub(crate) fn close_inherited() {
    let current = generation();
    let mut open = match OPEN.try_lock() {
        Ok(g) => g,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return,
    };
    open.retain(|&(fd, generation, id)| {
        if generation == current {
            return true;
        }
        if id.is_some() && identity(fd) == id {
            // SAFETY: `fd` still names the socket this process inherited open, which no
            // object uses or closes any longer (`closing` answers false for it from now on).
            unsafe {
                libc::close(fd);
            }
        }
        false
    });
}
