//! The test kit: real memcached processes on free loopback ports, stopped on drop, for every
//! test of the workspace and for the CLI's private server (`mcpool bench` and the commands
//! without `--servers`); deliberately broken fake servers ([`fake`]) and a fault-injecting
//! proxy ([`proxy`]) for fault tests, named as such.

#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod fake;
pub mod nutcracker;
pub mod proxy;

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A memcached process of the test's own (or the CLI's private server), on 127.0.0.1 and a
/// free port; stopped on drop.
pub struct Memcached {
    child: Child,
    /// Its port.
    pub port: u16,
    /// Its `-t` thread count.
    pub threads: u32,
    /// For a server shared by a whole test binary (never dropped): the pipe whose end, when
    /// the test process exits, makes the wrapper shell stop memcached.
    _lifeline: Option<std::process::ChildStdin>,
}

/// What to tell a user who has no memcached.
pub const INSTALL_HINT: &str = "memcached is not installed. Install it with \
`sudo apt-get install memcached` (Debian/Ubuntu), `sudo dnf install memcached` (Fedora) \
or `brew install memcached` (macOS), or pass --servers HOST:PORT, or set MEMCACHED=/path/to/memcached.";

/// The memcached binary: `$MEMCACHED`, else `memcached` on PATH.
pub fn memcached_bin() -> String {
    std::env::var("MEMCACHED").unwrap_or_else(|_| "memcached".into())
}

/// The memcached binary to start, or why the `MEMCACHED` variable names none: set but empty
/// (never read as a program called ""), or not valid UTF-8.
fn checked_bin() -> Result<String, String> {
    match std::env::var("MEMCACHED") {
        Ok(v) if v.is_empty() => Err("MEMCACHED is set but empty: set it to the path of the \
             memcached binary, or unset it to use memcached from PATH"
            .into()),
        Ok(v) => Ok(v),
        Err(std::env::VarError::NotPresent) => Ok("memcached".into()),
        Err(std::env::VarError::NotUnicode(v)) => Err(format!("MEMCACHED={v:?} is not UTF-8 text")),
    }
}

/// Why `bin` did not start (`e`, or exit status 127 from a wrapper): memcached missing from
/// PATH is the install hint; a path given in `MEMCACHED` is named as such.
fn not_started(bin: &str, e: Option<&std::io::Error>) -> String {
    let from_env = std::env::var_os("MEMCACHED").is_some();
    let missing = e.map_or(true, |e| e.kind() == std::io::ErrorKind::NotFound);
    match (from_env, missing, e) {
        (true, true, _) => format!(
            "MEMCACHED={bin}: no such program (MEMCACHED names the memcached binary to start; \
             unset it to use memcached from PATH)"
        ),
        (true, false, Some(e)) => format!("cannot start MEMCACHED={bin}: {e}"),
        (false, true, _) => INSTALL_HINT.to_string(),
        (_, _, Some(e)) => format!("cannot start {bin}: {e}"),
        (_, _, None) => format!("cannot start {bin}"),
    }
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// A free loopback TCP port (the listener is closed before the port is returned).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// Whether the listening socket on 127.0.0.1:`port` belongs to process `pid` or one of its
/// children (the wrapper shell of a shared server runs memcached as its child). A free port
/// can be taken by another test between [`free_port`] and memcached's `bind`; a connect alone
/// would then reach the other test's server. Where `/proc` cannot tell (not Linux), yes.
pub(crate) fn listens_in(pid: u32, port: u16) -> bool {
    let Some(inode) = listening_inode(port) else {
        return true;
    };
    let wanted = format!("socket:[{inode}]");
    let owns = |p: &str| {
        std::fs::read_dir(format!("/proc/{p}/fd"))
            .map(|fds| {
                fds.flatten().any(|fd| {
                    std::fs::read_link(fd.path())
                        .map(|l| l.to_string_lossy() == wanted)
                        .unwrap_or(false)
                })
            })
            .unwrap_or(false)
    };
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    owns(&pid.to_string()) || children.split_whitespace().any(owns)
}

/// The inode of the socket listening on 127.0.0.1:`port`, from `/proc/net/tcp`.
fn listening_inode(port: u16) -> Option<String> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!("0100007F:{port:04X}");
    table.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
        (f.len() > 9 && f[1] == local && f[3] == "0A").then(|| f[9].to_string())
    })
}

