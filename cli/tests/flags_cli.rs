//! `--flags N` on the stores and `--show-flags` on the reads (tester finding crosslang 2: the
//! CLI could not store a value under explicit flags, as C, Java, Rust and Python can).
use mcpool_testkit as common;

use common::{unique, Memcached};
use std::process::{Command, Output};

fn mcpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(args)
        .env_remove("MEMCACHED_SERVERS")
        .output()
        .expect("run mcpool")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The first line memcached answers to `get KEY`: `VALUE KEY FLAGS BYTES`, the wire flags.
fn raw_header(addr: &str, key: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "get {key}\r\n").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line
}

/// The Rust client's `get_item` of `key`: its value and flags.
fn core_item(addr: &str, format: &str, key: &str) -> (Vec<u8>, u32) {
    let client = mcpool::ClientBuilder::new()
        .server(addr)
        .set("value_format", format)
        .unwrap()
        .build()
        .unwrap();
    let item = client.get_item(key).unwrap().expect("stored");
    (item.value.to_vec(), item.flags)
}

#[test]
fn set_with_flags_reads_back_with_them_on_every_protocol() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    for p in ["text", "meta", "binary"] {
        let with = |rest: &[&str]| {
            let mut a = vec!["--servers", s.as_str(), "--protocol", p];
            a.extend_from_slice(rest);
            mcpool(&a)
        };
        let k = unique(&format!("flags-{p}"));
        let o = with(&["set", &k, "hello", "--flags", "5"]);
        assert_eq!(code(&o), 0, "{p}: {}", stderr(&o));
        // The value is plain bytes: get prints it as before; --show-flags puts the flags first.
        assert_eq!(with(&["get", &k]).stdout, b"hello\n", "{p}");
        assert_eq!(
            with(&["get", &k, "--show-flags"]).stdout,
            b"5\thello\n",
            "{p}"
        );
        assert_eq!(
            with(&["get", "--show-flags", &k]).stdout,
            b"5\thello\n",
            "{p}"
        );
        // Several keys: KEY<TAB>FLAGS<TAB>VALUE, escaped as get escapes.
        let k2 = unique(&format!("flags2-{p}"));
        assert_eq!(code(&with(&["set", &k2, "a\tb", "--flags=65535"])), 0);
        assert_eq!(
            with(&["get", &k, &k2, "--show-flags"]).stdout,
            format!("{k}\t5\thello\n{k2}\t65535\ta\\tb\n").as_bytes(),
            "{p}"
        );
        // gets: the flags before the CAS, memcached's order (VALUE KEY FLAGS BYTES CAS).
        let o = with(&["gets", &k, "--show-flags"]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        let fields: Vec<&str> = out.trim_end().split('\t').collect();
        assert_eq!(fields.len(), 3, "{p}: {out}");
        assert_eq!((fields[0], fields[2]), ("5", "hello"), "{p}: {out}");
        assert!(fields[1].parse::<u64>().is_ok_and(|c| c > 0), "{p}: {out}");
        // gat too.
        assert_eq!(
            with(&["gat", "100", &k, "--show-flags"]).stdout,
            b"5\thello\n",
            "{p}"
        );
    }
}

