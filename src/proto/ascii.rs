//! memcached's text protocol (`doc/protocol.txt`): request encoders and a reply parser.

use super::{parse_u64, push_u64, ParseError, Status};

/// The longest reply line accepted before `\r\n` (a `VALUE` line is at most ~330 bytes;
/// `stats` lines and error texts are short). Beyond this the reply is garbage.
pub const MAX_LINE: usize = 8192;

/// The storage commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreCommand {
    /// Store unconditionally.
    Set,
    /// Store only if the key does not exist.
    Add,
    /// Store only if the key exists.
    Replace,
    /// Add the data after the existing value.
    Append,
    /// Add the data before the existing value.
    Prepend,
    /// Store only if the item's CAS value is still the given one.
    Cas(u64),
}

impl StoreCommand {
    /// The command's name (`set`, `cas`, ...).
    pub fn name(self) -> &'static str {
        match self {
            StoreCommand::Set => "set",
            StoreCommand::Add => "add",
            StoreCommand::Replace => "replace",
            StoreCommand::Append => "append",
            StoreCommand::Prepend => "prepend",
            StoreCommand::Cas(_) => "cas",
        }
    }

    /// Whether the `fail_open` option may answer this command's timeout or unreachable
    /// server as "not stored": not a `cas`, whose answer decides a retry loop's next step.
    /// Its request may have been applied when its reply was lost, and an answer that reads
    /// as "changed since `gets`" (Python's False, Perl's false) made the loop apply its
    /// update twice (tester finding cas2 2): a `cas` always returns its error.
    pub fn fails_open(self) -> bool {
        !matches!(self, StoreCommand::Cas(_))
    }

    fn verb(self) -> &'static [u8] {
        match self {
            StoreCommand::Set => b"set ",
            StoreCommand::Add => b"add ",
            StoreCommand::Replace => b"replace ",
            StoreCommand::Append => b"append ",
            StoreCommand::Prepend => b"prepend ",
            StoreCommand::Cas(_) => b"cas ",
        }
    }
}

/// One reply unit of the text protocol. Fields borrow from the parsed buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply<'a> {
    /// `VALUE <key> <flags> <bytes> [<cas>]` and its data block.
    Value {
        /// The key, as the server echoes it.
        key: &'a [u8],
        /// The flags word.
        flags: u32,
        /// The CAS value (only for `gets`/`gats`).
        cas: Option<u64>,
        /// The data block, without its `\r\n`.
        data: &'a [u8],
    },
    /// `END`: the end of a retrieval.
    End,
    /// `STORED`.
    Stored,
    /// `NOT_STORED`.
    NotStored,
    /// `EXISTS` (cas conflict).
    Exists,
    /// `NOT_FOUND`.
    NotFound,
    /// `DELETED`.
    Deleted,
    /// `TOUCHED`.
    Touched,
    /// `OK` (flush_all and others).
    Ok,
    /// `RESET`: the answer to `stats reset`.
    Reset,
    /// The new value after `incr`/`decr`.
    Number(u64),
    /// `VERSION <text>`.
    Version(&'a [u8]),
    /// `STAT <name> <value>`.
    Stat(&'a [u8], &'a [u8]),
    /// `ERROR`: the server did not understand the command.
    Error,
    /// `CLIENT_ERROR <text>`.
    ClientError(&'a [u8]),
    /// `SERVER_ERROR <text>`.
    ServerError(&'a [u8]),
}

/// The reply line as the server sent it (for a value, its `VALUE` line without the data),
/// for error messages.
impl std::fmt::Display for Reply<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match *self {
            Reply::Value {
                key,
                flags,
                cas,
                data,
            } => {
                write!(f, "VALUE {} {flags} {}", text(key), data.len())?;
                match cas {
                    Some(c) => write!(f, " {c}"),
                    None => Ok(()),
                }
            }
            Reply::End => f.write_str("END"),
            Reply::Stored => f.write_str("STORED"),
            Reply::NotStored => f.write_str("NOT_STORED"),
            Reply::Exists => f.write_str("EXISTS"),
            Reply::NotFound => f.write_str("NOT_FOUND"),
            Reply::Deleted => f.write_str("DELETED"),
            Reply::Touched => f.write_str("TOUCHED"),
            Reply::Ok => f.write_str("OK"),
            Reply::Reset => f.write_str("RESET"),
            Reply::Number(n) => write!(f, "{n}"),
            Reply::Version(v) => write!(f, "VERSION {}", text(v)),
            Reply::Stat(k, v) => write!(f, "STAT {} {}", text(k), text(v)),
            Reply::Error => f.write_str("ERROR"),
            Reply::ClientError(m) => write!(f, "CLIENT_ERROR {}", text(m)),
            Reply::ServerError(m) => write!(f, "SERVER_ERROR {}", text(m)),
        }
    }
}

