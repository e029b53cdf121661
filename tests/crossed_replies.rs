//! Replies that do not answer what was asked, from deliberately broken fake servers (not
//! memcached): a value naming another key, a `gets` reply without a CAS, an unknown status, a
//! text reply sent twice. Each is a protocol error naming the reply as the server sent it
//! (wire text, never a Rust debug dump) and the command that was sent; never a value.

mod common;

use common::fake::{binary_fake, fake, Then};
use common::fake_client;
use mcpool::{Error, Protocol};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const GET: u8 = 0x00;
const GETKQ: u8 = 0x0d;
const NOOP: u8 = 0x0a;

/// A binary response packet with `status`, `cas`, `extras`, `key`, `value`.
fn packet(
    opcode: u8,
    status: u16,
    opaque: u32,
    cas: u64,
    extras: &[u8],
    key: &[u8],
    value: &[u8],
) -> Vec<u8> {
    let mut r = vec![0x81, opcode];
    r.extend_from_slice(&(key.len() as u16).to_be_bytes());
    r.extend_from_slice(&[extras.len() as u8, 0]);
    r.extend_from_slice(&status.to_be_bytes());
    r.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
    r.extend_from_slice(&opaque.to_be_bytes());
    r.extend_from_slice(&cas.to_be_bytes());
    r.extend_from_slice(extras);
    r.extend_from_slice(key);
    r.extend_from_slice(value);
    r
}

/// The protocol error's text, or a panic naming what came instead.
fn protocol_detail<T: std::fmt::Debug>(what: &str, got: mcpool::Result<T>) -> String {
    match got {
        Err(e @ Error::Protocol { .. }) => e.to_string(),
        other => panic!("{what}: a protocol error expected, got {other:?}"),
    }
}

/// Messages name replies as wire text: no Rust debug formatting.
fn no_debug_dump(msg: &str) {
    for leak in ["Some(", "None", "Ok(", "Flags(", "[1", "Miss(", "Value {"] {
        assert!(!msg.contains(leak), "{leak:?} in {msg:?}");
    }
}

#[test]
fn binary_get_answered_with_another_keys_value_is_refused() {
    // GET (which echoes no key) answered with a response carrying the key "otherkey".
    let addr = binary_fake(|_, opcode, opaque, key| match (opcode, key) {
        (GET, b"bada") => packet(GET, 0, opaque, 5, &[0; 4], b"otherkey", b"WRONGVAL"),
        (GET, _) => packet(GET, 0, opaque, 5, &[0; 4], b"", b"GOOD"),
        _ => Vec::new(),
    });
    let c = fake_client(&addr, Protocol::Binary);
    // The bytes it calls a key are counted, never quoted: a key length that lies makes
    // them a value's (tester finding hostile3 1).
    let msg = protocol_detail("get", c.get("bada"));
    assert!(
        msg.contains("a key of 8 bytes") && msg.contains("\"bada\"") && !msg.contains("otherkey"),
        "{msg}"
    );
    let msg = protocol_detail("gets", c.gets("bada"));
    assert!(msg.contains("a key of 8 bytes"), "{msg}");
    // A reply without a key (memcached's) is the key's own.
    assert_eq!(c.get("good").unwrap(), Some(b"GOOD".to_vec()));
}

/// A binary reply that does not start with the magic is named by its first byte, never
/// quoted: what follows a stray byte may be other packets, values included (tester finding
/// hostile3 1: a planted secret and other keys' values reached the message). A text error
/// line (a server that speaks no binary) is still shown.
#[test]
fn binary_reply_without_the_magic_quotes_no_value() {
    let addr = binary_fake(|_, opcode, opaque, key| match (opcode, key) {
        (GET, b"stray") => {
            let mut r = vec![0x00];
            r.extend(packet(
                GET,
                0,
                opaque,
                5,
                &[0; 4],
                b"",
                b"session=SECRET-TOKEN",
            ));
            r
        }
        (GET, b"text") => b"SERVER_ERROR speaks text only\r\n".to_vec(),
        (GET, _) => packet(GET, 0, opaque, 5, &[0; 4], b"", b"GOOD"),
        _ => Vec::new(),
    });
    let c = fake_client(&addr, Protocol::Binary);
    let msg = protocol_detail("get", c.get("stray"));
    assert!(
        msg.contains("first byte (0x00) is not the magic 0x81") && !msg.contains("SECRET"),
        "{msg}"
    );
    let msg = protocol_detail("get", c.get("text"));
    assert!(
        msg.contains("a text reply: \"SERVER_ERROR speaks text only"),
        "{msg}"
    );
    assert_eq!(c.get("good").unwrap(), Some(b"GOOD".to_vec()));
}

