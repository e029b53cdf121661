//! The core's own threads (the pool's background thread, a resolver's) take no asynchronous
//! signal: they are started with every signal blocked, so a process's signals reach the
//! program's threads only. A signal handler of the program (a Perl `%SIG` handler, a Python
//! one, a C one that expects its own threads) never runs on a thread it knows nothing of
//! (tester finding fork 2: Perl's handler ran on the pool's thread, which has no interpreter,
//! and the process died of SIGSEGV while the calling thread held the signal back for its
//! call).

/// Runs `spawn` (which starts threads) with every signal blocked in the calling thread, so
/// the threads it starts inherit that mask; the caller's mask is restored after.
#[allow(unsafe_code)] // pthread_sigmask
pub(crate) fn spawn_quiet<T>(spawn: impl FnOnce() -> T) -> T {
    let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigfillset initialises the set it is given; pthread_sigmask reads that set and
    // writes the previous mask into `old`, which it fully initialises on success.
    let blocked = unsafe {
        libc::sigfillset(all.as_mut_ptr()) == 0
            && libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), old.as_mut_ptr()) == 0
    };
    let out = spawn();
    if blocked {
        // SAFETY: `old` was initialised by the successful pthread_sigmask above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut());
        }
    }
    out
}
