//! Fail-open (`fail_open`) and the per-operation hook (`on_operation`), against real memcached
//! processes that are killed or stopped (SIGSTOP) and a deliberately broken fake server.
mod common;

use common::fake::{fake, Then};
use common::{unique, wait_until, Memcached};
use mcpool::error::Class;
use mcpool::trace::{Op, OpOutcome, OpRecord};
use mcpool::{
    Client, ClientBuilder, Compress, Error, Kind, Protocol, StoreCommand, StoreOutcome, Value,
};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An owned copy of a record.
#[derive(Clone, Debug)]
struct Rec {
    op: Op,
    keys: usize,
    hits: usize,
    server: Option<String>,
    protocol: Protocol,
    duration: Duration,
    outcome: OpOutcome,
    error: Option<String>,
    sent: u64,
    received: u64,
}

impl From<&OpRecord<'_>> for Rec {
    fn from(r: &OpRecord<'_>) -> Rec {
        Rec {
            op: r.op,
            keys: r.keys,
            hits: r.hits,
            server: r.server.map(str::to_owned),
            protocol: r.protocol,
            duration: r.duration,
            outcome: r.outcome,
            error: r.error.map(|e| e.to_string()),
            sent: r.bytes_sent,
            received: r.bytes_received,
        }
    }
}

type Log = Arc<Mutex<Vec<Rec>>>;

fn traced(b: ClientBuilder) -> (Client, Log) {
    let log: Log = Arc::default();
    let l = log.clone();
    let c = b
        .on_operation(move |r| l.lock().unwrap().push(r.into()))
        .build()
        .unwrap();
    (c, log)
}

fn take(log: &Log) -> Vec<Rec> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn quick(addrs: &[String]) -> ClientBuilder {
    Client::builder()
        .servers(addrs)
        .min_idle(0)
        .connect_timeout(Duration::from_millis(300))
        .io_timeout(Duration::from_millis(300))
        .operation_timeout(Some(Duration::from_secs(2)))
        .retry_timeout(Duration::from_secs(30))
}

/// Every kind of call, against a server that is down: with fail_open, no error reaches the
/// caller; reads are misses, writes not stored; the metrics count them.
fn assert_fails_open(c: &Client, keys: &[String]) {
    for k in keys {
        assert_eq!(c.get(k).unwrap(), None, "get {k}");
        assert_eq!(c.gets(k).unwrap(), None);
        assert_eq!(c.set(k, b"v", 0).unwrap(), StoreOutcome::NotStored);
        assert_eq!(c.add(k, b"v", 0).unwrap(), StoreOutcome::NotStored);
        assert!(!c.delete(k).unwrap());
        assert!(!c.touch(k, 10).unwrap());
        assert_eq!(c.incr(k, 1).unwrap(), None);
        assert_eq!(c.decr(k, 1).unwrap(), None);
    }
    for r in c.get_multi(keys) {
        assert_eq!(r.unwrap(), None);
    }
    let items: Vec<(&String, &[u8])> = keys.iter().map(|k| (k, &b"v"[..])).collect();
    for r in c.set_multi(&items, 0) {
        assert_eq!(r.unwrap(), StoreOutcome::NotStored);
    }
    for r in c.delete_multi(keys) {
        assert!(!r.unwrap());
    }
}

