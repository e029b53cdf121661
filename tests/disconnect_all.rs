//! `Client::disconnect_all` (Cache::Memcached::Fast's): closes the connections and nothing
//! else. The metrics keep counting from where they were and a server marked dead stays dead,
//! against a real memcached and a port that refuses every connect.
mod common;

use common::{curr_connections, refusing_port, unique, wait_until, Memcached};
use mcpool::Client;
use std::time::Duration;

#[test]
fn disconnect_all_closes_connections_and_keeps_metrics_and_dead_servers() {
    let mc = Memcached::start(&[]);
    let dead = refusing_port();
    let client = Client::builder()
        .servers([mc.addr(), dead.addr()])
        .min_idle(0)
        .max_size(2)
        .failure_limit(1)
        .retry_timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let prefix = unique("disc");
    // keys on each server: the live one answers, the refusing one is marked dead
    let (mut live_key, mut dead_key) = (None, None);
    for i in 0..200 {
        let k = format!("{prefix}{i}");
        match client.server_for(k.as_bytes()).unwrap() {
            0 if live_key.is_none() => live_key = Some(k),
            1 if dead_key.is_none() => dead_key = Some(k),
            _ => {}
        }
    }
    let (live_key, dead_key) = (live_key.unwrap(), dead_key.unwrap());
    client.set(live_key.as_bytes(), b"v", 0).unwrap();
    assert_eq!(client.get(live_key.as_bytes()).unwrap().unwrap(), b"v");
    assert!(client.get(dead_key.as_bytes()).is_err());
    let before = client.metrics();
    assert!(before[0].operations >= 2 && before[0].connects == 1);
    assert!(!client.server_states()[1].alive, "marked dead");
    assert_eq!(client.pool_states()[0].0, 1, "one open connection");
    let server_side = curr_connections(&mc);

    client.disconnect_all();

    assert_eq!(
        client.pool_states()[0].0,
        0,
        "the idle connection is closed now"
    );
    wait_until(
        "memcached sees the connection closed",
        Duration::from_secs(5),
        || curr_connections(&mc) < server_side,
    );
    let after = client.metrics();
    assert_eq!(after[0].operations, before[0].operations, "metrics kept");
    assert_eq!(after[0].connects, before[0].connects);
    assert_eq!(after[1].connect_errors, before[1].connect_errors);
    let states = client.server_states();
    assert!(!states[1].alive, "the dead server stays dead");
    assert!(states[1].retry_in.is_some());

    // the next call opens a new connection; the dead server is not tried again
    assert_eq!(client.get(live_key.as_bytes()).unwrap().unwrap(), b"v");
    assert!(client.get(dead_key.as_bytes()).is_err());
    let last = client.metrics();
    assert_eq!(last[0].connects, before[0].connects + 1, "a new connection");
    assert_eq!(
        last[1].connect_errors, before[1].connect_errors,
        "the dead one not retried"
    );
}

#[test]
fn each_disconnect_all_makes_the_next_call_connect_again() {
    let mc = Memcached::start(&[]);
    let client = Client::builder()
        .server(&mc.addr())
        .min_idle(0)
        .max_size(1)
        .build()
        .unwrap();
    let k = unique("disc-busy");
    client.set(k.as_bytes(), b"1", 0).unwrap();
    client.disconnect_all();
    client.get(k.as_bytes()).unwrap();
    client.disconnect_all();
    client.get(k.as_bytes()).unwrap();
    assert_eq!(client.metrics()[0].connects, 3);
}
