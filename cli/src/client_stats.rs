//! `mcpool stats --client [--ops N] [--threads T] [--format table|prometheus]`: a short checked
//! load against the servers, then the client's own per-server metrics (what an application
//! would see), as a table or in the Prometheus text format (the load's summary then goes to
//! standard error). Each thread writes a key and reads it back three times, comparing every
//! value read with what it wrote. The first keys are one placed on each server by the
//! client's placement, each written and then read back, so every server is checked whatever
//! --ops and --threads (--ops is raised when too small for that). Exit status 2 when an
//! operation of the load failed (an error, not a miss), a value crossed over, or no value
//! written could be read back (nothing was checked), after the metrics are printed; 0
//! otherwise.

use crate::out::{errln, out, outln};
use mcpool::{Client, ServerMetrics};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// What `stats --client` was asked: its load and its output format.
pub struct Load {
    /// `--ops`: operations in all.
    ops: usize,
    /// `--threads`.
    threads: usize,
    /// `--format prometheus` (else the table).
    prometheus: bool,
}

impl Load {
    /// Reads `[--client] [--ops N] [--threads T] [--format table|prometheus]`, before any
    /// server is started or asked.
    pub fn parse(args: &[String]) -> Result<Load, String> {
        let mut load = Load {
            ops: 10_000,
            threads: 4,
            prometheus: false,
        };
        // `--ops=5` as `--ops 5`, as the memcached commands take `--ttl=5` (retest22 8).
        let args: Vec<String> = args
            .iter()
            .flat_map(|a| match a.split_once('=') {
                Some((name, value)) if a.starts_with("--") => {
                    vec![name.to_owned(), value.to_owned()]
                }
                _ => vec![a.clone()],
            })
            .collect();
        let mut seen: Vec<&str> = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            // An option is given once, as for every command (`--ttl 5 --ttl 6` is an error):
            // a later one never silently wins.
            if a.starts_with("--") {
                if seen.contains(&a.as_str()) {
                    return Err(format!("{a} given twice"));
                }
                seen.push(a);
            }
            // Out of range is an error, never silently capped.
            let mut num = |what: &str, max: usize| -> Result<usize, String> {
                it.next()
                    .and_then(|v| v.parse().ok())
                    .filter(|&n| (1..=max).contains(&n))
                    .ok_or_else(|| format!("{what} takes a whole number 1-{max}"))
            };
            match a.as_str() {
                "--client" => {}
                "--ops" => load.ops = num("--ops", 10_000_000)?,
                "--threads" => load.threads = num("--threads", 1024)?,
                "--format" => match it.next().map(String::as_str) {
                    Some("table") => load.prometheus = false,
                    Some("prometheus") => load.prometheus = true,
                    other => {
                        return Err(format!(
                            "--format takes table or prometheus, not {}",
                            other.unwrap_or("nothing")
                        ))
                    }
                },
                other if !other.starts_with('-') => {
                    return Err(format!(
                        "stats --client takes no GROUP ({other}): it reports the client's own \
                         metrics; stats {other} (without --client) shows that group of the \
                         servers' statistics"
                    ))
                }
                other => return Err(format!("unknown option for stats --client: {other}")),
            }
        }
        Ok(load)
    }
}

/// How many keys of the load are searched for one placed on each server.
const REACH_SEARCH: usize = 100_000;

/// One key of the load for each server it can reach, `(server, key)`, found by the
/// client's own placement ([`Client::server_for`]): a load whose keys all hash to one
/// server would pass while another is down. A server no key is placed on (proxy-pool sends
/// every key to the first proxy) is left out.
fn reach_keys(client: &Client, servers: usize) -> Vec<(usize, String)> {
    let mut found: Vec<Option<String>> = vec![None; servers];
    let mut left = servers;
    for n in 0..REACH_SEARCH {
        if left == 0 {
            break;
        }
        let key = format!("mcpool-stats:reach:{n}");
        match client.server_for(&key) {
            Ok(i) if found.get(i).is_some_and(Option::is_none) => {
                found[i] = Some(key);
                left -= 1;
            }
            Ok(_) => {}
            // A key the client refuses (a key prefix too long, ...): the load says so.
            Err(_) => break,
        }
    }
    found
        .into_iter()
        .enumerate()
        .filter_map(|(i, k)| k.map(|k| (i, k)))
        .collect()
}

