"""The drop-ins (mcpool.compat.pylibmc, mcpool.compat.memcache) and Django's McpoolCache
with the pylibmc preset write values exactly as their real peers do, side by side with the
peers themselves (pylibmc, python-memcached, Django's PyLibMCCache): ints beyond 64 bits
(the peers store their decimal digits under the int flags; the drop-ins used to pickle them,
which no Java, Perl, C or CLI reader can read), and append/prepend of an int (the peers
append its digits; the drop-ins raised TypeError)."""
import contextlib
import enum

import pytest

import mcpool

from conftest import require

pylibmc = require("pylibmc", "python3-pylibmc")
memcache = require("memcache", "python3-memcache")

import mcpool.compat.memcache as cmem  # noqa: E402
import mcpool.compat.pylibmc as cpl  # noqa: E402

BIG = [2 ** 64, 10 ** 30, -(10 ** 30), 2 ** 200]


def _pairs(addr):
    """(name, the real peer, the drop-in) of each Python client mcpool stands in for."""
    return [("pylibmc", pylibmc.Client([addr]), cpl.Client([addr])),
            ("pylibmc binary", pylibmc.Client([addr], binary=True),
             cpl.Client([addr], binary=True)),
            ("python-memcached", memcache.Client([addr]), cmem.Client([addr]))]


