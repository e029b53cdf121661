//! The meta dialect. Every request carries an opaque token (`O<n>`), a tag unique on its
//! connection (`Conn::take_tags`), and every reply's token is checked, so a reply that does
//! not belong to its request (a stray duplicate, a late reply) is a protocol error (and the
//! connection is dropped), never a value handed to a caller. Batches end with a non-quiet
//! request instead of `mn`, whose reply `MN` carries no tag.

use super::text::unexpected;
use super::{
    answered_alone, collect_answers, lacks_cas, tag_index, Hit, Outcome, Request, Speak, WireKeys,
};
use crate::conn::{parse_version, Conn, ServerVersion};
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::proto::ascii::{self, StoreCommand};
use crate::proto::meta::{self, Command, Flag, Flags, Reply, ValueFlags};
use crate::proto::MetaCodec;
use std::cell::Cell;

/// The meta dialect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta;

fn protocol(server: &str, detail: String) -> Error {
    Error::Protocol {
        server: server.to_owned(),
        detail,
    }
}

/// Checks that a reply carries opaque `want`.
fn check_opaque(server: &str, flags: Flags<'_>, want: u32) -> Result<()> {
    match flags.num(b'O') {
        Ok(Some(o)) if o == u64::from(want) => Ok(()),
        Ok(o) => Err(protocol(
            server,
            format!(
                "reply {}, expected O{want}: a crossed reply",
                super::show_opaque(o)
            ),
        )),
        Err(_) => Err(bad(server, "O")),
    }
}

/// Reads a reply that is not a meta reply as an error (errors, or anything unexpected).
fn other(server: &str, r: Reply<'_>, asked: &str) -> Error {
    match r {
        Reply::Text(t) => unexpected(server, t, asked),
        r => protocol(
            server,
            format!("unexpected reply to {asked}: {:?}", r.to_string()),
        ),
    }
}

/// The last memcached release whose meta commands answered `OK` where later ones answer
/// `HD`.
pub(crate) const LAST_OK_VERSION: ServerVersion = (1, 6, 6);

/// The first memcached release that takes an explicit CAS version (`E`).
pub(crate) const FIRST_E_VERSION: ServerVersion = (1, 6, 27);

fn show(v: ServerVersion) -> String {
    format!("{}.{}.{}", v.0, v.1, v.2)
}

/// The server's version as this connection knows it, asking (`version`) the first time.
/// Called only between exchanges (the connection is clean).
fn version_of(conn: &mut Conn) -> Result<ServerVersion> {
    if let Some(v) = conn.server_version() {
        return Ok(v);
    }
    let tag = conn.take_tags(1);
    let req: Request<'_> = Request::Version;
    ascii::encode_version(conn.begin());
    conn.send()?;
    let v = super::Text
        .read(conn, &req, tag, &mut |_, _, _, _| {})?
        .version()?;
    conn.finish_read_whole()?;
    let v = parse_version(&v);
    conn.set_server_version(v);
    Ok(v)
}

/// Before a request that carries an explicit CAS version (`E`): the server must be
/// memcached 1.6.27 or later, or the call fails with [`Error::Unsupported`] naming the
/// version it reported (before the request is sent: an older server would refuse `E` as a
/// bad flag, or worse, ignore it).
pub(crate) fn require_explicit_versions(conn: &mut Conn) -> Result<()> {
    let v = version_of(conn)?;
    if v < FIRST_E_VERSION {
        return Err(Error::Unsupported(format!(
            "explicit CAS versions (meta E flag) need memcached {} or later; server {} \
             reports version {}",
            show(FIRST_E_VERSION),
            conn.server(),
            show(v)
        )));
    }
    Ok(())
}

/// After an exchange in which an `OK` was taken for `HD` before the server's version was
/// known: asks for the version, and refuses the exchange (a protocol error) unless the
/// server is memcached 1.6.6 or older.
pub(crate) fn settle_legacy_ok(conn: &mut Conn) -> Result<()> {
    conn.legacy_ok_unchecked = false;
    let v = version_of(conn)?;
    legacy_ok_allowed(conn.server(), v)
}

