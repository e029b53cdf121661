//! The metrics snapshot in the Prometheus text exposition format (version 0.0.4), for a
//! `/metrics` endpoint or a textfile collector: one series per metric and server, labelled
//! `server="host:port"`, named `mcpool_<metric>` (counters end in `_total`; the pool wait time
//! is given in seconds, as Prometheus names base units).

use crate::metrics::{MetricKind, ServerMetrics, METRICS};
use std::fmt::Write;

/// Renders `metrics` (from `Client::metrics`) with each server's `(open, idle)` pool
/// connections (from `Client::pool_states`, same order; missing entries count as 0).
///
/// ```
/// let text = mcpool::prometheus::render(&[], &[]);
/// assert!(text.contains("# TYPE mcpool_hits_total counter"));
/// ```
pub fn render(metrics: &[ServerMetrics], pools: &[(u32, u32)]) -> String {
    let rows: Vec<(&str, [u64; METRICS.len()])> = metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let pool = pools.get(i).copied().unwrap_or((0, 0));
            (m.server.as_str(), m.values(pool))
        })
        .collect();
    render_values(&rows)
}

/// Renders rows of `(server, values in the order of METRICS)`, as [`render`] does (the C
/// ABI's snapshot keeps its values this way).
pub fn render_values(rows: &[(&str, [u64; METRICS.len()])]) -> String {
    let mut out = String::new();
    for (j, metric) in METRICS.iter().enumerate() {
        let (name, kind, nanos) = match (metric.name, metric.kind) {
            ("pool_wait_ns", _) => (
                "mcpool_pool_wait_seconds_total".to_string(),
                "counter",
                true,
            ),
            (n, MetricKind::Counter) => (format!("mcpool_{n}_total"), "counter", false),
            (n, MetricKind::Gauge) => (format!("mcpool_{n}"), "gauge", false),
        };
        let help = if metric.name == "pool_wait_ns" {
            "Total time spent waiting for a pooled connection, in seconds."
        } else {
            metric.help
        };
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for (server, values) in rows {
            let v = values[j];
            let _ = if nanos {
                writeln!(
                    out,
                    "{name}{{server=\"{}\"}} {}",
                    escape(server),
                    seconds_of_nanos(v)
                )
            } else {
                writeln!(out, "{name}{{server=\"{}\"}} {v}", escape(server))
            };
        }
    }
    out
}

/// Nanoseconds as exact decimal seconds (`186547` is `0.000186547`, `1500000000` is `1.5`):
/// a float's product printed `0.00018654700000000001` (tester finding metrics2 7).
fn seconds_of_nanos(ns: u64) -> String {
    let (whole, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:09}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// A label value as the exposition format quotes it: `\`, `"` and newlines escaped.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_help_type_and_one_series_per_server() {
        let a = ServerMetrics {
            server: "127.0.0.1:1".into(),
            hits: 7,
            pool_wait_time: std::time::Duration::from_millis(1500),
            ..ServerMetrics::default()
        };
        let b = ServerMetrics {
            server: "we\"ird\\host:2".into(),
            misses: 3,
            ..ServerMetrics::default()
        };
        let text = render(&[a, b], &[(4, 1)]);
        assert_eq!(text.matches("# HELP ").count(), METRICS.len());
        assert_eq!(text.matches("# TYPE ").count(), METRICS.len());
        assert!(text.contains("mcpool_hits_total{server=\"127.0.0.1:1\"} 7\n"));
        assert!(text.contains("mcpool_misses_total{server=\"we\\\"ird\\\\host:2\"} 3\n"));
        assert!(text.contains("mcpool_pool_wait_seconds_total{server=\"127.0.0.1:1\"} 1.5\n"));
        assert_eq!(seconds_of_nanos(186_547), "0.000186547");
        assert_eq!(seconds_of_nanos(0), "0");
        assert_eq!(seconds_of_nanos(3_000_000_000), "3");
        assert_eq!(seconds_of_nanos(u64::MAX), "18446744073.709551615");
        assert!(text.contains("# TYPE mcpool_pool_open gauge\n"));
        assert!(text.contains("mcpool_pool_open{server=\"127.0.0.1:1\"} 4\n"));
        // A server without a pool entry reads 0 connections.
        assert!(text.contains("mcpool_pool_idle{server=\"we\\\"ird\\\\host:2\"} 0\n"));
        let series = text.lines().filter(|l| !l.starts_with('#')).count();
        assert_eq!(series, 2 * METRICS.len());
    }
}
