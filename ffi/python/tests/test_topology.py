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
    with pytest.raises(mcpool.ClientError):
        mc.set_servers([a], weights=[0])
    assert mc.servers == [a, c]
    mc.set_servers(b)
    assert mc.servers == [b]


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