fn legacy_ok_allowed(server: &str, v: ServerVersion) -> Result<()> {
    if v <= LAST_OK_VERSION {
        return Ok(());
    }
    Err(protocol(
        server,
        format!(
            "OK in place of HD from a server reporting version {}: only memcached {} and \
             older answer OK",
            show(v),
            show(LAST_OK_VERSION)
        ),
    ))
}

/// A meta `OK` read as the `HD` it stands for on memcached 1.6.6 and older: at once when
/// the version is known, provisionally (`unchecked` set, settled after the exchange by
/// [`settle_legacy_ok`]) when not.
fn as_hd<'a>(
    r: Reply<'a>,
    known: Option<ServerVersion>,
    unchecked: &Cell<bool>,
    server: &str,
) -> Result<Reply<'a>> {
    match r {
        Reply::LegacyOk(f) => {
            match known {
                Some(v) => legacy_ok_allowed(server, v)?,
                None => unchecked.set(true),
            }
            Ok(Reply::Header(f))
        }
        r => Ok(r),
    }
}

/// One meta reply read with `OK` taken for `HD` (see [`as_hd`]).
fn read_hd<T>(conn: &mut Conn, f: impl FnOnce(Reply<'_>, &str) -> Result<T>) -> Result<T> {
    let known = conn.server_version();
    let unchecked = Cell::new(false);
    let out =
        conn.read::<MetaCodec, _>(|r, server| f(as_hd(r, known, &unchecked, server)?, server));
    if unchecked.get() {
        conn.legacy_ok_unchecked = true;
    }
    out
}

fn bad(server: &str, flag: &str) -> Error {
    protocol(
        server,
        format!("missing or malformed {flag} flag in an mg reply"),
    )
}

/// The flags of a reply that carries an item (`VA`, or `meta_info`'s `HD`), checked against
/// what its request asked for: every such request asks for `f`, which must be there and fit
/// in 32 bits, and `c`, when `cas` (the request asked for it), must be there. A reply
/// without a flag its request asked for, or with one out of range, is a protocol error (and
/// the connection is dropped), as the text dialect refuses a `VALUE` line without its flags
/// or CAS: never flags 0, their low 32 bits or a made-up CAS, under which a compressed body
/// would be handed back as the value. Returns the flags, as the client flags, and every
/// flag read.
#[inline(always)]
fn item_flags(server: &str, flags: Flags<'_>, cas: bool) -> Result<(u32, ValueFlags)> {
    let v = flags
        .value_flags()
        .map_err(|_| bad(server, "f, c, h or O"))?;
    let missing = |what: &str| {
        protocol(
            server,
            format!("mg reply without {what}, which its request asked for"),
        )
    };
    let f = v
        .flags
        .and_then(|f| u32::try_from(f).ok())
        .ok_or_else(|| missing("a 32-bit f (the item's client flags)"))?;
    if cas && lacks_cas(v.cas) {
        return Err(missing(
            "c (the item's CAS; 0 is none: memcached run with -C keeps no CAS)",
        ));
    }
    Ok((f, v))
}

/// Whether the requests of a retrieval of `n` keys ask each reply to name its key (`k`), and
/// so each reply must (see [`encode_retrieval`]).
fn names_keys(n: usize) -> bool {
    n > 1
}

/// One `mg` per key, tagged `tag + i`: all quiet but the last, whose reply (hit or miss,
/// carrying the batch's last tag) closes the batch. With more than one key, each asks its
/// reply to name its key (`k`): a quiet miss sends nothing, so a reply whose tag skips ahead
/// is taken for a later key, and only the key it names shows a reply of an earlier request
/// carrying a later tag (tester finding protocols 1). A key sent in base64 does not (see
/// `meta::encode_get`): its reply is matched by its tag alone.
fn encode_retrieval<K: WireKeys + ?Sized>(
    buf: &mut Vec<u8>,
    cas: bool,
    touch: Option<u32>,
    keys: &K,
    tag: u32,
) {
    let n = keys.count();
    for i in 0..n {
        let opaque = tag.wrapping_add(i as u32);
        meta::encode_get(
            buf,
            keys.key(i),
            opaque.into(),
            cas,
            touch,
            names_keys(n),
            i + 1 < n,
        );
    }
}

/// Reads the replies to `encode_retrieval` (`n` keys): hits matched to their key by opaque,
/// in order, up to the reply to the last key.
///
/// A reply must name the key it answers when it names one, and, with more than one key (whose
/// requests ask for it, each key that goes as it is), always: a value or a miss for another key, or a reply of a batch
/// that does not say its key, is a protocol error, never a result.
/// `key_at(i)` is key `i` as sent, asked only then: not generic over the keys, so the reply
/// loop stays one function with the read inlined (generic, it cost 70 instructions a key).
fn recv_retrieval<'k>(
    conn: &mut Conn,
    cas: bool,
    n: usize,
    key_at: &dyn Fn(usize) -> &'k [u8],
    tag: u32,
    asked: &str,
    hit: &mut Hit<'_>,
) -> Result<()> {
    if n == 0 {
        return Ok(()); // nothing was sent
    }
    let mut next = 0usize;
    let mut won: Vec<Box<[u8]>> = Vec::new();
    loop {
        let done = conn.read::<MetaCodec, _>(|r, server| {
            let (f, item, flags) = match r {
                Reply::Value { flags, data } => {
                    let (client_flags, f) = item_flags(server, flags, cas)?;
                    (f, Some((data, client_flags)), flags)
                }
                Reply::Miss(flags) => (
                    flags.value_flags().map_err(|_| bad(server, "O"))?,
                    None,
                    flags,
                ),
                r => return Err(not_a_retrieval_reply(server, r, asked)),
            };
            let idx = match tag_index(f.opaque, tag, n) {
                Some(i) if i >= next => i,
                _ => return Err(stray_retrieval_reply(server, f.opaque, tag, n)),
            };
            // (a base64 key's request asks for no key: see `meta::encode_get`; looked at
            // only when the reply does not name the key, off the common path)
            if (f.key.is_some() || names_keys(n))
                && !flags.key_is(&f, key_at(idx))
                && (f.key.is_some() || meta::key_is_plain(key_at(idx)))
            {
                return Err(crossed_key(server, flags, tag, idx, key_at(idx)));
            }
            // A lease placeholder (see `get_lease`) is a miss: nobody stored that empty
            // value.
            if let Some((data, client_flags)) = item.filter(|(d, _)| !f.is_placeholder(d.len())) {
                // A plain read of an invalidated item takes its recompute token (memcached
                // gives it to the first `mg`, whatever its flags): one without a CAS hands
                // it back after the exchange. A read with one keeps it, or the CAS it
                // returns would be out of date at once (see `Client::invalidate`).
                if f.win && f.stale && !cas {
                    won.push(key_at(idx).into());
                }
                hit(idx, data, client_flags, if cas { f.cas } else { None });
            }
            next = idx + 1;
            Ok(next == n)
        })?;
        if done {
            conn.won_tokens.append(&mut won);
            return Ok(());
        }
    }
}

