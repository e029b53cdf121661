//! The text dialect. Text replies carry no tag: a retrieval's values are matched, in
//! order, to the keys asked for by name instead, and a value for a key not asked for is a
//! protocol error.

use super::{unsupported, Hit, Outcome, Request, Speak, WireKeys};
use crate::conn::{protocol_error_at, Conn, Scan};
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::{self, Reply};
use crate::proto::{Status, TextCodec};
use std::ops::Range;

/// The text dialect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Text;

/// Key bytes per `get` line: a multi-get of more is sent as several pipelined lines. Large,
/// because every line is answered separately (and read separately): memcached accepts long
/// `get` lines, so 500 keys go in one line and come back in one reply.
pub(crate) const GET_LINE_BYTES: usize = 64 * 1024;

/// Splits `keys` into the index ranges that share one `get` line.
fn get_lines<K: WireKeys + ?Sized>(keys: &K) -> impl Iterator<Item = Range<usize>> + '_ {
    let n = keys.count();
    let mut start = 0;
    // Up to 261 keys of at most 250 bytes always fit one line: no need to measure them.
    let one_line = n * (crate::key::MAX_KEY_LEN + 1) <= GET_LINE_BYTES;
    std::iter::from_fn(move || {
        if start >= n {
            return None;
        }
        if one_line {
            start = n;
            return Some(0..n);
        }
        let mut bytes = 0;
        let mut end = start;
        while end < n {
            bytes += keys.key(end).len() + 1;
            if bytes > GET_LINE_BYTES && end > start {
                break;
            }
            end += 1;
        }
        let line = start..end;
        start = end;
        Some(line)
    })
}

/// The error for a reply that is not one of those expected for `asked`.
pub(crate) fn unexpected(server: &str, reply: Reply<'_>, asked: &str) -> Error {
    let server = server.to_owned();
    let text = |m: &[u8]| String::from_utf8_lossy(m).into_owned();
    match reply {
        Reply::ServerError(m) => Error::server_reply(server, text(m)),
        Reply::ClientError(m) => Error::Client {
            server,
            message: text(m),
        },
        Reply::Error => Error::Client {
            server,
            message: format!("ERROR (the server did not understand {asked})"),
        },
        other => Error::Protocol {
            server,
            detail: format!("unexpected reply to {asked}: {other:?}"),
        },
    }
}

/// Appends the retrieval lines for `keys` (several lines of at most `GET_LINE_BYTES`).
fn encode_retrieval<K: WireKeys + ?Sized>(
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
) {
    for line in get_lines(keys) {
        ascii::encode_get(buf, cas, touch, line.map(|i| keys.key(i)));
    }
}

/// Reads the replies to `encode_retrieval(keys)`. Each hit is matched, in order, to the next
/// requested key with that name (the server answers in request order); a value for a key not
/// asked for is a protocol error, so a crossed reply can never reach a caller. So is a value
/// without its CAS field when `want_cas` (`gets`): never a made-up version.
fn recv_retrieval<K: WireKeys + ?Sized>(
    conn: &mut Conn,
    keys: &K,
    want_cas: bool,
    hit: &mut Hit<'_>,
) -> Result<()> {
    let n = keys.count();
    let mut ends = get_lines(keys).count();
    if ends == 0 {
        return Ok(()); // no key, no request line, no reply
    }
    let mut cursor = 0;
    // Every value that has arrived is parsed in one pass. Most are for the next key asked
    // for (a miss is simply absent): a tight loop compares that key in place; anything else
    // goes through the general parser, one reply at a time.
    conn.scan(|buf, server, max_value| {
        let mut at = 0;
        loop {
            while cursor < n {
                let Some(v) = ascii::value_of(&buf[at..], keys.key(cursor), max_value) else {
                    break;
                };
                if want_cas && v.cas.is_none() {
                    return Err(no_cas(server, keys.key(cursor)));
                }
                hit(cursor, v.data, v.flags, v.cas);
                cursor += 1;
                at += v.used;
            }
            let b = &buf[at..];
            let (reply, used) = match ascii::parse(b, max_value) {
                Ok(Status::Complete(reply, used)) => (reply, used),
                Ok(Status::Partial(hint)) => return Ok(Scan::More(at, hint)),
                Err(e) => return Err(protocol_error_at(server, b, &e.to_string())),
            };
            at += used;
            match reply {
                Reply::End => {
                    ends -= 1;
                    if ends == 0 {
                        return Ok(Scan::Done(at, ()));
                    }
                }
                Reply::Value {
                    key,
                    flags,
                    cas,
                    data,
                } => match (cursor..n).find(|&j| keys.key(j) == key) {
                    Some(_) if want_cas && cas.is_none() => return Err(no_cas(server, key)),
                    Some(j) => {
                        hit(j, data, flags, cas);
                        cursor = j + 1;
                    }
                    None => {
                        return Err(Error::Protocol {
                            server: server.to_owned(),
                            detail: format!(
                                "value for key {:?}, which was not asked for (or out of order)",
                                String::from_utf8_lossy(key)
                            ),
                        })
                    }
                },
                other => return Err(unexpected(server, other, "get")),
            }
        }
    })
}

