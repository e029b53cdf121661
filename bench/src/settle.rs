//! Waiting, after a contestant's step, until its driver has stopped using the CPU.
//!
//! Why: a driver's process may go on working after it has answered: a JVM compiles the
//! code it just ran hot and collects its garbage on threads of its own. Pinned to the CPU
//! of the next contestant (the colocated scenarios put every driver and memcached on one
//! CPU), that work slowed the next contestant's repeat: in `--quick`, whose repeats last
//! 30–50 ms, the C driver's single `add`/`set` right after mcpool-java measured half its
//! rate in two runs (docs/benchmarks/README.md). The bench now waits until the driver's
//! threads stay off the CPU for a short window before the next step starts.

use std::time::{Duration, Instant};

/// The window over which a driver must use less than [`QUIET_CPU`] of CPU.
const WINDOW: Duration = Duration::from_millis(5);

/// CPU time per [`WINDOW`] under which a driver counts as quiet (10%: an idle JVM's own
/// timers stay below it).
const QUIET_CPU: Duration = Duration::from_micros(500);

/// The longest wait: a driver still busy after it is left to be (and its wait reported).
const MAX_WAIT: Duration = Duration::from_secs(2);

/// CPU time used so far by every thread of process `pid`, from the first field of each
/// `/proc/PID/task/TID/schedstat` (nanoseconds on the CPU); `None` where it cannot be read.
pub fn cpu_time(pid: u32) -> Option<Duration> {
    let mut ns = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let Ok(task) = task else { continue };
        // A thread that ended between the listing and the read counts for nothing.
        let Ok(s) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        ns += s.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(ns))
}

/// Waits until process `pid` uses less than [`QUIET_CPU`] in a [`WINDOW`], at most
/// [`MAX_WAIT`]; returns how long it waited (zero when its CPU time cannot be read).
pub fn until_quiet(pid: u32) -> Duration {
    wait_quiet(|| cpu_time(pid), MAX_WAIT)
}

/// [`until_quiet`] over any reading of CPU time (`cpu`), for at most `max`.
fn wait_quiet(mut cpu: impl FnMut() -> Option<Duration>, max: Duration) -> Duration {
    let start = Instant::now();
    let Some(mut last) = cpu() else {
        return Duration::ZERO;
    };
    loop {
        // A rate needs a window: the sleep is the measurement, not a guess at a condition.
        std::thread::sleep(WINDOW);
        let Some(now) = cpu() else {
            return start.elapsed();
        };
        if now.saturating_sub(last) < QUIET_CPU || start.elapsed() >= max {
            return start.elapsed();
        }
        last = now;
    }
}

/// The report's section on the waits: per contestant, how many steps were followed by
/// CPU work of its driver (a wait longer than two windows), their total and the longest.
pub fn report(waits: &[(String, Duration)], order: &[String]) -> String {
    let busy = |w: &Duration| *w > 2 * WINDOW;
    let mut rows = String::new();
    for c in order {
        let mine: Vec<Duration> = waits
            .iter()
            .filter(|(n, w)| n == c && busy(w))
            .map(|(_, w)| *w)
            .collect();
        if mine.is_empty() {
            continue;
        }
        let total: Duration = mine.iter().sum();
        let longest = mine.iter().max().copied().unwrap_or_default();
        rows.push_str(&format!(
            "| {c} | {} | {:.0} | {:.0} |\n",
            mine.len(),
            total.as_secs_f64() * 1e3,
            longest.as_secs_f64() * 1e3
        ));
    }
    let mut md = String::from(
        "\n## Settling\n\nAfter each step (warm-up or repeat) of a driver, the next step waited until \
         that driver's threads used under 10% of a CPU over 5 ms (at most 2 s), so that work it \
         went on doing after answering (a JVM's compiler and collector) did not run beside the \
         next contestant.",
    );
    if rows.is_empty() {
        md.push_str(" No driver kept working after a step.\n");
    } else {
        md.push_str(
            " Steps after which a driver kept working:\n\n\
             | contestant | steps | waited, ms | longest, ms |\n|---|---|---|---|\n",
        );
        md.push_str(&rows);
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_cpu_time_is_read_and_only_grows() {
        let pid = std::process::id();
        let before = cpu_time(pid).expect("schedstat of this process");
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        assert!(cpu_time(pid).expect("again") > before);
        assert_eq!(cpu_time(u32::MAX), None, "no such process");
    }

    /// A reading of CPU time that advances by `step` for its first `busy` reads, then stays.
    fn clock(busy: u32, step: Duration) -> impl FnMut() -> Option<Duration> {
        let (mut reads, mut t) = (0u32, Duration::ZERO);
        move || {
            if reads < busy {
                t += step;
            }
            reads += 1;
            Some(t)
        }
    }

    #[test]
    fn the_wait_lasts_while_the_driver_works_and_stops_at_the_cap() {
        let busy = Duration::from_millis(2); // over QUIET_CPU per window
        let waited = wait_quiet(clock(5, busy), MAX_WAIT);
        assert!(waited >= 5 * WINDOW && waited < MAX_WAIT, "{waited:?}");
        let quiet = wait_quiet(clock(0, busy), MAX_WAIT);
        assert!(quiet >= WINDOW && quiet < MAX_WAIT, "{quiet:?}");
        let cap = Duration::from_millis(60);
        let capped = wait_quiet(clock(u32::MAX, busy), cap);
        assert!(capped >= cap && capped < MAX_WAIT, "{capped:?}");
        assert_eq!(wait_quiet(|| None, MAX_WAIT), Duration::ZERO, "unreadable");
    }

    #[test]
    fn the_report_names_only_drivers_that_kept_working() {
        let waits = vec![
            ("java".to_string(), Duration::from_millis(120)),
            ("java".to_string(), Duration::from_millis(5)),
            ("java".to_string(), Duration::from_millis(30)),
            ("c".to_string(), Duration::from_millis(5)),
        ];
        let md = report(&waits, &["c".into(), "java".into()]);
        assert!(md.contains("| java | 2 | 150 | 120 |"), "{md}");
        assert!(!md.contains("| c |"), "{md}");
        assert!(report(&[], &["c".into()]).contains("No driver kept working"));
    }
}
