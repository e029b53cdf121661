"""A unix socket's path reaches that socket through every drop-in, as through the library
it replaces: a path with ":2" or ":1 x.sock" in its name (the core reads those after a
plain path as a weight and a name, so the drop-ins give it as unix:PATH), and a relative
``unix:NAME``, a socket in the working directory for python-memcached's and pymemcache's
``Client`` (tester findings addresses 1, 2: the key went to the socket at the path without
":2", or to a TCP host NAME:11211). Real memcached servers on sockets in a temporary
directory."""
import os
import pytest

from conftest import socket_holders as _holders
from conftest import unix_memcacheds
from conftest import unix_socket_command as _raw
import mcpool.compat.memcache as compat_memcache
import mcpool.compat.pylibmc as compat_pylibmc
import mcpool.compat.pymemcache as compat_pymemcache
from mcpool.django import McpoolCache


@pytest.fixture(scope="module")
def sockets(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("socks"))
    yield from unix_memcacheds(d, ["w.sock", "w.sock:2", "n", "n:1 x.sock", "rel.sock"])


def _client(dropin, path):
    """The drop-in's client of the socket at `path`, as its library takes a socket."""
    if dropin == "pylibmc":
        return compat_pylibmc.Client([path])
    if dropin == "memcache":
        return compat_memcache.Client(["unix:" + path])
    if dropin == "pymemcache":
        return compat_pymemcache.Client(path)
    return compat_pymemcache.HashClient([path])


def _flush(d, names):
    for n in names:
        _raw(os.path.join(d, n), b"flush_all\r\n")


@pytest.mark.parametrize("name", ["w.sock:2", "n:1 x.sock"])
@pytest.mark.parametrize("dropin", ["pylibmc", "memcache", "pymemcache", "pymemcache-hash"])
def test_a_path_with_a_colon_reaches_its_own_socket(sockets, dropin, name):
    d, names = sockets
    _flush(d, names)
    c = _client(dropin, os.path.join(d, name))
    assert c.set("probe", "v")
    assert _holders(d, names, b"probe") == [name]
    assert c.get("probe") in ("v", b"v")


@pytest.mark.parametrize("dropin", ["memcache", "pymemcache"])
def test_a_relative_unix_path_is_a_socket_in_the_working_directory(sockets, dropin,
                                                                   monkeypatch):
    d, names = sockets
    _flush(d, names)
    monkeypatch.chdir(d)
    if dropin == "memcache":
        c = compat_memcache.Client(["unix:rel.sock"])
    else:
        c = compat_pymemcache.Client("unix:rel.sock")
    assert c.set("probe", "v")
    assert _holders(d, names, b"probe") == ["rel.sock"]
    if dropin == "memcache":
        # its own name for the server is still python-memcached's
        assert [str(s).split(" ")[0] for s in c.servers] == ["unix:rel.sock"]


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """x.sock in a directory and in real/, and link -> real/sub: the kernel reads
    link/../x.sock as real/x.sock."""
    d = str(tmp_path_factory.mktemp("linked"))
    os.makedirs(os.path.join(d, "real", "sub"))
    os.symlink(os.path.join(d, "real", "sub"), os.path.join(d, "link"))
    yield from unix_memcacheds(d, ["x.sock", "real/x.sock"])


@pytest.mark.parametrize("given", ["absolute", "relative"])
@pytest.mark.parametrize("dropin", ["memcache", "pymemcache"])
def test_dot_dot_after_a_symlink_is_resolved_as_the_kernel_resolves_it(linked, dropin, given,
                                                                       monkeypatch):
    """Tester finding retest13 2: the path was normalized as text (link/.. dropped), which
    reached x.sock where the library reaches real/x.sock."""
    d, names = linked
    _flush(d, names)
    monkeypatch.chdir(d)
    path = os.path.join(d, "link/../x.sock") if given == "absolute" else "link/../x.sock"
    if dropin == "pymemcache" and given == "absolute":
        c = compat_pymemcache.Client(path)
    elif dropin == "pymemcache":
        c = compat_pymemcache.Client("unix:" + path)
    else:
        c = compat_memcache.Client(["unix:" + path])
    assert c.set("probe", "v")
    assert _holders(d, names, b"probe") == ["real/x.sock"]


