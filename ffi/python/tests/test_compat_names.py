"""The names a program imports from the library it replaces exist in the drop-ins, with the
library's values (tester findings pyteam 1, 2, 4), and the keyword forms the stubs promise
work (pyteam 3, 5)."""
import math

import pytest

from conftest import require


def test_pylibmc_names_match_pylibmc():
    real = require("pylibmc", "python3-pylibmc")
    import mcpool.compat.pylibmc as drop
    assert drop.MemcachedError is drop.Error
    consts = [n for n in dir(real)
              if n.startswith(("hash_", "distribution_", "server_type_"))]
    assert len(consts) >= 20
    for n in consts:
        assert getattr(drop, n) == getattr(real, n), n
    assert drop.libmemcached_version_hex == real.libmemcached_version_hex
    from mcpool.compat.pylibmc.pools import ClientPool, ThreadMappedPool
    from mcpool.compat.pylibmc.consts import hash_md5, distribution_consistent_ketama
    from mcpool.compat.pylibmc.client import Client
    assert (ClientPool, ThreadMappedPool, Client) == (drop.ClientPool, drop.ThreadMappedPool,
                                                     drop.Client)
    assert (hash_md5, distribution_consistent_ketama) == (real.hash_md5,
                                                         real.distribution_consistent_ketama)
    missing = {n for n in dir(real) if not n.startswith("_")} - set(dir(drop))
    assert missing == set(), missing
    # retest23 9: the submodules' public names too (pylibmc's imports aside)
    for sub in ("consts", "client", "pools"):
        real_sub = __import__("pylibmc." + sub, fromlist=["x"])
        mine = getattr(drop, sub)
        skip = {"exc", "key", "modpkg", "modself", "name", "sys", "value", "Queue",
                "contextmanager", "threading"}
        missing = {n for n in dir(real_sub) if not n.startswith("_")} - set(dir(mine)) - skip
        assert missing == set(), (sub, missing)
    for spec in ("127.0.0.1", "udp:127.0.0.1", "/var/run/m.sock", "127.0.0.1:22122:2",
                 "[::1]:22122:3", "[::1]", "h:1"):
        assert drop.client.translate_server_spec(spec) == \
            real.client.translate_server_spec(spec), spec
    assert drop.client.translate_server_spec("h", port=5, weight=2) == \
        real.client.translate_server_spec("h", port=5, weight=2)
    assert drop.client.translate_server_specs(["h:1", (1, "a", 2)]) == \
        real.client.translate_server_specs(["h:1", (1, "a", 2)])


def test_pylibmc_memcached_error_catches_a_server_error():
    import mcpool.compat.pylibmc as drop
    mc = drop.Client(["127.0.0.1:1"])
    with pytest.raises(drop.MemcachedError):
        mc.set("k", "v")


def test_pymemcache_modules_hold_pymemcache_names():
    real_base = require("pymemcache.client.base", "python3-pymemcache")
    import mcpool.compat.pymemcache  # noqa: F401
    from mcpool.compat.pymemcache.client import base
    for n in dir(real_base):
        if n.startswith("Memcache") and n.endswith("Error"):
            assert issubclass(getattr(base, n), Exception), n
    from mcpool.compat.pymemcache.client.retrying import RetryingClient
    assert RetryingClient is mcpool.compat.pymemcache.RetryingClient


class _Flaky:
    """A client whose `get` fails `fails` times, then answers."""

    def __init__(self, fails, exc):
        self.fails, self.exc, self.calls = fails, exc, 0

    def get(self, key):
        self.calls += 1
        if self.calls <= self.fails:
            raise self.exc("try %d" % self.calls)
        return b"v"


def test_retrying_client_retries_as_pymemcache():
    import mcpool.compat.pymemcache as pm
    real = require("pymemcache.client.retrying", "python3-pymemcache")
    for cls in (pm.RetryingClient, real.RetryingClient):
        flaky = _Flaky(2, pm.MemcacheUnexpectedCloseError)
        assert cls(flaky, attempts=3).get("k") == b"v" and flaky.calls == 3
        flaky = _Flaky(5, pm.MemcacheUnexpectedCloseError)
        with pytest.raises(pm.MemcacheUnexpectedCloseError, match="try 2"):
            cls(flaky).get("k")
        flaky = _Flaky(1, pm.MemcacheServerError)
        with pytest.raises(pm.MemcacheServerError):
            cls(flaky, attempts=3, retry_for=[pm.MemcacheUnexpectedCloseError]).get("k")
        assert flaky.calls == 1
        flaky = _Flaky(1, pm.MemcacheServerError)
        with pytest.raises(pm.MemcacheServerError):
            cls(flaky, attempts=3, do_not_retry_for=(pm.MemcacheServerError,)).get("k")
        assert flaky.calls == 1
        with pytest.raises(ValueError):
            cls(flaky, attempts=0)
        with pytest.raises(ValueError):
            cls(flaky, retry_for=[KeyError], do_not_retry_for=[KeyError])
        with pytest.raises(ValueError):
            cls(flaky, retry_for=KeyError)


def test_retrying_client_over_a_real_server(server, prefix):
    import mcpool.compat.pymemcache as pm
    mc = pm.RetryingClient(pm.Client(("127.0.0.1", server.port)), attempts=2)
    mc.set(prefix + "k", b"v")
    assert mc.get(prefix + "k") == b"v"
    assert mc[prefix + "k"] == b"v"
    del mc[prefix + "k"]
    with pytest.raises(KeyError):
        mc[prefix + "k"]


def test_use_old_server_hash_function_refuses():
    import mcpool.compat.memcache as memcache
    with pytest.raises(NotImplementedError, match="default server hash"):
        memcache.useOldServerHashFunction()


def test_server_for_and_meta_info_take_key_by_keyword(mc, prefix):
    assert mc.server_for(key=prefix + "k") == mc.server_for(prefix + "k")
    with pytest.raises(TypeError, match="server_for"):
        mc.server_for(prefix + "k", key=prefix + "k")
    with pytest.raises(TypeError):
        mc.server_for()


def test_meta_info_takes_key_by_keyword(server, prefix):
    import mcpool
    mc = mcpool.Client([server.addr], protocol="meta")
    mc.set(prefix + "k", b"v")
    assert mc.meta_info(key=prefix + "k")["size"] == mc.meta_info(prefix + "k")["size"]


@pytest.mark.parametrize("t", [math.nan, math.inf, -math.inf])
def test_a_time_that_is_no_finite_number_says_so(mc, prefix, t):
    import mcpool
    with pytest.raises(mcpool.ClientError, match="finite number"):
        mc.set(prefix + "k", b"v", time=t)
