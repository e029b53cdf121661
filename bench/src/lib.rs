//! `mcpool bench`: mcpool against the raw socket floor and the other memcached clients, side
//! by side in one run, pinned per `docs/benchmarks/README.md`, with a report directory.
//!
//! One concept per file: `args` (options), `scenarios` (what runs), `work` (the unit of
//! work and the driver line protocol), `contestant` (who runs it), `floor`, `rust_api`
//! and `peers` (the contestants), `load` (shared loops), `stats`, `report` and `svg`
//! (what is made of the figures), `progress`, `server` and `sys`. Its own crate, so
//! the library's builds, lints and tests never compile it; the `mcpool` CLI calls [`run`].

// `unsafe` only in `sys` (system calls, C zlib), each block with its `// SAFETY:` line.
#![deny(unsafe_code)]
#![deny(clippy::undocumented_unsafe_blocks)]

/// `print!`, `println!` and `eprintln!` without their panic on a failed write: a closed pipe
/// (`mcpool bench --list-peers | head -1`) drops the rest of the output, never a panic.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = std::io::Write::write_fmt(&mut std::io::stdout().lock(), format_args!($($t)*));
    }};
}
macro_rules! sayln {
    ($($t:tt)*) => { say!("{}\n", format_args!($($t)*)) };
}
macro_rules! say_err {
    ($($t:tt)*) => {{
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr().lock(),
            format_args!("{}\n", format_args!($($t)*)),
        );
    }};
}

mod args;
mod contestant;
mod floor;
mod group;
mod load;
mod peers;
mod progress;
mod report;
mod rust_api;
mod scenarios;
mod server;
mod settle;
mod stats;
mod svg;
mod sys;
mod work;

use contestant::{Contestant, Entry, Kind};
use mcpool_testkit::Spawn;
use progress::Progress;
use report::Sample;
use scenarios::{count, with_count, Scenario, Size};
use std::fmt::Write as _;
use std::path::PathBuf;
use work::{Answer, Reply, Work};

