//! The CLI's global options come from the core's option table (issue 17 item 1): every
//! option is a `--flag`, the help lists every one, bad values and names are refused with the
//! table's message; the older flags keep working.
use mcpool_testkit as common;

use common::{unique, Memcached};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn mcpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(args)
        .output()
        .expect("run mcpool")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn help_and_options_list_every_option_of_the_table() {
    let help = text(&mcpool(&["--help"]).stdout);
    let listed = text(&mcpool(&["options"]).stdout);
    for o in mcpool::config::options::OPTIONS {
        let flag = format!("--{} ", o.name.replace('_', "-"));
        assert!(help.contains(&flag), "--help lacks {flag}");
        assert!(
            listed.contains(&format!("{}\t", o.name)),
            "options lacks {}",
            o.name
        );
    }
    let md = text(&mcpool(&["options", "--markdown"]).stdout);
    assert_eq!(md, mcpool::config::options::markdown_table());
}

#[test]
fn table_flags_set_the_client_and_old_flags_still_work() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let key = unique("cli-opt");
    let o = mcpool(&[
        "--servers",
        &s,
        "--key-prefix",
        "p:",
        "--io-timeout=250ms",
        "--protocol",
        "meta",
        "--preset",
        "pylibmc",
        "set",
        &key,
        "v",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = mcpool(&[
        "--servers",
        &s,
        "--prefix",
        "p:",
        "--io-timeout-ms",
        "500",
        "--connect-timeout-ms",
        "500",
        "get",
        &key,
    ]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(0), "v\n".into()),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn bad_values_and_names_are_refused_with_the_tables_words() {
    let o = mcpool(&[
        "--servers",
        "127.0.0.1:1",
        "--io-timeout",
        "soon",
        "version",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("option io_timeout") && err.contains("250ms"),
        "{err}"
    );
    let o = mcpool(&["--io-timout", "1s", "version"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("did you mean --io-timeout"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn io_timeout_flag_is_honoured() {
    // A deliberately silent fake server: accepts, reads, never answers.
    let (addr, _) = common::fake::fake(4, |_, _, _| common::fake::Then::Continue);
    let start = Instant::now();
    let o = mcpool(&[
        "--servers",
        &addr,
        "--io-timeout",
        "300ms",
        "--operation-timeout",
        "0",
        "get",
        "k",
    ]);
    let took = start.elapsed();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).to_lowercase().contains("timed out") || text(&o.stderr).contains("timeout"),
        "{}",
        text(&o.stderr)
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// `--io-timeout-ms N` and `--io-timeout D` are one option: the later one wins (the `-ms`
/// flag used to be applied before every `--name value`, whatever its place); a preset's
/// timeout (whalin: 30 s) applies first, so any timeout flag overrides it.
#[test]
fn io_timeout_spellings_apply_in_command_line_order() {
    let (addr, _) = common::fake::fake(16, |_, _, _| common::fake::Then::Continue);
    let run = |opts: &[&str]| {
        let mut a = vec!["--servers", addr.as_str(), "--operation-timeout", "0"];
        a.extend_from_slice(opts);
        a.extend(["get", "k"]);
        let start = Instant::now();
        let o = mcpool(&a);
        (o.status.code(), start.elapsed(), text(&o.stderr))
    };
    for opts in [
        &["--io-timeout", "20s", "--io-timeout-ms", "200"][..],
        &["--io-timeout-ms", "20000", "--io-timeout", "200ms"],
        &["--io-timeout-ms", "200", "--preset", "whalin"],
        &["--preset", "whalin", "--io-timeout=200ms"],
    ] {
        let (c, took, err) = run(opts);
        assert_eq!(c, Some(2), "{opts:?}: {err}");
        assert!(
            err.contains("timed out") || err.contains("timeout"),
            "{err}"
        );
        assert!(took < Duration::from_secs(10), "{opts:?}: {took:?}");
    }
    // The other way round: the later, longer timeout is the one waited for.
    let (c, took, err) = run(&["--io-timeout", "200ms", "--io-timeout-ms", "1500"]);
    assert_eq!(c, Some(2), "{err}");
    assert!(took >= Duration::from_millis(1500), "{took:?}");
}
