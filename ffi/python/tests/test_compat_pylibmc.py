"""A typical pylibmc program, run twice: with the real pylibmc and with mcpool.compat.pylibmc,
only the module changed; every step's observable result must be the same (issue 17)."""
import threading

import pytest

from conftest import require
from conftest import BrokenServer

real_pylibmc = require("pylibmc", "python3-pylibmc")
import mcpool  # noqa: E402
import mcpool.compat.pylibmc as compat_pylibmc  # noqa: E402


def typed(v):
    """v with every value's type made part of it (1 == True, but not here) and dicts as
    sorted pairs (get_multi's order is the servers')."""
    if isinstance(v, dict):
        return ("dict", sorted(((typed(k), typed(x)) for k, x in v.items()), key=repr))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [typed(x) for x in v])
    return (type(v).__name__, v)


def outcome(fn, *a, **k):
    """A step's observable result: its value with its type, or the name of the exception."""
    try:
        return ("ok", typed(fn(*a, **k)))
    except Exception as e:  # noqa: BLE001 - the class is the observable result
        return ("raised", type(e).__name__)


def unprefixed(v, p):
    """v with the run's key prefix taken out of strings (the two runs use two prefixes)."""
    if isinstance(v, str) and v.startswith(p):
        return v[len(p):]
    if isinstance(v, (list, tuple)):
        return type(v)(unprefixed(x, p) for x in v)
    if isinstance(v, dict):
        return {unprefixed(k, p): unprefixed(x, p) for k, x in v.items()}
    return v


def program(pylibmc, addr, down_addr, p):
    """The program: what an application over pylibmc typically does. Returns the steps."""
    steps = []

    def step(name, fn, *a, **k):
        steps.append((name, outcome(fn, *a, **k)))

    behaviors = {"tcp_nodelay": True, "ketama": True, "connect_timeout": 500,
                 "receive_timeout": 2000000, "send_timeout": 2000000, "remove_failed": 4,
                 "retry_timeout": 1, "dead_timeout": 10, "no_block": True, "cas": True}
    mc = pylibmc.Client([addr], binary=False, behaviors=behaviors)
    b = mc.behaviors
    step("behaviors ketama", lambda: (b["ketama"], b["tcp_nodelay"], b["connect_timeout"],
                                      b["distribution"], b["receive_timeout"]))
    step("set str", mc.set, p + "s", "h\u00e9llo")
    step("get str", mc.get, p + "s")
    step("set bytes", mc.set, p + "b", b"\x00\xff")
    step("get bytes", mc.get, p + "b")
    step("set int", mc.set, p + "i", 42)
    step("get int", mc.get, p + "i")
    step("set dict", mc.set, p + "d", {"a": [1, 2], "b": {"c": None}})
    step("get dict", mc.get, p + "d")
    step("set float", mc.set, p + "f", 2.5)
    step("get float", mc.get, p + "f")
    step("set bool", mc.set, p + "t", True)
    step("get bool", mc.get, p + "t")
    step("set list ttl", mc.set, p + "l", [1, "two", 3.0], time=300)
    step("get list", mc.get, p + "l")
    step("get missing default", mc.get, p + "nope", "dflt")
    step("add existing", mc.add, p + "s", "x")
    step("add new", mc.add, p + "new", "x")
    step("replace missing", mc.replace, p + "nope", "x")
    step("replace existing", mc.replace, p + "new", "y")
    step("append", mc.append, p + "new", "z")
    step("prepend", mc.prepend, p + "new", "a")
    step("get appended", mc.get, p + "new")
    step("append missing", mc.append, p + "nope", "z")
    step("set counter", mc.set, p + "n", 10)
    step("incr", mc.incr, p + "n", 5)
    step("decr", mc.decr, p + "n", 20)
    step("incr missing", mc.incr, p + "nope")
    step("decr missing", mc.decr, p + "nope")
    step("gets", lambda: mc.gets(p + "s")[0])
    _, cas = mc.gets(p + "s")
    step("cas ok", mc.cas, p + "s", "cas1", cas)
    step("cas stale", mc.cas, p + "s", "cas2", cas)
    step("cas missing", mc.cas, p + "nope", "x", 1)
    step("gets missing", mc.gets, p + "nope")
    step("touch", mc.touch, p + "s", 100)
    step("touch missing", mc.touch, p + "nope", 100)
    step("delete", mc.delete, p + "new")
    step("delete missing", mc.delete, p + "new")
    step("set_multi", mc.set_multi, {"m1": 1, "m2": "two", "m3": {"x": 3}}, key_prefix=p)
    step("get_multi", mc.get_multi, ["m1", "m2", "m3", "m4"], key_prefix=p)
    step("add_multi", lambda: sorted(mc.add_multi({"m1": 9, "m5": 5}, key_prefix=p)))
    step("get after add_multi", mc.get_multi, [p + "m1", p + "m5"])
    step("incr_multi", mc.incr_multi, ["m1", "m5"], key_prefix=p, delta=2)
    step("get after incr_multi", mc.get_multi, [p + "m1", p + "m5"])
    step("incr_multi missing", mc.incr_multi, [p + "m1", p + "gone1", p + "gone2"])
    step("delete_multi", mc.delete_multi, ["m1", "m2"], key_prefix=p)
    step("delete_multi some missing", mc.delete_multi, [p + "m1", p + "m3"])
    step("too big", mc.set, p + "big", b"x" * (2 * 1024 * 1024))
    step("key too long", mc.get, "k" * 251)
    step("key not a str", mc.set, 12, 1)
    step("compressed", mc.set, p + "z", "zip " * 5000, min_compress_len=100)
    step("get compressed", mc.get, p + "z")
    step("mapping set/get/in/del", lambda: (mc.__setitem__(p + "map", 7), mc[p + "map"],
                                            p + "map" in mc, mc.__delitem__(p + "map"),
                                            p + "map" in mc))
    step("missing item KeyError", lambda: mc[p + "nope"])
    step("stats", lambda: len(mc.get_stats()))

    mc.set_behaviors({"tcp_nodelay": False})
    step("set_behaviors", lambda: (mc.behaviors["tcp_nodelay"], mc.get(p + "s")))
    step("set_behaviors unknown", mc.set_behaviors, {"no_such_behavior": 1})
    bd = mc.behaviors
    bd["retry_timeout"] = 3
    step("behaviors dict assignment", lambda: mc.behaviors["retry_timeout"])

    c = mc.clone()
    step("clone reads", c.get, p + "s")
    step("clone writes", lambda: (c.set(p + "cl", 1), mc.get(p + "cl")))

    pool = pylibmc.ClientPool()
    pool.fill(mc, 3)

    def with_pool():
        with pool.reserve() as pc:
            return pc.set(p + "pool", "v"), pc.get(p + "pool")
    step("ClientPool reserve", with_pool)
    step("ClientPool ctor", lambda: pylibmc.ClientPool(mc, 2).qsize())

    tpool = pylibmc.ThreadMappedPool(mc)
    results = []

    def worker(i):
        with tpool.reserve() as tc:
            results.append(tc.set(p + "tm%d" % i, i))
        tpool.relinquish()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    step("ThreadMappedPool", lambda: (results, mc.get_multi([p + "tm%d" % i for i in range(4)]),
                                      len(tpool)))

    down = pylibmc.Client([down_addr], behaviors={"connect_timeout": 500})
    step("down get", down.get, p + "x")
    step("down set", down.set, p + "x", 1)
    step("down is an Error", lambda: isinstance(outcome_exc(down.get, p + "x"),
                                                pylibmc.Error))
    step("exception classes", lambda: all(issubclass(getattr(pylibmc, n), pylibmc.Error)
                                          for n in ("NotFound", "TooBig", "ConnectionError",
                                                    "ServerDown", "ServerError",
                                                    "ClientError", "CacheMiss")))
    return steps


def outcome_exc(fn, *a):
    try:
        fn(*a)
    except Exception as e:  # noqa: BLE001
        return e
    return None


@pytest.fixture
def down_addr():
    import socket
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def test_pylibmc_program_runs_unchanged(server, prefix, down_addr):
    real = unprefixed(program(real_pylibmc, server.addr, down_addr, prefix + "r_"),
                      prefix + "r_")
    ours = unprefixed(program(compat_pylibmc, server.addr, down_addr, prefix + "c_"),
                      prefix + "c_")
    assert len(real) >= 50
    diffs = [(name, r, o) for (name, r), (_, o) in zip(real, ours) if r != o]
    assert not diffs, "steps that differ (name, pylibmc, compat): %r" % diffs
    print("pylibmc program: %d steps, all identical" % len(real))


@pytest.mark.parametrize("writer", ["real", "compat"])
def test_pylibmc_cross_reads(server, prefix, writer):
    """A value one wrote, the other reads back the same (same layout, same placement)."""
    r = real_pylibmc.Client([server.addr], behaviors={"ketama": True})
    c = compat_pylibmc.Client([server.addr], behaviors={"ketama": True})
    w, rd = (r, c) if writer == "real" else (c, r)
    values = {"s": "t\u00e9xt", "b": b"\x01", "i": -7, "big": 2 ** 80, "f": 0.25,
              "d": {"k": [1, 2.0, "3"]}, "t": True, "z": "compress " * 2000}
    for k, v in values.items():
        assert w.set(prefix + k, v, min_compress_len=1000 if k == "z" else 0)
    expect = dict(values, t=1)  # pylibmc reads a bool back as 1
    assert typed({k: rd.get(prefix + k) for k in values}) == typed(expect)
    assert typed(rd.get_multi([prefix + k for k in values])) == \
        typed({prefix + k: v for k, v in expect.items()})
    assert server.raw_get(prefix + "z")[0] & 8  # compressed, whoever wrote it


