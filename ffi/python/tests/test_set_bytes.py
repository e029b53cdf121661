"""Client.set_bytes(key, value, flags, time=0): bytes stored under the caller's flags
(mcpool_client_set, as Java's setBytes), never serialized, so that what get_bytes reads can
be written back (tester finding crosslang 2: Python could read an item's bytes and flags but
not store them). Flags the value format cannot read back are the core's to refuse
(ValueFormatError, its message), nothing sent."""
import pickle

import pytest

import mcpool


@pytest.mark.parametrize("value", [b"raw \x00\xff", "tëxt", 42, -7, 2 ** 70, True, False,
                                   {"a": [1, 2]}], ids=repr)
def test_get_bytes_stored_back_is_the_same_value_under_the_default_format(server, prefix,
                                                                         value):
    c = mcpool.Client([server.addr], pickle=True)
    assert c.set(prefix + "src", value)
    body, flags, as_stored = c.get_bytes(prefix + "src")
    assert not as_stored
    assert c.set_bytes(prefix + "dst", body, flags) is True
    assert c.get(prefix + "dst") == value and type(c.get(prefix + "dst")) is type(value)
    assert c.get_bytes(prefix + "dst") == (body, flags, False)
    # on the wire as set wrote it: the same flags word and bytes
    assert server.raw_get(prefix + "dst") == server.raw_get(prefix + "src")


def test_application_flags_under_the_default_format(server, prefix):
    c = mcpool.Client([server.addr])
    for flags in (0, 7, 65535):
        assert c.set_bytes(prefix + "k", b"body", flags)
        assert c.get_bytes(prefix + "k") == (b"body", flags, False)
        assert c.get(prefix + "k") == b"body"
    # the format marks its values on the wire: 0x01000000 + the application flags
    assert server.raw_get(prefix + "k") == (0x01000000 + 65535, b"body")


@pytest.mark.parametrize("how", [{"value_format": "pylibmc"}, {"preset": "pylibmc"}],
                         ids=["value_format", "preset"])
def test_a_pylibmc_int_read_with_get_bytes_and_stored_back_is_the_same_int(server, prefix,
                                                                          how):
    c = mcpool.Client([server.addr], **how)
    server.raw_set(prefix + "n", 2, b"42")  # pylibmc's int: decimal text, flag 1 << 1
    assert c.get(prefix + "n") == 42
    body, flags, as_stored = c.get_bytes(prefix + "n")
    assert (body, flags, as_stored) == (b"42", 2, False)
    assert c.set_bytes(prefix + "copy", body, flags)
    assert c.get(prefix + "copy") == 42
    assert server.raw_get(prefix + "copy") == (2, b"42")  # as pylibmc itself wrote it
    # its text too: flag 1 << 4
    server.raw_set(prefix + "s", 16, "tëxt".encode())
    assert c.set_bytes(prefix + "s2", *c.get_bytes(prefix + "s")[:2])
    assert c.get(prefix + "s2") == "tëxt"


def test_the_libmemcached_format_takes_any_32_bits(server, prefix):
    c = mcpool.Client([server.addr], value_format="libmemcached")
    for flags in (0, 8, 1 << 10, 2 ** 32 - 1):
        assert c.set_bytes(prefix + "k", b"zz", flags)
        assert server.raw_get(prefix + "k") == (flags, b"zz")
        assert c.get_bytes(prefix + "k") == (b"zz", flags, False)


def test_bytes_like_values_and_str(server, prefix):
    c = mcpool.Client([server.addr])
    assert c.set_bytes(prefix + "a", bytearray(b"ba"), 3)
    assert c.get_bytes(prefix + "a") == (b"ba", 3, False)
    assert c.set_bytes(prefix + "m", memoryview(b"abcdef")[::2], 3)  # not contiguous
    assert c.get_bytes(prefix + "m") == (b"ace", 3, False)
    assert c.set_bytes(prefix + "s", "tëxt", 3)  # a str as UTF-8, as append takes it
    assert c.get_bytes(prefix + "s") == ("tëxt".encode(), 3, False)
    assert c.set_bytes(prefix + "e", b"", 0) and c.get_bytes(prefix + "e") == (b"", 0, False)
    assert c.set_bytes(key=prefix + "kw", value=b"v", flags=1)
    assert c.get_bytes(prefix + "kw") == (b"v", 1, False)


