//! TLS against memcached started with `-Z` and certificates this test generates (openssl).
#![cfg(feature = "tls")]
mod common;

use common::{silent_server, unique, Memcached};
use mcpool::{Client, Error, Protocol, TlsOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl (Debian: apt-get install openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA.
fn certificates(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(unique(name));
    std::fs::create_dir_all(&dir).unwrap();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=mcpool test CA",
    ]);
    openssl(&dir, &ca);
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    for who in ["server", "client"] {
        let (key, csr, crt) = (
            format!("{who}.key"),
            format!("{who}.csr"),
            format!("{who}.crt"),
        );
        let mut req = vec!["req"];
        req.extend(ec);
        let subj = format!("/CN={who}");
        req.extend(["-keyout", &key, "-out", &csr, "-subj", &subj]);
        openssl(&dir, &req);
        sign(&dir, &csr, &crt, Some("san.ext"));
    }
    dir
}

/// Signs the request `csr` with the test CA into `crt`: X.509 v3 with the extensions of
/// `extfile`, or without one the v1 certificate `openssl x509 -req` makes then.
fn sign(dir: &Path, csr: &str, crt: &str, extfile: Option<&str>) {
    let mut args = vec![
        "x509",
        "-req",
        "-in",
        csr,
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        crt,
        "-days",
        "2",
    ];
    if let Some(ext) = extfile {
        args.extend(["-extfile", ext]);
    }
    openssl(dir, &args);
}

fn tls_server(dir: &Path, require_client_cert: bool) -> Memcached {
    let mut opts = format!(
        "ssl_chain_cert={},ssl_key={}",
        dir.join("server.crt").display(),
        dir.join("server.key").display()
    );
    if require_client_cert {
        opts.push_str(&format!(
            ",ssl_verify_mode=2,ssl_ca_cert={}",
            dir.join("ca.crt").display()
        ));
    }
    Memcached::start(&["-Z", "-o", &opts])
}

/// The message of `c`'s refused TLS handshake (an [`Error::Auth`]) on its first call.
fn refusal(c: &Client) -> String {
    match c.get("k") {
        Err(e @ Error::Auth { .. }) => e.to_string(),
        other => panic!("expected a refused handshake, got {other:?}"),
    }
}

fn client(mc: &Memcached, tls: TlsOptions, protocol: Protocol) -> mcpool::Result<Client> {
    Client::builder()
        .server(&mc.addr())
        .protocol(protocol)
        .min_idle(0)
        .failure_limit(100)
        .tls(tls)
        .build()
}

#[test]
fn verified_tls_in_every_protocol() {
    let dir = certificates("tls");
    let mc = tls_server(&dir, false);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = client(
            &mc,
            TlsOptions {
                ca_file: Some(dir.join("ca.crt")),
                ..TlsOptions::default()
            },
            p,
        )
        .unwrap();
        let big = vec![b'x'; 200_000];
        c.set("k", &big, 0).unwrap();
        assert_eq!(c.get("k").unwrap().unwrap(), big, "{p}");
        assert_eq!(c.get_multi(&["k", "nope"]).len(), 2);
    }
    // A plain-text client cannot talk to the TLS port.
    let plain = Client::builder()
        .server(&mc.addr())
        .io_timeout(std::time::Duration::from_millis(300))
        .build()
        .unwrap();
    // Tester finding: it said only "Connection reset by peer"; now it hints at TLS.
    let e = plain.get("k").unwrap_err().to_string();
    assert!(e.contains("turn TLS on"), "{e}");
}