/// A loopback TCP port that refuses connections (nothing listens) and that no other server
/// can take while this lives: a socket bound to it, never listening. For "a server that is
/// down" without the race of [`free_port`] (a memcached started meanwhile could get it).
pub struct RefusingPort {
    fd: i32,
    /// The port.
    pub port: u16,
}

impl RefusingPort {
    /// `127.0.0.1:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// A fresh [`RefusingPort`].
#[allow(unsafe_code)] // socket(2), bind(2), getsockname(2) on a socket of our own
pub fn refusing_port() -> RefusingPort {
    // SAFETY: plain syscall; the descriptor is ours and closed by `RefusingPort`'s drop.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
    let mut guard = RefusingPort { fd, port: 0 };
    let mut sin = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: `sin` is a valid sockaddr_in of `len` bytes for the duration of the call.
    let bound = unsafe { libc::bind(fd, (&sin as *const libc::sockaddr_in).cast(), len) };
    assert_eq!(bound, 0, "bind: {}", std::io::Error::last_os_error());
    // SAFETY: `sin` and `len` are writable and `len` holds the size of `sin`.
    let named =
        unsafe { libc::getsockname(fd, (&mut sin as *mut libc::sockaddr_in).cast(), &mut len) };
    assert_eq!(named, 0, "getsockname: {}", std::io::Error::last_os_error());
    guard.port = u16::from_be(sin.sin_port);
    guard
}

impl Drop for RefusingPort {
    #[allow(unsafe_code)] // close(2) of the descriptor `refusing_port` opened
    fn drop(&mut self) {
        // SAFETY: `fd` is this guard's own descriptor, closed once, here.
        unsafe { libc::close(self.fd) };
    }
}

/// A blackholed fake server, named as such: a loopback TCP port whose connects hang, as
/// those to a host that is powered off or firewalled (a dropped SYN). A listening socket
/// with the shortest listen queue (`listen(0)`), filled: the kernel drops every further
/// SYN. Never accepts; closed on drop.
pub struct BlackholedPort {
    _listener: TcpListener,
    _queued: Vec<TcpStream>,
    /// The port.
    pub port: u16,
}

impl BlackholedPort {
    /// `127.0.0.1:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// A fresh [`BlackholedPort`]: its queue is filled until a connect to it times out (at
/// most 16 tries of 200 ms).
#[allow(unsafe_code)] // listen(2) on a socket of our own
pub fn blackholed_port() -> BlackholedPort {
    use std::os::fd::AsRawFd;
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    // SAFETY: listen(2) again on our own listening socket: only its queue length changes.
    let rc = unsafe { libc::listen(listener.as_raw_fd(), 0) };
    assert_eq!(rc, 0, "listen: {}", std::io::Error::last_os_error());
    let addr = listener.local_addr().expect("local_addr");
    let mut queued = Vec::new();
    for _ in 0..16 {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            Ok(s) => queued.push(s),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                return BlackholedPort {
                    _listener: listener,
                    _queued: queued,
                    port: addr.port(),
                }
            }
            Err(e) => panic!("filling the blackholed port's queue: {e}"),
        }
    }
    panic!("the blackholed port's listen queue never filled");
}

/// A deliberately silent fake server (not memcached), named as such: accepts up to 8
/// connections, holds them open and never reads or answers (a server that hangs after the
/// connect: a TLS handshake or SASL exchange then waits). Its thread ends with the test
/// process. Returns `127.0.0.1:port`.
pub fn silent_server() -> String {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("local_addr").to_string();
    std::thread::spawn(move || {
        let held: Vec<_> = l.incoming().take(8).collect();
        drop(l);
        std::thread::park();
        drop(held);
    });
    addr
}

