//! Deliberately broken fake servers (not memcached): each answers request lines with a script,
//! to produce faults a real server will not produce on demand.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a script tells the fake to do after answering.
pub enum Then {
    /// Keep serving this connection.
    Continue,
    /// Close it.
    Close,
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
                    if let Then::Close = script(n, &line, &mut w) {
                        let _ = w.flush();
                        return;
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
