//! Measurements and what is made of them: the raw CSV, the summary rows (median, min–max,
//! ratio to the floor), the Markdown report and the plain table on stdout.

use super::contestant::FLOOR;
use super::stats::{summarize, Summary};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One raw measurement.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Scenario name.
    pub scenario: String,
    /// Point label, e.g. `N=100000`.
    pub point: String,
    /// Part label, e.g. `get`.
    pub part: String,
    /// Chart abscissa.
    pub x: Option<f64>,
    /// Contestant.
    pub contestant: String,
    /// `colocated`, `split`, ...
    pub placement: String,
    /// 1-based timed repeat.
    pub repeat: u32,
    /// Operations (or calls) in the measurement.
    pub count: u64,
    /// Metric name.
    pub metric: String,
    /// 1-based slice index for per-slice figures.
    pub slice: Option<u32>,
    /// Value.
    pub value: f64,
}

/// All raw samples in CSV.
pub fn csv(samples: &[Sample]) -> String {
    let mut s = String::from(
        "scenario,point,part,x,contestant,placement,repeat,count,metric,slice,value\n",
    );
    for m in samples {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{}",
            m.scenario,
            m.point,
            m.part,
            m.x.map(|x| x.to_string()).unwrap_or_default(),
            m.contestant,
            m.placement,
            m.repeat,
            m.count,
            m.metric,
            m.slice.map(|x| x.to_string()).unwrap_or_default(),
            m.value
        );
    }
    s
}

/// One summarised figure.
#[derive(Clone, Debug)]
pub struct Row {
    /// Scenario.
    pub scenario: String,
    /// `point part`, e.g. `N=100000 get`.
    pub point: String,
    /// Chart abscissa.
    pub x: Option<f64>,
    /// Contestant.
    pub contestant: String,
    /// Placement.
    pub placement: String,
    /// Primary metric name.
    pub metric: String,
    /// Operations per repeat (median).
    pub count: u64,
    /// Primary metric summary.
    pub primary: Summary,
    /// Primary metric divided by the floor's median.
    pub ratio: Option<f64>,
    /// Other metrics (median), e.g. `p99_ms`.
    pub extra: Vec<(String, f64)>,
}

impl Row {
    /// Repeats more than 5× apart: a figure not to trust (a driver's clock or a stall);
    /// flagged in the tables and left out of the charts.
    pub fn unstable(&self) -> bool {
        self.primary.max > 5.0 * self.primary.min.max(f64::MIN_POSITIVE)
    }
}

type Key = (String, String, String, String); // scenario, point, part, contestant

/// Summarises the samples; `primary` maps a scenario/part to its primary metric.
pub fn rows(samples: &[Sample], order: &[String]) -> Vec<Row> {
    // (key) -> metric -> values; keep first-seen order of keys.
    let mut keys: Vec<Key> = vec![];
    let mut by: BTreeMap<Key, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    let mut meta: BTreeMap<Key, (Option<f64>, String, Vec<u64>)> = BTreeMap::new();
    for s in samples.iter().filter(|s| s.slice.is_none()) {
        let k = (
            s.scenario.clone(),
            s.point.clone(),
            s.part.clone(),
            s.contestant.clone(),
        );
        if !by.contains_key(&k) {
            keys.push(k.clone());
        }
        by.entry(k.clone())
            .or_default()
            .entry(s.metric.clone())
            .or_default()
            .push(s.value);
        let m = meta
            .entry(k)
            .or_insert_with(|| (s.x, s.placement.clone(), vec![]));
        if s.metric == "ops/s" || s.metric == "calls/s" {
            m.2.push(s.count);
        }
    }
    let primary_of = |metrics: &BTreeMap<String, Vec<f64>>| -> Option<String> {
        ["calls/s", "ops/s"]
            .iter()
            .find(|m| metrics.contains_key(**m))
            .map(|m| m.to_string())
    };
    let floor_median = |k: &Key, metric: &str| -> Option<f64> {
        let fk = (k.0.clone(), k.1.clone(), k.2.clone(), FLOOR.to_string());
        summarize(by.get(&fk)?.get(metric)?).map(|s| s.median)
    };
    // Order: scenario order as run, then point order as run, then contestants in `order`.
    let pos = |c: &str| order.iter().position(|o| o == c).unwrap_or(usize::MAX);
    let first_seen = |k: &Key| {
        keys.iter()
            .position(|x| x.0 == k.0 && x.1 == k.1 && x.2 == k.2)
    };
    let mut sorted = keys.clone();
    sorted.sort_by_key(|k| (first_seen(k), pos(&k.3)));
    let mut out = vec![];
    for k in sorted {
        let metrics = &by[&k];
        let Some(pm) = primary_of(metrics) else {
            continue;
        };
        let Some(primary) = summarize(&metrics[&pm]) else {
            continue;
        };
        let (x, placement, counts) = &meta[&k];
        let mut counts = counts.clone();
        counts.sort_unstable();
        let ratio = floor_median(&k, &pm)
            .filter(|f| *f > 0.0)
            .map(|f| primary.median / f);
        let extra = metrics
            .iter()
            .filter(|(m, _)| **m != pm)
            .filter_map(|(m, v)| Some((m.clone(), summarize(v)?.median)))
            .collect();
        out.push(Row {
            scenario: k.0.clone(),
            point: if k.2.is_empty() {
                k.1.clone()
            } else {
                format!("{} {}", k.1, k.2)
            },
            x: *x,
            contestant: k.3.clone(),
            placement: placement.clone(),
            metric: pm,
            count: counts.get(counts.len() / 2).copied().unwrap_or(0),
            primary,
            ratio,
            extra,
        });
    }
    out
}