/// How to start a memcached: the one spawner behind the tests' and the CLI's servers.
#[derive(Clone, Debug)]
pub struct Spawn<'a> {
    /// Port, 0 = a free one (retried a few times if taken meanwhile).
    pub port: u16,
    /// `-t` worker threads (default 2).
    pub threads: u32,
    /// `-m` megabytes of cache (default: memcached's own).
    pub memory_mb: Option<u32>,
    /// `-c` maximum simultaneous connections (default: memcached's own).
    pub max_connections: Option<u32>,
    /// Pin with `taskset -c CPUS`.
    pub pin: Option<&'a str>,
    /// Extra arguments.
    pub extra: &'a [&'a str],
    /// Extra environment variables (e.g. `SASL_CONF_PATH`).
    pub env: &'a [(&'a str, &'a str)],
    /// Run under a shell that stops memcached when this process exits (for statics).
    pub shared: bool,
    /// Stop memcached with this process however it ends (the CLI's private server): on
    /// Linux the kernel kills it when the thread that starts it ends (`PR_SET_PDEATHSIG`,
    /// so SIGKILL of this process too: start it from the main thread); and SIGTERM, SIGINT
    /// and SIGHUP, when this process does not ignore them, kill it before this process dies
    /// of the signal (every Unix). One such server per process.
    pub stop_with_process: bool,
}

impl Default for Spawn<'_> {
    fn default() -> Self {
        Spawn {
            port: 0,
            threads: 2,
            memory_mb: None,
            max_connections: None,
            pin: None,
            extra: &[],
            env: &[],
            shared: false,
            stop_with_process: false,
        }
    }
}

impl Spawn<'_> {
    /// Starts the server and waits (at most 10 s) until it accepts connections.
    pub fn start(&self) -> Result<Memcached, String> {
        let bin = checked_bin()?;
        for _attempt in 0..5 {
            let port = if self.port == 0 {
                free_port()
            } else {
                self.port
            };
            let mut cmd = if self.shared {
                let mut c = Command::new("sh");
                c.args(["-c", "\"$0\" \"$@\" & pid=$!; cat >/dev/null; kill $pid"]);
                c.arg(&bin).stdin(Stdio::piped());
                c
            } else if let Some(cpus) = self.pin {
                let mut c = Command::new("taskset");
                c.args(["-c", cpus, &bin]);
                c
            } else {
                Command::new(&bin)
            };
            cmd.args(["-l", "127.0.0.1", "-p", &port.to_string(), "-U", "0"]);
            cmd.args(["-t", &self.threads.to_string()]);
            if let Some(mb) = self.memory_mb {
                cmd.args(["-m", &mb.to_string()]);
            }
            if let Some(n) = self.max_connections {
                cmd.args(["-c", &n.to_string()]);
            }
            if running_as_root() {
                cmd.args(["-u", "root"]);
            }
            cmd.args(self.extra)
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            cmd.envs(self.env.iter().copied());
            if self.stop_with_process {
                die_with_parent(&mut cmd);
            }
            let mut child = cmd.spawn().map_err(|e| not_started(&bin, Some(&e)))?;
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    if !listens_in(child.id(), port) {
                        // Someone else's listener took the port first (another test's
                        // memcached or fake server): ours will exit. Try another port.
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    let lifeline = child.stdin.take();
                    if self.stop_with_process {
                        stop_on_signals(child.id());
                    }
                    return Ok(Memcached {
                        child,
                        port,
                        threads: self.threads,
                        _lifeline: lifeline,
                    });
                }
                if let Ok(Some(status)) = child.try_wait() {
                    if status.code() == Some(127) {
                        return Err(not_started(&bin, None));
                    }
                    break; // exited: port taken? try another
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "memcached did not start on port {port} within 10 s"
                    ));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        Err("memcached exited at start five times".into())
    }
}

impl Memcached {
    /// Starts memcached with default settings plus `extra` arguments (panics on failure:
    /// for tests).
    pub fn start(extra: &[&str]) -> Memcached {
        Self::start_on(0, extra)
    }

    /// Starts memcached on `port` (0 = a free one), retrying a few times if the port is taken.
    pub fn start_on(port: u16, extra: &[&str]) -> Memcached {
        Self::start_with_env(port, extra, &[])
    }

    /// Like `start_on`, with extra environment variables (e.g. `SASL_CONF_PATH`).
    pub fn start_with_env(port: u16, extra: &[&str], env: &[(&str, &str)]) -> Memcached {
        Self::must(Spawn {
            port,
            extra,
            env,
            ..Spawn::default()
        })
    }