def test_pylibmc_placement_matches(servers, prefix):
    """With three servers, each key lands where pylibmc puts it (ketama, hash md5)."""
    addrs = [s.addr for s in servers]
    b = {"ketama": True, "hash": "md5"}
    r = real_pylibmc.Client(addrs, behaviors=b)
    c = compat_pylibmc.Client(addrs, behaviors=b)
    keys = [prefix + "k%d" % i for i in range(60)]
    for k in keys:
        assert r.set(k, k)
    # each server holds what pylibmc put there; compat reads all of them back
    assert c.get_multi(keys) == {k: k for k in keys}
    for s in servers:
        one = compat_pylibmc.Client([s.addr])
        on_s = one.get_multi(keys)
        for k in on_s:
            assert c._mc.server_for(k) == s.addr


@pytest.mark.parametrize("behaviors", [None, {"ketama": True}, {"ketama": True, "hash": "md5"}],
                         ids=["default", "ketama", "ketama-md5"])
@pytest.mark.parametrize("order", ["given", "reversed", "listed-twice"])
def test_pylibmc_hash_answers_the_server_index_as_pylibmc(servers, behaviors, order):
    """(tester finding pyteam2 1) The drop-in had no Client.hash(key): pylibmc's answers the
    index of the server the key goes to (libmemcached's memcached_generate_hash); the
    drop-in answers it through the core's placement (the index in the server list). Side by
    side with pylibmc on three servers, str and bytes keys, an address listed twice."""
    addrs = [s.addr for s in servers]
    addrs = {"given": addrs, "reversed": addrs[::-1], "listed-twice": addrs + addrs[:1]}[order]
    r = real_pylibmc.Client(addrs, behaviors=behaviors)
    c = compat_pylibmc.Client(addrs, behaviors=behaviors)
    keys = ["k%d" % i for i in range(100)] + [b"b%d" % i for i in range(50)] + \
        ["foo", "bar", "user:1", "\u00e9t\u00e9", b"caf\xc3\xa9"]
    theirs = [r.hash(k) for k in keys]
    assert [c.hash(k) for k in keys] == theirs
    assert len(set(theirs)) >= 3  # every server has keys
    # the index names the server the drop-in sends the key to
    assert all(c._mc.server_for(k) == c._mc.servers[i] for k, i in zip(keys, theirs))


def test_pylibmc_hash_under_sort_hosts_names_the_same_server(servers):
    """With _sort_hosts pylibmc's index is into libmemcached's sorted list (by host, then
    port); the drop-in's stays the index in the list as given (the module's docstring): the
    same server either way, and the same number when the list is given sorted."""
    by_port = sorted((s.addr for s in servers), key=lambda a: int(a.rsplit(":", 1)[1]))
    keys = ["k%d" % i for i in range(60)]
    for addrs in (by_port, by_port[::-1]):
        r = real_pylibmc.Client(addrs, behaviors={"_sort_hosts": True})
        c = compat_pylibmc.Client(addrs, behaviors={"_sort_hosts": True})
        assert [addrs[c.hash(k)] for k in keys] == [by_port[r.hash(k)] for k in keys]
        if addrs == by_port:
            assert [c.hash(k) for k in keys] == [r.hash(k) for k in keys]


def test_pylibmc_hash_refuses_a_key_as_pylibmc_or_as_the_other_calls(servers):
    """A key pylibmc's hash refuses raises pylibmc's exception; one no command sends (which
    pylibmc hashes all the same) raises as the drop-in's other calls refuse it."""
    addrs = [s.addr for s in servers]
    r = real_pylibmc.Client(addrs)
    c = compat_pylibmc.Client(addrs)
    for key in (1, None, ("a",), bytearray(b"k"), memoryview(b"k"), "\ud800"):
        with pytest.raises(Exception) as theirs:
            r.hash(key)
        with pytest.raises(Exception) as ours:
            c.hash(key)
        assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))
    with pytest.raises(compat_pylibmc.ClientError, match="space or control byte"):
        c.hash("a b")
    with pytest.raises(ValueError, match="longer than 250 bytes"):
        c.hash("k" * 251)


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_pylibmc_hash_refusals_name_hash(servers, binary):
    """(tester finding retest41b 7) A key no command sends, which pylibmc's hash answers all
    the same, raised the drop-in's error with a message that began "server_for: ...", a call
    the caller never made: it names hash, the class kept (ClientError, ValueError for one too
    long). mcpool.Client.server_for still names itself."""
    addrs = [s.addr for s in servers]
    r = real_pylibmc.Client(addrs, binary=binary)
    c = compat_pylibmc.Client(addrs, binary=binary)
    refused = [("", compat_pylibmc.ClientError, "key is empty"),
               ("k" * 251, ValueError, "longer than 250 bytes"),
               (b"k" * 251, ValueError, "longer than 250 bytes")]
    if not binary:  # a space or a control byte is a key the binary protocol sends
        refused += [("a b", compat_pylibmc.ClientError, "space or control byte"),
                    ("a\x01b", compat_pylibmc.ClientError, "space or control byte")]
    for key, cls, why in refused:
        assert isinstance(r.hash(key), int)  # pylibmc hashes it
        with pytest.raises(cls) as ei:
            c.hash(key)
        assert str(ei.value).startswith("hash: invalid key "), str(ei.value)
        assert why in str(ei.value) and "server_for" not in str(ei.value)
    with pytest.raises(mcpool.ClientError, match=r"^server_for: invalid key"):
        mcpool.Client(addrs).server_for("")


def test_pylibmc_unknown_hash_raises(server):
    with pytest.raises(compat_pylibmc.Error):
        compat_pylibmc.Client([server.addr], behaviors={"hash": "hsieh"})
    with pytest.raises(ValueError):
        compat_pylibmc.Client([server.addr], behaviors={"bogus": 1})


def test_pylibmc_add_multi_and_incr_multi_are_one_batch_per_server(servers, prefix):
    """add_multi and incr_multi forward to the core's batches: one request batch per server
    (the operations counter), pylibmc's results (the keys not added; NotFound counting the
    missing counters)."""
    addrs = [s.addr for s in servers]
    c = compat_pylibmc.Client(addrs)
    keys = [prefix + "a%d" % i for i in range(60)]
    c.set_multi({k: "old" for k in keys[::2]})

    def ops():
        m = c._mc.metrics()
        return [m[a]["operations"] for a in addrs]

    touched = {c._mc.server_for(k) for k in keys}
    assert len(touched) == 3
    before = ops()
    failed = c.add_multi({k: "new" for k in keys})
    assert [a - b for a, b in zip(ops(), before)] == [1, 1, 1]
    assert sorted(failed) == sorted(keys[::2])
    assert c.get(keys[0]) == "old" and c.get(keys[1]) == "new"
    counters = [prefix + "n%d" % i for i in range(30)]
    c.set_multi({k: 5 for k in counters})
    # which servers the counters land on depends on the prefix (the test's number in the
    # session): one batch for each of those, none for the others
    holding = {c._mc.server_for(k) for k in counters}
    before = ops()
    assert c.incr_multi(counters, delta=2) is None
    assert [a - b for a, b in zip(ops(), before)] == [int(a in holding) for a in addrs]
    assert c.get_multi(counters[:2]) == {counters[0]: 7, counters[1]: 7}
    with pytest.raises(compat_pylibmc.NotFound):
        c.incr_multi(counters[:3] + [prefix + "missing1", prefix + "missing2"])
    assert c.get(counters[0]) == 8  # the others were still incremented
    assert c._mc.incr_multi(counters[:2] + [prefix + "missing1"], delta=1) == [9, 9, None]
    assert c._mc.decr_multi(counters[:1], delta=100) == [0]


def test_pylibmc_hash_with_prefix_key_forwards_the_core_option(servers, prefix):
    """behaviors _hash_with_prefix_key: the core's hash_key_prefix (placement hashes the
    namespace with the key), where it used to be refused."""
    addrs = [s.addr for s in servers]
    plain = compat_pylibmc.Client(addrs)
    ns = compat_pylibmc.Client(addrs, behaviors={"namespace": prefix})
    hashed = compat_pylibmc.Client(addrs, behaviors={"namespace": prefix, "_hash_with_prefix_key": 1})
    keys = ["k%d" % i for i in range(60)]
    assert all(hashed._mc.server_for(k) == plain._mc.server_for(prefix + k) for k in keys)
    assert all(ns._mc.server_for(k) == plain._mc.server_for(k) for k in keys)
    assert sum(hashed._mc.server_for(k) != ns._mc.server_for(k) for k in keys) > 10
    assert hashed.set("k1", "v") and plain.get(prefix + "k1") == "v"


@pytest.mark.parametrize("module", [real_pylibmc, compat_pylibmc], ids=["real", "compat"])
def test_pylibmc_negative_time_expires_the_key(server, prefix, module):
    """pylibmc accepts a negative time (True) and memcached expires the key at once."""
    mc = module.Client([server.addr])
    k = prefix + "neg"
    mc.set(k, "old")
    assert mc.set(k, "new", time=-1) is True
    assert mc.get(k) is None
    mc.set(k, "old")
    assert mc.set_multi({k: "new"}, time=-1) == []
    assert mc.get(k) is None
    mc.set(k, "old")
    assert mc.touch(k, -1) is True
    assert mc.get(k) is None


