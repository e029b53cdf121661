//! Tester finding retest8 1: a program that closed a client's socket behind its back (a
//! forked child's `closerange` after its first call) and reused the number for a file of its
//! own had that file closed when the client dropped the connection; the next socket took the
//! number, and the program's next write to its "file" went to memcached. A connection closes
//! its number only while it still names the socket it opened. (Its own test binary: the
//! numbers must not be reused by another test meanwhile.)
mod common;

use common::{socket_fds, socket_fds_since, unique, Memcached};
use mcpool::Client;

#[test]
#[allow(unsafe_code)]
fn a_number_reused_for_a_file_is_never_closed_by_the_client() {
    let mc = Memcached::start(&[]);
    let before = socket_fds();
    let c = Client::builder()
        .server(&mc.addr())
        .max_size(1)
        .key_prefix(unique("behind"))
        .build()
        .unwrap();
    c.set("k", b"v", 0).unwrap();
    let ours = socket_fds_since(&before);
    assert_eq!(ours.len(), 1, "{ours:?}");
    let fd = ours[0];
    let path = std::env::temp_dir().join(unique("behind-file"));
    std::fs::write(&path, b"mine").unwrap();
    // SAFETY: closes the client's socket behind its back (the program's mistake this test
    // plays); the file opened next takes that number, or is duplicated onto it.
    unsafe { libc::close(fd) };
    let file = std::fs::File::open(&path).unwrap();
    use std::os::fd::AsRawFd;
    if file.as_raw_fd() != fd {
        // SAFETY: duplicates our own open file onto the free number.
        assert_eq!(unsafe { libc::dup2(file.as_raw_fd(), fd) }, fd);
    }
    c.disconnect_all(); // drops the idle connection
    let target = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .expect("the program's file is still open");
    assert_eq!(
        target, path,
        "the number no longer names the program's file"
    );
    // the client opens a new connection and works
    assert_eq!(c.get("k").unwrap().unwrap(), b"v");
    if file.as_raw_fd() != fd {
        // SAFETY: closes our own duplicate.
        unsafe { libc::close(fd) };
    }
    drop(file);
    let _ = std::fs::remove_file(&path);
}
