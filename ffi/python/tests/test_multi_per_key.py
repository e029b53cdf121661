"""incr_multi/decr_multi({key: delta}) and touch_multi({key: time}): a delta (a time) per key, as Rust's arith_multi, C's
mcpool_client_arith_multi, Perl's incr_multi([$k, $d], ...) and Java's incrMulti(Map) take
(left undone in session 26: Python took one delta for every key). Against a real memcached on
every protocol, on two servers: one pipelined round trip per server."""
import pytest

import mcpool

PROTOCOLS = ["text", "meta", "binary"]


def _ops(c):
    return {a: m["operations"] for a, m in c.metrics().items()}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_key_moves_by_its_own_delta_in_one_round_trip_per_server(servers, prefix, protocol):
    addrs = [s.addr for s in servers[:2]]
    c = mcpool.Client(addrs, protocol=protocol)
    keys = [prefix + "k%d" % i for i in range(12)]
    assert {c.server_for(k) for k in keys} == set(addrs)
    for k in keys:
        c.set_counter(k, 100)
    deltas = {k: i * 7 for i, k in enumerate(keys)}
    before = _ops(c)
    assert c.incr_multi(deltas) == [100 + i * 7 for i in range(12)]
    after = _ops(c)
    assert {a: after[a] - before[a] for a in after} == {a: 1 for a in after}
    assert c.decr_multi({keys[0]: 1, keys[5]: 30, keys[11]: 2**63}) == [99, 105, 0]
    assert [c.incr(k, 0) for k in keys] == [99] + [100 + i * 7 for i in range(1, 5)] + [105] \
        + [100 + i * 7 for i in range(6, 11)] + [0]
    c.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_missing_key_is_none_and_a_prefix_applies(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    c.set_counter(prefix + "a", 1)
    c.set_counter(prefix + "b", 2)
    got = c.incr_multi({"a": 10, "gone": 5, "b": 2**64 - 3}, key_prefix=prefix)
    assert got == [11, None, 2**64 - 1]
    assert c.get(prefix + "gone") is None  # incr never creates a key
    c.close()


def test_a_bad_delta_raises_naming_its_key_before_anything_is_sent(server, prefix):
    c = mcpool.Client([server.addr])
    c.set_counter(prefix + "a", 1)
    before = _ops(c)
    with pytest.raises(ValueError, match=r"incr_multi '%sb': delta" % prefix):
        c.incr_multi({prefix + "a": 1, prefix + "b": -1})
    with pytest.raises(mcpool.ClientError, match=r"decr_multi '%sb': delta" % prefix):
        c.decr_multi({prefix + "a": 1, prefix + "b": 2**64})
    with pytest.raises(TypeError, match=r"incr_multi '%sb': delta" % prefix):
        c.incr_multi({prefix + "a": 1, prefix + "b": "3"})
    assert _ops(c) == before
    assert c.incr(prefix + "a", 0) == 1  # nothing applied
    c.close()


def test_delta_and_a_dict_together_are_refused(server, prefix):
    c = mcpool.Client([server.addr])
    c.set_counter(prefix + "a", 1)
    for call in (c.incr_multi, c.decr_multi):
        with pytest.raises(TypeError, match="keys is a dict of each key's delta"):
            call({prefix + "a": 1}, delta=2)
        with pytest.raises(TypeError, match="keys is a dict of each key's delta"):
            call({prefix + "a": 1}, 1)
    assert c.incr(prefix + "a", 0) == 1
    c.close()


def test_a_failed_key_raises_with_every_keys_answer_in_the_dicts_order(server, prefix):
    c = mcpool.Client([server.addr])
    c.set(prefix + "txt", "abc")
    c.set_counter(prefix + "n", 5)
    with pytest.raises(mcpool.Error) as e:
        c.incr_multi({prefix + "n": 3, prefix + "txt": 1, prefix + "gone": 1})
    assert e.value.key == prefix + "txt"
    assert e.value.results[0] == 8 and e.value.results[2] is None
    assert isinstance(e.value.results[1], mcpool.Error)
    assert c.incr(prefix + "n", 0) == 8
    c.close()


def test_a_key_the_binding_refuses_fails_alone_and_the_others_get_their_own_delta(server, prefix):
    c = mcpool.Client([server.addr])
    c.set_counter(prefix + "a", 1)
    c.set_counter(prefix + "c", 1)
    with pytest.raises(mcpool.Error) as e:
        c.incr_multi({prefix + "a": 10, prefix + "\udcff": 1, prefix + "c": 100})
    assert e.value.results[0] == 11 and e.value.results[2] == 101
    assert isinstance(e.value.results[1], Exception)
    c.close()


def test_an_empty_dict_is_an_empty_list(server):
    c = mcpool.Client([server.addr])
    assert c.incr_multi({}) == [] and c.decr_multi({}) == []
    c.close()


# touch_multi({key: time}): a time per key, as Rust's touch_multi, C, Perl and Java take.

@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_touch_multi_gives_each_key_its_own_time_in_one_round_trip(server, prefix, protocol):
    c = mcpool.Client([server.addr], protocol=protocol)
    for k in "abc":
        c.set(prefix + k, b"v")
    before = _ops(c)
    got = c.touch_multi({"a": 900, "b": 0, "gone": 100, "c": 500}, key_prefix=prefix)
    assert got == {"a": True, "b": True, "gone": False, "c": True}
    assert {a: m - before[a] for a, m in _ops(c).items()} == {server.addr: 1}
    assert 890 <= server.ttl(prefix + "a") <= 900
    assert server.ttl(prefix + "b") == -1
    assert 490 <= server.ttl(prefix + "c") <= 500
    assert server.ttl(prefix + "gone") is None
    c.close()


def test_touch_multi_checks_every_time_before_sending_and_refuses_time_with_a_dict(server, prefix):
    c = mcpool.Client([server.addr])
    c.set(prefix + "a", b"v", 900)
    before = _ops(c)
    with pytest.raises(mcpool.ClientError, match=r"touch_multi [\"']%sb[\"']" % prefix):
        c.touch_multi({prefix + "a": 100, prefix + "b": 2**31})
    with pytest.raises(TypeError, match=r"touch_multi [\"']%sb[\"']" % prefix):
        c.touch_multi({prefix + "a": 100, prefix + "b": "soon"})
    with pytest.raises(TypeError, match="keys is a dict of each key's time"):
        c.touch_multi({prefix + "a": 100}, 5)
    with pytest.raises(TypeError, match="keys is a dict of each key's time"):
        c.touch_multi({prefix + "a": 100}, expire=5)
    assert _ops(c) == before
    assert 890 <= server.ttl(prefix + "a") <= 900
    assert c.touch_multi({}) == {}
    c.close()
