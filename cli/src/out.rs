//! Every write of the CLI to its standard output and error, without a panic.
//!
//! `print!` and `eprintln!` panic when a write fails, and a write fails with `EPIPE` as soon
//! as the reader of a pipe has gone (`mcpool options | head -1`): Rust ignores `SIGPIPE`, so
//! the process is not killed as a C tool is. Here a closed pipe is not an error: the rest of
//! the output is dropped and the command ends as it would have, with its own exit status
//! (its private server, if any, stopped as usual). Any other write error (a full disk) is
//! said on standard error once and makes the exit status 2 ([`status`]). A write to a
//! closed standard error is dropped.

use std::fmt;
use std::io::{self, ErrorKind, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Standard output's reader has gone (or it failed): later writes are dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// A write to standard output failed other than by a closed pipe: exit status 2.
static FAILED: AtomicBool = AtomicBool::new(false);

/// What a write to standard output returned: a closed pipe ends the output quietly; another
/// error is said once and fails the command ([`status`]).
pub fn check(r: io::Result<()>) {
    if let Err(e) = r {
        if !CLOSED.swap(true, Ordering::Relaxed) && e.kind() != ErrorKind::BrokenPipe {
            FAILED.store(true, Ordering::Relaxed);
            error(format_args!("mcpool: cannot write the output: {e}\n"));
        }
    }
}

/// Whether standard output still takes writes (its reader has not gone).
pub fn open() -> bool {
    !CLOSED.load(Ordering::Relaxed)
}

/// Writes to standard output (flushed at each line, as `print!`), never a panic. A
/// standard output that was closed when the process started fails the first write, as
/// `cat`'s does (tester finding statscli 3: the output went to /dev/null, exit 0).
pub fn output(args: fmt::Arguments) {
    if open() {
        check(stdout().write_fmt(args));
    }
}

/// Standard output, locked, for the commands that write to it directly: every write goes
/// through here, so that a standard output closed at start fails it.
pub struct Stdout(io::StdoutLock<'static>);

/// Standard output ([`Stdout`]).
pub fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if started_closed() {
            return Err(io::Error::other(
                "standard output was closed when mcpool started, or is not open for writing",
            ));
        }
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Whether standard output cannot take the output: closed when the process started, or open
/// read-only (`1< file`; Rust's standard output drops writes that fail with `EBADF` as if
/// they were done: retest22 5). Rust's runtime opens `/dev/null` on a closed descriptor 1
/// before `main` (read and write, `O_RDWR`); a shell's `> /dev/null` opens it write-only. So:
/// descriptor 1 open read-only, or `/dev/null` opened read-write (Linux's
/// `/proc/self/fdinfo`; elsewhere, or unreadable, taken as writable).
pub fn started_closed() -> bool {
    static CLOSED_AT_START: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CLOSED_AT_START.get_or_init(|| closed_at_start(1, 0o0))
}

/// Whether standard input was closed when the process started, or is open write-only (Rust
/// reads `EBADF` as the end of the input): `--value-file -` would read no bytes, and store an
/// empty value over the old one (tester finding cli3 1). As [`started_closed`].
pub fn input_closed_at_start() -> bool {
    static CLOSED_AT_START: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CLOSED_AT_START.get_or_init(|| closed_at_start(0, 0o1))
}

/// Descriptor `fd` open in access mode `wrong` (`O_RDONLY` 0 for an output, `O_WRONLY` 1
/// for an input), or `/dev/null` opened read-write, as Rust's runtime opens it on a closed
/// descriptor before `main` (a shell's redirection opens it one way only). Linux's
/// `/proc/self/fdinfo`; elsewhere, or unreadable, taken as open.
fn closed_at_start(fd: u32, wrong: u32) -> bool {
    let Some(mode) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        })
        .map(|flags| flags & 0o3)
    else {
        return false;
    };
    let null = std::fs::read_link(format!("/proc/self/fd/{fd}"))
        .is_ok_and(|target| target == std::path::Path::new("/dev/null"));
    mode == wrong || (null && mode == 0o2)
}

/// Writes to standard error; a failure is dropped (there is nowhere left to say it).
/// Control characters other than a newline or a tab (a server's `SERVER_ERROR` text may
/// carry a NUL or a terminal escape sequence) are escaped, as in `version` and `stats`
/// output (tester finding retest23 5).
pub fn error(args: fmt::Arguments) {
    let text = args.to_string();
    let _ = io::stderr()
        .lock()
        .write_all(crate::cmd::server_text_keeping_lines(&text).as_bytes());
}

/// The exit status of a command that answered `code`: 2 if its output could not be
/// written (other than to a closed pipe), else `code`.
pub fn status(code: ExitCode) -> ExitCode {
    // Whatever is still buffered goes now, so that its failure counts too.
    if open() {
        check(io::stdout().lock().flush());
    }
    if FAILED.load(Ordering::Relaxed) {
        ExitCode::from(2)
    } else {
        code
    }
}

/// `print!` without a panic.
macro_rules! out {
    ($($t:tt)*) => { $crate::out::output(format_args!($($t)*)) };
}

/// `println!` without a panic.
macro_rules! outln {
    () => { $crate::out::output(format_args!("\n")) };
    ($($t:tt)*) => { $crate::out::output(format_args!("{}\n", format_args!($($t)*))) };
}

/// `eprint!` without a panic.
macro_rules! err {
    ($($t:tt)*) => { $crate::out::error(format_args!($($t)*)) };
}

/// `eprintln!` without a panic.
macro_rules! errln {
    ($($t:tt)*) => { $crate::out::error(format_args!("{}\n", format_args!($($t)*))) };
}

pub(crate) use {err, errln, out, outln};
