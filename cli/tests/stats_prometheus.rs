//! `mcpool stats --client --format prometheus`: the client's metrics in the Prometheus text
//! format on standard output (the load's summary on standard error), against real memcached.
use mcpool_testkit::Memcached;
use std::process::Command;

#[test]
fn stats_client_in_prometheus_format() {
    let mc = Memcached::start(&[]);
    let s = mc.addr();
    let run = |format: &str| {
        Command::new(env!("CARGO_BIN_EXE_mcpool"))
            .args(["--servers", &s, "stats", "--client", "--ops", "200"])
            .args(["--threads", "2", "--format", format])
            .output()
            .expect("run mcpool")
    };
    let o = run("prometheus");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("0 crossed values"));
    // 200 operations, each one exchange with the one server.
    assert!(
        out.contains(&format!("mcpool_operations_total{{server=\"{s}\"}} 200\n")),
        "{out}"
    );
    assert!(out.contains("# TYPE mcpool_hits_total counter\n"), "{out}");
    assert!(out.contains("# TYPE mcpool_pool_idle gauge\n"), "{out}");
    // Every line is a comment or `name{server="..."} number`.
    for line in out.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("a value");
        assert!(series.starts_with("mcpool_") && series.ends_with(&format!("{{server=\"{s}\"}}")));
        assert!(value.parse::<f64>().is_ok(), "{line}");
    }
    let bad = run("yaml");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--format takes table or prometheus"));
}
