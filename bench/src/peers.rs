//! Subprocess contestants: the drivers listed in `bench/peers/peers.conf`, checked, built on
//! demand into a cache directory, started pinned with `taskset`, and spoken to with the line
//! protocol of [`super::work`] (see `bench/peers/PROTOCOL.md`).

use super::contestant::Contestant;
use super::work::{parse_answer, Answer, Work};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// One peer as `peers.conf` describes it.
#[derive(Clone, Debug, Default)]
pub struct PeerSpec {
    /// Section name: the contestant's name.
    pub name: String,
    /// `family`: what `--peers` may name to select it (defaults to the name).
    pub family: String,
    /// `probe`: shell command that succeeds when the client is installed.
    pub probe: String,
    /// `build`: shell command (run in the cache directory) that builds the driver.
    pub build: String,
    /// `run`: the driver's command line (split on whitespace after substitution).
    pub run: String,
    /// `install`: how to install what the probe looks for.
    pub install: String,
    /// `note`: how the client is configured.
    pub note: String,
    /// `warm_up_row = yes`: a runtime that compiles as it runs (the JVM): the sequential
    /// scenario also times the first 10,000 sets of a freshly started driver.
    pub warm_up_row: bool,
}

/// Where the peer drivers live: `$MCPOOL_BENCH_PEERS`, else `bench/peers` in the source tree.
pub fn peers_dir() -> PathBuf {
    std::env::var_os("MCPOOL_BENCH_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("peers"))
}

/// Where drivers are built: `$MCPOOL_BENCH_CACHE`, else `~/.cache/mcpool-bench`, else /tmp.
pub fn cache_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("MCPOOL_BENCH_CACHE") {
        return PathBuf::from(p);
    }
    match std::env::var_os("HOME") {
        Some(h) => Path::new(&h).join(".cache/mcpool-bench"),
        None => std::env::temp_dir().join("mcpool-bench-cache"),
    }
}

/// Parses `peers.conf`: `[name]` sections of `key = value` lines; `#` starts a comment.
pub fn parse_conf(text: &str) -> Result<Vec<PeerSpec>, String> {
    let mut out: Vec<PeerSpec> = vec![];
    for (no, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push(PeerSpec {
                name: name.trim().to_string(),
                family: name.trim().to_string(),
                ..PeerSpec::default()
            });
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .ok_or_else(|| format!("peers.conf line {}: expected key = value", no + 1))?;
        let p = out
            .last_mut()
            .ok_or_else(|| format!("peers.conf line {}: key before any [section]", no + 1))?;
        let v = v.trim().to_string();
        match k.trim() {
            "family" => p.family = v,
            "probe" => p.probe = v,
            "build" => p.build = v,
            "run" => p.run = v,
            "install" => p.install = v,
            "note" => p.note = v,
            "warm_up_row" => {
                p.warm_up_row = match v.as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => {
                        return Err(format!(
                            "peers.conf line {}: warm_up_row is yes or no, not {v:?}",
                            no + 1
                        ))
                    }
                }
            }
            other => return Err(format!("peers.conf line {}: unknown key {other}", no + 1)),
        }
    }
    for p in &out {
        if p.run.is_empty() {
            return Err(format!("peers.conf: [{}] has no run =", p.name));
        }
    }
    Ok(out)
}

/// Reads the peer list.
pub fn load() -> Result<Vec<PeerSpec>, String> {
    let path = peers_dir().join("peers.conf");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse_conf(&text)
}

fn subst(s: &str, server: &str) -> String {
    s.replace("{peers}", &peers_dir().to_string_lossy())
        .replace("{cache}", &cache_dir().to_string_lossy())
        .replace("{server}", server)
}

fn sh(cmd: &str, cwd: &Path) -> Result<(), String> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("sh: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(6).collect();
        Err(tail.into_iter().rev().collect::<Vec<_>>().join("\n"))
    }
}

impl PeerSpec {
    /// Runs the probe: `Err(install hint)` when the client is missing.
    pub fn check(&self) -> Result<(), String> {
        if self.probe.is_empty() {
            return Ok(());
        }
        sh(&subst(&self.probe, ""), &std::env::temp_dir())
            .map_err(|_| format!("not installed; install with: {}", self.install))
    }

    /// Builds the driver into the cache directory (the build command decides whether
    /// anything is out of date).
    pub fn build(&self) -> Result<(), String> {
        if self.build.is_empty() {
            return Ok(());
        }
        let dir = cache_dir();
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        sh(&subst(&self.build, ""), &dir).map_err(|e| format!("build failed: {e}"))
    }
}

