"""Values and placement shared with pylibmc and python-memcached (the real libraries), in
their value formats (value_format="pylibmc" / "python-memcached")."""
import pytest

import mcpool

from conftest import require  # noqa: E402

pylibmc = require("pylibmc", "python3-pylibmc")
memcache = require("memcache", "python3-memcache")

VALUES = {
    "bytes": b"\x00bin\xff",
    "str": "h\u00e9llo \u2603",
    "int": 123456789,
    "neg": -42,
    "big": 2 ** 70,
    "dict": {"a": [1, 2], "b": "c"},
}
THRESHOLD = 1000
BIG_STR = "compress me " * 500   # 6000 bytes, above the threshold
SMALL_STR = "s" * 900            # below


def _legacy(kind, addrs):
    if kind == "pylibmc":
        return pylibmc.Client(addrs, binary=False)
    return memcache.Client(addrs)


def _legacy_set(kind, c, k, v, compress):
    return c.set(k, v, 0, THRESHOLD if compress else 0)


@pytest.mark.parametrize("kind", ["pylibmc", "python-memcached"])
@pytest.mark.parametrize("compress", [False, True])
def test_mcpool_writes_legacy_reads(server, prefix, kind, compress):
    mc = mcpool.Client([server.addr], pickle=True, min_compress_len=THRESHOLD if compress else 0,
                       value_format=kind)
    other = _legacy(kind, [server.addr])
    values = dict(VALUES, small=SMALL_STR, large=BIG_STR)
    for name, v in values.items():
        assert mc.set(prefix + name, v)
    for name, v in values.items():
        assert other.get(prefix + name) == v, name
    flags, data = server.raw_get(prefix + "large")
    assert bool(flags & 8) == compress
    assert server.raw_get(prefix + "small")[0] & 8 == 0


@pytest.mark.parametrize("kind", ["pylibmc", "python-memcached"])
@pytest.mark.parametrize("compress", [False, True])
def test_legacy_writes_mcpool_reads(server, prefix, kind, compress):
    mc = mcpool.Client([server.addr], pickle=True, value_format=kind)
    other = _legacy(kind, [server.addr])
    values = dict(VALUES, small=SMALL_STR, large=BIG_STR)
    for name, v in values.items():
        assert _legacy_set(kind, other, prefix + name, v, compress)
    flags, _ = server.raw_get(prefix + "large")
    assert bool(flags & 8) == compress
    # an int beyond 64 bits, stored by the legacy client as its digits, reads back exact
    assert values["big"] > 2**63 and mc.get(prefix + "big") == values["big"]
    for name, v in values.items():
        assert mc.get(prefix + name) == v, name
    assert mc.get_multi([prefix + n for n in values]) == {prefix + n: v for n, v in values.items()}


@pytest.mark.parametrize("kind", ["pylibmc", "python-memcached"])
def test_bool_from_legacy(server, prefix, kind):
    """pylibmc stores True as flag 2 "1" (the pylibmc format does the same: True reads back
    as True); python-memcached pickles it, and its format has no bool kind."""
    other = _legacy(kind, [server.addr])
    other.set(prefix + "t", True)
    got = mcpool.Client([server.addr], pickle=True, value_format=kind).get(prefix + "t")
    assert got == 1 and got is not False
    mc = mcpool.Client([server.addr], value_format=kind, pickle=kind == "python-memcached")
    mc.set(prefix + "t2", True)
    assert other.get(prefix + "t2") == 1


def test_legacy_pickle_not_loaded_without_opt_in(server, prefix):
    memcache.Client([server.addr]).set(prefix + "d", {"a": 1})
    with pytest.raises(mcpool.ServerError, match=prefix + "d"):
        mcpool.Client([server.addr], value_format="python-memcached").get(prefix + "d")


N_KEYS = 300


def _where(servers, keys):
    """Which server index holds each key, asking each server alone."""
    singles = [mcpool.Client([s.addr], value_format="libmemcached") for s in servers]
    out = {}
    for k in keys:
        hits = [i for i, c in enumerate(singles) if c.get(k) is not None]
        assert len(hits) == 1, (k, hits)
        out[k] = hits[0]
    return out


@pytest.mark.parametrize("kind,profile", [("pylibmc", "libmemcached-ketama"),
                                          ("python-memcached", "python-memcached")])
def test_same_server_per_key(servers, prefix, kind, profile):
    addrs = [s.addr for s in servers]
    if kind == "pylibmc":
        other = pylibmc.Client(addrs, binary=False, behaviors={"ketama": True})
    else:
        other = memcache.Client(addrs)
    mc = mcpool.Client(addrs, distribution=profile, value_format=kind)
    # legacy writes, mcpool reads from the same servers
    keys = [prefix + "L%d" % i for i in range(N_KEYS)]
    for i, k in enumerate(keys):
        assert other.set(k, i)
    where = _where(servers, keys)
    assert len(set(where.values())) == len(servers)  # the keys are spread
    for k in keys:
        assert mc.server_for(k) == addrs[where[k]], k
    assert mc.get_multi(keys) == {k: i for i, k in enumerate(keys)}
    # mcpool writes, legacy reads
    keys = [prefix + "M%d" % i for i in range(N_KEYS)]
    for i, k in enumerate(keys):
        assert mc.set(k, "v%d" % i)
    where = _where(servers, keys)
    for k in keys:
        assert mc.server_for(k) == addrs[where[k]]
    assert other.get_multi(keys) == {k: "v%d" % i for i, k in enumerate(keys)}