def test_pylibmc_gets_and_cas_need_the_cas_behavior(server, prefix):
    """pylibmc's gets and cas raise ValueError without the ``cas`` behavior (an empty key to
    gets is a miss first); with it they work, and turning it off again raises again. The
    drop-in answered them whatever the behavior said."""

    def steps(mod, q):
        c = mod.Client([server.addr])
        c.set(q + "k", "v")
        calls = (lambda: c.gets(q + "k"), lambda: c.gets(""), lambda: c.gets("a b"),
                 lambda: c.gets(q + "nope"), lambda: c.cas(q + "k", "w", 1),
                 lambda: c.cas("", "w", 1))
        out = [outcome(f) for f in calls]
        c.behaviors = {"cas": True}
        value, token = c.gets(q + "k")
        out += [value, type(token).__name__, outcome(c.cas, q + "k", "w", token),
                outcome(c.get, q + "k")]
        c.behaviors = {"cas": False}
        out += [outcome(f) for f in calls]
        return out

    expected = steps(real_pylibmc, prefix + "r_")
    assert expected[0] == ("raised", "ValueError") and expected[1][0] == "ok"
    assert steps(compat_pylibmc, prefix + "c_") == expected


@pytest.mark.parametrize("big", [2**31, 2**32 - 1])
def test_pylibmc_time_memcached_cannot_honour_raises(server, prefix, big):
    """pylibmc sends a time above 2**31-1, memcached reads it as negative and the item
    expires at once while set answers True. The compat layer raises pylibmc's ClientError
    instead (the core refused it, nothing stored): never a silent store that expires at once.
    A set so refused leaves no older value, as pylibmc's expired set (tester finding ttl 1);
    the other calls leave the key as it was."""
    mc = compat_pylibmc.Client([server.addr])
    k = prefix + "big"
    for call, left in ((lambda: mc.set(k, "new", time=big), None),
                       (lambda: mc.add(k + "fresh", "new", time=big), "old"),
                       (lambda: mc.replace(k, "new", time=big), "old"),
                       (lambda: mc.set_multi({k: "new"}, time=big), None),
                       (lambda: mc.add_multi({k + "fresh": "new"}, time=big), "old"),
                       (lambda: mc.touch(k, big), "old"),
                       (lambda: mc.flush_all(big), "old")):
        mc.set(k, "old")
        with pytest.raises(compat_pylibmc.ClientError, match="2147483647"):
            call()
        assert mc.get(k) == left
        assert mc.get(k + "fresh") is None
    mc.set(k, "old")
    assert mc.set(k, "max", time=2**31 - 1) is True
    assert mc.get(k) == "max"


@pytest.mark.parametrize("behaviors", [
    {"ketama": True, "ketama_hash": "md5"},
    {"ketama": True, "ketama_hash": "crc"},
    {"ketama_weighted": True, "ketama_hash": "md5"},
    {"ketama_hash": 3},
], ids=["ketama_md5", "ketama_crc", "weighted_md5", "modula_int"])
def test_pylibmc_ketama_hash_is_accepted_and_moves_no_key(servers, prefix, behaviors):
    """pylibmc accepts ketama_hash (libmemcached's distribution hash), and it moves no key:
    each key is where pylibmc with the same behaviors put it."""
    addrs = [s.addr for s in servers]
    r = real_pylibmc.Client(addrs, behaviors=behaviors)
    c = compat_pylibmc.Client(addrs, behaviors=behaviors)
    assert c.behaviors["ketama_hash"] == r.behaviors["ketama_hash"]
    keys = [prefix + "k%d" % i for i in range(60)]
    for k in keys:
        assert r.set(k, k)
    for s in servers:
        for k in compat_pylibmc.Client([s.addr]).get_multi(keys):
            assert c._mc.server_for(k) == s.addr
    with pytest.raises(TypeError):
        compat_pylibmc.Client(addrs, behaviors=dict(behaviors, ketama_hash="bogus"))


def test_pylibmc_behaviors_copied_from_a_ketama_weighted_client(server):
    """Its read-back behaviors (ketama_hash=1 among them) build a client, as in pylibmc."""
    for module in (real_pylibmc, compat_pylibmc):
        b = dict(module.Client([server.addr], behaviors={"ketama_weighted": True}).behaviors)
        assert module.Client([server.addr], behaviors=b).behaviors["ketama_weighted"] == 1


@pytest.mark.parametrize("module", [real_pylibmc, compat_pylibmc], ids=["real", "compat"])
def test_pylibmc_empty_key_in_multi_calls(server, prefix, module):
    """pylibmc lists an empty key as not stored and answers False for delete_multi (the
    drop-in raised ValueError); the other keys are stored and deleted."""
    mc = module.Client([server.addr])
    k = prefix + "a"
    assert mc.set_multi({"": "x", k: "y"}) == [""]
    assert mc.get(k) == "y"
    assert mc.add_multi({"": 1}) == [""]
    assert mc.delete_multi(["", k]) is False
    assert mc.get(k) is None
    assert mc.delete_multi([""]) is False


@pytest.mark.parametrize("module", [real_pylibmc, compat_pylibmc], ids=["real", "compat"])
def test_pylibmc_empty_key_under_a_key_prefix_is_the_prefix(server, prefix, module):
    """Under a multi call's key_prefix an empty key is the prefix itself: pylibmc stores,
    reads and deletes it (tester finding batches 1: the drop-in missed it silently)."""
    mc = module.Client([server.addr])
    pre = prefix + "pre"
    assert mc.set_multi({"": "2"}, key_prefix=pre) == []
    assert mc.get(pre) == "2"
    assert mc.set(pre, "v")
    assert mc.get_multi([""], key_prefix=pre) == {"": "v"}
    assert mc.add_multi({"": "x"}, key_prefix=pre) == [""]  # there already
    assert mc.delete_multi([""], key_prefix=pre) is True
    assert mc.get(pre) is None


@pytest.mark.parametrize("module", [real_pylibmc, compat_pylibmc], ids=["real", "compat"])
def test_pylibmc_a_str_utf8_cannot_encode_raises_unicode_encode_error(server, prefix, module):
    """A lone surrogate: pylibmc's UTF-8 encoding raises UnicodeEncodeError, so does the
    drop-in (not its ClientError)."""
    mc = module.Client([server.addr])
    for store in (mc.set, mc.add, mc.replace):
        with pytest.raises(UnicodeEncodeError):
            store(prefix + "k", "a\ud800b")
    assert mc.get(prefix + "k") is None


def test_pylibmc_delete_multi_with_a_key_listed_twice_is_false(server, prefix):
    """pylibmc deletes key by key: the second "x" finds nothing, so delete_multi answers
    False (every key is still deleted). The drop-in answers as pylibmc; mcpool.Client keeps
    its own rule (a key listed twice counts once)."""
    import mcpool
    p = prefix

    def steps(mod, q):
        c = mod.Client([server.addr])
        out = []
        for keys in ([q + "x", q + "x", q + "y"], [q + "x", q + "x"], [q + "x", (q + "x").encode()],
                     [q + "x", q + "y"]):
            c.set(q + "x", 1)
            c.set(q + "y", 2)
            out.append((outcome(c.delete_multi, keys), outcome(c.get, q + "x"),
                        outcome(c.get, q + "y")))
        c.set(q + "x", 1)
        out.append(outcome(c.delete_multi, ["x", "x"], key_prefix=q))
        return out

    expected = steps(real_pylibmc, p + "r_")
    assert expected[0][0] == ("ok", ("bool", False)) and expected[3][0] == ("ok", ("bool", True))
    assert steps(compat_pylibmc, p + "c_") == expected
    mc = mcpool.Client([server.addr])
    mc.set(p + "m", 1)
    assert mc.delete_multi([p + "m", p + "m"]) is True


BAD_KEY_CALLS = [
    ("get", lambda c, k: c.get(k)), ("get default", lambda c, k: c.get(k, "dflt")),
    ("in", lambda c, k: k in c), ("getitem", lambda c, k: c[k]),
    ("get_multi", lambda c, k: c.get_multi([k])),
    ("set", lambda c, k: c.set(k, "v")), ("add", lambda c, k: c.add(k, "v")),
    ("replace", lambda c, k: c.replace(k, "v")), ("append", lambda c, k: c.append(k, "v")),
    ("prepend", lambda c, k: c.prepend(k, "v")), ("delete", lambda c, k: c.delete(k)),
    ("set_multi", lambda c, k: c.set_multi({k: "v"})),
    ("add_multi", lambda c, k: c.add_multi({k: "v"})),
    ("delete_multi", lambda c, k: c.delete_multi([k])),
]


def _bad_key_outcome(mod, addr, fn, key):
    """What the call does, as pylibmc's catchers see it: a value, a pylibmc.Error (by
    "pylibmc.Error"), or another exception by its class."""
    c = mod.Client([addr])  # a fresh client: libmemcached misbehaves after a protocol error
    try:
        return ("ok", typed(fn(c, key)))
    except mod.Error:
        return ("raised", "pylibmc.Error")
    except Exception as e:  # noqa: BLE001 - the class is the observable result
        return ("raised", type(e).__name__)


@pytest.mark.parametrize("key", ["user 1", b"user 1", "x" * 251, "\u00e9" * 126],
                         ids=["space", "bytes_space", "too_long", "utf8_too_long"])