/// The error for a `gets` reply that carries no CAS field.
fn no_cas(server: &str, key: &[u8]) -> Error {
    Error::Protocol {
        server: server.to_owned(),
        detail: format!(
            "value for key {:?} without the CAS field that gets asked for",
            String::from_utf8_lossy(key)
        ),
    }
}

/// Reads one reply line that `f` turns into an outcome (`None`: not an answer to `asked`).
fn read_one(
    conn: &mut Conn,
    asked: &str,
    f: impl FnOnce(&Reply<'_>) -> Option<Outcome>,
) -> Result<Outcome> {
    conn.read::<TextCodec, _>(|r, server| f(&r).ok_or_else(|| unexpected(server, r, asked)))
}

/// Reads `STAT name value` lines up to `END`.
fn recv_stats(conn: &mut Conn) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    loop {
        let stat = conn.read::<TextCodec, _>(|r, server| match r {
            Reply::Stat(k, v) => Ok(Some((
                String::from_utf8_lossy(k).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))),
            // `stats reset` answers RESET, `stats detail on|off` OK: the end, no statistics.
            Reply::End | Reply::Reset | Reply::Ok => Ok(None),
            other => Err(unexpected(server, other, "stats")),
        })?;
        match stat {
            Some(kv) => out.push(kv),
            None => return Ok(out),
        }
    }
}

/// Reads `VERSION <text>`.
fn recv_version(conn: &mut Conn) -> Result<String> {
    conn.read::<TextCodec, _>(|r, server| match r {
        Reply::Version(v) => Ok(String::from_utf8_lossy(v).into_owned()),
        other => Err(unexpected(server, other, "version")),
    })
}

impl Speak for Text {
    fn encode<K: WireKeys + ?Sized>(&self, buf: &mut Vec<u8>, req: &Request<'_, K>, _tag: u32) {
        match *req {
            Request::Get { key, cas, touch } => encode_retrieval(buf, cas, touch, &[key][..]),
            Request::GetMulti { keys, cas, touch } => encode_retrieval(buf, cas, touch, keys),
            Request::Store {
                cmd,
                key,
                flags,
                ttl,
                data,
                quiet,
                ..
            } => ascii::encode_store(buf, cmd, key, flags, ttl, data, quiet),
            Request::Delete { key, quiet, .. } => ascii::encode_delete(buf, key, quiet),
            Request::Touch { key, ttl } => ascii::encode_touch(buf, key, ttl),
            // The text protocol has no initial value: the client adds one.
            Request::Arith {
                incr, key, delta, ..
            } => ascii::encode_arith(buf, incr, key, delta),
            Request::Flush { delay } => ascii::encode_flush_all(buf, delay),
            Request::Version | Request::Noop => ascii::encode_version(buf),
            Request::Stats { group } => ascii::encode_stats(buf, group),
            // Never sent: the client refuses these first.
            Request::Lease { .. } | Request::Invalidate { .. } | Request::Info { .. } => {}
        }
    }

