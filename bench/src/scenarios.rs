//! The five scenarios: what each point runs, where it is pinned, how its counts are sized.

use super::work::{Op, ValueKind, Work};

/// The sequential scenario's point timing a fresh driver's first operations (the JVM
/// warm-up that seed 000 shows); its rows are compared with the same part at the scenario's
/// first point (N=10000 in `--quick` and full runs), the steady rate.
pub const WARM_UP: &str = "warm-up";
/// The bulk scenario's value size (bytes).
pub const BULK_VALUE_SIZE: usize = 30_800;
/// Operations a fresh driver is timed for in the [`WARM_UP`] point.
pub const WARM_UP_OPS: u64 = 10_000;

/// The scenario names, in run order.
pub const NAMES: [&str; 5] = ["sequential", "kilobyte", "multiget", "threads", "bulk"];

/// How big a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// Every count as the issue specifies.
    Full,
    /// `--quick`: the short counts, under 3 minutes for everything installed.
    Quick,
    /// `--smoke` (hidden): tiny counts for the test suite.
    Smoke,
}

/// Where client and server run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Client and server on the same CPU (CPU 1).
    Colocated,
    /// Client on CPU 0, server on CPU 1.
    Split,
}

impl Placement {
    /// The report's word for it.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Colocated => "colocated",
            Placement::Split => "split",
        }
    }
    /// CPUs of the client.
    pub fn client_cpu(self) -> usize {
        match self {
            Placement::Colocated => 1,
            Placement::Split => 0,
        }
    }
}

/// One timed piece of a point.
#[derive(Clone, Debug)]
pub struct Part {
    /// Label within the point, e.g. `get`.
    pub label: String,
    /// The work at its requested count.
    pub work: Work,
    /// The count is lowered when a warm-up predicts a repeat longer than this (seconds)...
    pub budget_secs: f64,
    /// ...but never below this.
    pub min_count: u64,
    /// Primary metric: `ops/s` or `calls/s`.
    pub metric: &'static str,
    /// Count of the untimed warm-up run (which also measures the rate for sizing); 0 reuses
    /// the rate measured for the same part at the previous point.
    pub warm_count: u64,
    /// Warm-ups run at least this many times (growing), so that the rate is measured past
    /// the fixed cost of a run (starting and reaping hundreds of threads or processes).
    pub min_warm_ups: u32,
}

/// One point of a scenario: untimed preparation, then parts timed together per repeat.
#[derive(Clone, Debug)]
pub struct Point {
    /// e.g. `N=100000`, `keys=100`, `threads=300`.
    pub label: String,
    /// Chart abscissa (thread count, keys per call), if charted.
    pub x: Option<f64>,
    /// Untimed work done once before warm-up.
    pub prep: Vec<Work>,
    /// Timed parts, run in this order in every repeat.
    pub parts: Vec<Part>,
    /// Every timed repeat runs in a freshly started driver (no warm-up), and only for
    /// contestants that ask for it (`warm_up_row = yes` in peers.conf).
    pub fresh: bool,
    /// Timed repeats of this point when fewer than the run's (`--quick`'s fresh starts).
    pub repeats: Option<u32>,
}

/// A scenario's points and placement.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its name (one of [`NAMES`]).
    pub name: &'static str,
    /// Where it runs.
    pub placement: Placement,
    /// Its points.
    pub points: Vec<Point>,
}

impl Part {
    fn warm(mut self, n: u64) -> Part {
        self.warm_count = n;
        self
    }
    fn budget(mut self, secs: f64) -> Part {
        self.budget_secs = secs;
        self
    }
    fn warm_ups(mut self, at_least: u32) -> Part {
        self.min_warm_ups = at_least;
        self
    }
}

fn seq(op: Op, n: u64, size: usize, prefix: &str) -> Work {
    Work::Seq {
        op,
        n,
        size,
        prefix: prefix.into(),
        slice: 10_000,
    }
}

/// Scales a work's count: `n` ops (seq), calls (mget), ops per thread (mix).
pub fn with_count(w: &Work, n: u64) -> Work {
    let mut w = w.clone();
    match &mut w {
        Work::Seq { n: c, .. } | Work::Mget { calls: c, .. } | Work::Mix { ops: c, .. } => *c = n,
        Work::Fill { .. } => {}
    }
    w
}

