"""Operations the C ABI has that the Python Client lacked (tester-parity F11): gat, gats,
touch_multi, gets_multi, incr_or_init, decr_or_init. Each against a real memcached on every
protocol; expiries are checked by the server's own answer (meta_info's ttl on meta, a raw
`mg ... t` otherwise), never by sleeping."""
import pytest

import mcpool

PROTOCOLS = ["text", "meta", "binary"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gat_reads_and_sets_the_expiry(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "k"
    assert c.set(k, "value", 0)
    assert server.ttl(k) == -1
    assert c.gat(k, 1000) == "value"
    assert 990 <= server.ttl(k) <= 1000
    assert c.gat(k, time=0) == "value"  # 0: never expires
    assert server.ttl(k) == -1
    assert c.gat(prefix + "missing", 100) is None
    assert c.set(k, 42)
    assert c.gat(k, expire=500) == 42  # decoded as get decodes it


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gats_returns_the_cas_that_cas_accepts(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "k"
    assert c.set(k, b"one")
    value, cas = c.gats(k, 2000)
    assert value == b"one" and isinstance(cas, int) and cas > 0
    assert cas == c.gets(k)[1]
    assert 1990 <= server.ttl(k) <= 2000
    assert c.cas(k, b"two", cas)
    assert c.cas(k, b"three", cas) is False  # changed since
    assert c.gats(prefix + "missing", 10) == (None, None)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gat_refuses_a_bad_key_and_time_as_touch_does(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    with pytest.raises(mcpool.ClientError, match='gat "%sk": invalid ttl: 4294967296' % prefix):
        c.gat(prefix + "k", 2**32)
    with pytest.raises(mcpool.ClientError):
        c.gat("x" * 251, 10)
    with pytest.raises(mcpool.ClientTypeError):
        c.gats(prefix + "k", "10")
    with pytest.raises(TypeError):
        c.gat(prefix + "k")  # the time is required


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_touch_multi_answers_each_key(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set_multi({"a": 1, "b": 2}, key_prefix=prefix) == []
    r = c.touch_multi(["a", "b", "missing"], 1500, key_prefix=prefix)
    assert r == {"a": True, "b": True, "missing": False}
    for k in ("a", "b"):
        assert 1490 <= server.ttl(prefix + k) <= 1500
    assert server.ttl(prefix + "missing") is None
    assert c.touch_multi([prefix + "a", prefix.encode() + b"b"], time=0) == {
        prefix + "a": True, prefix.encode() + b"b": True}
    assert server.ttl(prefix + "a") == -1
    assert c.touch_multi([], 10) == {}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_touch_multi_raises_a_bad_keys_own_error(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    bad = "x" * 300
    with pytest.raises(mcpool.ClientError) as e:
        c.touch_multi([prefix + "ok", bad], 10)
    assert "300 bytes" in str(e.value)  # the message of the key that failed
    with pytest.raises(mcpool.ClientTypeError):
        c.touch_multi(prefix + "k", 10)  # a single key, not a list


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gets_multi_values_with_their_cas(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set(prefix + "a", "text")
    assert c.set(prefix + "b", 7)
    r = c.gets_multi(["a", "b", "missing"], key_prefix=prefix)
    assert set(r) == {"a", "b"}
    assert r["a"][0] == "text" and r["b"][0] == 7
    for k in ("a", "b"):
        assert r[k][1] == c.gets(prefix + k)[1] > 0
    assert c.cas(prefix + "a", "new", r["a"][1])
    assert c.cas(prefix + "b", 8, r["b"][1] + 1) is False
    assert c.gets_multi([prefix + "a"]) == {prefix + "a": ("new", c.gets(prefix + "a")[1])}
    assert c.gets_multi([]) == {}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gets_multi_of_many_keys_across_servers(servers, prefix, protocol):
    c = mcpool.Client([s.addr for s in servers], protocol=protocol)
    keys = ["k%d" % i for i in range(100)]  # more than the extension's stack arrays
    assert c.set_multi({k: k.upper() for k in keys}, key_prefix=prefix) == []
    r = c.gets_multi(keys, key_prefix=prefix)
    assert {k: v for k, (v, _) in r.items()} == {k: k.upper() for k in keys}
    assert all(cas > 0 for _, cas in r.values())
    assert len({servers_cas for _, servers_cas in r.values()}) >= 34  # per-item uniques


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gets_multi_raises_a_value_it_cannot_read(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol, value_format="python-memcached")
    server.raw_set(prefix + "p", 1, b"not a pickle")  # python-memcached's pickle flag
    with pytest.raises(mcpool.ServerError, match="pickle"):
        c.gets_multi([prefix + "p"])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_incr_or_init_creates_then_counts(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "n"
    assert c.incr_or_init(k, 5, 100) == 100  # created with the initial value
    assert c.incr_or_init(k, 5, 100) == 105
    assert c.incr_or_init(k) == 106  # delta 1
    assert c.get(k) == b"106"  # a counter: decimal text, flags 0 (as set_counter stores it)
    assert c.decr_or_init(k, delta=200, initial=7) == 0  # memcached stops at 0
    d = prefix + "d"
    assert c.decr_or_init(d, 2, initial=10, time=900) == 10
    assert 890 <= server.ttl(d) <= 900
    assert c.decr_or_init(d, 2, 10) == 8
    assert c.incr_or_init(prefix + "z") == 0  # initial 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_incr_or_init_refuses_what_incr_refuses(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    with pytest.raises(mcpool.ClientError, match="delta"):
        c.incr_or_init(prefix + "k", -1, 0)
    with pytest.raises(mcpool.ClientError, match="initial"):
        c.decr_or_init(prefix + "k", 1, -1)
    with pytest.raises(mcpool.ClientError, match="incr_or_init .*invalid ttl: 4294967296"):
        c.incr_or_init(prefix + "k", 1, 0, 2**32)
    assert c.get(prefix + "k") is None  # nothing was sent
    assert c.set(prefix + "s", "abc")
    with pytest.raises(mcpool.ClientError):
        c.incr_or_init(prefix + "s", 1, 0)  # not a number: the server's CLIENT_ERROR


def test_the_new_operations_reach_a_dead_server_as_errors(prefix):
    c = mcpool.Client(["127.0.0.1:1"], retry_timeout=0)
    for call in (lambda: c.gat(prefix + "k", 1), lambda: c.gats(prefix + "k", 1),
                 lambda: c.touch_multi([prefix + "k"], 1),
                 lambda: c.gets_multi([prefix + "k"]),
                 lambda: c.incr_or_init(prefix + "k", 1, 1),
                 lambda: c.decr_or_init(prefix + "k", 1, 1)):
        with pytest.raises(mcpool.ConnectionError) as e:
            call()
        assert prefix + "k" in str(e.value)


# ----- noop, delete/incr/decr with an explicit CAS version (tester-parity: every command) -----

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_noop_answers_per_server(servers, protocol):
    addrs = [s.addr for s in servers]
    c = mcpool.Client(addrs, protocol=protocol)
    assert c.noop() == {a: True for a in addrs}


def test_noop_names_a_server_that_is_down(server):
    down = _free_addr()
    c = mcpool.Client([server.addr, down], protocol="meta", min_idle=0)
    r = c.noop()
    assert r[server.addr] is True
    assert isinstance(r[down], mcpool.ConnectionError) and down in str(r[down])
    with pytest.raises(mcpool.ConnectionError):
        mcpool.Client([down], min_idle=0).noop()  # every server failed: raised


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_with_version_is_refused_by_this_memcached_and_changes_nothing(server, prefix, protocol):
    """The installed memcached is older than 1.6.27 (meta refuses E, naming its version);
    text and binary have no E at all."""
    c = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "n"
    assert c.set(k, b"5")
    for call in (lambda: c.delete_with_version(k, 5),
                 lambda: c.incr_with_version(k, 1, 5),
                 lambda: c.decr_with_version(k, 1, 5)):
        with pytest.raises(mcpool.ConfigurationError,
                           match="1.6.27" if protocol == "meta" else "meta"):
            call()
    assert c.get(k) == b"5"
    with pytest.raises(mcpool.ClientTypeError):
        c.delete_with_version(k, "5")
    with pytest.raises(mcpool.ClientError):
        c.incr_with_version(k, -1, 5)
    with pytest.raises(TypeError):
        c.incr_with_version(k, 1)  # the version is required


def _fake_meta_1_6_27():
    """A deliberately fake meta server reporting memcached 1.6.27: md/ma on a key holding
    "absent" answer NF, else HD and VA 1 with 7; the request's opaque is echoed."""
    import socket
    import threading
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(4)
    lst.settimeout(10)

    def serve():
        try:
            conn, _ = lst.accept()
        except OSError:
            return
        buf = b""
        with conn:
            conn.settimeout(10)
            for _ in range(100):  # bounded
                try:
                    data = conn.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    words = line.split()
                    opaque = b" ".join(w for w in words if w.startswith(b"O"))
                    absent = b"absent" in line
                    if words[:1] == [b"version"]:
                        reply = b"VERSION 1.6.27\r\n"
                    elif words[:1] == [b"md"]:
                        reply = (b"NF " if absent else b"HD ") + opaque + b"\r\n"
                    elif words[:1] == [b"ma"]:
                        reply = (b"NF " + opaque + b"\r\n" if absent
                                 else b"VA 1 " + opaque + b"\r\n7\r\n")
                    else:
                        reply = b"CLIENT_ERROR fake\r\n"
                    conn.sendall(reply)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return lst, t


def test_with_version_answers_from_a_server_that_takes_it():
    lst, t = _fake_meta_1_6_27()
    c = mcpool.Client(["127.0.0.1:%d" % lst.getsockname()[1]], protocol="meta", max_size=1)
    try:
        assert c.delete_with_version("k", 777) is True
        assert c.delete_with_version("absent", 777) is False
        assert c.incr_with_version("n", 1, 99) == 7
        assert c.decr_with_version("n", 1, 99) == 7
        assert c.incr_with_version("absent", 1, 99) is None
        assert c.decr_with_version("absent", 1, 99) is None
    finally:
        c.close()  # its connection closed: the fake's thread ends now, not at its 10 s wait
        lst.close()
        t.join(10)


def test_with_version_against_a_server_that_is_down():
    c = mcpool.Client([_free_addr()], protocol="meta", min_idle=0)
    with pytest.raises(mcpool.ConnectionError):
        c.delete_with_version("k", 5)
    with pytest.raises(mcpool.ConnectionError):
        c.incr_with_version("k", 1, 5)


def _free_addr():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "127.0.0.1:%d" % port
