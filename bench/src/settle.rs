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
    let start = Instant::now();
    let Some(mut last) = cpu_time(pid) else {
        return Duration::ZERO;
    };
    loop {
        // A rate needs a window: the sleep is the measurement, not a guess at a condition.
        std::thread::sleep(WINDOW);
        let Some(now) = cpu_time(pid) else {
            return start.elapsed();
        };
        if now.saturating_sub(last) < QUIET_CPU || start.elapsed() >= MAX_WAIT {
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
    fn a_busy_thread_is_waited_for_and_an_idle_process_is_not() {
        let pid = std::process::id();
        let before = cpu_time(pid).expect("schedstat of this process");
        // Quiet: this test's threads only sleep (other tests may run beside it: bounded).
        let idle = until_quiet(pid);
        assert!(idle < MAX_WAIT + WINDOW, "{idle:?}");
        // A thread of this process spinning until told to stop: the wait goes on to its cap.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spin = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                while !stop.load(std::sync::atomic::Ordering::Relaxed)
                    && t.elapsed() < Duration::from_secs(10)
                {
                    std::hint::spin_loop();
                }
            })
        };
        let waited = until_quiet(pid);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spin.join().unwrap();
        assert!(waited >= MAX_WAIT, "{waited:?}");
        assert!(cpu_time(pid).unwrap() > before);
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