/// A batch larger than both sockets' buffers (and rustls' 64 KiB of queued records) is
/// written while its replies are read over TLS too, on every protocol: before, the whole
/// request was written first and a healthy memcached stopped reading it (its replies
/// unread) until the I/O timeout.
#[test]
fn large_batches_over_tls_do_not_wait_on_the_socket_buffers() {
    let dir = certificates("tls-batch");
    let mc = tls_server(&dir, false);
    let io_timeout = Duration::from_secs(15); // generous: a stall waits it out and fails
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .key_prefix(unique("tb"))
            .io_timeout(io_timeout)
            .operation_timeout(Some(Duration::from_secs(60)))
            .tls(TlsOptions {
                ca_file: Some(dir.join("ca.crt")),
                ..TlsOptions::default()
            })
            .build()
            .unwrap();
        let n = 200_000;
        let items: Vec<(String, String)> =
            (0..n).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
        let started = Instant::now();
        let stored = c.set_multi(&items, 0);
        let took = started.elapsed();
        let bad = stored.iter().filter(|r| r.is_err()).count();
        let first = stored.iter().find(|r| r.is_err());
        assert!(
            took < io_timeout,
            "{p} set_multi took {took:?}: {bad} failed, first {first:?}"
        );
        assert!(stored.iter().all(|r| r.is_ok()), "{p}");
        let keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
        let started = Instant::now();
        let got = c.get_multi(&keys);
        let took = started.elapsed();
        assert!(took < io_timeout, "{p} get_multi took {took:?}");
        for (i, r) in got.iter().enumerate() {
            let v = r.as_ref().unwrap();
            let v = v.as_ref().map(|it| &it.value[..]);
            assert_eq!(v, Some(items[i].1.as_bytes()), "{p} key {i}");
        }
        let st = &c.server_states()[0];
        assert!(st.alive && st.failures == 0, "{p}: {st:?}");
    }
}

/// A server that presents its CA's own certificate (CA:TRUE, made by `openssl req -x509`
/// with a subjectAltName) is told so; the hint said "must be X.509 v3 with a
/// subjectAltName", which it was (tester finding secure2 6).
#[test]
fn a_ca_certificate_as_the_servers_own_is_named_as_such() {
    let dir = certificates("tls-ca-as-server");
    let opts = format!(
        "ssl_chain_cert={},ssl_key={}",
        dir.join("ca.crt").display(),
        dir.join("ca.key").display()
    );
    let mc = Memcached::start(&["-Z", "-o", &opts]);
    let c = client(
        &mc,
        TlsOptions {
            ca_file: Some(dir.join("ca.crt")),
            server_name: Some("localhost".into()),
            ..TlsOptions::default()
        },
        Protocol::Text,
    )
    .unwrap();
    let m = refusal(&c);
    assert!(
        m.contains("presents a CA certificate") && !m.contains("X.509 v3"),
        "{m}"
    );
}

#[test]
fn a_certificate_from_another_ca_is_refused() {
    let dir = certificates("tls-a");
    let other = certificates("tls-b");
    let mc = tls_server(&dir, false);
    let c = client(
        &mc,
        TlsOptions {
            ca_file: Some(other.join("ca.crt")),
            ..TlsOptions::default()
        },
        Protocol::Text,
    )
    .unwrap();
    let m = refusal(&c);
    assert!(
        m.contains("TLS handshake") && m.contains("tls_ca_file"),
        "{m}"
    );
    // A refused certificate is a misconfiguration, not an outage: fail_open never hides it
    // (tester finding: it read as a miss and "not stored" forever).
    let open = Client::builder()
        .server(&mc.addr())
        .min_idle(0)
        .fail_open(true)
        .tls(TlsOptions {
            ca_file: Some(other.join("ca.crt")),
            ..TlsOptions::default()
        })
        .build()
        .unwrap();
    assert!(matches!(open.get("k"), Err(Error::Auth { .. })));
    assert!(matches!(open.set("k", b"v", 0), Err(Error::Auth { .. })));
    // No CA file and verification on: a configuration error, not a silent downgrade.
    assert!(matches!(
        client(&mc, TlsOptions::default(), Protocol::Text),
        Err(Error::Config(_))
    ));
}