def test_pylibmc_invalid_key_answers_as_pylibmc(server, prefix, key):
    """A key with a space (text protocol): pylibmc raises pylibmc.ClientError (a pylibmc.Error)
    on a store, delete and the multi writes, and answers a miss on get/get_multi/in; the
    drop-in raised the builtin ValueError on every call, which `except pylibmc.Error` did not
    catch. A key over 250 bytes raises ValueError on every call with both."""
    for name, fn in BAD_KEY_CALLS:
        expected = _bad_key_outcome(real_pylibmc, server.addr, fn, key)
        got = _bad_key_outcome(compat_pylibmc, server.addr, fn, key)
        assert got == expected, (name, key, expected, got)
    too_long = len(key if isinstance(key, bytes) else key.encode()) > 250
    assert (_bad_key_outcome(real_pylibmc, server.addr, BAD_KEY_CALLS[0][1], key)
            == (("raised", "ValueError") if too_long else ("ok", ("NoneType", None))))


@pytest.mark.parametrize("key", ["user 1", "a\tb", "a\x01b", "a\nb"],
                         ids=["space", "tab", "control", "newline"])
def test_pylibmc_key_the_core_refuses_is_a_pylibmc_error_or_a_miss(server, prefix, key):
    """Every key mcpool refuses on the text protocol (which pylibmc sends, to an error or to
    a key memcached stores under a name no other client can ask for): a pylibmc.Error on every
    write, delete, touch and counter, a miss on every read; the other keys of a get_multi are
    still answered."""
    mc = compat_pylibmc.Client([server.addr], behaviors={"cas": True})
    mc.set(prefix + "ok", "v")
    assert mc.get(key) is None and mc.get(key, 7) == 7 and mc.gets(key) == (None, None)
    assert (key in mc) is False
    with pytest.raises(KeyError):
        mc[key]
    assert mc.get_multi([key, prefix + "ok"]) == {prefix + "ok": "v"}
    assert mc.get_multi(["ok", key], key_prefix=prefix) == {"ok": "v"}
    for call in (lambda: mc.set(key, 1), lambda: mc.add(key, 1), lambda: mc.replace(key, 1),
                 lambda: mc.append(key, "x"), lambda: mc.prepend(key, "x"),
                 lambda: mc.delete(key), lambda: mc.touch(key, 10), lambda: mc.incr(key),
                 lambda: mc.decr(key), lambda: mc.cas(key, 1, 1),
                 lambda: mc.set_multi({key: 1, prefix + "other": 2}),
                 lambda: mc.add_multi({key: 1}), lambda: mc.delete_multi([key]),
                 lambda: mc.incr_multi([key])):
        with pytest.raises(compat_pylibmc.ClientError):
            call()
    # pylibmc counts key_prefix in its length check: ValueError for a store, as pylibmc
    with pytest.raises(ValueError):
        mc.set_multi({"y" * 245: 1}, key_prefix="z" * 10)
    with pytest.raises(ValueError):
        real_pylibmc.Client([server.addr]).set_multi({"y" * 245: 1}, key_prefix="z" * 10)


@pytest.mark.parametrize("delay", [-1, -5, -(2 ** 40)])
def test_pylibmc_flush_all_negative_delay_flushes_now(server, prefix, delay):
    """pylibmc's flush_all(-1) answers True and flushes at once (memcached reads a delay in
    the past as now); the drop-in raised ClientError. A float is pylibmc's TypeError."""
    for mod in (real_pylibmc, compat_pylibmc):
        c = mod.Client([server.addr])
        assert c.set(prefix + "f", 1)
        assert c.flush_all(delay) is True, mod
        assert c.get(prefix + "f") is None, mod
        with pytest.raises(TypeError):
            c.flush_all(-1.5)


@pytest.mark.parametrize("delay", [-1, -0.5, -(2 ** 70)])
def test_client_flush_all_negative_delay_flushes_now(server, prefix, delay):
    """mcpool.Client: a negative flush delay goes to the core's rule (mcpool_delay_from_signed):
    now, not a ClientError."""
    import mcpool
    mc = mcpool.Client([server.addr])
    assert mc.set(prefix + "f", 1)
    assert mc.flush_all(delay) is True
    assert mc.get(prefix + "f") is None


@pytest.mark.parametrize("size", [2 << 20, 1048540], ids=["refused-here", "refused-by-memcached"])
def test_server_too_large_raises_toobig_as_pylibmc(server, prefix, size):
    """A value under 1 MiB that memcached refuses ("SERVER_ERROR object too large for cache":
    key and item header count too), or one over it: pylibmc raises TooBig, and so does the
    compat module, and the older value is gone either way (the drop-in kept it when the core
    refused the value before sending it)."""
    import os
    big = os.urandom(size)
    got = []
    for mod in (real_pylibmc, compat_pylibmc):
        c = mod.Client([server.addr])
        key = prefix + mod.__name__.replace(".", "_")
        c.set(key, "old")
        got.append((outcome(c.set, key, big), outcome(c.get, key)))
    assert got[0] == got[1] == (("raised", "TooBig"), ("ok", ("NoneType", None)))


# ---- a server that is down ------------------------------------------------------------------


def _free_addr():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


@pytest.mark.parametrize("placement", [{}, {"ketama": True}, {"distribution": "consistent"}],
                         ids=["modula", "ketama", "consistent"])
def test_remove_failed_moves_keys_only_where_pylibmc_does(servers, prefix, placement):
    """remove_failed under pylibmc's default modula: libmemcached never moves a dead server's
    keys (each fails, ServerDead), so neither may the drop-in; it wrote them to the live
    servers at once (a third of the keys where pylibmc never reads). On a continuum both
    move them. Two live servers and a port where nothing listens."""
    addrs = [servers[0].addr, servers[1].addr, _free_addr()]
    behaviors = dict(placement, remove_failed=1, failure_limit=1, retry_timeout=1)
    keys = [prefix + "k%d" % i for i in range(90)]
    where, failing = {}, {}
    for mod in (real_pylibmc, compat_pylibmc):
        mc = mod.Client(addrs, behaviors=dict(behaviors))
        value = mod.__name__
        for _round in range(2):  # the second round is after libmemcached's ejection
            failing[mod] = set()
            for k in keys:
                try:
                    mc.set(k, value)
                except mod.Error:
                    failing[mod].add(k)
        where[mod] = {k: i for k in keys for i, s in enumerate(servers[:2])
                      if (s.raw_get(k) or (0, b""))[1] == value.encode()}
    assert where[compat_pylibmc] == where[real_pylibmc]
    assert failing[compat_pylibmc] == failing[real_pylibmc]
    if not placement:  # modula: the dead server's keys stay there, failing
        assert 0 < len(failing[real_pylibmc]) < len(keys)
        assert set(where[real_pylibmc]) == set(keys) - failing[real_pylibmc]
    else:
        assert not failing[real_pylibmc] and len(where[real_pylibmc]) == len(keys)


def test_auto_eject_waits_for_failure_limit_failed_periods_as_pylibmc(servers, prefix):
    """libmemcached counts at most one failure per retry_timeout toward failure_limit before
    auto_eject removes a server (measured: failure_limit 2, retry_timeout 1 s, about 1.6 s of
    traffic). The drop-in ejected at the first failure: from then on it placed every key on
    the smaller ring, where pylibmc was still failing the dead server's keys and keeping every
    other key home. Now both fail the dead server's keys first, then eject, then agree."""
    import time
    addrs = [servers[0].addr, _free_addr() + ":2", servers[1].addr + ":3"]
    behaviors = {"ketama_weighted": True, "auto_eject": True, "failure_limit": 2,
                 "retry_timeout": 1}
    keys = [prefix + "k%d" % i for i in range(120)]
    clients = {mod: mod.Client(addrs, behaviors=dict(behaviors))
               for mod in (real_pylibmc, compat_pylibmc)}

    def round_of(mod):
        value = mod.__name__ + "-%f" % time.monotonic()
        failing = set()
        for k in keys:
            try:
                clients[mod].set(k, value)
            except mod.Error:
                failing.add(k)
        where = {k: i for k in keys for i, s in enumerate(servers[:2])
                 if (s.raw_get(k) or (0, b""))[1] == value.encode()}
        return failing, where

    first = {mod: round_of(mod) for mod in clients}
    assert first[real_pylibmc][0], "pylibmc fails the dead server's keys at first"
    assert first[compat_pylibmc] == first[real_pylibmc]
    deadline = time.monotonic() + 10
    while True:  # until pylibmc has ejected the server (bounded)
        time.sleep(0.2)
        last = {mod: round_of(mod) for mod in clients}
        if not last[real_pylibmc][0] or time.monotonic() > deadline:
            break
    assert not last[real_pylibmc][0], "pylibmc ejected the dead server within 10 s"
    # One more round each: both past the ejection.
    last = {mod: round_of(mod) for mod in clients}
    assert last[compat_pylibmc] == last[real_pylibmc]
    assert set(last[real_pylibmc][1]) == set(keys), "ejected: every key on a live server"


