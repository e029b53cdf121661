"""mcpool.django.McpoolCache against real memcached, with the patterns of Django's own cache
tests (django/tests/cache/tests.py). Ported, each as the test of the same name below:
BaseCacheTests.test_simple, test_default_used_when_none_is_set, test_add, test_prefix,
test_non_existent, test_get_many, test_delete, test_delete_nonexistent, test_has_key,
test_in, test_incr, test_decr, test_close, test_data_types, test_expiration, test_touch,
test_unicode, test_binary_string, test_set_many, test_set_many_returns_empty_list_on_success,
test_set_many_expiration, test_set_many_empty_data, test_delete_many,
test_delete_many_no_keys, test_clear, test_long_timeout, test_forever_timeout,
test_zero_timeout, test_float_timeout, test_invalid_key_characters, test_invalid_key_length,
test_cache_versioning_get_set, test_cache_versioning_add, test_incr_version,
test_decr_version, test_custom_key_func, test_get_or_set, test_get_or_set_callable;
BaseMemcachedTests.test_location_multiple_servers, test_invalid_with_version_key_length,
test_default_never_expiring_timeout, test_default_far_future_timeout,
test_memcached_deletes_key_on_failed_set, test_set_many_returns_failing_keys. Django's
settings are configured here (django.test.utils.override_settings); the waits for expiry
poll with a bound instead of sleeping a fixed time."""
import os
import time
import warnings
from unittest import mock

import pytest

from conftest import require, socket_holders

django = require("django", "python3-django")
from django.conf import settings  # noqa: E402