// The errors of `recv_retrieval`, out of its reply loop (which runs once a key).

#[cold]
#[inline(never)]
fn not_a_retrieval_reply(server: &str, r: Reply<'_>, asked: &str) -> Error {
    other(server, r, &format!("mg ({asked})"))
}

#[cold]
#[inline(never)]
fn stray_retrieval_reply(server: &str, opaque: Option<u64>, tag: u32, n: usize) -> Error {
    protocol(
        server,
        format!(
            "reply {}, which no pending request carries (O{tag} to O{}): a stray or crossed \
             reply",
            super::show_opaque(opaque),
            u64::from(tag) + n as u64 - 1
        ),
    )
}

#[cold]
#[inline(never)]
fn crossed_key(server: &str, flags: Flags<'_>, tag: u32, idx: usize, asked: &[u8]) -> Error {
    // A reply flagged `b` names its key in base64: shown decoded (tester finding hostile3 6:
    // "Z29vZCB4" for "good x", and "badmiss" for "badmiss" read as a contradiction).
    let base64 = flags.tokens().any(|t| t == b"b");
    let keys: Vec<String> = flags
        .tokens()
        .filter(|t| t[0] == b'k')
        .map(|t| {
            let raw = &t[1..];
            match base64.then(|| crate::proto::meta::decode_base64(raw)) {
                None => crate::key::quoted(raw).to_string(),
                Some(Some(key)) => format!("{} (base64, flagged b)", crate::key::quoted(&key)),
                Some(None) => format!("{} (flagged b, but not base64)", crate::key::quoted(raw)),
            }
        })
        .collect();
    let what = match keys.as_slice() {
        [] => "reply without its key (k, which the request asked for)".to_owned(),
        [k] => format!("reply for key {k}"),
        // A key flag given twice (tester finding hostile2 5: "reply for key "bad1" ... (asked
        // for "bad1")" named the same key twice without saying what was wrong).
        ks => format!(
            "reply with its key flag k {} times ({})",
            ks.len(),
            ks.join(", ")
        ),
    };
    protocol(
        server,
        format!(
            "{what} under O{} (asked for {}): a crossed reply",
            tag.wrapping_add(idx as u32),
            crate::key::quoted(asked)
        ),
    )
}