#[test]
fn fail_open_under_kill_gives_misses_and_counts_them() {
    let mut mc = Memcached::start(&[]);
    let addr = mc.addr();
    let (c, log) = traced(quick(std::slice::from_ref(&addr)).fail_open(true));
    let k = unique("fo-kill");
    assert_eq!(c.set(&k, b"here", 0).unwrap(), StoreOutcome::Stored);
    assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"here"[..]));
    mc.kill();
    let keys: Vec<String> = (0..5).map(|i| format!("{k}-{i}")).collect();
    // Dead (refused, then marked dead): zero errors to the caller.
    assert_fails_open(&c, &keys);
    let m = &c.metrics()[0];
    // Per key: get, gets; 5 keys of get_multi.
    assert_eq!(m.fail_open_misses, 2 * 5 + 5, "{m:?}");
    // Per key: set, add, delete, touch, incr, decr; 5 of set_multi, 5 of delete_multi.
    assert_eq!(m.fail_open_not_stored, 6 * 5 + 5 + 5, "{m:?}");
    assert!(m.ejections >= 1, "{m:?}");
    // The values in the metrics' vector (the C numbering) at the end.
    let values = m.values((0, 0));
    let at = |name: &str| {
        let metrics = &mcpool::metrics::METRICS;
        metrics.iter().position(|x| x.name == name).unwrap()
    };
    assert_eq!(values[at("fail_open_misses")], m.fail_open_misses);
    assert_eq!(values[at("fail_open_not_stored")], m.fail_open_not_stored);
    // The hook saw every one of them as failed open, with the server's label.
    let recs = take(&log);
    let open: Vec<&Rec> = recs
        .iter()
        .filter(|r| matches!(r.outcome, OpOutcome::FailedOpen(_)))
        .collect();
    assert!(
        open.len() >= 8 * 5 + 3,
        "{} failed open: {recs:#?}",
        open.len()
    );
    for r in &open {
        assert_eq!(r.server.as_deref(), Some(addr.as_str()), "{r:?}");
        let class = r.outcome.error_class().unwrap();
        assert!(matches!(class, Class::Connection | Class::Timeout), "{r:?}");
        assert!(r.error.is_some());
    }
    assert!(open.iter().any(|r| r.op == Op::GetMulti && r.keys == 5));
    assert!(open.iter().any(|r| r.op == Op::Incr));
}

