"""An int of any size reads and stores exactly, whatever sys.get_int_max_str_digits() says
(tester finding mutations 1: an integer of more than 4300 digits another surface stored, the
CLI's `set --kind int`, read as "flagged an integer ... but is not one", Python's limit
refusing the conversion), and without changing that setting."""
import random
import sys

import pytest

import mcpool

# the integer flags of the default format and of the pylibmc preset
FLAGS = {"mcpool": 0x01020000, "pylibmc": 4}


def digits_of(n_digits, seed):
    """(text, int) of a random number of n_digits digits, the int built without int(text)."""
    rng = random.Random(seed)
    text = str(rng.randrange(1, 10)) + "".join(rng.choice("0123456789")
                                               for _ in range(n_digits - 1))
    value = 0
    for i in range(0, len(text), 500):
        chunk = text[i:i + 500]
        value = value * 10 ** len(chunk) + int(chunk)
    return text, value


@pytest.mark.parametrize("fmt", sorted(FLAGS))
@pytest.mark.parametrize("n_digits", [641, 4301, 5001, 100_000])
def test_an_int_of_any_size_stored_elsewhere_reads_exactly(server, prefix, fmt, n_digits):
    limit = sys.get_int_max_str_digits()
    text, value = digits_of(n_digits, n_digits)
    mc = mcpool.Client([server.addr], value_format=fmt)
    for sign, v in (("", value), ("-", -value)):
        server.raw_set(prefix + "n", FLAGS[fmt], (sign + text).encode())
        assert mc.get(prefix + "n") == v
        assert mc.get_multi([prefix + "n"]) == {prefix + "n": v}
    assert sys.get_int_max_str_digits() == limit


@pytest.mark.parametrize("n_digits", [4301, 100_000])
def test_an_int_of_any_size_stores_its_digits(server, prefix, n_digits):
    limit = sys.get_int_max_str_digits()
    text, value = digits_of(n_digits, n_digits + 1)
    mc = mcpool.Client([server.addr], compression=False)  # (the body as stored, to compare)
    for sign, v in (("", value), ("-", -value)):
        assert mc.set(prefix + "n", v)
        assert server.raw_get(prefix + "n") == (FLAGS["mcpool"], (sign + text).encode())
        assert mc.get(prefix + "n") == v
    assert not mc.set_multi({prefix + "m": value})
    assert server.raw_get(prefix + "m") == (FLAGS["mcpool"], text.encode())
    assert sys.get_int_max_str_digits() == limit


def test_ten_to_the_5000(server, prefix):
    """The tester's reproduction: 10**5000, written as the CLI writes it."""
    mc = mcpool.Client([server.addr])
    server.raw_set(prefix + "big", FLAGS["mcpool"], b"1" + b"0" * 5000)
    assert mc.get(prefix + "big") == 10 ** 5000
    assert mc.set(prefix + "big2", 10 ** 5000)
    assert server.raw_get(prefix + "big2")[1] == b"1" + b"0" * 5000


def test_under_the_lowest_limit_too(server, prefix):
    """With the lowest limit Python allows (640 digits), 700 digits read and store."""
    limit = sys.get_int_max_str_digits()
    text, value = digits_of(700, 7)
    mc = mcpool.Client([server.addr])
    sys.set_int_max_str_digits(640)
    try:
        server.raw_set(prefix + "n", FLAGS["mcpool"], text.encode())
        assert mc.get(prefix + "n") == value
        assert mc.set(prefix + "n", -value)
        assert mc.get(prefix + "n") == -value
    finally:
        sys.set_int_max_str_digits(limit)
    assert server.raw_get(prefix + "n")[1] == b"-" + text.encode()


def test_near_a_mebibyte(server, prefix):
    """An integer filling memcached's 1 MiB item reads and stores (Python's own conversion
    is quadratic: seconds, where this takes about one)."""
    m = 111_111  # "123456789" m times and "7": 999,999 + 1 digits
    text = "123456789" * m + "7"
    value = 123456789 * ((10 ** (9 * m) - 1) // (10 ** 9 - 1)) * 10 + 7
    mc = mcpool.Client([server.addr])
    server.raw_set(prefix + "n", FLAGS["mcpool"], text.encode())
    assert mc.get(prefix + "n") == value
    assert mc.set(prefix + "m", value)
    assert mc.get(prefix + "m") == value


def test_a_long_body_that_is_no_integer_is_still_refused(server, prefix):
    server.raw_set(prefix + "bad", FLAGS["mcpool"], b"1" * 5000 + b"x")
    with pytest.raises(mcpool.ValueFormatError, match="not a decimal integer"):
        mcpool.Client([server.addr]).get(prefix + "bad")


def test_drop_ins_append_an_int_of_any_size(server, prefix):
    import mcpool.compat.memcache as cmem
    import mcpool.compat.pylibmc as cpl
    import mcpool.compat.pymemcache as cpm
    for name, c in (("pylibmc", cpl.Client([server.addr])),
                    ("memcache", cmem.Client([server.addr])),
                    ("pymemcache", cpm.Client(server.addr, serde=cpm.pickle_serde))):
        k = prefix + name
        server.raw_set(k, 0, b"n:")
        assert c.append(k, 10 ** 5000), name
        assert server.raw_get(k) == (0, b"n:1" + b"0" * 5000), name