/// Runs the benchmark against `servers` (the first one; none: a private memcached started
/// here) with the command line's `args`; returns the exit status.
pub fn run(servers: &[String], args: &[String]) -> i32 {
    let opts = match args::parse(args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            say!("{}", args::HELP);
            return 0;
        }
        Err(e) => {
            say_err!("mcpool bench: {e}\n(run `mcpool bench --help` for usage)");
            return 2;
        }
    };
    // Settings of the private server mean nothing for a server the bench does not start.
    if !servers.is_empty() {
        let given: Vec<&str> = [
            opts.server_threads.map(|_| "--server-threads"),
            opts.server_reqs_per_event
                .map(|_| "--server-reqs-per-event"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !given.is_empty() {
            say_err!(
                "mcpool bench: {} set the private memcached the bench starts without --servers; \
                 with --servers ({}) it starts none: set them on that server, or leave out \
                 --servers\n(run `mcpool bench --help` for usage)",
                given.join(" and "),
                servers.join(",")
            );
            return 2;
        }
    }
    // A server given that does not answer fails the bench before any peer is built or any
    // scenario runs: every operation would fail, and no figure would mean anything.
    if let (Some(first), false) = (servers.first(), opts.list_peers) {
        if let Err(e) = server::version(first) {
            say_err!("mcpool bench: the server {first} (--servers) does not answer: {e}; nothing was run");
            return 2;
        }
    }
    rust_api::OP_HOOK_NOOP.store(opts.op_hook_noop, std::sync::atomic::Ordering::Relaxed);
    let mut progress = Progress::new();
    let specs = match peers::load() {
        Ok(s) => s,
        Err(e) => {
            progress.say(&format!("warning: no peers: {e}"));
            vec![]
        }
    };
    if opts.list_peers {
        for s in &specs {
            match s.check() {
                Ok(()) => sayln!("{:<24} installed   {}", s.name, s.note),
                Err(e) => sayln!("{:<24} missing     {e}", s.name),
            }
        }
        return 0;
    }
    let selected: Vec<&peers::PeerSpec> = match &opts.peers {
        None => specs.iter().collect(),
        Some(list) => {
            for want in list {
                let builtin =
                    want == "protocols" || want == "mcpool-meta" || want == "mcpool-binary";
                if !builtin && !specs.iter().any(|s| &s.name == want || &s.family == want) {
                    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
                    say_err!(
                        "mcpool bench: unknown peer {want:?} (peers: {}, or all, none)",
                        names.join(", ")
                    );
                    return 2;
                }
            }
            specs
                .iter()
                .filter(|s| list.iter().any(|w| *w == s.name || *w == s.family))
                .collect()
        }
    };
    let mut entries = Entry::builtin();
    if let Some(list) = &opts.peers {
        for v in Entry::protocol_variants() {
            if list.iter().any(|w| w == "protocols" || *w == v.name) {
                entries.push(v);
            }
        }
    }
    let mut missing: Vec<(String, String)> = vec![];
    for spec in selected {
        progress.status(&format!("peer {}: checking and building", spec.name));
        match spec.check().and_then(|_| spec.build()) {
            Ok(()) => entries.push(Entry {
                name: spec.name.clone(),
                note: spec.note.clone(),
                kind: Kind::Peer(spec.clone()),
            }),
            Err(e) => {
                progress.say(&format!("peer {} skipped: {e}", spec.name));
                missing.push((spec.name.clone(), e));
            }
        }
    }

    let cpus = sys::cpus_online();
    let pinning = !opts.unpinned && cpus >= 2;
    let mut _private = None;
    let (addr, server_where) = if let Some(first) = servers.first() {
        if servers.len() > 1 {
            progress.say("note: bench uses only the first of --servers");
        }
        (
            first.clone(),
            "external (not pinned by the tool)".to_string(),
        )
    } else {
        let pin = pinning.then_some("1");
        let reqs = opts.server_reqs_per_event.map(|r| r.to_string());
        let extra: Vec<&str> = match &reqs {
            Some(r) => vec!["-R", r],
            None => vec![],
        };
        let spawn = Spawn {
            threads: opts.server_threads.unwrap_or(2),
            memory_mb: Some(1024),
            max_connections: Some(4096),
            pin,
            extra: &extra,
            ..Spawn::default()
        };
        match spawn.start() {
            Ok(m) => {
                let a = m.addr();
                _private = Some(m);
                let w = if pinning { "CPU 1" } else { "unpinned" };
                (a, format!("private, {w}"))
            }
            Err(e) => {
                say_err!("mcpool bench: {e}");
                return 2;
            }
        }
    };
    let version = match server::version(&addr) {
        Ok(v) => v,
        Err(e) => {
            say_err!("mcpool bench: the server {addr} does not answer: {e}; nothing was run");
            return 2;
        }
    };
    let server_threads = server::stat(&addr, "threads")
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "?".into());
    let reqs_per_event = server::setting(&addr, "reqs_per_event").unwrap_or_else(|_| "?".into());
    let mut machine = String::new();
    let _ = writeln!(
        machine,
        "machine: {cpus} CPUs ({}), memcached {version} -t {server_threads} -R {reqs_per_event} at {addr}, server {server_where}",
        cpu_model()
    );
    let _ = writeln!(
        machine,
        "placement: {}",
        if pinning {
            "colocated = client and server on CPU 1 (sequential, kilobyte, multiget); \
             split = client CPU 0, server CPU 1 (threads, bulk)"
        } else {
            "unpinned (figures vary from run to run on a shared machine)"
        }
    );
    let order: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
    let _ = writeln!(
        machine,
        "size: {:?}, {} timed repeats per point after a warm-up, contestants taking turns \
         repeat by repeat; contestants: {}",
        opts.size,
        opts.repeats,
        order.join(", ")
    );
    if opts.scenarios.contains(&"bulk") {
        let _ = writeln!(machine, "{}", bulk_values());
    }
    for (name, why) in &missing {
        let _ = writeln!(machine, "missing peer {name}: {why}");
    }
    progress.say(machine.trim_end());

    let run_id = format!("{:x}", std::process::id() & 0xfff);
    let mut samples: Vec<Sample> = vec![];
    let mut acc = Accounts::default();
    let run_start = std::time::Instant::now();
    // Scenarios run in groups of one placement (they are ordered so); each contestant is
    // started once per group, so a JVM warms up once. Within a point the contestants take
    // turns: each is prepared and warmed up, then repeat 1 runs for every contestant, then
    // repeat 2, and so on. This machine's speed drifts by a few percent over minutes and
    // every ratio divides by the floor: taking turns gives every contestant the same drift,
    // instead of favouring whoever runs nearest the floor.
    let mut groups: Vec<(scenarios::Placement, Vec<(usize, &'static str)>)> = vec![];
    for (si, &name) in opts.scenarios.iter().enumerate() {
        let placement = scenarios::build(name, opts.size, "")
            .expect("known")
            .placement;
        match groups.last_mut() {
            Some((p, v)) if *p == placement => v.push((si, name)),
            _ => groups.push((placement, vec![(si, name)])),
        }
    }
    for (placement, group) in &groups {
        let label = match (pinning, servers.is_empty()) {
            (false, _) => "unpinned".to_string(),
            (true, true) => placement.name().to_string(),
            (true, false) => format!("client CPU {}", placement.client_cpu()),
        };
        let cpu_arg = pinning.then(|| placement.client_cpu().to_string());
        let pin_to: Vec<usize> = if pinning {
            vec![placement.client_cpu()]
        } else {
            (0..cpus).collect()
        };
        if let Err(e) = sys::pin_current_thread(&pin_to) {
            progress.say(&format!("warning: {e}"));
        }
        let setting = Setting {
            placement: &label,
            repeats: opts.repeats,
            addr: &addr,
        };
        let mut runners: Vec<Runner> = entries
            .iter()
            .enumerate()
            .map(|(ci, entry)| Runner {
                ci,
                entry,
                tag: format!("b{run_id}c{ci}"),
                running: None,
                last_prep: None,
            })
            .collect();
        for &(si, name) in group {
            let what = |r: &Runner| {
                format!(
                    "[{}/{}] {name} · {} ({}/{})",
                    si + 1,
                    opts.scenarios.len(),
                    r.entry.name,
                    r.ci + 1,
                    entries.len()
                )
            };
            // Who takes part in this scenario: (runner, its scenario, warm-up rates).
            let mut turns: Vec<Turn> = vec![];
            for (ri, r) in runners.iter_mut().enumerate() {
                let began = std::time::Instant::now();
                if r.running.is_none() {
                    progress.status(&format!("{}: starting", what(r)));
                    r.last_prep = None;
                    match r.entry.start(&addr, cpu_arg.as_deref()) {
                        Ok(c) => r.running = Some(c),
                        Err(e) => {
                            progress.say(&format!("{}: failed to start: {e}", what(r)));
                            acc.notes
                                .push(format!("{name} / {}: failed to start: {e}", r.entry.name));
                            continue;
                        }
                    }
                }
                acc.spent
                    .push((r.entry.name.clone(), name, began.elapsed().as_secs_f64()));
                turns.push(Turn {
                    runner: ri,
                    sc: scenarios::build(name, opts.size, &r.tag).expect("known"),
                    rates: std::collections::HashMap::new(),
                    count: 0,
                });
            }
            let points = turns.first().map_or(0, |t| t.sc.points.len());
            for pi in 0..points {
                // Preparation and warm-up, each contestant in turn; then the timed repeats.
                let mut ready: Vec<usize> = vec![];
                for (ti, t) in turns.iter_mut().enumerate() {
                    let r = &mut runners[t.runner];
                    if t.sc.points[pi].fresh {
                        // Timed in a driver started for each repeat: no preparation, no
                        // warm-up; only for the contestants that ask for it.
                        if r.entry.warm_up_row() {
                            t.count = t.sc.points[pi]
                                .parts
                                .iter()
                                .map(|p| count(&p.work))
                                .min()
                                .unwrap_or(0);
                            ready.push(ti);
                        }
                        continue;
                    }
                    let began = std::time::Instant::now();
                    let w = what(r);
                    let ctx = setting.ctx(&t.sc, &r.entry.name, &w);
                    let c = r.running.as_mut().expect("started");
                    let warmed = warm_up(
                        &ctx,
                        pi,
                        c.as_mut(),
                        &mut progress,
                        &mut t.rates,
                        &mut r.last_prep,
                    );
                    match warmed {
                        Ok(Some(n)) => {
                            t.count = n;
                            ready.push(ti);
                        }
                        Ok(None) => {
                            let p = &t.sc.points[pi].label;
                            progress.say(&format!("{w}: {p} not applicable"));
                        }
                        Err(_) => {}
                    }
                    end_step(
                        r,
                        name,
                        &w,
                        began,
                        warmed.map(drop),
                        &mut progress,
                        &mut acc,
                    );
                }
                let repeats = turns
                    .first()
                    .and_then(|t| t.sc.points[pi].repeats)
                    .map_or(opts.repeats, |r| r.min(opts.repeats));
                for rep in 1..=repeats {
                    // Each repeat starts one contestant further on, so nobody always runs
                    // right after the same other one.
                    for k in 0..ready.len() {
                        let ti = ready[(k + rep as usize - 1) % ready.len()];
                        let t = &turns[ti];
                        let r = &mut runners[t.runner];
                        if r.running.is_none() {
                            continue; // failed in an earlier repeat
                        }
                        let began = std::time::Instant::now();
                        let w = what(r);
                        let ctx = setting.ctx(&t.sc, &r.entry.name, &w);
                        let timed = if t.sc.points[pi].fresh {
                            // A driver of its own, started now and stopped after the repeat
                            // (the running one stays as warm as it was).
                            progress.status(&format!("{w}: starting a fresh driver"));
                            r.entry.start(&addr, cpu_arg.as_deref()).and_then(|mut c| {
                                timed_repeat(
                                    &ctx,
                                    pi,
                                    rep,
                                    t.count,
                                    c.as_mut(),
                                    &mut progress,
                                    &mut samples,
                                )
                            })
                        } else {
                            let c = r.running.as_mut().expect("checked above");
                            timed_repeat(
                                &ctx,
                                pi,
                                rep,
                                t.count,
                                c.as_mut(),
                                &mut progress,
                                &mut samples,
                            )
                        };
                        end_step(r, name, &w, began, timed, &mut progress, &mut acc);
                    }
                }
                // A contestant that failed sits out the rest of the scenario.
                turns.retain(|t| runners[t.runner].running.is_some());
            }
        }
    }
    progress.done();
    drop(_private);

    let mut rows = report::rows(&samples, &order);
    // Each warm-up row beside the steady rate: the same part at the scenario's first point.
    if let Some(sc) = scenarios::build("sequential", opts.size, "") {
        report::add_steady_ratios(
            &mut rows,
            "sequential",
            scenarios::WARM_UP,
            &sc.points[0].label,
        );
    }
    let out = opts.out.clone().unwrap_or_else(default_out);
    let mut configs = String::new();
    for e in entries.iter().take(order.len()) {
        let _ = writeln!(configs, "- **{}**: {}", e.name, e.note);
    }
    for (n, why) in &missing {
        let _ = writeln!(configs, "- **{n}**: not run: {why}");
    }
    let mut md = format!(
        "# mcpool bench\n\ncommand: `mcpool {}`\n\n```\n{machine}```\n\n## Contestants\n\n{configs}\n## Results\n\n\
         Median of the timed repeats, min–max, and the ratio to the floor of the same run \
         (`× floor`). Latencies are per operation.\n\n{}",
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        report::markdown_table(&rows)
    );
    md.push_str(&time_spent(
        &acc.spent,
        &order,
        &opts.scenarios,
        run_start.elapsed(),
    ));
    md.push_str(&settle::report(&acc.waits, &order));
    if !acc.notes.is_empty() {
        md.push_str("\n## Notes\n\n");
        for n in &acc.notes {
            let _ = writeln!(md, "- {n}");
        }
    }
    let charts = charts(&rows);
    if !charts.is_empty() {
        md.push_str("\n## Charts\n\n");
        for (file, _) in &charts {
            let _ = writeln!(md, "![{file}]({file})\n");
        }
    }
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&out)?;
        std::fs::write(out.join("results.md"), &md)?;
        std::fs::write(out.join("results.csv"), report::csv(&samples))?;
        for (file, svg) in &charts {
            std::fs::write(out.join(file), svg)?;
        }
        Ok(())
    };
    if let Err(e) = write() {
        say_err!("mcpool bench: cannot write {}: {e}", out.display());
        return 2;
    }
    say!("{machine}\n{}", report::text_table(&rows));
    for n in &acc.notes {
        sayln!("note: {n}");
    }
    progress.say(&format!("report written to {}", out.display()));
    if !acc.all_failed.is_empty() {
        say_err!(
            "mcpool bench: every operation failed in {} run(s), left out of the figures: {}",
            acc.all_failed.len(),
            acc.all_failed.join("; ")
        );
        return 2;
    }
    0
}