#[test]
fn client_certificates() {
    let dir = certificates("tls-client");
    let mc = tls_server(&dir, true);
    let base = TlsOptions {
        ca_file: Some(dir.join("ca.crt")),
        ..TlsOptions::default()
    };
    let without = Client::builder()
        .server(&mc.addr())
        .protocol(Protocol::Meta)
        .min_idle(0)
        .fail_open(true)
        .tls(base.clone())
        .build()
        .unwrap();
    // The server demands a client certificate: said so, and never failed open (a TLS 1.3
    // client finishes its handshake first, so the refusal comes with the first reply).
    let m = refusal(&without);
    assert!(m.contains("tls_client_cert"), "{m}");
    let with = client(
        &mc,
        TlsOptions {
            client_cert: Some((dir.join("client.crt"), dir.join("client.key"))),
            ..base
        },
        Protocol::Meta,
    )
    .unwrap();
    with.set("k", b"mutual", 0).unwrap();
    assert_eq!(with.get("k").unwrap().unwrap(), b"mutual");
}

/// memcached 1.6.18 refuses a resumed TLS session ("internal error" alert) whenever it
/// verifies client certificates, so a client must not resume: before, every connection
/// after its first tended to fail its handshake (a tester saw 876 of 1,600 operations fail
/// on 8 threads) and the server was marked dead. Each round here opens a new connection
/// (`disconnect_all`), on every protocol.
#[test]
fn new_connections_to_a_server_that_verifies_clients_do_not_resume_sessions() {
    let dir = certificates("tls-resume");
    let mc = tls_server(&dir, true);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .min_idle(0)
            .key_prefix(unique("rs"))
            .tls(TlsOptions {
                ca_file: Some(dir.join("ca.crt")),
                client_cert: Some((dir.join("client.crt"), dir.join("client.key"))),
                ..TlsOptions::default()
            })
            .build()
            .unwrap();
        for round in 0..6 {
            let v = format!("v{round}");
            c.set("k", v.as_bytes(), 0)
                .unwrap_or_else(|e| panic!("{p} round {round}: {e}"));
            assert_eq!(c.get("k").unwrap().unwrap(), v.as_bytes(), "{p}");
            c.disconnect_all();
        }
        let st = &c.server_states()[0];
        assert!(st.alive && st.failures == 0, "{p}: {st:?}");
    }
}

#[test]
fn idle_peek_keeps_healthy_tls_connections() {
    // Issue 15 item 1: the check-out peek drops a pooled connection with bytes waiting; TLS
    // records that are not replies (TLS 1.3 session tickets) must not count as such.
    let dir = certificates("tls-peek");
    let mc = tls_server(&dir, false);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .min_idle(0)
            .max_size(1)
            .tls(TlsOptions {
                ca_file: Some(dir.join("ca.crt")),
                ..TlsOptions::default()
            })
            .build()
            .unwrap();
        for i in 0..20 {
            c.set("k", format!("v{i}").as_bytes(), 0).unwrap();
            assert_eq!(
                c.get("k").unwrap().unwrap(),
                format!("v{i}").as_bytes(),
                "{p}"
            );
        }
        assert_eq!(c.metrics()[0].connects, 1, "{p}: one connection, reused");
    }
}

/// Tester findings: the TLS handshake ignored `operation_timeout` (a 1 s deadline and a
/// 10 s I/O timeout against a server that never answers kept the call 10 s, where a plain
/// connection ended at the deadline), and its timeout was an I/O error ("TLS handshake:
/// Resource temporarily unavailable (os error 11)"), not a timeout. Now the deadline bounds
/// the handshake, and its timeout is `IoTimeout`, with or without a deadline; with SASL too.
#[test]
fn the_tls_handshake_keeps_to_the_deadline_and_times_out_as_a_timeout() {
    let dir = certificates("tls-silent");
    let silent = silent_server();
    let tls = TlsOptions {
        ca_file: Some(dir.join("ca.crt")),
        ..TlsOptions::default()
    };
    for (protocol, sasl) in [(Protocol::Text, false), (Protocol::Binary, true)] {
        let mut b = Client::builder()
            .server(&silent)
            .protocol(protocol)
            .min_idle(0)
            .failure_limit(100)
            .io_timeout(Duration::from_secs(10))
            .operation_timeout(Some(Duration::from_secs(1)))
            .tls(tls.clone());
        if sasl {
            b = b.sasl_plain("alice", "secret");
        }
        let c = b.build().unwrap();
        let t = Instant::now();
        let got = c.get("k");
        let took = t.elapsed();
        assert!(
            matches!(got, Err(Error::IoTimeout { .. })),
            "{protocol}: {got:?}"
        );
        assert!(
            took < Duration::from_secs(5),
            "{protocol}: took {took:?}, past the 1 s deadline"
        );
    }
    // No deadline: the I/O timeout ends the handshake, also as a timeout.
    let c = Client::builder()
        .server(&silent)
        .min_idle(0)
        .io_timeout(Duration::from_millis(300))
        .tls(tls)
        .build()
        .unwrap();
    let got = c.get("k");
    assert!(matches!(got, Err(Error::IoTimeout { .. })), "{got:?}");
}

