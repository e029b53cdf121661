//! Deliberately broken fake servers (not memcached): each answers request lines with a script,
//! to produce faults a real server will not produce on demand.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a script tells the fake to do after answering.
pub enum Then {
    /// Keep serving this connection.
    Continue,
    /// Close it.
    Close,
    /// Reset it (SO_LINGER 0, then close: the peer reads `ECONNRESET`).
    Reset,
}

/// A fake server on 127.0.0.1; `script(connection number, request line, stream)` answers each
/// request line. Serves at most `max_conns` connections, 1,000 requests each.
pub fn fake<F>(max_conns: usize, script: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(usize, &[u8], &mut TcpStream) -> Then + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let conns = Arc::new(AtomicUsize::new(0));
    let counter = conns.clone();
    let script = Arc::new(script);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(max_conns) {
            let Ok(stream) = stream else { return };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let script = script.clone();
            std::thread::spawn(move || {
                let mut w = stream.try_clone().unwrap();
                let mut r = BufReader::new(stream);
                for _ in 0..1000 {
                    let mut line = Vec::new();
                    if r.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    match script(n, &line, &mut w) {
                        Then::Continue => {}
                        Then::Close => {
                            let _ = w.flush();
                            return;
                        }
                        Then::Reset => {
                            crate::proxy::linger_zero(&w);
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, conns)
}

/// The key of a text `get <key>` line.
pub fn get_key(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .trim_end()
        .strip_prefix("get ")
        .unwrap_or("")
        .to_string()
}

/// A valid reply to `get key` with `value`.
pub fn value_reply(key: &str, value: &[u8]) -> Vec<u8> {
    let mut r = format!("VALUE {key} 0 {}\r\n", value.len()).into_bytes();
    r.extend_from_slice(value);
    r.extend_from_slice(b"\r\nEND\r\n");
    r
}

/// A deliberately broken fake binary-protocol server on 127.0.0.1: `answer(connection,
/// opcode, opaque, key)` gives the bytes sent back for each request (read whole: header and
/// body). Serves at most 16 connections, 1,000 requests each.
pub fn binary_fake<F>(answer: F) -> String
where
    F: Fn(usize, u8, u32, &[u8]) -> Vec<u8> + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().take(16).enumerate() {
            let Ok(mut s) = stream else { return };
            let answer = answer.clone();
            std::thread::spawn(move || {
                for _ in 0..1000 {
                    let mut h = [0u8; 24];
                    if s.read_exact(&mut h).is_err() {
                        return;
                    }
                    let key_len = u16::from_be_bytes([h[2], h[3]]) as usize;
                    let extras_len = h[4] as usize;
                    let body_len = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
                    let opaque = u32::from_be_bytes([h[12], h[13], h[14], h[15]]);
                    let mut body = vec![0u8; body_len];
                    if s.read_exact(&mut body).is_err() {
                        return;
                    }
                    let key = body
                        .get(extras_len..extras_len + key_len)
                        .unwrap_or_default();
                    if s.write_all(&answer(n, h[1], opaque, key)).is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// A binary response packet: status 0 (OK), CAS 0.
pub fn binary_response(
    opcode: u8,
    opaque: u32,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
) -> Vec<u8> {
    let mut r = vec![0x81, opcode];
    r.extend_from_slice(&(key.len() as u16).to_be_bytes());
    r.extend_from_slice(&[extras.len() as u8, 0, 0, 0]);
    r.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
    r.extend_from_slice(&opaque.to_be_bytes());
    r.extend_from_slice(&[0; 8]);
    r.extend_from_slice(extras);
    r.extend_from_slice(key);
    r.extend_from_slice(value);
    r
}
