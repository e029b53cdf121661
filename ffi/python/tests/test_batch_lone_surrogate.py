"""A batch given a str key, or a str value where a str is taken as its UTF-8 (append_multi,
prepend_multi, set_multi_noreply), that UTF-8 cannot encode (a lone surrogate). Tester finding
retest39 4: such an item failed the whole call, nothing sent, while a key bad in another way
("a b", 300 bytes: tests/test_batch_invalid_key.py) fails alone. Now that item alone is
refused, unsent, every other one applied, and the call raises that item's ClientError
(MCPOOL_INVALID_ARGUMENT, naming the call and the key, the UnicodeEncodeError its __cause__)
as it raises any other item's failure: with `key` and `results` (set_multi and its kin,
delete_multi, touch_multi, incr_multi), `hits` and `errors` (get_multi and its kin), or once
the others are sent (set_multi_noreply). A value of a type these calls do not take still
fails the whole call, nothing sent, as documented."""
import pytest

import mcpool

BAD_KEY = "bad\ud800"
BAD_VALUE = "v\udcff"


def _key_refusal(e, call, bad):
    """e is the refusal of the key bad (as given) by call."""
    assert isinstance(e, mcpool.ClientError) and not isinstance(e, mcpool.ClientTypeError)
    assert e.status_name == "MCPOOL_INVALID_ARGUMENT"
    assert str(e).startswith("%s %r: the key is a str that UTF-8 cannot encode (a lone "
                             "surrogate)" % (call, bad)), str(e)
    assert isinstance(e.__cause__, UnicodeEncodeError)


def _value_refusal(e, call, key):
    assert isinstance(e, mcpool.ClientError) and not isinstance(e, mcpool.ClientTypeError)
    assert e.status_name == "MCPOOL_INVALID_ARGUMENT"
    assert str(e).startswith("%s %r: the value is a str that UTF-8 cannot encode (a lone "
                             "surrogate)" % (call, key)), str(e)
    assert isinstance(e.__cause__, UnicodeEncodeError)


@pytest.fixture(params=["", "kp:"], ids=["no-prefix", "key_prefix"])
def key_prefix(request):
    return request.param


def _wire(prefix, key_prefix, *names):
    """The keys as stored (key_prefix put before them) of the names under prefix."""
    return [key_prefix + prefix + n for n in names]


@pytest.mark.parametrize("call", ["set_multi", "add_multi", "replace_multi"])
def test_a_store_batch_refuses_that_key_alone(mc, prefix, key_prefix, call):
    a, c, bad = prefix + "a", prefix + "c", prefix + BAD_KEY
    wa, wc = _wire(prefix, key_prefix, "a", "c")
    mc.delete_multi([wa, wc])
    if call == "replace_multi":
        mc.set(wa, "old")  # c missing: not replaced
    elif call == "add_multi":
        mc.set(wc, "old")  # c there: not added
    with pytest.raises(mcpool.ClientError) as ei:
        getattr(mc, call)({a: "A", bad: "x", c: "C"}, key_prefix=key_prefix)
    e = ei.value
    _key_refusal(e, call, bad)
    assert e.key == bad
    assert e.results == {a: True, bad: e, c: call == "set_multi"}
    stored = {"set_multi": {wa: "A", wc: "C"}, "add_multi": {wa: "A", wc: "old"},
              "replace_multi": {wa: "A"}}[call]
    assert mc.get_multi([wa, wc]) == stored


def test_cas_multi_refuses_that_key_alone(mc, prefix, key_prefix):
    a, bad = prefix + "a", prefix + BAD_KEY
    (wa,) = _wire(prefix, key_prefix, "a")
    mc.set(wa, "old")
    _, cas = mc.gets(wa)
    with pytest.raises(mcpool.ClientError) as ei:
        mc.cas_multi({bad: ("x", cas), a: ("new", cas)}, key_prefix=key_prefix)
    e = ei.value
    _key_refusal(e, "cas_multi", bad)
    assert e.key == bad and e.results == {bad: e, a: True}
    assert mc.get(wa) == "new"


@pytest.mark.parametrize("call", ["append_multi", "prepend_multi"])
def test_append_and_prepend_multi_refuse_that_key_alone(mc, prefix, key_prefix, call):
    a, gone, bad = prefix + "a", prefix + "gone", prefix + BAD_KEY
    wa, wgone = _wire(prefix, key_prefix, "a", "gone")
    mc.set(wa, b"A")
    mc.delete(wgone)
    with pytest.raises(mcpool.ClientError) as ei:
        getattr(mc, call)({a: b"+", bad: b"x", gone: b"+"}, key_prefix=key_prefix)
    e = ei.value
    _key_refusal(e, call, bad)
    assert e.key == bad and e.results == {a: True, bad: e, gone: False}
    assert mc.get(wa) == (b"A+" if call == "append_multi" else b"+A")


