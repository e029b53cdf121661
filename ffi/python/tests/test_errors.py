"""Bad input raises the documented exceptions; failures of the network are typed."""
import os
import re
import time
from decimal import Decimal

import pytest

import mcpool


def test_hierarchy():
    assert issubclass(mcpool.ClientError, mcpool.Error)
    assert issubclass(mcpool.ClientError, ValueError)
    assert issubclass(mcpool.ClientTypeError, mcpool.ClientError)
    assert issubclass(mcpool.ClientTypeError, TypeError)
    assert issubclass(mcpool.ConnectionError, mcpool.Error)
    assert issubclass(mcpool.TimeoutError, mcpool.ConnectionError)
    assert issubclass(mcpool.TimeoutError, TimeoutError)
    assert issubclass(mcpool.ServerError, mcpool.Error)


@pytest.mark.parametrize("key", ["", "has space", "tab\tkey", "new\nline", "x" * 251,
                                 b"ctl\x01", "\u00e9" * 126])
def test_bad_keys(mc, key):
    for call in (lambda: mc.get(key), lambda: mc.set(key, b"v"), lambda: mc.delete(key),
                 lambda: mc.get_multi([key]), lambda: mc.incr(key), lambda: mc.touch(key, 1),
                 lambda: mc.gets(key), lambda: mc.add(key, b"v")):
        with pytest.raises(mcpool.ClientError) as e:
            call()
        assert e.value.status_name == "MCPOOL_INVALID_KEY"


def test_long_key_with_prefix(server):
    c = mcpool.Client([server.addr], key_prefix="p" * 10)
    c.set("k" * 240, b"ok")
    with pytest.raises(mcpool.ClientError):
        c.set("k" * 241, b"v")


@pytest.mark.parametrize("key", [1, None, 1.5, ["k"], object()])
def test_wrong_key_types(mc, key):
    with pytest.raises(mcpool.ClientTypeError):
        mc.get(key)
    with pytest.raises(TypeError):
        mc.set(key, b"v")
    with pytest.raises(mcpool.ClientError):
        mc.get_multi([key])


@pytest.mark.parametrize("value", [1.5, None, [1], {"a": 1}, object(), bytearray(b"x")])
def test_wrong_value_types_without_pickle(mc, prefix, value):
    with pytest.raises(mcpool.ClientTypeError):
        mc.set(prefix + "v", value)
    with pytest.raises(mcpool.ClientTypeError):
        mc.set_multi({prefix + "v": value})
    assert mc.get(prefix + "v") is None


def test_oversized_value(mc, prefix):
    # max_value_size counts the bytes sent: 2 MiB that do not compress are refused...
    with pytest.raises(mcpool.ClientError) as e:
        mc.set(prefix + "big", os.urandom(2 << 20))
    assert e.value.status_name == "MCPOOL_VALUE_TOO_LARGE"
    assert mc.get(prefix + "big") is None
    assert mc.set(prefix + "ok", b"x" * 1000)  # the connection is still good
    # ...2 MiB that compress below 1 MiB are stored (as pylibmc and python-memcached do)
    assert mc.set(prefix + "squeezed", b"x" * (2 << 20))
    assert mc.get(prefix + "squeezed") == b"x" * (2 << 20)


def test_bad_numbers(mc, prefix):
    mc.set(prefix + "n", 1)
    with pytest.raises(mcpool.ClientError):
        mc.incr(prefix + "n", -1)
    with pytest.raises(mcpool.ClientError):
        mc.incr(prefix + "n", 2 ** 64)
    with pytest.raises(mcpool.ClientTypeError):
        mc.incr(prefix + "n", "1")
    with pytest.raises(mcpool.ClientError):
        mc.set(prefix + "n", 1, time=mcpool.MAX_TTL + 1)
    with pytest.raises(mcpool.ClientError):
        mc.get_lease(prefix + "n", vivify_ttl=-1)  # only a store's or touch's may be negative
    with pytest.raises(mcpool.ClientTypeError):
        mc.set(prefix + "n", 1, time="soon")
    with pytest.raises(mcpool.ClientError):
        mc.cas(prefix + "n", 1, -5)


def test_incr_non_number_is_client_error(mc, prefix):
    """The server's CLIENT_ERROR reply: the core's CLIENT_ERROR class (docs/errors.md)."""
    mc.set(prefix + "s", "abc")
    with pytest.raises(mcpool.ClientError) as e:
        mc.incr(prefix + "s")
    assert e.value.status_name == "MCPOOL_CLIENT_ERROR"
    assert e.value.status_class == "CLIENT_ERROR"