/// Adds `× steady` to every row of `scenario` at point `warm` (a fresh driver's first
/// operations): its median over the same contestant's median of the same part at point
/// `steady`.
pub fn add_steady_ratios(rows: &mut [Row], scenario: &str, warm: &str, steady: &str) {
    let warm_prefix = format!("{warm} ");
    let found: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.scenario == scenario)
        .filter_map(|(i, r)| {
            let part = r.point.strip_prefix(&warm_prefix)?;
            let base = rows.iter().find(|b| {
                b.scenario == r.scenario
                    && b.contestant == r.contestant
                    && b.metric == r.metric
                    && b.point == format!("{steady} {part}")
            })?;
            (base.primary.median > 0.0).then(|| (i, r.primary.median / base.primary.median))
        })
        .collect();
    for (i, ratio) in found {
        rows[i].extra.push(("steady_ratio".into(), ratio));
    }
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{:.0}", v)
    } else if v >= 10.0 {
        format!("{:.1}", v)
    } else {
        format!("{:.2}", v)
    }
}

/// The order in which the other metrics are shown.
const EXTRA_ORDER: [&str; 13] = [
    "steady_ratio",
    "stored_bytes",
    "mean_us",
    "keys/s",
    "p50_ms",
    "p99_ms",
    "p999_ms",
    "get_us",
    "set_us",
    "wire_bytes_per_op",
    "peak_rss_mib",
    "rss_before_mib",
    "errors",
];

fn extras(r: &Row) -> String {
    let mut parts = vec![];
    let mut extra: Vec<&(String, f64)> = r.extra.iter().collect();
    extra.sort_by_key(|(m, _)| EXTRA_ORDER.iter().position(|o| o == m).unwrap_or(99));
    for (m, v) in extra {
        let s = match m.as_str() {
            "steady_ratio" => format!("× steady {v:.2}"),
            "stored_bytes" => format!("stored {} B", *v as u64),
            "mean_us" => format!("mean {} µs", num(*v)),
            "keys/s" => format!("{} keys/s", num(*v)),
            "p50_ms" => format!("p50 {} ms", num(*v)),
            "p99_ms" => format!("p99 {} ms", num(*v)),
            "p999_ms" => format!("p99.9 {} ms", num(*v)),
            "errors" => format!("errors {}", *v as u64),
            "get_us" => format!("get {} µs", num(*v)),
            "set_us" => format!("set {} µs", num(*v)),
            "wire_bytes_per_op" => format!("wire {} B/op", num(*v)),
            "peak_rss_mib" => format!("peak RSS {} MiB", num(*v)),
            "rss_before_mib" => format!("(RSS before {} MiB)", num(*v)),
            other => format!("{other} {}", num(*v)),
        };
        parts.push(s);
    }
    parts.join(", ")
}

