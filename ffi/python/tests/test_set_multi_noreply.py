"""Client.set_multi_noreply: the bulk load without a reply per item
(mcpool_client_set_multi_noreply), against the real memcached. Every pair is stored as bytes
(flags 0 under the default value format) and readable; an item refused before sending fails
alone, the call raising its error once the others are stored; an empty mapping is fine."""
import os

import pytest

import mcpool

PROTOCOLS = ["text", "meta", "binary"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_stores_every_pair_readable(server, prefix, protocol):
    mc = mcpool.Client([server.addr], protocol=protocol)
    values = {"k%02d" % i: b"v%d" % i for i in range(40)}
    values["utf8"] = "h\u00e9llo"
    values["empty"] = b""
    assert mc.set_multi_noreply(values, key_prefix=prefix) is None
    for k, v in values.items():
        raw = v.encode() if isinstance(v, str) else v
        assert server.raw_get(prefix + k) == (0, raw), k  # bytes, flags 0: any reader's
    got = mc.get_multi(list(values), key_prefix=prefix)
    assert got == {k: v.encode() if isinstance(v, str) else v for k, v in values.items()}


def test_time_is_each_items_expiry(server, prefix):
    mc = mcpool.Client([server.addr])
    mc.set_multi_noreply({prefix + "a": b"1", prefix + "b": b"2"}, 300)
    mc.set_multi_noreply({prefix + "c": b"3"}, expire=600)
    assert 0 < server.ttl(prefix + "a") <= 300 and 0 < server.ttl(prefix + "b") <= 300
    assert 300 < server.ttl(prefix + "c") <= 600


@pytest.mark.parametrize("protocol,bad", [("text", "a b"), ("text", "c\x01d"),
                                          ("meta", "x" * 300), ("binary", "x" * 300)])
def test_a_refused_key_fails_alone_and_raises_after_the_others(server, prefix, protocol, bad):
    mc = mcpool.Client([server.addr], protocol=protocol)
    good = {prefix + "k%d" % i: b"v%d" % i for i in range(10)}
    mapping = dict(list(good.items())[:5])
    mapping[prefix + bad] = b"refused"
    mapping.update(list(good.items())[5:])
    with pytest.raises(mcpool.ClientError) as ei:
        mc.set_multi_noreply(mapping)
    assert ei.value.status_name == "MCPOOL_INVALID_KEY"
    assert mc.get_multi(list(good)) == good


def test_a_value_too_large_fails_alone(server, prefix):
    mc = mcpool.Client([server.addr], max_value_size=1000)
    with pytest.raises(mcpool.Error) as ei:
        mc.set_multi_noreply({prefix + "a": b"1", prefix + "big": os.urandom(2000),
                              prefix + "b": b"2"})
    assert ei.value.status_name == "MCPOOL_VALUE_TOO_LARGE"
    assert mc.get_multi([prefix + "a", prefix + "big", prefix + "b"]) == {
        prefix + "a": b"1", prefix + "b": b"2"}


def test_empty_mapping_is_fine(mc):
    assert mc.set_multi_noreply({}) is None
    assert mc.set_multi_noreply({}, 10, key_prefix="p") is None


def test_a_value_not_str_or_bytes_is_refused_nothing_sent(mc, prefix):
    for v in (1, True, None, 1.5, bytearray(b"x"), {"a": 1}):
        with pytest.raises(mcpool.ClientTypeError, match=r"set_multi_noreply\(\) takes str or "
                           r"bytes, not \w+ \(key '%sb'\)" % prefix):
            mc.set_multi_noreply({prefix + "a": b"1", prefix + "b": v})
        assert mc.get(prefix + "a") is None
    with pytest.raises(mcpool.ClientTypeError, match="takes a mapping"):
        mc.set_multi_noreply([prefix + "a"])


def test_dead_server_keys_fail_the_call_the_live_ones_stored(prefix):
    from conftest import Server
    live, dead = Server(), Server()
    try:
        mc = mcpool.Client([live.addr, dead.addr], retry_timeout=0, fail_open=False)
        keys = [prefix + "k%02d" % i for i in range(30)]
        up = [k for k in keys if mc.server_for(k) == live.addr]
        assert up and len(up) < len(keys)
        dead.stop()
        with pytest.raises(mcpool.ConnectionError):
            mc.set_multi_noreply({k: k.encode() for k in keys})
        assert mc.get_multi(up) == {k: k.encode() for k in up}
    finally:
        live.stop()
        dead.stop()
