"""Every method of mcpool.Client against a real memcached."""
import time

import pytest

import mcpool


def test_set_get_types(mc, prefix):
    cases = {"b": b"\x00\xffbinary", "s": "h\u00e9llo \u2603", "i": 42, "n": -7,
             "max": 2 ** 63 - 1, "min": -2 ** 63, "t": True, "f": False, "e": b"", "es": ""}
    for k, v in cases.items():
        assert mc.set(prefix + k, v) is True
    for k, v in cases.items():  # the same type back (bool is a kind of its own in mcpool)
        got = mc.get(prefix + k)
        assert type(got) is type(v) and got == v, k
    # an int beyond 64 bits is an int too (its digits under the int flags), exact
    for v in (2 ** 100, -(2 ** 100)):
        assert mc.set(prefix + "big", v)
        got = mc.get(prefix + "big")
        assert type(got) is int and got == v


def test_whalin_ints_are_whalins_long(server, prefix):
    """Under value_format="whalin" an int is written as Whalin's Long (MARKER_LONG 16384, 8
    bytes big-endian) whatever its size, which Whalin's Java client reads as a Long; an
    Integer, Short or Byte Whalin wrote reads as an int."""
    mc = mcpool.Client([server.addr], value_format="whalin")
    for v in (0, 7, -2, 2 ** 31, -2 ** 63):
        assert mc.set(prefix + "w", v)
        assert server.raw_get(prefix + "w") == (16384, v.to_bytes(8, "big", signed=True)), v
        assert mc.get(prefix + "w") == v
    for flags, body, v in ((4, b"\xff\xff\xff\xfe", -2), (256, b"\x00\x00\x01\x00", 256),
                           (1, b"\x03", 3)):
        server.raw_set(prefix + "j", flags, body)
        assert mc.get(prefix + "j") == v, flags
    server.raw_set(prefix + "j", 256, b"\x00\x01\x00\x00")  # no Short: beyond 16 bits
    with pytest.raises(mcpool.ServerError, match="16-bit"):
        mc.get(prefix + "j")


def test_get_default_and_miss(mc, prefix):
    assert mc.get(prefix + "missing") is None
    assert mc.get(prefix + "missing", 5) == 5
    assert mc.get(prefix + "missing", default="d") == "d"


def test_bytes_keys(mc, prefix):
    assert mc.set((prefix + "bk").encode(), b"v")
    assert mc.get(prefix + "bk") == b"v"
    assert mc.get((prefix + "bk").encode()) == b"v"


def test_keywords(mc, prefix):
    assert mc.set(key=prefix + "k", value=b"1", time=100)
    assert mc.set(prefix + "k", val=b"2", expire=100)
    assert mc.set(prefix + "k", b"3", 0, 0)
    assert mc.set(prefix + "k", b"4", noreply=False)
    assert mc.get(key=prefix + "k") == b"4"
    with pytest.raises(TypeError):
        mc.set(prefix + "k", b"x", time=1, expire=2)
    with pytest.raises(TypeError):
        mc.set(prefix + "k", b"x", bogus=1)
    with pytest.raises(TypeError):
        mc.set(prefix + "k")


def test_expiry(mc, prefix):
    assert mc.set(prefix + "x", b"v", time=1)
    assert mc.get(prefix + "x") == b"v"
    deadline = time.monotonic() + 4
    while mc.get(prefix + "x") is not None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert mc.get(prefix + "x") is None


def test_add_replace(mc, prefix):
    assert mc.add(prefix + "a", "one") is True
    assert mc.add(prefix + "a", "two") is False
    assert mc.get(prefix + "a") == "one"
    assert mc.replace(prefix + "a", "three") is True
    assert mc.get(prefix + "a") == "three"
    assert mc.replace(prefix + "nope", "x") is False
    assert mc.get(prefix + "nope") is None


def test_append_prepend(mc, prefix):
    assert mc.append(prefix + "m", b"x") is False
    assert mc.prepend(prefix + "m", b"x") is False
    mc.set(prefix + "m", "mid")
    assert mc.append(prefix + "m", "-end") is True
    assert mc.prepend(prefix + "m", b"start-") is True
    assert mc.get(prefix + "m") == "start-mid-end"


def test_gets_cas(mc, prefix):
    assert mc.gets(prefix + "c") == (None, None)
    mc.set(prefix + "c", 1)
    v, cas = mc.gets(prefix + "c")
    assert v == 1 and isinstance(cas, int) and cas > 0
    assert mc.cas(prefix + "c", 2, cas) is True
    assert mc.cas(prefix + "c", 3, cas) is False  # changed since gets
    assert mc.get(prefix + "c") == 2
    mc.delete(prefix + "c")
    assert mc.cas(prefix + "c", 4, cas) is None  # gone