#[test]
fn fail_open_under_sigstop_gives_misses_within_the_deadline() {
    let mc = Memcached::start(&[]);
    let addr = mc.addr();
    let c = quick(std::slice::from_ref(&addr))
        .fail_open(true)
        .failure_limit(1000)
        .build()
        .unwrap();
    let k = unique("fo-stop");
    assert_eq!(c.set(&k, b"v", 0).unwrap(), StoreOutcome::Stored);
    mc.freeze();
    let t0 = std::time::Instant::now();
    // A stopped server: every read and write times out, and fails open.
    assert_eq!(c.get(&k).unwrap(), None);
    assert_eq!(c.set(&k, b"w", 0).unwrap(), StoreOutcome::NotStored);
    assert!(!c.delete(&k).unwrap());
    let multi = c.get_multi(&[k.clone(), format!("{k}-2")]);
    assert!(multi.iter().all(|r| matches!(r, Ok(None))), "{multi:?}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    let m = &c.metrics()[0];
    assert_eq!(m.fail_open_misses, 3, "{m:?}");
    assert_eq!(m.fail_open_not_stored, 2, "{m:?}");
    assert!(m.timeouts >= 1, "{m:?}");
    mc.thaw();
    // Back: real answers again. On a fresh key: the set of `w` that timed out above was
    // already in the stopped server's socket buffer, and memcached may still apply it after
    // it wakes, after a newer set of the same key (a write that timed out may land late).
    let back = format!("{k}-back");
    wait_until("the server answers again", Duration::from_secs(10), || {
        c.set(&back, b"again", 0).ok() == Some(StoreOutcome::Stored)
    });
    assert_eq!(c.get(&back).unwrap().as_deref(), Some(&b"again"[..]));
}

#[test]
fn without_fail_open_the_same_outage_is_an_error() {
    let mut mc = Memcached::start(&[]);
    let addr = mc.addr();
    let c = quick(std::slice::from_ref(&addr)).build().unwrap();
    mc.kill();
    let k = unique("fo-off");
    let e = c.get(&k).unwrap_err();
    assert!(e.fails_open(), "{e:?}");
    assert!(c.set(&k, b"v", 0).is_err());
    assert!(c
        .get_multi(&[k.clone(), format!("{k}-2")])
        .iter()
        .all(Result::is_err));
    assert_eq!(c.metrics()[0].fail_open_misses, 0);
}

#[test]
fn fail_open_with_two_servers_keeps_the_live_ones_answers() {
    let live = Memcached::start(&[]);
    let mut dead = Memcached::start(&[]);
    let addrs = [live.addr(), dead.addr()];
    let c = quick(&addrs).fail_open(true).build().unwrap();
    let keys: Vec<String> = (0..40).map(|i| unique(&format!("fo-two-{i}"))).collect();
    for k in &keys {
        assert_eq!(c.set(k, k.as_bytes(), 0).unwrap(), StoreOutcome::Stored);
    }
    dead.kill();
    let got = c.get_multi(&keys);
    let mut on_live = 0;
    for (k, r) in keys.iter().zip(&got) {
        let r = r.as_ref().expect("no error with fail_open");
        if c.server_for(k).unwrap() == 0 {
            on_live += 1;
            assert_eq!(r.as_ref().map(|i| &i.value[..]), Some(k.as_bytes()));
        } else {
            assert!(r.is_none());
        }
    }
    assert!(on_live > 0 && on_live < keys.len());
    let m = c.metrics();
    assert_eq!(m[1].fail_open_misses as usize, keys.len() - on_live);
    assert_eq!(m[0].fail_open_misses, 0);
}

#[test]
fn incr_or_init_keeps_its_error_with_fail_open() {
    let mut mc = Memcached::start(&[]);
    let c = quick(&[mc.addr()]).fail_open(true).build().unwrap();
    mc.kill();
    // No miss to answer: the outage is the call's error (and not a made-up counter).
    let e = c.incr_or_init(unique("fo-ctr"), 1, 10, 0).unwrap_err();
    assert!(e.fails_open(), "{e:?}");
}

/// A deliberately broken fake server: every reply is garbage.
fn garbage_server() -> String {
    fake(16, |_, _, w| {
        let _ = w.write_all(b"GARBAGE NOT A REPLY\r\n");
        Then::Continue
    })
    .0
}

#[test]
fn protocol_violations_stay_errors_with_fail_open() {
    let addr = garbage_server();
    let (c, log) = traced(
        quick(std::slice::from_ref(&addr))
            .fail_open(true)
            .failure_limit(1000)
            .value_format(mcpool::ValueFormat::Libmemcached),
    );
    let k = unique("fo-garbage");
    let e = c.get(&k).unwrap_err();
    assert!(matches!(e, Error::Protocol { .. }), "{e:?}");
    assert!(!e.fails_open());
    assert!(matches!(c.set(&k, b"v", 0), Err(Error::Protocol { .. })));
    assert!(matches!(c.delete(&k), Err(Error::Protocol { .. })));
    let multi = c.get_multi(&[k.clone(), format!("{k}-2")]);
    assert!(
        multi
            .iter()
            .all(|r| matches!(r, Err(Error::Protocol { .. }))),
        "{multi:?}"
    );
    let m = &c.metrics()[0];
    assert_eq!((m.fail_open_misses, m.fail_open_not_stored), (0, 0));
    assert!(m.protocol_errors >= 4, "{m:?}");
    // The hook reports them as errors of the server-error class, never failed open.
    let recs = take(&log);
    assert!(recs.len() >= 4, "{recs:?}");
    for r in &recs {
        assert_eq!(r.outcome, OpOutcome::Error(Class::ServerError), "{r:?}");
        assert_eq!(r.server.as_deref(), Some(addr.as_str()));
        assert!(r.error.as_deref().unwrap().contains("protocol"), "{r:?}");
    }
}

#[test]
fn bad_keys_and_values_stay_errors_with_fail_open() {
    let mc = Memcached::start(&[]);
    let (c, log) = traced(quick(&[mc.addr()]).fail_open(true).max_value_size(16));
    assert!(matches!(c.get("bad key"), Err(Error::InvalidKey { .. })));
    assert!(matches!(
        c.set("k", [0u8; 17], 0),
        Err(Error::ValueTooLarge { .. })
    ));
    let recs = take(&log);
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert_eq!(recs[0].op, Op::Get);
    assert_eq!(recs[0].outcome, OpOutcome::Error(Class::ClientError));
    assert_eq!(recs[0].server, None);
    // The refused set deletes the key (no older value survives it), reported as its own
    // delete, before the set's own error.
    assert_eq!(recs[1].op, Op::Delete);
    assert_eq!(recs[2].op, Op::Set);
    assert_eq!(recs[2].outcome, OpOutcome::Error(Class::ClientError));
    assert_eq!(recs[2].server, None);
    // Every store path records its refused value the same way: the typed and per-call
    // compression paths returned the error with no record of their own (tester finding
    // observability 3: a set showed only its delete, an add or a cas nothing).
    let big = Value::Bytes(vec![0u8; 17]);
    let text = Value::Text("x".repeat(17));
    type Call<'a> = Box<dyn Fn() -> mcpool::Result<StoreOutcome> + 'a>;
    let calls: Vec<(Op, Call<'_>)> = vec![
        (Op::Set, Box::new(|| c.set_value("k", &big, 0))),
        (
            Op::Add,
            Box::new(|| c.store_value(StoreCommand::Add, "k", &text, 0)),
        ),
        (
            Op::Cas,
            Box::new(|| c.store_value(StoreCommand::Cas(7), "k", &big, 0)),
        ),
        (
            Op::Replace,
            Box::new(|| c.store_value_as(StoreCommand::Replace, "k", &big, 0, Compress::Never)),
        ),
        (
            Op::Add,
            Box::new(|| c.store_as(StoreCommand::Add, "k", [0u8; 17], 0, 0, Compress::Never)),
        ),
        (
            Op::Add,
            Box::new(|| {
                c.store_kind_as(
                    StoreCommand::Add,
                    "k",
                    Kind::Bytes,
                    &[0u8; 17],
                    0,
                    Compress::Auto,
                )
            }),
        ),
        (
            Op::Set,
            Box::new(|| {
                c.store_kind_as(
                    StoreCommand::Set,
                    "k",
                    Kind::Text,
                    &[b'x'; 17],
                    0,
                    Compress::Auto,
                )
            }),
        ),
    ];
    for (i, (op, call)) in calls.iter().enumerate() {
        assert!(
            matches!(call(), Err(Error::ValueTooLarge { .. })),
            "call {i}"
        );
        let recs = take(&log);
        let own = recs.last().unwrap_or_else(|| panic!("call {i}: no record"));
        assert_eq!(
            (own.op, own.server.as_deref()),
            (*op, None),
            "call {i}: {recs:?}"
        );
        assert_eq!(
            own.outcome,
            OpOutcome::Error(Class::ClientError),
            "call {i}"
        );
        assert!(
            own.error
                .as_deref()
                .unwrap()
                .contains("exceeds the item size limit"),
            "call {i}: {own:?}"
        );
        // a set's refusal deletes the key first (its own record); the others send nothing
        let before: Vec<Op> = recs[..recs.len() - 1].iter().map(|r| r.op).collect();
        let deletes = if *op == Op::Set {
            vec![Op::Delete]
        } else {
            vec![]
        };
        assert_eq!(before, deletes, "call {i}: {recs:?}");
    }
}

#[test]
fn the_hook_reports_each_exchange_with_its_fields() {
    let a = Memcached::start(&[]);
    let b = Memcached::start(&[]);
    let addrs = [a.addr(), b.addr()];
    let (c, log) = traced(quick(&addrs).protocol(Protocol::Meta));
    let k = unique("hook");
    // set: stored, bytes both ways, the key's server.
    assert_eq!(c.set(&k, b"hello", 0).unwrap(), StoreOutcome::Stored);
    let home = addrs[c.server_for(&k).unwrap()].clone();
    let r = take(&log);
    assert_eq!(r.len(), 1, "{r:?}");
    let set = &r[0];
    assert_eq!(set.op, Op::Set);
    assert_eq!((set.keys, set.hits, set.outcome), (1, 1, OpOutcome::Stored));
    assert_eq!(set.server.as_deref(), Some(home.as_str()));
    assert_eq!(set.protocol, Protocol::Meta);
    assert!(set.sent > k.len() as u64 + 5, "{set:?}");
    assert!(set.received > 0, "{set:?}");
    assert!(set.duration > Duration::ZERO && set.duration < Duration::from_secs(5));
    assert!(set.error.is_none());
    // get: a hit, then a miss.
    assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"hello"[..]));
    assert!(c.get(format!("{k}-none")).unwrap().is_none());
    let r = take(&log);
    assert_eq!(r.len(), 2, "{r:?}");
    assert_eq!(
        (r[0].op, r[0].outcome, r[0].hits),
        (Op::Get, OpOutcome::Hit, 1)
    );
    assert!(r[0].received >= 5, "{:?}", r[0]);
    assert_eq!(
        (r[1].op, r[1].outcome, r[1].hits),
        (Op::Get, OpOutcome::Miss, 0)
    );
    // add of an existing key: not stored.
    assert_eq!(c.add(&k, b"x", 0).unwrap(), StoreOutcome::NotStored);
    assert_eq!(take(&log)[0].outcome, OpOutcome::NotStored);
    // get_multi over both servers: one record per server, keys and hits split.
    let keys: Vec<String> = (0..20).map(|i| format!("{k}-m{i}")).collect();
    for kk in keys.iter().step_by(2) {
        c.set(kk, b"v", 0).unwrap();
    }
    take(&log);
    let got = c.get_multi(&keys);
    assert_eq!(got.iter().filter(|r| matches!(r, Ok(Some(_)))).count(), 10);
    let r = take(&log);
    assert_eq!(r.len(), 2, "one record per server: {r:?}");
    assert!(r.iter().all(|x| x.op == Op::GetMulti && x.error.is_none()));
    assert_eq!(r.iter().map(|x| x.keys).sum::<usize>(), 20);
    assert_eq!(r.iter().map(|x| x.hits).sum::<usize>(), 10);
    let mut servers: Vec<_> = r.iter().map(|x| x.server.clone().unwrap()).collect();
    servers.sort();
    let mut want = addrs.to_vec();
    want.sort();
    assert_eq!(servers, want);
    // delete, incr of a missing key, set_multi, version.
    assert!(c.delete(&k).unwrap());
    assert_eq!(c.incr(&k, 1).unwrap(), None);
    let r = take(&log);
    assert_eq!((r[0].op, r[0].outcome), (Op::Delete, OpOutcome::Hit));
    assert_eq!((r[1].op, r[1].outcome), (Op::Incr, OpOutcome::Miss));
    let items: Vec<(&String, &[u8])> = keys.iter().map(|x| (x, &b"w"[..])).collect();
    assert!(c.set_multi(&items, 0).iter().all(|r| r.is_ok()));
    let r = take(&log);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r
        .iter()
        .all(|x| x.op == Op::SetMulti && x.outcome == OpOutcome::Stored && x.hits == x.keys));
    assert_eq!(c.version().len(), 2);
    let r = take(&log);
    assert_eq!(r.len(), 2);
    assert!(r
        .iter()
        .all(|x| x.op == Op::Version && x.outcome == OpOutcome::Ok));
}