@pytest.fixture
def three_one_killed():
    """Three memcached servers of this test's own; the third is killed after the keys are
    written (its pooled connections then fail, and so do its connects)."""
    from conftest import Server
    ss = [Server() for _ in range(3)]
    try:
        yield ss
    finally:
        for s in ss:
            s.stop()


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_get_multi_leaves_out_a_dead_servers_keys(three_one_killed, prefix, binary):
    """One of three servers killed: pylibmc's get_multi returns the two live servers' hits on
    every call (libmemcached's mget skips a server it cannot connect to); the drop-in raised
    ConnectionError, then ServerDown on each later call, losing every hit. When only the
    dead server holds the keys asked for, both raise ServerDown. (The drop-in's client was
    used before the kill, so its pooled connections to the dead server are stale; pylibmc's
    is made after the kill: a stale libmemcached connection can fail mget's write half way,
    SomeErrors, and leave replies unread that the next call trips over.) On the binary
    protocol pylibmc 1.6.3's mget answers the connect error of the last key it tried to
    connect for (simple_binary_mget's rc): ServerDown when that key's server is the dead
    one, a loss of every hit that depends on the order of the keys; the drop-in answers as
    on the text protocol, compared here with pylibmc on text."""
    ss = three_one_killed
    addrs = [s.addr for s in ss]
    # A fixed prefix (the servers are this test's own): the shared counter's prefix made the
    # keys depend on the tests run before, and with some (t143_...) pylibmc's modula put none
    # of the 30 on the third server. With "dead_" each server holds some (checked).
    prefix = "dead_"
    keys = [prefix + "k%d" % i for i in range(30)]
    writer = real_pylibmc.Client(addrs, binary=binary)
    drop = compat_pylibmc.Client(addrs, binary=binary)
    for k in keys:
        writer.set(k, k)
    held = [sum(s.raw_get(k) is not None for k in keys) for s in ss]
    assert all(held), "every server holds some of the keys: %r" % held
    assert drop.get_multi(keys) == writer.get_multi(keys) == {k: k for k in keys}
    # the server of the first key: under modula the keys of one prefix may all miss a given
    # server (this test's prefix in the full suite put none on the third)
    next(s for s in ss if s.addr == drop._mc.server_for(keys[0])).stop()
    real = real_pylibmc.Client(addrs)
    short = [k[len(prefix):] for k in keys]
    for _call in range(3):
        got = drop.get_multi(keys)
        want = real.get_multi(keys)
        assert 0 < len(want) < len(keys)
        assert got == want
        assert drop.get_multi(short, key_prefix=prefix) == \
            real.get_multi(short, key_prefix=prefix)
    lost = [k for k in keys if k not in want]
    live = sorted(want)[0]
    for mod, mc in ((real_pylibmc, real), (compat_pylibmc, drop)):
        with pytest.raises(mod.ServerDown):
            mc.get_multi(lost)
        assert mc.get_multi(lost[:1] + [live]) == {live: live}


def test_get_multi_with_a_dead_server_keeps_other_errors(three_one_killed, prefix):
    """Only a dead or unreachable server's keys are left out: a value that does not decode
    (garbage under pylibmc's pickle flag) still raises, as with pylibmc."""
    ss = three_one_killed
    addrs = [s.addr for s in ss]
    keys = [prefix + "k%d" % i for i in range(30)]
    real = real_pylibmc.Client(addrs)
    drop = compat_pylibmc.Client(addrs)
    for k in keys:
        real.set(k, k)
    ss[2].stop()
    live = sorted(real.get_multi(keys))
    bad = live[0]
    server = next(s for s in ss[:2] if s.raw_get(bad) is not None)
    server.raw_set(bad, 1, b"not a pickle")  # flag 1: pickled
    for mc in (real, drop):
        with pytest.raises(Exception):
            mc.get_multi(keys)


# ---- get_stats --------------------------------------------------------------------------------


def test_pylibmc_get_stats_types_match_pylibmc(servers):
    """pylibmc's get_stats: [(b"host:port (i)", {str name: bytes value})]; the drop-in gave
    bytes names, so stats["curr_items"] raised KeyError. The drop-in has every stat the server
    sends, pylibmc libmemcached's 22: each of those is there, with the same types."""
    addrs = [s.addr for s in servers[:2]]
    real = real_pylibmc.Client(addrs).get_stats()
    ours = compat_pylibmc.Client(addrs).get_stats()
    assert [label for label, _ in ours] == [label for label, _ in real]
    assert all(type(label) is bytes for label, _ in real)
    for (_, r), (_, o) in zip(real, ours):
        assert all(type(k) is str and type(v) is bytes for k, v in r.items())
        assert all(type(k) is str and type(v) is bytes for k, v in o.items())
        assert set(r) <= set(o)
        for name in ("pid", "version", "limit_maxbytes", "pointer_size", "threads"):
            assert o[name] == r[name]
        assert int(o["curr_items"]) >= 0


# ---- incr/decr delta ------------------------------------------------------------------------


@pytest.mark.parametrize("delta", [-1, -2**31, -2**31 - 1, -2**63 - 1, 2**31 - 1, 2**31,
                                   2**63 - 1, 2**63, 2**64 - 1, 2**64, True, 0, "2", 1.5,
                                   None])
@pytest.mark.parametrize("cmd", ["incr", "decr"])
def test_pylibmc_counter_delta_raises_as_pylibmc(server, prefix, cmd, delta):
    """pylibmc parses delta as a C int: below 0 ValueError, beyond a C int OverflowError,
    a str or float TypeError, True is 1. The drop-in raised ClientError for -1 and 2**64 and
    counted 2**31..2**64-1."""
    got = {}
    for mod in (real_pylibmc, compat_pylibmc):
        mc = mod.Client([server.addr])
        key = prefix + mod.__name__
        mc.set(key, 5)
        got[mod] = (outcome(getattr(mc, cmd), key, delta), mc.get(key))
    assert got[compat_pylibmc] == got[real_pylibmc]


# ---- calls to a server that is down ----------------------------------------------------------


def _down_steps(mod, live, dead, prefix):
    """The exception class (or 'ok') of each call pylibmc answers for a down server."""
    steps = []

    def step(name, fn):
        try:
            fn()
            steps.append((name, "ok"))
        except Exception as e:  # noqa: BLE001 - the class is the result
            steps.append((name, type(e).__name__))

    mc = mod.Client([dead])
    step("set_multi (connect fails)", lambda: mc.set_multi({prefix + "k": 1}))
    step("set_multi (disabled)", lambda: mc.set_multi({prefix + "k": 1, prefix + "j": 2}))
    step("add_multi (disabled)", lambda: mc.add_multi({prefix + "k": 1}))
    step("get_stats (disabled)", mc.get_stats)
    step("flush_all (disabled)", mc.flush_all)
    step("get_stats (connect fails)", mod.Client([dead]).get_stats)
    step("flush_all (connect fails)", mod.Client([dead]).flush_all)
    both = mod.Client([live, dead])
    keys = {prefix + "m%d" % i: i for i in range(12)}
    step("two servers: set_multi", lambda: both.set_multi(keys))
    step("two servers: add_multi", lambda: both.add_multi(keys))
    step("two servers: get_stats", both.get_stats)
    step("two servers: flush_all", both.flush_all)
    return steps


def test_pylibmc_a_down_server_raises_as_pylibmc(server, prefix, down_addr):
    """pylibmc raises for a down server on set_multi/add_multi (ConnectionError, then
    ServerDown while it is disabled) and on get_stats/flush_all (SomeErrors); the drop-in's
    set_multi returned the key as not stored, get_stats [] and flush_all ConnectionError.
    A port nothing listens on."""
    real = _down_steps(real_pylibmc, server.addr, down_addr, prefix + "r_")
    ours = _down_steps(compat_pylibmc, server.addr, down_addr, prefix + "c_")
    assert ours == real
    assert dict(real)["set_multi (disabled)"] == "ServerDown"


def test_a_float_time_is_refused_as_pylibmc_refuses_it(server, prefix):
    """pylibmc parses a time as an int: a float (0.4, -0.3, 1.7, even 0.0) or None raises
    TypeError, in its words, before the key is looked at, and nothing is stored. Side by
    side with pylibmc. Before, the compat module truncated it (0.4 and -0.3 stored the item
    for ever)."""
    ours = compat_pylibmc.Client([server.addr], behaviors={"cas": True})
    peer = real_pylibmc.Client([server.addr], behaviors={"cas": True})

    def steps(c, p):
        out = []
        for t in (0.4, -0.3, 1.7, 0.0, None, "5"):
            for key in (p + "f", ""):
                for name, call in (
                        ("set", lambda: c.set(key, "v", t)),
                        ("add", lambda: c.add(key, "v", time=t)),
                        ("replace", lambda: c.replace(key, "v", t)),
                        ("cas", lambda: c.cas(key, "v", 1, t)),
                        ("set_multi", lambda: c.set_multi({key: "v"}, t)),
                        ("add_multi", lambda: c.add_multi({key: "v"}, time=t)),
                        ("touch", lambda: c.touch(key, t))):
                    try:
                        call()
                        out.append((name, t, key == "", "no error"))
                    except Exception as e:  # noqa: BLE001 - the class and message compared
                        out.append((name, t, key == "", type(e).__name__, str(e)))
            out.append(("stored", t, c.get(p + "f")))
        assert c.set(p + "b", "v", True) is True  # a bool is an int, to both
        out.append(("bool", c.get(p + "b")))
        return out

    assert steps(ours, prefix + "o_") == steps(peer, prefix + "r_")


def test_get_multi_answers_a_key_given_as_str_and_bytes_once_as_pylibmc(server, prefix):
    """A key given as str and as bytes is one key sent: pylibmc answers it once, under its
    str spelling whatever the order. Side by side with pylibmc (before: both spellings)."""
    ours, peer = compat_pylibmc.Client([server.addr]), real_pylibmc.Client([server.addr])
    k, e = prefix + "sb", prefix + "\u00e9"
    ours.set(k, b"v")
    ours.set(e, b"x")
    ours.set(prefix + "p:b", b"w")
    for keys, kw in (([k, k.encode()], {}), ([k.encode(), k], {}),
                     ([k.encode(), k, k.encode()], {}), ([e, e.encode()], {}),
                     ([e.encode(), e], {}), ([k.encode(), k.encode()], {}),
                     ([prefix + "zz", (prefix + "zz").encode(), k], {}),
                     (["b", b"b"], {"key_prefix": prefix + "p:"}),
                     ([b"b", "b"], {"key_prefix": (prefix + "p:").encode()})):
        assert typed(ours.get_multi(keys, **kw)) == typed(peer.get_multi(keys, **kw)), keys