def test_append_wrong_type(mc, prefix):
    mc.set(prefix + "a", b"x")
    with pytest.raises(mcpool.ClientTypeError):
        mc.append(prefix + "a", 5)


def test_bad_config():
    with pytest.raises(mcpool.ClientError):
        mcpool.Client([])
    with pytest.raises(mcpool.ClientError):
        mcpool.Client(["127.0.0.1:11211"], distribution="no-such-profile")
    with pytest.raises(mcpool.ClientError):
        mcpool.Client(["127.0.0.1:notaport"])
    with pytest.raises(mcpool.ClientError):
        mcpool.Client(["127.0.0.1:11211"], protocol="carrier-pigeon")
    with pytest.raises(mcpool.ClientError):
        mcpool.Client(["127.0.0.1:11211"], weights=[1, 2])
    with pytest.raises(mcpool.ClientError):
        mcpool.Client(["127.0.0.1:11211"], min_compress_len=-1)
    with pytest.raises(mcpool.ClientTypeError):
        mcpool.Client([42])
    with pytest.raises(mcpool.ClientError):
        mcpool.Client(["127.0.0.1:11211"], timeout=-1)


def test_connection_refused():
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        c = mcpool.Client(["127.0.0.1:%d" % port], connect_timeout=0.5, min_idle=0)
        with pytest.raises(mcpool.ConnectionError) as e:
            c.get("k")
        assert "127.0.0.1:%d" % port in str(e.value)
        with pytest.raises(mcpool.ConnectionError):
            c.set("k", b"v")
        with pytest.raises(mcpool.ConnectionError):
            c.version()


def test_timeout_is_timeout_error():
    """A server that accepts but never answers: the read times out."""
    import socket
    with socket.socket() as lsn:
        lsn.bind(("127.0.0.1", 0))
        lsn.listen(16)
        port = lsn.getsockname()[1]
        c = mcpool.Client(["127.0.0.1:%d" % port], timeout=0.2, min_idle=0)
        with pytest.raises(mcpool.TimeoutError) as e:
            c.get("k")
        assert isinstance(e.value, TimeoutError)


def test_not_initialised():
    c = mcpool.Client.__new__(mcpool.Client)
    with pytest.raises(mcpool.ClientError):
        c.get("k")


@pytest.mark.parametrize("call, cls", [
    (lambda mc, k: mc.incr(k, -1), mcpool.ClientError),
    (lambda mc, k: mc.incr(k, 2**64), mcpool.ClientError),
    (lambda mc, k: mc.incr(k, "x"), mcpool.ClientTypeError),
    (lambda mc, k: mc.set(k, 1, 2**32), mcpool.ClientError),
    (lambda mc, k: mc.set(k, 1, "x"), mcpool.ClientTypeError),
    (lambda mc, k: mc.set(k, object()), mcpool.ClientTypeError),
    (lambda mc, k: mcpool.Client(mc.servers, value_format="whalin").set(k, 2**70),
     mcpool.ClientError),
    (lambda mc, k: mc.get(5), mcpool.ClientTypeError),
    (lambda mc, k: mc.cas(k, 1, -1), mcpool.ClientError),
], ids=["delta_negative", "delta_too_large", "delta_str", "ttl_beyond_32_bits", "ttl_str",
        "value_object", "value_big_int", "key_int", "cas_negative"])
def test_errors_raised_by_the_binding_carry_the_status_attributes(mc, prefix, call, cls):
    """README: every instance has .status, .status_name, .status_class (issue: the binding's
    own errors had none, and compat.memcache / mcpool.django then raised AttributeError)."""
    with pytest.raises(cls) as ei:
        call(mc, prefix + "n")
    e = ei.value
    assert isinstance(e.status, int) and e.status_name.startswith("MCPOOL_"), vars(e)
    assert e.status_class in ("CLIENT_ERROR", "CONFIGURATION"), e.status_class