@pytest.mark.parametrize("call", ["append_multi", "prepend_multi"])
def test_append_and_prepend_multi_refuse_that_value_alone(mc, prefix, call):
    """A str is a value these take: one UTF-8 cannot encode fails alone, as set_multi's
    value that cannot be stored (the exception names the call and the key, with `key` and
    `results`); the others are applied, that key left as it was."""
    a, b, c = prefix + "a", prefix + "b", prefix + "c"
    for k in (a, b, c):
        mc.set(k, b"old")
    with pytest.raises(mcpool.ClientError) as ei:
        getattr(mc, call)({a: "+", b: BAD_VALUE, c: b"+"})
    e = ei.value
    _value_refusal(e, call, b)
    assert e.key == b and e.results == {a: True, b: e, c: True}
    done = b"old+" if call == "append_multi" else b"+old"
    assert mc.get_multi([a, b, c]) == {a: done, b: b"old", c: done}


@pytest.mark.parametrize("call", ["append_multi", "prepend_multi"])
def test_append_and_prepend_multi_a_value_of_another_type_still_sends_nothing(mc, prefix, call):
    a, b = prefix + "a", prefix + "b"
    mc.set(a, b"old")
    with pytest.raises(mcpool.ClientTypeError, match=r"takes str or bytes, not object"):
        getattr(mc, call)({a: b"+", b: object(), prefix + BAD_KEY: BAD_VALUE})
    assert mc.get(a) == b"old"


def test_set_multi_noreply_refuses_that_key_alone(mc, prefix, key_prefix):
    a, c, bad = prefix + "a", prefix + "c", prefix + BAD_KEY
    wa, wc = _wire(prefix, key_prefix, "a", "c")
    mc.delete_multi([wa, wc])
    with pytest.raises(mcpool.ClientError) as ei:
        mc.set_multi_noreply({a: b"A", bad: b"x", c: "C"}, key_prefix=key_prefix)
    _key_refusal(ei.value, "set_multi_noreply", bad)
    assert mc.get_multi([wa, wc]) == {wa: b"A", wc: b"C"}  # the others sent


def test_set_multi_noreply_refuses_that_value_alone(mc, prefix):
    """As its docstring says: an item refused before sending fails alone, and the call
    raises the first failure once the others are sent."""
    a, b, c = prefix + "a", prefix + "b", prefix + "c"
    mc.set(b, b"old")
    mc.delete_multi([a, c])
    with pytest.raises(mcpool.ClientError) as ei:
        mc.set_multi_noreply({a: "A", b: BAD_VALUE, c: b"C"})
    _value_refusal(ei.value, "set_multi_noreply", b)
    assert mc.get_multi([a, b, c]) == {a: b"A", b: b"old", c: b"C"}


def test_set_multi_noreply_raises_the_first_refusal_with_a_key_the_core_refuses(server, prefix):
    """A key the core refuses ("a b" on text) and one the binding refuses: both fail alone,
    the others are stored, the binding's refusal raised (made before anything is sent)."""
    mc = mcpool.Client([server.addr], protocol="text")
    a, c = prefix + "a", prefix + "c"
    mc.delete_multi([a, c])
    with pytest.raises(mcpool.ClientError) as ei:
        mc.set_multi_noreply({prefix + "a b": b"1", a: b"A", prefix + BAD_KEY: b"2", c: b"C"})
    _key_refusal(ei.value, "set_multi_noreply", prefix + BAD_KEY)
    assert mc.get_multi([a, c]) == {a: b"A", c: b"C"}


def test_set_multi_noreply_a_refused_time_still_refuses_every_key(mc, prefix):
    """A time the stores cannot take: every key refused (a set's deleted), nothing stored,
    the first key's exception raised, whether that key's is the time's or its own."""
    a, b = prefix + "a", prefix + "b"
    mc.set(a, b"old")
    with pytest.raises(mcpool.ClientError, match=r'^set_multi_noreply "%s": invalid ttl: '
                       r'1099511627776 is above' % a):
        mc.set_multi_noreply({a: b"A", b: BAD_VALUE}, 2 ** 40)
    mc.set(a, b"old")
    with pytest.raises(mcpool.ClientError) as ei:
        mc.set_multi_noreply({b: BAD_VALUE, a: b"A"}, 2 ** 40)
    _value_refusal(ei.value, "set_multi_noreply", b)
    assert mc.get_multi([a, b]) == {}  # a's set refused for its time: deleted


