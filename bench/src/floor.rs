//! The raw floor: the fastest a synchronous client can be here. A blocking TCP socket with
//! TCP_NODELAY, one `write` and (normally) one `read` per request, text protocol, one
//! connection per thread; for compressed work, C zlib (`compress2` at zlib's default level, as every contestant
//! compresses, / `uncompress`).

use super::contestant::Contestant;
use super::load::{self, MixOp};
use super::sys::CZlib;
use super::work::{value_bytes, Answer, Op, Work};
use std::io::{Read, Write};
use std::net::TcpStream;

/// One raw connection with reusable buffers.
struct Raw {
    s: TcpStream,
    out: Vec<u8>,
    buf: Vec<u8>,
}

impl Raw {
    fn connect(addr: &str) -> Result<Raw, String> {
        let s = TcpStream::connect(addr).map_err(|e| format!("floor: connect {addr}: {e}"))?;
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        // Bounded: a lost reply fails the operation instead of hanging the run.
        let t = Some(std::time::Duration::from_secs(10));
        s.set_read_timeout(t)
            .and_then(|_| s.set_write_timeout(t))
            .map_err(|e| e.to_string())?;
        Ok(Raw {
            s,
            out: Vec::with_capacity(64 * 1024),
            buf: vec![0; 256 * 1024],
        })
    }

    /// Sends `self.out`, then reads until `done(reply)` says the reply is complete.
    /// Returns the reply's length in `self.buf`.
    fn exchange(&mut self, done: impl Fn(&[u8]) -> bool) -> Option<usize> {
        self.s.write_all(&self.out).ok()?;
        let mut len = 0;
        loop {
            if len == self.buf.len() {
                self.buf.resize(len * 2, 0);
            }
            let n = self.s.read(&mut self.buf[len..]).ok()?;
            if n == 0 {
                return None;
            }
            len += n;
            if done(&self.buf[..len]) {
                return Some(len);
            }
        }
    }
}

fn line_done(b: &[u8]) -> bool {
    b.ends_with(b"\r\n")
}

/// Safe for replies whose values are plain letters (every uncompressed value here).
fn end_done(b: &[u8]) -> bool {
    b.ends_with(b"END\r\n")
}

/// Walks a `VALUE ... END` reply; calls `each(flags, data)`; `None` while incomplete.
fn walk_values(b: &[u8], mut each: impl FnMut(u32, &[u8])) -> Option<usize> {
    let mut at = 0;
    loop {
        let rest = &b[at..];
        let eol = memchr::memmem::find(rest, b"\r\n")?;
        let line = &rest[..eol];
        if line == b"END" {
            return Some(at + eol + 2);
        }
        let mut w = line.split(|&c| c == b' ');
        w.next(); // VALUE
        w.next(); // key
        let flags: u32 = std::str::from_utf8(w.next()?).ok()?.parse().ok()?;
        let bytes: usize = std::str::from_utf8(w.next()?).ok()?.parse().ok()?;
        let start = at + eol + 2;
        if b.len() < start + bytes + 2 {
            return None;
        }
        each(flags, &b[start..start + bytes]);
        at = start + bytes + 2;
    }
}

fn put_key(out: &mut Vec<u8>, prefix: &str, i: u64) {
    out.extend_from_slice(prefix.as_bytes());
    let _ = write!(out, "{i}");
}

