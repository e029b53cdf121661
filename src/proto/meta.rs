//! memcached's meta protocol (`mg`, `ms`, `md`, `ma`, `mn`): request encoders and a reply
//! parser. Replies that are not meta (`VERSION`, `STAT`, `OK`, errors) are parsed by the text
//! codec and passed through as [`Reply::Text`].

use super::ascii::{self, MAX_LINE};
use super::{parse_u64, push_u64, ParseError, Status};

/// One flag of a meta request: a letter, optionally followed by a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag<'a> {
    /// A flag without a token, such as `v`, `q`, `c`.
    Bare(u8),
    /// A flag with a number, such as `T30` or `O7`.
    Num(u8, u64),
    /// A flag with a text token, such as `MA` (mode append).
    Tok(u8, &'a [u8]),
}

/// The meta commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `mg`: get.
    Get,
    /// `ms`: set (with a data block).
    Set,
    /// `md`: delete.
    Delete,
    /// `ma`: arithmetic.
    Arith,
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends the standard base64 encoding (with padding) of `data`.
pub fn push_base64(buf: &mut Vec<u8>, data: &[u8]) {
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        buf.push(B64[(n >> 18) as usize & 63]);
        buf.push(B64[(n >> 12) as usize & 63]);
        buf.push(if chunk.len() > 1 {
            B64[(n >> 6) as usize & 63]
        } else {
            b'='
        });
        buf.push(if chunk.len() > 2 {
            B64[n as usize & 63]
        } else {
            b'='
        });
    }
}

/// The bytes of standard base64 `text` (with padding, as [`push_base64`] writes it), or
/// `None` when it is not that: for messages naming a key a reply flagged `b`.
pub fn decode_base64(text: &[u8]) -> Option<Vec<u8>> {
    if text.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for (i, quad) in text.chunks(4).enumerate() {
        let last = i + 1 == text.len() / 4;
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut n = 0u32;
        for &c in &quad[..4 - pad] {
            let v = B64.iter().position(|&x| x == c)? as u32;
            n = n << 6 | v;
        }
        n <<= 6 * pad as u32;
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..3 - pad]);
    }
    Some(out)
}

/// True when `key` can go on the wire as is: 1 to 250 bytes, none a space, a control byte
/// or DEL (bytes from 0x80, UTF-8 keys, go as they are, as on the text protocol). Other keys
/// are sent base64-encoded with `b`.
pub fn key_is_plain(key: &[u8]) -> bool {
    !key.is_empty() && key.len() <= 250 && !super::has_space_or_control(key)
}

