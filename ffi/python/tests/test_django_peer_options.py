"""The OPTIONS of Django's own memcached backends given to mcpool.django.McpoolCache with
that backend's preset: MemcachedCache's (python-memcached's Client arguments) and
PyMemcacheCache's (pymemcache's HashClient arguments) were refused as unknown options
(tester finding frameworks 6). Each is now read as the compat module of its preset reads it
(mcpool.compat.memcache's Client, mcpool.compat.pymemcache's HashClient: one translation),
checked side by side with the stock backend; an option no one knows is still refused."""
import socket
import time
import warnings

import pytest

from conftest import require

django = require("django", "python3-django")
from django.conf import settings  # noqa: E402

if not settings.configured:
    settings.configure(CACHES={"default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}, USE_TZ=True)
django.setup()

import mcpool  # noqa: E402
import mcpool.compat.memcache  # noqa: E402
import mcpool.compat.pymemcache  # noqa: E402
import mcpool.django  # noqa: E402

require("pymemcache", "python3-pymemcache")
require("memcache", "python3-memcache")
import pymemcache.serde  # noqa: E402


def stock(name, location, prefix, options):
    from django.core.cache.backends import memcached
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # MemcachedCache is deprecated in Django 3.2
        return getattr(memcached, name)(location, {"KEY_PREFIX": prefix,
                                                   "OPTIONS": dict(options)})


def ours(preset, location, prefix, options):
    return mcpool.django.McpoolCache(location, {"KEY_PREFIX": prefix,
                                                "OPTIONS": dict(options, preset=preset)})


def _closed_port():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def outcome(fn, *args):
    """("ok", value) or ("raised", the exception's class name)."""
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - the class is the observable result
        return ("raised", type(e).__name__)


CASES = [
    # Django's docs' example for MemcachedCache, and the rest of python-memcached's Client
    ("MemcachedCache", "python-memcached", {"server_max_value_length": 2 * 1024 * 1024}),
    ("MemcachedCache", "python-memcached", {"socket_timeout": 1, "dead_retry": 10}),
    ("MemcachedCache", "python-memcached", {"pickleProtocol": 4}),
    ("MemcachedCache", "python-memcached", {"debug": 0, "cache_cas": True, "check_keys": True,
                                            "server_max_key_length": 250}),
    # pymemcache's HashClient arguments, as PyMemcacheCache passes them through
    ("PyMemcacheCache", "pymemcache", {"connect_timeout": 1, "timeout": 0.5}),
    ("PyMemcacheCache", "pymemcache", {"retry_attempts": 3, "retry_timeout": 2,
                                       "dead_timeout": 60}),
    ("PyMemcacheCache", "pymemcache", {"allow_unicode_keys": True, "default_noreply": False}),
    ("PyMemcacheCache", "pymemcache", {"no_delay": True, "max_pool_size": 4,
                                       "pool_idle_timeout": 30, "use_pooling": True}),
    ("PyMemcacheCache", "pymemcache", {"key_prefix": b"pfx", "encoding": "utf-8"}),
    ("PyMemcacheCache", "pymemcache", {"serde": pymemcache.serde.PickleSerde(2),
                                       "socket_keepalive": None, "tls_context": None}),
]


@pytest.mark.parametrize("backend,preset,options", CASES)
def test_stock_options_are_read_with_their_preset(servers, prefix, backend, preset, options):
    """The stock backend's OPTIONS, unchanged, with its preset: McpoolCache takes them (it
    raised ConfigurationError "unknown option") and shares the cache with the stock backend
    given the same OPTIONS, both ways, on three servers."""
    location = [s.addr for s in servers]
    theirs = stock(backend, location, prefix, options)
    mine = ours(preset, location, prefix, options)
    keys = ["k%d" % i for i in range(12)]
    theirs.set_many({k: {"by": "stock", "k": k} for k in keys})
    assert mine.get_many(keys) == {k: {"by": "stock", "k": k} for k in keys}
    mine.set_many({k: [k, "ours"] for k in keys})
    assert all(theirs.get(k) == [k, "ours"] for k in keys)


def test_python_memcached_options_take_effect_as_there(server, prefix):
    """server_max_value_length (a value above it is not stored, the key deleted), dead_retry
    (how long a server stays dead) and pickleProtocol (the stored pickle, byte for byte) act
    on McpoolCache as on MemcachedCache."""
    got = {}
    for kind in ("stock", "ours"):
        opts = {"server_max_value_length": 1000}
        c = (stock("MemcachedCache", [server.addr], prefix, opts) if kind == "stock"
             else ours("python-memcached", [server.addr], prefix, opts))
        c.set("big", b"old")
        got[kind] = [outcome(c.set, "big", b"x" * 2000), outcome(c.get, "big"),
                     outcome(c.set, "small", b"y" * 500), outcome(c.get, "small")]
    assert got["ours"] == got["stock"] == [("ok", None), ("ok", None), ("ok", None),
                                           ("ok", b"y" * 500)]
    stored = {}
    for kind in ("stock", "ours"):
        opts = {"pickleProtocol": 2}
        c = (stock("MemcachedCache", [server.addr], prefix + kind, opts) if kind == "stock"
             else ours("python-memcached", [server.addr], prefix + kind, opts))
        c.set("d", {"a": [1, 2.5]})
        stored[kind] = server.raw_get(c.make_key("d"))
    assert stored["ours"] == stored["stock"] and stored["ours"][1].startswith(b"\x80\x02")
    down = _closed_port()
    left = {}
    for kind in ("stock", "ours"):
        opts = {"dead_retry": 10}
        location = [server.addr, down]
        c = (stock("MemcachedCache", location, prefix, opts) if kind == "stock"
             else ours("python-memcached", location, prefix, opts))
        for i in range(12):  # a key on the server down marks it dead (its keys rehashed)
            c.set("r%d" % i, i)
        if kind == "stock":
            left[kind] = max(h.deaduntil for h in c._cache.servers) - time.time()
        else:
            left[kind] = c._cache.server_states()[down]["retry_in"]
    assert all(5 < t <= 10 for t in left.values()), left


def test_python_memcached_key_rules_as_there(server, prefix):
    """server_max_key_length refuses a longer key with python-memcached's
    MemcachedKeyLengthError (check_keys=False lets it through), as MemcachedCache does."""
    got = {}
    for kind in ("stock", "ours"):
        row = []
        for opts in ({"server_max_key_length": 20}, {"server_max_key_length": 20,
                                                     "check_keys": False}):
            c = (stock("MemcachedCache", [server.addr], prefix, opts) if kind == "stock"
                 else ours("python-memcached", [server.addr], prefix, opts))
            row += [outcome(c.set, "a-key-longer-than-twenty", 1),
                    outcome(c.get, "a-key-longer-than-twenty"),
                    outcome(c.get_many, ["a-key-longer-than-twenty"]), outcome(c.get, "short")]
        got[kind] = row
    assert got["ours"] == got["stock"]
    assert got["ours"][0] == ("raised", "MemcachedKeyLengthError")
    assert got["ours"][5] == ("ok", 1)


def test_pymemcache_options_take_effect_as_there(server, prefix):
    """PyMemcacheCache's OPTIONS become the core's options as mcpool.compat.pymemcache's
    HashClient makes them (one translation: the same options), and act as there:
    allow_unicode_keys=False refuses a non-ASCII key (MemcacheIllegalInputError), a serde's
    pickle version is the stored pickle's, retry_timeout is the retry window's length."""
    cases = [{"retry_attempts": 3, "retry_timeout": 2.5},
             {"connect_timeout": 1, "timeout": 0.5, "key_prefix": "ns:"},
             {"use_pooling": True, "max_pool_size": 3, "pool_idle_timeout": 30},
             {"max_pool_size": 3}, {"use_pooling": False, "no_delay": False}]
    for opts in cases:
        c = ours("pymemcache", [server.addr], prefix, opts)
        drop_in = mcpool.compat.pymemcache.HashClient(
            [server.addr], serde=mcpool.compat.pymemcache.pickle_serde, **opts)
        want = {k: v for k, v in drop_in._opts.items() if k != "preset"}
        assert {k: c._options[k] for k in want} == want, opts
    assert ours("pymemcache", [server.addr], prefix, {"retry_attempts": 3})._options[
        "eject_after"] == 4
    got = {}
    for kind in ("stock", "ours"):
        row = []
        for opts in ({"allow_unicode_keys": False}, {}):
            c = (stock("PyMemcacheCache", [server.addr], prefix + kind, opts)
                 if kind == "stock" else ours("pymemcache", [server.addr], prefix + kind, opts))
            row += [outcome(c.set, "clé", 1), outcome(c.get, "clé"), outcome(c.set, "k", 2),
                    outcome(c.get, "k")]
        c = (stock("PyMemcacheCache", [server.addr], prefix + kind,
                   {"serde": pymemcache.serde.PickleSerde(2)}) if kind == "stock"
             else ours("pymemcache", [server.addr], prefix + kind,
                       {"serde": pymemcache.serde.PickleSerde(2)}))
        c.set("d", {"a": [1, 2.5]})
        got[kind] = (row, server.raw_get(c.make_key("d")))
    assert got["ours"] == got["stock"]
    assert got["ours"][0][:2] == [("raised", "MemcacheIllegalInputError")] * 2
    assert got["ours"][1][1].startswith(b"\x80\x02")
    down = _closed_port()
    c = ours("pymemcache", [server.addr, down], prefix, {"retry_timeout": 30})
    placed = mcpool.Client([server.addr, down], preset="pymemcache")
    key = next(k for k in ("k%d" % i for i in range(100))
               if placed.server_for(c.make_key(k)) == down)
    with pytest.raises(mcpool.ConnectionError):
        c.get(key)
    assert 25 < c._cache.server_states()[down]["retry_in"] <= 30


def test_options_mcpool_cannot_honour_are_refused_as_the_compat_module_refuses_them(server):
    """What mcpool.compat.pymemcache's HashClient and mcpool.compat.memcache's Client refuse
    (dead_timeout of 0, another hasher, lock_generator, a custom pickler, ...) the
    backend refuses with the same exception and words; and what only the backend's values
    rule out: PyMemcacheCache without a serde, python-memcached refusing every value or
    timing out at once."""
    loc = [server.addr]
    HashClient = mcpool.compat.pymemcache.HashClient
    for opts in ({"dead_timeout": 0}, {"hasher": object}, {"retry_timeout": 0},
                 {"use_pooling": True, "lock_generator": object},
                 {"socket_module": object()}, {"tls_context": object()}):
        with pytest.raises(Exception) as want:
            HashClient(loc, **opts)
        with pytest.raises(type(want.value)) as e:
            ours("pymemcache", loc, "p", opts)
        assert str(e.value) == str(want.value), opts
    for opts in ({"pickler": object}, {"compressor": len}, {"flush_on_reconnect": 1}):
        with pytest.raises(Exception) as want:
            mcpool.compat.memcache.Client(loc, **opts)
        with pytest.raises(type(want.value)) as e:
            ours("python-memcached", loc, "p", opts)
        assert str(e.value) == str(want.value), opts
    with pytest.raises(NotImplementedError, match="serde=None"):
        ours("pymemcache", loc, "p", {"serde": None})
    with pytest.raises(mcpool.ConfigurationError, match="server_max_value_length=-1"):
        ours("python-memcached", loc, "p", {"server_max_value_length": -1})
    with pytest.raises(mcpool.ConfigurationError, match=r"\(given as socket_timeout\)"):
        ours("python-memcached", loc, "p", {"socket_timeout": 0})


def test_an_unknown_option_is_still_refused(server):
    """An option no one knows keeps the core's error; one of a backend's client's arguments
    given without that client's preset says which preset reads it. A duration mcpool writes
    as text ("250ms") under a name HashClient shares stays mcpool's."""
    loc = [server.addr]
    for preset in (None, "pymemcache", "python-memcached", "pylibmc"):
        opts = {"bogus_option": 1} if preset is None else {"bogus_option": 1, "preset": preset}
        with pytest.raises(mcpool.ConfigurationError) as e:
            mcpool.django.McpoolCache(loc, {"OPTIONS": opts}).get("k")
        assert str(e.value).startswith('unknown option "bogus_option"'), str(e.value)
        assert "read under" not in str(e.value)
    for opts, preset in (({"socket_timeout": 1}, "python-memcached"),
                         ({"pickleProtocol": 4, "preset": "pymemcache"}, "python-memcached"),
                         ({"retry_attempts": 3, "preset": "pylibmc"}, "pymemcache"),
                         ({"allow_unicode_keys": True}, "pymemcache")):
        with pytest.raises(mcpool.ConfigurationError) as e:
            mcpool.django.McpoolCache(loc, {"OPTIONS": opts}).get("k")
        name = next(k for k in opts if k != "preset")
        assert str(e.value).startswith('unknown option "%s"' % name), str(e.value)
        assert str(e.value).endswith('read under OPTIONS {"preset": "%s"}' % preset)
    c = ours("pymemcache", loc, "p", {"timeout": "250ms", "connect_timeout": "1s"})
    c.set("k", 1)
    assert c.get("k") == 1 and "operation_timeout" not in c._options


def test_mcpool_s_own_placement_over_the_stock_one_warns(server):
    """OPTIONS with a stock backend's placement (PyLibMCCache's behaviors) and mcpool's own
    distribution: mcpool's wins, and a RuntimeWarning says keys land elsewhere than the stock
    backend puts them (tester finding frameworks2 2: silent); the same placement, or only
    one of the two, says nothing."""
    loc = [server.addr, "127.0.0.1:1"]
    with pytest.warns(RuntimeWarning, match="distribution='libmemcached-modula' overrides"):
        ours("pylibmc", loc, "p", {"behaviors": {"ketama": True},
                                   "distribution": "libmemcached-modula"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours("pylibmc", loc, "p", {"behaviors": {"ketama": True}})
        ours("pylibmc", loc, "p", {"distribution": "libmemcached-modula"})


# mcpool's own distribution beside a preset whose own placement it changes: no behaviors,
# no placement words in OPTIONS, only the preset (tester finding retest36 1: silent)
PRESET_OVERRIDES = [
    ("PyMemcacheCache", "pymemcache", "cache-memcached"),
    ("PyLibMCCache", "pylibmc", "python-memcached"),
    ("MemcachedCache", "python-memcached", "cmf-ketama"),
]


@pytest.mark.parametrize("backend,preset,distribution", PRESET_OVERRIDES)
def test_a_distribution_over_the_preset_s_own_placement_warns(servers, prefix, backend, preset,
                                                              distribution):
    """The preset is how the stock backend's placement is taken, so a distribution that
    places keys otherwise warns, naming both; and the warning is true: the stock backend on
    the same servers misses keys ours stored (the tester's stale reads)."""
    if backend == "PyLibMCCache":
        require("pylibmc", "python3-pylibmc")
    loc = [s.addr for s in servers]
    with pytest.warns(RuntimeWarning) as w:
        c = ours(preset, loc, prefix, {"distribution": distribution})
    # (the RuntimeWarning: a ResourceWarning of an earlier test's client that the garbage
    # collector closes meanwhile is recorded too)
    ours_warned = [x for x in w if issubclass(x.category, RuntimeWarning)][0]
    msg = str(ours_warned.message)
    assert "distribution=%r overrides" % distribution in msg, msg
    assert "%s's, from preset=%r" % (backend, preset) in msg, msg
    assert ours_warned.filename == __file__  # points at the backend's maker
    keys = ["k%d" % i for i in range(20)]
    c.set_many({k: "v" + k for k in keys})
    theirs = stock(backend, loc, prefix, {})
    assert len(theirs.get_many(keys)) < len(keys)


@pytest.mark.parametrize("value_format,distribution,moves", [
    ("pylibmc", "cache-memcached", True),
    ("python-memcached", "cmf-ketama", True),
    ("pymemcache", "cache-memcached", True),
    ("pylibmc", "libmemcached-modula", False),  # pylibmc's own placement
    ("python-memcached", "python-memcached", False),
])
def test_a_distribution_beside_a_value_format_is_compared_with_its_client_s(
        servers, prefix, value_format, distribution, moves):
    """value_format names the stock backend's client, whose placement is its preset's: a
    distribution beside it that places keys otherwise warns, the same placement says nothing
    (tester finding retest37b 2: any distribution turned the value_format warning off, and
    cache-memcached beside pylibmc's format moved most keys in silence)."""
    loc = [s.addr for s in servers]
    options = {"value_format": value_format, "distribution": distribution}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        mcpool.django.McpoolCache(loc, {"KEY_PREFIX": prefix, "OPTIONS": options})
    said = [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]
    if moves:
        assert len(said) == 1 and "distribution=%r overrides" % distribution in said[0], said
        assert "preset=%r" % value_format in said[0], said
    else:
        assert said == []


@pytest.mark.parametrize("preset,options", [
    # two spellings of one placement (tester finding retest36 2: warned falsely)
    ("pylibmc", {"behaviors": {"ketama": True}, "distribution": "libmemcached-ketama"}),
    # the preset's own placement, by name
    ("pymemcache", {"distribution": "pymemcache-rendezvous"}),
    ("python-memcached", {"distribution": "python-memcached"}),
    ("pylibmc", {"distribution": "libmemcached-modula"}),
    # no distribution of mcpool's own, or no stock backend
    ("pylibmc", {"behaviors": {"ketama": True}}),
    (None, {"distribution": "cmf-ketama"}),
])
def test_the_same_placement_says_nothing(servers, prefix, preset, options):
    loc = [s.addr for s in servers]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if preset is None:
            mcpool.django.McpoolCache(loc, {"KEY_PREFIX": prefix, "OPTIONS": options})
        else:
            ours(preset, loc, prefix, options)


def test_two_spellings_of_ketama_share_the_cache_with_pylibmccache(servers, prefix):
    """The false warning's case, checked against the stock backend: PyLibMCCache with
    behaviors {"ketama": True} reads every key ours stored with distribution
    libmemcached-ketama, each on the one server both put it on."""
    require("pylibmc", "python3-pylibmc")
    loc = [s.addr for s in servers]
    opts = {"behaviors": {"ketama": True}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = ours("pylibmc", loc, prefix, dict(opts, distribution="libmemcached-ketama"))
    theirs = stock("PyLibMCCache", loc, prefix, opts)
    keys = ["k%d" % i for i in range(40)]
    c.set_many({k: [k] for k in keys})
    assert theirs.get_many(keys) == {k: [k] for k in keys}


def test_one_server_never_warns(server, prefix):
    """One server holds every key, whatever the placement."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours("pymemcache", [server.addr], prefix, {"distribution": "cache-memcached"})

def test_python_memcached_incr_of_no_number_raises_valueerror_as_there(server, prefix):
    """incr/decr of a value that is not a number: MemcachedCache raises ValueError "Key ...
    not found" (python-memcached's int() of the server's CLIENT_ERROR line raises ValueError,
    which Django reads as a missing key), and so does the python-memcached preset (tester
    finding retest45 2: TypeError, which a site's `except ValueError` did not catch); side
    by side on one memcached."""
    for cache in (stock("MemcachedCache", server.addr, prefix, {}),
                  ours("python-memcached", server.addr, prefix, {})):
        cache.set("word", "abc")
        for op in (cache.incr, cache.decr):
            with pytest.raises(ValueError, match="not found"):
                op("word")
        assert cache.get("word") == "abc"