@pytest.mark.parametrize("flags", [-1, 2 ** 32, 2 ** 64, -(2 ** 70)])
def test_flags_out_of_range_are_refused_naming_flags(server, prefix, flags):
    c = mcpool.Client([server.addr], value_format="libmemcached")
    with pytest.raises(mcpool.ClientError, match=r"flags must be between 0 and 2\*\*32-1") as e:
        c.set_bytes(prefix + "k", b"v", flags)
    assert isinstance(e.value, ValueError) and "set_bytes" in str(e.value)
    assert c.get_bytes(prefix + "k") is None  # nothing stored


@pytest.mark.parametrize("flags", [True, "1", 1.0, None, b"\x01"], ids=repr)
def test_flags_of_another_type_are_refused_naming_flags(server, prefix, flags):
    c = mcpool.Client([server.addr])
    with pytest.raises(mcpool.ClientTypeError, match="flags must be an int, not ") as e:
        c.set_bytes(prefix + "k", b"v", flags)
    assert isinstance(e.value, TypeError)
    assert c.get_bytes(prefix + "k") is None


@pytest.mark.parametrize("value", [1, None, [1, 2], {"a": 1}, 1.5], ids=repr)
def test_a_value_that_is_no_bytes_is_refused(server, prefix, value):
    c = mcpool.Client([server.addr], pickle=True)  # never pickled here
    with pytest.raises(mcpool.ClientTypeError, match="value must be bytes, a bytes-like "
                                                     "object or str"):
        c.set_bytes(prefix + "k", value, 0)
    assert c.get_bytes(prefix + "k") is None


def test_bad_keys_and_arguments(server, prefix):
    c = mcpool.Client([server.addr])
    with pytest.raises(mcpool.ClientTypeError, match="a key must be str or bytes"):
        c.set_bytes(1, b"v", 0)
    with pytest.raises(mcpool.ClientError, match="invalid key"):
        c.set_bytes(prefix + "a b", b"v", 0)
    with pytest.raises(TypeError, match="missing required argument 'flags'"):
        c.set_bytes(prefix + "k", b"v")
    with pytest.raises(TypeError, match="unexpected keyword argument 'cas'"):
        c.set_bytes(prefix + "k", b"v", 0, cas=1)
    with pytest.raises(TypeError, match="multiple values"):
        c.set_bytes(prefix + "k", b"v", 0, 5, ttl=5)


def test_flags_the_default_format_cannot_read_back_are_the_cores_to_refuse(server, prefix):
    c = mcpool.Client([server.addr])
    assert c.set(prefix + "k", "old")
    for flags in (65536, 2 ** 32 - 1):
        with pytest.raises(mcpool.ValueFormatError) as e:
            c.set_bytes(prefix + "k", b"new", flags)
        # the core's message and status, as the other stores raise them
        assert e.value.status_name == "MCPOOL_VALUE_FORMAT" and e.value.server is None
        assert str(e.value).startswith('set "%sk": value format: storing key' % prefix)
        assert "application flags are 16 bits" in str(e.value)
        assert c.get(prefix + "k") == "old"  # nothing sent: the old value stays