/// `ms` with the mode for `cmd`.
#[allow(clippy::too_many_arguments)]
fn encode_store(
    buf: &mut Vec<u8>,
    cmd: StoreCommand,
    key: &[u8],
    flags: u32,
    ttl: u32,
    data: &[u8],
    opaque: u32,
    quiet: bool,
    version: Option<u64>,
) {
    let mode: &[u8] = match cmd {
        StoreCommand::Set | StoreCommand::Cas(_) => b"S",
        StoreCommand::Add => b"E",
        StoreCommand::Replace => b"R",
        StoreCommand::Append => b"A",
        StoreCommand::Prepend => b"P",
    };
    let mut f = [
        Flag::Num(b'F', flags.into()),
        Flag::Num(b'T', ttl.into()),
        Flag::Tok(b'M', mode),
        Flag::Num(b'O', opaque.into()),
        Flag::Bare(b'q'),
        Flag::Bare(b'q'),
        Flag::Bare(b'q'),
    ];
    let mut n = 4;
    if let StoreCommand::Cas(c) = cmd {
        f[n] = Flag::Num(b'C', c);
        n += 1;
    }
    if let Some(v) = version {
        f[n] = Flag::Num(b'E', v);
        n += 1;
    }
    if quiet {
        f[n] = Flag::Bare(b'q');
        n += 1;
    }
    meta::encode(buf, Command::Set, key, Some(data), &f[..n]);
}

/// The outcome of a store: `EX` and `NF` answer only a store with a CAS (`C`): to another they are not an outcome
/// memcached gives, and are refused as on text (tester finding hostile2 3: a `set` answered
/// `EX` was a CAS conflict, `false`).
fn store_outcome(server: &str, r: Reply<'_>, opaque: u32, cmd: StoreCommand) -> Result<Outcome> {
    let cas = matches!(cmd, StoreCommand::Cas(_));
    let outcome = match r {
        Reply::Header(_) => StoreOutcome::Stored,
        Reply::NotStored(_) => StoreOutcome::NotStored,
        Reply::Exists(_) if cas => StoreOutcome::Exists,
        Reply::NotFound(_) if cas => StoreOutcome::NotFound,
        r => return Err(other(server, r, &format!("ms ({})", cmd.name()))),
    };
    check_opaque(server, r.flags(), opaque)?;
    Ok(Outcome::Stored(outcome))
}

/// The reply to `mg <key> T<ttl>` (touch): found or not.
fn touch_outcome(server: &str, r: Reply<'_>, opaque: u32) -> Result<Outcome> {
    let found = match r {
        Reply::Header(_) => true,
        Reply::Miss(_) => false,
        r => return Err(other(server, r, "mg (touch)")),
    };
    check_opaque(server, r.flags(), opaque)?;
    Ok(Outcome::Existed(found))
}

/// The reply to `ma`: the new value, or `None` for a missing counter.
fn arith_outcome(server: &str, r: Reply<'_>, opaque: u32) -> Result<Outcome> {
    match r {
        Reply::Value { flags, data } => {
            check_opaque(server, flags, opaque)?;
            crate::proto::parse_counter(data)
                .map(|n| Outcome::Counter(Some(n)))
                .ok_or_else(|| {
                    protocol(
                        server,
                        // Its length, never its data: it is a stored value (tester
                        // finding retest23 3).
                        format!("ma returned {} bytes that are not a number", data.len()),
                    )
                })
        }
        Reply::NotFound(flags) => {
            check_opaque(server, flags, opaque)?;
            Ok(Outcome::Counter(None))
        }
        r => Err(other(server, r, "ma")),
    }
}

