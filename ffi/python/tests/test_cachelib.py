"""Flask-Caching's backend layer, cachelib: its MemcachedCache takes a ready client as
`servers`. The same cachelib calls give the same results with our clients (the
python-memcached and pylibmc drop-ins, and mcpool.Client) as with python-memcached itself."""
import pytest

from conftest import require
from test_compat_pylibmc import outcome, unprefixed

cachelib = require("cachelib", "python3-cachelib")
real_memcache = require("memcache", "python3-memcache")
real_pylibmc = require("pylibmc", "python3-pylibmc")

import mcpool  # noqa: E402
import mcpool.compat.memcache  # noqa: E402
import mcpool.compat.pylibmc  # noqa: E402


def run(client, prefix):
    c = cachelib.MemcachedCache(servers=client, key_prefix=prefix, default_timeout=300)
    assert c._client is client
    steps = [
        outcome(c.set, "a", {"x": [1, 2]}), outcome(c.get, "a"), outcome(c.add, "a", "other"),
        outcome(c.add, "b", "two"), outcome(c.get_many, "a", "b", "missing"),
        outcome(c.get_dict, "a", "b"), outcome(c.set_many, {"m1": "one", "m2": "two"}),
        outcome(c.get_many, "m1", "m2"), outcome(c.has, "m1"), outcome(c.has, "nope"),
        outcome(c.set, "n", 5), outcome(c.get, "n"), outcome(c.delete, "a"), outcome(c.get, "a"),
        outcome(c.delete, "a"), outcome(c.delete_many, "m1", "m2"),
        outcome(c.get_many, "m1", "m2"), outcome(c.get, "key with spaces"),
        outcome(c.set, "t", "short", timeout=100), outcome(c.get, "t"),
    ]
    plain = cachelib.MemcachedCache(servers=client)  # inc/dec need no prefix (cachelib's)
    steps += [outcome(plain.inc, prefix + "ctr", 5), outcome(plain.inc, prefix + "ctr", 2),
              outcome(plain.dec, prefix + "ctr", 3), outcome(plain.get, prefix + "ctr")]
    return steps


@pytest.mark.parametrize("kind", ["compat.memcache", "compat.pylibmc", "mcpool.Client"])
def test_cachelib_memcached_cache_accepts_our_client(server, prefix, kind):
    ours = {"compat.memcache": lambda: mcpool.compat.memcache.Client([server.addr]),
            "compat.pylibmc": lambda: mcpool.compat.pylibmc.Client([server.addr]),
            "mcpool.Client": lambda: mcpool.Client([server.addr], pickle=True)}[kind]()
    # the library each one stands in for (mcpool.Client answers delete as pylibmc does)
    real = real_memcache if kind == "compat.memcache" else real_pylibmc
    expected = unprefixed(run(real.Client([server.addr]), prefix + "r_"), prefix + "r_")
    got = unprefixed(run(ours, prefix + "o_"), prefix + "o_")
    assert got == expected


@pytest.mark.parametrize("kind", ["compat.memcache", "compat.pylibmc", "mcpool.Client"])
def test_cachelib_negative_timeout_stores_the_value_expired(server, prefix, kind):
    """cachelib passes timeout=-1 through unchanged; memcached's protocol reads a negative
    exptime as "immediately expired", and python-memcached and pylibmc answer True with the
    key gone. mcpool.Client (as the README suggests for cachelib) does the same: the old
    value is never left behind."""
    ours = {"compat.memcache": lambda: mcpool.compat.memcache.Client([server.addr]),
            "compat.pylibmc": lambda: mcpool.compat.pylibmc.Client([server.addr]),
            "mcpool.Client": lambda: mcpool.Client([server.addr], pickle=True)}[kind]()

    def steps(client, p):
        c = cachelib.MemcachedCache(servers=client, key_prefix=p)
        return [outcome(c.set, "k", 1), outcome(c.set, "k", 2, timeout=-1), outcome(c.get, "k"),
                outcome(c.add, "a", 1, timeout=-1), outcome(c.get, "a"),
                outcome(c.set_many, {"m": 1}, timeout=-1), outcome(c.get, "m")]

    for real in (real_memcache, real_pylibmc):
        expected = steps(real.Client([server.addr]), prefix + "r_")
        assert steps(ours, prefix + "o_") == expected, real
    assert expected[2] == ("ok", ("NoneType", None)), expected