def test_flags_a_legacy_format_cannot_read_back_are_refused(server, prefix):
    c = mcpool.Client([server.addr], value_format="pylibmc", pickle=True)
    # spymemcached's Date flags: get_bytes hands them out as stored, where get raises
    server.raw_set(prefix + "date", 1 << 10, b"\x01\x02")
    body, flags, as_stored = c.get_bytes(prefix + "date")
    assert as_stored
    assert c.set(prefix + "k", "old")
    with pytest.raises(mcpool.ValueFormatError, match="mean nothing in the pylibmc value "
                                                      "format"):
        c.set_bytes(prefix + "k", body, flags)
    # pylibmc's int flag on a body that is no decimal integer
    with pytest.raises(mcpool.ValueFormatError, match="not a decimal integer"):
        c.set_bytes(prefix + "k", b"forty-two", 2)
    # the compression bit is the client's to set
    with pytest.raises(mcpool.ValueFormatError, match="compression bit"):
        c.set_bytes(prefix + "k", b"x", 8)
    assert c.get(prefix + "k") == "old"
    assert server.raw_get(prefix + "k") == (16, b"old")


def test_a_pickle_read_with_get_bytes_is_stored_back_as_a_pickle(server, prefix):
    c = mcpool.Client([server.addr], value_format="pylibmc", pickle=True)
    assert c.set(prefix + "o", {"x": 1})
    body, flags, _ = c.get_bytes(prefix + "o")
    assert pickle.loads(body) == {"x": 1}
    assert c.set_bytes(prefix + "o2", body, flags) and c.get(prefix + "o2") == {"x": 1}


def test_the_expiry_is_honoured(server, prefix):
    c = mcpool.Client([server.addr])
    assert c.set_bytes(prefix + "never", b"v", 0)
    assert server.ttl(prefix + "never") == -1
    assert c.set_bytes(prefix + "t", b"v", 0, 100)
    assert 95 <= server.ttl(prefix + "t") <= 100
    for kw in ("time", "ttl", "expire"):
        assert c.set_bytes(prefix + kw, b"v", 0, **{kw: 200})
        assert 195 <= server.ttl(prefix + kw) <= 200
    assert c.set_bytes(prefix + "f", b"v", 0, 0.4)  # a fraction rounds up, never 0
    assert server.ttl(prefix + "f") in (0, 1)
    # negative: stored already expired, as set
    assert c.set(prefix + "neg", "old")
    assert c.set_bytes(prefix + "neg", b"v", 0, -1) is True
    assert c.get(prefix + "neg") is None and c.get_bytes(prefix + "neg") is None
    assert c.set_bytes(prefix + "neg", b"v", 0, ttl=-0.3) is True
    assert c.get(prefix + "neg") is None


def test_an_expiry_memcached_cannot_take_is_refused(server, prefix):
    c = mcpool.Client([server.addr])
    with pytest.raises(mcpool.ClientError, match=r'set_bytes "%sk": invalid ttl: 4294967296'
                       % prefix):
        c.set_bytes(prefix + "k", b"v", 0, 2 ** 32)
    with pytest.raises(mcpool.ClientError, match="invalid ttl: 2147483648"):
        c.set_bytes(prefix + "k", b"v", 0, 2 ** 31)
    with pytest.raises(mcpool.ClientTypeError,
                       match="^set_bytes '%sk': time must be an int, a float or None, not str$"
                       % prefix):
        c.set_bytes(prefix + "k", b"v", 0, "10")
    assert c.get_bytes(prefix + "k") is None


def test_the_key_prefix_is_applied(server, prefix):
    c = mcpool.Client([server.addr], key_prefix=prefix + "ns:")
    assert c.set_bytes("k", b"v", 5)
    assert server.raw_get(prefix + "ns:k") == (0x01000005, b"v")
    assert c.get_bytes("k") == (b"v", 5, False)


def test_fail_open_answers_not_stored_and_errors_raise():
    down = "127.0.0.1:1"  # nothing listens: refused at once
    assert mcpool.Client([down], fail_open=True).set_bytes("k", b"v", 0) is False
    with pytest.raises(mcpool.ConnectionError):
        mcpool.Client([down]).set_bytes("k", b"v", 0)


def test_set_bytes_is_reported_to_on_operation(server, prefix):
    seen = []
    c = mcpool.Client([server.addr], on_operation=seen.append)
    assert c.set_bytes(prefix + "k", b"v", 1)
    assert [(r.op, r.outcome) for r in seen] == [("set", "stored")]