def test_every_error_class_has_the_status_attributes():
    for cls in (mcpool.Error, mcpool.ClientError, mcpool.ClientTypeError,
                mcpool.ConfigurationError, mcpool.ConnectionError, mcpool.TimeoutError,
                mcpool.ServerError):
        e = cls("raised by hand")
        assert isinstance(e.status, int) and e.status_name.startswith("MCPOOL_"), cls
        assert e.status_class in ("CLIENT_ERROR", "CONFIGURATION", "CONNECTION", "TIMEOUT",
                                  "SERVER_ERROR", "INTERNAL"), cls
    assert mcpool.TimeoutError("x").status_class == "TIMEOUT"
    assert mcpool.ConfigurationError("x").status_class == "CONFIGURATION"


def test_compat_memcache_incr_with_a_bad_delta_raises_a_value_error(server, prefix):
    import mcpool.compat.memcache as cm
    c = cm.Client([server.addr])
    c.set(prefix + "n", 5)
    for delta in (-1, 2**64, "x", 2.5):  # python-memcached: ValueError (memcached refuses
        with pytest.raises(ValueError):  # str(delta)); test_compat_memcache compares them
            c.incr(prefix + "n", delta)
    assert c.get(prefix + "n") == 5


@pytest.mark.parametrize("call", [
    lambda mc, p: mc.set(p + "a\ud800", 1),
    lambda mc, p: mc.get(p + "\udfff"),
    lambda mc, p: mc.set(p + "k", "v\ud800"),
    lambda mc, p: mc.set_multi({p + "k": "v\ud800"}),
    lambda mc, p: mc.get_multi([p + "k\ud800"]),
], ids=["set_key", "get_key", "set_value", "set_multi_value", "get_multi_key"])
def test_a_lone_surrogate_is_an_mcpool_error(mc, prefix, call):
    """A str UTF-8 cannot encode: a ClientError (still a ValueError), never a bare
    UnicodeEncodeError that bypasses `except mcpool.Error`."""
    with pytest.raises(mcpool.ClientError) as ei:
        call(mc, prefix)
    assert "surrogate" in str(ei.value) and ei.value.status_name == "MCPOOL_INVALID_ARGUMENT"


def test_an_argument_refused_by_the_binding_names_the_call_the_key_and_the_argument(mc,
                                                                                  prefix):
    """(tester finding badinput 4) These named neither the call nor the key, "expiry time
    must be an int" for a time that may be a float or None too, and a key_prefix that is no
    str was blamed on the keys; the class of each is as it was."""
    k = prefix + "k"
    r = repr(k)
    for call, exc, want in [
        (lambda: mc.set(k, b"v", time="10"), mcpool.ClientTypeError,
         "set %s: time must be an int, a float or None, not str" % r),
        (lambda: mc.touch(k, True), mcpool.ClientTypeError,
         "touch %s: time must be an int, a float or None, not bool" % r),
        (lambda: mc.gat(k, "1"), mcpool.ClientTypeError,
         "gat %s: time must be an int, a float or None, not str" % r),
        (lambda: mc.set_multi({k: b"v"}, "1"), mcpool.ClientTypeError,
         "set_multi: time must be an int, a float or None, not str"),
        (lambda: mc.flush_all("1"), mcpool.ClientTypeError,
         "flush_all: delay must be an int, a float or None, not str"),
        (lambda: mc.get_lease(k, vivify_ttl="1"), mcpool.ClientTypeError,
         "get_lease %s: vivify_ttl must be an int, a float or None, not str" % r),
        (lambda: mc.set_counter(k, -1), mcpool.ClientError,
         "set_counter %s: value must be between 0 and 2**64-1 (memcached's counters are "
         "unsigned 64-bit), not -1" % r),
        (lambda: mc.set_counter(k, "5"), mcpool.ClientTypeError,
         "set_counter %s: value must be an int, not str" % r),
        (lambda: mc.get_multi([k], key_prefix=5), mcpool.ClientTypeError,
         "get_multi: key_prefix must be str or bytes, not int"),
        (lambda: mc.delete_multi([k, 5]), mcpool.ClientTypeError,
         "delete_multi: a key must be str or bytes, not int"),
        (lambda: mc.get(5), mcpool.ClientTypeError, "get: a key must be str or bytes, not int"),
        (lambda: mc.delete_with_version(k, -1), mcpool.ClientError,
         "delete_with_version %s: version must be between 0 and 2**64-1" % r),
    ]:
        with pytest.raises(exc) as e:
            call()
        assert str(e.value) == want
        assert type(e.value) is exc
    # a str UTF-8 cannot encode: the key, the value or the key_prefix, its error the cause
    bad = k + "\udcff"
    for call, want in [
        (lambda: mc.set(bad, b"v"), "set %r: the key is a str that UTF-8 cannot encode" % bad),
        (lambda: mc.get(bad), "get %r: the key is a str that UTF-8 cannot encode" % bad),
        (lambda: mc.delete(bad), "delete %r: the key is a str" % bad),
        (lambda: mc.get_multi([k, bad]), "get_multi %r: the key is a str" % bad),
        (lambda: mc.set(k, "v\udcff"), "set %r: the value is a str that UTF-8" % k),
        (lambda: mc.append(k, "v\udcff"), "append %r: the value is a str" % k),
        (lambda: mc.get_multi([k], key_prefix="p\udcff"), "get_multi: key_prefix is a str"),
    ]:
        with pytest.raises(mcpool.ClientError) as e:
            call()
        assert str(e.value).startswith(want), e.value
        assert type(e.value) is mcpool.ClientError
        assert e.value.status_name == "MCPOOL_INVALID_ARGUMENT"
        assert isinstance(e.value.__cause__, UnicodeEncodeError)