#[test]
fn binary_gets_reply_without_a_cas_is_refused() {
    // CAS 0: no item has one (memcached's first CAS is 1).
    let addr = binary_fake(|_, opcode, opaque, key| match (opcode, key) {
        (GET, b"nocas") => packet(GET, 0, opaque, 0, &[0; 4], b"", b"V"),
        (GET, _) => packet(GET, 0, opaque, 7, &[0; 4], b"", b"V"),
        _ => Vec::new(),
    });
    let c = fake_client(&addr, Protocol::Binary);
    let msg = protocol_detail("gets", c.gets("nocas"));
    assert!(msg.contains("CAS"), "{msg}");
    // get does not ask for the CAS; a reply with one is taken.
    assert_eq!(c.get("nocas").unwrap(), Some(b"V".to_vec()));
    let item = c.gets("hascas").unwrap().unwrap();
    assert_eq!((item.value.to_vec(), item.cas), (b"V".to_vec(), Some(7)));
}

#[test]
fn binary_multi_get_names_an_unknown_status() {
    // GETKQ for "bada" answered with status 0x7777 and no key, under its own opaque.
    let addr = binary_fake(|_, opcode, opaque, key| match (opcode, key) {
        (GETKQ, b"bada") => packet(GETKQ, 0x7777, opaque, 0, &[], b"", b""),
        (GETKQ, k) => packet(GETKQ, 0, opaque, 3, &[0; 4], k, b"G"),
        (NOOP, _) => packet(NOOP, 0, opaque, 0, &[], b"", b""),
        _ => Vec::new(),
    });
    let c = fake_client(&addr, Protocol::Binary);
    let got = c.get_multi(&["good1", "bada"]);
    let e = got[1].as_ref().unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Server { .. }), "{msg}");
    assert!(msg.contains("status 0x7777"), "{msg}");
    assert!(!msg.contains("crossed") && !msg.ends_with(": "), "{msg}");
}

#[test]
fn binary_auth_status_without_text_names_the_status() {
    let addr = binary_fake(|_, opcode, opaque, _| packet(opcode, 0x20, opaque, 0, &[], b"", b""));
    let c = fake_client(&addr, Protocol::Binary);
    let e = c.get("k").unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Auth { .. }), "{msg}");
    assert!(msg.contains("status 0x20 (the server requires"), "{msg}");
    assert!(!msg.contains(":  "), "{msg}");
}

/// The opaque token (`O…`) of a meta request line, or "" without one.
fn opaque_token(line: &str) -> String {
    line.split_whitespace()
        .skip(2)
        .find(|t| t.starts_with('O'))
        .unwrap_or("")
        .to_owned()
}

/// A meta fake: `mg` answered by `answer(key, opaque token, line)`; `ms` by `store(O token)`.
fn meta_fake(
    answer: fn(&str, &str, &str) -> String,
    store: fn(&str) -> String,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    fake(16, move |_, line, w| {
        let line = String::from_utf8_lossy(line).into_owned();
        let mut t = line.split_whitespace();
        let cmd = t.next().unwrap_or("");
        let key = t.next().unwrap_or("").to_owned();
        let o = opaque_token(&line);
        let out = match cmd {
            "mg" => answer(&key, &o, &line),
            "ms" => store(&o),
            _ => return Then::Continue,
        };
        let _ = w.write_all(out.as_bytes());
        Then::Continue
    })
}

#[test]
fn meta_reply_naming_another_key_is_refused() {
    let (addr, _) = meta_fake(
        |key, o, line| {
            let quiet = line.split_whitespace().any(|t| t == "q");
            match key {
                "bada" => format!("VA 8 f0 kother {o}\r\nWRONGVAL\r\n"),
                "missa" => format!("EN kother {o}\r\n"),
                "twice" => format!("VA 1 f0 ktwice kxyz {o}\r\nT\r\n"),
                // "good x" in base64, and a plain key flagged b
                "b64other" => format!("VA 1 f0 b kZ29vZCB4 {o}\r\nX\r\n"),
                "flag-only" => format!("VA 1 f0 b kflag-only {o}\r\nX\r\n"),
                // The key named as it was sent (base64 with `b`, as memcached echoes it).
                _ if line.contains(" b ") => format!("VA 1 f0 b k{key} {o}\r\nB\r\n"),
                _ if quiet => format!("VA 1 f0 k{key} {o}\r\nG\r\n"),
                _ => format!("VA 1 f0 k{key} {o}\r\nG\r\n"),
            }
        },
        |o| format!("HD {o}\r\n"),
    );
    let c = fake_client(&addr, Protocol::Meta);
    let msg = protocol_detail("get", c.get("bada"));
    assert!(
        msg.contains("\"other\"") && msg.contains("\"bada\""),
        "{msg}"
    );
    let got = c.get_multi(&["good1", "bada", "good2"]);
    protocol_detail("get_multi", got.into_iter().nth(1).unwrap());
    protocol_detail("get (miss)", c.get("missa"));
    // hostile2 5: the key flag twice is said so (it named the same key twice).
    let msg = protocol_detail("k twice", c.get("twice"));
    assert!(msg.contains("key flag k 2 times"), "{msg}");
    // hostile3 6: a key flagged b is named decoded, or said not to be base64.
    let msg = protocol_detail("b64", c.get("b64other"));
    assert!(
        msg.contains("reply for key \"good x\" (base64, flagged b)"),
        "{msg}"
    );
    let msg = protocol_detail("b only", c.get("flag-only"));
    assert!(
        msg.contains("\"flag-only\" (flagged b, but not base64)"),
        "{msg}"
    );
    // A reply naming the key asked for is taken (plain, and base64 for a key with a space).
    assert_eq!(c.get("good").unwrap(), Some(b"G".to_vec()));
    for r in c.get_multi(&["good1", "good2"]) {
        assert_eq!(r.unwrap().unwrap().value, b"G");
    }
    assert_eq!(c.get(b"sp ace".as_slice()).unwrap(), Some(b"B".to_vec()));
}