def test_delete_multi_refuses_that_key_alone(mc, prefix, key_prefix):
    a, c, gone, bad = prefix + "a", prefix + "c", prefix + "gone", prefix + BAD_KEY
    wa, wc, wgone = _wire(prefix, key_prefix, "a", "c", "gone")
    mc.set_multi({wa: 1, wc: 2})
    mc.delete(wgone)
    with pytest.raises(mcpool.ClientError) as ei:
        mc.delete_multi([a, bad, gone, c], key_prefix=key_prefix)
    e = ei.value
    _key_refusal(e, "delete_multi", bad)
    assert e.key == bad and e.results == {a: True, bad: e, gone: False, c: True}
    assert mc.get_multi([wa, wc]) == {}


def test_touch_multi_refuses_that_key_alone(server, prefix, key_prefix):
    mc = mcpool.Client([server.addr], protocol="meta")
    a, gone, bad = prefix + "a", prefix + "gone", prefix + BAD_KEY
    wa, wgone = _wire(prefix, key_prefix, "a", "gone")
    mc.set(wa, 1)
    mc.delete(wgone)
    with pytest.raises(mcpool.ClientError) as ei:
        mc.touch_multi([bad, a, gone], 1000, key_prefix=key_prefix)
    e = ei.value
    _key_refusal(e, "touch_multi", bad)
    assert e.key == bad and e.results == {bad: e, a: True, gone: False}
    assert 900 <= mc.meta_info(wa)["ttl"] <= 1000


@pytest.mark.parametrize("call", ["incr_multi", "decr_multi"])
def test_incr_and_decr_multi_refuse_that_key_alone(mc, prefix, key_prefix, call):
    n, gone, bad = prefix + "n", prefix + "gone", prefix + BAD_KEY
    wn, wgone = _wire(prefix, key_prefix, "n", "gone")
    mc.set(wn, 10)
    mc.delete(wgone)
    with pytest.raises(mcpool.ClientError) as ei:
        getattr(mc, call)([n, bad, gone, n], 2, key_prefix=key_prefix)
    e = ei.value
    _key_refusal(e, call, bad)
    want = [12, e, None, 14] if call == "incr_multi" else [8, e, None, 6]
    assert e.key == bad and e.results == want
    assert mc.get(wn) == want[3]


@pytest.mark.parametrize("call", ["get_multi", "gets_multi", "gat_multi", "gats_multi"])
def test_the_reads_refuse_that_key_alone(mc, prefix, key_prefix, call):
    """As a key the core refuses: the others are read, the call raises that key's exception
    with `hits` and `errors`. Keys mixing str and bytes (one entry per key sent) too."""
    a, bad = prefix + "a", prefix + BAD_KEY
    (wa,) = _wire(prefix, key_prefix, "a")
    mc.set(wa, "A")
    args = (1000,) if call.startswith("gat") else ()
    with pytest.raises(mcpool.ClientError) as ei:
        getattr(mc, call)([bad, a, a.encode(), prefix + "gone"], *args, key_prefix=key_prefix)
    e = ei.value
    _key_refusal(e, call, bad)
    hit = mc.gets(wa) if "gets" in call or "gats" in call else "A"
    assert e.hits == {a: hit}
    assert list(e.errors) == [bad]
    _key_refusal(e.errors[bad], call, bad)


def test_get_multi_each_lists_that_key_failed(mc, prefix):
    a, bad = prefix + "a", prefix + BAD_KEY
    mc.set(a, "A")
    hits, failed = mc._get_multi_each([a, bad])
    assert hits == {a: "A"} and list(failed) == [bad]
    _key_refusal(failed[bad], "get_multi", bad)


def test_every_key_refused(mc, prefix):
    bad = prefix + BAD_KEY
    for call in (lambda: mc.set_multi({bad: 1}), lambda: mc.delete_multi([bad]),
                 lambda: mc.touch_multi([bad], 10), lambda: mc.incr_multi([bad]),
                 lambda: mc.get_multi([bad]), lambda: mc.set_multi_noreply({bad: b"x"}),
                 lambda: mc.append_multi({bad: b"x"})):
        with pytest.raises(mcpool.ClientError) as ei:
            call()
        assert ei.value.status_name == "MCPOOL_INVALID_ARGUMENT"
        assert isinstance(ei.value.__cause__, UnicodeEncodeError)


def test_a_key_of_another_type_or_a_bad_key_prefix_still_fails_the_call(mc, prefix):
    a = prefix + "a"
    mc.delete(a)
    with pytest.raises(mcpool.ClientTypeError, match="a key must be str or bytes, not int"):
        mc.set_multi({a: 1, 5: 2})
    with pytest.raises(mcpool.ClientError, match="key_prefix is a str that UTF-8 cannot"):
        mc.set_multi({a: 1}, key_prefix="p\ud800")
    assert mc.get(a) is None
