//! A deliberately unreliable TCP proxy on 127.0.0.1 in front of a real memcached: it delays
//! every chunk it forwards, can drip replies slowly (a slow link), and can reset connections
//! in the middle of a reply.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How the proxy misbehaves.
#[derive(Clone, Copy, Debug, Default)]
pub struct Faults {
    /// Delay before forwarding each chunk, in microseconds: uniform in 0..=max.
    pub max_delay_us: u64,
    /// Reset one connection in `reset_one_in` (0 = never) after a random number of reply bytes.
    pub reset_one_in: u64,
    /// Replies (server to client) forwarded `drip_bytes` at a time (0 = as they come), each
    /// piece after a pause of `drip_every`: a link of `drip_bytes / drip_every` bytes a second.
    pub drip_bytes: usize,
    /// The pause before each dripped piece.
    pub drip_every: Duration,
}

/// The proxy; it stops accepting when dropped.
pub struct Proxy {
    /// `127.0.0.1:<port>` to give the client.
    pub addr: String,
    /// Connections reset on purpose so far.
    pub resets: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(&self.addr);
    }
}

fn rng(seed: &AtomicU64) -> u64 {
    let mut x = seed.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^ (x >> 33)
}

/// Starts a proxy to `backend` with `faults`; serves at most 10,000 connections.
pub fn start(backend: &str, faults: Faults) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let resets = Arc::new(AtomicUsize::new(0));
    let seed = Arc::new(AtomicU64::new(42));
    let (backend, stop2, resets2) = (backend.to_string(), stop.clone(), resets.clone());
    std::thread::spawn(move || {
        for client in listener.incoming().take(10_000) {
            if stop2.load(Ordering::SeqCst) {
                return;
            }
            let Ok(client) = client else { continue };
            let Ok(server) = TcpStream::connect(&backend) else {
                continue;
            };
            let _ = client.set_nodelay(true);
            let _ = server.set_nodelay(true);
            let reset_after = if faults.reset_one_in > 0 && rng(&seed) % faults.reset_one_in == 0 {
                Some(1 + rng(&seed) % 6_000)
            } else {
                None
            };
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let seed_a = seed.clone();
            let requests = Faults {
                drip_bytes: 0,
                ..faults
            };
            std::thread::spawn(move || pump(client, server, requests, None, &seed_a, None));
            let (seed_b, resets3) = (seed.clone(), resets2.clone());
            std::thread::spawn(move || pump(s2, c2, faults, reset_after, &seed_b, Some(&resets3)));
        }
    });
    Proxy { addr, resets, stop }
}

/// Copies `from` → `to` with delays; after `reset_after` bytes, resets `to` (RST, not FIN).
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    faults: Faults,
    reset_after: Option<u64>,
    seed: &AtomicU64,
    resets: Option<&AtomicUsize>,
) {
    let mut buf = [0u8; 16 * 1024];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if faults.max_delay_us > 0 {
            std::thread::sleep(Duration::from_micros(rng(seed) % (faults.max_delay_us + 1)));
        }
        let mut chunk = &buf[..n];
        if let Some(limit) = reset_after {
            if total + n as u64 >= limit {
                chunk = &chunk[..(limit - total) as usize];
                let _ = to.write_all(chunk);
                // SO_LINGER 0: the close below sends RST.
                linger_zero(&to);
                if let Some(r) = resets {
                    r.fetch_add(1, Ordering::Relaxed);
                }
                let _ = to.shutdown(Shutdown::Both);
                let _ = from.shutdown(Shutdown::Both);
                return;
            }
        }
        total += n as u64;
        if faults.drip_bytes > 0 {
            for piece in chunk.chunks(faults.drip_bytes) {
                std::thread::sleep(faults.drip_every);
                if to.write_all(piece).is_err() {
                    return;
                }
            }
            continue;
        }
        if to.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// Sets SO_LINGER {on, 0} so that closing the socket resets the connection.
#[allow(unsafe_code)] // setsockopt(SO_LINGER)
pub(crate) fn linger_zero(s: &TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `s` is an open socket for the duration of the call and `linger` is a valid
    // struct of the size passed.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