/// The header and cells of every row.
fn cells(rows: &[Row]) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        "scenario",
        "point",
        "contestant",
        "placement",
        "metric",
        "median",
        "min–max",
        "× floor",
        "count",
        "other (medians)",
    ];
    let body = rows
        .iter()
        .map(|r| {
            vec![
                r.scenario.clone(),
                r.point.clone(),
                r.contestant.clone(),
                r.placement.clone(),
                r.metric.clone(),
                num(r.primary.median),
                if r.unstable() {
                    format!("{}–{} (unstable)", num(r.primary.min), num(r.primary.max))
                } else {
                    format!("{}–{}", num(r.primary.min), num(r.primary.max))
                },
                r.ratio
                    .map(|x| format!("{x:.2}"))
                    .unwrap_or_else(|| "–".into()),
                r.count.to_string(),
                extras(r),
            ]
        })
        .collect();
    (head, body)
}

/// A Markdown table.
pub fn markdown_table(rows: &[Row]) -> String {
    let (head, body) = cells(rows);
    let mut s = format!("| {} |\n", head.join(" | "));
    let _ = writeln!(s, "|{}", head.iter().map(|_| "---|").collect::<String>());
    for r in body {
        let _ = writeln!(s, "| {} |", r.join(" | "));
    }
    s
}

/// A plain, column-aligned table for a terminal.
pub fn text_table(rows: &[Row]) -> String {
    let (head, body) = cells(rows);
    let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in &body {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cols: Vec<String>| -> String {
        let mut s = String::new();
        for (i, (c, w)) in cols.iter().zip(&width).enumerate() {
            if i + 1 == cols.len() {
                s.push_str(c);
            } else {
                let pad = w - c.chars().count();
                s.push_str(c);
                s.push_str(&" ".repeat(pad + 2));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut s = line(head.iter().map(|h| h.to_string()).collect());
    let mut last = String::new();
    for r in body {
        if r[0] != last && !last.is_empty() {
            s.push('\n');
        }
        last = r[0].clone();
        s.push_str(&line(r));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(c: &str, r: u32, v: f64) -> Sample {
        Sample {
            scenario: "sequential".into(),
            point: "N=10".into(),
            part: "get".into(),
            x: None,
            contestant: c.into(),
            placement: "colocated".into(),
            repeat: r,
            count: 10,
            metric: "ops/s".into(),
            slice: None,
            value: v,
        }
    }

    #[test]
    fn ratio_to_floor() {
        let samples = vec![
            s("floor", 1, 100.0),
            s("floor", 2, 110.0),
            s("floor", 3, 90.0),
            s("mcpool", 1, 95.0),
            s("mcpool", 2, 99.0),
            s("mcpool", 3, 50.0),
        ];
        let rows = rows(&samples, &["floor".into(), "mcpool".into()]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].contestant, "mcpool");
        assert_eq!(rows[1].ratio, Some(0.95));
        assert_eq!(rows[1].primary.min, 50.0);
        let md = markdown_table(&rows);
        assert_eq!(md.lines().count(), 4);
        assert!(csv(&samples).lines().count() == 7);
        assert!(text_table(&rows).contains("0.95"));
    }

    #[test]
    fn a_warm_up_row_shows_its_ratio_to_the_steady_rate() {
        let at = |point: &str, c: &str, r: u32, v: f64| Sample {
            point: point.into(),
            part: "set".into(),
            ..s(c, r, v)
        };
        let samples = vec![
            at("N=10", "floor", 1, 100.0),
            at("N=10", "java", 1, 80.0),
            at("N=10", "java", 2, 80.0),
            at("warm-up", "java", 1, 40.0),
            at("warm-up", "java", 2, 48.0),
            at("warm-up", "java", 3, 44.0),
        ];
        let mut rows = rows(&samples, &["floor".into(), "java".into()]);
        add_steady_ratios(&mut rows, "sequential", "warm-up", "N=10");
        let w = rows.iter().find(|r| r.point == "warm-up set").unwrap();
        assert_eq!(w.primary.median, 44.0);
        assert_eq!(w.ratio, None, "the floor has no warm-up row");
        assert_eq!(w.extra, vec![("steady_ratio".to_string(), 0.55)]);
        let md = markdown_table(&rows);
        let line = md.lines().find(|l| l.contains("warm-up set")).unwrap();
        assert!(line.contains("× steady 0.55"), "{line}");
        // The steady rows get no ratio of their own.
        assert!(rows
            .iter()
            .filter(|r| r.point != "warm-up set")
            .all(|r| r.extra.is_empty()));
    }
}
