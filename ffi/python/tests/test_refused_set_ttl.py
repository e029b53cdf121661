"""A store's time above 2**31-1 is refused; a *set* so refused also deletes the key (tester
finding ttl 1). The clients mcpool replaces (pylibmc, pymemcache, python-memcached) send
such a set and memcached stores it already expired, so no older value is left to read;
mcpool's binding checked the caller's time before the call and left the old value. Every
store path now checks its time through the core (mcpool_client_store_expiry_checked, with
the store's op and key): a set's key is deleted, add/replace/cas leave it as it was."""
import pytest

from conftest import require

import mcpool
import mcpool.compat.memcache as compat_memcache
import mcpool.compat.pylibmc as compat_pylibmc
import mcpool.compat.pymemcache as compat_pymemcache

# 2**31: passed to the core as it is; 2**32+5: beyond 32 bits, named as written
BIG = [2**31, 2**32 + 5]
DELETED = "nothing was stored and the key was deleted"


def refused(call, big, exc=mcpool.ClientError):
    """call() raises exc naming the number as written; returns the exception."""
    with pytest.raises(exc) as e:
        call()
    assert "invalid ttl: %d is above 2147483647" % big in str(e.value), e.value
    return e.value


@pytest.mark.parametrize("big", BIG)
@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_a_refused_set_leaves_no_older_value(server, prefix, protocol, big):
    mc = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "k"
    sets = {
        "set": lambda: mc.set(k, "new", big),
        "set expire=": lambda: mc.set(k, "new", expire=big),
        "typed set": lambda: mc.set(k, 42, big),
        "set_bytes": lambda: mc.set_bytes(k, b"new", 0, big),
        "set_counter": lambda: mc.set_counter(k, 7, big),
    }
    for name, call in sets.items():
        assert mc.set(k, "old")
        e = refused(call, big)
        assert DELETED in str(e), (name, e)
        assert e.status_name == "MCPOOL_INVALID_ARGUMENT" and e.server is None, name
        assert mc.get(k) is None, name


@pytest.mark.parametrize("big", BIG)
def test_a_refused_batch_set_deletes_each_key(server, prefix, big):
    """The batch's one time is refused for each key: every key deleted, every item failing
    as for 2**31 (the first key's exception, with `key` and `results`)."""
    mc = mcpool.Client([server.addr])
    keys = [prefix + "a", prefix + "b", prefix + "c"]
    mc.set_multi({k: "old" for k in keys})
    e = refused(lambda: mc.set_multi({k: "new" for k in keys}, big), big)
    assert e.key == keys[0] and sorted(e.results) == keys
    assert all(isinstance(r, mcpool.ClientError) and DELETED in str(r)
               for r in e.results.values()), e.results
    assert mc.get_multi(keys) == {}
    mc.set_multi({k: "old" for k in keys})
    refused(lambda: mc.set_multi_noreply({k: "new" for k in keys}, big), big)
    assert mc.get_multi(keys) == {}


@pytest.mark.parametrize("big", BIG)
def test_the_deleted_key_is_the_one_the_set_would_store(server, prefix, big):
    """The client's key_prefix (the core's) and a batch's per-call key_prefix (the
    binding's) are applied as the store applies them: the prefixed key is deleted."""
    raw = mcpool.Client([server.addr])
    mc = mcpool.Client([server.addr], key_prefix=prefix + "p:")
    raw.set_multi({prefix + "p:k": "old", prefix + "p:q:k": "old", prefix + "k": "old"})
    refused(lambda: mc.set("k", "new", big), big)
    assert raw.get(prefix + "p:k") is None
    refused(lambda: mc.set_multi({"k": "new"}, big, key_prefix="q:"), big)
    assert raw.get(prefix + "p:q:k") is None
    assert raw.get(prefix + "k") == "old"  # no other key touched


def test_set_with_version_refused_deletes_the_key(server, prefix):
    mc = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "k"
    for big in BIG:
        mc.set(k, "old")
        e = refused(lambda: mc.set_with_version(k, "new", 5, big), big)
        assert DELETED in str(e)
        assert mc.get(k) is None


@pytest.mark.parametrize("big", BIG)
def test_add_replace_cas_refused_leave_the_old_value(server, prefix, big):
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    mc.set(k, "old")
    token = mc.gets(k)[1]
    for name, call in {
        "add": lambda: mc.add(k, "new", big),
        "replace": lambda: mc.replace(k, "new", big),
        "cas": lambda: mc.cas(k, "new", token, big),
        "add_multi": lambda: mc.add_multi({k: "new"}, big),
        "replace_multi": lambda: mc.replace_multi({k: "new"}, big),
        "cas_multi": lambda: mc.cas_multi({k: ("new", token)}, big),
    }.items():
        e = refused(call, big)
        assert "deleted" not in str(e), (name, e)
        assert mc.get(k) == "old", name
    assert mc.cas(k, "new", token) is True  # the item was never changed


