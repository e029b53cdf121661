//! The `on_operation` handler may issue commands of its own (docs/tracing.md): the records of
//! a multi-server call are handed over once every connection of the call is back in its
//! pool. With `max_size` 1 and two servers, a handler that gets a key of each server from
//! the record of each server's part of a `get_multi`, `set_multi` or `delete_multi` gets its
//! answers; before, the record of the first server came while the call still held the
//! other server's only connection, and the handler's get waited the whole `pool_timeout`
//! and failed with `Error::PoolTimeout`. The records themselves are what they were: one per
//! server, that server's keys, hits, label and bytes. Against two real memcached, on every
//! protocol.
mod common;

use common::{unique, Memcached};
use mcpool::trace::{Op, OpOutcome};
use mcpool::{Client, Protocol};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq)]
struct Rec {
    op: Op,
    keys: usize,
    hits: usize,
    server: Option<String>,
    outcome: OpOutcome,
    sent: bool,
    received: bool,
}

#[test]
fn a_handler_issues_commands_during_a_multi_server_call_with_one_connection_per_server() {
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    for protocol in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let shared: Arc<Mutex<Option<Client>>> = Arc::default();
        // The keys the handler reads: one on each server.
        let probes: Arc<Mutex<Vec<String>>> = Arc::default();
        let log: Arc<Mutex<Vec<Rec>>> = Arc::default();
        let inner: Arc<Mutex<Vec<String>>> = Arc::default();
        let (s, p, l, i) = (shared.clone(), probes.clone(), log.clone(), inner.clone());
        let c = Client::builder()
            .server(&a.addr())
            .server(&b.addr())
            .protocol(protocol)
            .key_prefix(unique("reent"))
            .max_size(1)
            .min_idle(0)
            .pool_timeout(Duration::from_secs(1))
            .on_operation(move |r| {
                if !matches!(r.op, Op::GetMulti | Op::SetMulti | Op::DeleteMulti) {
                    return;
                }
                l.lock().unwrap().push(Rec {
                    op: r.op,
                    keys: r.keys,
                    hits: r.hits,
                    server: r.server.map(str::to_owned),
                    outcome: r.outcome,
                    sent: r.bytes_sent > 0,
                    received: r.bytes_received > 0,
                });
                let Some(c) = s.lock().unwrap().clone() else {
                    return;
                };
                for k in p.lock().unwrap().iter() {
                    let t = Instant::now();
                    let got = c.get(k);
                    i.lock().unwrap().push(format!(
                        "{:?} from {:?}: get {k}: {:?} in {:?}",
                        r.op,
                        r.server,
                        got.map(|v| v.map(|v| v.len())),
                        t.elapsed()
                    ));
                }
            })
            .build()
            .unwrap();
        *shared.lock().unwrap() = Some(c.clone());
        // Keys on both servers: two on the first, three on the second at least.
        let labels = c.server_labels();
        let mut keys: Vec<String> = Vec::new();
        let mut per: BTreeMap<usize, usize> = BTreeMap::new();
        for n in 0..200 {
            let k = format!("k{n}");
            let idx = c.server_for(&k).unwrap();
            if per.get(&idx).copied().unwrap_or(0) < 2 + idx {
                *per.entry(idx).or_default() += 1;
                keys.push(k);
            }
        }
        assert_eq!(per.len(), 2, "keys on both servers");
        let mut first_of: BTreeMap<usize, String> = BTreeMap::new();
        for k in &keys {
            first_of
                .entry(c.server_for(k).unwrap())
                .or_insert_with(|| k.clone());
        }
        *probes.lock().unwrap() = first_of.values().cloned().collect();
        let items: Vec<(&str, &[u8])> = keys.iter().map(|k| (k.as_str(), &b"v"[..])).collect();
        for r in c.set_multi(&items, 0) {
            r.unwrap();
        }
        for r in c.get_multi(&keys) {
            assert!(r.unwrap().is_some(), "{protocol:?}");
        }
        for r in c.delete_multi(&keys) {
            assert!(r.unwrap(), "{protocol:?}");
        }
        *shared.lock().unwrap() = None;
        let inner = inner.lock().unwrap().clone();
        assert_eq!(inner.len(), 3 * 2 * 2, "{protocol:?}: {inner:#?}");
        // Set and got: the value; after the delete of its server's keys: a miss. Never an
        // error (a pool timeout, before).
        for line in &inner {
            assert!(line.contains(": Ok("), "{protocol:?}: {line}");
        }
        let mut want = Vec::new();
        for (op, hits_of, outcome) in [
            (Op::SetMulti, 1, OpOutcome::Stored),
            (Op::GetMulti, 1, OpOutcome::Hit),
            (Op::DeleteMulti, 1, OpOutcome::Hit),
        ] {
            for (idx, &n) in &per {
                want.push(Rec {
                    op,
                    keys: n,
                    hits: n * hits_of,
                    server: Some(labels[*idx].clone()),
                    outcome,
                    sent: true,
                    received: true,
                });
            }
        }
        let mut got = log.lock().unwrap().clone();
        got.sort_by_key(|r| (r.op.name(), r.server.clone()));
        want.sort_by_key(|r| (r.op.name(), r.server.clone()));
        assert_eq!(got, want, "{protocol:?}");
    }
}

