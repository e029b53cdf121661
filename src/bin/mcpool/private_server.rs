//! A private memcached on a free loopback port, for when the user gives no `--servers`.
#![allow(dead_code)] // `threads` and `pid` serve the benchmark.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A memcached process started by this tool; killed on drop.
pub struct PrivateMemcached {
    child: Child,
    /// `127.0.0.1:<port>`.
    pub addr: String,
    /// Its `-t` thread count.
    pub threads: u32,
}

/// What to tell a user who has no memcached.
pub const INSTALL_HINT: &str = "memcached is not installed. Install it with \
`sudo apt-get install memcached` (Debian/Ubuntu), `sudo dnf install memcached` (Fedora) \
or `brew install memcached` (macOS), or pass --servers HOST:PORT, or set MEMCACHED=/path/to/memcached.";

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

impl PrivateMemcached {
    /// Starts memcached on 127.0.0.1 with `threads` worker threads, `memory_mb` of cache and
    /// `extra` arguments; optionally pinned with `taskset -c CPUS`.
    pub fn start(
        threads: u32,
        memory_mb: u32,
        pin: Option<&str>,
        extra: &[&str],
    ) -> Result<PrivateMemcached, String> {
        let bin = std::env::var("MEMCACHED").unwrap_or_else(|_| "memcached".into());
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("cannot find a free port: {e}"))?
                .port();
            let mut args: Vec<String> = vec![];
            let program = match pin {
                Some(cpus) => {
                    args.extend(["-c".into(), cpus.into(), bin.clone()]);
                    "taskset".to_string()
                }
                None => bin.clone(),
            };
            args.extend(
                [
                    "-l",
                    "127.0.0.1",
                    "-p",
                    &port.to_string(),
                    "-U",
                    "0",
                    "-t",
                    &threads.to_string(),
                    "-m",
                    &memory_mb.to_string(),
                    "-c",
                    "4096",
                ]
                .map(String::from),
            );
            if is_root() {
                args.extend(["-u".into(), "root".into()]);
            }
            args.extend(extra.iter().map(|s| s.to_string()));
            let mut child = Command::new(&program)
                .args(&args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        INSTALL_HINT.to_string()
                    } else {
                        format!("cannot start {program}: {e}")
                    }
                })?;
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Ok(PrivateMemcached {
                        child,
                        addr: format!("127.0.0.1:{port}"),
                        threads,
                    });
                }
                if let Ok(Some(status)) = child.try_wait() {
                    if status.code() == Some(127) {
                        return Err(INSTALL_HINT.to_string());
                    }
                    break;
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    return Err("memcached did not start within 10 s".into());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        Err("memcached exited at start five times".into())
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for PrivateMemcached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
