"""A binary cas against memcached -C (which keeps no CAS) is refused before it is sent, as a
ConfigurationError of the server's, never a TypeError about the value (tester finding
retest47 4): the value could be stored; the server cannot check a CAS."""
import pytest

from conftest import Server

import mcpool


@pytest.fixture
def no_cas_server():
    s = Server("-C")
    yield s
    s.stop()


def binary_client(server):
    return mcpool.Client([server.addr], protocol="binary")


@pytest.mark.parametrize("value", [b"bytes", "text", 42, True])
def test_cas_is_a_configuration_error(no_cas_server, value):
    c = binary_client(no_cas_server)
    c.set("k", b"before")
    with pytest.raises(mcpool.ConfigurationError) as e:
        c.cas("k", value, 12345)
    assert not isinstance(e.value, TypeError)
    assert e.value.status_name == "MCPOOL_UNSUPPORTED"
    assert "keeps no CAS" in str(e.value)
    assert c.get("k") == b"before"  # nothing sent


@pytest.mark.parametrize("value", [b"bytes", 7])
def test_cas_multi_is_a_configuration_error(no_cas_server, value):
    c = binary_client(no_cas_server)
    c.set("a", b"before")
    with pytest.raises(mcpool.ConfigurationError) as e:
        c.cas_multi({"a": (value, 12345), "b": (value, 6789)})
    assert not isinstance(e.value, TypeError)
    assert c.get("a") == b"before" and c.get("b") is None


def test_a_kind_the_format_lacks_is_still_a_type_error(server):
    """The other MCPOOL_UNSUPPORTED of a store: python-memcached's format without pickles has
    no form for a bool, on cas too."""
    c = mcpool.Client([server.addr], preset="python-memcached")
    c.set("k", 1)
    _, cas = c.gets("k")
    with pytest.raises(mcpool.ClientTypeError):
        c.cas("k", True, cas)
    with pytest.raises(mcpool.ClientTypeError):
        c.cas_multi({"k": (False, cas)})
    assert c.get("k") == 1