/// A contestant during one placement group: started once, its keys tagged with `tag`.
struct Runner<'e> {
    ci: usize,
    entry: &'e Entry,
    tag: String,
    running: Option<Box<dyn Contestant>>,
    /// The preparation last done, so the same one is not redone for the next point.
    last_prep: Option<Vec<Work>>,
}

/// A contestant's part in one scenario.
struct Turn {
    runner: usize,
    sc: Scenario,
    /// Warm-up rates per part label, which size the timed runs.
    rates: std::collections::HashMap<String, f64>,
    /// Operations (or calls) per timed run at the current point.
    count: u64,
}

/// What a scenario run needs to know.
struct Ctx<'a> {
    sc: &'a Scenario,
    contestant: &'a str,
    placement: &'a str,
    repeats: u32,
    addr: &'a str,
    what: &'a str,
}

/// What every contestant's [`Ctx`] in a placement group shares.
struct Setting<'a> {
    placement: &'a str,
    repeats: u32,
    addr: &'a str,
}

impl Setting<'_> {
    /// The context of `contestant`'s step in scenario `sc`, shown as `what`.
    fn ctx<'b>(&'b self, sc: &'b Scenario, contestant: &'b str, what: &'b str) -> Ctx<'b> {
        Ctx {
            sc,
            contestant,
            placement: self.placement,
            repeats: self.repeats,
            addr: self.addr,
            what,
        }
    }
}