def test_a_kind_the_value_format_lacks_is_a_client_type_error(server, prefix):
    """README: ClientTypeError for a value that cannot be stored (it was ConfigurationError;
    set_multi only listed the key as failed)."""
    mc = mcpool.Client([server.addr], value_format="cache-memcached-fast")
    for store in (lambda: mc.set(prefix + "k", 5), lambda: mc.add(prefix + "k", True),
                  lambda: mc.set_multi({prefix + "k": 5, prefix + "j": b"x"})):
        with pytest.raises(mcpool.ClientTypeError, match="has no (int|bool) kind") as ei:
            store()
        assert ei.value.status_name == "MCPOOL_UNSUPPORTED"
    assert mc.set(prefix + "k", b"bytes are stored")


def test_an_option_given_under_two_names_names_both():
    with pytest.raises(mcpool.ClientError,
                       match=r"option key_prefix given twice \(as prefix and key_prefix\)"):
        mcpool.Client(["127.0.0.1:1"], prefix="a", key_prefix="b")


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_ttl_memcached_cannot_honour_is_refused_before_sending(server, prefix, protocol):
    """memcached reads an expiry above 2**31-1 as negative (text, meta): the item would
    expire at once while the store answers success. The core refuses it: ClientError (also a
    ValueError) with MCPOOL_INVALID_ARGUMENT, nothing stored. A set so refused (set_multi's
    keys too) deletes the key, as the clients mcpool replaces leave no older value (tester
    finding ttl 1); every other call leaves the old value intact."""
    mc = mcpool.Client([server.addr], protocol=protocol)
    k = prefix + "ttl-" + protocol
    assert mcpool.MAX_TTL == 2**31 - 1
    assert mc.set(k + "max", "v", time=mcpool.MAX_TTL)
    assert mc.get(k + "max") == "v"
    assert mc.touch(k + "max", mcpool.MAX_TTL)
    assert mc.get(k + "max") == "v"
    for bad in (2**31, 2**32 - 1):
        calls = [
            (lambda: mc.set(k, "new", time=bad), None),
            (lambda: mc.set(k, "new", expire=bad), None),
            (lambda: mc.add(k + "fresh", "new", time=bad), "old"),
            (lambda: mc.replace(k, "new", time=bad), "old"),
            (lambda: mc.cas(k, "new", 1, time=bad), "old"),
            (lambda: mc.touch(k, bad), "old"),
            (lambda: mc.set_multi({k: "new", k + "fresh": "new"}, time=bad), None),
            (lambda: mc.add_multi({k + "fresh": "new"}, time=bad), "old"),
            (lambda: mc.flush_all(bad), "old"),
        ]
        if protocol == "meta":
            # a lease's times are durations of 30 days at most (the core's rule)
            calls += [(lambda: mc.get_lease(k + "fresh", vivify_ttl=bad), "old"),
                      (lambda: mc.get_lease(k, recache_below=bad), "old"),
                      (lambda: mc.invalidate(k, stale_ttl=bad), "old")]
        for call, left in calls:
            mc.set(k, "old")
            with pytest.raises(mcpool.ClientError) as e:
                call()
            assert e.value.status_name == "MCPOOL_INVALID_ARGUMENT", e.value
            assert isinstance(e.value, ValueError)
            assert str(bad) in str(e.value)
            assert "2147483647" in str(e.value) or "2592000" in str(e.value), e.value
            assert mc.get(k) == left
            assert mc.get(k + "fresh") is None
    # One beyond 32 bits cannot be passed at all: refused in the same words, as given
    # (test_time_refused_beyond_32_bits_is_named_as_given), the key deleted as for 2**31; a
    # negative one is a store's or touch's "immediately expired" (test_cachelib.py) and
    # flush_all's "now" (test_compat_pylibmc.py), refused elsewhere.
    mc.set(k, "old")
    with pytest.raises(mcpool.ClientError, match="invalid ttl: 4294967296 is above 2147483647"):
        mc.set(k, "new", time=2**32)
    assert mc.get(k) is None
    mc.set(k, "old")
    with pytest.raises(mcpool.ClientError, match="2147483647|2592000"):
        mc.get_lease(k + "fresh", vivify_ttl=-1) if protocol == "meta" else mc.flush_all(2**32)
    assert mc.get(k) == "old"