def test_delete(mc, prefix):
    mc.set(prefix + "d", b"v")
    assert mc.delete(prefix + "d") is True
    assert mc.delete(prefix + "d") is False
    assert mc.get(prefix + "d") is None


def test_incr_decr(mc, prefix):
    assert mc.incr(prefix + "n") is None
    assert mc.decr(prefix + "n") is None
    mc.set(prefix + "n", 10)
    assert mc.incr(prefix + "n") == 11
    assert mc.incr(prefix + "n", 5) == 16
    assert mc.decr(prefix + "n", delta=6) == 10
    assert mc.decr(prefix + "n", 100) == 0  # memcached stops at 0
    assert mc.get(prefix + "n") == 0
    mc.set(prefix + "w", b"18446744073709551615")  # 2**64-1: beyond an int kind, as bytes
    assert mc.incr(prefix + "w") == 0  # wraps as memcached does


def test_touch(mc, prefix):
    assert mc.touch(prefix + "t", 10) is False
    mc.set(prefix + "t", b"v", time=1)
    assert mc.touch(prefix + "t", time=100) is True
    time.sleep(1.5)
    assert mc.get(prefix + "t") == b"v"


def test_get_multi(mc, prefix):
    keys = [prefix + str(i) for i in range(600)]
    for i, k in enumerate(keys[:500]):
        mc.set(k, i)
    got = mc.get_multi(keys)
    assert got == {k: i for i, k in enumerate(keys[:500])}
    assert mc.get_multi([]) == {}
    assert mc.get_multi(iter(keys[:3])) == {keys[0]: 0, keys[1]: 1, keys[2]: 2}
    # key_prefix is on the wire only (as pylibmc, python-memcached)
    assert mc.get_multi(["0", "1", "nope"], key_prefix=prefix) == {"0": 0, "1": 1}
    # bytes keys come back as the caller's own objects
    assert mc.get_multi([keys[0].encode()]) == {keys[0].encode(): 0}


def test_set_multi_delete_multi(mc, prefix):
    data = {prefix + "a": b"1", prefix + "b": "2", prefix + "c": 3}
    assert mc.set_multi(data, time=100) == []
    assert mc.get_multi(list(data)) == data
    assert mc.set_multi({"x": b"y"}, key_prefix=prefix) == []
    assert mc.get(prefix + "x") == b"y"
    assert mc.delete_multi(list(data)) is True
    assert mc.get_multi(list(data)) == {}
    assert mc.delete_multi([prefix + "x", prefix + "gone"]) is False
    assert mc.delete_multi(["x"], key_prefix=prefix) is False


def test_mapping_protocol(mc, prefix):
    mc[prefix + "k"] = "v"
    assert mc[prefix + "k"] == "v"
    assert (prefix + "k") in mc
    assert (prefix + "nope") not in mc
    del mc[prefix + "k"]
    assert (prefix + "k") not in mc
    with pytest.raises(KeyError):
        mc[prefix + "k"]
    with pytest.raises(KeyError):
        del mc[prefix + "k"]


def test_stats_version(mc, server):
    v = mc.version()
    assert list(v) == [server.addr]
    assert v[server.addr].count(".") >= 2
    st = mc.stats()
    assert int(st[server.addr]["pid"]) == server.proc.pid
    assert "curr_items" in st[server.addr]
    assert "item_size_max" in mc.stats("settings")[server.addr]
    gs = mc.get_stats()
    assert gs[0][0] == server.addr and "pid" in gs[0][1]
    assert mc.servers == [server.addr]
    assert mc.server_for("anything") == server.addr


def test_key_prefix_option(server, prefix):
    c = mcpool.Client([server.addr], key_prefix=prefix + "ns:")
    plain = mcpool.Client([server.addr])
    assert c.set("k", b"v")
    assert plain.get(prefix + "ns:k") == b"v"
    assert c.get_multi(["k"]) == {"k": b"v"}


def test_protocols(server, prefix):
    for proto in ("text", "meta", "binary"):
        c = mcpool.Client([server.addr], protocol=proto)
        k = prefix + proto
        assert c.set(k, {"text": "t", "meta": 1, "binary": b"b"}[proto])
        assert c.get(k) == {"text": "t", "meta": 1, "binary": b"b"}[proto]
        assert c.get_multi([k, k + "x"]) == {k: c.get(k)}
    assert mcpool.Client([server.addr], binary=True).get(prefix + "text") == "t"


def test_server_forms(server):
    host, port = server.addr.split(":")
    for spec in ([server.addr], server.addr, [(host, int(port))], [(server.addr, 2)]):
        c = mcpool.Client(spec)
        assert c.servers == [server.addr]
        assert c.version()[server.addr]