#[test]
fn the_hook_reports_errors_with_their_class() {
    let mut mc = Memcached::start(&[]);
    let addr = mc.addr();
    let (c, log) = traced(quick(std::slice::from_ref(&addr)));
    c.set("n", b"abc", 0).unwrap();
    // CLIENT_ERROR: incr of a non-number.
    assert!(c.incr("n", 1).is_err());
    mc.kill();
    assert!(c.get("n").is_err());
    let r = take(&log);
    let errs: Vec<&Rec> = r
        .iter()
        .filter(|x| matches!(x.outcome, OpOutcome::Error(_)))
        .collect();
    assert_eq!(errs.len(), 2, "{r:?}");
    assert_eq!(errs[0].outcome, OpOutcome::Error(Class::ClientError));
    assert_eq!(errs[0].op, Op::Incr);
    assert!(matches!(
        errs[1].outcome,
        OpOutcome::Error(Class::Connection | Class::Timeout)
    ));
    assert_eq!(errs[1].server.as_deref(), Some(addr.as_str()));
}

#[test]
fn fail_open_is_an_option_by_name() {
    let b = Client::builder().set("fail_open", "true").unwrap();
    assert!(b.config().fail_open);
    let e = Client::builder().set("fail_open", "maybe").unwrap_err();
    assert!(e.to_string().contains("fail_open"), "{e}");
    assert!(!Client::builder().config().fail_open);
}

