//! The CLI under proxy-pool mode (issue 19 item 4), against real nutcracker and memcached.
use mcpool_testkit as common;

use common::nutcracker::Nutcracker;
use common::{unique, Memcached};
use std::process::{Command, Stdio};

/// Item 4: `mcpool ring` under proxy-pool: every key on the first proxy; and the CLI accepts
/// the name for commands.
#[test]
fn item4_cli_ring_and_commands_accept_proxy_pool() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args([
            "--servers",
            "127.0.0.1:21001,127.0.0.1:21002,127.0.0.1:21003",
            "--distribution",
            "proxy-pool",
            "ring",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(b"a\n/region/cluster/b\nc\n")?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "a\t127.0.0.1:21001\n/region/cluster/b\t127.0.0.1:21001\nc\t127.0.0.1:21001\n"
    );
    let mcs = [Memcached::start(&[])];
    let p = Nutcracker::start(&mcs);
    let key = unique("/cli/k");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(["--servers", &p.addr(), "--distribution", "proxy-pool"])
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["set", &key, "cli-value"]).status.success());
    let got = run(&["get", &key]);
    assert!(got.status.success(), "{got:?}");
    assert!(String::from_utf8_lossy(&got.stdout).contains("cli-value"));
}
