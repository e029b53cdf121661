//! How `ring`, `options` and the memcached commands read their arguments (tester findings
//! cli 1-4): keys checked before a private memcached is started, an option given once, an
//! option that would change nothing refused, and messages that name what is at fault.
use mcpool_testkit as common;

use common::{unique, Memcached};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output, Stdio};

fn mcpool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(args)
        .env_remove("MEMCACHED_SERVERS")
        .stdin(Stdio::null())
        .output()
        .expect("run mcpool")
}

/// `mcpool ARGS` with `input` on standard input.
fn mcpool_fed(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(args)
        .env_remove("MEMCACHED_SERVERS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcpool");
    // (a command refused before it reads its input closes the pipe: not an error here)
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit status")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Finding 1: without --servers a key the client refuses (its rules: protocol, prefix) is
/// refused before the private memcached is started, for every command that takes keys.
#[test]
fn keys_are_checked_before_the_private_memcached_starts() {
    // A MEMCACHED that names no program: a start would fail saying so.
    let private = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(args)
            .env_remove("MEMCACHED_SERVERS")
            .env("MEMCACHED", "/nonexistent/memcached")
            .output()
            .expect("run mcpool")
    };
    let long = "x".repeat(249);
    let cases: &[(&[&str], &str)] = &[
        (
            &["get", "a b"],
            "mcpool: get: invalid key \"a b\": key contains a space or control byte\n",
        ),
        (
            &["gets", "a b"],
            "mcpool: gets: invalid key \"a b\": key contains a space or control byte\n",
        ),
        (
            &["get", "ok", "a b", "c\u{1}"],
            "mcpool: get: invalid key \"a b\": key contains a space or control byte\n\
             mcpool: get: invalid key \"c\\x01\": key contains a space or control byte\n",
        ),
        (
            &["get", "a b", "--show-flags"],
            "mcpool: get: invalid key \"a b\": key contains a space or control byte\n",
        ),
        (
            &["info", "a b"],
            "mcpool: info: invalid key \"a b\": key contains a space or control byte\n",
        ),
        (
            &["--prefix", "p:", "get", &long],
            "invalid key \"<251 bytes: 249 bytes + 2 of --prefix>\": key is longer than 250",
        ),
    ];
    for (args, want) in cases {
        let o = private(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            !err.contains("private memcached") && !err.contains("MEMCACHED"),
            "{args:?}: nothing was started: {err}"
        );
    }
    // The client's rules: on meta a key with a space is sent base64-encoded, so the command
    // runs (and here the start fails, as it says).
    let o = private(&["--protocol", "meta", "get", "a b"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("MEMCACHED"), "{}", stderr(&o));
    // With a real private memcached: a good key is a miss, as before.
    let o = mcpool(&["get", "no-such-key"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("started a private memcached"));
}

/// Finding 2: `ring` and `options` refuse an option given twice, and two exclusive ones, as
/// every other command does ("--ops given twice").
#[test]
fn ring_and_options_take_each_option_once() {
    let s = "127.0.0.1:1,127.0.0.1:2";
    let dir = std::env::temp_dir().join(unique("ring-keys"));
    std::fs::create_dir_all(&dir).unwrap();
    let (ka, kb) = (dir.join("ka.txt"), dir.join("kb.txt"));
    std::fs::write(&ka, b"a1\n").unwrap();
    std::fs::write(&kb, b"b1\n").unwrap();
    let (ka, kb) = (ka.to_str().unwrap(), kb.to_str().unwrap());
    let twice: &[(&[&str], &str)] = &[
        (&["ring", "--keys", ka, "--keys", kb], "--keys given twice"),
        (&["ring", "--keys", ka, "--keys=-"], "--keys given twice"),
        (
            &[
                "ring",
                "--random",
                "5",
                "--random",
                "7",
                "--compare-distribution",
                "cmf-ketama",
            ],
            "--random given twice",
        ),
        (
            &[
                "ring",
                "--compare-distribution",
                "cmf-ketama",
                "--compare-distribution",
                "libmemcached-ketama",
                "--random",
                "100",
            ],
            "--compare-distribution given twice",
        ),
        (
            &[
                "ring",
                "--compare-servers",
                "127.0.0.1:3",
                "--compare-servers=127.0.0.1:4",
            ],
            "--compare-servers given twice",
        ),
        (
            &[
                "ring",
                "--compare-servers",
                "127.0.0.1:3",
                "--compare-weights",
                "1",
                "--compare-weights",
                "2",
            ],
            "--compare-weights given twice",
        ),
        (
            &[
                "ring",
                "--bench",
                "--bench-sizes",
                "5",
                "--bench-sizes",
                "6",
            ],
            "--bench-sizes given twice",
        ),
        (&["ring", "--bench", "--bench"], "--bench given twice"),
    ];
    for (args, want) in twice {
        let mut a = vec!["--servers", s];
        a.extend_from_slice(args);
        let o = mcpool(&a);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let options: &[(&[&str], &str)] = &[
        (
            &["options", "--markdown", "--presets"],
            "options: --markdown and --presets: give one",
        ),
        (
            &["options", "--presets", "--markdown"],
            "options: --presets and --markdown: give one",
        ),
        (
            &["options", "--markdown", "--markdown"],
            "--markdown given twice",
        ),
        (
            &["options", "--presets", "--presets"],
            "--presets given twice",
        ),
        (&["options", "--bogus"], "options: unknown argument --bogus"),
        (
            &["options", "--prefix", "p:"],
            "--prefix is a global option, and global options go before the command",
        ),
    ];
    for (args, want) in options {
        let o = mcpool(args);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // One of each still works.
    assert_eq!(
        String::from_utf8_lossy(&mcpool(&["options", "--markdown"]).stdout),
        mcpool::config::options::markdown_table()
    );
    assert_eq!(
        String::from_utf8_lossy(&mcpool(&["options", "--presets"]).stdout),
        mcpool::config::options::presets_markdown()
    );
    let o = mcpool(&["options", "--help", "--markdown"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("usage: mcpool options"));
    let o = mcpool(&["--servers", s, "ring", "--keys", ka]);
    assert_eq!(
        (code(&o), o.stdout.is_empty()),
        (0, false),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Finding 3: an option of `ring` that would change nothing is refused, as
/// `--compare-weights` without `--compare-servers` is.
#[test]
fn ring_refuses_options_that_would_be_ignored() {
    let s = "127.0.0.1:1,127.0.0.1:2";
    let refused: &[(&[&str], &str)] = &[
        (
            &["ring", "--bench-sizes", "5"],
            "--bench-sizes needs --bench",
        ),
        (
            &["ring", "--keys", "-", "--bench-sizes=5"],
            "--bench-sizes needs --bench",
        ),
        (
            &["ring", "--bench", "--keys", "/nonexistent"],
            "--keys does not go with --bench",
        ),
        (
            &["ring", "--keys", "-", "--bench", "--bench-sizes", "3"],
            "--keys does not go with --bench",
        ),
        (
            &["ring", "--bench", "--compare-distribution", "cmf-ketama"],
            "--compare-distribution does not go with --bench",
        ),
        (
            &["ring", "--bench", "--compare-servers", "127.0.0.1:3"],
            "--compare-servers does not go with --bench",
        ),
        (
            &["ring", "--random", "5", "--bench"],
            "--random does not go with --bench",
        ),
        (
            &["ring", "--compare-weights", "1"],
            "--compare-weights needs --compare-servers",
        ),
    ];
    for (args, want) in refused {
        let mut a = vec!["--servers", s];
        a.extend_from_slice(args);
        let o = mcpool_fed(&a, b"k1\n");
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    // --bench with --bench-sizes alone runs.
    let o = mcpool(&["--servers", s, "ring", "--bench-sizes", "2", "--bench"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("profile\tservers\t"));
    let help = String::from_utf8_lossy(&mcpool(&["ring", "--help"]).stdout).into_owned();
    assert!(
        help.contains("only with --bench") && help.contains("(- is stdin)"),
        "{help}"
    );
}

/// Finding 4: `ring --keys` names its path on every read error, and `-` is standard input.
#[test]
fn ring_keys_name_their_file_and_dash_is_standard_input() {
    let s = "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3";
    let dir = std::env::temp_dir().join(unique("ring-dir"));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    for extra in [&[][..], &["--compare-distribution", "cmf-ketama"]] {
        let mut a = vec!["--servers", s, "ring", "--keys", d];
        a.extend_from_slice(extra);
        let o = mcpool(&a);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{err}");
        assert!(err.contains(&format!("--keys {d}: ")), "{extra:?}: {err}");
    }
    let missing = format!("{d}/none");
    let o = mcpool(&["--servers", s, "ring", "--keys", &missing]);
    assert!(
        stderr(&o).contains(&format!("--keys {missing}: No such file")),
        "{}",
        stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
    // `--keys -` reads standard input, as no --keys does: the same lines.
    let keys = b"k1\nk2\nuser:42\n";
    let plain = mcpool_fed(&["--servers", s, "ring"], keys);
    let dash = mcpool_fed(&["--servers", s, "ring", "--keys", "-"], keys);
    assert_eq!(code(&dash), 0, "{}", stderr(&dash));
    assert_eq!(dash.stdout, plain.stdout);
    assert_eq!(String::from_utf8_lossy(&dash.stdout).lines().count(), 3);
    let dash = mcpool_fed(
        &[
            "--servers",
            s,
            "ring",
            "--keys=-",
            "--compare-distribution",
            "cmf-ketama",
        ],
        keys,
    );
    assert_eq!(code(&dash), 0, "{}", stderr(&dash));
    assert!(String::from_utf8_lossy(&dash.stdout).starts_with("keys\t3\n"));
}

/// Finding 4: the other messages name what is at fault.
#[test]
fn messages_name_what_is_at_fault() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    // Any other argument that is not UTF-8: its bytes shown escaped too (tester finding
    // retest37b 6: "argument \"\u{fffd}\" is not UTF-8")
    for (args, bad, shown) in [
        (
            &["--servers", &s, "set-counter", "kc"][..],
            &b"\xff"[..],
            "\"\\xff\"",
        ),
        (&["--servers", &s, "incr", "kc"][..], b"1\xff", "\"1\\xff\""),
        (&[][..], b"--fo\xff", "\"--fo\\xff\""),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(args)
            .arg(std::ffi::OsStr::from_bytes(bad))
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2
                && e.contains(&format!("argument {shown} is not UTF-8"))
                && !e.contains('\u{fffd}'),
            "{args:?}: {e}"
        );
    }
    // ... named by the argument it is, where no key names it (tester finding retest40 7:
    // `gat`'s TTL, set-multi's --ttl, flush's DELAY, stats's GROUP named no command)
    for (args, bad, what) in [
        (&["--servers", &s, "gat"][..], &b"1\xff"[..], "gat TTL: "),
        (
            &["--servers", &s, "set-multi", "a", "1", "--ttl"][..],
            b"\xff",
            "set-multi --ttl: ",
        ),
        (&["--servers", &s, "flush"][..], b"\xff", "flush DELAY: "),
        (&["--servers", &s, "stats"][..], b"it\xff", "stats GROUP: "),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpool"));
        cmd.args(args).arg(std::ffi::OsStr::from_bytes(bad));
        if args.contains(&"gat") {
            cmd.arg("k");
        }
        let o = cmd.output().unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2
                && e.contains(&format!("{what}argument \""))
                && e.contains("is not UTF-8"),
            "{args:?}: {e}"
        );
    }
    // ... and every other argument that is text: by its option or its place (tester finding
    // retest41b 5: --kind, stats --client --ops, the global options, set --ttl/--flags, touch's
    // TTL, incr's N, cas's CAS, lease's and set-counter's numbers named no argument)
    let bad = std::ffi::OsStr::from_bytes(b"\xfe");
    for (before, after, what) in [
        (
            &["--servers", &s, "set", "k", "v", "--kind"][..],
            &[][..],
            "set --kind: ",
        ),
        (
            &["--servers", &s, "set", "k", "v", "--ttl"][..],
            &[][..],
            "set \"k\": --ttl: ",
        ),
        (
            &["--servers", &s, "set", "k", "v", "--flags"][..],
            &[][..],
            "set \"k\": --flags: ",
        ),
        (
            &["--servers", &s, "cas", "k", "v"][..],
            &[][..],
            "cas \"k\": CAS: ",
        ),
        (
            &["--servers", &s, "touch", "k"][..],
            &[][..],
            "touch \"k\": touch TTL: ",
        ),
        (
            &["--servers", &s, "incr", "k"][..],
            &[][..],
            "incr \"k\": N: ",
        ),
        (
            &["--servers", &s, "set-counter", "k"][..],
            &[][..],
            "set-counter \"k\": N: ",
        ),
        (
            &["--servers", &s, "incr-or-init", "k", "1"][..],
            &[][..],
            "incr-or-init \"k\": INITIAL: ",
        ),
        (
            &["--servers", &s, "lease", "k"][..],
            &[][..],
            "lease \"k\": lease TTL: ",
        ),
        (
            &["--servers", &s, "stats", "--client", "--ops"][..],
            &[][..],
            "stats --client --ops: ",
        ),
        (&["--servers"][..], &["get", "k"][..], "--servers: "),
        (
            &["--servers", &s, "--io-timeout"][..],
            &["get", "k"][..],
            "--io-timeout: ",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(before)
            .arg(bad)
            .args(after)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2 && e.contains(&format!("{what}argument \"\\xfe\" is not UTF-8")),
            "{before:?}: {e}"
        );
    }
    // ... ring's and bench's own options too: the command and the option it follows (tester
    // finding retest43 4); a --value-file path as its bytes, never U+FFFD
    for (before, what) in [
        (&["ring", "--random"][..], "ring (after --random): "),
        (
            &["ring", "--compare-distribution"][..],
            "ring (after --compare-distribution): ",
        ),
        (&["bench", "--ops"][..], "bench (after --ops): "),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(before)
            .arg(bad)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2 && e.contains(&format!("{what}argument \"\\xfe\" is not UTF-8")),
            "{before:?}: {e}"
        );
    }
    let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(["--servers", &s, "set", "k", "--value-file"])
        .arg(bad)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(
        code(&o) != 0 && e.contains("--value-file \"\\xfe\": ") && !e.contains('\u{fffd}'),
        "{e}"
    );
    // ... an unknown option after the command too (tester finding retest39 3)
    let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(["--servers", &s, "set", "k", "v"])
        .arg(std::ffi::OsStr::from_bytes(b"--ttl\xff"))
        .output()
        .unwrap();
    assert!(
        code(&o) == 2 && stderr(&o).contains("set takes no option --ttl\\xff "),
        "{}",
        stderr(&o)
    );
    // ... a misspelt one names the closest of the command's options (tester finding
    // retest48 4), an unrelated one only lists them
    for (args, want) in [
        (
            &["set", "k", "v", "--tll", "5"][..],
            "(did you mean --ttl? its options: --ttl,",
        ),
        (
            &["get", "k", "--show-flag"][..],
            "(did you mean --show-flags? its options:",
        ),
        (
            &["set", "k", "v", "--zzzzz", "5"][..],
            "set takes no option --zzzzz (its options:",
        ),
        // a misspelt global option: the closest one, and where it goes (retest49 5)
        (
            &["get", "k", "--protcol", "meta"][..],
            "(did you mean --protocol? a global option: global options go before the \
             command: mcpool --protocol ... get ...)",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(["--servers", &s])
            .args(args)
            .output()
            .unwrap();
        assert!(
            code(&o) == 2 && stderr(&o).contains(want),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // A value that is not UTF-8, shown escaped as keys are (not as U+FFFD).
    let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(["--servers", &s, "set", "k"])
        .arg(std::ffi::OsStr::from_bytes(b"\xff\xfe"))
        .args(["--kind", "text"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "mcpool: set \"k\": not a valid text: \"\\xff\\xfe\"\n"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(["--servers", &s, "set", "k"])
        .arg(std::ffi::OsStr::from_bytes(b"\xff"))
        .args(["--kind", "bool"])
        .output()
        .unwrap();
    assert!(stderr(&o).contains("not \"\\xff\""), "{}", stderr(&o));
    // A key the prefix made too long: both lengths, on a store, a read and in ring.
    let long = "x".repeat(249);
    for args in [
        &["set", long.as_str(), "v"][..],
        &["get", &long],
        &["get", &long, "other"],
    ] {
        let mut a = vec!["--servers", s.as_str(), "--prefix", "p:"];
        a.extend_from_slice(args);
        let o = mcpool(&a);
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{args:?}: {err}");
        assert!(
            err.contains("invalid key \"<251 bytes: 249 bytes + 2 of --prefix>\""),
            "{args:?}: {err}"
        );
    }
    let o = mcpool_fed(
        &["--servers", &s, "--prefix", "p:", "ring"],
        format!("{long}\nok\n").as_bytes(),
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("line 1: ") && stderr(&o).contains("249 bytes + 2 of --prefix"),
        "{}",
        stderr(&o)
    );
    // Without a prefix the core's message, as before.
    let o = mcpool(&["--servers", &s, "get", &"x".repeat(251)]);
    assert!(
        stderr(&o).contains("invalid key \"<251 bytes>\": key is longer than 250"),
        "{}",
        stderr(&o)
    );
    // A global option after `ring`: where it goes, as the store commands say.
    for flag in ["--prefix", "--prefix=a:", "--io-timeout"] {
        let o = mcpool_fed(&["--servers", &s, "ring", flag, "a:"], b"k1\n");
        let err = stderr(&o);
        assert_eq!(code(&o), 2, "{err}");
        let name = flag.split('=').next().unwrap();
        assert!(
            err.contains(&format!(
                "ring takes no option {name}: {name} is a global option, and global options \
                 go before the command: mcpool {name} ... ring ..."
            )),
            "{err}"
        );
    }
    let o = mcpool(&["--servers", &s, "ring", "--nope"]);
    assert!(stderr(&o).contains("unknown option \"--nope\""));
}

/// Tester finding retest44 3: every option that names a file takes its path as the system
/// gives it, any bytes (as --value-file did): `ring --keys`, `--sasl-password-file`; an
/// argument that is text (a number, a list, an option value for the core) is still refused
/// when it is not UTF-8, with a hint that names what may be any bytes.
#[test]
fn file_paths_may_be_any_bytes() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let dir = std::env::temp_dir().join(unique("mcpool-cli-paths"));
    std::fs::create_dir_all(&dir).unwrap();
    let named = |name: &[u8]| {
        let mut p = dir.clone().into_os_string().into_vec();
        p.push(b'/');
        p.extend_from_slice(name);
        std::ffi::OsString::from_vec(p)
    };
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    // ring --keys FILE, the file's name not UTF-8: read as the same keys on stdin are
    let keys = named(b"keys\xff");
    std::fs::write(&keys, "k1\nk2\nk3\n").unwrap();
    let fed = mcpool_fed(&["--servers", &s, "ring"], b"k1\nk2\nk3\n");
    assert_eq!(code(&fed), 0, "{}", stderr(&fed));
    let mut inline = b"--keys=".to_vec();
    inline.extend_from_slice(keys.as_bytes());
    for args in [
        vec![std::ffi::OsString::from("--keys"), keys.clone()],
        vec![std::ffi::OsString::from_vec(inline)],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(["--servers", &s, "ring"])
            .args(&args)
            .env_remove("MEMCACHED_SERVERS")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        assert_eq!(o.stdout, fed.stdout, "{args:?}");
    }
    // ... and one missing is named by its bytes (\xNN, never U+FFFD), as --value-file's is
    let missing = named(b"nofile\xff");
    for option in ["--value-file", "--keys"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpool"));
        cmd.args(["--servers", &s]);
        if option == "--keys" {
            cmd.args(["ring", "--keys"]);
        } else {
            cmd.args(["set", "k", "--value-file"]);
        }
        let o = cmd.arg(&missing).stdin(Stdio::null()).output().unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2
                && e.contains(&format!("{option} \""))
                && e.contains("nofile\\xff\": No such file")
                && !e.contains('\u{fffd}')
                && !e.contains("not UTF-8"),
            "{option}: {e}"
        );
    }
    // --sasl-password-file FILE, after the flag or inline: the file is read (a file of two
    // lines is refused naming it by its bytes, the password not shown)
    let pw = named(b"pw\xfe");
    std::fs::write(&pw, "s3cret\nsecond\n").unwrap();
    let mut inline = b"--sasl-password-file=".to_vec();
    inline.extend_from_slice(pw.as_bytes());
    for args in [
        vec![std::ffi::OsString::from("--sasl-password-file"), pw.clone()],
        vec![std::ffi::OsString::from_vec(inline)],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args([
                "--servers",
                &s,
                "--protocol",
                "binary",
                "--sasl-username",
                "u",
            ])
            .args(&args)
            .args(["get", "k"])
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2
                && e.contains("--sasl-password-file \"")
                && e.contains("pw\\xfe\": more than one line")
                && !e.contains("s3cret")
                && !e.contains("not UTF-8"),
            "{args:?}: {e}"
        );
    }
    // Text is still text: a number, a server list, an option's value for the core (the TLS
    // files too: the core takes them as option text) and a command's own options, with the
    // hint that names what may be any bytes.
    let bad = std::ffi::OsStr::from_bytes(b"\xfe");
    for (before, after, what) in [
        (
            &["--servers", &s, "set", "k", "v", "--ttl"][..],
            &[][..],
            "set \"k\": --ttl: ",
        ),
        (&["--servers"][..], &["get", "k"][..], "--servers: "),
        (
            &["--servers", &s, "ring", "--keys", "-", "--random"][..],
            &[][..],
            "ring (after --random): ",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(before)
            .arg(bad)
            .args(after)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2
                && e.contains(&format!(
                    "{what}argument \"\\xfe\" is not UTF-8 (only keys, values and file paths \
                     may be any bytes)"
                )),
            "{before:?}: {e}"
        );
    }
    // The TLS files are the core's options, text: refused, said as such (not "file paths
    // may be any bytes"), after the flag or inline.
    for args in [
        vec![&b"--tls-ca-file"[..], &b"ca\xfe.pem"[..]],
        vec![&b"--tls-client-key=k\xfe.pem"[..]],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(["--servers", &s])
            .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
            .args(["get", "k"])
            .output()
            .unwrap();
        let e = stderr(&o);
        assert!(
            code(&o) == 2
                && e.contains("\\xfe.pem\" is not UTF-8 (a TLS file is named by a client option, which is text")
                && e.starts_with("mcpool: --tls-"),
            "{e}"
        );
    }
    // The bench reads its arguments as text (its --out directory too), said as such, and
    // never as "paths may be any bytes" (--list-peers: nothing would be measured anyway).
    let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(["bench", "--list-peers", "--out"])
        .arg(named(b"out\xff"))
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(
        code(&o) == 2
            && e.contains("bench (after --out): argument \"")
            && e.contains("is not UTF-8 (the bench reads every argument as text")
            && !e.contains("may be any bytes"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tester finding limits 4: a key the key prefix made too long names the prefix's option as
/// the command line gave it (`--key-prefix`, `--prefix`, ...: the one that applies), not
/// always `--prefix`.
#[test]
fn a_long_key_names_the_prefix_option_as_given() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let long = "k".repeat(250);
    for (options, named) in [
        (&["--key-prefix", "pre:"][..], "--key-prefix"),
        (&["--key-prefix=pre:"][..], "--key-prefix"),
        (&["--prefix", "pre:"][..], "--prefix"),
        (&["--key_prefix", "pre:"][..], "--key_prefix"),
        // the later applies, whatever the spelling of either
        (
            &["--prefix", "a:", "--key-prefix", "pre:"][..],
            "--key-prefix",
        ),
        (&["--key-prefix", "a:", "--prefix", "pre:"][..], "--prefix"),
        // a libmemcached configuration string's namespace, by its word
        (
            &["--libmemcached-config", "--NAMESPACE=pre:"][..],
            "--NAMESPACE",
        ),
        // ... which a prefix set by name overrides, before it or after it
        (
            &[
                "--key-prefix",
                "pre:",
                "--libmemcached-config",
                "--NAMESPACE=x:",
            ][..],
            "--key-prefix",
        ),
    ] {
        let mut a = vec!["--servers", s.as_str()];
        a.extend_from_slice(options);
        for command in [&["set", long.as_str(), "v"][..], &["get", &long]] {
            let mut args = a.clone();
            args.extend_from_slice(command);
            let o = mcpool(&args);
            let e = stderr(&o);
            assert!(
                code(&o) == 2
                    && e.contains(&format!(
                        "invalid key \"<254 bytes: 250 bytes + 4 of {named}>\""
                    )),
                "{args:?}: {e}"
            );
        }
        let mut args = a.clone();
        args.push("ring");
        let o = mcpool_fed(&args, format!("{long}\n").as_bytes());
        let e = stderr(&o);
        assert!(
            code(&o) == 2 && e.contains(&format!("250 bytes + 4 of {named}>")),
            "{args:?}: {e}"
        );
    }
}

/// A key with a control byte reads alike in every message: the CLI's own (a miss, not
/// stored, over meta, which sends such keys) and the core's (a key prefix text cannot send),
/// each byte `\x01` as the core's invalid-key errors write it (tester finding retest45 1:
/// `"a\u{1}b": not found`).
#[test]
fn a_control_byte_is_shown_as_its_byte_in_every_message() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let key = format!("{}a\u{1}b", unique("ctl"));
    let shown = key.replace('\u{1}', "\\x01");
    let o = mcpool(&["--servers", &s, "--protocol", "meta", "get", &key]);
    assert_eq!(
        (code(&o), stderr(&o)),
        (1, format!("mcpool: get \"{shown}\": not found\n"))
    );
    let o = mcpool(&["--servers", &s, "--protocol", "meta", "set", &key, "v"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = mcpool(&["--servers", &s, "--protocol", "meta", "add", &key, "w"]);
    assert!(
        stderr(&o).starts_with(&format!("mcpool: add \"{shown}\": not stored")),
        "{}",
        stderr(&o)
    );
    let o = mcpool(&["--servers", &s, "--key-prefix", "p\u{1}", "get", "k"]);
    let e = stderr(&o);
    assert!(e.contains("key_prefix \"p\\x01\": "), "{e}");
    assert!(!e.contains("\\u{"), "{e}");
}