/// `get`/`gets <key>*`, or `gat`/`gats <exptime> <key>*` when `touch` is given. Inlined:
/// a multi-get's key iterator is then read in place (out of line, ~10 instructions a key
/// more under callgrind).
#[inline]
pub fn encode_get<'k>(
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: impl IntoIterator<Item = &'k [u8]>,
) {
    match (touch, cas) {
        (None, false) => buf.extend_from_slice(b"get"),
        (None, true) => buf.extend_from_slice(b"gets"),
        (Some(_), false) => buf.extend_from_slice(b"gat"),
        (Some(_), true) => buf.extend_from_slice(b"gats"),
    }
    if let Some(ttl) = touch {
        buf.push(b' ');
        push_u64(buf, ttl.into());
    }
    for k in keys {
        buf.push(b' ');
        buf.extend_from_slice(k);
    }
    buf.extend_from_slice(b"\r\n");
}

/// `<cmd> <key> <flags> <exptime> <bytes> [<cas>] [noreply]\r\n<data>\r\n`.
pub fn encode_store(
    buf: &mut Vec<u8>,
    cmd: StoreCommand,
    key: &[u8],
    flags: u32,
    ttl: u32,
    data: &[u8],
    noreply: bool,
) {
    buf.reserve(key.len() + data.len() + 64);
    buf.extend_from_slice(cmd.verb());
    buf.extend_from_slice(key);
    buf.push(b' ');
    push_u64(buf, flags.into());
    buf.push(b' ');
    push_u64(buf, ttl.into());
    buf.push(b' ');
    push_u64(buf, data.len() as u64);
    if let StoreCommand::Cas(unique) = cmd {
        buf.push(b' ');
        push_u64(buf, unique);
    }
    if noreply {
        buf.extend_from_slice(b" noreply");
    }
    buf.extend_from_slice(b"\r\n");
    buf.extend_from_slice(data);
    buf.extend_from_slice(b"\r\n");
}

/// `delete <key> [noreply]`.
pub fn encode_delete(buf: &mut Vec<u8>, key: &[u8], noreply: bool) {
    buf.extend_from_slice(b"delete ");
    buf.extend_from_slice(key);
    if noreply {
        buf.extend_from_slice(b" noreply");
    }
    buf.extend_from_slice(b"\r\n");
}

/// `incr`/`decr <key> <delta>`.
pub fn encode_arith(buf: &mut Vec<u8>, incr: bool, key: &[u8], delta: u64) {
    buf.extend_from_slice(if incr { b"incr " } else { b"decr " });
    buf.extend_from_slice(key);
    buf.push(b' ');
    push_u64(buf, delta);
    buf.extend_from_slice(b"\r\n");
}

/// `touch <key> <exptime>`.
pub fn encode_touch(buf: &mut Vec<u8>, key: &[u8], ttl: u32) {
    buf.extend_from_slice(b"touch ");
    buf.extend_from_slice(key);
    buf.push(b' ');
    push_u64(buf, ttl.into());
    buf.extend_from_slice(b"\r\n");
}

/// `flush_all [delay]`.
pub fn encode_flush_all(buf: &mut Vec<u8>, delay: Option<u32>) {
    buf.extend_from_slice(b"flush_all");
    if let Some(d) = delay {
        buf.push(b' ');
        push_u64(buf, d.into());
    }
    buf.extend_from_slice(b"\r\n");
}

/// `version`.
pub fn encode_version(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"version\r\n");
}