/// What a read handed its sink.
#[derive(Default)]
struct Seen {
    values: Vec<(usize, Vec<u8>)>,
    results: Vec<(usize, mcpool::Result<bool>)>,
}

impl mcpool::sink::Sink for Seen {
    fn value(&mut self, i: usize, v: &[u8], _: u32, _: Option<u64>) -> mcpool::Result<()> {
        self.values.push((i, v.to_vec()));
        Ok(())
    }
    fn result(&mut self, i: usize, r: mcpool::Result<bool>) {
        self.results.push((i, r));
    }
}

/// A multi-key read of one key takes the single-key route (src/client/read.rs): on every
/// protocol it answers as the multi-key route did (value, flags, CAS unique, touch, miss, a
/// refused key, a dead server's error), and its records still name the multi-key call.
#[test]
fn a_multi_read_of_one_key_answers_and_records_as_a_multi_read() {
    let mc = Memcached::start(&[]);
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let (c, log) = traced(quick(&[mc.addr()]).protocol(protocol));
        let k = unique("one-multi");
        assert_eq!(c.set(&k, b"v1", 0).unwrap(), StoreOutcome::Stored);
        take(&log);
        let got = c.get_multi(&[&k]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].as_ref().unwrap().as_ref().unwrap().value, b"v1");
        let gets = c.gets_multi(&[&k]);
        let cas = gets[0].as_ref().unwrap().as_ref().unwrap().cas;
        assert_eq!(cas, c.gets(&k).unwrap().unwrap().cas, "{protocol:?}");
        assert!(cas.is_some_and(|v| v > 0), "{protocol:?}: {gets:?}");
        let mut touched = Seen::default();
        c.read(&[&k][..], false, Some(100), &mut touched);
        assert_eq!(touched.values, vec![(0, b"v1".to_vec())], "{protocol:?}");
        assert!(
            matches!(touched.results[..], [(0, Ok(true))]),
            "{protocol:?}"
        );
        assert!(matches!(c.get_multi(&[format!("{k}-none")])[0], Ok(None)));
        let mut seen = Vec::new();
        let each = c.get_multi_each(&[&k], |i, v, _| seen.push((i, v.to_vec())));
        assert!(matches!(each[0], Ok(true)), "{each:?}");
        assert_eq!(seen, vec![(0, b"v1".to_vec())]);
        let bad = c.get_multi(&["k".repeat(251)]);
        assert!(
            matches!(bad[0], Err(Error::InvalidKey { .. })),
            "{protocol:?} {bad:?}"
        );
        let r = take(&log);
        let ops: Vec<Op> = r.iter().map(|r| r.op).collect();
        assert_eq!(
            ops,
            [
                Op::GetMulti,
                Op::GetsMulti,
                Op::Gets,
                Op::GatMulti,
                Op::GetMulti,
                Op::GetMulti,
                Op::GetMulti
            ],
            "{protocol:?}: {r:#?}"
        );
        assert_eq!((r[0].keys, r[0].hits), (1, 1), "{:?}", r[0]);
        assert_eq!((r[4].keys, r[4].hits), (1, 0), "{:?}", r[4]);
    }
    // A killed server: the key's error, not a miss.
    let mut gone = Memcached::start(&[]);
    let c = quick(&[gone.addr()]).build().unwrap();
    gone.kill();
    assert!(c.get_multi(&["k"])[0].is_err());
}