/// Tester finding observe 4: a handler that issued a command for every record it got was
/// called again for that command's record, without end: the process aborted on a stack
/// overflow. The records of the calls a handler makes reach no handler now.
#[test]
fn a_handler_that_calls_the_client_for_every_record_gets_only_the_callers_records() {
    let mc = Memcached::start(&[]);
    let shared: Arc<Mutex<Option<Client>>> = Arc::default();
    let seen: Arc<Mutex<Vec<Op>>> = Arc::default();
    let (s, l) = (shared.clone(), seen.clone());
    let c = Client::builder()
        .server(&mc.addr())
        .key_prefix(unique("reenter"))
        .max_size(1)
        .on_operation(move |r| {
            l.lock().unwrap().push(r.op);
            let c = s.lock().unwrap().clone();
            if let Some(c) = c {
                // Unguarded: every record makes a call of its own.
                c.get("inner").unwrap();
                c.set("inner", b"v", 0).unwrap();
            }
        })
        .build()
        .unwrap();
    *shared.lock().unwrap() = Some(c.clone());
    c.set("k", b"v", 0).unwrap();
    assert_eq!(c.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(c.get_multi(&["k", "x"]).len(), 2);
    *shared.lock().unwrap() = None;
    assert_eq!(*seen.lock().unwrap(), [Op::Set, Op::Get, Op::GetMulti]);
    assert_eq!(c.operation_handler_panics(), 0);
    // The handler's own calls were made: each of the three records set "inner".
    assert_eq!(c.get("inner").unwrap().as_deref(), Some(&b"v"[..]));
}

/// An `on_event` handler that calls a client runs inside the call that triggered the event:
/// that call's record keeps its own bytes and leaves out the handler's time (tester finding
/// java2 1: it said `sent=0 received=0`, and its duration held the handler's).
#[test]
fn an_event_handler_that_calls_a_client_leaves_the_triggering_record_whole() {
    use mcpool::Event;
    let other = Memcached::start(&[]);
    let stopped = Memcached::start(&[]);
    // (traced too: a traced call starts by zeroing the thread's bytes)
    let helper = Client::builder()
        .server(&other.addr())
        .on_operation(|_| {})
        .build()
        .unwrap();
    let records: Arc<Mutex<Vec<(Op, u64, Duration)>>> = Arc::default();
    let r = records.clone();
    let c = Client::builder()
        .server(&stopped.addr())
        .io_timeout(Duration::from_millis(300))
        .failure_limit(1)
        .retry_timeout(Duration::from_secs(30))
        .on_operation(move |rec| {
            r.lock()
                .unwrap()
                .push((rec.op, rec.bytes_sent, rec.duration));
        })
        .on_event(move |e| {
            if let Event::ServerDown { .. } = e {
                // a call of its own, on this thread, and time of its own
                helper.set("from-handler", "x", 0).unwrap();
                std::thread::sleep(Duration::from_millis(700));
            }
        })
        .build()
        .unwrap();
    c.set("k", "v", 0).unwrap();
    stopped.freeze();
    let started = Instant::now();
    assert!(c.get("k").is_err(), "a stopped server times out");
    assert!(
        started.elapsed() >= Duration::from_millis(700),
        "the handler ran inside"
    );
    stopped.thaw();
    let got = records.lock().unwrap().clone();
    let (op, sent, duration) = *got.last().expect("the get's record");
    assert_eq!(op, Op::Get, "{got:?}");
    assert!(sent > 0, "its own bytes: {got:?}");
    assert!(
        duration < Duration::from_millis(650),
        "without the handler's time: {got:?}"
    );
}
