"""Client.get_bytes: (bytes, flags), never deserialized; a value the value format cannot
deliver (another client's flags, a compressed body that does not inflate) as memcached holds
it, where get raises: the same read as get (the core's get_or_stored), so what Java's
getBytes gives, Python has too."""
import pickle
import socket

import pytest

import mcpool


def _store_flags(server, key, body, flags):
    """Stores body under flags with memcached's own text protocol (no client rules)."""
    host, port = server.addr.rsplit(":", 1)
    with socket.create_connection((host, int(port)), 5) as s:
        s.sendall(b"set %s %d 0 %d\r\n%s\r\n" % (key.encode(), flags, len(body), body))
        assert s.recv(64) == b"STORED\r\n"


def test_get_bytes_hands_out_any_value(server, prefix):
    c = mcpool.Client([server.addr], value_format="pylibmc", pickle=True)
    # spymemcached's Date flags, and pylibmc's zlib flag on a body that does not inflate
    _store_flags(server, prefix + "date", b"\x01\x02", 1 << 10)
    _store_flags(server, prefix + "badzip", b"not zlib", 1 << 3)
    with pytest.raises(mcpool.ValueFormatError):
        c.get(prefix + "date")
    with pytest.raises(mcpool.Error):
        c.get(prefix + "badzip")
    assert c.get_bytes(prefix + "date") == (b"\x01\x02", 1 << 10, True)
    assert c.get_bytes(prefix + "badzip") == (b"not zlib", 1 << 3, True)
    # a value the format reads: its bytes, never unpickled
    assert c.set(prefix + "obj", {"a": 1})
    body, flags, as_stored = c.get_bytes(prefix + "obj")
    assert pickle.loads(body) == {"a": 1} and flags == 1 and not as_stored
    assert c.set(prefix + "text", "tëxt")
    assert c.get_bytes(prefix + "text") == ("tëxt".encode(), 16, False)  # pylibmc's text flag
    assert c.get_bytes(prefix + "absent") is None
    with pytest.raises(TypeError):
        c.get_bytes()
