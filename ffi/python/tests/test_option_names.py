"""Option names in any spelling the core accepts (docs/options.md: case is ignored, `-` is read
as `_`) mean the same option in Client(**options), and so the same value: a number for a
duration is seconds whatever the spelling (it was 1000 times shorter, read as milliseconds,
unless the name was spelled exactly `io_timeout`). Which option a name is, and whether it
takes a duration, is the core's answer (mcpool_option_find), not a list in the package."""
import datetime
import socket
import time

import pytest

import mcpool


@pytest.fixture
def silent():
    """A server that accepts connections and never answers: io_timeout decides how long a
    get waits."""
    with socket.socket() as lsn:
        lsn.bind(("127.0.0.1", 0))
        lsn.listen(64)
        yield "127.0.0.1:%d" % lsn.getsockname()[1]


def waited(addr, **options):
    c = mcpool.Client([addr], operation_timeout=0, min_idle=0, **options)
    t0 = time.monotonic()
    with pytest.raises(mcpool.TimeoutError):
        c.get("k")
    return time.monotonic() - t0


@pytest.mark.parametrize("name", ["io_timeout", "io-timeout", "IO_TIMEOUT", "Io-Timeout"])
@pytest.mark.parametrize("value", [0.5, datetime.timedelta(milliseconds=500)])
def test_a_duration_in_seconds_whatever_the_spelling(silent, name, value):
    dt = waited(silent, **{name: value})
    assert 0.4 <= dt < 3, (name, dt)  # 0.5 s, not 0.5 ms


def test_the_preset_first_whatever_its_spelling(silent):
    """The pylibmc preset's io_timeout (5 s) is a default the other options override, also
    when both names are spelled otherwise and the preset comes last."""
    dt = waited(silent, **{"IO-Timeout": 0.5, "Preset": "pylibmc"})
    assert 0.4 <= dt < 3, dt


def test_one_option_under_two_spellings_is_given_twice():
    with pytest.raises(mcpool.ClientError,
                       match=r"option io_timeout given twice \(as io_timeout and IO-TIMEOUT\)"):
        mcpool.Client(["127.0.0.1:1"], **{"io_timeout": 1, "IO-TIMEOUT": 2})


@pytest.mark.parametrize("options, named", [
    (dict(min_compress_len=10, compression=False), "compression"),
    (dict(compression=False, min_compress_len=10), "compression"),
    (dict(compression_threshold=100, min_compress_len=10), "compression_threshold"),
    (dict(min_compress_len=0, compression=True), "compression"),
    (dict(timeout=0.5, io_timeout="2s"), "io_timeout"),
], ids=["mcl_compression", "compression_mcl", "threshold_mcl", "mcl0_compression",
        "timeout_io_timeout"])
def test_an_alias_and_the_core_name_are_one_option_given_twice(server, prefix, options, named):
    """min_compress_len sets the core's compression and compression_threshold: given with
    either, it is one option under two names, an error naming both (the core's rule,
    mcpool_config_set_as, as for timeout and io_timeout); it used to override the explicit
    option silently (compression=False compressed a 50-byte value)."""
    given = [n for n in options if n != named] + [named]
    # the parameter min_compress_len named first, whatever the order written (which Python
    # does not keep between a parameter and **options): the order docs/options.md shows
    # (docwalk 2); the others in the order written
    with pytest.raises(mcpool.ConfigurationError,
                       match=r"option %s given twice \(as %s and %s\)"
                       % (named, given[0], given[1])):
        mcpool.Client([server.addr], **options)
    # each alone still means what it says
    mc = mcpool.Client([server.addr], min_compress_len=10)
    assert mc.set(prefix + "z", "x" * 50) and server.raw_get(prefix + "z")[1] != b"x" * 50
    mc = mcpool.Client([server.addr], compression_threshold=100)
    assert mc.set(prefix + "z", "x" * 50) and server.raw_get(prefix + "z")[1] == b"x" * 50
    mcpool.Client([server.addr], min_compress_len=0, compression_threshold=100)  # not the same