fn delete_outcome(server: &str, r: Reply<'_>, opaque: u32) -> Result<Outcome> {
    let found = match r {
        Reply::Header(_) => true,
        Reply::NotFound(_) => false,
        r => return Err(other(server, r, "md")),
    };
    check_opaque(server, r.flags(), opaque)?;
    Ok(Outcome::Existed(found))
}

/// The metadata flags of an `mg h l t c s f` reply, every one there, and whether the item
/// is a lease placeholder (see `ValueFlags::is_placeholder`).
fn item_info(server: &str, f: Flags<'_>) -> Result<(crate::item::ItemInfo, bool)> {
    use std::time::Duration;
    let (flags, v) = item_flags(server, f, true)?;
    let num = |c: u8, name: &str| f.num(c).ok().flatten().ok_or_else(|| bad(server, name));
    let hit = num(b'h', "h")?;
    if hit > 1 {
        return Err(bad(server, "h"));
    }
    let ttl = match f.signed(b't').map_err(|_| bad(server, "t"))? {
        Some(-1) => None,
        Some(t) if t >= 0 => Some(Duration::from_secs(t as u64)),
        _ => return Err(bad(server, "t")),
    };
    let size = num(b's', "s")?;
    let info = crate::item::ItemInfo {
        hit_before: hit == 1,
        last_access: Duration::from_secs(num(b'l', "l")?),
        ttl,
        cas: v.cas.unwrap_or_default(), // there: `item_flags` checked it
        size,
        flags,
    };
    Ok((
        info,
        usize::try_from(size).is_ok_and(|s| v.is_placeholder(s)),
    ))
}

/// Hands back the recompute tokens that plain reads of invalidated items took during the
/// exchange just read (`Conn::won_tokens`; those reads asked for no CAS, so that the common
/// read pays nothing for this rare case). First `mg <key> c` per key learns the CAS of the
/// item now there; each still stale (`X`) is then handed back with `md <key> I C<cas>`,
/// which marks it stale again with its token free, so the next `get_lease` is told to
/// recompute. An item stored or deleted since the read is left alone (no `X`, or `EN`), and
/// `C` makes the `md` a no-op (`EX`, `NF`) when the item changes between the two. Called
/// after an exchange whose replies were all read (the connection clean).
#[cold]
#[inline(never)]
pub(crate) fn return_tokens(conn: &mut Conn) -> Result<()> {
    let won = std::mem::take(&mut conn.won_tokens);
    let tag = conn.take_tags(won.len());
    let buf = conn.begin();
    for (i, key) in won.iter().enumerate() {
        let f = [
            Flag::Bare(b'c'),
            Flag::Num(b'O', tag.wrapping_add(i as u32).into()),
        ];
        meta::encode(buf, Command::Get, key, None, &f);
    }
    conn.send()?;
    let mut stale: Vec<(&[u8], u64)> = Vec::with_capacity(won.len());
    for (i, key) in won.iter().enumerate() {
        let want = tag.wrapping_add(i as u32);
        let cas = read_hd(conn, |r, server| match r {
            Reply::Header(f) => {
                check_opaque(server, f, want)?;
                let v = f.value_flags().map_err(|_| bad(server, "c"))?;
                match (v.stale, v.cas) {
                    (true, Some(c)) => Ok(Some(c)),
                    (true, None) => Err(bad(server, "c")),
                    (false, _) => Ok(None),
                }
            }
            Reply::Miss(f) => check_opaque(server, f, want).map(|()| None),
            r => Err(other(
                server,
                r,
                "mg c (the CAS of an item whose token a read took)",
            )),
        })?;
        if let Some(c) = cas {
            stale.push((key, c));
        }
    }
    conn.finish_read_whole()?;
    if stale.is_empty() {
        return Ok(());
    }
    let tag = conn.take_tags(stale.len());
    let buf = conn.begin();
    for (i, (key, cas)) in stale.iter().enumerate() {
        let f = [
            Flag::Bare(b'I'),
            Flag::Num(b'C', *cas),
            Flag::Num(b'O', tag.wrapping_add(i as u32).into()),
        ];
        meta::encode(buf, Command::Delete, key, None, &f);
    }
    conn.send()?;
    for i in 0..stale.len() {
        let want = tag.wrapping_add(i as u32);
        read_hd(conn, |r, server| match r {
            Reply::Header(f) | Reply::Exists(f) | Reply::NotFound(f) => {
                check_opaque(server, f, want)
            }
            r => Err(other(server, r, "md (a recompute token handed back)")),
        })?;
    }
    conn.finish_read_whole()
}