/// Appends one meta request: `<cmd> <key> [<datalen>] <flags>*\r\n[<data>\r\n]`. Keys that
/// cannot go on the wire as they are (binary, spaces, non-ASCII) are base64-encoded and
/// flagged `b`. `data` is required for `Set` and ignored otherwise.
pub fn encode(
    buf: &mut Vec<u8>,
    cmd: Command,
    key: &[u8],
    data: Option<&[u8]>,
    flags: &[Flag<'_>],
) {
    buf.extend_from_slice(match cmd {
        Command::Get => b"mg ",
        Command::Set => b"ms ",
        Command::Delete => b"md ",
        Command::Arith => b"ma ",
    });
    let plain = key_is_plain(key);
    if plain {
        buf.extend_from_slice(key);
    } else {
        push_base64(buf, key);
    }
    let data = if cmd == Command::Set { data } else { None };
    if let Some(d) = data {
        buf.push(b' ');
        push_u64(buf, d.len() as u64);
    }
    if !plain {
        buf.extend_from_slice(b" b");
    }
    for f in flags {
        buf.push(b' ');
        match *f {
            Flag::Bare(c) => buf.push(c),
            Flag::Num(c, n) => {
                buf.push(c);
                push_u64(buf, n);
            }
            Flag::Tok(c, t) => {
                buf.push(c);
                buf.extend_from_slice(t);
            }
        }
    }
    buf.extend_from_slice(b"\r\n");
    if let Some(d) = data {
        buf.extend_from_slice(d);
        buf.extend_from_slice(b"\r\n");
    }
}

/// Appends `mg <key> v f O<opaque>[ c][ T<ttl>][ k][ q]\r\n`: the retrieval request of every
/// get, written without the generic flag list of [`encode`] because a multi-get writes one per
/// key. `key_back` asks the reply to name its key (`k`), for a key that goes as it is
/// ([`key_is_plain`]) only: memcached names an item in base64 only when it was stored with
/// `b`, and one a binary-protocol client stored (`"a b"`, `"a\r\nb"`) comes back raw, a
/// space or line end inside the reply line (tester finding javaspy 1: every key of the
/// batch failed as a crossed reply); such a key's reply is matched by its opaque alone.
/// Produces the same bytes as `encode(buf, Command::Get, key, None, &[v, f, O, c, T, k, q])`
/// (without `k` for a base64 key).
pub fn encode_get(
    buf: &mut Vec<u8>,
    key: &[u8],
    opaque: u64,
    cas: bool,
    touch: Option<u32>,
    key_back: bool,
    quiet: bool,
) {
    let plain = key_is_plain(key);
    buf.reserve(key.len() * 4 / 3 + 48);
    buf.extend_from_slice(b"mg ");
    if plain {
        buf.extend_from_slice(key);
        buf.extend_from_slice(b" v f O");
    } else {
        push_base64(buf, key);
        buf.extend_from_slice(b" b v f O");
    }
    push_u64(buf, opaque);
    if cas {
        buf.extend_from_slice(b" c");
    }
    if let Some(ttl) = touch {
        buf.extend_from_slice(b" T");
        push_u64(buf, ttl.into());
    }
    if key_back && plain {
        buf.extend_from_slice(b" k");
    }
    buf.extend_from_slice(if quiet { b" q\r\n" } else { b"\r\n" });
}

/// `mn`: the no-op that closes a pipeline of quiet requests.
pub fn encode_noop(buf: &mut Vec<u8>) {
    buf.extend_from_slice(b"mn\r\n");
}

/// The flags of a meta reply (`c123 f5 O7 W`), borrowed from the reply line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Flags<'a>(pub &'a [u8]);

impl<'a> Flags<'a> {
    /// Every flag token.
    pub fn tokens(&self) -> impl Iterator<Item = &'a [u8]> {
        self.0.split(|&b| b == b' ').filter(|t| !t.is_empty())
    }

    /// The token after flag letter `c`, if the flag is present.
    pub fn get(&self, c: u8) -> Option<&'a [u8]> {
        self.tokens().find(|t| t[0] == c).map(|t| &t[1..])
    }

    /// True when flag `c` is present.
    pub fn has(&self, c: u8) -> bool {
        self.get(c).is_some()
    }

    /// The signed number after flag letter `c` (`t-1`); `Err` when present but not one.
    pub fn signed(&self, c: u8) -> Result<Option<i64>, ParseError> {
        match self.get(c) {
            None => Ok(None),
            Some(t) => {
                let (neg, digits) = match t.strip_prefix(b"-") {
                    Some(d) => (true, d),
                    None => (false, t),
                };
                let n = parse_u64(digits)
                    .and_then(|n| i64::try_from(n).ok())
                    .ok_or(ParseError::BadLine)?;
                Ok(Some(if neg { -n } else { n }))
            }
        }
    }

    /// The number after flag letter `c`; `Err` when present but not a number.
    pub fn num(&self, c: u8) -> Result<Option<u64>, ParseError> {
        match self.get(c) {
            None => Ok(None),
            Some(t) => parse_u64(t).map(Some).ok_or(ParseError::BadLine),
        }
    }
}