def test_client_negative_time_stores_the_item_expired(server, prefix):
    """mcpool.Client: a negative time on set/add/replace/cas/set_multi/add_multi/touch is
    memcached's "immediately expired" (sent as mcpool.EXPIRED_AT_ONCE), as the peers send
    it; every other expiry argument still refuses a negative number."""
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    for call in (lambda: mc.set(k, "v", -1), lambda: mc.replace(k, "v", time=-5.5),
                 lambda: mc.set_multi({k: "v"}, -1) == [], lambda: mc.touch(k, -(2 ** 70)),
                 lambda: mc.cas(k, "v", mc.gets(k)[1], -1)):
        assert mc.set(k, "old") is True
        assert call() is True
        assert mc.get(k) is None
    assert mc.add(k, "v", -1) is True and mc.get(k) is None
    assert mc.add_multi({k: "v"}, -1) == [] and mc.get(k) is None
    assert mcpool.EXPIRED_AT_ONCE == 30 * 24 * 3600 + 1


@pytest.mark.parametrize("t", [-0.3, -0.999, -1e-9, -1.0, -1.5, -1])
def test_client_negative_fraction_time_stores_the_item_expired(server, prefix, t):
    """Any negative time, a float between -1 and 0 included (a deadline just passed:
    `deadline - time.time()` == -0.3), stores the item already expired: it goes to the core's
    rule for signed expiries as -1, never refused and never truncated to 0 (never expires)."""
    mc = mcpool.Client([server.addr])
    k = prefix + "k"
    for call in (lambda: mc.set(k, "v", time=t), lambda: mc.touch(k, t),
                 lambda: mc.set_multi({k: "v"}, time=t) == [],
                 lambda: mc.replace(k, "v", time=t), lambda: mc.cas(k, "v", mc.gets(k)[1], t)):
        assert mc.set(k, "old") is True
        assert call() is True
        assert mc.get(k) is None
    assert mc.add(k, "v", t) is True and mc.get(k) is None
    assert mc.add_multi({k: "v"}, t) == [] and mc.get(k) is None


CROSS_VALUES = [5, -3, 2 ** 70, 10 ** 30, "héllo", "", b"by", b"", {"a": [1, 2.5]}, [1, "x"],
                (1,), 1.5, True, False, None]


@pytest.mark.parametrize("peer,preset", [("pylibmc", "pylibmc"),
                                         ("python-memcached", "python-memcached")])
def test_client_with_the_peers_preset_shares_the_cache_with_it(servers, prefix, peer, preset):
    """A cache shared through cachelib with pylibmc or python-memcached: mcpool.Client(...,
    preset=<the peer's>, pickle=True) writes what the peer reads and reads what it writes,
    value and type, as the peer reads its own, on three servers (placement and value layout).
    mcpool.Client(..., pickle=True) alone, which the README offered there, put most keys on
    another server and wrote values the peer read as other values (b'5' for 5, the pickle's
    bytes for a dict), silently (tester finding frameworks 1): the README now offers it only
    for a cache no other client reads."""
    location = [s.addr for s in servers]
    real = {"pylibmc": real_pylibmc, "python-memcached": real_memcache}[peer]
    theirs = cachelib.MemcachedCache(servers=real.Client(location), key_prefix=prefix)
    mine = cachelib.MemcachedCache(
        servers=mcpool.Client(location, preset=preset, pickle=True), key_prefix=prefix)
    for i, v in enumerate(CROSS_VALUES * 3):  # each value on more than one server
        k = "v%d" % i
        theirs.set(k, v)
        own = outcome(theirs.get, k)  # the peer's reading of its own value
        assert outcome(mine.get, k) == own, (v, own)
        mine.set(k + "r", v)
        assert outcome(theirs.get, k + "r") == own, (v, own)
        assert outcome(mine.get, k + "r") == own, (v, own)
    assert mine.get_dict("v0", "v4") == theirs.get_dict("v0", "v4") == {"v0": 5, "v4": "héllo"}
    # without the preset the peer reads values wrong where it finds them (the README's bold
    # warning): an int as its text's bytes, a str as its UTF-8 bytes
    plain = cachelib.MemcachedCache(servers=mcpool.Client(location[:1], pickle=True),
                                    key_prefix=prefix + "p")
    alone = cachelib.MemcachedCache(servers=real.Client(location[:1]), key_prefix=prefix + "p")
    plain.set("n", 5)
    plain.set("s", "héllo")
    if peer == "pylibmc":
        assert alone.get("n") == b"5" and alone.get("s") == "héllo".encode()
    else:
        with pytest.raises(Exception):  # python-memcached: flags it does not know
            alone.get("n")