fn config_error(b: mcpool::ClientBuilder) -> String {
    match b.build() {
        Err(Error::Config(m)) => m,
        other => panic!(
            "expected a configuration error, got {:?}",
            other.map(|_| ())
        ),
    }
}

/// Tester findings: certificate, key, CA and server-name mistakes were found late or said
/// little: a client certificate without a key named an empty path ("TLS client key : No such
/// file"), a passphrase-protected key said "no items found", a key given as the certificate
/// "peer sent no certificates"; an empty CA file (or a key as the CA file) was accepted and
/// every call failed UnknownIssuer, marking the server dead; a bad tls_server_name was
/// refused only at the first call. Each is now a configuration error at build naming it.
#[test]
fn tls_file_and_name_mistakes_are_configuration_errors_at_build() {
    let dir = certificates("tls-files");
    openssl(
        &dir,
        &[
            "pkey",
            "-in",
            "client.key",
            "-aes256",
            "-passout",
            "pass:pw",
            "-out",
            "enc.key",
        ],
    );
    std::fs::write(dir.join("empty.pem"), "").unwrap();
    let ca = dir.join("ca.crt");
    let base = || {
        Client::builder()
            .server("127.0.0.1:1")
            .min_idle(0)
            .set("tls_ca_file", ca.to_str().unwrap())
            .unwrap()
    };
    let path = |f: &str| dir.join(f).to_str().unwrap().to_owned();
    let m = config_error(base().set("tls_client_cert", &path("client.crt")).unwrap());
    assert!(
        m.contains("tls_client_cert") && m.contains("tls_client_key"),
        "{m}"
    );
    let m = config_error(base().set("tls_client_key", &path("client.key")).unwrap());
    assert!(
        m.contains("tls_client_key") && m.contains("tls_client_cert"),
        "{m}"
    );
    let with = |cert: &str, key: &str| {
        base()
            .set("tls_client_cert", &path(cert))
            .unwrap()
            .set("tls_client_key", &path(key))
            .unwrap()
    };
    let m = config_error(with("client.crt", "enc.key"));
    assert!(m.contains("enc.key") && m.contains("encrypted"), "{m}");
    let m = config_error(with("client.key", "client.key"));
    assert!(
        m.contains("client.key") && m.contains("no PEM certificate"),
        "{m}"
    );
    for bad_ca in ["empty.pem", "ca.key"] {
        let b = Client::builder()
            .server("127.0.0.1:1")
            .set("tls_ca_file", &path(bad_ca))
            .unwrap();
        let m = config_error(b);
        assert!(
            m.contains(bad_ca) && m.contains("no PEM certificate"),
            "{m}"
        );
    }
    let m = config_error(base().set("tls_server_name", "bad name!").unwrap());
    assert!(m.contains("tls_server_name"), "{m}");
    // Still fine: a good pair.
    assert!(with("client.crt", "client.key").build().is_ok());
}

