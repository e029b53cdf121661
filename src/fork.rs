//! Fork detection: a counter that the child side of every `fork()` increments, so a
//! connection opened before a fork is recognised (one atomic load) and never used by the child.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

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