/// The count a work is sized by (see [`with_count`]).
pub fn count(w: &Work) -> u64 {
    match w {
        Work::Seq { n, .. } => *n,
        Work::Mget { calls, .. } => *calls,
        Work::Mix { ops, .. } => *ops,
        Work::Fill { keyspace, .. } => u64::from(*keyspace),
    }
}

/// Builds scenario `name` at `size`. `tag` makes keys unique to a contestant.
pub fn build(name: &str, size: Size, tag: &str) -> Option<Scenario> {
    // Seconds per timed repeat: sequential parts, multiget calls, and the threaded mixes
    // (long enough that thread start-up and stragglers do not decide). Sequential repeats
    // are capped in every size: 16 contestants times 3 repeats of N = 1,000,000 would take
    // over an hour; the `count` column shows how many operations each repeat timed.
    let (seq_budget, adapt) = match size {
        Size::Full => (0.8, 0.25),
        Size::Quick => (0.07, 0.035),
        Size::Smoke => (0.2, 0.02),
    };
    let mix_budget = |bulk: bool| match (size, bulk) {
        (Size::Full, false) => 0.6,
        (Size::Full, true) => 0.4,
        (Size::Quick, false) => 0.14,
        (Size::Quick, true) => 0.08,
        (Size::Smoke, _) => 0.02,
    };
    // (`--quick`: 1,000, so that the slowest peers, at 0.2 of the floor, keep the run under 3
    // minutes.)
    let floor_count = if size == Size::Full { 10_000 } else { 1_000 };
    // Warm-ups run untimed: in --quick a shorter one still sizes the repeats (and a slow
    // client no longer spends seconds warming up).
    let warm_cap = if size == Size::Full { 10_000 } else { 1_000 };
    let fixed = |label: &str, work: Work, metric| Part {
        label: label.into(),
        min_count: count(&work).min(floor_count),
        warm_count: count(&work).min(warm_cap),
        work,
        budget_secs: seq_budget,
        metric,
        min_warm_ups: 1,
    };
    let adaptive = |label: &str, work: Work, min_count, metric| Part {
        label: label.into(),
        work,
        budget_secs: adapt,
        min_count,
        metric,
        warm_count: min_count,
        min_warm_ups: 1,
    };
    let small = size == Size::Smoke;
    Some(match name {
        "sequential" => {
            let ns: &[u64] = match size {
                Size::Full => &[10_000, 100_000, 1_000_000],
                // (`--quick` caps every repeat at ~0.07 s, so a larger N would time the same
                // operations again: one N keeps it under 3 minutes.)
                Size::Quick => &[10_000],
                Size::Smoke => &[300],
            };
            let p = format!("{tag}s");
            let mut points: Vec<Point> = ns
                .iter()
                .enumerate()
                .map(|(i, &n)| Point {
                    label: format!("N={n}"),
                    x: None,
                    prep: vec![],
                    parts: [Op::Set, Op::Get, Op::Delete]
                        .into_iter()
                        .map(|op| {
                            let part = fixed(op.name(), seq(op, n, 100, &p), "ops/s");
                            // One warm-up per scenario: later points reuse its rate.
                            if i == 0 {
                                part
                            } else {
                                part.warm(0)
                            }
                        })
                        .collect(),
                    fresh: false,
                    repeats: None,
                })
                .collect();
            // The first 10,000 sets of a driver started for the purpose (the JIT's warm-up,
            // seed 000), beside the steady rate of N=10000 (the row's `× steady`). Only for
            // the contestants that ask (the JVM peers); `--quick` times one fresh start.
            let n = if small { 300 } else { WARM_UP_OPS };
            points.push(Point {
                label: WARM_UP.into(),
                x: None,
                prep: vec![],
                parts: vec![Part {
                    label: Op::Set.name().into(),
                    work: seq(Op::Set, n, 100, &format!("{tag}w")),
                    budget_secs: f64::INFINITY,
                    min_count: n,
                    metric: "ops/s",
                    warm_count: 0,
                    min_warm_ups: 0,
                }],
                fresh: true,
                repeats: (size != Size::Full).then_some(1),
            });
            Scenario {
                name: "sequential",
                placement: Placement::Colocated,
                points,
            }
        }
        "kilobyte" => {
            let n = if small { 300 } else { 10_000 };
            let p = format!("{tag}k");
            Scenario {
                name: "kilobyte",
                placement: Placement::Colocated,
                points: vec![Point {
                    label: format!("N={n}"),
                    x: None,
                    prep: vec![],
                    parts: [Op::Set, Op::Get]
                        .into_iter()
                        .map(|op| fixed(op.name(), seq(op, n, 1000, &p), "ops/s"))
                        .collect(),
                    fresh: false,
                    repeats: None,
                }],
            }
        }
        "multiget" => {
            let p = format!("{tag}m");
            let mut points: Vec<Point> = [1u32, 5, 10, 100, 500]
                .into_iter()
                .map(|k| Point {
                    label: format!("keys={k}"),
                    x: Some(f64::from(k)),
                    prep: vec![Work::Fill {
                        keyspace: 500,
                        size: 40,
                        compress: false,
                        prefix: p.clone(),
                        value: ValueKind::Letters,
                    }],
                    parts: vec![adaptive(
                        "get_multi",
                        Work::Mget {
                            keys: k,
                            calls: 1_000_000,
                            prefix: p.clone(),
                        },
                        match size {
                            Size::Smoke => 5,
                            Size::Quick => 50,
                            Size::Full => 200,
                        },
                        "calls/s",
                    )
                    .warm(if small { 3 } else { 50 })],
                    fresh: false,
                    repeats: None,
                })
                .collect();
            let n = if small { 200 } else { 100_000 };
            let q = format!("{tag}o");
            points.push(Point {
                label: "single".into(),
                x: None,
                prep: vec![],
                parts: [Op::Add, Op::Set, Op::Replace, Op::Get, Op::Delete]
                    .into_iter()
                    .map(|op| {
                        let mut part = adaptive(op.name(), seq(op, n, 40, &q), 0, "ops/s");
                        part.min_count = match size {
                            Size::Smoke => 200,
                            Size::Quick => 500,
                            Size::Full => 5_000,
                        };
                        part.warm(match size {
                            Size::Smoke => 50,
                            Size::Quick => 500,
                            Size::Full => 2_000,
                        })
                    })
                    .collect(),
                fresh: false,
                repeats: None,
            });
            Scenario {
                name: "multiget",
                placement: Placement::Colocated,
                points,
            }
        }
        "threads" | "bulk" => {
            let bulk = name == "bulk";
            // `--quick` keeps the ends and one middle point of the threads curve (3 minutes
            // with every peer); the full run has them all. The bulk scenario's second value
            // (digits, about 2:1) runs at fewer points; in `--quick` both values run at 10
            // threads only: a digits point costs about twice a letters point (every get
            // inflates 1.4 MB, and each thread does at least one), and the letters' three
            // points plus one of digits and the warm-up row would not fit 3 minutes.
            let curve: &[(ValueKind, &[u32])] = match (bulk, size) {
                (_, Size::Smoke) => &[(ValueKind::Letters, &[1, 4]), (ValueKind::Digits, &[1])],
                (false, Size::Quick) => &[(ValueKind::Letters, &[1, 10, 100, 300])],
                (false, Size::Full) => &[(ValueKind::Letters, &[1, 10, 50, 100, 300])],
                (true, Size::Quick) => &[(ValueKind::Letters, &[10]), (ValueKind::Digits, &[10])],
                (true, Size::Full) => &[
                    (ValueKind::Letters, &[1, 10, 20, 30, 40, 50]),
                    (ValueKind::Digits, &[1, 10, 50]),
                ],
            };
            let (vsize, keyspace, get_pct, mget) = if bulk {
                (BULK_VALUE_SIZE, 1_000, 90, 100)
            } else {
                (64, 10_000, 80, 1)
            };
            let mut points = vec![];
            for &(value, threads) in curve {
                if !bulk && value != ValueKind::Letters {
                    continue;
                }
                let digits = value == ValueKind::Digits;
                // Each contestant fills its own keys before the first point, and filling
                // is most of a quick run's time for the slow peers (10,000 sets at 240 µs):
                // `--quick` fills 2,000 keys for the threads mix and 200 for bulk (a
                // compression at zlib's default level per stored digits key, about 0.4
                // ms), still twice a get_multi's 100 keys; `--smoke` 200, and 100 digits
                // keys, one get_multi's worth.
                let keyspace = match (small, size == Size::Quick) {
                    (true, _) if digits => keyspace.min(mget),
                    (true, _) => keyspace.min(200),
                    (_, true) if bulk => keyspace.min(200),
                    (_, true) => keyspace.min(2_000),
                    _ => keyspace,
                };
                let p = format!(
                    "{tag}{}",
                    match (bulk, digits) {
                        (false, _) => "t",
                        (true, false) => "b",
                        (true, true) => "d",
                    }
                );
                for &t in threads {
                    points.push(Point {
                        label: if digits {
                            format!("threads={t} value={}", value.name())
                        } else {
                            format!("threads={t}")
                        },
                        x: Some(f64::from(t)),
                        prep: vec![Work::Fill {
                            keyspace,
                            size: vsize,
                            compress: bulk,
                            prefix: p.clone(),
                            value,
                        }],
                        parts: vec![adaptive(
                            "mix",
                            Work::Mix {
                                threads: t,
                                ops: 1_000_000,
                                size: vsize,
                                keyspace,
                                get_pct,
                                mget,
                                pool: 20,
                                compress: bulk,
                                prefix: p.clone(),
                                value,
                            },
                            match (bulk, size) {
                                (_, Size::Smoke) => 2,
                                (true, _) => 1,
                                (false, Size::Quick) => 5,
                                (false, Size::Full) => 10,
                            },
                            "ops/s",
                        )
                        .warm(match (bulk, small) {
                            (_, true) => 2,
                            // (`--quick`'s digits: one get_multi per thread; its timed runs
                            // are at their minimum count anyway, one operation per thread.)
                            (true, false) if digits && size == Size::Quick => 1,
                            (true, false) => (20 / t).max(1).into(),
                            (false, false) => (600 / t).max(2).into(),
                        })
                        .budget(mix_budget(bulk))
                        // In a full run, three growing warm-ups (x4 each), and the rate is
                        // the marginal one between the last two: past the cost of starting a
                        // run (waking 300 processes for the Perl clients) and past a first run
                        // that is slow for reasons of its own. With one warm-up of a few
                        // operations per thread, one Perl client's timed runs were sized to a
                        // sixth of another's, and its figure fell by half. `--quick` keeps one
                        // warm-up for its 3 minutes.
                        .warm_ups(if size == Size::Full { 3 } else { 1 })],
                        fresh: false,
                        repeats: None,
                    });
                }
            }
            Scenario {
                name: if bulk { "bulk" } else { "threads" },
                placement: Placement::Split,
                points,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds() {
        for n in NAMES {
            for s in [Size::Full, Size::Quick, Size::Smoke] {
                let sc = build(n, s, "x").unwrap();
                assert_eq!(sc.name, n);
                assert!(!sc.points.is_empty());
            }
        }
        assert!(build("nope", Size::Quick, "x").is_none());
    }

    #[test]
    fn bulk_has_both_values_and_sequential_a_fresh_warm_up() {
        for s in [Size::Full, Size::Quick, Size::Smoke] {
            let b = build("bulk", s, "x").unwrap();
            let digits: Vec<&Point> = b
                .points
                .iter()
                .filter(|p| p.label.ends_with(" value=digits"))
                .collect();
            assert!(!digits.is_empty(), "{s:?}");
            for p in &digits {
                assert!(matches!(
                    &p.prep[0],
                    Work::Fill {
                        value: ValueKind::Digits,
                        compress: true,
                        ..
                    }
                ));
                assert!(matches!(
                    &p.parts[0].work,
                    Work::Mix {
                        value: ValueKind::Digits,
                        ..
                    }
                ));
            }
            let seq = build("sequential", s, "x").unwrap();
            let w = seq.points.last().unwrap();
            assert_eq!((w.label.as_str(), w.fresh), (WARM_UP, true));
            assert_eq!(seq.points[0].label == "N=10000", s != Size::Smoke);
        }
        let q = build("bulk", Size::Quick, "x").unwrap();
        let labels: Vec<&str> = q.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["threads=10", "threads=10 value=digits"]);
        let seq = build("sequential", Size::Quick, "x").unwrap();
        assert_eq!(seq.points.last().unwrap().repeats, Some(1));
        assert_eq!(
            count(&seq.points.last().unwrap().parts[0].work),
            WARM_UP_OPS
        );
    }
}