/// `stats [group]`. The group must be a single word (checked by the caller).
pub fn encode_stats(buf: &mut Vec<u8>, group: Option<&str>) {
    buf.extend_from_slice(b"stats");
    if let Some(g) = group {
        buf.push(b' ');
        buf.extend_from_slice(g.as_bytes());
    }
    buf.extend_from_slice(b"\r\n");
}

/// The fast path for `VALUE <key> <flags> <bytes> [<cas>]\r\n<data>\r\n`: one pass over the
/// header line. `None` sends the caller to the general parser, which reports the precise
/// error (or `Partial`) for anything unusual.
fn parse_value(b: &[u8], max_value: usize) -> Option<Result<Status<Reply<'_>>, ParseError>> {
    let n = b.len().min(MAX_LINE);
    let mut i = 6;
    while i < n && b[i] > b' ' {
        i += 1;
    }
    if i == 6 || i >= n || b[i] != b' ' {
        return None;
    }
    let line = &b[..n]; // numbers are read within the longest line
    let key = &b[6..i];
    let (flags, mut i) = number(line, i + 1)?;
    let flags = u32::try_from(flags).ok()?;
    if i >= n || b[i] != b' ' {
        return None;
    }
    let (len, j) = number(line, i + 1)?;
    i = j;
    let mut cas = None;
    if i < n && b[i] == b' ' {
        let (c, j) = number(line, i + 1)?;
        cas = Some(c);
        i = j;
    }
    if i + 1 >= n || b[i] != b'\r' || b[i + 1] != b'\n' {
        return None;
    }
    if len > max_value as u64 {
        return Some(Err(ParseError::ValueTooLarge));
    }
    let used = i + 2;
    let total = used + len as usize + 2;
    if b.len() < total {
        return Some(Ok(Status::Partial(Some(total))));
    }
    if b[total - 2] != b'\r' || b[total - 1] != b'\n' {
        return Some(Err(ParseError::BadTerminator));
    }
    Some(Ok(Status::Complete(
        Reply::Value {
            key,
            flags,
            cas,
            data: &b[used..total - 2],
        },
        total,
    )))
}

/// A value found by [`value_of`]: its flags, CAS, data, and the length of the whole reply.
#[derive(Debug, PartialEq, Eq)]
pub struct ValueOf<'b> {
    /// The item's flags.
    pub flags: u32,
    /// Its CAS, when the request asked for it.
    pub cas: Option<u64>,
    /// The value, in the buffer.
    pub data: &'b [u8],
    /// Bytes used: header, data and terminator.
    pub used: usize,
}

/// The reply a multi-get expects next, `VALUE <key> ...` for this `key`, whole and valid,
/// with the key compared rather than searched for. `None` for anything else (another key,
/// `END`, an incomplete or invalid reply): the caller then asks [`parse`], which says
/// precisely what it is. `key` must be a valid text key (no space or control byte), as every
/// key sent is; then whatever this accepts, [`parse`] reads the same (fuzzed).
#[inline]
pub fn value_of<'b>(b: &'b [u8], key: &[u8], max_value: usize) -> Option<ValueOf<'b>> {
    let after_key = 6 + key.len();
    let rest = b.get(after_key..)?;
    if key.is_empty() || !b.starts_with(b"VALUE ") || &b[6..after_key] != key {
        return None;
    }
    if rest.first() != Some(&b' ') {
        return None;
    }
    let (flags, i) = number(rest, 1)?;
    if rest.get(i) != Some(&b' ') {
        return None;
    }
    let (len, mut i) = number(rest, i + 1)?;
    let mut cas = None;
    if rest.get(i) == Some(&b' ') {
        let (c, j) = number(rest, i + 1)?;
        cas = Some(c);
        i = j;
    }
    if rest.get(i..i + 2) != Some(b"\r\n") || len > max_value as u64 {
        return None;
    }
    let start = i + 2;
    let end = start + len as usize;
    if rest.get(end..end + 2) != Some(b"\r\n") {
        return None;
    }
    Some(ValueOf {
        flags: u32::try_from(flags).ok()?,
        cas,
        data: &rest[start..end],
        used: after_key + end + 2,
    })
}