def test_a_time_written_as_a_float_is_named_so(server, prefix):
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    mc.set(k, "old")
    with pytest.raises(mcpool.ClientError, match=r'set "%s": invalid ttl: 2147483648\.5 is above'
                       % k) as e:
        mc.set(k, "new", 2147483648.5)
    assert DELETED in str(e.value)
    assert mc.get(k) is None


def test_a_time_the_store_takes_stores(server, prefix):
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    for t in (0, 1, mcpool.MAX_TTL, 0.4, None):
        assert mc.set(k, "v", t) is True and mc.get(k) == "v", t
        assert mc.set_multi({k: "w"}, t) == [] and mc.get(k) == "w", t
    assert mc.set(k, "v", -1) is True and mc.get(k) is None  # stored already expired


@pytest.mark.parametrize("big", BIG)
def test_compat_pylibmc_set_refused_leaves_no_older_value(server, prefix, big):
    mc = compat_pylibmc.Client([server.addr])
    k = prefix + "k"
    for call in (lambda: mc.set(k, "new", time=big), lambda: mc.set_multi({k: "new"}, time=big)):
        mc.set(k, "old")
        refused(call, big, compat_pylibmc.ClientError)
        assert mc.get(k) is None
    mc.set(k, "old")
    refused(lambda: mc.add(k, "new", time=big), big, compat_pylibmc.ClientError)
    refused(lambda: mc.replace(k, "new", time=big), big, compat_pylibmc.ClientError)
    assert mc.get(k) == "old"


@pytest.mark.parametrize("big", BIG)
def test_compat_pymemcache_set_refused_leaves_no_older_value(server, prefix, big):
    for mc in (compat_pymemcache.Client(server.addr),
               compat_pymemcache.HashClient([server.addr])):
        k = prefix + "k"
        for call in (lambda: mc.set(k, b"new", expire=big),
                     lambda: mc.set_many({k: b"new"}, expire=big)):
            mc.set(k, b"old")
            refused(call, big, compat_pymemcache.MemcacheClientError)
            assert mc.get(k) is None
        mc.set(k, b"old")
        refused(lambda: mc.add(k, b"new", expire=big), big,
                compat_pymemcache.MemcacheClientError)
        refused(lambda: mc.replace(k, b"new", expire=big), big,
                compat_pymemcache.MemcacheClientError)
        assert mc.get(k) == b"old"


@pytest.mark.parametrize("big", BIG)
def test_compat_memcache_answers_0_and_leaves_no_value(server, prefix, big):
    """python-memcached's drop-in already answered 0 (set_multi: the keys) and left no
    value; so it stays. add leaves the old value, as memcached's add of an existing key."""
    mc = compat_memcache.Client([server.addr])
    k = prefix + "k"
    mc.set(k, "old")
    assert mc.set(k, "new", time=big) == 0
    assert mc.get(k) is None
    mc.set(k, "old")
    assert mc.set_multi({k: "new"}, time=big) == [k]
    assert mc.get(k) is None
    mc.set(k, "old")
    assert mc.add(k, "new", time=big) == 0
    assert mc.get(k) == "old"


@pytest.mark.parametrize("kind", ["mcpool.Client", "compat.pylibmc", "compat.memcache"])
def test_cachelib_set_with_a_timeout_past_2038_leaves_no_older_value(server, prefix, kind):
    """cachelib's MemcachedCache sends time() + timeout: a timeout past 2038 ends in the
    client's set, refused; the old value is gone either way (mcpool.Client and the pylibmc
    drop-in raise, the python-memcached drop-in answers 0)."""
    cachelib = require("cachelib", "python3-cachelib")
    client = {"mcpool.Client": lambda: mcpool.Client([server.addr]),
              "compat.pylibmc": lambda: compat_pylibmc.Client([server.addr]),
              "compat.memcache": lambda: compat_memcache.Client([server.addr])}[kind]()
    c = cachelib.MemcachedCache(servers=client, key_prefix=prefix)
    assert c.set("k", "old")
    if kind == "compat.memcache":
        assert not c.set("k", "new", timeout=2**32)
    else:
        with pytest.raises((mcpool.ClientError, compat_pylibmc.ClientError), match=DELETED):
            c.set("k", "new", timeout=2**32)
    assert c.get("k") is None
