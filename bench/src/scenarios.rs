//! The five scenarios: what each point runs, where it is pinned, how its counts are sized.

use super::work::{Op, Work};

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
            Scenario {
                name: "sequential",
                placement: Placement::Colocated,
                points: ns
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
                    })
                    .collect(),
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
                            Size::Quick => 1_000,
                            Size::Full => 2_000,
                        })
                    })
                    .collect(),
            });
            Scenario {
                name: "multiget",
                placement: Placement::Colocated,
                points,
            }
        }
        "threads" | "bulk" => {
            let bulk = name == "bulk";
            // `--quick` keeps the ends and one middle point of each curve (3 minutes with
            // every peer); the full run has them all.
            let threads: &[u32] = match (bulk, size) {
                (_, Size::Smoke) => &[1, 4],
                (false, Size::Quick) => &[1, 10, 100, 300],
                (false, Size::Full) => &[1, 10, 50, 100, 300],
                (true, Size::Quick) => &[1, 10, 50],
                (true, Size::Full) => &[1, 10, 20, 30, 40, 50],
            };
            let (vsize, keyspace, get_pct, mget) = if bulk {
                (30_800, 1_000, 90, 100)
            } else {
                (64, 10_000, 80, 1)
            };
            let keyspace = if small { keyspace.min(200) } else { keyspace };
            let p = format!("{tag}{}", if bulk { "b" } else { "t" });
            Scenario {
                name: if bulk { "bulk" } else { "threads" },
                placement: Placement::Split,
                points: threads
                    .iter()
                    .map(|&t| Point {
                        label: format!("threads={t}"),
                        x: Some(f64::from(t)),
                        prep: vec![Work::Fill {
                            keyspace,
                            size: vsize,
                            compress: bulk,
                            prefix: p.clone(),
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
                    })
                    .collect(),
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
}