/// The flags a value reply carries for a retrieval (`f`, `c`, `O`, `h`, and the lease flags
/// `W`, `Z`, `X`), read in one pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ValueFlags {
    /// `f`: the client flags.
    pub flags: Option<u64>,
    /// `c`: the CAS unique.
    pub cas: Option<u64>,
    /// `O`: the opaque token.
    pub opaque: Option<u64>,
    /// `h`: whether the item had been read before this request (`h1`) or not (`h0`).
    pub hit_before: Option<bool>,
    /// `W`: this read won the right to recompute the item.
    pub win: bool,
    /// `Z`: another read already won it (a lease is outstanding).
    pub won_elsewhere: bool,
    /// `X`: the item is stale (marked by `md <key> I`).
    pub stale: bool,
    /// `k`: where the key the reply names sits in its flags (start and end of the token's
    /// value), when it names one: compare it with [`Flags::key_is`].
    pub key: Option<(u32, u32)>,
    /// `b`: the key named is base64-encoded (the request sent a key that is not plain).
    pub base64_key: bool,
}

impl ValueFlags {
    /// True when a value of `len` bytes with these flags is to be taken for a lease
    /// placeholder (the item `mg <key> N<ttl>` creates on a miss), not a value anyone stored.
    ///
    /// memcached creates a placeholder with no data and client flags 0, and marks it
    /// token-sent: the read that created it is answered `W`, every later one `Z`, until the
    /// item is replaced (a stored item carries neither) or invalidated (`md I`: `X`). But it
    /// marks *any* item token-sent once a read with `R<recache>` wins its recompute token,
    /// and a stored item with no data and client flags 0 is then answered exactly as a
    /// placeholder is. What tells a stored item apart: data, client flags other than 0 (a
    /// placeholder has none), `X`, and `W` with `h1` (when the read asked for `h`): the
    /// read that took the token found an item read before it, so not one it created.
    /// What is left, an empty value with flags 0 whose token was taken, is taken for a
    /// placeholder (a miss): the safe side, as a placeholder read as a stored empty value
    /// would be a value nobody stored.
    pub fn is_placeholder(&self, len: usize) -> bool {
        len == 0
            && self.flags == Some(0)
            && (self.win || self.won_elsewhere)
            && !self.stale
            && !(self.win && self.hit_before == Some(true))
    }
}

impl Flags<'_> {
    /// Whether the key these flags name, as [`Flags::value_flags`] found it in `v`, is `key`
    /// (base64-encoded when `b` is there, as the request sent a key that is not plain).
    /// False when they name none.
    #[inline]
    pub fn key_is(&self, v: &ValueFlags, key: &[u8]) -> bool {
        let Some(k) = v.key.and_then(|(s, e)| self.0.get(s as usize..e as usize)) else {
            return false;
        };
        if v.base64_key {
            let mut encoded = Vec::with_capacity(key.len().div_ceil(3) * 4);
            push_base64(&mut encoded, key);
            k == encoded
        } else {
            k == key
        }
    }

    /// Reads `f`, `c`, `O`, `h` (and `W`, `Z`, `X`, where `k` and `b` are) in one pass over
    /// the flags (other flags are skipped); `Err` when one of `f`, `c`, `O` is present but not a number, or twice,
    /// or `h` not 0 or 1.
    pub fn value_flags(&self) -> Result<ValueFlags, ParseError> {
        let mut out = ValueFlags::default();
        let mut hit = None;
        for t in self.tokens() {
            let slot = match t[0] {
                b'f' => &mut out.flags,
                b'c' => &mut out.cas,
                b'O' => &mut out.opaque,
                b'h' => &mut hit,
                b'W' => {
                    out.win = true;
                    continue;
                }
                b'Z' => {
                    out.won_elsewhere = true;
                    continue;
                }
                b'X' => {
                    out.stale = true;
                    continue;
                }
                b'k' => {
                    // The token's value, as offsets into the flags (a reply line is short).
                    let start = t.as_ptr() as usize - self.0.as_ptr() as usize + 1;
                    out.key = Some((start as u32, (start + t.len() - 1) as u32));
                    continue;
                }
                b'b' => {
                    out.base64_key = true;
                    continue;
                }
                _ => continue,
            };
            // A flag given twice (`f0 f8`) is no reply memcached sends: which one is meant?
            if slot.is_some() {
                return Err(ParseError::BadLine);
            }
            *slot = Some(parse_u64(&t[1..]).ok_or(ParseError::BadLine)?);
        }
        out.hit_before = match hit {
            None => None,
            Some(0) => Some(false),
            Some(1) => Some(true),
            Some(_) => return Err(ParseError::BadLine),
        };
        Ok(out)
    }
}

