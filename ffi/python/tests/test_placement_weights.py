"""Server weights and the placement they feed: a weight given twice is refused whatever the
form (the core's rule for "host:port:weight" beside ``weights=``), and a profile that
ignores weights refuses one above 1 rather than place keys elsewhere than the client it
names; the spelling that equals pylibmc's ``{"ketama": True}`` with weights agrees with the
real pylibmc key for key."""
import collections

import pytest

from conftest import require

import mcpool

A, B = "127.0.0.1:1", "127.0.0.1:2"


def _share(c):
    n = collections.Counter(c.server_for("k%d" % i) for i in range(3000))
    return [round(n[s] / 3000, 1) for s in (A, B)]


@pytest.mark.parametrize("servers", [[(A, 2), (B, 1)], [A + ":2", B + ":1"]],
                         ids=["tuples", "strings"])
def test_a_weight_in_the_server_and_another_beside_it_is_refused(servers):
    """("host:port", 2) with weights=[1, 5] was accepted with weights= ignored; it is
    refused as "host:port:2" is, in the constructor and in set_servers; the same weight
    twice (or weights= 1, meaning none given) is accepted."""
    with pytest.raises(mcpool.ConfigurationError, match="given beside it; give it once"):
        mcpool.Client(servers, weights=[1, 5])
    c = mcpool.Client(servers)
    assert _share(c) == [0.7, 0.3]
    with pytest.raises(mcpool.ConfigurationError, match="given beside it; give it once"):
        c.set_servers(servers, weights=[1, 5])
    assert c.servers == [A, B] and _share(c) == [0.7, 0.3]  # the old list stays
    c.set_servers(servers, weights=[2, 1])
    assert _share(c) == [0.7, 0.3]
    assert _share(mcpool.Client(servers, weights=[1, 1])) == [0.7, 0.3]
    # without a weight in the server, weights= is the weight
    assert _share(mcpool.Client([A, B], weights=[1, 5])) == [0.2, 0.8]
    assert _share(mcpool.Client([("127.0.0.1", 1), ("127.0.0.1", 2)], weights=[1, 5])) == \
        [0.2, 0.8]


def test_a_socket_tuple_with_another_weight_beside_it_is_refused():
    with pytest.raises(mcpool.ConfigurationError, match="give it once"):
        mcpool.Client([("/tmp/mcpool-none.sock", 2)], weights=[3])
    mcpool.Client([("/tmp/mcpool-none.sock", 2)], weights=[2])


@pytest.mark.parametrize("profile", ["libmemcached-ketama", "libmemcached-ketama-spy"])
def test_an_unweighted_libmemcached_profile_refuses_a_weight_above_one(profile):
    """libmemcached-ketama is libmemcached's unweighted continuum; pylibmc's
    {"ketama": True} counts a weight above 1. Refused, naming the two spellings."""
    with pytest.raises(mcpool.ConfigurationError, match='"pylibmc:.*"libmemcached:'):
        mcpool.Client([A + ":2", B], distribution=profile)
    with pytest.raises(mcpool.ConfigurationError, match="weight 2"):
        mcpool.Client([A, B], weights=[1, 2], distribution=profile)
    c = mcpool.Client([A, B], distribution=profile)
    with pytest.raises(mcpool.ConfigurationError, match="weight 3"):
        c.set_servers([A, B], weights=[3, 1])
    assert c.servers == [A, B]


@pytest.mark.parametrize("weights", [(1, 1, 1), (1, 2, 1), (3, 1, 1)])
def test_pylibmc_ketama_spelling_matches_pylibmc_with_weights(servers, prefix, weights):
    """What ffi/python/README.md gives as pylibmc's {"ketama": True}: pylibmc:ketama=1
    (and libmemcached-ketama without weights) puts every key where pylibmc does."""
    pylibmc = require("pylibmc", "python3-pylibmc")
    specs = ["%s:%d" % (s.addr, w) for s, w in zip(servers, weights)]
    real = pylibmc.Client(specs, behaviors={"ketama": True})
    keys = [prefix + "k%d" % i for i in range(100)]
    for k in keys:
        assert real.set(k, "v")
    held = {}
    for s in servers:
        for k in mcpool.Client([s.addr], value_format="pylibmc").get_multi(keys):
            held[k] = s.addr
    dists = ["pylibmc:ketama=1"] + (["libmemcached-ketama"] if set(weights) == {1} else [])
    for dist in dists:
        ours = mcpool.Client(specs, distribution=dist, value_format="pylibmc")
        assert [k for k in keys if ours.server_for(k) != held[k]] == [], dist


