//! Values never cross over a lossy, slow link made with tc netem in a network namespace of the
//! test's own (the CLI runs inside it); skipped, saying so, where the kernel offers no netem.
use mcpool_testkit as common;

use common::{belongs_to, value_for};

#[test]
fn netem_in_a_namespace_where_the_kernel_offers_it() {
    // Needs root, `ip` and the netem queueing discipline; the proxy tests above cover the
    // same faults everywhere.
    let ns = format!("mcpool-{}", std::process::id());
    let ip = |args: &[&str]| std::process::Command::new("ip").args(args).output();
    match ip(&["netns", "add", &ns]) {
        Ok(o) if o.status.success() => {}
        _ => {
            eprintln!("SKIP: cannot create a network namespace here (needs root and iproute2)");
            return;
        }
    }
    let _ = ip(&["netns", "exec", &ns, "ip", "link", "set", "lo", "up"]);
    let netem = ip(&[
        "netns", "exec", &ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "20ms",
        "5ms", "loss", "1%",
    ]);
    let supported = matches!(&netem, Ok(o) if o.status.success());
    if !supported {
        let why = netem
            .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
            .unwrap_or_else(|e| e.to_string());
        let _ = ip(&["netns", "del", &ns]);
        eprintln!("SKIP: tc netem unavailable in this kernel ({why}); the proxy tests cover slow networks");
        return;
    }
    // Run memcached and a checked load inside the namespace, via the CLI.
    let port = "11311";
    let mut mc = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            "memcached",
            "-u",
            "root",
            "-l",
            "127.0.0.1",
            "-p",
            port,
            "-U",
            "0",
        ])
        .spawn()
        .unwrap();
    let bin = env!("CARGO_BIN_EXE_mcpool");
    let server = format!("127.0.0.1:{port}");
    let mut ok = 0;
    for i in 0..30 {
        let key = format!("netem{i}");
        let v = String::from_utf8(value_for(&key, 50)).unwrap();
        let set = ip(&[
            "netns",
            "exec",
            &ns,
            bin,
            "--servers",
            &server,
            "--io-timeout-ms",
            "2000",
            "set",
            &key,
            &v,
        ]);
        let get = ip(&[
            "netns",
            "exec",
            &ns,
            bin,
            "--servers",
            &server,
            "--io-timeout-ms",
            "2000",
            "get",
            &key,
        ]);
        if let (Ok(s), Ok(g)) = (set, get) {
            if s.status.success() && g.status.success() {
                assert!(
                    belongs_to(&key, g.stdout.trim_ascii_end()),
                    "crossed value under netem"
                );
                ok += 1;
            }
        }
    }
    let _ = mc.kill();
    let _ = mc.wait();
    let _ = ip(&["netns", "del", &ns]);
    assert!(
        ok > 20,
        "most operations succeed over a lossy link: {ok}/30"
    );
}