def test_a_number_for_another_option_is_not_a_duration(server, prefix):
    mc = mcpool.Client([server.addr], **{"Max-Size": 2, "COMPRESSION-THRESHOLD": 50})
    assert mc.set(prefix + "k", "v") and mc.get(prefix + "k") == "v"
    with pytest.raises(mcpool.ClientTypeError, match="not a duration"):
        mcpool.Client([server.addr], **{"Max-Size": datetime.timedelta(seconds=2)})


def test_an_unknown_name_names_the_close_ones():
    with pytest.raises(mcpool.ConfigurationError, match=r'unknown option "IO-Timout".*io_timeout'):
        mcpool.Client(["127.0.0.1:1"], **{"IO-Timout": 1})


@pytest.mark.parametrize("options, shown", [
    ({"timeout": float("nan")}, "option io_timeout (given as timeout): bad value nan: "),
    ({"io_timeout": float("inf")}, "option io_timeout: bad value inf: "),
    ({"io_timeout": -1}, "option io_timeout: bad value -1: "),
    ({"Connect-Timeout": -0.5}, "option connect_timeout (given as Connect-Timeout): bad value -0.5: "),
    ({"retry_timeout": datetime.timedelta(seconds=-1)},
     "option retry_timeout: bad value datetime.timedelta("),
    ({"io_timeout": 0}, 'option io_timeout: bad value "0": must be above zero'),
    ({"io_timeout": 0.0}, 'option io_timeout: bad value "0": must be above zero'),
])
def test_a_bad_duration_is_named_as_given(options, shown):
    # NaN, infinite and negative seconds are refused by the binding naming the option and
    # the value as the caller wrote them; zero by the core, shown as "0"; never "nans",
    # "infs", "-1s" or 0ns, the binding's or the core's re-spelling (tester-obs #7).
    with pytest.raises(mcpool.ConfigurationError) as info:
        mcpool.Client(["127.0.0.1:1"], **options)
    msg = str(info.value)
    assert msg.startswith(shown), msg
    for never in ("nans", "infs", "-1s", "0ns", "-0.5s", "500000us"):
        assert never not in msg.split(": accepted")[0].split("; accepted")[0], msg


def test_zero_and_a_none_duration_still_mean_none():
    c = mcpool.Client(["127.0.0.1:1"], operation_timeout=0, io_timeout=0.25)
    assert c is not None


@pytest.mark.parametrize("options, named", [
    ({"io_timeout": None}, "option io_timeout:"),
    ({"timeout": None}, "option io_timeout (given as timeout):"),
    ({"timeout": None, "io_timeout": 0.3}, "option io_timeout (given as timeout):"),
    ({"Operation-Timeout": None}, "option operation_timeout (given as Operation-Timeout):"),
    ({"idle_timeout": None}, "option idle_timeout:"),
    ({"value_format": None}, "option value_format:"),
    ({"preset": None}, "option preset:"),
])
def test_none_for_an_option_is_refused_naming_it(options, named):
    """Tester finding (options F9): None was taken as "not given" (io_timeout=None waited
    the default 1 s; timeout=None beside io_timeout was not "given twice"); to a pymemcache
    or python-memcached user timeout=None means no timeout. Now a ClientTypeError naming
    the option, before any server is asked."""
    with pytest.raises(mcpool.ClientTypeError) as info:
        mcpool.Client(["127.0.0.1:1"], **options)
    assert isinstance(info.value, TypeError)
    assert str(info.value).startswith(named), str(info.value)


def test_a_libmemcached_configuration_string_names_the_servers(server, prefix):
    """libmemcached_config (a libmemcached memcached("...") string) by name: its servers
    are the client's, so servers may be left out; none at all is a ConfigurationError."""
    c = mcpool.Client(libmemcached_config="--SERVER=%s --DISTRIBUTION=consistent "
                                          "--NAMESPACE=%slm:" % (server.addr, prefix))
    assert c.set("x", b"1")
    assert mcpool.Client([server.addr]).get(prefix + "lm:x") == b"1", "the namespace"
    with pytest.raises(mcpool.ConfigurationError):
        mcpool.Client()
    with pytest.raises(mcpool.ConfigurationError, match="USE-UDP"):
        mcpool.Client(libmemcached_config="--SERVER=%s --USE-UDP" % server.addr)