def test_hashclient_add_server_of_a_unix_prefixed_path_is_refused(sockets):
    """pymemcache's HashClient.add_server hashes "unix:/path" as written (its constructor
    hashes "/path"), so its keys would be placed where pymemcache does not place them:
    refused, naming the path to give (tester finding retest13 3: 21 of 40 keys differed)."""
    d, _names = sockets
    path = os.path.join(d, "w.sock")
    c = compat_pymemcache.HashClient([])
    with pytest.raises(ValueError, match="give add_server the path alone"):
        c.add_server("unix:" + path)
    c.add_server(path)  # the path alone: placed as the constructor places it
    assert c.set("probe", "v")


@pytest.mark.parametrize("where", ["space", "tab"])
@pytest.mark.parametrize("dropin", ["pylibmc", "memcache", "pymemcache", "pymemcache-hash"])
def test_a_path_with_whitespace_at_an_end_is_refused_never_another_socket(sockets, dropin,
                                                                          where):
    """The libraries open "/dir/w.sock " as written; the core trims an address's ends, so
    it would reach "/dir/w.sock" (tester finding retest13 1): refused, naming the path."""
    d, names = sockets
    _flush(d, names)
    path = os.path.join(d, "w.sock") + (" " if where == "space" else "\t")
    with pytest.raises(ValueError, match="whitespace"):
        _client(dropin, path).set("probe", "v")
    assert _holders(d, names, b"probe") == []


@pytest.mark.parametrize("pw", ["Sekr1t", "Sek r1t", "Sek=r1t", 'Sek"r1t', "Sek,r1t", "Sek;r1t",
                                "Sek, r1t", "Sek,/r1t", "Sek;unix:/r1t", "Sek:12 r1t"])
def test_a_password_in_an_address_is_never_shown(pw):
    """No address form takes user:password@: refused, the password in no message, through
    every drop-in and mcpool.Client (tester findings retest14 4, retest15 3, 5)."""
    import mcpool
    spec = "bob:%s@127.0.0.1:11211" % pw
    for make in (lambda: compat_pylibmc.Client([spec]),
                 lambda: compat_memcache.Client([spec]),
                 lambda: compat_pymemcache.Client(spec),
                 lambda: compat_pymemcache.HashClient([spec]),
                 lambda: mcpool.Client([spec]),
                 lambda: mcpool.Client(["memcache://" + spec]),
                 lambda: mcpool.Client(["127.0.0.1:1"]).set_servers([spec]),
                 # the package's and the drop-ins' own messages (tester finding retest16)
                 lambda: mcpool.Client("10.0.0.1:11211," + spec),
                 lambda: mcpool.Client([spec], weights=["a"]),
                 lambda: mcpool.Client([spec], weights=[-1]),
                 lambda: mcpool.Client([spec], weights=[2**40]),
                 lambda: compat_pylibmc.Client(["unix:" + spec]),
                 lambda: compat_pylibmc.Client([(spec, 1)]),
                 lambda: compat_memcache.Client(["/tmp/a.sock," + spec]),
                 lambda: compat_memcache.Client(["unix:" + spec]),
                 # a socket path first, in one entry (tester finding retest17 1)
                 lambda: mcpool.Client(["/tmp/a.sock," + spec]),
                 # (a password reading as nutcracker's `:weight name` after a socket path
                 # and a space is a valid line, `/tmp/a b:1 cache@1`: docs/c-abi.md; such a
                 # password is tried after a comma)
                 lambda: mcpool.Client([("/tmp/a.sock " if ":" not in pw else "/tmp/a.sock,")
                                        + spec]),
                 # a list in one str, split by the core's rule (Django's LOCATION): a
                 # separator in the password splits nothing (tester finding retest18 3)
                 lambda: McpoolCache("10.0.0.1:11211;" + spec, {}).get("k"),
                 lambda: McpoolCache(spec + ",10.0.0.1:11211", {}).get("k"),
                 # a socket path first and an address without a port (tester finding
                 # retest19 1: read whole as one socket path, the password in its errors)
                 lambda: mcpool.Client("/tmp/a.sock," + spec.rsplit(":", 1)[0]).get("k"),
                 lambda: McpoolCache("/tmp/a.sock;" + spec.rsplit(":", 1)[0], {}).get("k")):
        with pytest.raises(Exception) as e:
            make()
        assert "r1t" not in str(e.value) and "Sek" not in str(e.value), str(e.value)