@pytest.mark.parametrize("behaviors", [{}, {"ketama": True}], ids=["modula", "ketama"])
def test_pylibmc_weight_0_is_weight_1_as_pylibmc(servers, prefix, behaviors):
    """Tester finding migrate 4: the pylibmc drop-in refused a weight of 0, which
    pylibmc (libmemcached) reads as 1. Keys real pylibmc wrote with weight 0 in the list are
    all found by the drop-in given the same list."""
    real = require("pylibmc", "python3-pylibmc")
    import mcpool.compat.pylibmc as drop
    spec = ["%s:0" % servers[0].addr, servers[1].addr, "%s:2" % servers[2].addr]
    keys = ["%sw0-%d" % (prefix, i) for i in range(200)]
    writer = real.Client(spec, behaviors=behaviors)
    writer.set_multi({k: k for k in keys})
    reader = drop.Client(spec, behaviors=behaviors)
    assert reader.get_multi(keys) == {k: k for k in keys}
    spec1 = ["%s:1" % servers[0].addr] + spec[1:]
    assert [reader._mc.server_for(k) for k in keys] == \
        [drop.Client(spec1, behaviors=behaviors)._mc.server_for(k) for k in keys]


def test_python_memcached_weight_0_is_refused_saying_why(servers):
    """python-memcached lists a server of weight 0 but gives it no keys; mcpool has no such
    server, so the drop-in refuses it, saying so (migrate 4)."""
    import mcpool.compat.memcache as memcache
    for w in (0, -1, False):
        with pytest.raises(ValueError, match="weight %d.*no keys" % w):
            memcache.Client([(servers[0].addr, w), servers[1].addr])
    # True is one bucket there (range(True)), as weight 1
    mc = memcache.Client([(servers[0].addr, True), servers[1].addr])
    assert [s.weight for s in mc.servers] == [1, 1]


def test_weights_without_servers_are_refused_saying_why():
    """Tester finding configwords 3: weights= with the servers in libmemcached_config raised
    ClientTypeError "servers must be a list of addresses", about an argument never given. A
    ConfigurationError naming weights, and where a weight goes instead."""
    config = "--SERVER=%s --SERVER=%s" % (A, B)
    with pytest.raises(mcpool.ConfigurationError) as e:
        mcpool.Client(libmemcached_config=config, weights=[1, 5])
    msg = str(e.value)
    assert "weights=[1, 5] given without servers" in msg and "--SERVER=host:port/?N" in msg
    assert "libmemcached_config" in msg and "servers must be a list" not in msg
    assert not isinstance(e.value, TypeError)
    # the weight written where the message says is taken
    c = mcpool.Client(libmemcached_config="--SERVER=%s --SERVER=%s/?5" % (A, B))
    assert c.servers == [A, B]
    # the core's servers option: the weight in the address
    with pytest.raises(mcpool.ConfigurationError, match=r"option servers \(given as "
                                                        r"SERVERS\).*host:port:N"):
        mcpool.Client(SERVERS="%s,%s" % (A, B), weights=[1, 5])
    assert _share(mcpool.Client(SERVERS="%s:1,%s:5" % (A, B))) == [0.2, 0.8]
    # a string that names no servers: not "the servers are in" it (tester finding
    # retest37b 5)
    with pytest.raises(mcpool.ConfigurationError) as e:
        mcpool.Client(libmemcached_config="--DISTRIBUTION=consistent", weights=[2])
    msg = str(e.value)
    assert "names no servers either" in msg and "the servers are in" not in msg, msg
    # no servers at all
    for given in ({}, {"servers": None}):
        with pytest.raises(mcpool.ConfigurationError,
                           match=r"weights=\[2\] given without servers: weights are one per "
                                 r"entry of the servers list: give the servers beside them"):
            mcpool.Client(weights=[2], **given)
    c = mcpool.Client([A])
    with pytest.raises(mcpool.ConfigurationError, match="weights=.*given without servers"):
        c.set_servers(None, weights=[1])
    assert c.servers == [A]  # the old list stays
