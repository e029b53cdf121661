//! The text dialect. Text replies carry no tag: a retrieval's values are matched to the
//! keys asked for by name instead (in request order first, in any order when a proxy
//! reorders them), and a value for a key not asked for, or already answered, is a protocol
//! error.

use super::{
    answered_alone, lacks_cas, no_cas, unsupported, Hit, Outcome, Request, Speak, WireKeys,
};
use crate::conn::{protocol_error_at, Conn, Scan};
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::{self, Reply, StoreCommand};
use crate::proto::{Status, TextCodec};
use std::ops::Range;

/// The text dialect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Text;

/// Key bytes per `get` line: a multi-get of more is sent as several pipelined lines. Large,
/// because every line is answered separately (and read separately): memcached accepts long
/// `get` lines, so 500 keys go in one line and come back in one reply.
pub(crate) const GET_LINE_BYTES: usize = 64 * 1024;

/// The longest line memcached reads of any command but `get` and `gets`: one whose first
/// 1,024 bytes hold no line end is taken for garbage and the connection closed (its
/// `try_read_command_ascii`; a `get`/`gets` line is read in pieces, any length).
pub(crate) const SHORT_LINE: usize = 1024;

/// Key bytes (each with its space) per `gat`/`gats` line: the line, with `gats`, the
/// largest time and the line end, stays within [`SHORT_LINE`]. A `gat` of more keys is sent
/// as several pipelined lines (tester finding limits 1: 1,100 keys in one 17,609-byte line
/// had memcached reset the connection, and the healthy server was marked dead).
pub(crate) const GAT_LINE_BYTES: usize = SHORT_LINE - "gats 4294967295".len() - "\r\n".len();

/// Splits `keys` into the index ranges that share one retrieval line: a `get`/`gets` line
/// holds up to [`GET_LINE_BYTES`] of keys, a `gat`/`gats` line (`touch`) [`GAT_LINE_BYTES`].
fn get_lines<K: WireKeys + ?Sized>(
    keys: &K,
    touch: bool,
) -> impl Iterator<Item = Range<usize>> + '_ {
    let n = keys.count();
    let mut start = 0;
    let line_bytes = if touch {
        GAT_LINE_BYTES
    } else {
        GET_LINE_BYTES
    };
    // Keys that fit one line even at 250 bytes each (261 for `get`, 4 for `gat`): no need
    // to measure them.
    let one_line = n * (crate::key::MAX_KEY_LEN + 1) <= line_bytes;
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
            if bytes > line_bytes && end > start {
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
            detail: format!("unexpected reply to {asked}: {:?}", other.to_string()),
        },
    }
}

/// Appends the retrieval lines for `keys` (several lines when they do not fit one:
/// [`get_lines`]).
fn encode_retrieval<K: WireKeys + ?Sized>(
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
) {
    for line in get_lines(keys, touch.is_some()) {
        ascii::encode_get(buf, cas, touch, line.map(|i| keys.key(i)));
    }
}

/// Reads the replies to `encode_retrieval(keys)` (with a time when `touch`). A text value names its key, not its place
/// in the request: each hit is matched to a requested key with that name not answered yet
/// ([`Unanswered`]), in request order first (memcached's order), in any order otherwise (a
/// proxy such as twemproxy reassembles a multi-get out of order when a key misses). A value
/// for a key not asked for, or for a key already answered (more values than it was asked
/// for), is a protocol error, so a crossed reply can never reach a caller. So is a value
/// without its CAS field when `want_cas` (`gets`): never a made-up version.
fn recv_retrieval<K: WireKeys + ?Sized>(
    conn: &mut Conn,
    keys: &K,
    want_cas: bool,
    touch: bool,
    asked: &str,
    hit: &mut Hit<'_>,
) -> Result<()> {
    let n = keys.count();
    let mut ends = get_lines(keys, touch).count();
    if ends == 0 {
        return Ok(()); // no key, no request line, no reply
    }
    let mut open = Unanswered::new(keys);
    // Every value that has arrived is parsed in one pass. Most are for the next key asked
    // for (a miss is simply absent): a tight loop compares that key in place; anything else
    // goes through the general parser, one reply at a time.
    conn.scan(|buf, server, max_value| {
        let mut at = 0;
        loop {
            while open.cursor < n {
                let Some(v) = ascii::value_of(&buf[at..], keys.key(open.cursor), max_value) else {
                    break;
                };
                if want_cas && lacks_cas(v.cas) {
                    return Err(no_cas(server, keys.key(open.cursor)));
                }
                hit(open.cursor, v.data, v.flags, v.cas);
                open.cursor += 1;
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
                } => {
                    if want_cas && lacks_cas(cas) {
                        return Err(no_cas(server, key));
                    }
                    let j = open.take(key).map_err(|why| Error::Protocol {
                        server: server.to_owned(),
                        detail: format!(
                            "value for key {}, which was {why}",
                            crate::key::quoted(key)
                        ),
                    })?;
                    hit(j, data, flags, cas);
                }
                // A server's error in place of (the rest of) a reply to many keys: memcached
                // out of memory mid-reply, or a proxy that failed the whole multi-get because
                // one of its backends did (nutcracker). Every key of the request fails with
                // it, and it says so: alone, it read as the first key's own failure (tester
                // finding twemproxy 3: a key on a healthy backend named).
                Reply::ServerError(m) if n > 1 => {
                    return Err(Error::server_reply(
                        server.to_owned(),
                        format!(
                            "{} (it ended the reply to a {asked} of {n} keys: each of them \
                             failed with it)",
                            String::from_utf8_lossy(m)
                        ),
                    ))
                }
                other => return Err(unexpected(server, other, asked)),
            }
        }
    })
}