/// A running driver.
pub struct Subprocess {
    name: String,
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
}

/// Longest a single piece of work may take before the driver is killed.
const WORK_TIMEOUT: Duration = Duration::from_secs(60);

impl Subprocess {
    /// Starts `spec`'s driver against `server`, pinned to `cpus`, and waits for `ready`.
    pub fn start(spec: &PeerSpec, server: &str, cpus: Option<&str>) -> Result<Subprocess, String> {
        let argv: Vec<String> = subst(&spec.run, server)
            .split_whitespace()
            .map(String::from)
            .collect();
        let mut cmd = match cpus {
            Some(c) => {
                let mut cmd = Command::new("taskset");
                cmd.arg("-c").arg(c).args(&argv);
                cmd
            }
            None => {
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..]);
                cmd
            }
        };
        // A group of its own: a driver that stops answering is killed with every process it
        // forked (see `group`).
        let mut child = cmd
            .process_group(0)
            .current_dir(cache_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{}: cannot start {}: {e}", spec.name, argv[0]))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut p = Subprocess {
            name: spec.name.clone(),
            child,
            stdin,
            lines: rx,
        };
        let first = p.next_line(Duration::from_secs(60))?;
        if !first.starts_with("ready") {
            return Err(format!(
                "{}: driver said {first:?} instead of ready",
                spec.name
            ));
        }
        Ok(p)
    }

    fn next_line(&mut self, timeout: Duration) -> Result<String, String> {
        self.lines.recv_timeout(timeout).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => {
                let seen = super::group::report(self.child.id());
                super::group::kill(self.child.id());
                let _ = self.child.kill();
                format!(
                    "{}: no answer within {} s, killed with its processes (each thread's \
                     state and wait: {seen})",
                    self.name,
                    timeout.as_secs()
                )
            }
            mpsc::RecvTimeoutError::Disconnected => format!("{}: driver exited", self.name),
        })
    }
}

impl Contestant for Subprocess {
    fn run(&mut self, work: &Work) -> Result<Answer, String> {
        writeln!(self.stdin, "{work}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| format!("{}: driver gone: {e}", self.name))?;
        let line = self.next_line(WORK_TIMEOUT)?;
        parse_answer(&line).map_err(|e| format!("{}: {e}", self.name))
    }

    fn reset_peak_rss(&mut self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5");
    }

    fn peak_rss_kib(&mut self) -> Option<u64> {
        // Through taskset the driver is the same process (taskset execs it).
        super::sys::peak_rss_kib(Some(self.child.id()))
    }

    fn rss_kib(&mut self) -> Option<u64> {
        super::sys::rss_kib(Some(self.child.id()))
    }

    fn settle(&mut self) -> Duration {
        super::settle::until_quiet(self.child.id())
    }
}

impl Drop for Subprocess {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        let quit = (0..50).any(|_| {
            let done = matches!(self.child.try_wait(), Ok(Some(_)));
            if !done {
                std::thread::sleep(Duration::from_millis(10));
            }
            done
        });
        if !quit {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        // Whatever it forked and left behind (the group's id is not reused while any of its
        // processes lives).
        super::group::kill(self.child.id());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conf_parses() {
        let c = parse_conf(
            "# x\n[a]\nfamily = f\nrun = {cache}/a {server}\nnote = n = 1\nwarm_up_row = yes\n[b]\nrun = b\n",
        )
        .unwrap();
        assert_eq!(c.len(), 2);
        assert!(c[0].warm_up_row && !c[1].warm_up_row);
        assert!(parse_conf("[a]\nrun = a\nwarm_up_row = maybe\n").is_err());
        assert_eq!((c[0].family.as_str(), c[0].note.as_str()), ("f", "n = 1"));
        assert_eq!(c[1].family, "b");
        assert!(parse_conf("[a]\n").is_err());
        assert!(parse_conf("run = x\n").is_err());
    }

    #[test]
    fn shipped_conf_parses() {
        let specs = load().unwrap();
        assert!(specs.iter().any(|s| s.name.starts_with("libmemcached")));
        // The JVM peers show their warm-up (seed 000); nobody else does.
        let jvm: Vec<&str> = specs
            .iter()
            .filter(|s| s.warm_up_row)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(jvm, ["spymemcached", "mcpool-java"]);
    }
}
