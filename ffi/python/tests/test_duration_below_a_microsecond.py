"""A duration option given as a positive number of seconds is never 0 in the core (tester
finding retest29 4): the seconds went to the core as whole microseconds, so one under
0.5 µs (4e-07) became "0us", which these options read as "none" or "the system's":
operation_timeout=4e-07 gave no deadline at all, tcp_keepidle=4e-07 the system's 2 hours
(while 1e-06 was refused), io_timeout=4e-07 was refused as "0us", a value never given. Now
the core gets the nanoseconds (its resolution; a positive number below one is 1 ns) and
accepts or refuses them by its own rule. Negative, NaN and infinite numbers are refused
naming the option and the value."""
import math

import pytest

import mcpool


@pytest.mark.parametrize("seconds", [4e-07, 1e-12, 5e-324])
def test_a_tiny_operation_timeout_is_a_deadline(server, prefix, seconds):
    assert mcpool.Client([server.addr]).set(prefix + "k", "v")
    c = mcpool.Client([server.addr], operation_timeout=seconds)
    # 400 ns (or 1 ns) is a deadline no round trip to memcached meets
    with pytest.raises(mcpool.TimeoutError, match="operation timeout"):
        c.get(prefix + "k")
    # 0 is still the core's "none"
    assert mcpool.Client([server.addr], operation_timeout=0).get(prefix + "k") == "v"


@pytest.mark.parametrize("seconds", [4e-07, 1e-06, 1e-12, 0.5])
def test_a_tiny_tcp_keepidle_is_refused_as_the_core_refuses_it(server, seconds):
    with pytest.raises(mcpool.ConfigurationError,
                       match=r"tcp_keepidle .*whole seconds from 1s to 32767s"):
        mcpool.Client([server.addr], tcp_keepalive=True, tcp_keepidle=seconds)


def test_a_tiny_io_timeout_is_taken_as_given(server):
    # 400 ns: above zero, which the core takes (it was refused as "0us", a value never given)
    assert mcpool.Client([server.addr], io_timeout=4e-07) is not None


@pytest.mark.parametrize("option", ["operation_timeout", "tcp_keepidle", "io_timeout",
                                    "retry_timeout", "connect_timeout"])
@pytest.mark.parametrize("value", [-1, -4e-07, -0.5, math.inf, -math.inf, math.nan])
def test_negative_nan_and_infinite_seconds_are_refused_naming_them(option, value):
    with pytest.raises(mcpool.ConfigurationError) as info:
        mcpool.Client(["127.0.0.1:1"], tcp_keepalive=True, **{option: value})
    assert str(info.value).startswith(
        "option %s: bad value %r: a duration is a finite number of seconds, not negative"
        % (option, value)), str(info.value)


@pytest.mark.parametrize("value", [1e300, 2**64, 18446744074.5])
def test_a_number_of_seconds_too_long_is_refused_as_given(value):
    """Named as the caller wrote it, with the limit, never as the 300-digit text it would
    become (tester finding retest49 4)."""
    with pytest.raises(mcpool.ConfigurationError) as info:
        mcpool.Client(["127.0.0.1:1"], io_timeout=value)
    assert str(info.value) == (
        "option io_timeout: bad value %r: too long (at most 18446744073 seconds, "
        "2**64 nanoseconds)" % (value,)), str(info.value)
    assert mcpool.Client(["127.0.0.1:1"], io_timeout=18446744073, min_idle=0) is not None