# ---- error replies to a read ------------------------------------------------------------------


REPLIES = {"server_error": b"SERVER_ERROR boom\r\n", "client_error": b"CLIENT_ERROR bad\r\n",
           "too_large": b"SERVER_ERROR object too large for cache\r\n",
           "garbage": b"HELLO WORLD\r\n"}


@pytest.fixture(params=sorted(REPLIES))
def broken(request):
    s = BrokenServer(REPLIES[request.param])
    yield s
    s.close()


def test_a_read_answered_with_an_error_reply_is_a_miss_as_pylibmc(broken, prefix):
    """pylibmc's get, gets and get_multi answer a miss (None, (None, None), {}) for a read
    answered SERVER_ERROR, CLIENT_ERROR, "object too large" or garbage, call after call (only
    stores raise); the drop-in raised ServerError / ClientError / ProtocolError / TooBig. A
    store still raises, its exception carrying status, status_name and status_class
    (docs/errors.md; status_class was missing)."""
    got = []
    for mod in (real_pylibmc, compat_pylibmc):
        c = mod.Client([broken.addr], behaviors={"cas": True, "_poll_timeout": 2000})
        got.append([outcome(c.get, prefix + "k"), outcome(c.gets, prefix + "k"),
                    outcome(c.get_multi, [prefix + "k", prefix + "j"]),
                    outcome(c.get, prefix + "k")])
    assert got[0] == got[1]
    assert got[1][0] == ("ok", ("NoneType", None))
    c = compat_pylibmc.Client([broken.addr])
    with pytest.raises(compat_pylibmc.Error) as e:
        c.set(prefix + "k", "v")
    assert (e.value.status_name, e.value.status_class) in (
        ("MCPOOL_SERVER_ERROR", "SERVER_ERROR"), ("MCPOOL_CLIENT_ERROR", "CLIENT_ERROR"),
        ("MCPOOL_VALUE_TOO_LARGE", "CLIENT_ERROR"), ("MCPOOL_PROTOCOL", "SERVER_ERROR"))
    assert isinstance(e.value.status, int)


def test_set_multi_answered_with_an_error_reply_raises_as_pylibmc(broken, prefix):
    """pylibmc's set_multi and add_multi raise for a store the server answers SERVER_ERROR,
    CLIENT_ERROR, "object too large" or garbage; the drop-in listed the keys as not stored
    (tester finding errors2 1), so code catching pylibmc.Error never saw the failure."""
    for mod in (real_pylibmc, compat_pylibmc):
        for binary in (False, True):
            # (the fake answers one line per read, so a client waiting for a second reply,
            # or a binary one, waits its poll timeout: 300 ms, not 5 s, with each its error)
            c = mod.Client([broken.addr], binary=binary, behaviors={"_poll_timeout": 300})
            for call in (c.set_multi, c.add_multi):
                with pytest.raises(mod.Error):
                    call({prefix + "k1": "v", prefix + "k2": "w"})


def test_get_multi_keeps_the_healthy_servers_hits_beside_an_error_reply(server, prefix):
    """Two servers, one answering SERVER_ERROR to everything: pylibmc's get_multi returns the
    healthy server's hits; the drop-in raised ServerError and lost them. pylibmc's answer
    depends on which server's reply libmemcached reads first (it returns nothing when the error
    comes first, a CI run saw it), so the drop-in is held to the healthy server's keys exactly
    and pylibmc's answer must be among them."""
    bad = BrokenServer(REPLIES["server_error"])
    try:
        keys = [prefix + "m%d" % i for i in range(12)]
        for k in keys:
            real_pylibmc.Client([server.addr]).set(k, k)
        theirs = real_pylibmc.Client([server.addr, bad.addr]).get_multi(keys)
        c = compat_pylibmc.Client([server.addr, bad.addr])
        healthy = {k: k for k in keys if c._mc.server_for(k) == server.addr}
        assert 0 < len(healthy) < len(keys)
        assert c.get_multi(keys) == healthy
        assert theirs.items() <= healthy.items()
    finally:
        bad.close()


def test_a_value_that_does_not_decode_still_raises_beside_error_replies(server, prefix):
    """Never a wrong value: a pickle that does not unpickle raises, as pylibmc, pickle's
    UnpicklingError (tester finding callbacks 3: the drop-in's ServerError); a value that
    does not decode otherwise (an int's digits) the drop-in's ServerError naming the key,
    with status_class."""
    import pickle
    c = compat_pylibmc.Client([server.addr])
    k = prefix + "p"
    assert c.set(k, [1, 2]) and c.prepend(k, b"zz")
    for read in (lambda: c.get(k), lambda: c.get_multi([k])):
        with pytest.raises(pickle.UnpicklingError):
            read()
    with pytest.raises(pickle.UnpicklingError):
        real_pylibmc.Client([server.addr]).get(k)
    server.raw_set(k, 4, b"12a")  # pylibmc's int flag
    for read in (lambda: c.get(k), lambda: c.get_multi([k])):
        with pytest.raises(compat_pylibmc.ServerError, match=k) as e:
            read()
        assert isinstance(e.value, ValueError)
        assert e.value.status_class == "SERVER_ERROR"


class _SetstateRaises:
    """A value whose own __setstate__ raises when it is read back."""

    def __init__(self):
        self.x = 1

    def __setstate__(self, state):
        raise KeyError("user setstate boom")


@pytest.mark.parametrize("binary", [False, True])
def test_an_unpickling_error_is_the_unpicklers_own_as_pylibmcs(server, prefix, binary):
    """A pickle whose class this process lacks, or whose __setstate__ raises: pylibmc raises
    the unpickler's own exception (AttributeError, ImportError, the user's KeyError), from get
    and get_multi, so `except AttributeError` around a get keeps working; the drop-in raised
    its private _UnreadableValue with no __cause__ (tester finding callbacks 3)."""
    k = prefix + "u"
    bodies = {b"cbuiltins\nNoSuchThing\n)\x81.": AttributeError,
              b"cno_such_module_\nThing\n)\x81.": ImportError}
    for body, cls in bodies.items():
        server.raw_set(k, 1, body)  # pylibmc's pickle flag
        for client in (real_pylibmc, compat_pylibmc):
            c = client.Client([server.addr], binary=binary)
            for read in (lambda: c.get(k), lambda: c.get_multi([k, k + "other"])):
                with pytest.raises(cls) as e:
                    read()
                assert type(e.value).__module__ == "builtins", (client, e.value)
    real_pylibmc.Client([server.addr]).set(k, _SetstateRaises())
    for client in (real_pylibmc, compat_pylibmc):
        c = client.Client([server.addr], binary=binary)
        for read in (lambda: c.get(k), lambda: c.get_multi([k])):
            with pytest.raises(KeyError, match="user setstate boom") as e:
                read()
            assert not isinstance(e.value, compat_pylibmc.Error)
            # its own frames kept: the __setstate__ that raised
            assert any(f.name == "__setstate__" for f in e.traceback), client


def test_flags_outside_pylibmcs_layout_raise_where_pylibmc_returns_the_bytes(server, prefix):
    """The documented difference (ffi/python/README.md): flags with bits pylibmc's layout does
    not use (0x7000, another client's mark) make pylibmc ignore them and return the stored
    bytes; the drop-in raises ServerError MCPOOL_VALUE_FORMAT naming the key and the flags
    (the core's rule: never bytes of unknown meaning handed over as the value)."""
    k = prefix + "vf"
    server.raw_set(k, 0x7000, b"abc")
    assert real_pylibmc.Client([server.addr]).get(k) == b"abc"
    with pytest.raises(compat_pylibmc.ServerError, match="%s.*28672" % k) as e:
        compat_pylibmc.Client([server.addr]).get(k)
    assert e.value.status_name == "MCPOOL_VALUE_FORMAT"


# ---- a server that does not answer in time ----------------------------------------------------


def SilentServer():
    """A deliberately silent fake memcached: accepts connections, reads requests, never
    answers; ``requests`` counts the reads that brought bytes."""
    return BrokenServer(None)


def test_a_reply_timeout_disables_no_server_as_pylibmc(prefix):
    """A server that accepts and never answers (_poll_timeout 300 ms): pylibmc's get_multi
    answers {} and every later get/set raises the timeout, the server asked again on each
    call (libmemcached disables no server for a read timeout). The drop-in raised ServerDown
    from get_multi and skipped the server ("marked dead") for retry_timeout."""
    seen = {}
    for mod in (real_pylibmc, compat_pylibmc):
        silent = SilentServer()
        try:
            c = mod.Client([silent.addr], behaviors={"_poll_timeout": 300})
            steps = []
            for name, call in (("get_multi", lambda: c.get_multi([prefix + "a", prefix + "b"])),
                               ("get", lambda: c.get(prefix + "a")),
                               ("set", lambda: c.set(prefix + "a", "v")),
                               ("get_multi", lambda: c.get_multi([prefix + "a"])),
                               ("get", lambda: c.get(prefix + "a"))):
                before = silent.requests
                got = outcome(call)
                assert silent.requests > before, (mod.__name__, name, "server not asked")
                steps.append((name, got if got[0] == "ok" else "raised"))
                if got[0] == "raised":
                    with pytest.raises(mod.Error) as e:
                        call()
                    assert not isinstance(e.value, mod.ServerDown), (mod.__name__, name)
            seen[mod.__name__] = steps
        finally:
            silent.close()
    assert seen["pylibmc"] == seen["mcpool.compat.pylibmc"]
    assert seen["pylibmc"][0] == ("get_multi", ("ok", ("dict", [])))