/// Tester finding observe 1: a multi-get whose server sent one value, then stalled: under
/// fail_open the value is the caller's and a hit, the other keys fail-open misses (the hit
/// was counted nowhere); without it every key gets the error, and the record says no hit
/// (it said one, a value the caller never got).
#[test]
fn a_value_read_before_a_multi_get_failed_is_counted_as_the_caller_got_it() {
    // A deliberately broken fake server: one value, then silence.
    let (addr, _) = fake(16, |_, line, w| {
        if line.starts_with(b"get ") {
            let _ = w.write_all(b"VALUE k 0 5\r\nhello\r\n");
        }
        Then::Continue
    });
    let b = || {
        quick(std::slice::from_ref(&addr))
            .io_timeout(Duration::from_millis(150))
            .failure_limit(1000)
    };
    let (c, log) = traced(b().fail_open(true));
    let got = c.get_multi(&["k", "k2", "k3"]);
    assert_eq!(got[0].as_ref().unwrap().as_ref().unwrap().value, b"hello");
    assert!(
        matches!(got[1], Ok(None)) && matches!(got[2], Ok(None)),
        "{got:?}"
    );
    let m = &c.metrics()[0];
    assert_eq!((m.hits, m.misses, m.fail_open_misses), (1, 0, 2), "{m:?}");
    let rec = take(&log);
    assert_eq!((rec.len(), rec[0].keys, rec[0].hits), (1, 3, 1), "{rec:?}");

    let (c, log) = traced(b());
    let got = c.get_multi(&["k", "k2", "k3"]);
    assert!(got.iter().all(|r| r.is_err()), "{got:?}");
    let m = &c.metrics()[0];
    assert_eq!((m.hits, m.misses), (0, 0), "{m:?}");
    let rec = take(&log);
    assert_eq!((rec.len(), rec[0].hits), (1, 0), "{rec:?}");
}