/// One reply of the meta protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply<'a> {
    /// `VA <size> <flags>*` and its data block.
    Value {
        /// The reply's flags.
        flags: Flags<'a>,
        /// The data, without its `\r\n`.
        data: &'a [u8],
    },
    /// `HD <flags>*`: success without a value.
    Header(Flags<'a>),
    /// `EN`: miss.
    Miss(Flags<'a>),
    /// `NS`: not stored.
    NotStored(Flags<'a>),
    /// `EX`: exists (cas mismatch).
    Exists(Flags<'a>),
    /// `NF`: not found.
    NotFound(Flags<'a>),
    /// `MN`: end of a pipeline.
    NoOp,
    /// `OK <flags>*`: what memcached up to 1.6.6 answered in place of `HD`. The dialect
    /// accepts it as `HD` only from a server whose `version` says 1.6.6 or older.
    LegacyOk(Flags<'a>),
    /// A reply of the text protocol (`VERSION`, `STAT`, `END`, `OK`, errors).
    Text(ascii::Reply<'a>),
}

impl<'a> Reply<'a> {
    /// The reply's flags (empty for `MN` and text replies).
    pub fn flags(&self) -> Flags<'a> {
        match *self {
            Reply::Value { flags, .. }
            | Reply::Header(flags)
            | Reply::Miss(flags)
            | Reply::NotStored(flags)
            | Reply::Exists(flags)
            | Reply::NotFound(flags)
            | Reply::LegacyOk(flags) => flags,
            Reply::NoOp | Reply::Text(_) => Flags::default(),
        }
    }
}

/// The reply line as the server sent it (for a value, its `VA` line without the data), for
/// error messages.
impl std::fmt::Display for Reply<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (code, flags) = match *self {
            Reply::Value { flags, data } => {
                write!(f, "VA {}", data.len())?;
                ("", flags)
            }
            Reply::Header(flags) => ("HD", flags),
            Reply::Miss(flags) => ("EN", flags),
            Reply::NotStored(flags) => ("NS", flags),
            Reply::Exists(flags) => ("EX", flags),
            Reply::NotFound(flags) => ("NF", flags),
            Reply::LegacyOk(flags) => ("OK", flags),
            Reply::NoOp => return f.write_str("MN"),
            Reply::Text(t) => return t.fmt(f),
        };
        f.write_str(code)?;
        if !flags.0.is_empty() {
            write!(f, " {}", String::from_utf8_lossy(flags.0))?;
        }
        Ok(())
    }
}

/// Parses one meta reply from the start of `buf`; `max_value` bounds a `VA` size.
pub fn parse(buf: &[u8], max_value: usize) -> Result<Status<Reply<'_>>, ParseError> {
    if buf.len() < 2 || !buf[0].is_ascii_uppercase() || !buf[1].is_ascii_uppercase() {
        return text(buf, max_value);
    }
    let code = [buf[0], buf[1]];
    if !matches!(
        &code,
        b"VA" | b"HD" | b"EN" | b"NS" | b"EX" | b"NF" | b"MN" | b"OK"
    ) {
        return text(buf, max_value);
    }
    if buf.len() > 2 && buf[2] != b' ' && buf[2] != b'\r' {
        return text(buf, max_value);
    }
    let Some(nl) = memchr::memchr(b'\n', &buf[..buf.len().min(MAX_LINE)]) else {
        return if buf.len() >= MAX_LINE {
            Err(ParseError::LineTooLong)
        } else {
            Ok(Status::Partial(None))
        };
    };
    if buf[nl - 1] != b'\r' {
        return Err(ParseError::BadLine);
    }
    let line = &buf[..nl - 1];
    let used = nl + 1;
    let rest = line.get(3..).unwrap_or(b"");
    let reply = match &code {
        b"HD" => Reply::Header(Flags(rest)),
        b"EN" => Reply::Miss(Flags(rest)),
        b"NS" => Reply::NotStored(Flags(rest)),
        b"EX" => Reply::Exists(Flags(rest)),
        b"NF" => Reply::NotFound(Flags(rest)),
        b"MN" if rest.is_empty() => Reply::NoOp,
        b"OK" => Reply::LegacyOk(Flags(rest)),
        b"VA" => {
            let (size, flags) = match rest.iter().position(|&b| b == b' ') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, &b""[..]),
            };
            let len = parse_u64(size).ok_or(ParseError::BadLine)?;
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
            return Ok(Status::Complete(
                Reply::Value {
                    flags: Flags(flags),
                    data: &buf[used..used + len],
                },
                total,
            ));
        }
        _ => return Err(ParseError::BadLine),
    };
    Ok(Status::Complete(reply, used))
}