    fn read<K: WireKeys + ?Sized>(
        &self,
        conn: &mut Conn,
        req: &Request<'_, K>,
        _tag: u32,
        hit: &mut Hit<'_>,
    ) -> Result<Outcome> {
        let asked = req.name();
        match *req {
            Request::Get { key, cas, .. } => {
                recv_retrieval(conn, &[key][..], cas, hit).map(|()| Outcome::Done)
            }
            Request::GetMulti { keys, cas, .. } => {
                recv_retrieval(conn, keys, cas, hit).map(|()| Outcome::Done)
            }
            Request::Store { .. } => read_one(conn, asked, |r| {
                Some(Outcome::Stored(match r {
                    Reply::Stored => StoreOutcome::Stored,
                    Reply::NotStored => StoreOutcome::NotStored,
                    Reply::Exists => StoreOutcome::Exists,
                    Reply::NotFound => StoreOutcome::NotFound,
                    _ => return None,
                }))
            }),
            Request::Delete { .. } => read_one(conn, asked, |r| match r {
                Reply::Deleted => Some(Outcome::Existed(true)),
                Reply::NotFound => Some(Outcome::Existed(false)),
                _ => None,
            }),
            Request::Touch { .. } => read_one(conn, asked, |r| match r {
                Reply::Touched => Some(Outcome::Existed(true)),
                Reply::NotFound => Some(Outcome::Existed(false)),
                _ => None,
            }),
            Request::Arith { .. } => read_one(conn, asked, |r| match r {
                Reply::Number(n) => Some(Outcome::Counter(Some(*n))),
                Reply::NotFound => Some(Outcome::Counter(None)),
                _ => None,
            }),
            Request::Flush { .. } => read_one(conn, asked, |r| match r {
                Reply::Ok => Some(Outcome::Done),
                _ => None,
            }),
            Request::Version => recv_version(conn).map(Outcome::Version),
            Request::Noop => recv_version(conn).map(|_| Outcome::Done),
            Request::Stats { .. } => recv_stats(conn).map(Outcome::Stats),
            Request::Lease { .. } | Request::Invalidate { .. } | Request::Info { .. } => {
                Err(unsupported(req, "text"))
            }
        }
    }

    fn batches_quietly(&self) -> bool {
        false
    }

    fn quiet_in_batch(&self, _like: &Request<'_>, _i: usize, _n: usize) -> bool {
        false
    }

    /// `version`: its answer comes after every reply before it.
    fn encode_barrier(&self, buf: &mut Vec<u8>, _tag: u32) {
        ascii::encode_version(buf);
    }

    fn read_barrier(&self, conn: &mut Conn, _tag: u32) -> Result<()> {
        recv_version(conn).map(drop)
    }

    /// Every reply of the batch, in order. A `SERVER_ERROR` answers its own request (the
    /// server swallowed that request's data and goes on: `Error::answered_in_step`) and the
    /// next reply is the next request's. After any other error (`CLIENT_ERROR`, `ERROR`, a
    /// broken connection, a protocol violation) the rest of the stream cannot be trusted:
    /// it is returned, with no outcome for that request and the ones after it (the caller
    /// gives them that error) and the connection is dropped.
    fn read_batch(
        &self,
        conn: &mut Conn,
        like: &Request<'_>,
        tag: u32,
        n: usize,
        out: &mut dyn FnMut(usize, Result<Outcome>),
    ) -> Result<()> {
        for i in 0..n {
            match self.read(conn, like, tag, &mut |_, _, _, _| {}) {
                Ok(v) => out(i, Ok(v)),
                Err(e) if e.answered_in_step() => out(i, Err(e)),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn arith_creates(&self) -> bool {
        false
    }
}
