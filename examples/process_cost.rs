//! What a client costs a process (docs/performance.md): threads, open sockets and resident
//! memory after `build`, after the first call, and in a forked child before and after its
//! first call; with several clients in one process.
//!
//! `cargo run --release --example process_cost -- HOST:PORT [CLIENTS] [SERVERS] [OPTION=VALUE ...]`
//! (SERVERS: the same address repeated, as distinct servers need distinct ports; options by
//! name, e.g. `preset=cache-memcached-fast`, `min_idle=0`).
use mcpool::Client;

fn status(what: &str) -> String {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or("?")
            .to_owned()
    };
    let sockets = std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|l| l.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0);
    format!(
        "{what}: threads={} sockets={sockets} rss_kib={}",
        field("Threads:"),
        field("VmRSS:")
    )
}

/// Waits (bounded) until the background connects of `min_idle` settle.
fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(300));
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let addr = a
        .get(1)
        .map_or("127.0.0.1:11211", String::as_str)
        .to_owned();
    let clients: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let servers: usize = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let options: Vec<(String, String)> = a
        .iter()
        .skip(4)
        .filter_map(|o| o.split_once('=').map(|(n, v)| (n.to_owned(), v.to_owned())))
        .collect();
    println!("{}", status("before"));
    let made: Vec<Client> = (0..clients)
        .map(|_| {
            let mut b = Client::builder();
            for (n, v) in &options {
                b = b.set(n, v).expect("option");
            }
            for i in 0..servers {
                // One address, distinct servers: the label differs by the weight-free name.
                b = b.server(&format!("{addr}:s{i}"));
            }
            b.build().expect("client")
        })
        .collect();
    settle();
    println!("{}", status("built"));
    for c in &made {
        for i in 0..servers * 4 {
            let _ = c.get(format!("pc{i}"));
        }
    }
    settle();
    println!("{}", status("used"));
    // SAFETY: the child only prints and uses the clients, then leaves with _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        println!("{}", status("child, forked"));
        for c in &made {
            for i in 0..servers * 4 {
                let _ = c.get(format!("pc{i}"));
            }
        }
        settle();
        println!("{}", status("child, used"));
        // SAFETY: ends the child without running destructors.
        unsafe { libc::_exit(0) };
    }
    let mut st = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut st, 0) };
}
