//! Questions to the server over a plain socket: its version and its byte counters.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Connects to `addr` (each of its addresses, 2 s at most each), sends `cmd` and reads the
/// reply up to `end`.
fn ask(addr: &str, cmd: &[u8], end: &[u8]) -> Result<String, String> {
    use std::net::ToSocketAddrs;
    let mut last = format!("{addr}: no address");
    let mut conn = None;
    for a in addr.to_socket_addrs().map_err(|e| format!("{addr}: {e}"))? {
        match TcpStream::connect_timeout(&a, Duration::from_secs(2)) {
            Ok(s) => {
                conn = Some(s);
                break;
            }
            Err(e) => last = format!("{addr}: {e}"),
        }
    }
    let mut s = conn.ok_or(last)?;
    s.set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    s.write_all(cmd).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    for _ in 0..10_000 {
        let n = s.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.ends_with(end) {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `version` of the server: an error when it does not answer, or answers anything but
/// `VERSION ...`.
pub fn version(addr: &str) -> Result<String, String> {
    let r = ask(addr, b"version\r\n", b"\r\n")?;
    match r.trim().strip_prefix("VERSION ") {
        Some(v) => Ok(v.to_string()),
        None if r.is_empty() => Err(format!("{addr}: closed the connection unanswered")),
        None => Err(format!(
            "{addr}: not a memcached answer to version: {:?}",
            r.trim()
        )),
    }
}

/// A `stats` value.
pub fn stat(addr: &str, name: &str) -> Result<u64, String> {
    let r = ask(addr, b"stats\r\n", b"END\r\n")?;
    r.lines()
        .filter_map(|l| l.strip_prefix("STAT "))
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == name)
        .and_then(|(_, v)| v.trim().parse().ok())
        .ok_or_else(|| format!("no stat {name}"))
}

/// One of the server's `stats settings` (for example `reqs_per_event`), as text.
pub fn setting(addr: &str, name: &str) -> Result<String, String> {
    let r = ask(addr, b"stats settings\r\n", b"END\r\n")?;
    r.lines()
        .filter_map(|l| l.strip_prefix("STAT "))
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().to_string())
        .ok_or_else(|| format!("no setting {name}"))
}

/// Bytes read plus bytes written by the server so far.
pub fn wire_bytes(addr: &str) -> Option<u64> {
    Some(stat(addr, "bytes_read").ok()? + stat(addr, "bytes_written").ok()?)
}

/// The stored length of `key` (text `get`), as the client wrote it: what its compression made
/// of the value. `None` when the key is missing or the server does not answer.
pub fn stored_len(addr: &str, key: &str) -> Option<u64> {
    let r = ask(addr, format!("get {key}\r\n").as_bytes(), b"\r\n").ok()?;
    parse_value_len(&r)
}

/// The length in a `VALUE key flags bytes` line.
fn parse_value_len(reply: &str) -> Option<u64> {
    let head = reply.lines().next()?;
    let w: Vec<&str> = head.split_whitespace().collect();
    match w.as_slice() {
        ["VALUE", _, _, len, ..] => len.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn value_length() {
        assert_eq!(super::parse_value_len("VALUE k 8 14311\r\nx"), Some(14311));
        assert_eq!(super::parse_value_len("END\r\n"), None);
    }
}
