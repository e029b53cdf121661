"""The batch calls Perl and Java had that the Python Client lacked: replace_multi,
append_multi, prepend_multi, cas_multi, gat_multi, gats_multi. Each against a real memcached
on every protocol, on one server and on two (one pipelined round trip per server, counted by
the core's `operations` metric); expiries are checked by the server's own answer (a raw
`mg KEY t`), never by sleeping."""
import pytest

import mcpool

PROTOCOLS = ["text", "meta", "binary"]


def _ops(c):
    return {a: m["operations"] for a, m in c.metrics().items()}


def _two(servers, prefix, protocol, n=20):
    """A client of two servers and n keys spread over both (each server holds some)."""
    addrs = [s.addr for s in servers[:2]]
    c = mcpool.Client(addrs, protocol=protocol)
    keys = [prefix + "k%d" % i for i in range(n)]
    assert {c.server_for(k) for k in keys} == set(addrs)
    return c, keys


def _one_round_trip_each(c, before):
    after = _ops(c)
    assert {a: after[a] - before[a] for a in after} == {a: 1 for a in after}


# ----- replace_multi ------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_replace_multi_replaces_existing_keys_and_lists_the_missing(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set_multi({prefix + "a": "old", prefix + "b": 1}) == []
    assert c.replace_multi({prefix + "a": "new", prefix + "b": 2,
                            prefix + "missing": "x"}) == [prefix + "missing"]
    assert c.get_multi([prefix + "a", prefix + "b", prefix + "missing"]) == {
        prefix + "a": "new", prefix + "b": 2}
    assert c.replace_multi({prefix + "a": b"ttl"}, 900) == []
    assert 890 <= server.ttl(prefix + "a") <= 900
    assert c.replace_multi({prefix + "b": 3}, expire=800) == []
    assert 790 <= server.ttl(prefix + "b") <= 800
    assert c.replace_multi({}) == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_replace_multi_with_a_key_prefix(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set(prefix + "a", "old")
    assert c.replace_multi({"a": "new", "gone": "x"}, key_prefix=prefix) == ["gone"]
    assert c.get(prefix + "a") == "new"
    assert c.get(prefix + "gone") is None and c.get("gone") is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_replace_multi_on_two_servers_is_one_round_trip_each(servers, prefix, protocol):
    c, keys = _two(servers, prefix, protocol)
    assert c.set_multi({k: "old" for k in keys[:10]}) == []
    before = _ops(c)
    assert sorted(c.replace_multi({k: "new" for k in keys})) == sorted(keys[10:])
    _one_round_trip_each(c, before)
    assert c.get_multi(keys) == {k: "new" for k in keys[:10]}


def test_replace_multi_compresses_by_a_per_call_threshold(server, prefix):
    c = mcpool.Client([server.addr], value_format="pylibmc")
    big = b"x" * 5000
    assert c.set(prefix + "a", b"old")
    assert c.replace_multi({prefix + "a": big}, min_compress_len=100) == []
    flags, stored = server.raw_get(prefix + "a")
    assert flags & 8 and len(stored) < 1000  # pylibmc's zlib flag: compressed on the wire
    assert c.get(prefix + "a") == big


def test_replace_multi_raises_a_refused_key_after_storing_the_others(server, prefix):
    c = mcpool.Client([server.addr])
    assert c.set(prefix + "a", "old")
    with pytest.raises(mcpool.ClientError) as e:
        c.replace_multi({prefix + "a": "new", "x" * 300: "v", prefix + "gone": "v"})
    assert e.value.status_name == "MCPOOL_INVALID_KEY" and e.value.key == "x" * 300
    assert e.value.results[prefix + "a"] is True and e.value.results[prefix + "gone"] is False
    assert c.get(prefix + "a") == "new"


# ----- append_multi, prepend_multi ----------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_append_and_prepend_multi_add_bytes_and_list_the_missing(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set_multi({prefix + "a": b"mid", prefix + "t": "txt"}) == []
    assert c.append_multi({prefix + "a": b">>", prefix + "t": "\u00e9",
                           prefix + "missing": b"x"}) == [prefix + "missing"]
    assert c.prepend_multi({prefix + "a": "<<", prefix + "missing": "x"}) == [prefix + "missing"]
    assert c.get(prefix + "a") == b"<<mid>>"
    assert c.get(prefix + "t") == "txt\u00e9"  # the item keeps its flags: still text
    assert c.get(prefix + "missing") is None
    assert c.append_multi({}) == [] and c.prepend_multi({}) == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_append_and_prepend_multi_with_a_key_prefix(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set(prefix + "a", b"1")
    assert c.append_multi({"a": b"2", "gone": b"x"}, key_prefix=prefix) == ["gone"]
    assert c.prepend_multi({"a": b"0"}, prefix) == []  # key_prefix is the second positional
    assert c.get(prefix + "a") == b"012"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_append_multi_refuses_a_value_that_is_not_bytes_and_sends_nothing(server, prefix,
                                                                          protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set_multi({prefix + "a": b"v", prefix + "b": b"v"}) == []
    for call in (c.append_multi, c.prepend_multi):
        for bad in (5, 1.5, None, ["x"], True):
            before = _ops(c)
            with pytest.raises(mcpool.ClientTypeError, match="takes str or bytes") as e:
                call({prefix + "a": b"ok", prefix + "b": bad})
            assert repr(prefix + "b") in str(e.value)  # names the key
            assert _ops(c) == before  # nothing sent, the good item neither
    assert c.get_multi([prefix + "a", prefix + "b"]) == {prefix + "a": b"v", prefix + "b": b"v"}
    # as single append refuses it
    with pytest.raises(mcpool.ClientTypeError, match="takes str or bytes"):
        c.append(prefix + "a", 5)


def test_append_multi_sends_a_str_subclass_as_its_bytes_as_append_does(server, prefix):
    class S(str):
        pass
    c = mcpool.Client([server.addr], pickle=True, value_format="python-memcached")
    assert c.set(prefix + "a", "x") and c.set(prefix + "b", "x")
    assert c.append(prefix + "a", S("y"))
    assert c.append_multi({prefix + "b": S("y")}) == []
    assert server.raw_get(prefix + "a") == server.raw_get(prefix + "b")
    assert c.get(prefix + "b") == "xy"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_append_and_prepend_multi_on_two_servers_are_one_round_trip_each(servers, prefix,
                                                                         protocol):
    c, keys = _two(servers, prefix, protocol)
    assert c.set_multi({k: b"|" for k in keys[:10]}) == []
    before = _ops(c)
    assert sorted(c.append_multi({k: b">" for k in keys})) == sorted(keys[10:])
    _one_round_trip_each(c, before)
    before = _ops(c)
    assert sorted(c.prepend_multi({k: "<" for k in keys})) == sorted(keys[10:])
    _one_round_trip_each(c, before)
    assert c.get_multi(keys) == {k: b"<|>" for k in keys[:10]}


# ----- cas_multi ----------------------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cas_multi_answers_stored_changed_and_gone_in_one_call(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    ok, changed, gone = prefix + "ok", prefix + "changed", prefix + "gone"
    assert c.set_multi({ok: "a", changed: "b", gone: "c"}) == []
    read = c.gets_multi([ok, changed, gone])
    assert c.set(changed, "someone else's")
    assert c.delete(gone)
    r = c.cas_multi({ok: ("A", read[ok][1]), changed: ("B", read[changed][1]),
                     gone: ("C", read[gone][1])})
    assert r == {ok: True, changed: False, gone: None}  # as cas answers each
    assert c.get_multi([ok, changed, gone]) == {ok: "A", changed: "someone else's"}
    # the same three answers as single cas
    value, cas = c.gets(ok)
    assert c.cas(ok, "x", cas + 1000) is False
    assert c.cas(gone, "x", cas) is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cas_multi_takes_what_gets_returns_an_expiry_and_a_key_prefix(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set_multi({"a": 1, "b": b"2"}, key_prefix=prefix) == []
    read = c.gets_multi(["a", "b"], key_prefix=prefix)
    r = c.cas_multi({"a": (10, read["a"][1]), "b": [b"20", read["b"][1]]}, 700, prefix)
    assert r == {"a": True, "b": True}
    assert c.get_multi(["a", "b"], key_prefix=prefix) == {"a": 10, "b": b"20"}
    assert 690 <= server.ttl(prefix + "a") <= 700
    cas = c.gets(prefix + "a")[1]
    assert c.cas_multi({prefix + "a": (11, cas)}, expire=600) == {prefix + "a": True}
    assert 590 <= server.ttl(prefix + "a") <= 600
    # a gets() pair as it comes back, new value and all
    v, cas = c.gets(prefix + "b")
    assert c.cas_multi({prefix + "b": (v + b"!", cas)}) == {prefix + "b": True}
    assert c.get(prefix + "b") == b"20!"
    assert c.cas_multi({}) == {}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("bad, error, match", [
    (None, mcpool.ClientTypeError, "no CAS unique"),
    ("12", mcpool.ClientTypeError, "must be an int"),
    (-1, mcpool.ClientError, "between 1 and 2\\*\\*64-1"),
    (2**64, mcpool.ClientError, "between 1 and 2\\*\\*64-1"),
])
def test_cas_multi_refuses_a_bad_cas_before_anything_is_sent(server, prefix, protocol, bad,
                                                             error, match):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set_multi({prefix + "a": "a", prefix + "b": "b"}) == []
    good = c.gets(prefix + "a")[1]
    before = _ops(c)
    with pytest.raises(error, match=match) as e:
        c.cas_multi({prefix + "a": ("new", good), prefix + "b": ("new", bad)})
    assert e.value.status_name == "MCPOOL_INVALID_ARGUMENT"
    assert repr(prefix + "b") in str(e.value)
    assert _ops(c) == before
    assert c.get_multi([prefix + "a", prefix + "b"]) == {prefix + "a": "a", prefix + "b": "b"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cas_multi_refuses_a_cas_of_0_for_that_item_alone(server, prefix, protocol):
    """The core's rule, item by item as for an invalid key, and as Perl's cas_multi and the
    C ABI's batch apply it (tester finding retest13 6: Python refused the whole call)."""
    records = []
    c = mcpool.Client([server.addr], protocol=protocol, on_operation=records.append)
    assert c.set_multi({prefix + "a": "a", prefix + "b": "b"}) == []
    good = c.gets(prefix + "a")[1]
    del records[:]
    with pytest.raises(mcpool.ClientError, match="0 is no CAS unique") as e:
        c.cas_multi({prefix + "a": ("new", good), prefix + "b": ("new", 0)})
    assert e.value.status_name == "MCPOOL_INVALID_ARGUMENT" and e.value.key == prefix + "b"
    assert e.value.results[prefix + "a"] is True
    assert isinstance(e.value.results[prefix + "b"], mcpool.ClientError)
    assert {r.op for r in records} == {"cas_multi"}  # each item tried, the 0 named
    assert [r.outcome for r in records if r.error and "0 is no CAS unique" in r.error] == ["error"]
    assert c.get_multi([prefix + "a", prefix + "b"]) == {prefix + "a": "new", prefix + "b": "b"}


@pytest.mark.parametrize("bad", ["value", 5, ("v",), ("v", 1, 2), [], {"v": 1}, b"ab"])
def test_cas_multi_refuses_a_value_that_is_no_pair_before_anything_is_sent(server, prefix, bad):
    c = mcpool.Client([server.addr])
    assert c.set(prefix + "a", "a")
    good = c.gets(prefix + "a")[1]
    before = _ops(c)
    with pytest.raises(mcpool.ClientTypeError, match=r"\(value, cas_unique\)"):
        c.cas_multi({prefix + "a": ("new", good), prefix + "b": bad})
    assert _ops(c) == before
    assert c.get(prefix + "a") == "a"
    with pytest.raises(mcpool.ClientTypeError, match="mapping"):
        c.cas_multi([(prefix + "a", ("new", good))])  # no items()


def test_cas_multi_of_a_kind_stored_alone_keeps_its_cas(server, prefix):
    """A bool under python-memcached's format is pickled by the binding, stored on its own
    (not in the batch): with the item's CAS all the same."""
    c = mcpool.Client([server.addr], pickle=True, value_format="python-memcached")
    assert c.set_multi({prefix + "a": 1, prefix + "b": 2}) == []
    read = c.gets_multi([prefix + "a", prefix + "b"])
    r = c.cas_multi({prefix + "a": (True, read[prefix + "a"][1]),
                     prefix + "b": (False, read[prefix + "b"][1] + 1000)})
    assert r == {prefix + "a": True, prefix + "b": False}
    assert c.get(prefix + "a") is True and c.get(prefix + "b") == 2


def test_cas_multi_raises_a_keys_error_after_trying_every_item(server, prefix):
    c = mcpool.Client([server.addr])
    assert c.set_multi({prefix + "a": "a", prefix + "g": "g"}) == []
    read = c.gets_multi([prefix + "a", prefix + "g"])
    assert c.delete(prefix + "g")
    with pytest.raises(mcpool.ClientError) as e:
        c.cas_multi({prefix + "a": ("new", read[prefix + "a"][1]), "x" * 300: ("v", 5),
                     prefix + "g": ("v", read[prefix + "g"][1])})
    assert e.value.status_name == "MCPOOL_INVALID_KEY" and e.value.key == "x" * 300
    res = e.value.results
    assert res[prefix + "a"] is True and res[prefix + "g"] is None  # cas's answers
    assert isinstance(res["x" * 300], mcpool.ClientError)
    assert c.get(prefix + "a") == "new"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_cas_multi_on_two_servers_is_one_round_trip_each(servers, prefix, protocol):
    c, keys = _two(servers, prefix, protocol)
    assert c.set_multi({k: "v" for k in keys}) == []
    read = c.gets_multi(keys)
    stale = set(keys[::3])
    before = _ops(c)
    r = c.cas_multi({k: ("new", read[k][1] + (1000 if k in stale else 0)) for k in keys})
    _one_round_trip_each(c, before)
    assert r == {k: k not in stale for k in keys}
    assert c.get_multi(keys) == {k: ("v" if k in stale else "new") for k in keys}


# ----- gat_multi, gats_multi ----------------------------------------------------------------

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gat_multi_reads_and_sets_every_found_keys_expiry(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    a, b, missing = prefix + "a", prefix + "b", prefix + "missing"
    assert c.set_multi({a: "text", b: 7}) == []
    assert server.ttl(a) == -1 and server.ttl(b) == -1
    assert c.gat_multi([a, b, missing], 1000) == {a: "text", b: 7}  # decoded as get_multi
    for k in (a, b):
        assert 990 <= server.ttl(k) <= 1000
    assert server.ttl(missing) is None  # a miss is not created
    assert c.gat_multi([a], time=0) == {a: "text"}  # 0: never expires, as gat
    assert server.ttl(a) == -1 and 990 <= server.ttl(b) <= 1000
    assert c.gat_multi([b], expire=500) == {b: 7}
    assert 490 <= server.ttl(b) <= 500
    assert c.gat_multi([], 10) == {}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gat_multi_expiry_takes_effect(server, prefix, protocol):
    """A short expiry really ends the item: the server's clock is waited for by a bounded
    loop on its own answer, never a bare sleep."""
    import time
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set(prefix + "a", "v")
    assert c.gat_multi([prefix + "a"], 1) == {prefix + "a": "v"}
    assert 0 <= server.ttl(prefix + "a") <= 1
    deadline = time.monotonic() + 5
    while c.get(prefix + "a") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert c.get(prefix + "a") is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gats_multi_returns_the_cas_that_cas_multi_accepts(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set_multi({"a": b"one", "b": "two"}, key_prefix=prefix) == []
    r = c.gats_multi(["a", "b", "missing"], 2000, key_prefix=prefix)
    assert set(r) == {"a", "b"}
    assert r["a"][0] == b"one" and r["b"][0] == "two"
    assert r == c.gets_multi(["a", "b"], key_prefix=prefix)  # the CAS is the item's
    for k in ("a", "b"):
        assert 1990 <= server.ttl(prefix + k) <= 2000
    assert c.cas_multi(r, key_prefix=prefix) == {"a": True, "b": True}
    assert c.gats_multi([prefix + "missing"], 10) == {}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gat_multi_with_a_key_prefix(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    assert c.set(prefix + "a", "v")
    assert c.gat_multi(["a", "missing"], 300, key_prefix=prefix) == {"a": "v"}
    assert c.gat_multi(["a"], 300, prefix) == {"a": "v"}  # the third positional, as get_multi's second
    assert 290 <= server.ttl(prefix + "a") <= 300


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gat_and_gats_multi_on_two_servers_are_one_round_trip_each(servers, prefix, protocol):
    c, keys = _two(servers, prefix, protocol)
    assert c.set_multi({k: k for k in keys[:10]}) == []
    before = _ops(c)
    assert c.gat_multi(keys, 1200) == {k: k for k in keys[:10]}
    _one_round_trip_each(c, before)
    by_addr = {s.addr: s for s in servers[:2]}
    for k in keys[:10]:
        assert 1190 <= by_addr[c.server_for(k)].ttl(k) <= 1200
    before = _ops(c)
    r = c.gats_multi(keys, 1100)
    _one_round_trip_each(c, before)
    assert {k: v for k, (v, _) in r.items()} == {k: k for k in keys[:10]}
    assert all(cas > 0 for _, cas in r.values())
    for k in keys[:10]:
        assert 1090 <= by_addr[c.server_for(k)].ttl(k) <= 1100


def test_gat_multi_takes_its_arguments_as_gat(server, prefix):
    c = mcpool.Client([server.addr])
    with pytest.raises(TypeError, match="time"):
        c.gat_multi([prefix + "a"])  # the time is required, as gat's
    with pytest.raises(mcpool.ClientError, match="^gat_multi: invalid ttl: 4294967296"):
        c.gat_multi([prefix + "a"], 2**32)
    with pytest.raises(mcpool.ClientTypeError):
        c.gats_multi([prefix + "a"], "10")
    with pytest.raises(mcpool.ClientTypeError):
        c.gat_multi(prefix + "a", 10)  # a single key, not a list
    with pytest.raises(mcpool.ClientError):
        c.gats_multi(["x" * 251], 10)


def test_gat_multi_keeps_the_other_servers_hits_as_get_multi(server, prefix):
    down = "127.0.0.1:1"
    c = mcpool.Client([server.addr, down], retry_timeout=0)  # fail-fast: no rehash
    keys = [prefix + "k%d" % i for i in range(20)]
    live = [k for k in keys if c.server_for(k) == server.addr]
    assert live and len(live) < len(keys)
    assert mcpool.Client([server.addr]).set_multi({k: "v" for k in live}) == []
    with pytest.raises(mcpool.ConnectionError) as e:
        c.gat_multi(keys, 100)
    assert e.value.hits == {k: "v" for k in live}
    assert set(e.value.errors) == set(keys) - set(live)


# ----- every new call against a server that is down -----------------------------------------

def test_the_new_batch_calls_reach_a_dead_server_as_the_others_do(prefix):
    c = mcpool.Client(["127.0.0.1:1"], retry_timeout=0)
    k = prefix + "k"
    # the stores answered by a list raise for the key's error, as add_multi (tester finding
    # partial 4: the key was listed, as if it were missing), with every key's outcome
    for call in (lambda: c.replace_multi({k: "v"}), lambda: c.append_multi({k: "v"}),
                 lambda: c.prepend_multi({k: b"v"}), lambda: c.add_multi({k: "v"})):
        with pytest.raises(mcpool.ConnectionError) as e:
            call()
        assert e.value.key == k and e.value.results == {k: e.value}
    # the compat modules' _failed: listed, each key's exception in the dict
    failed = {}
    assert c.replace_multi({k: "v"}, _failed=failed) == [k]
    assert isinstance(failed[k], mcpool.ConnectionError)
    # cas_multi answers True/False/None per key: a key's error raises, with the results
    with pytest.raises(mcpool.ConnectionError) as e:
        c.cas_multi({k: ("v", 5)})
    assert e.value.key == k and isinstance(e.value.results[k], mcpool.ConnectionError)
    for call in (lambda: c.gat_multi([k], 1), lambda: c.gats_multi([k], 1)):
        with pytest.raises(mcpool.ConnectionError) as e:
            call()
        assert k in str(e.value)