/// What a lease read found.
#[derive(Debug)]
pub(crate) struct LeaseReply {
    pub value: Option<(Vec<u8>, u32, u64)>,
    pub win: bool,
    pub stale: bool,
    pub other_winner: bool,
}

fn recv_lease(conn: &mut Conn, tag: u32) -> Result<LeaseReply> {
    conn.read::<MetaCodec, _>(|r, server| match r {
        Reply::Value { flags, data } => {
            check_opaque(server, flags, tag)?;
            let (f, v) = item_flags(server, flags, true)?;
            // `c` is there: `item_flags` checked it.
            let c = v.cas.unwrap_or_default();
            // A placeholder (a miss) is no value; any other item is, stale or current, and
            // an empty one too (see `ValueFlags::is_placeholder`).
            let placeholder = v.is_placeholder(data.len());
            Ok(LeaseReply {
                value: (!placeholder).then(|| (data.to_vec(), f, c)),
                win: v.win,
                stale: v.stale,
                other_winner: v.won_elsewhere,
            })
        }
        Reply::Miss(flags) => {
            check_opaque(server, flags, tag)?;
            Ok(LeaseReply {
                value: None,
                win: true,
                stale: false,
                other_winner: false,
            })
        }
        r => Err(other(server, r, "mg (lease)")),
    })
}