/// The operations of thread `t` when `ops` are shared by `threads`.
fn share(ops: usize, threads: usize, t: usize) -> usize {
    ops / threads + usize::from(t < ops % threads)
}

/// The keys of a thread with `share` operations that are written and then read back (each
/// thread's `i`-th operation is on its key `i / 4`: a set, then up to three gets): key `k`
/// is read back when the thread has operation `4k + 1`.
fn read_back_keys(share: usize) -> usize {
    (share + 2) / 4
}

/// The keys of the whole load that are written and then read back.
fn checked_keys(ops: usize, threads: usize) -> usize {
    (0..threads)
        .map(|t| read_back_keys(share(ops, threads, t)))
        .sum()
}

/// Runs the load, prints the metrics table.
pub fn run(client: &Client, load: &Load) -> Result<ExitCode, String> {
    let &Load {
        mut ops,
        threads,
        prometheus,
    } = load;
    // Every server gets operations of the load, whatever --ops: the first key of the load
    // on each thread is one placed on a server not yet reached, until every server has one.
    let labels = client.server_labels();
    let reach = reach_keys(client, labels.len());
    for (i, label) in labels.iter().enumerate() {
        if !reach.iter().any(|(s, _)| *s == i) {
            errln!(
                "mcpool: stats --client: the client's placement (--distribution) puts no key \
                 of the load on {label}, so the load does not check it"
            );
        }
    }
    // At least one key written and read back on each server (one in all when no server
    // has a key of its own), whatever --threads: a load of sets alone (--ops 1 on 4
    // threads) checks nothing, and would pass against a server that never returns a value.
    let want = reach.len().max(1);
    if checked_keys(ops, threads) < want {
        let asked = ops;
        // (it ends: every 4 operations more give each thread one more key read back)
        while checked_keys(ops, threads) < want {
            ops += 1;
        }
        errln!(
            "mcpool: stats --client: --ops {asked} raised to {ops}, so that each of the {} \
             servers gets a value written and read back",
            reach.len()
        );
    }
    // Each thread's keys: the servers' keys dealt out in the order the threads write
    // their keys (each thread's first key, then each one's second, ...).
    let mut mine: Vec<Vec<Option<String>>> = vec![Vec::new(); threads];
    let mut dealt = reach.into_iter().map(|(_, k)| k);
    // Only keys that are read back after their set get a server's key. (A thread reads
    // back a key for each 4 operations: thread 0, which has the most, has a k-th such key
    // when any thread has.)
    'deal: for k in (0..).take_while(|&k| k < read_back_keys(share(ops, threads, 0))) {
        for (t, keys) in mine.iter_mut().enumerate() {
            if k >= read_back_keys(share(ops, threads, t)) {
                break;
            }
            match dealt.next() {
                Some(key) => keys.push(Some(key)),
                None => break 'deal,
            }
        }
    }
    let crossed = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    // The first failure's message, for the health check's verdict (tester finding cli3 4:
    // "5 of 5 operations failed" said nothing of a refused connection or SASL).
    let first_error: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
    let checked = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let workers: Vec<_> = mine
        .into_iter()
        .enumerate()
        .map(|(t, servers_keys)| {
            let (c, crossed, errors, checked, first_error) = (
                client.clone(),
                crossed.clone(),
                errors.clone(),
                checked.clone(),
                first_error.clone(),
            );
            let failed = move |e: mcpool::Error| {
                errors.fetch_add(1, Ordering::Relaxed);
                let mut first = first_error.lock().unwrap_or_else(|p| p.into_inner());
                first.get_or_insert_with(|| e.to_string());
            };
            let n = share(ops, threads, t);
            std::thread::spawn(move || {
                for i in 0..n {
                    // Each key is written once and then read three times: every read of a
                    // value is compared with what this thread wrote (its key's own text).
                    let key = match servers_keys.get(i / 4) {
                        Some(Some(key)) => key.clone(),
                        _ => format!("mcpool-stats:{t}:{}", (i / 4) % 64),
                    };
                    if i % 4 == 0 {
                        if let Err(e) = c.set(&key, key.as_bytes(), 60) {
                            failed(e);
                        }
                    } else {
                        match c.get(&key) {
                            Ok(Some(v)) => {
                                checked.fetch_add(1, Ordering::Relaxed);
                                if v != key.as_bytes() {
                                    crossed.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            Ok(_) => {}
                            Err(e) => failed(e),
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().map_err(|_| "a load thread panicked".to_string())?;
    }
    let took = start.elapsed();
    let summary = format!(
        "load: {ops} operations on {threads} threads in {:.2} s ({:.0} ops/s), {} errors, {} values read back and checked, {} crossed values",
        took.as_secs_f64(),
        ops as f64 / took.as_secs_f64().max(1e-9),
        errors.load(Ordering::Relaxed),
        checked.load(Ordering::Relaxed),
        crossed.load(Ordering::Relaxed)
    );
    let metrics = if prometheus {
        errln!("{summary}");
        let (metrics, pools) = client.metrics_and_pool_states();
        out!("{}", mcpool::prometheus::render(&metrics, &pools));
        metrics
    } else {
        outln!("{summary}");
        let metrics = client.metrics();
        print_table(&metrics);
        metrics
    };
    // The load checks the servers: an operation that failed (an error, not a miss) or a
    // value that crossed over is exit 2, as every command's errors are; the metrics above
    // are printed either way.
    let (errors, crossed, checked) = (
        errors.load(Ordering::Relaxed),
        crossed.load(Ordering::Relaxed),
        checked.load(Ordering::Relaxed),
    );
    if errors > 0 || crossed > 0 {
        let first = first_error.lock().unwrap_or_else(|p| p.into_inner()).take();
        let first = first
            .map(|e| format!("; the first: {e}"))
            .unwrap_or_default();
        errln!(
            "mcpool: stats --client: {errors} of {ops} operations failed, {crossed} crossed values{first}"
        );
        return Ok(ExitCode::from(2));
    }
    // Under --fail-open a down server's operations answer as misses and "not stored", not
    // as errors: still a server that did not answer, so the check fails the same way.
    let failed_open: u64 = metrics
        .iter()
        .map(|m| m.fail_open_misses + m.fail_open_not_stored)
        .sum();
    if failed_open > 0 {
        errln!(
            "mcpool: stats --client: {failed_open} of {ops} operations failed open (fail_open: no server answered them; they read as misses or \"not stored\")"
        );
        return Ok(ExitCode::from(2));
    }
    // A load that read back nothing it wrote checked nothing: not healthy (its --ops was
    // raised above so that it always reads back: tester finding cli2 1).
    if checked == 0 {
        errln!(
            "mcpool: stats --client: no value written was read back (every read missed), so none could be checked"
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_table(metrics: &[ServerMetrics]) {
    outln!(
        "{:<22} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8} {:>8} {:>6} {:>6} {:>8} {:>9}",
        "server",
        "ops",
        "hits",
        "misses",
        "connects",
        "conn_err",
        "timeouts",
        "io_err",
        "srv_err",
        "pool_wait",
        "wait_ms",
        "handover",
        "eject",
        "return",
        "failover",
        "fail_open"
    );
    for m in metrics {
        outln!(
            "{:<22} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>8.1} {:>8} {:>6} {:>6} {:>8} {:>9}",
            m.server,
            m.operations,
            m.hits,
            m.misses,
            m.connects,
            m.connect_errors,
            m.timeouts,
            m.io_errors,
            m.server_errors + m.protocol_errors,
            m.pool_waits,
            m.pool_wait_time.as_secs_f64() * 1000.0,
            m.handed_over,
            m.ejections,
            m.returns,
            m.failovers,
            m.fail_open_misses + m.fail_open_not_stored
        );
    }
}