/// The decimal number at `b[i..]`: `(value, index after it)`; `None` when there is no digit
/// or more than 19 (which [`parse`] handles).
#[inline(always)]
fn number(b: &[u8], mut i: usize) -> Option<(u64, usize)> {
    let start = i;
    let mut v: u64 = 0;
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if i - start == 19 {
            return None;
        }
        v = v * 10 + u64::from(d);
        i += 1;
    }
    (i > start).then_some((v, i))
}

/// Parses one reply unit from the start of `buf`. `max_value` bounds the data length a
/// `VALUE` header may announce: a hostile length is an error, never an allocation.
pub fn parse(buf: &[u8], max_value: usize) -> Result<Status<Reply<'_>>, ParseError> {
    // The commonest replies first, without searching for the line's end.
    if buf.starts_with(b"END\r\n") {
        return Ok(Status::Complete(Reply::End, 5));
    }
    if buf.starts_with(b"STORED\r\n") {
        return Ok(Status::Complete(Reply::Stored, 8));
    }
    if buf.starts_with(b"VALUE ") {
        if let Some(r) = parse_value(buf, max_value) {
            return r;
        }
    }
    let Some(nl) = memchr::memchr(b'\n', &buf[..buf.len().min(MAX_LINE)]) else {
        return if buf.len() >= MAX_LINE {
            Err(ParseError::LineTooLong)
        } else {
            Ok(Status::Partial(None))
        };
    };
    if nl == 0 || buf[nl - 1] != b'\r' {
        return Err(ParseError::BadLine);
    }
    let line = &buf[..nl - 1];
    let used = nl + 1;
    let done = |r| Ok(Status::Complete(r, used));
    match line {
        b"END" => return done(Reply::End),
        b"STORED" => return done(Reply::Stored),
        b"NOT_STORED" => return done(Reply::NotStored),
        b"EXISTS" => return done(Reply::Exists),
        b"NOT_FOUND" => return done(Reply::NotFound),
        b"DELETED" => return done(Reply::Deleted),
        b"TOUCHED" => return done(Reply::Touched),
        b"OK" => return done(Reply::Ok),
        b"RESET" => return done(Reply::Reset),
        b"ERROR" => return done(Reply::Error),
        _ => {}
    }
    if let Some(rest) = line.strip_prefix(b"VALUE ") {
        let mut it = rest.split(|&b| b == b' ');
        let key = it
            .next()
            .filter(|k| !k.is_empty())
            .ok_or(ParseError::BadLine)?;
        let flags = it.next().and_then(parse_u64).ok_or(ParseError::BadLine)?;
        let flags = u32::try_from(flags).map_err(|_| ParseError::BadLine)?;
        let len = it.next().and_then(parse_u64).ok_or(ParseError::BadLine)?;
        let cas = match it.next() {
            None => None,
            Some(c) => Some(parse_u64(c).ok_or(ParseError::BadLine)?),
        };
        if it.next().is_some() {
            return Err(ParseError::BadLine);
        }
        if len > max_value as u64 {
            return Err(ParseError::ValueTooLarge);
        }
        let len = len as usize;
        let total = used + len + 2;
        if buf.len() < total {
            return Ok(Status::Partial(Some(total)));
        }
        if &buf[used + len..total] != b"\r\n" {
            return Err(ParseError::BadTerminator);
        }
        let data = &buf[used..used + len];
        return Ok(Status::Complete(
            Reply::Value {
                key,
                flags,
                cas,
                data,
            },
            total,
        ));
    }
    if let Some(rest) = line.strip_prefix(b"STAT ") {
        let (name, value) = match rest.iter().position(|&b| b == b' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &b""[..]),
        };
        return done(Reply::Stat(name, value));
    }
    if let Some(rest) = line.strip_prefix(b"VERSION ") {
        return done(Reply::Version(rest));
    }
    if let Some(rest) = line.strip_prefix(b"CLIENT_ERROR") {
        return done(Reply::ClientError(rest.strip_prefix(b" ").unwrap_or(rest)));
    }
    if let Some(rest) = line.strip_prefix(b"SERVER_ERROR") {
        return done(Reply::ServerError(rest.strip_prefix(b" ").unwrap_or(rest)));
    }
    if line.first().is_some_and(u8::is_ascii_digit) {
        // incr/decr; memcached may pad the number with spaces.
        return super::parse_counter(line)
            .map(|n| Status::Complete(Reply::Number(n), used))
            .ok_or(ParseError::BadLine);
    }
    Err(ParseError::UnknownReply)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut b = Vec::new();
        f(&mut b);
        b
    }

    #[test]
    fn exact_request_bytes() {
        let cases: Vec<(Vec<u8>, &[u8])> = vec![
            (
                enc(|b| encode_get(b, false, None, [&b"a"[..]])),
                b"get a\r\n",
            ),
            (
                enc(|b| encode_get(b, true, None, [&b"a"[..], b"b"])),
                b"gets a b\r\n",
            ),
            (
                enc(|b| encode_get(b, false, Some(10), [&b"k"[..]])),
                b"gat 10 k\r\n",
            ),
            (
                enc(|b| encode_get(b, true, Some(0), [&b"k"[..]])),
                b"gats 0 k\r\n",
            ),
            (
                enc(|b| encode_store(b, StoreCommand::Set, b"key", 5, 0, b"0123456789", true)),
                b"set key 5 0 10 noreply\r\n0123456789\r\n",
            ),
            (
                enc(|b| encode_store(b, StoreCommand::Cas(77), b"k", 0, 30, b"", false)),
                b"cas k 0 30 0 77\r\n\r\n",
            ),
            (
                enc(|b| encode_store(b, StoreCommand::Add, b"k", 4294967295, 1, b"v", false)),
                b"add k 4294967295 1 1\r\nv\r\n",
            ),
            (
                enc(|b| encode_store(b, StoreCommand::Replace, b"k", 0, 0, b"v", false)),
                b"replace k 0 0 1\r\nv\r\n",
            ),
            (
                enc(|b| encode_store(b, StoreCommand::Append, b"k", 0, 0, b"v", false)),
                b"append k 0 0 1\r\nv\r\n",
            ),
            (
                enc(|b| encode_store(b, StoreCommand::Prepend, b"k", 0, 0, b"v", false)),
                b"prepend k 0 0 1\r\nv\r\n",
            ),
            (enc(|b| encode_delete(b, b"k", false)), b"delete k\r\n"),
            (
                enc(|b| encode_delete(b, b"k", true)),
                b"delete k noreply\r\n",
            ),
            (
                enc(|b| encode_arith(b, true, b"n", 18446744073709551615)),
                b"incr n 18446744073709551615\r\n",
            ),
            (enc(|b| encode_arith(b, false, b"n", 0)), b"decr n 0\r\n"),
            (enc(|b| encode_touch(b, b"k", 100)), b"touch k 100\r\n"),
            (enc(|b| encode_flush_all(b, None)), b"flush_all\r\n"),
            (enc(|b| encode_flush_all(b, Some(5))), b"flush_all 5\r\n"),
            (enc(encode_version), b"version\r\n"),
            (enc(|b| encode_stats(b, Some("slabs"))), b"stats slabs\r\n"),
        ];
        for (got, want) in cases {
            assert_eq!(got, want, "{}", String::from_utf8_lossy(want));
        }
    }

    const VALID: &[(&[u8], Reply<'static>)] = &[
        (b"END\r\n", Reply::End),
        (b"STORED\r\n", Reply::Stored),
        (b"NOT_STORED\r\n", Reply::NotStored),
        (b"EXISTS\r\n", Reply::Exists),
        (b"NOT_FOUND\r\n", Reply::NotFound),
        (b"DELETED\r\n", Reply::Deleted),
        (b"TOUCHED\r\n", Reply::Touched),
        (b"OK\r\n", Reply::Ok),
        (b"RESET\r\n", Reply::Reset),
        (b"ERROR\r\n", Reply::Error),
        (b"42\r\n", Reply::Number(42)),
        (b"7   \r\n", Reply::Number(7)),
        (b"VERSION 1.6.18\r\n", Reply::Version(b"1.6.18")),
        (b"STAT pid 123\r\n", Reply::Stat(b"pid", b"123")),
        (
            b"CLIENT_ERROR bad data chunk\r\n",
            Reply::ClientError(b"bad data chunk"),
        ),
        (
            b"SERVER_ERROR out of memory\r\n",
            Reply::ServerError(b"out of memory"),
        ),
        (
            b"VALUE k 3 5\r\nab\r\nc\r\n",
            Reply::Value {
                key: b"k",
                flags: 3,
                cas: None,
                data: b"ab\r\nc",
            },
        ),
        (
            b"VALUE k 0 0 99\r\n\r\n",
            Reply::Value {
                key: b"k",
                flags: 0,
                cas: Some(99),
                data: b"",
            },
        ),
    ];

    #[test]
    fn valid_replies() {
        for (bytes, want) in VALID {
            assert_eq!(
                parse(bytes, 1 << 20),
                Ok(Status::Complete(*want, bytes.len())),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
    }

    #[test]
    fn every_strict_prefix_is_partial() {
        for (bytes, _) in VALID {
            for n in 0..bytes.len() {
                assert!(
                    matches!(parse(&bytes[..n], 1 << 20), Ok(Status::Partial(_))),
                    "prefix {n} of {}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
    }

    #[test]
    fn the_expected_value_is_recognised_only_for_its_own_key() {
        let reply = b"VALUE abc 4 2 9\r\nhi\r\nEND\r\n";
        let found = ValueOf {
            flags: 4,
            cas: Some(9),
            data: b"hi",
            used: 21,
        };
        assert_eq!(value_of(reply, b"abc", 100), Some(found));
        assert!(matches!(
            parse(reply, 100),
            Ok(Status::Complete(
                Reply::Value {
                    flags: 4,
                    cas: Some(9),
                    data: b"hi",
                    ..
                },
                21
            ))
        ));
        // Another key, a prefix of the key, a longer key, END: left to the general parser.
        for other in [&b"abd"[..], b"ab", b"abcd", b""] {
            assert_eq!(value_of(reply, other, 100), None, "{other:?}");
        }
        assert_eq!(value_of(b"END\r\n", b"abc", 100), None);
        // Every strict prefix, a value too large, a bad terminator: not found here either.
        for cut in 0..21 {
            assert_eq!(value_of(&reply[..cut], b"abc", 100), None, "{cut}");
        }
        assert_eq!(value_of(reply, b"abc", 1), None);
        assert_eq!(value_of(b"VALUE abc 4 2\r\nhiX\n", b"abc", 100), None);
        // 19 digits here; a 20-digit CAS goes to the general parser.
        let big = b"VALUE k 0 1 18446744073709551615\r\nx\r\n";
        assert_eq!(value_of(big, b"k", 100), None);
        assert!(matches!(
            parse(big, 100),
            Ok(Status::Complete(
                Reply::Value {
                    cas: Some(u64::MAX),
                    ..
                },
                _
            ))
        ));
        let nineteen = b"VALUE k 0 1 9999999999999999999\r\nx\r\n";
        assert_eq!(
            value_of(nineteen, b"k", 100).unwrap().cas,
            Some(9_999_999_999_999_999_999)
        );
    }

    #[test]
    fn hostile_input_is_an_error() {
        let bad: &[(&[u8], ParseError)] = &[
            (b"VALUE k 0 99999999999\r\n", ParseError::ValueTooLarge),
            (
                b"VALUE k 0 99999999999999999999999\r\n",
                ParseError::BadLine,
            ),
            (b"VALUE k 0 3\r\nabcXY", ParseError::BadTerminator),
            (b"VALUE k 4294967296 1\r\n", ParseError::BadLine),
            (b"VALUE k 0 1 2 3\r\n", ParseError::BadLine),
            (b"VALUE  0 1\r\n", ParseError::BadLine),
            (b"HELLO\r\n", ParseError::UnknownReply),
            (b"END\n", ParseError::BadLine),
            (b"12x\r\n", ParseError::BadLine),
        ];
        for (bytes, err) in bad {
            assert_eq!(
                parse(bytes, 1 << 20),
                Err(*err),
                "{}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert_eq!(
            parse(&[b'x'; MAX_LINE], 1 << 20),
            Err(ParseError::LineTooLong)
        );
    }

    #[test]
    fn partial_value_reports_total_length() {
        assert_eq!(
            parse(b"VALUE k 0 10\r\nab", 100),
            Ok(Status::Partial(Some(14 + 12)))
        );
    }
}