/// Where the run's steps are accounted for (besides the progress display).
#[derive(Default)]
struct Accounts {
    /// The run's notes (the report's "Notes").
    notes: Vec<String>,
    /// Wall time per (contestant, scenario), driver start-up included: where a run's time
    /// goes.
    spent: Vec<(String, &'static str, f64)>,
    /// The waits for drivers to settle.
    waits: Vec<(String, std::time::Duration)>,
    /// The steps in which every operation failed (their figures are left out).
    all_failed: Vec<String>,
}

/// Ends one step of `r`'s turn in `scenario` (begun at `began`, shown as `what`): its time
/// is added to the time spent; an error is reported and noted, and stops the contestant (it
/// is started again for the next scenario; a run whose every operation failed is counted
/// too, for the exit status); otherwise the next step waits until the contestant's driver
/// has stopped using the CPU (`settle`).
fn end_step(
    r: &mut Runner,
    scenario: &'static str,
    what: &str,
    began: std::time::Instant,
    result: Result<(), String>,
    progress: &mut Progress,
    acc: &mut Accounts,
) {
    if let Err(e) = result {
        if e.starts_with(ALL_FAILED) {
            acc.all_failed
                .push(format!("{scenario} / {}", r.entry.name));
        }
        progress.say(&format!("{what}: {e}"));
        acc.notes
            .push(format!("{scenario} / {}: {e}", r.entry.name));
        r.running = None;
    } else if let Some(c) = r.running.as_mut() {
        acc.waits.push((r.entry.name.clone(), c.settle()));
    }
    acc.spent.push((
        r.entry.name.clone(),
        scenario,
        began.elapsed().as_secs_f64(),
    ));
}

/// The start of the error of a run whose every operation failed.
const ALL_FAILED: &str = "every operation failed";

/// The answer, or `None` when the contestant cannot do the work. A run whose every
/// operation failed is an error (beginning [`ALL_FAILED`]): its time measures failures, never
/// a throughput to report (tester finding cli2 2).
fn ask(c: &mut dyn Contestant, w: &Work) -> Result<Option<Reply>, String> {
    match c.run(w)? {
        Answer::Ok(r) if w.ops() > 0 && r.errors >= w.ops() => Err(format!(
            "{ALL_FAILED} ({} errors in {} operations; is the server up?)",
            r.errors,
            w.ops()
        )),
        Answer::Ok(r) => Ok(Some(r)),
        Answer::NotApplicable(_) => Ok(None),
    }
}

/// [`ask`] for a warm-up, which only sizes the timed runs: its operations may fail without
/// the server being down. A longer warm-up of a part runs again over keys its first one
/// used: a second `delete` warm-up finds every key of the first deleted already, and the
/// gets beyond what the set warm-up stored miss, so every operation of it "failed" and the
/// contestant was dropped from the point (seen on a fresh machine, 2026-12-05: `mcpool bench
/// sequential --quick` dropped the floor or mcpool in 3 runs of 4). A server that is really
/// down fails the timed runs, which [`ask`] checks.
fn ask_warm(c: &mut dyn Contestant, w: &Work) -> Result<Option<Reply>, String> {
    match c.run(w)? {
        Answer::Ok(r) => Ok(Some(r)),
        Answer::NotApplicable(_) => Ok(None),
    }
}

/// Prepares point `pi` and warms it up; the count each timed run will do, or `None` when
/// the contestant cannot do the point.
fn warm_up(
    ctx: &Ctx,
    pi: usize,
    c: &mut dyn Contestant,
    progress: &mut Progress,
    rates: &mut std::collections::HashMap<String, f64>,
    last_prep: &mut Option<Vec<Work>>,
) -> Result<Option<u64>, String> {
    let point = &ctx.sc.points[pi];
    progress.status(&format!(
        "{}: {} ({}/{}) warm-up",
        ctx.what,
        point.label,
        pi + 1,
        ctx.sc.points.len()
    ));
    // The same preparation as the point before (same keys, same values) is not redone.
    if last_prep.as_ref() != Some(&point.prep) {
        for w in &point.prep {
            if ask(c, w)?.is_none() {
                return Ok(None);
            }
        }
        *last_prep = Some(point.prep.clone());
    }
    // Warm-up, which also measures the rate that sizes the timed runs. All parts of a point
    // get one count (gets must find what the sets stored, deletes what the gets read).
    let mut n = u64::MAX;
    for part in &point.parts {
        let per_sec = match rates.get(&part.label) {
            Some(&r) if part.warm_count == 0 => r,
            _ => {
                // A warm-up far shorter than the budget sizes badly (start-up and stragglers
                // dominate it): warm up again, longer, at most twice.
                let mut n = part.warm_count.max(1);
                let mut rate = 0.0;
                let mut before = None;
                for i in 1..=3 {
                    let w = with_count(&part.work, n);
                    let Some(r) = ask_warm(c, &w)? else {
                        return Ok(None);
                    };
                    let secs = r.ns.max(1) as f64 / 1e9;
                    rate = warm_rate(before, n, secs);
                    before = Some((n, secs));
                    // Twice as long at least (four times when another warm-up is due, so
                    // that the two differ by more than the noise), 16 times at most.
                    let grow = if i < part.min_warm_ups { 4 } else { 2 };
                    let longer = ((rate * part.budget_secs / 2.0) as u64)
                        .max(n.saturating_mul(grow))
                        .min(n.saturating_mul(16))
                        .min(count(&part.work));
                    let enough = !part.budget_secs.is_finite()
                        || secs * 4.0 >= part.budget_secs
                        || longer <= n;
                    if enough && i >= part.min_warm_ups {
                        break;
                    }
                    n = longer;
                }
                rate
            }
        };
        rates.insert(part.label.clone(), per_sec);
        let want = (per_sec * part.budget_secs).min(count(&part.work) as f64);
        n = n.min((want as u64).max(part.min_count));
    }
    Ok(Some(n))
}

/// The rate (per second) a warm-up of `n` taking `secs` shows. After an earlier, smaller
/// warm-up (`before`), the marginal rate between the two: what each further operation costs,
/// without the fixed cost of a run (waking and reaping its threads or processes), bounded
/// by 1 and 4 times the plain rate against noise.
fn warm_rate(before: Option<(u64, f64)>, n: u64, secs: f64) -> f64 {
    let plain = n as f64 / secs;
    match before {
        Some((n0, s0)) if n > n0 && secs > s0 => {
            ((n - n0) as f64 / (secs - s0)).clamp(plain, 4.0 * plain)
        }
        _ => plain,
    }
}

/// Runs repeat `rep` of point `pi`, every part at `n`, and records its samples.
fn timed_repeat(
    ctx: &Ctx,
    pi: usize,
    rep: u32,
    n: u64,
    c: &mut dyn Contestant,
    progress: &mut Progress,
    samples: &mut Vec<Sample>,
) -> Result<(), String> {
    let point = &ctx.sc.points[pi];
    let threads_scenario = ctx.sc.name == "threads";
    for part in &point.parts {
        progress.status(&format!(
            "{}: {} ({}/{}) {} repeat {rep}/{}",
            ctx.what,
            point.label,
            pi + 1,
            ctx.sc.points.len(),
            part.label,
            ctx.repeats
        ));
        let w = with_count(&part.work, n);
        let is_mix = matches!(w, Work::Mix { .. });
        let wire0 = if is_mix {
            server::wire_bytes(ctx.addr)
        } else {
            None
        };
        // What the client's compression stored for the value (its level shows here).
        let stored = match &w {
            Work::Mix {
                compress: true,
                prefix,
                ..
            } => server::stored_len(ctx.addr, &format!("{prefix}0")),
            _ => None,
        };
        let rss_base = if threads_scenario {
            c.reset_peak_rss();
            c.rss_kib()
        } else {
            None
        };
        let Some(r) = ask(c, &w)? else {
            return Err(format!(
                "{}: refused a timed run after its warm-up",
                part.label
            ));
        };
        let wire = match (wire0, is_mix) {
            (Some(a), true) => server::wire_bytes(ctx.addr).map(|b| b.saturating_sub(a)),
            _ => None,
        };
        let total = w.ops();
        let secs = r.ns.max(1) as f64 / 1e9;
        let mut push = |metric: &str, value: f64, slice: Option<u32>| {
            samples.push(Sample {
                scenario: ctx.sc.name.to_string(),
                point: point.label.clone(),
                // (A fresh point's rows name their part, for the `× steady` beside them.)
                part: if point.parts.len() > 1 || point.fresh {
                    part.label.clone()
                } else {
                    String::new()
                },
                x: point.x,
                contestant: ctx.contestant.to_string(),
                placement: ctx.placement.to_string(),
                repeat: rep,
                count: total,
                metric: metric.to_string(),
                slice,
                value,
            })
        };
        push(part.metric, total as f64 / secs, None);
        push("errors", r.errors as f64, None);
        match &w {
            Work::Seq { slice, .. } => {
                push("mean_us", secs * 1e6 / total.max(1) as f64, None);
                for (i, ns) in r.slices.iter().enumerate() {
                    push(
                        "slice_ops/s",
                        *slice as f64 / (*ns.max(&1) as f64 / 1e9),
                        Some(i as u32 + 1),
                    );
                }
            }
            Work::Mget { keys, .. } => push("keys/s", f64::from(*keys) * total as f64 / secs, None),
            Work::Mix { .. } => {
                if let Some([p50, p99, p999]) = r.lat_us {
                    push("p50_ms", p50 / 1000.0, None);
                    push("p99_ms", p99 / 1000.0, None);
                    push("p999_ms", p999 / 1000.0, None);
                }
                if let Some(v) = r.get_us {
                    push("get_us", v, None);
                }
                if let Some(v) = r.set_us {
                    push("set_us", v, None);
                }
                if let Some(b) = wire {
                    push("wire_bytes_per_op", b as f64 / total.max(1) as f64, None);
                }
                if let Some(b) = stored {
                    push("stored_bytes", b as f64, None);
                }
                if threads_scenario {
                    if let Some(k) = c.peak_rss_kib() {
                        push("peak_rss_mib", k as f64 / 1024.0, None);
                        // What was resident before the run (the process's earlier work,
                        // e.g. the floor's threads for the in-process contestants).
                        if let Some(b) = rss_base {
                            push("rss_before_mib", b as f64 / 1024.0, None);
                        }
                    }
                }
            }
            Work::Fill { .. } => {}
        }
    }
    Ok(())
}

/// The SVG charts: (file name, content).
fn charts(rows: &[report::Row]) -> Vec<(String, String)> {
    let mut out = vec![];
    // (file, scenario, the points' value, axis labels, log x): the bulk scenario's two values
    // are two charts.
    let digits = " value=digits";
    for (file, scenario, value, x_label, y_label, log_x) in [
        ("threads", "threads", None, "threads", "total ops/s", false),
        ("bulk", "bulk", Some(false), "threads", "total ops/s", false),
        (
            "bulk-digits",
            "bulk",
            Some(true),
            "threads",
            "total ops/s",
            false,
        ),
        (
            "multiget",
            "multiget",
            None,
            "keys per get_multi (log scale)",
            "calls/s",
            true,
        ),
    ] {
        let rs: Vec<&report::Row> = rows
            .iter()
            .filter(|r| r.scenario == scenario && r.x.is_some() && !r.unstable())
            .filter(|r| value.map_or(true, |d| r.point.contains(digits) == d))
            .collect();
        if rs.is_empty() {
            continue;
        }
        let mut xs: Vec<f64> = rs.iter().filter_map(|r| r.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut series: Vec<svg::Series> = vec![];
        for r in &rs {
            let p = (r.x.unwrap_or(0.0), r.primary.median);
            match series.iter_mut().find(|s| s.name == r.contestant) {
                Some(s) => s.points.push(p),
                None => series.push(svg::Series {
                    name: r.contestant.clone(),
                    points: vec![p],
                }),
            }
        }
        let placement = rs.first().map(|r| r.placement.as_str()).unwrap_or("");
        let what = match value {
            Some(true) => format!("{scenario}, digits value"),
            _ => scenario.to_string(),
        };
        let title =
            format!("{what}: {y_label} ({placement}; median of repeats; unstable points left out)");
        out.push((
            format!("{file}.svg"),
            svg::line_chart(&title, x_label, y_label, &xs, log_x, &series),
        ));
    }
    out
}

/// The header line naming the bulk scenario's values and what zlib's default level (6) makes
/// of them, measured now with the system's C zlib.
fn bulk_values() -> String {
    let size = scenarios::BULK_VALUE_SIZE;
    let zlib = sys::CZlib::load();
    let each: Vec<String> = work::ValueKind::ALL
        .into_iter()
        .map(|k| {
            let what = match k {
                work::ValueKind::Letters => "letters ('a' + (7i + i/13) mod 26)",
                work::ValueKind::Digits => "digits (\"0 1 2 3 ...\", seed 001's text)",
            };
            match &zlib {
                Ok(z) => {
                    let packed = z.compress(&k.bytes(size), 6).len();
                    format!(
                        "{what} -> {packed} bytes, {:.2}:1",
                        size as f64 / packed.max(1) as f64
                    )
                }
                Err(e) => format!("{what} -> ratio not measured ({e})"),
            }
        })
        .collect();
    format!(
        "bulk values ({size} bytes; zlib level 6, measured at start-up): {}",
        each.join("; ")
    )
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// `bench-results/<UTC timestamp>/`.
fn default_out() -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    PathBuf::from(format!(
        "bench-results/{y:04}-{m:02}-{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    ))
}

#[allow(dead_code)]
fn _size_is_used(s: Size) -> Size {
    s
}

/// The "Time spent" section: seconds per contestant and scenario (driver start-up included),
/// with totals, so a slow run shows where its time went.
fn time_spent(
    spent: &[(String, &'static str, f64)],
    order: &[String],
    scenarios: &[&'static str],
    total: std::time::Duration,
) -> String {
    let mut md = format!(
        "\n## Time spent\n\nWhole run: {:.0} s. Seconds per contestant and scenario (start-up, \
         preparation, warm-up and repeats):\n\n| contestant | {} | total |\n|---|{}---|\n",
        total.as_secs_f64(),
        scenarios.join(" | "),
        "---|".repeat(scenarios.len())
    );
    for c in order {
        let cell = |sc: &str| -> f64 {
            spent
                .iter()
                .filter(|(n, s, _)| n == c && *s == sc)
                .map(|(_, _, t)| t)
                .sum()
        };
        let cells: Vec<String> = scenarios
            .iter()
            .map(|s| format!("{:.1}", cell(s)))
            .collect();
        let sum: f64 = scenarios.iter().map(|s| cell(s)).sum();
        let _ = writeln!(md, "| {c} | {} | {sum:.1} |", cells.join(" | "));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::warm_rate;

    #[test]
    fn a_warm_up_rate_leaves_out_the_fixed_cost_of_a_run() {
        // 0.1 s to start and end a run, then 1,000 operations per second.
        let run = |n: u64| 0.1 + n as f64 / 1000.0;
        assert_eq!(warm_rate(None, 50, 0.15), 50.0 / 0.15);
        let r = warm_rate(Some((50, run(50))), 100, run(100));
        assert!((r - 1000.0).abs() < 1e-6, "{r}");
        // Noise: never below the plain rate, never above four times it.
        assert_eq!(warm_rate(Some((50, 0.2)), 100, 0.19), 100.0 / 0.19);
        assert_eq!(
            warm_rate(Some((50, 0.2)), 100, 0.2001),
            4.0 * 100.0 / 0.2001
        );
        // A smaller or equal second run: the plain rate.
        assert_eq!(warm_rate(Some((100, 0.2)), 100, 0.25), 400.0);
    }
}

#[cfg(test)]
mod warm_up_tests {
    use super::*;
    use crate::work::{Answer, Reply, Work};

    /// A contestant whose every operation fails, as a repeated delete warm-up's do (its keys
    /// were deleted by the warm-up before).
    struct AllFail;

    impl Contestant for AllFail {
        fn run(&mut self, work: &Work) -> Result<Answer, String> {
            let n = work.ops();
            Ok(Answer::Ok(Reply {
                ns: n * 20_000,
                errors: n,
                ..Reply::default()
            }))
        }
    }

    #[test]
    fn a_warm_up_whose_operations_fail_still_sizes_the_point() {
        let sc = scenarios::build("sequential", scenarios::Size::Quick, "t").unwrap();
        let ctx = Ctx {
            sc: &sc,
            contestant: "all-fail",
            placement: "colocated",
            repeats: 1,
            addr: "127.0.0.1:1",
            what: "test",
        };
        let mut rates = std::collections::HashMap::new();
        let mut prep = None;
        let n = warm_up(
            &ctx,
            0,
            &mut AllFail,
            &mut Progress::new(),
            &mut rates,
            &mut prep,
        );
        assert!(matches!(n, Ok(Some(n)) if n > 0), "{n:?}");
        // The timed runs still refuse a run whose every operation failed.
        let w = with_count(&sc.points[0].parts[0].work, 10);
        let e = ask(&mut AllFail, &w).unwrap_err();
        assert!(e.starts_with(ALL_FAILED), "{e}");
    }
}