# cachelib calls whose answers differ between python-memcached and pylibmc (each on a fresh
# client: python-memcached marks its server dead after some errors)
BIG = "x" * 2_000_000  # over memcached's 1 MiB item size (none of these four compresses it)
DIFFERING_STEPS = [
    ("set too large", lambda c: c.set("big", BIG)),
    ("add too large", lambda c: c.add("big2", BIG)),
    ("set_many with one too large", lambda c: c.set_many({"ok": 1, "big": BIG})),
    ("delete missing", lambda c: c.delete("never")),
    ("clear", lambda c: c.clear()),
    ("set a key with a space", lambda c: c.set("a b", 1)),
    ("set a key over 250 bytes", lambda c: c.set("k" * 300, 1)),
    ("get a key with a space", lambda c: c.get("a b")),
]


def test_under_cachelib_only_the_drop_in_answers_as_python_memcached(server, prefix):
    """(tester finding pyteam2 2) The README offered mcpool.Client(preset="python-memcached",
    pickle=True) beside python-memcached under cachelib as the drop-in's equal: it stores and
    places keys as python-memcached does, but answers as pylibmc (mcpool.Client's API): a
    too-large value raises (python-memcached: False, set_many the keys stored), delete of a
    missing key is False (True), clear() True (False), a refused key raises
    mcpool.ClientError (MemcachedKeyCharacterError, MemcachedKeyLengthError). Only
    mcpool.compat.memcache.Client answers as python-memcached; the README now says so."""
    makers = {
        "python-memcached": lambda: real_memcache.Client([server.addr]),
        "compat.memcache": lambda: mcpool.compat.memcache.Client([server.addr]),
        "preset": lambda: mcpool.Client([server.addr], preset="python-memcached", pickle=True),
        "pylibmc": lambda: real_pylibmc.Client([server.addr]),
    }
    got = {}
    for name, make in makers.items():
        answers = []
        for i, (label, step) in enumerate(DIFFERING_STEPS):
            if name == "pylibmc" and "250" in label:
                answers.append(None)  # libmemcached asserts on it (a crash, not an answer)
                continue
            p = "%s%s%d_" % (prefix, name.replace(".", "_").replace("-", "_"), i)
            answers.append(outcome(step, cachelib.MemcachedCache(servers=make(), key_prefix=p)))
            if label.startswith("set_many"):  # the other key stored by each, raised or not
                answers.append(server.raw_get(p + "ok") is not None)
        got[name] = answers
    assert got["compat.memcache"] == got["python-memcached"]
    ok, raised = (lambda t, v: ("ok", (t, v))), (lambda n: ("raised", n))
    assert got["python-memcached"] == [
        ok("bool", False), ok("bool", False), ok("list", [("str", "ok")]), True,
        ok("bool", True), ok("bool", False), raised("MemcachedKeyCharacterError"),
        raised("MemcachedKeyLengthError"), ok("NoneType", None)]
    assert got["preset"] == [
        raised("ClientError"), raised("ClientError"), raised("ClientError"), True,
        ok("bool", False), ok("bool", True), raised("ClientError"), raised("ClientError"),
        ok("NoneType", None)]
    # pylibmc's answers (mcpool's ClientError where pylibmc raises TooBig or its own
    # ClientError; the key over 250 bytes not asked of pylibmc)
    mcpool_words = [raised("ClientError") if isinstance(a, tuple) and a[0] == "raised" else a
                    for a in got["pylibmc"]]
    assert mcpool_words[:7] + mcpool_words[8:] == got["preset"][:7] + got["preset"][8:]
    # and the calls run() makes answer alike but for its delete of a key already deleted
    theirs = unprefixed(run(makers["python-memcached"](), prefix + "rm_"), prefix + "rm_")
    mine = unprefixed(run(makers["preset"](), prefix + "pm_"), prefix + "pm_")
    assert [(a, b) for a, b in zip(theirs, mine) if a != b] == [(ok("bool", True),
                                                                 ok("bool", False))]
