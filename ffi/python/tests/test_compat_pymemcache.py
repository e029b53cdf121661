"""mcpool.compat.pymemcache against real memcached, side by side with the real pymemcache
(Debian's python3-pymemcache 3.5.2): values and key placement both ways, key checks, a dead
server, the refusals."""
import pickle
import socket

import pytest

from conftest import Server, require

import mcpool
import mcpool.compat.pymemcache as pmc
from mcpool.compat.pymemcache import (Client, HashClient, PooledClient, MemcacheError,
                                      MemcacheClientError, MemcacheIllegalInputError,
                                      MemcacheServerError, MemcacheUnknownCommandError,
                                      MemcacheUnknownError, MemcacheUnexpectedCloseError)

real = require("pymemcache", "python3-pymemcache")
from pymemcache import serde as real_serde  # noqa: E402
from pymemcache.client.hash import HashClient as RealHashClient  # noqa: E402


def _host(addr):
    host, port = addr.rsplit(":", 1)
    return (host, int(port))


@pytest.fixture(scope="module")
def dead_addr():
    """An address nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def test_exceptions_have_pymemcache_hierarchy():
    assert issubclass(MemcacheClientError, MemcacheError)
    assert issubclass(MemcacheUnknownCommandError, MemcacheClientError)
    assert issubclass(MemcacheIllegalInputError, MemcacheClientError)
    assert issubclass(MemcacheServerError, MemcacheError)
    assert issubclass(MemcacheUnknownError, MemcacheError)
    assert issubclass(MemcacheUnexpectedCloseError, MemcacheServerError)
    import mcpool.compat.pymemcache.serde as s
    from mcpool.compat.pymemcache.serde import pickle_serde
    assert s is pmc.serde and pickle_serde is pmc.serde.pickle_serde
    # the serde functions are pymemcache's
    for v in (b"b", "t\u00e9", 5, 2**70, [1, 2.5], True, None):
        data, flags = s.python_memcache_serializer("k", v)
        assert (data, flags) == real_serde.python_memcache_serializer("k", v)
        data = data.encode() if isinstance(data, str) else data
        assert s.python_memcache_deserializer("k", data, flags) == v


def test_each_method_of_client(server, prefix):
    c = Client(_host(server.addr), key_prefix=prefix)
    assert c.set("a", "x") is True
    assert c.get("a") == b"x"  # no serde: bytes back
    assert c.get("missing") is None and c.get("missing", default=7) == 7
    assert c.add("a", b"y") is False and c.add("b", b"y") is True
    assert c.replace("a", b"z") is True and c.replace("nope", b"z") is False
    assert c.append("a", b"1") is True and c.prepend("a", b"0") is True
    assert c.get("a") == b"0z1"
    assert c.append("nope", b"1") is False and c.prepend("nope", b"1") is False
    value, cas = c.gets("a")
    assert value == b"0z1" and isinstance(cas, bytes) and cas.isdigit()
    assert c.gets("nope") == (None, None) and c.gets("nope", 1, 2) == (1, 2)
    assert c.cas("a", b"new", cas) is True
    assert c.cas("a", b"newer", cas) is False  # changed since gets
    assert c.cas("nope", b"v", cas) is None
    assert c.cas("a", b"v", 0) is False and c.cas("nope", b"v", "0") is None
    assert c.get("a") == b"new"
    assert c.set_many({"m1": 1, "m2": 2.5, "m3": b"3"}) == []
    assert c.set_multi({"m4": "4"}) == []
    assert c.get_many(["m1", "m2", "m3", "m4", "nope"]) == {
        "m1": b"1", "m2": b"2.5", "m3": b"3", "m4": b"4"}
    assert c.get_multi([]) == {}
    many = c.gets_many(["m1", "nope"])
    assert list(many) == ["m1"] and many["m1"][0] == b"1" and many["m1"][1].isdigit()
    assert c.incr("m1", 5) == 6 and c.decr("m1", 2) == 4 and c.incr("nope", 1) is None
    assert c.touch("m1", 100) is True and c.touch("nope", 100) is False
    assert c.delete("m1") is True and c.delete("m1") is False
    assert c.delete_many(["m2", "m3"]) is True and c.delete_multi(["m4"]) is True
    assert c.get_many(["m2", "m3", "m4"]) == {}
    c["item"] = "v"
    assert c["item"] == b"v"
    del c["item"]
    with pytest.raises(KeyError):
        c["item"]
    assert c.set("gone", b"v", expire=-1) is True and c.get("gone") is None
    stats = c.stats()
    assert isinstance(stats[b"pid"], int) and isinstance(stats[b"version"], bytes)
    assert isinstance(stats[b"rusage_user"], float)
    assert c.version() == stats[b"version"]
    assert isinstance(c.stats("settings")[b"growth_factor"], float)
    c.quit()
    assert c.get("a") == b"new"  # usable after quit, as pymemcache
    c.close()
    assert server.raw_get(prefix + "a") == (0, b"new")


def test_flush_all_and_pooled_client():
    s = Server()
    try:
        p = PooledClient(s.addr, max_pool_size=4, serde=pmc.serde.pickle_serde)
        assert p.set("k", {"a": 1}) is True and p.get("k") == {"a": 1}
        assert p.flush_all() is True and p.get("k") is None
        h = HashClient([s.addr])
        h.set("k", b"v")
        assert h.flush_all() is None and h.get("k") is None  # HashClient's: None
    finally:
        s.stop()


def test_noreply_waits_for_the_real_outcome(server, prefix):
    c = Client(server.addr, key_prefix=prefix)  # default_noreply=True
    c.set("a", b"1")
    assert c.add("a", b"2") is False  # pymemcache: True, unread
    assert c.replace("nope", b"2", noreply=True) is False
    assert c.delete("nope") is False


def test_values_without_serde_are_pymemcaches_both_ways(server, prefix):
    ours = Client(server.addr, key_prefix=prefix)
    theirs = real.Client(_host(server.addr), key_prefix=prefix, default_noreply=False)
    values = {"b": b"\x00\xffraw", "s": "text", "i": 42, "big": 2**80, "f": 1.5,
              "l": [1, 2], "n": None, "t": True}
    for k, v in values.items():
        ours.set("o" + k, v)
        theirs.set("t" + k, v)
    for k in values:
        assert server.raw_get(prefix + "o" + k) == server.raw_get(prefix + "t" + k)
        assert ours.get("t" + k) == theirs.get("o" + k) == theirs.get("t" + k)
    with pytest.raises(MemcacheIllegalInputError, match="binary-safe"):
        ours.set("u", "\u00e9")
    assert Client(server.addr, key_prefix=prefix, encoding="utf8").set("u", "\u00e9")
    assert theirs.get("u") == "\u00e9".encode()
    # any flags read back as the bytes stored, as pymemcache without a serde
    server.raw_set(prefix + "p", 1, pickle.dumps([1]))
    server.raw_set(prefix + "x", 0x1234, b"odd")
    assert ours.get("p") == theirs.get("p") == pickle.dumps([1])
    assert ours.get_many(["x"]) == theirs.get_many(["x"]) == {"x": b"odd"}


class Point:
    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, Point) and other.x == self.x


PICKLE_VALUES = {"b": b"by\x00", "s": "t\u00e9xt", "i": -7, "big": 2**70, "f": 2.5,
                 "d": {"a": [1, (2, 3)]}, "n": None, "t": True, "o": Point(3)}


@pytest.mark.parametrize("how", ["serde", "real_serde", "legacy"])
def test_pickle_serde_is_pymemcaches_both_ways(server, prefix, how):
    kw = {"serde": pmc.serde.pickle_serde, "real_serde": real_serde.pickle_serde,
          "legacy": None}[how]
    ours = (Client(server.addr, key_prefix=prefix, serde=kw) if kw is not None else
            Client(server.addr, key_prefix=prefix,
                   serializer=pmc.serde.python_memcache_serializer,
                   deserializer=pmc.serde.python_memcache_deserializer))
    theirs = real.Client(_host(server.addr), key_prefix=prefix,
                         serde=real_serde.pickle_serde, default_noreply=False)
    for k, v in PICKLE_VALUES.items():
        ours.set("o" + k, v)
        theirs.set("t" + k, v)
    for k, v in PICKLE_VALUES.items():
        assert server.raw_get(prefix + "o" + k) == server.raw_get(prefix + "t" + k), k
        assert ours.get("t" + k) == v and theirs.get("o" + k) == v
        assert type(ours.get("t" + k)) is type(v)
    # a pickle that does not load reads as None, as there
    server.raw_set(prefix + "bad", 1, b"\x80\x05garbage")
    assert ours.get("bad") is None and theirs.get("bad") is None
    assert ours.get_many(["bad", "os"]) == theirs.get_many(["bad", "os"])
    assert ours.append("os", "!") is True and theirs.get("os") == "t\u00e9xt!"
    with pytest.raises(TypeError):
        ours.append("os", [1])


@pytest.mark.parametrize("pickled", [False, True])
def test_hashclient_shares_1000_keys_with_pymemcache_both_ways(servers, prefix, pickled):
    addrs = [s.addr for s in servers]
    kw = {"serde": pmc.serde.pickle_serde} if pickled else {}
    rkw = {"serde": real_serde.pickle_serde} if pickled else {}
    ours = HashClient([_host(a) for a in addrs], **kw)
    theirs = RealHashClient([_host(a) for a in addrs], default_noreply=False, **rkw)
    kinds = [b"bytes", "text", 12345, 2.5] + ([{"k": [1]}, True] if pickled else [])
    ours_keys = {"%so%d" % (prefix, i): kinds[i % len(kinds)] for i in range(1000)}
    theirs_keys = {"%st%d" % (prefix, i): kinds[i % len(kinds)] for i in range(1000)}
    assert ours.set_many(ours_keys) == []
    assert theirs.set_many(theirs_keys) == []

    def expect(v):
        if pickled:
            return v
        return v if isinstance(v, bytes) else str(v).encode()
    assert theirs.get_many(list(ours_keys)) == {k: expect(v) for k, v in ours_keys.items()}
    assert ours.get_many(list(theirs_keys)) == {k: expect(v) for k, v in theirs_keys.items()}
    # the same server for every key, whichever client wrote it
    where = {}
    for k in list(ours_keys)[:200] + list(theirs_keys)[:200]:
        found = [i for i, s in enumerate(servers) if s.raw_get(k) is not None]
        assert len(found) == 1, k
        where[k] = found[0]
        assert addrs[found[0]] == theirs.hasher.get_node(k)
    assert len(set(where.values())) == 3
    for k in list(ours_keys)[:50]:
        assert ours.get(k) == theirs.get(k) == expect(ours_keys[k])
        assert ours.delete(k) is True and theirs.get(k) is None


def test_hashclient_key_prefix_is_not_hashed(servers, prefix):
    addrs = [_host(s.addr) for s in servers]
    ours = HashClient(addrs, key_prefix=prefix.encode())
    theirs = RealHashClient(addrs, key_prefix=prefix.encode(), default_noreply=False)
    for i in range(60):
        ours.set("k%d" % i, b"v%d" % i)
        assert theirs.get("k%d" % i) == b"v%d" % i
    found = [s.raw_get(prefix + "k7") for s in servers]
    assert sum(f is not None for f in found) == 1


def test_unicode_keys_placed_as_pymemcache(servers, prefix):
    addrs = [_host(s.addr) for s in servers]
    ours = HashClient(addrs, allow_unicode_keys=True)
    theirs = RealHashClient(addrs, allow_unicode_keys=True, default_noreply=False)
    for i in range(40):
        k = "%s\u00e9\u4e2d%d" % (prefix, i)
        ours.set(k, b"v")
        assert theirs.get(k) == b"v"


def test_key_checks_raise_as_pymemcache(server, prefix):
    c = Client(server.addr)
    h = HashClient([server.addr])
    for client in (c, h):
        for bad, msg in (("a b", "whitespace"), (" a", "whitespace"), ("a\n", "whitespace"),
                         ("a\x00b", "null"), ("x" * 251, "too long"),
                         ("\u00e9", "Non-ASCII")):
            for call in (lambda: client.get(bad), lambda: client.set(bad, b"v"),
                         lambda: client.delete(bad), lambda: client.incr(bad, 1),
                         lambda: client.get_many(["ok", bad])):
                with pytest.raises(MemcacheIllegalInputError, match=msg):
                    call()
    with pytest.raises(MemcacheIllegalInputError, match="too long"):
        Client(server.addr, key_prefix="p" * 200).get("k" * 51)
    assert Client(server.addr, key_prefix="p" * 200).set("k" * 50, b"v") is True
    # a control byte pymemcache sends: refused by mcpool's core, in pymemcache's class
    with pytest.raises(MemcacheIllegalInputError):
        c.set("a\x01b", b"v")
    u = Client(server.addr, allow_unicode_keys=True)
    assert u.set(prefix + "\u00e9", b"v") is True and u.get(prefix + "\u00e9") == b"v"
    # bad arguments
    with pytest.raises(MemcacheIllegalInputError, match="expire must be integer"):
        c.set(prefix, b"v", expire=1.5)
    with pytest.raises(MemcacheIllegalInputError, match="value must be integer"):
        c.incr(prefix, "1")
    with pytest.raises(MemcacheIllegalInputError, match="cas must only contain"):
        c.cas(prefix, b"v", "12a")
    with pytest.raises(MemcacheClientError):
        c.incr(prefix, -1)


def test_server_errors_map_to_pymemcache_classes(server, prefix):
    c = Client(server.addr, key_prefix=prefix)
    c.set("text", b"abc")
    with pytest.raises(MemcacheClientError):
        c.incr("text", 1)
    with pytest.raises(MemcacheServerError):
        c.set("huge", b"x" * (2 * 1024 * 1024))
    s = Client(server.addr, key_prefix=prefix, serde=pmc.serde.pickle_serde)
    server.raw_set(prefix + "notutf8", 16, b"\xff\xfe")
    with pytest.raises(ValueError):
        s.get("notutf8")


def test_bytes_keys(servers, server, prefix):
    h = HashClient([s.addr for s in servers])
    with pytest.raises(NotImplementedError, match="str"):
        h.set(prefix.encode() + b"k", b"v")
    with pytest.raises(NotImplementedError):
        h.get_many([prefix + "a", prefix.encode() + b"k"])
    one = HashClient([server.addr])
    assert one.set(prefix.encode() + b"k", b"v") is True
    assert Client(server.addr).get(prefix.encode() + b"k") == b"v"
    assert one.get_many([prefix.encode() + b"k"]) == {prefix.encode() + b"k": b"v"}


def test_client_with_dead_server_raises_socket_errors(dead_addr, prefix):
    c = Client(dead_addr)
    for _ in range(3):  # every call tries again, as pymemcache
        with pytest.raises(ConnectionRefusedError):
            c.set(prefix, b"v")
    with pytest.raises(socket.error):
        c.get(prefix)
    theirs = real.Client(_host(dead_addr))
    with pytest.raises(ConnectionRefusedError):
        theirs.get(prefix)
    quiet = Client(dead_addr, ignore_exc=True)
    assert quiet.get(prefix, default=5) == 5 and quiet.get_many([prefix]) == {}
    assert quiet.gets(prefix) == (None, None)
    with pytest.raises(OSError):
        quiet.set(prefix, b"v")  # ignore_exc covers reads only, as pymemcache's Client
    with pytest.raises(OSError):
        Client(dead_addr, connect_timeout=0.5, timeout=0.5).get(prefix)


def test_hashclient_dead_server_retry_window_and_ignore_exc(servers, dead_addr, prefix):
    addrs = [servers[0].addr, dead_addr]
    h = HashClient(addrs, retry_timeout=60)
    theirs = RealHashClient(addrs, retry_timeout=60, default_noreply=False)
    dead_keys = [k for k in ("%s%d" % (prefix, i) for i in range(100))
                 if theirs.hasher.get_node(k) == dead_addr]
    live_keys = [k for k in ("%s%d" % (prefix, i) for i in range(100))
                 if theirs.hasher.get_node(k) != dead_addr]
    k = dead_keys[0]
    with pytest.raises(ConnectionRefusedError):
        h.set(k, b"v")
    with pytest.raises(ConnectionRefusedError):
        theirs.set(k, b"v")
    # within retry_timeout: the call's default, no exception, as pymemcache
    for client in (h, theirs):
        assert client.get(k) is None and client.get(k, default=3) == 3
        assert client.set(k, b"v") is False and client.incr(k, 1) is False
        assert client.gets(k) is None
        assert client.get_many([k] + live_keys[:3]) == {}
        assert client.delete_many([k]) is True
    assert h.set(live_keys[0], b"live") is True
    assert h.get_many([k, live_keys[0]]) == {live_keys[0]: b"live"}
    assert sorted(h.set_many({k: b"v", live_keys[1]: b"x"})) == [k]
    quiet = HashClient(addrs, ignore_exc=True)
    assert quiet.set(dead_keys[1], b"v") is False  # the first failure too
    assert quiet.get(dead_keys[1], default=9) == 9
    assert quiet.incr(dead_keys[1], 1) is False


def test_hashclient_ejects_after_retry_attempts(servers, dead_addr, prefix):
    # the default retry_attempts=2: ejected after its third failed try, a retry_timeout apart
    # (the core's preset, checked against pymemcache in tests/failover_in_call.rs and
    # docs/failover.md); here retry_attempts=0, removed at the first failure
    addrs = [servers[0].addr, servers[1].addr, dead_addr]
    h = HashClient(addrs, retry_attempts=0)
    theirs = RealHashClient(addrs, default_noreply=False)
    k = next(k for k in ("%s%d" % (prefix, i) for i in range(200))
             if theirs.hasher.get_node(k) == dead_addr)
    # removed from the hash at its first failure, as pymemcache (which raises that call's
    # error; the core already moves that call on): the key goes to the server pymemcache's
    # hash picks among the rest
    rest = RealHashClient(addrs[:2], default_noreply=False)
    assert h.set(k, b"v") is True and rest.get(k) == b"v"
    assert h.set(k, b"moved") is True
    assert rest.get(k) == b"moved"


def test_refusals(server, servers):
    class MySerde:
        def serialize(self, k, v):
            return v, 0

        def deserialize(self, k, v, f):
            return v
    with pytest.raises(NotImplementedError, match="serde"):
        Client(server.addr, serde=MySerde())
    with pytest.raises(NotImplementedError, match="serializer"):
        Client(server.addr, serializer=lambda k, v: (v, 0))
    with pytest.raises(NotImplementedError, match="socket_module"):
        Client(server.addr, socket_module=object())
    with pytest.raises(NotImplementedError, match="tls_context"):
        Client(server.addr, tls_context=object())
    with pytest.raises(NotImplementedError, match="lock_generator"):
        PooledClient(server.addr, lock_generator=object)
    with pytest.raises(NotImplementedError, match="dead_timeout"):
        HashClient([server.addr], dead_timeout=0)
    HashClient([server.addr], dead_timeout=30)  # the core's ejected_rest
    with pytest.raises(NotImplementedError, match="retry_timeout"):
        HashClient([server.addr], retry_timeout=0)
    with pytest.raises(NotImplementedError, match="hasher"):
        HashClient([server.addr], hasher=dict)
    from pymemcache.client.rendezvous import RendezvousHash
    assert HashClient([server.addr], hasher=RendezvousHash).set("refusals", b"v")
    with pytest.raises(NotImplementedError, match="flags"):
        Client(server.addr).set("refusals", b"v", flags=5)
    with pytest.raises(NotImplementedError, match="flags"):
        Client(server.addr, serde=pmc.serde.pickle_serde).set("refusals", b"v", flags=0)
    assert Client(server.addr).set("refusals", b"v", flags=0) is True
    with pytest.raises(MemcacheError, match="All servers"):
        HashClient([]).get("k")
    assert HashClient([], ignore_exc=True).get("k", default=1) == 1


def test_add_and_remove_server(servers, prefix):
    addrs = [_host(s.addr) for s in servers]
    h = HashClient(addrs[:2])
    h.add_server(*addrs[2])
    theirs = RealHashClient(addrs, default_noreply=False)
    for i in range(30):
        h.set("%s%d" % (prefix, i), b"v")
        assert theirs.get("%s%d" % (prefix, i)) == b"v"
    h.remove_server(addrs[2])
    assert sorted(h.clients) == sorted("%s:%d" % a for a in addrs[:2])


def _raw_set(addr, key, flags, body):
    """Stores body under flags with a raw text command (as another client could)."""
    host, port = _host(addr)
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(b"set %s %d 0 %d\r\n%s\r\n" % (key, flags, len(body), body))
        assert s.recv(64) == b"STORED\r\n"


def test_a_pickle_that_does_not_load_keeps_its_cas(server, prefix):
    """Tester finding pymc 1: gets/gets_many of a flag-1 value that does not unpickle gave
    (None, None), a miss's answer, and the cas pymemcache's caller makes next raised;
    pymemcache gives (None, cas)."""
    p = prefix.encode() if isinstance(prefix, str) else prefix
    _raw_set(server.addr, p + b"bp", 1, b"garbage")
    ours = Client(_host(server.addr), serde=pmc.serde.pickle_serde, key_prefix=p)
    theirs = real.Client(_host(server.addr), serde=real_serde.pickle_serde, key_prefix=p)
    value, cas = ours.gets("bp")
    assert value is None and cas is not None
    assert cas == theirs.gets("bp")[1]
    assert ours.gets_many(["bp"]) == {"bp": (None, cas)}
    assert ours.cas("bp", "fixed", cas) is True
    assert ours.get("bp") == "fixed"


def test_bytes_keys_skip_the_ascii_check_as_in_pymemcache(server, prefix):
    """Tester finding pymc 3: pymemcache 3.5 sends non-ASCII bytes keys (its check tests
    str only); a str key that is not ASCII is refused without allow_unicode_keys."""
    c = Client(_host(server.addr), key_prefix=prefix)
    theirs = real.Client(_host(server.addr), key_prefix=prefix)
    assert c.set(b"caf\xc3\xa9", b"v") is True
    assert theirs.get(b"caf\xc3\xa9") == b"v"
    assert c.get(b"\xe9") is None
    with pytest.raises(MemcacheIllegalInputError):
        c.set("caf\u00e9", b"v")


def test_pymemcache_modules_and_names_import():
    """Tester finding pymc 5: pymemcache's modules (client.base, client.hash, exceptions) and
    KeepaliveOpts were missing; cache_memlimit/shutdown are refused, naming why."""
    from mcpool.compat.pymemcache.client.hash import HashClient as H
    from mcpool.compat.pymemcache.client.base import Client as C, KeepaliveOpts
    from mcpool.compat.pymemcache.exceptions import MemcacheError as E
    import mcpool.compat.pymemcache.client.rendezvous as rv
    assert (H, C, E) == (HashClient, Client, MemcacheError)
    assert rv.RendezvousHash is pmc.RendezvousHash and pmc.client.hash.HashClient is H
    assert KeepaliveOpts(idle=2).idle == 2
    c = Client(("127.0.0.1", 1))
    for call in (lambda: c.cache_memlimit(64), lambda: c.shutdown()):
        with pytest.raises(NotImplementedError):
            call()


def test_an_unknown_stats_group_is_unknown_command(server):
    """Tester finding pymc 6: pymemcache raises MemcacheUnknownCommandError (memcached
    answers ERROR); it was its parent class."""
    c = Client(_host(server.addr))
    with pytest.raises(MemcacheUnknownCommandError):
        c.stats("bogus")
    with pytest.raises(real.exceptions.MemcacheUnknownCommandError):
        real.Client(_host(server.addr)).stats("bogus")


def test_a_tuple_port_written_as_other_text_is_refused_by_hashclient(servers):
    """pymemcache names a (host, "027431") server by the port's text, mcpool places by its
    number: 161 of 300 keys went elsewhere (tester finding retest9 2); refused instead. A port
    whose text is its number, or an int, is placed as pymemcache places it."""
    from mcpool.compat import pymemcache as drop_in
    host, port = servers[0].addr.rsplit(":", 1)
    for odd in ("0" + port, "+" + port, " " + port):
        with pytest.raises(NotImplementedError, match="as written"):
            drop_in.HashClient([(host, odd), servers[1].addr])
        c = drop_in.HashClient([servers[1].addr])
        with pytest.raises(NotImplementedError):
            c.add_server(host, odd)
    for fine in (port, int(port)):
        c = drop_in.HashClient([(host, fine), servers[1].addr])
        assert c.set("tuple-port", b"v") and c.get("tuple-port") == b"v"


@pytest.mark.parametrize("method", ["get_many", "gets_many"])
def test_a_key_given_as_str_and_bytes_is_answered_under_the_last_spelling(server, prefix,
                                                                          method):
    """pymemcache answers a key given twice, as "a" and b"a", under the spelling given last
    (tester finding batches 5: the drop-in answered under the first)."""
    ours = pmc.Client(server.addr, key_prefix=prefix)
    theirs = real.Client(_host(server.addr), key_prefix=prefix, default_noreply=False)
    assert ours.set("a", b"1")
    for keys in (["a", b"a"], [b"a", "a"], ["a", b"a", "a"], [b"a", "a", "b"]):
        got, want = getattr(ours, method)(keys), getattr(theirs, method)(keys)
        assert {k: v if method == "get_many" else v[0] for k, v in got.items()} == \
            {k: v if method == "get_many" else v[0] for k, v in want.items()}, keys
        assert [type(k) for k in got] == [type(k) for k in want], keys


def _keepalive_timers(port):
    """(timer kind, due in clock ticks) of every client-side TCP socket to 127.0.0.1:port, read
    from /proc/net/tcp (kind 2: the keepalive timer)."""
    found = []
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, remote, state = fields[1], fields[2], fields[3]
            if state == "01" and int(remote.split(":")[1], 16) == port \
                    and int(local.split(":")[1], 16) != port:
                kind, when = fields[5].split(":")
                found.append((int(kind, 16), int(when, 16)))
    return found


def test_socket_keepalive_as_pymemcache_sets_it():
    """socket_keepalive=KeepaliveOpts(idle, intvl, cnt) was refused with a message about TLS
    (tester finding retest27 7). mcpool's keepalive probes after tcp_keepidle seconds, then
    tcp_keepidle apart, and gives up after the system's count of probes: a KeepaliveOpts with
    intvl equal to idle and cnt that count arms the kernel's keepalive timer on the pooled
    connection as pymemcache's does (pymemcache's KeepaliveOpts or the drop-in's), on
    Client, PooledClient and HashClient; any other interval or count is refused naming what
    mcpool sets (pymemcache would set it), never applied otherwise than asked."""
    from pymemcache.client.base import Client as RealClient, KeepaliveOpts as RealOpts
    with open("/proc/sys/net/ipv4/tcp_keepalive_probes") as f:
        probes = int(f.read())
    s = Server()  # its own: only this test's connections to it
    try:
        addr = ("127.0.0.1", s.port)
        theirs = RealClient(addr, socket_keepalive=RealOpts(idle=30, intvl=30, cnt=probes))
        theirs.set("k", b"v")
        real_timers = _keepalive_timers(s.port)
        assert [k for k, _ in real_timers] == [2], real_timers
        theirs.close()
        makers = [lambda o: Client(addr, socket_keepalive=o),
                  lambda o: PooledClient(addr, socket_keepalive=o),
                  lambda o: HashClient([addr], socket_keepalive=o)]
        for opts_class in (RealOpts, pmc.KeepaliveOpts):
            for make in makers:
                c = make(opts_class(idle=30, intvl=30, cnt=probes))
                assert c.set("k", b"v") and c.get("k") == b"v"
                timers = _keepalive_timers(s.port)
                # the keepalive timer, due within the 30 s idle time (at most 1000 ticks a
                # second), as pymemcache's
                assert [k for k, _ in timers] == [2], timers
                assert 0 < timers[0][1] <= 30 * 1000, timers
                c.close()
                for bad in ((30, 10, probes), (30, 30, probes + 1), (1, 1, 5 if probes != 5
                                                                      else 6)):
                    with pytest.raises(NotImplementedError) as e:
                        make(opts_class(*bad))
                    msg = str(e.value)
                    assert ("KeepaliveOpts(idle=%d, intvl=%d, cnt=%d)" % bad in msg
                            and "tcp_keepidle" in msg and "tcp_keepalive_probes, %d here"
                            % probes in msg and "TLS" not in msg), msg
                for bad in (0.5, 1.5, 40000):
                    opts = opts_class()
                    opts.idle = bad  # KeepaliveOpts checks only >= 1
                    with pytest.raises(ValueError, match="idle is whole seconds from 1 to 32767"):
                        make(opts)
        # without it, no keepalive timer (the system's default: off)
        c = Client(addr)
        c.set("k", b"v")
        assert [k for k, _ in _keepalive_timers(s.port)] == [0]
        c.close()
        for opts_class in (RealOpts, pmc.KeepaliveOpts):
            with pytest.raises(ValueError, match="must be greater or equal to 1"):
                opts_class(idle=0)
        # not a KeepaliveOpts: pymemcache's ValueError
        for client_class in (RealClient, Client):
            with pytest.raises(ValueError, match="Unsupported keepalive options"):
                client_class(addr, socket_keepalive=True)
    finally:
        s.stop()


def test_a_third_field_is_read_as_pymemcache_reads_it(server):
    """pymemcache takes no weight: "HOST:PORT:2" is the host "HOST:PORT", port 2, and
    "[::1]:PORT:2" the host "::1]:PORT", port 2, hosts no resolver answers, so its Client and
    HashClient fail at every call (socket.gaierror). The drop-in refuses both alike (the
    IPv4 one failed at the first call, the IPv6 one was refused by the core in other words;
    tester finding retest27 8), naming pymemcache's reading."""
    port = _host(server.addr)[1]
    for spec, host in (("127.0.0.1:%d:2" % port, "127.0.0.1:%d" % port),
                       ("[::1]:%d:2" % port, "::1]:%d" % port),
                       (("127.0.0.1:%d" % port, 2), "127.0.0.1:%d" % port)):
        theirs = [real.client.base.Client(spec, connect_timeout=1),
                  RealHashClient([spec], connect_timeout=1)]
        for c in theirs:
            with pytest.raises(socket.gaierror):
                c.set("k", b"v", noreply=False)
        for make in (lambda: Client(spec), lambda: PooledClient(spec),
                     lambda: HashClient([spec]), lambda: HashClient([]).add_server(spec)):
            with pytest.raises(ValueError) as e:
                make()
            assert ("pymemcache reads this server as the host %r and the port 2" % host
                    in str(e.value)), str(e.value)
    for host in ("::1", "fe80::1%lo"):  # an IPv6 address is a host (connected at first use)
        Client((host, port))
        HashClient(["[%s]:%d" % (host, port)])