    /// memcached with SASL (`-S`) that knows one PLAIN user, from a sasldb made with
    /// `saslpasswd2` in a fresh temporary directory; `None` (said on stderr) when
    /// `saslpasswd2` is not installed, which fails under `CI=true` (Debian: sasl2-bin).
    pub fn start_sasl(user: &str, password: &str) -> Option<Memcached> {
        use std::io::Write;
        if Command::new("saslpasswd2").arg("-h").output().is_err() {
            assert!(
                std::env::var("CI").is_err(),
                "saslpasswd2 missing in CI (Debian: apt-get install sasl2-bin)"
            );
            eprintln!("SKIP: saslpasswd2 not installed (Debian: sasl2-bin)");
            return None;
        }
        let dir = std::env::temp_dir().join(unique("mcpool-sasl"));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("sasldb");
        let mut child = Command::new("saslpasswd2")
            .args(["-p", "-a", "memcached", "-c", "-f"])
            .arg(&db)
            .arg(user)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(password.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success());
        std::fs::write(
            dir.join("memcached.conf"),
            format!("mech_list: plain\nsasldb_path: {}\n", db.display()),
        )
        .unwrap();
        let conf = dir.to_str().unwrap().to_owned();
        Some(Self::start_with_env(
            0,
            &["-S"],
            &[("SASL_CONF_PATH", &conf)],
        ))
    }

    /// A server for a `static` shared by every test of a binary: statics are never dropped,
    /// so memcached runs under a shell that stops it when the test process exits (its stdin
    /// pipe closes). `pid` and `signal` then address the shell: use `start` for those.
    pub fn start_shared(extra: &[&str]) -> Memcached {
        Self::must(Spawn {
            extra,
            shared: true,
            ..Spawn::default()
        })
    }