/// Tester finding: `tls=false` after `tls_ca_file` silently turned TLS off (plain text,
/// the CA file ignored), while in the other order TLS stayed on. Together they are a
/// configuration error, in either order; `tls=false` alone, or with TLS options at their
/// defaults, is fine.
#[test]
fn tls_false_with_a_tls_option_is_an_error_in_either_order() {
    let b = || Client::builder().server("127.0.0.1:1");
    assert!(b()
        .set("tls_ca_file", "/nonexistent/ca.pem")
        .unwrap()
        .set("tls", "false")
        .is_err());
    assert!(b()
        .set("tls", "false")
        .unwrap()
        .set("tls_ca_file", "/nonexistent/ca.pem")
        .is_err());
    assert!(b()
        .set("tls", "false")
        .unwrap()
        .set("tls_insecure_skip_verify", "true")
        .is_err());
    let off = b()
        .set("tls", "false")
        .unwrap()
        .set("tls_ca_file", "")
        .unwrap()
        .set("tls_insecure_skip_verify", "false")
        .unwrap();
    assert!(off.config().tls.is_none());
    assert!(b().set("tls", "true").unwrap().set("tls", "false").is_ok());
}

/// Tester finding: `tls_insecure_skip_verify` with a `tls_ca_file` built a client that
/// never read the file (a missing one too) and verified nothing. Verification off and a CA
/// to verify with contradict each other: a configuration error naming both, when built.
#[test]
fn tls_insecure_skip_verify_with_a_ca_file_is_a_configuration_error() {
    let dir = certificates("tls-insecure");
    for ca in [dir.join("ca.crt"), PathBuf::from("/nonexistent/ca.pem")] {
        let e = Client::builder()
            .server("127.0.0.1:1")
            .tls(TlsOptions {
                ca_file: Some(ca),
                insecure_skip_verify: true,
                ..TlsOptions::default()
            })
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tls_insecure_skip_verify") && e.contains("tls_ca_file"),
            "{e}"
        );
    }
    let alone = TlsOptions {
        insecure_skip_verify: true,
        ..TlsOptions::default()
    };
    assert!(Client::builder()
        .server("127.0.0.1:1")
        .tls(alone)
        .build()
        .is_ok());
}

/// Tester finding packaging 1: a client certificate made the usual way (`openssl x509 -req`
/// without `-extfile`: X.509 v1, which memcached takes) was refused at build as an "invalid
/// peer certificate: Other(OtherError(UnsupportedCertVersion))", naming the client's own
/// certificate the peer's, with no way out. Now it says what to make.
#[test]
fn a_version_1_client_certificate_is_named_as_the_clients_with_the_way_out() {
    let dir = certificates("tls-v1-client");
    sign(&dir, "client.csr", "client-v1.crt", None);
    let e = config_error(Client::builder().server("127.0.0.1:11211").tls(TlsOptions {
        ca_file: Some(dir.join("ca.crt")),
        client_cert: Some((dir.join("client-v1.crt"), dir.join("client.key"))),
        ..TlsOptions::default()
    }));
    assert!(
        e.contains("client-v1.crt") && e.contains("X.509 v3") && e.contains("-extfile"),
        "{e}"
    );
    assert!(!e.contains("peer"), "{e}");
}

/// Tester finding: a TLS client against a plain-text memcached said only "received corrupt
/// message of type InvalidContentType": it now says the server does not speak TLS.
#[test]
fn a_tls_client_against_a_plain_server_is_told_so() {
    let dir = certificates("tls-plain");
    let mc = Memcached::start(&[]);
    let c = client(
        &mc,
        TlsOptions {
            ca_file: Some(dir.join("ca.crt")),
            ..TlsOptions::default()
        },
        Protocol::Text,
    )
    .unwrap();
    let e = c.get("k").unwrap_err().to_string();
    assert!(e.contains("does not speak TLS"), "{e}");
}

/// Tester finding: after `failure_limit` failed handshakes (a wrong CA file) later calls said
/// only "server … is marked dead; retry later": the cause, which no retry will fix, was
/// lost. A refused certificate no longer marks the server dead at all: each call fails
/// with it (the dead error still carries its cause for real outages).
#[test]
fn a_refused_certificate_keeps_its_cause_and_marks_no_server_dead() {
    let dir = certificates("tls-dead-a");
    let other = certificates("tls-dead-b");
    let mc = tls_server(&dir, false);
    let c = Client::builder()
        .server(&mc.addr())
        .min_idle(0)
        .failure_limit(2)
        .tls(TlsOptions {
            ca_file: Some(other.join("ca.crt")),
            ..TlsOptions::default()
        })
        .build()
        .unwrap();
    // A refused certificate is a misconfiguration (Error::Auth, as a refused SASL login):
    // every call says why, and the server is not marked dead (no failover moves its keys).
    for _ in 0..4 {
        let m = refusal(&c);
        assert!(m.contains("invalid peer certificate"), "{m}");
    }
    assert!(c.server_states()[0].alive);
}

