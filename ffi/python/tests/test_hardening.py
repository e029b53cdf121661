"""Issue 15 (hardening), the Python binding's items: each test is named after its item.

Item 3: multi-key calls own their keys (and set_multi its values) for the whole call, so
another thread changing the caller's list while the GIL is released cannot crash the process
or make the call use other keys. Item 5: max_value_size is refused above memcached's 1 GiB
item limit and when negative. Item 11: bad options (inf/nan/negative timeouts, integers out
of range) are a clear error at construction naming the option (since issue 17 the core's
ConfigurationError, a ClientError), and an iterable of keys that raises keeps its own
exception.
"""
import math
import os
import subprocess
import sys

import pytest

import mcpool

HERE = os.path.dirname(os.path.abspath(__file__))
ADDR = "127.0.0.1:1"  # construction does no I/O (min_idle=0): no server needed
GIB = 1 << 30


# ------------------------------------------------------------------------------------------
# Item 3: keys (and values) owned across the released GIL
# ------------------------------------------------------------------------------------------

def _child(args, timeout):
    """Runs python3 with args, with this mcpool, in a child process: a crash there (a
    negative return code: the signal) fails the calling test, not the test run."""
    env = dict(os.environ)
    site = os.path.dirname(os.path.dirname(os.path.abspath(mcpool.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (site, env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable] + args, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _race(server, prefix, mode):
    """Runs race_multi_keys.py in a child process: a segfault there fails the test here."""
    p = _child([os.path.join(HERE, "race_multi_keys.py"), server.addr, mode, prefix], 180)
    assert p.returncode == 0, "%s exited with %d (negative: killed by that signal)\n%s\n%s" % (
        mode, p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    assert p.stdout.startswith("ok:"), p.stdout


def test_item3_get_multi_list_cleared_by_another_thread_no_crash(server, prefix):
    _race(server, prefix, "get_multi")


def test_item3_delete_multi_deletes_exactly_the_keys_given_while_list_cleared(server, prefix):
    _race(server, prefix, "delete_multi")


def test_item3_set_multi_items_list_cleared_by_another_thread(server, prefix):
    _race(server, prefix, "set_multi")


PAIRS_CHILD = """
import sys, mcpool
mc = mcpool.Client([sys.argv[1]])
p = sys.argv[2]

class Odd:
    def __init__(self, items):
        self._items = items

    def items(self):
        return self._items

for bad in ([1, 2], [(p + "a",)], [(p + "a", b"1", b"2")], [[p + "a", b"1"]], None):
    try:
        mc.set_multi(Odd(bad))
    except mcpool.ClientTypeError as e:
        assert bad is None or "pairs" in str(e), e
    except TypeError:  # None: not iterable, the interpreter's own error
        assert bad is None
    else:
        raise AssertionError("set_multi took %r" % (bad,))
assert mc.get(p + "a") is None
assert mc.set_multi(Odd([(p + "a", b"1")])) == []
assert mc.get(p + "a") == b"1"
print("ok")
"""


def test_item3_set_multi_items_must_be_pairs(server, prefix):
    """items() giving something else than (key, value) tuples (it used to be read as one,
    a crash: run in a child process) is a ClientTypeError."""
    p = _child(["-c", PAIRS_CHILD, server.addr, prefix], 60)
    assert p.returncode == 0 and p.stdout == "ok\n", (p.returncode, p.stdout, p.stderr[-3000:])


# ------------------------------------------------------------------------------------------
# Item 11: an iterable of keys that raises keeps its own exception
# ------------------------------------------------------------------------------------------

class Boom(Exception):
    pass


def _raising_keys(prefix):
    yield prefix + "a"
    raise Boom("from the generator")


def test_item11_get_multi_generator_exception_propagates(mc, prefix):
    with pytest.raises(Boom, match="from the generator"):
        mc.get_multi(_raising_keys(prefix))
    with pytest.raises(Boom):
        mc.get_multi(_raising_keys(prefix), key_prefix="p_")


def test_item11_delete_multi_generator_exception_propagates(mc, prefix):
    mc.set(prefix + "a", b"1")
    with pytest.raises(Boom, match="from the generator"):
        mc.delete_multi(_raising_keys(prefix))
    assert mc.get(prefix + "a") == b"1"  # nothing deleted: the keys were never complete


def test_item11_set_multi_items_exception_propagates(mc, prefix):
    class Mapping:
        def items(self):
            yield (prefix + "a", b"1")
            raise Boom("from items()")

    with pytest.raises(Boom, match="from items"):
        mc.set_multi(Mapping())
    assert mc.get(prefix + "a") is None

    class BadItems:
        def items(self):
            raise Boom("items() itself")

    with pytest.raises(Boom, match="itself"):
        mc.set_multi(BadItems())


def test_item11_generators_still_accepted(mc, prefix):
    assert mc.set_multi({prefix + "a": b"1", prefix + "b": b"2"}) == []
    assert mc.get_multi(k for k in (prefix + "a", prefix + "b")) == {prefix + "a": b"1",
                                                                   prefix + "b": b"2"}
    assert mc.delete_multi(k for k in (prefix + "a", prefix + "b")) is True
    assert mc.get_multi([prefix + "a", prefix + "b"]) == {}


@pytest.mark.parametrize("keys", [5, None, object()])
def test_item11_not_iterable_keys_is_client_type_error(mc, keys):
    with pytest.raises(mcpool.ClientTypeError):
        mc.get_multi(keys)
    with pytest.raises(mcpool.ClientTypeError):
        mc.delete_multi(keys)
    with pytest.raises(mcpool.ClientTypeError):
        mc.set_multi(keys)


# ------------------------------------------------------------------------------------------
# Item 11: bad options are refused at construction, naming the option. Since issue 17 the
# core's option table decides (mcpool_config_set): ConfigurationError (a ClientError) whose
# message names the core's option; a Python value with no text form is a ClientTypeError.
# ------------------------------------------------------------------------------------------

# Python name -> the core option its error names
TIMEOUTS = {"timeout": "io_timeout", "connect_timeout": "connect_timeout",
            "pool_timeout": "pool_timeout", "idle_timeout": "idle_timeout",
            "max_lifetime": "max_lifetime", "retry_timeout": "retry_timeout",
            "retry_timeout_max": "retry_timeout_max", "operation_timeout": "operation_timeout"}


@pytest.mark.parametrize("option", sorted(TIMEOUTS))
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_item11_timeout_not_finite_is_client_error_naming_option(option, value):
    with pytest.raises(mcpool.ConfigurationError, match=r"^option %s\b" % TIMEOUTS[option]) as e:
        mcpool.Client([ADDR], min_idle=0, **{option: value})
    assert isinstance(e.value, mcpool.ClientError) and not isinstance(e.value, OverflowError)


@pytest.mark.parametrize("option", sorted(TIMEOUTS))
@pytest.mark.parametrize("value", [-1, -0.0005, -1e300, 1e300, 2 ** 64, 1e17])
def test_item11_timeout_negative_or_too_large_is_client_error_naming_option(option, value):
    with pytest.raises(mcpool.ConfigurationError, match=r"^option %s\b" % TIMEOUTS[option]):
        mcpool.Client([ADDR], min_idle=0, **{option: value})


@pytest.mark.parametrize("option", sorted(TIMEOUTS))
def test_item11_timeout_wrong_type_is_client_type_error(option):
    for value in ([1], 1j, object()):
        with pytest.raises(mcpool.ClientTypeError, match=r"^option %s\b" % TIMEOUTS[option]):
            mcpool.Client([ADDR], min_idle=0, **{option: value})
    for value in (True, "soon", b"1 hour"):  # text forms the core cannot read
        with pytest.raises(mcpool.ConfigurationError, match=TIMEOUTS[option]):
            mcpool.Client([ADDR], min_idle=0, **{option: value})


def test_item11_timeouts_in_range_accepted(server, prefix):
    import datetime
    c = mcpool.Client([server.addr], timeout=1.5, connect_timeout=2.5,
                      pool_timeout=1e6, idle_timeout=0, max_lifetime=0, retry_timeout=0.001,
                      retry_timeout_max=86400 * 365, operation_timeout="2500ms")
    assert c.set(prefix + "k", b"v") and c.get(prefix + "k") == b"v"
    c = mcpool.Client([server.addr], timeout=datetime.timedelta(milliseconds=700))
    assert c.get(prefix + "k") == b"v"


# ------------------------------------------------------------------------------------------
# Item 5 and item 11: integer options out of range (the core's ranges)
# ------------------------------------------------------------------------------------------

def test_item5_max_value_size_above_1gib_or_negative_refused():
    for v in (2 ** 64 - 1, 2 ** 64, GIB + 1, 2 ** 32, 2 ** 100, -1, -(2 ** 64), 0, 1.5, True):
        with pytest.raises(mcpool.ConfigurationError, match=r"^option max_value_size\b") as e:
            mcpool.Client([ADDR], min_idle=0, max_value_size=v)
        assert not isinstance(e.value, OverflowError)
    with pytest.raises(mcpool.ConfigurationError, match=r"1 GiB"):
        mcpool.Client([ADDR], min_idle=0, max_value_size=GIB + 1)


def test_item5_max_value_size_1gib_accepted(server, prefix):
    c = mcpool.Client([server.addr], max_value_size=GIB)
    assert c.set(prefix + "k", b"x" * 1000) and c.get(prefix + "k") == b"x" * 1000


INT_OPTIONS = {
    # Python name: (the core option, its lowest, its highest)
    "pool_size": ("max_size", 1, 65536),
    "min_idle": ("min_idle", 0, 65536),
    "failure_limit": ("failure_limit", 1, 2 ** 32 - 1),
    "max_decompressed_size": ("max_decompressed_size", 0, 2 ** 64 - 1),
    "min_compress_len": ("compression_threshold", 0, 2 ** 64 - 1),
}


@pytest.mark.parametrize("option", sorted(INT_OPTIONS))
def test_item11_integer_options_out_of_range_are_client_errors(option):
    core, lo, hi = INT_OPTIONS[option]
    for v in (lo - 1, -1, -(2 ** 64), hi + 1, 2 ** 64, 2 ** 200):
        if lo <= v <= hi or (option == "min_compress_len" and v == 0):
            continue
        with pytest.raises(mcpool.ClientError, match=r"^option %s\b" % core) as e:
            mcpool.Client([ADDR], **{"min_idle": 0, option: v})
        assert not isinstance(e.value, OverflowError)
    if option != "min_compress_len":  # a binding argument: an int, or a ClientTypeError
        for v in (1.5, "3x", True):
            with pytest.raises(mcpool.ConfigurationError, match=r"^option %s\b" % core):
                mcpool.Client([ADDR], **{"min_idle": 0, option: v})
    with pytest.raises(mcpool.ClientTypeError, match=option if option == "min_compress_len"
                       else r"^option %s\b" % core):
        mcpool.Client([ADDR], **{"min_idle": 0, option: None.__class__})


def test_item11_unknown_option_names_close_ones():
    with pytest.raises(mcpool.ConfigurationError, match=r'unknown option "io_timout".*io_timeout'):
        mcpool.Client([ADDR], min_idle=0, io_timout=1)


def test_item11_weights_out_of_range_are_client_errors():
    for w in (-1, 0, 2 ** 32, 2 ** 64, 2 ** 200):
        with pytest.raises(mcpool.ClientError, match="weight"):
            mcpool.Client([ADDR], min_idle=0, weights=[w])
    for w in ("1", 1.5, True):
        with pytest.raises(mcpool.ClientTypeError, match="weight"):
            mcpool.Client([ADDR], min_idle=0, weights=[w])
    for spec in ((ADDR, -1), (ADDR, 2 ** 64)):
        with pytest.raises(mcpool.ClientError, match="weight"):
            mcpool.Client([spec], min_idle=0)


def test_item11_pickle_protocol_checked_at_construction():
    import pickle
    for v in (pickle.HIGHEST_PROTOCOL + 1, 2 ** 64, -2):
        with pytest.raises(mcpool.ClientError, match=r"^pickle_protocol\b"):
            mcpool.Client([ADDR], min_idle=0, pickle=True, pickle_protocol=v)
    for v in (1.5, "2", True):
        with pytest.raises(mcpool.ClientTypeError, match=r"^pickle_protocol\b"):
            mcpool.Client([ADDR], min_idle=0, pickle=True, pickle_protocol=v)
    mcpool.Client([ADDR], min_idle=0, pickle=True, pickle_protocol=-1)  # pickle: the highest
    mcpool.Client([ADDR], min_idle=0, pickle=True, pickle_protocol=0)


def test_item11_compression_ratio_refused_by_the_core():
    for v in (math.inf, math.nan, -0.5, 1.5, "half"):
        with pytest.raises(mcpool.ConfigurationError, match=r"^option compression_ratio\b"):
            mcpool.Client([ADDR], min_idle=0, compression_ratio=v)
    mcpool.Client([ADDR], min_idle=0, compression_ratio="0.5")  # the core's text form


def test_item11_per_call_integers_out_of_range(mc, prefix):
    for v in (-1, 2 ** 64, 2 ** 200):
        with pytest.raises(mcpool.ClientError, match="min_compress_len"):
            mc.set(prefix + "k", b"v", min_compress_len=v)
    # (a negative finite time is a store's "immediately expired": test_cachelib.py)
    for t in (2 ** 32, 2 ** 200, math.inf, -math.inf, math.nan):
        with pytest.raises(mcpool.ClientError, match='set "%sk": invalid ttl: ' % prefix):
            mc.set(prefix + "k", b"v", time=t)
    for d in (-1, 2 ** 64, 2 ** 200):
        with pytest.raises(mcpool.ClientError, match="delta"):
            mc.incr(prefix + "k", d)
    assert mc.get(prefix + "k") is None