/// The keys of one text retrieval not answered yet, which a value may answer in any order.
/// Every key from `cursor` on is unanswered (the in-order path only moves `cursor`); before
/// it, only those a later value skipped over (a miss, or a value still to come out of
/// order). Until a value comes for a key before `cursor`, those are kept as ranges, so an
/// in-order reply with misses costs no more than it did; the first value out of order builds
/// the per-request [`KeyIndex`], and every lookup after it is one hash probe, so a reply in
/// any order is read in time linear in its keys.
struct Unanswered<'k, K: ?Sized> {
    keys: &'k K,
    /// The next key in request order; every key from here on is unanswered.
    cursor: usize,
    /// The unanswered keys before `cursor`, until `index` is built. The thread's list from
    /// the last retrieval, reused ([`SKIPPED`]): a reply with many misses allocates nothing
    /// once the thread has read one.
    skipped: Vec<Range<usize>>,
    /// Built at the first value for a key before `cursor`.
    index: Option<KeyIndex<'k>>,
}

thread_local! {
    /// [`Unanswered::skipped`] between retrievals on this thread, emptied.
    static SKIPPED: std::cell::Cell<Vec<Range<usize>>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The most ranges a thread keeps in [`SKIPPED`] between retrievals (16 bytes each).
const SKIPPED_KEEP: usize = 4096;

impl<K: ?Sized> Drop for Unanswered<'_, K> {
    fn drop(&mut self) {
        if self.skipped.capacity() <= SKIPPED_KEEP {
            let mut kept = std::mem::take(&mut self.skipped);
            kept.clear();
            SKIPPED.set(kept);
        }
    }
}

/// No further key index in a [`KeyIndex`] chain.
const NONE: u32 = u32::MAX;

/// The index of a request's keys by name, for a reply out of order.
struct KeyIndex<'k> {
    /// Each key's first index not known to be answered (the head of its chain).
    first: std::collections::HashMap<&'k [u8], u32>,
    /// Per key index: the next index with the same key (a key asked for twice), or `NONE`.
    next_same: Vec<u32>,
    /// Per key index before the cursor: whether it is still unanswered.
    open: Vec<bool>,
}

impl<'k, K: WireKeys + ?Sized> Unanswered<'k, K> {
    fn new(keys: &'k K) -> Self {
        Unanswered {
            keys,
            cursor: 0,
            skipped: SKIPPED.take(),
            index: None,
        }
    }

