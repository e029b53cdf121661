//! Progress on stderr: one status line rewritten in place on a terminal, plain lines otherwise.

use std::io::{IsTerminal, Write};
use std::time::Instant;

/// The progress display.
pub struct Progress {
    tty: bool,
    start: Instant,
    live: bool,
}

impl Progress {
    /// A display on stderr.
    pub fn new() -> Progress {
        Progress {
            tty: std::io::stderr().is_terminal(),
            start: Instant::now(),
            live: false,
        }
    }

    /// Seconds since the start.
    pub fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// A transient status (overwritten by the next one on a terminal).
    pub fn status(&mut self, msg: &str) {
        let mut e = std::io::stderr().lock();
        if self.tty {
            let _ = write!(e, "\r\x1b[K[{:6.1}s] {msg}", self.elapsed());
            self.live = true;
        } else {
            let _ = writeln!(e, "[{:6.1}s] {msg}", self.elapsed());
        }
        let _ = e.flush();
    }

    /// A line that stays.
    pub fn say(&mut self, msg: &str) {
        let mut e = std::io::stderr().lock();
        if self.live {
            let _ = write!(e, "\r\x1b[K");
            self.live = false;
        }
        let _ = writeln!(e, "[{:6.1}s] {msg}", self.elapsed());
    }

    /// Clears a live status line.
    pub fn done(&mut self) {
        if self.live {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.live = false;
        }
    }
}
