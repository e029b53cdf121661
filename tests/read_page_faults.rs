//! A multi-get whose values the caller frees does not make the next one fault its memory in
//! again: with glibc, 100 values of 30 KB freed together used to join the top of the heap,
//! which glibc then gave back to the kernel, so that every call took about 720 minor page
//! faults (docs/performance.md). The heap guard (`mcpool::heap_guard`) keeps them below a
//! block of the thread's. Counted per thread (`RUSAGE_THREAD`), in a worker thread as a
//! threaded service reads, against a real memcached.
#![cfg(all(target_os = "linux", target_env = "gnu"))]
mod common;

use common::{unique, value_for, Memcached};
use mcpool::Client;

/// Minor page faults of the calling thread so far.
fn thread_faults() -> i64 {
    // SAFETY: getrusage writes one rusage struct, which is plain data.
    unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_THREAD, &mut u), 0);
        u.ru_minflt
    }
}

const KEYS: usize = 100;
const VALUE: usize = 30_800;
const CALLS: i64 = 40;

#[test]
fn large_multi_gets_do_not_fault_their_values_in_each_call() {
    let mc = Memcached::start(&[]);
    let client = Client::builder().server(&mc.addr()).build().unwrap();
    let prefix = unique("pf");
    let keys: Vec<String> = (0..KEYS).map(|i| format!("{prefix}{i}")).collect();
    let values: Vec<Vec<u8>> = keys.iter().map(|k| value_for(k, VALUE)).collect();
    for (k, v) in keys.iter().zip(&values) {
        client.set(k, v, 0).unwrap();
    }
    let per_call = std::thread::scope(|s| {
        s.spawn(|| {
            let read = || {
                let got = client.get_multi(&keys);
                for ((k, v), r) in keys.iter().zip(&values).zip(&got) {
                    let item = r.as_ref().unwrap().as_ref().expect("every key was set");
                    assert!(item.value == *v, "{k}: a wrong value");
                }
                // The values are dropped here, together, as a caller drops them.
            };
            for _ in 0..5 {
                read();
            }
            let before = thread_faults();
            for _ in 0..CALLS {
                read();
            }
            (thread_faults() - before) / CALLS
        })
        .join()
        .unwrap()
    });
    // 3 MB of values is 750 pages: faulting them in again is 700+ per call. A few faults per
    // call are left to the allocator's other moves.
    assert!(
        per_call < 100,
        "{per_call} minor page faults per get_multi of {KEYS} values of {VALUE} bytes"
    );
}
