"""Configuration of the drop-ins means what it means in the peer library, checked against the
real peer (python-memcached 1.59, pylibmc 1.6.3 over libmemcached 1.1.4) on real memcached."""
import os
import socket
import threading
import time

import pytest

import mcpool.compat.memcache as drop_memcache
import mcpool.compat.pylibmc as drop_pylibmc
from conftest import Server, require

memcache = require("memcache", "python3-memcache")
pylibmc = require("pylibmc", "python3-pylibmc")


@pytest.fixture(scope="module")
def big_server():
    s = Server("-I", "4m")
    yield s
    s.stop()


# ---- python-memcached: server_max_value_length ------------------------------------------------


@pytest.mark.parametrize("mod", [memcache, drop_memcache], ids=["python-memcached", "drop-in"])
def test_server_max_value_length_0_is_no_limit(big_server, prefix, mod):
    """python-memcached reads 0 as "no limit of its own": a 1.5 MB value is stored on a
    memcached that takes it (the drop-in kept a 1 MiB limit and returned 0, value lost)."""
    v = os.urandom(1500000)
    c = mod.Client([big_server.addr], server_max_value_length=0)
    k = prefix + "big"
    assert c.set(k, v)
    assert c.get(k) == v


@pytest.mark.parametrize("mod", [memcache, drop_memcache], ids=["python-memcached", "drop-in"])
def test_server_max_value_length_given_is_the_limit(big_server, prefix, mod):
    c = mod.Client([big_server.addr], server_max_value_length=1000)
    k = prefix + "limited"
    assert not c.set(k, os.urandom(1001))
    assert c.get(k) is None
    assert c.set(k, b"x" * 1000)


# ---- pylibmc: timeouts -------------------------------------------------------------------------


@pytest.fixture
def silent():
    """A server that accepts connections and never answers."""
    with socket.socket() as lsn:
        lsn.bind(("127.0.0.1", 0))
        lsn.listen(64)
        yield "127.0.0.1:%d" % lsn.getsockname()[1]


def waited(mod, addr, behaviors):
    c = mod.Client([addr], behaviors=behaviors)
    t0 = time.monotonic()
    with pytest.raises(mod.Error):
        c.get("k")
    return time.monotonic() - t0


PYLIBMCS = pytest.mark.parametrize("mod", [pylibmc, drop_pylibmc], ids=["pylibmc", "drop-in"])


@PYLIBMCS
def test_poll_timeout_is_the_wait_for_a_reply(silent, mod):
    """libmemcached waits for a reply _poll_timeout ms (the drop-in ignored it: 5 s)."""
    dt = waited(mod, silent, {"_poll_timeout": 300})
    assert 0.25 <= dt < 1.5, dt


@PYLIBMCS
@pytest.mark.parametrize("name", ["receive_timeout", "send_timeout"])
def test_receive_and_send_timeouts_shorten_no_wait(silent, mod, name):
    """SO_RCVTIMEO/SO_SNDTIMEO (us) do not shorten pylibmc's wait (the drop-in made 0.3 s of
    receive_timeout its io_timeout)."""
    dt = waited(mod, silent, {name: 300000, "_poll_timeout": 1500})
    assert 1.3 <= dt < 4, dt


@pytest.mark.parametrize("name", ["connect_timeout", "_poll_timeout"])
def test_a_timeout_of_0_fails_every_call_of_pylibmc_and_is_refused_by_the_drop_in(
        server, prefix, name):
    """Tester finding (words F2): connect_timeout 0 was silently dropped (the drop-in kept
    4 s and worked) and _poll_timeout 0 was refused under the core's name (io_timeout).
    pylibmc takes both and then fails every call; the drop-in refuses them, naming the
    behavior, in the constructor and in set_behaviors."""
    c = pylibmc.Client([server.addr], behaviors={name: 0})
    failed = 0
    for i in range(3):
        try:
            c.set(prefix + "k%d" % i, "v")
        except pylibmc.Error:
            failed += 1
    if name == "connect_timeout":  # a connect is never already done: every call fails
        assert failed == 3
    with pytest.raises(drop_pylibmc.Error, match="behavior %s 0" % name):
        drop_pylibmc.Client([server.addr], behaviors={name: 0})
    d = drop_pylibmc.Client([server.addr])
    with pytest.raises(drop_pylibmc.Error, match="behavior %s 0" % name):
        d.behaviors = {name: 0}
    assert d.set(prefix + "k", "v") and d.behaviors[name] != 0


