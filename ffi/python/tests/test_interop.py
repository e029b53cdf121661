"""Values and placement shared with pylibmc and python-memcached (the real libraries), in
their value formats (value_format="pylibmc" / "python-memcached")."""
import pickle

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


def _bool_peers(addr, port):
    """Each Python value format's real peers, as (format, name, client): every one writes a
    bool in the format's way (pylibmc: flag 2 "1"/"0"; the others pickled under flag 1)."""
    from pymemcache import serde
    from pymemcache.client.base import Client as PymemcacheClient
    pym = lambda **kw: PymemcacheClient(("127.0.0.1", port), **kw)  # noqa: E731
    return [
        ("pylibmc", "pylibmc", pylibmc.Client([addr])),
        ("pylibmc", "pylibmc binary", pylibmc.Client([addr], binary=True)),
        ("python-memcached", "python-memcached", memcache.Client([addr])),
        ("python-memcached", "python-memcached pickleProtocol=-1",
         memcache.Client([addr], pickleProtocol=-1)),
        ("pymemcache", "pymemcache python_memcache_serializer",
         pym(serializer=serde.python_memcache_serializer,
             deserializer=serde.python_memcache_deserializer)),
        ("pymemcache", "pymemcache pickle_serde", pym(serde=serde.pickle_serde)),
    ]


def _ours(fmt, addr):
    """Every surface of mcpool that writes the format: the Client, and the drop-in."""
    import mcpool.compat.memcache
    import mcpool.compat.pylibmc
    out = [("mcpool.Client", mcpool.Client([addr], value_format=fmt, pickle=True))]
    if fmt == "pylibmc":
        out.append(("compat.pylibmc", mcpool.compat.pylibmc.Client([addr])))
    if fmt == "python-memcached":
        out.append(("compat.memcache", mcpool.compat.memcache.Client([addr])))
    return out


def test_bool_written_as_each_peer_writes_it(server, prefix):
    """A bool is written as the format's peer writes it, by every surface (mcpool.Client, the
    drop-ins): pylibmc stores True as its integer flag 2 "1" and reads it back as 1; python-
    memcached and pymemcache pickle it (flag 1) and read True. Each peer reads ours as it reads
    its own, and we read each peer's as that peer does (it used to be the int 1 everywhere:
    a python-memcached reader got 1 for True)."""
    for fmt, name, peer in _bool_peers(server.addr, server.port):
        for v in (True, False):
            k = prefix + "peer"
            assert peer.set(k, v)
            peer_flags, _ = server.raw_get(k)
            peer_reads = peer.get(k)
            # what the peer reads back of its own: pylibmc the int, the others the bool
            expected = int(v) if fmt == "pylibmc" else v
            assert type(peer_reads) is type(expected) and peer_reads == expected, name
            for ours_name, ours in _ours(fmt, server.addr):
                got = ours.get(k)
                assert type(got) is type(expected) and got == expected, (name, ours_name, v)
                k2 = prefix + "ours"
                assert ours.set(k2, v) is True
                flags, body = server.raw_get(k2)
                assert flags == peer_flags, (name, ours_name, v, flags, peer_flags)
                if fmt == "pylibmc":
                    assert body == (b"1" if v else b"0")
                else:
                    assert pickle.loads(body) is v
                back = peer.get(k2)
                assert type(back) is type(expected) and back == expected, (name, ours_name, v)
                back = ours.get(k2)
                assert type(back) is type(expected) and back == expected, (name, ours_name, v)
                # and through the batch call
                assert ours.set_multi({k2: v}) == []
                assert server.raw_get(k2)[0] == peer_flags, (name, ours_name)
                back = peer.get(k2)
                assert type(back) is type(expected) and back == expected, (name, ours_name, v)


@pytest.mark.parametrize("fmt", ["python-memcached", "pymemcache"])
def test_bool_under_pickling_format_needs_pickle(server, prefix, fmt):
    """Without pickle=True a client could not read back the pickled bool its format writes:
    storing one raises (nothing stored), never stores another kind."""
    mc = mcpool.Client([server.addr], value_format=fmt)
    for call in (lambda: mc.set(prefix + "t", True), lambda: mc.set_multi({prefix + "t": False})):
        with pytest.raises(mcpool.ClientTypeError, match="pickle"):
            call()
        assert server.raw_get(prefix + "t") is None


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