if not settings.configured:
    settings.configure(CACHES={"default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}, USE_TZ=True)
django.setup()

from django.core.cache import InvalidCacheKey  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

import mcpool  # noqa: E402
import mcpool.django  # noqa: E402

BACKEND = "mcpool.django.McpoolCache"
KEY_CHARS_MSG = "Cache key contains characters that will cause errors if used with memcached: %r"


def custom_key_func(key, key_prefix, version):
    return "CUSTOM-" + "-".join([key_prefix, str(version), key])


def wait_until(cond, timeout=6.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


class Func:
    """A picklable class (Django's test stores a function and a class)."""

    def m(self):
        return 24


def f():
    return 42


@pytest.fixture
def caches(server, prefix):
    """Django's caches: default, prefix, v2, custom_key, custom_key2 (as Django's test
    settings), every key under this test's own prefix."""
    base = {"BACKEND": BACKEND, "LOCATION": server.addr, "KEY_PREFIX": prefix}
    setting = {
        "default": dict(base),
        "prefix": dict(base, KEY_PREFIX=prefix + "cacheprefix"),
        "v2": dict(base, VERSION=2),
        "custom_key": dict(base, KEY_FUNCTION=custom_key_func),
        "custom_key2": dict(base, KEY_FUNCTION="test_django.custom_key_func"),
    }
    with override_settings(CACHES=setting):
        from django.core.cache import caches as c
        yield c


@pytest.fixture
def cache(caches):
    return caches["default"]


def test_backend_is_ours(cache):
    assert isinstance(cache, mcpool.django.McpoolCache)
    assert isinstance(cache._cache, mcpool.Client)


def test_simple(cache):
    cache.set("key", "value")
    assert cache.get("key") == "value"


def test_default_used_when_none_is_set(cache):
    cache.set("key_default_none", None)
    assert cache.get("key_default_none", default="default") is None


def test_add(cache):
    assert cache.add("addkey1", "value") is True
    assert cache.add("addkey1", "newvalue") is False
    assert cache.get("addkey1") == "value"


def test_prefix(caches, cache):
    cache.set("somekey", "value")
    assert caches["prefix"].has_key("somekey") is False
    caches["prefix"].set("somekey", "value2")
    assert cache.get("somekey") == "value"
    assert caches["prefix"].get("somekey") == "value2"


def test_non_existent(cache):
    assert cache.get("does_not_exist") is None
    assert cache.get("does_not_exist", "bang!") == "bang!"


def test_get_many(cache):
    cache.set_many({"a": "a", "b": "b", "c": "c", "d": "d"})
    assert cache.get_many(["a", "c", "d"]) == {"a": "a", "c": "c", "d": "d"}
    assert cache.get_many(["a", "b", "e"]) == {"a": "a", "b": "b"}
    assert cache.get_many(iter(["a", "b", "e"])) == {"a": "a", "b": "b"}
    cache.set_many({"x": None, "y": 1})
    assert cache.get_many(["x", "y"]) == {"x": None, "y": 1}


def test_delete(cache):
    cache.set_many({"key1": "spam", "key2": "eggs"})
    assert cache.get("key1") == "spam"
    assert cache.delete("key1") is True
    assert cache.get("key1") is None
    assert cache.get("key2") == "eggs"


def test_delete_nonexistent(cache):
    assert cache.delete("nonexistent_key") is False


def test_has_key(cache):
    cache.set("hello1", "goodbye1")
    assert cache.has_key("hello1") is True
    assert cache.has_key("goodbye1") is False
    cache.set("no_expiry", "here", None)
    assert cache.has_key("no_expiry") is True
    cache.set("null", None)
    assert cache.has_key("null") is True


def test_in(cache):
    cache.set("hello2", "goodbye2")
    assert "hello2" in cache
    assert "goodbye2" not in cache
    cache.set("null", None)
    assert "null" in cache


@pytest.mark.parametrize("up", [True, False])
def test_incr_decr(cache, up):
    """test_incr and test_decr."""
    op, back = (cache.incr, cache.decr) if up else (cache.decr, cache.incr)
    cache.set("answer", 41 if up else 43)
    assert op("answer") == 42
    assert cache.get("answer") == 42
    assert op("answer", 10) == (52 if up else 32)
    assert cache.get("answer") == (52 if up else 32)
    assert op("answer", -10) == 42
    with pytest.raises(ValueError):
        op("does_not_exist")
    with pytest.raises(ValueError):
        back("does_not_exist", -1)
    cache.set("null", None)
    with pytest.raises(TypeError):  # the backend's incr_decr_type_error
        op("null")


def test_close(cache):
    assert hasattr(cache, "close")
    cache.close()
    cache.set("after_close", 1)
    assert cache.get("after_close") == 1


def test_data_types(cache):
    tests = {"string": "this is a string", "int": 42, "bool": True, "list": [1, 2, 3, 4],
             "tuple": (1, 2, 3, 4), "dict": {"A": 1, "B": 2}, "function": f, "class": Func}
    for key, value in tests.items():
        cache.set(key, value)
        got = cache.get(key)
        assert got == value and type(got) is type(value), key


def test_expiration(cache):
    for k in ("expire1", "expire2", "expire3"):
        cache.set(k, "very quickly", 1)
    assert wait_until(lambda: cache.get("expire1") is None)
    assert cache.add("expire2", "newvalue") is True
    assert cache.get("expire2") == "newvalue"
    assert cache.has_key("expire3") is False


def test_a_timeout_that_is_not_a_number_is_refused_as_djangos_backends_refuse_it(cache):
    """Django's memcached backends raise TypeError comparing "60" with 30 days; the value was
    stored with a 60 s TTL here."""
    for bad in ("1", b"1", [1], 1j):
        for call in (lambda: cache.set("tmo", "v", bad), lambda: cache.add("tmo", "v", bad),
                     lambda: cache.touch("tmo", bad), lambda: cache.set_many({"tmo": 1}, bad)):
            with pytest.raises(TypeError):
                call()
    assert cache.get("tmo") is None
    cache.set("tmo", "v", 1.5)  # numbers of any kind are Django's
    assert cache.get("tmo") == "v"
    # Django's backends read int(timeout) first (tester finding retest11 5): "0" is not
    # cached, as 0 is; a text that is not a number is int()'s ValueError
    for zero in ("0", b"0", 0.5):
        cache.set("tmo", "v")
        cache.set("tmo", "zero", zero)
        assert cache.get("tmo") is None, zero
    with pytest.raises(ValueError):
        cache.set("tmo", "v", "abc")

    class IntLike:  # not a numbers.Number: int() and a comparison are what Django's use
        def __int__(self):
            return 60

        def __gt__(self, other):
            return 60 > other

    cache.set("tmo", "int-like", IntLike())  # tester finding retest12 2: was TypeError
    assert cache.get("tmo") == "int-like"

    class LongIntLike:  # above 30 days Django's backends add the unix time to it
        def __int__(self):
            return 2592001

        def __gt__(self, other):
            return 2592001 > other

    with pytest.raises(TypeError):  # tester finding retest13 8: it was taken
        cache.set("tmo", "long", LongIntLike())
    assert cache.get("tmo") == "int-like"


def test_touch(cache):
    cache.set("expire1", "very quickly", timeout=1)
    assert cache.touch("expire1", timeout=30) is True
    time.sleep(2.1)  # past the first timeout: memcached counts whole seconds
    assert cache.has_key("expire1") is True
    cache.set("expire1", "very quickly", timeout=1)
    assert cache.touch("expire1", timeout=1) is True
    assert wait_until(lambda: not cache.has_key("expire1"))
    assert cache.touch("nonexistent") is False


def test_unicode(cache):
    stuff = {"ascii": "ascii_value", "unicode_ascii": "I\u00f1t\u00ebrn\u00e2ti\u00f4n1",
             "I\u00f1t\u00ebrn\u00e2ti\u00f4n": "I\u00f1t\u00ebrn\u00e2ti\u00f4n2",
             "ascii2": {"x": 1}}
    for key, value in stuff.items():
        cache.set(key, value)
        assert cache.get(key) == value
    for key, value in stuff.items():
        assert cache.delete(key) is True
        assert cache.add(key, value) is True
        assert cache.get(key) == value
    for key in stuff:
        assert cache.delete(key) is True
    cache.set_many(stuff)
    for key, value in stuff.items():
        assert cache.get(key) == value


def test_binary_string(cache):
    import zlib
    value = "value_to_be_compressed"
    blob = zlib.compress(value.encode())
    cache.set("binary1", blob)
    assert cache.get("binary1") == blob
    assert cache.add("binary1-add", blob) is True
    assert zlib.decompress(cache.get("binary1-add")).decode() == value
    cache.set_many({"binary1-set_many": blob})
    assert cache.get("binary1-set_many") == blob


def test_set_many(cache):
    assert cache.set_many({"key1": "spam", "key2": "eggs"}) == []  # ..._returns_empty_list
    assert cache.get("key1") == "spam"
    assert cache.get("key2") == "eggs"
    assert cache.set_many({}) == []  # test_set_many_empty_data


def test_set_many_expiration(cache):
    cache.set_many({"key1": "spam", "key2": "eggs"}, 1)
    assert wait_until(lambda: cache.get_many(["key1", "key2"]) == {})


def test_delete_many(cache):
    cache.set_many({"key1": "spam", "key2": "eggs", "key3": "ham"})
    cache.delete_many(["key1", "key2"])
    assert cache.get("key1") is None
    assert cache.get("key2") is None
    assert cache.get("key3") == "ham"
    assert cache.delete_many([]) is None  # test_delete_many_no_keys


def test_clear(cache):
    cache.set_many({"key1": "spam", "key2": "eggs"})
    cache.clear()
    assert cache.get("key1") is None
    assert cache.get("key2") is None


def test_long_timeout(cache):
    t = 60 * 60 * 24 * 30 + 1  # above 30 days: a unix time for memcached
    cache.set("key1", "eggs", t)
    assert cache.get("key1") == "eggs"
    assert cache.add("key2", "ham", t) is True
    assert cache.get("key2") == "ham"
    cache.set_many({"key3": "sausage", "key4": "lobster bisque"}, t)
    assert cache.get_many(["key3", "key4"]) == {"key3": "sausage", "key4": "lobster bisque"}


def test_forever_timeout(cache):
    cache.set("key1", "eggs", None)
    assert cache.get("key1") == "eggs"
    assert cache.add("key2", "ham", None) is True
    assert cache.add("key1", "new eggs", None) is False
    assert cache.get("key1") == "eggs"
    cache.set_many({"key3": "sausage", "key4": "lobster bisque"}, None)
    assert cache.get("key3") == "sausage"
    cache.set("key5", "belgian fries", timeout=1)
    assert cache.touch("key5", timeout=None) is True
    time.sleep(2.1)  # past the old timeout
    assert cache.get("key5") == "belgian fries"


def test_backend_timeout_is_djangos_and_memcached_keeps_the_item_that_long(server, prefix):
    """get_backend_timeout is the core's rule for a duration (mcpool.expiry_from_now): the
    same moment as Django's own PyLibMCCache computes, side by side (its -1 for "expired" is
    the core's EXPIRED_AT_ONCE, a moment in 1970 too); and memcached, asked for its TTL (mg's
    t flag), keeps a 31-day item 31 days, not 0 (the seconds as an exptime: 1970)."""
    from django.core.cache.backends.memcached import PyLibMCCache
    ours = mcpool.django.McpoolCache(server.addr, {"KEY_PREFIX": prefix})
    peer = PyLibMCCache(server.addr, {})
    day = 86400
    for t in (None, 0, -1, 0.5, 1, 60, 100.2, 30 * day, 30 * day + 1, 31 * day, 365 * day):
        before = peer.get_backend_timeout(t)
        got = ours.get_backend_timeout(t)
        after = peer.get_backend_timeout(t)
        if before == -1:
            assert got == mcpool.EXPIRED_AT_ONCE, (t, got)
        else:
            assert before <= got <= after, (t, before, got, after)
    ours.set("k31", "v", 31 * day)
    assert ours.get("k31") == "v"
    meta = mcpool.Client([server.addr], protocol="meta")
    ttl = meta.meta_info(ours.make_key("k31"))["ttl"]
    assert abs(ttl - 31 * day) <= 120, ttl  # memcached's clock: a second or so off


def test_expiry_from_now_is_the_cores_rule():
    day = 86400
    assert mcpool.expiry_from_now(60) == 60
    assert mcpool.expiry_from_now(30 * day) == 30 * day
    before = int(time.time())
    at = mcpool.expiry_from_now(31 * day)
    assert before + 31 * day <= at <= int(time.time()) + 31 * day
    assert mcpool.expiry_from_now(0) == mcpool.expiry_from_now(-1) == mcpool.EXPIRED_AT_ONCE
    # the moment asked (refused by every call, which names it); one past 2**63-1 is refused
    # here, never answered as another number (tests/test_expiry_from_now.py)
    assert mcpool.expiry_from_now(2 ** 40) >= before + 2 ** 40
    with pytest.raises(mcpool.ClientError, match="invalid duration: %d is too long" % 2 ** 80):
        mcpool.expiry_from_now(2 ** 80)
    assert mcpool.expiry_from_now(-2 ** 80) == mcpool.EXPIRED_AT_ONCE
    # a float by the core's rule for fractions: a positive fraction rounds up (0.4 is 1 s,
    # never expired at once nor 0 = "never expires"), a negative one is past
    assert mcpool.expiry_from_now(0.4) == 1
    assert mcpool.expiry_from_now(1.5) == 2
    assert mcpool.expiry_from_now(60.0) == 60
    assert mcpool.expiry_from_now(-0.3) == mcpool.expiry_from_now(0.0) == mcpool.EXPIRED_AT_ONCE
    with pytest.raises(mcpool.ClientError, match=r"invalid duration: 1e\+300 is too long"):
        mcpool.expiry_from_now(1e300)
    for bad in ("nan", "inf", "-inf"):  # retest23 6: inf was the last moment
        with pytest.raises(mcpool.ClientError, match="finite number"):
            mcpool.expiry_from_now(float(bad))
    with pytest.raises(mcpool.ClientTypeError):
        mcpool.expiry_from_now("1.5")


def test_zero_timeout(cache):
    cache.set("key1", "eggs", 0)
    assert cache.get("key1") is None
    assert cache.add("key2", "ham", 0) is True
    assert cache.get("key2") is None
    cache.set_many({"key3": "sausage", "key4": "lobster bisque"}, 0)
    assert cache.get_many(["key3", "key4"]) == {}
    cache.set("key5", "belgian fries", timeout=5)
    assert cache.touch("key5", timeout=0) is True
    assert cache.get("key5") is None


def test_float_timeout(cache):
    cache.set("key1", "spam", 100.2)
    assert cache.get("key1") == "spam"


def _invalid_key(cache, key, message):
    """BaseMemcachedTests._perform_invalid_key_test: every operation raises, naming the key."""
    made = cache.make_key(key)
    msg = message.replace(repr(key), repr(made)) if repr(key) in message else message
    ops = [("add", [key, 1]), ("get", [key]), ("set", [key, 1]), ("incr", [key]),
           ("decr", [key]), ("touch", [key]), ("delete", [key]), ("get_many", [[key, "b"]]),
           ("set_many", [{key: 1, "b": 2}]), ("delete_many", [[key, "b"]])]
    for op, args in ops:
        with pytest.raises(InvalidCacheKey) as e:
            getattr(cache, op)(*args)
        assert str(e.value) == msg, op


def test_invalid_key_characters(cache):
    key = "key with spaces and \u6e05"
    _invalid_key(cache, key, KEY_CHARS_MSG % key)


def test_invalid_key_length(cache):
    key = "a" * 250 + "\u6e05"
    made = cache.make_key(key)
    _invalid_key(cache, key, "Cache key will cause errors if used with memcached: %r "
                 "(longer than %s)" % (made, 250))


def test_invalid_with_version_key_length(cache):
    key = "a" * (250 - len(cache.make_key("")) + 1)  # only the prefix and version overflow
    made = cache.make_key(key)
    _invalid_key(cache, key, "Cache key will cause errors if used with memcached: %r "
                 "(longer than %s)" % (made, 250))


def test_cache_versioning_get_set(caches, cache):
    v2 = caches["v2"]
    cache.set("answer1", 42)
    assert cache.get("answer1") == 42
    assert cache.get("answer1", version=1) == 42
    assert cache.get("answer1", version=2) is None
    assert v2.get("answer1") is None
    assert v2.get("answer1", version=1) == 42
    cache.set("answer2", 42, version=2)
    assert cache.get("answer2") is None
    assert cache.get("answer2", version=2) == 42
    assert v2.get("answer2") == 42
    v2.set("answer4", 42, version=1)
    assert cache.get("answer4") == 42
    assert v2.get("answer4") is None


def test_cache_versioning_add(caches, cache):
    assert cache.add("answer1", 42, version=2) is True
    assert cache.get("answer1", version=1) is None
    assert cache.add("answer1", 37, version=2) is False
    assert cache.add("answer1", 37, version=1) is True
    assert cache.get("answer1", version=1) == 37
    assert cache.get("answer1", version=2) == 42
    assert caches["v2"].add("answer2", 42) is True
    assert caches["v2"].add("answer2", 37) is False
    assert cache.get("answer2", version=2) == 42


def test_incr_version(cache):
    cache.set("answer", 42, version=2)
    assert cache.incr_version("answer", version=2) == 3
    assert cache.get("answer", version=2) is None
    assert cache.get("answer", version=3) == 42
    with pytest.raises(ValueError):
        cache.incr_version("does_not_exist")


def test_decr_version(cache):
    cache.set("answer", 42, version=2)
    assert cache.decr_version("answer", version=2) == 1
    assert cache.get("answer", version=1) == 42
    assert cache.get("answer", version=2) is None
    with pytest.raises(ValueError):
        cache.decr_version("does_not_exist", version=2)


def test_custom_key_func(caches, cache):
    cache.set("answer1", 42)
    assert caches["custom_key"].get("answer1") is None
    assert caches["custom_key2"].get("answer1") is None
    caches["custom_key"].set("answer2", 42)
    assert cache.get("answer2") is None
    assert caches["custom_key"].get("answer2") == 42
    assert caches["custom_key2"].get("answer2") == 42


def test_get_or_set(cache):
    assert cache.get_or_set("projector", 42) == 42
    assert cache.get("projector") == 42
    assert cache.get_or_set("null", None) is None
    assert cache.get_or_set("mykey", lambda: "default") == "default"  # ..._callable
    assert cache.get_or_set("mykey", "other") == "default"


def test_location_multiple_servers(server):
    for location in (["server1.tld", "server2:11211"], "server1.tld;server2:11211",
                     "server1.tld,server2:11211"):
        c = mcpool.django.McpoolCache(location, {})
        assert c._servers == ["server1.tld", "server2:11211"]


def test_default_never_expiring_timeout(server, prefix):
    with override_settings(CACHES={"default": {"BACKEND": BACKEND, "LOCATION": server.addr,
                                               "KEY_PREFIX": prefix, "TIMEOUT": None}}):
        from django.core.cache import cache
        cache.set("infinite_foo", "bar")
        assert cache.get("infinite_foo") == "bar"
        assert cache.get_backend_timeout() == 0


def test_default_far_future_timeout(server, prefix):
    with override_settings(CACHES={"default": {"BACKEND": BACKEND, "LOCATION": server.addr,
                                               "KEY_PREFIX": prefix, "TIMEOUT": 31536000}}):
        from django.core.cache import cache
        cache.set("future_foo", "bar")
        assert cache.get("future_foo") == "bar"


def test_memcached_deletes_key_on_failed_set(cache):
    # Django's own test: the old value never survives; the new one is stored when the client
    # takes it (here it compresses below the 1 MiB limit).
    large = "a" * (2 ** 20 + 1)
    cache.set("small_value", "a")
    assert cache.get("small_value") == "a"
    cache.set("small_value", large)
    assert cache.get("small_value") in (None, large)
    # Bytes that do not compress, above the limit: not stored, and the old value is gone.
    cache.set("small_value", "a")
    cache.set("small_value", os.urandom(2 ** 20 + 1))
    assert cache.get("small_value") is None


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_memcached_deletes_key_on_failed_set_near_the_limit(server, prefix, protocol):
    """A value under the client's 1 MiB limit that memcached refuses ("SERVER_ERROR object
    too large for cache": key and item header count too) is the same failed set: it returns
    and the key is gone, as Django's memcached backends do."""
    cache = mcpool.django.McpoolCache(server.addr, {
        "LOCATION": server.addr, "KEY_PREFIX": prefix, "OPTIONS": {"protocol": protocol}})
    big = os.urandom(1048540)
    with pytest.raises(mcpool.ClientError, match="object too large for cache"):
        cache._cache.set(cache.make_key("probe"), big)  # the server's refusal, not ours
    cache.set("small_value", "a")
    assert cache.set("small_value", big) is None
    assert cache.get("small_value") is None


def test_set_many_returns_failing_keys(cache):
    with mock.patch.object(type(cache._cache), "set_multi",
                           side_effect=lambda mapping, *a, **k: list(mapping)):
        assert cache.set_many({"key": "value"}) == ["key"]


def test_options_forwarded_and_clients_shared(server, prefix):
    """OPTIONS reach mcpool.Client by name; backends of one configuration share a client."""
    params = {"LOCATION": server.addr, "KEY_PREFIX": prefix,
              "OPTIONS": {"distribution": "libmemcached-ketama", "pool_size": 3}}
    a = mcpool.django.McpoolCache(server.addr, params)
    b = mcpool.django.McpoolCache(server.addr, params)
    assert a._cache is b._cache
    a.set("k", {"v": 1})
    assert b.get("k") == {"v": 1}
    with pytest.raises(mcpool.ClientError):
        mcpool.django.McpoolCache(server.addr, dict(params, OPTIONS={"distribution": "nope"}))._cache


def test_incr_with_an_unusable_delta_raises_no_attribute_error(cache):
    """A delta the binding refuses: its own error (with .status_name), never AttributeError."""
    cache.set("n", 1)
    with pytest.raises(ValueError):
        cache.incr("n", 2**64)
    with pytest.raises(TypeError):
        cache.incr("n", 1.5)
    with pytest.raises(ValueError):
        cache.decr("n", -(2**70))
    assert cache.get("n") == 1


def test_invalid_key_length_in_utf8_bytes(cache):
    """A key of at most 250 characters but more than 250 UTF-8 bytes (Django's check counts
    characters): the core refuses it, and the backend raises InvalidCacheKey for every call,
    never mcpool.ClientError."""
    key = "\u0436" * 124  # 124 characters, 248 bytes; with the prefix and version over 250
    assert len(cache.make_key(key)) <= 250 < len(cache.make_key(key).encode())
    calls = [lambda: cache.set(key, 1), lambda: cache.add(key, 1), lambda: cache.get(key),
             lambda: cache.get_many([key]), lambda: cache.set_many({key: 1}),
             lambda: cache.delete(key), lambda: cache.delete_many([key]),
             lambda: cache.touch(key), lambda: cache.has_key(key), lambda: cache.incr(key),
             lambda: cache.get_or_set(key, 1)]
    for call in calls:
        with pytest.raises(InvalidCacheKey, match="250"):
            call()


class _Status(__import__("enum").IntEnum):
    OK = 200


class _Color(str, __import__("enum").Enum):
    RED = "red"


class _Size(__import__("django.db.models", fromlist=["TextChoices"]).TextChoices):
    SMALL = "S"


def test_subclasses_of_int_and_str_read_back_as_themselves(cache):
    """Django's contract: a value comes back as it was stored (its other backends pickle
    every value). An IntEnum, a (str, Enum) member or a TextChoices member is pickled."""
    for i, v in enumerate([_Status.OK, _Color.RED, _Size.SMALL]):
        cache.set("e%d" % i, v)
        got = cache.get("e%d" % i)
        assert type(got) is type(v) and got == v, (v, got)
        assert cache.get_many(["e%d" % i]) == {"e%d" % i: v}


@pytest.mark.parametrize("peer,backend", [
    ("pylibmc", "django.core.cache.backends.memcached.PyLibMCCache"),
    ("python-memcached", "django.core.cache.backends.memcached.MemcachedCache"),
    ("pymemcache", "django.core.cache.backends.memcached.PyMemcacheCache"),
])
def test_preset_shares_the_cache_with_djangos_backend(servers, prefix, peer, backend):
    """OPTIONS {"preset": <client>} puts every key where Django's own backend for that
    client does (the value format and the placement); value_format alone does not, and the
    backend warns about it."""
    import warnings
    require({"pylibmc": "pylibmc", "python-memcached": "memcache",
             "pymemcache": "pymemcache"}[peer],
            {"pylibmc": "python3-pylibmc", "python-memcached": "python3-memcache",
             "pymemcache": "python3-pymemcache"}[peer])
    location = [s.addr for s in servers]
    setting = {
        "ours": {"BACKEND": BACKEND, "LOCATION": location, "KEY_PREFIX": prefix,
                 "OPTIONS": {"preset": peer}},
        "peer": {"BACKEND": backend, "LOCATION": location, "KEY_PREFIX": prefix},
    }
    with override_settings(CACHES=setting), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # MemcachedCache in Django 3.2
        from django.core.cache import caches as c
        ours, theirs = c["ours"], c["peer"]
        for i in range(40):
            theirs.set("k%d" % i, {"i": i})
            ours.set("o%d" % i, [i])
        assert all(ours.get("k%d" % i) == {"i": i} for i in range(40))
        assert all(theirs.get("o%d" % i) == [i] for i in range(40))
        # a bool as Django's backend writes and reads it (python-memcached, pymemcache: pickled,
        # read back True; pylibmc: its int flag, read back 1), both ways: it used to be the int
        # 1 under every preset, read as 1 by Django's PyMemcacheCache and MemcachedCache too
        for v in (True, False):
            theirs.set("b", v)
            own = theirs.get("b")
            assert own == v and (type(own) is bool) == (peer != "pylibmc"), own
            got = ours.get("b")
            assert type(got) is type(own) and got == own, (v, got)
            ours.set("b", v)
            for reader in (theirs, ours):
                got = reader.get("b")
                assert type(got) is type(own) and got == own, (v, got)
            ours.set_many({"b": v})
            got = theirs.get("b")
            assert type(got) is type(own) and got == own, (v, got)
    # names and words in any spelling the core takes (only the exact ones used to count)
    for opts in ({"value_format": peer}, {"Value-Format": peer.upper().replace("-", "_")}):
        with pytest.warns(RuntimeWarning, match='"preset": %r' % peer):
            mcpool.django.McpoolCache(location, {"OPTIONS": opts})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mcpool.django.McpoolCache(location, {"OPTIONS": {"preset": peer}})
        mcpool.django.McpoolCache(location, {"OPTIONS": {"PRESET": peer.title()}})
        mcpool.django.McpoolCache(location[:1], {"OPTIONS": {"value_format": peer}})


def test_compression_under_pymemcaches_format_warns(server):
    """Django's PyMemcacheCache (pickle_serde) cannot read a compressed value: it returns
    the compressed bytes, or nothing, as the value. Asking for compression under pymemcache's
    value format warns; under pylibmc's (which reads it) it does not."""
    location = [server.addr, server.addr.replace("127.0.0.1", "localhost")]
    for opts in ({"preset": "pymemcache", "min_compress_len": 100},
                 {"Preset": "PyMemcache", "compression": True}):
        with pytest.warns(RuntimeWarning, match="PyMemcacheCache .*cannot read a compressed"):
            mcpool.django.McpoolCache(location, {"OPTIONS": opts})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mcpool.django.McpoolCache(location, {"OPTIONS": {"preset": "pymemcache"}})
        mcpool.django.McpoolCache(location, {"OPTIONS": {"preset": "pylibmc",
                                                          "min_compress_len": 100}})


def test_get_many_with_a_dead_server_as_pylibmccache(prefix):
    """OPTIONS {"preset": "pylibmc"} with one of three servers killed: Django's PyLibMCCache
    returns the live servers' hits on every get_many (pylibmc's get_multi, libmemcached's
    mget skips the dead server); McpoolCache raised ConnectionError, then ServerDead. A
    value that cannot be decoded still raises. Without the preset, the error is raised as
    before (mcpool.Client's get_multi)."""
    require("pylibmc", "python3-pylibmc")
    from conftest import Server
    ss = [Server() for _ in range(3)]
    try:
        location = [s.addr for s in ss]
        setting = {
            "ours": {"BACKEND": BACKEND, "LOCATION": location, "KEY_PREFIX": prefix,
                     "OPTIONS": {"preset": "pylibmc"}},
            "peer": {"BACKEND": "django.core.cache.backends.memcached.PyLibMCCache",
                     "LOCATION": location, "KEY_PREFIX": prefix},
            "plain": {"BACKEND": BACKEND, "LOCATION": location, "KEY_PREFIX": prefix + "p"},
            # the preset in another spelling (only the exact one used to count)
            "spelled": {"BACKEND": BACKEND, "LOCATION": location, "KEY_PREFIX": prefix,
                        "OPTIONS": {"PRESET": "PyLibMC"}},
        }
        with override_settings(CACHES=setting):
            from django.core.cache import caches as c
            ours, theirs, plain, spelled = c["ours"], c["peer"], c["plain"], c["spelled"]
            keys = ["k%d" % i for i in range(30)]
            theirs.set_many({k: [k] for k in keys})
            plain.set_many({k: [k] for k in keys})
            assert ours.get_many(keys) == {k: [k] for k in keys}
            assert plain.get_many(keys) == {k: [k] for k in keys}
            ss[2].stop()
            for _call in range(3):
                want = theirs.get_many(keys)
                assert 0 < len(want) < len(keys)
                assert ours.get_many(keys) == want
                assert spelled.get_many(keys) == want
                with pytest.raises(mcpool.ConnectionError):
                    plain.get_many(keys)
            live = sorted(want)[0]
            server = next(s for s in ss[:2] if s.raw_get(ours.make_key(live)) is not None)
            server.raw_set(ours.make_key(live), 1, b"not a pickle")  # pylibmc's pickle flag
            with pytest.raises(Exception) as peer:
                theirs.get_many(keys)
            with pytest.raises(type(peer.value)):  # pickle's UnpicklingError, as PyLibMCCache
                ours.get_many(keys)
    finally:
        for s in ss:
            s.stop()


class _SetstateRaises:
    """A value whose own __setstate__ raises when it is read back."""

    def __init__(self):
        self.x = 1

    def __setstate__(self, state):
        raise KeyError("user setstate boom")


def test_an_unpickling_error_as_pylibmccache_raises_it(server, prefix):
    """A value whose class this process lacks, or whose __setstate__ raises: Django's
    PyLibMCCache raises the unpickler's own exception (pylibmc lets it through) from get,
    get_many and has_key; McpoolCache under the pylibmc preset raises the same (tester
    finding callbacks 3: mcpool.ValueFormatError, so `except AttributeError` stopped
    matching). Without the preset, ValueFormatError naming the key with that exception as
    its __cause__ (PyMemcacheCache and MemcachedCache answer None there)."""
    require("pylibmc", "python3-pylibmc")
    setting = {
        "ours": {"BACKEND": BACKEND, "LOCATION": server.addr, "KEY_PREFIX": prefix,
                 "OPTIONS": {"preset": "pylibmc"}},
        "peer": {"BACKEND": "django.core.cache.backends.memcached.PyLibMCCache",
                 "LOCATION": server.addr, "KEY_PREFIX": prefix},
        "plain": {"BACKEND": BACKEND, "LOCATION": server.addr, "KEY_PREFIX": prefix + "p"},
    }
    gone = b"cbuiltins\nNoSuchThing\n)\x81."  # a class this process lacks
    with override_settings(CACHES=setting):
        from django.core.cache import caches as c
        ours, theirs, plain = c["ours"], c["peer"], c["plain"]
        theirs.set("ok", "fine")
        theirs.set("boom", _SetstateRaises())
        server.raw_set(theirs.make_key("gone"), 1, gone)  # pylibmc's pickle flag
        plain.set("ok", "fine")
        plain.set("boom", _SetstateRaises())
        server.raw_set(plain.make_key("gone"), server.raw_get(plain.make_key("boom"))[0], gone)
        for key, cls in (("boom", KeyError), ("gone", AttributeError)):
            for cache in (theirs, ours):
                for read in (lambda: cache.get(key), lambda: cache.get_many(["ok", key]),
                             lambda: cache.has_key(key)):
                    with pytest.raises(cls) as e:
                        read()
                    assert not isinstance(e.value, mcpool.Error), (cache, e.value)
            for read in (lambda: plain.get(key), lambda: plain.get_many(["ok", key]),
                         lambda: plain.has_key(key)):
                with pytest.raises(mcpool.ValueFormatError) as e:
                    read()
                assert isinstance(e.value.__cause__, cls), e.value


@pytest.fixture
def unix_socket():
    """A memcached listening only on a unix socket (a short path: sun_path holds 107 bytes)."""
    import shutil
    import socket
    import subprocess
    import tempfile
    from conftest import MEMCACHED
    d = tempfile.mkdtemp(prefix="mcpool-dj-")
    path = os.path.join(d, "mc.sock")
    args = [MEMCACHED, "-s", path, "-a", "0600", "-m", "16"]
    if os.geteuid() == 0:
        args += ["-u", "root"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def up():
        with socket.socket(socket.AF_UNIX) as s:
            try:
                s.connect(path)
                return True
            except OSError:
                return False
    try:
        assert wait_until(lambda: proc.poll() is None and up(), timeout=5), "memcached -s"
        yield path
    finally:
        proc.terminate()
        proc.wait(5)
        shutil.rmtree(d, ignore_errors=True)


@pytest.mark.parametrize("peer,preset", [("PyLibMCCache", "pylibmc"),
                                         ("PyMemcacheCache", "pymemcache")])
def test_location_unix_socket_as_djangos_backends(unix_socket, prefix, peer, preset):
    """LOCATION "unix:/path", Django's documented form for a socket, which its PyLibMCCache
    and PyMemcacheCache take: McpoolCache refused it ("a unix socket path must be absolute").
    Side by side on one socket, each reads what the other wrote."""
    from django.core.cache.backends import memcached
    location = "unix:" + unix_socket
    theirs = getattr(memcached, peer)(location, {"KEY_PREFIX": prefix})
    for name in (location, [location]):
        ours = mcpool.django.McpoolCache(name, {"KEY_PREFIX": prefix,
                                                "OPTIONS": {"preset": preset}})
        ours.set("ours", "written by mcpool")
        assert theirs.get("ours") == "written by mcpool"
        theirs.set("theirs", 17)
        assert ours.get("theirs") == 17
        ours.delete("ours")
        theirs.delete("theirs")


@pytest.mark.parametrize("backend", ["mcpool.django.McpoolCache",
                                     "django.core.cache.backends.memcached.PyMemcacheCache",
                                     "django.core.cache.backends.memcached.PyLibMCCache"])
def test_dropped_backends_free_their_clients_and_connections(backend):
    """Backends made per configuration (here 40 that differ only in OPTIONS), each used,
    closed and dropped, hold no client and no connection afterwards: ours pinned one client
    and its connections per configuration for the life of the process. Side by side with
    Django's own memcached backends, counted by memcached's curr_connections."""
    import gc
    from django.utils.module_loading import import_string
    from conftest import Server
    from test_disconnect_all import settles_at
    s = Server()
    try:
        # a new server: no client once the readiness probe's close is seen (it was still
        # counted once, and the final count then "fell" below the base)
        base = settles_at(s, 0)
        cls = import_string(backend)
        for i in range(40):
            opts = ({"io_timeout": 1.0 + i / 100} if "Mcpool" in backend
                    else {"connect_timeout": 1.0 + i / 100} if "PyMemcache" in backend
                    else {"behaviors": {"connect_timeout": 1000 + i}})
            b = cls(s.addr, {"OPTIONS": opts, "KEY_PREFIX": "drop"})
            b.set("k%d" % i, i)
            assert b.get("k%d" % i) == i
            b.close()
            del b
        gc.collect()
        assert settles_at(s, base) == base
        if "Mcpool" in backend:
            assert len(mcpool.django._clients) == 0
    finally:
        s.stop()


def test_backends_alive_at_once_share_one_client_until_the_last_goes(server, prefix):
    import gc
    import weakref
    params = {"KEY_PREFIX": prefix, "OPTIONS": {"io_timeout": 1.234}}
    a = mcpool.django.McpoolCache(server.addr, params)
    b = mcpool.django.McpoolCache(server.addr, params)
    a.set("k", 1)
    assert a._cache is b._cache
    ref = weakref.ref(a._cache)
    del a
    gc.collect()
    assert ref() is b._cache and b.get("k") == 1
    del b
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("timeout", [12 * 365 * 86400, 10 ** 9, 2 ** 31, 2 ** 40, 2 ** 70])
def test_a_timeout_past_what_memcached_holds_is_its_last_moment_never_an_error(server, prefix,
                                                                               timeout):
    """A timeout ending after 2038-01-19 (MAX_TTL, the last unix time memcached holds) raised
    ClientError from set/add/touch/set_many (for 2**40 quoting a saturated 4294967295). Django's
    PyLibMCCache, side by side, does not raise; it sends the number as it is and memcached
    keeps nothing (or, for 2**40, keeps it). Ours keeps the item until that last moment."""
    from django.core.cache.backends.memcached import PyLibMCCache
    peer = PyLibMCCache(server.addr, {"KEY_PREFIX": prefix + "peer"})
    ours = mcpool.django.McpoolCache(server.addr, {"KEY_PREFIX": prefix})
    for c in (peer, ours):  # neither raises
        c.set("k", "v", timeout)
        c.add("a", "v", timeout)
        c.set_many({"m": "v"}, timeout)
        c.touch("k", timeout)
    assert ours.get_backend_timeout(timeout) == mcpool.MAX_TTL
    assert ours.get_many(["k", "a", "m"]) == {"k": "v", "a": "v", "m": "v"}
    meta = mcpool.Client([server.addr], protocol="meta")
    for k in ("k", "a", "m"):
        ttl = meta.meta_info(ours.make_key(k))["ttl"]
        assert abs(ttl - (mcpool.MAX_TTL - time.time())) <= 120, (k, ttl)


def test_the_options_of_djangos_own_backends_are_read(prefix):
    """OPTIONS written for Django's PyLibMCCache ({"binary": True, "behaviors": {"ketama":
    True}}) and PyMemcacheCache (no_delay, ignore_exc, max_pool_size, use_pooling) were
    refused as unknown options: now read as mcpool's (tester finding frameworks 4), under
    any preset (test_django_peer_options.py: all of them under their client's preset).
    PyLibMCCache's place every key where PyLibMCCache does, and both read each other's
    values."""
    require("pylibmc", "python3-pylibmc")
    from conftest import Server
    ss = [Server() for _ in range(3)]
    try:
        location = [s.addr for s in ss]
        libmc = {"binary": True, "behaviors": {"ketama": True}}
        setting = {
            "ours": {"BACKEND": BACKEND, "LOCATION": location, "KEY_PREFIX": prefix,
                     "OPTIONS": dict(libmc)},
            "peer": {"BACKEND": "django.core.cache.backends.memcached.PyLibMCCache",
                     "LOCATION": location, "KEY_PREFIX": prefix, "OPTIONS": dict(libmc)},
            "pymc": {"BACKEND": BACKEND, "LOCATION": location, "KEY_PREFIX": prefix + "m",
                     "OPTIONS": {"no_delay": True, "ignore_exc": True, "max_pool_size": 4,
                                 "use_pooling": True}},
        }
        with override_settings(CACHES=setting):
            from django.core.cache import caches as c
            ours, theirs, pymc = c["ours"], c["peer"], c["pymc"]
            keys = ["k%d" % i for i in range(40)]
            theirs.set_many({k: {"v": k} for k in keys})
            assert ours.get_many(keys) == {k: {"v": k} for k in keys}
            for k in keys:
                ours.set(k, [k])
                holders = [s for s in ss if s.raw_get(ours.make_key(k)) is not None]
                assert len(holders) == 1, k
                assert theirs.get(k) == [k], k
            pymc.set("x", 1)
            assert pymc.get("x") == 1
        # read as mcpool.compat.pymemcache's HashClient reads them (tester finding frameworks
        # 6: one translation): max_pool_size and pool_idle_timeout only with use_pooling,
        # use_pooling=False (HashClient's default; mcpool pools either way) accepted
        for opts, size in (({"use_pooling": True, "max_pool_size": 4}, 4),
                           ({"max_pool_size": 4}, None), ({"use_pooling": False}, None)):
            c = mcpool.django.McpoolCache(location, {"OPTIONS": opts})
            assert c._options.get("max_size") == size, opts
            assert isinstance(c._cache, mcpool.Client)
    finally:
        for s in ss:
            s.stop()


@pytest.fixture(scope="module")
def colon_sockets(tmp_path_factory):
    from conftest import unix_memcacheds
    yield from unix_memcacheds(str(tmp_path_factory.mktemp("djsocks")),
                               ["col", "col:2", "rel.sock"])


@pytest.mark.parametrize("preset", ["pylibmc", "pymemcache"])
@pytest.mark.parametrize("spelling", ["", "unix:"])
def test_location_socket_with_a_colon_is_that_socket_as_djangos_backends(colon_sockets, preset,
                                                                         spelling):
    """Django's PyLibMCCache and PyMemcacheCache take a LOCATION path whole: "/d/col:2" is
    the socket col:2 (tester finding retest14 1: the core read ":2" as a weight and every
    key went to the socket col)."""
    d, names = colon_sockets
    key = "dj-colon-%s-%s" % (preset, spelling.strip(":"))
    c = mcpool.django.McpoolCache(spelling + os.path.join(d, "col:2"),
                                  {"OPTIONS": {"preset": preset}, "KEY_PREFIX": ""})
    c.set(key, "v")
    assert socket_holders(d, names, c.make_key(key).encode()) == ["col:2"]
    assert c.get(key) == "v"


def test_location_relative_unix_name_is_in_the_working_directory(colon_sockets, monkeypatch):
    """Django's MemcachedCache (python-memcached) opens LOCATION "unix:NAME" in the working
    directory (tester finding retest14 3: ConfigurationError)."""
    d, names = colon_sockets
    monkeypatch.chdir(d)
    c = mcpool.django.McpoolCache("unix:rel.sock", {"OPTIONS": {"preset": "python-memcached"}})
    c.set("dj-rel", "v")
    assert socket_holders(d, names, c.make_key("dj-rel").encode()) == ["rel.sock"]
    assert c.get("dj-rel") == "v"


def test_options_take_a_bytes_key_prefix_as_pymemcachecache(server, prefix):
    """Django's PyMemcacheCache hands OPTIONS {"key_prefix": b"..."} to pymemcache, which
    prepends those bytes, UTF-8 or not: the backend takes them too, the item under the raw
    bytes and Django's own key (tester finding keys2 2: ConfigurationError "not UTF-8")."""
    ns = b"caf\xe9:"
    cache = mcpool.django.McpoolCache(server.addr, {
        "KEY_PREFIX": prefix, "OPTIONS": {"key_prefix": ns, "preset": "pymemcache"}})
    cache.set("k", "v")
    assert cache.get("k") == "v" and cache.get_many(["k"]) == {"k": "v"}
    assert server.raw(b"get " + ns + cache.make_key("k").encode() + b"\r\n").startswith(
        b"VALUE " + ns)


def _free_addr():
    import socket
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def test_ignore_exc_answers_every_call_as_pymemcachecache(server_error_server, prefix):
    """OPTIONS {"ignore_exc": True} (PyMemcacheCache's) over a live server, one refused and
    one answering SERVER_ERROR to everything (a fake server): every call answers as Django's
    PyMemcacheCache does, the failed servers' keys as misses / not done, never an exception
    (tester finding partial 3: it was read as fail_open, so get_many and delete_many raised
    ServerError and lost the other servers' answers). set_many lists every key not stored,
    where pymemcache lists the refused server's keys and not the SERVER_ERROR one's."""
    from conftest import Server
    live = Server()  # its own: clear() flushes it
    try:
        down = _free_addr()
        location = [live.addr, down, server_error_server.addr]
        opts = {"ignore_exc": True, "timeout": 1, "connect_timeout": 1}
        ours = mcpool.django.McpoolCache(location, {
            "KEY_PREFIX": prefix, "OPTIONS": dict(opts, preset="pymemcache")})
        from django.core.cache.backends.memcached import PyMemcacheCache
        theirs = PyMemcacheCache(location, {"KEY_PREFIX": prefix, "OPTIONS": dict(opts)})
        placed = mcpool.Client(location, preset="pymemcache")
        keys = ["k%02d" % i for i in range(30)]
        where = {k: placed.server_for(ours.make_key(k)) for k in keys}
        up = [k for k in keys if where[k] == live.addr]
        bad = next(k for k in keys if where[k] == server_error_server.addr)
        gone = next(k for k in keys if where[k] == down)
        assert up and bad and gone
        assert sorted(ours.set_many({k: "v-" + k for k in keys})) == sorted(
            k for k in keys if k not in up)
        got = []
        for cache in (ours, theirs):
            cache.set_many({k: "v-" + k for k in keys})
            got.append([
                cache.get_many(keys), cache.get(bad), cache.get(gone, 5), cache.add(bad, 1),
                cache.set(bad, 1), cache.touch(bad), cache.delete(bad), cache.has_key(bad),
                cache.incr(bad), cache.decr(gone), cache.delete_many(keys), cache.get_many(up),
                cache.clear()])
        assert got[0] == got[1]
        assert got[0][0] == {k: "v-" + k for k in up} and got[0][-2] == {}
        assert got[0][1:10] == [None, 5, False, None, False, False, False, False, False]
    finally:
        live.stop()


def test_its_exceptions_name_the_callers_keys(server, server_error_server, prefix):
    """An error raised from the backend names the caller's key ("k1"), not the backend's
    (":1:k1" with its KEY_PREFIX), and what it carries (get_many's `hits` and `errors`,
    delete_many's and set_many's `key` and `results`) is keyed by the caller's keys (tester
    finding partial 3)."""
    cache = mcpool.django.McpoolCache([server.addr, server_error_server.addr], {
        "KEY_PREFIX": prefix, "OPTIONS": {"timeout": 2}})
    placed = cache._cache
    keys = ["k%02d" % i for i in range(20)]
    bad = [k for k in keys if placed.server_for(cache.make_key(k)) == server_error_server.addr]
    up = [k for k in keys if k not in bad]
    assert bad and up
    for k in up:
        cache.set(k, "v-" + k)
    made = cache.make_key(bad[0])

    def check(e, key):
        assert '"%s"' % key in str(e) and made not in str(e) and prefix not in str(e), str(e)
    with pytest.raises(mcpool.ServerError) as e:
        cache.get_many(keys)
    check(e.value, bad[0])
    assert e.value.hits == {k: "v-" + k for k in up}
    assert set(e.value.errors) == set(bad)
    for k, err in e.value.errors.items():
        assert '"%s"' % k in str(err) and prefix not in str(err), str(err)
    for call in (lambda: cache.delete_many(keys), lambda: cache.set_many(
            {k: 1 for k in keys})):
        with pytest.raises(mcpool.ServerError) as e:
            call()
        check(e.value, bad[0])
        assert e.value.key == bad[0] and set(e.value.results) == set(keys)
        assert all(e.value.results[k] is True for k in up)
        assert all(prefix not in str(e.value.results[k]) for k in bad)
    for call in (lambda: cache.get(bad[0]), lambda: cache.incr(bad[0]),
                 lambda: cache.set(bad[0], 1), lambda: cache.delete(bad[0])):
        with pytest.raises(mcpool.ServerError) as e:
            call()
        check(e.value, bad[0])


def test_location_unbracketed_ipv6_as_pymemcache_reads_it(server, prefix):
    """PyMemcacheCache takes ``::1:11211`` (pymemcache's HashClient: the port after the last
    ``:``); with the pymemcache preset so does McpoolCache (tester finding addresses 5: it
    was refused). Other value formats leave it to the core, which asks for brackets."""
    c = mcpool.django.McpoolCache("::1:11299;" + server.addr, {
        "KEY_PREFIX": prefix, "OPTIONS": {"preset": "pymemcache"}})
    assert c._servers == ["[::1]:11299", server.addr]
    pymemcache = pytest.importorskip("pymemcache.client.base")
    assert pymemcache.normalize_server_spec("::1:11299") == ("::1", 11299)
    with pytest.raises(mcpool.ConfigurationError, match="IPv6 address must be in brackets"):
        mcpool.django.McpoolCache("::1:11299", {"OPTIONS": {"preset": "pylibmc"}}).get("k")


@pytest.fixture(scope="module")
def dual_stack_servers():
    """Two memcached servers, each on 127.0.0.1 and [::1] (one port each), stopped after."""
    from conftest import Server
    ss = [Server("-l", "::1") for _ in range(2)]
    yield ss
    for s in ss:
        s.stop()


def _holders(servers, key):
    """The indexes of the servers holding key."""
    return [i for i, s in enumerate(servers) if s.raw_get(key) is not None]


def test_location_inet_forms_under_the_python_memcached_preset(dual_stack_servers, prefix):
    """Under OPTIONS {"preset": "python-memcached"} LOCATION is read as Django's
    MemcachedCache (python-memcached) reads it, as mcpool.compat.memcache reads a server:
    "inet6:[::1]:PORT" (python-memcached's one IPv6 form) and "inet:HOST:PORT" were refused
    (tester finding retest27 3); each key is on the server MemcachedCache puts it on, and each
    reads the other's values. What python-memcached refuses ("[::1]:PORT", "HOST:PORT:2")
    raises its ValueError from both."""
    require("memcache", "python3-memcache")
    from django.core.cache.backends.memcached import MemcachedCache
    a, b = dual_stack_servers
    locations = ["inet:127.0.0.1:%d;inet6:[::1]:%d" % (a.port, b.port),
                 ["inet6:[::1]:%d" % a.port, "inet:127.0.0.1:%d" % b.port],
                 "inet6:[::1]:%d" % b.port]
    keys = ["k%02d" % i for i in range(16)]
    for n, location in enumerate(locations):
        params = {"KEY_PREFIX": "%s%d" % (prefix, n)}
        ours = mcpool.django.McpoolCache(location, dict(
            params, OPTIONS={"preset": "python-memcached"}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MemcachedCache is deprecated
            theirs = MemcachedCache(location, dict(params))
        theirs.set_many({k: {"v": k} for k in keys})
        placed = {k: _holders(dual_stack_servers, theirs.make_key(k)) for k in keys}
        assert all(len(p) == 1 for p in placed.values()), placed
        assert ours.get_many(keys) == {k: {"v": k} for k in keys}
        ours.delete_many(keys)
        assert theirs.get_many(keys) == {}
        ours.set_many({k: [k] for k in keys})
        assert {k: _holders(dual_stack_servers, ours.make_key(k)) for k in keys} == placed
        assert theirs.get_many(keys) == {k: [k] for k in keys}
        if n == 0:
            assert sorted(set(p[0] for p in placed.values())) == [0, 1]
    for location in ("[::1]:%d" % a.port, "127.0.0.1:%d:2" % a.port):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="Unable to parse connection string"):
                MemcachedCache(location, {}).get("k")
        with pytest.raises(ValueError, match="Unable to parse connection string"):
            mcpool.django.McpoolCache(location, {"OPTIONS": {"preset": "python-memcached"}})


def test_location_with_a_third_field_under_the_pymemcache_preset(dual_stack_servers):
    """Under OPTIONS {"preset": "pymemcache"} LOCATION is read as Django's PyMemcacheCache
    (pymemcache's HashClient) reads it, one rule for IPv4 and IPv6: pymemcache takes no
    weight, so "HOST:PORT:2" is the host "HOST:PORT", port 2, and "[::1]:PORT:2" the host
    "::1]:PORT", port 2, hosts no resolver answers: every PyMemcacheCache call fails
    (socket.gaierror), and McpoolCache refuses both, naming that reading. "[::1]:PORT:2" was
    taken as weight 2 (tester finding retest27 8)."""
    import socket
    require("pymemcache", "python3-pymemcache")
    from django.core.cache.backends.memcached import PyMemcacheCache
    a, _ = dual_stack_servers
    for location, host in (("127.0.0.1:%d:2" % a.port, "127.0.0.1:%d" % a.port),
                           ("[::1]:%d:2" % a.port, "::1]:%d" % a.port)):
        theirs = PyMemcacheCache(location, {"OPTIONS": {"connect_timeout": 1}})
        with pytest.raises(socket.gaierror):
            theirs.set("k", 1)
        with pytest.raises(ValueError) as e:
            mcpool.django.McpoolCache(location, {"OPTIONS": {"preset": "pymemcache"}})
        assert ("pymemcache reads this server as the host %r and the port 2" % host
                in str(e.value)), str(e.value)
    # the forms pymemcache reads as a host and port still work, IPv4 and IPv6 alike
    for location in ("127.0.0.1:%d" % a.port, "[::1]:%d" % a.port, "::1:%d" % a.port):
        c = mcpool.django.McpoolCache(location, {"OPTIONS": {"preset": "pymemcache"}})
        c.set("k", 1)
        assert c.get("k") == 1


def test_a_prepended_pickle_raises_the_key_naming_error_that_is_an_unpicklingerror(server,
                                                                                   prefix):
    """Bytes prepended to a pickle (tester finding mutations 2): PyLibMCCache raises pickle's
    UnpicklingError, naming no key; McpoolCache under the pylibmc preset raises the error
    every mcpool path raises (MCPOOL_VALUE_FORMAT naming the key, the unpickler's exception
    its __cause__), also an UnpicklingError; without the preset mcpool.ValueFormatError."""
    import pickle
    setting = {
        "ours": {"BACKEND": BACKEND, "LOCATION": server.addr, "KEY_PREFIX": prefix,
                 "OPTIONS": {"preset": "pylibmc"}},
        "plain": {"BACKEND": BACKEND, "LOCATION": server.addr, "KEY_PREFIX": prefix + "p"},
    }
    with override_settings(CACHES=setting):
        from django.core.cache import caches as c
        for name in ("ours", "plain"):
            cache = c[name]
            cache.set("ok", "fine")
            cache.set("pp", {"a": 1})
            mcpool.Client([server.addr]).prepend(cache.make_key("pp"), b"x")
            for read in (lambda: cache.get("pp"), lambda: cache.get_many(["ok", "pp"]),
                         lambda: cache.has_key("pp")):
                with pytest.raises(ValueError) as e:
                    read()
                assert e.value.status_name == "MCPOOL_VALUE_FORMAT", name
                assert "pp'" in str(e.value), name  # (the key made, or as given)
                assert isinstance(e.value.__cause__, pickle.UnpicklingError), name
                if name == "ours":
                    assert isinstance(e.value, pickle.UnpicklingError)
                else:
                    assert isinstance(e.value, mcpool.ValueFormatError)