def test_poll_timeout_0_fails_every_call(server, prefix):
    """pylibmc times a call out at once unless its reply is already there (on loopback it
    sometimes is, so its outcome is not asserted); the drop-in refuses the setting: an
    error, never a client that waits."""
    with pytest.raises(drop_pylibmc.Error):
        drop_pylibmc.Client([server.addr], behaviors={"_poll_timeout": 0}).set(prefix + "k", "v")


# ---- pylibmc: failure_limit ------------------------------------------------------------------


@pytest.fixture
def dead():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def outcomes(mod, addr, behaviors, n=4):
    c = mod.Client([addr], behaviors=behaviors)
    out = []
    for _ in range(n):
        try:
            c.get("k")
            out.append("ok")
        except mod.Error as e:
            out.append(type(e).__name__)
    return out


@pytest.mark.parametrize("behaviors", [
    {}, {"failure_limit": 5}, {"failure_limit": 2}, "copied", {"auto_eject": True},
    {"auto_eject": True, "failure_limit": 5}, {"remove_failed": 3},
], ids=["none", "failure_limit-5", "failure_limit-2", "copied", "auto_eject",
        "auto_eject-failure_limit-5", "remove_failed-3"])
def test_failure_limit_changes_no_dead_server_handling(dead, behaviors):
    """libmemcached disables a server for retry_timeout at its first failure (ServerDown,
    no connect tried) whatever failure_limit says; giving pylibmc's default (5, as
    get_behaviors() reports it) made the drop-in try to connect on each of the next calls."""
    if behaviors == "copied":
        behaviors = dict(drop_pylibmc.Client([dead]).get_behaviors())
        assert behaviors["failure_limit"] == 5
    want = outcomes(pylibmc, dead, dict(behaviors))
    assert want == ["ConnectionError", "ServerDown", "ServerDown", "ServerDown"]
    assert outcomes(drop_pylibmc, dead, dict(behaviors)) == want


# ---- compression thresholds and levels ----------------------------------------------------------


def zlib_stored(server, key):
    """(flags, the first two bytes of the body: a zlib header's FLEVEL tells the level)."""
    flags, body = server.raw_get(key)
    return flags, body[:2].hex()


@pytest.mark.parametrize("mod", [memcache, drop_memcache], ids=["python-memcached", "drop-in"])
def test_python_memcached_compresses_above_min_compress_len(server, prefix, mod):
    """python-memcached compresses a value longer than min_compress_len (`lv >
    min_compress_len`), not one of exactly that length (the drop-in did, and its append
    then made the value unreadable)."""
    c = mod.Client([server.addr])
    got = {}
    for n in (99, 100, 101):
        c.set(prefix + "s%d" % n, "a" * n, min_compress_len=100)
        assert c.set_multi({prefix + "m%d" % n: "a" * n}, min_compress_len=100) == []
        got[n] = (server.raw_get(prefix + "s%d" % n)[0], server.raw_get(prefix + "m%d" % n)[0])
    assert got == {99: (16, 16), 100: (16, 16), 101: (24, 24)}
    c.set(prefix + "log", "a" * 100, min_compress_len=100)
    c.append(prefix + "log", "more")
    assert c.get(prefix + "log") == "a" * 100 + "more"