#[test]
fn every_store_but_append_and_prepend_takes_flags() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let with = |rest: &[&str]| {
        let mut a = vec!["--servers", s.as_str()];
        a.extend_from_slice(rest);
        mcpool(&a)
    };
    let k = unique("stores");
    let show = |k: &str| with(&["get", k, "--show-flags"]).stdout;
    assert_eq!(code(&with(&["add", &k, "a", "--flags", "1"])), 0);
    assert_eq!(show(&k), b"1\ta\n");
    assert_eq!(code(&with(&["replace", &k, "r", "--flags", "2"])), 0);
    assert_eq!(show(&k), b"2\tr\n");
    let o = with(&["gets", &k]);
    let cas = String::from_utf8_lossy(&o.stdout)
        .split('\t')
        .next()
        .unwrap()
        .to_owned();
    let o = with(&["cas", &k, "c", &cas, "--flags", "3", "--ttl", "100"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(show(&k), b"3\tc\n");
    // --value-file too.
    let dir = std::env::temp_dir().join(unique("flags-file"));
    std::fs::write(&dir, b"from\0file").unwrap();
    let path = dir.to_str().unwrap();
    assert_eq!(
        code(&with(&["set", &k, "--value-file", path, "--flags", "4"])),
        0
    );
    assert_eq!(show(&k), b"4\tfrom\0file\n");
    std::fs::remove_file(&dir).unwrap();
    // Flags 0 is plain bytes, as set without --flags stores them.
    assert_eq!(code(&with(&["set", &k, "z", "--flags", "0"])), 0);
    assert_eq!(show(&k), b"0\tz\n");
    // append and prepend: memcached keeps the item's flags; refused, naming the command,
    // nothing sent.
    assert_eq!(code(&with(&["set", &k, "v", "--flags", "9"])), 0);
    for cmd in [
        &["append", k.as_str(), "x", "--flags", "5"][..],
        &["prepend", &k, "x", "--flags=5"],
        &["append", &k, "--flags", "5"],
        &["prepend", &k, "--value-file", "-", "--flags", "5"],
    ] {
        let o = with(cmd);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{cmd:?}: {err}");
        assert!(
            err.contains(&format!("{} takes no --flags", cmd[0]))
                && err.contains("keeps the stored item's flags"),
            "{cmd:?}: {err}"
        );
    }
    assert_eq!(show(&k), b"9\tv\n", "untouched");
    // After --, `--flags` is a value like any other.
    assert_eq!(code(&with(&["append", &k, "--", "--flags"])), 0);
    assert_eq!(show(&k), b"9\tv--flags\n");
}

#[test]
fn flags_are_the_cores_flags_of_the_value_format() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let with = |rest: &[&str]| {
        let mut a = vec!["--servers", s.as_str()];
        a.extend_from_slice(rest);
        mcpool(&a)
    };
    // The mcpool format: the application's 16 bits, under its mark on the wire, as the
    // core's `store` writes them (the Rust client reads back flags 5).
    let k = unique("fmt");
    assert_eq!(code(&with(&["set", &k, "v", "--flags", "5"])), 0);
    assert!(
        raw_header(&s, &k).starts_with(&format!("VALUE {k} {} 1", (1u32 << 24) | 5)),
        "{}",
        raw_header(&s, &k)
    );
    assert_eq!(core_item(&s, "mcpool", &k), (b"v".to_vec(), 5));
    // Flags the format would not read back: the core's refusal, nothing stored.
    let k2 = unique("wide");
    let o = with(&["set", &k2, "v", "--flags", "65536"]);
    let err = stderr(&o);
    assert_eq!(code(&o), 2, "{err}");
    assert!(
        err.contains(&format!("set \"{k2}\"")) && err.contains("application flags are 16 bits"),
        "{err}"
    );
    assert_eq!(code(&with(&["get", &k2])), 1, "nothing stored");
    // libmemcached's format: any 32 bits, stored as given.
    let lm = |rest: &[&str]| {
        let mut a = vec!["--servers", s.as_str(), "--value-format", "libmemcached"];
        a.extend_from_slice(rest);
        mcpool(&a)
    };
    let o = lm(&["set", &k2, "w", "--flags", "4294967295"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(raw_header(&s, &k2).starts_with(&format!("VALUE {k2} 4294967295 1")));
    assert_eq!(lm(&["get", &k2, "--show-flags"]).stdout, b"4294967295\tw\n");
    assert_eq!(
        core_item(&s, "libmemcached", &k2),
        (b"w".to_vec(), u32::MAX)
    );
    // A value written by another surface with flags shows them (Rust's `store`).
    let k3 = unique("core");
    let client = mcpool::ClientBuilder::new().server(&s).build().unwrap();
    client
        .store(mcpool::StoreCommand::Set, &k3, b"from rust", 1234, 0)
        .unwrap();
    assert_eq!(
        with(&["get", &k3, "--show-flags"]).stdout,
        b"1234\tfrom rust\n"
    );
}

#[test]
fn flags_arguments_are_checked_before_anything_is_sent() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let with = |rest: &[&str]| {
        let mut a = vec!["--servers", s.as_str()];
        a.extend_from_slice(rest);
        mcpool(&a)
    };
    let k = unique("bad");
    let refused: &[(&[&str], &str)] = &[
        (
            &["set", &k, "v", "--flags", "4294967296"],
            "--flags takes a whole number 0-4294967295, not \"4294967296\"",
        ),
        (
            &["set", &k, "v", "--flags", "-1"],
            "--flags takes a whole number 0-4294967295, not \"-1\"",
        ),
        (
            &["set", &k, "v", "--flags", "+1"],
            "--flags takes a whole number",
        ),
        (
            &["set", &k, "v", "--flags", "x"],
            "--flags takes a whole number",
        ),
        (
            &["set", &k, "v", "--flags", "1", "--flags", "2"],
            "--flags given twice",
        ),
        (
            &["set", &k, "v", "--flags=1", "--flags=1"],
            "--flags given twice",
        ),
        (&["set", &k, "v", "--flags"], "--flags needs a value"),
        (
            &["set", &k, "v", "--flags", "1", "--kind", "text"],
            "set: --kind and --flags: give one",
        ),
        (
            &["add", &k, "v", "--kind=bytes", "--flags", "1"],
            "add: --kind and --flags: give one",
        ),
        (&["set", &k, "--flgs", "1"], "looks like the option --flags"),
        (
            &["set-multi", &k, "v", "--flags", "1"],
            "set-multi takes no option --flags",
        ),
        (
            &["incr", &k, "1", "--flags", "1"],
            "incr takes no option --flags",
        ),
        (
            &["get", &k, "--show-flags", "--show-flags"],
            "--show-flags given twice",
        ),
        (
            &["delete", &k, "--show-flags"],
            "delete takes no option --show-flags",
        ),
        (
            &["set", &k, "v", "--show-flags"],
            "set takes no option --show-flags",
        ),
    ];
    for (args, want) in refused {
        let o = with(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert_eq!(code(&with(&["get", &k])), 1, "nothing stored");
    // The usage lines and the help say it.
    let o = with(&["get", "--help"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("get KEY... [--show-flags]"));
    let o = with(&["set", "--help"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("--flags N"));
    let help = String::from_utf8_lossy(&mcpool(&["--help"]).stdout).into_owned();
    assert!(
        help.contains("--flags N (0-4294967295)") && help.contains("--show-flags"),
        "{help}"
    );
}
