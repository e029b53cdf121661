"""A pickled value with bytes prepended (memcached's `prepend` onto a pickle) is never read
as a value (tester finding mutations 2). The peers: pylibmc raises pickle's UnpicklingError,
naming no key; python-memcached answers None from get and {key: None} from get_multi. The
pylibmc drop-in and Django's McpoolCache under its preset raise the error every mcpool path
raises (MCPOOL_VALUE_FORMAT naming the key, the unpickler's exception its __cause__), which is
also an UnpicklingError, so what caught pylibmc's still catches it; the python-memcached
drop-in answers a miss, as python-memcached's get does, and leaves the key out of get_multi
rather than answer a None nobody stored."""
import pickle

import pytest

import mcpool
import mcpool.compat.memcache as compat_memcache
import mcpool.compat.pylibmc as compat_pylibmc

from conftest import require


def prepended(server, key, fmt):
    """key holds a pickled dict stored under fmt with b"x" prepended."""
    mc = mcpool.Client([server.addr], value_format=fmt, pickle=True)
    assert mc.set(key, {"a": 1})
    assert mc.prepend(key, b"x")


@pytest.mark.parametrize("binary", [False, True])
def test_pylibmc_drop_in_raises_the_key_naming_error_that_is_an_unpicklingerror(
        server, prefix, binary):
    k = prefix + "pp"
    prepended(server, k, "pylibmc")
    assert compat_pylibmc.Client([server.addr]).set(prefix + "ok", b"fine")
    real = require("pylibmc", "python3-pylibmc")
    with pytest.raises(pickle.UnpicklingError):  # the peer's
        real.Client([server.addr], binary=binary).get(k)
    c = compat_pylibmc.Client([server.addr], binary=binary, behaviors={"cas": True})
    for read in (lambda: c.get(k), lambda: c.gets(k), lambda: c.get_multi([prefix + "ok", k])):
        with pytest.raises(pickle.UnpicklingError) as e:
            read()
        assert isinstance(e.value, compat_pylibmc.Error)
        assert isinstance(e.value, ValueError)
        assert e.value.status_name == "MCPOOL_VALUE_FORMAT"
        assert repr(k) in str(e.value) and "does not unpickle" in str(e.value)
        assert isinstance(e.value.__cause__, pickle.UnpicklingError)
        assert not isinstance(e.value.__cause__, compat_pylibmc.Error)


def test_memcache_drop_in_answers_a_miss_never_a_made_up_none(server, prefix):
    k = prefix + "pp"
    prepended(server, k, "python-memcached")
    memcache = require("memcache", "python3-memcache")
    peer = memcache.Client([server.addr])
    assert peer.set(prefix + "ok", "fine")
    assert peer.set(prefix + "none", None)  # a None somebody stored
    keys = [prefix + "ok", k, prefix + "none"]
    # the peer: None from get, the key with None from get_multi
    assert peer.get(k) is None
    assert peer.get_multi(keys) == {prefix + "ok": "fine", k: None, prefix + "none": None}
    c = compat_memcache.Client([server.addr])
    assert c.get(k) is None
    assert c.get_multi(keys) == {prefix + "ok": "fine", prefix + "none": None}
    # a class this process lacks: a miss too, in get_multi as in get
    server.raw_set(prefix + "gone", 1, b"cbuiltins\nNoSuchThing\n)\x81.")
    assert c.get(prefix + "gone") is None
    assert c.get_multi([prefix + "ok", prefix + "gone"]) == {prefix + "ok": "fine"}