    fn must(spawn: Spawn<'_>) -> Memcached {
        spawn.start().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts memcached listening only on the unix socket `path`.
    pub fn start_unix(path: &str) -> Memcached {
        let mut cmd = Command::new(memcached_bin());
        cmd.args(["-s", path, "-t", "2"]);
        if running_as_root() {
            cmd.args(["-u", "root"]);
        }
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start memcached; install it (Debian: apt-get install memcached)");
        let mc = Memcached {
            child,
            port: 0,
            threads: 2,
            _lifeline: None,
        };
        wait_until("the unix socket", Duration::from_secs(10), || {
            std::os::unix::net::UnixStream::connect(path).is_ok()
        });
        mc
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends a signal (e.g. `libc::SIGSTOP`).
    pub fn signal(&self, sig: i32) {
        let status = Command::new("kill")
            .args([format!("-{sig}"), self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Stops it (SIGSTOP) and waits until every one of its threads is stopped: a stop
    /// signal wakes one thread, which then stops the others, so until then a worker
    /// thread may still answer a request.
    pub fn freeze(&self) {
        self.signal(libc::SIGSTOP);
        let tasks = format!("/proc/{}/task", self.pid());
        wait_until(
            "every memcached thread stopped",
            Duration::from_secs(10),
            || {
                std::fs::read_dir(&tasks)
                    .expect("memcached's /proc task list")
                    .filter_map(Result::ok)
                    .all(|task| {
                        let stat =
                            std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
                        // The state follows the parenthesised command name.
                        let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
                        matches!(state.and_then(|s| s.chars().next()), Some('T' | 't'))
                    })
            },
        );
    }

    /// Lets a frozen server run again (SIGCONT).
    pub fn thaw(&self) {
        self.signal(libc::SIGCONT);
    }

    /// Kills it (SIGKILL) and waits for it to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        // No signal handler may kill its process id once it is reaped (and maybe reused).
        let _ = STOP_ON_SIGNAL.compare_exchange(
            self.child.id() as i32,
            0,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        self.kill();
    }
}

/// The server [`Spawn::stop_with_process`] started, for the signal handler (0: none).
static STOP_ON_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// In the child, before exec: the kernel sends it SIGKILL when the thread that started it
/// ends, whether this process exits, returns, or is killed by any signal (SIGKILL included).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // prctl(2) and getppid(2) between fork and exec
fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec; it only calls prctl and
    // getppid, both async-signal-safe, and allocates nothing (an OS error is a number).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent ended before prctl took effect: do not outlive it.
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Elsewhere only the signal handlers of [`stop_on_signals`] stop it.
#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// SIGTERM, SIGINT and SIGHUP (each unless this process ignores it, as `nohup` or a
/// background job's shell arranges) kill server `pid` first, then end this process by the
/// same signal, so its exit status still says which.
#[allow(unsafe_code)] // sigaction(2), kill(2), raise(3)
fn stop_on_signals(pid: u32) {
    extern "C" fn on_signal(sig: libc::c_int) {
        // Only async-signal-safe calls: an atomic load, kill, signal, raise.
        let pid = STOP_ON_SIGNAL.swap(0, Ordering::SeqCst);
        // SAFETY: kill, signal and raise are async-signal-safe; `pid` is our own child,
        // not yet reaped (Drop clears it before reaping).
        unsafe {
            if pid > 0 {
                libc::kill(pid, libc::SIGKILL);
            }
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
    STOP_ON_SIGNAL.store(pid as i32, Ordering::SeqCst);
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: `old` and `new` are valid sigaction structures of our own; the handler
        // only makes async-signal-safe calls.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut new.sa_mask);
            new.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &new, std::ptr::null_mut());
        }
    }
}

/// A key prefix unique to this call, so tests can share a server and run in parallel.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}-{}-{}-",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Waits (bounded) until `cond` holds.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The numbers of the sockets this process holds open (`socket:[N]` in /proc/self/fd).
pub fn socket_fds() -> Vec<i32> {
    std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|e| {
            let e = e.ok()?;
            let target = std::fs::read_link(e.path()).ok()?;
            target
                .to_string_lossy()
                .starts_with("socket:")
                .then(|| e.file_name().to_str()?.parse().ok())?
        })
        .collect()
}

/// The sockets this process holds open now that were not open in `before` (a
/// [`socket_fds`] taken earlier): the ones a client opened meanwhile.
pub fn socket_fds_since(before: &[i32]) -> Vec<i32> {
    socket_fds()
        .into_iter()
        .filter(|fd| !before.contains(fd))
        .collect()
}

/// How many threads this process has now (`Threads:` of `/proc/self/status`).
pub fn thread_count() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads: line")
}

/// Waits for the forked child `pid` to end, at most `limit` (a child that does not is killed
/// and the test fails: a deadlock in it would otherwise hang the test); returns its exit code
/// (the test fails when it died of a signal).
#[allow(unsafe_code)] // waitpid(2) and kill(2) of the caller's own child
pub fn wait_for_child(pid: i32, limit: Duration) -> i32 {
    let mut status = 0;
    let end = Instant::now() + limit;
    loop {
        // SAFETY: polls the caller's child; `status` lives across the call.
        let waited = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if waited == pid {
            break;
        }
        if Instant::now() > end {
            // SAFETY: signals the caller's own child, stuck.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the forked child did not finish in {limit:?} (deadlocked?)");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(libc::WIFEXITED(status), "the child died: {status}");
    libc::WEXITSTATUS(status)
}

/// A value that names its key and a checksum of it, padded to `len` bytes.
pub fn value_for(key: &str, len: usize) -> Vec<u8> {
    let mut v = format!("{key}:{:08x}:", crc32fast::hash(key.as_bytes())).into_bytes();
    while v.len() < len {
        v.push(b'a' + (v.len() % 26) as u8);
    }
    v
}

/// `n` bytes of xorshift noise: a value no compressor shrinks.
pub fn noise(n: usize) -> Vec<u8> {
    let mut x = 2_463_534_242u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// True when `value` is the one `value_for(key, _)` makes.
pub fn belongs_to(key: &str, value: &[u8]) -> bool {
    value.starts_with(format!("{key}:{:08x}:", crc32fast::hash(key.as_bytes())).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_belongs_to_its_own_process_only() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        assert!(listens_in(std::process::id(), port));
        let mut other = Command::new("sleep").arg("30").spawn().expect("sleep");
        let answer = listens_in(other.id(), port);
        let _ = other.kill();
        let _ = other.wait();
        assert!(!answer, "another process's listener is not its own");
    }

    #[test]
    fn a_server_started_on_a_taken_port_moves_to_another() {
        let mc = Memcached::start(&[]);
        let taken = Spawn {
            port: mc.port,
            ..Spawn::default()
        }
        .start();
        assert!(
            taken.is_err(),
            "a server asked for a taken port must not pass another's server off as its own"
        );
    }
}
