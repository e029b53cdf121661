//! A driver's process group: every driver runs in a group of its own, so that a driver that
//! stops answering is reported with every process it forked (where each thread waits) and
//! killed with all of them. A forked child left behind would otherwise go on running (a
//! spinning one on the client's CPU) beside every contestant after it.

#![allow(unsafe_code)] // kill(2) of a process group

/// One process of a group, from `/proc`.
#[derive(Debug, PartialEq)]
struct Stat {
    pid: u32,
    comm: String,
    state: char,
    pgrp: i64,
}

/// Parses `/proc/PID/stat` (`pid (comm) state ppid pgrp ...`; comm may hold spaces and
/// parentheses, so the last `)` ends it).
fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text[..open].trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_string();
    let mut rest = text.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let _ppid = rest.next()?;
    let pgrp = rest.next()?.parse().ok()?;
    Some(Stat {
        pid,
        comm,
        state,
        pgrp,
    })
}

fn stat_of(path: &std::path::Path) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(path.join("stat")).ok()?)
}

/// What the group's processes are doing: per process its threads' state (R running, S
/// sleeping, D in the kernel...) and kernel wait channel, e.g. `4242 perl: 4242 S do_wait;
/// 4250 perl: 4250 R 0, 4251 S futex_wait_queue`. Empty when nothing is left.
pub fn report(pgid: u32) -> String {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return String::new();
    };
    let mut out: Vec<String> = vec![];
    let mut members: Vec<(u32, String, std::path::PathBuf)> = procs
        .flatten()
        .filter_map(|e| {
            let s = stat_of(&e.path())?;
            // A zombie has done its work (only its parent's wait is left).
            (s.pgrp == i64::from(pgid) && s.state != 'Z').then(|| (s.pid, s.comm, e.path()))
        })
        .collect();
    members.sort();
    for (pid, comm, path) in members.into_iter().take(20) {
        let mut threads: Vec<(u32, String)> = std::fs::read_dir(path.join("task"))
            .map(|tasks| {
                tasks
                    .flatten()
                    .filter_map(|t| {
                        let s = stat_of(&t.path())?;
                        let wchan =
                            std::fs::read_to_string(t.path().join("wchan")).unwrap_or_default();
                        Some((s.pid, format!("{} {} {}", s.pid, s.state, wchan.trim())))
                    })
                    .collect()
            })
            .unwrap_or_default();
        threads.sort();
        let threads: Vec<String> = threads.into_iter().take(8).map(|(_, t)| t).collect();
        out.push(format!("{pid} {comm}: {}", threads.join(", ")));
    }
    out.join("; ")
}

/// Kills every process of group `pgid` (no error when none is left).
pub fn kill(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse_with_odd_command_names() {
        let s = parse_stat("4250 (perl (x) y) R 4242 4242 4242 0 -1 4194560 ...").unwrap();
        assert_eq!(
            s,
            Stat {
                pid: 4250,
                comm: "perl (x) y".into(),
                state: 'R',
                pgrp: 4242
            }
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn a_group_is_reported_with_its_children_and_killed_with_them() {
        use std::os::unix::process::CommandExt;
        // A shell in a group of its own that forks a sleeping child, and itself waits.
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("sleep 300 & echo started; wait")
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let pgid = child.id();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        // The forked child is `sh` until it has exec'd `sleep` (bounded wait).
        let mut seen = report(pgid);
        while !seen.contains(" sleep: ") {
            assert!(std::time::Instant::now() < end, "the forked child: {seen}");
            std::thread::sleep(std::time::Duration::from_millis(10));
            seen = report(pgid);
        }
        assert!(seen.contains(&format!("{pgid} sh:")), "{seen}");
        kill(pgid);
        child.wait().unwrap();
        // The child is gone too (bounded: the kernel reaps it as init's orphan).
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !report(pgid).is_empty() {
            assert!(std::time::Instant::now() < end, "left: {}", report(pgid));
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
