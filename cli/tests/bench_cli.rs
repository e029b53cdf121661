//! Smoke test of `mcpool bench`: tiny counts (`--smoke`), the floor and mcpool only, against
//! the tool's own private memcached; the report files exist and the table parses, and the
//! contestants take turns repeat by repeat.

use std::path::PathBuf;
use std::process::Command;

fn memcached_installed() -> bool {
    Command::new(std::env::var("MEMCACHED").unwrap_or_else(|_| "memcached".into()))
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

#[test]
fn bench_smoke_writes_a_report() {
    if !memcached_installed() {
        eprintln!("memcached not installed: skipping the bench smoke test");
        return;
    }
    let out: PathBuf =
        std::env::temp_dir().join(format!("mcpool-bench-smoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(["bench", "--smoke", "--peers", "none"])
        .args(["--server-reqs-per-event", "64", "--out"])
        .arg(&out)
        .output()
        .expect("run mcpool bench");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        run.status
    );

    for f in [
        "results.md",
        "results.csv",
        "threads.svg",
        "bulk.svg",
        "bulk-digits.svg",
        "multiget.svg",
    ] {
        let p = out.join(f);
        let meta = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(meta.len() > 0, "{} is empty", p.display());
    }
    let svg = std::fs::read_to_string(out.join("threads.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("<polyline") && svg.trim_end().ends_with("</svg>")
    );

    // The Markdown table: a header, a separator, and rows with as many cells as the header.
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    let (results, spent) = md
        .split_once("## Time spent")
        .expect("a Time spent section");
    let table: Vec<&str> = results.lines().filter(|l| l.starts_with('|')).collect();
    // Time spent: one row per contestant (floor and mcpool), every scenario a column.
    let spent_rows: Vec<&str> = spent.lines().filter(|l| l.starts_with("| ")).collect();
    assert!(spent_rows[0].contains("| sequential |") && spent_rows[0].contains("| bulk |"));
    assert!(
        spent_rows.iter().any(|l| l.starts_with("| floor |")),
        "{spent}"
    );
    assert!(
        spent_rows.iter().any(|l| l.starts_with("| mcpool |")),
        "{spent}"
    );
    assert!(table.len() > 10, "table too short:\n{md}");
    let cells = |l: &str| l.matches('|').count();
    assert!(
        table.iter().all(|l| cells(l) == cells(table[0])),
        "ragged table:\n{md}"
    );
    let header: Vec<&str> = table[0].split('|').map(str::trim).collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (sc, who, median, ratio) = (
        col("scenario"),
        col("contestant"),
        col("median"),
        col("× floor"),
    );
    for scenario in ["sequential", "kilobyte", "multiget", "threads", "bulk"] {
        for contestant in ["floor", "mcpool", "mcpool-zero-copy"] {
            let row = table[2..]
                .iter()
                .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
                .find(|r| r[sc] == scenario && r[who] == contestant)
                .unwrap_or_else(|| panic!("no {scenario}/{contestant} row:\n{md}"));
            let m: f64 = row[median].parse().expect("median is a number");
            assert!(m > 0.0);
            let r: f64 = row[ratio].parse().expect("ratio is a number");
            if contestant == "floor" {
                assert_eq!(r, 1.0);
            }
        }
    }

    // The CSV: a header and one row per raw measurement, all with the same number of fields.
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let n = lines.next().unwrap().split(',').count();
    assert!(lines.clone().count() > 50);
    assert!(lines.all(|l| l.split(',').count() == n));
    // Contestants take turns within a point, and each repeat starts one further on: the
    // first point's timed runs, in the order they ran, are floor 1, mcpool 1, mcpool 2,
    // floor 2, floor 3, mcpool 3 (with mcpool-zero-copy, the third, left out).
    let runs: Vec<String> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[0] == "sequential" && f[2] == "set" && f[8] == "ops/s")
        .filter(|f| f[4] != "mcpool-zero-copy")
        .take(6)
        .map(|f| format!("{} {}", f[4], f[6]))
        .collect();
    assert_eq!(
        runs,
        ["floor 1", "mcpool 1", "mcpool 2", "floor 2", "floor 3", "mcpool 3"],
        "{csv}"
    );

    // The bulk scenario's second value: its rows, with what each contestant stored, and its
    // compression ratio measured at start-up, in the report and on stdout.
    for contestant in ["floor", "mcpool"] {
        let row = table[2..]
            .iter()
            .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
            .find(|r| {
                r[sc] == "bulk"
                    && r[who] == contestant
                    && r[col("point")].ends_with(" value=digits")
            })
            .unwrap_or_else(|| panic!("no bulk digits row for {contestant}:\n{md}"));
        let m: f64 = row[median].parse().expect("median is a number");
        assert!(m > 0.0);
        assert!(row.iter().any(|c| c.contains("stored ")), "{row:?}");
    }
    let values = stdout
        .lines()
        .find(|l| l.starts_with("bulk values"))
        .unwrap_or_else(|| panic!("no bulk values line:\n{stdout}"));
    assert!(
        values.contains("digits") && values.contains("2.15:1"),
        "{values}"
    );
    assert!(md.contains(values), "results.md lacks {values:?}");

    // The stdout table names the machine and every scenario.
    assert!(stdout.contains("machine:") && stdout.contains("memcached"));
    // The private server got the -R asked for, and the report says so.
    assert!(stdout.contains(" -R 64 "), "{stdout}");
    assert!(stdout.contains("bulk") && stdout.contains("× floor"));
    let _ = std::fs::remove_dir_all(&out);
}

/// A driver on a runtime that warms up (a stand-in for the JVM): each process's first command
/// takes twice as long per operation as the later ones. The sequential scenario's warm-up row
/// times it in a fresh process and shows the ratio to the steady rate: 0.50 exactly, which a
/// row timed in the warmed-up driver would not show (1.00).
#[test]
fn bench_warm_up_row_times_a_fresh_driver() {
    if !memcached_installed() {
        eprintln!("memcached not installed: skipping the bench warm-up test");
        return;
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("mcpool-bench-warm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::write(
        dir.join("peers.conf"),
        "[fake-jit]\nrun = sh {peers}/fake.sh\nwarm_up_row = yes\nnote = a fake driver\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("fake.sh"),
        "echo ready fake\nfirst=1\nwhile read cmd op n rest; do\n  case $cmd in\n    quit) exit 0;;\n    seq) if [ $first = 1 ]; then ns=$((n * 20000)); else ns=$((n * 10000)); fi\n         first=0; echo \"ok ns=$ns errors=0\";;\n    *) echo \"na only seq\";;\n  esac\ndone\n",
    )
    .unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args([
            "bench",
            "sequential",
            "--smoke",
            "--peers",
            "fake-jit",
            "--out",
        ])
        .arg(dir.join("out"))
        .env("MCPOOL_BENCH_PEERS", &dir)
        .env("MCPOOL_BENCH_CACHE", &dir)
        .output()
        .expect("run mcpool bench");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stdout}\n{stderr}");
    let md = std::fs::read_to_string(dir.join("out/results.md")).unwrap();
    let row = |point: &str, who: &str| -> Vec<String> {
        md.lines()
            .map(|l| {
                l.split('|')
                    .map(|c| c.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .find(|r| r.len() > 3 && r[2] == point && r[3] == who)
            .unwrap_or_else(|| panic!("no {point} row for {who}:\n{md}"))
    };
    // Steady: 10 µs per operation (100,000/s); the fresh driver's first operations: 20 µs.
    assert_eq!(row("N=300 set", "fake-jit")[6], "100000");
    let warm = row("warm-up set", "fake-jit");
    assert_eq!(warm[6], "50000", "{warm:?}");
    assert!(warm[10].contains("× steady 0.50"), "{warm:?}");
    // Only the contestants that ask for it have the row.
    assert!(!md.contains("| warm-up set | mcpool |"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `mcpool ARGS`, its exit status, stdout and stderr.
fn bench_run(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_mcpool"))
        .args(args)
        .output()
        .expect("run mcpool");
    (
        o.status.code().expect("exit status"),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Tester finding cli2 2: against a closed port the bench ran every scenario in 0.2 s,
/// reported a throughput for runs whose every operation failed ("errors 10000") and exited 0.
/// Now a server that does not answer stops it before anything runs (exit 2, the server
/// named, no report written).
#[test]
fn bench_fails_fast_when_the_server_does_not_answer() {
    let refused = mcpool_testkit::refusing_port().addr();
    let out = std::env::temp_dir().join(format!("mcpool-bench-refused-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = bench_run(&[
        "--servers",
        &refused,
        "bench",
        "sequential",
        "--smoke",
        "--peers",
        "none",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("the server {refused} (--servers) does not answer"))
            && stderr.contains("nothing was run"),
        "{stderr}"
    );
    assert!(!stdout.contains("ops/s"), "{stdout}");
    assert!(!out.exists(), "no report for a run that did not happen");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// A fake memcached that answers `version` and `stats`, and refuses every store with a
/// SERVER_ERROR (a get misses): every operation of the bench fails, the server is up.
fn refusing_stores_server() -> String {
    use std::io::Write;
    let (addr, _) = mcpool_testkit::fake::fake(256, |_, line, w| {
        let reply: &[u8] = if line.starts_with(b"version") {
            b"VERSION 1.6.0-fake\r\n"
        } else if line.starts_with(b"stats") {
            b"END\r\n"
        } else if [&b"set "[..], b"add ", b"replace "]
            .iter()
            .any(|c| line.starts_with(c))
        {
            b"SERVER_ERROR out of memory storing object\r\n"
        } else if line.starts_with(b"get") {
            b"END\r\n"
        } else if line.starts_with(b"delete ") {
            b"NOT_FOUND\r\n"
        } else {
            // a store's data line: its answer was sent
            b""
        };
        let _ = w.write_all(reply);
        mcpool_testkit::fake::Then::Continue
    });
    addr
}

/// Tester finding cli2 2, the other half: a run whose every operation failed is never a
/// throughput figure. The contestant's step fails (noted), no row is reported for it, and
/// the bench exits 2 after writing its report.
#[test]
fn bench_reports_no_figure_for_a_run_whose_every_operation_failed() {
    let server = refusing_stores_server();
    let out = std::env::temp_dir().join(format!("mcpool-bench-allfail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let (code, stdout, stderr) = bench_run(&[
        "--servers",
        &server,
        "bench",
        "sequential",
        "--smoke",
        "--unpinned",
        "--peers",
        "none",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("every operation failed in") && stderr.contains("sequential / mcpool"),
        "{stderr}"
    );
    let md = std::fs::read_to_string(out.join("results.md")).expect("the report is written");
    assert!(md.contains("every operation failed"), "{md}");
    // No row of figures: the table has its header and separator only.
    let results = md.split("## Time spent").next().unwrap();
    let rows = results.lines().filter(|l| l.starts_with("| ")).count();
    assert_eq!(rows, 1, "{md}");
    assert!(!stdout.contains("ops/s"), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}

/// Tester finding cli2 3: settings of the private server with --servers (which the bench
/// does not start) were silently ignored, and 0 was silently raised to 1.
#[test]
fn bench_refuses_private_server_settings_with_servers_and_zero() {
    // (refused before any server is asked or peer built; a refusing port, one scenario,
    // --smoke and no peers keep a run that got past them short)
    let refused = mcpool_testkit::refusing_port().addr();
    let bench = |opts: &[&str]| {
        let mut args = vec!["--servers", &refused, "bench", "sequential", "--smoke"];
        args.extend_from_slice(&["--peers", "none"]);
        args.extend_from_slice(opts);
        bench_run(&args)
    };
    let (code, _, stderr) = bench(&["--server-threads", "4"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--server-threads set the private memcached"),
        "{stderr}"
    );
    let (code, _, stderr) = bench(&["--server-reqs-per-event=8"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--server-reqs-per-event set"), "{stderr}");
    for opts in [
        &["--server-threads", "0"][..],
        &["--server-reqs-per-event", "0"],
        &["--repeats", "3", "--repeats", "4"],
        &["--peers", ""],
    ] {
        let (code, stdout, stderr) = bench(opts);
        assert_eq!(code, 2, "{opts:?}: {stdout}{stderr}");
        assert!(stderr.contains("mcpool bench --help"), "{opts:?}: {stderr}");
    }
}