fn text(buf: &[u8], max_value: usize) -> Result<Status<Reply<'_>>, ParseError> {
    Ok(match ascii::parse(buf, max_value)? {
        Status::Partial(h) => Status::Partial(h),
        Status::Complete(r, n) => Status::Complete(Reply::Text(r), n),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(cmd: Command, key: &[u8], data: Option<&[u8]>, flags: &[Flag<'_>]) -> Vec<u8> {
        let mut b = Vec::new();
        encode(&mut b, cmd, key, data, flags);
        b
    }

    #[test]
    fn encode_get_matches_the_generic_encoder() {
        use Flag::*;
        let keys: [&[u8]; 4] = [b"foo", b"a b", "\u{e9}t\u{e9}".as_bytes(), b"\x01\xff"];
        for key in keys {
            for (opaque, cas, touch, key_back, quiet) in [
                (0u64, false, None, false, false),
                (7, true, None, true, true),
                (499, false, Some(30u32), false, true),
                (u64::MAX, true, Some(0), true, false),
            ] {
                let mut flags = vec![Bare(b'v'), Bare(b'f'), Num(b'O', opaque)];
                if cas {
                    flags.push(Bare(b'c'));
                }
                if let Some(t) = touch {
                    flags.push(Num(b'T', t.into()));
                }
                if key_back && key_is_plain(key) {
                    flags.push(Bare(b'k'));
                }
                if quiet {
                    flags.push(Bare(b'q'));
                }
                let mut fast = b"prefix".to_vec();
                encode_get(&mut fast, key, opaque, cas, touch, key_back, quiet);
                let mut generic = b"prefix".to_vec();
                encode(&mut generic, Command::Get, key, None, &flags);
                assert_eq!(
                    String::from_utf8_lossy(&fast),
                    String::from_utf8_lossy(&generic)
                );
            }
        }
        let mut b = Vec::new();
        encode_get(&mut b, b"foo", 7, false, None, false, true);
        assert_eq!(b, b"mg foo v f O7 q\r\n");
        b.clear();
        encode_get(&mut b, b"foo", 8, false, None, true, true);
        assert_eq!(b, b"mg foo v f O8 k q\r\n");
    }

    #[test]
    fn value_flags_in_one_pass() {
        let f = Flags(b"s5 f12 t-1 c99 O3 k").value_flags().unwrap();
        assert_eq!(
            f,
            ValueFlags {
                flags: Some(12),
                cas: Some(99),
                opaque: Some(3),
                key: Some((19, 19)),
                ..ValueFlags::default()
            }
        );
        let (line, key) = (Flags(b"f1 kfoo O2"), Flags(b"b kZm9v f1"));
        assert!(line.key_is(&line.value_flags().unwrap(), b"foo"));
        assert!(!line.key_is(&line.value_flags().unwrap(), b"fo"));
        assert!(key.key_is(&key.value_flags().unwrap(), b"foo"));
        assert!(!Flags(b"f1").key_is(&Flags(b"f1").value_flags().unwrap(), b"foo"));
        // The lease flags, as memcached 1.6.18 answers: a placeholder (`W` to the read that
        // created it, `h0`; `Z` to every later one), a stale item (`X W`, then `Z X`), a
        // stored empty value (none until a read with `R` takes its token: then `W`, `Z`).
        let lease = |f: &[u8]| Flags(f).value_flags().unwrap();
        assert!(lease(b"f0 O2 Z").is_placeholder(0));
        assert!(lease(b"f0 c2 h0 O4 W").is_placeholder(0));
        assert!(lease(b"f0 c2 h1 O5 Z").is_placeholder(0));
        assert!(!lease(b"f0 O2 Z").is_placeholder(1));
        assert!(!lease(b"f0 c6 O13 X W").is_placeholder(0));
        assert!(!lease(b"f0 c6 O13 Z X").is_placeholder(0));
        assert!(!lease(b"f0 c2 O8").is_placeholder(0));
        // A stored empty value: flags other than 0 (no placeholder has any), or `W` to a
        // read that found it read before (`h1`: the read did not create it).
        assert!(!lease(b"f16 O2 Z").is_placeholder(0));
        assert!(!lease(b"f16842752 c3 h0 O7 W").is_placeholder(0));
        assert!(!lease(b"f0 c3 h1 O7 W").is_placeholder(0));
        // Without its flags a reply is no placeholder (the dialect refuses it first).
        assert!(!lease(b"O2 Z").is_placeholder(0));
        assert_eq!(lease(b"h1").hit_before, Some(true));
        assert_eq!(lease(b"h0").hit_before, Some(false));
        let w = lease(b"W Z X");
        assert!(w.win && w.won_elsewhere && w.stale);
        assert_eq!(Flags(b"").value_flags().unwrap(), ValueFlags::default());
        for bad in [
            &b"O1 O2"[..],
            b"f0 f8",
            b"c1 s3 c2",
            b"fx",
            b"c",
            b"O-1",
            b"f99999999999999999999999",
            b"h2",
            b"h",
        ] {
            assert!(Flags(bad).value_flags().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn exact_request_bytes() {
        use Flag::*;
        let cases: Vec<(Vec<u8>, &[u8])> = vec![
            (
                enc(
                    Command::Get,
                    b"foo",
                    None,
                    &[Bare(b'v'), Bare(b'f'), Num(b'O', 7), Bare(b'q')],
                ),
                b"mg foo v f O7 q\r\n",
            ),
            (
                enc(
                    Command::Set,
                    b"foo",
                    Some(b"bar"),
                    &[Num(b'F', 5), Num(b'T', 0), Tok(b'M', b"E")],
                ),
                b"ms foo 3 F5 T0 ME\r\nbar\r\n",
            ),
            (
                enc(Command::Set, b"k", Some(b""), &[Num(b'C', 12)]),
                b"ms k 0 C12\r\n\r\n",
            ),
            (
                enc(Command::Delete, b"k", None, &[Bare(b'I'), Num(b'T', 30)]),
                b"md k I T30\r\n",
            ),
            (
                enc(
                    Command::Arith,
                    b"n",
                    None,
                    &[Tok(b'M', b"D"), Num(b'D', 5), Bare(b'v')],
                ),
                b"ma n MD D5 v\r\n",
            ),
            (
                enc(Command::Get, b"a b", None, &[Bare(b'v')]),
                b"mg YSBi b v\r\n",
            ),
            (
                enc(Command::Get, "é".as_bytes(), None, &[]),
                "mg é\r\n".as_bytes(),
            ),
            (
                enc(Command::Get, b"\xc3\xa9\n", None, &[]),
                b"mg w6kK b\r\n",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want, "{}", String::from_utf8_lossy(want));
        }
        let mut b = Vec::new();
        encode_noop(&mut b);
        assert_eq!(b, b"mn\r\n");
    }

    #[test]
    fn base64_decodes_what_it_encodes() {
        for data in [&b""[..], b"f", b"fo", b"foo", b"good x", b"\r\n\x00\xff"] {
            let mut enc = Vec::new();
            push_base64(&mut enc, data);
            assert_eq!(decode_base64(&enc).as_deref(), Some(data));
        }
        for bad in [&b"Zm9"[..], b"Zm=v", b"Zm!v", b"Z===", b"Zg==Zg=="] {
            assert_eq!(decode_base64(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn base64_vectors() {
        for (raw, want) in [
            (&b""[..], &b""[..]),
            (b"f", b"Zg=="),
            (b"fo", b"Zm8="),
            (b"foo", b"Zm9v"),
            (b"foob", b"Zm9vYg=="),
            (b"\xff\x00\x80", b"/wCA"),
        ] {
            let mut b = Vec::new();
            push_base64(&mut b, raw);
            assert_eq!(b, want);
        }
    }

    const VALID: &[&[u8]] = &[
        b"HD\r\n",
        b"HD O7 c12\r\n",
        b"EN\r\n",
        b"NS O1\r\n",
        b"EX\r\n",
        b"NF O3\r\n",
        b"MN\r\n",
        b"VA 3 f5 c1 kfoo O2\r\nbar\r\n",
        b"VA 0 W\r\n\r\n",
        b"VA 4\r\na\r\nb\r\n",
        b"VERSION 1.6.18\r\n",
        b"SERVER_ERROR out of memory\r\n",
        b"CLIENT_ERROR bad command line format\r\n",
    ];

    #[test]
    fn valid_replies_and_every_strict_prefix() {
        for bytes in VALID {
            match parse(bytes, 1 << 20) {
                Ok(Status::Complete(_, n)) => assert_eq!(n, bytes.len()),
                other => panic!("{}: {other:?}", String::from_utf8_lossy(bytes)),
            }
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
    fn reply_fields() {
        let Ok(Status::Complete(r, _)) = parse(b"VA 3 f5 c99 O2 W\r\nbar\r\n", 100) else {
            panic!()
        };
        let Reply::Value { flags, data } = r else {
            panic!()
        };
        assert_eq!(data, b"bar");
        assert_eq!(flags.num(b'f'), Ok(Some(5)));
        assert_eq!(flags.num(b'c'), Ok(Some(99)));
        assert_eq!(flags.num(b'O'), Ok(Some(2)));
        assert!(flags.has(b'W') && !flags.has(b'Z'));
        assert_eq!(r.flags().num(b'x'), Ok(None));
    }

    #[test]
    fn hostile_input_is_an_error() {
        assert_eq!(
            parse(b"VA 99999999999 f1\r\n", 1 << 20),
            Err(ParseError::ValueTooLarge)
        );
        assert_eq!(parse(b"VA x\r\n", 1 << 20), Err(ParseError::BadLine));
        assert_eq!(
            parse(b"VA 1\r\nab\r\n", 1 << 20),
            Err(ParseError::BadTerminator)
        );
        assert_eq!(parse(b"MN junk\r\n", 1 << 20), Err(ParseError::BadLine));
        assert_eq!(parse(b"ZZ 1\r\n", 1 << 20), Err(ParseError::UnknownReply));
        assert_eq!(parse(b"OK?\r\n", 1 << 20), Err(ParseError::UnknownReply));
    }
}