#[test]
fn meta_errors_show_the_reply_line_and_the_command() {
    let (addr, _) = meta_fake(
        |key, o, _| match key {
            "wrongo" => "VA 1 f0 O77777\r\nX\r\n".to_string(),
            "noo" => "EN\r\n".to_string(),
            _ => format!("HD f0 c5 {o}\r\n"),
        },
        |o| format!("EN {o}\r\n"),
    );
    let c = fake_client(&addr, Protocol::Meta);
    let msg = protocol_detail("set", c.set("k", b"v", 0));
    assert!(
        msg.contains("unexpected reply to ms (set): \"EN O"),
        "{msg}"
    );
    no_debug_dump(&msg);
    let msg = protocol_detail("get wrong O", c.get("wrongo"));
    assert!(msg.contains("reply with opaque 77777"), "{msg}");
    no_debug_dump(&msg);
    let msg = protocol_detail("get no O", c.get("noo"));
    assert!(msg.contains("reply without an opaque"), "{msg}");
    no_debug_dump(&msg);
    let msg = protocol_detail("get HD", c.gets("hd"));
    assert!(
        msg.contains("unexpected reply to mg (gets): \"HD f0 c5 O"),
        "{msg}"
    );
    no_debug_dump(&msg);
}

#[test]
fn text_errors_show_the_reply_line_and_the_command() {
    let (addr, _) = fake(16, |_, line, w| {
        let out: &[u8] = if line.starts_with(b"set ") {
            b""
        } else if line.starts_with(b"v\r\n") {
            // The data line of the set: a stray value where STORED belongs.
            b"VALUE otherkey 0 1\r\nx\r\nEND\r\n"
        } else if line.starts_with(b"gat ") {
            b"ERROR\r\n"
        } else {
            return Then::Continue;
        };
        let _ = w.write_all(out);
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Text);
    let msg = protocol_detail("set", c.set("k", b"v", 0));
    assert!(
        msg.contains("unexpected reply to set: \"VALUE otherkey 0 1\""),
        "{msg}"
    );
    no_debug_dump(&msg);
    let e = c.gat("a", 10).unwrap_err();
    assert!(e.to_string().contains("did not understand gat"), "{e}");
}

#[test]
fn text_reply_sent_twice_is_never_the_next_calls_value() {
    // Each reply goes out again in the same write as the next one: the copy arrives with
    // the next request's answer. The server's nth answer on a connection is "v<n>".
    let previous: Mutex<HashMap<usize, Vec<u8>>> = Mutex::default();
    let count = AtomicU64::new(0);
    let (addr, _) = fake(16, move |conn, line, w| {
        if !line.starts_with(b"get ") {
            return Then::Continue;
        }
        let keys: Vec<String> = String::from_utf8_lossy(&line[4..])
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let n = count.fetch_add(1, Ordering::SeqCst);
        let mut reply = Vec::new();
        for k in &keys {
            let v = format!("v{n}");
            reply.extend_from_slice(format!("VALUE {k} 0 {}\r\n{v}\r\n", v.len()).as_bytes());
        }
        reply.extend_from_slice(b"END\r\n");
        let mut previous = previous.lock().unwrap();
        let mut out = previous.remove(&conn).unwrap_or_default();
        out.extend_from_slice(&reply);
        previous.insert(conn, reply);
        let _ = w.write_all(&out);
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Text);
    let own = |j: u64| Some(format!("v{j}").into_bytes());
    let mut refused = 0;
    // Every call sends one `get` line: call j's own answer is "v<j>".
    for j in (0..12).step_by(2) {
        match c.get("user") {
            Ok(v) => assert_eq!(v, own(j), "call {j}: another call's value"),
            Err(e) => {
                assert!(matches!(e, Error::Protocol { .. }), "{e}");
                refused += 1;
            }
        }
        let got = c.get_multi(&["user", "other"]);
        let mut failed = false;
        for (k, r) in ["user", "other"].iter().zip(got) {
            match r {
                Ok(v) => assert_eq!(
                    v.map(|i| i.value.to_vec()),
                    own(j + 1),
                    "call {}: {k} not its own answer",
                    j + 1
                ),
                Err(e) => {
                    assert!(matches!(e, Error::Protocol { .. }), "{e}");
                    failed = true;
                }
            }
        }
        refused += usize::from(failed);
    }
    assert!(refused >= 3, "the copies were refused ({refused})");
}

/// The requests held by [`crossing`], by connection, and the signal that one came.
type Held = (Mutex<HashMap<usize, Vec<u8>>>, std::sync::Condvar);

/// Two requests, one per connection, held until both have come; each connection is then
/// answered with the other's reply (a pooling proxy that crossed them): `answer(request of
/// the other connection)` is written to this one.
fn crossing<F>(answer: F) -> impl Fn(usize, Vec<u8>) -> Vec<u8> + Send + Sync + 'static
where
    F: Fn(&[u8]) -> Vec<u8> + Send + Sync + 'static,
{
    let held: std::sync::Arc<Held> = Default::default();
    move |conn, request| {
        let (lock, cv) = &*held;
        let mut m = lock.lock().unwrap();
        m.insert(conn, request.clone());
        cv.notify_all();
        let (m, _) = cv
            .wait_timeout_while(m, std::time::Duration::from_secs(5), |m| m.len() < 2)
            .unwrap();
        match m.iter().find(|(c, _)| **c != conn) {
            Some((_, other)) => answer(other),
            None => answer(&request),
        }
    }
}

/// Two clients (one connection each) read "alice" and "bob" at once; the fake crosses the
/// replies. Each call must get its own value or a protocol error, never the other's.
fn crossed_reads_are_refused(addr: &str, p: Protocol) {
    let (a, b) = (fake_client(addr, p), fake_client(addr, p));
    let (ra, rb) = std::thread::scope(|s| {
        let ta = s.spawn(|| a.get("alice"));
        let tb = s.spawn(|| b.get("bob"));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    for (key, r) in [("alice", ra), ("bob", rb)] {
        match r {
            Ok(v) => assert_eq!(
                v,
                Some(format!("{key}-secret").into_bytes()),
                "{p:?}: {key} got another key's value"
            ),
            Err(e) => assert!(matches!(e, Error::Protocol { .. }), "{p:?} {key}: {e}"),
        }
    }
}

/// Tester finding faults 1: every connection numbered its requests from 1, and a meta or
/// binary single get's reply names no key, so a reply crossed onto another connection
/// carried a tag that connection was waiting for: `get("alice")` returned bob's value.
#[test]
fn a_reply_crossed_onto_another_connection_is_never_its_value() {
    let cross = crossing(|line| {
        let line = String::from_utf8_lossy(line).into_owned();
        let key = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let o = opaque_token(&line);
        let value = format!("{key}-secret");
        format!("VA {} f0 {o}\r\n{value}\r\n", value.len()).into_bytes()
    });
    let (addr, _) = fake(4, move |conn, line, w| {
        if line.starts_with(b"mg ") {
            let _ = w.write_all(&cross(conn, line.to_vec()));
        }
        Then::Continue
    });
    crossed_reads_are_refused(&addr, Protocol::Meta);

    // Binary: the request header and key, as the reply to build for the other connection.
    let cross = crossing(|req| {
        let opaque = u32::from_be_bytes([req[12], req[13], req[14], req[15]]);
        let key = &req[24..];
        let value = [key, b"-secret"].concat();
        packet(GET, 0, opaque, 7, &[0; 4], b"", &value)
    });
    let addr = binary_fake(move |conn, opcode, opaque, key| {
        let mut req = vec![0x80, opcode, 0, 0];
        req.extend_from_slice(&[0; 8]);
        req.extend_from_slice(&opaque.to_be_bytes());
        req.extend_from_slice(&[0; 8]);
        req.extend_from_slice(key);
        cross(conn, req)
    });
    crossed_reads_are_refused(&addr, Protocol::Binary);
}

/// Tester finding faults 2: a copy of the reply with the right tag and another value, sent
/// just before the real one, was taken as the value on meta and binary (text refused it):
/// bytes after the last reply are a protocol error on every protocol.
#[test]
fn a_second_reply_read_with_the_answer_fails_the_call_on_every_protocol() {
    let (addr, _) = meta_fake(
        |key, o, _| {
            let wrong = format!("VA 5 f0 c42 {o}\r\nWRONG\r\n");
            let value = format!("{key}-own");
            format!("{wrong}VA {} f0 c43 {o}\r\n{value}\r\n", value.len())
        },
        |o| format!("HD {o}\r\n"),
    );
    let c = fake_client(&addr, Protocol::Meta);
    protocol_detail("meta get", c.get("k"));
    protocol_detail("meta gets", c.gets("k"));
    let addr = binary_fake(|_, opcode, opaque, _| {
        let mut out = packet(opcode, 0, opaque, 42, &[0; 4], b"", b"WRONG");
        out.extend(packet(opcode, 0, opaque, 43, &[0; 4], b"", b"k-own"));
        out
    });
    let c = fake_client(&addr, Protocol::Binary);
    protocol_detail("binary get", c.get("k"));
    protocol_detail("binary gets", c.gets("k"));
    let (addr, _) = fake(4, |_, line, w| {
        if line.starts_with(b"get") {
            let _ = w.write_all(b"VALUE k 0 5\r\nWRONG\r\nEND\r\nVALUE k 0 5\r\nk-own\r\nEND\r\n");
        }
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Text);
    protocol_detail("text get", c.get("k"));
}

/// Tester finding faults 3: memcached run with `-C` answers `gets` with CAS 0, which no `cas`
/// can use: binary refused it, text and meta handed it back. Now refused on all three.
#[test]
fn a_cas_of_0_from_memcached_without_cas_is_refused_on_every_protocol() {
    let mc = common::Memcached::start(&["-C"]);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = mcpool::Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .build()
            .unwrap();
        let key = common::unique("cas0");
        assert!(c.set(&key, b"x", 0).unwrap().is_stored());
        assert_eq!(c.get(&key).unwrap().as_deref(), Some(&b"x"[..]), "{p:?}");
        let msg = protocol_detail("gets", c.gets(&key));
        assert!(msg.contains("-C"), "{p:?}: {msg}");
        let got = c.gets_multi(&[key.as_str()]);
        assert!(
            matches!(got[0], Err(Error::Protocol { .. })),
            "{p:?}: gets_multi {:?}",
            got[0]
        );
    }
}

/// Tester finding protocols 1: a quiet `mg`'s reply carrying a later request's tag was taken
/// for that later key (a miss, whose quiet request sends nothing) and the key asked read as a
/// miss. A multi-get's requests now ask each reply to name its key, and a reply naming
/// another key, or none, is a protocol error.
#[test]
fn a_meta_reply_under_a_later_keys_tag_is_never_that_keys_value() {
    /// The number of an `O<n>` token.
    fn tag(o: &str) -> u64 {
        o.trim_start_matches('O').parse().unwrap()
    }
    // `bad` is answered under the tag of the next request (`nothere`, a quiet miss).
    let (addr, _) = meta_fake(
        |key, o, line| {
            let quiet = line.split_whitespace().any(|t| t == "q");
            let k = if line.split_whitespace().any(|t| t == "k") {
                format!(" k{key}")
            } else {
                String::new()
            };
            match key {
                "bad" => format!("VA 3 f0{k} O{}\r\nabc\r\n", tag(o) + 1),
                "nothere" if quiet => String::new(),
                "nothere" => format!("EN{k} {o}\r\n"),
                _ => format!("VA 4 f0{k} {o}\r\n{}\r\n", &key[..4]),
            }
        },
        |o| format!("HD {o}\r\n"),
    );
    let c = fake_client(&addr, Protocol::Meta);
    for _ in 0..3 {
        let got = c.get_multi(&["good1", "bad", "nothere", "good2"]);
        assert!(
            !got.iter()
                .any(|r| matches!(r, Ok(Some(i)) if i.value == b"abc")),
            "{got:?}"
        );
        protocol_detail("the crossed reply", got.into_iter().nth(2).unwrap());
    }
    // Real keys still read, one and many.
    assert_eq!(c.get("good1").unwrap(), Some(b"good".to_vec()));
    let got = c.get_multi(&["good1", "nothere", "good2"]);
    assert_eq!(got[0].as_ref().unwrap().as_ref().unwrap().value, b"good");
    assert!(matches!(got[1], Ok(None)), "{:?}", got[1]);
    assert_eq!(got[2].as_ref().unwrap().as_ref().unwrap().value, b"good");

    // A server that does not name the key a multi-get's reply answers fails the call.
    let (addr, _) = meta_fake(
        |key, o, _| format!("VA 4 f0 {o}\r\n{}\r\n", &key[..4]),
        |o| format!("HD {o}\r\n"),
    );
    let c = fake_client(&addr, Protocol::Meta);
    let msg = protocol_detail(
        "a reply without its key",
        c.get_multi(&["good1", "good2"]).remove(0),
    );
    assert!(msg.contains("without its key"), "{msg}");
    assert_eq!(c.get("good1").unwrap(), Some(b"good".to_vec()));
}

/// Tester finding protocols 2: a text store batch answered with one reply twice took every
/// later reply for the item before it (an `add` refused reported `Stored`). Bytes read past
/// a batch's last reply now fail every item of the batch; nothing is reported stored.
#[test]
fn a_store_batch_answered_with_a_reply_twice_reports_no_outcome() {
    // Replies are held until the last item's data line, then written in one go, so the client
    // reads the duplicate with the replies it waits for.
    let pending = Mutex::new((Vec::<u8>::new(), String::new(), 0usize));
    let (addr, _) = fake(4, move |_, line, w| {
        let text = String::from_utf8_lossy(line).into_owned();
        let mut p = pending.lock().unwrap();
        let mut t = text.split_whitespace();
        match (t.next(), t.next()) {
            (Some("add" | "set"), Some(key)) => p.1 = key.to_owned(),
            (Some("get"), _) => {
                let _ = w.write_all(b"END\r\n");
            }
            _ => {
                let reply: &[u8] = match p.1.as_str() {
                    "bad" => b"STORED\r\nSTORED\r\n",
                    "old" => b"NOT_STORED\r\n",
                    _ => b"STORED\r\n",
                };
                p.0.extend_from_slice(reply);
                p.2 += 1;
                if p.2 == 3 {
                    let _ = w.write_all(&std::mem::take(&mut p.0));
                    p.2 = 0;
                }
            }
        }
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Text);
    let items = [
        mcpool::SetItem::new(b"new", b"1", 0),
        mcpool::SetItem::new(b"bad", b"2", 0),
        mcpool::SetItem::new(b"old", b"3", 0),
    ];
    let got = c.store_multi_items(mcpool::StoreCommand::Add, &items);
    assert_eq!(got.len(), 3);
    for r in got {
        protocol_detail("an outcome of the batch", r);
    }
    // The connection was not kept: the next call reads a reply of its own.
    assert_eq!(c.get("any").unwrap(), None);
}

/// Tester finding protocols 4: a text `set` answered `EXISTS`, or an `add` answered
/// `NOT_FOUND` (answers only a `cas` gets), were outcomes; they are protocol errors. A meta
/// reply with a flag twice (`f0 f8`) is refused too: which one is meant?
#[test]
fn outcomes_memcached_never_gives_are_protocol_errors() {
    let (addr, _) = fake(4, |_, line, w| {
        let reply: &[u8] = match line.split(|&b| b == b' ').next().unwrap_or_default() {
            b"set" => b"EXISTS\r\n",
            b"add" => b"NOT_FOUND\r\n",
            b"cas" => b"NOT_FOUND\r\n",
            _ => return Then::Continue,
        };
        let _ = w.write_all(reply);
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Text);
    protocol_detail("set answered EXISTS", c.set("k", b"v", 0));
    protocol_detail("add answered NOT_FOUND", c.add("k", b"v", 0));
    assert_eq!(
        c.cas("k", b"v", 0, 7).unwrap(),
        mcpool::StoreOutcome::NotFound
    );
    let (addr, _) = meta_fake(
        |_, o, _| format!("VA 1 f0 f8 {o}\r\nx\r\n"),
        |o| format!("HD {o}\r\n"),
    );
    protocol_detail("a flag twice", fake_client(&addr, Protocol::Meta).get("k"));
}

/// Tester finding hostile2 3: on meta and binary a `set` (an `add`, `append`, ...) answered
/// "exists" was a CAS conflict (`false`; Python's `append` then called it a bug of the
/// binding), where text refuses it. Memcached answers "exists" only to a `cas`, and on
/// binary an `add` of a present key.
#[test]
fn exists_to_a_store_without_cas_is_a_protocol_error_on_meta_and_binary() {
    let (addr, _) = meta_fake(|_, o, _| format!("EN {o}\r\n"), |o| format!("EX {o}\r\n"));
    let c = fake_client(&addr, Protocol::Meta);
    protocol_detail("meta set answered EX", c.set("k", b"v", 0));
    protocol_detail("meta add answered EX", c.add("k", b"v", 0));
    protocol_detail("meta append answered EX", c.append("k", b"v"));
    assert_eq!(
        c.cas("k", b"v", 0, 7).unwrap(),
        mcpool::StoreOutcome::Exists
    );
    let got = c.set_multi(&[("a", &b"1"[..]), ("b", &b"2"[..])], 0);
    assert!(format!("{got:?}").contains("Protocol"), "{got:?}");
    let addr = binary_fake(|_, opcode, opaque, _| match opcode {
        NOOP => packet(NOOP, 0, opaque, 0, b"", b"", b""),
        _ => packet(opcode, 0x02, opaque, 0, b"", b"", b"Data exists for key."),
    });
    let c = fake_client(&addr, Protocol::Binary);
    protocol_detail("binary set answered exists", c.set("k", b"v", 0));
    protocol_detail("binary append answered exists", c.append("k", b"v"));
    protocol_detail("binary replace answered exists", c.replace("k", b"v", 0));
    // memcached's own answer to an add of a present key
    assert_eq!(
        c.add("k", b"v", 0).unwrap(),
        mcpool::StoreOutcome::NotStored
    );
    assert_eq!(
        c.cas("k", b"v", 0, 7).unwrap(),
        mcpool::StoreOutcome::Exists
    );
}

/// Tester finding protocols 3: binary framing errors were worded as text ones ("malformed
/// reply line", the header shown as text), and a reply repeating an answered opaque said it
/// answered "no pending request" while quoting a range that held it.
#[test]
fn binary_errors_are_worded_for_packets() {
    let addr = binary_fake(|_, opcode, opaque, _| {
        // Key length 9 in a body of 4.
        let mut p = packet(opcode, 0, opaque, 1, &[0; 4], b"", b"");
        p[3] = 9;
        p
    });
    let msg = protocol_detail("a header whose lengths do not add up", {
        fake_client(&addr, Protocol::Binary).get("k")
    });
    assert!(
        msg.contains("malformed response header") && msg.contains("81 00 00 09"),
        "{msg}"
    );
    // Each GETKQ answered twice: the copy repeats an answered opaque.
    let addr = binary_fake(|_, opcode, opaque, key| {
        if opcode == NOOP {
            return packet(NOOP, 0, opaque, 0, &[], b"", b"");
        }
        let one = packet(opcode, 0, opaque, 1, &[0; 4], key, b"v");
        [one.clone(), one].concat()
    });
    let got = fake_client(&addr, Protocol::Binary).get_multi(&["a", "b", "c"]);
    let msg = protocol_detail("a reply twice", got.into_iter().nth(1).unwrap());
    assert!(msg.contains("already answered"), "{msg}");
}

/// A binary fake that answers every request as memcached would, but puts the reply to a key
/// holding "bad" under the next request's tag (a proxy that shifts replies): counters
/// `badc`/`goodc` are 10, `bad1` exists, every other key is missing; quiet requests that
/// succeed get no reply.
fn shifting_binary_fake() -> String {
    const INCREMENT: u8 = 0x05;
    const TOUCH: u8 = 0x1c;
    const ADDQ: u8 = 0x12;
    const VERSION: u8 = 0x0b;
    binary_fake(move |_, opcode, opaque, key| {
        let tag = if key.windows(3).any(|w| w == b"bad") {
            opaque + 1
        } else {
            opaque
        };
        let exists = matches!(key, b"bad1" | b"badc" | b"goodc");
        match opcode {
            NOOP => packet(NOOP, 0, opaque, 0, b"", b"", b""),
            VERSION => packet(VERSION, 0, opaque, 0, b"", b"", b"1.6.18"),
            INCREMENT if exists => {
                let delta = if key == b"badc" { 1u64 } else { 100 };
                packet(INCREMENT, 0, tag, 1, b"", b"", &(10 + delta).to_be_bytes())
            }
            TOUCH if exists => packet(TOUCH, 0, tag, 1, b"", b"", b""),
            ADDQ if exists => packet(ADDQ, 0x05, tag, 0, b"", b"", b"Not stored"),
            ADDQ => Vec::new(),
            _ => packet(opcode, 0x01, tag, 0, b"", b"", b"Not found"),
        }
    })
}

/// Tester finding hostile2 1: in a binary batch, a reply under the next request's tag made
/// the skipped request a success (a quiet one) and gave the next one another's answer (goodc
/// incremented to 11, badc's value; a missing key deleted and touched; an add refused
/// reported stored, one stored reported refused). The repeated tag that follows was seen,
/// but every item had its outcome. Now it fails every item of the batch.
#[test]
fn a_binary_batch_reply_under_the_next_requests_tag_fails_the_batch() {
    let c = fake_client(&shifting_binary_fake(), Protocol::Binary);
    let arith = c.arith_multi(true, &[("badc", 1u64), ("goodc", 100u64)]);
    let deleted = c.delete_multi(&["bad8", "good8"]);
    let touched = c.touch_multi(&[("bad1", 100u32), ("goodmiss", 100u32)]);
    let added = c.store_multi_items(
        mcpool::StoreCommand::Add,
        &[
            mcpool::SetItem::new(b"bad1", b"1", 0),
            mcpool::SetItem::new(b"good9", b"2", 0),
        ],
    );
    for (what, got) in [
        ("arith_multi", format!("{arith:?}")),
        ("delete_multi", format!("{deleted:?}")),
        ("touch_multi", format!("{touched:?}")),
        ("add", format!("{added:?}")),
    ] {
        assert!(
            !got.contains("Ok("),
            "{what}: an outcome from a shifted reply: {got}"
        );
        assert!(!got.contains("internal"), "{what}: {got}");
        assert!(got.contains("Protocol"), "{what}: {got}");
    }
    // The connection was not kept: the next call reads its own reply.
    assert_eq!(c.incr("goodc", 100).unwrap(), Some(110));
}

/// hostile2 1 on meta: a quiet `md` answered `NF` under the last request's tag made it a
/// success (deleted) and the last one `NF`; the last one's own reply, read after, now fails
/// the batch.
#[test]
fn a_meta_delete_batch_reply_under_the_next_tag_fails_the_batch() {
    let (addr, _) = fake(4, |_, line, w| {
        let line = String::from_utf8_lossy(line).into_owned();
        let mut t = line.split_whitespace();
        let (cmd, key) = (t.next().unwrap_or(""), t.next().unwrap_or(""));
        let o: u64 = opaque_token(&line)
            .trim_start_matches('O')
            .parse()
            .unwrap_or(0);
        let o = if key.contains("bad") { o + 1 } else { o };
        let out = match cmd {
            "md" => format!("NF O{o}\r\n"),
            "mn" => "MN\r\n".to_owned(),
            _ => return Then::Continue,
        };
        let _ = w.write_all(out.as_bytes());
        Then::Continue
    });
    let c = fake_client(&addr, Protocol::Meta);
    let got = c.delete_multi(&["bad8", "good8"]);
    assert_eq!(got.len(), 2);
    for r in got {
        protocol_detail("a delete of the shifted batch", r);
    }
}

/// Tester finding hostile2 2: a binary reply whose body length was one short (or long) gave
/// a handed-over read the value cut short, or with the next reply's first byte on its end:
/// the pipeline that serves handed-over reads kept the replies read before the error the
/// misframing caused. Every reader gets its own value or an error.
#[test]
fn a_misframed_binary_reply_is_never_a_handed_over_value() {
    for delta in [-1i64, 1] {
        let addr = binary_fake(move |_, opcode, opaque, key| {
            let value = format!("value-of-{}", String::from_utf8_lossy(key)).into_bytes();
            let mut p = packet(opcode, 0, opaque, 1, &[0, 0, 0, 0], b"", &value);
            if key == b"bad1" {
                let len = u32::from_be_bytes([p[8], p[9], p[10], p[11]]) as i64 + delta;
                p[8..12].copy_from_slice(&(len as u32).to_be_bytes());
            }
            p
        });
        let c = mcpool::Client::builder()
            .server(&addr)
            .protocol(Protocol::Binary)
            .max_size(1)
            .failure_limit(1_000_000)
            .io_timeout(std::time::Duration::from_millis(300))
            .build()
            .unwrap();
        let wrong = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for i in 0..6 {
                let (c, wrong) = (&c, &wrong);
                s.spawn(move || {
                    let key = if i == 0 {
                        "bad1"
                    } else {
                        ["good1", "good2"][i % 2]
                    };
                    for _ in 0..30 {
                        if let Ok(Some(v)) = c.get(key) {
                            if v != format!("value-of-{key}").into_bytes() {
                                wrong.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(wrong.into_inner(), 0, "body length {delta:+}: wrong values");
    }
}

/// Tester finding retest23 1: a binary batch whose closing NOOP came before a request's reply
/// (the reply dropped) counted that request a success, as when batches were quiet: an add of
/// a present key reported stored, a delete of a missing key deleted. It is an error now.
#[test]
fn a_binary_batch_closed_before_a_reply_fails_the_unanswered() {
    const ADD: u8 = 0x02;
    const INCREMENT: u8 = 0x05;
    let addr = binary_fake(|_, opcode, opaque, key| {
        if key.starts_with(b"drop") {
            return Vec::new(); // no reply at all
        }
        match opcode {
            NOOP => packet(NOOP, 0, opaque, 0, b"", b"", b""),
            ADD => packet(ADD, 0x02, opaque, 0, b"", b"", b"Data exists for key."),
            INCREMENT => packet(INCREMENT, 0, opaque, 1, b"", b"", &7u64.to_be_bytes()),
            _ => packet(opcode, 0x01, opaque, 0, b"", b"", b"Not found"),
        }
    });
    let c = fake_client(&addr, Protocol::Binary);
    let added = c.store_multi_items(
        mcpool::StoreCommand::Add,
        &[
            mcpool::SetItem::new(b"k1", b"1", 0),
            mcpool::SetItem::new(b"drop2", b"2", 0),
        ],
    );
    assert_eq!(added[0].as_ref().unwrap(), &mcpool::StoreOutcome::NotStored);
    let msg = protocol_detail(
        "the add without a reply",
        added[1].as_ref().map(|_| ()).map_err(Clone::clone),
    );
    assert!(msg.contains("before the reply"), "{msg}");
    let deleted = c.delete_multi(&["drop1", "k2"]);
    protocol_detail(
        "the delete without a reply",
        deleted.into_iter().next().unwrap(),
    );
    let counted = c.arith_multi(true, &[("k3", 1u64), ("drop4", 1u64)]);
    assert_eq!(counted[0].as_ref().unwrap(), &Some(7));
    let msg = format!("{:?}", counted[1]);
    assert!(
        msg.contains("Protocol") && !msg.contains("internal"),
        "{msg}"
    );
    assert!(msg.contains("127.0.0.1"), "the server is named: {msg}");
}

/// A noreply batch whose store is answered `ERROR` or `CLIENT_ERROR` before the `version`
/// that closes it: the error says a store of the batch was refused and the others' outcome
/// is unknown, never that the server did not understand `version` (tester finding hostile3
/// 5).
#[test]
fn a_store_refused_in_a_noreply_batch_is_named_as_such() {
    for refusal in ["ERROR", "CLIENT_ERROR bad data chunk"] {
        let answer = format!("{refusal}\r\n");
        let (addr, _) = fake(4, move |_, line, w| {
            if line.starts_with(b"set bad") {
                let _ = w.write_all(answer.as_bytes());
            } else if line.starts_with(b"version") {
                let _ = w.write_all(b"VERSION 1.6.0\r\n");
            }
            Then::Continue
        });
        let c = fake_client(&addr, Protocol::Text);
        let e = c
            .set_multi_noreply(&[("bad5", "a"), ("good5", "b")], 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a store of the batch was refused")
                && !e.contains("did not understand version"),
            "{refusal}: {e}"
        );
    }
}
