//! A multi-get through the C ABI (`mcpool_client_get_multi_into`) allocates nothing in
//! proportion to its keys once warm: no block of a kilobyte or more per call. From Perl such
//! an allocation made glibc consolidate the caller's freed memory first (see
//! `src/multi_get.rs`). Counted with a counting global allocator, against a real memcached.
//! (A unit test of this crate: a cdylib/staticlib crate has no rlib for integration tests.)

use crate::batch::mcpool_client_get_multi_into;
use crate::client::{mcpool_client_free, mcpool_client_new};
use crate::commands::mcpool_client_set;
use crate::config::{mcpool_config_add_server, mcpool_config_free, mcpool_config_new};
use crate::{mcpool_client, mcpool_config, mcpool_status};
use mcpool_testkit::Memcached;
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Counts allocations of 1 KiB or more made by the thread that turned counting on.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static LARGE: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static MINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn note(size: usize) {
    if size >= 1024 && COUNTING.load(Ordering::Relaxed) && MINE.with(|m| m.get()) {
        LARGE.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; counting has no effect
// on the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Destination of every value: one buffer the test owns, reused.
unsafe extern "C" fn into_buffer(
    userdata: *mut c_void,
    _index: usize,
    len: usize,
    _flags: u32,
    _cas: u64,
) -> *mut c_void {
    // SAFETY: `userdata` is the test's `Vec<u8>` of 4 KiB, alive for the call.
    let buf = unsafe { &mut *(userdata as *mut Vec<u8>) };
    if len > buf.len() {
        return std::ptr::null_mut();
    }
    buf.as_mut_ptr() as *mut c_void
}

#[test]
fn a_warm_500_key_multi_get_makes_no_large_allocation() {
    let mc = Memcached::start(&[]);
    let addr = mc.addr();
    let mut cfg: *mut mcpool_config = std::ptr::null_mut();
    let mut client: *mut mcpool_client = std::ptr::null_mut();
    // SAFETY: valid out-pointers and a live config, as the header documents.
    unsafe {
        assert_eq!(mcpool_config_new(&mut cfg), mcpool_status::MCPOOL_OK);
        let a = addr.as_bytes();
        assert_eq!(
            mcpool_config_add_server(cfg, a.as_ptr().cast(), a.len(), 1),
            mcpool_status::MCPOOL_OK
        );
        assert_eq!(
            mcpool_client_new(cfg, &mut client),
            mcpool_status::MCPOOL_OK
        );
        mcpool_config_free(cfg);
    }
    let keys: Vec<String> = (0..500).map(|i| format!("alloc-test-{i}")).collect();
    let value = [b'v'; 100];
    for k in keys.iter().step_by(2) {
        // SAFETY: a live client and valid buffers.
        let st = unsafe {
            mcpool_client_set(
                client,
                k.as_ptr(),
                k.len(),
                value.as_ptr(),
                value.len(),
                0,
                0,
            )
        };
        assert_eq!(st, mcpool_status::MCPOOL_OK);
    }
    let ptrs: Vec<*const u8> = keys.iter().map(|k| k.as_ptr()).collect();
    let lens: Vec<usize> = keys.iter().map(|k| k.len()).collect();
    let mut statuses = vec![mcpool_status::MCPOOL_OK; keys.len()];
    let mut dest = vec![0u8; 4096];
    let mut call = || {
        // SAFETY: arrays of 500 keys, a live client, room for 500 statuses, and a callback
        // that returns NULL or a buffer large enough for the value.
        let st = unsafe {
            mcpool_client_get_multi_into(
                client,
                ptrs.as_ptr(),
                lens.as_ptr(),
                keys.len(),
                false,
                Some(into_buffer),
                (&mut dest as *mut Vec<u8>).cast(),
                statuses.as_mut_ptr(),
            )
        };
        assert_eq!(st, mcpool_status::MCPOOL_OK);
        let hits = statuses
            .iter()
            .filter(|s| **s == mcpool_status::MCPOOL_OK)
            .count();
        let misses = statuses
            .iter()
            .filter(|s| **s == mcpool_status::MCPOOL_NOT_FOUND)
            .count();
        assert_eq!((hits, misses), (250, 250));
    };
    // Warm: the connection and this thread's multi-get memory exist after one call.
    call();
    MINE.with(|m| m.set(true));
    COUNTING.store(true, Ordering::Relaxed);
    for _ in 0..5 {
        call();
    }
    COUNTING.store(false, Ordering::Relaxed);
    assert_eq!(
        LARGE.load(Ordering::Relaxed),
        0,
        "allocations of 1 KiB or more in 5 warm 500-key multi-gets"
    );
    // SAFETY: the client is live and freed once.
    unsafe { mcpool_client_free(client) };
}
