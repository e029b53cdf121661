"""A batch call with one key memcached would refuse (too long, a control character, a space on
the text protocol). The core refuses that item alone and applies the others (each item its own
status: the C ABI's batch calls, Perl and Java alike); mcpool.Client's set_multi, add_multi,
delete_multi and touch_multi raise that key's error with `key` and `results` (every key's
outcome), as incr_multi does. compat.pylibmc does what pylibmc does for a key too long, side by
side with the real pylibmc: set_multi/add_multi store nothing, delete_multi deletes the keys
before it."""
import pytest

import mcpool
from conftest import require

LONG = "x" * 300


# A key too long is refused on every protocol; a control byte or a space on text only (meta
# sends such a key in base64, binary as it is).
CASES = [("text", LONG), ("meta", LONG), ("binary", LONG), ("text", "c\x01d"), ("text", "a b")]


@pytest.fixture(params=CASES, ids=["text-long", "meta-long", "binary-long", "text-ctrl",
                                   "text-space"])
def case(request, server):
    protocol, bad = request.param
    return mcpool.Client([server.addr], protocol=protocol), bad


def _raised(call):
    with pytest.raises(mcpool.ClientError) as ei:
        call()
    e = ei.value
    assert e.status_name == "MCPOOL_INVALID_KEY"
    return e


def test_set_multi_applies_the_others_and_says_which_key_failed(case, prefix):
    client, bad = case
    a, b = prefix + "a", prefix + "b"
    client.set(a, "1")
    client.set(b, "2")
    e = _raised(lambda: client.set_multi({a: "A", bad: "x", b: "B"}))
    assert e.key == bad
    assert client.get_multi([a, b]) == {a: "A", b: "B"}  # applied, as the exception says
    assert e.results[a] is True and e.results[b] is True
    assert e.results[bad] is e
    assert set(e.results) == {a, bad, b}


def test_add_multi_results_tell_added_from_not_stored(case, prefix):
    client, bad = case
    new, old = prefix + "new", prefix + "old"
    client.set(old, "1")
    e = _raised(lambda: client.add_multi({new: "A", bad: "x", old: "B"}))
    assert e.key == bad
    assert e.results == {new: True, bad: e, old: False}
    assert client.get_multi([new, old]) == {new: "A", old: "1"}


def test_delete_multi_results_tell_deleted_from_missing(case, prefix):
    client, bad = case
    a, b, gone = prefix + "a", prefix + "b", prefix + "gone"
    client.set(a, "1")
    client.set(b, "2")
    e = _raised(lambda: client.delete_multi([a, bad, gone, b]))
    assert e.key == bad
    assert e.results == {a: True, bad: e, gone: False, b: True}
    assert client.get_multi([a, b]) == {}


def test_touch_multi_results(case, prefix, server):
    client, bad = case
    a, gone = prefix + "a", prefix + "gone"
    client.set(a, "1")
    e = _raised(lambda: client.touch_multi([a, bad, gone], 1000))
    assert e.key == bad
    assert e.results == {a: True, bad: e, gone: False}
    meta = mcpool.Client([server.addr], protocol="meta")
    assert 900 <= meta.meta_info(a)["ttl"] <= 1000


@pytest.mark.parametrize("protocol", ["text", "meta", "binary"])
def test_without_a_bad_key_nothing_changes(server, prefix, protocol):
    client = mcpool.Client([server.addr], protocol=protocol)
    a = prefix + "a"
    assert client.set_multi({a: "1"}) == []
    assert client.delete_multi([a]) is True
    assert client.touch_multi([a], 10) == {a: False}


# -- compat.pylibmc, side by side with pylibmc ------------------------------------------------

def _pylibmc_clients(server):
    real = require("pylibmc", "python3-pylibmc")
    from mcpool.compat import pylibmc as compat
    return [real.Client([server.addr]), compat.Client([server.addr])]


def _outcome(call):
    try:
        return ("returned", call())
    except Exception as e:  # noqa: BLE001 - the class and text are compared
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("key_prefix", [None, "p"])
def test_compat_pylibmc_matches_pylibmc_for_a_key_too_long(server, prefix, key_prefix):
    """pylibmc checks a key's length before sending it: set_multi/add_multi store nothing,
    delete_multi deletes the keys before the bad one; each raises ValueError. The compat client
    stored or deleted every other key before."""
    long_key = "y" * (250 if key_prefix else 251)  # with the prefix, 251 bytes
    seen = []
    for c in _pylibmc_clients(server):
        x, z, n = prefix + "x", prefix + "z", prefix + "n"
        pk = [(key_prefix or "") + k for k in (x, z, n)]
        c.delete_multi(pk)
        c.set(pk[0], "old")
        c.set(pk[1], "old")
        kw = {"key_prefix": key_prefix} if key_prefix else {}  # pylibmc refuses None
        got = [_outcome(lambda: c.set_multi({x: "1", long_key: "2", z: "3"}, **kw)),
               c.get_multi(pk),
               _outcome(lambda: c.add_multi({n: "1", long_key: "2"}, **kw)),
               c.get_multi(pk),
               _outcome(lambda: c.delete_multi([x, long_key, z], **kw)),
               c.get_multi(pk)]
        seen.append(got)
    real, ours = seen
    assert real[0][0] == "ValueError"
    assert ours == real