/// Reads the replies of a pipeline of `n` requests tagged `tag..tag + n`, each answered, up
/// to the reply to the last (see `collect_answers`). A `SERVER_ERROR` line (no tag), or
/// memcached's `CLIENT_ERROR` to an `ma` of a non-number, answers the next unanswered
/// request and the batch goes on (`answered_alone` for `like`, the batch's kind of
/// request).
fn recv_batch(
    conn: &mut Conn,
    like: &Request<'_>,
    tag: u32,
    n: usize,
    outcome: impl Fn(&str, Reply<'_>, u32) -> Result<Outcome>,
    out: &mut dyn FnMut(usize, Result<Outcome>),
) -> Result<()> {
    // Outcomes read after an `OK` whose server's version is not known yet are held until
    // the version says whether `OK` may stand for `HD` (memcached 1.6.6 and older).
    let unchecked = Cell::new(false);
    let mut held: Vec<(usize, Result<Outcome>)> = Vec::new();
    let mut forward = |i: usize, r: Result<Outcome>| {
        if unchecked.get() {
            held.push((i, r));
        } else {
            out(i, r);
        }
    };
    collect_answers(
        conn,
        tag,
        n,
        true,
        |conn| {
            let known = conn.server_version();
            conn.read::<MetaCodec, _>(|r, server| match as_hd(r, known, &unchecked, server)? {
                Reply::Text(t) => match unexpected(server, t, "a pipelined request") {
                    e if answered_alone(like, &e) => Ok(Some((None, Err(e)))),
                    e => Err(e),
                },
                Reply::NoOp => Err(protocol(
                    server,
                    "MN, which no request asked for: a stray reply".into(),
                )),
                r => match r.flags().num(b'O') {
                    Ok(Some(o)) => {
                        let opaque = u32::try_from(o).unwrap_or(u32::MAX);
                        Ok(Some((Some(o), outcome(server, r, opaque))))
                    }
                    // Every request of the batch carries one: this reply answers none.
                    Ok(None) => Err(protocol(
                        server,
                        format!(
                            "reply {:?} without an opaque (O), which every request of the \
                             batch carries: a stray reply",
                            r.to_string()
                        ),
                    )),
                    Err(_) => Err(bad(server, "O")),
                },
            })
        },
        &mut forward,
    )?;
    if unchecked.get() {
        settle_legacy_ok(conn)?;
    }
    for (i, r) in held {
        out(i, r);
    }
    Ok(())
}

impl Speak for Meta {
    fn encode<K: WireKeys + ?Sized>(&self, buf: &mut Vec<u8>, req: &Request<'_, K>, tag: u32) {
        match *req {
            Request::Get { key, cas, touch } => {
                meta::encode_get(buf, key, tag.into(), cas, touch, false, false)
            }
            Request::GetMulti { keys, cas, touch } => encode_retrieval(buf, cas, touch, keys, tag),
            Request::Store {
                cmd,
                key,
                flags,
                ttl,
                data,
                quiet,
                version,
            } => encode_store(buf, cmd, key, flags, ttl, data, tag, quiet, version),
            Request::Delete {
                key,
                quiet,
                version,
            } => {
                let mut f = vec![Flag::Num(b'O', tag.into())];
                if quiet {
                    f.push(Flag::Bare(b'q'));
                }
                if let Some(v) = version {
                    f.push(Flag::Num(b'E', v));
                }
                meta::encode(buf, Command::Delete, key, None, &f);
            }
            // `mg <key> T<ttl>` without a value.
            Request::Touch { key, ttl } => {
                let f = [Flag::Num(b'T', ttl.into()), Flag::Num(b'O', tag.into())];
                meta::encode(buf, Command::Get, key, None, &f);
            }
            // `ma`, creating the counter with `initial` (and `ttl`) when `init` is given.
            Request::Arith {
                incr,
                key,
                delta,
                init,
                version,
            } => {
                let mut f = vec![
                    Flag::Tok(b'M', if incr { b"I" } else { b"D" }),
                    Flag::Num(b'D', delta),
                    Flag::Bare(b'v'),
                    Flag::Num(b'O', tag.into()),
                ];
                if let Some((initial, ttl)) = init {
                    f.push(Flag::Num(b'N', ttl.into()));
                    f.push(Flag::Num(b'J', initial));
                }
                if let Some(v) = version {
                    f.push(Flag::Num(b'E', v));
                }
                meta::encode(buf, Command::Arith, key, None, &f);
            }
            // The whole-server commands are the text protocol's.
            Request::Flush { delay } => ascii::encode_flush_all(buf, delay),
            Request::Version => ascii::encode_version(buf),
            // `mn`: its reply `MN` carries no tag, so nothing else may be pending (it is
            // sent alone).
            Request::Noop => meta::encode_noop(buf),
            Request::Stats { group } => ascii::encode_stats(buf, group),
            // `mg <key> v f c h N<vivify> [R<recache>] O<tag>`: a read that elects one
            // recomputer. `h` tells a stored empty item whose token this read takes from a
            // placeholder it creates (see `ValueFlags::is_placeholder`).
            Request::Lease {
                key,
                vivify_ttl,
                recache,
            } => {
                let mut f = vec![
                    Flag::Bare(b'v'),
                    Flag::Bare(b'f'),
                    Flag::Bare(b'c'),
                    Flag::Bare(b'h'),
                    Flag::Num(b'N', vivify_ttl.into()),
                    Flag::Num(b'O', tag.into()),
                ];
                if let Some(r) = recache {
                    f.push(Flag::Num(b'R', r.into()));
                }
                meta::encode(buf, Command::Get, key, None, &f);
            }
            // `mg <key> h l t c s f u O<tag>`: the metadata, no value, and no LRU bump (`u`:
            // the read is not an access, so it changes neither `h` nor `l`).
            Request::Info { key } => {
                let f = [
                    Flag::Bare(b'u'),
                    Flag::Bare(b'h'),
                    Flag::Bare(b'l'),
                    Flag::Bare(b't'),
                    Flag::Bare(b'c'),
                    Flag::Bare(b's'),
                    Flag::Bare(b'f'),
                    Flag::Num(b'O', tag.into()),
                ];
                meta::encode(buf, Command::Get, key, None, &f);
            }
            // `md <key> I T<ttl>`: mark stale (readers see the old value flagged stale and
            // one of them wins the right to recompute) instead of removing.
            Request::Invalidate { key, stale_ttl } => {
                let f = [
                    Flag::Bare(b'I'),
                    Flag::Num(b'T', stale_ttl.into()),
                    Flag::Num(b'O', tag.into()),
                ];
                meta::encode(buf, Command::Delete, key, None, &f);
            }
        }
    }

    fn read<K: WireKeys + ?Sized>(
        &self,
        conn: &mut Conn,
        req: &Request<'_, K>,
        tag: u32,
        hit: &mut Hit<'_>,
    ) -> Result<Outcome> {
        match *req {
            Request::Get { key, cas, .. } => {
                recv_retrieval(conn, cas, 1, &|_| key, tag, req.name(), hit).map(|()| Outcome::Done)
            }
            Request::GetMulti { keys, cas, .. } => recv_retrieval(
                conn,
                cas,
                keys.count(),
                &|i| keys.key(i),
                tag,
                req.name(),
                hit,
            )
            .map(|()| Outcome::Done),
            Request::Store { cmd, .. } => {
                read_hd(conn, |r, server| store_outcome(server, r, tag, cmd))
            }
            Request::Delete { .. } | Request::Invalidate { .. } => {
                read_hd(conn, |r, server| delete_outcome(server, r, tag))
            }
            Request::Info { .. } => read_hd(conn, |r, server| {
                let flags = match r {
                    Reply::Header(f) => f,
                    Reply::Miss(f) => {
                        check_opaque(server, f, tag)?;
                        return Ok(Outcome::Info(None));
                    }
                    r => return Err(other(server, r, "mg (meta_info)")),
                };
                check_opaque(server, flags, tag)?;
                let (info, placeholder) = item_info(server, flags)?;
                // A lease placeholder is no item anyone stored: a miss, as for `get`.
                Ok(Outcome::Info((!placeholder).then_some(info)))
            }),
            Request::Touch { key, .. } => {
                // `mg` takes an invalidated item's recompute token whatever its flags: a
                // touch hands it back after the exchange, as a plain read does, or every
                // `get_lease` would wait with nobody told to recompute (tester finding
                // metafeat 1).
                let (outcome, won) = read_hd(conn, |r, server| {
                    let won = matches!(&r, Reply::Header(f)
                        if f.value_flags().is_ok_and(|v| v.win && v.stale));
                    touch_outcome(server, r, tag).map(|o| (o, won))
                })?;
                if won {
                    conn.won_tokens.push(key.into());
                }
                Ok(outcome)
            }
            Request::Arith { .. } => {
                conn.read::<MetaCodec, _>(|r, server| arith_outcome(server, r, tag))
            }
            // Text replies: the text dialect reads them.
            Request::Flush { .. } | Request::Version | Request::Stats { .. } => {
                super::Text.read(conn, req, tag, hit)
            }
            Request::Lease { .. } => recv_lease(conn, tag).map(Outcome::Lease),
            Request::Noop => conn.read::<MetaCodec, _>(|r, server| match r {
                Reply::NoOp => Ok(Outcome::Done),
                r => Err(other(server, r, "mn")),
            }),
        }
    }

    fn batches_tagged(&self) -> bool {
        true
    }

    /// Nothing: the last request's tagged reply closes the batch (`mn` carries no tag).
    fn encode_barrier(&self, _buf: &mut Vec<u8>, _tag: u32) {}

    fn read_barrier(&self, _conn: &mut Conn, _tag: u32) -> Result<()> {
        Ok(())
    }

    fn read_batch(
        &self,
        conn: &mut Conn,
        like: &Request<'_>,
        tag: u32,
        n: usize,
        out: &mut dyn FnMut(usize, Result<Outcome>),
    ) -> Result<()> {
        match like {
            Request::Store { cmd, .. } => recv_batch(
                conn,
                like,
                tag,
                n,
                |s, r, o| store_outcome(s, r, o, *cmd),
                out,
            ),
            // Never quiet (every reply carries the answer): a missing reply is a mismatch.
            Request::Touch { .. } => recv_batch(conn, like, tag, n, touch_outcome, out),
            Request::Arith { .. } => recv_batch(conn, like, tag, n, arith_outcome, out),
            _ => recv_batch(conn, like, tag, n, delete_outcome, out),
        }
    }

    fn arith_creates(&self) -> bool {
        true
    }
}
