"""The flag layout on the wire, compression, pickle and unknown flags."""
import pickle

import pytest

import mcpool


def test_flags_on_the_wire(mc, server, prefix):
    mc.set(prefix + "b", b"raw")
    mc.set(prefix + "s", "t\u00e9xt")
    mc.set(prefix + "i", 42)
    mc.set(prefix + "t", True)
    assert server.raw_get(prefix + "b") == (0, b"raw")
    assert server.raw_get(prefix + "s") == (16, "t\u00e9xt".encode())
    assert server.raw_get(prefix + "i") == (4, b"42")
    assert server.raw_get(prefix + "t") == (2, b"1")


@pytest.mark.parametrize("flags,data,expected", [
    (0, b"abc", b"abc"),
    (16, b"abc", "abc"),
    (2, b"17", 17),
    (4, b"-17", -17),
    (16, b"\xff\xfe", b"\xff\xfe"),       # not UTF-8: raw bytes
    (2, b"notnum", b"notnum"),            # not a number: raw bytes
    (4, b"", b""),
    (32, b"abc", b"abc"),                 # unknown flags: raw bytes
    (0x10000, b"abc", b"abc"),
    (1 | 16, b"abc", b"abc"),
    (1, pickle.dumps({"a": 1}), pickle.dumps({"a": 1})),  # pickle off: raw bytes
])
def test_read_raw_flags(mc, server, prefix, flags, data, expected):
    server.raw_set(prefix + "k", flags, data)
    assert mc.get(prefix + "k") == expected
    assert mc.get_multi([prefix + "k"]) == {prefix + "k": expected}


def test_malicious_pickle_not_loaded_by_default(mc, server, prefix):
    class Boom:
        def __reduce__(self):
            return (pytest.fail, ("unpickled!",))
    server.raw_set(prefix + "p", 1, pickle.dumps(Boom()))
    assert isinstance(mc.get(prefix + "p"), bytes)


def test_pickle_enabled(server, prefix):
    c = mcpool.Client([server.addr], pickle=True)
    obj = {"a": [1, 2.5, None], "b": ("t", b"x")}
    assert c.set(prefix + "p", obj)
    assert c.get(prefix + "p") == obj
    assert server.raw_get(prefix + "p")[0] == 1
    assert c.set(prefix + "f", 1.5) and c.get(prefix + "f") == 1.5
    assert c.get_multi([prefix + "p"]) == {prefix + "p": obj}
    c0 = mcpool.Client([server.addr], pickle=True, pickle_protocol=0)
    c0.set(prefix + "p0", obj)
    assert server.raw_get(prefix + "p0")[1].startswith(b"(")
    assert c.get(prefix + "p0") == obj


def test_compression_threshold(server, prefix):
    c = mcpool.Client([server.addr], min_compress_len=1000)
    small, large = "x" * 999, "y" * 5000
    c.set(prefix + "small", small)
    c.set(prefix + "large", large)
    assert server.raw_get(prefix + "small")[0] == 16
    flags, data = server.raw_get(prefix + "large")
    assert flags == 16 | 8 and len(data) < 200
    assert c.get(prefix + "large") == large
    # a client without compression still inflates
    assert mcpool.Client([server.addr]).get(prefix + "large") == large


def test_compression_per_call(mc, server, prefix):
    big = b"z" * 4000
    mc.set(prefix + "off", big)
    assert server.raw_get(prefix + "off")[0] == 0
    mc.set(prefix + "on", big, min_compress_len=100)
    assert server.raw_get(prefix + "on")[0] == 8
    assert mc.get(prefix + "on") == big
    mc.set(prefix + "on0", big, 0, 0)
    assert server.raw_get(prefix + "on0")[0] == 0


def test_corrupt_compressed_value_raises(mc, server, prefix):
    server.raw_set(prefix + "z", 8, b"not zlib at all")
    with pytest.raises(mcpool.ServerError):
        mc.get(prefix + "z")
    assert mc.set(prefix + "after", b"ok") and mc.get(prefix + "after") == b"ok"