@contextlib.contextmanager
def _django_pair(server, prefix):
    """(McpoolCache under the pylibmc preset, Django's PyLibMCCache), both on `server` with
    the key prefix `prefix`."""
    django = require("django", "python3-django")
    from django.conf import settings
    if not settings.configured:
        settings.configure(CACHES={"default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}, USE_TZ=True)
    django.setup()
    from django.test.utils import override_settings
    import mcpool.django  # noqa: F401
    setting = {
        "ours": {"BACKEND": "mcpool.django.McpoolCache", "LOCATION": server.addr,
                 "KEY_PREFIX": prefix, "OPTIONS": {"preset": "pylibmc"}},
        "peer": {"BACKEND": "django.core.cache.backends.memcached.PyLibMCCache",
                 "LOCATION": server.addr, "KEY_PREFIX": prefix},
    }
    with override_settings(CACHES=setting):
        from django.core.cache import caches
        yield caches["ours"], caches["peer"]


@pytest.mark.parametrize("value", BIG, ids=["2**64", "10**30", "-10**30", "2**200"])
def test_drop_ins_store_big_ints_as_their_peers_do(server, prefix, value):
    """Each drop-in's write of an int beyond 64 bits is byte for byte the peer's own write
    (flags and body), and the peer reads the same int back; so does mcpool's other readers
    (a client of the format without pickles)."""
    for name, peer, ours in _pairs(server.addr):
        k = prefix + name.replace(" ", "_")
        assert peer.set(k + ":peer", value), name
        assert ours.set(k + ":ours", value), name
        theirs = server.raw_get(k + ":peer")
        assert server.raw_get(k + ":ours") == theirs, name
        assert theirs == ({"python-memcached": 2}.get(name, 4), str(value).encode()), name
        assert peer.get(k + ":ours") == value, name
        assert ours.get(k + ":peer") == value, name
        fmt = "python-memcached" if name == "python-memcached" else "pylibmc"
        assert mcpool.Client([server.addr], value_format=fmt).get(k + ":ours") == value, name


def test_drop_ins_set_multi_big_ints_as_their_peers_do(server, prefix):
    for name, peer, ours in _pairs(server.addr):
        k = prefix + name.replace(" ", "_")
        values = {"b%d" % i: v for i, v in enumerate(BIG)}
        assert not peer.set_multi(values, key_prefix=k + ":peer:")
        assert not ours.set_multi(values, key_prefix=k + ":ours:")
        for n, v in values.items():
            assert server.raw_get(k + ":ours:" + n) == server.raw_get(k + ":peer:" + n), (name, n)
        assert peer.get_multi(list(values), key_prefix=k + ":ours:") == values, name


def test_mcpool_client_stores_big_ints_as_digits(server, prefix):
    """mcpool.Client: an int of any size is the core's integer (its digits under the
    format's int flags, pickle or not); Whalin's and spymemcached's 64-bit integers refuse
    one beyond 64 bits, naming it, nothing stored."""
    for fmt, flags in (("pylibmc", 4), ("python-memcached", 2), ("pymemcache", 2),
                       ("mcpool", 0x01020000)):
        for pickle in (False, True):
            mc = mcpool.Client([server.addr], value_format=fmt, pickle=pickle)
            for v in BIG:
                assert mc.set(prefix + "n", v), (fmt, v)
                assert server.raw_get(prefix + "n") == (flags, str(v).encode()), (fmt, v)
                assert mc.get(prefix + "n") == v
    for fmt in ("whalin", "spymemcached"):
        mc = mcpool.Client([server.addr], value_format=fmt)
        mc.delete(prefix + "w")
        with pytest.raises(mcpool.ClientError, match=r"beyond 64 bits.*64-bit signed binary"):
            mc.set(prefix + "w", 10 ** 30)
        with pytest.raises(mcpool.ClientError, match="beyond 64 bits"):
            mc.set_multi({prefix + "w": 10 ** 30})
        assert mc.get(prefix + "w") is None


def test_django_pylibmc_preset_stores_big_ints_as_pylibmccache_does(server, prefix):
    with _django_pair(server, prefix) as (ours, theirs):
        key = ours.make_key("big")
        for v in BIG:
            theirs.set("big", v)
            peer_wrote = server.raw_get(key)
            assert peer_wrote == (4, str(v).encode()), v
            assert ours.get("big") == v
            server.raw_set(key, 0, b"")
            ours.set("big", v)
            assert server.raw_get(key) == peer_wrote, v
            assert theirs.get("big") == v


class _Color(enum.IntEnum):
    RED = 3


def test_drop_ins_append_and_prepend_ints_as_their_peers_do(server, prefix):
    """append/prepend of an int appends its digits, as pylibmc and python-memcached do
    ("ids:" + 12 -> "ids:12"; prepend 7); bytes and str as before. The drop-ins used to
    raise TypeError for an int."""
    accepted = {"pylibmc": [12, -5, 2 ** 70, True, False, _Color.RED, b"by", "st\u00e9"],
                "python-memcached": [12, -5, 2 ** 70, b"by", "st\u00e9"]}
    for name, peer, ours in _pairs(server.addr):
        fmt = "python-memcached" if name == "python-memcached" else "pylibmc"
        for v in accepted[fmt]:
            for op in ("append", "prepend"):
                got = []
                for c, k in ((peer, prefix + "peer"), (ours, prefix + "ours")):
                    assert c.set(k, "ids:")
                    assert getattr(c, op)(k, v), (name, op, v)
                    got.append(server.raw_get(k))
                assert got[0] == got[1], (name, op, v)
                assert peer.get(prefix + "ours") == ours.get(prefix + "peer"), (name, op, v)
        ours.set(prefix + "log", "ids:")
        assert ours.append(prefix + "log", 12) and ours.prepend(prefix + "log", 7)
        assert peer.get(prefix + "log") == "7ids:12"


@pytest.mark.parametrize("value", [1.5, None, [1], bytearray(b"x"), True, _Color.RED,
                                   type("S", (str,), {})("s")],
                         ids=["float", "None", "list", "bytearray", "bool", "IntEnum",
                              "str_subclass"])
def test_drop_ins_refuse_appending_what_their_peer_would_pickle(server, prefix, value):
    """What the peer would store pickled (pylibmc: a float, None, a list, a bytearray;
    python-memcached also a bool, an IntEnum, a subclass of str: its type test is exact)
    the peer appends as a pickle's bytes, a value no reader decodes (pylibmc's own get
    raises): TypeError, nothing sent, the value unchanged."""
    for name, _peer, ours in _pairs(server.addr):
        fmt = "python-memcached" if name == "python-memcached" else "pylibmc"
        if fmt == "pylibmc" and isinstance(value, (int, str)):
            continue  # pylibmc's PyLong_Check / PyUnicode_Check: its digits / text
        ours.set(prefix + "log", "ids:")
        for op in ("append", "prepend"):
            with pytest.raises(TypeError, match="would append its pickle"):
                getattr(ours, op)(prefix + "log", value)
        assert ours.get(prefix + "log") == "ids:", name


def test_bytes_appended_to_a_pickle_are_an_error_in_the_drop_ins_and_django(server, prefix):
    """A pickled value with bytes appended (memcached keeps its flags): the peers return the
    value without them (pickle.loads and python-memcached's Unpickler stop at the pickle's
    STOP); the drop-ins and Django's McpoolCache raise, as for a compressed value
    (docs/value-format.md, Reading 2), each with its peer's exception for a value it cannot
    decode: the pylibmc drop-in its ServerError, the python-memcached one ValueError (its
    exception for a value it cannot decode), Django mcpool.ServerError. A pickle left alone
    reads as before. Before, all of them returned [1, 2]."""
    raises = {"pylibmc": cpl.ServerError, "pylibmc binary": cpl.ServerError,
              "python-memcached": ValueError}
    for name, peer, ours in _pairs(server.addr):
        k, other = prefix + "p", prefix + "untouched"
        for key in (k, other):
            assert peer.set(key, [1, 2])
        assert ours.append(k, b"JUNK")
        assert peer.get(k) == [1, 2], name  # the peer: the appended bytes silently dropped
        with pytest.raises(raises[name], match="%s.*4 bytes after the pickled object" % k):
            ours.get(k)
        with pytest.raises(raises[name], match="after the pickled object"):
            ours.get_multi([k, other])
        assert ours.get(other) == [1, 2] and ours.get_multi([other]) == {other: [1, 2]}, name

    with _django_pair(server, prefix) as (ours, theirs):
        theirs.set("dj", [1, 2])
        theirs.set("dj_untouched", [1, 2])
        assert ours.get("dj") == [1, 2]
        raw = mcpool.Client([server.addr], value_format="pylibmc")
        assert raw.append(ours.make_key("dj"), b"JUNK")
        assert theirs.get("dj") == [1, 2]  # PyLibMCCache: the appended bytes dropped
        with pytest.raises(mcpool.ServerError, match="after the pickled object"):
            ours.get("dj")
        with pytest.raises(mcpool.ServerError, match="after the pickled object"):
            ours.get_many(["dj", "dj_untouched"])
        assert ours.get_many(["dj_untouched"]) == {"dj_untouched": [1, 2]}


def test_a_pickle_that_does_not_unpickle_in_the_python_memcached_drop_in(server, prefix):
    """Bytes prepended to a pickle: python-memcached answers None (get) and the key with None
    (get_multi), logging the pickle error; its drop-in answers None from get and leaves the
    key out of get_multi, a miss, never a None nobody stored (tester finding mutations 2)."""
    peer, ours = memcache.Client([server.addr]), cmem.Client([server.addr])
    k, ok = prefix + "p", prefix + "ok"
    got = []
    for mc in (peer, ours):
        assert mc.set(k, [1, 2]) and mc.set(ok, "fine") and mc.prepend(k, b"zz")
        got.append((mc.get(k), mc.get_multi([k, ok])))
    assert got[0] == (None, {k: None, ok: "fine"})
    assert got[1] == (None, {ok: "fine"})


def test_a_compressed_form_as_long_as_the_value_is_stored_raw_as_the_peers(server, prefix):
    """A value whose zlib form is exactly as long as the value (213 bytes, zlib level 6 in
    both C zlib and the core's): pylibmc and python-memcached keep the compressed form only
    when it is shorter (`len(comp) < len(value)`), so they store it raw (flags 0); the
    drop-ins stored it compressed (flags 8), an inflate on every read for nothing. Now the
    presets compare the ratio strictly (compression_ratio_compare=below)."""
    import hashlib
    import zlib
    v = b"x" * 21 + b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(6))
    assert len(zlib.compress(v)) == len(v) == 213
    k = prefix + "w"
    # the precondition on the core's side: compared "at most", it keeps the 213-byte form
    at_most = mcpool.Client([server.addr], preset="pylibmc", compression_ratio_compare="at-most")
    at_most.set(k, v, min_compress_len=10)
    assert server.raw_get(k) == (8, server.raw_get(k)[1]) and len(server.raw_get(k)[1]) == 213
    for peer, ours in ((memcache, cmem), (pylibmc, cpl)):
        got = []
        for mod in (peer, ours):
            mod.Client([server.addr]).set(k, v, min_compress_len=10)
            got.append(server.raw_get(k))
        assert got[0] == got[1] == (0, v), peer.__name__
    # a value that does shrink is still compressed by both
    for peer, ours in ((memcache, cmem), (pylibmc, cpl)):
        got = []
        for mod in (peer, ours):
            mod.Client([server.addr]).set(k, b"y" * 500, min_compress_len=10)
            got.append(server.raw_get(k)[0])
        assert got[0] == got[1] == 8, peer.__name__


def test_a_bool_is_pickled_at_the_peers_protocol_byte_for_byte(server, prefix):
    """python-memcached pickles a bool at its pickleProtocol (default 0), pymemcache's
    pickle_serde at its pickle_version (default pickle.HIGHEST_PROTOCOL): every bool used to
    be written at protocol 0 (``I01\\n.``) whatever the protocol asked, which pymemcache never
    writes. Side by side with the peers, flags and bytes, single and multi stores."""
    pymemcache = require("pymemcache", "python3-pymemcache")
    from pymemcache import serde
    from pymemcache.client.base import Client as PymemcacheClient
    host, port = server.addr.split(":")
    a = [server.addr]
    pairs = [
        ("python-memcached default", memcache.Client(a), cmem.Client(a)),
        ("python-memcached pickleProtocol=2", memcache.Client(a, pickleProtocol=2),
         cmem.Client(a, pickleProtocol=2)),
        ("python-memcached, the core's format", memcache.Client(a),
         mcpool.Client(a, value_format="python-memcached", pickle=True)),
        ("python-memcached preset, protocol 3", memcache.Client(a, pickleProtocol=3),
         mcpool.Client(a, preset="python-memcached", pickle=True, pickle_protocol=3)),
        # default_noreply=False: pymemcache's set reads no reply by default, so the raw read
        # below could overtake it
        ("pymemcache default", PymemcacheClient((host, int(port)), serde=serde.pickle_serde,
                                                default_noreply=False),
         mcpool.Client(a, preset="pymemcache", pickle=True)),
        ("pymemcache pickle_version=2",
         PymemcacheClient((host, int(port)), serde=serde.PickleSerde(pickle_version=2),
                          default_noreply=False),
         mcpool.Client(a, preset="pymemcache", pickle=True, pickle_protocol=2)),
    ]
    assert pymemcache
    key = prefix + "b"
    for name, peer, ours in pairs:
        for v in (True, False, 1.5, {"x": [1]}):
            peer.set(key, v)
            theirs = server.raw_get(key)
            ours.set(key, v)
            assert server.raw_get(key) == theirs, (name, v)
            ours.set_multi({key: v})
            assert server.raw_get(key) == theirs, (name, v, "multi")
            got = ours.get(key)
            assert type(got) is type(v) and got == v, (name, v, got)


# A batch of every kind a Python value is stored as: bools, ints (a 64-bit one, one beyond),
# str, bytes, pickled objects (an IntEnum: pickled by python-memcached, an int to pylibmc),
# and one long enough for a per-call min_compress_len to compress.
MIXED = {"t": True, "f": False, "i": 42, "neg": -7, "big": 2 ** 70, "s": "h\u00e9llo",
         "b": b"\x00raw", "empty": b"", "obj": {"a": [1, 2.5, None]}, "tup": (1, "x"),
         "enum": _Color.RED, "long": "abc" * 2000}


@pytest.mark.parametrize("preset", ["python-memcached", "pylibmc"])
def test_batch_of_mixed_kinds_stores_each_item_as_set_does(server, prefix, preset):
    """set_multi (native, and the drop-in's, which calls it) sends a batch mixing every kind
    in one call (mcpool_client_store_multi_kind), each item written byte for byte as the
    single set writes it (flags and body; compressed by a per-call min_compress_len as set
    compresses it), read back equal by mcpool and by the real peer. A bool under
    python-memcached's format was stored alone after the batch (a pickled bool)."""
    module = memcache if preset == "python-memcached" else pylibmc
    peer = module.Client([server.addr])
    clients = [("native", mcpool.Client([server.addr], preset=preset, pickle=True)),
               ("drop-in", (cmem if preset == "python-memcached" else cpl).Client([server.addr]))]
    for name, c in clients:
        for mcl in (None, 100):
            kw = {} if mcl is None else {"min_compress_len": mcl}
            k = "%s%s:%s:" % (prefix, name, mcl)
            assert c.set_multi(MIXED, key_prefix=k + "many:", **kw) == [], name
            for n, v in MIXED.items():
                assert c.set(k + "one:" + n, v, **kw), (name, n)
                one = server.raw_get(k + "one:" + n)
                assert server.raw_get(k + "many:" + n) == one, (name, mcl, n)
            assert c.get_multi(list(MIXED), key_prefix=k + "many:") == MIXED, name
            assert peer.get_multi(list(MIXED), key_prefix=k + "many:") == MIXED, name
            # both formats' compressed flag is 8: set only under the per-call threshold
            assert bool(server.raw_get(k + "many:long")[0] & 8) == (mcl is not None), name


def test_batch_refuses_a_bool_the_format_cannot_store_as_set_does(server, prefix):
    """Under python-memcached's format without pickles a bool has no form: set_multi raises
    set's ClientTypeError, with that item's own message, once the others are stored."""
    mc = mcpool.Client([server.addr], preset="python-memcached")
    with pytest.raises(mcpool.ClientTypeError) as single:
        mc.set(prefix + "alone", True)
    with pytest.raises(mcpool.ClientTypeError) as batch:
        mc.set_multi({prefix + "a": 1, prefix + "t": True, prefix + "s": "x"})
    assert str(batch.value) == str(single.value).replace(
        'set "%salone"' % prefix, 'set_multi "%st"' % prefix)
    assert mc.get_multi([prefix + "a", prefix + "t", prefix + "s"]) == {
        prefix + "a": 1, prefix + "s": "x"}
    # the exception says which key and every key's outcome, as a refused key's (tester
    # finding bindbatch 1: it carried neither), also for cas_multi
    assert batch.value.key == prefix + "t"
    assert batch.value.results[prefix + "a"] is True
    assert batch.value.results[prefix + "s"] is True
    assert batch.value.results[prefix + "t"] is batch.value
    _, cas = mc.gets(prefix + "a")
    with pytest.raises(mcpool.ClientTypeError) as batch:
        mc.cas_multi({prefix + "a": (2, cas), prefix + "s": (False, 7)})
    assert batch.value.key == prefix + "s"
    assert batch.value.results[prefix + "a"] is True
    assert mc.get(prefix + "a") == 2
