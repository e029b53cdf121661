"""Flask-Caching's backend layer, cachelib: its MemcachedCache takes a ready client as
`servers`. The same cachelib calls give the same results with our clients (the
python-memcached and pylibmc drop-ins, and mcpool.Client) as with python-memcached itself."""
import pytest

from conftest import require
from test_compat_pylibmc import outcome, unprefixed

cachelib = require("cachelib", "python3-cachelib")
real_memcache = require("memcache", "python3-memcache")
real_pylibmc = require("pylibmc", "python3-pylibmc")

import mcpool  # noqa: E402
import mcpool.compat.memcache  # noqa: E402
import mcpool.compat.pylibmc  # noqa: E402


def run(client, prefix):
    c = cachelib.MemcachedCache(servers=client, key_prefix=prefix, default_timeout=300)
    assert c._client is client
    steps = [
        outcome(c.set, "a", {"x": [1, 2]}), outcome(c.get, "a"), outcome(c.add, "a", "other"),
        outcome(c.add, "b", "two"), outcome(c.get_many, "a", "b", "missing"),
        outcome(c.get_dict, "a", "b"), outcome(c.set_many, {"m1": "one", "m2": "two"}),
        outcome(c.get_many, "m1", "m2"), outcome(c.has, "m1"), outcome(c.has, "nope"),
        outcome(c.set, "n", 5), outcome(c.get, "n"), outcome(c.delete, "a"), outcome(c.get, "a"),
        outcome(c.delete, "a"), outcome(c.delete_many, "m1", "m2"),
        outcome(c.get_many, "m1", "m2"), outcome(c.get, "key with spaces"),
        outcome(c.set, "t", "short", timeout=100), outcome(c.get, "t"),
    ]
    plain = cachelib.MemcachedCache(servers=client)  # inc/dec need no prefix (cachelib's)
    steps += [outcome(plain.inc, prefix + "ctr", 5), outcome(plain.inc, prefix + "ctr", 2),
              outcome(plain.dec, prefix + "ctr", 3), outcome(plain.get, prefix + "ctr")]
    return steps


@pytest.mark.parametrize("kind", ["compat.memcache", "compat.pylibmc", "mcpool.Client"])
def test_cachelib_memcached_cache_accepts_our_client(server, prefix, kind):
    ours = {"compat.memcache": lambda: mcpool.compat.memcache.Client([server.addr]),
            "compat.pylibmc": lambda: mcpool.compat.pylibmc.Client([server.addr]),
            "mcpool.Client": lambda: mcpool.Client([server.addr], pickle=True)}[kind]()
    # the library each one stands in for (mcpool.Client answers delete as pylibmc does)
    real = real_memcache if kind == "compat.memcache" else real_pylibmc
    expected = unprefixed(run(real.Client([server.addr]), prefix + "r_"), prefix + "r_")
    got = unprefixed(run(ours, prefix + "o_"), prefix + "o_")
    assert got == expected