def test_io_timeout_marks_dead_false_keeps_asking_the_server(prefix):
    """The core option behind it: with io_timeout_marks_dead=false and failure_limit=1 a
    silent server is asked by every call (TimeoutError each time, never SERVER_DEAD); the
    default counts the timeout (marked dead at once)."""
    import mcpool
    silent = SilentServer()
    try:
        c = mcpool.Client([silent.addr], io_timeout=0.2, failure_limit=1,
                          io_timeout_marks_dead=False)
        for _ in range(3):
            with pytest.raises(mcpool.TimeoutError):
                c.get(prefix + "k")
        d = mcpool.Client([silent.addr], io_timeout=0.2, failure_limit=1)
        with pytest.raises(mcpool.TimeoutError):
            d.get(prefix + "k")
        with pytest.raises(mcpool.ConnectionError) as e:
            d.get(prefix + "k")
        assert e.value.status_name == "MCPOOL_SERVER_DEAD"
    finally:
        silent.close()


# ---- serialize/deserialize hooks ----------------------------------------------------------------


@pytest.mark.parametrize("hooks", ["serialize", "deserialize", "both"])
def test_a_subclass_overriding_serialize_is_refused_not_silently_pickled(server, prefix, hooks):
    """pylibmc 1.6 calls a subclass's serialize/deserialize for every store and read (its own
    tests/test_serialization.py: a JSON subclass writes `[1, 2, 3, 4]` with flags 0). The
    drop-in never called them and stored a pickle (flags 1), reading back the tuple: another
    format than the subclass asked for. Now such a subclass raises NotImplementedError when
    constructed; real pylibmc uses the hooks (the behaviour the drop-in does not copy)."""
    import json

    def ser(self, value):
        return json.dumps(value).encode(), 0

    def deser(self, b, flags):
        return json.loads(b.decode())

    body = {"serialize": ser, "deserialize": deser}
    if hooks != "both":
        body = {hooks: body[hooks]}
    real_cls = type("MyClient", (real_pylibmc.Client,), dict(body))
    ours_cls = type("MyClient", (compat_pylibmc.Client,), dict(body))
    k = prefix + "foo"
    if hooks == "both":
        real = real_cls([server.addr])
        real[k] = (1, 2, 3, 4)
        assert server.raw_get(k) == (0, b"[1, 2, 3, 4]")
        assert real[k] == [1, 2, 3, 4]
    with pytest.raises(NotImplementedError, match="serialize"):
        ours_cls([server.addr])
    # the plain class is untouched
    assert compat_pylibmc.Client([server.addr]).set(k, (1, 2))


@pytest.fixture(scope="module")
def unix_server(tmp_path_factory):
    """A memcached listening only on a unix socket; its path."""
    from conftest import start_unix_memcached
    path = str(tmp_path_factory.mktemp("sock") / "mc.sock")
    proc = start_unix_memcached(path)
    yield path
    proc.terminate()
    proc.wait(10)


@pytest.mark.parametrize("order", ["unix_first", "tcp_first", "weighted"])
def test_unix_and_tcp_servers_in_one_list_are_refused_as_pylibmc(unix_server, server, order):
    # measured before: pylibmc raised ValueError("can't mix transport types"), the
    # compat client took the list
    servers = {"unix_first": [unix_server, server.addr],
               "tcp_first": [server.addr, unix_server],
               "weighted": ["localhost:%d:2" % server.port, unix_server + ":2"]}[order]
    answers = []
    for module in (real_pylibmc, compat_pylibmc):
        with pytest.raises(ValueError) as e:
            module.Client(servers)
        answers.append(str(e.value))
    assert answers == ["can't mix transport types"] * 2


def test_a_unix_socket_alone_works_as_in_pylibmc(unix_server, prefix):
    peer = real_pylibmc.Client([unix_server])
    ours = compat_pylibmc.Client([unix_server])
    assert ours.set(prefix + "u", "ours")
    assert peer.get(prefix + "u") == "ours"
    assert peer.set(prefix + "p", {"a": 1})
    assert ours.get(prefix + "p") == {"a": 1}


@pytest.mark.parametrize("size", [1048586, 1048540], ids=["refused-here", "refused-by-memcached"])
@pytest.mark.parametrize("call", ["set_multi", "add_multi"])
def test_multi_store_of_a_value_too_large_raises_toobig_as_pylibmc(server, prefix, size, call):
    """pylibmc's set_multi/add_multi raise TooBig for a value over the item size (over 1 MiB,
    refused by libmemcached; or one memcached answers "object too large for cache"); the
    drop-in returned the key in the list of keys not stored, raising nothing."""
    import os
    big = os.urandom(size)
    got = []
    for mod in (real_pylibmc, compat_pylibmc):
        c = mod.Client([server.addr])
        key = prefix + mod.__name__.replace(".", "_")
        if call == "set_multi":
            c.set(key, "old")  # gone after the refused set, as memcached's refusal leaves it
        else:
            c.delete(key)
        got.append((outcome(getattr(c, call), {key: big}), outcome(c.get, key)))
    assert got[0] == got[1] == (("raised", "TooBig"), ("ok", ("NoneType", None)))


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_replace_missing_and_counter_of_text_raise_as_pylibmc(server, prefix, binary):
    """pylibmc with binary=True raises NotFound for a replace of a missing key and
    UnknownReadFailure for incr/decr/incr_multi of a value that is not a number (text:
    False and ClientError); the drop-in answered False and ClientError on both protocols."""
    got = []
    for mod in (real_pylibmc, compat_pylibmc):
        c = mod.Client([server.addr], binary=binary)
        p = prefix + mod.__name__.replace(".", "_")
        c.delete(p + "miss")
        c.set(p + "txt", "abc")
        c.set(p + "ex", "v")
        got.append([outcome(c.replace, p + "miss", "x"), outcome(c.replace, p + "ex", "w"),
                    outcome(c.incr, p + "txt"), outcome(c.decr, p + "txt", 2),
                    outcome(c.incr_multi, [p + "txt"]), outcome(c.get, p + "miss"),
                    outcome(c.get, p + "ex"), outcome(c.incr, p + "miss")])
    assert got[0] == got[1]
    assert got[0][0] == (("raised", "NotFound") if binary else ("ok", ("bool", False)))


INCR_MULTI_MIXES = [["nn", "missing"], ["missing", "nn"], ["nn", "ok"], ["ok", "nn"],
                    ["nn", "nn2"], ["nn", "missing", "ok"], ["missing", "nn", "missing2"],
                    ["ok", "missing"], ["nn"], ["ok", "ok2"], ["nn", "missing", "nn2"]]


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_incr_multi_with_failing_keys_raises_as_pylibmc(server, prefix, binary):
    """(tester finding protocols 2) pylibmc increments every key and raises "N keys failed"
    of the class of its last key's outcome when one key failed (that key's when it is the
    last, NotFound when the last is missing, Error when it was incremented), Error when
    several failed: with a missing key and one that is not a number, the order given decides.
    The drop-in always raised the non-numeric key's class. Side by side, both orders, the
    keys' values after."""
    got = []
    for mod in (real_pylibmc, compat_pylibmc):
        c = mod.Client([server.addr], binary=binary)
        p = prefix + mod.__name__.replace(".", "_") + ":"
        steps = []
        for keys in INCR_MULTI_MIXES:
            c.set_multi({p + "nn": "x", p + "nn2": "y", p + "ok": "1", p + "ok2": "1"})
            c.delete_multi([p + "missing", p + "missing2"])
            res = outcome(c.incr_multi, [p + k for k in keys])
            try:
                c.incr_multi([p + k for k in keys])
            except mod.Error as e:
                words = str(e).split(" (")[0]
            else:
                words = None
            steps.append((keys, res, words,
                          unprefixed(c.get_multi([p + "ok", p + "ok2", p + "nn"]), p)))
        got.append(steps)
    assert got[0] == got[1]
    mixed = {tuple(keys): res for keys, res, _, _ in got[1]}
    assert mixed[("nn", "missing")] == ("raised", "NotFound")
    assert mixed[("missing", "nn")] == ("raised", "UnknownReadFailure" if binary
                                        else "ClientError")


def test_a_timeout_raises_pylibmcs_base_error_not_connection_error(prefix, blackholed):
    """Tester finding (words F4): a reply timeout (and a connect timeout) raised the drop-in's
    ConnectionError; pylibmc 1.6.3 has no class for libmemcached's MEMCACHED_TIMEOUT (error
    31) and raises the base pylibmc.Error, so `except pylibmc.ConnectionError` before
    `except pylibmc.Error` took another branch. Side by side, class by class."""
    seen = {}
    for mod in (real_pylibmc, compat_pylibmc):
        silent = SilentServer()
        try:
            c = mod.Client([silent.addr], behaviors={"_poll_timeout": 300})
            k = prefix + "k"
            steps = [outcome(c.get, k), outcome(c.set, k, "v"), outcome(c.delete, k),
                     outcome(c.incr, k), outcome(c.set_multi, {k: "v"})]
        finally:
            silent.close()
        # a connect that times out: the first call (later ones find the server disabled)
        d = mod.Client([blackholed], behaviors={"connect_timeout": 300})
        steps.append(outcome(d.set, prefix + "k", "v"))
        seen[mod.__name__] = steps
    assert seen["pylibmc"] == seen["mcpool.compat.pylibmc"]
    assert seen["pylibmc"][0] == ("raised", "Error")


