"""Issue 17 items 2 and 4: every core option by name, the core features (metrics, server
states, events, leases), multi calls as one pipelined round trip per server, and per-call
compression thresholds without sibling clients."""
import socket
import subprocess
import threading
import time

import pytest

import mcpool
from conftest import MEMCACHED, Server

ADDR = "127.0.0.1:1"


def wait_until(cond, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_every_core_option_reaches_the_binding():
    """Each row of the core's table is known to Client(**options) with no binding code: a
    value it cannot read is refused naming that option, never as an unknown option."""
    table = mcpool.options()
    assert {"operation_timeout", "io_timeout", "protocol", "failover", "tls_ca_file",
            "sasl_username", "preset"} <= set(table)
    for name in table:
        if name == "servers":  # Client's first argument
            continue
        try:
            mcpool.Client([ADDR], **dict({"min_idle": 0}, **{name: "\x01 not a value"}))
        except mcpool.ClientError as e:  # refused naming it, or (text) when building
            assert "unknown option" not in str(e), name
            assert name in str(e) or str(e).startswith(("mcpool_client_new", "unsupported: TLS")), \
                (name, str(e))


def test_options_give_a_duration_in_pythons_unit():
    """Tester finding docwalk 1: options() said "ms for a bare number" of a duration that
    Client reads as seconds when given a number; other rows keep their unit."""
    table = mcpool.options()
    assert table["io_timeout"].startswith("duration, seconds for a number;"), table["io_timeout"]
    assert " ms " not in table["operation_timeout"]
    assert table["max_size"].startswith("integer"), table["max_size"]


def test_tls_supported_says_whether_tls_options_are_taken():
    """Tester finding secure 3: whether the core speaks TLS, asked without trying an option."""
    assert isinstance(mcpool.tls_supported(), bool)
    if mcpool.tls_supported():
        mcpool.Client([ADDR], min_idle=0, tls_insecure_skip_verify=True)
    else:
        with pytest.raises(mcpool.ClientError, match="unsupported: TLS"):
            mcpool.Client([ADDR], min_idle=0, tls_insecure_skip_verify=True)


def test_core_options_by_name_work(server, prefix):
    c = mcpool.Client([server.addr], operation_timeout="750ms", io_timeout=0.5,
                      failover="rehash", protocol="meta", preset="pylibmc", max_size=2,
                      nodelay=False, test_on_check_out=True)
    assert c.set(prefix + "k", "v") and c.get(prefix + "k") == "v"


def test_set_multi_and_delete_multi_are_one_round_trip_per_server(servers, prefix):
    addrs = [s.addr for s in servers]
    mc = mcpool.Client(addrs)
    keys = [prefix + "k%d" % i for i in range(60)]
    before = mc.metrics()
    assert mc.set_multi({k: b"v" for k in keys}, time=100) == []
    after = mc.metrics()
    ops = {a: after[a]["operations"] - before[a]["operations"] for a in addrs}
    assert all(n == 1 for n in ops.values()), ops  # a loop of sets would count 60
    assert mc.get_multi(keys) == {k: b"v" for k in keys}
    assert mc.delete_multi(keys + [prefix + "missing"]) is False
    done = mc.metrics()
    assert all(done[a]["operations"] - after[a]["operations"] <= 2 for a in addrs)
    assert mc.get_multi(keys) == {}


def test_set_multi_reports_failed_keys_and_raises_for_bad_ones(server, prefix):
    mc = mcpool.Client([server.addr], max_value_size=1000)
    # a value too large raises once the others are stored (tester finding partial 4: it
    # was listed as not stored)
    with pytest.raises(mcpool.ClientError) as e:
        mc.set_multi({prefix + "ok": b"x", prefix + "big": b"x" * 2000})
    assert e.value.status_name == "MCPOOL_VALUE_TOO_LARGE" and e.value.key == prefix + "big"
    assert e.value.results[prefix + "ok"] is True and mc.get(prefix + "ok") == b"x"
    assert mc.set_multi({prefix + "ok": b"y"}) == []
    assert mc.add_multi({prefix + "ok": b"z"}) == [prefix + "ok"]  # it exists: listed
    with pytest.raises(mcpool.ClientError, match="key"):
        mc.set_multi({prefix + "ok": b"x", "bad key": b"y"})
    with pytest.raises(mcpool.ClientTypeError):
        mc.set_multi({prefix + "ok": object()})


def test_per_call_min_compress_len_without_sibling_clients(prefix):
    server = Server()  # its own, to count the connections this test's client opens
    mc = mcpool.Client([server.addr], min_compress_len=0)  # the client never compresses
    big, small = "compress me " * 400, "s" * 50
    assert mc.set(prefix + "big", big, min_compress_len=100)
    assert mc.set(prefix + "small", small, min_compress_len=100)
    assert mc.set(prefix + "plain", big)

    def stored_len(k):  # the body as memcached holds it: shorter than the value if compressed
        return len(server.raw_get(prefix + k)[1])
    assert stored_len("big") < len(big) // 4
    assert stored_len("small") == len(small)
    assert stored_len("plain") == len(big)
    assert mc.set_multi({prefix + "mb": big, prefix + "ms": small}, min_compress_len=100) == []
    assert stored_len("mb") < len(big) // 4 and stored_len("ms") == len(small)
    assert mc.get_multi([prefix + "big", prefix + "mb"]) == {prefix + "big": big,
                                                             prefix + "mb": big}
    conns = int(mc.stats()[server.addr]["curr_connections"])
    opened = mc.metrics()[server.addr]["connects"]
    for n in (1, 7, 100, 5000, 12345):  # any number of thresholds: one client, one pool
        assert mc.set(prefix + "n%d" % n, big, min_compress_len=n)
    # No connection more at the server (fewer is fine: curr_connections counts raw_get's
    # sockets until memcached has reaped them), and none opened by the client.
    assert int(mc.stats()[server.addr]["curr_connections"]) <= conns
    assert mc.metrics()[server.addr]["connects"] == opened
    server.stop()


def test_metrics_and_server_states(server, prefix):
    mc = mcpool.Client([server.addr])
    mc.set(prefix + "k", b"v")
    mc.get(prefix + "k")
    mc.get(prefix + "missing")
    m = mc.metrics()[server.addr]
    assert m["hits"] >= 1 and m["misses"] >= 1 and m["operations"] >= 3
    # The same in the Prometheus text format (tester finding observe 5: C and the CLI only).
    text = mc.metrics_prometheus()
    assert "# TYPE mcpool_hits_total counter\n" in text
    assert 'mcpool_hits_total{server="%s"} ' % server.addr in text
    assert mc.server_states() == {server.addr: {"alive": True, "failures": 0, "retry_in": 0.0}}
    dead = mcpool.Client([ADDR], min_idle=0, failure_limit=1, retry_timeout=30)
    with pytest.raises(mcpool.ConnectionError):
        dead.get("k")
    st = dead.server_states()[ADDR]
    assert st["alive"] is False and st["failures"] >= 1 and 0 < st["retry_in"] <= 30
    assert dead.metrics()[ADDR]["connect_errors"] >= 1


def _memcached_on(port):
    args = [MEMCACHED, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-t", "1", "-u", "root"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def up():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False
    assert wait_until(up), "memcached did not start on %d" % port
    return p


def test_event_callback_reports_down_and_up(prefix):
    s = Server()
    events = []
    lock = threading.Lock()

    def on_event(kind, server, failures, retry_in):
        with lock:
            events.append((kind, server, failures, retry_in))
    mc = mcpool.Client([s.addr], on_event=on_event, failure_limit=1, retry_timeout=0.05,
                       retry_timeout_max=0.05)
    assert mc.set(prefix + "k", b"v")
    port = s.port
    s.stop()
    with pytest.raises(mcpool.ConnectionError):
        for _ in range(5):  # the pooled connection notices the stop on first use
            mc.get(prefix + "k")
    assert wait_until(lambda: any(e[0] == "server_down" for e in events))
    down = next(e for e in events if e[0] == "server_down")
    assert down[1] == s.addr and down[2] >= 1 and down[3] >= 0
    p = _memcached_on(port)
    try:
        def answers():
            try:
                mc.set(prefix + "k2", b"v")
                return True
            except mcpool.ConnectionError:
                return False
        assert wait_until(answers)
        assert wait_until(lambda: any(e[0] == "server_up" for e in events))
    finally:
        p.terminate()
        p.wait(5)


def test_event_callback_exception_is_reported_not_raised(prefix, monkeypatch):
    import sys
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    def boom(*a):
        raise RuntimeError("callback failed")
    mc = mcpool.Client([ADDR], min_idle=0, on_event=boom, failure_limit=1)
    with pytest.raises(mcpool.ConnectionError):  # the call's own error, not the callback's
        mc.get(prefix + "k")
    assert [str(r.exc_value) for r in reported] == ["callback failed"]
    with pytest.raises(mcpool.ClientTypeError):
        mcpool.Client([ADDR], min_idle=0, on_event=42)


def test_leases_and_invalidate(server, prefix):
    mc = mcpool.Client([server.addr], protocol="meta")
    other = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "lease"
    assert mc.get_lease(k, vivify_ttl=30) == ("recompute", None, None)
    outcome, value, _ = other.get_lease(k, vivify_ttl=30)
    assert (outcome, value) == ("wait", None)
    assert mc.set(k, "fresh", time=60)
    outcome, value, cas = other.get_lease(k)
    assert (outcome, value) == ("hit", "fresh") and cas
    assert mc.invalidate(k, stale_ttl=30) is True
    first = mc.get_lease(k)
    second = other.get_lease(k)
    assert {first[0], second[0]} == {"recompute", "wait"}
    assert first[1] == second[1] == "fresh"  # the stale value meanwhile
    assert mc.invalidate(prefix + "never") is False
    # None is the default time, as omitting it (tester finding retest35 2: it was 0)
    n = prefix + "lease-none"
    assert mc.set(n, "v", time=1000)
    assert mc.invalidate(n, None) is True
    assert 0 < mc.meta_info(n)["ttl"] <= 30
    assert mc.get_lease(prefix + "lease-none2", None, None)[0] == "recompute"
    text = mcpool.Client([server.addr])
    with pytest.raises(mcpool.ConfigurationError):
        text.get_lease(k)  # meta protocol only: the core's UNSUPPORTED


def test_lease_placeholder_is_a_miss_for_plain_reads(server, prefix):
    """A get_lease "recompute" leaves a placeholder item on the server: the plain reads take
    it for a miss (the core reads memcached's Z flag), not for a stored b''."""
    mc = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "placeholder"
    assert mc.get_lease(k, vivify_ttl=30) == ("recompute", None, None)
    assert mc.get(k, "DEFAULT") == "DEFAULT"
    assert mc.gets(k) == (None, None)
    assert mc.get_multi([k]) == {}
    assert k not in mc
    assert mc.add(k, "v") is False  # still an item to the server until the winner's set
    assert mc.set(k, "computed")
    assert mc.get(k) == "computed"
    e = prefix + "stored-empty"
    assert mc.set(e, b"")
    assert mc.get(e, "DEFAULT") == b"" and e in mc  # a value stored empty is a value


def test_lease_that_takes_a_stored_empty_values_token_keeps_the_value(server, prefix):
    """memcached flags an item whose token a get_lease with recache_below took as it flags a
    placeholder. An empty str (flags of its own) stays a value: the lease gets it as the
    stale value and the plain reads read it. Empty bytes (flags 0) answer exactly as a
    placeholder and are taken for one (the documented safe side, docs/protocols.md)."""
    mc = mcpool.Client([server.addr], protocol="meta")
    text = mcpool.Client([server.addr])
    k = prefix + "empty-str"
    assert mc.set(k, "", time=100)
    outcome, value, cas = mc.get_lease(k, 30, 200)  # expires within 200 s: recompute
    assert (outcome, value) == ("recompute", "") and cas
    assert mc.get(k, "DEFAULT") == "" and k in mc
    assert mc.gets(k)[0] == ""
    assert mc.get_multi([k]) == {k: ""}
    assert mc.meta_info(k)["size"] == 0
    assert mc.get_lease(k, 30, 200)[:2] == ("wait", "")
    b = prefix + "empty-bytes"
    assert mc.set(b, b"", time=100)
    assert mc.get_lease(b, 30, 200) == ("recompute", None, None)
    assert mc.get(b, "DEFAULT") == "DEFAULT" and mc.meta_info(b) is None
    assert text.get(b) == b""


# ----- issue 21 item 3: long_keys = "hash" (Dalli's truncated form) -----

def _dalli_truncated(key, namespaced):
    """Dalli's KeyManager#truncated_key, recomputed here: the key's first 249 - 37 (250 - 37
    with a namespace) characters, ':md5:', the hex MD5 of the whole (namespaced) key."""
    import hashlib
    digest = hashlib.md5(key.encode()).hexdigest()
    keep = (250 if namespaced else 249) - len(":md5:") - len(digest)
    return key[:keep] + ":md5:" + digest


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_item3_long_keys_hash_stores_a_400_byte_key_under_dallis_name(server, prefix, protocol):
    key = prefix + "k" * (400 - len(prefix))
    assert len(key) == 400
    c = mcpool.Client([server.addr], long_keys="hash", protocol=protocol)
    assert c.set(key, b"long value")
    assert c.get(key) == b"long value"
    assert server.raw_get(_dalli_truncated(key, False)) == (0, b"long value")
    # With a namespace (key_prefix "ns:" is Dalli's namespace "ns"): 250 bytes, the digest of
    # the namespaced key.
    ns = mcpool.Client([server.addr], long_keys="hash", key_prefix="ns:", protocol=protocol)
    assert ns.set(key, b"namespaced")
    assert ns.get(key) == b"namespaced"
    assert server.raw_get(_dalli_truncated("ns:" + key, True)) == (0, b"namespaced")
    # Refusal is the default.
    with pytest.raises(mcpool.ClientError):
        mcpool.Client([server.addr], protocol=protocol).set(key, b"v")


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_long_keys_hash_cuts_a_non_ascii_key_at_characters_as_dalli(server, prefix, protocol):
    key = prefix + "é" + "a" * 260
    dalli = _dalli_truncated(key, False)
    c = mcpool.Client([server.addr], long_keys="hash", protocol=protocol)
    assert len(dalli.encode()) == 250  # one 2-byte character among the 212 kept
    assert c.set(key, b"v")
    assert server.raw_get(dalli) == (0, b"v")
    with pytest.raises(mcpool.ClientError):
        c.set("日" + "c" * 300, b"v")  # Dalli's form: 251 bytes, memcached refuses it
    with pytest.raises(mcpool.ClientError):
        c.set("é" * 200, b"v")  # 200 characters: Dalli sends its 400 bytes whole


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_cas_zero_is_refused_on_every_protocol(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "cas0"
    assert c.set(k, "original")
    for key in (k, prefix + "cas0-missing"):
        with pytest.raises(mcpool.ClientError):
            c.cas(key, "overwritten", 0)
    assert c.get(k) == "original"
    assert c.get(prefix + "cas0-missing") is None


# ----- issue 21 item 6: item metadata, explicit CAS versions (meta protocol) -----

def test_item6_meta_info_and_set_with_version(server, prefix):
    c = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "info"
    assert c.set(k, b"twelve bytes", time=100)
    info = c.meta_info(k)
    assert info["hit_before"] is False and info["size"] == 12 and info["cas"] > 0
    assert 90 < info["ttl"] <= 100 and info["last_access"] >= 0
    assert c.get(k) == b"twelve bytes"
    assert c.meta_info(k)["hit_before"] is True
    assert c.set(prefix + "forever", b"v")
    assert c.meta_info(prefix + "forever")["ttl"] is None
    assert c.meta_info(prefix + "absent") is None
    # The installed memcached is older than 1.6.27: E is refused, naming its version.
    version = server.raw(b"version\r\n", until=b"\r\n").split()[1].decode()
    with pytest.raises(mcpool.ConfigurationError, match="1.6.27") as e:
        c.set_with_version(prefix + "e", b"v", 12345)
    assert version in str(e.value)
    assert c.get(prefix + "e") is None
    with pytest.raises(mcpool.ConfigurationError, match="meta"):
        mcpool.Client([server.addr]).meta_info(k)


# ----- issue 21 item 4: on_server_return by name -----

@pytest.mark.parametrize("policy", ["keep", "flush", "delete-written"])
def test_item4_on_server_return_is_accepted_by_name(server, prefix, policy):
    c = mcpool.Client([server.addr], failover="eject", on_server_return=policy,
                      written_while_away_max=100)
    assert c.set(prefix + "k", b"v") and c.get(prefix + "k") == b"v"
    assert "returns_flushed" in c.metrics()[server.addr]
    with pytest.raises(mcpool.ConfigurationError, match="on_server_return"):
        mcpool.Client([server.addr], on_server_return="flush-all")