def test_time_refused_beyond_32_bits_is_named_as_given(server, prefix):
    """A time that cannot be passed to the core (beyond 32 bits, a negative lease time, a
    fraction above MAX_TTL) is refused as 2**31 is, in the core's words
    (mcpool_expiry_checked; a store's by mcpool_client_store_expiry_checked): the call, the
    key, the argument and the number as given; `server` None as for 2**31, nothing stored
    (tester finding expiry 3: "expiry time must be between 0 and 2147483647 seconds", none of
    them)."""
    mc = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "k"
    above = "is above 2147483647, the largest expiry memcached can honour"
    cases = [
        (lambda: mc.set(k, "v", 2**32), 'set "%s": invalid ttl: 4294967296 %s' % (k, above)),
        (lambda: mc.add(k, "v", time=2**40),
         'add "%s": invalid ttl: 1099511627776 %s' % (k, above)),
        (lambda: mc.replace(k, "v", expire=2**70),
         'replace "%s": invalid ttl: %d %s' % (k, 2**70, above)),
        (lambda: mc.cas(k, "v", 5, 2**32), 'cas "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.touch(k, 2**40), 'touch "%s": invalid ttl: 1099511627776 %s' % (k, above)),
        (lambda: mc.gat(k, 2**32), 'gat "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.gats(k, 2**32), 'gats "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.set_counter(k, 1, 2**32), 'set_counter "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.incr_or_init(k, 1, 0, 2**32),
         'incr_or_init "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.set_with_version(k, "v", 5, 2**32),
         'set_with_version "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.set(k, "v", 2147483648.5), 'set "%s": invalid ttl: 2147483648.5 is above' % k),
        (lambda: mc.set(k, "v", 1e300), 'set "%s": invalid ttl: 1e+300 is above' % k),
        (lambda: mc.get_lease(k, -1, 5),
         'get_lease "%s": invalid vivify_ttl: -1 is negative; a vivify_ttl is 0 to 2592000'
         % k),
        (lambda: mc.get_lease(k, 5, -1),
         'get_lease "%s": invalid recache_below: -1 is negative' % k),
        (lambda: mc.get_lease(k, -0.3), 'get_lease "%s": invalid vivify_ttl: -0.3 is negative' % k),
        (lambda: mc.get_lease(k, 2**32), 'get_lease "%s": invalid vivify_ttl: 4294967296 ' % k),
        (lambda: mc.invalidate(k, -1), 'invalidate "%s": invalid stale_ttl: -1 is negative' % k),
        (lambda: mc.invalidate(k, -2**70),
         'invalidate "%s": invalid stale_ttl: -%d is negative' % (k, 2**70)),
        # a batch store's time is refused for each key, as 2**31 is (the first key named)
        (lambda: mc.set_multi({k: "v"}, 2**32),
         'set_multi "%s": invalid ttl: 4294967296 %s' % (k, above)),
        (lambda: mc.add_multi({k: "v"}, 2**32), 'add_multi "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.replace_multi({k: "v"}, 2**32),
         'replace_multi "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.cas_multi({k: ("v", 5)}, 2**32),
         'cas_multi "%s": invalid ttl: 4294967296 ' % k),
        (lambda: mc.set_multi_noreply({k: "v"}, 2**32),
         'set_multi_noreply "%s": invalid ttl: 4294967296 ' % k),
        # any other batch's time is the call's: the call named
        (lambda: mc.touch_multi([k], 2**32), "touch_multi: invalid ttl: 4294967296 "),
        (lambda: mc.gat_multi([k], 2**32), "gat_multi: invalid ttl: 4294967296 "),
        (lambda: mc.gats_multi([k], 2**32), "gats_multi: invalid ttl: 4294967296 "),
        (lambda: mc.flush_all(2**32), "flush_all: invalid delay: 4294967296 %s" % above),
    ]
    mc.set(k + "o", "old")
    for call, message in cases:
        with pytest.raises(mcpool.ClientError) as e:
            call()
        assert str(e.value).startswith(message), (message, str(e.value))
        assert e.value.status_name == "MCPOOL_INVALID_ARGUMENT", e.value
        # (a batch item's exception, as for 2**31, carries no `server`)
        assert getattr(e.value, "server", None) is None, e.value
    # 2**31 has the same attributes (the call refuses it)
    mc.set(k, "old")
    with pytest.raises(mcpool.ClientError) as e:
        mc.set(k, "v", 2**31)
    assert str(e.value).startswith('set "%s": invalid ttl: 2147483648 %s' % (k, above))
    assert e.value.server is None
    assert mc.get(k) is None  # a refused set deletes the key (tester finding ttl 1)
    assert mc.get_multi([k + "o"]) == {k + "o": "old"}  # nothing flushed


def test_a_time_may_be_any_integer_with_index(server, prefix):
    """A time is an int or anything with __index__ (numpy.int64 is no int subclass), as
    pylibmc and its drop-in take it (tester finding expiry 6: ClientTypeError); a bool (the
    stubs' Time has none), a Decimal or a str is still a ClientTypeError."""

    class IndexInt:  # numpy.int64's integer protocol
        def __init__(self, n):
            self.n = n

        def __index__(self):
            return self.n

    mc = mcpool.Client([server.addr], protocol="meta")
    k = prefix + "k"
    assert mc.set(k, "v", IndexInt(60))
    assert 58 <= mc.meta_info(k)["ttl"] <= 60
    assert mc.touch(k, IndexInt(120))
    assert 118 <= mc.meta_info(k)["ttl"] <= 120
    assert mc.set_multi({k: "w"}, time=IndexInt(180)) == []
    assert 178 <= mc.meta_info(k)["ttl"] <= 180
    assert mc.gat(k, IndexInt(240)) == "w"
    assert 238 <= mc.meta_info(k)["ttl"] <= 240
    assert mc.set(k, "v", IndexInt(-1)) and mc.get(k) is None  # negative: expired at once
    assert mc.get_lease(k, IndexInt(30), IndexInt(0))[0] == "recompute"
    assert mcpool.expiry_from_now(IndexInt(60)) == 60
    # a moment after 2106 is the moment asked, and the set refusing it names it, never the
    # 32-bit 4294967295 (tester finding retest37 6)
    century = 100 * 365 * 86400
    before = int(time.time())
    at = mcpool.expiry_from_now(century)
    assert before + century <= at <= int(time.time()) + century + 1
    with pytest.raises(mcpool.ClientError, match="invalid ttl: %d is above" % at):
        mc.set(k, "v", at)
    with pytest.raises(mcpool.ClientError, match="invalid ttl: %d is above" % 2**40):
        mc.set(k, "v", IndexInt(2**40))
    for bad in (True, Decimal(60), "60"):
        # naming the call, the key and the argument, and every kind a time may be (tester
        # finding badinput 4: "expiry time must be an int, not str", no call or key)
        with pytest.raises(mcpool.ClientTypeError,
                           match="^set %s: time must be an int, a float or None, not %s$"
                           % (re.escape(repr(k)), type(bad).__name__)):
            mc.set(k, "v", bad)


@pytest.mark.parametrize("cas", [2**64, -1, 2**70])
def test_a_cas_out_of_range_names_the_call_and_key(mc, prefix, cas):
    """A CAS unique outside 64 bits names the call, the key, the range 1 to 2**64-1 (0 is
    refused too, by the core) and the number (tester finding counters 4: "cas must be between
    0 and 2**64-1", no call or key); 0 keeps the core's own reason. Through the pylibmc
    drop-in, which forwards it, the same words."""
    import mcpool.compat.pylibmc as compat_pylibmc
    k = prefix + "k"
    mc.set(k, "v")
    with pytest.raises(mcpool.ClientError) as e:
        mc.cas(k, "new", cas)
    assert str(e.value) == ("cas %r: cas must be between 1 and 2**64-1 (a CAS unique as "
                            "gets() returns it), not %d" % (k, cas))
    assert e.value.status_name == "MCPOOL_INVALID_ARGUMENT"
    with pytest.raises(mcpool.ClientTypeError, match="^cas %r: cas must be an int, not str$" % k):
        mc.cas(k, "new", "5")
    with pytest.raises(mcpool.ClientError, match='^cas "%s": invalid cas: 0 is no CAS unique' % k):
        mc.cas(k, "new", 0)
    pc = compat_pylibmc.Client([mc.servers[0]], behaviors={"cas": True})
    with pytest.raises(compat_pylibmc.Error, match=r"^cas %r: cas must be between 1 and 2\*\*64-1"
                       % k):
        pc.cas(k, "new", cas)
    assert mc.get(k) == "v"


# A value just under 1 MiB passes the client's own limit, but key and item header push the
# item over memcached's: it answers "SERVER_ERROR object too large for cache" (binary 0x0003).
NEAR_MIB = 1048540


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_server_too_large_is_value_too_large(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    c.set(prefix + "k", b"old")
    with pytest.raises(mcpool.ClientError) as e:
        c.set(prefix + "k", os.urandom(NEAR_MIB))
    assert e.value.status_name == "MCPOOL_VALUE_TOO_LARGE"
    assert "object too large for cache" in str(e.value)
    assert c.get(prefix + "k") is None  # memcached unlinks the old item on a refused set
    assert c.set(prefix + "k", b"new") is True


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_set_multi_server_too_large_fails_that_key_alone(server, prefix, protocol):
    """The others are stored; that key raises, as set raises it, with every key's outcome
    (tester finding partial 4: it was listed as not stored)."""
    c = mcpool.Client([server.addr], protocol=protocol)
    items = {prefix + "a": b"1", prefix + "k": os.urandom(NEAR_MIB), prefix + "j": b"ok",
             prefix + "z": b"zz"}
    with pytest.raises(mcpool.ClientError) as e:
        c.set_multi(items)
    assert e.value.status_name == "MCPOOL_VALUE_TOO_LARGE" and e.value.key == prefix + "k"
    assert "object too large for cache" in str(e.value)
    assert {k: r is True for k, r in e.value.results.items()} == {
        prefix + "a": True, prefix + "k": False, prefix + "j": True, prefix + "z": True}
    assert c.get_multi([prefix + x for x in "ajz"]) == {
        prefix + "a": b"1", prefix + "j": b"ok", prefix + "z": b"zz"}


def test_compat_memcache_set_multi_server_too_large_as_python_memcached(server, prefix):
    memcache = pytest.importorskip("memcache")
    import mcpool.compat.memcache as compat_memcache
    big = os.urandom(NEAR_MIB)
    got = []
    for mod, p in ((memcache, prefix + "real_"), (compat_memcache, prefix + "ours_")):
        c = mod.Client([server.addr])
        items = {"a": "1", "k": big, "j": "ok", "z": "zz"}
        failed = c.set_multi(items, key_prefix=p)
        got.append((sorted(failed), sorted(c.get_multi(list("ajzk"), key_prefix=p))))
    assert got[0] == got[1] == (["k"], ["a", "j", "z"])


def _free_addr():
    import socket
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def test_multi_call_errors_carry_each_keys_own_message(server, prefix):
    """A multi call's failed keys each get their own message (the core's per-item message),
    not the first failure's: get_multi raises the first failed key in key order with that
    key's message and class; set_multi's and _get_multi_each's per-key exceptions name their
    own key. Before, every exception carried one message, often another key's under another
    key's class (a ClientError saying "I/O error" for a refused key)."""
    down = _free_addr()
    mc = mcpool.Client([server.addr, down], failure_limit=100)
    dead = [k for k in (prefix + "d%d" % i for i in range(200)) if mc.server_for(k) == down][:3]
    assert len(dead) == 3
    bad = prefix + "a b"
    with pytest.raises(mcpool.ConnectionError) as e:
        mc.get_multi([dead[0], bad, dead[1]])
    assert repr(dead[0]).strip("'") in str(e.value) and "a b" not in str(e.value)
    with pytest.raises(mcpool.ClientError) as e:
        mc.get_multi([bad, dead[0]])
    assert "a b" in str(e.value) and dead[0] not in str(e.value)
    hits, failed = mc._get_multi_each([dead[0], bad, dead[1]])
    assert hits == {} and set(failed) == {dead[0], bad, dead[1]}
    for k, exc in failed.items():
        assert ("a b" if k == bad else k) in str(exc), (k, exc)
        assert isinstance(exc, mcpool.ClientError if k == bad else mcpool.ConnectionError)
    errors = {}
    assert sorted(mc.set_multi({k: 1 for k in dead}, _failed=errors)) == sorted(dead)
    assert set(errors) == set(dead)
    for k, exc in errors.items():
        assert k in str(exc) and all(o not in str(exc) for o in dead if o != k), (k, exc)


def test_constructor_conflicts_are_configuration_errors(server):
    """binary=True with another protocol, and weights of another length than the servers,
    are ConfigurationError (a ClientError), as every other configuration conflict (docs/errors.md:
    CONFIGURATION is raised by the constructor); before, a plain ClientError. binary=False,
    the default, asks for no protocol: protocol="binary" with it is binary."""
    for kw in ({"binary": True, "protocol": "text"}, {"binary": True, "protocol": "meta"},
               {"weights": [1, 2]}, {"weights": []}):
        with pytest.raises(mcpool.ConfigurationError) as e:
            mcpool.Client([server.addr], **kw)
        assert e.value.status_name == "MCPOOL_CONFIG", (kw, e.value.status_name)
        assert ("binary=True" in str(e.value) and "protocol" in str(e.value)) \
            or "weights" in str(e.value), str(e.value)
    with pytest.raises(mcpool.ConfigurationError):
        mcpool.Client([server.addr]).set_servers([server.addr], weights=[1, 1])
    for kw in ({"binary": False, "protocol": "binary"}, {"binary": True, "protocol": "binary"},
               {"binary": True}):
        c = mcpool.Client([server.addr], **kw)
        assert c.set("cfg-k", b"v") is True and c.get("cfg-k") == b"v"


def test_get_multi_with_a_server_down_carries_the_hits_and_each_keys_error(server, prefix):
    """One server down: get_multi still raises (an error beats a silent miss), the first
    failed key's exception in key order, but it carries what is known: `hits`, the dict of
    the keys read from the other server, and `errors`, each failed key's own exception
    (its own message). Before, every hit was dropped."""
    down = _free_addr()
    mc = mcpool.Client([server.addr, down], failure_limit=100)
    keys = [prefix + "h%02d" % i for i in range(40)]
    up = [k for k in keys if mc.server_for(k) == server.addr]
    dead = [k for k in keys if mc.server_for(k) == down]
    assert up and len(dead) >= 2
    single = mcpool.Client([server.addr])
    for k in up:
        single.set(k, k.encode())
    with pytest.raises(mcpool.ConnectionError) as e:
        mc.get_multi(keys + [up[0].encode()])
    exc = e.value
    assert dead[0] in str(exc) and exc.status_name in ("MCPOOL_IO", "MCPOOL_SERVER_DEAD")
    assert exc.hits == {k: k.encode() for k in up}  # b"k" and "k": one entry
    assert set(exc.errors) == set(dead)
    for k, err in exc.errors.items():
        assert isinstance(err, mcpool.ConnectionError) and k in str(err), (k, err)
        assert all(o not in str(err) for o in dead if o != k), (k, err)
    # every key answered: no exception, as before
    assert mc.get_multi(up) == {k: k.encode() for k in up}


def test_messages_name_the_call_not_the_c_function(mc, prefix):
    """An error names the command called (`set: invalid key "k": ...`, `get_multi: invalid
    key "k": ...`, the key once: tester finding keys2 5), as the C ABI's own set and get do;
    before, Python said `store_kind_compress "k"`, `get_into "k"`, `get_multi_into "k"`: C
    functions its user never called."""
    bad = prefix + "a b"
    calls = [
        ("set", lambda: mc.set(bad, b"v")),
        ("add", lambda: mc.add(bad, b"v")),
        ("replace", lambda: mc.replace(bad, b"v")),
        ("get", lambda: mc.get(bad)),
        ("gets", lambda: mc.gets(bad)),
        ("get_multi", lambda: mc.get_multi([bad])),
    ]
    for name, call in calls:
        with pytest.raises(mcpool.ClientError) as e:
            call()
        message = str(e.value)
        assert message.startswith('%s: invalid key "%s": ' % (name, bad)), (name, message)
        assert "store_kind" not in message and "_into" not in message, (name, message)