@PYLIBMCS
def test_pylibmc_compresses_from_min_compress_len(server, prefix, mod):
    """pylibmc compresses a value of at least min_compress_len bytes (unchanged)."""
    c = mod.Client([server.addr])
    for n in (99, 100, 101):
        c.set(prefix + "s%d" % n, "a" * n, min_compress_len=100)
    assert [server.raw_get(prefix + "s%d" % n)[0] for n in (99, 100, 101)] == [16, 24, 24]


# a text zlib shrinks differently at each level
TEXT = "".join("%d:%s," % (i, "abc"[i % 3] * (i % 7)) for i in range(2000))


@pytest.mark.parametrize("level, want", [
    (-1, (24, "789c")), (0, (16, TEXT[:2].encode().hex())), (1, (24, "7801")),
    (5, (24, "785e")), (9, (24, "78da")),
])
@pytest.mark.parametrize("op", ["set", "add", "replace", "set_multi", "add_multi"])
def test_pylibmc_compress_level_per_call(server, prefix, op, level, want):
    """pylibmc's compress_level: 0 stores the value uncompressed, 1..9 compress at that level
    (the zlib header's FLEVEL says which), -1 zlib's default; the drop-in ignored it (always
    the default level, 0 compressed too)."""
    stored = {}
    for mod in (pylibmc, drop_pylibmc):
        c = mod.Client([server.addr])
        k = "%s%s-%s-%d" % (prefix, mod.__name__, op, level)
        if op == "replace":
            c.set(k, "old")
        store = getattr(c, op)
        if op.endswith("_multi"):
            assert store({k: TEXT}, min_compress_len=10, compress_level=level) == []
        else:
            assert store(k, TEXT, min_compress_len=10, compress_level=level)
        stored[mod] = zlib_stored(server, k)
        assert c.get(k) == TEXT
    assert stored[pylibmc] == want
    assert stored[drop_pylibmc] == want


@PYLIBMCS
@pytest.mark.parametrize("level", [-2, 10])
def test_pylibmc_compress_level_out_of_range_is_value_error(server, prefix, mod, level):
    c = mod.Client([server.addr])
    with pytest.raises(ValueError, match="compress_level must be between 0 and 9"):
        c.set(prefix + "k", "v" * 100, min_compress_len=10, compress_level=level)


@PYLIBMCS
def test_pylibmc_compress_level_without_min_compress_len_compresses_nothing(server, prefix, mod):
    c = mod.Client([server.addr])
    assert c.set(prefix + "k", TEXT, compress_level=9)
    assert c.set_multi({prefix + "m": TEXT}, compress_level=9) == []
    assert server.raw_get(prefix + "k")[0] == 16 and server.raw_get(prefix + "m")[0] == 16


# ---- the binding's own per-call level ----------------------------------------------------------


def test_native_compress_level_and_its_errors(server, prefix):
    import mcpool
    mc = mcpool.Client([server.addr], value_format="pylibmc")
    for level, head in ((1, "7801"), (9, "78da")):
        assert mc.set(prefix + "k%d" % level, TEXT, min_compress_len=10, compress_level=level)
        assert zlib_stored(server, prefix + "k%d" % level) == (24, head)
        assert mc.get(prefix + "k%d" % level) == TEXT
    with pytest.raises(mcpool.ClientError, match="give both"):
        mc.set(prefix + "k", TEXT, compress_level=1)
    with pytest.raises(mcpool.ClientError, match="compression_level 10 is outside zlib"):
        mc.set(prefix + "k", TEXT, min_compress_len=10, compress_level=10)
    with pytest.raises(mcpool.ClientError, match="between 0 and 22"):
        mc.set_multi({prefix + "k": TEXT}, min_compress_len=10, compress_level=23)
    with pytest.raises(mcpool.ClientTypeError):
        mc.set(prefix + "k", TEXT, min_compress_len=10, compress_level="9")
    assert server.raw_get(prefix + "k") is None