fn store_cmd(out: &mut Vec<u8>, cmd: &str, prefix: &str, i: u64, flags: u32, data: &[u8]) {
    out.clear();
    out.extend_from_slice(cmd.as_bytes());
    out.push(b' ');
    put_key(out, prefix, i);
    let _ = write!(out, " {flags} 0 {}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The floor contestant.
pub struct Floor {
    addr: String,
    conn: Option<Raw>,
    zlib: Option<CZlib>,
}

impl Floor {
    /// A floor against `addr`.
    pub fn new(addr: &str) -> Floor {
        Floor {
            addr: addr.to_string(),
            conn: None,
            zlib: CZlib::load().ok(),
        }
    }
}

impl Contestant for Floor {
    fn run(&mut self, work: &Work) -> Result<Answer, String> {
        match work {
            Work::Seq {
                op,
                n,
                size,
                prefix,
                slice,
            } => {
                if self.conn.is_none() {
                    self.conn = Some(Raw::connect(&self.addr)?);
                }
                let c = self.conn.as_mut().expect("connected");
                let val = value_bytes(*size);
                let r = load::seq(*n, *slice, |i| match op {
                    Op::Set | Op::Add | Op::Replace => {
                        store_cmd(&mut c.out, op.name(), prefix, i, 0, &val);
                        matches!(c.exchange(line_done), Some(l) if c.buf[..l] == *b"STORED\r\n")
                    }
                    Op::Get => {
                        c.out.clear();
                        c.out.extend_from_slice(b"get ");
                        put_key(&mut c.out, prefix, i);
                        c.out.extend_from_slice(b"\r\n");
                        matches!(c.exchange(end_done), Some(l) if l > 5)
                    }
                    Op::Delete => {
                        c.out.clear();
                        c.out.extend_from_slice(b"delete ");
                        put_key(&mut c.out, prefix, i);
                        c.out.extend_from_slice(b"\r\n");
                        matches!(c.exchange(line_done), Some(l) if c.buf[..l] == *b"DELETED\r\n")
                    }
                });
                Ok(Answer::Ok(r))
            }
            Work::Mget {
                keys,
                calls,
                prefix,
            } => {
                if self.conn.is_none() {
                    self.conn = Some(Raw::connect(&self.addr)?);
                }
                let c = self.conn.as_mut().expect("connected");
                let mut req = b"get".to_vec();
                for i in 0..u64::from(*keys) {
                    req.push(b' ');
                    put_key(&mut req, prefix, i);
                }
                req.extend_from_slice(b"\r\n");
                c.out = req;
                let min = *keys as usize * 7;
                let r = load::seq(
                    *calls,
                    *calls,
                    |_| matches!(c.exchange(end_done), Some(l) if l > min),
                );
                Ok(Answer::Ok(r))
            }
            Work::Fill {
                keyspace,
                size,
                compress,
                prefix,
                value,
            } => {
                if self.conn.is_none() {
                    self.conn = Some(Raw::connect(&self.addr)?);
                }
                let c = self.conn.as_mut().expect("connected");
                let val = value.bytes(*size);
                let (data, flags) = match (compress, &self.zlib) {
                    (true, Some(z)) => (z.compress(&val, -1), 8),
                    (true, None) => {
                        return Ok(Answer::NotApplicable("C zlib (libz.so.1) not found".into()))
                    }
                    (false, _) => (val, 0),
                };
                let r = load::seq(u64::from(*keyspace), u64::MAX, |i| {
                    store_cmd(&mut c.out, "set", prefix, i, flags, &data);
                    matches!(c.exchange(line_done), Some(l) if c.buf[..l] == *b"STORED\r\n")
                });
                Ok(Answer::Ok(r))
            }
            Work::Mix {
                threads,
                ops,
                size,
                keyspace,
                get_pct,
                mget,
                compress,
                prefix,
                value,
                ..
            } => {
                let zlib = match (compress, self.zlib) {
                    (true, None) => {
                        return Ok(Answer::NotApplicable("C zlib (libz.so.1) not found".into()))
                    }
                    (true, z) => z,
                    (false, _) => None,
                };
                let data = value.bytes(*size);
                let flags = if zlib.is_some() { 8 } else { 0 };
                let addr = self.addr.clone();
                let (size, keyspace, mget) = (*size, u64::from(*keyspace), u64::from(*mget));
                let r = load::mix(
                    *threads,
                    *ops,
                    *get_pct,
                    |_| Ok((Raw::connect(&addr)?, vec![0u8; size])),
                    |(c, inflated), rng, kind| match kind {
                        MixOp::Set => {
                            let i = rng.below(keyspace);
                            match &zlib {
                                // Compress on every set, as a client does.
                                Some(z) => {
                                    let packed = z.compress(&data, -1);
                                    store_cmd(&mut c.out, "set", prefix, i, flags, &packed);
                                }
                                None => store_cmd(&mut c.out, "set", prefix, i, flags, &data),
                            }
                            matches!(c.exchange(line_done), Some(l) if c.buf[..l] == *b"STORED\r\n")
                        }
                        MixOp::Get => {
                            c.out.clear();
                            c.out.extend_from_slice(b"get");
                            let first = rng.below(keyspace);
                            for k in 0..mget {
                                c.out.push(b' ');
                                put_key(&mut c.out, prefix, (first + k) % keyspace);
                            }
                            c.out.extend_from_slice(b"\r\n");
                            match &zlib {
                                None => matches!(c.exchange(end_done), Some(l) if l > 5),
                                Some(z) => {
                                    let Some(l) =
                                        c.exchange(|b| walk_values(b, |_, _| {}).is_some())
                                    else {
                                        return false;
                                    };
                                    let mut ok = true;
                                    let mut hits = 0;
                                    walk_values(&c.buf[..l], |f, d| {
                                        hits += 1;
                                        if f & 8 != 0 {
                                            ok &= z.uncompress_into(d, inflated);
                                        }
                                    });
                                    ok && hits == mget
                                }
                            }
                        }
                    },
                )?;
                Ok(Answer::Ok(r))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_values() {
        let b = b"VALUE a 8 3\r\nabc\r\nVALUE bb 0 2\r\nEN\r\nEND\r\n";
        let mut seen = vec![];
        assert_eq!(
            walk_values(b, |f, d| seen.push((f, d.to_vec()))),
            Some(b.len())
        );
        assert_eq!(seen, vec![(8, b"abc".to_vec()), (0, b"EN".to_vec())]);
        for cut in 0..b.len() {
            assert_eq!(walk_values(&b[..cut], |_, _| {}), None, "prefix {cut}");
        }
    }
}