/// Tester finding (names F9): `tls` reads "every server", but a unix-socket server in the
/// same list is spoken to in plain text (memcached has no TLS on unix sockets); the option
/// row and the README say so now, and this pins it: one TLS client, a `-Z` memcached over
/// TCP and a plain one on a socket, both served.
#[test]
fn tls_applies_to_tcp_servers_and_a_unix_socket_stays_plain() {
    let dir = certificates("tls-unix");
    let tcp = tls_server(&dir, false);
    let sock = dir.join("mc.sock");
    let _plain = Memcached::start_unix(sock.to_str().unwrap());
    let c = Client::builder()
        .servers([tcp.addr(), sock.to_str().unwrap().to_owned()])
        .min_idle(0)
        .tls(TlsOptions {
            ca_file: Some(dir.join("ca.crt")),
            ..TlsOptions::default()
        })
        .build()
        .unwrap();
    let mut on = [0; 2];
    for i in 0..40 {
        let k = format!("{}{i}", unique("tls-unix"));
        c.set(&k, b"v", 0).unwrap();
        assert_eq!(c.get(&k).unwrap().as_deref(), Some(&b"v"[..]));
        on[c.server_for(&k).unwrap()] += 1;
    }
    assert!(on[0] > 0 && on[1] > 0, "{on:?}");
}

/// Batches of sets, gets and deletes a little over one TLS record (16 KiB), on every
/// protocol and with `noreply`, against the memcached the harness has (Debian 12's 1.6.18, which can stall on
/// sets pipelined over TLS: README, "TLS in every package"). Each batch's last request goes
/// out in records of its own, so none waits for the I/O timeout; before, the first text
/// batches stalled already.
#[test]
fn batches_of_sets_over_tls_do_not_stall_any_memcached() {
    let dir = certificates("tls-sets");
    let mc = tls_server(&dir, false);
    let io_timeout = Duration::from_secs(2);
    for p in [Protocol::Text, Protocol::Meta, Protocol::Binary] {
        let c = Client::builder()
            .server(&mc.addr())
            .protocol(p)
            .key_prefix(unique("ts"))
            .io_timeout(io_timeout)
            .tls(TlsOptions {
                ca_file: Some(dir.join("ca.crt")),
                ..TlsOptions::default()
            })
            .build()
            .unwrap();
        // Values of varying lengths move the record boundaries through requests and values.
        for round in 0..30usize {
            let items: Vec<(String, String)> = (0..500)
                .map(|i| {
                    (
                        format!("r{round}k{i}"),
                        "v".repeat(1 + (i * 7 + round) % 40),
                    )
                })
                .collect();
            let started = Instant::now();
            let stored = c.set_multi(&items, 0);
            let bad = stored.iter().filter(|r| r.is_err()).count();
            assert_eq!(
                bad,
                0,
                "{p} round {round}: {:?}",
                stored.iter().find(|r| r.is_err())
            );
            if p == Protocol::Text {
                c.set_multi_noreply(&items, 0)
                    .unwrap_or_else(|e| panic!("{p} round {round} noreply: {e}"));
            }
            // Binary reads and deletes carry bodies (their keys) that memcached reads the
            // same way.
            let keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
            let got = c.get_multi(&keys);
            for (r, (k, v)) in got.iter().zip(&items) {
                let got = r.as_ref().map(|o| o.as_ref().map(|it| &it.value[..]));
                assert_eq!(got.ok(), Some(Some(v.as_bytes())), "{p} round {round} {k}");
            }
            let deleted = c.delete_multi(&keys);
            assert!(
                deleted.iter().all(|r| matches!(r, Ok(true))),
                "{p} round {round}"
            );
            assert!(started.elapsed() < io_timeout, "{p} round {round}");
        }
    }
}