/// `incr_or_init` creating a counter is never recorded as having found it: on text it is
/// two exchanges (an `incr` that missed, the `add` that created it); on meta and binary one,
/// whose reply does not say whether the counter existed: `ok`, hits 0 (tester finding
/// observability 2: recorded `hit` there).
#[test]
fn incr_or_init_records_say_no_more_than_the_server_did() {
    let mc = Memcached::start(&[]);
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let (c, log) = traced(quick(&[mc.addr()]).protocol(protocol));
        let k = unique("ctr-init");
        assert_eq!(c.incr_or_init(&k, 5, 10, 0).unwrap(), 10);
        let created: Vec<(Op, OpOutcome, usize)> = take(&log)
            .iter()
            .map(|r| (r.op, r.outcome, r.hits))
            .collect();
        assert_eq!(c.decr_or_init(&k, 3, 10, 0).unwrap(), 7);
        let counted: Vec<(Op, OpOutcome, usize)> = take(&log)
            .iter()
            .map(|r| (r.op, r.outcome, r.hits))
            .collect();
        if protocol == Protocol::Text {
            let want = vec![
                (Op::Incr, OpOutcome::Miss, 0),
                (Op::Add, OpOutcome::Stored, 1),
            ];
            assert_eq!(created, want);
            assert_eq!(counted, vec![(Op::Decr, OpOutcome::Hit, 1)]);
        } else {
            assert_eq!(created, vec![(Op::Incr, OpOutcome::Ok, 0)], "{protocol:?}");
            assert_eq!(counted, vec![(Op::Decr, OpOutcome::Ok, 0)], "{protocol:?}");
        }
        // a plain incr still says what it found
        assert_eq!(c.incr(&k, 1).unwrap(), Some(8));
        assert!(c.incr(format!("{k}-none"), 1).unwrap().is_none());
        let plain: Vec<(OpOutcome, usize)> =
            take(&log).iter().map(|r| (r.outcome, r.hits)).collect();
        assert_eq!(
            plain,
            vec![(OpOutcome::Hit, 1), (OpOutcome::Miss, 0)],
            "{protocol:?}"
        );
    }
}

/// A `set_multi_noreply` on text gets no answer from memcached: its record is `ok` with no
/// hits, not "every item stored" (tester finding observability 4: hits counted every item
/// sent, though memcached had refused some as too large).
#[test]
fn a_noreply_batch_on_text_claims_nothing_stored() {
    let mc = Memcached::start(&[]);
    let (c, log) = traced(quick(&[mc.addr()]));
    let k = unique("noreply-rec");
    let items = [(format!("{k}-a"), &b"v"[..]), (format!("{k}-b"), &b"w"[..])];
    c.set_multi_noreply(&items, 0).unwrap();
    let recs = take(&log);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(
        (recs[0].op, recs[0].keys, recs[0].hits, recs[0].outcome),
        (Op::SetMultiNoreply, 2, 0, OpOutcome::Ok)
    );
    assert_eq!(c.get(format!("{k}-b")).unwrap().as_deref(), Some(&b"w"[..]));
}
