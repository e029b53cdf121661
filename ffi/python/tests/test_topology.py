"""Servers that change at run time: Client.set_servers and the compat module's set_servers
forward to the core's atomic set_servers (real memcached processes)."""
import pytest

import mcpool


def test_set_servers_replaces_the_list_and_keeps_the_kept_servers(servers, prefix):
    a, b, c = (s.addr for s in servers)
    # one connection per server at most: a pool that grows (min_idle refills while one is
    # checked out) would open connections for reasons of its own
    mc = mcpool.Client([a, b], max_size=1)
    for i in range(50):
        mc.set(prefix + str(i), str(i))
    connects_a = mc.metrics()[a]["connects"]
    mc.set_servers([a, (c, 2)])
    assert mc.servers == [a, c]
    # a is kept: its counters (and connections) carry on, nothing is opened anew for it
    for i in range(50):
        mc.set(prefix + "n" + str(i), i)
        assert mc.get(prefix + "n" + str(i)) == i
    assert mc.metrics()[a]["connects"] == connects_a
    assert b not in mc.metrics()
    # a bad list is refused, naming the entry, and the old one stays
    with pytest.raises(mcpool.ConfigurationError, match="notaport"):
        mc.set_servers([a, "host:notaport"])
    with pytest.raises(mcpool.ConfigurationError, match="weight must be at least 1"):
        mc.set_servers([a], weights=[0])
    assert mc.servers == [a, c]
    mc.set_servers(b)
    assert mc.servers == [b]


BAD_WEIGHT = {0: "weight must be at least 1", -1: "weight must be at least 1",
              2 ** 32: "weight 4294967296 is not a whole number up to 4294967295"}


@pytest.mark.parametrize("w", sorted(BAD_WEIGHT))
def test_a_bad_weight_is_a_configuration_error_naming_the_entry_in_every_spelling(w):
    """weights=[1, w], a tuple (addr, w) and "addr:w" are one bad list: each is
    ConfigurationError naming the entry (weights= and the tuple raised a ClientError that
    named no entry, with the binding's own rule), from set_servers and from the constructor,
    and the old list stays. No server is needed: nothing is connected."""
    good, bad = "127.0.0.1:11", "127.0.0.1:12"
    spellings = [([good, bad], {"weights": [1, w]}), ([good, (bad, w)], {})]
    if w >= 0:  # "host:port:-1" is host:port:name (the core's rule), not a weight
        spellings.append(([good, "%s:%d" % (bad, w)], {}))
    mc = mcpool.Client([good], min_idle=0)
    for servers, kw in spellings:
        with pytest.raises(mcpool.ConfigurationError, match=BAD_WEIGHT[w]) as e:
            mc.set_servers(servers, **kw)
        assert bad in str(e.value), e.value
        assert e.value.status_name == "MCPOOL_CONFIG"
        assert mc.servers == [good]
        with pytest.raises(mcpool.ConfigurationError, match=BAD_WEIGHT[w]) as e:
            mcpool.Client(servers, min_idle=0, **kw)
        assert bad in str(e.value), e.value
    for v in ("2", 1.5, True):  # not an int: a type error, naming the entry
        with pytest.raises(mcpool.ClientTypeError, match="server %s: a weight is an int" % bad):
            mc.set_servers([good, bad], weights=[1, v])
    assert mc.servers == [good]


def test_compat_memcache_set_servers_uses_the_core_call(servers, prefix):
    from mcpool.compat import memcache
    a, b, _ = (s.addr for s in servers)
    mc = memcache.Client([a])
    assert mc.set(prefix + "k", "v")
    core = mc._mc
    mc.set_servers([a, (b, 3)])
    assert mc._mc is core, "set_servers built a new core client"
    assert core.servers == [a, b]
    assert [str(h) for h in mc.servers] and len(mc.servers) == 2
    mc.set_servers([a])
    assert mc.get(prefix + "k") == "v"


def test_a_repeated_address_is_one_server_in_metrics_and_states(servers, prefix):
    # docs/metrics.md: an address listed twice (a double share, as Cache::Memcached users
    # give one) is one server in every report, its entries' counters summed by the core
    a, b, _ = (s.addr for s in servers)
    mc = mcpool.Client([a, a, b])
    sent = {a: 0, b: 0}
    for i in range(40):
        k = prefix + str(i)
        assert mc.set(k, i)
        assert mc.get(k) == i
        sent[mc.server_for(k)] += 2
    m = mc.metrics()
    assert sorted(m) == sorted([a, b])
    assert {s: v["operations"] for s, v in m.items()} == sent
    assert sum(v["operations"] for v in m.values()) == 80
    states = mc.server_states()
    assert sorted(states) == sorted([a, b]) and all(st["alive"] for st in states.values())


@pytest.mark.parametrize("spec", ["127.0.0.1:21911,127.0.0.1:21912",
                                  "127.0.0.1:21911;127.0.0.1:21912",
                                  b"127.0.0.1:21911, 127.0.0.1:21912"])
def test_a_list_in_one_str_asks_for_a_list(spec):
    """Tester finding (misuse F3): Client("a:1,b:2") said 'bad server address
    "127.0.0.1:21911,127.0.0.1": port is not a number', blaming a port that is not wrong.
    Now a ConfigurationError saying to give a list, from the constructor and set_servers."""
    with pytest.raises(mcpool.ConfigurationError, match="give a list") as info:
        mcpool.Client(spec)
    assert "port" not in str(info.value)
    c = mcpool.Client(["127.0.0.1:21911"])
    with pytest.raises(mcpool.ConfigurationError, match="give a list"):
        c.set_servers(spec)
    assert c.servers == ["127.0.0.1:21911"]


@pytest.mark.parametrize("w", [-1, -7])
def test_a_negative_weight_beside_a_weighted_address_is_shown_as_given(w):
    """Tester finding (options F10): weights=[-1, 1] beside "host:port:2" said "weight 2 in
    the address and 0 given beside it" (the binding passed a negative weight on as 0)."""
    for servers in (["127.0.0.1:21311:2", "127.0.0.1:21312"],
                    ["127.0.0.1:21311", "127.0.0.1:21312"]):
        with pytest.raises(mcpool.ConfigurationError) as e:
            mcpool.Client(servers, weights=[w, 1], min_idle=0)
        msg = str(e.value)
        assert "weight must be at least 1 (given %d)" % w in msg, msg
        assert servers[0] in msg and " 0 given" not in msg, msg