def test_options_accepted(server, prefix):
    c = mcpool.Client([server.addr], distribution="pylibmc:ketama=1", failover="rehash",
                      pool_size=4, min_idle=0, connect_timeout=0.5, timeout=0.5,
                      pool_timeout=1, idle_timeout=30, max_lifetime=600, retry_timeout=1,
                      retry_timeout_max=5, failure_limit=3, nodelay=True,
                      test_on_check_out=True, sanitize_keys=False, max_value_size=2 << 20,
                      max_decompressed_size=8 << 20, compression_ratio=0.9,
                      min_compress_len=100, weights=[3])
    assert c.set(prefix + "o", "x" * 1000) and c.get(prefix + "o") == "x" * 1000


def test_flush_all(server):
    c = mcpool.Client([server.addr])
    c.set("flush_me", b"v")
    assert c.flush_all() is True
    assert c.get("flush_me") is None


def test_docstrings_and_stubs():
    import os
    assert mcpool.Client.__doc__ and mcpool.Client.get.__doc__
    d = os.path.dirname(mcpool.__file__)
    assert os.path.exists(os.path.join(d, "py.typed"))
    assert os.path.exists(os.path.join(d, "__init__.pyi"))


def test_delete_multi_with_a_key_listed_twice(mc, prefix):
    """Each occurrence is sent in order: the first deletes the key, the second finds nothing,
    and the key was deleted: True (it was False, the second occurrence's miss counted)."""
    mc.set(prefix + "d1", b"v")
    assert mc.delete_multi([prefix + "d1", prefix + "d1"]) is True
    assert mc.get(prefix + "d1") is None
    assert mc.delete_multi([prefix + "d1", prefix + "d1"]) is False
    # a str key and its bytes are one key, and key_prefix applies before comparing
    mc.set(prefix + "d2", b"v")
    assert mc.delete_multi([prefix + "d2", (prefix + "d2").encode()]) is True
    mc.set(prefix + "d3", b"v")
    assert mc.delete_multi(["d3", "d3"], key_prefix=prefix) is True
    # a key that no occurrence deleted is still a miss
    mc.set(prefix + "d4", b"v")
    assert mc.delete_multi([prefix + "d4", prefix + "gone", prefix + "d4", prefix + "gone"]) is False
    assert mc.get(prefix + "d4") is None


def _raw_get(server, key):
    """(flags, body) of key as memcached holds it, read over a plain socket."""
    import socket as socketmod
    with socketmod.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        s.sendall(b"get " + key.encode() + b"\r\n")
        data = b""
        for _ in range(100):  # bounded: a short reply arrives in a few reads
            if data.endswith(b"END\r\n"):
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    header, _, rest = data.partition(b"\r\n")
    parts = header.split()
    return int(parts[2]), rest[: int(parts[3])]


@pytest.mark.parametrize("fmt", ["mcpool", "pylibmc", "python-memcached", "whalin", "spymemcached"])
def test_set_counter_stores_memcached_counter_in_every_format(server, prefix, fmt):
    import mcpool
    mc = mcpool.Client([server.addr], value_format=fmt)
    key = prefix + "c"
    assert mc.set_counter(key, 41) is True
    assert _raw_get(server, key) == (0, b"41")  # decimal text, raw flags 0, whatever the format
    assert mc.incr(key) == 42
    # unsigned 64-bit, as memcached's counters: 2**64-1 is stored (it was refused as above
    # 2**63-1) and incr wraps to 0 as memcached does
    assert mc.set_counter(key, 2**64 - 1, time=100) is True
    assert _raw_get(server, key) == (0, b"18446744073709551615")
    assert mc.incr(key) == 0


def test_set_counter_refuses_what_is_not_an_unsigned_64_bit_int(mc, prefix):
    import mcpool
    for bad in ["1", 1.0, True, None, b"1"]:
        with pytest.raises(TypeError):
            mc.set_counter(prefix + "c", bad)
    # a negative one (a counter no incr takes: it was stored) or one beyond 2**64-1
    for bad in [-1, -2**63, -2**64, 2**64, 2**100]:
        with pytest.raises(mcpool.ClientError, match="between 0 and 2\\*\\*64-1"):
            mc.set_counter(prefix + "c", bad)
    with pytest.raises(mcpool.ClientError):
        mc.set_counter(prefix + "c", 1, time=2**40)
    assert mc.get(prefix + "c") is None  # nothing was stored


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_incr_multi_reports_every_key_after_a_non_numeric_one(server, prefix, protocol):
    """A non-numeric value raises ClientError for its key; the exception's `results` holds
    every key's answer, the keys after it included (memcached applied them; text and meta
    used to fail them all)."""
    mc = mcpool.Client([server.addr], protocol=protocol)
    mc.set(prefix + "txt", "abc")
    mc.set(prefix + "num", "10")
    with pytest.raises(mcpool.ClientError) as e:
        mc.incr_multi(["txt", "num", "gone", "num"], delta=2, key_prefix=prefix)
    r = e.value.results
    # its own message, from the core: the operation, the key as sent, the server's answer
    assert isinstance(r[0], mcpool.ClientError) and '"%stxt"' % prefix in str(r[0]), r
    assert server.addr in str(r[0]), r
    assert r[1:] == [12, None, 14]
    assert e.value.status_name == "MCPOOL_CLIENT_ERROR"
    assert e.value.key == "txt"  # the failed key, as the other batches' (batches2 1)
    assert mc.get(prefix + "num") == "14"
    assert mc.decr_multi(["num", "gone"], key_prefix=prefix) == [13, None]


