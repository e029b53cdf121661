//! nutcracker (twemproxy) processes in front of test memcached servers, for the proxy tests.

use crate::{free_port, listens_in, unique, Memcached};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A nutcracker process on a fixed loopback port, in front of the given memcached servers
/// (ketama + fnv1a_64, the same configuration for every proxy so they all place a key on the
/// same backend). Killed on drop.
pub struct Nutcracker {
    child: Option<Child>,
    port: u16,
    conf: std::path::PathBuf,
    dir: std::path::PathBuf,
}

/// Fails (never skips) when nutcracker is missing: this test is the proof of proxy-pool mode.
pub fn require_nutcracker() {
    let ok = Command::new("nutcracker")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        ok,
        "nutcracker (twemproxy) is not installed; install it: apt-get install nutcracker"
    );
}

impl Nutcracker {
    /// Starts one in front of `backends`, on a free port.
    pub fn start(backends: &[Memcached]) -> Nutcracker {
        Nutcracker::start_hashed(backends, "fnv1a_64")
    }

    /// Starts one in front of `backends` whose ketama hashes keys with `hash` (`md5`, the
    /// tester's setup under which nutcracker 0.5.0 reorders a multi-get reply when a key
    /// misses; under `fnv1a_64` the same 40 test keys came back in request order).
    pub fn start_hashed(backends: &[Memcached], hash: &str) -> Nutcracker {
        let ports: Vec<u16> = backends.iter().map(|mc| mc.port).collect();
        Nutcracker::start_on_ports(&ports, hash)
    }

    /// Starts one in front of the loopback `ports` (a [`crate::RefusingPort`]'s for a backend
    /// that is down, which no other server can take meanwhile).
    pub fn start_on_ports(ports: &[u16], hash: &str) -> Nutcracker {
        Nutcracker::start_pool(ports, hash, "")
    }

    /// As [`Nutcracker::start_on_ports`], with `extra` YAML lines in the pool (each indented
    /// two spaces, e.g. `  hash_tag: "{}"\n`).
    pub fn start_pool(ports: &[u16], hash: &str, extra: &str) -> Nutcracker {
        require_nutcracker();
        let dir = std::env::temp_dir().join(unique("proxy-pool"));
        std::fs::create_dir_all(&dir).unwrap();
        let port = free_port();
        let servers: String = ports
            .iter()
            .enumerate()
            .map(|(i, port)| format!("   - 127.0.0.1:{port}:1 node{i}\n"))
            .collect();
        let conf = dir.join("nutcracker.yml");
        std::fs::write(
            &conf,
            format!(
                "pool:\n  listen: 127.0.0.1:{port}\n  hash: {hash}\n  distribution: ketama\n  \
                 auto_eject_hosts: false\n  timeout: 2000\n{extra}  servers:\n{servers}"
            ),
        )
        .unwrap();
        let mut n = Nutcracker {
            child: None,
            port,
            conf,
            dir,
        };
        n.restart();
        n
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts it (again) on its port and waits until it accepts connections.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "already running");
        for _attempt in 0..5 {
            let mut child = Command::new("nutcracker")
                .arg("-c")
                .arg(&self.conf)
                .args(["-s", &free_port().to_string(), "-a", "127.0.0.1", "-o"])
                .arg(self.dir.join("log"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start nutcracker");
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                    if !listens_in(child.id(), self.port) {
                        // Another process holds the port: this nutcracker will exit.
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    self.child = Some(child);
                    return;
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break; // the stats port was taken: try another
                }
                assert!(Instant::now() < deadline, "nutcracker did not start");
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        panic!("nutcracker failed to start five times");
    }

    /// SIGKILL, and waits until it is gone.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Nutcracker {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
