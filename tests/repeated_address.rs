//! An address listed more than once (the old way to give a server a double share, as
//! Cache::Memcached users do; docs/topology.md) is one server in every report
//! (docs/metrics.md): its entries' counters and pool connections summed, their health merged,
//! one Prometheus series per metric. Against real memcached processes and a port nobody
//! accepts on.
mod common;

use common::{refusing_port, unique, Memcached};
use mcpool::Client;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[test]
fn a_repeated_address_is_one_server_with_every_count() {
    let (a, b) = (Memcached::start(&[]), Memcached::start(&[]));
    let c = Client::builder()
        .servers([a.addr(), a.addr(), b.addr()])
        .min_idle(0)
        .build()
        .unwrap();
    let prefix = unique("rep");
    // Per address, the operations sent there (placement by entry, reported by address).
    let labels = c.server_labels();
    let mut sent: BTreeMap<String, u64> = BTreeMap::new();
    let mut entries = BTreeSet::new();
    for i in 0..40 {
        let k = format!("{prefix}-{i}");
        c.set(&k, b"v", 0).unwrap();
        assert!(c.get(&k).unwrap().is_some());
        let idx = c.server_for(&k).unwrap();
        entries.insert(idx);
        *sent.entry(labels[idx].clone()).or_default() += 2;
    }
    assert!(
        entries.contains(&0) && entries.contains(&1),
        "both entries of {} used: {entries:?}",
        a.addr()
    );

    let m = c.metrics();
    let got: BTreeMap<String, u64> = m.iter().map(|s| (s.server.clone(), s.operations)).collect();
    assert_eq!(m.len(), 2, "one entry per address: {m:?}");
    assert_eq!(got, sent, "every operation counted, on its address");
    assert_eq!(m.iter().map(|s| s.operations).sum::<u64>(), 80);
    assert_eq!(
        m[0].server,
        a.addr(),
        "in the order each address first appears"
    );

    // Pools: one per address, the repeated address's two pools summed (each entry opened
    // its own connection, and all are idle now).
    let (m2, pools) = c.metrics_and_pool_states();
    assert_eq!(pools.len(), m2.len());
    assert_eq!(pools, c.pool_states());
    assert!(pools[0].0 >= 2 && pools[0].0 == pools[0].1, "{pools:?}");

    // Prometheus: every metric name and label set once.
    let text = mcpool::prometheus::render(&m2, &pools);
    let mut series = BTreeSet::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name_labels, _) = line.rsplit_once(' ').unwrap();
        assert!(
            series.insert(name_labels.to_owned()),
            "repeated series: {line}\n{text}"
        );
    }
    assert!(text.contains(&format!(
        "mcpool_operations_total{{server=\"{}\"}} {}\n",
        a.addr(),
        sent[&a.addr()]
    )));

    // Health: one state per address; every entry of it answers with that state.
    let states = c.server_states();
    assert_eq!(states.len(), 2, "{states:?}");
    assert_eq!(c.server_state(0), c.server_state(1));
    assert_eq!(c.server_state(0).as_ref(), Some(&states[0]));
    assert_eq!(c.server_state(3), None);
}

#[test]
fn a_repeated_address_is_dead_while_any_entry_is() {
    let a = Memcached::start(&[]);
    let dead = refusing_port();
    let c = Client::builder()
        .servers([a.addr(), dead.addr(), dead.addr()])
        .min_idle(0)
        .failure_limit(1)
        .retry_timeout(Duration::from_secs(60))
        .retry_timeout_max(Duration::from_secs(60))
        .build()
        .unwrap();
    // A key of the dead address's first entry only: that entry is marked dead, the other
    // has not been tried.
    let prefix = unique("repd");
    let k = (0..1000)
        .map(|i| format!("{prefix}-{i}"))
        .find(|k| c.server_for(k).unwrap() == 1)
        .expect("a key on entry 1");
    assert!(c.get(&k).is_err());
    let states = c.server_states();
    assert_eq!(states.len(), 2, "{states:?}");
    let d = &states[1];
    assert_eq!(d.server, dead.addr());
    assert!(!d.alive && d.failures == 1 && d.retry_in.is_some(), "{d:?}");
    assert_eq!(c.server_state(1).as_ref(), Some(d));
    assert_eq!(c.server_state(2).as_ref(), Some(d));
    let m = c.metrics();
    assert_eq!(m[1].connect_errors, 1, "{:?}", m[1]);
    assert_eq!(m[1].ejections, 1, "{:?}", m[1]);
}