def test_incr_multi_refuses_a_delta_pylibmc_would_apply_modulo_2_32(server, prefix):
    """pylibmc parses incr_multi's delta as a C unsigned int: 2**32+1 adds 1, 2**40 adds 0
    (tester finding python 1). Such a delta is refused (OverflowError, nothing sent), never
    applied as another amount; up to 2**32-1 both apply it exactly."""
    r = real_pylibmc.Client([server.addr])
    c = compat_pylibmc.Client([server.addr])
    k = prefix + "ctr"
    for big in (2 ** 32 + 1, 2 ** 40, 2 ** 63):
        r.set(k, "5")
        r.incr_multi([k], delta=big)
        assert int(r.get(k)) != 5 + big, "pylibmc applies another amount"
        c.set(k, "5")
        with pytest.raises(OverflowError):
            c.incr_multi([k], delta=big)
        assert int(c.get(k)) == 5, "nothing sent"
    for exact in (1, 2 ** 31, 2 ** 32 - 1):
        for client in (r, c):
            client.set(k, "5")
            client.incr_multi([k], delta=exact)
            assert int(client.get(k)) == 5 + exact, (client, exact)


def test_the_exception_classes_are_written_out_for_type_checkers():
    """mypy reads the module's source (the package ships py.typed): classes made at run time
    with globals()[name] = type(...) were invisible to it ("Module has no attribute
    NotFound", tester finding python 5). Each is a class statement of the module."""
    import ast
    with open(compat_pylibmc.__file__) as f:
        tree = ast.parse(f.read())
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    names = [n for n, _ in compat_pylibmc.exceptions]
    assert set(names) - {"Error"} <= defined, set(names) - defined
    assert all(issubclass(e, compat_pylibmc.Error) for _, e in compat_pylibmc.exceptions)


def test_a_value_that_does_not_decode_is_a_value_error(server, prefix):
    """Tester finding pycompat 5: pylibmc's int() raises ValueError for an integer's body that
    is not one; mcpool raised ServerError, which ``except ValueError`` did not catch. Now
    ``mcpool.ValueFormatError`` is a ServerError and a ValueError, and the drop-in's class is
    its ServerError and a ValueError."""
    k = prefix + "int"
    server.raw_set(k, 2, b"9 5")  # pylibmc's integer flag, a body int() refuses
    with pytest.raises(ValueError) as e:
        mcpool.Client([server.addr], preset="pylibmc").get(k)
    assert isinstance(e.value, mcpool.ValueFormatError) and isinstance(e.value, mcpool.ServerError)
    with pytest.raises(ValueError) as e:
        compat_pylibmc.Client([server.addr]).get(k)
    assert isinstance(e.value, compat_pylibmc.ServerError)


# -- keys pylibmc refuses before sending (tester finding retest41b 1) --------------------------

# the server's count of commands it was sent that a multi call's keys reach
_SENT_STATS = ("cmd_get", "cmd_set", "incr_hits", "incr_misses", "decr_hits", "decr_misses",
               "delete_hits", "delete_misses", "cmd_touch")


def _sent(addr):
    """How many key commands the memcached at addr has been sent."""
    stats = mcpool.Client([addr]).stats()
    (one,) = stats.values()
    return sum(int(one[n]) for n in _SENT_STATS)


# keys pylibmc's binding refuses before it sends anything (its class, and its words where the
# drop-in uses them: the length and UTF-8 errors)
REFUSED_FIRST = [("too_long", "x" * 251), ("int", 7), ("none", None),
                 ("bytearray", bytearray(b"k")), ("lone_surrogate", "\ud800")]


def _multi_calls(a, b, bad):
    """Each multi call with bad between two keys pylibmc sends: (name, call(client))."""
    return [
        ("incr_multi", lambda c: c.incr_multi([a, bad, b])),
        ("incr_multi bad last", lambda c: c.incr_multi([a, b, bad])),
        ("incr_multi key_prefix", lambda c: c.incr_multi([a[-2:], bad, b[-2:]],
                                                         key_prefix=a[:-2])),
        ("get_multi", lambda c: c.get_multi([a, bad, b])),
        ("set_multi", lambda c: c.set_multi(dict([(a, "5"), (bad, "v"), (b, "5")]))),
        ("add_multi", lambda c: c.add_multi(dict([(a + "n", "5"), (bad, "v"), (b + "n", "5")]))),
        ("delete_multi", lambda c: c.delete_multi([a, bad, b])),
    ]


def _refusal(exc):
    """The observable refusal: its class, and its words for the errors pylibmc words so."""
    if exc is None:
        return None
    words = str(exc) if isinstance(exc, (ValueError, UnicodeError)) else None
    return (type(exc).__name__, words)


@pytest.mark.parametrize("bad", [k for _, k in REFUSED_FIRST],
                         ids=[n for n, _ in REFUSED_FIRST])
@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_multi_calls_refuse_before_sending_where_pylibmc_does(server, prefix, bad, binary):
    """(tester finding retest41b 1) pylibmc checks every key of incr_multi, get_multi,
    set_multi and add_multi before it sends one: a key too long (ValueError), not str or
    bytes (TypeError) or a str UTF-8 cannot encode (UnicodeEncodeError) raises and nothing
    is sent; delete_multi deletes the keys before it, then raises. The drop-in's incr_multi
    had incremented the other keys (a caller retrying counted twice), its set_multi,
    add_multi and delete_multi stored or deleted the others around a lone surrogate, and
    delete_multi deleted none before a key of the wrong type. Side by side: the class (the
    words of the length and UTF-8 errors), the keys' values after, and how many commands the
    server was sent."""
    seen = {}
    for mod in (real_pylibmc, compat_pylibmc):
        p = prefix + ("r" if mod is real_pylibmc else "c")
        a, b = p + "_a", p + "_b"
        c = mod.Client([server.addr], binary=binary)
        look = real_pylibmc.Client([server.addr], binary=binary)
        steps = []
        for name, call in _multi_calls(a, b, bad):
            look.delete_multi([a + "n", b + "n"])
            look.set_multi({a: "1", b: "1"})
            before = _sent(server.addr)
            try:
                call(c)
                exc = None
            except Exception as e:  # noqa: BLE001 - the class is the observable result
                exc = e
            sent = _sent(server.addr) - before
            after = unprefixed(look.get_multi([a, b, a + "n", b + "n"]), p)
            steps.append((name, _refusal(exc), sent, after))
        seen[mod] = steps
    theirs, ours = seen[real_pylibmc], seen[compat_pylibmc]
    assert ours == theirs
    by_name = {name: (refusal, sent, after) for name, refusal, sent, after in ours}
    assert by_name["incr_multi"][1:] == (0, {"_a": "1", "_b": "1"})  # nothing incremented
    assert by_name["delete_multi"][1:] == (1, {"_b": "1"})  # the key before it, alone


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_keys_pylibmc_sends_are_still_sent_beside_a_refused_one(server, binary):
    """What pylibmc does not refuse before sending is still sent, the others with it: in
    incr_multi an empty key and one only the key_prefix makes too long (pylibmc's binding
    checks the key alone; libmemcached refuses the prefixed key alone, BadKeyProvided when it
    is the last), and on the text protocol a key with a space (memcached's error). get_multi
    with a key only the key_prefix makes too long raises BadKeyProvided, nothing asked
    (libmemcached's mget checks every key first)."""
    k247 = "y" * 247  # 251 bytes under a 4-byte key_prefix
    seen = {}
    for mod in (real_pylibmc, compat_pylibmc):
        pre = ("r" if mod is real_pylibmc else "c") + "41:"
        n1, n2 = pre + "n1", pre + "n2"
        cases = [([n1, "", n2], ""), (["n1", "n2", k247], pre), (["n1", k247, "zz"], pre),
                 ([k247], pre), (["n1", k247, k247, "n2"], pre), (["n1", "", k247], pre)] + \
            ([] if binary else [([n1, "a b", n2], ""), (["n1", "a b"], pre)])
        c = mod.Client([server.addr], binary=binary)
        look = real_pylibmc.Client([server.addr], binary=binary)
        steps = []
        for keys, key_prefix in cases:
            look.set_multi({n1: "1", n2: "1"})
            look.delete_multi([pre + "zz", pre])
            before = _sent(server.addr)
            try:
                c.incr_multi(keys, key_prefix=key_prefix)
                res = None
            except mod.Error as e:
                res = (type(e).__name__, str(e).split(" (")[0])
            steps.append((len(steps), res, _sent(server.addr) - before,
                          unprefixed(look.get_multi([n1, n2]), pre)))
        before = _sent(server.addr)
        steps.append(("get_multi", outcome(c.get_multi, ["n1", k247], key_prefix=pre),
                      _sent(server.addr) - before))
        seen[mod] = steps
    assert seen[compat_pylibmc] == seen[real_pylibmc]
    ours = seen[compat_pylibmc]
    assert ours[1][1:] == (("BadKeyProvided", "1 keys failed"), 2, {"n1": "2", "n2": "2"})
    assert ours[-1][1:] == (("raised", "BadKeyProvided"), 0)