def test_a_refused_delta_names_the_call_and_the_key(mc, prefix):
    """Tester finding batches2 2: 'delta must be between 0 and 2**64-1' named neither."""
    for call, match in [(lambda: mc.incr(prefix + "n", -1), "incr '%sn': delta" % prefix),
                        (lambda: mc.decr(prefix + "n", 2**64), "decr '%sn': delta" % prefix),
                        (lambda: mc.incr_multi([prefix + "n"], -1), "incr_multi: delta"),
                        (lambda: mc.decr_multi([prefix + "n"], 2**64), "decr_multi: delta"),
                        (lambda: mc.incr_or_init(prefix + "n", -1), "incr_or_init '%sn'" % prefix)]:
        with pytest.raises(mcpool.ClientError, match=match):
            call()


def _server_ttl(server, key):
    """The seconds memcached holds key for (mg's t flag): None when it never expires,
    "miss" when the key is not there."""
    info = mcpool.Client([server.addr], protocol="meta").meta_info(key)
    return "miss" if info is None else info["ttl"]


def test_a_fractional_time_rounds_up_never_to_never_expires(server, prefix):
    """A float time goes through the core's rule for fractions (mcpool_whole_seconds): a
    positive fraction rounds up to whole seconds, so time=0.4 lives 1 s, not 0, memcached's
    "never expires" (before, the item lived until evicted while -0.3 expired at once), and
    1.7 lives 2 s; memcached's own TTL (mg's t flag) says so, for every call that takes a
    time. 0.0 is 0 (never expires), as the int 0."""
    mc = mcpool.Client([server.addr])
    calls = {
        "set": lambda k, t: mc.set(k, b"v", t),
        "add": lambda k, t: mc.add(k, b"v", time=t),
        "replace": lambda k, t: mc.set(k, b"o") and mc.replace(k, b"v", t),
        "cas": lambda k, t: mc.set(k, b"o") and mc.cas(k, b"v", mc.gets(k)[1], t),
        "set_multi": lambda k, t: mc.set_multi({k: b"v"}, time=t) == [],
        "add_multi": lambda k, t: mc.add_multi({k: b"v"}, t) == [],
        "touch": lambda k, t: mc.set(k, b"v") and mc.touch(k, t),
    }
    # never rounded up across the 30-day line: 2592000.5 is 30 days, not 2592001, a unix
    # time in 1970 (tester finding arith 1: stored, answered True, and gone at once)
    for t, most in ((0.4, 1), (1e-9, 1), (0.999, 1), (1.7, 2), (5.0, 5),
                    (2592000.2, 2592000), (2592000.999, 2592000)):
        for name, call in calls.items():
            k = "%s%s-%r" % (prefix, name, t)
            assert call(k, t) is True, (name, t)
            left = _server_ttl(server, k)
            assert left not in (None, "miss") and most - 1 <= left <= most, (name, t, left)
    assert mc.set(prefix + "zero", b"v", 0.0) is True
    assert _server_ttl(server, prefix + "zero") is None


def test_get_multi_answers_a_key_sent_twice_once(mc, prefix):
    """get_multi has one entry per key sent (the bytes sent compared): "k" and b"k" are one
    key, answered under its first spelling (before: both, the same server key twice)."""
    k, e = prefix + "sb", prefix + "\u00e9"
    mc.set(k, b"v")
    mc.set(e, b"x")
    assert mc.get_multi([k, k.encode()]) == {k: b"v"}
    got = mc.get_multi([k.encode(), k])
    assert got == {k.encode(): b"v"} and type(next(iter(got))) is bytes
    assert mc.get_multi([e, e.encode(), prefix + "miss", (prefix + "miss").encode()]) == {e: b"x"}
    assert mc.get_multi(["sb", b"sb", "sb"], key_prefix=prefix) == {"sb": b"v"}
    assert mc.get_multi([k, k]) == {k: b"v"}