    /// The index of the unanswered key `key` that a value for it answers, now answered; or
    /// why there is none. Out of line: the in-order loop of `recv_retrieval` stays small.
    #[inline(never)]
    fn take(&mut self, key: &[u8]) -> std::result::Result<usize, &'static str> {
        let n = self.keys.count();
        if self.index.is_none() {
            // Request order so far: the next key with that name (the keys between were
            // missed, or come later out of order).
            if let Some(j) = (self.cursor..n).find(|&j| self.keys.key(j) == key) {
                if j > self.cursor {
                    self.skipped.push(self.cursor..j);
                }
                self.cursor = j + 1;
                return Ok(j);
            }
            if self.skipped.is_empty() {
                // Every key before the cursor was answered.
                return Err(self.refusal(key));
            }
            self.index = Some(self.build());
        }
        let Some(ix) = self.index.as_mut() else {
            unreachable!("built above")
        };
        let Some(head) = ix.first.get_mut(key) else {
            return Err("not asked for");
        };
        // The chain is in request order; before the first unanswered index, every one is
        // answered for good (before the cursor and not open).
        let mut j = *head;
        while j != NONE && (j as usize) < self.cursor && !ix.open[j as usize] {
            j = ix.next_same[j as usize];
        }
        if j == NONE {
            *head = NONE;
            return Err("already answered (more values than it was asked for)");
        }
        *head = ix.next_same[j as usize];
        let j = j as usize;
        if j >= self.cursor {
            ix.open[self.cursor..j].fill(true);
            self.cursor = j + 1;
        } else {
            ix.open[j] = false;
        }
        Ok(j)
    }

    /// The index of the request's keys, the skipped ones open.
    #[cold]
    fn build(&self) -> KeyIndex<'k> {
        let n = self.keys.count();
        let mut first = std::collections::HashMap::with_capacity(n);
        let mut next_same = vec![NONE; n];
        for i in (0..n).rev() {
            if let Some(later) = first.insert(self.keys.key(i), i as u32) {
                next_same[i] = later;
            }
        }
        let mut open = vec![false; n];
        for r in &self.skipped {
            open[r.clone()].fill(true);
        }
        KeyIndex {
            first,
            next_same,
            open,
        }
    }

    /// Why a value for `key` answers none of the keys (in order so far, none open before
    /// the cursor): asked for and answered, or not asked for.
    #[cold]
    fn refusal(&self, key: &[u8]) -> &'static str {
        if (0..self.cursor).any(|j| self.keys.key(j) == key) {
            "already answered (more values than it was asked for)"
        } else {
            "not asked for"
        }
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
fn recv_stats(conn: &mut Conn, group: Option<&str>) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    loop {
        let stat = conn.read::<TextCodec, _>(|r, server| match r {
            Reply::Stat(k, v) => Ok(Some((
                String::from_utf8_lossy(k).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))),
            // `stats reset` answers RESET, `stats detail on|off` OK: the end, no statistics.
            Reply::End | Reply::Reset | Reply::Ok => Ok(None),
            Reply::Error => Err(super::unknown_stats_group(server, group, "ERROR")),
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
            Request::Get { key, cas, touch } => {
                recv_retrieval(conn, &[key][..], cas, touch.is_some(), asked, hit)
                    .map(|()| Outcome::Done)
            }
            Request::GetMulti { keys, cas, touch } => {
                recv_retrieval(conn, keys, cas, touch.is_some(), asked, hit).map(|()| Outcome::Done)
            }
            // `EXISTS` and `NOT_FOUND` answer only a `cas`: to another store they are not an
            // outcome memcached gives, and are refused as any unexpected reply.
            Request::Store { cmd, .. } => read_one(conn, asked, |r| {
                let cas = matches!(cmd, StoreCommand::Cas(_));
                Some(Outcome::Stored(match r {
                    Reply::Stored => StoreOutcome::Stored,
                    Reply::NotStored => StoreOutcome::NotStored,
                    Reply::Exists if cas => StoreOutcome::Exists,
                    Reply::NotFound if cas => StoreOutcome::NotFound,
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
            Request::Stats { group } => recv_stats(conn, group).map(Outcome::Stats),
            Request::Lease { .. } | Request::Invalidate { .. } | Request::Info { .. } => {
                Err(unsupported(req, "text"))
            }
        }
    }

    fn batches_tagged(&self) -> bool {
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
    /// server swallowed that request's data and goes on: `Error::answered_in_step`), as
    /// does memcached's `CLIENT_ERROR` to an `incr`/`decr` of a non-number
    /// (`answered_alone`), and the next reply is the next request's. After any other error
    /// (`CLIENT_ERROR`, `ERROR`, a broken connection, a protocol violation) the rest of the
    /// stream cannot be trusted:
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
                Err(e) if answered_alone(like, &e) => out(i, Err(e)),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn arith_creates(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::Unanswered;

    /// Every `gat`/`gats` line fits the 1,024 bytes memcached reads of a line that is not a
    /// `get` (with the largest time and 250-byte keys too); every key is sent once, in order;
    /// a `get` of as many keys stays one line while they fit [`super::GET_LINE_BYTES`].
    #[test]
    fn gat_lines_fit_what_memcached_reads() {
        for len in [1, 15, 100, 249, 250] {
            for n in [1, 3, 4, 5, 61, 1_100] {
                let keys: Vec<Vec<u8>> =
                    (0..n).map(|i| format!("{i:0len$}").into_bytes()).collect();
                let keys: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
                let mut buf = Vec::new();
                super::encode_retrieval(&mut buf, true, Some(u32::MAX), &keys[..]);
                let lines: Vec<&[u8]> = buf.split_inclusive(|&b| b == b'\n').collect();
                assert!(
                    lines.iter().all(|l| l.len() <= super::SHORT_LINE),
                    "{n} keys of {len}: {:?}",
                    lines.iter().map(|l| l.len()).max()
                );
                let sent: Vec<&[u8]> = lines
                    .iter()
                    .flat_map(|l| {
                        l.strip_suffix(b"\r\n")
                            .unwrap()
                            .split(|&b| b == b' ')
                            .skip(2)
                    })
                    .collect();
                assert_eq!(sent, keys, "{n} keys of {len}");
                let mut get = Vec::new();
                super::encode_retrieval(&mut get, true, None, &keys[..]);
                if n * (len + 1) <= super::GET_LINE_BYTES {
                    assert_eq!(get.iter().filter(|&&b| b == b'\n').count(), 1);
                }
            }
        }
    }

    /// Feeds `values` (key names) to a matcher of `keys`: each one's index, or why none.
    fn feed(keys: &[&str], values: &[&str]) -> Vec<Result<usize, &'static str>> {
        let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        let mut open = Unanswered::new(&keys[..]);
        values.iter().map(|v| open.take(v.as_bytes())).collect()
    }

    #[test]
    fn in_order_with_misses_needs_no_index() {
        let keys: Vec<&[u8]> = vec![b"a", b"b", b"c", b"d"];
        let mut open = Unanswered::new(&keys[..]);
        assert_eq!(open.take(b"b"), Ok(1));
        assert_eq!(open.take(b"d"), Ok(3));
        assert!(open.index.is_none(), "no value out of order: no index");
        assert_eq!(open.skipped, vec![0..1, 2..3]);
    }

    #[test]
    fn any_order_each_key_once() {
        let keys = ["a", "b", "c", "d", "e"];
        assert_eq!(
            feed(&keys, &["e", "a", "d", "c", "b"]),
            vec![Ok(4), Ok(0), Ok(3), Ok(2), Ok(1)]
        );
        assert_eq!(
            feed(&keys, &["b", "a", "d", "c"]),
            vec![Ok(1), Ok(0), Ok(3), Ok(2)]
        );
        // After the index is built, forward again, and back.
        assert_eq!(
            feed(&keys, &["c", "a", "e", "b"]),
            vec![Ok(2), Ok(0), Ok(4), Ok(1)]
        );
    }

    #[test]
    fn a_key_asked_for_twice_takes_two_values_not_three() {
        let keys = ["a", "b", "a", "c"];
        // Either value of `a` may answer either request of it: the same key, the same value.
        let mut got: Vec<usize> = feed(&keys, &["b", "a", "c", "a"])
            .into_iter()
            .map(Result::unwrap)
            .collect();
        got.sort_unstable();
        assert_eq!(got, [0, 1, 2, 3]);
        let twice = feed(&keys, &["c", "a", "a", "a"]);
        assert_eq!(twice[..3], [Ok(3), Ok(0), Ok(2)]);
        assert!(twice[3].unwrap_err().contains("already answered"));
    }

    #[test]
    fn not_asked_for_and_answered_twice_are_refused() {
        let keys = ["a", "b", "c"];
        for values in [
            &["a", "a"][..],
            &["b", "b"],
            &["c", "a", "a"],
            &["b", "a", "b"],
        ] {
            let got = feed(&keys, values);
            let last = got.last().unwrap();
            assert!(
                last.is_err_and(|why| why.contains("already answered")),
                "{values:?}: {got:?}"
            );
        }
        for values in [&["z"][..], &["a", "z"], &["c", "z"], &["c", "a", "z"]] {
            let got = feed(&keys, values);
            assert_eq!(*got.last().unwrap(), Err("not asked for"), "{values:?}");
        }
    }
}
