"""A key prefix of any bytes (tester finding keys2 2): ``key_prefix=b"caf\\xe9:"`` reaches the
core as those bytes, as C's mcpool_config_set_key_prefix and Perl's namespace take it (a
Cache::Memcached::Fast namespace in Latin-1), each protocol's key rule checking it when the
client is built: text refuses a space or control byte, meta sends such a key base64, binary
as it is. Python refused it ("not UTF-8"). Bytes that are not UTF-8 stay refused for every
other option. A refusal at build names no C function ("mcpool_client_new: ...")."""
import pytest

import mcpool
from conftest import require

PROTOCOLS = ["text", "meta", "binary"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_latin1_prefix_round_trips_under_its_raw_bytes(server, prefix, protocol):
    ns = b"caf\xe9:" + prefix.encode()
    c = mcpool.Client([server.addr], key_prefix=ns, protocol=protocol)
    assert c.set("k", b"v1") is True
    assert c.get("k") == b"v1" and c.get_multi(["k", "j"]) == {"k": b"v1"}
    assert c.set_multi({"j": b"v2"}) == [] and c.get("j") == b"v2"
    # the item is under the prefix's bytes: a raw text get of caf\xe9:<prefix>k finds it
    assert server.raw(b"get " + ns + b"k\r\n") == b"VALUE " + ns + b"k 0 2\r\nv1\r\nEND\r\n"
    # and a client with no prefix reads it by the whole key as bytes
    assert mcpool.Client([server.addr], protocol=protocol).get(ns + b"j") == b"v2"
    # prefix= (the alias) takes bytes too
    assert mcpool.Client([server.addr], prefix=ns, protocol=protocol).get("k") == b"v1"
    assert c.delete("k") is True and server.raw(b"get " + ns + b"k\r\n") == b"END\r\n"


@pytest.mark.parametrize("protocol", ["meta", "binary"])
def test_a_control_byte_prefix_works_on_meta_and_binary(server, prefix, protocol):
    ns = b"a\x01" + prefix.encode() + b":"
    c = mcpool.Client([server.addr], key_prefix=ns, protocol=protocol)
    assert c.set("k", b"v") is True and c.get("k") == b"v"
    assert c.get_multi(["k"]) == {"k": b"v"}
    # one item under the raw bytes, whichever protocol wrote it
    for other in ("meta", "binary"):
        assert mcpool.Client([server.addr], protocol=other).get(ns + b"k") == b"v", other


@pytest.mark.parametrize("ns", [b"a\x01:", b"a b:", "a\x01:"], ids=repr)
def test_a_control_byte_or_space_prefix_is_refused_on_text_at_construction(ns):
    """Refused when the client is built, naming the prefix, in this binding's words for a
    Client() configuration error ("configuration error: ..."), not the C function's
    ("mcpool_client_new: configuration error: ...")."""
    with pytest.raises(mcpool.ConfigurationError) as e:
        mcpool.Client(["127.0.0.1:1"], key_prefix=ns, protocol="text")
    msg = str(e.value)
    assert msg.startswith("configuration error: key_prefix "), msg
    assert "mcpool_" not in msg and "text protocol cannot send" in msg
    assert e.value.status_name == "MCPOOL_CONFIG"


def test_client_and_set_servers_errors_name_no_c_function(server):
    """(tester finding keys2 2) Every error of the client's build or of set_servers in the
    binding's words: no "mcpool_client_new: " / "mcpool_client_set_servers: " before it."""
    with pytest.raises(mcpool.ConfigurationError) as e:
        mcpool.Client([])
    assert str(e.value) == "configuration error: no servers given"
    with pytest.raises(mcpool.ConfigurationError) as e:
        mcpool.Client([server.addr], username="u", password="p")
    assert str(e.value).startswith("configuration error: SASL"), str(e.value)
    c = mcpool.Client([server.addr])
    with pytest.raises(mcpool.ConfigurationError) as e:
        c.set_servers([])
    assert "mcpool_" not in str(e.value) and "no servers given" in str(e.value)
    assert e.value.server is None


def test_bytes_that_are_not_utf8_stay_refused_for_other_options():
    for option, value in (("distribution", b"ketama\xff"), ("protocol", b"\xe9")):
        with pytest.raises(mcpool.ConfigurationError, match="not UTF-8"):
            mcpool.Client(["127.0.0.1:1"], **{option: value})
    # a str prefix still needs a UTF-8 form (a lone surrogate has none)
    with pytest.raises(mcpool.ConfigurationError, match="lone surrogate"):
        mcpool.Client(["127.0.0.1:1"], key_prefix="caf\udce9:")


def test_pymemcache_drop_in_takes_a_latin1_prefix_as_pymemcache(server, prefix):
    """pymemcache's key_prefix is bytes, sent as they are: the drop-in refused one that is
    not UTF-8 (NotImplementedError); now both read each other's items under it."""
    require("pymemcache", "python3-pymemcache")
    from pymemcache.client.base import Client as RealClient
    from mcpool.compat.pymemcache import Client, HashClient
    ns = b"caf\xe9:" + prefix.encode()
    host, port = server.addr.rsplit(":", 1)
    ours = Client((host, int(port)), key_prefix=ns)
    theirs = RealClient((host, int(port)), key_prefix=ns, default_noreply=False)
    assert ours.set("a", b"ours") is True and theirs.get("a") == b"ours"
    assert theirs.set("b", b"theirs") is True and ours.get("b") == b"theirs"
    assert ours.get_many(["a", "b"]) == {"a": b"ours", "b": b"theirs"}
    assert HashClient([(host, int(port))], key_prefix=ns).get("b") == b"theirs"
    assert server.raw(b"get " + ns + b"a\r\n").startswith(b"VALUE " + ns + b"a ")


def test_the_setting_survives_a_preset_given_with_it(server, prefix):
    """A bytes prefix is the caller's option: a preset given beside it (a default) does not
    replace it, in any order (the core's rule for a text one)."""
    ns = b"caf\xe9:" + prefix.encode()
    for opts in ({"key_prefix": ns, "preset": "pylibmc"}, {"preset": "pylibmc", "key_prefix": ns}):
        c = mcpool.Client([server.addr], **opts)
        assert c.set("p", b"x") is True
        assert server.raw(b"get " + ns + b"p\r\n").startswith(b"VALUE " + ns + b"p ")
